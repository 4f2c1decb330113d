/**
 * Walks over a line's buffered records at the end of the XSpace pass: in start order (to capture or size its events,
 * and to write those not captured: through a sort index when held in memory, merged from the spilled runs
 * otherwise), and two lines side by side ({@link lineIter}, {@link lineNext}) for the NVTX sweep.
 */
import { recSize, sortIndex, runIter, runNext, runLoad, runBytes } from "./xspace_spill";
import * as O from "./out";
import { varintSize } from "./protobuf";
import { eventSize, putEvent } from "./xspace_encode";
import { capFull, capLimit, capPos, captureEnd, captureStop } from "./xspace_capture";
import { CHUNK_HEAD, Line, runsOf } from "./xspace_plane";

/**
 * Scratch indexes for sorting a line held in memory: {start u64, record u32, arrival u32} × events of the largest
 * unsorted line without spilled runs (≤ about 2 × RUN_BYTES / 32), plus one spare entry; the second serves
 * {@link lineIter} slot 1.
 */
export let sortIdx: usize = 0;
export let sortIdx2: usize = 0;
/** Entries of each sort index ({@link sortReserve}). */
export let sortCap: u32 = 0;

/** Allocates the sort scratch for lines of up to `need` records held in memory (unsorted, not spilled). */
export function sortReserve(need: u32): void {
  sortCap = need;
  sortIdx = need > 0 ? heap.alloc((<usize>need + 1) << 4) : 0;
  sortIdx2 = need > 0 ? heap.alloc((<usize>need + 1) << 4) : 0;
}

// What a walk over a line's records does with each record (see {@link visit}).
const V_INDEX: i32 = 0; // add it to the sort index; the result is the entry count
// Capture the event (emit/xspace_capture.ts), or once the buffer is full size it: the result is the sum of the
// encoded sizes (tag + length + body) of the events not captured.
const V_SIZE: i32 = 1;
const V_PUT: i32 = 2; // write the event into the output window unless it is one of the first putSkip (captured)

/** Events of the line being written that were captured (its first ones in start order): {@link V_PUT} skips them. */
let putSkip: u64 = 0;

/** Visits record `r` for `what` (V_*); returns the running result `acc` updated. */
// @ts-ignore: decorator
@inline function visit(r: usize, what: i32, acc: u64): u64 {
  if (what == V_SIZE) {
    const p = capPos;
    if (p <= capLimit) {
      captureEnd(putEvent(p, r));
      return acc;
    }
    if (!capFull) captureStop();
    const b = eventSize(r);
    return acc + <u64>(1 + varintSize(b) + b);
  }
  if (what == V_PUT) {
    // The count of events visited; the captured ones (a prefix) are skipped.
    if (acc >= putSkip) {
      O.need(512);
      O.pos = putEvent(O.pos, r);
    }
    return acc + 1;
  }
  const e = sortIdx + (<usize>acc << 4);
  store<u64>(e, load<u64>(r));
  store<u32>(e, <u32>r, 8);
  store<u32>(e, <u32>acc, 12);
  return acc + 1;
}

/** Visits the spilled records of `ln` (slot 0), merged into start order when `merge`, else in arrival order. */
function walkRuns(ln: Line, what: i32, merge: bool): u64 {
  let acc: u64 = 0;
  if (!merge) {
    // Arrival order: each run read whole, its records visited in a plain loop.
    const runs = runsOf(ln);
    for (let k: u32 = 0; k < runs.count; k++) {
      let r = runLoad(runs, k);
      const end = r + runBytes(runs, k);
      while (r < end) {
        acc = visit(r, what, acc);
        r += recSize(r);
      }
    }
    return acc;
  }
  runIter(0, runsOf(ln), merge);
  for (;;) {
    const r = runNext(0);
    if (r == 0) break;
    acc = visit(r, what, acc);
  }
  return acc;
}

/** Visits the records of `ln` for `what` in the order they arrived (chunk by chunk); returns the result. */
// @ts-ignore: decorator
@inline function walkArrival(ln: Line, what: i32): u64 {
  if (ln.runCount != 0) return walkRuns(ln, what, false);
  let acc: u64 = 0;
  let c = ln.head;
  while (c != 0) {
    const used = load<u32>(c, 4);
    let r = c + CHUNK_HEAD;
    const end = r + used;
    while (r < end) {
      acc = visit(r, what, acc);
      r += recSize(r);
    }
    c = <usize>load<u32>(c);
  }
  return acc;
}

/** Visits the records of `ln` for `what` in start order (through the sort index when they arrived out of order). */
// @ts-ignore: decorator
@inline function walkStart(ln: Line, what: i32): u64 {
  if (ln.runCount != 0) return walkRuns(ln, what, ln.unsorted != 0);
  if (ln.unsorted == 0) return walkArrival(ln, what);
  sortLine(ln);
  let acc: u64 = 0;
  for (let i: u32 = 0; i < ln.count; i++) acc = visit(<usize>load<u32>(sortIdx + (<usize>i << 4), 8), what, acc);
  return acc;
}

/** Builds the sorted index (at sortIdx) of an unsorted line held in memory. */
function sortLine(ln: Line): void {
  const k = <u32>walkArrival(ln, V_INDEX);
  if (k > 1) sortIndex(sortIdx, sortIdx + (<usize>sortCap << 4), 0, <i32>k - 1);
}

/**
 * Encodes the events of `ln` in start order at the end of the captured bytes (emit/xspace_capture.ts) while the
 * buffer has room; returns the sum of the encoded sizes (tag + length + body) of the events that did not fit.
 */
export function captureLineEvents(ln: Line): u64 {
  return walkStart(ln, V_SIZE);
}

/** Writes the events of `ln` in start order after its first `skip` (those captured). */
export function putLineEvents(ln: Line, skip: u32): void {
  putSkip = skip;
  walkStart(ln, V_PUT);
}

/**
 * Two lines read side by side in start order (slot 0 and 1: {@link nvtxSweep}'s API calls and NVTX ranges), held
 * in memory or spilled: per slot {mode u32 (0 runs, 1 chunks, 2 sort index), chunk u32, record u32, next u32,
 * count u32, index u32}.
 */
const iters = memory.data(2 * 24);

/** Starts reading `ln` in start order in slot `slot` (0 or 1). */
export function lineIter(slot: i32, ln: Line): void {
  const it = iters + <usize>slot * 24;
  if (ln.runCount != 0) {
    store<u32>(it, 0);
    runIter(slot, runsOf(ln), ln.unsorted != 0);
  } else if (ln.unsorted != 0) {
    const idx = slot == 0 ? sortIdx : sortIdx2;
    const save = sortIdx;
    sortIdx = idx;
    sortLine(ln);
    sortIdx = save;
    store<u32>(it, 2);
    store<u32>(it, 0, 12);
    store<u32>(it, ln.count, 16);
    store<u32>(it, <u32>idx, 20);
  } else {
    store<u32>(it, 1);
    const c = ln.head;
    store<u32>(it, <u32>c, 4);
    store<u32>(it, c != 0 ? <u32>(c + CHUNK_HEAD) : 0, 8);
  }
}

/** Next record of slot `slot` in start order (valid until the next call on the slot), or 0 at the end. */
// @ts-ignore: decorator
@inline export function lineNext(slot: i32): usize {
  const it = iters + <usize>slot * 24;
  const mode = load<u32>(it);
  if (mode == 0) return runNext(slot);
  if (mode == 2) {
    const k = load<u32>(it, 12);
    if (k >= load<u32>(it, 16)) return 0;
    store<u32>(it, k + 1, 12);
    return <usize>load<u32>(<usize>load<u32>(it, 20) + (<usize>k << 4), 8);
  }
  let c = <usize>load<u32>(it, 4);
  let r = <usize>load<u32>(it, 8);
  while (c != 0 && r >= c + CHUNK_HEAD + <usize>load<u32>(c, 4)) {
    c = <usize>load<u32>(c);
    r = c + CHUNK_HEAD;
  }
  if (c == 0) return 0;
  store<u32>(it, <u32>c, 4);
  store<u32>(it, <u32>(r + recSize(r)), 8);
  return r;
}
