/**
 * Training steps: the host ranges (NVTX, later ROCTx) that mark one iteration each, numbered as PyTorch numbers its
 * `ProfilerStep#N` ranges (docs/analysis.md).
 *
 * Which names are steps is decided by the host, which has regular expressions (src/core/engine.ts `steps`): after
 * pass 1 it lists the distinct range names ({@link stepNamesCollect}, {@link stepNamePtr}), tests each against the
 * user's pattern and marks the matches ({@link stepMark}) with the number their name carries (`ProfilerStep#12` →
 * 12) or none. Before pass 2, {@link stepsNumber} gives every step range its number: the one its name carries, or
 * else its place (1, 2, …) among the unnumbered step ranges in start order, and pass 2 asks {@link stepOf} by
 * vendor range id. Memory: 16 B per distinct range name (twice that while growing), 8 B per step range while numbering,
 * a table entry per step.
 */
import { Table, tableNew, tableUpsert, tableFind, inserted } from "../util/hash_table";
import { rangeCount, rangeNameAt, rangeStartAt, rangeIdAt } from "./ranges";

/** Step number meaning "number by start order" (the name carries none). */
export const STEP_ORDINAL: i64 = -1;

let nameIdx: Table = 0; // vendor name pointer → distinct name index + 1
let names: usize = 0; // per distinct name: vendor pointer u64, mark u64 (0 not a step, 1 ordinal, n + 2 fixed n)
let nameCount: u32 = 0;
let byId: Table = 0; // vendor range id → step number + 1
let stepCount: u32 = 0;

/** Forgets everything (after heap.reset()). */
export function stepsReset(): void {
  nameIdx = 0;
  names = 0;
  nameCount = 0;
  byId = 0;
  stepCount = 0;
}

/** After pass 1: collects the distinct names of the ranges; returns how many (indices for the functions below). */
export function stepNamesCollect(): u32 {
  const n = rangeCount();
  nameIdx = tableNew(64);
  let cap: u32 = 64;
  names = heap.alloc(<usize>cap << 4);
  nameCount = 0;
  for (let i: u32 = 0; i < n; i++) {
    const p = rangeNameAt(i);
    if (p == 0) continue;
    const slot = tableUpsert(nameIdx, p);
    if (!inserted) continue;
    if (nameCount == cap) {
      // Grows with the distinct names, not the ranges (millions of ranges usually share a few names).
      const grown = heap.alloc(<usize>(cap << 1) << 4);
      memory.copy(grown, names, <usize>cap << 4);
      names = grown;
      cap <<= 1;
    }
    const e = names + (<usize>nameCount << 4);
    store<u64>(e, p);
    store<u64>(e, 0, 8);
    nameCount++;
    store<u64>(slot, <u64>nameCount);
  }
  return nameCount;
}

/** Vendor pointer of distinct name `i` (resolve it with session.stringDisplay), or 0 when out of range. */
export function stepNamePtr(i: u32): u64 {
  return i < nameCount ? load<u64>(names + (<usize>i << 4)) : 0;
}

/** Marks distinct name `i` as a step name: `num` ≥ 0 is the step number its name carries, else {@link STEP_ORDINAL}. */
export function stepMark(i: u32, num: i64): void {
  if (i >= nameCount) return;
  store<u64>(names + (<usize>i << 4), num < 0 ? 1 : <u64>num + 2, 8);
}

/** Mark of a range's name (0 when not a step). */
function markOf(namePtr: u64): u64 {
  if (namePtr == 0 || nameIdx == 0) return 0;
  const slot = tableFind(nameIdx, namePtr);
  if (slot == 0) return 0;
  return load<u64>(names + (<usize>(load<u64>(slot) - 1) << 4), 8);
}

/** Before pass 2: numbers every step range (fixed numbers kept; the rest 1, 2, … in start order). */
export function stepsNumber(): void {
  byId = tableNew(16);
  stepCount = 0;
  if (nameCount == 0) return;
  const n = rangeCount();
  let steps: u32 = 0;
  for (let i: u32 = 0; i < n; i++) if (markOf(rangeNameAt(i)) != 0) steps++;
  if (steps == 0) return;
  let a = heap.alloc(<usize>steps << 2);
  let k: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    if (markOf(rangeNameAt(i)) == 0) continue;
    store<u32>(a + (<usize>k << 2), i);
    k++;
  }
  stepCount = k;
  if (k == 0) return;
  // Bottom-up merge sort of the step ranges by start (stable: pass-1 order breaks ties).
  let b = heap.alloc(<usize>k << 2);
  for (let w: u32 = 1; w < k; w <<= 1) {
    for (let lo: u32 = 0; lo < k; lo += w << 1) {
      const mid = min(lo + w, k);
      const hi = min(lo + (w << 1), k);
      let i = lo, j = mid, o = lo;
      while (i < mid || j < hi) {
        const right = i >= mid || (j < hi && rangeStartAt(load<u32>(a + (<usize>j << 2))) < rangeStartAt(load<u32>(a + (<usize>i << 2))));
        const from = right ? j : i;
        store<u32>(b + (<usize>o << 2), load<u32>(a + (<usize>from << 2)));
        o++;
        if (right) j++;
        else i++;
      }
    }
    const t = a;
    a = b;
    b = t;
  }
  let ordinal: u64 = 0;
  for (let i: u32 = 0; i < k; i++) {
    const r = load<u32>(a + (<usize>i << 2));
    const mark = markOf(rangeNameAt(r));
    const num = mark == 1 ? ++ordinal : mark - 2;
    store<u64>(tableUpsert(byId, rangeIdAt(r)), num + 1);
  }
}

/** Step ranges found by {@link stepsNumber}. */
export function stepsFound(): u32 {
  return stepCount;
}

/** Step number of the range with vendor id `id`, or -1 when it is not a step. */
export function stepOf(id: u32): i64 {
  if (byId == 0) return -1;
  const slot = tableFind(byId, id);
  return slot == 0 ? -1 : <i64>load<u64>(slot) - 1;
}
