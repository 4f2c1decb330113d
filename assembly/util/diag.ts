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
