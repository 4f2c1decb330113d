/**
 * ROCTx push/pop ranges of the rocprofiler-sdk decoder (decode/rocprofiler.ts): buffered MARKER_CORE_API records
 * time each roctxRangePushA and roctxRangePop call on its own, in any order, so pass 1 lists them and its end pairs
 * each pop with the latest unclosed push of its thread in time order; pass 2 writes a push as a range to its pop's
 * end ({@link pushEnd}), the end of pass 2 the pushes never popped ({@link unclosedPush}).
 *
 * Memory: 32 bytes per push or pop (heap, doubled as it grows), 4 bytes per mark twice while pairing (u32
 * pointers), one hash table entry per pair.
 */
import * as S from "../model/session";
import * as R from "../model/ranges";
import { Warn } from "../util/error";
import { warn } from "../util/diag";
import { Table, tableNew, tableUpsert, tableFind } from "../util/hash_table";
import { regrow } from "../util/regrow";

let marks: usize = 0; // push/pop list: {tid u32, push u32 (1 push, 0 pop), ts u64, corr u64, file offset u64} × markCount
const MARK: usize = 32;
let markCount: u32 = 0;
let markCap: u32 = 0;
let pairs: Table = 0; // push correlation id → pop end (vendor ns)

/** Forgets the marks (after heap.reset()). */
export function marksReset(): void {
  marks = 0;
  markCount = 0;
  markCap = 0;
  pairs = 0;
}

/** Makes the pair table (the decoder's install, after {@link marksReset}). */
export function marksInit(): void {
  pairs = tableNew(64);
}

/**
 * Pass 1: a roctxRangePushA (`push`) or roctxRangePop of thread `tid` at vendor time `ts` (a push's start, a pop's
 * end), correlation id `corr`, its record at file offset `at`.
 */
export function addMark(tid: u32, push: bool, ts: u64, corr: u64, at: u64): void {
  if (markCount == markCap) {
    const cap = markCap == 0 ? 256 : markCap << 1;
    marks = regrow(marks, <usize>markCount * MARK, <usize>cap * MARK);
    markCap = cap;
  }
  const e = marks + <usize>markCount * MARK;
  store<u32>(e, tid);
  store<u32>(e, push ? 1 : 0, 4);
  store<u64>(e, ts, 8);
  store<u64>(e, corr, 16);
  store<u64>(e, at, 24);
  markCount++;
}

/**
 * Reports `code` once for `count` marks: at `first`, the one whose record comes first in the file (marks are walked
 * in thread and time order), with its correlation id.
 */
function warnEarliest(code: i32, count: u64, first: usize): void {
  if (count != 0) warn(code, load<u64>(first, 24), load<u64>(first, 16), count);
}

function markLess(a: usize, b: usize): bool {
  const ta = load<u32>(a), tb = load<u32>(b);
  if (ta != tb) return ta < tb;
  const sa = load<u64>(a, 8), sb = load<u64>(b, 8);
  if (sa != sb) return sa < sb;
  return load<u64>(a, 16) < load<u64>(b, 16);
}

/**
 * End of pass 1: pairs each roctxRangePop with the latest unclosed roctxRangePushA of its thread in time order (the
 * records may arrive in any order), hands the ranges to model/ranges.ts and warns UNMATCHED_RANGE_END for pops
 * without a push.
 */
export function marksPair(): void {
  if (markCount == 0) return;
  // Bottom-up merge sort of entry pointers by (tid, time, correlation).
  let a = heap.alloc(<usize>markCount << 2);
  let b = heap.alloc(<usize>markCount << 2);
  for (let i: u32 = 0; i < markCount; i++) store<u32>(a + (<usize>i << 2), <u32>(marks + <usize>i * MARK));
  for (let width: u32 = 1; width < markCount; width <<= 1) {
    for (let lo: u32 = 0; lo < markCount; lo += width << 1) {
      const mid = min(lo + width, markCount);
      const hi = min(lo + (width << 1), markCount);
      let i = lo, j = mid, k = lo;
      while (i < mid || j < hi) {
        let take: u32;
        if (j >= hi || (i < mid && !markLess(<usize>load<u32>(a + (<usize>j << 2)), <usize>load<u32>(a + (<usize>i << 2))))) {
          take = load<u32>(a + (<usize>i << 2));
          i++;
        } else {
          take = load<u32>(a + (<usize>j << 2));
          j++;
        }
        store<u32>(b + (<usize>k << 2), take);
        k++;
      }
    }
    const t = a;
    a = b;
    b = t;
  }
  // Walk each thread with a stack of open pushes (b is free again: reuse it as the stack).
  let depth: u32 = 0;
  let lastTid: u32 = 0xffffffff;
  let unmatched: u64 = 0;
  let firstUnmatched: usize = 0;
  for (let i: u32 = 0; i < markCount; i++) {
    const m = <usize>load<u32>(a + (<usize>i << 2));
    const tid = load<u32>(m);
    if (tid != lastTid) {
      depth = 0;
      lastTid = tid;
    }
    if (load<u32>(m, 4) != 0) {
      store<u32>(b + (<usize>depth << 2), <u32>m);
      depth++;
      R.rangeOpen(<u32>load<u64>(m, 16), S.hostPid(), tid, load<u64>(m, 8), load<u64>(m, 16));
    } else if (depth > 0) {
      depth--;
      const push = <usize>load<u32>(b + (<usize>depth << 2));
      const corr = load<u64>(push, 16);
      R.rangeClose(<u32>corr, load<u64>(m, 8));
      store<u64>(tableUpsert(pairs, corr), load<u64>(m, 8));
    } else {
      unmatched++;
      if (firstUnmatched == 0 || load<u64>(m, 24) < load<u64>(firstUnmatched, 24)) firstUnmatched = m;
    }
  }
  warnEarliest(Warn.UNMATCHED_RANGE_END, unmatched, firstUnmatched);
}

/**
 * Pass 2: the slot of push `corr`'s pop end (vendor ns; u64, set to all ones once the range is written), 0 when the
 * push was never popped (written by the end of pass 2 instead).
 */
export function pushEnd(corr: u64): usize {
  return tableFind(pairs, corr);
}

/** Pushes and pops listed. */
export function markTotal(): u32 {
  return markCount;
}

/** End of pass 2: mark `i` (< {@link markTotal}) when it is a push never popped, else 0. */
export function unclosedPush(i: u32): usize {
  const m = marks + <usize>i * MARK;
  return load<u32>(m, 4) != 0 && tableFind(pairs, load<u64>(m, 16)) == 0 ? m : 0;
}

/** End of pass 2: UNCLOSED_RANGE once for the pushes never popped, at the one whose record comes first. */
export function warnUnclosed(): void {
  let unclosed: u64 = 0;
  let first: usize = 0;
  for (let i: u32 = 0; i < markCount; i++) {
    const m = unclosedPush(i);
    if (m == 0) continue;
    unclosed++;
    if (first == 0 || load<u64>(m, 24) < load<u64>(first, 24)) first = m;
  }
  warnEarliest(Warn.UNCLOSED_RANGE, unclosed, first);
}

/** Thread id of mark `m`. */
export function markTid(m: usize): u32 {
  return load<u32>(m);
}

/** Vendor time of mark `m` (ns: a push's start, a pop's end). */
export function markTs(m: usize): u64 {
  return load<u64>(m, 8);
}

/** Correlation id of mark `m` (a push's is its range id). */
export function markCorr(m: usize): u64 {
  return load<u64>(m, 16);
}
