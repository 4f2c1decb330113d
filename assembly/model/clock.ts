/**
 * Vendor timestamps → Unix-epoch ns, from the CLOCK anchors of the dump (docs/format.md §2).
 *
 * - Start and end anchors: offset at the start plus linear drift correction between them.
 * - Start anchor only: offset alone.
 * - No anchor: the vendor clock is taken as CLOCK_REALTIME (default CUPTI on Linux).
 * - Same-rate clocks ({@link setClockSameRate}, e.g. rocprofiler-sdk's CLOCK_BOOTTIME, which the kernel keeps at
 *   CLOCK_REALTIME's rate): the start offset alone, whatever the end anchor says (a drift fitted over a short run
 *   would only turn read jitter into a rate error).
 * When the vendor clock reads within 10 µs of CLOCK_REALTIME at every anchor it *is* CLOCK_REALTIME (the
 * anchors only show the read-to-read gap), and timestamps are kept as they are, to the ns.
 */
import * as S from "./session";

const SAME_CLOCK_NS: i64 = 10_000;

let mode: i32 = 0; // 0 identity, 1 offset, 2 linear
let offset: i64 = 0;
let baseVendor: u64 = 0;
let baseReal: u64 = 0;
let slope: f64 = 1.0;
let sameRate = false;

/** Declares that the vendor clock runs at CLOCK_REALTIME's rate (set by a decoder before pass 1 ends). */
export function setClockSameRate(on: bool): void {
  sameRate = on;
}

/** Computes the mapping from the session's anchors; call once after pass 1. */
export function clockPrepare(): void {
  mode = 0;
  offset = 0;
  slope = 1.0;
  if (!S.haveStartAnchor) return;
  const d0 = <i64>(S.anchorStartReal - S.anchorStartVendor);
  if (!S.haveEndAnchor || sameRate || S.anchorEndVendor <= S.anchorStartVendor) {
    if (d0 > SAME_CLOCK_NS || d0 < -SAME_CLOCK_NS) {
      mode = 1;
      offset = d0;
    }
    return;
  }
  const d1 = <i64>(S.anchorEndReal - S.anchorEndVendor);
  if (d0 <= SAME_CLOCK_NS && d0 >= -SAME_CLOCK_NS && d1 <= SAME_CLOCK_NS && d1 >= -SAME_CLOCK_NS) return;
  mode = 2;
  baseVendor = S.anchorStartVendor;
  baseReal = S.anchorStartReal;
  slope = <f64>(S.anchorEndReal - S.anchorStartReal) / <f64>(S.anchorEndVendor - S.anchorStartVendor);
  if (!(slope > 0.5 && slope < 2.0)) {
    // Anchors that disagree this much are broken: fall back to the start offset.
    mode = 1;
    offset = d0;
  }
}

/**
 * Unix-epoch ns of vendor timestamp `v` (0 stays 0: "not collected"). Saturates at 1 and 2^64 − 1 instead of
 * wrapping, so the mapping keeps the order of any two times even with absurd anchors (a CLOCK_REALTIME near 1970).
 */
// @ts-ignore: decorator
@inline export function toUnix(v: u64): u64 {
  if (v == 0 || mode == 0) return v;
  if (mode == 1) {
    if (offset >= 0) {
      const r = v + <u64>offset;
      return r < v ? 0xffffffffffffffff : r;
    }
    const d = <u64>(-offset);
    return v > d ? v - d : 1;
  }
  const dv = <f64><i64>(v - baseVendor);
  const r = <f64>baseReal + Math.round(dv * slope);
  return r < 1.0 ? 1 : r >= 18446744073709551615.0 ? 0xffffffffffffffff : exactReal(dv);
}

/** baseReal + round(dv · slope) in integers (exact to the ns), once the f64 estimate showed it does not wrap. */
// @ts-ignore: decorator
@inline function exactReal(dv: f64): u64 {
  return <u64>(<i64>baseReal + <i64>Math.round(dv * slope));
}
