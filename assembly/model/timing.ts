/**
 * The timestamp rule of every vendor decoder (CUPTI, rocprofiler-sdk, PTI and Synapse): what a record
 * whose start or end is unknown, inverted or far outside the run becomes. Decoders never judge times themselves:
 * pass 1 hands every timed record to {@link timingNote}, the end of pass 1 calls {@link timingFinish}, and pass 2
 * asks {@link timingCheck} with the same two numbers and gets the same answer.
 *
 * Times are vendor ns, before clock alignment (model/clock.ts maps them later, keeping their order). An instant
 * (one timestamp) is noted as start = end. The outcomes (docs/errors.md, "Timestamps"):
 *  - start unknown (0): dropped, BAD_TIMESTAMP;
 *  - end unknown (0), start valid: work unfinished at the final (forced) flush. Kept as a zero-length event at its
 *    start, flagged {@link EvFlag.INCOMPLETE}, INCOMPLETE_RECORD (not a loss); it never adds time anywhere;
 *  - end before start: dropped, NEGATIVE_DURATION;
 *  - a time outside the run's window: dropped, BAD_TIMESTAMP.
 *
 * The run's window, on a grid of {@link CELL_SHIFT} cells (2^36 ns ≈ 68.7 s) so that pass 1 can count exactly
 * without knowing the window while it reads (the END clock anchor comes last):
 *  - lower bound: the earliest CLOCK anchor (start, periodic or end) minus {@link BOUND_NS} (1 h); without a start
 *    anchor (damaged, or set aside by model/clock.ts), from that anchor backward over the cells where records start,
 *    across empty stretches of at most 1 h, when that reaches further;
 *  - upper bound with an END anchor: the latest anchor plus 1 h (the collector reads it after its last flush);
 *  - upper bound without one (the collector died): from the latest anchor, forward over the cells where records
 *    start, across empty stretches of at most 1 h; ends may reach 1 h past the last such cell;
 *  - no anchor at all: the same walk both ways from the cell where most records start; so too without an END anchor
 *    when the start anchor (and every periodic one) lies over 1 h before every record and the HEADER's collector
 *    start confirms it (a run that waited before its first device work and died: model/clock.ts clockSettle); that
 *    anchor still aligns the times. So too when the only anchor was set aside for lying that far from every record
 *    (BAD_CLOCK_ANCHOR 7), whatever periodic anchors remain.
 * A bound is thus 1 h to 1 h + 68.7 s past the anchor. Every kept event lies in the window, so none can be longer
 * than the window, and the time base (the earliest kept timestamp, {@link validMin}) never comes from a dropped one.
 *
 * Memory: one 40-byte entry (and a 16-byte table slot) per distinct (start cell, end cell) pair, about two per 69 s
 * of run whatever the number of records; consecutive records with the same pair skip the table. The table of start
 * cells is built once, at the end of pass 1.
 */
import * as S from "./session";
import { Ev, EvFlag } from "./event";
import { toUnix } from "./clock";
import { Table, tableNew, tableUpsert, tableFind, tableSlots, tableKeyAt, tableValueAt, inserted } from "../util/hash_table";
import { arenaAlloc } from "../util/arena";
import { Warn } from "../util/error";
import { warn } from "../util/diag";

/** How far outside the anchors a time may be, in ns: 1 hour. */
export const BOUND_NS: u64 = 3_600_000_000_000;
/** Grid cell of the window: t >> CELL_SHIFT (2^36 ns ≈ 68.7 s). */
export const CELL_SHIFT: u64 = 36;
/** Cells in {@link BOUND_NS}, rounded up (53). */
const GAP_CELLS: u64 = (BOUND_NS + (<u64>1 << CELL_SHIFT) - 1) >> CELL_SHIFT;
/** Key bit of an incomplete record (its end cell is its start cell). */
const KEY_INCOMPLETE: u64 = <u64>1 << 62;

/** Outcome of {@link timingCheck}. */
export const enum Timing {
  /** Both times valid: emit as is. */
  OK = 0,
  /** Valid start, end unknown: emit with end = start and EvFlag.INCOMPLETE. */
  INCOMPLETE = 1,
  /** Drop the record (counted in pass 1). */
  DROP = 2,
}

// Pair entry (40 B): u64 records, u64 file offset of the first, u64 min time, u64 max time, u32 kind of the first.
const ENTRY: usize = 40;
let pairs: Table = 0;
let starts: Table = 0; // start cell → records starting there (built by timingFinish)
// Consecutive records nearly always share their cells: the last pair's key and entry skip the table lookup.
let lastKey: u64 = 0xffffffffffffffff;
let lastEntry: usize = 0;
let lo: u64 = 0; // window, in cells (inclusive)
let hi: u64 = 0xffffffffffffffff;
// The window comes from the records alone, not the anchors (model/clock.ts: a start anchor read long before them).
let fromRecords = false;
// BAD_TIMESTAMP found while reading (start unknown): count, first offset and kind; merged at timingFinish.
let unknownCount: u64 = 0;
let unknownOffset: u64 = 0;
let unknownKind: u32 = 0;

/** Earliest and latest time of the kept records (vendor ns; 0 when none), set by {@link timingFinish}. */
export let validMin: u64 = 0;
export let validMax: u64 = 0;

// @ts-ignore: decorator
@inline function cell(t: u64): u64 {
  return t >> CELL_SHIFT;
}

/** Starts a file (pass 1): forgets everything. */
export function timingReset(): void {
  pairs = tableNew(64);
  starts = 0;
  lastKey = 0xffffffffffffffff;
  lastEntry = 0;
  lo = 0;
  hi = 0xffffffffffffffff;
  fromRecords = false;
  unknownCount = 0;
  unknownOffset = 0;
  unknownKind = 0;
  validMin = 0;
  validMax = 0;
}

/**
 * Pass 1: notes one timed record of vendor kind `kind` at file offset `at` (vendor ns; an instant passes its one
 * time twice). Counts what needs no window (unknown start, end before start) and keeps the rest for
 * {@link timingFinish}. Returns false when the record is already known to be dropped.
 */
// @ts-ignore: decorator
@inline export function timingNote(start: u64, end: u64, kind: u32, at: u64): bool {
  // The common case inline: a complete record in the same (start cell, end cell) pair as the one before.
  if (start != 0 && end >= start && ((cell(start) << 32) | cell(end)) == lastKey) {
    const e = lastEntry;
    if (start < load<u64>(e, 16)) store<u64>(e, start, 16);
    if (end > load<u64>(e, 24)) store<u64>(e, end, 24);
    store<u64>(e, load<u64>(e) + 1);
    S.noteBufferTs(start);
    return true;
  }
  return timingNoteAny(start, end, kind, at);
}

/** {@link timingNote} for any record. */
function timingNoteAny(start: u64, end: u64, kind: u32, at: u64): bool {
  if (start == 0) {
    if (unknownCount == 0 || at < unknownOffset) {
      unknownOffset = at;
      unknownKind = kind;
    }
    unknownCount++;
    return false;
  }
  let key: u64;
  let top = end;
  if (end == 0) {
    key = (cell(start) << 32) | cell(start) | KEY_INCOMPLETE;
    top = start;
  } else if (end < start) {
    warn(Warn.NEGATIVE_DURATION, at, kind);
    return false;
  } else key = (cell(start) << 32) | cell(end);
  let e = lastEntry;
  if (key != lastKey) {
    const slot = tableUpsert(pairs, key);
    e = <usize>load<u64>(slot);
    if (inserted) {
      e = arenaAlloc(ENTRY);
      store<u64>(e, 0);
      store<u64>(e, at, 8);
      store<u64>(e, start, 16);
      store<u64>(e, top, 24);
      store<u32>(e, kind, 32);
      store<u64>(slot, e);
    }
    lastKey = key;
    lastEntry = e;
  }
  if (start < load<u64>(e, 16)) store<u64>(e, start, 16);
  if (top > load<u64>(e, 24)) store<u64>(e, top, 24);
  store<u64>(e, load<u64>(e) + 1);
  S.noteBufferTs(start);
  return true;
}

/** True when some record starts in cell `c`. */
// @ts-ignore: decorator
@inline function occupied(c: u64): bool {
  return tableFind(starts, c) != 0;
}

/** Last cell reached from `c` going forward over occupied cells with gaps of at most GAP_CELLS. */
function walkForward(c: u64): u64 {
  while (true) {
    let next: u64 = 0;
    for (let d: u64 = GAP_CELLS; d >= 1; d--) {
      if (occupied(c + d)) {
        next = c + d;
        break;
      }
    }
    if (next == 0) break;
    c = next;
  }
  return c;
}

/** First cell reached from `c` going backward (see {@link walkForward}). */
function walkBackward(c: u64): u64 {
  while (true) {
    let next: u64 = 0xffffffffffffffff;
    for (let d: u64 = GAP_CELLS; d >= 1; d--) {
      if (d <= c && occupied(c - d)) {
        next = c - d;
        break;
      }
    }
    if (next == 0xffffffffffffffff) break;
    c = next;
  }
  return c;
}

/** End of pass 1: builds the table of records per start cell from the pairs (once per file). */
function timingStarts(): void {
  if (starts != 0) return;
  starts = tableNew(64);
  const np = tableSlots(pairs);
  for (let i: u32 = 0; i < np; i++) {
    const k = tableKeyAt(pairs, i);
    if (k == 0xffffffffffffffff) continue;
    const s = tableUpsert(starts, (k >> 32) & 0x3fffffff);
    store<u64>(s, load<u64>(s) + load<u64>(<usize>tableValueAt(pairs, i)));
  }
}

// Where the record start cells lie against cell `c`: bit 0 any, bit 1 one within BOUND_NS, bit 2 one at or before c.
function startsAgainst(c: u64): u32 {
  timingStarts();
  let f: u32 = 0;
  const n = tableSlots(starts);
  for (let i: u32 = 0; i < n; i++) {
    const k = tableKeyAt(starts, i);
    if (k == 0xffffffffffffffff) continue;
    f |= 1;
    if ((k >= c ? k - c : c - k) <= GAP_CELLS) f |= 2;
    if (k <= c) f |= 4;
  }
  return f;
}

/**
 * End of pass 1, before {@link timingFinish} (model/clock.ts, judging CLOCK anchors): true when the dump has records
 * with a known start and none of them starts within {@link BOUND_NS} (1 h, in whole cells) of vendor time `v`. An
 * anchor that far from every record would put them all outside the run. Once per anchor: one look at each cell.
 */
export function timingFarFromRecords(v: u64): bool {
  return (startsAgainst(cell(v)) & 3) == 1;
}

/**
 * End of pass 1 (model/clock.ts, the only anchor left): true when the dump has timed records and the window that the
 * anchors in use make ({@link timingFinish}: periodic ones included, on its own cells) would drop every one of them.
 */
export function timingAnchorsMissRecords(): bool {
  timingStarts();
  if (!S.haveAnyAnchor) return false;
  anchorWindow();
  let any = false;
  const n = tableSlots(pairs);
  for (let i: u32 = 0; i < n; i++) {
    const k = tableKeyAt(pairs, i);
    if (k == 0xffffffffffffffff) continue;
    any = true;
    if (inWindow((k >> 32) & 0x3fffffff, k & 0xffffffff)) {
      any = false;
      break;
    }
  }
  // timingFinish fixes the window once the anchors are settled.
  lo = 0;
  hi = 0xffffffffffffffff;
  return any;
}

/**
 * End of pass 1, before {@link timingFinish} (model/clock.ts): true when the dump has records with a known start and
 * every one of them starts in a later cell than vendor time `v` (the start anchor of a run that waited before its
 * first device work).
 */
export function timingRecordsAfter(v: u64): bool {
  return (startsAgainst(cell(v)) & 5) == 1;
}

/**
 * End of pass 1, before {@link timingFinish} (model/clock.ts): the run's window is found from the records alone, as
 * for a dump without anchors, while the anchors still align the times (a start anchor read over 1 h before the first
 * record, with no END anchor to bound the run).
 */
export function timingWindowFromRecords(): void {
  fromRecords = true;
}

/** The run's window from the anchors in use (at least one), into lo / hi (the table of start cells built). */
function anchorWindow(): void {
  const first = S.anchorMinVendor;
  const last = S.anchorMaxVendor;
  lo = first > BOUND_NS ? cell(first - BOUND_NS) : 0;
  if (!S.haveStartAnchor) {
    // No start anchor (damaged, or set aside by model/clock.ts): the run reaches back as long as records keep
    // coming before the first anchor, as it reaches forward past the last one without an END anchor.
    const back = walkBackward(cell(first));
    if (back < lo) lo = back;
  }
  const lastPlus = last <= 0xffffffffffffffff - BOUND_NS ? last + BOUND_NS : 0xffffffffffffffff;
  if (S.haveEndAnchor) hi = cell(lastPlus);
  else {
    hi = walkForward(cell(last)) + GAP_CELLS;
    if (hi < cell(lastPlus)) hi = cell(lastPlus);
  }
}

/**
 * End of pass 1: fixes the run's window, counts the records outside it (BAD_TIMESTAMP, with the offset and kind of
 * the first one in the file) and the incomplete ones inside (INCOMPLETE_RECORD), and sets {@link validMin} /
 * {@link validMax} and the session's time span from the kept records only.
 */
export function timingFinish(): void {
  timingStarts();
  if (S.haveAnyAnchor && !fromRecords) anchorWindow();
  else {
    // No anchor: the walk starts at the cell where most records start (ties: the earliest).
    let best: u64 = 0;
    let bestCell: u64 = 0;
    const n = tableSlots(starts);
    for (let i: u32 = 0; i < n; i++) {
      const k = tableKeyAt(starts, i);
      if (k == 0xffffffffffffffff) continue;
      const c = tableValueAt(starts, i);
      if (c > best || (c == best && k < bestCell)) {
        best = c;
        bestCell = k;
      }
    }
    if (best == 0) {
      lo = 0;
      hi = 0xffffffffffffffff;
    } else {
      lo = walkBackward(bestCell);
      hi = walkForward(bestCell) + GAP_CELLS;
    }
  }

  let badCount = unknownCount;
  let badOffset = unknownOffset;
  let badKind = unknownKind;
  let incCount: u64 = 0;
  let incOffset: u64 = 0;
  let incKind: u32 = 0;
  validMin = 0;
  validMax = 0;
  const n = tableSlots(pairs);
  for (let i: u32 = 0; i < n; i++) {
    const k = tableKeyAt(pairs, i);
    if (k == 0xffffffffffffffff) continue;
    const e = <usize>tableValueAt(pairs, i);
    const count = load<u64>(e);
    const at = load<u64>(e, 8);
    const kind = load<u32>(e, 32);
    if (!inWindow((k >> 32) & 0x3fffffff, k & 0xffffffff)) {
      if (badCount == 0 || at < badOffset) {
        badOffset = at;
        badKind = kind;
      }
      badCount += count;
      continue;
    }
    if ((k & KEY_INCOMPLETE) != 0) {
      if (incCount == 0 || at < incOffset) {
        incOffset = at;
        incKind = kind;
      }
      incCount += count;
    }
    const mn = load<u64>(e, 16);
    const mx = load<u64>(e, 24);
    if (validMin == 0 || mn < validMin) validMin = mn;
    if (mx > validMax) validMax = mx;
  }
  if (badCount != 0) warn(Warn.BAD_TIMESTAMP, badOffset, badKind, badCount);
  if (incCount != 0) warn(Warn.INCOMPLETE_RECORD, incOffset, incKind, incCount);
  S.setTimeSpan(validMin, validMax);
}

// @ts-ignore: decorator
@inline function inWindow(startCell: u64, endCell: u64): bool {
  return startCell >= lo && endCell <= hi;
}

/**
 * After pass 1: true when the run's window drops every record of a set whose latest start is `maxStart` and earliest
 * end (a never closed one's: its start) `minEnd`: all start before the window, or all end after it.
 */
export function timingAllOutside(maxStart: u64, minEnd: u64): bool {
  return cell(maxStart) < lo || cell(minEnd) > hi;
}

/**
 * Pass 2: the outcome for a record with these vendor times (the same answer pass 1 counted). Warns nothing: every
 * outcome was counted in pass 1.
 */
export function timingCheck(start: u64, end: u64): Timing {
  if (start == 0) return Timing.DROP;
  if (end == 0) return inWindow(cell(start), cell(start)) ? Timing.INCOMPLETE : Timing.DROP;
  if (end < start) return Timing.DROP;
  return inWindow(cell(start), cell(end)) ? Timing.OK : Timing.DROP;
}

/**
 * Pass 2, for decoders: sets `e`'s times (Unix ns) from vendor `start`/`end` by the rule of {@link timingCheck};
 * false when the record is dropped (counted in pass 1). A record without an end becomes a zero-length event at its
 * start, flagged {@link EvFlag.INCOMPLETE}.
 */
// @ts-ignore: decorator
@inline export function timingApply(e: Ev, start: u64, end: u64): bool {
  // The common case inline, in one test: both times known, in order and inside the window (timingCheck's OK).
  if (start != 0 && end >= start && cell(start) >= lo && cell(end) <= hi) {
    e.start = toUnix(start);
    e.end = toUnix(end);
    return true;
  }
  return timingApplyAny(e, start, end);
}

/** {@link timingApply} for any times. */
function timingApplyAny(e: Ev, start: u64, end: u64): bool {
  const t = timingCheck(start, end);
  if (t == Timing.DROP) return false;
  e.start = toUnix(start);
  if (t == Timing.INCOMPLETE) {
    e.end = e.start;
    e.flags |= EvFlag.INCOMPLETE;
  } else e.end = toUnix(end);
  return true;
}
