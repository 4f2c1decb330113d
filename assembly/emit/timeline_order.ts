/**
 * The timeline pass's sort keys and its end (emit/timeline.ts): the records themselves leave the core as they are
 * produced, so all the core keeps per event is its sort key ({@link KEY}: start, duration, row, correlation), and
 * at the end of the pass it works out, from the keys alone:
 *  1. the output order: events grouped per row (rows in Kineto's order, counting sort), each row sorted by start
 *     (ties: longer first) with a bottom-up merge sort that costs one linear check for the usual sorted row;
 *  2. lanes: an event takes the lowest lane of its row free at its start, so nested ranges stack and overlapping
 *     kernels (PDL) never hide each other; a lane is non-overlapping and sorted by start *and* end, so the viewer
 *     finds its visible window by binary search; a row's events are regrouped lane by lane;
 *  3. partners: launch ↔ device work (correlation id) as final event indices.
 * What it writes is the fix-up with which the host puts the records it already has in order (src/core/timeline.ts):
 * per event in output order its partner, per event in arrival order its output index.
 */
import * as O from "./out";
import { Paged, pagedNew, pagedSlot, pagedBudget, setPagedBudget, pagedEpoch, pagedFramePool } from "../util/paged";
import { Table, tableGet, tableNew, tableSet } from "../util/hash_table";

/**
 * Sort key per event, in arrival order (20 B): f64 start (ns since baseNs), u32 duration (ns; {@link DUR_LONG}:
 * 2^32 - 1 ns or more, the f64 duration then in {@link longDurs} by the key's address), u32 row index |
 * {@link K_FLOW_START} | {@link K_FLOW_END}, u32 correlation (0: none; the flow bits are set only with one). The
 * keys are most of the core's memory at the end of a timeline pass (10.4M events: 199 MiB; 239 MiB at 24 bytes with
 * an f64 duration, which only kernels and ranges of over 4.3 s need).
 */
export const KEY: usize = 20;
/** Duration word of a key whose duration is in {@link longDurs}. */
const DUR_LONG: u32 = 0xffffffff;
export const K_FLOW_START: u32 = 1 << 30;
export const K_FLOW_END: u32 = 1 << 31;
const K_ROW: u32 = K_FLOW_START - 1;
/** Lanes per row; events beyond go to the last lane, flagged as overlapping. */
export const MAX_LANES: u32 = 64;
const NONE: u32 = 0xffffffff;
/** Output indices {@link writeInverse} writes per window check. */
const INV_CHUNK: u32 = 4096;

const BLOCK_BITS: u32 = 16;
const BLOCK_KEYS: u32 = 1 << BLOCK_BITS;
const MAX_BLOCKS: u32 = 1 << 16; // 2^32 keys: the u32 index space

let blocks: usize = 0; // MAX_BLOCKS block pointers
/** Key address → f64 duration bits, for the keys whose duration does not fit their u32 ({@link DUR_LONG}). */
let longDurs: Table = 0;
/** Keys with a flow bit so far, and the lowest and highest of their correlation ids. */
let flowKeys: u32 = 0;
let flowLo: u32 = 0xffffffff;
let flowHi: u32 = 0;
/** Keys so far (= events). */
export let keyCount: u32 = 0;

let keyNext: usize = 0; // address of the next key
let keyLeft: u32 = 0; // keys left in its block

/** Forgets every key (start of a timeline pass). */
export function keysReset(): void {
  flowKeys = 0;
  flowLo = 0xffffffff;
  flowHi = 0;
  blocks = heap.alloc(<usize>MAX_BLOCKS << 2);
  memory.fill(blocks, 0, <usize>MAX_BLOCKS << 2);
  longDurs = tableNew(16);
  keyCount = 0;
  keyNext = 0;
  keyLeft = 0;
}

/** Makes the block of key {@link keyCount} (allocated when new) the one {@link keyPush} fills. */
function keyBlockOpen(): void {
  const blk = blocks + (<usize>(keyCount >> BLOCK_BITS) << 2);
  if (load<usize>(blk) == 0) store<usize>(blk, heap.alloc(<usize>BLOCK_KEYS * KEY));
  keyNext = load<usize>(blk) + (<usize>(keyCount & (BLOCK_KEYS - 1)) * KEY);
  keyLeft = BLOCK_KEYS - (keyCount & (BLOCK_KEYS - 1));
}

// @ts-ignore: decorator
@inline function keyAt(i: u32): usize {
  return load<usize>(blocks + (<usize>(i >> BLOCK_BITS) << 2)) + (<usize>(i & (BLOCK_KEYS - 1)) * KEY);
}

// The end of the pass walks the keys in arrival order block by block (a pointer step per key, not keyAt's
// directory load and multiply).

/** Key blocks holding `n` keys. */
// @ts-ignore: decorator
@inline function blocksOf(n: u32): u32 {
  return <u32>((<u64>n + BLOCK_KEYS - 1) >> BLOCK_BITS);
}

/** Address of key block `b`'s first key. */
// @ts-ignore: decorator
@inline function blockKeys(b: u32): usize {
  return load<usize>(blocks + (<usize>b << 2));
}

/** Keys in block `b` of `n` keys. */
// @ts-ignore: decorator
@inline function blockLen(b: u32, n: u32): u32 {
  const left = n - (b << BLOCK_BITS);
  return left < BLOCK_KEYS ? left : BLOCK_KEYS;
}

/** Appends the key of the next event (see {@link KEY}); the caller stops at 2^32 - 1 events. */
export function keyPush(start: f64, dur: f64, rowBits: u32, corr: u32): void {
  // The next key's address is kept (a pointer step per event; a new block every BLOCK_KEYS keys).
  if (keyLeft == 0) keyBlockOpen();
  const k = keyNext;
  keyNext = k + KEY;
  keyLeft--;
  keyCount++;
  store<f64>(k, start);
  // Durations are whole ns (u64 differences, exact in an f64 below 2^53): a u32 holds them below 4.3 s; longer
  // ones (or a wrapped end before its start) keep their f64 aside.
  if (dur < <f64>DUR_LONG) store<u32>(k, <u32>dur, 8);
  else {
    store<u32>(k, DUR_LONG, 8);
    tableSet(longDurs, <u64>k, reinterpret<u64>(dur));
  }
  store<u32>(k, rowBits, 12);
  store<u32>(k, corr, 16);
  if ((rowBits & (K_FLOW_START | K_FLOW_END)) != 0) {
    // The spread of the ids with flows decides how partners are resolved (resolvePartners).
    flowKeys++;
    if (corr < flowLo) flowLo = corr;
    if (corr > flowHi) flowHi = corr;
  }
}

/** Duration (ns) of key `k` (valid until {@link noteOutputIndex} writes over it). */
// @ts-ignore: decorator
@inline function keyDur(k: usize): f64 {
  const d = load<u32>(k, 8);
  return d != DUR_LONG ? <f64>d : reinterpret<f64>(tableGet(longDurs, <u64>k, 0));
}

// @ts-ignore: decorator
@inline function before(i: u32, j: u32): bool {
  const ki = keyAt(i);
  const kj = keyAt(j);
  const si = load<f64>(ki);
  const sj = load<f64>(kj);
  return si < sj || (si == sj && keyDur(ki) > keyDur(kj));
}

// @ts-ignore: decorator
@inline function at(p: usize, i: u32): u32 {
  return load<u32>(p + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function put(p: usize, i: u32, v: u32): void {
  store<u32>(p + (<usize>i << 2), v);
}

/**
 * Stable sort of the event indices [a, a + 4n) by (start, longer first), comparing their keys; `tmp` holds n u32.
 * The indices arrive in arrival order, so stable means ordered by (start, longer first, index). A row is usually in
 * order but for a few events (a range is recorded when it ends, after what it holds): one walk keeps the events in
 * order in place and moves the others aside, only those are sorted, then the two are merged from the back. A
 * bottom-up merge sort of the whole row gathered every key through the index once per level.
 */
function sortIndices(a: usize, tmp: usize, n: u32): void {
  if (n < 2) return;
  let m: u32 = 1;
  let r: u32 = 0;
  // The last in-order event's start and duration stay in locals: one key read per event (before(v, last)).
  const k0 = keyAt(at(a, 0));
  let lastS = load<f64>(k0);
  let lastD = keyDur(k0);
  for (let i: u32 = 1; i < n; i++) {
    const v = at(a, i);
    const kv = keyAt(v);
    const sv = load<f64>(kv);
    const dv = keyDur(kv);
    if (sv < lastS || (sv == lastS && dv > lastD)) {
      put(tmp, r, v);
      r++;
    } else {
      put(a, m, v);
      m++;
      lastS = sv;
      lastD = dv;
    }
  }
  if (r == 0) return;
  // The r events aside, sorted with the r slots the in-order ones left free at the end of `a` as scratch.
  mergeSortIndices(tmp, a + (<usize>m << 2), r);
  let i = m;
  let j = r;
  let k = n;
  while (j > 0) {
    const vj = at(tmp, j - 1);
    if (i > 0) {
      const vi = at(a, i - 1);
      // vi after vj: a later start, or the same start and not longer, the later index first on a full tie.
      if (before(vj, vi) || (!before(vi, vj) && vi > vj)) {
        k--;
        put(a, k, vi);
        i--;
        continue;
      }
    }
    k--;
    put(a, k, vj);
    j--;
  }
}

/** Stable bottom-up merge sort of [a, a + 4n) (see {@link sortIndices}); `tmp` holds n u32. */
function mergeSortIndices(a: usize, tmp: usize, n: u32): void {
  let sorted = true;
  for (let i: u32 = 1; i < n; i++) {
    if (before(at(a, i), at(a, i - 1))) {
      sorted = false;
      break;
    }
  }
  if (sorted) return;
  // Insertion sort of 32-element runs, then bottom-up merges ping-ponging between a and tmp.
  const RUN: u32 = 32;
  for (let lo: u32 = 0; lo < n; lo += RUN) {
    const hi = lo + RUN < n ? lo + RUN : n;
    for (let i = lo + 1; i < hi; i++) {
      const v = at(a, i);
      let j = i;
      while (j > lo && before(v, at(a, j - 1))) {
        put(a, j, at(a, j - 1));
        j--;
      }
      put(a, j, v);
    }
  }
  let src = a;
  let dst = tmp;
  for (let w: u32 = RUN; w < n; w <<= 1) {
    for (let lo: u32 = 0; lo < n; lo += w << 1) {
      const mid = lo + w < n ? lo + w : n;
      const hi = lo + (w << 1) < n ? lo + (w << 1) : n;
      let i = lo;
      let j = mid;
      let k = lo;
      if (mid < hi && before(at(src, mid), at(src, mid - 1))) {
        while (i < mid && j < hi) {
          const vi = at(src, i);
          const vj = at(src, j);
          if (before(vj, vi)) {
            put(dst, k, vj);
            j++;
          } else {
            put(dst, k, vi);
            i++;
          }
          k++;
        }
      }
      // Whatever remains (all of it when the halves are already in order) is copied as is.
      if (i < mid) {
        memory.copy(dst + (<usize>k << 2), src + (<usize>i << 2), <usize>(mid - i) << 2);
        k += mid - i;
      }
      if (j < hi) memory.copy(dst + (<usize>k << 2), src + (<usize>j << 2), <usize>(hi - j) << 2);
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memory.copy(a, src, <usize>n << 2);
}

// ---- Output order ------------------------------------------------------------------------------------------------

/** Event indices grouped per row in output order (arrival order within a row), then, row by row, in output order. */
export let idx: usize = 0;
/** Lanes of all rows in output order, 24 B each: u32 first event, u32 events, u32 row (output index), u32 flags
 * (1 = events may overlap), f64 max duration. */
export let lanes: usize = 0;
export let laneCount: u32 = 0;
let laneCap: u32 = 0;
/** Earliest start and latest end over all events (ns since baseNs); 0 and 0 without events. */
export let minStart: f64 = 0;
export let maxEnd: f64 = 0;
let tmp: usize = 0;
let laneOf: usize = 0; // u8 per event of the row being ordered
let scratchBytes: usize = 0; // tmp and laneOf, one block
let laneEnd: usize = 0;
let laneCnt: usize = 0;
let laneMax: usize = 0;
let laneOvl: usize = 0;

/**
 * Groups the events per row: `rowFirst[row]` (by row index) receives the output index of the row's first event,
 * `order` (k → row index) the output row order; {@link idx} the event indices, arrival order within each row.
 * `counts(row)` are the rows' event counts. Allocates the scratch the rows' ordering needs.
 */
export function groupByRow(order: usize, nRows: u32, rowFirst: usize, rowCounts: usize): void {
  const n = keyCount;
  let acc: u32 = 0;
  let maxRow: u32 = 1;
  for (let k: u32 = 0; k < nRows; k++) {
    const row = at(order, k);
    put(rowFirst, row, acc);
    const c = at(rowCounts, row);
    acc += c;
    if (c > maxRow) maxRow = c;
  }
  idx = heap.alloc(<usize>(n > 0 ? n : <u32>1) << 2);
  const fill = heap.alloc(<usize>(nRows + 1) << 2);
  memory.copy(fill, rowFirst, <usize>nRows << 2);
  for (let b: u32 = 0; b < blocksOf(n); b++) {
    const keys = blockKeys(b);
    const i0 = b << BLOCK_BITS;
    const c = blockLen(b, n);
    for (let j: u32 = 0; j < c; j++) {
      const row = load<u32>(keys + <usize>j * KEY, 12) & K_ROW;
      const a = at(fill, row);
      put(idx, a, i0 + j);
      put(fill, row, a + 1);
    }
  }
  // One block (lent to the partner table once the rows are ordered: resolvePartners).
  scratchBytes = <usize>maxRow * 5;
  tmp = heap.alloc(scratchBytes);
  laneOf = tmp + (<usize>maxRow << 2);
  laneEnd = heap.alloc(<usize>MAX_LANES << 3);
  laneCnt = heap.alloc(<usize>MAX_LANES << 2);
  laneMax = heap.alloc(<usize>MAX_LANES << 3);
  laneOvl = heap.alloc(<usize>MAX_LANES << 2);
  laneCap = nRows + 16;
  lanes = heap.alloc(<usize>laneCap * 24);
  laneCount = 0;
  minStart = n == 0 ? 0 : Infinity;
  maxEnd = 0;
}

/**
 * Orders the `cnt` events of output row `k` starting at output index `first` (sort, lanes, regroup by lane): turns
 * the row's part of {@link idx} into event indices in output order and appends the row's lanes to {@link lanes}.
 * Returns the number of lanes.
 */
export function orderRow(k: u32, first: u32, cnt: u32): u32 {
  const seg = idx + (<usize>first << 2);
  sortIndices(seg, tmp, cnt);
  let used: u32 = 0;
  // The module's pointers and bounds in locals for the loop (a global is a memory load and store per use in V8).
  const lEnd = laneEnd;
  const lMax = laneMax;
  const lCnt = laneCnt;
  const lOf = laneOf;
  const dir = blocks;
  let lo = minStart;
  let hi = maxEnd;
  memory.fill(lCnt, 0, <usize>MAX_LANES << 2);
  memory.fill(laneOvl, 0, <usize>MAX_LANES << 2);
  for (let i: u32 = 0; i < cnt; i++) {
    const v = at(seg, i);
    const r = load<usize>(dir + (<usize>(v >> BLOCK_BITS) << 2)) + (<usize>(v & (BLOCK_KEYS - 1)) * KEY);
    const s = load<f64>(r);
    const d = keyDur(r);
    const e = s + d;
    if (s < lo) lo = s;
    if (e > hi) hi = e;
    let lane: u32 = 0;
    while (lane < used && load<f64>(lEnd + (<usize>lane << 3)) > s) lane++;
    if (lane == used) {
      if (used < MAX_LANES) {
        used++;
        store<f64>(lMax + (<usize>lane << 3), 0);
        store<f64>(lEnd + (<usize>lane << 3), 0);
      } else {
        lane = MAX_LANES - 1;
        put(laneOvl, lane, 1);
      }
    }
    const le = lEnd + (<usize>lane << 3);
    if (e > load<f64>(le)) store<f64>(le, e);
    const lm = lMax + (<usize>lane << 3);
    if (d > load<f64>(lm)) store<f64>(lm, d);
    store<u8>(lOf + <usize>i, <u8>lane);
    put(lCnt, lane, at(lCnt, lane) + 1);
  }
  minStart = lo;
  maxEnd = hi;
  // Stable regroup by lane (counting sort through tmp).
  if (used > 1) {
    let off: u32 = 0;
    for (let l: u32 = 0; l < used; l++) {
      store<u32>(laneEnd + (<usize>l << 3), off); // reuse as the fill cursor
      off += at(laneCnt, l);
    }
    for (let i: u32 = 0; i < cnt; i++) {
      const cur = laneEnd + (<usize>load<u8>(laneOf + <usize>i) << 3);
      const a = load<u32>(cur);
      put(tmp, a, at(seg, i));
      store<u32>(cur, a + 1);
    }
    memory.copy(seg, tmp, <usize>cnt << 2);
  }
  if (laneCount + used > laneCap) {
    const cap = (laneCount + used) * 2;
    const nl = heap.alloc(<usize>cap * 24);
    memory.copy(nl, lanes, <usize>laneCount * 24);
    lanes = nl;
    laneCap = cap;
  }
  let a = first;
  for (let l: u32 = 0; l < used; l++) {
    const c = at(laneCnt, l);
    const ln = lanes + <usize>laneCount * 24;
    store<u32>(ln, a);
    store<u32>(ln, c, 4);
    store<u32>(ln, k, 8);
    store<u32>(ln, at(laneOvl, l), 12);
    store<f64>(ln, load<f64>(laneMax + (<usize>l << 3)), 16);
    laneCount++;
    a += c;
  }
  return used;
}

// ---- Partners ----------------------------------------------------------------------------------------------------

let corr: Paged = 0;

// The end of the pass after the rows are ordered. Walking the events in output order (row by row) gathers every key
// through idx and sweeps the correlation table once per row; in arrival order the keys are read in sequence and
// the correlation ids come roughly in order (one sweep), so each event's output index is first noted in its key and
// the rest works in arrival order: on a 1.05 GiB dump (10.4M events) the partners and the order took 2.0 s that
// way against 0.3 s of scattering the output indices.

/**
 * Notes in each key its output index (over the duration word: durations are not read once the rows are ordered),
 * for the arrival-order walks below. {@link idx} must be in output order.
 */
export function noteOutputIndex(): void {
  const n = keyCount;
  for (let pos: u32 = 0; pos < n; pos++) store<u32>(keyAt(at(idx, pos)), pos, 8);
}

/** The output index of the event of arrival index `a` (after {@link noteOutputIndex}). */
export function outputIndexOf(a: u32): u32 {
  return load<u32>(keyAt(a), 8);
}


// Correlation ids of the events come roughly in order, so nearly every lookup lands on the page of the one before:
// the walks keep that page's address (valid while the table's eviction epoch is unchanged, util/paged.ts) and ask
// pagedSlot only for another page (pagedSlot cost ≈ 48 instructions a call, twice per event).
const CORR_BITS: u32 = 13;
const CORR_MASK: u32 = (1 << CORR_BITS) - 1;
let cachePage: u32 = NONE;
let cacheBase: usize = 0;
let cacheEpoch: u32 = 0;

/**
 * Slot of correlation `c` in the partner table (created when `create`), or 0; through the last-page cache, which
 * must be reset ({@link corrCacheReset}) between walks of different `create`: a page cached from a lookup was not
 * marked written.
 */
// @ts-ignore: decorator
@inline function corrSlot(c: u32, create: bool): usize {
  const pg = c >> CORR_BITS;
  if (pg == cachePage && pagedEpoch(corr) == cacheEpoch) return cacheBase + (<usize>(c & CORR_MASK) << 3);
  return corrSlotMiss(c, create);
}

/** {@link corrSlot} past the cache: pagedSlot, and the page cached when it exists. */
function corrSlotMiss(c: u32, create: bool): usize {
  const slot = pagedSlot(corr, c, create);
  if (slot != 0) {
    cachePage = c >> CORR_BITS;
    cacheBase = slot - (<usize>(c & CORR_MASK) << 3);
    cacheEpoch = pagedEpoch(corr);
  }
  return slot;
}

/** Empties the last-page cache (see {@link corrSlot}). */
function corrCacheReset(): void {
  cachePage = NONE;
  cacheBase = 0;
  cacheEpoch = 0;
}

/** How partners are resolved: 0 by the table or by sorting, as the ids' spread says; 1 the table; 2 sorting (tests). */
let partnerMode: u32 = 0;
/** Test-only: {@link partnerMode}. */
export function setPartnerMode(mode: u32): void {
  partnerMode = mode;
}
/** This pass's partners were resolved by sorting (and are in {@link idx} already): {@link writePartners} only writes. */
let partnersSorted = false;

/**
 * Resolves correlations after {@link noteOutputIndex}: per correlation, the output index of its launch (the first
 * in output order) and of its earliest device work (the first in output order among those with the earliest start).
 * By a table indexed by correlation id (8 B per id) when the ids of the events with flows span no more than 8 B per
 * event (or the paged budget); else by sorting those events by id ({@link sortedPartners}): real CUPTI dumps number
 * every call, traced or not, so their ids can be several times sparser than their events, and a table over the
 * whole range would spill most of itself (in a browser, into JavaScript memory) or reach its page cap.
 */
export function resolvePartners(): void {
  const n = keyCount;
  partnersSorted = false;
  if (partnerMode != 1 && flowKeys != 0) {
    const room = max<u64>(<u64>pagedBudget(), <u64>n << 3);
    if (partnerMode == 2 || (<u64>(flowHi - flowLo) + 1) << 3 > room) {
      sortedPartners(flowKeys);
      partnersSorted = true;
      return;
    }
  }
  // 8 B per correlation id: pages over the budget are evicted and read back once per walk (two walks in arrival
  // order). A budget of 8 B per event (less than half of the keys, which hold 20 B per event anyway) when that is
  // more, up to the table's page cap, keeps them resident: nothing spills at the end of the pass.
  const budget = pagedBudget();
  const want = <u64>n << 3;
  if (want > <u64>budget) setPagedBudget(want < 0x40000000 ? <u32>want : 0x40000000);
  corr = pagedNew(3, CORR_BITS, 4096);
  // The rows are ordered: their sort scratch (4 + 1 bytes per event of the longest row) holds the table's first
  // pages instead of new heap (on a 1.05 GiB dump the table is 55 MiB, most of the end of the pass's growth).
  pagedFramePool(tmp, scratchBytes);
  partnerWalk(false);
  setPagedBudget(budget); // the table took its frames at its first page
}

/**
 * Writes a u32 per event in output order: its partner (the launch's earliest device work, the device work's
 * launch; NONE when it has none: no correlation, no flow flag, or the other side missing). Found in arrival order
 * and placed by output index into {@link idx}, which is not needed any more.
 */
export function writePartners(): void {
  if (!partnersSorted) partnerWalk(true);
  O.raw(idx, <usize>keyCount << 2);
  pagedFramePool(0, 0); // the table is done with
}

/**
 * {@link resolvePartners} by sorting: the `m` events with a flow bit as (correlation id, arrival index) pairs,
 * radix-sorted by id, then per id its launch (first in output order) and its earliest device work (earliest start,
 * first in output order on a tie), and each event's partner put at its output index in {@link idx} (NONE for the
 * others) — what the table's two walks give. Takes 16 B per such event, whatever the ids' spread.
 */
function sortedPartners(m: u32): void {
  const n = keyCount;
  const a = heap.alloc(<usize>m << 3);
  const t = heap.alloc(<usize>m << 3);
  let w: usize = a;
  for (let b: u32 = 0; b < blocksOf(n); b++) {
    const keys = blockKeys(b);
    const c = blockLen(b, n);
    const i0 = b << BLOCK_BITS;
    for (let j: u32 = 0; j < c; j++) {
      const k = keys + <usize>j * KEY;
      if ((load<u32>(k, 12) & (K_FLOW_START | K_FLOW_END)) == 0) continue;
      store<u64>(w, (<u64>load<u32>(k, 16) << 32) | <u64>(i0 + j));
      w += 8;
    }
  }
  const sorted = radixByHigh(a, t, m);
  memory.fill(idx, 0xff, <usize>n << 2); // NONE for events without a partner
  let g: u32 = 0;
  while (g < m) {
    const id = <u32>(load<u64>(sorted + (<usize>g << 3)) >> 32);
    let e = g;
    let launch: u32 = NONE;
    let dev: u32 = NONE;
    let devStart: f64 = 0;
    while (e < m && <u32>(load<u64>(sorted + (<usize>e << 3)) >> 32) == id) {
      const k = keyAt(<u32>load<u64>(sorted + (<usize>e << 3)));
      const pos = load<u32>(k, 8);
      if ((load<u32>(k, 12) & K_FLOW_START) != 0) {
        if (pos < launch) launch = pos;
      } else {
        const st = load<f64>(k);
        if (dev == NONE || st < devStart || (st == devStart && pos < dev)) {
          dev = pos;
          devStart = st;
        }
      }
      e++;
    }
    for (let i = g; i < e; i++) {
      const k = keyAt(<u32>load<u64>(sorted + (<usize>i << 3)));
      put(idx, load<u32>(k, 8), (load<u32>(k, 12) & K_FLOW_START) != 0 ? dev : launch);
    }
    g = e;
  }
}

/**
 * Stable LSD radix sort of the `m` u64 at `a` by their high 32 bits (11, 11 and 10 bits a pass; a pass whose digit
 * is the same for all is skipped), through `t` (as large). Returns where the sorted values are (`a` or `t`).
 */
function radixByHigh(a: usize, t: usize, m: u32): usize {
  const counts = heap.alloc(2048 << 2);
  let src = a;
  let dst = t;
  for (let shift: u32 = 32; shift < 64; shift += 11) {
    const bits: u32 = shift == 54 ? 10 : 11;
    const mask: u64 = (<u64>1 << bits) - 1;
    memory.fill(counts, 0, <usize>2048 << 2);
    for (let i: u32 = 0; i < m; i++) {
      const d = <usize>((load<u64>(src + (<usize>i << 3)) >> shift) & mask);
      store<u32>(counts + (d << 2), load<u32>(counts + (d << 2)) + 1);
    }
    if (load<u32>(counts + (<usize>((load<u64>(src) >> shift) & mask) << 2)) == m) continue;
    let sum: u32 = 0;
    for (let d: u32 = 0; d <= <u32>mask; d++) {
      const c = load<u32>(counts + (<usize>d << 2));
      store<u32>(counts + (<usize>d << 2), sum);
      sum += c;
    }
    for (let i: u32 = 0; i < m; i++) {
      const v = load<u64>(src + (<usize>i << 3));
      const dp = counts + (<usize>((v >> shift) & mask) << 2);
      const o = load<u32>(dp);
      store<u64>(dst + (<usize>o << 3), v);
      store<u32>(dp, o + 1);
    }
    const x = src;
    src = dst;
    dst = x;
  }
  return src;
}

/**
 * The two walks of the partner table, in arrival order, each event with a flow bit through its correlation's slot:
 * `write` false, {@link resolvePartners}' (slots created, each correlation's launch and earliest device work noted);
 * true, {@link writePartners}' (each event's partner put at its output index in {@link idx}). Inlined: a copy per
 * caller, `write` folded.
 */
// @ts-ignore: decorator
@inline function partnerWalk(write: bool): void {
  const n = keyCount;
  corrCacheReset();
  for (let b: u32 = 0; b < blocksOf(n); b++) {
    const keys = blockKeys(b);
    const c = blockLen(b, n);
    for (let j: u32 = 0; j < c; j++) {
      const k = keys + <usize>j * KEY;
      const bits = load<u32>(k, 12);
      const pos = load<u32>(k, 8);
      let p: u32 = NONE;
      if ((bits & (K_FLOW_START | K_FLOW_END)) != 0) {
        const slot = corrSlot(load<u32>(k, 16), !write);
        if (slot != 0) {
          if (write) {
            const v = (bits & K_FLOW_START) != 0 ? load<u32>(slot, 4) : load<u32>(slot);
            if (v != 0) p = v - 1;
          } else notePartner(slot, k, bits, pos);
        }
      }
      if (write) put(idx, pos, p);
    }
  }
  corrCacheReset();
}

/**
 * Notes event key `k` (flow bits `bits`, output index `pos`) in its correlation's slot: the launch first in output
 * order; the device work with the earliest start, first in output order among equal starts.
 */
// @ts-ignore: decorator
@inline function notePartner(slot: usize, k: usize, bits: u32, pos: u32): void {
  if ((bits & K_FLOW_START) != 0) {
    const cur = load<u32>(slot);
    if (cur == 0 || pos + 1 < cur) store<u32>(slot, pos + 1);
  } else {
    const cur = load<u32>(slot, 4);
    if (cur == 0) store<u32>(slot, pos + 1, 4);
    else {
      const s = load<f64>(k);
      const cs = load<f64>(keyAt(at(idx, cur - 1)));
      if (s < cs || (s == cs && pos + 1 < cur)) store<u32>(slot, pos + 1, 4);
    }
  }
}

/** Writes a u32 per event in arrival order: its output index (noted by {@link noteOutputIndex}). */
export function writeInverse(): void {
  const n = keyCount;
  // Straight into the output window, a key block at a time (at most 256 KiB: well under the window).
  for (let b: u32 = 0; b < blocksOf(n); b++) {
    const keys = blockKeys(b);
    const c = blockLen(b, n);
    let done: u32 = 0;
    while (done < c) {
      const m = c - done < INV_CHUNK ? c - done : INV_CHUNK;
      O.need(<usize>m << 2);
      let q = O.pos;
      for (let j = done; j < done + m; j++) {
        store<u32>(q, load<u32>(keys + <usize>j * KEY, 8));
        q += 4;
      }
      O.pos = q;
      done += m;
    }
  }
}
