/**
 * The files on the timeline: where each sits on the view's time axis, and how their rows are grouped, ordered and
 * stacked (web/view.ts draws what this lays out).
 *
 * Time: files whose time ranges overlap are taken as parts of one run (ranks, processes) and keep their recorded
 * (absolute) times, so they line up as they ran. A file whose range overlaps none of the files already open is
 * another run — a dump of another day, another job — and on one absolute axis each would be a sliver hours away
 * from the other; it is *aligned* instead: moved so that it starts where the first file starts, and labelled so
 * (file chip, group headers, details, axis). Two dumps of one process (the same host, pid and collector start) stay
 * on one axis even when they do not overlap. `align: false` (`?align=absolute` in the page's address) keeps every
 * file on absolute time.
 *
 * A file keeps its place once placed: a file that joins never moves the files already open, so the window, the
 * range, the measure and the marks (all on the view axis) keep pointing at the same events. The view axis counts ns
 * from the baseNs of the first file placed that has events (a file without events sits at 0 and anchors nothing).
 *
 * Groups: a group key names the file by its id, not by the number of files open, so the state kept by key (collapsed,
 * pinned, order) survives another file joining; the label shown names the file only when several are open.
 */
import { rowWord, type LoadedFile } from "./model.js";
import { spanWords } from "../src/core/span_words.js";

/** Height of a lane (px). */
export const LANE_H = 16;
/** Padding above and below a row's lanes (px). */
export const ROW_PAD = 3;
/** Height of a group header (px). */
export const HEADER_H = 20;

/** Where one file sits on the view axis. */
export interface Placement {
  /** ns added to the file's times to place them on the view axis. */
  offset: number;
  /**
   * ns its times were moved from where absolute time would put them (0n: on absolute time). A bigint: another run
   * is often years away, beyond 2^53 ns, where a double no longer holds every ns.
   */
  shift: bigint;
  /** The file whose start an aligned file's run was moved to (undefined: on absolute time). */
  to?: LoadedFile;
}

/** A file's recorded time range, absolute ns (bigint: Unix ns do not fit a double exactly). */
function span(f: LoadedFile): [bigint, bigint] | null {
  const h = f.meta.header;
  if (h.events === 0) return null;
  return [h.baseNs + BigInt(Math.round(h.minStart)), h.baseNs + BigInt(Math.round(h.maxEnd))];
}

/**
 * Places the files of `files` that `placed` does not hold yet (in order), adds them to it and sets their `offset`;
 * files already placed stay where they are. The first file placed that has events is the anchor (offset 0; a file
 * without events gets offset 0 and anchors nothing). A later one goes on absolute time, unless `align` and its time
 * range overlaps none of the files placed: then it starts where the anchor starts.
 */
export function placeFiles(files: readonly LoadedFile[], placed: Map<LoadedFile, Placement>, align: boolean): void {
  for (const f of files) {
    if (placed.has(f)) continue;
    const p = placeOne(f, files, placed, align);
    placed.set(f, p);
    f.offset = p.offset;
  }
}

function placeOne(f: LoadedFile, files: readonly LoadedFile[], placed: Map<LoadedFile, Placement>, align: boolean): Placement {
  const mine = span(f);
  // A file without events puts nothing on the axis: it takes no place and anchors nothing. (As the anchor, a dump
  // cut inside its header, base 0, would put every later file ~1.8e18 ns from view time 0, where a double holds
  // only every 256th ns: every start shown off by up to 200 ns.)
  if (!mine) return { offset: 0, shift: 0n };
  // The anchor: the first file placed that has events (view time 0 is its base).
  const anchor = files.find((g) => placed.has(g) && span(g) !== null);
  if (!anchor) return { offset: 0, shift: 0n };
  const a = placed.get(anchor)!;
  // The Unix ns at view time 0 for a file on absolute time, then a file's offset: exact in bigint (the bases and
  // shifts are Unix ns and years); only the offset, ns from the view's start, becomes a double.
  const origin = anchor.meta.header.baseNs + a.shift - BigInt(Math.round(a.offset));
  const at = (g: LoadedFile, shift: bigint): number => Number(g.meta.header.baseNs + shift - origin);
  // A file overlapping one already placed is part of its run: it takes that file's shift (0 unless that run was
  // aligned), so the ranks of an aligned run stay aligned with each other.
  for (const g of files) {
    const p = placed.get(g);
    const other = span(g);
    if (!p || !other) continue;
    if (mine[0] <= other[1] && other[0] <= mine[1]) return { offset: at(f, p.shift), shift: p.shift, to: p.to };
  }
  // Two dumps of one process (the same host, pid and collector start) are one run even when they do not overlap.
  for (const g of files) {
    const p = placed.get(g);
    if (p && sameProcess(f, g)) return { offset: at(f, p.shift), shift: p.shift, to: p.to };
  }
  // Another run: its first event where the anchor (the first placed file that has events) starts.
  if (!align) return { offset: at(f, 0n), shift: 0n };
  const shift = span(anchor)![0] + a.shift - mine[0];
  return { offset: at(f, shift), shift, to: a.to ?? anchor };
}

/**
 * True when both dumps were written by one process: the same host name, pid and collector start (a pid alone is
 * reused — every container's trainer may be pid 1 — and pods keep their host names from run to run).
 */
function sameProcess(f: LoadedFile, g: LoadedFile): boolean {
  return f.info.pid !== 0 && f.info.pid === g.info.pid && f.info.hostname === g.info.hostname &&
    f.info.collectorStartNs !== 0n && f.info.collectorStartNs === g.info.collectorStartNs;
}

/**
 * Which copy of its name `names[k]` is: 1 for the first of that name in `names`, 2 for the next… (the n of `name
 * (n)`; the URL hash names a file by name and this number, web/hash.ts).
 */
export function copyNumber(names: readonly string[], k: number): number {
  let n = 0;
  for (let i = 0; i <= k; i++) if (names[i] === names[k]) n++;
  return n;
}

/** A file's name in group headers; the same file opened again is `name (2)`, its rows a group of their own. */
export function fileTag(files: readonly LoadedFile[], f: LoadedFile): string {
  const n = copyNumber(files.map((g) => g.name), files.indexOf(f));
  return n > 1 ? `${f.name} (${n})` : f.name;
}

/** The key of row r's group: stable whatever else is open (the file's id, then its group). */
export function groupKey(f: LoadedFile, r: number): string {
  return `${f.id}:${f.rowGroups[r]}`;
}

/** The label of row r's group: the file named (and marked when aligned) once several files are open. */
export function groupLabel(files: readonly LoadedFile[], placed: ReadonlyMap<LoadedFile, Placement>, f: LoadedFile, r: number): string {
  if (files.length < 2) return f.rowGroups[r];
  // The mark first: a narrow gutter cuts the end of a long label.
  const aligned = (placed.get(f)?.shift ?? 0n) !== 0n ? "(aligned) " : "";
  return `${aligned}${fileTag(files, f)} · ${f.rowGroups[r]}`;
}

/**
 * How a file's times were moved, in words ("recorded 1 h 18 min 36 s later, aligned to the start of run.rawtrace"),
 * or null when it is on absolute time.
 */
export function shiftNote(files: readonly LoadedFile[], placed: ReadonlyMap<LoadedFile, Placement>, f: LoadedFile): string | null {
  const shift = placed.get(f)?.shift ?? 0n;
  if (shift === 0n) return null;
  const to = placed.get(f)?.to ?? files[0];
  return `recorded ${spanWords(Math.abs(Number(shift)))} ${shift < 0n ? "later" : "earlier"}, aligned to the start of ${fileTag(files, to)}`;
}

/** A row on screen: content y and height (px). */
export interface RowBox {
  file: LoadedFile;
  row: number;
  y: number;
  h: number;
  label: string;
}

/** A group header on screen. */
export interface HeaderBox {
  key: string;
  label: string;
  /** The file's name in `label` once several files are open ({@link fileTag}): shortened first when it is cut. */
  tag?: string;
  y: number;
  rows: number;
  collapsed: boolean;
  pinned: boolean;
}

/** What the user did to the groups, by {@link groupKey}. */
export interface GroupState {
  collapsed: ReadonlySet<string>;
  /** Pinned to the top, in pin order. */
  pinned: ReadonlySet<string>;
  /** Display order of the groups; keys of groups not in it yet are appended (a file that joins goes last). */
  order: string[];
}

/** The rows and headers laid out, and per file the content y of each of its lanes (NaN: in a collapsed group). */
export interface Layout {
  rows: RowBox[];
  headers: HeaderBox[];
  laneY: Map<LoadedFile, Float64Array>;
  height: number;
}

/**
 * Lays the groups out (a process or a GPU of a file, with its rows in file order): pinned groups first in pin
 * order, then the others in `st.order`; a collapsed group is its header alone.
 */
export function layoutRows(files: readonly LoadedFile[], placed: ReadonlyMap<LoadedFile, Placement>, st: GroupState): Layout {
  const out: Layout = { rows: [], headers: [], laneY: new Map(), height: 0 };
  const groups = new Map<string, Array<{ file: LoadedFile; row: number }>>();
  const labels = new Map<string, string>();
  for (const f of files) {
    out.laneY.set(f, new Float64Array(f.lanes.length).fill(NaN));
    for (let r = 0; r < f.meta.header.rows; r++) {
      const g = groupKey(f, r);
      let list = groups.get(g);
      if (!list) {
        groups.set(g, (list = []));
        labels.set(g, groupLabel(files, placed, f, r));
      }
      list.push({ file: f, row: r });
    }
  }
  for (const g of groups.keys()) if (!st.order.includes(g)) st.order.push(g);
  const keys = [...st.pinned].filter((g) => groups.has(g)).concat(st.order.filter((g) => groups.has(g) && !st.pinned.has(g)));
  let y = 0;
  for (const g of keys) {
    const list = groups.get(g)!;
    const hb: HeaderBox = { key: g, label: labels.get(g)!, y, rows: list.length, collapsed: st.collapsed.has(g), pinned: st.pinned.has(g) };
    if (files.length > 1) hb.tag = fileTag(files, list[0].file);
    out.headers.push(hb);
    y += HEADER_H;
    if (hb.collapsed) continue;
    for (const { file: f, row: r } of list) {
      const ly = out.laneY.get(f)!;
      const firstLane = rowWord(f, r, 4);
      const lanes = rowWord(f, r, 5);
      const h = Math.max(1, lanes) * LANE_H + ROW_PAD * 2;
      for (let l = 0; l < lanes; l++) ly[firstLane + l] = y + ROW_PAD + l * LANE_H;
      out.rows.push({ file: f, row: r, y, h, label: f.rowLabels[r] });
      y += h;
    }
  }
  out.height = y;
  return out;
}
