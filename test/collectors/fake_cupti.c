/*
 * Test double of libcupti (and of the few CUDA driver calls the collector makes), for machines without a GPU.
 *
 * Built against the real CUPTI headers of one CUDA version (make -C collectors/cuda TAG=cu12|cu13|cu135 test-bins),
 * so the records it writes are that version's real structs (CUpti_ActivityKernel9 on 12.x, Kernel10 on 13.0,
 * Kernel13/Memcpy7/Memset5/Device6 on 13.5, ...) and cuptiActivityGetNextRecord walks them by their real sizeof.
 * Behaves like CUPTI where the collector can tell:
 *   - records of a kind are produced only while that kind is enabled;
 *   - buffers come from the client's bufferRequested, fill up, and are handed back through bufferCompleted from a
 *     worker thread (or from the caller of cuptiActivityFlushAll, synchronously);
 *   - a NULL buffer makes it drop records (counted by cuptiActivityGetNumDroppedRecords, reset on read); on a
 *     version below 27 a NULL buffer aborts, as real CUPTI of that age may crash;
 *   - thread ids follow cuptiSetThreadIdType; external correlation ids pushed on a thread produce
 *     EXTERNAL_CORRELATION records for that thread's API records.
 * The test program drives it through the fake_cupti_* functions below (dlsym). Environment:
 *   FAKE_CUPTI_VERSION=n   cuptiGetVersion value (default: CUPTI_API_VERSION of the headers)
 *   FAKE_CUPTI_FAIL=list   comma list of "function" (fails with CUPTI_ERROR_UNKNOWN) or "cuptiActivityEnable:<kind>"
 *                          (that kind fails with CUPTI_ERROR_NOT_COMPATIBLE)
 *   FAKE_CUPTI_FLUSH_RAISE=1  the first cuptiActivityFlushAll raises SIGTERM while it holds the library's lock (and
 *                          says when on stderr: "fake_cupti: SIGTERM raised at <CLOCK_MONOTONIC ns> ns")
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include <cupti.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The structs each release's libcupti delivers (its cupti_activity.h names them in the CUpti_ActivityKind docs). */
#if CUPTI_API_VERSION >= 130500
typedef CUpti_ActivityKernel13 FakeKernel;
typedef CUpti_ActivityMarkerData2 FakeMarkerData;
typedef CUpti_ActivityMemcpy7 FakeMemcpy;
typedef CUpti_ActivityMemset5 FakeMemset;
typedef CUpti_ActivityDevice6 FakeDevice;
typedef CUpti_ActivityContext4 FakeContext;
typedef CUpti_ActivityCudaEvent3 FakeCudaEvent;
#elif CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 FakeKernel;
typedef CUpti_ActivityMarkerData2 FakeMarkerData;
#elif CUPTI_API_VERSION >= 20
typedef CUpti_ActivityKernel9 FakeKernel;
typedef CUpti_ActivityMarkerData FakeMarkerData;
#else
#error "fake_cupti needs CUDA 12 or 13 CUPTI headers"
#endif
#if CUPTI_API_VERSION < 130500
typedef CUpti_ActivityMemcpy6 FakeMemcpy;
typedef CUpti_ActivityMemset4 FakeMemset;
typedef CUpti_ActivityDevice5 FakeDevice;
typedef CUpti_ActivityContext3 FakeContext;
typedef CUpti_ActivityCudaEvent2 FakeCudaEvent;
#endif

#define EXPORT __attribute__((visibility("default")))
#define MAXK 128

/* ------------------------------------------------------------------------------------------------------------------ */
/* State                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

struct pend {
  uint8_t* p;
  size_t size, used;
  struct pend* next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc req_cb;
static CUpti_BuffersCallbackCompleteFunc done_cb;
static uint8_t enabled[MAXK];
static uint8_t rt_off[4096], drv_off[4096];
static int tid_system;
static uint8_t* cur;
static size_t cur_size, cur_used;
static size_t last_size;
static size_t refused_left;
static struct pend *pend_head, *pend_tail;
static int inflight;
static int hold;
static int deliver_now;
static uint64_t dropped_pending;
static pthread_t worker;
static int worker_started;
static atomic_uint next_corr = 1;

static uint64_t st_requests, st_refusals, st_delivered, st_records, st_dropped_total, st_delivered_bytes;

static int fail_all_fn(const char* fn);
static int fail_kind(uint32_t kind);

/* External correlation stacks of the calling thread, per CUPTI external kind (index = kind). */
static _Thread_local uint64_t ext_stack[8][32];
static _Thread_local int ext_depth[8];

static size_t rec_size(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(FakeMemcpy);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(FakeMemset);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(FakeKernel);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(FakeDevice);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(FakeContext);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(FakeMarkerData);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(FakeCudaEvent);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
  }
}

static uint32_t version(void) {
  const char* s = getenv("FAKE_CUPTI_VERSION");
  return s && *s ? (uint32_t)strtoul(s, NULL, 10) : (uint32_t)CUPTI_API_VERSION;
}

static uint32_t my_tid(void) {
  return tid_system ? (uint32_t)syscall(SYS_gettid) : (uint32_t)(uintptr_t)pthread_self();
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Buffers                                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Appends the current buffer, with `used` bytes of records, to the delivery queue and forgets it. mu held. */
static void queue_current(size_t used) {
  struct pend* p = (struct pend*)calloc(1, sizeof *p);
  if (!p) abort();
  p->p = cur;
  p->size = cur_size;
  p->used = used;
  if (pend_tail) pend_tail->next = p;
  else pend_head = p;
  pend_tail = p;
  cur = NULL;
}

/* Moves the current buffer (if it has records) to the delivery queue. mu held. */
static void retire_current(void) {
  if (!cur) return;
  if (cur_used == 0) return; /* keep an empty buffer for later records */
  queue_current(cur_used);
  cur_size = cur_used = 0;
  pthread_cond_broadcast(&work_cv);
}

/* Room for one record of `sz` bytes in the current buffer, asking the client for a new one as CUPTI does; NULL when
 * the record is dropped. mu held. */
static uint8_t* room(size_t sz) {
  if (cur && cur_used + sz <= cur_size) {
    uint8_t* r = cur + cur_used;
    cur_used += sz;
    return r;
  }
  retire_current();
  if (refused_left >= sz) {
    refused_left -= sz;
    dropped_pending++;
    st_dropped_total++;
    return NULL;
  }
  refused_left = 0;
  if (cur) queue_current(0); /* an empty buffer too small for this record: give it back */
  uint8_t* b = NULL;
  size_t s = 0, maxr = 0;
  if (req_cb) req_cb(&b, &s, &maxr);
  st_requests++;
  if (!b || s < sz) {
    if (!b && version() < 27) {
      fprintf(stderr, "fake_cupti: NULL buffer given to CUPTI %u, which cannot take one\n", version());
      abort();
    }
    st_refusals++;
    dropped_pending++;
    st_dropped_total++;
    size_t per = last_size ? last_size : (8u << 20);
    refused_left = per > sz ? per - sz : 0; /* drop about one buffer's worth before asking again */
    return NULL;
  }
  if ((uintptr_t)b % 8) {
    fprintf(stderr, "fake_cupti: buffer %p not 8-byte aligned\n", (void*)b);
    abort();
  }
  cur = b;
  cur_size = s;
  cur_used = sz;
  last_size = s;
  return b;
}

/* A new record of `kind` (`size` bytes, zeroed, kind set, counted), or NULL when the kind is not enabled or the
 * record is dropped. mu held. */
static void* new_record(uint32_t kind, size_t size) {
  CUpti_Activity* r = enabled[kind] ? (CUpti_Activity*)room(size) : NULL;
  if (!r) return NULL;
  memset(r, 0, size);
  r->kind = (CUpti_ActivityKind)kind;
  st_records++;
  return r;
}

/* Sets the fields kernel, memcpy and memset records share: when and on which stream the operation ran, and the
 * correlation id of the API call that started it. A macro: the records are different struct types. */
#define SET_GPU_OP(r, corr, start_, end_, device, context, stream) \
  do {                                                              \
    (r)->start = (start_);                                          \
    (r)->end = (end_);                                              \
    (r)->deviceId = (device);                                       \
    (r)->contextId = (context);                                     \
    (r)->streamId = (stream);                                       \
    (r)->correlationId = (corr);                                    \
  } while (0)

/* Hands queued buffers to bufferCompleted on the calling thread, until none is queued. mu held (dropped around the
 * callback). */
static void deliver_all_locked(void) {
  while (pend_head) {
    struct pend* p = pend_head;
    pend_head = p->next;
    if (!pend_head) pend_tail = NULL;
    inflight++;
    pthread_mutex_unlock(&mu);
    if (done_cb) done_cb(NULL, 0, p->p, p->size, p->used);
    pthread_mutex_lock(&mu);
    inflight--;
    st_delivered++;
    st_delivered_bytes += p->used;
    free(p);
    pthread_cond_broadcast(&done_cv);
  }
}

static void* worker_main(void* arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  pthread_mutex_lock(&mu);
  for (;;) {
    while (!pend_head || (hold && !deliver_now)) pthread_cond_wait(&work_cv, &mu);
    deliver_all_locked();
  }
  return NULL;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* CUPTI entry points                                                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Whether `fn` is an item of the FAKE_CUPTI_FAIL comma list. */
static int fail_all_fn(const char* fn) {
  const char* s = getenv("FAKE_CUPTI_FAIL");
  if (!s) return 0;
  size_t n = strlen(fn);
  for (const char* p = s; (p = strstr(p, fn)) != NULL; p += n)
    if ((p == s || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
  return 0;
}

/* Whether FAKE_CUPTI_FAIL lists "cuptiActivityEnable:<kind>". */
static int fail_kind(uint32_t kind) {
  char tok[64];
  snprintf(tok, sizeof tok, "cuptiActivityEnable:%u", kind);
  return fail_all_fn(tok);
}

EXPORT CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* v) {
  if (!v) return CUPTI_ERROR_INVALID_PARAMETER;
  *v = version();
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_NOT_COMPATIBLE: *str = "CUPTI_ERROR_NOT_COMPATIBLE"; break;
    case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; break;
  }
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                           CUpti_BuffersCallbackCompleteFunc done) {
  if (fail_all_fn("cuptiActivityRegisterCallbacks")) return CUPTI_ERROR_UNKNOWN;
  if (!req || !done) return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&mu);
  req_cb = req;
  done_cb = done;
  if (!worker_started) {
    worker_started = 1;
    pthread_create(&worker, NULL, worker_main, NULL);
  }
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (fail_all_fn("cuptiActivityEnable")) return CUPTI_ERROR_UNKNOWN;
  if ((uint32_t)kind >= MAXK || !rec_size((uint32_t)kind)) return CUPTI_ERROR_INVALID_KIND;
  if (fail_kind((uint32_t)kind)) return CUPTI_ERROR_NOT_COMPATIBLE;
  pthread_mutex_lock(&mu);
  enabled[kind] = 1;
  /* "Activity kind CUPTI_ACTIVITY_KIND_RUNTIME overrides the settings done by [cuptiActivityEnableRuntimeApi] if
   * it is called after the API" (cupti_activity.h); the same holds for DRIVER */
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) memset(rt_off, 0, sizeof rt_off);
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) memset(drv_off, 0, sizeof drv_off);
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if ((uint32_t)kind >= MAXK) return CUPTI_ERROR_INVALID_KIND;
  pthread_mutex_lock(&mu);
  enabled[kind] = 0;
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

/* Kernels started but not finished (fake_cupti_kernel_running): a forced flush hands them over with end =
 * CUPTI_TIMESTAMP_UNKNOWN, as CUPTI does for work still running; a plain flush keeps them. mu held. */
static struct running_kernel {
  uint32_t kind, corr, device, context, stream;
  uint64_t start;
  const char* name;
} running[16];
static int n_running;

static void hand_over_running_locked(void) {
  for (int i = 0; i < n_running; i++) {
    const struct running_kernel* k = &running[i];
    FakeKernel* r = (FakeKernel*)room(sizeof *r); /* its slot was taken at launch, while the kind was enabled */
    if (!r) continue;
    memset(r, 0, sizeof *r);
    r->kind = (CUpti_ActivityKind)k->kind;
    st_records++;
    SET_GPU_OP(r, k->corr, k->start, CUPTI_TIMESTAMP_UNKNOWN, k->device, k->context, k->stream);
    r->gridX = r->gridY = r->gridZ = r->blockX = r->blockY = r->blockZ = 1;
    r->name = k->name;
  }
  n_running = 0;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  /* completed records are handed over either way; work still running only by a forced flush (end unknown) */
  if (fail_all_fn("cuptiActivityFlushAll")) return CUPTI_ERROR_UNKNOWN;
  pthread_mutex_lock(&mu);
  /* FAKE_CUPTI_FLUSH_RAISE=1: the first flush raises SIGTERM while it holds CUPTI's lock (a signal landing on a
   * thread inside CUPTI): the collector's handler then runs with the lock held. */
  static int raised;
  const char* r = getenv("FAKE_CUPTI_FLUSH_RAISE");
  if (r && *r == '1' && !raised) {
    raised = 1;
    /* When: a test times the exit from here (CLOCK_MONOTONIC, Node's process.hrtime), not from the program's start. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    fprintf(stderr, "fake_cupti: SIGTERM raised at %lld ns\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    fflush(stderr);
    raise(SIGTERM);
  }
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) hand_over_running_locked();
  retire_current();
  deliver_all_locked();
  while (inflight) pthread_cond_wait(&done_cv, &mu); /* a delivery by the worker thread still running */
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

/* Size of the record at `r`, by the kind in its first 4 bytes (0 = unknown kind). */
static size_t rec_size_at(const uint8_t* r) {
  uint32_t k;
  memcpy(&k, r, 4);
  return rec_size(k);
}

EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t off = 0;
  if (*record) {
    uint8_t* r = (uint8_t*)*record;
    size_t s = rec_size_at(r);
    if (!s) return CUPTI_ERROR_INVALID_KIND;
    off = (size_t)(r - buffer) + s;
  }
  if (off + 4 > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  size_t s = rec_size_at(buffer + off);
  if (!s) return CUPTI_ERROR_INVALID_KIND;
  if (off + s > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = (CUpti_Activity*)(buffer + off);
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* ts) {
  if (!ts) return CUPTI_ERROR_INVALID_PARAMETER;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t); /* as CUPTI on Linux */
  *ts = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
  return CUPTI_SUCCESS;
}

#define RT(name) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name, #name}
#define DRV(name) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name, #name}
static const struct {
  CUpti_CallbackDomain domain;
  uint32_t cbid;
  const char* name;
} kNames[] = {
    RT(cudaLaunchKernel_v7000), RT(cudaMemcpy_v3020),          RT(cudaMemcpyAsync_v3020),
    RT(cudaMemset_v3020),       RT(cudaDeviceSynchronize_v3020), RT(cudaStreamSynchronize_v3020),
    RT(cudaGetDevice_v3020),    DRV(cuLaunchKernel),           DRV(cuCtxGetCurrent),
    DRV(cuMemAlloc_v2),
};

EXPORT CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; i++)
    if (kNames[i].domain == domain && kNames[i].cbid == cbid) {
      *name = kNames[i].name;
      return CUPTI_SUCCESS;
    }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t* dropped) {
  (void)ctx;
  (void)stream;
  if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&mu);
  *dropped = (size_t)dropped_pending;
  dropped_pending = 0;
  pthread_mutex_unlock(&mu);
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  tid_system = type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if ((unsigned)kind >= 8 || ext_depth[kind] >= 32) return CUPTI_ERROR_INVALID_PARAMETER;
  ext_stack[kind][ext_depth[kind]++] = id;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                                   uint64_t* last) {
  if ((unsigned)kind >= 8 || ext_depth[kind] == 0) return CUPTI_ERROR_QUEUE_EMPTY;
  uint64_t v = ext_stack[kind][--ext_depth[kind]];
  if (last) *last = v;
  return CUPTI_SUCCESS;
}

/* Per-call switch of one API domain: `off` is rt_off or drv_off. */
static CUptiResult set_api_enabled(uint8_t* off, CUpti_CallbackId cbid, uint8_t enable) {
  if (cbid >= 4096) return CUPTI_ERROR_INVALID_PARAMETER;
  __atomic_store_n(&off[cbid], (uint8_t)!enable, __ATOMIC_RELAXED); /* the writer thread sets, program threads read */
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  return set_api_enabled(rt_off, cbid, enable);
}

EXPORT CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  return set_api_enabled(drv_off, cbid, enable);
}

EXPORT CUptiResult CUPTIAPI cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t enable) {
  (void)enable;
  return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* CUDA driver calls the collector makes (RAWTRACE_CUDA_DRIVER_LIB points here in tests)                              */
/* ------------------------------------------------------------------------------------------------------------------ */

EXPORT CUresult CUDAAPI cuDriverGetVersion(int* v) {
  *v = 13000;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int* n) {
  *n = 1;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = 32; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice d) {
  if (d != 0 || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)len, "Fake H100 80GB HBM3");
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice d) { /* cuDeviceTotalMem_v2 (cuda.h macro) */
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = 85899345920ull;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice d) {
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  for (int i = 0; i < 16; i++) uuid->bytes[i] = (char)(0xa0 + i);
  return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Control API for the test program                                                                                   */
/* ------------------------------------------------------------------------------------------------------------------ */

EXPORT int fake_cupti_enabled(uint32_t kind) {
  pthread_mutex_lock(&mu);
  int on = kind < MAXK && enabled[kind];
  pthread_mutex_unlock(&mu);
  return on;
}

EXPORT uint64_t fake_cupti_now(void) {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

EXPORT uint32_t fake_cupti_next_correlation(void) { return atomic_fetch_add(&next_corr, 1); }

/* One driver (domain 1) or runtime (domain 2) API record with a new correlation id, which it returns (the id is
 * returned even when the record is not produced). External ids pushed on this thread add EXTERNAL_CORRELATION. */
EXPORT uint32_t fake_cupti_api(int domain, uint32_t cbid, uint64_t start, uint64_t end) {
  uint32_t corr = fake_cupti_next_correlation();
  uint32_t kind = domain == 1 ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
  uint32_t tid = my_tid();
  pthread_mutex_lock(&mu);
  if (enabled[kind] && !(cbid < 4096 && __atomic_load_n(domain == 1 ? &drv_off[cbid] : &rt_off[cbid], __ATOMIC_RELAXED))) {
    for (int k = 0; k < 8; k++) {
      if (!ext_depth[k]) continue;
      CUpti_ActivityExternalCorrelation* x = new_record(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, sizeof *x);
      if (!x) continue;
      x->externalKind = (CUpti_ExternalCorrelationKind)k;
      x->externalId = ext_stack[k][ext_depth[k] - 1];
      x->correlationId = corr;
    }
    CUpti_ActivityAPI* a = new_record(kind, sizeof *a);
    if (a) {
      a->cbid = cbid;
      a->start = start;
      a->end = end;
      a->processId = (uint32_t)getpid();
      a->threadId = tid;
      a->correlationId = corr;
      a->returnValue = 0;
    }
  }
  pthread_mutex_unlock(&mu);
  return corr;
}

EXPORT void fake_cupti_kernel(uint32_t corr, const char* name, uint64_t start, uint64_t end, uint32_t device,
                              uint32_t context, uint32_t stream) {
  pthread_mutex_lock(&mu);
  uint32_t kind = enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                  : enabled[CUPTI_ACTIVITY_KIND_KERNEL]          ? CUPTI_ACTIVITY_KIND_KERNEL
                                                                 : 0;
  FakeKernel* k = new_record(kind, sizeof *k); /* kind 0 (neither is enabled): enabled[0] is never set */
  if (k) {
    SET_GPU_OP(k, corr, start, end, device, context, stream);
    k->registersPerThread = 32;
    k->gridX = 128;
    k->gridY = 1;
    k->gridZ = 1;
    k->blockX = 256;
    k->blockY = 1;
    k->blockZ = 1;
    k->staticSharedMemory = 1024;
    k->dynamicSharedMemory = 0;
    k->name = name;
  }
  pthread_mutex_unlock(&mu);
}

/* A kernel that starts at `start` and is still running: nothing is delivered until a forced flush, which writes it
 * with end = CUPTI_TIMESTAMP_UNKNOWN (0). Ignored when no kernel kind is enabled, or beyond 16 at once. */
EXPORT void fake_cupti_kernel_running(uint32_t corr, const char* name, uint64_t start, uint32_t device,
                                      uint32_t context, uint32_t stream) {
  pthread_mutex_lock(&mu);
  uint32_t kind = enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                  : enabled[CUPTI_ACTIVITY_KIND_KERNEL]          ? CUPTI_ACTIVITY_KIND_KERNEL
                                                                 : 0;
  if (kind && n_running < (int)(sizeof running / sizeof running[0]))
    running[n_running++] = (struct running_kernel){kind, corr, device, context, stream, start, name};
  pthread_mutex_unlock(&mu);
}

EXPORT void fake_cupti_memcpy(uint32_t corr, uint32_t copy_kind, uint32_t src_kind, uint32_t dst_kind, uint64_t bytes,
                              uint64_t start, uint64_t end, uint32_t device, uint32_t context, uint32_t stream) {
  pthread_mutex_lock(&mu);
  FakeMemcpy* m = new_record(CUPTI_ACTIVITY_KIND_MEMCPY, sizeof *m);
  if (m) {
    SET_GPU_OP(m, corr, start, end, device, context, stream);
    m->copyKind = (uint8_t)copy_kind;
    m->srcKind = (uint8_t)src_kind;
    m->dstKind = (uint8_t)dst_kind;
    m->bytes = bytes;
    m->runtimeCorrelationId = corr;
  }
  pthread_mutex_unlock(&mu);
}

EXPORT void fake_cupti_memset(uint32_t corr, uint32_t value, uint64_t bytes, uint64_t start, uint64_t end,
                              uint32_t device, uint32_t context, uint32_t stream) {
  pthread_mutex_lock(&mu);
  FakeMemset* m = new_record(CUPTI_ACTIVITY_KIND_MEMSET, sizeof *m);
  if (m) {
    SET_GPU_OP(m, corr, start, end, device, context, stream);
    m->value = value;
    m->bytes = bytes;
    m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  }
  pthread_mutex_unlock(&mu);
}

EXPORT void fake_cupti_sync(uint32_t corr, uint32_t type, uint64_t start, uint64_t end, uint32_t context,
                            uint32_t stream) {
  pthread_mutex_lock(&mu);
  CUpti_ActivitySynchronization2* s = new_record(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, sizeof *s);
  if (s) {
    s->type = (CUpti_ActivitySynchronizationType)type;
    s->start = start;
    s->end = end;
    s->correlationId = corr;
    s->contextId = context;
    s->streamId = stream;
    s->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  }
  pthread_mutex_unlock(&mu);
}

/* NVTX marker on the calling thread (flags: CUPTI_ACTIVITY_FLAG_MARKER_*). */
EXPORT void fake_cupti_marker(uint32_t flags, uint32_t id, uint64_t ts, const char* name, const char* domain) {
  uint32_t tid = my_tid();
  pthread_mutex_lock(&mu);
  CUpti_ActivityMarker2* m = new_record(CUPTI_ACTIVITY_KIND_MARKER, sizeof *m);
  if (m) {
    m->flags = (CUpti_ActivityFlag)flags;
    m->timestamp = ts;
    m->id = id;
    m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m->objectId.pt.processId = (uint32_t)getpid();
    m->objectId.pt.threadId = tid;
    m->name = name;
    m->domain = domain;
  }
  pthread_mutex_unlock(&mu);
}

/* NVTX resource name of a stream (objectKind STREAM: device, context, stream). */
EXPORT void fake_cupti_stream_name(uint32_t device, uint32_t context, uint32_t stream, const char* name) {
  pthread_mutex_lock(&mu);
  CUpti_ActivityName* n = new_record(CUPTI_ACTIVITY_KIND_NAME, sizeof *n);
  if (n) {
    n->objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
    n->objectId.dcs.deviceId = device;
    n->objectId.dcs.contextId = context;
    n->objectId.dcs.streamId = stream;
    n->name = name;
  }
  pthread_mutex_unlock(&mu);
}

EXPORT void fake_cupti_device(uint32_t id, const char* name) {
  pthread_mutex_lock(&mu);
  FakeDevice* d = new_record(CUPTI_ACTIVITY_KIND_DEVICE, sizeof *d);
  if (d) {
    d->id = id;
    d->numMultiprocessors = 108;
    d->globalMemorySize = 42949672960ull;
    d->globalMemoryBandwidth = 1555200000ull; /* KB/s */
    d->coreClockRate = 1410000;
    d->numThreadsPerWarp = 32;
    d->computeCapabilityMajor = 8;
    d->computeCapabilityMinor = 0;
    d->maxThreadsPerBlock = 1024;
    d->maxWarpsPerMultiprocessor = 64;
    d->name = name;
  }
  pthread_mutex_unlock(&mu);
}

/* Hands every buffer with records to bufferCompleted from the worker thread (also while holding) and waits. */
EXPORT void fake_cupti_complete_buffers(void) {
  pthread_mutex_lock(&mu);
  retire_current();
  deliver_now = 1;
  pthread_cond_broadcast(&work_cv);
  while (pend_head || inflight) pthread_cond_wait(&done_cv, &mu);
  deliver_now = 0;
  pthread_mutex_unlock(&mu);
}

/* Adds n to the count cuptiActivityGetNumDroppedRecords reports next. */
EXPORT void fake_cupti_set_dropped(uint64_t n) {
  pthread_mutex_lock(&mu);
  dropped_pending += n;
  st_dropped_total += n;
  pthread_mutex_unlock(&mu);
}

/* While on, full buffers stay with the fake (as CUPTI holds buffers it is filling): only FlushAll and
 * fake_cupti_complete_buffers hand them back. */
EXPORT void fake_cupti_hold(int on) {
  pthread_mutex_lock(&mu);
  hold = on;
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&mu);
}

static uint64_t st_nvtx_inject, st_nvtx_arg;

/* NVTX's injection entry, as real libcupti exports it: counts the calls and keeps the export-table pointer. */
EXPORT int InitializeInjectionNvtx2(const void* get_export_table) {
  pthread_mutex_lock(&mu);
  st_nvtx_inject++;
  st_nvtx_arg = (uint64_t)(uintptr_t)get_export_table;
  pthread_mutex_unlock(&mu);
  return 1;
}

/* Counters: "nvtx_inject", "nvtx_arg", "requests", "refusals", "delivered", "delivered_bytes", "records", "dropped_total". */
EXPORT uint64_t fake_cupti_stat(const char* what) {
  pthread_mutex_lock(&mu);
  uint64_t v = !strcmp(what, "nvtx_inject")       ? st_nvtx_inject
               : !strcmp(what, "nvtx_arg")        ? st_nvtx_arg
               : !strcmp(what, "requests")        ? st_requests
               : !strcmp(what, "refusals")        ? st_refusals
               : !strcmp(what, "delivered")       ? st_delivered
               : !strcmp(what, "delivered_bytes") ? st_delivered_bytes
               : !strcmp(what, "records")         ? st_records
               : !strcmp(what, "dropped_total")   ? st_dropped_total
                                                  : 0;
  pthread_mutex_unlock(&mu);
  return v;
}

/* Record size the fake uses for `kind` (0 = kind not delivered). */
EXPORT uint32_t fake_cupti_record_size(uint32_t kind) { return (uint32_t)rec_size(kind); }
