/*
 * rawtrace ROCm collector: initialization, from the SDK's initialize: the output and its first chunks, the
 * SDK context, buffer and tracing services, the writer thread.
 */
#include "rocm_internal.h"
#include "rawtrace_heap.h"

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
  return rt_rocm_wrote(rt_writer_header(G.w, &h));
}

/* Enables buffer tracing for every wanted kind found by name. Returns how many were enabled. */
/* Warns once for each RAWTRACE_ROCM_KINDS name (after an optional '-') that is neither "default" nor a kind of this
 * SDK (`t`): a misspelled name would otherwise be dropped without a word. */
static void check_kind_names(const struct names* t) {
  const char* w;
  size_t wn;
  int neg;
  for (const char* s = G.cfg.kinds; (s = rt_rocm_next_kind(s, &w, &wn, &neg)) != NULL;) {
    int known = wn == 7 && !strncasecmp(w, "default", 7);
    for (size_t i = 0; i < t->n && !known; i++) known = strlen(t->v[i].name) == wn && !strncasecmp(w, t->v[i].name, wn);
    if (!known) {
      rt_rocm_logmsg(RT_V_WARN, "RAWTRACE_ROCM_KINDS: '%.*s' is not a buffer-tracing kind of this rocprofiler-sdk; "
                     "ignored (names as in rocprofiler_buffer_tracing_kind_t without the prefix, e.g. KERNEL_DISPATCH)",
                     (int)(wn > 64 ? 64 : wn), w);
    }
  }
}

static uint32_t configure_kinds(const struct names* t) {
  check_kind_names(t);
  uint32_t ok = 0;
  for (size_t i = 0; i < t->n; i++) {
    uint32_t k = t->v[i].id;
    int want = k < MAX_KINDS ? rt_rocm_kind_wanted(t->v[i].name) : 0;
    if (!want) continue;
    rt_rocp_status st = S.configure_buffer(G.ctx, k, NULL, 0, G.buf);
    if (st == RT_ROCP_STATUS_SUCCESS) {
      size_t len = strlen(t->v[i].name);
      G.enabled[k] = 1;
      G.api_kind[k] = len > 4 && !strcmp(t->v[i].name + len - 4, "_API");
      ok++;
    } else {
      /* a default kind the SDK lacks support for (e.g. RCCL_API in a build without RCCL) is only worth a note */
      rt_rocm_logrec(want == 2 ? RT_V_WARN : RT_V_INFO, "buffer tracing of %s (kind %u) refused: %s (%d); not recorded",
                     t->v[i].name, k,
                     rt_rocm_status_text(st), st);
    }
  }
  return ok;
}

/* Gives up: LOG (an SDK error `what` with status `st`; a sentence `what` of our own when `st` is 0; nothing when
 * `what` is NULL, the cause said already), END, close. Returns -1 (initialize's failure). */
static int fail_init(const char* what, rt_rocp_status st) {
  atomic_store(&G.error, st);
  atomic_store(&G.state, ST_DISABLED);
  if (what && st != 0) {
    rt_rocm_logrec(RT_V_ERROR, "%s failed: %s (%d); ROCm collection disabled", what, rt_rocm_status_text(st), st);
  } else if (what) {
    rt_rocm_logrec(RT_V_ERROR, "%s; ROCm collection disabled", what);
  }
  rt_rocm_wrote(rt_writer_end(G.w));
  rt_writer_close(G.w);
  G.w = NULL;
  return -1;
}

int rt_rocm_init_collector(rt_rocp_client_finalize_fn fini) {
  rt_rocm_load_config(&G.cfg);
  G.owner_pid = getpid();
  rt_threads_init(&G.threads, (uint32_t)G.owner_pid);
  if (rt_rocm_load_sdk(fini) != 0) {
    rt_rocm_logmsg(RT_V_ERROR,
                   "rocprofiler-sdk functions not found (set RAWTRACE_ROCPROFILER_LIB); nothing is recorded");
    return -1;
  }
  int qrc = rt_queue_init(&G.q);
  if (qrc != 0) {
    rt_rocm_logmsg(RT_V_ERROR, "cannot set up the writer: %s; nothing is recorded", strerror(-qrc));
    return -1;
  }
  rt_queue_set_exit_timeout(&G.q, G.cfg.exit_timeout);
  char wanted[PATH_MAX];
  int expanded = rt_expand_output(G.cfg.output, DEFAULT_NAME, wanted, sizeof wanted, rt_clock_ns(CLOCK_REALTIME));
  /* Exclusive create, as the CUDA collector: a name another process took gets a numbered one, said on stderr. */
  G.w = expanded == 0 ? rt_writer_create(wanted, G.path, sizeof G.path) : NULL; /* a cut name: ENAMETOOLONG */
  if (!G.w) {
    rt_rocm_logmsg(RT_V_ERROR, "cannot create %.300s: %s; nothing is recorded", wanted, rt_writer_strerror(errno));
    return -1;
  }
  rt_env_checksum(G.w, G.verbosity);
  rt_dump_created(G.verbosity, G.cfg.output, DEFAULT_NAME, wanted, G.path);
  rt_clock_anchor_t anchor;
  rt_rocm_read_anchor(RT_CLOCK_START, &anchor);
  int rc = write_header();
  if (!rc) rc = rt_rocm_wrote(rt_writer_clock(G.w, &anchor));
  /* The main thread (tid = pid) named at once, not only when a buffer first holds its API records: the process id in a
   * checksummed chunk before any activity, which a reader uses when the HEADER is lost or damaged (docs/errors.md
   * NO_HEADER). Through a set of its own, not G.threads: the thread is named again when its records first come, by
   * the name it has then (a reader keeps the later name), since a program may rename it after the tool's
   * initialization (PyTorch's `pt_main_thread` is set when torch._C loads, after libamdhip64 and this tool). */
  rt_threads main_thread = {0};
  rt_threads_init(&main_thread, (uint32_t)G.owner_pid);
  rt_threads_note(&main_thread, (uint32_t)G.owner_pid, (uint32_t)G.owner_pid);
  if (!rc) rc = rt_threads_write(&main_thread, G.w, rt_rocm_wrote);
  rt_threads_free(&main_thread);
  if (rc) {
    rt_writer_close(G.w);
    G.w = NULL;
    return -1;
  }
  rt_rocm_logrec(RT_V_INFO, "rocprofiler-sdk %s (version %u, priority %u) from %s", G.sdk_version_text, G.sdk_version,
                 G.priority, G.sdk_path[0] ? G.sdk_path : "the process");

  rt_rocp_status st = S.create_context(&G.ctx);
  if (st != RT_ROCP_STATUS_SUCCESS) return fail_init("rocprofiler_create_context", st);
  size_t sz = G.cfg.buffer_size;
  st = S.create_buffer(G.ctx, sz, sz - sz / 4, RT_ROCP_BUFFER_POLICY_LOSSLESS, rt_rocm_on_buffer, NULL, &G.buf);
  if (st != RT_ROCP_STATUS_SUCCESS) return fail_init("rocprofiler_create_buffer", st);

  struct names t = {0};
  S.iterate_buffer_kinds(rt_rocm_on_kind, &t);
  uint32_t enabled = configure_kinds(&t);
  rc = rt_rocm_write_names(&t);
  rt_free(t.v);
  if (!rc) rc = rt_rocm_write_agents();
  if (rc) return fail_init(NULL, 0); /* the write error was said (rt_rocm_wrote) */
  if (!enabled) {
    return fail_init("no buffer-tracing kind could be enabled (RAWTRACE_ROCM_KINDS selects none this rocprofiler-sdk "
                     "has, or the SDK refused each: see the lines above)", 0);
  }
  rt_rocm_configure_callbacks();

  int trc = rt_thread_start(&G.writer, rt_rocm_writer_main);
  if (trc != 0) return fail_init("starting the writer thread", trc);
  atomic_store(&G.writer_started, 1);
  atexit(rt_rocm_at_exit);
  pthread_atfork(NULL, NULL, rt_rocm_on_fork_child);
  rt_rocm_install_signal_handlers();

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
    rt_rocm_logrec(RT_V_ERROR, "rocprofiler_start_context failed: %s (%d); ROCm collection disabled",
                   rt_rocm_status_text(st), st);
    return -1;
  }
  rt_rocm_logmsg(RT_V_INFO, "collecting %u buffer-tracing kinds into %s", enabled, G.path);
  return 0;
}
