/*
 * rawtrace ROCm collector: a rocprofiler-sdk tool that records the SDK's buffer-tracing records of any HIP program
 * into a `.rawtrace` file (docs/format.md) with no code change. Loading, configuration and chunk layouts:
 * docs/collectors/rocm.md. Public API: rawtrace_rocm.h. ABI subset: rocprofiler_abi.h.
 *
 * What happens in the profiled process, and only this:
 *   - The SDK finds the library through ROCP_TOOL_LIBRARIES and calls rocprofiler_configure, then our initialize.
 *     Every SDK function is resolved at run time from the SDK library that loaded us (nothing from ROCm at build
 *     time), and buffer kinds and operations are chosen by NAME (the enums were renumbered between SDK 0.5 and 1.0).
 *   - The buffer callback (an SDK thread) copies each record as {u32 category, u32 kind, u64 size, payload[size]}
 *     into a buffer from a pool bounded by RAWTRACE_MAX_MEMORY and queues full buffers under a lock: memcpy only,
 *     no I/O. Records that do not fit under the cap are counted, never waited for.
 *   - Code-object and ROCTx callbacks copy the kernel symbol or the message into a small queued item.
 *   - ONE writer thread writes the queue in order: kernel symbols and ROCTx messages before the ACTIVITY chunk
 *     whose records need them, DROPPED counts after it. Nothing is decoded in the process.
 *   - Errors never reach the program: an SDK error disables collection (one log line, one LOG chunk), a write error
 *     stops writing (the file stays a valid prefix), signal handlers only do async-signal-safe work.
 *
 * Threads: SDK callbacks on SDK and program threads; control calls on the caller's thread; the exit flush on the
 * writer thread. The rt_writer is used by the initializing thread until the writer thread starts, then only by it.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_rocm.h"
#include "rocprofiler_abi.h"
#include "rawtrace_collector.h"
#include "rawtrace_queue.h"
#include "rawtrace_threads.h"
#include "rawtrace_writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RT_COLLECTOR_VERSION 0x000100u /* 0.1.0 */
#define CBUF_HDR 64u                   /* bytes before each copy buffer (our bookkeeping) */
#define POOL_KEEP 4u                   /* free copy buffers kept for reuse */
#define RECORD_HDR 16u                 /* u32 category, u32 kind, u64 size */
#define MAX_RECORD (64u << 10)         /* a payload `size` above this is implausible: skipped */
#define MAX_MESSAGE (64u << 10)        /* ROCTx messages and kernel names are cut here */
#define MAX_KINDS 256u
#define MAX_PENDING 1024u              /* kernel symbols / messages written early past this many */
#define FLUSH_WAIT_MS 10000
#define DEFAULT_NAME "rawtrace-%h-%p.rawtrace"

enum { IT_BUFFER = 1, IT_KSYM = 2, IT_MARKER = 3 }; /* besides the queue's RT_ITEM_CLOCK and RT_ITEM_LOG */
enum { ST_IDLE = 0, ST_RUNNING = 1, ST_STOPPED = 2, ST_DISABLED = 3, ST_FINISHED = 4 };

/** Buffer-tracing kinds recorded by default, by SDK name (absent ones are skipped: e.g. 0.5 has no
 * MEMORY_ALLOCATION or MARKER_CORE_RANGE_API, and RCCL_API only matters where RCCL is used). */
static const char* const kDefaultKinds[] = {
    "HIP_RUNTIME_API",   "KERNEL_DISPATCH",       "MEMORY_COPY",     "MEMORY_ALLOCATION",
    "SCRATCH_MEMORY",    "MARKER_CORE_API",       "MARKER_CORE_RANGE_API", "CORRELATION_ID_RETIREMENT",
    "RCCL_API",
};
/** Callback kinds carrying ROCTx messages, and their operations whose first argument is the message
 * (marker/api_args.h). MARKER_CORE_RANGE_API (1.0) gives its range records a correlation id of their own, so its
 * messages come from its own callbacks. */
static const struct {
  const char* kind;
  const char* ops[3];
} kMessageKinds[2] = {{"MARKER_CORE_API", {"roctxMarkA", "roctxRangePushA", "roctxRangeStartA"}},
                      {"MARKER_CORE_RANGE_API", {"roctxMarkA", "roctxThreadRangeA", "roctxProcessRangeA"}}};

/* ------------------------------------------------------------------------------------------------------------------ */
/* State                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

/* A copy buffer: records as written into ACTIVITY, `used` bytes valid. Data starts CBUF_HDR bytes in. */
struct cbuf {
  rt_item it;
  size_t size, used;
  uint64_t records;
  struct cbuf* next_free;
};
_Static_assert(sizeof(struct cbuf) <= CBUF_HDR, "cbuf header must fit in CBUF_HDR");

struct ksym_item {
  rt_item it;
  uint64_t kernel_id, code_object_id, kernel_object;
  uint32_t kernarg, lds, scratch, sgpr, arch_vgpr, accum_vgpr;
  uint32_t len;
  char name[];
};

struct marker_item {
  rt_item it;
  uint64_t corr;
  uint32_t len;
  char msg[];
};

struct config {
  char output[PATH_MAX];
  char kinds[1024]; /* comma-separated SDK kind names, or "default" */
  size_t buffer_size;
  size_t max_memory;
  int handle_signals;
  double exit_timeout;
};

/* SDK entry points (rocprofiler_abi.h). */
static struct {
  rt_rocp_create_context_fn create_context;
  rt_rocp_context_fn start_context, stop_context;
  rt_rocp_create_buffer_fn create_buffer;
  rt_rocp_flush_buffer_fn flush_buffer;
  rt_rocp_configure_buffer_tracing_fn configure_buffer;
  rt_rocp_configure_callback_tracing_fn configure_callback;
  rt_rocp_iterate_kinds_fn iterate_buffer_kinds, iterate_callback_kinds;
  rt_rocp_iterate_ops_fn iterate_buffer_ops, iterate_callback_ops;
  rt_rocp_kind_name_fn buffer_kind_name, callback_kind_name;
  rt_rocp_op_name_fn buffer_op_name, callback_op_name;
  rt_rocp_query_agents_fn query_agents;
  rt_rocp_get_timestamp_fn get_timestamp;
  rt_rocp_get_thread_id_fn get_thread_id;
  rt_rocp_push_external_fn push_external;
  rt_rocp_pop_external_fn pop_external;
  rt_rocp_status_string_fn status_string;
} S;

static struct {
  struct config cfg;
  int verbosity;

  /* what rocprofiler_configure told us */
  uint32_t sdk_version;
  char sdk_version_text[256];
  uint32_t priority;
  int v1; /* 1.0 layouts (24-byte correlation id) */
  char sdk_path[PATH_MAX];

  /* SDK objects and the kinds found by name */
  rt_rocp_context_id ctx;
  rt_rocp_buffer_id buf;
  uint8_t enabled[MAX_KINDS];
  uint8_t api_kind[MAX_KINDS]; /* kinds whose records are API calls (name ends in _API): thread_id after the times */
  uint32_t cb_code_object, cb_marker[2]; /* callback kinds (kMessageKinds); UINT32_MAX = absent */
  int32_t op_ksym;
  int32_t msg_ops[2][3];

  /* output */
  rt_writer* w;
  char path[PATH_MAX];
  pid_t owner_pid;
  atomic_int state;
  atomic_int error;
  atomic_int configured, initialized;
  pthread_mutex_t ctl_mu; /* start/stop/finish */
  int running;

  /* copy-buffer pool (pool_mu) and the buffer being filled (fill_mu) */
  pthread_mutex_t pool_mu;
  struct cbuf* free_list;
  uint32_t free_count;
  size_t bytes_alloc;
  pthread_mutex_t fill_mu;

  /* queue to the writer and its progress */
  rt_queue q;
  pthread_t writer;
  atomic_int writer_started;
  atomic_int joined;

  atomic_int finalize_req;
  atomic_int sink_closed;
  atomic_int write_failed;

  /* writer-thread-only */
  rt_threads threads;
  struct ksym_item** pend_ksym;
  size_t pend_ksym_n, pend_ksym_cap;
  struct marker_item** pend_msg;
  size_t pend_msg_n, pend_msg_cap;
  uint64_t vendor_drops_written, cap_drops_written;

  /* statistics */
  atomic_uint_fast64_t n_callbacks, n_records, n_vendor_dropped, n_capped, n_skipped, n_activity_bytes, n_ksyms,
      n_messages, t_callback_ns, n_chunks;
} G = {
    .ctl_mu = PTHREAD_MUTEX_INITIALIZER,
    .pool_mu = PTHREAD_MUTEX_INITIALIZER,
    .fill_mu = PTHREAD_MUTEX_INITIALIZER,
    .verbosity = RT_V_WARN,
    .cb_code_object = UINT32_MAX,
    .cb_marker = {UINT32_MAX, UINT32_MAX},
    .op_ksym = RT_ROCP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER,
    .msg_ops = {{-1, -1, -1}, {-1, -1, -1}},
};

static struct cbuf* g_fill; /* the copy buffer being filled (fill_mu) */

static uint64_t mono_ns(void) { return rt_clock_ns(CLOCK_MONOTONIC); }

/* ------------------------------------------------------------------------------------------------------------------ */
/* Logging                                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

static void enqueue(rt_item* it);
static int wrote(int rc);

static void vlog(int level, int to_file, const char* fmt, va_list ap) {
  char msg[480];
  vsnprintf(msg, sizeof msg, fmt, ap);
  rt_log_line(G.verbosity, level, msg);
  if (!to_file || !G.w || atomic_load(&G.write_failed)) return;
  uint32_t lvl = rt_log_chunk_level(level);
  if (!atomic_load(&G.writer_started)) {
    wrote(rt_writer_log(G.w, lvl, msg)); /* still the initializing thread's writer */
    return;
  }
  rt_queue_push_log(&G.q, lvl, msg);
}

__attribute__((format(printf, 2, 3))) static void logmsg(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, 0, fmt, ap);
  va_end(ap);
}

/* As logmsg, and also a LOG chunk in the file. */
__attribute__((format(printf, 2, 3))) static void logrec(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, 1, fmt, ap);
  va_end(ap);
}

static const char* status_text(rt_rocp_status st) {
  const char* s = S.status_string ? S.status_string(st) : NULL;
  return s ? s : "rocprofiler-sdk error";
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Configuration                                                                                                      */
/* ------------------------------------------------------------------------------------------------------------------ */

static void load_config(struct config* c) {
  memset(c, 0, sizeof *c);
  const char* out = getenv("RAWTRACE_OUTPUT");
  snprintf(c->output, sizeof c->output, "%s", out && *out ? out : DEFAULT_NAME);
  const char* kinds = getenv("RAWTRACE_ROCM_KINDS");
  snprintf(c->kinds, sizeof c->kinds, "%s", kinds && *kinds ? kinds : "default");
  c->buffer_size = rt_env_size("RAWTRACE_BUFFER_SIZE", 4u << 20, G.verbosity);
  if (c->buffer_size < 2 * MAX_RECORD) c->buffer_size = 2 * MAX_RECORD;
  if (c->buffer_size > (64u << 20)) c->buffer_size = 64u << 20;
  c->buffer_size &= ~(size_t)7;
  c->max_memory = rt_env_size("RAWTRACE_MAX_MEMORY", 256u << 20, G.verbosity);
  if (c->max_memory < c->buffer_size + CBUF_HDR) c->max_memory = c->buffer_size + CBUF_HDR;
  c->handle_signals = rt_env_flag("RAWTRACE_HANDLE_SIGNALS", 1);
  c->exit_timeout = rt_env_seconds("RAWTRACE_EXIT_TIMEOUT", G.verbosity);
  if (c->exit_timeout <= 0) c->exit_timeout = 10;
}

/* Whether SDK kind name `name` is selected by RAWTRACE_ROCM_KINDS (comma list of names, "default", "-NAME"):
 * 0 no, 1 through "default", 2 named explicitly. */
static int kind_wanted(const char* name) {
  int want = 0;
  const char* s = G.cfg.kinds;
  while (*s) {
    while (*s == ',' || *s == ' ') s++;
    size_t n = 0;
    while (s[n] && s[n] != ',' && s[n] != ' ') n++;
    if (!n) break;
    int neg = *s == '-';
    const char* t = s + neg;
    size_t tn = n - (size_t)neg;
    if (tn == 7 && !strncasecmp(t, "default", 7)) {
      for (size_t i = 0; i < sizeof kDefaultKinds / sizeof kDefaultKinds[0]; i++)
        if (!strcmp(name, kDefaultKinds[i])) want = neg ? 0 : 1;
    } else if (strlen(name) == tn && !strncasecmp(t, name, tn)) {
      want = neg ? 0 : 2;
    }
    s += n;
  }
  return want;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Resolving the SDK                                                                                                  */
/* ------------------------------------------------------------------------------------------------------------------ */

/*
 * The SDK functions come from the SDK library that loaded us: rocprofiler-register dlopens librocprofiler-sdk.so
 * RTLD_GLOBAL, so dlsym(RTLD_DEFAULT) finds them (as it does when the program links the SDK). Where the SDK was
 * loaded RTLD_LOCAL, the library holding the `finalize` function the SDK passed to initialize is the SDK: we open
 * that one by its path (RTLD_NOLOAD). RAWTRACE_ROCPROFILER_LIB names the library explicitly.
 */
static int bind_sdk(void* h) {
  memset(&S, 0, sizeof S);
#define REQ(field, name)                                                  \
  do {                                                                    \
    *(void**)(&S.field) = dlsym(h, name);                                 \
    if (!S.field) {                                                       \
      logmsg(RT_V_DEBUG, "rocprofiler-sdk library lacks %s", name);       \
      return -1;                                                          \
    }                                                                     \
  } while (0)
#define OPT(field, name) (*(void**)(&S.field) = dlsym(h, name))
  REQ(create_context, "rocprofiler_create_context");
  REQ(start_context, "rocprofiler_start_context");
  REQ(stop_context, "rocprofiler_stop_context");
  REQ(create_buffer, "rocprofiler_create_buffer");
  REQ(flush_buffer, "rocprofiler_flush_buffer");
  REQ(configure_buffer, "rocprofiler_configure_buffer_tracing_service");
  REQ(iterate_buffer_kinds, "rocprofiler_iterate_buffer_tracing_kinds");
  REQ(iterate_buffer_ops, "rocprofiler_iterate_buffer_tracing_kind_operations");
  REQ(buffer_kind_name, "rocprofiler_query_buffer_tracing_kind_name");
  REQ(buffer_op_name, "rocprofiler_query_buffer_tracing_kind_operation_name");
  OPT(configure_callback, "rocprofiler_configure_callback_tracing_service");
  OPT(iterate_callback_kinds, "rocprofiler_iterate_callback_tracing_kinds");
  OPT(iterate_callback_ops, "rocprofiler_iterate_callback_tracing_kind_operations");
  OPT(callback_kind_name, "rocprofiler_query_callback_tracing_kind_name");
  OPT(callback_op_name, "rocprofiler_query_callback_tracing_kind_operation_name");
  OPT(query_agents, "rocprofiler_query_available_agents");
  OPT(get_timestamp, "rocprofiler_get_timestamp");
  OPT(get_thread_id, "rocprofiler_get_thread_id");
  OPT(push_external, "rocprofiler_push_external_correlation_id");
  OPT(pop_external, "rocprofiler_pop_external_correlation_id");
  OPT(status_string, "rocprofiler_get_status_string");
#undef REQ
#undef OPT
  Dl_info info;
  if (dladdr(*(void**)(&S.create_context), &info) && info.dli_fname)
    snprintf(G.sdk_path, sizeof G.sdk_path, "%s", info.dli_fname);
  return 0;
}

static int load_sdk(rt_rocp_client_finalize_fn fini) {
  const char* env = getenv("RAWTRACE_ROCPROFILER_LIB");
  if (env && *env) {
    void* h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!h) logmsg(RT_V_ERROR, "dlopen(%s): %s", env, dlerror());
    return h ? bind_sdk(h) : -1;
  }
  if (bind_sdk(RTLD_DEFAULT) == 0) return 0;
  Dl_info info;
  if (fini && dladdr(*(void**)(&fini), &info) && info.dli_fname) {
    void* h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (h && bind_sdk(h) == 0) return 0;
  }
  static const char* const sonames[] = {"librocprofiler-sdk.so.1", "librocprofiler-sdk.so.0", "librocprofiler-sdk.so"};
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
    void* h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
    if (h && bind_sdk(h) == 0) return 0;
  }
  return -1;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Name tables (API_NAMES): every buffer kind, and the operations of the kinds we record                               */
/* ------------------------------------------------------------------------------------------------------------------ */

struct names {
  rt_api_name* v;
  size_t n, cap;
  uint32_t domain;
  rt_rocp_op_name_fn op_name;
};

static void names_add(struct names* t, uint32_t domain, uint32_t id, const char* name) {
  if (!name || !*name) return;
  if (t->n == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 256;
    rt_api_name* more = (rt_api_name*)realloc(t->v, ncap * sizeof *more);
    if (!more) return;
    t->v = more;
    t->cap = ncap;
  }
  t->v[t->n].domain = domain;
  t->v[t->n].id = id;
  t->v[t->n].name = name;
  t->n++;
}

static int on_kind(uint32_t kind, void* data) {
  const char* name = NULL;
  uint64_t len = 0;
  if (S.buffer_kind_name(kind, &name, &len) == RT_ROCP_STATUS_SUCCESS && name)
    names_add((struct names*)data, RT_ROCP_DOMAIN_KINDS, kind, name);
  return 0;
}

static int on_op(uint32_t kind, int32_t op, void* data) {
  struct names* t = (struct names*)data;
  const char* name = NULL;
  uint64_t len = 0;
  if (t->op_name(kind, op, &name, &len) == RT_ROCP_STATUS_SUCCESS && name)
    names_add(t, t->domain | kind, (uint32_t)op, name);
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Agents (AGENTS chunk, docs/format.md §12)                                                                          */
/* ------------------------------------------------------------------------------------------------------------------ */

#define AGENT_FIXED 120u

static rt_rocp_status on_agents(int32_t version, const void** agents, size_t n, void* data) {
  (void)version;
  rt_buf* b = (rt_buf*)data;
  rt_buf_u32(b, (uint32_t)n);
  rt_buf_u32(b, AGENT_FIXED);
  for (size_t i = 0; i < n; i++) {
    const rt_rocp_agent* a = (const rt_rocp_agent*)agents[i];
    uint64_t size = a ? a->size : 0;
    if (size < RT_ROCP_AGENT_SIZE_V0) { /* not a layout we know: an empty entry keeps the count right */
      uint8_t zero[AGENT_FIXED] = {0};
      rt_buf_bytes(b, zero, sizeof zero);
      for (int s = 0; s < 4; s++) rt_buf_cstr(b, NULL);
      continue;
    }
    size_t start = b->len;
    rt_buf_u64(b, a->id.handle);
    rt_buf_u32(b, a->type);
    rt_buf_u32(b, a->node_id);
    rt_buf_i32(b, a->logical_node_id);
    rt_buf_i32(b, a->logical_node_type_id);
    rt_buf_u32(b, a->cu_count);
    rt_buf_u32(b, a->simd_count);
    rt_buf_u32(b, a->simd_per_cu);
    rt_buf_u32(b, a->max_waves_per_simd);
    rt_buf_u32(b, a->max_waves_per_cu);
    rt_buf_u32(b, a->wave_front_size);
    rt_buf_u32(b, a->lds_size_in_kb);
    rt_buf_u32(b, a->workgroup_max_size);
    rt_buf_u32(b, a->max_engine_clk_fcompute);
    rt_buf_u32(b, a->gfx_target_version);
    rt_buf_u32(b, a->num_xcc);
    rt_buf_u32(b, a->family_id);
    rt_buf_u16(b, a->vendor_id);
    rt_buf_u16(b, a->device_id);
    rt_buf_u32(b, a->location_id);
    rt_buf_u32(b, a->domain);
    rt_buf_u32(b, 0);
    rt_buf_u64(b, a->gpu_id);
    rt_buf_u64(b, a->local_mem_size);
    uint8_t uuid[16] = {0};
    if (size >= sizeof(rt_rocp_agent)) memcpy(uuid, a->uuid, sizeof uuid);
    rt_buf_bytes(b, uuid, sizeof uuid);
    if (!b->oom && b->len - start != AGENT_FIXED) b->oom = 1; /* layout slip: refuse the chunk */
    rt_buf_cstr(b, a->name);
    rt_buf_cstr(b, a->product_name);
    rt_buf_cstr(b, a->vendor_name);
    rt_buf_cstr(b, a->model_name);
  }
  return RT_ROCP_STATUS_SUCCESS;
}

static int write_agents(void) {
  if (!S.query_agents) return 0;
  rt_buf b;
  rt_buf_init(&b);
  /* the SDK refuses a struct size larger than its own (agent.cpp): 296 bytes before 1.0 */
  size_t agent_size = G.v1 ? sizeof(rt_rocp_agent) : RT_ROCP_AGENT_SIZE_V0;
  rt_rocp_status st = S.query_agents(RT_ROCP_AGENT_INFO_VERSION_0, on_agents, agent_size, &b);
  int rc = 0;
  if (st != RT_ROCP_STATUS_SUCCESS || b.len == 0) {
    logrec(RT_V_WARN, "rocprofiler_query_available_agents failed: %s (%d); no AGENTS table", status_text(st), st);
  } else if (b.oom || b.len > RT_MAX_CHUNK_PAYLOAD) {
    rc = -ENOMEM;
  } else {
    rc = wrote(rt_writer_chunk(G.w, RT_CHUNK_AGENTS, b.data, (uint32_t)b.len));
  }
  rt_buf_free(&b);
  return rc;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Copy-buffer pool and the buffer callback                                                                           */
/* ------------------------------------------------------------------------------------------------------------------ */

static uint8_t* cbuf_data(struct cbuf* b) { return (uint8_t*)b + CBUF_HDR; }

/* A buffer from the pool, a new one under the cap, or NULL (cap reached or out of memory). */
static struct cbuf* take_buffer(void) {
  size_t sz = G.cfg.buffer_size;
  struct cbuf* b = NULL;
  int alloc = 0;
  pthread_mutex_lock(&G.pool_mu);
  if (G.free_list) {
    b = G.free_list;
    G.free_list = b->next_free;
    G.free_count--;
  } else if (G.bytes_alloc + sz + CBUF_HDR <= G.cfg.max_memory) {
    G.bytes_alloc += sz + CBUF_HDR;
    alloc = 1;
  }
  pthread_mutex_unlock(&G.pool_mu);
  if (alloc) {
    void* p = NULL;
    if (posix_memalign(&p, 64, CBUF_HDR + sz) != 0) p = NULL;
    if (!p) {
      pthread_mutex_lock(&G.pool_mu);
      G.bytes_alloc -= sz + CBUF_HDR;
      pthread_mutex_unlock(&G.pool_mu);
      return NULL;
    }
    b = (struct cbuf*)p;
    b->size = sz;
  }
  if (b) {
    b->used = 0;
    b->records = 0;
    b->next_free = NULL;
  }
  return b;
}

static void recycle(struct cbuf* b) {
  pthread_mutex_lock(&G.pool_mu);
  if (G.free_count < POOL_KEEP) {
    b->next_free = G.free_list;
    G.free_list = b;
    G.free_count++;
    b = NULL;
  } else {
    G.bytes_alloc -= b->size + CBUF_HDR;
  }
  pthread_mutex_unlock(&G.pool_mu);
  free(b);
}

/* Queues the buffer being filled (fill_mu held). */
static void ship_fill_locked(void) {
  struct cbuf* b = g_fill;
  g_fill = NULL;
  if (!b) return;
  if (!b->used) {
    recycle(b);
    return;
  }
  b->it.type = IT_BUFFER;
  enqueue(&b->it);
}

/* rocprofiler_buffer_tracing_cb_t: copies each tracing record, then queues what it filled. */
static void on_buffer(rt_rocp_context_id ctx, rt_rocp_buffer_id bid, rt_rocp_record_header** headers, size_t n,
                      void* data, uint64_t drop_count) {
  (void)ctx;
  (void)bid;
  (void)data;
  uint64_t t0 = mono_ns();
  atomic_fetch_add(&G.n_callbacks, 1);
  if (drop_count) atomic_fetch_add(&G.n_vendor_dropped, drop_count);
  if (atomic_load(&G.sink_closed)) return; /* after the exit flush, a write error, or in a forked child */
  uint64_t copied = 0, capped = 0, skipped = 0;
  pthread_mutex_lock(&G.fill_mu);
  for (size_t i = 0; i < n; i++) {
    const rt_rocp_record_header* h = headers ? headers[i] : NULL;
    uint64_t size = 0;
    if (h && h->payload && h->category == RT_ROCP_BUFFER_CATEGORY_TRACING) memcpy(&size, h->payload, sizeof size);
    if (size < 8 || size > MAX_RECORD) {
      skipped++; /* not a tracing record (only those start with their size), or an implausible size */
      continue;
    }
    size_t need = RECORD_HDR + ((size_t)size + 7u) / 8u * 8u;
    if (!g_fill || g_fill->used + need > g_fill->size) {
      ship_fill_locked();
      g_fill = take_buffer();
      if (!g_fill) {
        capped++;
        continue;
      }
    }
    uint8_t* p = cbuf_data(g_fill) + g_fill->used;
    memcpy(p, &h->category, 4);
    memcpy(p + 4, &h->kind, 4);
    memcpy(p + 8, &size, 8);
    memcpy(p + RECORD_HDR, h->payload, (size_t)size);
    memset(p + RECORD_HDR + size, 0, need - RECORD_HDR - (size_t)size);
    g_fill->used += need;
    g_fill->records++;
    copied++;
  }
  ship_fill_locked();
  pthread_mutex_unlock(&G.fill_mu);
  atomic_fetch_add(&G.n_records, copied);
  if (capped) atomic_fetch_add(&G.n_capped, capped);
  if (skipped) atomic_fetch_add(&G.n_skipped, skipped);
  atomic_fetch_add(&G.t_callback_ns, mono_ns() - t0);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Callback tracing: kernel symbols and ROCTx messages                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

static size_t bounded_len(const char* s) { return s ? strnlen(s, MAX_MESSAGE) : 0; }

static void on_kernel_symbol(const rt_rocp_kernel_symbol_data* d) {
  if (!d || d->size < sizeof *d) return;
  size_t len = bounded_len(d->kernel_name);
  struct ksym_item* k = (struct ksym_item*)malloc(sizeof *k + len + 1);
  if (!k) return;
  memset(k, 0, sizeof *k);
  k->it.type = IT_KSYM;
  k->kernel_id = d->kernel_id;
  k->code_object_id = d->code_object_id;
  k->kernel_object = d->kernel_object;
  k->kernarg = d->kernarg_segment_size;
  k->lds = d->group_segment_size;
  k->scratch = d->private_segment_size;
  k->sgpr = d->sgpr_count;
  k->arch_vgpr = d->arch_vgpr_count;
  k->accum_vgpr = d->accum_vgpr_count;
  k->len = (uint32_t)len;
  if (len) memcpy(k->name, d->kernel_name, len);
  k->name[len] = 0;
  atomic_fetch_add(&G.n_ksyms, 1);
  enqueue(&k->it);
}

static void on_marker(uint64_t corr, const rt_rocp_marker_api_data* d) {
  if (!d || d->size < sizeof *d) return;
  size_t len = bounded_len(d->message);
  struct marker_item* m = (struct marker_item*)malloc(sizeof *m + len + 1);
  if (!m) return;
  m->it.type = IT_MARKER;
  m->corr = corr;
  m->len = (uint32_t)len;
  if (len) memcpy(m->msg, d->message, len);
  m->msg[len] = 0;
  atomic_fetch_add(&G.n_messages, 1);
  enqueue(&m->it);
}

static void on_callback(uint32_t kind, int32_t op, uint32_t phase, uint64_t corr, void* payload) {
  if (atomic_load(&G.sink_closed) || phase != RT_ROCP_PHASE_ENTER) return;
  if (kind == G.cb_code_object && op == G.op_ksym) {
    on_kernel_symbol((const rt_rocp_kernel_symbol_data*)payload);
  } else {
    for (int m = 0; m < 2; m++)
      for (int i = 0; kind == G.cb_marker[m] && i < 3; i++)
        if (op == G.msg_ops[m][i]) on_marker(corr, (const rt_rocp_marker_api_data*)payload);
  }
}

/* The callback record is passed by value and its layout changed in 1.0: one entry point per layout. */
static void on_callback_v0(rt_rocp_callback_record_v0 r, rt_rocp_user_data* user, void* data) {
  (void)user;
  (void)data;
  on_callback(r.kind, r.operation, r.phase, r.correlation_id.internal, r.payload);
}

static void on_callback_v1(rt_rocp_callback_record_v1 r, rt_rocp_user_data* user, void* data) {
  (void)user;
  (void)data;
  on_callback(r.kind, r.operation, r.phase, r.correlation_id.internal, r.payload);
}

struct op_lookup {
  rt_rocp_op_name_fn name_fn;
  const char* want;
  int32_t found;
};

static int on_op_lookup(uint32_t kind, int32_t op, void* data) {
  struct op_lookup* l = (struct op_lookup*)data;
  const char* name = NULL;
  uint64_t len = 0;
  if (l->name_fn(kind, op, &name, &len) == RT_ROCP_STATUS_SUCCESS && name && !strcmp(name, l->want)) {
    l->found = op;
    return 1;
  }
  return 0;
}

/* Operation of callback kind `kind` named `want`, or -1. */
static int32_t callback_op(uint32_t kind, const char* want) {
  struct op_lookup l = {S.callback_op_name, want, -1};
  if (S.iterate_callback_ops && S.callback_op_name) S.iterate_callback_ops(kind, on_op_lookup, &l);
  return l.found;
}

static int on_cb_kind(uint32_t kind, void* data) {
  const char* name = NULL;
  uint64_t len = 0;
  (void)data;
  if (S.callback_kind_name(kind, &name, &len) != RT_ROCP_STATUS_SUCCESS || !name) return 0;
  if (!strcmp(name, "CODE_OBJECT")) G.cb_code_object = kind;
  for (int m = 0; m < 2; m++)
    if (!strcmp(name, kMessageKinds[m].kind)) G.cb_marker[m] = kind;
  return 0;
}

static void configure_callbacks(void) {
  if (!S.configure_callback || !S.iterate_callback_kinds || !S.callback_kind_name) {
    logrec(RT_V_WARN, "rocprofiler-sdk has no callback tracing: no kernel names or ROCTx messages");
    return;
  }
  S.iterate_callback_kinds(on_cb_kind, NULL);
  void* fn = G.v1 ? (void*)on_callback_v1 : (void*)on_callback_v0;
  if (G.cb_code_object != UINT32_MAX) {
    int32_t op = callback_op(G.cb_code_object, "CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER");
    if (op < 0) op = callback_op(G.cb_code_object, "DEVICE_KERNEL_SYMBOL_REGISTER"); /* 0.5 name */
    if (op >= 0) G.op_ksym = op;
    rt_rocp_status st = S.configure_callback(G.ctx, G.cb_code_object, NULL, 0, fn, NULL);
    if (st != RT_ROCP_STATUS_SUCCESS)
      logrec(RT_V_WARN, "code-object callback tracing refused: %s (%d); kernels will have no names",
             status_text(st), st);
  }
  for (int m = 0; m < 2; m++) {
    if (G.cb_marker[m] == UINT32_MAX) continue;
    int32_t ops[3];
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
      G.msg_ops[m][i] = callback_op(G.cb_marker[m], kMessageKinds[m].ops[i]);
      if (G.msg_ops[m][i] >= 0) ops[n++] = G.msg_ops[m][i];
    }
    rt_rocp_status st = n ? S.configure_callback(G.ctx, G.cb_marker[m], ops, n, fn, NULL) : RT_ROCP_STATUS_SUCCESS;
    if (st != RT_ROCP_STATUS_SUCCESS)
      logrec(RT_V_WARN, "%s callback tracing refused: %s (%d); its ranges will have no messages",
             kMessageKinds[m].kind, status_text(st), st);
  }
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Queue and writer thread                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

static void enqueue(rt_item* it) { rt_queue_push(&G.q, it); }

static void read_anchor(uint32_t which, rt_clock_anchor_t* a) {
  uint64_t v = 0;
  if (!S.get_timestamp || S.get_timestamp(&v) != RT_ROCP_STATUS_SUCCESS) v = rt_clock_ns(CLOCK_BOOTTIME);
  rt_clock_anchor(which, v, a);
}

static void enqueue_clock(uint32_t which) {
  rt_clock_anchor_t a;
  read_anchor(which, &a);
  rt_queue_push_clock(&G.q, &a);
}

static void on_write_error(int rc) {
  if (atomic_exchange(&G.write_failed, 1)) return;
  atomic_store(&G.sink_closed, 1);
  atomic_store(&G.error, rc);
  atomic_store(&G.state, ST_DISABLED);
  logmsg(RT_V_ERROR, "writing %s failed: %s; collection stopped (the file keeps every chunk written before)", G.path,
         strerror(-rc));
}

/* Checks a writer result and counts the chunk. Returns 0 when the chunk was written. */
static int wrote(int rc) {
  if (rc == 0) {
    atomic_fetch_add(&G.n_chunks, 1);
    return 0;
  }
  if (rt_writer_error(G.w)) on_write_error(rt_writer_error(G.w));
  else logmsg(RT_V_WARN, "chunk not written: %s", strerror(-rc));
  return rc;
}

/* Appends `it` to the pending list `*v` (`*n` of `*cap`); 0, or -1 when memory runs out (the item is freed). */
static int pend(void*** v, size_t* n, size_t* cap, void* it) {
  if (*n == *cap) {
    size_t ncap = *cap ? *cap * 2 : 64;
    void** more = (void**)realloc(*v, ncap * sizeof *more);
    if (!more) {
      free(it);
      return -1;
    }
    *v = more;
    *cap = ncap;
  }
  (*v)[(*n)++] = it;
  return 0;
}

#define KSYM_FIXED 48u

/* KERNEL_SYMBOLS (§13) and STRINGS (ROCTx messages keyed by correlation id) for everything pending. */
static void write_pending(void) {
  if (G.pend_ksym_n && !G.write_failed) {
    rt_buf b;
    rt_buf_init(&b);
    rt_buf_u32(&b, (uint32_t)G.pend_ksym_n);
    rt_buf_u32(&b, KSYM_FIXED);
    for (size_t i = 0; i < G.pend_ksym_n; i++) {
      const struct ksym_item* k = G.pend_ksym[i];
      rt_buf_u64(&b, k->kernel_id);
      rt_buf_u64(&b, k->code_object_id);
      rt_buf_u64(&b, k->kernel_object);
      rt_buf_u32(&b, k->kernarg);
      rt_buf_u32(&b, k->lds);
      rt_buf_u32(&b, k->scratch);
      rt_buf_u32(&b, k->sgpr);
      rt_buf_u32(&b, k->arch_vgpr);
      rt_buf_u32(&b, k->accum_vgpr);
      rt_buf_str(&b, k->name, k->len);
    }
    if (!b.oom && b.len <= RT_MAX_CHUNK_PAYLOAD) wrote(rt_writer_chunk(G.w, RT_CHUNK_KERNEL_SYMBOLS, b.data,
                                                                       (uint32_t)b.len));
    rt_buf_free(&b);
  }
  for (size_t i = 0; i < G.pend_ksym_n; i++) free(G.pend_ksym[i]);
  G.pend_ksym_n = 0;
  if (G.pend_msg_n && !G.write_failed) {
    rt_string* s = (rt_string*)malloc(G.pend_msg_n * sizeof *s);
    if (s) {
      for (size_t i = 0; i < G.pend_msg_n; i++) {
        s[i].ptr = G.pend_msg[i]->corr;
        s[i].bytes = G.pend_msg[i]->msg;
        s[i].len = G.pend_msg[i]->len;
      }
      wrote(rt_writer_strings(G.w, s, (uint32_t)G.pend_msg_n));
      free(s);
    }
  }
  for (size_t i = 0; i < G.pend_msg_n; i++) free(G.pend_msg[i]);
  G.pend_msg_n = 0;
}

/* DROPPED chunks for what the SDK reported and what the memory cap cost since the last ones. */
static void check_dropped(void) {
  uint64_t v = atomic_load(&G.n_vendor_dropped);
  if (v > G.vendor_drops_written && !G.write_failed) {
    uint64_t d = v - G.vendor_drops_written;
    G.vendor_drops_written = v;
    logrec(RT_V_WARN, "rocprofiler-sdk dropped %llu records (buffer full)", (unsigned long long)d);
    wrote(rt_writer_dropped(G.w, d, RT_DROP_VENDOR));
  }
  uint64_t c = atomic_load(&G.n_capped);
  if (c > G.cap_drops_written && !G.write_failed) {
    uint64_t d = c - G.cap_drops_written;
    G.cap_drops_written = c;
    wrote(rt_writer_dropped(G.w, d, RT_DROP_MEMORY_CAP));
  }
}

/*
 * Names the threads of API records in `b` (THREAD_NAMES, before the ACTIVITY chunk): the one field read in process,
 * thread_id of the API record layout (rocprofiler_abi.h: @56 in 1.0, @48 in 0.5), only within the record's size.
 */
static void note_threads(const struct cbuf* b) {
  const uint8_t* p = (const uint8_t*)b + CBUF_HDR;
  size_t off = G.v1 ? offsetof(rt_rocp_api_record_v1, thread_id) : offsetof(rt_rocp_api_record_v0, thread_id);
  for (size_t o = 0; o + RECORD_HDR <= b->used;) {
    uint32_t kind;
    uint64_t size, tid;
    memcpy(&kind, p + o + 4, 4);
    memcpy(&size, p + o + 8, 8);
    if (kind < MAX_KINDS && G.api_kind[kind] && size >= off + 8) {
      memcpy(&tid, p + o + RECORD_HDR + off, 8);
      rt_threads_note(&G.threads, (uint32_t)G.owner_pid, (uint32_t)tid);
    }
    o += RECORD_HDR + ((size_t)size + 7u) / 8u * 8u;
  }
}

static void handle_item(rt_item* it) {
  if (rt_item_is_common(it)) {
    if (!G.write_failed) wrote(rt_item_write(G.w, it));
    free(it);
    return;
  }
  switch (it->type) {
    case IT_BUFFER: {
      struct cbuf* b = (struct cbuf*)it;
      if (!G.write_failed) {
        note_threads(b);
        rt_threads_write(&G.threads, G.w, wrote);
        write_pending();
        if (wrote(rt_writer_activity(G.w, cbuf_data(b), (uint32_t)b->used)) == 0)
          atomic_fetch_add(&G.n_activity_bytes, b->used);
        check_dropped();
      }
      recycle(b);
      return;
    }
    case IT_KSYM:
      if (pend((void***)&G.pend_ksym, &G.pend_ksym_n, &G.pend_ksym_cap, it) == 0 && G.pend_ksym_n >= MAX_PENDING)
        write_pending();
      return;
    case IT_MARKER:
      if (pend((void***)&G.pend_msg, &G.pend_msg_n, &G.pend_msg_cap, it) == 0 && G.pend_msg_n >= MAX_PENDING)
        write_pending();
      return;
    default:
      break;
  }
  free(it);
}

static void drain(void) { rt_queue_drain(&G.q, handle_item); }

/* Stops the context and flushes the SDK buffer into our queue (ctl_mu held). */
static void stop_locked(void) {
  if (!G.running) return;
  S.stop_context(G.ctx);
  G.running = 0;
  S.flush_buffer(G.buf);
  if (atomic_load(&G.state) == ST_RUNNING) atomic_store(&G.state, ST_STOPPED);
}

/* Exit flush on the writer thread: stop and flush the SDK, drain, tail chunks, END, close. */
static void finalize(void) {
  struct timespec dl = rt_deadline_ms(2000);
  int stopped = 0;
  if (pthread_mutex_timedlock(&G.ctl_mu, &dl) == 0) {
    stop_locked();
    pthread_mutex_unlock(&G.ctl_mu);
    stopped = 1;
  } else {
    logmsg(RT_V_WARN, "exit flush: control lock busy; the SDK's last records are not flushed");
  }
  pthread_mutex_lock(&G.fill_mu);
  ship_fill_locked();
  pthread_mutex_unlock(&G.fill_mu);
  /* The SDK stopped: until the queue is empty; else it may still deliver: what is queued now. */
  if (stopped) drain();
  else rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
  atomic_store(&G.sink_closed, 1);
  drain(); /* what callbacks queued before they saw sink_closed */
  if (!G.write_failed) {
    write_pending();
    check_dropped();
    rt_clock_anchor_t a;
    read_anchor(RT_CLOCK_END, &a);
    wrote(rt_writer_clock(G.w, &a));
    wrote(rt_writer_end(G.w));
  }
  int rc = rt_writer_close(G.w);
  if (rc && !G.write_failed) logmsg(RT_V_ERROR, "closing %s: %s", G.path, strerror(-rc));
  if (!G.write_failed && atomic_load(&G.state) != ST_DISABLED) atomic_store(&G.state, ST_FINISHED);
  logmsg(RT_V_INFO, "wrote %s: %llu records, %llu dropped by the SDK, %llu over the memory cap", G.path,
         (unsigned long long)atomic_load(&G.n_records), (unsigned long long)atomic_load(&G.n_vendor_dropped),
         (unsigned long long)atomic_load(&G.n_capped));
}

static void* writer_main(void* arg) {
  (void)arg;
  rt_thread_enter("rawtrace-writer");
  while (!atomic_load(&G.finalize_req)) {
    rt_queue_sleep(&G.q, -1);
    rt_queue_drain_once(&G.q, handle_item); /* one batch per round: the exit request is seen under load too */
  }
  finalize();
  rt_queue_finish(&G.q);
  return NULL;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Exit, signals, fork                                                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

static struct sigaction g_old_sig[2]; /* SIGTERM, SIGINT */

/* From a normal thread: asks the writer for the exit flush and waits for it (bounded). Idempotent. */
static void finish(void) {
  if (!atomic_load(&G.writer_started) || getpid() != G.owner_pid) return;
  if (rt_queue_shutdown(&G.q, &G.finalize_req, &G.joined, G.writer, (long)(G.cfg.exit_timeout * 1000)) == 0)
    logmsg(RT_V_WARN, "exit flush did not finish within %.1f s; the file may lack its last chunks", G.cfg.exit_timeout);
}

static void at_exit(void) { finish(); }

/* When the process is about to die (default disposition), runs the exit flush and waits for it on the pipe. */
static void on_term_signal(int sig, siginfo_t* si, void* uc) {
  int armed = atomic_load(&G.writer_started) && getpid() == G.owner_pid;
  rt_queue_on_term_signal(&G.q, &G.finalize_req, armed, (int)(G.cfg.exit_timeout * 1000), sig, si, uc,
                          &g_old_sig[sig == SIGTERM ? 0 : 1]);
}

static void install_signal_handlers(void) {
  if (G.cfg.handle_signals) rt_install_term_handlers(on_term_signal, g_old_sig);
}

/* In a forked child the writer thread does not exist and the file belongs to the parent. */
static void on_fork_child(void) { atomic_store(&G.sink_closed, 1); }

/* ------------------------------------------------------------------------------------------------------------------ */
/* Initialization (the SDK's initialize)                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

static int write_header(void) {
  rt_header_info h;
  rt_header_info_init(&h);
  h.vendor = RT_VENDOR_ROCM_SDK;
  h.vendor_version = G.sdk_version;
  h.collector_version = RT_COLLECTOR_VERSION;
  static char host[256], cmdline[65536];
  rt_header_process(&h, rt_clock_ns(CLOCK_REALTIME), host, cmdline, sizeof cmdline);
  h.vendor_version_text = G.sdk_version_text;
  return wrote(rt_writer_header(G.w, &h));
}

/* API_NAMES: all buffer kinds (domain 0), then the operations of each kind we enabled (domain 0x10000 | kind). */
static int write_names(struct names* t) {
  t->op_name = S.buffer_op_name;
  t->domain = RT_ROCP_DOMAIN_OPS;
  size_t nkinds = t->n;
  for (size_t i = 0; i < nkinds; i++) {
    uint32_t k = t->v[i].id;
    if (k < MAX_KINDS && G.enabled[k]) S.iterate_buffer_ops(k, on_op, t);
  }
  return wrote(rt_writer_api_names(G.w, t->v, (uint32_t)t->n));
}

/* Enables buffer tracing for every wanted kind found by name. Returns how many were enabled. */
static uint32_t configure_kinds(const struct names* t) {
  uint32_t ok = 0;
  for (size_t i = 0; i < t->n; i++) {
    uint32_t k = t->v[i].id;
    int want = k < MAX_KINDS ? kind_wanted(t->v[i].name) : 0;
    if (!want) continue;
    rt_rocp_status st = S.configure_buffer(G.ctx, k, NULL, 0, G.buf);
    if (st == RT_ROCP_STATUS_SUCCESS) {
      size_t len = strlen(t->v[i].name);
      G.enabled[k] = 1;
      G.api_kind[k] = len > 4 && !strcmp(t->v[i].name + len - 4, "_API");
      ok++;
    } else {
      /* a default kind the SDK lacks support for (e.g. RCCL_API in a build without RCCL) is only worth a note */
      logrec(want == 2 ? RT_V_WARN : RT_V_INFO, "buffer tracing of %s (kind %u) refused: %s (%d); not recorded",
             t->v[i].name, k,
             status_text(st), st);
    }
  }
  return ok;
}

/* Gives up after an SDK error: LOG, END, close. Returns -1 (initialize's failure). */
static int fail_init(const char* what, rt_rocp_status st) {
  atomic_store(&G.error, st);
  atomic_store(&G.state, ST_DISABLED);
  logrec(RT_V_ERROR, "%s failed: %s (%d); ROCm collection disabled", what, status_text(st), st);
  wrote(rt_writer_end(G.w));
  rt_writer_close(G.w);
  G.w = NULL;
  return -1;
}

static int init_collector(rt_rocp_client_finalize_fn fini) {
  load_config(&G.cfg);
  G.owner_pid = getpid();
  rt_threads_init(&G.threads, (uint32_t)G.owner_pid);
  if (load_sdk(fini) != 0) {
    logmsg(RT_V_ERROR, "rocprofiler-sdk functions not found (set RAWTRACE_ROCPROFILER_LIB); nothing is recorded");
    return -1;
  }
  int qrc = rt_queue_init(&G.q);
  if (qrc != 0) {
    logmsg(RT_V_ERROR, "cannot set up the writer: %s; nothing is recorded", strerror(-qrc));
    return -1;
  }
  char wanted[PATH_MAX];
  int expanded = rt_expand_output(G.cfg.output, DEFAULT_NAME, wanted, sizeof wanted, rt_clock_ns(CLOCK_REALTIME));
  /* Exclusive create, as the CUDA collector: a name another process took gets a numbered one, said on stderr. */
  G.w = expanded == 0 ? rt_writer_create(wanted, G.path, sizeof G.path) : NULL; /* a cut name: ENAMETOOLONG */
  if (!G.w) {
    logmsg(RT_V_ERROR, "cannot create %.300s: %s; nothing is recorded", wanted, rt_writer_strerror(errno));
    return -1;
  }
  rt_env_checksum(G.w, G.verbosity);
  if (strcmp(wanted, G.path) != 0) {
    logmsg(RT_V_WARN, "%s already exists (another process, or an earlier run, uses this RAWTRACE_OUTPUT; add %%p for "
           "one file per process); writing %s instead", wanted, G.path);
  }
  rt_clock_anchor_t anchor;
  read_anchor(RT_CLOCK_START, &anchor);
  int rc = write_header();
  if (!rc) rc = wrote(rt_writer_clock(G.w, &anchor));
  if (rc) {
    rt_writer_close(G.w);
    G.w = NULL;
    return -1;
  }
  logrec(RT_V_INFO, "rocprofiler-sdk %s (version %u, priority %u) from %s", G.sdk_version_text, G.sdk_version,
         G.priority, G.sdk_path[0] ? G.sdk_path : "the process");

  rt_rocp_status st = S.create_context(&G.ctx);
  if (st != RT_ROCP_STATUS_SUCCESS) return fail_init("rocprofiler_create_context", st);
  size_t sz = G.cfg.buffer_size;
  st = S.create_buffer(G.ctx, sz, sz - sz / 4, RT_ROCP_BUFFER_POLICY_LOSSLESS, on_buffer, NULL, &G.buf);
  if (st != RT_ROCP_STATUS_SUCCESS) return fail_init("rocprofiler_create_buffer", st);

  struct names t = {0};
  S.iterate_buffer_kinds(on_kind, &t);
  uint32_t enabled = configure_kinds(&t);
  rc = write_names(&t);
  free(t.v);
  if (!rc) rc = write_agents();
  if (rc) return fail_init("writing the tables", 0);
  if (!enabled) return fail_init("rocprofiler_configure_buffer_tracing_service (every wanted kind)", 0);
  configure_callbacks();

  int trc = rt_thread_start(&G.writer, writer_main);
  if (trc != 0) return fail_init("starting the writer thread", trc);
  atomic_store(&G.writer_started, 1);
  atexit(at_exit);
  pthread_atfork(NULL, NULL, on_fork_child);
  install_signal_handlers();

  pthread_mutex_lock(&G.ctl_mu);
  st = S.start_context(G.ctx);
  if (st == RT_ROCP_STATUS_SUCCESS) {
    G.running = 1;
    atomic_store(&G.state, ST_RUNNING);
  }
  pthread_mutex_unlock(&G.ctl_mu);
  if (st != RT_ROCP_STATUS_SUCCESS) {
    atomic_store(&G.error, st);
    atomic_store(&G.state, ST_DISABLED);
    logrec(RT_V_ERROR, "rocprofiler_start_context failed: %s (%d); ROCm collection disabled", status_text(st), st);
    return -1;
  }
  logmsg(RT_V_INFO, "collecting %u buffer-tracing kinds into %s", enabled, G.path);
  return 0;
}

static int tool_initialize(rt_rocp_client_finalize_fn fini, void* tool_data) {
  (void)tool_data;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&G.initialized, &expected, 1)) return 0;
  return init_collector(fini) == 0 ? 0 : -1;
}

static void tool_finalize(void* tool_data) {
  (void)tool_data;
  finish();
}

static rt_rocp_configure_result g_result = {sizeof(rt_rocp_configure_result), tool_initialize, tool_finalize, NULL};

/* Entry point the SDK looks up in every tool library (registration.h). Only the first call registers. */
__attribute__((visibility("default"))) rt_rocp_configure_result* rocprofiler_configure(uint32_t version,
                                                                                        const char* runtime_version,
                                                                                        uint32_t priority,
                                                                                        rt_rocp_client_id* client_id) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&G.configured, &expected, 1)) return NULL;
  G.verbosity = rt_parse_log_level(getenv("RAWTRACE_LOG"));
  if (!rt_env_flag("RAWTRACE_ENABLE", 1) || !rt_process_selected()) return NULL;
  G.sdk_version = version;
  G.priority = priority;
  G.v1 = version >= RT_ROCP_VERSION_V1;
  snprintf(G.sdk_version_text, sizeof G.sdk_version_text, "%s", runtime_version ? runtime_version : "");
  if (client_id) client_id->name = "rawtrace";
  return &g_result;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Public API                                                                                                         */
/* ------------------------------------------------------------------------------------------------------------------ */

static int ready(void) {
  return atomic_load(&G.writer_started) && getpid() == G.owner_pid && !atomic_load(&G.finalize_req) &&
         !atomic_load(&G.write_failed);
}

RAWTRACE_ROCM_API int rawtrace_rocm_start(void) {
  if (!ready()) return -1;
  pthread_mutex_lock(&G.ctl_mu);
  int rc = 0;
  if (!G.running) {
    rc = S.start_context(G.ctx) == RT_ROCP_STATUS_SUCCESS ? 0 : -1;
    if (!rc) {
      G.running = 1;
      atomic_store(&G.state, ST_RUNNING);
      enqueue_clock(RT_CLOCK_PERIODIC);
    }
  }
  pthread_mutex_unlock(&G.ctl_mu);
  return rc;
}

RAWTRACE_ROCM_API int rawtrace_rocm_stop(void) {
  if (!ready()) return -1;
  pthread_mutex_lock(&G.ctl_mu);
  if (G.running) {
    stop_locked();
    enqueue_clock(RT_CLOCK_PERIODIC);
  }
  pthread_mutex_unlock(&G.ctl_mu);
  return 0;
}

RAWTRACE_ROCM_API int rawtrace_rocm_flush(void) {
  if (!ready()) return -1;
  rt_rocp_status st = S.flush_buffer(G.buf);
  if (st != RT_ROCP_STATUS_SUCCESS) logmsg(RT_V_DEBUG, "rocprofiler_flush_buffer: %s (%d)", status_text(st), st);
  rt_queue_wake(&G.q);
  if (rt_queue_wait(&G.q, rt_queue_last(&G.q), FLUSH_WAIT_MS) != 0) return -1;
  return atomic_load(&G.write_failed) ? -1 : 0;
}

static uint64_t thread_id(void) {
  uint64_t tid = 0;
  if (S.get_thread_id && S.get_thread_id(&tid) == RT_ROCP_STATUS_SUCCESS) return tid;
  return (uint64_t)syscall(SYS_gettid);
}

RAWTRACE_ROCM_API int rawtrace_rocm_push_external_id(uint64_t id) {
  if (!ready() || !S.push_external) return -1;
  rt_rocp_user_data v;
  v.value = id;
  return S.push_external(G.ctx, thread_id(), v) == RT_ROCP_STATUS_SUCCESS ? 0 : -1;
}

RAWTRACE_ROCM_API int rawtrace_rocm_pop_external_id(void) {
  if (!ready() || !S.pop_external) return -1;
  rt_rocp_user_data v;
  v.value = 0;
  return S.pop_external(G.ctx, thread_id(), &v) == RT_ROCP_STATUS_SUCCESS ? 0 : -1;
}

RAWTRACE_ROCM_API int rawtrace_rocm_get_stats(rawtrace_rocm_stats* out, size_t size) {
  if (!out) return -1;
  rawtrace_rocm_stats s;
  memset(&s, 0, sizeof s);
  s.callbacks = atomic_load(&G.n_callbacks);
  s.records = atomic_load(&G.n_records);
  s.records_dropped = atomic_load(&G.n_vendor_dropped);
  s.records_capped = atomic_load(&G.n_capped);
  s.records_skipped = atomic_load(&G.n_skipped);
  s.activity_bytes = atomic_load(&G.n_activity_bytes);
  s.kernel_symbols = atomic_load(&G.n_ksyms);
  s.marker_messages = atomic_load(&G.n_messages);
  s.callback_ns = atomic_load(&G.t_callback_ns);
  s.chunks_written = atomic_load(&G.n_chunks);
  s.state = atomic_load(&G.state);
  s.error = atomic_load(&G.error);
  memcpy(out, &s, size < sizeof s ? size : sizeof s);
  return 0;
}
