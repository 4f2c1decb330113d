/*
 * Test double of Intel PTI's libpti_view.so for test/collectors/xpu_collector.test.ts. It implements the calls the
 * XPU collector makes, with the behaviour of the real library where the collector depends on it:
 *   - ptiViewSetCallbacks calls the request callback once at once (the real one checks the buffer size then);
 *   - records are the structs of pti_abi.h, memcpy'd back to back; FAKE_PTI_VERSION ("0.17.0" default, or "1.2.0")
 *     picks v1 or _v2 records (and the 56- or 64-byte communication record);
 *   - a buffer is handed to the completion callback when less than the largest record fits, or on ptiFlushAllViews;
 *   - ptiViewGetNextRecord steps by this version's sizes; the first call succeeds whatever the first kind;
 *   - kernel and memory records' `_name` point to strings kept alive until the library unloads.
 * Test-only export: fake_pti_emit(steps, push_base) produces per step a runtime API call, a kernel, a copy, a fill and
 * (0.17, 1.x) a communication record, with an EXTERNAL_CORRELATION record while an external id is pushed; device work
 * alternates between the two devices of the Level Zero double (their UUIDs), every record has start and end times.
 * With FAKE_ZE_SUBDEVICES=N (the double's COMPOSITE hierarchy) the kernel of round i runs on tile (i / 2) % N of device
 * i % 2: that tile's UUID and (_v2) handle, SYCL queue 100 + 10 * device + tile; copies and fills stay on the device. Every delivered
 * buffer is appended, byte for byte, to the file FAKE_PTI_DUMP, and a line {"delivered":used} printed on stdout.
 * FAKE_PTI_FLUSH_RAISE=1: the first ptiFlushAllViews raises SIGTERM while it holds the library's lock.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "pti_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_RECORD 192u

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pti_fptr_buffer_requested g_req;
static pti_fptr_buffer_completed g_done;
static unsigned char* g_buf;
static size_t g_size, g_used;
static uint32_t g_enabled; /* bit per kind */
static uint32_t g_corr;
static unsigned g_round; /* rounds emitted so far */
static uint64_t g_ext[64];
static int g_ext_n;
static char* g_names[4096];
static int g_names_n;

static pti_version ver(void) {
  pti_version v = {0, 17, 0};
  const char* s = getenv("FAKE_PTI_VERSION");
  if (s) sscanf(s, "%u.%u.%u", &v._major, &v._minor, &v._patch);
  return v;
}
static int gen2(void) {
  pti_version v = ver();
  return v._major >= 1 || v._minor >= 18;
}
static size_t size_of(uint32_t k) {
  pti_version v = ver();
  int g2 = gen2();
  switch (k) {
    case PTI_VIEW_DEVICE_GPU_KERNEL: return g2 ? sizeof(pti_view_record_kernel_v2) : sizeof(pti_view_record_kernel);
    case PTI_VIEW_DRIVER_API:
    case PTI_VIEW_RUNTIME_API: return sizeof(pti_view_record_api);
    case PTI_VIEW_COLLECTION_OVERHEAD: return sizeof(pti_view_record_overhead);
    case PTI_VIEW_EXTERNAL_CORRELATION: return sizeof(pti_view_record_external_correlation);
    case PTI_VIEW_DEVICE_GPU_MEM_COPY: return g2 ? sizeof(pti_view_record_memory_copy_v2) : sizeof(pti_view_record_memory_copy);
    case PTI_VIEW_DEVICE_GPU_MEM_FILL: return g2 ? sizeof(pti_view_record_memory_fill_v2) : sizeof(pti_view_record_memory_fill);
    case PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P:
      return g2 ? sizeof(pti_view_record_memory_copy_p2p_v2) : sizeof(pti_view_record_memory_copy_p2p);
    case PTI_VIEW_DEVICE_SYNCHRONIZATION: return sizeof(pti_view_record_synchronization);
    case PTI_VIEW_COMMUNICATION:
      return g2 ? sizeof(pti_view_record_comms) : v._minor >= 17 ? sizeof(pti_view_record_comms_v017) : 0;
    default: return 0;
  }
}

static void deliver_locked(void) {
  if (!g_buf) return;
  if (g_used) {
    const char* path = getenv("FAKE_PTI_DUMP");
    FILE* f = path ? fopen(path, "ab") : NULL;
    if (f) {
      fwrite(g_buf, 1, g_used, f);
      fclose(f);
    }
    printf("{\"delivered\":%zu}\n", g_used);
    fflush(stdout);
  }
  unsigned char* b = g_buf;
  size_t size = g_size, used = g_used;
  g_buf = NULL;
  g_used = 0;
  if (g_done) g_done(b, size, used);
}

static void* append_locked(uint32_t kind) {
  if (!(g_enabled & (1u << kind)) || !g_req) return NULL;
  size_t n = size_of(kind);
  if (g_buf && g_size - g_used < n) deliver_locked();
  if (!g_buf) {
    g_req(&g_buf, &g_size);
    g_used = 0;
    if (!g_buf || g_size < MAX_RECORD) return NULL;
  }
  void* p = g_buf + g_used;
  memset(p, 0, n);
  memcpy(p, &kind, sizeof kind);
  g_used += n;
  return p;
}

static const char* keep(const char* fmt, unsigned i) {
  if (g_names_n == (int)(sizeof g_names / sizeof g_names[0])) return g_names[0];
  char* s = NULL;
  if (asprintf(&s, fmt, i) < 0) return NULL;
  g_names[g_names_n++] = s;
  return s;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT pti_version ptiVersion(void) { return ver(); }

EXPORT pti_result ptiViewSetCallbacks(pti_fptr_buffer_requested req, pti_fptr_buffer_completed done) {
  if (!req || !done) return PTI_ERROR_BAD_ARGUMENT;
  pthread_mutex_lock(&mu);
  g_req = req;
  g_done = done;
  unsigned char* b = NULL;
  size_t size = 0;
  req(&b, &size); /* as the real library: one request at once, to check the size */
  pti_result rc = !b || size < MAX_RECORD ? PTI_ERROR_BAD_ARGUMENT : PTI_SUCCESS;
  if (b) done(b, size, 0);
  pthread_mutex_unlock(&mu);
  return rc;
}

EXPORT pti_result ptiViewEnable(pti_view_kind k) {
  if (!size_of((uint32_t)k)) return PTI_ERROR_BAD_ARGUMENT;
  pthread_mutex_lock(&mu);
  g_enabled |= 1u << k;
  pthread_mutex_unlock(&mu);
  printf("{\"enabled\":%u}\n", (unsigned)k);
  fflush(stdout);
  return PTI_SUCCESS;
}

EXPORT pti_result ptiViewDisable(pti_view_kind k) {
  pthread_mutex_lock(&mu);
  g_enabled &= ~(1u << k);
  pthread_mutex_unlock(&mu);
  return PTI_SUCCESS;
}

EXPORT pti_result ptiFlushAllViews(void) {
  pthread_mutex_lock(&mu);
  /* FAKE_PTI_FLUSH_RAISE=1: the first flush raises SIGTERM while it holds the lock (a signal landing on a thread
   * inside PTI): the collector's handler then runs with the lock held. */
  static int raised;
  const char* r = getenv("FAKE_PTI_FLUSH_RAISE");
  if (r && *r == '1' && !raised) {
    raised = 1;
    printf("{\"flush_raise\":1}\n");
    fflush(stdout);
    raise(SIGTERM);
  }
  deliver_locked();
  pthread_mutex_unlock(&mu);
  return PTI_SUCCESS;
}

EXPORT pti_result ptiViewGetNextRecord(uint8_t* buffer, size_t valid, pti_view_record_base** rec) {
  if (!buffer || !rec) return PTI_ERROR_BAD_ARGUMENT;
  if (!*rec) {
    if (valid < sizeof(pti_view_record_base)) return PTI_STATUS_END_OF_BUFFER;
    *rec = (pti_view_record_base*)buffer;
    return PTI_SUCCESS;
  }
  size_t n = size_of((*rec)->_view_kind);
  if (!n) return PTI_ERROR_BAD_ARGUMENT;
  uint8_t* next = (uint8_t*)*rec + n;
  if (next + sizeof(pti_view_record_base) > buffer + valid) return PTI_STATUS_END_OF_BUFFER;
  *rec = (pti_view_record_base*)next;
  return PTI_SUCCESS;
}

EXPORT pti_result ptiViewPushExternalCorrelationId(pti_view_external_kind kind, uint64_t id) {
  (void)kind;
  pthread_mutex_lock(&mu);
  if (g_ext_n < 64) g_ext[g_ext_n++] = id;
  pthread_mutex_unlock(&mu);
  return PTI_SUCCESS;
}

EXPORT pti_result ptiViewPopExternalCorrelationId(pti_view_external_kind kind, uint64_t* id) {
  (void)kind;
  pthread_mutex_lock(&mu);
  pti_result rc = g_ext_n ? PTI_SUCCESS : PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY;
  if (g_ext_n && id) *id = g_ext[g_ext_n - 1];
  if (g_ext_n) g_ext_n--;
  pthread_mutex_unlock(&mu);
  return rc;
}

EXPORT uint64_t ptiViewGetTimestamp(void) { return now_ns(); }

EXPORT pti_result ptiViewGetApiIdName(pti_api_group_id group, uint32_t id, const char** name) {
  static const struct { uint32_t group, id; const char* name; } t[] = {
      {PTI_API_GROUP_LEVELZERO, 41, "zeCommandListAppendMemoryCopy"},
      {PTI_API_GROUP_LEVELZERO, 55, "zeCommandListAppendLaunchKernel"},
      {PTI_API_GROUP_SYCL, 17, "urEnqueueKernelLaunch"},
      {PTI_API_GROUP_SYCL, 33, "urEnqueueUSMMemcpy"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (t[i].group == (uint32_t)group && t[i].id == id) {
      *name = t[i].name;
      return PTI_SUCCESS;
    }
  return PTI_ERROR_BAD_API_ID;
}

/* The UUID the Level Zero double (fake_pti_ze_loader.c) gives device k: bytes k*16 .. k*16+15. */
static void set_uuid(uint8_t* u, unsigned k) {
  for (unsigned b = 0; b < 16; b++) u[b] = (uint8_t)(k * 16 + b);
}

/* Test-only: `steps` rounds of records (see the file comment). */
/* Test hook: the views enabled now (a bit per kind). */
EXPORT unsigned fake_pti_enabled(void) {
  pthread_mutex_lock(&mu);
  unsigned e = g_enabled;
  pthread_mutex_unlock(&mu);
  return e;
}

EXPORT void fake_pti_emit(unsigned steps) {
  uint32_t tid = (uint32_t)syscall(SYS_gettid), pid = (uint32_t)getpid();
  pthread_mutex_lock(&mu);
  for (unsigned s = 0; s < steps; s++) {
    unsigned i = g_round++;
    uint32_t corr = ++g_corr;
    uint64_t t = now_ns();
    pti_view_record_api* api = (pti_view_record_api*)append_locked(PTI_VIEW_RUNTIME_API);
    if (api) {
      api->_start_timestamp = t;
      api->_end_timestamp = t + 1000;
      api->_api_group = PTI_API_GROUP_SYCL;
      api->_api_id = 17;
      api->_process_id = pid;
      api->_thread_id = tid;
      api->_correlation_id = corr;
    }
    if (g_ext_n) {
      pti_view_record_external_correlation* e =
          (pti_view_record_external_correlation*)append_locked(PTI_VIEW_EXTERNAL_CORRELATION);
      if (e) {
        e->_correlation_id = corr;
        e->_external_id = g_ext[g_ext_n - 1];
        e->_external_kind = PTI_VIEW_EXTERNAL_KIND_CUSTOM_0;
      }
    }
    pti_view_record_kernel* k = (pti_view_record_kernel*)append_locked(PTI_VIEW_DEVICE_GPU_KERNEL);
    if (k) {
      k->_name = keep("_ZN4fake6kernelILi%uEEvv", i % 7);
      k->_source_file_name = i % 2 ? keep("/src/fake_%u.cpp", i % 3) : NULL;
      k->_correlation_id = corr;
      k->_thread_id = tid;
      k->_start_timestamp = t + 2000;
      k->_end_timestamp = t + 5000;
      set_uuid(k->_device_uuid, i % 2);
      if (gen2()) ((pti_view_record_kernel_v2*)k)->_device_handle = (void*)(uintptr_t)0x1000;
      const char* tiles = getenv("FAKE_ZE_SUBDEVICES");
      unsigned nt = tiles ? (unsigned)atoi(tiles) : 0;
      if (nt) {
        unsigned dev = i % 2, tile = (i / 2) % nt;
        k->_device_uuid[15] = (uint8_t)(0x80 + tile); /* fake_pti_ze_loader.c's tile UUID */
        k->_sycl_queue_id = 100 + 10 * dev + tile;
        if (gen2()) ((pti_view_record_kernel_v2*)k)->_device_handle = (void*)(uintptr_t)(0x2000 + 16 * dev + tile);
      }
    }
    pti_view_record_memory_copy* c = (pti_view_record_memory_copy*)append_locked(PTI_VIEW_DEVICE_GPU_MEM_COPY);
    if (c) {
      c->_memcpy_type = 6; /* H2D */
      c->_name = keep("zeCommandListAppendMemoryCopy(H2D)", i);
      c->_correlation_id = corr;
      c->_bytes = 4096u * (i + 1);
      c->_start_timestamp = t + 5000;
      c->_end_timestamp = t + 6000;
      set_uuid(c->_device_uuid, i % 2);
    }
    pti_view_record_memory_fill* f = (pti_view_record_memory_fill*)append_locked(PTI_VIEW_DEVICE_GPU_MEM_FILL);
    if (f) {
      f->_name = keep("zeCommandListAppendMemoryFill", i);
      f->_correlation_id = corr;
      f->_bytes = 256;
      f->_start_timestamp = t + 6000;
      f->_end_timestamp = t + 6500;
      set_uuid(f->_device_uuid, i % 2);
    }
    if (size_of(PTI_VIEW_COMMUNICATION)) {
      uint8_t* m = (uint8_t*)append_locked(PTI_VIEW_COMMUNICATION);
      if (m) {
        const char* nm = keep("oneccl_allreduce_%u", i % 2);
        size_t off = gen2() ? offsetof(pti_view_record_comms, _name) : offsetof(pti_view_record_comms_v017, _name);
        memcpy(m + off, &nm, sizeof nm);
        uint64_t cs = t + 7000, ce = t + 9000;
        memcpy(m + 8, &cs, sizeof cs); /* _start_timestamp, _end_timestamp, _process_id, _thread_id: same in both */
        memcpy(m + 16, &ce, sizeof ce);
        memcpy(m + 24, &pid, sizeof pid);
        memcpy(m + 28, &tid, sizeof tid);
      }
    }
  }
  pthread_mutex_unlock(&mu);
}
