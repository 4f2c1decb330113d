/**
 * One file's Chrome JSON written by several workers (`rawtrace convert --jobs N`, src/node/split.ts). Every worker
 * runs pass 1 (and the projection pass) over the whole file, so the session, the join tables and the warnings of
 * pass 1 are the same in each. In pass 2 worker k emits only the ACTIVITY chunks [lo, hi) of its share; the chunks
 * before lo it decodes with no emitter (Sink.NONE), so every decoder's state (open NVTX markers, ROCTx pairs,
 * Synapse arrows, projected spans, pass-2 warnings, hidden API calls) is exactly what one conversion would have
 * there; the chunks after hi it skips. STRINGS chunks are applied in file order by all.
 *
 * The first part writes the JSON header, the others start with a `,` the host drops when nothing precedes them.
 * The last part (hi = the end) also writes the end — decoder `finish` events, row metadata, the `rawtrace` object —
 * after taking the earlier parts' state ({@link splitImport}): their rows in file order (emit/chrome_split.ts),
 * their last event end, their CUPTI-overhead flag and their event counts.
 */
import * as S from "./model/session";
import * as O from "./emit/out";
import { rowLogBegin, rowLogCount, rowLogTable, rowLogKey } from "./emit/chrome_split";
import { chromeSplitSetHeader, chromeRowValue, chromeRowsReplay, chromeLastTs, chromeOverheadSeen, chromeWroteEvent } from "./emit/chrome_json";

/** What a worker does with the ACTIVITY chunk at hand ({@link splitGate}). */
export const enum Gate {
  EMIT = 0,
  DECODE_ONLY = 1,
  SKIP = 2,
}

/** 0 off; 1 first part (header, no end); 2 middle part; 3 last part (writes the end). */
let mode: i32 = 0;
let lo16: u32 = 0;
let hi16: u32 = 0;
let lo: u64 = 0;
let hi: u64 = 0;
let index: u64 = 0;

/** Clears the split settings (a new file). */
export function splitReset(): void {
  mode = 0;
  chromeSplitSetHeader(true);
  rowLogBegin(false);
}

/**
 * Sets this worker's share for the next pass 2: ACTIVITY chunks from `from16`/65536 to `to16`/65536 of those pass 1
 * counted (the last part: to the end whatever `to16` says); `m` as {@link mode}.
 */
export function splitSet(from16: u32, to16: u32, m: i32): void {
  mode = m;
  lo16 = from16;
  hi16 = to16;
}

/** At pass 2's start: fixes the chunk range from pass 1's count and starts the row log. */
export function splitBegin(): void {
  index = 0;
  if (mode == 0) {
    chromeSplitSetHeader(true);
    rowLogBegin(false);
    return;
  }
  const n = S.activityChunks;
  lo = (n * <u64>lo16) >> 16;
  hi = mode == 3 ? 0xffffffffffffffff : (n * <u64>hi16) >> 16;
  chromeSplitSetHeader(mode == 1);
  rowLogBegin(true);
}

/** True when pass 2 runs as one part of a split conversion. */
export function splitOn(): bool {
  return mode != 0;
}
/** True when this part writes the end of the output. */
export function splitWritesEnd(): bool {
  return mode == 0 || mode == 3;
}

/** Called for each ACTIVITY chunk of pass 2, in file order: what to do with it. */
export function splitGate(): Gate {
  if (mode == 0) return Gate.EMIT;
  const i = index++;
  if (i < lo) return Gate.DECODE_ONLY;
  return i < hi ? Gate.EMIT : Gate.SKIP;
}

/** A part that does not write the end: flushes its bytes (end of pass 2). */
export function splitEndPart(): void {
  O.flush();
}

/** Export of a finished part: rows {table u64, key u64, value u64} at the returned address (count: {@link splitRows}). */
export function splitExport(): usize {
  const n = rowLogCount();
  const p = heap.alloc(<usize>(n == 0 ? 1 : n) * 24);
  for (let i: u32 = 0; i < n; i++) {
    const a = p + <usize>i * 24;
    const t = rowLogTable(i);
    const k = rowLogKey(i);
    store<u64>(a, <u64>t);
    store<u64>(a, k, 8);
    store<u64>(a, chromeRowValue(t, k), 16);
  }
  return p;
}
/** Rows a part logged. */
export function splitRows(): u32 {
  return rowLogCount();
}
/** A part's state: 0 last event end (Unix ns), 1 CUPTI overhead seen, 2 events emitted, 3 wrote an event. */
export function splitState(field: i32): u64 {
  if (field == 0) return chromeLastTs();
  if (field == 1) return chromeOverheadSeen() ? 1 : 0;
  if (field == 3) return chromeWroteEvent() ? 1 : 0;
  return S.eventsEmitted;
}

/**
 * The last part, before its end: takes the earlier parts' rows (`n` entries at `p`, in file order), their latest
 * event end, overhead flag and event count.
 */
export function splitImport(p: usize, n: u32, lastEnd: u64, overhead: i32, events: u64): void {
  chromeRowsReplay(p, n, lastEnd, overhead != 0);
  S.addEvents(events);
}
