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
 *
 * Files, one concept each (declarations they share: rocm_internal.h): this one holds the collector's state, the
 * entry points the SDK calls (rocprofiler_configure, initialize, finalize) and the public API; rocm_config.c the
 * configuration; rocm_load.c resolving the SDK; rocm_tables.c API_NAMES and AGENTS; rocm_buffers.c the copy-buffer
 * pool and the buffer callback; rocm_callbacks.c kernel symbols and ROCTx messages; rocm_writer.c the queue and the
 * writer thread; rocm_exit.c exit, signals and fork; rocm_init.c initialization; rocm_log.c logging.
 */
#include "rocm_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* State                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

struct rt_rocm_state G = {
    .ctl_mu = PTHREAD_MUTEX_INITIALIZER,
    .pool_mu = PTHREAD_MUTEX_INITIALIZER,
    .fill_mu = PTHREAD_MUTEX_INITIALIZER,
    .verbosity = RT_V_WARN,
    .cb_code_object = UINT32_MAX,
    .cb_marker = {UINT32_MAX, UINT32_MAX},
    .op_ksym = RT_ROCP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER,
    .msg_ops = {{-1, -1, -1}, {-1, -1, -1}},
};

/* ------------------------------------------------------------------------------------------------------------------ */
/* Entry points the SDK calls: rocprofiler_configure, then initialize and finalize                                    */
/* ------------------------------------------------------------------------------------------------------------------ */

static int tool_initialize(rt_rocp_client_finalize_fn fini, void* tool_data) {
  (void)tool_data;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&G.initialized, &expected, 1)) return 0;
  return rt_rocm_init_collector(fini) == 0 ? 0 : -1;
}

static void tool_finalize(void* tool_data) {
  (void)tool_data;
  rt_rocm_finish();
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
  /* Again under the lock: the writer stops the context after a write error under it, once (rocm_writer.c). */
  if (G.write_failed) rc = -1;
  else if (!G.running) {
    rc = S.start_context(G.ctx) == RT_ROCP_STATUS_SUCCESS ? 0 : -1;
    if (!rc) {
      G.running = 1;
      atomic_store(&G.state, ST_RUNNING);
      rt_rocm_enqueue_clock(RT_CLOCK_PERIODIC);
    }
  }
  pthread_mutex_unlock(&G.ctl_mu);
  return rc;
}

RAWTRACE_ROCM_API int rawtrace_rocm_stop(void) {
  if (!ready()) return -1;
  pthread_mutex_lock(&G.ctl_mu);
  if (G.running) {
    rt_rocm_stop_locked();
    rt_rocm_enqueue_clock(RT_CLOCK_PERIODIC);
  }
  pthread_mutex_unlock(&G.ctl_mu);
  return 0;
}

RAWTRACE_ROCM_API int rawtrace_rocm_flush(void) {
  if (!ready()) return -1;
  rt_rocp_status st = S.flush_buffer(G.buf);
  if (st != RT_ROCP_STATUS_SUCCESS)
    rt_rocm_logmsg(RT_V_DEBUG, "rocprofiler_flush_buffer: %s (%d)", rt_rocm_status_text(st), st);
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
