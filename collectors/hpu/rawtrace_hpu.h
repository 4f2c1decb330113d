/**
 * Public API of the rawtrace HPU collector (librawtrace_hpu.so, loaded with LD_PRELOAD; docs/collectors/hpu.md).
 * A framework finds it with dlsym(RTLD_DEFAULT, ...) and may call it from any thread.
 */
#ifndef RAWTRACE_HPU_H
#define RAWTRACE_HPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAWTRACE_HPU_API __attribute__((visibility("default")))

/**
 * Explicit stop: for every device being profiled, synProfilerStop, synProfilerGetTrace into an HPU_TRACE chunk
 * (reason 3), synProfilerStart again; waits (at most 10 s) until written. Returns 0, or -1 when the collector is not
 * recording in this process or the wait timed out.
 */
RAWTRACE_HPU_API int rawtrace_hpu_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_HPU_H */
