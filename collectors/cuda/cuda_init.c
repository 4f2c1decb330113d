/*
 * rawtrace CUDA collector: initialization, once per process: the output, the chunks known at start, the
 * writer thread and the CUPTI callbacks.
 */
#include "cuda_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Initialization                                                                                                     */
/* ------------------------------------------------------------------------------------------------------------------ */

_Thread_local int rt_cuda_in_init; /* this thread is inside rt_cuda_ensure_init */

/* Gives up the output init_collector opened (the file stays as far as it got). Returns -1, init_collector's failure. */
static int close_output(void) {
  rt_writer_close(G.w);
  G.w = NULL;
  return -1;
}

/* Opens the output, writes the chunks known at start, starts the writer thread and registers the callbacks.
 * Returns 0 (also when CUPTI then refused: collection is disabled but the file gets its END), INIT_DEFER, or -1. */
static int init_collector(int from) {
  rt_cuda_load_config(&G.cfg);
  G.owner_pid = getpid();
  rt_threads_init(&G.threads, (uint32_t)G.owner_pid);
  if (rt_cuda_load_cupti() != 0) {
    if (from == FROM_PRELOAD) return INIT_DEFER;
    const char* env = getenv("RAWTRACE_CUPTI_LIB");
    if (env && *env)
      rt_cuda_logmsg(LOG_ERROR, "RAWTRACE_CUPTI_LIB=%.300s: %s; nothing is recorded", env, rt_cuda_cupti_problem);
    else
      rt_cuda_logmsg(LOG_ERROR, "libcupti not found (set RAWTRACE_CUPTI_LIB to its path); nothing is recorded");
    return -1;
  }
  uint32_t ver = 0;
  if (C.GetVersion(&ver) != CUPTI_SUCCESS) ver = 0;
  G.cupti_version = ver;
  G.can_reject = ver >= CUPTI_REJECT_MIN_VERSION;
  rt_cuda_load_driver();
  int qrc = rt_queue_init(&G.q);
  if (qrc != 0) {
    rt_cuda_logmsg(LOG_ERROR, "cannot set up the writer: %s; nothing is recorded", strerror(-qrc));
    return -1;
  }
  rt_queue_set_exit_timeout(&G.q, G.cfg.exit_timeout);

  uint64_t start_ns = rt_clock_ns(CLOCK_REALTIME);
  char wanted[PATH_MAX];
  int expanded = rt_expand_output(G.cfg.output, "rawtrace-%h-%p.rawtrace", wanted, sizeof wanted, start_ns);
  /* Exclusive create: another process given the same RAWTRACE_OUTPUT (no %p) must not truncate or share our
     file; a taken name gets a numbered one, and the user is told which. */
  G.w = expanded == 0 ? rt_writer_create(wanted, G.path, sizeof G.path) : NULL; /* a cut name: ENAMETOOLONG */
  if (!G.w) {
    rt_cuda_logmsg(LOG_ERROR, "cannot create %.300s: %s; nothing is recorded", wanted, rt_writer_strerror(errno));
    return -1;
  }
  rt_env_checksum(G.w, rt_cuda_log_level);
  rt_dump_created(rt_cuda_log_level, G.cfg.output, "rawtrace-%h-%p.rawtrace", wanted, G.path);

  rt_cuda_probe_kind_sizes();

  rt_header_info h;
  rt_header_info_init(&h);
  h.vendor = RT_VENDOR_CUDA;
  h.vendor_version = ver;
  h.runtime_version = rt_cuda_runtime_version();
  h.driver_version = rt_cuda_driver_version();
  h.collector_version = RT_COLLECTOR_VERSION;
  static char host[256], cmdline[65536];
  rt_header_process(&h, start_ns, host, cmdline, sizeof cmdline);
  char vtext[PATH_MAX + 64];
  snprintf(vtext, sizeof vtext, "CUPTI API %u (%s)", ver, G.cupti_path);
  h.vendor_version_text = vtext;

  rt_clock_anchor_t anchor;
  rt_cuda_read_anchor(RT_CLOCK_START, &anchor);

  int rc = rt_writer_header(G.w, &h);
  if (!rc) rc = rt_writer_clock(G.w, &anchor);
  if (!rc) rc = rt_cuda_write_kind_sizes();
  if (!rc) rc = rt_cuda_write_api_names();
  if (rc) {
    rt_cuda_logmsg(LOG_ERROR, "writing %s failed: %s; nothing is recorded", G.path, strerror(-rc));
    return close_output();
  }
  atomic_store(&G.n_chunks, 4);

  int trc = rt_thread_start(&G.writer, rt_cuda_writer_main);
  if (trc != 0) {
    rt_cuda_logmsg(LOG_ERROR, "cannot start the writer thread: %s; nothing is recorded", strerror(trc));
    return close_output();
  }
  G.writer_started = 1;
  atexit(rt_cuda_at_exit);
  pthread_atfork(NULL, NULL, rt_cuda_on_fork_child);
  atomic_store(&G.state, RAWTRACE_STATE_STOPPED);

  /* Before any kind is enabled: buffers cannot be taken back after this point. */
  if (!G.can_reject) {
    for (uint32_t i = 0; i < RESERVE_BUFFERS; i++) {
      struct cbuf* b = rt_cuda_reserve_alloc();
      if (b) rt_cuda_recycle(b);
    }
  }
  pthread_mutex_lock(&G.ctl_mu);
  CUptiResult crc = C.RegisterCallbacks(rt_cuda_on_buffer_requested, rt_cuda_on_buffer_completed);
  if (crc != CUPTI_SUCCESS) {
    rt_cuda_fail_cupti_locked("cuptiActivityRegisterCallbacks", crc);
  } else if (C.SetThreadIdType) {
    crc = C.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (crc != CUPTI_SUCCESS)
      rt_cuda_logrec(LOG_WARN, "cuptiSetThreadIdType(SYSTEM) failed: %s (%d); thread ids are pthread ids",
                     rt_cuda_cupti_error_text(crc), (int)crc);
  }
  if (!G.disabled && G.cfg.start_delay > 0 && !G.cfg.signal_no)
    G.start_at = mono_ns() + (uint64_t)(G.cfg.start_delay * 1e9);
  pthread_mutex_unlock(&G.ctl_mu);
  if (G.start_at) rt_queue_wake(&G.q);
  rt_cuda_install_signal_handlers();
  rt_cuda_logmsg(LOG_INFO, "CUPTI %u from %s; output %s", ver, G.cupti_path, G.path);
  return 0;
}

/* Initializes once. Returns 0 when initialized, INIT_DEFER, or -1 when the collector is unusable. */
int rt_cuda_ensure_init(int from) {
  if (rt_cuda_in_init) return -1;
  pthread_mutex_lock(&G.init_mu);
  int rc;
  if (G.init_state == INIT_OK) rc = 0;
  else if (G.init_state == INIT_FAILED) rc = -1;
  else {
    rt_cuda_in_init = 1;
    rc = init_collector(from);
    rt_cuda_in_init = 0;
    if (rc == 0) G.init_state = INIT_OK;
    else if (rc < 0) G.init_state = INIT_FAILED;
  }
  pthread_mutex_unlock(&G.init_mu);
  return rc;
}
