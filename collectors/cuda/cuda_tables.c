/*
 * rawtrace CUDA collector: the tables a file gets once: KIND_SIZES (record strides probed in the loaded
 * libcupti) and API_NAMES, measured at start; DEVICES, from the driver once CUDA is initialized.
 */
#include "cuda_internal.h"
#include "rawtrace_heap.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Tables measured at start                                                                                           */
/* ------------------------------------------------------------------------------------------------------------------ */

/*
 * Record stride of each kind in the loaded libcupti: a zeroed fake buffer holding one record of kind k, grown 8 bytes
 * at a time until cuptiActivityGetNextRecord accepts it (that is the record size), then a second record right after
 * it; the distance between the first and the second record returned is the stride (vendor-record-layouts.md §1.1).
 */
void rt_cuda_probe_kind_sizes(void) {
  static uint8_t buf[2 * 1024 + 64] __attribute__((aligned(16)));
  for (uint32_t k = 1; k < MAX_KIND; k++) {
    G.kind_size[k] = 0;
    memset(buf, 0, sizeof buf);
    memcpy(buf, &k, 4);
    size_t n = 0;
    for (size_t s = 8; s <= 1024; s += 8) {
      CUpti_Activity* r = NULL;
      CUptiResult rc = C.GetNextRecord(buf, s, &r);
      if (rc == CUPTI_SUCCESS && (uint8_t*)r == buf) {
        n = s;
        break;
      }
      if (rc == CUPTI_ERROR_INVALID_KIND) break;
    }
    if (!n) continue;
    memcpy(buf + n, &k, 4);
    CUpti_Activity* r = NULL;
    if (C.GetNextRecord(buf, 2 * n, &r) != CUPTI_SUCCESS || (uint8_t*)r != buf) continue;
    if (C.GetNextRecord(buf, 2 * n, &r) != CUPTI_SUCCESS || !r) continue;
    ptrdiff_t stride = (uint8_t*)r - buf;
    if (stride > 0 && stride <= 1024) G.kind_size[k] = (uint32_t)stride;
  }
}

int rt_cuda_write_kind_sizes(void) {
  rt_kind_size pairs[MAX_KIND];
  uint32_t n = 0;
  for (uint32_t k = 1; k < MAX_KIND; k++)
    if (G.kind_size[k]) {
      pairs[n].kind = k;
      pairs[n].size = G.kind_size[k];
      n++;
    }
  return rt_writer_kind_sizes(G.w, pairs, n);
}

/* (domain, cbid) → name for the driver (1) and runtime (2) domains, from cuptiGetCallbackName. */
int rt_cuda_write_api_names(void) {
  size_t cap = 2048, n = 0;
  rt_api_name* names = (rt_api_name*)rt_malloc(cap * sizeof *names);
  if (!names) return -ENOMEM;
  const uint32_t domains[2] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API};
  const uint32_t hints[2] = {CUPTI_DRIVER_TRACE_CBID_SIZE, CUPTI_RUNTIME_TRACE_CBID_SIZE};
  for (int d = 0; d < 2; d++) {
    uint32_t misses = 0;
    for (uint32_t cbid = 1; cbid < 8192; cbid++) {
      const char* nm = NULL;
      CUptiResult rc = C.GetCallbackName((CUpti_CallbackDomain)domains[d], cbid, &nm);
      if (rc == CUPTI_SUCCESS && nm && *nm) {
        misses = 0;
        if (n == cap) {
          rt_api_name* more = (rt_api_name*)grow_array(names, &cap, sizeof *names, cap);
          if (!more) break;
          names = more;
        }
        names[n].domain = domains[d] == CUPTI_CB_DOMAIN_DRIVER_API ? RT_CUPTI_DOMAIN_DRIVER : RT_CUPTI_DOMAIN_RUNTIME;
        names[n].id = cbid;
        names[n].name = nm;
        n++;
      } else if (++misses >= 64 && cbid >= hints[d]) {
        break;
      }
    }
  }
  int rc = rt_writer_api_names(G.w, names, (uint32_t)n);
  rt_free(names);
  return rc;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* DEVICES (writer thread)                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

static uint32_t dev_attr(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  if (G.cuDeviceGetAttribute && G.cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS && v > 0) return (uint32_t)v;
  return 0;
}

/* DEVICES once, from the driver, as soon as CUDA is initialized (the collector never calls cuInit itself). */
void rt_cuda_maybe_write_devices(void) {
  if (G.devices_done || G.write_failed) return;
  if (!G.cuda || !G.cuDeviceGetCount || !G.cuDeviceGetAttribute) {
    G.devices_done = 1;
    return;
  }
  int count = 0;
  if (G.cuDeviceGetCount(&count) != CUDA_SUCCESS) return; /* not initialized yet: try again later */
  G.devices_done = 1;
  if (count <= 0) return;
  if (count > 64) count = 64;
  rt_device_info devs[64];
  char names[64][256];
  for (int i = 0; i < count; i++) {
    rt_device_info* d = &devs[i];
    memset(d, 0, sizeof *d);
    CUdevice dev = i;
    if (G.cuDeviceGet && G.cuDeviceGet(&dev, i) != CUDA_SUCCESS) dev = i;
    d->id = (uint32_t)i;
    d->multiprocessors = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    size_t mem = 0;
    if (G.cuDeviceTotalMem && G.cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS) d->global_memory_bytes = mem;
    /* peak bandwidth: memory clock (kHz) × bus width (bytes) × 2 (double data rate) */
    uint64_t mclk = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    uint64_t bus = dev_attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d->memory_bandwidth = mclk * 1000u * (bus / 8u) * 2u;
    d->core_clock_khz = dev_attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d->cc_major = dev_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d->cc_minor = dev_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d->max_threads_per_block = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d->max_threads_per_multiprocessor = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    d->regs_per_block = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    d->regs_per_multiprocessor = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d->warp_size = dev_attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    d->shared_mem_per_block = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    d->shared_mem_per_multiprocessor = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d->shared_mem_per_block_optin = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d->max_blocks_per_multiprocessor = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    CUuuid uuid;
    memset(&uuid, 0, sizeof uuid);
    if (G.cuDeviceGetUuid && G.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) memcpy(d->uuid, uuid.bytes, 16);
    names[i][0] = 0;
    if (G.cuDeviceGetName && G.cuDeviceGetName(names[i], (int)sizeof names[i], dev) != CUDA_SUCCESS) names[i][0] = 0;
    names[i][sizeof names[i] - 1] = 0;
    d->name = names[i];
  }
  rt_cuda_wrote(rt_writer_devices(G.w, devs, (uint32_t)count));
}
