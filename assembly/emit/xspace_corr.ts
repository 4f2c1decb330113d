/**
 * Correlation-id maps of the XSpace writer: correlation id → device plane of its device work (for the `device_id`
 * stat of the launch call) and → the NVTX range open around its launch (the `nvtx_range` stat of the device work).
 * Paged direct arrays (util/paged.ts) indexed by correlation id.
 */
import { Paged, pagedNew, pagedSlot } from "../util/paged";
import { curPlane } from "./xspace_encode";

// correlation id → device plane index + 1 (one byte per id, pages of 64 Ki ids allocated on first use; util/paged.ts)
let corrPlane: Paged = 0;
const CORR_PAGE_BITS: u32 = 16;
// At most 1024 pages (64 Mi ids): 64 MiB for the u8 map, 256 MiB for the u32 NVTX map, whatever crafted sparse ids
// a dump holds.
const CORR_MAX_PAGES: u32 = 1024;
/** Whether any device work carried a correlation id (the host plane then gets the `device_id` stat). */
export let corrAny = false;

/** Notes that the device work of `corr` is on device plane index `planeIdx` (the first plane noted wins). */
export function corrSet(corr: u64, planeIdx: u32): void {
  if (corr == 0) return;
  const a = pagedSlot(corrPlane, corr, true);
  if (a == 0) return; // beyond the page cap (crafted ids): the flow is simply not linked
  if (load<u8>(a) == 0) store<u8>(a, <u8>(planeIdx + 1));
  corrAny = true;
}

/** correlation id → host-plane event metadata id of the innermost NVTX range around its launch (u32 per id). */
let nvtxMeta: Paged = 0;

/** Starts a file: empty maps. */
export function corrBegin(): void {
  corrPlane = pagedNew(0, CORR_PAGE_BITS, CORR_MAX_PAGES);
  corrAny = false;
  nvtxMeta = 0;
}

/** Notes `meta` (host-plane event metadata id of an NVTX range) as the innermost range around the launch of `corr`. */
export function nvtxSet(corr: u32, meta: u32): void {
  if (nvtxMeta == 0) nvtxMeta = pagedNew(2, CORR_PAGE_BITS, CORR_MAX_PAGES);
  const a = pagedSlot(nvtxMeta, corr, true);
  if (a != 0) store<u32>(a, meta);
}

/** nvtx_range stat id of device work `corr` on the current plane, or 0. */
export function nvtxStat(corr: u32): u32 {
  const map = curPlane.nvtxMap;
  if (map == 0 || corr == 0 || nvtxMeta == 0) return 0;
  const a = pagedSlot(nvtxMeta, corr, false);
  const meta = a == 0 ? 0 : load<u32>(a);
  return meta == 0 ? 0 : load<u32>(map + (<usize>meta << 2));
}

/** Device plane index + 1 of the device work of `corr`, or 0. */
export function corrGet(corr: u32): u32 {
  if (corr == 0) return 0;
  const a = pagedSlot(corrPlane, corr, false);
  return a == 0 ? 0 : <u32>load<u8>(a);
}
