/**
 * The device-stream spans of host ranges (Kineto's gpu_user_annotation), shared by the decoders that project ranges
 * (CUPTI NVTX, ROCm ROCTx): model/ranges.ts collects, per (range, device, stream), the interval the range's launched
 * work covered; at the end of pass 2 each one becomes a GPU_RANGE event.
 */
import { Ev, EvKind, evClear } from "../model/event";
import * as S from "../model/session";
import * as R from "../model/ranges";
import { emitEvent } from "../emit/dispatch";

/**
 * Emits every projected span through `e` (the decoder's event, overwritten) with record kind `recordKind`; a span's
 * name is the display form of its range's vendor name key (0: no name, an empty one).
 */
export function emitProjectedSpans(e: Ev, recordKind: u32): void {
  const n = R.spanSlots();
  for (let i: u32 = 0; i < n; i++) {
    if (!R.spanAt(i)) continue;
    evClear(e);
    e.kind = EvKind.GPU_RANGE;
    e.recordKind = recordKind;
    e.device = R.spanDevice;
    e.stream = R.spanStream;
    e.pid = R.spanPid;
    e.start = R.spanStart;
    e.end = R.spanEnd;
    const np = R.spanName != 0 ? S.stringDisplay(R.spanName, false) : 0;
    e.namePtr = np;
    e.nameLen = np != 0 ? S.displayLen : 0;
    emitEvent(e);
  }
}
