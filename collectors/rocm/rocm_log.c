/*
 * rawtrace ROCm collector: logging, one line on stderr, warnings and errors also as LOG chunks (written
 * directly until the writer thread starts, queued after); the text of an SDK status.
 */
#include "rocm_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Logging                                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

static void vlog(int level, int to_file, const char* fmt, va_list ap) {
  char msg[480];
  vsnprintf(msg, sizeof msg, fmt, ap);
  rt_log_line(G.verbosity, level, msg);
  if (!to_file || !G.w || atomic_load(&G.write_failed)) return;
  uint32_t lvl = rt_log_chunk_level(level);
  if (!atomic_load(&G.writer_started)) {
    rt_rocm_wrote(rt_writer_log(G.w, lvl, msg)); /* still the initializing thread's writer */
    return;
  }
  rt_queue_push_log(&G.q, lvl, msg);
}

__attribute__((format(printf, 2, 3))) void rt_rocm_logmsg(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, 0, fmt, ap);
  va_end(ap);
}

/* As rt_rocm_logmsg, and also a LOG chunk in the file. */
__attribute__((format(printf, 2, 3))) void rt_rocm_logrec(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, 1, fmt, ap);
  va_end(ap);
}

const char* rt_rocm_status_text(rt_rocp_status st) {
  const char* s = S.status_string ? S.status_string(st) : NULL;
  return s ? s : "rocprofiler-sdk error";
}
