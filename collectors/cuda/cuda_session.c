/*
 * rawtrace CUDA collector: collection control, start and stop of CUPTI activity (ctl_mu held), and what a
 * CUPTI error does to it.
 */
#include "cuda_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Collection control (ctl_mu held)                                                                                   */
/* ------------------------------------------------------------------------------------------------------------------ */

void rt_cuda_disable_kinds_locked(void) {
  for (int i = (int)G.cfg.nkinds - 1; i >= 0; i--) {
    uint32_t k = G.cfg.kinds[i];
    if (G.enabled[k]) {
      C.Disable((CUpti_ActivityKind)k);
      G.enabled[k] = 0;
    }
  }
}

/* A CUPTI error: disables collection for good with one log line and one LOG chunk. */
void rt_cuda_fail_cupti_locked(const char* what, CUptiResult rc) {
  if (G.disabled) return;
  G.disabled = 1;
  if (G.collecting) rt_cuda_disable_kinds_locked();
  G.collecting = 0;
  G.start_at = G.stop_at = 0;
  atomic_store(&G.error, (int)rc);
  atomic_store(&G.state, RAWTRACE_STATE_DISABLED);
  rt_cuda_logrec(LOG_ERROR, "%s failed: %s (%d); CUDA activity collection disabled", what, rt_cuda_cupti_error_text(rc),
                 (int)rc);
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

int rt_cuda_start_locked(void) {
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
        rt_cuda_logrec(LOG_WARN, "cuptiActivityEnable(kind %u) failed: %s (%d); that kind is not recorded", k,
                       rt_cuda_cupti_error_text(rc), (int)rc);
      }
    }
  }
  if (G.cfg.nkinds == 0) {
    /* RAWTRACE_ACTIVITIES named no kind this collector knows (each unknown one was warned about at load). */
    G.disabled = 1;
    G.start_at = G.stop_at = 0;
    atomic_store(&G.state, RAWTRACE_STATE_DISABLED);
    rt_cuda_logrec(LOG_ERROR, "RAWTRACE_ACTIVITIES names no activity kind; nothing is recorded");
    return -1;
  }
  if (!ok) {
    rt_cuda_fail_cupti_locked("cuptiActivityEnable (every configured kind)", last);
    return -1;
  }
  if ((G.enabled[CUPTI_ACTIVITY_KIND_CUDA_EVENT] || G.enabled[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]) &&
      C.EnableCudaEventDeviceTimestamps)
    C.EnableCudaEventDeviceTimestamps(1);
  api_tweaks_locked();
  G.collecting = 1;
  atomic_store(&G.state, RAWTRACE_STATE_RUNNING);
  if (G.started_once) rt_cuda_enqueue_clock(RT_CLOCK_PERIODIC);
  G.started_once = 1;
  G.start_at = 0;
  G.stop_at = G.cfg.duration > 0 ? mono_ns() + (uint64_t)(G.cfg.duration * 1e9) : 0;
  if (G.stop_at) rt_queue_wake(&G.q);
  rt_cuda_logmsg(LOG_INFO, "collecting (%u activity kinds) into %s", ok, G.path);
  return 0;
}

int rt_cuda_stop_locked(void) {
  G.start_at = G.stop_at = 0;
  if (!G.collecting) return G.disabled ? -1 : 0;
  rt_cuda_disable_kinds_locked();
  CUptiResult rc = C.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (rc != CUPTI_SUCCESS)
    rt_cuda_logmsg(LOG_WARN, "cuptiActivityFlushAll failed: %s (%d)", rt_cuda_cupti_error_text(rc), (int)rc);
  G.collecting = 0;
  if (!G.disabled) atomic_store(&G.state, RAWTRACE_STATE_STOPPED);
  rt_cuda_enqueue_clock(RT_CLOCK_PERIODIC);
  rt_cuda_logmsg(LOG_INFO, "stopped collecting");
  return 0;
}
