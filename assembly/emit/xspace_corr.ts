/**
 * Correlation-id maps of the XSpace writer: correlation id → device plane of its device work (for the `device_id`
 * stat of the launch call) and → the NVTX range open around its launch (the `nvtx_range` stat of the device work).
 * Paged direct arrays (util/paged.ts) indexed by correlation id.
 */
import { Paged, pagedEpoch, pagedNew, pagedSlot } from "../util/paged";
import { curPlane } from "./xspace_encode";
import { bitsExpand, BITS_PAGE_BITS } from "../util/paged_bits";
import { rangesRank, rangesRankKeys } from "../model/ranges";

// correlation id → device plane index + 1 (u16 per id: 1..256, planeList's cap, which one byte would wrap to 0 at the
// 256th plane; pages of 64 Ki ids allocated on first use; util/paged.ts). While all device work noted is on one
// plane (`onePlane`, the usual dump: one process, one GPU), a bit per id says whether it went there instead
// (`corrBits`, 512 Ki ids per 64 KiB page): CUPTI's ids are several times sparser than a real dump's events, so a
// u16 per id spilled ≈ 80 MB on torch.rawtrace tiled a thousand times where the bits fit in the paged budget. A second
// plane turns the bits into the u16 map ({@link corrExpand}), once.
let corrPlane: Paged = 0;
let corrBits: Paged = 0;
/** Device plane index + 1 of all device work noted while the map is bits, 0 before any; 0xffff once it is u16. */
let onePlane: u32 = 0;
const CORR_PAGE_BITS: u32 = 16;
// At most 1024 pages (64 Mi ids): 128 MiB for the u16 map, 256 MiB for the u32 NVTX map, whatever crafted sparse ids
// a dump holds (resident: the paged budget, util/paged.ts; the rest spilled). The bits: 1024 pages of 512 Ki ids.
const CORR_MAX_PAGES: u32 = 1024;
/** Whether any device work carried a correlation id (the host plane then gets the `device_id` stat). */
export let corrAny = false;

/**
 * Last page used of each map, one cache for writing and one for reading each (ids arrive nearly in order: most
 * accesses skip {@link pagedSlot}): {page index u32, page address u32, pagedEpoch of the map when taken u32, 0}. A
 * writing cache is filled from a `create` slot only (util/paged.ts); either is used only while the epoch is unchanged.
 */
const lastPages = memory.data(6 * 16);
const PLANE_W: usize = 0;
const PLANE_R: usize = 16;
const NVTX_W: usize = 32;
const NVTX_R: usize = 48;
const NVTX_ID_W: usize = 64;
const NVTX_ID_R: usize = 80;

/** Forgets the cached pages (a new file: the heap was rewound). */
function lastPagesReset(): void {
  for (let i: usize = 0; i < 6; i++) store<u32>(lastPages + (i << 4), 0xffffffff);
}

/**
 * {@link pagedSlot} of `id` in `a` (elements of 2^shift bytes, {@link CORR_PAGE_BITS} ids a page) through the
 * last-page cache at `lastPages + c`.
 */
// @ts-ignore: decorator
@inline function cachedSlot(c: usize, a: Paged, id: u64, shift: u32, create: bool): usize {
  const e = lastPages + c;
  const page = <u32>(id >> CORR_PAGE_BITS);
  const off = <usize>(<u32>id & ((1 << CORR_PAGE_BITS) - 1)) << shift;
  if (id <= 0xffffffff && page == load<u32>(e) && pagedEpoch(a) == load<u32>(e, 8)) return <usize>load<u32>(e, 4) + off;
  const s = pagedSlot(a, id, create);
  if (s != 0) {
    store<u32>(e, page);
    store<u32>(e, <u32>(s - off), 4);
    store<u32>(e, pagedEpoch(a), 8);
  }
  return s;
}

/** Notes that the device work of `corr` is on device plane index `planeIdx` (the first plane noted wins). */
// @ts-ignore: decorator
@inline export function corrSet(corr: u64, planeIdx: u32): void {
  if (corr == 0 || corr > 0xffffffff) return; // (the map's ids are u32: a wider one is simply not linked)
  if (onePlane == planeIdx + 1 ? corrBitSet(corr) : corrSetAny(corr, planeIdx)) corrAny = true;
}

/** One plane so far: sets the bit of `corr` (in the byte of ids corr & ~7); false beyond the page cap (crafted ids). */
// @ts-ignore: decorator
@inline function corrBitSet(corr: u64): bool {
  const a = cachedSlot(PLANE_W, corrBits, corr >> 3, 0, true);
  if (a == 0) return false;
  store<u8>(a, load<u8>(a) | (<u8>1 << <u8>(corr & 7)));
  return true;
}

/** {@link corrSet} for the first plane, another plane, or the u16 map; false when the id is not linked. */
function corrSetAny(corr: u64, planeIdx: u32): bool {
  if (onePlane == 0) {
    onePlane = planeIdx + 1;
    corrBits = pagedNew(0, BITS_PAGE_BITS, CORR_MAX_PAGES);
    return corrBitSet(corr);
  }
  if (onePlane != 0xffff) corrExpand();
  const a = cachedSlot(PLANE_W, corrPlane, corr, 1, true);
  if (a == 0) return false;
  if (load<u16>(a) == 0) store<u16>(a, <u16>(planeIdx + 1));
  return true;
}

/** A second device plane: every id whose bit is set gets the first plane in the u16 map, used from here on. */
function corrExpand(): void {
  const plane = <u16>onePlane;
  const bits = corrBits;
  onePlane = 0xffff;
  corrBits = 0;
  lastPagesReset();
  bitsExpand(bits, corrPlane, 1, plane); // ids past the map's page cap are simply not linked (crafted ids)
}

/**
 * Launch → host-plane event metadata id of the innermost NVTX range around it (u32 each), keyed by the launch's rank
 * among the device ops' ids when those are sparse (model/ranges.ts rangesRankKeys: a real dump's CUPTI ids, ≈ 25 per
 * device op on torch_nvtx.rawtrace, where a u32 per id spilled 43.5 MB tiled a thousand times), else by its
 * correlation id. Device work whose id has no rank (pass 1 notes kernels and copies, not graph launches) is keyed
 * by its id in `nvtxById`.
 */
let nvtxMeta: Paged = 0;
let nvtxByRank = false;
let nvtxById: Paged = 0;

/** Starts a file: empty maps. */
export function corrBegin(): void {
  corrPlane = pagedNew(1, CORR_PAGE_BITS, CORR_MAX_PAGES);
  corrBits = 0;
  onePlane = 0;
  corrAny = false;
  nvtxMeta = 0;
  nvtxByRank = false;
  nvtxById = 0;
  lastPagesReset();
}

/** Notes `meta` (host-plane event metadata id of an NVTX range) as the innermost range around the launch of `corr`. */
export function nvtxSet(corr: u32, meta: u32): void {
  if (nvtxMeta == 0) {
    nvtxMeta = pagedNew(2, CORR_PAGE_BITS, CORR_MAX_PAGES);
    nvtxByRank = rangesRankKeys(); // pass 1 is over: its bits are complete
  }
  let a: usize;
  if (!nvtxByRank) a = cachedSlot(NVTX_W, nvtxMeta, corr, 2, true);
  else {
    const k = rangesRank(corr);
    if (k >= 0) a = cachedSlot(NVTX_W, nvtxMeta, <u64>k, 2, true);
    else {
      if (nvtxById == 0) nvtxById = pagedNew(2, CORR_PAGE_BITS, CORR_MAX_PAGES);
      a = cachedSlot(NVTX_ID_W, nvtxById, corr, 2, true);
    }
  }
  if (a != 0) store<u32>(a, meta);
}

/** nvtx_range stat id of device work `corr` on the current plane, or 0. */
// @ts-ignore: decorator
@inline export function nvtxStat(corr: u32): u32 {
  const map = curPlane.nvtxMap;
  if (map == 0 || corr == 0 || nvtxMeta == 0) return 0;
  let a: usize;
  if (!nvtxByRank) a = cachedSlot(NVTX_R, nvtxMeta, corr, 2, false);
  else {
    const k = rangesRank(corr);
    if (k >= 0) a = cachedSlot(NVTX_R, nvtxMeta, <u64>k, 2, false);
    else a = nvtxById == 0 ? 0 : cachedSlot(NVTX_ID_R, nvtxById, corr, 2, false);
  }
  const meta = a == 0 ? 0 : load<u32>(a);
  return meta == 0 ? 0 : load<u32>(map + (<usize>meta << 2));
}

/** Device plane index + 1 of the device work of `corr`, or 0. */
// @ts-ignore: decorator
@inline export function corrGet(corr: u32): u32 {
  if (corr == 0 || onePlane == 0) return 0;
  if (onePlane != 0xffff) {
    const b = cachedSlot(PLANE_R, corrBits, <u64>(corr >>> 3), 0, false);
    return b != 0 && (load<u8>(b) & (<u8>1 << <u8>(corr & 7))) != 0 ? onePlane : 0;
  }
  const a = cachedSlot(PLANE_R, corrPlane, corr, 1, false);
  return a == 0 ? 0 : <u32>load<u16>(a);
}
