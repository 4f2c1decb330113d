/**
 * Rows of the timeline tables (emit/timeline.ts): one per (class, pid or device, tid or stream), numbered in
 * order of first appearance while the pass runs, written in Kineto's order at its end ({@link sortRows}).
 */
import { Recent, recentNew, recentGet, recentPut } from "../util/recent";
import * as S from "../model/session";
import { Table, tableNew, tableUpsert, inserted } from "../util/hash_table";
import { nameOfEntry } from "./timeline_names";

/** Row classes; rows are written ordered by (host/GPU, pid or device, tid or stream, class). */
export const enum RowClass {
  HOST_RANGES = 1,
  HOST_API = 2,
  HOST_OVERHEAD = 3,
  GPU_ANNOTATIONS = 8,
  GPU_STREAM = 9,
  GPU_SYNC = 10,
  GPU_CONTEXT_SYNC = 11,
  GPU_OVERHEAD = 12,
  /** One device counter's samples (Synapse 'C'): b is the counter's name id; after the device's other rows. */
  GPU_COUNTER = 13,
}

/** Rows beyond this share one overflow row (crafted input with millions of tids); fits the key's 14 row bits. */
export const MAX_ROWS: u32 = 16384;
const NONE: u32 = 0xffffffff;

let rowTables: usize = 0; // per row class (16 Table handles, created on first use): (a << 32 | b) → row index + 1
/**
 * MAX_ROWS × 32 B, by row index: u64 major sort key (GPU << 32 | a), u32 class, u32 a, u32 b, u32 name id,
 * u32 events, u32 0.
 */
export let rowKeys: usize = 0;
/** Rows so far. */
export let rowCount: u32 = 0;
/** Set once the {@link MAX_ROWS} cap put events on the overflow row (header flag 1). */
export let rowsCapped: bool = false;
// Recent (a << 32 | b) → class << 32 | row + 1 (kernels of four streams and the API thread alternate, so a last-row
// test alone missed on most events); a hit of another class is a miss.
let recentRows: Recent = 0;

/** Forgets every row (start of a timeline pass). */
export function rowsReset(): void {
  rowTables = heap.alloc(16 << 2);
  memory.fill(rowTables, 0, 16 << 2);
  rowKeys = heap.alloc(<usize>MAX_ROWS * 32);
  rowCount = 0;
  rowsCapped = false;
  recentRows = recentNew(6);
}

/**
 * Row index of (class, a, b), creating it (with its thread or stream name) when new, and counts one event on it.
 * Every 32-bit a and b counts. Inlined into the timeline's per-event path: a hit of the recent-rows cache is a
 * multiply and three loads (the last-row test before it missed on two events in three of the bench mix).
 */
// @ts-ignore: decorator
@inline export function rowOf(cls: u32, a: u32, b: u32): u32 {
  const key = (<u64>a << 32) | <u64>b;
  const v = recentGet(recentRows, key);
  const row = v != 0 && <u32>(v >> 32) == cls ? <u32>v - 1 : rowMiss(cls, a, b, key);
  const rk = rowKeys + (<usize>row << 5);
  store<u32>(rk, load<u32>(rk, 24) + 1, 24);
  return row;
}

/** {@link rowOf} past the recent-rows cache: {@link rowSlow}, then cached. */
function rowMiss(cls: u32, a: u32, b: u32, key: u64): u32 {
  const row = rowSlow(cls, a, b, key);
  recentPut(recentRows, key, (<u64>cls << 32) | (<u64>row + 1));
  return row;
}

/** {@link rowOf} past its caches: the class's table, a new row when the key is new. */
function rowSlow(cls: u32, a: u32, b: u32, key: u64): u32 {
  let row: u32;
  const ta = rowTables + (<usize>(cls & 15) << 2);
  if (load<usize>(ta) == 0) store<usize>(ta, tableNew(16));
  const slot = tableUpsert(load<usize>(ta), key);
  if (!inserted) row = <u32>(load<u64>(slot) - 1);
  else if (rowCount >= MAX_ROWS) {
    // Past the cap everything shares the last row.
    rowsCapped = true;
    row = MAX_ROWS - 1;
    store<u64>(slot, <u64>row + 1);
  } else {
    row = rowCount++;
    store<u64>(slot, <u64>row + 1);
    const r = rowKeys + (<usize>row << 5);
    const gpu: u64 = cls >= <u32>RowClass.GPU_ANNOTATIONS ? 1 : 0;
    // Sort order (rowAfter): host before GPU, then pid/device, tid/stream (context-wide rows last), class.
    store<u64>(r, (gpu << 32) | <u64>a);
    store<u32>(r, cls, 8);
    store<u32>(r, a, 12);
    store<u32>(r, b, 16);
    let nm: u32 = NONE;
    if (cls == <u32>RowClass.HOST_API || cls == <u32>RowClass.HOST_RANGES) nm = nameOfEntry(S.threadName(a, b));
    else if (cls == <u32>RowClass.GPU_STREAM) nm = nameOfEntry(S.streamName(a, b));
    else if (cls == <u32>RowClass.GPU_COUNTER) nm = b;
    store<u32>(r, nm, 20);
    store<u32>(r, 0, 24);
    store<u32>(r, 0, 28);
  }
  return row;
}

/** Events on row `row`. */
// @ts-ignore: decorator
@inline export function rowEvents(row: u32): u32 {
  return load<u32>(rowKeys + (<usize>row << 5), 24);
}

/**
 * Whether row u sorts after row v: by (host/GPU, pid or device), then counters after the other rows (Perfetto's
 * counter tracks below the device's work), then tid or stream (a counter's name id), then class.
 */
function rowAfter(u: u32, v: u32): bool {
  const ru = rowKeys + (<usize>u << 5);
  const rv = rowKeys + (<usize>v << 5);
  const mu = load<u64>(ru);
  const mv = load<u64>(rv);
  if (mu != mv) return mu > mv;
  const cu = load<u32>(ru, 8) == <u32>RowClass.GPU_COUNTER;
  const cv = load<u32>(rv, 8) == <u32>RowClass.GPU_COUNTER;
  if (cu != cv) return cu;
  const bu = load<u32>(ru, 16);
  const bv = load<u32>(rv, 16);
  if (bu != bv) return bu > bv;
  return load<u32>(ru, 8) > load<u32>(rv, 8);
}

/** Fills `order` (rowCount u32) with the row indices in output order (shell sort; rows are few). */
export function sortRows(order: usize): void {
  const n = rowCount;
  for (let i: u32 = 0; i < n; i++) store<u32>(order + (<usize>i << 2), i);
  let gap: u32 = 1;
  while (gap < n / 3) gap = gap * 3 + 1;
  while (gap > 0) {
    for (let i = gap; i < n; i++) {
      const v = load<u32>(order + (<usize>i << 2));
      let j = i;
      while (j >= gap) {
        const u = load<u32>(order + (<usize>(j - gap) << 2));
        if (!rowAfter(u, v)) break;
        store<u32>(order + (<usize>j << 2), u);
        j -= gap;
      }
      store<u32>(order + (<usize>j << 2), v);
    }
    gap /= 3;
  }
}
