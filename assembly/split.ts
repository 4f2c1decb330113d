/**
 * One file's Chrome JSON written by several workers (`rawtrace convert --jobs N`, src/node/split.ts). Every worker
 * runs pass 1 (and the projection pass) over the whole file, so the session, the join tables and the warnings of
 * pass 1 are the same in each. Pass 2 cuts the ACTIVITY chunks into `segments` runs in file order (a multiple of
 * the worker count N, from the chunk count of pass 1) dealt round-robin: worker w emits segments w, w + N, w + 2N, …
 * and decodes the others before its last one with no emitter (Sink.NONE), so every decoder's state (open NVTX
 * markers, ROCTx pairs, Synapse arrows, projected spans, pass-2 warnings, hidden API calls) is exactly what one
 * conversion has at each of its segments; the chunks after its last segment it skips. STRINGS chunks are applied in
 * file order by all. Round-robin segments keep every worker busy for the whole pass and let the host write the
 * output in order as the segments arrive, holding only a few of them (contiguous shares would leave all but the
 * first share's bytes to be held or copied until the shares before them are done).
 *
 * Each segment's bytes are flushed to the host when it ends, then reported through the imported
 * `env.rt_split_segment(segment, event)` (event 0: an emitted segment starts, the host may wait there for the
 * writer to catch up; 1: its bytes are complete, no event written by this worker since its header; 2: complete,
 * an event written). Worker 0 writes the JSON header at the start of segment 0; every later segment writes each
 * event with its leading comma, which the host drops from the first non-empty one when no event came before it.
 * Worker N − 1 owns the last segment and writes the end — decoder `finish` events, row metadata, the `rawtrace`
 * object — after taking the other workers' state ({@link splitImport}): their rows, merged with its own in segment
 * order (emit/chrome_split.ts), their last event end, CUPTI-overhead flag and event counts.
 */
import * as S from "./model/session";
import * as O from "./emit/out";
import { rowLogBegin, rowLogCount, rowLogTable, rowLogKey, rowLogSeg, rowLogSegment } from "./emit/chrome_split";
import { chromeSplitSetHeader, chromeSplitSegmentStart, chromeRowValue, chromeRowsReplay, chromeLastTs, chromeOverheadSeen, chromeWroteEvent } from "./emit/chrome_json";

// @ts-ignore: decorator
@external("env", "rt_split_segment")
declare function hostSegment(segment: u32, event: u32): void;

/** What a worker does with the ACTIVITY chunk at hand ({@link splitGate}). */
export const enum Gate {
  EMIT = 0,
  DECODE_ONLY = 1,
  SKIP = 2,
}

/** Workers (0: not split), this worker, segments (a multiple of `workers`). */
let workers: u32 = 0;
let worker: u32 = 0;
let segments: u32 = 0;
/** ACTIVITY chunks pass 1 counted, and the index of the next one in pass 2. */
let chunks: u64 = 0;
let index: u64 = 0;
/** Segments below this one have been closed (their bytes handed over when this worker owns them). */
let closed: u32 = 0;
/** The segment of the last chunk gated, and whether this worker has started emitting it. */
let current: u32 = 0;
let started = false;
/** Last segment this worker owns. */
let lastOwned: u32 = 0;

/** Clears the split settings (a new file). */
export function splitReset(): void {
  workers = 0;
  chromeSplitSetHeader(true);
  rowLogBegin(false);
}

/**
 * Sets this worker's part of the next pass 2: worker `w` of `n` (n = 0: not split), the ACTIVITY chunks cut into
 * `m` segments (rounded up to a multiple of `n`).
 */
export function splitSet(w: u32, n: u32, m: u32): void {
  workers = n;
  worker = w;
  segments = n == 0 ? 0 : (m < n ? n : m + (n - m % n) % n);
}

/** At pass 2's start: takes pass 1's chunk count and starts the row log. */
export function splitBegin(): void {
  index = 0;
  closed = 0;
  current = 0;
  started = false;
  if (workers == 0) {
    chromeSplitSetHeader(true);
    rowLogBegin(false);
    return;
  }
  chunks = S.activityChunks;
  lastOwned = segments - workers + worker;
  chromeSplitSetHeader(worker == 0);
  rowLogBegin(true);
}

/** True when this part writes the end of the output. */
export function splitWritesEnd(): bool {
  return workers == 0 || worker == workers - 1;
}

// @ts-ignore: decorator
@inline function owns(s: u32): bool {
  return s % workers == worker;
}

/** Closes segments [closed, to): flushes and reports those this worker owns. */
function closeUntil(to: u32): void {
  for (let s = closed; s < to; s++) {
    if (!owns(s)) continue;
    O.flush();
    hostSegment(s, chromeWroteEvent() ? 2 : 1);
  }
  if (to > closed) closed = to;
}

/** Called for each ACTIVITY chunk of pass 2, in file order: what to do with it. */
export function splitGate(): Gate {
  if (workers == 0) return Gate.EMIT;
  const i = index++;
  // The segment of chunk i: chunks·s/segments ≤ i < chunks·(s + 1)/segments (a chunk past pass 1's count, which
  // a file that changed between passes could have, goes to the last).
  const s = i < chunks ? <u32>((i * <u64>segments) / chunks) : segments - 1;
  if (s != current) {
    closeUntil(s);
    current = s;
    started = false;
  }
  if (owns(s)) {
    if (!started) {
      started = true;
      if (s != 0) chromeSplitSegmentStart();
      rowLogSegment(s);
      hostSegment(s, 0);
    }
    return Gate.EMIT;
  }
  return s < lastOwned ? Gate.DECODE_ONLY : Gate.SKIP;
}

/** End of pass 2, before the end writer writes the end: closes every segment before the last. */
export function splitBeforeEnd(): void {
  if (workers != 0) closeUntil(segments - 1);
}

/** End of pass 2, after the end (if this worker writes it): closes every segment left, the last with the end. */
export function splitAfterEnd(): void {
  if (workers != 0) closeUntil(segments);
}

/**
 * Export of a worker that does not write the end: rows {table u64 | segment << 32, key u64, value u64} at the
 * returned address (count: {@link splitRows}).
 */
export function splitExport(): usize {
  const n = rowLogCount();
  const p = heap.alloc(<usize>(n == 0 ? 1 : n) * 24);
  for (let i: u32 = 0; i < n; i++) {
    const a = p + <usize>i * 24;
    const t = rowLogTable(i);
    const k = rowLogKey(i);
    store<u64>(a, <u64>t | (<u64>rowLogSeg(i) << 32));
    store<u64>(a, k, 8);
    store<u64>(a, chromeRowValue(t, k), 16);
  }
  return p;
}
/** Rows a part logged. */
export function splitRows(): u32 {
  return rowLogCount();
}
/** A part's state: 0 last event end (Unix ns), 1 CUPTI overhead seen, 2 events emitted. */
export function splitState(field: i32): u64 {
  if (field == 0) return chromeLastTs();
  if (field == 1) return chromeOverheadSeen() ? 1 : 0;
  return S.eventsEmitted;
}

/**
 * The end writer, before its end: takes the other workers' rows (`n` entries at `p`, in segment order), their
 * latest event end, overhead flag and event count.
 */
export function splitImport(p: usize, n: u32, lastEnd: u64, overhead: i32, events: u64): void {
  chromeRowsReplay(p, n, lastEnd, overhead != 0);
  S.addEvents(events);
}
