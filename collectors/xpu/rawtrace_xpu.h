/**
 * Public API of the rawtrace XPU collector (librawtrace_xpu.so, loaded with LD_PRELOAD; docs/collectors/xpu.md).
 * A framework (or rawtrace's Python helper) finds these with dlsym(RTLD_DEFAULT, ...) and calls them from any thread.
 */
#ifndef RAWTRACE_XPU_H
#define RAWTRACE_XPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAWTRACE_XPU_API __attribute__((visibility("default")))

/**
 * Pushes framework correlation id `id` (ptiViewPushExternalCorrelationId, kind PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, as
 * Kineto's XPU plugin does): every device operation recorded on this thread until the matching pop gets an
 * EXTERNAL_CORRELATION record {PTI correlation id, id}. Returns 0, or -1 when the collector is not recording or PTI
 * refused.
 */
RAWTRACE_XPU_API int rawtrace_xpu_push_external_id(uint64_t id);

/** Pops the id pushed last on this thread. Returns 0, or -1 when not recording or nothing was pushed. */
RAWTRACE_XPU_API int rawtrace_xpu_pop_external_id(void);

/**
 * Asks PTI to hand over every buffer (ptiFlushAllViews) and waits (at most 10 s) until the writer wrote them.
 * Returns 0, or -1 when not recording or the wait timed out.
 */
RAWTRACE_XPU_API int rawtrace_xpu_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_XPU_H */
