// A small CUDA program for the real-GPU check of the CUDA collector (test/gpu/run_device.sh): a few named kernels
// (a template one, so its name is mangled), copies both ways, a memset, two streams, a sync, and NVTX ranges.
// Deterministic: the same launches in the same order every run, so counts can be compared exactly.
#include <cstdio>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

template <typename T, int ILP>
__global__ void scale_kernel(T* x, T a, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * ILP;
  for (int k = 0; k < ILP; k++)
    if (i + k < n) x[i + k] *= a;
}

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void block_reduce(const float* x, float* out, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

int main(int argc, char** argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  const int n = 1 << 20;
  float *ha, *hb, *da, *db, *dc, *dsum;
  CHECK(cudaMallocHost(&ha, n * sizeof(float)));
  hb = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) { ha[i] = 1.f; hb[i] = 2.f; }
  CHECK(cudaMalloc(&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, n * sizeof(float)));
  CHECK(cudaMalloc(&dc, n * sizeof(float)));
  CHECK(cudaMalloc(&dsum, sizeof(float)));
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreate(&s2));
  for (int step = 0; step < steps; step++) {
    nvtxRangePushA("step");
    nvtxRangePushA("upload");
    CHECK(cudaMemcpyAsync(da, ha, n * sizeof(float), cudaMemcpyHostToDevice, s1));   // pinned → device
    CHECK(cudaMemcpy(db, hb, n * sizeof(float), cudaMemcpyHostToDevice));           // pageable → device
    nvtxRangePop();
    nvtxRangePushA("compute");
    vector_add<<<(n + 255) / 256, 256, 0, s1>>>(da, db, dc, n);
    scale_kernel<float, 4><<<(n / 4 + 255) / 256, 256, 0, s1>>>(dc, 0.5f, n);
    CHECK(cudaMemsetAsync(dsum, 0, sizeof(float), s2));
    CHECK(cudaStreamSynchronize(s1));
    block_reduce<<<(n + 255) / 256, 256, 0, s2>>>(dc, dsum, n);
    nvtxRangePop();
    float sum = 0;
    CHECK(cudaMemcpyAsync(&sum, dsum, sizeof(float), cudaMemcpyDeviceToHost, s2));
    CHECK(cudaStreamSynchronize(s2));
    nvtxRangePop();
    if (step == steps - 1) printf("sum %.1f (expect %.1f)\n", sum, 1.5f * n);
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
