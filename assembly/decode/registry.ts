/**
 * Which decoder reads which dump: one line per vendor, keyed by the HEADER's vendor id (docs/format.md §1) and
 * tracing-library version. Adding a vendor = a decoder module under assembly/decode/ with an install function
 * (decode/decoder.ts), one line in {@link selectDecoder} and one in {@link decodersReset}.
 */
import { uninstall } from "./decoder";
import { setClockSameRate } from "../model/clock";
import { cuptiInstall, cuptiReset } from "./cupti";
import { rocprofilerInstall, rocprofilerReset } from "./rocprofiler";
import { ptiInstall, ptiReset } from "./pti";
import { synapseInstall, synapseReset } from "./synapse";

/**
 * Installs the decoder of `vendor` (HEADER vendor id) for library version `version`. Returns false when this build
 * has none (the engine reports UNSUPPORTED_VENDOR).
 */
export function selectDecoder(vendor: u32, version: u32): bool {
  uninstall();
  switch (vendor) {
    case 1: cuptiInstall(); return true; // NVIDIA CUDA: CUPTI activity records (any version: sizes from KIND_SIZES)
    case 2: rocprofilerInstall(); return true; // AMD ROCm: rocprofiler-sdk buffer records (0.5 and 1.0 layouts)
    case 4: ptiInstall(); return true; // Intel XPU: PTI view records (v1 and _v2: sizes from KIND_SIZES)
    case 5: synapseInstall(); return true; // Habana Gaudi: Synapse profiler buffers (208- and 112-byte entries)
  }
  return false;
}

/** Forgets every decoder's per-file state (after heap.reset()). */
export function decodersReset(): void {
  uninstall();
  setClockSameRate(false);
  cuptiReset();
  rocprofilerReset();
  ptiReset();
  synapseReset();
}
