/*
 * rawtrace CUDA collector: a CUPTI shim that records any CUDA program into a `.rawtrace` file (docs/format.md) with
 * no code change. Configuration, loading and behaviour: docs/collectors/cuda.md. Public API: rawtrace.h.
 *
 * What happens in the profiled process, and only this:
 *   - CUPTI is dlopen'ed at run time (never linked) and every function is dlsym'ed, so one build works with the
 *     CUPTI the program already has (CUDA 11.8 to 13.x).
 *   - bufferRequested hands out buffers from a pool bounded by RAWTRACE_MAX_MEMORY; bufferCompleted appends the
 *     buffer to a lock-protected queue and returns (no I/O, no allocation).
 *   - ONE writer thread drains the queue: it walks each buffer with the kind → size table measured at start, copies
 *     the strings its pointer fields name (STRINGS before ACTIVITY), notes the threads of API records
 *     (THREAD_NAMES) and writes the buffer bytes as they are (ACTIVITY). Nothing is decoded in the process.
 *   - Errors never reach the program: a CUPTI error disables collection (one log line, one LOG chunk); a write error
 *     stops writing (the file stays a valid prefix); signals are handled with async-signal-safe code only.
 *
 * Threads: the CUPTI callbacks run on CUDA API threads or CUPTI's worker; control calls (start/stop/flush) on the
 * caller's thread; the signal toggle, the collection window and the exit flush on the writer thread. The rt_writer
 * is used by the init thread until the writer thread starts, and by the writer thread only afterwards.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace.h"
#include "rawtrace_collector.h"
#include "rawtrace_queue.h"
#include "rawtrace_threads.h"
#include "rawtrace_writer.h"

#include <cupti.h>

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------------------------ */
/* Constants                                                                                                          */
/* ------------------------------------------------------------------------------------------------------------------ */

#define RT_COLLECTOR_VERSION 0x000100u /* 0.1.0 */
#define MAX_KIND 128u                  /* kinds probed: 1 .. MAX_KIND-1 */
#define CBUF_HDR 64u                   /* bytes before each buffer handed to CUPTI (our bookkeeping) */
#define CBUF_MAGIC 0x52544246u         /* "FBTR" */
#define CBUF_RESERVE 1u                /* emergency-reserve buffer: contents are discarded */
#define POOL_KEEP 4u                   /* free buffers kept for reuse; more are freed */
#define RESERVE_BUFFERS 2u             /* emergency reserve for CUPTI versions that cannot take a NULL buffer */
#define RESERVE_MAX_SIZE (1u << 20)
#define CUPTI_REJECT_MIN_VERSION 27u   /* CUPTI API 27 (CUDA 12.9): a NULL buffer makes CUPTI drop records */
#define MAX_STRING_BYTES (1u << 20)
#define FLUSH_WAIT_MS 10000
#define SIGNAL_WAIT_MS 3000

enum { LOG_OFF = 0, LOG_ERROR = 1, LOG_WARN = 2, LOG_INFO = 3, LOG_DEBUG = 4 };
_Static_assert((int)LOG_ERROR == (int)RT_V_ERROR && (int)LOG_WARN == (int)RT_V_WARN && (int)LOG_INFO == (int)RT_V_INFO,
               "LOG_* are RT_V_*");
enum { FROM_API = 0, FROM_PRELOAD = 1, FROM_INJECTION = 2 };
enum { INIT_NONE = 0, INIT_OK = 1, INIT_FAILED = -1 };
enum { INIT_DEFER = 1 }; /* init_collector: libcupti not found yet, try again at InitializeInjection */
enum { IT_BUFFER = 1 }; /* besides the queue's own RT_ITEM_CLOCK and RT_ITEM_LOG */

/* CUDA driver API: our own function types (cuda.h renames some entry points with macros). */
typedef CUresult (*fn_cu_int)(int*);
typedef CUresult (*fn_cu_get)(CUdevice*, int);
typedef CUresult (*fn_cu_attr)(int*, CUdevice_attribute, CUdevice);
typedef CUresult (*fn_cu_name)(char*, int, CUdevice);
typedef CUresult (*fn_cu_mem)(size_t*, CUdevice);
typedef CUresult (*fn_cu_uuid)(CUuuid*, CUdevice);
typedef int (*fn_cudart_version)(int*);
/* Optional CUPTI entry points that older headers lack. */
typedef CUptiResult (*fn_cupti_u8)(uint8_t);

/* ------------------------------------------------------------------------------------------------------------------ */
/* State                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Bookkeeping in the CBUF_HDR bytes before each buffer handed to CUPTI. */
struct cbuf {
  rt_item it;
  uint32_t magic;
  uint32_t flags;
  size_t size;
  size_t valid;
  struct cbuf* next_free;
};
_Static_assert(sizeof(struct cbuf) <= CBUF_HDR, "cbuf header must fit in CBUF_HDR");

/* STRINGS table entry: pointer value → the bytes last written for it. */
struct sentry {
  uint64_t ptr; /* 0 = empty slot */
  char* copy;   /* NULL: unreadable so far */
  uint32_t len;
  uint32_t epoch; /* buffer in which the content was last checked */
};

struct config {
  char output[PATH_MAX];
  uint32_t kinds[64];
  uint32_t nkinds;
  size_t buffer_size;
  size_t max_memory;
  double start_delay;
  double duration;
  int signal_no;
  int handle_signals;
  int all_api;
  int preload_mode; /* 0 eager, 1 lazy, 2 off */
  double exit_timeout;
};

static struct {
  struct config cfg;

  /* CUPTI */
  void* cupti;
  char cupti_path[PATH_MAX];
  uint32_t cupti_version;
  int can_reject;
  uint32_t kind_size[MAX_KIND];

  /* CUDA driver (optional) */
  void* cuda;
  fn_cu_int cuDeviceGetCount;
  fn_cu_get cuDeviceGet;
  fn_cu_attr cuDeviceGetAttribute;
  fn_cu_name cuDeviceGetName;
  fn_cu_mem cuDeviceTotalMem;
  fn_cu_uuid cuDeviceGetUuid;

  /* output */
  rt_writer* w;
  char path[PATH_MAX];

  /* lifecycle */
  pthread_mutex_t init_mu;
  atomic_int init_state;
  int auto_started;
  pid_t owner_pid;
  atomic_int state; /* enum rawtrace_state */
  atomic_int error;

  /* control (ctl_mu) */
  pthread_mutex_t ctl_mu;
  int collecting;
  atomic_int disabled;
  int started_once;
  uint8_t enabled[MAX_KIND];
  uint8_t enable_warned[MAX_KIND];
  uint64_t start_at; /* CLOCK_MONOTONIC ns of a scheduled start, 0 = none */
  uint64_t stop_at;  /* CLOCK_MONOTONIC ns of a scheduled stop, 0 = none */

  /* buffer pool (pool_mu) */
  pthread_mutex_t pool_mu;
  struct cbuf* free_list;
  uint32_t free_count;
  size_t bytes_alloc;
  struct cbuf* reserve;

  /* queue to the writer thread and its progress */
  rt_queue q;
  pthread_t writer;
  atomic_int writer_started;
  atomic_int joined;

  /* requests to the writer thread (signal handlers and other threads) */
  atomic_uint toggle_req;
  atomic_int finalize_req;
  atomic_int sig_flush_req;
  atomic_int sink_closed; /* callbacks discard buffers: write error or file closed */
  atomic_int atexit_again;

  /* writer-thread-only state */
  unsigned toggles_seen;
  atomic_int write_failed;
  int devices_done;
  int walk_warned;
  uint32_t epoch;
  struct sentry* st;
  size_t st_cap, st_count;
  rt_string* pend_str;
  size_t pend_str_n, pend_str_cap;
  rt_threads threads;
  rt_buf scratch;
  int no_vm_readv;
  uint64_t cap_drops_written;

  /* statistics */
  atomic_uint_fast64_t n_requested, n_refused, n_completed, n_written, n_discarded, n_activity_bytes, n_strings,
      n_vendor_dropped, n_cap_drops, t_callback_ns, t_writer_ns, n_chunks;
} G = {
    .init_mu = PTHREAD_MUTEX_INITIALIZER,
    .ctl_mu = PTHREAD_MUTEX_INITIALIZER,
    .pool_mu = PTHREAD_MUTEX_INITIALIZER,
};

/* CUPTI entry points, typed from the real prototypes. */
static struct {
  __typeof__(&cuptiGetVersion) GetVersion;
  __typeof__(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
  __typeof__(&cuptiActivityEnable) Enable;
  __typeof__(&cuptiActivityDisable) Disable;
  __typeof__(&cuptiActivityFlushAll) FlushAll;
  __typeof__(&cuptiActivityGetNextRecord) GetNextRecord;
  __typeof__(&cuptiGetTimestamp) GetTimestamp;
  __typeof__(&cuptiGetCallbackName) GetCallbackName;
  __typeof__(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords;
  /* optional */
  __typeof__(&cuptiSetThreadIdType) SetThreadIdType;
  __typeof__(&cuptiGetResultString) GetResultString;
  __typeof__(&cuptiActivityPushExternalCorrelationId) PushExternalCorrelationId;
  __typeof__(&cuptiActivityPopExternalCorrelationId) PopExternalCorrelationId;
  CUptiResult (*EnableRuntimeApi)(CUpti_CallbackId, uint8_t);
  CUptiResult (*EnableDriverApi)(CUpti_CallbackId, uint8_t);
  fn_cupti_u8 EnableCudaEventDeviceTimestamps;
} C;

static int g_log_level = LOG_WARN;
static _Thread_local int t_in_init;

/* ------------------------------------------------------------------------------------------------------------------ */
/* Small helpers                                                                                                      */
/* ------------------------------------------------------------------------------------------------------------------ */

static uint64_t mono_ns(void) { return rt_clock_ns(CLOCK_MONOTONIC); }

static uint32_t ld32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static uint64_t ld64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* Reallocates the array `p` of `*cap` elements of `elem` bytes to twice the capacity (`first` when empty). Returns
 * the new array and updates `*cap`, or returns NULL (`p` still valid) when memory runs out. */
static void* grow_array(void* p, size_t* cap, size_t elem, size_t first) {
  size_t ncap = *cap ? *cap * 2 : first;
  void* more = realloc(p, ncap * elem);
  if (more) *cap = ncap;
  return more;
}

static const char* cupti_error_text(CUptiResult rc) {
  const char* s = NULL;
  if (C.GetResultString && C.GetResultString(rc, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error";
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Logging: one write(2) per line on stderr; warnings and errors also become LOG chunks                               */
/* ------------------------------------------------------------------------------------------------------------------ */

static void enqueue(rt_item* it);

static void vlog_line(int level, int to_file, const char* fmt, va_list ap) {
  char msg[480];
  vsnprintf(msg, sizeof msg, fmt, ap);
  rt_log_line(g_log_level, level, msg);
  if (to_file && G.w && !G.write_failed)
    rt_queue_push_log(&G.q, rt_log_chunk_level(level), msg); /* LOG_* are RT_V_* */
}

__attribute__((format(printf, 2, 3))) static void logmsg(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog_line(level, 0, fmt, ap);
  va_end(ap);
}

/* As logmsg, and also a LOG chunk in the file (when one is open). */
__attribute__((format(printf, 2, 3))) static void logrec(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog_line(level, 1, fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Configuration (environment)                                                                                        */
/* ------------------------------------------------------------------------------------------------------------------ */

static const struct {
  const char* name;
  uint32_t kind;
} kKindNames[] = {
    {"memcpy", 1},          {"memset", 2},
    {"kernel", 3},          {"driver", 4},
    {"runtime", 5},         {"device", 8},
    {"context", 9},         {"concurrent_kernel", 10},
    {"name", 11},           {"marker", 12},
    {"marker_data", 13},    {"overhead", 17},
    {"cdp_kernel", 18},     {"preemption", 19},
    {"environment", 20},    {"memcpy2", 22},
    {"unified_memory_counter", 25}, {"function", 26},
    {"module", 27},         {"device_attribute", 28},
    {"openacc_data", 33},   {"openacc_launch", 34},
    {"openacc_other", 35},  {"cuda_event", 36},
    {"stream", 37},         {"synchronization", 38},
    {"external_correlation", 39}, {"nvlink", 40},
    {"memory", 45},         {"pcie", 46},
    {"openmp", 47},         {"internal_launch_api", 48},
    {"memory2", 49},        {"memory_pool", 50},
    {"graph_trace", 51},    {"jit", 52},
    {"device_graph_trace", 53}, {"mem_decompress", 54},
    {"confidential_compute_rotation", 55},
};

/* Kineto's set (MEMCPY, MEMSET, CONCURRENT_KERNEL, EXTERNAL_CORRELATION, SYNCHRONIZATION, RUNTIME, DRIVER,
 * OVERHEAD) plus CUDA_EVENT and MEMCPY2. */
static const uint32_t kDefaultKinds[] = {1, 2, 10, 39, 38, 5, 4, 17, 36, 22};

static void kinds_add(struct config* c, uint32_t k) {
  for (uint32_t i = 0; i < c->nkinds; i++)
    if (c->kinds[i] == k) return;
  if (c->nkinds < sizeof c->kinds / sizeof c->kinds[0]) c->kinds[c->nkinds++] = k;
}

static void kinds_remove(struct config* c, uint32_t k) {
  for (uint32_t i = 0; i < c->nkinds; i++)
    if (c->kinds[i] == k) {
      memmove(&c->kinds[i], &c->kinds[i + 1], (c->nkinds - i - 1) * sizeof c->kinds[0]);
      c->nkinds--;
      return;
    }
}

static void parse_kinds(struct config* c, const char* s) {
  c->nkinds = 0;
  if (!s || !*s) s = "default";
  char tok[64];
  while (*s) {
    while (*s == ',' || *s == ' ' || *s == ';') s++;
    size_t n = 0;
    while (s[n] && s[n] != ',' && s[n] != ' ' && s[n] != ';') n++;
    if (!n) break;
    int remove = 0;
    const char* t = s;
    size_t tn = n;
    if (*t == '-' || *t == '!') {
      remove = 1;
      t++;
      tn--;
    } else if (*t == '+') {
      t++;
      tn--;
    }
    if (tn >= sizeof tok) tn = sizeof tok - 1;
    for (size_t i = 0; i < tn; i++) tok[i] = (char)tolower((unsigned char)t[i]);
    tok[tn] = 0;
    s += n;
    uint32_t list[16];
    uint32_t m = 0;
    if (!strcmp(tok, "default")) {
      for (size_t i = 0; i < sizeof kDefaultKinds / sizeof kDefaultKinds[0]; i++) list[m++] = kDefaultKinds[i];
    } else if (!strcmp(tok, "nvtx")) {
      list[m++] = 12;
      list[m++] = 13;
      list[m++] = 11;
    } else if (!strcmp(tok, "kernels")) {
      list[m++] = 10;
    } else if (!strcmp(tok, "sync")) {
      list[m++] = 38;
    } else if (isdigit((unsigned char)tok[0])) {
      unsigned long k = strtoul(tok, NULL, 10);
      if (k > 0 && k < MAX_KIND) list[m++] = (uint32_t)k;
    } else {
      for (size_t i = 0; i < sizeof kKindNames / sizeof kKindNames[0]; i++)
        if (!strcmp(tok, kKindNames[i].name)) list[m++] = kKindNames[i].kind;
    }
    if (!m) logmsg(LOG_WARN, "RAWTRACE_ACTIVITIES: unknown activity '%s' ignored", tok);
    for (uint32_t i = 0; i < m; i++) remove ? kinds_remove(c, list[i]) : kinds_add(c, list[i]);
  }
}

static int parse_signal(const char* s) {
  if (!s || !*s) return 0;
  const char* t = s;
  if (!strncasecmp(t, "SIG", 3)) t += 3;
  if (isdigit((unsigned char)*t)) {
    int n = atoi(t);
    return n > 0 && n < NSIG ? n : -1;
  }
  if (!strcasecmp(t, "USR1")) return SIGUSR1;
  if (!strcasecmp(t, "USR2")) return SIGUSR2;
  if (!strcasecmp(t, "HUP")) return SIGHUP;
  if (!strcasecmp(t, "URG")) return SIGURG;
  if (!strcasecmp(t, "WINCH")) return SIGWINCH;
  if (!strncasecmp(t, "RTMIN", 5)) {
    int off = t[5] == '+' ? atoi(t + 6) : 0;
    int n = SIGRTMIN + off;
    return n <= SIGRTMAX ? n : -1;
  }
  return -1;
}

static void load_config(struct config* c) {
  memset(c, 0, sizeof *c);
  const char* out = getenv("RAWTRACE_OUTPUT");
  snprintf(c->output, sizeof c->output, "%s", out && *out ? out : "rawtrace-%h-%p.rawtrace");
  parse_kinds(c, getenv("RAWTRACE_ACTIVITIES"));
  c->buffer_size = rt_env_size("RAWTRACE_BUFFER_SIZE", 8u << 20, g_log_level);
  if (c->buffer_size < 4096) c->buffer_size = 4096;
  if (c->buffer_size > (64u << 20)) c->buffer_size = 64u << 20;
  c->buffer_size &= ~(size_t)7;
  c->max_memory = rt_env_size("RAWTRACE_MAX_MEMORY", 256u << 20, g_log_level);
  if (c->max_memory < c->buffer_size + CBUF_HDR) c->max_memory = c->buffer_size + CBUF_HDR;
  c->start_delay = rt_env_seconds("RAWTRACE_START_DELAY", g_log_level);
  c->duration = rt_env_seconds("RAWTRACE_DURATION", g_log_level);
  c->signal_no = parse_signal(getenv("RAWTRACE_SIGNAL"));
  if (c->signal_no < 0) {
    logmsg(LOG_WARN, "RAWTRACE_SIGNAL=%s is not a signal name; ignored", getenv("RAWTRACE_SIGNAL"));
    c->signal_no = 0;
  }
  c->handle_signals = rt_env_flag("RAWTRACE_HANDLE_SIGNALS", 1);
  c->all_api = rt_env_flag("RAWTRACE_ALL_API", 0);
  const char* pm = getenv("RAWTRACE_PRELOAD");
  c->preload_mode = pm && !strcasecmp(pm, "lazy") ? 1 : pm && !strcasecmp(pm, "off") ? 2 : 0;
  c->exit_timeout = rt_env_seconds("RAWTRACE_EXIT_TIMEOUT", g_log_level);
  if (c->exit_timeout <= 0) c->exit_timeout = 10;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Loading CUPTI and the CUDA driver                                                                                  */
/* ------------------------------------------------------------------------------------------------------------------ */

static void* sym(void* h, const char* name) { return h ? dlsym(h, name) : NULL; }

/* Resolves the CUPTI entry points from `h`. Returns 0 when every required one is there. */
/* Why the last library tried was not a usable libcupti (for the error line when RAWTRACE_CUPTI_LIB names it). */
static char g_cupti_problem[512];

static int bind_cupti(void* h) {
  memset(&C, 0, sizeof C);
#define REQ(field, name)                                                                  \
  do {                                                                                    \
    *(void**)(&C.field) = sym(h, name);                                                   \
    if (!C.field) {                                                                       \
      snprintf(g_cupti_problem, sizeof g_cupti_problem, "it has no %s (not a libcupti)", name); \
      logmsg(LOG_DEBUG, "libcupti lacks %s", name);                                       \
      return -1;                                                                          \
    }                                                                                     \
  } while (0)
#define OPT(field, name) (*(void**)(&C.field) = sym(h, name))
  REQ(GetVersion, "cuptiGetVersion");
  REQ(RegisterCallbacks, "cuptiActivityRegisterCallbacks");
  REQ(Enable, "cuptiActivityEnable");
  REQ(Disable, "cuptiActivityDisable");
  REQ(FlushAll, "cuptiActivityFlushAll");
  REQ(GetNextRecord, "cuptiActivityGetNextRecord");
  REQ(GetTimestamp, "cuptiGetTimestamp");
  REQ(GetCallbackName, "cuptiGetCallbackName");
  REQ(GetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
  OPT(SetThreadIdType, "cuptiSetThreadIdType");
  OPT(GetResultString, "cuptiGetResultString");
  OPT(PushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId");
  OPT(PopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId");
  OPT(EnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
  OPT(EnableDriverApi, "cuptiActivityEnableDriverApi");
  OPT(EnableCudaEventDeviceTimestamps, "cuptiActivityEnableCudaEventDeviceTimestamps");
#undef REQ
#undef OPT
  return 0;
}

static int try_cupti(const char* path, int flags) {
  void* h = dlopen(path, flags);
  if (!h) {
    const char* e = dlerror();
    snprintf(g_cupti_problem, sizeof g_cupti_problem, "cannot be loaded: %s", e ? e : "?");
    logmsg(LOG_DEBUG, "dlopen(%s): %s", path, e ? e : "?");
    return -1;
  }
  if (bind_cupti(h) != 0) {
    logmsg(LOG_DEBUG, "%s is not a usable libcupti", path);
    dlclose(h);
    return -1;
  }
  G.cupti = h;
  Dl_info info;
  if (dladdr(*(void**)(&C.GetVersion), &info) && info.dli_fname)
    snprintf(G.cupti_path, sizeof G.cupti_path, "%s", info.dli_fname);
  else
    snprintf(G.cupti_path, sizeof G.cupti_path, "%s", path);
  return 0;
}

static int find_cudart_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  const char* name = info->dlpi_name;
  if (!name || !*name) return 0;
  const char* base = strrchr(name, '/');
  if (base && !strncmp(base + 1, "libcudart.so", 12)) {
    snprintf((char*)data, PATH_MAX, "%s", name);
    return 1;
  }
  return 0;
}

/* Path of a loaded libcudart.so*, or "" when the program has none (static cudart, not loaded yet). */
static void loaded_cudart(char* out) {
  out[0] = 0;
  dl_iterate_phdr(find_cudart_cb, out);
}

static int try_glob(const char* pattern) {
  glob_t g;
  memset(&g, 0, sizeof g);
  int found = -1;
  if (glob(pattern, 0, NULL, &g) == 0) {
    /* newest name last in sorted order: try from the end */
    for (size_t i = g.gl_pathc; i-- > 0 && found != 0;) found = try_cupti(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
  }
  globfree(&g);
  return found;
}

/* try_glob on each of the `n` patterns in turn, with `dir` for their "%s". Returns 0 at the first usable libcupti. */
static int try_globs_in(const char* dir, const char* const* patterns, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char pat[PATH_MAX + 64];
    snprintf(pat, sizeof pat, patterns[i], dir);
    if (try_glob(pat) == 0) return 0;
  }
  return -1;
}

/* The libcupti sonames, newest first, opened with `flags`. Returns 0 at the first usable one. */
static int try_sonames(int flags) {
  static const char* const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so"};
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++)
    if (try_cupti(sonames[i], flags) == 0) return 0;
  return -1;
}

/* RAWTRACE_CUPTI_LIB; a libcupti the program already loaded; the libcupti NVTX is told to inject; one next to its
 * libcudart; the loader's search path. */
static int load_cupti(void) {
  if (G.cupti) return 0;
  const char* env = getenv("RAWTRACE_CUPTI_LIB");
  if (env && *env) return try_cupti(env, RTLD_NOW | RTLD_LOCAL);
  if (try_sonames(RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) == 0) return 0;
  /* NVTX delivers ranges to the libcupti named by NVTX_INJECTION64_PATH: record through that same library, or the
   * markers land in a second CUPTI instance nobody reads (seen on an H100: toolkit CUPTI vs the venv's). */
  const char* nvtx = getenv("NVTX_INJECTION64_PATH");
  if (nvtx && *nvtx && strstr(nvtx, "libcupti") && try_cupti(nvtx, RTLD_NOW | RTLD_LOCAL) == 0) return 0;
  char cudart[PATH_MAX];
  loaded_cudart(cudart);
  if (cudart[0]) {
    char* slash = strrchr(cudart, '/');
    if (slash) {
      *slash = 0;
      /* pip CUDA 13: nvidia/cu13/lib holds both; toolkit: lib64 and extras/CUPTI/lib64; pip CUDA 12:
       * nvidia/cuda_runtime/lib and nvidia/cuda_cupti/lib */
      static const char* const rel[] = {"%s/libcupti.so*", "%s/../extras/CUPTI/lib64/libcupti.so*",
                                        "%s/../../cuda_cupti/lib/libcupti.so*", "%s/../cuda_cupti/lib/libcupti.so*"};
      if (try_globs_in(cudart, rel, sizeof rel / sizeof rel[0]) == 0) return 0;
    }
  }
  if (try_sonames(RTLD_NOW | RTLD_LOCAL) == 0) return 0;
  /* a toolkit install (programs built by nvcc link cudart statically, so nothing above found it) */
  static const char* const in_home[] = {"%s/extras/CUPTI/lib64/libcupti.so*", "%s/lib64/libcupti.so*"};
  const char* homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++)
    if (homes[i] && *homes[i] && try_globs_in(homes[i], in_home, sizeof in_home / sizeof in_home[0]) == 0) return 0;
  return -1;
}

/* `name` from `h`, else the older `fallback`. */
static void* sym_v2(void* h, const char* name, const char* fallback) {
  void* p = dlsym(h, name);
  return p ? p : dlsym(h, fallback);
}

/* The CUDA driver for versions and the device table: RAWTRACE_CUDA_DRIVER_LIB, else libcuda.so.1. Never cuInit. */
static void load_driver(void) {
  if (G.cuda) return;
  const char* env = getenv("RAWTRACE_CUDA_DRIVER_LIB");
  void* h = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  G.cuda = h;
  *(void**)(&G.cuDeviceGetCount) = dlsym(h, "cuDeviceGetCount");
  *(void**)(&G.cuDeviceGet) = dlsym(h, "cuDeviceGet");
  *(void**)(&G.cuDeviceGetAttribute) = dlsym(h, "cuDeviceGetAttribute");
  *(void**)(&G.cuDeviceGetName) = dlsym(h, "cuDeviceGetName");
  *(void**)(&G.cuDeviceTotalMem) = sym_v2(h, "cuDeviceTotalMem_v2", "cuDeviceTotalMem");
  *(void**)(&G.cuDeviceGetUuid) = sym_v2(h, "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
}

static uint32_t driver_version(void) {
  fn_cu_int f = NULL;
  if (G.cuda) *(void**)(&f) = dlsym(G.cuda, "cuDriverGetVersion");
  int v = 0;
  if (f && f(&v) == CUDA_SUCCESS && v > 0) return (uint32_t)v;
  return 0;
}

static uint32_t runtime_version(void) {
  fn_cudart_version f = NULL;
  *(void**)(&f) = dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
  if (!f) {
    char cudart[PATH_MAX];
    loaded_cudart(cudart);
    if (cudart[0]) {
      void* h = dlopen(cudart, RTLD_NOW | RTLD_NOLOAD);
      if (h) *(void**)(&f) = dlsym(h, "cudaRuntimeGetVersion");
    }
  }
  int v = 0;
  if (f && f(&v) == 0 && v > 0) return (uint32_t)v;
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Tables measured at start                                                                                           */
/* ------------------------------------------------------------------------------------------------------------------ */

/*
 * Record stride of each kind in the loaded libcupti: a zeroed fake buffer holding one record of kind k, grown 8 bytes
 * at a time until cuptiActivityGetNextRecord accepts it (that is the record size), then a second record right after
 * it; the distance between the first and the second record returned is the stride (vendor-record-layouts.md §1.1).
 */
static void probe_kind_sizes(void) {
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

static int write_kind_sizes(void) {
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
static int write_api_names(void) {
  size_t cap = 2048, n = 0;
  rt_api_name* names = (rt_api_name*)malloc(cap * sizeof *names);
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
  free(names);
  return rc;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Buffer pool and CUPTI callbacks                                                                                    */
/* ------------------------------------------------------------------------------------------------------------------ */

static struct cbuf* cbuf_alloc(size_t size, uint32_t flags) {
  void* p = NULL;
  if (posix_memalign(&p, 64, CBUF_HDR + size) != 0 || !p) return NULL;
  struct cbuf* b = (struct cbuf*)p;
  memset(b, 0, sizeof *b);
  b->magic = CBUF_MAGIC;
  b->flags = flags;
  b->size = size;
  return b;
}

static uint8_t* cbuf_data(struct cbuf* b) { return (uint8_t*)b + CBUF_HDR; }

/* An emergency-reserve buffer (at most RESERVE_MAX_SIZE), or NULL. */
static struct cbuf* reserve_alloc(void) {
  size_t sz = G.cfg.buffer_size;
  return cbuf_alloc(sz < RESERVE_MAX_SIZE ? sz : RESERVE_MAX_SIZE, CBUF_RESERVE);
}

/* Returns a buffer to the pool (or frees it). Any thread. */
static void recycle(struct cbuf* b) {
  pthread_mutex_lock(&G.pool_mu);
  if (b->flags & CBUF_RESERVE) {
    b->next_free = G.reserve;
    G.reserve = b;
    pthread_mutex_unlock(&G.pool_mu);
    return;
  }
  if (G.free_count < POOL_KEEP && b->size == G.cfg.buffer_size) {
    b->next_free = G.free_list;
    G.free_list = b;
    G.free_count++;
    pthread_mutex_unlock(&G.pool_mu);
    return;
  }
  G.bytes_alloc -= b->size + CBUF_HDR;
  pthread_mutex_unlock(&G.pool_mu);
  free(b);
}

static void register_atexit_again(void);

static void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  size_t sz = G.cfg.buffer_size;
  struct cbuf* b = NULL;
  int alloc_normal = 0, alloc_reserve = 0, refuse = 0;
  pthread_mutex_lock(&G.pool_mu);
  if (G.free_list) {
    b = G.free_list;
    G.free_list = b->next_free;
    G.free_count--;
  } else if (G.bytes_alloc + sz + CBUF_HDR <= G.cfg.max_memory) {
    G.bytes_alloc += sz + CBUF_HDR;
    alloc_normal = 1;
  } else if (G.can_reject) {
    refuse = 1;
  } else if (G.reserve) {
    b = G.reserve;
    G.reserve = b->next_free;
  } else {
    alloc_reserve = 1;
  }
  pthread_mutex_unlock(&G.pool_mu);

  if (alloc_normal) {
    b = cbuf_alloc(sz, 0);
    if (!b) {
      pthread_mutex_lock(&G.pool_mu);
      G.bytes_alloc -= sz + CBUF_HDR;
      pthread_mutex_unlock(&G.pool_mu);
      if (G.can_reject) refuse = 1;
      else alloc_reserve = 1;
    }
  }
  if (alloc_reserve) b = reserve_alloc();
  if (!b) refuse = 1; /* out of memory on a CUPTI that cannot take NULL: nothing else can be done */
  if (refuse) {
    atomic_fetch_add(&G.n_refused, 1);
    atomic_fetch_add(&G.n_cap_drops, 1);
    *buffer = NULL;
    *size = 0;
    return;
  }
  b->next_free = NULL;
  b->valid = 0;
  atomic_fetch_add(&G.n_requested, 1);
  *buffer = cbuf_data(b);
  *size = b->size;
  if (!atomic_load(&G.atexit_again)) register_atexit_again();
}

static void CUPTIAPI on_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size,
                                         size_t valid) {
  (void)ctx;
  (void)stream_id;
  (void)size;
  if (!buffer) return;
  uint64_t t0 = mono_ns();
  struct cbuf* b = (struct cbuf*)(buffer - CBUF_HDR);
  if (b->magic != CBUF_MAGIC) return; /* not one of ours: leave it alone */
  if (valid > b->size) valid = b->size;
  if (valid == 0) {
    recycle(b);
  } else if (b->flags & CBUF_RESERVE) {
    /* handed out over the memory cap to a CUPTI that cannot take NULL: its records are dropped */
    atomic_fetch_add(&G.n_cap_drops, 1);
    atomic_fetch_add(&G.n_discarded, 1);
    recycle(b);
  } else if (atomic_load(&G.sink_closed)) {
    atomic_fetch_add(&G.n_discarded, 1);
    recycle(b);
  } else {
    b->valid = valid;
    b->it.type = IT_BUFFER;
    atomic_fetch_add(&G.n_completed, 1);
    enqueue(&b->it);
  }
  atomic_fetch_add(&G.t_callback_ns, mono_ns() - t0);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Queue to the writer thread                                                                                         */
/* ------------------------------------------------------------------------------------------------------------------ */

static void enqueue(rt_item* it) { rt_queue_push(&G.q, it); }

/* A CLOCK anchor of `which`: cuptiGetTimestamp, then the system clocks right after it. */
static void read_anchor(uint32_t which, rt_clock_anchor_t* a) {
  uint64_t v = 0;
  if (C.GetTimestamp) C.GetTimestamp(&v);
  rt_clock_anchor(which, v, a);
}

static void enqueue_clock(uint32_t which) {
  rt_clock_anchor_t a;
  read_anchor(which, &a);
  rt_queue_push_clock(&G.q, &a);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Collection control (ctl_mu held)                                                                                   */
/* ------------------------------------------------------------------------------------------------------------------ */

static void disable_kinds_locked(void) {
  for (int i = (int)G.cfg.nkinds - 1; i >= 0; i--) {
    uint32_t k = G.cfg.kinds[i];
    if (G.enabled[k]) {
      C.Disable((CUpti_ActivityKind)k);
      G.enabled[k] = 0;
    }
  }
}

/* A CUPTI error: disables collection for good with one log line and one LOG chunk. */
static void fail_cupti_locked(const char* what, CUptiResult rc) {
  if (G.disabled) return;
  G.disabled = 1;
  if (G.collecting) disable_kinds_locked();
  G.collecting = 0;
  G.start_at = G.stop_at = 0;
  atomic_store(&G.error, (int)rc);
  atomic_store(&G.state, RAWTRACE_STATE_DISABLED);
  logrec(LOG_ERROR, "%s failed: %s (%d); CUDA activity collection disabled", what, cupti_error_text(rc), (int)rc);
}

/* Kineto's trims: calls it hides anyway and that cost a record each (cudaGetDevice, three driver queries).
 * Enabling RUNTIME/DRIVER resets these per-call settings, so they follow every enable. */
static void api_tweaks_locked(void) {
  if (G.cfg.all_api) return;
  if (G.enabled[CUPTI_ACTIVITY_KIND_RUNTIME] && C.EnableRuntimeApi)
    C.EnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0);
  if (G.enabled[CUPTI_ACTIVITY_KIND_DRIVER] && C.EnableDriverApi) {
    C.EnableDriverApi(686 /* cuKernelGetAttribute */, 0);
    C.EnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, 0);
    C.EnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 0);
  }
}

static int start_locked(void) {
  if (G.disabled || G.write_failed || atomic_load(&G.finalize_req)) return -1;
  if (G.collecting) return 0;
  uint32_t ok = 0;
  CUptiResult last = CUPTI_SUCCESS;
  for (uint32_t i = 0; i < G.cfg.nkinds; i++) {
    uint32_t k = G.cfg.kinds[i];
    CUptiResult rc = C.Enable((CUpti_ActivityKind)k);
    if (rc == CUPTI_SUCCESS) {
      G.enabled[k] = 1;
      ok++;
    } else {
      last = rc;
      if (!G.enable_warned[k]) {
        G.enable_warned[k] = 1;
        logrec(LOG_WARN, "cuptiActivityEnable(kind %u) failed: %s (%d); that kind is not recorded", k,
               cupti_error_text(rc), (int)rc);
      }
    }
  }
  if (G.cfg.nkinds == 0) {
    /* RAWTRACE_ACTIVITIES named no kind this collector knows (each unknown one was warned about at load). */
    G.disabled = 1;
    G.start_at = G.stop_at = 0;
    atomic_store(&G.state, RAWTRACE_STATE_DISABLED);
    logrec(LOG_ERROR, "RAWTRACE_ACTIVITIES names no activity kind; nothing is recorded");
    return -1;
  }
  if (!ok) {
    fail_cupti_locked("cuptiActivityEnable (every configured kind)", last);
    return -1;
  }
  if ((G.enabled[CUPTI_ACTIVITY_KIND_CUDA_EVENT] || G.enabled[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]) &&
      C.EnableCudaEventDeviceTimestamps)
    C.EnableCudaEventDeviceTimestamps(1);
  api_tweaks_locked();
  G.collecting = 1;
  atomic_store(&G.state, RAWTRACE_STATE_RUNNING);
  if (G.started_once) enqueue_clock(RT_CLOCK_PERIODIC);
  G.started_once = 1;
  G.start_at = 0;
  G.stop_at = G.cfg.duration > 0 ? mono_ns() + (uint64_t)(G.cfg.duration * 1e9) : 0;
  if (G.stop_at) rt_queue_wake(&G.q);
  logmsg(LOG_INFO, "collecting (%u activity kinds) into %s", ok, G.path);
  return 0;
}

static int stop_locked(void) {
  G.start_at = G.stop_at = 0;
  if (!G.collecting) return G.disabled ? -1 : 0;
  disable_kinds_locked();
  CUptiResult rc = C.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (rc != CUPTI_SUCCESS) logmsg(LOG_WARN, "cuptiActivityFlushAll failed: %s (%d)", cupti_error_text(rc), (int)rc);
  G.collecting = 0;
  if (!G.disabled) atomic_store(&G.state, RAWTRACE_STATE_STOPPED);
  enqueue_clock(RT_CLOCK_PERIODIC);
  logmsg(LOG_INFO, "stopped collecting");
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Writer thread: strings, threads, devices, chunks                                                                   */
/* ------------------------------------------------------------------------------------------------------------------ */

static void on_write_error(int rc) {
  if (G.write_failed) return;
  G.write_failed = 1;
  atomic_store(&G.sink_closed, 1);
  atomic_store(&G.error, rc);
  atomic_store(&G.state, RAWTRACE_STATE_DISABLED);
  logmsg(LOG_ERROR, "writing %s failed: %s; collection stopped (the file keeps every chunk written before)", G.path,
         strerror(-rc));
  struct timespec dl = rt_deadline_ms(2000);
  if (pthread_mutex_timedlock(&G.ctl_mu, &dl) == 0) {
    if (G.collecting) {
      disable_kinds_locked();
      G.collecting = 0;
    }
    G.start_at = G.stop_at = 0;
    pthread_mutex_unlock(&G.ctl_mu);
  }
}

/* Checks a writer result; counts the chunk. Returns 0 when the chunk was written. */
static int wrote(int rc) {
  if (rc == 0) {
    atomic_fetch_add(&G.n_chunks, 1);
    return 0;
  }
  if (rt_writer_error(G.w)) on_write_error(rt_writer_error(G.w));
  else logmsg(LOG_WARN, "chunk not written: %s", strerror(-rc));
  return rc;
}

/*
 * Copies the NUL-terminated string at address `ptr` of this process into G.scratch without trusting it: reads go
 * through process_vm_readv one page at a time, so an address that is not mapped fails (-1) instead of faulting.
 * Returns the length, or -1.
 */
static long read_cstr(uint64_t ptr) {
  rt_buf* b = &G.scratch;
  rt_buf_reset(b);
  if (G.no_vm_readv) {
    const char* s = (const char*)(uintptr_t)ptr;
    size_t n = strnlen(s, MAX_STRING_BYTES);
    rt_buf_bytes(b, s, n);
    return b->oom ? -1 : (long)n;
  }
  uint64_t p = ptr;
  for (;;) {
    size_t want = 4096 - (size_t)(p & 4095);
    if (rt_buf_reserve(b, want)) return -1;
    struct iovec l = {b->data + b->len, want};
    struct iovec r = {(void*)(uintptr_t)p, want};
    ssize_t n = process_vm_readv(G.owner_pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
        G.no_vm_readv = 1;
        logmsg(LOG_DEBUG, "process_vm_readv unavailable (%s): reading strings directly", strerror(errno));
        return read_cstr(ptr);
      }
      return -1;
    }
    uint8_t* z = (uint8_t*)memchr(b->data + b->len, 0, (size_t)n);
    if (z) {
      b->len = (size_t)(z - b->data);
      return (long)b->len;
    }
    b->len += (size_t)n;
    p += (uint64_t)n;
    if (b->len >= MAX_STRING_BYTES) return (long)b->len; /* longer strings are cut */
  }
}

static size_t st_slot(uint64_t ptr) {
  uint64_t h = ptr * 0x9E3779B97F4A7C15ull;
  size_t mask = G.st_cap - 1;
  size_t i = (size_t)(h >> 20) & mask;
  while (G.st[i].ptr && G.st[i].ptr != ptr) i = (i + 1) & mask;
  return i;
}

static int st_grow(void) {
  size_t ncap = G.st_cap ? G.st_cap * 2 : 1024;
  struct sentry* old = G.st;
  size_t ocap = G.st_cap;
  struct sentry* nt = (struct sentry*)calloc(ncap, sizeof *nt);
  if (!nt) return -1;
  G.st = nt;
  G.st_cap = ncap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].ptr) G.st[st_slot(old[i].ptr)] = old[i];
  free(old);
  return 0;
}

static void pend_string(struct sentry* e) {
  if (G.pend_str_n == G.pend_str_cap) {
    rt_string* more = (rt_string*)grow_array(G.pend_str, &G.pend_str_cap, sizeof *more, 64);
    if (!more) return;
    G.pend_str = more;
  }
  rt_string* s = &G.pend_str[G.pend_str_n++];
  s->ptr = e->ptr;
  s->bytes = e->copy;
  s->len = e->len;
}

/* A pointer field seen in the current buffer: queue its string when it is new or its bytes changed. */
static void note_string(uint64_t ptr) {
  if (!ptr) return;
  if ((G.st_count + 1) * 2 > G.st_cap && st_grow() != 0) return;
  size_t i = st_slot(ptr);
  struct sentry* e = &G.st[i];
  if (e->ptr == ptr && e->epoch == G.epoch) return; /* checked in this buffer already */
  long n = read_cstr(ptr);
  if (e->ptr != ptr) {
    e->ptr = ptr;
    e->copy = NULL;
    e->len = 0;
    G.st_count++;
  }
  e->epoch = G.epoch;
  if (n < 0) return; /* unreadable: the decoder reports the missing string */
  if (e->copy && e->len == (uint32_t)n && memcmp(e->copy, G.scratch.data, (size_t)n) == 0) return;
  char* copy = (char*)malloc((size_t)n + 1);
  if (!copy) return;
  memcpy(copy, G.scratch.data, (size_t)n);
  copy[n] = 0;
  /* the old copy may still be referenced by a pending entry of this buffer only if it was queued in this buffer,
   * which the epoch check rules out */
  free(e->copy);
  e->copy = copy;
  e->len = (uint32_t)n;
  pend_string(e);
}

static void note_thread(uint32_t pid, uint32_t tid) { rt_threads_note(&G.threads, pid, tid); }

/* Walks one buffer by the measured strides; notes pointer fields (read only when the record covers them) and the
 * threads of API and marker records. */
static void walk_buffer(const uint8_t* p, size_t n) {
  G.epoch++;
  size_t off = 0;
  while (off + 4 <= n) {
    const uint8_t* r = p + off;
    uint32_t kind = ld32(r);
    uint32_t size = kind < MAX_KIND ? G.kind_size[kind] : 0;
    if (!size || off + size > n) {
      if (!G.walk_warned) {
        G.walk_warned = 1;
        logrec(LOG_WARN, "record of kind %u at offset %zu has no known size; strings after it in that buffer are "
               "not captured", kind, off);
      }
      return;
    }
    switch (kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        if (size >= 112) note_string(ld64(r + 104));
        break;
      case CUPTI_ACTIVITY_KIND_MARKER:
        if (size >= 48) note_string(ld64(r + 40));
        if (size >= 56) note_string(ld64(r + 48));
        if (size >= 32 && ld32(r + 20) == CUPTI_ACTIVITY_OBJECT_THREAD) note_thread(ld32(r + 24), ld32(r + 28));
        break;
      case CUPTI_ACTIVITY_KIND_NAME:
        if (size >= 32) note_string(ld64(r + 24));
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        if (size >= 144) note_string(ld64(r + 136));
        break;
      case CUPTI_ACTIVITY_KIND_DRIVER:
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
        if (size >= 32) note_thread(ld32(r + 24), ld32(r + 28));
        break;
      default:
        break;
    }
    off += size;
  }
}

static uint32_t dev_attr(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  if (G.cuDeviceGetAttribute && G.cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS && v > 0) return (uint32_t)v;
  return 0;
}

/* DEVICES once, from the driver, as soon as CUDA is initialized (the collector never calls cuInit itself). */
static void maybe_write_devices(void) {
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
  wrote(rt_writer_devices(G.w, devs, (uint32_t)count));
}

/* DROPPED chunks: CUPTI's count (reset on read) and buffers the memory cap cost since the last chunk. */
/* CUPTI's lost records not said yet, and when they were last said (mono ns; 0 = never). */
static uint64_t g_drops_unsaid, g_drops_said_ns;
#define DROPS_SAY_EVERY_NS 10000000000ull

/* Records CUPTI lost: a DROPPED chunk each time (the data), but a line (stderr and a LOG chunk) at most every 10 s,
 * summed, and at the end for what is left (`final`): under overload CUPTI loses records at every buffer. */
static void check_dropped_at(int final) {
  if (G.write_failed) return;
  size_t dropped = 0;
  if (C.GetNumDroppedRecords && C.GetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    atomic_fetch_add(&G.n_vendor_dropped, dropped);
    g_drops_unsaid += dropped;
    wrote(rt_writer_dropped(G.w, dropped, RT_DROP_VENDOR));
  }
  uint64_t now = mono_ns();
  if (g_drops_unsaid && (final || !g_drops_said_ns || now - g_drops_said_ns >= DROPS_SAY_EVERY_NS)) {
    if (!g_drops_said_ns)
      logrec(LOG_WARN, "CUPTI dropped %llu activity records (buffers not available in time)",
             (unsigned long long)g_drops_unsaid);
    else
      logrec(LOG_WARN, "CUPTI dropped %llu more activity records (%llu in all; said at most every 10 s)",
             (unsigned long long)g_drops_unsaid, (unsigned long long)atomic_load(&G.n_vendor_dropped));
    g_drops_unsaid = 0;
    g_drops_said_ns = now;
  }
  uint64_t cap = atomic_load(&G.n_cap_drops);
  if (cap > G.cap_drops_written && !G.write_failed) {
    uint64_t delta = cap - G.cap_drops_written;
    G.cap_drops_written = cap;
    wrote(rt_writer_dropped(G.w, delta, RT_DROP_MEMORY_CAP));
  }
}

static void check_dropped(void) { check_dropped_at(0); }

static void process_buffer(struct cbuf* b) {
  uint64_t t0 = mono_ns();
  if (G.write_failed) {
    atomic_fetch_add(&G.n_discarded, 1);
    return;
  }
  const uint8_t* data = cbuf_data(b);
  size_t n = b->valid;
  G.pend_str_n = 0;
  walk_buffer(data, n);
  maybe_write_devices();
  if (!G.write_failed) rt_threads_write(&G.threads, G.w, wrote);
  if (G.pend_str_n && !G.write_failed) {
    if (wrote(rt_writer_strings(G.w, G.pend_str, (uint32_t)G.pend_str_n)) == 0)
      atomic_fetch_add(&G.n_strings, G.pend_str_n);
  }
  if (!G.write_failed && wrote(rt_writer_activity(G.w, data, (uint32_t)n)) == 0) {
    atomic_fetch_add(&G.n_written, 1);
    atomic_fetch_add(&G.n_activity_bytes, n);
  } else {
    atomic_fetch_add(&G.n_discarded, 1);
  }
  check_dropped();
  atomic_fetch_add(&G.t_writer_ns, mono_ns() - t0);
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
      process_buffer(b);
      recycle(b);
      break;
    }
    default:
      break;
  }
}

static void drain(void) { rt_queue_drain(&G.q, handle_item); }

/* Exit flush on the writer thread: stop CUPTI, drain, tail chunks, END, close. */
static void finalize(void) {
  struct timespec dl = rt_deadline_ms(2000);
  int stopped = 0;
  if (pthread_mutex_timedlock(&G.ctl_mu, &dl) == 0) {
    if (G.collecting) stop_locked();
    pthread_mutex_unlock(&G.ctl_mu);
    stopped = 1;
  } else {
    logmsg(LOG_WARN, "exit flush: control lock busy; CUPTI's last buffers are not flushed");
  }
  /* CUPTI stopped: until the queue is empty; else it may still deliver: what is queued now. */
  if (stopped) drain();
  else rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
  if (!G.write_failed) {
    maybe_write_devices();
    check_dropped_at(1);
    /* The LOG items the lines above queued (this thread's own), before END. */
    rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
    rt_clock_anchor_t a;
    read_anchor(RT_CLOCK_END, &a);
    wrote(rt_writer_clock(G.w, &a));
    wrote(rt_writer_end(G.w));
  }
  atomic_store(&G.sink_closed, 1);
  int rc = rt_writer_close(G.w);
  if (rc && !G.write_failed) logmsg(LOG_ERROR, "closing %s: %s", G.path, strerror(-rc));
  if (!G.write_failed && !G.disabled) atomic_store(&G.state, RAWTRACE_STATE_FINISHED);
  logmsg(LOG_INFO, "wrote %s: %llu buffers, %llu activity bytes, %llu records dropped by CUPTI, %llu buffers over "
         "the memory cap", G.path, (unsigned long long)atomic_load(&G.n_written),
         (unsigned long long)atomic_load(&G.n_activity_bytes), (unsigned long long)atomic_load(&G.n_vendor_dropped),
         (unsigned long long)atomic_load(&G.n_cap_drops));
}

static void writer_control(void) {
  unsigned t = atomic_load(&G.toggle_req);
  while (G.toggles_seen != t) {
    G.toggles_seen++;
    pthread_mutex_lock(&G.ctl_mu);
    if (G.collecting) stop_locked();
    else start_locked();
    pthread_mutex_unlock(&G.ctl_mu);
  }
  pthread_mutex_lock(&G.ctl_mu);
  uint64_t now = mono_ns();
  if (G.start_at && now >= G.start_at) {
    G.start_at = 0;
    start_locked();
  }
  if (G.stop_at && now >= G.stop_at) {
    G.stop_at = 0;
    stop_locked();
  }
  pthread_mutex_unlock(&G.ctl_mu);
  if (atomic_exchange(&G.sig_flush_req, 0)) {
    C.FlushAll(0);
    /* What the flush queued, not until the queue is empty: the program's threads may keep it full. */
    rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
    rt_queue_notify(&G.q);
  }
}

/* Milliseconds until the next scheduled start/stop, or -1 when none. */
static long next_wait_ms(void) {
  pthread_mutex_lock(&G.ctl_mu);
  uint64_t next = 0;
  if (G.start_at) next = G.start_at;
  if (G.stop_at && (!next || G.stop_at < next)) next = G.stop_at;
  pthread_mutex_unlock(&G.ctl_mu);
  if (!next) return -1;
  uint64_t now = mono_ns();
  if (next <= now) return 0;
  uint64_t ms = (next - now + 999999) / 1000000;
  return ms > 500 ? 500 : (long)ms; /* re-checked against CLOCK_MONOTONIC at least twice a second */
}

static void* writer_main(void* arg) {
  (void)arg;
  rt_thread_enter("rawtrace-writer");
  for (;;) {
    long ms = next_wait_ms();
    rt_queue_sleep(&G.q, ms);
    writer_control();
    /* One batch per round: an exit request, a signal's flush or a scheduled stop is seen between batches even
     * while buffers arrive as fast as they are written (each push posts the semaphore: no wake-up is lost). */
    rt_queue_drain_once(&G.q, handle_item);
    if (atomic_load(&G.finalize_req)) break;
  }
  finalize();
  rt_queue_finish(&G.q);
  return NULL;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Exit, signals, fork                                                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

static struct sigaction g_old_sig[2]; /* SIGTERM, SIGINT */

/* From a normal thread: asks the writer for the exit flush and waits for it (bounded). */
static void finalize_and_wait(void) {
  if (!G.writer_started || getpid() != G.owner_pid) return;
  if (rt_queue_shutdown(&G.q, &G.finalize_req, &G.joined, G.writer, (long)(G.cfg.exit_timeout * 1000)) == 0)
    logmsg(LOG_WARN, "exit flush did not finish within %.1f s; the file may lack its last chunks", G.cfg.exit_timeout);
}

static void at_exit(void) { finalize_and_wait(); }

/* Registered again from the first bufferRequested, i.e. after the CUDA runtime registered its own exit handler:
 * handlers run in reverse order, so the flush then happens while CUDA is still up. The handler runs once. */
static void register_atexit_again(void) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&G.atexit_again, &expected, 1)) atexit(at_exit);
}

static void on_term_signal(int sig, siginfo_t* si, void* uc) {
  int saved = errno;
  const struct sigaction* old = &g_old_sig[sig == SIGTERM ? 0 : 1];
  int ours = G.writer_started && getpid() == G.owner_pid && !atomic_load(&G.finalize_req);
  int dfl = rt_sig_is_default(old);
  if (ours) {
    rt_queue_drain_pipe(&G.q);
    if (dfl) atomic_store(&G.finalize_req, 1); /* the process is about to die: full exit flush */
    else atomic_store(&G.sig_flush_req, 1);    /* the program handles it: write what we have, keep going */
    rt_queue_wake(&G.q);
    rt_queue_wait_pipe(&G.q, dfl ? (int)(G.cfg.exit_timeout * 1000) : SIGNAL_WAIT_MS);
  }
  rt_chain_signal(sig, si, uc, old);
  errno = saved;
}

static void on_toggle_signal(int sig) {
  (void)sig;
  int saved = errno;
  if (G.writer_started && getpid() == G.owner_pid) {
    atomic_fetch_add(&G.toggle_req, 1);
    rt_queue_wake(&G.q);
  }
  errno = saved;
}

static void install_signal_handlers(void) {
  struct sigaction sa;
  if (G.cfg.handle_signals) rt_install_term_handlers(on_term_signal, g_old_sig);
  if (G.cfg.signal_no) {
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_toggle_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(G.cfg.signal_no, &sa, NULL) != 0)
      logrec(LOG_WARN, "cannot install the RAWTRACE_SIGNAL handler for signal %d: %s", G.cfg.signal_no,
             strerror(errno));
  }
}

/* In a forked child the writer thread does not exist and the file belongs to the parent: stay out of the way. */
static void on_fork_child(void) { atomic_store(&G.sink_closed, 1); }

/* ------------------------------------------------------------------------------------------------------------------ */
/* Initialization                                                                                                     */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Gives up the output init_collector opened (the file stays as far as it got). Returns -1, init_collector's failure. */
static int close_output(void) {
  rt_writer_close(G.w);
  G.w = NULL;
  return -1;
}

/* Opens the output, writes the chunks known at start, starts the writer thread and registers the callbacks.
 * Returns 0 (also when CUPTI then refused: collection is disabled but the file gets its END), INIT_DEFER, or -1. */
static int init_collector(int from) {
  load_config(&G.cfg);
  G.owner_pid = getpid();
  rt_threads_init(&G.threads, (uint32_t)G.owner_pid);
  if (load_cupti() != 0) {
    if (from == FROM_PRELOAD) return INIT_DEFER;
    const char* env = getenv("RAWTRACE_CUPTI_LIB");
    if (env && *env)
      logmsg(LOG_ERROR, "RAWTRACE_CUPTI_LIB=%.300s: %s; nothing is recorded", env, g_cupti_problem);
    else
      logmsg(LOG_ERROR, "libcupti not found (set RAWTRACE_CUPTI_LIB to its path); nothing is recorded");
    return -1;
  }
  uint32_t ver = 0;
  if (C.GetVersion(&ver) != CUPTI_SUCCESS) ver = 0;
  G.cupti_version = ver;
  G.can_reject = ver >= CUPTI_REJECT_MIN_VERSION;
  load_driver();
  int qrc = rt_queue_init(&G.q);
  if (qrc != 0) {
    logmsg(LOG_ERROR, "cannot set up the writer: %s; nothing is recorded", strerror(-qrc));
    return -1;
  }

  uint64_t start_ns = rt_clock_ns(CLOCK_REALTIME);
  char wanted[PATH_MAX];
  int expanded = rt_expand_output(G.cfg.output, "rawtrace-%h-%p.rawtrace", wanted, sizeof wanted, start_ns);
  /* Exclusive create: another process given the same RAWTRACE_OUTPUT (no %p) must not truncate or share our
     file; a taken name gets a numbered one, and the user is told which. */
  G.w = expanded == 0 ? rt_writer_create(wanted, G.path, sizeof G.path) : NULL; /* a cut name: ENAMETOOLONG */
  if (!G.w) {
    logmsg(LOG_ERROR, "cannot create %.300s: %s; nothing is recorded", wanted, rt_writer_strerror(errno));
    return -1;
  }
  rt_env_checksum(G.w, g_log_level);
  if (strcmp(wanted, G.path) != 0) {
    logmsg(LOG_WARN, "%s already exists (another process, or an earlier run, uses this RAWTRACE_OUTPUT; add %%p for "
           "one file per process); writing %s instead", wanted, G.path);
  }

  probe_kind_sizes();

  rt_header_info h;
  rt_header_info_init(&h);
  h.vendor = RT_VENDOR_CUDA;
  h.vendor_version = ver;
  h.runtime_version = runtime_version();
  h.driver_version = driver_version();
  h.collector_version = RT_COLLECTOR_VERSION;
  static char host[256], cmdline[65536];
  rt_header_process(&h, start_ns, host, cmdline, sizeof cmdline);
  char vtext[PATH_MAX + 64];
  snprintf(vtext, sizeof vtext, "CUPTI API %u (%s)", ver, G.cupti_path);
  h.vendor_version_text = vtext;

  rt_clock_anchor_t anchor;
  read_anchor(RT_CLOCK_START, &anchor);

  int rc = rt_writer_header(G.w, &h);
  if (!rc) rc = rt_writer_clock(G.w, &anchor);
  if (!rc) rc = write_kind_sizes();
  if (!rc) rc = write_api_names();
  if (rc) {
    logmsg(LOG_ERROR, "writing %s failed: %s; nothing is recorded", G.path, strerror(-rc));
    return close_output();
  }
  atomic_store(&G.n_chunks, 4);

  int trc = rt_thread_start(&G.writer, writer_main);
  if (trc != 0) {
    logmsg(LOG_ERROR, "cannot start the writer thread: %s; nothing is recorded", strerror(trc));
    return close_output();
  }
  G.writer_started = 1;
  atexit(at_exit);
  pthread_atfork(NULL, NULL, on_fork_child);
  atomic_store(&G.state, RAWTRACE_STATE_STOPPED);

  /* Before any kind is enabled: buffers cannot be taken back after this point. */
  if (!G.can_reject) {
    for (uint32_t i = 0; i < RESERVE_BUFFERS; i++) {
      struct cbuf* b = reserve_alloc();
      if (b) recycle(b);
    }
  }
  pthread_mutex_lock(&G.ctl_mu);
  CUptiResult crc = C.RegisterCallbacks(on_buffer_requested, on_buffer_completed);
  if (crc != CUPTI_SUCCESS) {
    fail_cupti_locked("cuptiActivityRegisterCallbacks", crc);
  } else if (C.SetThreadIdType) {
    crc = C.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (crc != CUPTI_SUCCESS)
      logrec(LOG_WARN, "cuptiSetThreadIdType(SYSTEM) failed: %s (%d); thread ids are pthread ids",
             cupti_error_text(crc), (int)crc);
  }
  if (!G.disabled && G.cfg.start_delay > 0 && !G.cfg.signal_no)
    G.start_at = mono_ns() + (uint64_t)(G.cfg.start_delay * 1e9);
  pthread_mutex_unlock(&G.ctl_mu);
  if (G.start_at) rt_queue_wake(&G.q);
  install_signal_handlers();
  logmsg(LOG_INFO, "CUPTI %u from %s; output %s", ver, G.cupti_path, G.path);
  return 0;
}

/* Initializes once. Returns 0 when initialized, INIT_DEFER, or -1 when the collector is unusable. */
static int ensure_init(int from) {
  if (t_in_init) return -1;
  pthread_mutex_lock(&G.init_mu);
  int rc;
  if (G.init_state == INIT_OK) rc = 0;
  else if (G.init_state == INIT_FAILED) rc = -1;
  else {
    t_in_init = 1;
    rc = init_collector(from);
    t_in_init = 0;
    if (rc == 0) G.init_state = INIT_OK;
    else if (rc < 0) G.init_state = INIT_FAILED;
  }
  pthread_mutex_unlock(&G.init_mu);
  return rc;
}

/* Path of this library (for CUDA_INJECTION64_PATH). */
static const char* self_path(void) {
  static char path[PATH_MAX];
  Dl_info info;
  if (!path[0] && dladdr((void*)&self_path, &info) && info.dli_fname) snprintf(path, sizeof path, "%s", info.dli_fname);
  return path;
}

/* Lets the CUDA driver call InitializeInjection at the program's own cuInit. */
static void arm_injection(void) {
  const char* cur = getenv("CUDA_INJECTION64_PATH");
  if (cur && *cur) return;
  if (self_path()[0]) setenv("CUDA_INJECTION64_PATH", self_path(), 0);
}

/* Start triggered by loading (LD_PRELOAD constructor or CUDA_INJECTION64_PATH): at most once per process. */
static void auto_start(int from) {
  if (getpid() != G.owner_pid && G.owner_pid) return;
  if (!rt_process_selected()) return; /* RAWTRACE_PROCESS names other programs: loaded here, silent */
  int rc = ensure_init(from);
  if (rc == INIT_DEFER) {
    logmsg(LOG_INFO, "libcupti not loaded yet; collection starts when the program initializes CUDA");
    arm_injection();
    return;
  }
  if (rc != 0) return;
  pthread_mutex_lock(&G.ctl_mu);
  if (!G.auto_started) {
    G.auto_started = 1;
    if (!G.cfg.signal_no && !(G.cfg.start_delay > 0)) start_locked();
  }
  pthread_mutex_unlock(&G.ctl_mu);
}

static int preloaded(void) {
  const char* pre = getenv("LD_PRELOAD");
  const char* me = self_path();
  if (!pre || !*pre || !me[0]) return 0;
  const char* mybase = strrchr(me, '/');
  mybase = mybase ? mybase + 1 : me;
  size_t mylen = strlen(mybase);
  const char* p = pre;
  while (*p) {
    while (*p == ':' || *p == ' ') p++;
    size_t n = 0;
    while (p[n] && p[n] != ':' && p[n] != ' ') n++;
    if (!n) break;
    const char* b = p;
    for (size_t i = 0; i < n; i++)
      if (p[i] == '/') b = p + i + 1;
    if ((size_t)(p + n - b) == mylen && !strncmp(b, mybase, mylen)) return 1;
    p += n;
  }
  return 0;
}

__attribute__((constructor)) static void rawtrace_ctor(void) {
  g_log_level = rt_parse_log_level(getenv("RAWTRACE_LOG"));
  G.owner_pid = getpid();
  if (!preloaded() || !rt_process_selected()) return;
  const char* pm = getenv("RAWTRACE_PRELOAD");
  if (pm && *pm && strcasecmp(pm, "eager") && strcasecmp(pm, "lazy") && strcasecmp(pm, "off"))
    logmsg(LOG_WARN, "RAWTRACE_PRELOAD=%.100s is not eager, lazy or off; eager is used", pm);
  if (pm && !strcasecmp(pm, "off")) return;
  if (pm && !strcasecmp(pm, "lazy")) {
    arm_injection();
    return;
  }
  auto_start(FROM_PRELOAD);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Public API                                                                                                         */
/* ------------------------------------------------------------------------------------------------------------------ */

RAWTRACE_API int InitializeInjection(void) {
  if (!t_in_init) auto_start(FROM_INJECTION);
  return 1;
}

/* NVTX's injection entry, for NVTX_INJECTION64_PATH = this library (what `rawtrace record` sets): NVTX hands its
 * ranges to the libcupti this collector records through, so they cannot land in a second CUPTI instance that
 * nobody reads. Returns CUPTI's answer (0 = NVTX stays off). CUPTI 13.0.0 (API 130000) is refused: it can crash in
 * nvtxNameOsThreadA as the NVTX injection (NVIDIA/NVTX#125; docs/collectors/cuda.md). */
RAWTRACE_API int InitializeInjectionNvtx2(const void* get_export_table) {
  typedef int (*fn_nvtx_inject)(const void*);
  if (!t_in_init) pthread_mutex_lock(&G.init_mu);
  int loaded = load_cupti() == 0;
  if (!t_in_init) pthread_mutex_unlock(&G.init_mu);
  if (!loaded) {
    logmsg(LOG_WARN, "NVTX: no libcupti found to hand NVTX ranges to; NVTX stays off");
    return 0;
  }
  uint32_t v = 0;
  if (C.GetVersion(&v) == CUPTI_SUCCESS && v == 130000) {
    logmsg(LOG_WARN, "NVTX: CUPTI 13.0.0 (API 130000) can crash as the NVTX injection; NVTX stays off");
    return 0;
  }
  fn_nvtx_inject f = NULL;
  *(void**)(&f) = dlsym(G.cupti, "InitializeInjectionNvtx2");
  if (!f) {
    logmsg(LOG_WARN, "NVTX: %s has no InitializeInjectionNvtx2; NVTX stays off", G.cupti_path);
    return 0;
  }
  int rc = f(get_export_table);
  logmsg(LOG_INFO, "NVTX ranges go to %s (%s)", G.cupti_path, rc ? "ok" : "refused");
  return rc;
}

static int ready(void) { return G.init_state == INIT_OK && getpid() == G.owner_pid; }

RAWTRACE_API int rawtrace_start(void) {
  if (ensure_init(FROM_API) != 0 || getpid() != G.owner_pid) return -1;
  pthread_mutex_lock(&G.ctl_mu);
  G.auto_started = 1;
  int rc = start_locked();
  pthread_mutex_unlock(&G.ctl_mu);
  return rc;
}

RAWTRACE_API int rawtrace_stop(void) {
  if (!ready()) return -1;
  pthread_mutex_lock(&G.ctl_mu);
  int rc = stop_locked();
  pthread_mutex_unlock(&G.ctl_mu);
  return rc;
}

RAWTRACE_API int rawtrace_flush(void) {
  if (!ready() || G.disabled || rt_queue_is_finished(&G.q)) return -1;
  CUptiResult rc = C.FlushAll(0);
  if (rc != CUPTI_SUCCESS) logmsg(LOG_DEBUG, "cuptiActivityFlushAll(0): %s (%d)", cupti_error_text(rc), (int)rc);
  rt_queue_wake(&G.q);
  if (rt_queue_wait(&G.q, rt_queue_last(&G.q), FLUSH_WAIT_MS) != 0) return -1;
  return G.write_failed ? -1 : 0;
}

RAWTRACE_API int rawtrace_push_external_id(uint64_t id) {
  if (!ready() || !C.PushExternalCorrelationId) return -1;
  return C.PushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) == CUPTI_SUCCESS ? 0 : -1;
}

RAWTRACE_API int rawtrace_pop_external_id(void) {
  if (!ready() || !C.PopExternalCorrelationId) return -1;
  uint64_t last = 0;
  return C.PopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) == CUPTI_SUCCESS ? 0 : -1;
}

RAWTRACE_API int rawtrace_get_stats(rawtrace_stats* out, size_t size) {
  if (!out) return -1;
  rawtrace_stats s;
  memset(&s, 0, sizeof s);
  s.buffers_requested = atomic_load(&G.n_requested);
  s.buffers_refused = atomic_load(&G.n_refused);
  s.buffers_completed = atomic_load(&G.n_completed);
  s.buffers_written = atomic_load(&G.n_written);
  s.buffers_discarded = atomic_load(&G.n_discarded);
  s.activity_bytes = atomic_load(&G.n_activity_bytes);
  s.strings_written = atomic_load(&G.n_strings);
  s.records_dropped = atomic_load(&G.n_vendor_dropped);
  s.callback_ns = atomic_load(&G.t_callback_ns);
  s.writer_ns = atomic_load(&G.t_writer_ns);
  s.chunks_written = atomic_load(&G.n_chunks);
  s.state = atomic_load(&G.state);
  s.error = atomic_load(&G.error);
  memcpy(out, &s, size < sizeof s ? size : sizeof s);
  return 0;
}
