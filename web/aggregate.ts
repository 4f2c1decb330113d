/**
 * Range aggregation: per event name, the count, total, average, min and max time and the share of a time range,
 * over all tracks or a chosen set of rows. Computed straight from the core's timeline tables with flat typed
 * arrays (one Float64Array slot group per distinct name; no object per event): per lane the first event that can
 * reach the range is found by binary search, so a range covering the whole trace costs one pass over the events
 * and a narrow one costs O(lanes × log n).
 *
 * Times are ns on the view axis. An event that straddles an edge counts only its part inside the range (so the
 * "% of range" of one track never exceeds 100 %); instants (and incomplete work, duration unknown) count with 0 ns.
 */
import { TL_NONE } from "../src/core/timeline.js";
import { KIND_NAMES, lowerBoundEnd, lowerBoundStart, rowWord, type LoadedFile } from "./model.js";

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

/**
 * Accumulates the events of the given rows of `f` that overlap [t0, t1] (view axis) into `acc` (SLOTS per key,
 * keys = name ids, then KIND_KEYS kinds for unnamed events). Returns the number of events counted.
 */
function accumulate(f: LoadedFile, rows: Iterable<number>, t0v: number, t1v: number, acc: Float64Array): number {
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
        const inside = d > 0 ? Math.min(e, t1) - Math.max(s, t0) : 0;
        const nm = ev.name(i);
        const k = (nm !== TL_NONE ? nm : unnamed + (ev.kind(i) & (KIND_KEYS - 1))) * SLOTS;
        if (acc[k] === 0) {
          acc[k + 2] = inside;
          acc[k + 3] = inside;
        } else {
          if (inside < acc[k + 2]) acc[k + 2] = inside;
          if (inside > acc[k + 3]) acc[k + 3] = inside;
        }
        acc[k]++;
        acc[k + 1] += inside;
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
    events += accumulate(f, mine, t0, t1, acc);
    for (let k = 0; k < acc.length; k += SLOTS) {
      const count = acc[k];
      if (count === 0) continue;
      const id = k / SLOTS;
      const name = id < f.names.length ? f.names[id] : `(unnamed ${KIND_NAMES[id - f.names.length] ?? "event"})`;
      const line = byName.get(name);
      if (!line) {
        byName.set(name, { name, count, total: acc[k + 1], min: acc[k + 2], max: acc[k + 3], avg: 0, percent: 0 });
      } else {
        line.count += count;
        line.total += acc[k + 1];
        line.min = Math.min(line.min, acc[k + 2]);
        line.max = Math.max(line.max, acc[k + 3]);
      }
    }
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
