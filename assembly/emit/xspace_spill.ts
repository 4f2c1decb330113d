/**
 * Spill storage for XSpace's buffered event records (emit/xspace.ts), so that its memory stays flat however large
 * the input: protobuf needs each line's length before its events, so every record is kept until the end of the
 * pass, but a line's records beyond {@link RUN_BYTES} are handed to the host in runs (imported
 * `env.rt_spill_write(ptr, len)`: the host appends them to a temporary file, or keeps them outside the core in a
 * browser) and read back at the end (`env.rt_spill_read(offset, ptr, len)`, synchronous) through a small buffer
 * per run. Each run is sorted by (start, longer first, arrival) before it is spilled, so a line's events come back
 * in start order by merging its runs ({@link runIter}); a line that arrived in order is read back run after run.
 *
 * Records: u64 start at 0, u64 duration at 8, u32 word at 16 whose bit 28 says the record is 48 bytes instead of
 * 32 (emit/xspace.ts REC_*).
 */

import { spillAppend, spillLoad } from "../util/spill";
import { swap16 } from "../util/swap16";
import { regrow } from "../util/regrow";

/** Record sizes (bytes) and the flag of the long one. */
export const REC_BASE: u32 = 32;
export const REC_GRAPH_EXTRA: u32 = 16;
export const REC_GRAPH: u32 = 1 << 28;
const REC_MAX: u32 = REC_BASE + REC_GRAPH_EXTRA;

/** Bytes of the record at `r`. */
// @ts-ignore: decorator
@inline export function recSize(r: usize): u32 {
  return (load<u32>(r, 16) & REC_GRAPH) != 0 ? REC_BASE + REC_GRAPH_EXTRA : REC_BASE;
}

/** A line's records are spilled once it holds this many bytes in memory (also its largest chunk). */
export const RUN_BYTES: u32 = 1 << 20;
/**
 * A line spills once its full chunk is this large (bytes): {@link RUN_BYTES}, or what a test set (smaller, to
 * exercise many runs on small inputs; 0xffffffff never spills). Host entry rt_set_xspace_spill.
 */
export let spillAt: u32 = RUN_BYTES;

/** Sets {@link spillAt} (0 restores {@link RUN_BYTES}) and {@link keepBudget} with it (0 for a test's threshold). */
export function setSpillAt(n: u32): void {
  spillAt = n == 0 ? RUN_BYTES : n;
  keepBudget = n == 0 ? KEEP_BYTES : 0;
}

/**
 * Bytes of in-order records the lines together may keep in memory past their first full largest chunk before the
 * next line to fill one spills instead (emit/xspace_plane.ts lineGrow): a dump of up to about a million records is
 * then never spilled (no temporary file written and read twice), and memory stays bounded by this plus one largest
 * chunk per line, whatever the input. A line out of order spills at its next full chunk, or at the end of the pass
 * (its sort scratch stays bounded by {@link RUN_BYTES}).
 */
export const KEEP_BYTES: u32 = 32 << 20;
/** The budget in force ({@link KEEP_BYTES}; 0 while a test's spill threshold is set: every full chunk spills). */
export let keepBudget: u32 = KEEP_BYTES;
/** Sets {@link keepBudget} to `n` bytes (tests; after {@link setSpillAt}, which resets it). */
export function setKeepBudget(n: u32): void {
  keepBudget = n;
}

/**
 * Read-back buffers: {@link READ_BUDGET} per slot shared by the runs of the line with the most, each at least
 * {@link BUF_MIN} (fewer host reads for the common lines of a few dozen runs; bounded memory for long ones).
 */
const READ_BUDGET: u32 = 4 << 20;
const BUF_MIN: u32 = 8192;
/** Bytes of each run's read-back buffer (set by {@link runIterReserve}). */
let BUF: u32 = BUF_MIN;

/** Starts a file's XSpace pass: no runs (the host's store itself starts with the conversion, util/spill.ts). */
export function spillReset(): void {
  for (let i = 0; i < 2; i++) {
    store<usize>(slotAt(i), 0);
    store<u32>(slotAt(i), 0, 4);
  }
  spillIdx = 0;
  wholeRun = 0;
  BUF = BUF_MIN;
}

// ---- Sorting a run ---------------------------------------------------------------------------------------------

/** Sort index of one run: {start u64, record u32, arrival u32} × records, plus one spare entry. */
let spillIdx: usize = 0;
const IDX_CAP: u32 = RUN_BYTES / REC_BASE + 1;
/** Staging buffer for a sorted run. */
let stage: usize = 0;
/** Merge scratch for {@link sortRunIndex}: as many entries as {@link spillIdx}. */
let mergeIdx: usize = 0;

/** Whether index entry a comes before b: earlier start, then the longer event (parents first), then arrival. */
// @ts-ignore: decorator
@inline export function idxBefore(a: usize, b: usize): bool {
  const sa = load<u64>(a);
  const sb = load<u64>(b);
  if (sa != sb) return sa < sb;
  const da = load<u64>(<usize>load<u32>(a, 8), 8);
  const db = load<u64>(<usize>load<u32>(b, 8), 8);
  if (da != db) return da > db;
  return load<u32>(a, 12) < load<u32>(b, 12);
}

/**
 * Sorts entries [lo, hi] of the index at `idx` (16-byte entries; `tmp` is one spare entry) with {@link idxBefore}:
 * quicksort, median of three, insertion sort below 16. The order is total (arrival breaks ties), so the result
 * does not depend on the algorithm.
 */
export function sortIndex(idx: usize, tmp: usize, lo: i32, hi: i32): void {
  while (hi - lo > 16) {
    const mid = lo + ((hi - lo) >> 1);
    const a = idx + (<usize>lo << 4);
    const m = idx + (<usize>mid << 4);
    const b = idx + (<usize>hi << 4);
    if (idxBefore(m, a)) swap16(m, a);
    if (idxBefore(b, a)) swap16(b, a);
    if (idxBefore(b, m)) swap16(b, m);
    memory.copy(tmp, m, 16);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (idxBefore(idx + (<usize>i << 4), tmp)) i++;
      while (idxBefore(tmp, idx + (<usize>j << 4))) j--;
      if (i <= j) {
        swap16(idx + (<usize>i << 4), idx + (<usize>j << 4));
        i++;
        j--;
      }
    }
    // Recurse into the smaller half, loop on the larger.
    if (j - lo < hi - i) {
      if (lo < j) sortIndex(idx, tmp, lo, j);
      lo = i;
    } else {
      if (i < hi) sortIndex(idx, tmp, i, hi);
      hi = j;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    memory.copy(tmp, idx + (<usize>i << 4), 16);
    let j = i - 1;
    while (j >= lo && idxBefore(tmp, idx + (<usize>j << 4))) {
      memory.copy(idx + (<usize>(j + 1) << 4), idx + (<usize>j << 4), 16);
      j--;
    }
    memory.copy(idx + (<usize>(j + 1) << 4), tmp, 16);
  }
}

/**
 * Natural runs at most this many per entry before {@link sortRunIndex} merges them instead of sorting (a run of
 * records that arrived in a few ascending stretches: a device stream whose records come in blocks out of order).
 */
const NATURAL_RUN_SHARE: u32 = 32;

/**
 * Sorts the `n` entries of the index at `idx` with {@link idxBefore}, as {@link sortIndex} does: when they form few
 * ascending stretches (at most one per {@link NATURAL_RUN_SHARE} entries) by merging those pairwise through `tmp`
 * (`n` entries), else with {@link sortIndex}. The order is total, so both give the same result.
 */
function sortRunIndex(idx: usize, tmp: usize, n: u32): void {
  // Count the ascending stretches, stopping once there are too many to be worth merging.
  let runs: u32 = 1;
  const most = n / NATURAL_RUN_SHARE;
  for (let i: u32 = 1; i < n; i++) {
    if (idxBefore(idx + (<usize>i << 4), idx + (<usize>(i - 1) << 4))) {
      runs++;
      if (runs > most) break;
    }
  }
  if (runs == 1) return;
  if (runs > most) {
    sortIndex(idx, tmp, 0, <i32>n - 1);
    return;
  }
  // Bottom-up merge of adjacent stretches, ping-ponging between idx and tmp until one stretch is left.
  let src = idx;
  let dst = tmp;
  while (runs > 1) {
    let i: u32 = 0;
    let out: u32 = 0;
    runs = 0;
    while (i < n) {
      // The stretch at i, then the one after it (if any): merged into dst at out.
      let a = i + 1;
      while (a < n && !idxBefore(src + (<usize>a << 4), src + (<usize>(a - 1) << 4))) a++;
      let b = a;
      if (b < n) {
        b++;
        while (b < n && !idxBefore(src + (<usize>b << 4), src + (<usize>(b - 1) << 4))) b++;
      }
      let x = i;
      let y = a;
      while (x < a && y < b) {
        // Ties keep the first stretch first (idxBefore breaks every tie by arrival anyway).
        if (idxBefore(src + (<usize>y << 4), src + (<usize>x << 4))) {
          memory.copy(dst + (<usize>out << 4), src + (<usize>y << 4), 16);
          y++;
        } else {
          memory.copy(dst + (<usize>out << 4), src + (<usize>x << 4), 16);
          x++;
        }
        out++;
      }
      if (x < a) {
        memory.copy(dst + (<usize>out << 4), src + (<usize>x << 4), <usize>(a - x) << 4);
        out += a - x;
      }
      if (y < b) {
        memory.copy(dst + (<usize>out << 4), src + (<usize>y << 4), <usize>(b - y) << 4);
        out += b - y;
      }
      runs++;
      i = b;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memory.copy(idx, src, <usize>n << 4);
}

// ---- Runs ------------------------------------------------------------------------------------------------------

/**
 * A line's spilled runs: a growable array at `*list` of {offset u64, bytes u32, 0} (16 bytes each); the caller
 * keeps the list address, its count and its capacity (see {@link RunList}).
 */
@unmanaged
export class RunList {
  list: usize;
  count: u32;
  cap: u32;
}

/**
 * Spills the `n` record bytes at `p` as one run of `runs`, sorted first when `sorted` is false (the records arrived
 * out of start order). The bytes at `p` may be reused when this returns.
 */
export function spillRun(runs: RunList, p: usize, n: u32, sorted: bool): void {
  if (n == 0) return;
  let src = p;
  if (!sorted) {
    if (spillIdx == 0) {
      spillIdx = heap.alloc((<usize>IDX_CAP + 1) << 4);
      mergeIdx = heap.alloc(<usize>IDX_CAP << 4);
      stage = heap.alloc(<usize>RUN_BYTES + REC_MAX);
    }
    let k: u32 = 0;
    let r = p;
    const end = p + n;
    while (r < end) {
      const e = spillIdx + (<usize>k << 4);
      store<u64>(e, load<u64>(r));
      store<u32>(e, <u32>r, 8);
      store<u32>(e, k, 12);
      k++;
      r += recSize(r);
    }
    // A run is at most RUN_BYTES of records, so k ≤ IDX_CAP.
    if (k > 1) sortRunIndex(spillIdx, mergeIdx, k);
    let q = stage;
    for (let i: u32 = 0; i < k; i++) {
      const rec = <usize>load<u32>(spillIdx + (<usize>i << 4), 8);
      const s = recSize(rec);
      memory.copy(q, rec, s);
      q += s;
    }
    src = stage;
  }
  const off = spillAppend(src, n);
  if (runs.count == runs.cap) {
    const cap = runs.cap == 0 ? 8 : runs.cap << 1;
    runs.list = regrow(runs.list, <usize>runs.count << 4, <usize>cap << 4);
    runs.cap = cap;
  }
  const e = runs.list + (<usize>runs.count << 4);
  store<u64>(e, off);
  store<u32>(e, n, 8);
  store<u32>(e, 0, 12);
  runs.count++;
}

// ---- Reading runs back -------------------------------------------------------------------------------------

/** Buffer that holds one whole run ({@link runLoad}). */
let wholeRun: usize = 0;

/**
 * Reads run `k` of `runs` whole (runs are at most {@link RUN_BYTES}) into a buffer of its own and returns its
 * address; the run's byte count is {@link runBytes}. Valid until the next call. For walking a line in arrival
 * order with no per-record call.
 */
export function runLoad(runs: RunList, k: u32): usize {
  if (wholeRun == 0) wholeRun = heap.alloc(<usize>RUN_BYTES);
  const e = runs.list + (<usize>k << 4);
  spillLoad(load<u64>(e), wholeRun, load<u32>(e, 8));
  return wholeRun;
}

/** Bytes of run `k` of `runs`. */
// @ts-ignore: decorator
@inline export function runBytes(runs: RunList, k: u32): u32 {
  return load<u32>(runs.list + (<usize>k << 4), 8);
}

/**
 * Two iterator slots (two lines read at once: NVTX ranges beside their thread's API calls). A slot holds, per run,
 * a {@link BUF}-byte buffer and a state {next file offset u64, file end u64, current record u32, buffer end u32,
 * buffer u32, 0}, plus a heap of run numbers for merging.
 */
const slots = memory.data(2 * 32);
// Slot fields: runs capacity u32 at 4; state array at 8; heap at 12; runs u32 at 16 (RunList); n runs at 20;
// heap size at 24; merge u32 at 28; and at 0 the pending run to advance (+1, 0 = none).
// @ts-ignore: decorator
@inline function slotAt(i: i32): usize {
  return slots + (<usize>i << 5);
}
const ST: usize = 32;

/** Sizes slot `i` for lines of up to `maxRuns` runs (call once at the end of the pass, before any iteration). */
export function runIterReserve(i: i32, maxRuns: u32): void {
  const s = slotAt(i);
  if (maxRuns <= load<u32>(s, 4)) return;
  store<u32>(s, maxRuns, 4);
  // Both slots are reserved for the same line count, so they agree on the buffer size.
  BUF = maxRuns == 0 ? BUF_MIN : (READ_BUDGET / maxRuns) & ~7;
  if (BUF < BUF_MIN) BUF = BUF_MIN;
  const states = heap.alloc(<usize>maxRuns * ST);
  for (let k: u32 = 0; k < maxRuns; k++) store<u32>(states + <usize>k * ST, <u32>heap.alloc(<usize>BUF), 24);
  store<u32>(s, <u32>states, 8);
  store<u32>(s, <u32>heap.alloc(<usize>maxRuns << 2), 12);
}

/** Refills run state `st` so that at least one whole record is buffered (when the run has one left). */
function fill(st: usize): void {
  const buf = <usize>load<u32>(st, 24);
  let cur = <usize>load<u32>(st, 16);
  let end = <usize>load<u32>(st, 20);
  const off = load<u64>(st);
  const fileEnd = load<u64>(st, 8);
  if (end - cur >= REC_MAX || off >= fileEnd) return;
  const keep = end - cur;
  if (keep != 0) memory.copy(buf, cur, keep);
  const room = <u64>(BUF - <u32>keep);
  const n = <u32>(fileEnd - off < room ? fileEnd - off : room);
  spillLoad(off, buf + keep, n);
  store<u64>(st, off + n);
  store<u32>(st, <u32>buf, 16);
  store<u32>(st, <u32>(buf + keep + n), 20);
}

// @ts-ignore: decorator
@inline function stateOf(s: usize, run: u32): usize {
  return <usize>load<u32>(s, 8) + <usize>run * ST;
}

/** Whether run a's current record comes before run b's (start, longer first, then the earlier run). */
// @ts-ignore: decorator
@inline function runBefore(s: usize, a: u32, b: u32): bool {
  const ra = <usize>load<u32>(stateOf(s, a), 16);
  const rb = <usize>load<u32>(stateOf(s, b), 16);
  const sa = load<u64>(ra);
  const sb = load<u64>(rb);
  if (sa != sb) return sa < sb;
  const da = load<u64>(ra, 8);
  const db = load<u64>(rb, 8);
  if (da != db) return da > db;
  return a < b;
}

function siftDown(s: usize, h: usize, n: u32, at: u32): void {
  const v = load<u32>(h + (<usize>at << 2));
  for (;;) {
    let c: u32 = 2 * at + 1;
    if (c >= n) break;
    let cv = load<u32>(h + (<usize>c << 2));
    if (c + 1 < n) {
      const c2 = load<u32>(h + (<usize>(c + 1) << 2));
      if (runBefore(s, c2, cv)) {
        c++;
        cv = c2;
      }
    }
    if (!runBefore(s, cv, v)) break;
    store<u32>(h + (<usize>at << 2), cv);
    at = c;
  }
  store<u32>(h + (<usize>at << 2), v);
}

/**
 * Starts iterating the runs of `runs` in slot `i`: merged into start order when `merge` is true, else run after
 * run (arrival order, which is start order for a line that arrived sorted).
 */
export function runIter(i: i32, runs: RunList, merge: bool): void {
  const s = slotAt(i);
  const n = runs.count;
  store<u32>(s, 0);
  store<u32>(s, n, 20);
  store<u32>(s, merge ? 1 : 0, 28);
  for (let k: u32 = 0; k < n; k++) {
    const st = stateOf(s, k);
    const e = runs.list + (<usize>k << 4);
    const off = load<u64>(e);
    store<u64>(st, off);
    store<u64>(st, off + <u64>load<u32>(e, 8), 8);
    const buf = load<u32>(st, 24);
    store<u32>(st, buf, 16);
    store<u32>(st, buf, 20);
  }
  if (merge) {
    const h = <usize>load<u32>(s, 12);
    for (let k: u32 = 0; k < n; k++) {
      fill(stateOf(s, k));
      store<u32>(h + (<usize>k << 2), k);
    }
    for (let k = <i32>(n >> 1) - 1; k >= 0; k--) siftDown(s, h, n, <u32>k);
    store<u32>(s, n, 24);
  } else {
    if (n != 0) fill(stateOf(s, 0));
    store<u32>(s, 0, 24); // current run
  }
}

/** Next record of slot `i` (valid until the next call on the slot), or 0 at the end. */
export function runNext(i: i32): usize {
  const s = slotAt(i);
  const pending = load<u32>(s);
  if (load<u32>(s, 28) != 0) {
    const h = <usize>load<u32>(s, 12);
    let n = load<u32>(s, 24);
    if (pending != 0) {
      // Advance the run whose record was returned last (the heap's top).
      const st = stateOf(s, pending - 1);
      const cur = <usize>load<u32>(st, 16);
      store<u32>(st, <u32>(cur + recSize(cur)), 16);
      fill(st);
      if (load<u32>(st, 16) >= load<u32>(st, 20)) {
        n--;
        store<u32>(h, load<u32>(h + (<usize>n << 2)));
        store<u32>(s, n, 24);
      }
      if (n > 1) siftDown(s, h, n, 0);
    }
    if (n == 0) {
      store<u32>(s, 0);
      return 0;
    }
    const top = load<u32>(h);
    store<u32>(s, top + 1);
    return <usize>load<u32>(stateOf(s, top), 16);
  }
  let run = load<u32>(s, 24);
  const n = load<u32>(s, 20);
  if (run >= n) return 0;
  let st = stateOf(s, run);
  if (pending != 0) {
    const cur = <usize>load<u32>(st, 16);
    store<u32>(st, <u32>(cur + recSize(cur)), 16);
    fill(st);
  }
  while (load<u32>(st, 16) >= load<u32>(st, 20)) {
    run++;
    store<u32>(s, run, 24);
    if (run >= n) {
      store<u32>(s, 0);
      return 0;
    }
    st = stateOf(s, run);
    fill(st);
  }
  store<u32>(s, 1);
  return <usize>load<u32>(st, 16);
}
