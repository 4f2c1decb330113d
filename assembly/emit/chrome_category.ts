/**
 * The Chrome category (`cat`) of a host API event: the one table that names the host-call categories of the model
 * (model/event.ts ApiCat, chosen by each decoder) as each Kineto build writes them. No vendor is asked here.
 */
import { Ev, ApiCat } from "../model/event";

/**
 * Chrome category of host API event `e`, from its {@link ApiCat}: the CUDA and ROCm builds' `cuda_runtime` /
 * `cuda_driver`; the XPU plugin's `xpu_runtime` (SYCL / Unified Runtime), `xpu_driver` (Level Zero), `xpu_sync`
 * (PTI synchronization records) and `collective_comm` (oneCCL records); the Gaudi bridge's `hpu_op`. An API event
 * whose decoder set no category (none does) gets `host_api`.
 */
export function apiCategory(e: Ev): string {
  switch (e.apiCat) {
    case ApiCat.CUDA_RUNTIME: return "cuda_runtime";
    case ApiCat.CUDA_DRIVER: return "cuda_driver";
    case ApiCat.XPU_RUNTIME: return "xpu_runtime";
    case ApiCat.XPU_DRIVER: return "xpu_driver";
    case ApiCat.XPU_SYNC: return "xpu_sync";
    case ApiCat.COLLECTIVE_COMM: return "collective_comm";
    case ApiCat.HPU_OP: return "hpu_op";
  }
  return "host_api";
}
