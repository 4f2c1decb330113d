/**
 * NVTX ranges and marks of the CUPTI decoder (NVIDIA CUDA): MARKER records (instant marks, range starts and ends,
 * matched by id) become INSTANT and RANGE events, MARKER_DATA colors them, ranges still open at the end are closed
 * at the last timestamp with a warning, and the device-stream spans model/ranges.ts projected become GPU_RANGE
 * events (Kineto's gpu_user_annotation).
 */
import { Ev, EvKind, EvFlag, evClear } from "../model/event";
import * as S from "../model/session";
import { toUnix } from "../model/clock";
import { Timing, timingCheck } from "../model/timing";
import { Warn } from "../util/error";
import { warn } from "../util/diag";
import { arenaAlloc } from "../util/arena";
import { emitEvent } from "../emit/dispatch";
import * as R from "../model/ranges";
import { stepOf } from "../model/steps";
import { Table, tableNew, tableUpsert, tableFind, tableSlots, tableKeyAt, tableValueAt } from "../util/hash_table";
import { K } from "./cupti_kinds";
import { emitProjectedSpans } from "./projected_spans";

/**
 * Open NVTX ranges: id → entry {namePtr u32, nameLen u32, domPtr u32, domLen u32, pid u32, tid u32, start u64, file
 * offset of the start record u64}.
 */
let markerOpen: usize = 0;
const MARK_ENTRY: usize = 40;

/** CUpti_ActivityFlag bits of a MARKER record. */
const MARKER_INSTANT: u32 = 1;
/** A range start (CUPTI_ACTIVITY_FLAG_MARKER_START). */
export const MARKER_START: u32 = 2;
/** A range end (CUPTI_ACTIVITY_FLAG_MARKER_END). */
export const MARKER_END: u32 = 4;

/** Pass 2 of one MARKER record of `size` bytes at r (file offset `at`): a mark, or a range opened or closed. */
export function marker(e: Ev, r: usize, size: u32, at: u64): void {
  if (markerOpen == 0) markerOpen = tableNew(64);
  if (size < 36) {
    warn(Warn.RECORD_TOO_SMALL, at, K.MARKER);
    return;
  }
  const flags = load<u32>(r, 4);
  const vts = load<u64>(r, 8);
  if (timingCheck(vts, vts) == Timing.DROP) return; // counted in pass 1 (model/timing.ts)
  const ts = toUnix(vts);
  const id = load<u32>(r, 16);
  const objKind = load<u32>(r, 20);
  const pid = objKind == 2 || objKind == 1 ? load<u32>(r, 24) : 0;
  const tid = objKind == 2 ? load<u32>(r, 28) : 0;
  let np: usize = 0;
  let nl: u32 = 0;
  let dp: usize = 0;
  let dl: u32 = 0;
  if ((flags & MARKER_END) == 0) {
    if (size >= 48) {
      const nptr = load<u64>(r, 40);
      if (nptr != 0) {
        np = S.stringDisplay(nptr, false);
        // displayLen is only set by a hit: a missing name is empty, not the previous lookup's length
        nl = np != 0 ? S.displayLen : 0;
        if (np == 0) warn(Warn.MISSING_STRING, at, <u32>nptr);
      }
    }
    if (size >= 56) {
      const dptr = load<u64>(r, 48);
      if (dptr != 0) {
        dp = S.stringDisplay(dptr, false);
        dl = dp != 0 ? S.displayLen : 0;
      }
    }
  }
  if ((flags & MARKER_INSTANT) != 0) {
    evClear(e);
    e.kind = EvKind.INSTANT;
    e.recordKind = K.MARKER;
    e.start = ts;
    e.end = ts;
    e.pid = pid;
    e.tid = tid;
    e.namePtr = np;
    e.nameLen = nl;
    e.domainPtr = dp;
    e.domainLen = dl;
    emitEvent(e);
    return;
  }
  if ((flags & MARKER_START) != 0) {
    const slot = tableUpsert(markerOpen, id);
    let m = <usize>load<u64>(slot);
    if (m == 0) {
      m = arenaAlloc(MARK_ENTRY);
      store<u64>(slot, m);
    }
    store<u32>(m, <u32>np);
    store<u32>(m, nl, 4);
    store<u32>(m, <u32>dp, 8);
    store<u32>(m, dl, 12);
    store<u32>(m, pid, 16);
    store<u32>(m, tid, 20);
    store<u64>(m, ts, 24);
    store<u64>(m, at, 32);
    return;
  }
  if ((flags & MARKER_END) != 0) {
    const slot = tableFind(markerOpen, id);
    const m: usize = slot == 0 ? 0 : <usize>load<u64>(slot);
    if (m == 0 || load<u64>(m, 24) == 0) {
      warn(Warn.UNMATCHED_RANGE_END, at, id);
      return;
    }
    rangeEvent(e, m, ts, id);
    store<u64>(m, 0, 24); // closed
  }
}

/** Range id → color | 1 << 32 (MARKER_DATA records with an ARGB color), made by the first one. */
let colorTable: Table = 0;
/** MARKER_DATA (pass 1: it may come after its range's END): remembers the color of range `id` (ARGB when flags has COLOR_ARGB = 2). */
export function markerData(id: u32, flags: u32, color: u32): void {
  if ((flags & 2) == 0) return;
  if (colorTable == 0) colorTable = tableNew(64);
  store<u64>(tableUpsert(colorTable, id), <u64>color | (<u64>1 << 32));
}

function rangeEvent(e: Ev, m: usize, endTs: u64, id: u32): void {
  evClear(e);
  e.color = rangeColor(id);
  e.kind = EvKind.RANGE;
  e.recordKind = K.MARKER;
  e.namePtr = <usize>load<u32>(m);
  e.nameLen = load<u32>(m, 4);
  e.domainPtr = <usize>load<u32>(m, 8);
  e.domainLen = load<u32>(m, 12);
  e.pid = load<u32>(m, 16);
  e.tid = load<u32>(m, 20);
  e.start = load<u64>(m, 24);
  e.end = endTs < e.start ? e.start : endTs;
  const step = stepOf(id);
  if (step >= 0) {
    e.flags |= EvFlag.STEP;
    e.stepNum = <u64>step;
  }
  emitEvent(e);
}

/**
 * End of pass 2 (through `e`, the decoder's event): the projected spans, then ranges still open at the last timestamp
 * closed (nothing lost), with a warning.
 */
export function nvtxFinish(e: Ev, lastTs: u64): void {
  emitProjectedSpans(e, K.MARKER);
  if (markerOpen == 0) return;
  const n = tableSlots(markerOpen);
  // One warning for them all, at the start record that comes first in the file (the table is in hash order).
  let count: u64 = 0;
  let first: u64 = 0xffffffffffffffff;
  let firstId: u64 = 0;
  for (let i: u32 = 0; i < n; i++) {
    if (tableKeyAt(markerOpen, i) == 0xffffffffffffffff) continue;
    const m = <usize>tableValueAt(markerOpen, i);
    if (m == 0 || load<u64>(m, 24) == 0) continue;
    count++;
    if (load<u64>(m, 32) < first) {
      first = load<u64>(m, 32);
      firstId = tableKeyAt(markerOpen, i);
    }
  }
  if (count != 0) warn(Warn.UNCLOSED_RANGE, first, firstId, count);
  for (let i: u32 = 0; i < n; i++) {
    if (tableKeyAt(markerOpen, i) == 0xffffffffffffffff) continue;
    const m = <usize>tableValueAt(markerOpen, i);
    if (m == 0 || load<u64>(m, 24) == 0) continue;
    rangeEvent(e, m, lastTs, <u32>tableKeyAt(markerOpen, i));
    store<u64>(m, 0, 24);
  }
}

/** Color of range `id` from MARKER_DATA (ARGB), or 0. */
export function rangeColor(id: u32): u32 {
  if (colorTable == 0) return 0;
  const p = tableFind(colorTable, id);
  return p == 0 ? 0 : <u32>load<u64>(p);
}


/** Forgets the open ranges and colors (after heap.reset()). */
export function nvtxReset(): void {
  markerOpen = 0;
  colorTable = 0;
}
