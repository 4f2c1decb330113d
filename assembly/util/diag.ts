/**
 * Diagnostics of one conversion: the fatal error (if any) and per-code warning counters with the file offset and
 * detail of each code's first occurrence. Read by the host through the exports in assembly/index.ts.
 */
import { Fatal, WARN_COUNT } from "./error";

let fatalCode: i32 = 0;
let fatalOffset: u64 = 0;
let fatalDetail: u64 = 0;

// Static data, not heap: heap.reset() between files must not free these.
const warnCountP = memory.data(WARN_COUNT * 8);
const warnOffsetP = memory.data(WARN_COUNT * 8);
const warnDetailP = memory.data(WARN_COUNT * 8);

/**
 * Byte ranges of the input that were skipped (damage): the first {@link LOSS_RANGES_KEPT} are kept (file offsets
 * [from, to), the warning code and the chunk seq when known), later ones only counted, so memory stays bounded
 * whatever the damage. Recorded in pass 1 only.
 */
export const LOSS_RANGES_KEPT: i32 = 16;
/** "No chunk sequence number" in a loss range (the bytes were not a readable chunk). */
export const NO_SEQ: u32 = 0xffffffff;
const LOSS_STRIDE: usize = 24;
const lossRangeP = memory.data(<i32>LOSS_STRIDE * LOSS_RANGES_KEPT);
let lossBytes: u64 = 0;
let lossRanges: u64 = 0;
let lossKept: i32 = 0;
let lostActivityChunks: u64 = 0;
let lostActivityBytes: u64 = 0;

/** When false, warnings are not recorded (the second pass re-reads chunks already reported by the first). */
export let recordContainerWarnings = true;

/** Clears all diagnostics; called at the start of each file. */
export function diagReset(): void {
  fatalCode = 0;
  fatalOffset = 0;
  fatalDetail = 0;
  memory.fill(warnCountP, 0, WARN_COUNT * 8);
  memory.fill(warnOffsetP, 0, WARN_COUNT * 8);
  memory.fill(warnDetailP, 0, WARN_COUNT * 8);
  lossBytes = 0;
  lossRanges = 0;
  lossKept = 0;
  lostActivityChunks = 0;
  lostActivityBytes = 0;
  recordContainerWarnings = true;
}

/** Switches recording of container-level warnings (used by pass 2). */
export function setRecordContainerWarnings(on: bool): void {
  recordContainerWarnings = on;
}

/** Records a fatal error; only the first one is kept. */
export function fail(code: Fatal, offset: u64, detail: u64): void {
  if (fatalCode != 0) return;
  fatalCode = code;
  fatalOffset = offset;
  fatalDetail = detail;
}

/** True once a fatal error was recorded. */
// @ts-ignore: decorator
@inline export function failed(): bool {
  return fatalCode != 0;
}

/** Counts `n` occurrences of warning `code`; the first occurrence keeps its offset and detail. */
export function warn(code: i32, offset: u64, detail: u64, n: u64 = 1): void {
  if (code < 0 || code >= WARN_COUNT) return;
  const i = <usize>code << 3;
  const c = load<u64>(warnCountP + i);
  if (c == 0) {
    store<u64>(warnOffsetP + i, offset);
    store<u64>(warnDetailP + i, detail);
  }
  store<u64>(warnCountP + i, c + n);
}

/**
 * Records that input bytes [from, to) were skipped because of warning `code` (chunk `seq`, or {@link NO_SEQ});
 * `activityBytes` > 0 when they were the payload of an ACTIVITY chunk (its length). A range of no chunk that starts
 * where the last kept one ends extends it (a too-large header and the bytes scanned past it are one gap).
 */
export function lose(code: i32, from: u64, to: u64, seq: u32 = NO_SEQ, activityBytes: u64 = 0): void {
  if (code < 0 || code >= WARN_COUNT || to <= from) return;
  lossBytes += to - from;
  if (activityBytes != 0) {
    lostActivityChunks++;
    lostActivityBytes += activityBytes;
  }
  if (seq == NO_SEQ && lossKept > 0 && lossKept == <i32>lossRanges) {
    const last = lossRangeP + <usize>(lossKept - 1) * LOSS_STRIDE;
    if (load<u64>(last, 8) == from) {
      store<u64>(last, to, 8);
      return;
    }
  }
  if (lossKept < LOSS_RANGES_KEPT) {
    const e = lossRangeP + <usize>lossKept * LOSS_STRIDE;
    store<u64>(e, from);
    store<u64>(e, to, 8);
    store<u32>(e, <u32>code, 16);
    store<u32>(e, seq, 20);
    lossKept++;
  }
  lossRanges++;
}

/**
 * Loss totals: 0 = skipped ranges in all, 1 = ranges kept (≤ {@link LOSS_RANGES_KEPT}), 2 = ACTIVITY chunks lost,
 * 3 = their payload bytes, 4 = skipped bytes in all.
 */
export function lossTotal(field: i32): u64 {
  if (field == 0) return lossRanges;
  if (field == 1) return <u64>lossKept;
  if (field == 2) return lostActivityChunks;
  if (field == 3) return lostActivityBytes;
  if (field == 4) return lossBytes;
  return 0;
}

/** Kept loss range `i` (< lossTotal(1)): field 0 = from, 1 = to (file offsets), 2 = warning code, 3 = chunk seq. */
export function lossRange(i: i32, field: i32): u64 {
  if (i < 0 || i >= lossKept) return 0;
  const e = lossRangeP + <usize>i * LOSS_STRIDE;
  if (field == 0) return load<u64>(e);
  if (field == 1) return load<u64>(e, 8);
  if (field == 2) return <u64>load<u32>(e, 16);
  if (field == 3) return <u64>load<u32>(e, 20);
  return 0;
}

/** Warning count of `code`. */
export function warningCount(code: i32): u64 {
  return code >= 0 && code < WARN_COUNT ? load<u64>(warnCountP + (<usize>code << 3)) : 0;
}
/** File offset of the first occurrence of `code`. */
export function warningOffset(code: i32): u64 {
  return code >= 0 && code < WARN_COUNT ? load<u64>(warnOffsetP + (<usize>code << 3)) : 0;
}
/** Detail number of the first occurrence of `code`. */
export function warningDetail(code: i32): u64 {
  return code >= 0 && code < WARN_COUNT ? load<u64>(warnDetailP + (<usize>code << 3)) : 0;
}
/** Number of distinct warning codes that occurred. */
export function warningKinds(): i32 {
  let n = 0;
  for (let i = 0; i < WARN_COUNT; i++) if (load<u64>(warnCountP + (<usize>i << 3)) != 0) n++;
  return n;
}

export function fatalErrorCode(): i32 { return fatalCode; }
export function fatalErrorOffset(): u64 { return fatalOffset; }
export function fatalErrorDetail(): u64 { return fatalDetail; }
