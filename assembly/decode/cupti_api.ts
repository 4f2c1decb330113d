/**
 * CUPTI API calls the way Kineto (pytorch/kineto libkineto) shows them: the display name of a callback id, which
 * calls are hidden by default and which start an `ac2g` flow. Facts from ../shared/reference/kineto.md and
 * libkineto's `cupti_strings.cpp` / `CuptiCbidRegistry.cpp`; proven for every cbid of the pinned CUDA header sets
 * by test/decode/cupti_names.test.ts.
 *
 * - Name: the string CUPTI's `cuptiGetCallbackName` returns (the collector's API_NAMES chunk), with one trailing
 *   `_v<4 or more digits>` removed, in both domains. That suffix is the CUDA version that introduced the entry
 *   (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`, `cudaStreamGetCaptureInfo_v2_v11030` →
 *   `cudaStreamGetCaptureInfo_v2`); one to three digits are part of the function's name and stay (`cuMemAlloc_v2`,
 *   `cuCtxCreate_v4`). The lowest version suffix is `_v3020` (CUDA 3.2), so the rule is unambiguous.
 * - Hidden (unless --all-api): the runtime blocklist (`cudaGetDevice`, `cudaSetDevice`, `cudaGetLastError`,
 *   `cudaEventCreate`, `cudaEventCreateWithFlags`, `cudaEventDestroy`), and every driver call Kineto does not
 *   register (it keeps `cuLaunchKernel`, `cuLaunchKernelEx` and the six `cuMem*` virtual-memory calls).
 * - Flow start: runtime launches (`cudaLaunchKernel`, `cudaLaunchCooperativeKernel[MultiDevice]`,
 *   `cudaLaunchKernelExC`), `cudaGraphLaunch`, `cudaStreamSynchronize`, `cudaDeviceSynchronize`,
 *   `cudaStreamWaitEvent`, the cbid range `cudaMemcpy_v3020` … `cudaMemset2DAsync_v3020` (31 … 52: the original
 *   CUDA 3.2 memcpy/memset entry points, not later ones such as `cudaMemcpyPeer` or the `_ptds` variants), and the
 *   driver's `cuLaunchKernel` / `cuLaunchKernelEx`.
 * Hiding and flows go by cbid, as in Kineto, so they hold for a record whose cbid has no API_NAMES entry too.
 * CUPTI callback ids never change between releases (new calls are appended), which the test checks per header set.
 */
import * as S from "../model/session";

/** CUPTI runtime callback ids Kineto names (`CUPTI_RUNTIME_TRACE_CBID_*` in cupti_runtime_cbid.h). */
const enum Rt {
  cudaGetLastError_v3020 = 10,
  cudaSetDevice_v3020 = 16,
  cudaGetDevice_v3020 = 17,
  cudaMemcpy_v3020 = 31,
  cudaMemset2DAsync_v3020 = 52,
  cudaStreamSynchronize_v3020 = 131,
  cudaEventCreate_v3020 = 133,
  cudaEventCreateWithFlags_v3020 = 134,
  cudaEventDestroy_v3020 = 136,
  cudaStreamWaitEvent_v3020 = 147,
  cudaDeviceSynchronize_v3020 = 165,
  cudaLaunchKernel_v7000 = 211,
  cudaLaunchCooperativeKernel_v9000 = 269,
  cudaLaunchCooperativeKernelMultiDevice_v9000 = 272,
  cudaGraphLaunch_v10000 = 311,
  cudaLaunchKernelExC_v11060 = 430,
}

/** CUPTI driver callback ids Kineto registers (`CUPTI_DRIVER_TRACE_CBID_*` in cupti_driver_cbid.h). */
const enum Drv {
  cuLaunchKernel = 307,
  cuMemCreate = 549,
  cuMemRelease = 550,
  cuMemMap = 551,
  cuMemUnmap = 552,
  cuMemExportToShareableHandle = 554,
  cuMemImportFromShareableHandle = 555,
  cuLaunchKernelEx = 652,
}

/** API_NAMES domain of driver calls (CUPTI_CB_DOMAIN_DRIVER_API); 2 is the runtime. */
const DOMAIN_DRIVER: u32 = 1;
const DOMAIN_RUNTIME: u32 = 2;

/**
 * Kineto's flags for a CUPTI API call: {@link S.API_FLOW} when it starts an ac2g flow, {@link S.API_HIDDEN} when it
 * is left out by default. `domain` is 1 (driver) or 2 (runtime); other domains get 0.
 */
export function cuptiApiFlags(domain: u32, cbid: u32): u32 {
  if (domain == DOMAIN_RUNTIME) {
    if (cbid >= <u32>Rt.cudaMemcpy_v3020 && cbid <= <u32>Rt.cudaMemset2DAsync_v3020) return S.API_FLOW;
    switch (cbid) {
      case Rt.cudaLaunchKernel_v7000:
      case Rt.cudaLaunchCooperativeKernel_v9000:
      case Rt.cudaLaunchCooperativeKernelMultiDevice_v9000:
      case Rt.cudaLaunchKernelExC_v11060:
      case Rt.cudaGraphLaunch_v10000:
      case Rt.cudaStreamSynchronize_v3020:
      case Rt.cudaDeviceSynchronize_v3020:
      case Rt.cudaStreamWaitEvent_v3020:
        return S.API_FLOW;
      case Rt.cudaGetDevice_v3020:
      case Rt.cudaSetDevice_v3020:
      case Rt.cudaGetLastError_v3020:
      case Rt.cudaEventCreate_v3020:
      case Rt.cudaEventCreateWithFlags_v3020:
      case Rt.cudaEventDestroy_v3020:
        return S.API_HIDDEN;
    }
    return 0;
  }
  if (domain == DOMAIN_DRIVER) {
    switch (cbid) {
      case Drv.cuLaunchKernel:
      case Drv.cuLaunchKernelEx:
        return S.API_FLOW;
      case Drv.cuMemCreate:
      case Drv.cuMemRelease:
      case Drv.cuMemMap:
      case Drv.cuMemUnmap:
      case Drv.cuMemExportToShareableHandle:
      case Drv.cuMemImportFromShareableHandle:
        return 0;
    }
    return S.API_HIDDEN;
  }
  return 0;
}

/**
 * Length of the display name of the CUPTI callback name [p, p+n): `n` less a trailing `_v` followed by four or more
 * digits (Kineto's rule, the same in both domains).
 */
export function cuptiDisplayLen(p: usize, n: u32): u32 {
  let m = n;
  while (m > 0 && <u32>load<u8>(p + m - 1) - 48 < 10) m--;
  if (n - m >= 4 && m >= 2 && load<u8>(p + m - 1) == 0x76 && load<u8>(p + m - 2) == 0x5f) return m - 2; // "_v"
  return n;
}

/** Stores a CUPTI (domain, cbid) → name entry of an API_NAMES chunk under its Kineto display name and flags. */
export function cuptiApiName(domain: u32, cbid: u32, p: usize, n: u32): void {
  S.setApiName(domain, cbid, p, cuptiDisplayLen(p, n), cuptiApiFlags(domain, cbid));
}
