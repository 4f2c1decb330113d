/**
 * Range aggregation: per event name, the count, total, average, min and max time and the share of a time range,
 * over all tracks or a chosen set of rows. Computed straight from the core's timeline tables with flat typed
 * arrays (one Float64Array slot group per distinct name; no object per event): per lane the first event that can
 * reach the range is found by binary search, so a range covering the whole trace costs one pass over the events
 * and a narrow one costs O(lanes × log n).
 *
 * Times are ns on the view axis. An event that straddles an edge counts only its part inside the range (so the
 * "% of range" of one track never exceeds 100 %); instants count with 0 ns. Left out, as the summary leaves them
 * (docs/viewer.md): incomplete work (its duration unknown: before 2026-12-03 counted as 0 ns, pulling averages and
 * minimums down), and over all tracks the NVTX ranges' projections onto GPU streams (a copy of a host range's time:
 * before, a range running on 4 streams counted 5 times; picked as a row, its projections are counted). CUDA graphs,
 * which have no name in the table, are told apart by graph id as everywhere else (`CUDA Graph N`; before, all one
 * "(unnamed CUDA graph)" line).
 */
import { Flag, Kind, TL_NONE } from "../src/core/timeline.js";
import { KIND_NAMES, graphName, lowerBoundEnd, lowerBoundStart, rowWord, type LoadedFile } from "./model.js";

/** A row of one file. */
export interface RowRef {
  file: LoadedFile;
  row: number;
}

/** One line of the aggregate table. All times in ns. */
export interface AggLine {
  name: string;
  count: number;
  /** Sum of the time inside the range. */
  total: number;
  min: number;
  max: number;
  avg: number;
  /** total / range length × 100 (several tracks together may exceed 100). */
  percent: number;
}

/** The aggregate of a range. */
export interface Aggregate {
  /** Range on the view axis (ns). */
  t0: number;
  t1: number;
  /** Events in the range, all names together. */
  events: number;
  lines: AggLine[];
}

/** Per-name accumulator slots: count, total, min, max. */
const SLOTS = 4;
/** Unnamed events are keyed by kind after the file's names. */
const KIND_KEYS = 16;

/** Adds one event's time inside the range to the SLOTS at `k` of `acc`. */
function add(acc: Float64Array, k: number, inside: number): void {
  if (acc[k] === 0) {
    acc[k + 2] = inside;
    acc[k + 3] = inside;
  } else {
    if (inside < acc[k + 2]) acc[k + 2] = inside;
    if (inside > acc[k + 3]) acc[k + 3] = inside;
  }
  acc[k]++;
  acc[k + 1] += inside;
}

/**
 * Accumulates the events of the given rows of `f` that overlap [t0, t1] (view axis) into `acc` (SLOTS per key,
 * keys = name ids, then KIND_KEYS kinds for unnamed events) and `graphs` (SLOTS per graph id of an unnamed CUDA
 * graph). `all`: every row of the file (the GPU projections of NVTX ranges left out). Returns the number of events
 * counted.
 */
function accumulate(
  f: LoadedFile, rows: Iterable<number>, t0v: number, t1v: number, acc: Float64Array, graphs: Map<number, Float64Array>, all: boolean,
): number {
  const ev = f.events;
  const L = f.lanes;
  const t0 = t0v - f.offset;
  const t1 = t1v - f.offset;
  const unnamed = f.names.length;
  let n = 0;
  for (const r of rows) {
    const firstLane = rowWord(f, r, 4);
    const lanes = rowWord(f, r, 5);
    for (let l = firstLane; l < firstLane + lanes; l++) {
      const lo = L.first(l);
      const hi = lo + L.count(l);
      let i = L.overlapping(l) ? lowerBoundStart(ev, lo, hi, t0 - L.maxDur(l)) : lowerBoundEnd(ev, lo, hi, t0);
      for (; i < hi; i++) {
        const s = ev.start(i);
        if (s > t1) break;
        const d = ev.dur(i);
        const e = s + d;
        if (e < t0 || (d > 0 && (e === t0 || s === t1))) continue;
        const kind = ev.kind(i);
        if ((ev.flags(i) & Flag.INCOMPLETE) !== 0 || (all && kind === Kind.GPU_RANGE)) continue;
        const inside = d > 0 ? Math.min(e, t1) - Math.max(s, t0) : 0;
        const nm = ev.name(i);
        if (nm === TL_NONE && kind === Kind.GRAPH) {
          const id = ev.word(i, 9);
          let g = graphs.get(id);
          if (!g) graphs.set(id, (g = new Float64Array(SLOTS)));
          add(g, 0, inside);
        } else add(acc, (nm !== TL_NONE ? nm : unnamed + (kind & (KIND_KEYS - 1))) * SLOTS, inside);
        n++;
      }
    }
  }
  return n;
}

function allRows(f: LoadedFile): number[] {
  return Array.from({ length: f.meta.header.rows }, (_, r) => r);
}

/**
 * Aggregates the events in [t0, t1] (view axis, ns) per name, over `rows` (null: every row of every file).
 * Lines are sorted by total time, largest first.
 */
export function aggregate(files: LoadedFile[], t0: number, t1: number, rows: RowRef[] | null): Aggregate {
  const byName = new Map<string, AggLine>();
  const span = Math.max(t1 - t0, 0);
  let events = 0;
  for (const f of files) {
    const mine = rows === null ? allRows(f) : rows.filter((x) => x.file === f).map((x) => x.row);
    if (!mine.length) continue;
    const acc = new Float64Array((f.names.length + KIND_KEYS) * SLOTS);
    const graphs = new Map<number, Float64Array>();
    events += accumulate(f, mine, t0, t1, acc, graphs, rows === null);
    const merge = (name: string, a: Float64Array, k: number) => {
      const line = byName.get(name);
      if (!line) {
        byName.set(name, { name, count: a[k], total: a[k + 1], min: a[k + 2], max: a[k + 3], avg: 0, percent: 0 });
      } else {
        line.count += a[k];
        line.total += a[k + 1];
        line.min = Math.min(line.min, a[k + 2]);
        line.max = Math.max(line.max, a[k + 3]);
      }
    };
    for (let k = 0; k < acc.length; k += SLOTS) {
      if (acc[k] === 0) continue;
      const id = k / SLOTS;
      merge(id < f.names.length ? f.names[id] : `(unnamed ${KIND_NAMES[id - f.names.length] ?? "event"})`, acc, k);
    }
    for (const [id, g] of graphs) merge(graphName(id), g, 0);
  }
  const lines = [...byName.values()];
  for (const x of lines) {
    x.avg = x.total / x.count;
    x.percent = span > 0 ? (x.total / span) * 100 : 0;
  }
  lines.sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  return { t0, t1, events, lines };
}

/** Columns of the aggregate table, in order (also the TSV header). */
export const AGG_COLUMNS = ["name", "count", "total", "avg", "min", "max", "percent"] as const;
export type AggColumn = (typeof AGG_COLUMNS)[number];

/** Sorts lines by a column (names ascending by default, numbers descending). */
export function sortLines(lines: AggLine[], col: AggColumn, ascending: boolean): AggLine[] {
  const dir = ascending ? 1 : -1;
  return lines.sort((a, b) => {
    const c = col === "name" ? a.name.localeCompare(b.name) : (a[col] as number) - (b[col] as number);
    return c !== 0 ? c * dir : a.name.localeCompare(b.name);
  });
}

/**
 * Tab-separated text of the lines (header line first; times in µs with ns precision, % with 3 decimals), for a
 * spreadsheet. Tabs and newlines in names become spaces.
 */
export function toTsv(lines: AggLine[]): string {
  const us = (ns: number) => (ns / 1000).toFixed(3);
  const head = "name\tcount\ttotal_us\tavg_us\tmin_us\tmax_us\tpercent_of_range";
  const body = lines.map((x) =>
    [x.name.replace(/[\t\r\n]/g, " "), String(x.count), us(x.total), us(x.avg), us(x.min), us(x.max), x.percent.toFixed(3)].join("\t"),
  );
  return [head, ...body].join("\n") + "\n";
}
