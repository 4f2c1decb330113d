/**
 * Which processes have host events the output shows, for the Chrome lead (emit/chrome_meta.ts chromeLead, through
 * session.ts apiProcessSeen and firstApiPid): HTA reads a flow's link to the first event (index 0) as no link, so the
 * first event must be a process's name that events use.
 *
 * A host event is shown when its decoder keeps it (pass 2) and it is not hidden by default. Pass 1 knows the second
 * only in part: a time outside the run's window (model/timing.ts) drops the event, and the window is fixed only at
 * the end of pass 1. So pass 1 notes each shown candidate's process with its time cells (one entry per distinct
 * process and (start cell, end cell) pair, about two per 69 s of run and process), and {@link shownHostsFinish},
 * after timingFinish, keeps the processes with an entry inside the window, in the order of their first such event in
 * the file. Before, a process whose only calls lay outside the window (dropped, BAD_TIMESTAMP) became the lead.
 *
 * Memory: a 16-byte table slot per entry, on the per-file heap.
 */
import * as S from "./session";
import { CELL_SHIFT, Timing, timingCheck } from "./timing";
import { Table, tableNew, tableUpsert, tableSlots, tableKeyAt, tableValueAt, inserted } from "../util/hash_table";

/** The process of {@link noteShownHost} for decoders whose host events take the HEADER's process (ROCm, Gaudi). */
export const HEADER_PROCESS: u32 = 0xffffffff;
/** Processes told apart (their index in `pids`); a later one shares the last index, as session.ts's pid list does. */
const MAX: u32 = 255;
const pids = memory.data(<i32>MAX * 4);
let pidCount: u32 = 0;
// (process index << 56 | start cell << 28 | end cell) → file offset of the first such event.
let entries: Table = 0;
// The last entry noted: consecutive events nearly always share it (no table lookup, and no hiding test).
let lastPid: u32 = 0;
let lastKey: u64 = 0xffffffffffffffff;

// @ts-ignore: decorator
@inline function keyOf(index: u32, start: u64, end: u64): u64 {
  // Cells are t >> 36: 28 bits each. An event without an end (kept as an instant at its start) uses its start's.
  const sc = start >> CELL_SHIFT;
  const ec = end == 0 ? sc : end >> CELL_SHIFT;
  return (<u64>index << 56) | (sc << 28) | ec;
}

/** Starts a file (pass 1). */
export function shownHostsReset(): void {
  entries = tableNew(16);
  pidCount = 0;
  lastPid = 0;
  lastKey = 0xffffffffffffffff;
}

/**
 * Pass 1: whether a host event of process `pid` at these vendor times (ns) is already noted as the last one (the
 * caller skips its hiding test then). `pid` {@link HEADER_PROCESS}: the HEADER's process (decoders whose host events take it).
 */
// @ts-ignore: decorator
@inline export function shownHostNoted(pid: u32, start: u64, end: u64): bool {
  return pid == lastPid && lastKey != 0xffffffffffffffff && (lastKey & 0x00ffffffffffffff) == (keyOf(0, start, end));
}

/**
 * Pass 1: a host event of process `pid` ({@link HEADER_PROCESS}: the HEADER's process) the output shows if its times, vendor ns that
 * timingNote accepted, lie in the run's window; `at` is its file offset.
 */
export function noteShownHost(pid: u32, start: u64, end: u64, at: u64): void {
  let index: u32 = 0;
  while (index < pidCount && load<u32>(pids + (<usize>index << 2)) != pid) index++;
  if (index == pidCount) {
    if (pidCount < MAX) store<u32>(pids + (<usize>(pidCount++) << 2), pid);
    else index = MAX - 1;
  }
  const key = keyOf(index, start, end);
  lastPid = pid;
  lastKey = key;
  const slot = tableUpsert(entries, key);
  if (inserted || at < load<u64>(slot)) store<u64>(slot, at);
}

/**
 * End of pass 1, after timingFinish: hands session.ts the processes with a noted event inside the window, in the
 * order of their first such event in the file.
 */
export function shownHostsFinish(): void {
  // Per process index: the offset of its first event inside the window (u64 max: none).
  const first = memory.data(<i32>MAX * 8);
  for (let i: u32 = 0; i < pidCount; i++) store<u64>(first + (<usize>i << 3), 0xffffffffffffffff);
  const n = tableSlots(entries);
  for (let i: u32 = 0; i < n; i++) {
    const k = tableKeyAt(entries, i);
    if (k == 0xffffffffffffffff) continue;
    const index = <u32>(k >> 56);
    // Any time in the cell answers for all: the window is on the same grid (| 1: a cell of 0 is not "no time").
    const start = (((k >> 28) & 0x0fffffff) << CELL_SHIFT) | 1;
    const end = ((k & 0x0fffffff) << CELL_SHIFT) | 1;
    if (timingCheck(start, end) == Timing.DROP) continue;
    const at = tableValueAt(entries, i);
    if (at < load<u64>(first + (<usize>index << 3))) store<u64>(first + (<usize>index << 3), at);
  }
  // A few processes: picked in file order by repeated minimum.
  for (;;) {
    let best: u32 = 0xffffffff;
    let bestAt: u64 = 0xffffffffffffffff;
    for (let i: u32 = 0; i < pidCount; i++) {
      const at = load<u64>(first + (<usize>i << 3));
      if (at < bestAt) {
        bestAt = at;
        best = i;
      }
    }
    if (best == 0xffffffff) break;
    store<u64>(first + (<usize>best << 3), 0xffffffffffffffff);
    const pid = load<u32>(pids + (<usize>best << 2));
    if (pid == HEADER_PROCESS) S.noteHostShown();
    else S.noteShownApi(pid);
  }
}
