/**
 * The Chrome category of a host API event, per vendor, as each Kineto build writes it: the one place emit/chrome_json.ts
 * asks which vendor a dump came from for a category.
 */
import { Ev, EvKind } from "../model/event";
import * as S from "../model/session";
import { VENDOR_XPU } from "./chrome_xpu";

/** HEADER vendor id of Habana Gaudi (Synapse) dumps. */
const VENDOR_HPU: u32 = 5;
/** PTI record kinds the XPU decoder turns into host events of their own category (decode/pti.ts). */
const PTI_KIND_SYNC: u32 = 11;
const PTI_KIND_COMM: u32 = 12;

/**
 * Chrome category of host API event `e`: Kineto's XPU plugin writes `xpu_runtime` (SYCL / Unified Runtime),
 * `xpu_driver` (Level Zero), `xpu_sync` (PTI synchronization records) and `collective_comm` (oneCCL records); the
 * Gaudi bridge `hpu_op` for Synapse host calls; the CUDA and ROCm builds `cuda_runtime` / `cuda_driver`.
 */
export function apiCategory(e: Ev): string {
  const driver = e.kind != EvKind.API_RUNTIME;
  if (S.vendor == VENDOR_XPU) {
    if (e.recordKind == PTI_KIND_SYNC) return "xpu_sync";
    if (e.recordKind == PTI_KIND_COMM) return "collective_comm";
    return driver ? "xpu_driver" : "xpu_runtime";
  }
  if (S.vendor == VENDOR_HPU && !driver) return "hpu_op";
  return driver ? "cuda_driver" : "cuda_runtime";
}
