// The CUDA runtime calls Kineto's DeviceProperties.cpp makes, answered with the recorded device's properties (an
// H100 80GB HBM3, compute capability 9.0, 132 SMs: the DEVICES chunk of the dumps measured) so that Kineto computes
// each kernel's occupancy as it would on that machine. No GPU is involved.
#include <cuda_runtime_api.h>
#include <cstring>
extern "C" {
cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp* p, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  strcpy(p->name, "NVIDIA H100 80GB HBM3");
  p->totalGlobalMem = 85020590080ull;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 132;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->maxBlocksPerMultiProcessor = 32;
  p->regsPerBlock = 65536;
  p->regsPerMultiprocessor = 65536;
  p->warpSize = 32;
  p->sharedMemPerBlock = 49152;
  p->sharedMemPerBlockOptin = 232448;
  p->sharedMemPerMultiprocessor = 233472;
  p->reservedSharedMemPerBlock = 1024;
  return cudaSuccess;
}
}
