/*
 * Test double of librocprofiler-sdk.so for test/collectors/rocm_collector.test.ts: just enough of the SDK for the
 * rawtrace ROCm collector, in either ABI generation.
 *
 * FAKE_ROCP_SDK=0.5 | 1.0 (default 1.0) picks the layouts (rocprofiler_abi.h: 16- or 24-byte correlation ids, 56- or
 * 64-byte API records, 80- or 96-byte copies, 56- or 64-byte callback records, 296- or 312-byte agents) and the enum
 * numbering of that release (buffer kinds 12..15 were renumbered in 1.0; the HIP operation ids differ too, on
 * purpose, so only a reader that decodes by name gets them right).
 *
 * What it does, like the real SDK: fake_rocp_register() reads ROCP_TOOL_LIBRARIES, dlopens each tool RTLD_LOCAL,
 * calls its rocprofiler_configure(version, runtime version, priority, client id) and then the returned initialize.
 * The program then drives "HIP activity" (fake_rocp_code_objects, fake_rocp_step): the fake builds the records the
 * real SDK would, for the kinds the tool enabled only, stamps the external correlation id the tool pushed on the
 * calling thread, and hands them to the tool's buffer callback in batches of FAKE_ROCP_BATCH (default 5) headers
 * whose order is shuffled against emplacement order, with payloads scattered in memory. FAKE_ROCP_DROP_EVERY=N
 * loses every Nth record and reports the losses as the callback's drop_count. One header of another category
 * (counters) is delivered too: a tool must not copy it as a tracing record.
 *
 * FAKE_ROCP_FLUSH_HOLD_MS=N: the first rocprofiler_flush_buffer (the program's) prints {"ev":"flush_holding"} and
 * holds the SDK's lock N ms before it delivers, as a flush busy delivering a large buffer would.
 *
 * FAKE_ROCP_FAIL=<function name> makes that SDK function fail (status 1), as a broken or refusing SDK would;
 * FAKE_ROCP_FAIL=<buffer kind name> makes configuring that kind fail (not implemented).
 *
 * Every delivered tracing record is printed to stdout as a JSON line {"ev":"rec","cat","kind","size","hex"} in
 * delivery order, so the test can compare the dump byte for byte.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rocprofiler_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define ST_OK 0
#define ST_ERROR 1
#define ST_NOT_FOUND 4 /* ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND */
#define ST_BAD_ARG 19  /* ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT */

/* ---- the two releases ----------------------------------------------------------------------------------------- */

static const char* const kKinds05[] = {
    "NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API",
    "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API", "MARKER_NAME_API", "MEMORY_COPY",
    "KERNEL_DISPATCH", "PAGE_MIGRATION", "SCRATCH_MEMORY", "CORRELATION_ID_RETIREMENT", "RCCL_API"};
static const char* const kKinds10[] = {
    "NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API",
    "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API", "MARKER_NAME_API", "MEMORY_COPY",
    "KERNEL_DISPATCH", "SCRATCH_MEMORY", "CORRELATION_ID_RETIREMENT", "RCCL_API", "OMPT", "MEMORY_ALLOCATION",
    "RUNTIME_INITIALIZATION", "ROCDECODE_API", "ROCJPEG_API", "HIP_STREAM", "HIP_RUNTIME_API_EXT",
    "HIP_COMPILER_API_EXT", "ROCDECODE_API_EXT", "KFD_EVENT_PAGE_MIGRATE", "KFD_EVENT_PAGE_FAULT", "KFD_EVENT_QUEUE",
    "KFD_EVENT_UNMAP_FROM_GPU", "KFD_EVENT_DROPPED_EVENTS", "KFD_PAGE_MIGRATE", "KFD_PAGE_FAULT", "KFD_QUEUE",
    "MARKER_CORE_RANGE_API"};
static const char* const kCbKinds05[] = {
    "NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API",
    "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API", "MARKER_NAME_API", "CODE_OBJECT", "SCRATCH_MEMORY",
    "KERNEL_DISPATCH", "MEMORY_COPY", "RCCL_API"};
static const char* const kCbKinds10[] = {
    "NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API",
    "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API", "MARKER_NAME_API", "CODE_OBJECT", "SCRATCH_MEMORY",
    "KERNEL_DISPATCH", "MEMORY_COPY", "RCCL_API", "OMPT", "MEMORY_ALLOCATION", "RUNTIME_INITIALIZATION",
    "ROCDECODE_API", "ROCJPEG_API", "HIP_STREAM", "MARKER_CORE_RANGE_API"};

static const char* const kHipOps[] = {"hipGetDevice", "hipMalloc", "hipMemcpyAsync", "hipLaunchKernel",
                                      "hipDeviceSynchronize", "hipFree"};
enum { HIP_GET_DEVICE, HIP_MALLOC, HIP_MEMCPY_ASYNC, HIP_LAUNCH_KERNEL, HIP_SYNC, HIP_FREE, HIP_N };
static const char* const kCopyOps[] = {"MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE",
                                       "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE"};
static const char* const kDispatchOps[] = {"KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_ENQUEUE",
                                           "KERNEL_DISPATCH_COMPLETE"};
static const char* const kAllocOps[] = {"MEMORY_ALLOCATION_NONE", "MEMORY_ALLOCATION_ALLOCATE",
                                        "MEMORY_ALLOCATION_VMEM_ALLOCATE", "MEMORY_ALLOCATION_FREE",
                                        "MEMORY_ALLOCATION_VMEM_FREE"};
static const char* const kScratchOps[] = {"SCRATCH_MEMORY_NONE", "SCRATCH_MEMORY_ALLOC", "SCRATCH_MEMORY_FREE",
                                          "SCRATCH_MEMORY_ASYNC_RECLAIM"};
static const char* const kMarkerOps[] = {"roctxMarkA",       "roctxRangePushA", "roctxRangePop",
                                         "roctxRangeStartA", "roctxRangeStop",  "roctxGetThreadId"};
static const char* const kMarkerRangeOps[] = {"roctxMarkA", "roctxThreadRangeA", "roctxProcessRangeA",
                                              "roctxGetThreadId"};
static const char* const kRcclOps[] = {"ncclAllReduce", "ncclBroadcast"};
/* 0.5 named code-object operations without the CODE_OBJECT_ prefix (code_object/code_object.cpp) */
static const char* const kCodeObjectOps05[] = {"NONE", "LOAD", "DEVICE_KERNEL_SYMBOL_REGISTER"};
static const char* const kCodeObjectOps10[] = {"CODE_OBJECT_NONE", "CODE_OBJECT_LOAD",
                                               "CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER",
                                               "CODE_OBJECT_HOST_KERNEL_SYMBOL_REGISTER"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int g_v1 = 1;
static const char* const* g_kinds = kKinds10;
static uint32_t g_nkinds = N(kKinds10);
static const char* const* g_cbkinds = kCbKinds10;
static uint32_t g_ncbkinds = N(kCbKinds10);

/* HIP and RCCL operation ids differ between the releases (as the real tables do). */
static int32_t hip_op(int i) { return g_v1 ? 100 + 2 * i : 40 + 3 * i; }
static int32_t rccl_op(int i) { return g_v1 ? 7 + i : 5 + i; }

static uint32_t kind_of(const char* const* names, uint32_t n, const char* want) {
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(names[i], want)) return i;
  return UINT32_MAX;
}
static uint32_t bkind(const char* name) { return kind_of(g_kinds, g_nkinds, name); }
static uint32_t cbkind(const char* name) { return kind_of(g_cbkinds, g_ncbkinds, name); }

/* Operation names of buffer kind `kind`: the list and the id of its first entry via `ids`. */
static const char* const* ops_of(uint32_t kind, uint32_t* n, int* is_hip, int* is_rccl) {
  const char* name = kind < g_nkinds ? g_kinds[kind] : "";
  *is_hip = *is_rccl = 0;
  *n = 0;
  if (!strcmp(name, "HIP_RUNTIME_API")) return *is_hip = 1, *n = HIP_N, kHipOps;
  if (!strcmp(name, "RCCL_API")) return *is_rccl = 1, *n = N(kRcclOps), kRcclOps;
  if (!strcmp(name, "MEMORY_COPY")) return *n = N(kCopyOps), kCopyOps;
  if (!strcmp(name, "KERNEL_DISPATCH")) return *n = N(kDispatchOps), kDispatchOps;
  if (!strcmp(name, "MEMORY_ALLOCATION")) return *n = N(kAllocOps), kAllocOps;
  if (!strcmp(name, "SCRATCH_MEMORY")) return *n = N(kScratchOps), kScratchOps;
  if (!strcmp(name, "MARKER_CORE_API")) return *n = N(kMarkerOps), kMarkerOps;
  if (!strcmp(name, "MARKER_CORE_RANGE_API")) return *n = N(kMarkerRangeOps), kMarkerRangeOps;
  return NULL;
}

/* ---- state ---------------------------------------------------------------------------------------------------- */

struct pending {
  uint32_t category, kind;
  void* payload;
};

static struct {
  pthread_mutex_t mu;
  int contexts;
  int started;
  uint8_t buffer_kinds[64];
  rt_rocp_buffer_id buffer;
  rt_rocp_buffer_cb buffer_cb;
  void* buffer_data;
  void* cb_fn[32];
  uint8_t cb_ops[32][8];
  int cb_all[32];
  rt_rocp_configure_result* tool;
  rt_rocp_client_id client;
  struct pending pend[64];
  size_t npend;
  uint64_t drops, generated, deliveries;
  uint64_t next_corr;
  uint64_t t;
  int batch, drop_every;
  int quiet; /* FAKE_ROCP_QUIET: no "rec" line per delivered record (runs of many steps) */
  int flush_hold_ms; /* FAKE_ROCP_FLUSH_HOLD_MS, for the first flush only */
} F = {.mu = PTHREAD_MUTEX_INITIALIZER, .next_corr = 1};

static __thread uint64_t t_ext[16];
static __thread int t_next;

static uint64_t boottime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t gettid_u64(void) { return (uint64_t)syscall(SYS_gettid); }

/* Whether FAKE_ROCP_FAIL names `fn`. */
static int failing(const char* fn) {
  const char* f = getenv("FAKE_ROCP_FAIL");
  return f && !strcmp(f, fn);
}

/* ---- SDK API -------------------------------------------------------------------------------------------------- */

API rt_rocp_status rocprofiler_get_timestamp(uint64_t* ts) {
  *ts = boottime();
  return ST_OK;
}

API rt_rocp_status rocprofiler_get_thread_id(uint64_t* tid) {
  *tid = gettid_u64();
  return ST_OK;
}

API const char* rocprofiler_get_status_string(rt_rocp_status st) {
  return st == ST_OK ? "Success" : st == ST_NOT_FOUND ? "Kind not found" : "Fake error";
}

API rt_rocp_status rocprofiler_create_context(rt_rocp_context_id* out) {
  out->handle = (uint64_t)++F.contexts;
  return ST_OK;
}

API rt_rocp_status rocprofiler_start_context(rt_rocp_context_id ctx) {
  if (ctx.handle == 0 || failing("rocprofiler_start_context")) return ST_ERROR;
  __atomic_store_n(&F.started, 1, __ATOMIC_RELAXED); /* read by emplace on the program's threads */
  return ST_OK;
}

API rt_rocp_status rocprofiler_stop_context(rt_rocp_context_id ctx) {
  (void)ctx;
  __atomic_store_n(&F.started, 0, __ATOMIC_RELAXED);
  return ST_OK;
}

API rt_rocp_status rocprofiler_create_buffer(rt_rocp_context_id ctx, size_t size, size_t watermark, int32_t policy,
                                             rt_rocp_buffer_cb cb, void* data, rt_rocp_buffer_id* out) {
  (void)ctx;
  if (failing("rocprofiler_create_buffer")) return ST_ERROR;
  if (!cb || !out || size == 0 || watermark > size || policy < 1 || policy > 2) return ST_BAD_ARG;
  F.buffer_cb = cb;
  F.buffer_data = data;
  F.buffer.handle = 7;
  *out = F.buffer;
  return ST_OK;
}

API rt_rocp_status rocprofiler_configure_buffer_tracing_service(rt_rocp_context_id ctx, uint32_t kind,
                                                                const int32_t* ops, size_t n, rt_rocp_buffer_id b) {
  (void)ops;
  (void)n;
  if (ctx.handle == 0 || b.handle != F.buffer.handle) return ST_ERROR;
  if (kind == 0 || kind >= g_nkinds) return ST_NOT_FOUND;
  if (failing(g_kinds[kind])) return 17; /* ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED, e.g. RCCL_API without RCCL */
  F.buffer_kinds[kind] = 1;
  printf("{\"ev\":\"enabled\",\"kind\":%u,\"name\":\"%s\"}\n", kind, g_kinds[kind]);
  fflush(stdout);
  return ST_OK;
}

API rt_rocp_status rocprofiler_configure_callback_tracing_service(rt_rocp_context_id ctx, uint32_t kind,
                                                                  const int32_t* ops, size_t n, void* fn, void* data) {
  (void)data;
  if (ctx.handle == 0 || !fn) return ST_ERROR;
  if (kind == 0 || kind >= g_ncbkinds || kind >= 32) return ST_NOT_FOUND;
  F.cb_fn[kind] = fn;
  F.cb_all[kind] = n == 0;
  for (size_t i = 0; i < n; i++)
    if (ops[i] >= 0 && ops[i] < 8) F.cb_ops[kind][ops[i]] = 1;
  return ST_OK;
}

/* Calls `cb` for kinds 0 .. n-1 until it returns non-zero. */
static rt_rocp_status each_kind(uint32_t n, rt_rocp_kind_cb cb, void* data) {
  for (uint32_t i = 0; i < n; i++)
    if (cb(i, data) != 0) break;
  return ST_OK;
}

/* names[i] into *name / *len, or `missing` when i is out of range. */
static rt_rocp_status name_at(const char* const* names, uint32_t n, uint32_t i, const char** name, uint64_t* len,
                              rt_rocp_status missing) {
  if (!names || i >= n) return missing;
  if (name) *name = names[i];
  if (len) *len = strlen(names[i]);
  return ST_OK;
}

API rt_rocp_status rocprofiler_iterate_buffer_tracing_kinds(rt_rocp_kind_cb cb, void* data) {
  return each_kind(g_nkinds, cb, data);
}

API rt_rocp_status rocprofiler_query_buffer_tracing_kind_name(uint32_t kind, const char** name, uint64_t* len) {
  return name_at(g_kinds, g_nkinds, kind, name, len, ST_NOT_FOUND);
}

API rt_rocp_status rocprofiler_iterate_buffer_tracing_kind_operations(uint32_t kind, rt_rocp_kind_op_cb cb,
                                                                      void* data) {
  if (kind == 0 || kind >= g_nkinds) return ST_BAD_ARG;
  uint32_t n;
  int hip, rccl;
  ops_of(kind, &n, &hip, &rccl);
  for (uint32_t i = 0; i < n; i++) {
    int32_t op = hip ? hip_op((int)i) : rccl ? rccl_op((int)i) : (int32_t)i;
    if (cb(kind, op, data) != 0) break;
  }
  return ST_OK;
}

API rt_rocp_status rocprofiler_query_buffer_tracing_kind_operation_name(uint32_t kind, int32_t op, const char** name,
                                                                        uint64_t* len) {
  uint32_t n;
  int hip, rccl;
  const char* const* ops = ops_of(kind, &n, &hip, &rccl);
  for (uint32_t i = 0; ops && i < n; i++) {
    int32_t id = hip ? hip_op((int)i) : rccl ? rccl_op((int)i) : (int32_t)i;
    if (id == op) return name_at(ops, n, i, name, len, ST_OK);
  }
  return 5; /* ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND */
}

API rt_rocp_status rocprofiler_iterate_callback_tracing_kinds(rt_rocp_kind_cb cb, void* data) {
  return each_kind(g_ncbkinds, cb, data);
}

API rt_rocp_status rocprofiler_query_callback_tracing_kind_name(uint32_t kind, const char** name, uint64_t* len) {
  return name_at(g_cbkinds, g_ncbkinds, kind, name, len, ST_NOT_FOUND);
}

static const char* const* cb_ops_of(uint32_t kind, uint32_t* n) {
  *n = 0;
  if (kind == cbkind("CODE_OBJECT")) {
    *n = g_v1 ? N(kCodeObjectOps10) : N(kCodeObjectOps05);
    return g_v1 ? kCodeObjectOps10 : kCodeObjectOps05;
  }
  if (kind == cbkind("MARKER_CORE_API")) return *n = N(kMarkerOps), kMarkerOps;
  if (kind == cbkind("MARKER_CORE_RANGE_API")) return *n = N(kMarkerRangeOps), kMarkerRangeOps;
  return NULL;
}

API rt_rocp_status rocprofiler_iterate_callback_tracing_kind_operations(uint32_t kind, rt_rocp_kind_op_cb cb,
                                                                        void* data) {
  uint32_t n;
  cb_ops_of(kind, &n);
  for (uint32_t i = 0; i < n; i++)
    if (cb(kind, (int32_t)i, data) != 0) break;
  return ST_OK;
}

API rt_rocp_status rocprofiler_query_callback_tracing_kind_operation_name(uint32_t kind, int32_t op,
                                                                          const char** name, uint64_t* len) {
  uint32_t n;
  const char* const* ops = cb_ops_of(kind, &n);
  return op < 0 ? 5 : name_at(ops, n, (uint32_t)op, name, len, 5);
}

API rt_rocp_status rocprofiler_push_external_correlation_id(rt_rocp_context_id ctx, uint64_t tid,
                                                            rt_rocp_user_data id) {
  if (ctx.handle == 0 || tid != gettid_u64() || t_next >= 16) return ST_ERROR;
  t_ext[t_next++] = id.value;
  return ST_OK;
}

API rt_rocp_status rocprofiler_pop_external_correlation_id(rt_rocp_context_id ctx, uint64_t tid,
                                                           rt_rocp_user_data* id) {
  if (ctx.handle == 0 || tid != gettid_u64() || t_next == 0) return ST_ERROR;
  uint64_t v = t_ext[--t_next];
  if (id) id->value = v;
  return ST_OK;
}

/* ---- agents --------------------------------------------------------------------------------------------------- */

static rt_rocp_agent g_agents[3];

static void make_agents(void) {
  memset(g_agents, 0, sizeof g_agents);
  for (int i = 0; i < 3; i++) {
    rt_rocp_agent* a = &g_agents[i];
    a->size = g_v1 ? sizeof *a : RT_ROCP_AGENT_SIZE_V0;
    a->id.handle = 0x5000 + (uint64_t)i * 0x100;
    a->node_id = (uint32_t)i;
    a->logical_node_id = i;
    if (i == 0) {
      a->type = RT_ROCP_AGENT_TYPE_CPU;
      a->cpu_cores_count = 64;
      a->logical_node_type_id = 0;
      a->name = "AMD EPYC 7763 64-Core Processor";
      a->product_name = "AMD EPYC 7763 64-Core Processor";
      a->vendor_name = "CPU";
      a->model_name = "";
      a->max_engine_clk_ccompute = 2450;
      continue;
    }
    a->type = RT_ROCP_AGENT_TYPE_GPU;
    a->logical_node_type_id = i - 1;
    a->simd_count = 416;
    a->max_waves_per_simd = 8;
    a->lds_size_in_kb = 64;
    a->wave_front_size = 64;
    a->num_xcc = 1;
    a->cu_count = 104;
    a->simd_per_cu = 4;
    a->gfx_target_version = 90010;
    a->vendor_id = 0x1002;
    a->device_id = 0x740c;
    a->location_id = 0xc100u + (uint32_t)i;
    a->domain = 0;
    a->max_engine_clk_fcompute = 1700;
    a->max_waves_per_cu = 32;
    a->family_id = 141;
    a->workgroup_max_size = 1024;
    a->local_mem_size = 68702699520ull;
    a->gpu_id = 40000u + (uint64_t)i;
    a->name = "gfx90a";
    a->vendor_name = "AMD";
    a->product_name = "AMD Instinct MI250X/MI250";
    a->model_name = "aldebaran";
    for (int k = 0; k < 16; k++) a->uuid[k] = (uint8_t)(0xA0 + i * 16 + k);
  }
}

API rt_rocp_status rocprofiler_query_available_agents(int32_t version, rt_rocp_agents_cb cb, size_t agent_size,
                                                      void* data) {
  if (version != RT_ROCP_AGENT_INFO_VERSION_0 || !cb) return ST_BAD_ARG;
  /* as agent.cpp: a caller's struct larger than this release's is ABI-incompatible */
  if (agent_size > (g_v1 ? sizeof(rt_rocp_agent) : RT_ROCP_AGENT_SIZE_V0)) return 18; /* ERROR_INCOMPATIBLE_ABI */
  const void* ptrs[3] = {&g_agents[0], &g_agents[1], &g_agents[2]};
  return cb(version, ptrs, 3, data);
}

/* ---- delivery ------------------------------------------------------------------------------------------------- */

static void print_rec(const struct pending* p) {
  if (F.quiet) return;
  uint64_t size;
  memcpy(&size, p->payload, 8);
  static char hex[2 * 4096 + 1];
  for (uint64_t i = 0; i < size && i < 4096; i++) snprintf(hex + 2 * i, 3, "%02x", ((uint8_t*)p->payload)[i]);
  printf("{\"ev\":\"rec\",\"cat\":%u,\"kind\":%u,\"size\":%llu,\"hex\":\"%s\"}\n", p->category, p->kind,
         (unsigned long long)size, hex);
}

/* Hands the pending headers to the tool in a shuffled order (mu held). */
static void deliver_locked(void) {
  if (!F.npend && !F.drops) return;
  size_t n = F.npend;
  rt_rocp_record_header hdr[64];
  rt_rocp_record_header* ptrs[64];
  F.deliveries++;
  for (size_t i = 0; i < n; i++) {
    /* out of order: odd deliveries reversed, even ones rotated by one */
    size_t src = F.deliveries % 2 ? n - 1 - i : (i + 1) % n;
    hdr[i].category = F.pend[src].category;
    hdr[i].kind = F.pend[src].kind;
    hdr[i].payload = F.pend[src].payload;
    ptrs[i] = &hdr[i];
  }
  uint64_t drops = F.drops;
  F.drops = 0;
  F.npend = 0;
  if (F.buffer_cb) F.buffer_cb((rt_rocp_context_id){1}, F.buffer, ptrs, n, F.buffer_data, drops);
  for (size_t i = 0; i < n; i++) {
    struct pending p = {hdr[i].category, hdr[i].kind, hdr[i].payload};
    if (p.category == RT_ROCP_BUFFER_CATEGORY_TRACING) print_rec(&p);
    else printf("{\"ev\":\"foreign\",\"cat\":%u}\n", p.category);
    free(p.payload);
  }
  if (drops) printf("{\"ev\":\"dropped\",\"n\":%llu}\n", (unsigned long long)drops);
  fflush(stdout);
}

API rt_rocp_status rocprofiler_flush_buffer(rt_rocp_buffer_id b) {
  if (b.handle != F.buffer.handle) return ST_ERROR;
  pthread_mutex_lock(&F.mu);
  if (F.flush_hold_ms > 0) {
    int ms = F.flush_hold_ms;
    F.flush_hold_ms = 0;
    printf("{\"ev\":\"flush_holding\",\"ms\":%d}\n", ms);
    fflush(stdout);
    struct timespec left = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  deliver_locked();
  pthread_mutex_unlock(&F.mu);
  return ST_OK;
}

/* Emplaces one record of `size` bytes copied from `rec` (its first field must hold `size`). */
static void emplace(uint32_t category, const char* kind_name, const void* rec, size_t size) {
  uint32_t kind = bkind(kind_name);
  if (category == RT_ROCP_BUFFER_CATEGORY_TRACING && (kind == UINT32_MAX || !F.buffer_kinds[kind] || !__atomic_load_n(&F.started, __ATOMIC_RELAXED)))
    return;
  pthread_mutex_lock(&F.mu);
  F.generated++;
  if (F.drop_every > 0 && F.generated % (uint64_t)F.drop_every == 0) {
    F.drops++;
  } else {
    /* payloads scattered in memory: allocations of varying size */
    uint8_t* blob = (uint8_t*)malloc(size + (F.generated % 7) * 24);
    if (!blob) abort();
    memcpy(blob, rec, size);
    F.pend[F.npend].category = category;
    F.pend[F.npend].kind = category == RT_ROCP_BUFFER_CATEGORY_TRACING ? kind : 1;
    F.pend[F.npend].payload = blob;
    F.npend++;
  }
  if (F.npend >= (size_t)F.batch || F.npend >= 64) deliver_locked();
  pthread_mutex_unlock(&F.mu);
}

static uint64_t tick(uint64_t d) { return F.t += d; }

static uint64_t ext_top(void) { return t_next ? t_ext[t_next - 1] : 0; }

/* An API record (HIP, marker, RCCL) of `kind_name`. */
/* The fields every API record layout shares (the two layouts differ in the correlation id's size only). */
#define FILL_API(r, kind_name, op, corr, start, end)    \
  do {                                                  \
    memset(&(r), 0, sizeof(r));                         \
    (r).size = sizeof(r);                               \
    (r).kind = bkind(kind_name);                        \
    (r).operation = (op);                               \
    (r).correlation_id.internal = (corr);               \
    (r).correlation_id.external.value = ext_top();      \
    (r).start_timestamp = (start);                      \
    (r).end_timestamp = (end);                          \
    (r).thread_id = gettid_u64();                       \
  } while (0)

static void api_record(const char* kind_name, int32_t op, uint64_t corr, uint64_t ancestor, uint64_t start,
                       uint64_t end) {
  if (g_v1) {
    rt_rocp_api_record_v1 r;
    FILL_API(r, kind_name, op, corr, start, end);
    r.correlation_id.ancestor = ancestor;
    emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, kind_name, &r, sizeof r);
  } else {
    rt_rocp_api_record_v0 r;
    FILL_API(r, kind_name, op, corr, start, end);
    emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, kind_name, &r, sizeof r);
  }
}

static void invoke_callback(uint32_t kind, int32_t op, uint64_t corr, void* payload) {
  if (kind >= 32 || !F.cb_fn[kind] || !__atomic_load_n(&F.started, __ATOMIC_RELAXED)) return;
  if (!F.cb_all[kind] && (op < 0 || op >= 8 || !F.cb_ops[kind][op])) return;
  rt_rocp_user_data ud = {0};
#define FILL_CB(r)                                 \
  do {                                             \
    memset(&(r), 0, sizeof(r));                    \
    (r).context_id.handle = 1;                     \
    (r).thread_id = gettid_u64();                  \
    (r).correlation_id.internal = corr;            \
    (r).correlation_id.external.value = ext_top(); \
    (r).kind = kind;                               \
    (r).operation = op;                            \
    (r).phase = RT_ROCP_PHASE_ENTER;               \
    (r).payload = payload;                         \
  } while (0)
  if (g_v1) {
    rt_rocp_callback_record_v1 r;
    FILL_CB(r);
    ((rt_rocp_callback_fn_v1)F.cb_fn[kind])(r, &ud, NULL);
  } else {
    rt_rocp_callback_record_v0 r;
    FILL_CB(r);
    ((rt_rocp_callback_fn_v0)F.cb_fn[kind])(r, &ud, NULL);
  }
#undef FILL_CB
}

/* ---- what the program calls ----------------------------------------------------------------------------------- */

static void on_client_finalize(rt_rocp_client_id id) { (void)id; }

static void sdk_exit(void) {
  if (F.tool && F.tool->finalize) F.tool->finalize(F.tool->tool_data);
}

/** Registration as rocprofiler-register + the SDK do it. Returns the number of tools initialized. */
API int fake_rocp_register(void) {
  const char* v = getenv("FAKE_ROCP_SDK");
  g_v1 = !(v && !strcmp(v, "0.5"));
  g_kinds = g_v1 ? kKinds10 : kKinds05;
  g_nkinds = g_v1 ? N(kKinds10) : N(kKinds05);
  g_cbkinds = g_v1 ? kCbKinds10 : kCbKinds05;
  g_ncbkinds = g_v1 ? N(kCbKinds10) : N(kCbKinds05);
  const char* b = getenv("FAKE_ROCP_BATCH");
  F.batch = b && atoi(b) > 0 ? atoi(b) : 5;
  const char* d = getenv("FAKE_ROCP_DROP_EVERY");
  F.drop_every = d ? atoi(d) : 0;
  F.quiet = getenv("FAKE_ROCP_QUIET") != NULL;
  const char* hold = getenv("FAKE_ROCP_FLUSH_HOLD_MS");
  F.flush_hold_ms = hold ? atoi(hold) : 0;
  F.t = boottime();
  make_agents();
  atexit(sdk_exit); /* before the tool's own exit handler, so it runs after it (as the SDK's does) */
  const char* libs = getenv("ROCP_TOOL_LIBRARIES");
  if (!libs || !*libs) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s", libs);
  char* colon = strchr(path, ':');
  if (colon) *colon = 0; /* one tool is enough here */
  void* h = dlopen(path, RTLD_LOCAL | RTLD_LAZY);
  if (!h) {
    fprintf(stderr, "fake rocprofiler: dlopen(%s): %s\n", path, dlerror());
    return 0;
  }
  rt_rocp_configure_fn configure = NULL;
  *(void**)(&configure) = dlsym(h, "rocprofiler_configure");
  if (!configure) return 0;
  uint32_t version = g_v1 ? 10000u : 500u;
  F.client.size = sizeof F.client;
  F.client.handle = 1;
  F.tool = configure(version, g_v1 ? "1.0.0" : "0.5.0", 0, &F.client);
  int ok = 0;
  if (F.tool && F.tool->initialize) ok = F.tool->initialize(on_client_finalize, F.tool->tool_data) == 0;
  printf("{\"ev\":\"registered\",\"version\":%u,\"client\":\"%s\",\"ok\":%d}\n", version,
         F.client.name ? F.client.name : "", ok);
  fflush(stdout);
  return ok;
}

/** Loads a code object with three kernels: one kernel-symbol callback each (phase LOAD). */
API void fake_rocp_code_objects(void) {
  static const char* const names[3] = {"_Z10vector_addPfPKfS1_i", "_Z4gemmILi128EEvPKfS1_Pfiii",
                                       "_ZN7rocprim6detail11scan_kernelILb0EEEvPfi"};
  for (int i = 0; i < 3; i++) {
    struct {
      rt_rocp_kernel_symbol_data d;
      int64_t entry; /* 1.0 tail */
      uint64_t address;
    } s;
    memset(&s, 0, sizeof s);
    s.d.size = g_v1 ? 88 : 72;
    s.d.kernel_id = (uint64_t)i + 1;
    s.d.code_object_id = 1;
    s.d.kernel_name = names[i];
    s.d.kernel_object = 0x7f0000001000ull + (uint64_t)i * 0x100;
    s.d.kernarg_segment_size = 24 + 8 * (uint32_t)i;
    s.d.kernarg_segment_alignment = 8;
    s.d.group_segment_size = 1024u * (uint32_t)i;
    s.d.private_segment_size = 16u * (uint32_t)i;
    s.d.sgpr_count = 16 + 8 * (uint32_t)i;
    s.d.arch_vgpr_count = 32 + 16 * (uint32_t)i;
    s.d.accum_vgpr_count = 4u * (uint32_t)i;
    invoke_callback(cbkind("CODE_OBJECT"), RT_ROCP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER, 0, &s);
  }
}

/** One training step's worth of activity (step i): launch, copy, allocation, ROCTx range, RCCL, retirements. */
/* Test hook: 1 while the tool's context is started (between start_context and stop_context). */
API int fake_rocp_started(void) { return __atomic_load_n(&F.started, __ATOMIC_RELAXED); }

API void fake_rocp_step(int i) {
  uint64_t c_launch = F.next_corr++, c_copy = F.next_corr++, c_push = F.next_corr++, c_pop = F.next_corr++,
           c_malloc = F.next_corr++, c_rccl = F.next_corr++;
  char msg[64];
  snprintf(msg, sizeof msg, "step %d", i);
  rt_rocp_marker_api_data md = {sizeof md, msg};
  uint64_t push_t0 = tick(100);
  invoke_callback(cbkind("MARKER_CORE_API"), 1 /* roctxRangePushA */, c_push, &md);
  api_record("MARKER_CORE_API", 1, c_push, 0, push_t0, tick(50));

  uint64_t t0 = tick(100), t1 = tick(2000);
  api_record("HIP_RUNTIME_API", hip_op(HIP_MALLOC), c_malloc, 0, t0, t1);
  if (g_v1) {
    rt_rocp_memory_allocation_record r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.kind = bkind("MEMORY_ALLOCATION");
    r.operation = 1;
    r.correlation_id.internal = c_malloc;
    r.correlation_id.external.value = ext_top();
    r.thread_id = gettid_u64();
    r.start_timestamp = t0 + 10;
    r.end_timestamp = t1 - 10;
    r.agent_id = g_agents[1].id;
    r.address = 0x7f1000000000ull + (uint64_t)i * 0x100000;
    r.allocation_size = 1u << 20;
    emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, "MEMORY_ALLOCATION", &r, sizeof r);
  }

  t0 = tick(100);
  t1 = tick(1500);
  api_record("HIP_RUNTIME_API", hip_op(HIP_LAUNCH_KERNEL), c_launch, 0, t0, t1);
  rt_rocp_kernel_dispatch_record k;
  memset(&k, 0, sizeof k);
  k.size = sizeof k;
  k.kind = bkind("KERNEL_DISPATCH");
  k.operation = 2; /* KERNEL_DISPATCH_COMPLETE */
  k.correlation_id.internal = c_launch;
  k.correlation_id.external.value = ext_top();
  k.thread_id = gettid_u64();
  k.start_timestamp = t1 + 500;
  k.end_timestamp = t1 + 500 + 10000u * (uint64_t)(i % 3 + 1);
  k.dispatch_info.size = offsetof(rt_rocp_kernel_dispatch_info, reserved_padding);
  k.dispatch_info.agent_id = g_agents[1 + i % 2].id;
  k.dispatch_info.queue_id = 0x9000 + (uint64_t)(i % 2);
  k.dispatch_info.kernel_id = (uint64_t)(i % 3) + 1;
  k.dispatch_info.dispatch_id = (uint64_t)i + 1;
  k.dispatch_info.private_segment_size = 16;
  k.dispatch_info.group_segment_size = 1024;
  k.dispatch_info.workgroup_size = (rt_rocp_dim3){256, 1, 1};
  k.dispatch_info.grid_size = (rt_rocp_dim3){65536u * (uint32_t)(i + 1), 1, 1};
  emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, "KERNEL_DISPATCH", &k, sizeof k);

  t0 = tick(100);
  t1 = tick(800);
  api_record("HIP_RUNTIME_API", hip_op(HIP_MEMCPY_ASYNC), c_copy, 0, t0, t1);
  uint64_t cs = t1 + 200, ce = t1 + 200 + 3000;
  uint64_t bytes = 4096u * (uint64_t)(i + 1);
#define FILL_COPY(c)                                                      \
  do {                                                                    \
    memset(&(c), 0, sizeof(c));                                           \
    (c).size = sizeof(c);                                                 \
    (c).kind = bkind("MEMORY_COPY");                                      \
    (c).operation = i % 2 ? 4 : 2; /* DEVICE_TO_DEVICE (peer) : HOST_TO_DEVICE */ \
    (c).correlation_id.internal = c_copy;                                 \
    (c).correlation_id.external.value = ext_top();                        \
    (c).thread_id = gettid_u64();                                         \
    (c).start_timestamp = cs;                                             \
    (c).end_timestamp = ce;                                               \
    (c).dst_agent_id = g_agents[1].id;                                    \
    (c).src_agent_id = g_agents[i % 2 ? 2 : 0].id;                        \
    (c).bytes = bytes;                                                    \
  } while (0)
  if (g_v1) {
    rt_rocp_memory_copy_record_v1 c;
    FILL_COPY(c);
    c.dst_address = 0x7f1000000000ull;
    c.src_address = 0x7f2000000000ull;
    emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, "MEMORY_COPY", &c, sizeof c);
  } else {
    rt_rocp_memory_copy_record_v0 c;
    FILL_COPY(c);
    emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, "MEMORY_COPY", &c, sizeof c);
  }
#undef FILL_COPY

  if (i == 0) { /* the first launch needs scratch */
#define FILL_SCRATCH(s)                             \
  do {                                              \
    memset(&(s), 0, sizeof(s));                     \
    (s).size = sizeof(s);                           \
    (s).kind = bkind("SCRATCH_MEMORY");             \
    (s).operation = 1; /* SCRATCH_MEMORY_ALLOC */   \
    (s).correlation_id.internal = c_launch;         \
    (s).agent_id = g_agents[1].id;                  \
    (s).queue_id = 0x9000;                          \
    (s).thread_id = gettid_u64();                   \
    (s).start_timestamp = t0;                       \
    (s).end_timestamp = t0 + 300;                   \
  } while (0)
    if (g_v1) {
      rt_rocp_scratch_memory_record_v1 s;
      FILL_SCRATCH(s);
      s.allocation_size = 1u << 16;
      emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, "SCRATCH_MEMORY", &s, sizeof s);
    } else {
      rt_rocp_scratch_memory_record_v0 s;
      FILL_SCRATCH(s);
      emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, "SCRATCH_MEMORY", &s, sizeof s);
    }
#undef FILL_SCRATCH
    /* a counters record in the same buffer: not a tracing record, its payload has no size prefix */
    uint64_t counters[4] = {12345, 0, 0, 0};
    emplace(3 /* ROCPROFILER_BUFFER_CATEGORY_COUNTERS */, "", counters, sizeof counters);
  }

  t0 = tick(100);
  t1 = tick(5000);
  api_record("RCCL_API", rccl_op(0), c_rccl, 0, t0, t1);

  uint64_t pop_t0 = tick(100), pop_t1 = tick(40);
  api_record("MARKER_CORE_API", 2 /* roctxRangePop */, c_pop, 0, pop_t0, pop_t1);
  if (g_v1) { /* the range service makes its own correlation id and passes the message to its own callback */
    uint64_t c_range = F.next_corr++;
    invoke_callback(cbkind("MARKER_CORE_RANGE_API"), 1 /* roctxThreadRangeA */, c_range, &md);
    api_record("MARKER_CORE_RANGE_API", 1, c_range, 0, push_t0, pop_t1);
  }

  uint64_t retired[6] = {c_push, c_malloc, c_launch, c_copy, c_rccl, c_pop};
  for (int r = 0; r < 6; r++) {
    rt_rocp_correlation_retirement_record rr;
    memset(&rr, 0, sizeof rr);
    rr.size = sizeof rr;
    rr.kind = bkind("CORRELATION_ID_RETIREMENT");
    rr.timestamp = tick(10);
    rr.internal_correlation_id = retired[r];
    emplace(RT_ROCP_BUFFER_CATEGORY_TRACING, "CORRELATION_ID_RETIREMENT", &rr, sizeof rr);
  }
}
