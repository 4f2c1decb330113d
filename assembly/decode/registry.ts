/**
 * Which decoder reads which dump: one line per vendor, keyed by the HEADER's vendor id (docs/format.md §1) and
 * tracing-library version. Adding a vendor = a decoder module under assembly/decode/ with an install function
 * (decode/decoder.ts), one case in {@link selectDecoder} and one in {@link decodersReset}.
 */
import { uninstall } from "./decoder";
import { setClockSameRate } from "../model/clock";
import * as S from "../model/session";
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
  // A decoder installed in place of another (a damaged HEADER's vendor corrected, engine.ts) must not inherit its
  // clock rule: rocprofiler's install sets same-rate clocks.
  setClockSameRate(false);
  // Each line also says what the emitters print about the source (model/session.ts setSource): the devices' maker,
  // the name of the tracer's overhead rows, whether the HEADER's versions are CUDA's.
  switch (vendor) {
    case 1: // NVIDIA CUDA: CUPTI activity records (any version: sizes from KIND_SIZES)
      cuptiInstall();
      S.setSource("Nvidia", "CUPTI overhead", true, true);
      return true;
    case 2: // AMD ROCm: rocprofiler-sdk buffer records (0.5 and 1.0 layouts)
      rocprofilerInstall();
      S.setSource("AMD", "rocprofiler-sdk overhead", false, false);
      return true;
    case 4: // Intel XPU: PTI view records (v1 and _v2: sizes from KIND_SIZES)
      ptiInstall();
      S.setSource("Intel", "PTI overhead", false, true);
      return true;
    case 5: // Habana Gaudi: Synapse profiler buffers (208- and 112-byte entries)
      synapseInstall();
      S.setSource("Intel", "Synapse profiler overhead", false, false);
      return true;
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
