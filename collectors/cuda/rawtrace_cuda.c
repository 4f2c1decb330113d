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
 *
 * Files, one concept each (declarations they share: cuda_internal.h): this one holds the collector's state, the
 * start on load (LD_PRELOAD constructor, CUDA's and NVTX's injection entry points) and the public API;
 * cuda_config.c the configuration; cuda_load.c finding CUPTI and the CUDA driver; cuda_tables.c KIND_SIZES,
 * API_NAMES and DEVICES; cuda_buffers.c the buffer pool and CUPTI's buffer callbacks; cuda_session.c start/stop;
 * cuda_writer.c the writer thread; cuda_strings.c the strings and threads a buffer names; cuda_exit.c exit,
 * signals and fork; cuda_init.c initialization; cuda_log.c logging.
 */
#include "cuda_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* State                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

struct rt_cuda_state G = {
    .init_mu = PTHREAD_MUTEX_INITIALIZER,
    .ctl_mu = PTHREAD_MUTEX_INITIALIZER,
    .pool_mu = PTHREAD_MUTEX_INITIALIZER,
};

/* ------------------------------------------------------------------------------------------------------------------ */
/* Start on load: LD_PRELOAD constructor, CUDA_INJECTION64_PATH                                                       */
/* ------------------------------------------------------------------------------------------------------------------ */

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
  int rc = rt_cuda_ensure_init(from);
  if (rc == INIT_DEFER) {
    rt_cuda_logmsg(LOG_INFO, "libcupti not loaded yet; collection starts when the program initializes CUDA");
    arm_injection();
    return;
  }
  if (rc != 0) return;
  pthread_mutex_lock(&G.ctl_mu);
  if (!G.auto_started) {
    G.auto_started = 1;
    if (!G.cfg.signal_no && !(G.cfg.start_delay > 0)) rt_cuda_start_locked();
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
  rt_cuda_log_level = rt_parse_log_level(getenv("RAWTRACE_LOG"));
  G.owner_pid = getpid();
  if (!preloaded() || !rt_process_selected()) return;
  const char* pm = getenv("RAWTRACE_PRELOAD");
  if (pm && *pm && strcasecmp(pm, "eager") && strcasecmp(pm, "lazy") && strcasecmp(pm, "off"))
    rt_cuda_logmsg(LOG_WARN, "RAWTRACE_PRELOAD=%.100s is not eager, lazy or off; eager is used", pm);
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
  if (!rt_cuda_in_init) auto_start(FROM_INJECTION);
  return 1;
}

/* NVTX's injection entry, for NVTX_INJECTION64_PATH = this library (what `rawtrace record` sets): NVTX hands its
 * ranges to the libcupti this collector records through, so they cannot land in a second CUPTI instance that
 * nobody reads. Returns CUPTI's answer (0 = NVTX stays off). CUPTI 13.0.0 (API 130000) is refused: it can crash in
 * nvtxNameOsThreadA as the NVTX injection (NVIDIA/NVTX#125; docs/collectors/cuda.md). */
RAWTRACE_API int InitializeInjectionNvtx2(const void* get_export_table) {
  typedef int (*fn_nvtx_inject)(const void*);
  if (!rt_cuda_in_init) pthread_mutex_lock(&G.init_mu);
  int loaded = rt_cuda_load_cupti() == 0;
  if (!rt_cuda_in_init) pthread_mutex_unlock(&G.init_mu);
  if (!loaded) {
    rt_cuda_logmsg(LOG_WARN, "NVTX: no libcupti found to hand NVTX ranges to; NVTX stays off");
    return 0;
  }
  uint32_t v = 0;
  if (C.GetVersion(&v) == CUPTI_SUCCESS && v == 130000) {
    rt_cuda_logmsg(LOG_WARN, "NVTX: CUPTI 13.0.0 (API 130000) can crash as the NVTX injection; NVTX stays off");
    return 0;
  }
  fn_nvtx_inject f = NULL;
  *(void**)(&f) = dlsym(G.cupti, "InitializeInjectionNvtx2");
  if (!f) {
    rt_cuda_logmsg(LOG_WARN, "NVTX: %s has no InitializeInjectionNvtx2; NVTX stays off", G.cupti_path);
    return 0;
  }
  int rc = f(get_export_table);
  rt_cuda_logmsg(LOG_INFO, "NVTX ranges go to %s (%s)", G.cupti_path, rc ? "ok" : "refused");
  return rc;
}

static int ready(void) { return G.init_state == INIT_OK && getpid() == G.owner_pid; }

RAWTRACE_API int rawtrace_start(void) {
  if (rt_cuda_ensure_init(FROM_API) != 0 || getpid() != G.owner_pid) return -1;
  pthread_mutex_lock(&G.ctl_mu);
  G.auto_started = 1;
  int rc = rt_cuda_start_locked();
  pthread_mutex_unlock(&G.ctl_mu);
  return rc;
}

RAWTRACE_API int rawtrace_stop(void) {
  if (!ready()) return -1;
  pthread_mutex_lock(&G.ctl_mu);
  int rc = rt_cuda_stop_locked();
  pthread_mutex_unlock(&G.ctl_mu);
  return rc;
}

RAWTRACE_API int rawtrace_flush(void) {
  if (!ready() || G.disabled || rt_queue_is_finished(&G.q)) return -1;
  CUptiResult rc = C.FlushAll(0);
  if (rc != CUPTI_SUCCESS)
    rt_cuda_logmsg(LOG_DEBUG, "cuptiActivityFlushAll(0): %s (%d)", rt_cuda_cupti_error_text(rc), (int)rc);
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
