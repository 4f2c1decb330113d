/**
 * Host ranges (NVTX, ROCTx) and their projection onto device streams — Kineto's `gpu_user_annotation` rows.
 *
 * A range's GPU work is every device op whose host launch call ran on the range's thread inside the range: the span
 * from the first such op's start to the last one's end, per (device, stream), for the range and every range that
 * encloses it. Computed exactly whatever order buffers arrive in:
 *   pass 1        collects ranges (start/end pairs per thread), and notes whether any launch call comes after a
 *                 device op of its correlation id in file order (one bit per correlation id, paged and capped);
 *   projection    maps each launch call's correlation id to the innermost range containing it (only when the dump
 *                 has ranges and the host asks, {@link rangesNeedProjection} / {@link rangesBeginProject}): inside
 *                 pass 2, as each call is decoded, when every call precedes its device ops in the file (the bench
 *                 generator's order); otherwise (real CUPTI dumps write the device records first) in an extra pass
 *                 over the file between passes 1 and 2;
 *   pass 2        extends the span of the op's range (and its ancestors) on the op's (device, stream);
 *   end of pass 2 the spans are emitted.
 * Memory: 48 B per range, 4 B per correlation id of a device op (paged, capped), 16 B per (range, stream), and
 * 1 bit per correlation id of a device op for the order check (64 KiB pages, at most 4 MiB).
 *
 * The map from launch call to range is indexed by the id's rank among the ids of device ops (the order check's
 * bits, complete after pass 1, with a count per 64 ids: {@link rankOf}) when the decoder noted them (CUPTI) and the
 * ids are sparser than the device ops: calls without device work (CUPTI numbers every call: torch_nvtx.rawtrace has
 * ≈ 25 ids per device op, the bench's dumps ≈ 2) get no entry, and the map holds 4 B per device op instead of per
 * id. Other decoders, ids as dense as the device ops and ids past the bits' cap index it by the id itself.
 */
import {
  Table, tableNew, tableUpsert, tableFind, tableSlots, tableCount, tableKeyAt, tableValueAt, inserted,
} from "../util/hash_table";
import { Paged, pagedNew, pagedSlot, pagedEpoch } from "../util/paged";
import { Recent, recentNew, recentGet, recentPut } from "../util/recent";
import { Timing, timingCheck } from "./timing";
import { regrow } from "../util/regrow";

const RANGE: usize = 48; // pid u32 @0, tid u32 @4, start u64 @8, end u64 @16, name u64 @24, parent i32 @32, id u32 @36
/** Ranges beyond this many are not projected (key packing: 24 bits of range index). */
const MAX_RANGES: u32 = 1 << 24;

let ranges: usize = 0;
let count: u32 = 0;
let cap: u32 = 0;
let openById: Table = 0; // vendor range id → index + 1 while open (pass 1)
let sorted: usize = 0; // u32 indices sorted by (tid, start)
let apiSeen = false;

// key → range index + 1 (u32), 16384 per 64 KiB page, 4096 pages at most (util/paged.ts); the key is the id's rank
// among device-op ids while `byRank`, else the id.
let corrRange: Paged = 0;
/** The map is keyed by rank ({@link rankBegin}). */
let byRank = false;
// Per page of devSeen (corr >> 19) that exists, the address of its counts (u32 per possible page, 32 KiB): per
// 64-bit word of the page, the device-op ids before that word in all pages (u32, 32 KiB a page).
let rankDir: usize = 0;
// devSeen's page of the last rank looked up (a read cache, valid while pagedEpoch(devSeen) is unchanged).
let rankPage: u32 = 0xffffffff;
let rankBase: usize = 0;
let rankEpoch: u32 = 0;
let rankCounts: usize = 0; // the counts of rankPage
const DEV_PAGES: u32 = 64; // devSeen's page cap
/**
 * Correlation ids per device op, times 4, above which the launch-call map is keyed by rank (4 B per id → 4 B per op,
 * and the rank's counts 0.5 bit per id): 1.25. The bench's dumps have ≈ 2, real ones 5–25.
 */
const RANK_SPARSE_4: u64 = 5;
let devCapped = false; // a device op's id found no page: the bits are not complete
let rankTried = false; // rankBegin ran for this file

// Launch order (pass 1): bit (corr & 7) of byte (corr >> 3) is set once a device op of `corr` was seen; a launch call
// whose bit is already set comes after its device op, so its range must be known before pass 2 (the extra pass).
let orderTracked = false; // the decoder notes calls and device ops (only CUPTI's does)
let lateCall = false;
let devSeen: Paged = 0; // 2^19 ids per 64 KiB page, 64 pages at most (ids up to 2^25 when dense)
let devPage: u32 = 0xffffffff; // page (corr >> 19) of the last device op noted, and its base address
let devBase: usize = 0;
let devEpoch: u32 = 0; // pagedEpoch(devSeen) when devBase was taken (from a `create` slot)
let maxDeviceCorr: u32 = 0; // largest id of a device op noted
/** True while pass 2 maps launch calls to ranges itself ({@link rangesBeginProject} chose no extra pass). */
export let projectInline = false;

let spans: Table = 0; // (range << 40 | device index << 32 | stream) → span entry {start u64, end u64}
/** Devices of the spans in first-seen order (device index → id, u32 each), and id → index + 1. */
const MAX_SPAN_DEVICES: u32 = 256;
let spanDevices: usize = 0;
let spanDeviceCount: u32 = 0;
let spanDeviceIndex: Table = 0;

/**
 * Dense index (0..255) of `device` among the devices that ran ranged work: a span key has 8 bits for it, and device
 * ids are any u32. Past 256 distinct devices (crafted input) the rest share the last index.
 */
function deviceIndex(device: u32): u32 {
  if (device == lastDevice && lastDeviceKnown) return lastDeviceIndex;
  if (spanDeviceIndex == 0) {
    spanDeviceIndex = tableNew(16);
    spanDevices = heap.alloc(<usize>MAX_SPAN_DEVICES << 2);
  }
  const slot = tableUpsert(spanDeviceIndex, device);
  if (inserted) {
    let i: u32 = MAX_SPAN_DEVICES - 1;
    if (spanDeviceCount < MAX_SPAN_DEVICES) {
      i = spanDeviceCount++;
      store<u32>(spanDevices + (<usize>i << 2), device);
    }
    store<u64>(slot, <u64>i + 1);
  }
  lastDevice = device;
  lastDeviceIndex = <u32>(load<u64>(slot) - 1);
  lastDeviceKnown = true;
  return lastDeviceIndex;
}
let lastDevice: u32 = 0;
let lastDeviceIndex: u32 = 0;
let lastDeviceKnown = false;

// Lookups that repeat from one record to the next, cached (none changes what is stored, or in which order):
//  - innermost(): the thread and time interval of the last binary search, and the sorted index it found;
//  - corrRange: the page of the last correlation id (ids arrive nearly in order);
//  - spans: the entry of each recent (range, device, stream) key, direct-mapped (the streams alternate).
let findTid: u32 = 0;
let findLo: u64 = 0;
let findHi: u64 = 0; // empty interval: no hit until the first search
let findIndex: i32 = -1;
let findRange: i32 = -1; // range index at findIndex when it is on findTid, else -1 (before the walk up its parents)
let findOpenHi: u64 = 0; // min(findHi, findRange's end + 1): below it findRange is the innermost range (no walk)
let corrPage: u32 = 0xffffffff;
let corrBase: usize = 0;
let corrEpoch: u32 = 0; // pagedEpoch(corrRange) when corrBase was taken
let corrWritable = false; // corrBase came from a `create` slot (util/paged.ts: only those may be written through)
let spanCache: Recent = 0; // created with spans
let spansFull = false;

/** Forgets the lookup caches (a new file, or the ranges re-sorted). */
function cachesReset(): void {
  lastDevice = 0;
  lastDeviceIndex = 0;
  lastDeviceKnown = false;
  findTid = 0;
  findLo = 0;
  findHi = 0;
  findIndex = -1;
  findRange = -1;
  findOpenHi = 0;
  corrPage = 0xffffffff;
  corrBase = 0;
  spansFull = false;
}

/** Forgets everything (after heap.reset()). */
export function rangesReset(): void {
  ranges = 0;
  count = 0;
  cap = 0;
  openById = 0;
  sorted = 0;
  apiSeen = false;
  corrRange = 0;
  byRank = false;
  rankDir = 0;
  rankPage = 0xffffffff;
  devCapped = false;
  rankTried = false;
  orderTracked = false;
  lateCall = false;
  devSeen = 0;
  devPage = 0xffffffff;
  devBase = 0;
  maxDeviceCorr = 0;
  projectInline = false;
  cachesReset();
  spans = 0;
  spanCache = 0;
  spanDevices = 0;
  spanDeviceCount = 0;
  spanDeviceIndex = 0;
}

/** Pass 1: a range `id` starts on (pid, tid) at `start` (Unix ns), named by vendor pointer `name`. */
export function rangeOpen(id: u32, pid: u32, tid: u32, start: u64, name: u64): void {
  if (count >= MAX_RANGES) return;
  if (openById == 0) openById = tableNew(64);
  if (count == cap) {
    const ncap = cap == 0 ? 256 : cap << 1;
    ranges = regrow(ranges, <usize>count * RANGE, <usize>ncap * RANGE);
    cap = ncap;
  }
  const r = ranges + <usize>count * RANGE;
  store<u32>(r, pid);
  store<u32>(r, tid, 4);
  store<u64>(r, start, 8);
  store<u64>(r, 0xffffffffffffffff, 16); // open
  store<u64>(r, name, 24);
  store<i32>(r, -1, 32);
  store<u32>(r, id, 36);
  store<u64>(tableUpsert(openById, id), <u64>count + 1);
  count++;
}

/** Pass 1: range `id` ends at `end` (Unix ns). */
export function rangeClose(id: u32, end: u64): void {
  if (openById == 0) return;
  const p = tableFind(openById, id);
  if (p == 0 || load<u64>(p) == 0) return;
  const r = ranges + <usize>(load<u64>(p) - 1) * RANGE;
  store<u64>(r, end, 16); // judged and ordered by rangesPrepare

  store<u64>(p, 0);
}

/** Pass 1: a host launch call was seen (projection needs at least one). */
export function rangesNoteApi(): void {
  apiSeen = true;
}

/** True when the dump has ranges and launch calls: they are projected onto device streams when the host asks. */
export function rangesNeedProjection(): bool {
  return count != 0 && apiSeen;
}

/** Pass 1, before the first buffer: the decoder notes its launch calls and device ops (the order check below). */
export function rangesTrackOrder(): void {
  orderTracked = true;
}

/** Pass 1: a device op of correlation id `corr` was seen. */
// @ts-ignore: decorator
@inline export function rangesNoteDeviceCorr(corr: u32): void {
  // The common case inline (no call per device op): the id on the page of the last one.
  if (corr >>> 19 == devPage && pagedEpoch(devSeen) == devEpoch) {
    if (corr > maxDeviceCorr) maxDeviceCorr = corr;
    const a = devBase + <usize>((corr >>> 3) & 0xffff);
    store<u8>(a, load<u8>(a) | (<u8>1 << <u8>(corr & 7)));
  } else noteDeviceCorrAny(corr);
}
/** {@link rangesNoteDeviceCorr} for any id. */
function noteDeviceCorrAny(corr: u32): void {
  if (corr > maxDeviceCorr) maxDeviceCorr = corr;
  const byte = corr >>> 3;
  if (devSeen == 0) devSeen = pagedNew(0, 16, DEV_PAGES);
  const s = pagedSlot(devSeen, <u64>byte, true);
  if (s == 0) {
    lateCall = true; // beyond the cap (crafted ids): the order is not known, so the extra pass runs
    devCapped = true;
    return;
  }
  devPage = corr >>> 19;
  devBase = s - <usize>(byte & 0xffff);
  devEpoch = pagedEpoch(devSeen);
  store<u8>(s, load<u8>(s) | (<u8>1 << <u8>(corr & 7)));
}

/** Pass 1: a launch call of correlation id `corr` was seen (after a device op of the same id: the extra pass runs). */
// @ts-ignore: decorator
@inline export function rangesNoteCallCorr(corr: u32): void {
  // Ids above every device op's so far (the common case: ids grow) need no look at the bits.
  if (corr <= maxDeviceCorr && devSeen != 0 && !lateCall) callAfterDevice(corr);
}
function callAfterDevice(corr: u32): void {
  const byte = corr >>> 3;
  let base: usize;
  if (corr >>> 19 == devPage && pagedEpoch(devSeen) == devEpoch) base = devBase;
  else {
    const s = pagedSlot(devSeen, <u64>byte, false);
    if (s == 0) return; // no device op on that page yet
    base = s - <usize>(byte & 0xffff);
  }
  if ((load<u8>(base + <usize>(byte & 0xffff)) & (<u8>1 << <u8>(corr & 7))) != 0) lateCall = true;
}

/**
 * After pass 1, when the host wants the projection: true when it must run the extra pass over the file
 * ({@link rangesMapCall} for every launch call) before pass 2; false when pass 2 maps each call as it decodes it
 * ({@link projectInline}), which gives the same mapping because no launch call follows a device op of its id.
 */
export function rangesBeginProject(): bool {
  rangesRankKeys();
  if (orderTracked && !lateCall) {
    projectInline = true;
    return false;
  }
  return true;
}

/**
 * Keys the launch-call map by rank when pass 1 noted every device op's id (CUPTI, under the bits' cap) and the ids
 * are sparser than the device ops ({@link RANK_SPARSE_4}: every real dump's, whose API calls without device work have
 * ids too): counts the device-op ids before each 64-bit word of the bits, page by page in id order.
 */
function rankBegin(): void {
  byRank = false;
  if (!orderTracked || devSeen == 0 || devCapped) return;
  let ops: u64 = 0;
  for (let p: u32 = 0; p < 1 << 13; p++) {
    const b = pagedSlot(devSeen, <u64>p << 16, false);
    if (b == 0) continue;
    for (let w: usize = 0; w < 8192; w++) ops += popcnt(load<u64>(b + (w << 3)));
  }
  if (<u64>maxDeviceCorr * 4 < ops * RANK_SPARSE_4) return;
  rankDir = heap.alloc(<usize>(1 << 13) << 2);
  memory.fill(rankDir, 0, <usize>(1 << 13) << 2);
  let total: u32 = 0;
  for (let p: u32 = 0; p < 1 << 13; p++) {
    const b = pagedSlot(devSeen, <u64>p << 16, false); // one page at a time: valid until the next call
    if (b == 0) continue;
    const c = heap.alloc(<usize>8192 << 2); // at most DEV_PAGES of them
    store<u32>(rankDir + (<usize>p << 2), <u32>c);
    for (let w: usize = 0; w < 8192; w++) {
      store<u32>(c + (w << 2), total);
      total += <u32>popcnt(load<u64>(b + (w << 3)));
    }
  }
  rankPage = 0xffffffff;
  byRank = true;
}

/**
 * After pass 1: whether maps of per-launch facts are better keyed by {@link rangesRank} than by correlation id (this
 * module's launch → range map, XSpace's NVTX map): true when the ids are sparse and pass 1 noted every device op's.
 * Decided once per file.
 */
export function rangesRankKeys(): bool {
  if (!rankTried) {
    rankTried = true;
    rankBegin();
  }
  return byRank;
}

/**
 * After {@link rangesRankKeys} said true (only then are the counts there): the rank of `corr` among the device ops'
 * ids, -1 when none has it. Inline while the id is on the bits' page of the last lookup (ids arrive nearly in order).
 */
// @ts-ignore: decorator
@inline export function rangesRank(corr: u64): i64 {
  if (corr <= 0xffffffff && <u32>corr >>> 19 == rankPage && pagedEpoch(devSeen) == rankEpoch) {
    return rankIn(rankBase, rankCounts, <u32>corr);
  }
  return rankOf(corr);
}

/** {@link rangesRank} through the page directory (and the page's counts) when the cached page is not the id's. */
function rankOf(corr: u64): i64 {
  if (corr > 0xffffffff) return -1;
  const id = <u32>corr;
  const p = id >>> 19;
  const counts = <usize>load<u32>(rankDir + (<usize>p << 2));
  if (counts == 0) return -1;
  let base: usize;
  if (p == rankPage && pagedEpoch(devSeen) == rankEpoch) base = rankBase;
  else {
    const s = pagedSlot(devSeen, <u64>(id >>> 3), false);
    if (s == 0) return -1;
    base = s - <usize>((id >>> 3) & 0xffff);
    rankPage = p;
    rankBase = base;
    rankEpoch = pagedEpoch(devSeen);
    rankCounts = counts;
  }
  return rankIn(base, counts, id);
}

/** Rank of `id` given its bits page at `base` and that page's counts, or -1 when its bit is clear. */
// @ts-ignore: decorator
@inline function rankIn(base: usize, counts: usize, id: u32): i64 {
  const w = <usize>((id >>> 6) & 8191);
  const word = load<u64>(base + (w << 3));
  const bit = <u64>(id & 63);
  if (((word >> bit) & 1) == 0) return -1;
  return <i64>load<u32>(counts + (w << 2)) + <i64>popcnt(word & ((<u64>1 << bit) - 1));
}

/** The key of `corr` in the launch-call map (its rank, or itself), or -1 when it needs no entry. */
// @ts-ignore: decorator
@inline function mapKey(corr: u64): i64 {
  return byRank ? rangesRank(corr) : <i64>corr;
}

// @ts-ignore: decorator
@inline function rAt(i: u32): usize {
  return ranges + <usize>i * RANGE;
}
// @ts-ignore: decorator
@inline function idx(i: u32): u32 {
  return load<u32>(sorted + (<usize>i << 2));
}
function less(a: u32, b: u32): bool {
  const ta = load<u32>(rAt(a), 4);
  const tb = load<u32>(rAt(b), 4);
  if (ta != tb) return ta < tb;
  const sa = load<u64>(rAt(a), 8);
  const sb = load<u64>(rAt(b), 8);
  if (sa != sb) return sa < sb;
  return load<u64>(rAt(a), 16) > load<u64>(rAt(b), 16); // enclosing (longer) first
}

/** After pass 1: closes ranges still open at `lastTs`, sorts by (thread, start) and links each to its parent. */
export function rangesPrepare(lastTs: u64): void {
  if (count == 0) return;
  // The timestamp rule (model/timing.ts), as pass 2 applies it to the markers: a range whose start marker is dropped
  // does not exist; one whose end marker is dropped stays open, to the last kept time.
  let n: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    const r = rAt(i);
    const s = load<u64>(r, 8);
    if (timingCheck(s, s) == Timing.DROP) continue;
    const e = load<u64>(r, 16);
    if (e == 0xffffffffffffffff || timingCheck(e, e) == Timing.DROP) store<u64>(r, lastTs, 16);
    if (load<u64>(r, 16) < s) store<u64>(r, s, 16);
    if (n != i) memory.copy(rAt(n), r, RANGE);
    n++;
  }
  count = n;
  if (count == 0) return;
  // Bottom-up merge sort of the index array (stable, O(n log n), no recursion).
  let a = heap.alloc(<usize>count << 2);
  let b = heap.alloc(<usize>count << 2);
  for (let i: u32 = 0; i < count; i++) store<u32>(a + (<usize>i << 2), i);
  for (let width: u32 = 1; width < count; width <<= 1) {
    for (let lo: u32 = 0; lo < count; lo += width << 1) {
      const mid = min(lo + width, count);
      const hi = min(lo + (width << 1), count);
      let i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        const x = load<u32>(a + (<usize>i << 2));
        const y = load<u32>(a + (<usize>j << 2));
        if (less(y, x)) {
          store<u32>(b + (<usize>k << 2), y);
          j++;
        } else {
          store<u32>(b + (<usize>k << 2), x);
          i++;
        }
        k++;
      }
      while (i < mid) {
        store<u32>(b + (<usize>k << 2), load<u32>(a + (<usize>i << 2)));
        k++;
        i++;
      }
      while (j < hi) {
        store<u32>(b + (<usize>k << 2), load<u32>(a + (<usize>j << 2)));
        k++;
        j++;
      }
    }
    const t = a;
    a = b;
    b = t;
  }
  sorted = a;
  cachesReset();
  // Parents: walk each thread's ranges in start order keeping a stack of enclosing ranges (reuse b as the stack).
  let depth: u32 = 0;
  let lastTid: u32 = 0xffffffff;
  for (let i: u32 = 0; i < count; i++) {
    const cur = idx(i);
    const r = rAt(cur);
    const tid = load<u32>(r, 4);
    if (tid != lastTid) {
      depth = 0;
      lastTid = tid;
    }
    const s = load<u64>(r, 8);
    while (depth > 0 && load<u64>(rAt(load<u32>(b + (<usize>(depth - 1) << 2))), 16) < s) depth--;
    store<i32>(r, depth > 0 ? <i32>load<u32>(b + (<usize>(depth - 1) << 2)) : -1, 32);
    store<u32>(b + (<usize>depth << 2), cur);
    depth++;
  }
}

/** Innermost range on thread `tid` containing time `t`, or -1. */
function innermost(tid: u32, t: u64): i32 {
  // Last range (in (tid, start) order) that starts at or before t on this thread…
  let found: i32 = -1;
  if (tid == findTid && t >= findLo && t < findHi) found = findIndex;
  else {
    let lo: i32 = 0;
    let hi: i32 = <i32>count - 1;
    while (lo <= hi) {
      const m = (lo + hi) >>> 1;
      const r = rAt(idx(<u32>m));
      const rt = load<u32>(r, 4);
      if (rt < tid || (rt == tid && load<u64>(r, 8) <= t)) {
        found = m;
        lo = m + 1;
      } else hi = m - 1;
    }
    // Every time on this thread from that range's start (or 0) to the next range's start (or the end of time)
    // finds the same index.
    findTid = tid;
    findLo = found >= 0 && load<u32>(rAt(idx(<u32>found)), 4) == tid ? load<u64>(rAt(idx(<u32>found)), 8) : 0;
    const next = <u32>(found + 1);
    findHi = next < count && load<u32>(rAt(idx(next)), 4) == tid ? load<u64>(rAt(idx(next)), 8) : 0xffffffffffffffff;
    findIndex = found;
    findRange = found >= 0 && load<u32>(rAt(idx(<u32>found)), 4) == tid ? <i32>idx(<u32>found) : -1;
    findOpenHi = findHi;
    if (findRange >= 0) {
      const e = load<u64>(rAt(<u32>findRange), 16);
      if (findOpenHi != 0 && e < findOpenHi - 1) findOpenHi = e + 1;
    }
  }
  if (found < 0) return -1;
  let cur = <i32>idx(<u32>found);
  if (load<u32>(rAt(<u32>cur), 4) != tid) return -1;
  // …then up its parent chain to the first one still open at t.
  while (cur >= 0 && load<u64>(rAt(<u32>cur), 16) < t) cur = load<i32>(rAt(<u32>cur), 32);
  return cur;
}

/** Projection (extra pass, or pass 2 when {@link projectInline}): launch call `corr` ran on `tid` at `t` (vendor ns). */
// @ts-ignore: decorator
@inline export function rangesMapCall(corr: u64, tid: u32, t: u64): void {
  // The common case inline (no call per launch call): the same thread and interval as the last search, its range
  // still open at t (no walk up the parents), the key on the corrRange page written last.
  if (tid == findTid && t >= findLo && t < findOpenHi) {
    const r = findRange;
    if (r < 0) return; // no range on this thread at t
    const key = mapKey(corr);
    if (key < 0) return; // no device op has this id (rank keys)
    if (key <= 0xffffffff && <u32>(key >> 14) == corrPage && corrWritable && pagedEpoch(corrRange) == corrEpoch) {
      store<u32>(corrBase + (<usize>(key & 0x3fff) << 2), <u32>r + 1);
      return;
    }
    mapKeyAny(<u64>key, r);
    return;
  }
  mapCallAny(corr, tid, t);
}
/** {@link rangesMapCall} for any call. */
function mapCallAny(corr: u64, tid: u32, t: u64): void {
  const r = innermost(tid, t);
  if (r < 0) return;
  const key = mapKey(corr);
  if (key >= 0) mapKeyAny(<u64>key, r);
}
/** Maps key `key` to range `r`. */
function mapKeyAny(key: u64, r: i32): void {
  if (corrRange == 0) corrRange = pagedNew(2, 14, 4096);
  const s = corrSlot(key, true);
  if (s != 0) store<u32>(s, <u32>r + 1);
}

/** corrRange's element of `key` through the last-page cache (pagedSlot's answer otherwise). */
// @ts-ignore: decorator
@inline function corrSlot(key: u64, create: bool): usize {
  if (key <= 0xffffffff && <u32>(key >> 14) == corrPage && pagedEpoch(corrRange) == corrEpoch && (corrWritable || !create)) {
    return corrBase + (<usize>(key & 0x3fff) << 2);
  }
  const s = pagedSlot(corrRange, key, create);
  if (s != 0) {
    corrPage = <u32>(key >> 14);
    corrBase = s - (<usize>(key & 0x3fff) << 2);
    corrEpoch = pagedEpoch(corrRange);
    corrWritable = create;
  }
  return s;
}

/** Pass 2: device op of `corr` ran on (device, stream) over [start, end]: extends its ranges' spans. */
// @ts-ignore: decorator
@inline export function rangesNoteDeviceOp(corr: u64, device: u32, stream: u32, start: u64, end: u64): void {
  // No call when nothing was projected (XSpace, Chrome JSON without ranges).
  if (corrRange != 0) noteDeviceOpAny(corr, device, stream, start, end);
}
/** {@link rangesNoteDeviceOp} once some launch call was mapped to a range. */
function noteDeviceOpAny(corr: u64, device: u32, stream: u32, start: u64, end: u64): void {
  const key = mapKey(corr);
  if (key < 0) return;
  const s = corrSlot(<u64>key, false);
  if (s == 0) return;
  let r = <i32>load<u32>(s) - 1;
  if (r < 0) return;
  if (spans == 0) {
    spans = tableNew(256);
    spanCache = recentNew(6);
  }
  const dev = <u64>deviceIndex(device);
  while (r >= 0) {
    const key = (<u64>r << 40) | (dev << 32) | <u64>stream;
    let e: usize = spansFull ? 0 : <usize>recentGet(spanCache, key);
    if (e == 0) {
      const v = tableUpsert(spans, key);
      e = <usize>load<u64>(v);
      if (inserted || e == 0) {
        e = heap.alloc(16);
        store<u64>(e, 0xffffffffffffffff);
        store<u64>(e, 0, 8);
        store<u64>(v, e);
      }
      recentPut(spanCache, key, e);
      // The table grows on the next upsert of any key, present or not: such an upsert is not skipped, so the table
      // has the slots (and the slot order the spans are written in) it would have without the cache.
      spansFull = (tableCount(spans) + 1) << 1 > tableSlots(spans);
    }
    if (start < load<u64>(e)) store<u64>(e, start);
    if (end > load<u64>(e, 8)) store<u64>(e, end, 8);
    r = load<i32>(rAt(<u32>r), 32);
  }
}

/** Ranges collected in pass 1 (index `i` for the accessors below: 0 ≤ i < count, pass-1 order). */
export function rangeCount(): u32 {
  return count;
}
/** Vendor name pointer of range `i` (0 = unnamed). */
export function rangeNameAt(i: u32): u64 {
  return load<u64>(rAt(i), 24);
}
/** Start of range `i` (vendor ns). */
export function rangeStartAt(i: u32): u64 {
  return load<u64>(rAt(i), 8);
}
/** Vendor range id of range `i`. */
export function rangeIdAt(i: u32): u32 {
  return load<u32>(rAt(i), 36);
}

/** Number of projected spans (for iteration with {@link spanAt}). */
export function spanSlots(): u32 {
  return spans == 0 ? 0 : tableSlots(spans);
}

/** Span in slot `i`: sets the out-fields and returns true, or false for an empty slot. */
export let spanRange: u32 = 0;
export let spanDevice: u32 = 0;
export let spanStream: u32 = 0;
export let spanStart: u64 = 0;
export let spanEnd: u64 = 0;
export let spanName: u64 = 0;
export let spanPid: u32 = 0;
export function spanAt(i: u32): bool {
  const k = tableKeyAt(spans, i);
  if (k == 0xffffffffffffffff) return false;
  const e = <usize>tableValueAt(spans, i);
  spanRange = <u32>(k >> 40);
  spanDevice = load<u32>(spanDevices + (<usize>((k >> 32) & 0xff) << 2));
  spanStream = <u32>k;
  spanStart = load<u64>(e);
  spanEnd = load<u64>(e, 8);
  const r = rAt(spanRange);
  spanName = load<u64>(r, 24);
  spanPid = load<u32>(r);
  return true;
}
