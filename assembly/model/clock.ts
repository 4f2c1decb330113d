/**
 * Vendor timestamps → Unix-epoch ns, from the CLOCK anchors of the dump (docs/format.md §2).
 *
 * - Start and end anchors: offset at the start plus linear drift correction between them (a drift of at most
 *   {@link MAX_DRIFT}: beyond it, the start offset alone).
 * - One anchor (start, or end when the start anchor is missing or set aside): its offset alone.
 * - No anchor: the vendor clock is taken as CLOCK_REALTIME (default CUPTI on Linux).
 * - Same-rate clocks ({@link setClockSameRate}, e.g. rocprofiler-sdk's CLOCK_BOOTTIME, which the kernel keeps at
 *   CLOCK_REALTIME's rate): the start offset alone, whatever the end anchor says (a drift fitted over a short run
 *   would only turn read jitter into a rate error).
 * When the vendor clock reads within 10 µs of CLOCK_REALTIME at every anchor it *is* CLOCK_REALTIME (the
 * anchors only show the read-to-read gap), and timestamps are kept as they are, to the ns.
 *
 * An implausible anchor is set aside, with BAD_CLOCK_ANCHOR naming its chunk and why (docs/errors.md, "Clock
 * anchors"), never used: one damaged anchor must not move every event to 1970. Judged once per anchor, never per
 * event: on its own values as it is read ({@link clockAnchor}), against the other anchor and the records at the end
 * of pass 1 ({@link clockSettle}). A mapping that still clamps kept times is said once (CLOCK_CLAMPED,
 * {@link clockPrepare}).
 */
import * as S from "./session";
import { timingFarFromRecords, timingAnchorsMissRecords, timingRecordsAfter, timingWindowFromRecords, BOUND_NS, validMin, validMax } from "./timing";
import { Warn } from "../util/error";
import { warn } from "../util/diag";

const SAME_CLOCK_NS: i64 = 10_000;
/**
 * How far apart two anchors' clocks may advance and still agree whatever their rates (1 ms): the two readings of an
 * anchor can be a preemption apart, and over a run of a few ms that alone looks like a rate 2× off. The mapping
 * itself never fits a rate that far off (clockPrepare).
 */
const READ_GAP_NS: f64 = 1_000_000;
/**
 * The most two clocks' rates can differ by drift (0.1 %, 1000 ppm: oscillators and NTP slewing stay within a few
 * hundred ppm). Anchors that agree at rates further apart (up to 2×, {@link anchorsAgree}) differ by their read gap
 * over a short run: fitting that as a rate would stretch every duration by it, so the start offset aligns alone.
 */
const MAX_DRIFT: f64 = 0.001;
/** Vendor and CLOCK_REALTIME readings at or past 2^63 ns (year 2262) are no time a collector reads. */
const TIME_LIMIT: u64 = 0x8000000000000000;

/** Why an anchor is set aside: BAD_CLOCK_ANCHOR's detail (docs/errors.md, src/core/codes.ts). */
export const enum AnchorFault {
  /** Its vendor timestamp is 0 (the vendors' "unknown"). */
  VENDOR_ZERO = 1,
  /** Its vendor timestamp is 2^63 ns or more. */
  VENDOR_HUGE = 2,
  /** Its CLOCK_REALTIME is 0 or 2^63 ns or more: no Unix time from 1970 to 2262. */
  REAL = 3,
  /** The start and end anchors disagree, and this one lies over 1 h from every record (the other does not). */
  FAR_FROM_RECORDS = 4,
  /** They disagree, and this start anchor's CLOCK_REALTIME lies over 1 h from the HEADER's collector start. */
  FAR_FROM_HEADER = 5,
  /** They disagree, and nothing shows the start anchor wrong: this end anchor is set aside, the start one kept. */
  END_DISAGREES = 6,
  /**
   * The only anchor left (and every periodic one) lies over 1 h from every record, none between them: it would have
   * put them all outside the run. Not a start anchor the HEADER's collector start confirms with every record after it.
   */
  ALONE_FAR = 7,
}

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

/**
 * Pass 1: a CLOCK anchor read from the chunk at file offset `at`. One whose values are implausible on their own is
 * set aside (BAD_CLOCK_ANCHOR): a later anchor of the same kind can then take its place.
 */
export function clockAnchor(which: u32, vendorNs: u64, realNs: u64, at: u64): void {
  const why = vendorNs == 0 ? AnchorFault.VENDOR_ZERO
    : vendorNs >= TIME_LIMIT ? AnchorFault.VENDOR_HUGE
    : realNs == 0 || realNs >= TIME_LIMIT ? AnchorFault.REAL : 0;
  if (why != 0) warn(Warn.BAD_CLOCK_ANCHOR, at, why);
  else S.setAnchor(which, vendorNs, realNs, at);
}

/** True when the two clocks advance alike from (v0, r0) to (v1, r1): within {@link READ_GAP_NS}, or at rates under 2× apart. */
function anchorsAgree(v0: u64, r0: u64, v1: u64, r1: u64): bool {
  // Every reading is below 2^63 (clockAnchor): the differences fit an i64, their difference an f64.
  const dv = <i64>(v1 - v0);
  const dr = <i64>(r1 - r0);
  if (Math.abs(<f64>dr - <f64>dv) <= READ_GAP_NS) return true;
  if (dv <= 0 || dr <= 0) return false;
  const s = <f64>dr / <f64>dv;
  return s > 0.5 && s < 2.0;
}

function setAside(which: u32, why: AnchorFault): void {
  warn(Warn.BAD_CLOCK_ANCHOR, which == 0 ? S.anchorStartAt : S.anchorEndAt, <u64>why);
  S.dropAnchor(which);
}

/**
 * End of pass 1, before the run's window is fixed (model/timing.ts timingFinish): sets aside the start or end
 * anchor that the other one, the records and the HEADER show wrong (BAD_CLOCK_ANCHOR).
 *  - Start and end anchors that disagree (their clocks advance in opposite directions or at rates 2× apart, beyond
 *    {@link READ_GAP_NS}, 1 ms): the one lying over 1 h from every record when the other does not; else the start
 *    anchor when its CLOCK_REALTIME lies over 1 h from the HEADER's collector start (read just before it); else the
 *    end anchor.
 *  - The only anchor left, when the window it and the periodic anchors make would drop every record — unless it is
 *    a start anchor that the HEADER confirms with every record after it (a run that waited before its first device
 *    work): that one aligns the times. Either way the run's window then comes from the records.
 */
export function clockSettle(): void {
  if (S.haveStartAnchor && S.haveEndAnchor &&
    !anchorsAgree(S.anchorStartVendor, S.anchorStartReal, S.anchorEndVendor, S.anchorEndReal)) {
    const farStart = timingFarFromRecords(S.anchorStartVendor);
    const farEnd = timingFarFromRecords(S.anchorEndVendor);
    if (farStart != farEnd) setAside(farStart ? 0 : 1, AnchorFault.FAR_FROM_RECORDS);
    else if (S.startNs != 0 && !nearHeaderStart(S.anchorStartReal)) setAside(0, AnchorFault.FAR_FROM_HEADER);
    else setAside(1, AnchorFault.END_DISAGREES);
  }
  if (S.haveStartAnchor != S.haveEndAnchor) {
    const which: u32 = S.haveStartAnchor ? 0 : 1;
    // The window that anchor and the periodic ones make (model/timing.ts), on its own cells: the records near any
    // anchor or between them are in it; one just outside it (a record in the cell next to the window's edge, 1 h
    // and a minute from the anchor) is not, though within 1 h in whole cells of it.
    if (timingAnchorsMissRecords()) {
      if (which != 0 || !startAnchorWaited()) setAside(which, AnchorFault.ALONE_FAR);
      // Either way the window comes from the records: periodic anchors left would miss them all as well.
      timingWindowFromRecords();
    }
  }
}

/**
 * True when the start anchor, alone and over 1 h from every record, is what a run that waited over an hour before
 * its first device work (and died before its END anchor) leaves: every record comes after it and its CLOCK_REALTIME
 * is the HEADER's collector start's (within 1 h; read just after it). It then aligns the times, and the run's window
 * comes from the records.
 */
function startAnchorWaited(): bool {
  return S.startNs != 0 && nearHeaderStart(S.anchorStartReal) && timingRecordsAfter(S.anchorStartVendor);
}

/** True when CLOCK_REALTIME `r` (ns) lies within 1 h of the HEADER's collector start (read just before the start anchor). */
function nearHeaderStart(r: u64): bool {
  return (r > S.startNs ? r - S.startNs : S.startNs - r) <= BOUND_NS;
}

/**
 * Computes the mapping from the session's anchors (those {@link clockSettle} kept); call after pass 1. `report`
 * (pass 1's call, after the run's window is fixed): a mapping that clamps a kept time (model/timing.ts validMin,
 * validMax: it is monotonic) is said once, CLOCK_CLAMPED.
 */
export function clockPrepare(report: bool = false): void {
  mode = 0;
  offset = 0;
  slope = 1.0;
  if (!S.haveStartAnchor && !S.haveEndAnchor) return;
  if (!S.haveStartAnchor || !S.haveEndAnchor || sameRate || S.anchorEndVendor <= S.anchorStartVendor) {
    const d = S.haveStartAnchor ? <i64>(S.anchorStartReal - S.anchorStartVendor) : <i64>(S.anchorEndReal - S.anchorEndVendor);
    if (d > SAME_CLOCK_NS || d < -SAME_CLOCK_NS) {
      mode = 1;
      offset = d;
    }
  } else {
    const d0 = <i64>(S.anchorStartReal - S.anchorStartVendor);
    const d1 = <i64>(S.anchorEndReal - S.anchorEndVendor);
    if (d0 > SAME_CLOCK_NS || d0 < -SAME_CLOCK_NS || d1 > SAME_CLOCK_NS || d1 < -SAME_CLOCK_NS) {
      mode = 2;
      baseVendor = S.anchorStartVendor;
      baseReal = S.anchorStartReal;
      slope = <f64>(S.anchorEndReal - S.anchorStartReal) / <f64>(S.anchorEndVendor - S.anchorStartVendor);
      if (!(Math.abs(slope - 1.0) <= MAX_DRIFT)) {
        // Rates further apart than drift (read jitter over too short a run to fit a rate): the start offset alone.
        mode = 1;
        offset = d0;
      }
    }
  }
  if (report && validMin != 0) {
    const why: u64 = (clampsLow(validMin) ? 1 : 0) | (clampsHigh(validMax) ? 2 : 0);
    if (why != 0) warn(Warn.CLOCK_CLAMPED, S.haveStartAnchor ? S.anchorStartAt : S.anchorEndAt, why);
  }
}

/** True when {@link toUnix} clamps `v` (≠ 0) to 1 ns: it maps to the epoch or before. */
function clampsLow(v: u64): bool {
  if (mode == 1) return offset < 0 && v <= <u64>(-offset);
  if (mode == 2) return <f64>baseReal + Math.round(<f64><i64>(v - baseVendor) * slope) < 1.0;
  return false;
}

/** True when {@link toUnix} clamps `v` to 2^64 − 1 ns. */
function clampsHigh(v: u64): bool {
  if (mode == 1) return offset >= 0 && v + <u64>offset < v;
  if (mode == 2) return <f64>baseReal + Math.round(<f64><i64>(v - baseVendor) * slope) >= 18446744073709551615.0;
  return false;
}

/**
 * Unix-epoch ns of vendor timestamp `v` (0 stays 0: "not collected"). Saturates at 1 and 2^64 − 1 instead of
 * wrapping, so the mapping keeps the order of any two times even with absurd anchors (a CLOCK_REALTIME near 1970);
 * {@link clockPrepare} says so (CLOCK_CLAMPED) when a kept time saturates.
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
