/**
 * Row log of a split Chrome JSON conversion (`convert --jobs N` on one file, assembly/split.ts): while a worker
 * emits its segments of the ACTIVITY chunks, the Chrome emitter notes each process/thread/stream row it meets for
 * the first time here, in that order, tagged with the segment it met it in. The metadata at the end of the JSON
 * walks the row tables in slot order, which depends on the order of first insertion, so the worker that writes the
 * end replays every worker's log merged in segment order — file order (emit/chrome_json.ts `chromeRowsReplay`).
 */

/** Which row table an entry belongs to (emit/chrome_json.ts: hostRows, gpuRows, syncRows). */
export const enum RowTable {
  HOST = 0,
  GPU = 1,
  SYNC = 2,
}

/** Bytes of one log entry: table u64 (low 32 bits; the segment in the high 32), key u64 (value added on export). */
const ENTRY: usize = 16;

/** True while a split conversion is running (the log is kept only then). */
export let rowLogOn = false;
let log: usize = 0;
let count: u32 = 0;
let cap: u32 = 0;
/** Segment being emitted (assembly/split.ts): tags the entries noted now. */
let segment: u64 = 0;

/** Starts (or stops, `on` false) the row log of the pass about to run. */
export function rowLogBegin(on: bool): void {
  rowLogOn = on;
  log = 0;
  count = 0;
  cap = 0;
  segment = 0;
}

/** Tags the entries noted from now on with segment `s`. */
export function rowLogSegment(s: u32): void {
  segment = <u64>s << 32;
}

/** Notes that `key` was inserted into row table `t` (called only when a table insert happened). */
export function rowLogNote(t: RowTable, key: u64): void {
  if (!rowLogOn) return;
  if (count == cap) {
    const ncap: u32 = cap == 0 ? 256 : cap << 1;
    const p = heap.alloc(<usize>ncap * ENTRY);
    if (count != 0) memory.copy(p, log, <usize>count * ENTRY);
    log = p;
    cap = ncap;
  }
  const a = log + <usize>count * ENTRY;
  store<u64>(a, <u64>t | segment);
  store<u64>(a, key, 8);
  count++;
}

/** Rows logged so far. */
export function rowLogCount(): u32 {
  return count;
}
/** Table of log entry `i`. */
export function rowLogTable(i: u32): u32 {
  return <u32>load<u64>(log + <usize>i * ENTRY);
}
/** Segment of log entry `i`. */
export function rowLogSeg(i: u32): u32 {
  return <u32>(load<u64>(log + <usize>i * ENTRY) >> 32);
}
/** Key of log entry `i`. */
export function rowLogKey(i: u32): u64 {
  return load<u64>(log + <usize>i * ENTRY, 8);
}
