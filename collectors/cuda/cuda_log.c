/*
 * rawtrace CUDA collector: logging, one write(2) per line on stderr, warnings and errors also as LOG chunks;
 * the text of a CUPTI error.
 */
#include "cuda_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Logging: one write(2) per line on stderr; warnings and errors also become LOG chunks                               */
/* ------------------------------------------------------------------------------------------------------------------ */

int rt_cuda_log_level = LOG_WARN;

static void vlog_line(int level, int to_file, const char* fmt, va_list ap) {
  char msg[480];
  vsnprintf(msg, sizeof msg, fmt, ap);
  rt_log_line(rt_cuda_log_level, level, msg);
  if (to_file && G.w && !G.write_failed)
    rt_queue_push_log(&G.q, rt_log_chunk_level(level), msg); /* LOG_* are RT_V_* */
}

__attribute__((format(printf, 2, 3))) void rt_cuda_logmsg(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog_line(level, 0, fmt, ap);
  va_end(ap);
}

/* As rt_cuda_logmsg, and also a LOG chunk in the file (when one is open). */
__attribute__((format(printf, 2, 3))) void rt_cuda_logrec(int level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog_line(level, 1, fmt, ap);
  va_end(ap);
}

const char* rt_cuda_cupti_error_text(CUptiResult rc) {
  const char* s = NULL;
  if (C.GetResultString && C.GetResultString(rc, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error";
}
