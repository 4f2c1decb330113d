/**
 * The timeline canvas: one row per host thread / device stream (split into lanes for nesting and overlaps), slices
 * drawn straight from the core's tables (web/paint_rows.ts: per frame and lane, the visible window found by binary
 * search, slices narrower than a pixel merged into one rectangle per pixel column, so a frame costs O(pixels × log n)
 * whatever the number of events). No JS object per event anywhere.
 *
 * Mouse: wheel zooms around the pointer (shift+wheel or wheel over the labels scrolls rows; a horizontal wheel
 * pans), drag pans, click selects, hover shows a tooltip and the launch → kernel flow; drag on the time axis selects
 * a time range over all tracks, shift+drag on the tracks selects a range over the tracks dragged across, ctrl (⌘)
 * +drag measures (ends snap to slice edges), double-click on the axis adds a mark, a click on a group header
 * collapses or expands it (its buttons move it up or pin it to the top). Keys: web/keys.ts.
 */
import { Flag, RowClass, TL_NONE } from "../src/core/timeline.js";
import { laneOf, lowerBoundEnd, lowerBoundStart, rowWord, type LoadedFile } from "./model.js";
import type { RowRef } from "./aggregate.js";
import { HEADER_H, LANE_H, ROW_PAD, groupKey, layoutRows, placeFiles, type HeaderBox, type Placement, type RowBox } from "./layout.js";
import { onThemeChange, palette, type Palette } from "./theme.js";
import { AXIS_H, FONT, GUTTER, arrow, drawAxis, drawMarks, drawMeasure, drawRange, fitHeader, fitText, type Frame } from "./overlays.js";
import { SLICE_H, drawCounter, drawLane, type RowPaint } from "./paint_rows.js";

/** A selected or hovered event. */
export interface Sel {
  file: LoadedFile;
  i: number;
}

/** A range selection on the view axis (ns); `rows` null = all tracks. */
export interface Range {
  t0: number;
  t1: number;
  rows: RowRef[] | null;
}

/** A measurement between two times on the view axis (ns), drawn at content height `y`. */
export interface Measure {
  a: number;
  b: number;
  y: number;
}

type DragMode = "pan" | "range" | "rows" | "measure";

/** Width of a group header button (px): "move up" and "pin" sit at the gutter's right end. */
const BTN_W = 22;
/** A double-click's clicks come closer than this (ms; desktop systems allow up to about 500). */
const DOUBLE_MS = 1000;
/** Measure ends snap to a slice edge closer than this (px). */
const SNAP_PX = 6;

export class TimelineView {
  private readonly ctx: CanvasRenderingContext2D;
  private files: LoadedFile[] = [];
  private rows: RowBox[] = [];
  private headers: HeaderBox[] = [];
  /** Per file: y (content coordinates) of each of its lanes (NaN: row collapsed). */
  private laneY = new Map<LoadedFile, Float64Array>();
  /** Group keys collapsed by the user. */
  private readonly collapsed = new Set<string>();
  /** Group keys pinned to the top, in pin order. */
  private readonly pinned = new Set<string>();
  /** Group display order (unpinned groups), changed by {@link TimelineView.moveUp}. */
  private readonly order: string[] = [];
  /** Where each file sits on the view axis (web/layout.ts): set when it joins, then kept. */
  private readonly placed = new Map<LoadedFile, Placement>();
  /** Align a file from another run to the first file's start (else every file on absolute time). */
  align = true;
  /** The window is the fitted one (nothing zoomed or panned since): a file that joins refits to all of them. */
  private fitted = true;
  private contentH = 0;
  private width = 0;
  private height = 0;
  private dpr = 1;
  /** Visible window, ns on the view axis. */
  private t0 = 0;
  private t1 = 1;
  /** Trace start on the view axis: the earliest event of the files open. */
  private origin = 0;
  private scrollY = 0;
  private dirty = false;
  private pal: Palette = palette();
  private drag: {
    mode: DragMode; x: number; y: number; t0: number; t1: number; sy: number; moved: boolean; at: number; cy: number;
  } | null = null;
  /** The range a click on the axis just cleared, and when: a double-click there (a mark) restores it. */
  private clearedByClick: { range: Range; at: number } | null = null;
  /** Per file and counter row: its largest value (the scale of its track). */
  private readonly counterMaxima = new Map<LoadedFile, Map<number, number>>();
  /** Last pointer position over the canvas (null when outside): hover is recomputed after every view change. */
  private pointer: [number, number] | null = null;
  selected: Sel | null = null;
  hovered: Sel | null = null;
  range: Range | null = null;
  measure: Measure | null = null;
  /** User marks, ns on the view axis. */
  marks: number[] = [];
  /** Per file: 1 for the name ids that match the search (null: no search). */
  matches: Map<LoadedFile, Uint8Array> | null = null;
  onselect: (s: Sel | null) => void = () => {};
  onhover: (s: Sel | null, x: number, y: number) => void = () => {};
  /** The range selection changed (null: cleared). */
  onrange: (r: Range | null) => void = () => {};
  /** Window, measure or marks changed (for the URL hash). */
  onchange: () => void = () => {};

  constructor(private readonly canvas: HTMLCanvasElement) {
    this.ctx = canvas.getContext("2d", { alpha: false })!;
    new ResizeObserver(() => this.resize()).observe(canvas.parentElement!);
    this.resize();
    canvas.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    canvas.addEventListener("mousedown", (e) => this.onDown(e));
    canvas.addEventListener("dblclick", (e) => this.onDouble(e));
    window.addEventListener("mousemove", (e) => this.onMove(e));
    window.addEventListener("mouseup", (e) => this.onUp(e));
    canvas.addEventListener("mouseleave", () => {
      this.pointer = null;
      if (!this.drag) this.setHover(null, 0, 0);
    });
    window.addEventListener("blur", () => this.setHover(null, 0, 0));
    canvas.tabIndex = 0;
    onThemeChange(() => this.invalidate());
  }

  // ---- Data and layout -------------------------------------------------------------------------------------------

  /**
   * Shows these files (their `offset` fields are set here, web/layout.ts). A file that joins leaves the view of
   * the files already open as it was — window, groups collapsed, pinned and moved, scroll — unless the view still
   * showed everything: then it is fitted to all the files.
   */
  setFiles(files: LoadedFile[]): void {
    this.files = files;
    placeFiles(files, this.placed, this.align);
    let lo = Infinity;
    for (const f of files) if (f.meta.header.events > 0) lo = Math.min(lo, f.offset + f.meta.header.minStart);
    if (isFinite(lo)) this.origin = lo;
    this.canvas.dataset.origin = String(Math.round(this.origin));
    this.canvas.dataset.aligned = String(files.filter((f) => this.placed.get(f)!.shift !== 0n).length);
    this.layout();
    if (this.fitted) this.fit();
    else {
      // The same window and range; their numbers (relative to the origin, which an earlier file moves) are new.
      this.stamp();
      this.invalidate();
      this.onchange();
    }
  }

  /**
   * Places the open files again in their present order (web/layout.ts), as if opened so: which run is aligned to
   * which start depends on the order files are placed in, so a restored link, once it has put the files in its own
   * order (web/main.ts placeAsLinked), places them again whatever order they arrived in. Lays out as
   * {@link setFiles} does.
   */
  placeAgain(): void {
    this.placed.clear();
    this.setFiles(this.files);
  }

  /** Where the files sit on the view axis (for labels: web/layout.ts shiftNote). */
  get placements(): ReadonlyMap<LoadedFile, Placement> {
    return this.placed;
  }

  private layout(): void {
    const l = layoutRows(this.files, this.placed, { collapsed: this.collapsed, pinned: this.pinned, order: this.order });
    this.rows = l.rows;
    this.headers = l.headers;
    this.laneY = l.laneY;
    this.contentH = l.height;
    this.clampScroll();
    this.canvas.dataset.collapsed = String(this.headers.filter((h) => h.collapsed).length);
    this.canvas.dataset.rowsShown = String(this.rows.length);
    // Labels as shown, for tests and tools: all groups in display order, the collapsed ones, the pinned ones.
    this.canvas.dataset.groups = this.headers.map((h) => h.label).join("|");
    this.canvas.dataset.collapsedGroups = this.headers.filter((h) => h.collapsed).map((h) => h.label).join("|");
    this.canvas.dataset.pinnedGroups = this.headers.filter((h) => h.pinned).map((h) => h.label).join("|");
    this.canvas.dataset.headerYs = this.headers.map((h) => h.y).join(",");
  }

  /** Pins the group with this key to the top (pinned groups keep the order they were pinned in), or unpins it. */
  togglePin(key: string): void {
    if (this.pinned.has(key)) this.pinned.delete(key);
    else this.pinned.add(key);
    this.layout();
    this.invalidate();
  }

  /** Moves the group with this key one place up among the unpinned groups. */
  moveUp(key: string): void {
    const free = this.order.filter((g) => !this.pinned.has(g) && this.headers.some((h) => h.key === g));
    const k = free.indexOf(key);
    if (k > 0) {
      const a = this.order.indexOf(free[k - 1]);
      const b = this.order.indexOf(key);
      [this.order[a], this.order[b]] = [this.order[b], this.order[a]];
      this.layout();
      this.invalidate();
    }
  }

  /** Collapses or expands the group with this key ({@link groups}; web/layout.ts groupKey). */
  toggleGroup(key: string): void {
    if (this.collapsed.has(key)) this.collapsed.delete(key);
    else this.collapsed.add(key);
    this.layout();
    this.invalidate();
  }

  /** Groups in display order: key (for {@link toggleGroup}, {@link togglePin}, {@link moveUp}), label and state. */
  get groups(): Array<{ key: string; label: string; collapsed: boolean; pinned: boolean }> {
    return this.headers.map((h) => ({ key: h.key, label: h.label, collapsed: h.collapsed, pinned: h.pinned }));
  }

  /** Shows the whole trace (every file). */
  fit(): void {
    const [lo, hi] = this.extent();
    const pad = Math.max((hi - lo) * 0.01, 10);
    this.setWindow(lo - pad, hi + pad);
    this.fitted = true;
  }

  /** Where the open files' events lie on the view axis, [first start, last end] (ns); [0, 1e6] when none has any. */
  private extent(): [number, number] {
    let lo = Infinity;
    let hi = -Infinity;
    for (const f of this.files) {
      if (f.meta.header.events === 0) continue;
      lo = Math.min(lo, f.offset + f.meta.header.minStart);
      hi = Math.max(hi, f.offset + f.meta.header.maxEnd);
    }
    return isFinite(lo) ? [lo, hi] : [0, 1e6];
  }

  /** The widest window (ns): 20 times the events' extent, at least 100 s. */
  private maxSpan(): number {
    const [lo, hi] = this.extent();
    return Math.max((hi - lo) * 20, 1e11);
  }

  /**
   * `t` (view axis, ns) moved within reach: no further than {@link maxSpan} from the events, where a window can go
   * and a double still holds the ns (a time from a hand-edited link: 1e308, -1e308).
   */
  private inReach(t: number): number {
    const [lo, hi] = this.extent();
    const max = this.maxSpan();
    return Math.min(Math.max(t, lo - max), hi + max);
  }

  /**
   * Shows [a, b] (view axis, ns), at least 50 ns and at most {@link maxSpan} wide (about its centre), starting no
   * further than that width from the events: zooming out stops, and a window from a link cannot put the axis where
   * a double no longer holds the ns.
   */
  setWindow(a: number, b: number): void {
    // A window that is no window (NaN from a plot of no width, a bad link): the view stays as it is (before: the
    // widest view, and every key after it stuck there).
    if (!Number.isFinite(a) || !Number.isFinite(b)) return;
    this.fitted = false;
    const max = this.maxSpan();
    let span = Math.max(b - a, 50);
    if (!(span <= max)) {
      a = (a + b) / 2 - max / 2;
      span = max;
    }
    a = this.inReach(a);
    this.t0 = a;
    this.t1 = a + span;
    this.stamp();
    this.invalidate();
    this.onchange();
  }

  /**
   * Zooms so that event `s` fills about a third of the width (with its launch or kernel when that is close by, so
   * the flow shows) and scrolls its row into view (expanding its group when collapsed).
   */
  reveal(s: Sel): void {
    const ev = s.file.events;
    let a = ev.start(s.i);
    let b = Math.max(ev.end(s.i), a + 1);
    const p = ev.partner(s.i);
    if (p !== TL_NONE) {
      const pa = Math.min(a, ev.start(p));
      const pb = Math.max(b, ev.end(p));
      if (pb - pa < (b - a) * 50 + 200_000) {
        a = pa;
        b = pb;
      }
    }
    const span = Math.max((b - a) * 2.5, 1000);
    const key = groupKey(s.file, ev.row(s.i));
    if (this.collapsed.has(key)) this.toggleGroup(key);
    const y = this.laneY.get(s.file)![laneOf(s.file, s.i)];
    const viewH = this.height - AXIS_H;
    if (y - this.scrollY < 0 || y - this.scrollY > viewH - LANE_H) this.scrollY = y - viewH / 3;
    this.clampScroll();
    const t0 = s.file.offset + (a + b) / 2 - span / 2;
    this.setWindow(t0, t0 + span);
  }

  /** Trace start on the view axis (for relative times). */
  get traceOrigin(): number {
    return this.origin;
  }

  /** Where the axis counts from: the range's start when there is a range, else the trace start. */
  get axisOrigin(): number {
    return this.range ? this.range.t0 : this.origin;
  }

  /** The visible window as ns since the trace start. */
  get window(): [number, number] {
    return [this.t0 - this.origin, this.t1 - this.origin];
  }

  /** Sets (or clears) the range selection and tells `onrange`. */
  setRange(r: Range | null): void {
    // Within reach (a link's range can say anything), t0 ≤ t1.
    if (r && (!Number.isFinite(r.t0) || !Number.isFinite(r.t1))) return;
    if (r) r = { ...r, t0: this.inReach(Math.min(r.t0, r.t1)), t1: this.inReach(Math.max(r.t0, r.t1)) };
    this.range = r;
    this.stamp();
    this.invalidate();
    this.onrange(r);
    this.onchange();
  }

  /** Window and range as ns since the trace start, on the canvas (what tests and tools read). */
  private stamp(): void {
    const rel = (t: number) => Math.round(t - this.origin);
    const r = this.range;
    this.canvas.dataset.window = `${rel(this.t0)},${rel(this.t1)}`;
    this.canvas.dataset.range = r ? `${rel(r.t0)},${rel(r.t1)}` : "";
  }

  /** Sets (or clears) the measurement. */
  setMeasure(m: Measure | null): void {
    if (m && (!Number.isFinite(m.a) || !Number.isFinite(m.b))) return;
    // Within reach: a measure of 1e308 to -1e308 (a link) is not an infinite width.
    const k = (this.measure = m && { ...m, a: this.inReach(m.a), b: this.inReach(m.b) });
    this.canvas.dataset.measureNs = k ? String(Math.round(Math.abs(k.b - k.a))) : "";
    this.invalidate();
    this.onchange();
  }

  /**
   * Adds a mark at t (view axis), or removes the mark already within `px` pixels of it: 3 for a double-click (a
   * pointer cannot hit a mark's exact ns), 0 for N (a mark exactly at the slice's start; another slice a pixel away
   * when zoomed out gets a mark of its own).
   */
  toggleMark(t: number, px = 3): void {
    const tol = (px * (this.t1 - this.t0)) / this.plotPx();
    const k = this.marks.findIndex((m) => Math.abs(m - t) <= tol);
    if (k >= 0) this.marks.splice(k, 1);
    else this.marks.push(t);
    this.marks.sort((a, b) => a - b);
    this.canvas.dataset.marks = String(this.marks.length);
    this.invalidate();
    this.onchange();
  }

  /** Replaces the marks (from the URL hash). */
  setMarks(m: number[]): void {
    // Marks out of reach (no window shows them) left out, one mark per time (a link can repeat one: a toggle would
    // remove one copy and leave the other on screen).
    this.marks = [...new Set(m.filter((t) => this.inReach(t) === t))].sort((a, b) => a - b);
    this.canvas.dataset.marks = String(this.marks.length);
    this.invalidate();
  }

  invalidate(): void {
    if (this.dirty) return;
    this.dirty = true;
    requestAnimationFrame(() => {
      this.dirty = false;
      this.draw();
    });
  }

  private resize(): void {
    const box = this.canvas.parentElement!.getBoundingClientRect();
    this.dpr = window.devicePixelRatio || 1;
    this.width = Math.max(1, Math.floor(box.width));
    this.height = Math.max(1, Math.floor(box.height));
    this.canvas.width = Math.floor(this.width * this.dpr);
    this.canvas.height = Math.floor(this.height * this.dpr);
    this.canvas.style.width = `${this.width}px`;
    this.canvas.style.height = `${this.height}px`;
    this.clampScroll();
    this.invalidate();
  }

  private clampScroll(): void {
    const maxY = Math.max(0, this.contentH - (this.height - AXIS_H) + 20);
    this.scrollY = Math.min(Math.max(0, this.scrollY), maxY);
  }

  // ---- Drawing ---------------------------------------------------------------------------------------------------

  private draw(): void {
    const started = performance.now();
    this.pal = palette();
    this.paint();
    // Exposed for the load benchmark (bench/web_load.ts): the cost of the last frame.
    this.canvas.dataset.drawMs = (performance.now() - started).toFixed(2);
    // The hover follows the view under a still pointer (keys, wheel): a tooltip never describes what moved away.
    if (this.pointer && !this.drag) this.setHover(this.hit(...this.pointer), ...this.pointer);
  }

  private paint(): void {
    const ctx = this.ctx;
    const P = this.pal;
    const W = this.width;
    const H = this.height;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = P.bg;
    ctx.fillRect(0, 0, W, H);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const plotW = W - GUTTER;
    const scale = plotW / (this.t1 - this.t0);
    const top = AXIS_H - this.scrollY;

    // Rows (web/paint_rows.ts).
    const rp: RowPaint = {
      ctx, t0: this.t0, t1: this.t1, width: W, matches: this.matches, counterMax: this.counterMaxima,
    };
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, AXIS_H, plotW, H - AXIS_H);
    ctx.clip();
    for (const rb of this.rows) {
      const y = top + rb.y;
      if (y > H || y + rb.h < AXIS_H) continue;
      if (rb.row % 2 === 1) {
        ctx.fillStyle = P.altRow;
        ctx.fillRect(GUTTER, y, plotW, rb.h);
      }
      if (rowWord(rb.file, rb.row, 0) === RowClass.GPU_COUNTER) {
        drawCounter(rp, rb.file, rb.row, top + rb.y + ROW_PAD, scale);
        continue;
      }
      const first = rowWord(rb.file, rb.row, 4);
      const n = rowWord(rb.file, rb.row, 5);
      for (let l = first; l < first + n; l++) drawLane(rp, rb.file, l, top + this.laneY.get(rb.file)![l], scale);
    }
    const fr: Frame = { ctx, pal: P, width: W, height: H, t0: this.t0, scale, top };
    drawRange(fr, this.range, this.rows);
    this.drawSelection(fr);
    drawMarks(fr, this.marks);
    drawMeasure(fr, this.measure);
    ctx.restore();

    // Gutter: group headers and row labels.
    ctx.fillStyle = P.gutter;
    ctx.fillRect(0, AXIS_H, GUTTER, H - AXIS_H);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, W, H - AXIS_H);
    ctx.clip();
    // The widest header label drawn (px; for tests: it must end before the buttons).
    let headerPx = 0;
    for (const hb of this.headers) {
      const hy = top + hb.y;
      if (hy >= H || hy + HEADER_H <= AXIS_H) continue;
      ctx.fillStyle = P.header;
      ctx.fillRect(0, hy, W, HEADER_H);
      ctx.fillStyle = P.headerText;
      ctx.font = `600 ${FONT}`;
      const label = hb.collapsed ? `▸ ${hb.label} (${hb.rows} rows)` : `▾ ${hb.label}`;
      // Measured in the bold font it is drawn in, so it ends before the buttons.
      const shown = fitHeader(label, hb.tag, GUTTER - BTN_W * 2 - 10, (t) => ctx.measureText(t).width);
      headerPx = Math.max(headerPx, ctx.measureText(shown).width);
      ctx.fillText(shown, 6, hy + HEADER_H / 2);
      ctx.font = FONT;
      // Buttons at the gutter's right end: move up, pin to the top.
      ctx.fillStyle = P.axisText;
      ctx.fillText("↑", GUTTER - BTN_W * 2 + 6, hy + HEADER_H / 2);
      ctx.fillStyle = hb.pinned ? P.accent : P.axisText;
      ctx.fillText("⊤", GUTTER - BTN_W + 6, hy + HEADER_H / 2);
    }
    this.canvas.dataset.headerTextPx = String(Math.ceil(headerPx));
    for (const rb of this.rows) {
      const y = top + rb.y;
      if (y > H || y + rb.h < AXIS_H) continue;
      ctx.fillStyle = P.label;
      ctx.fillText(fitText(rb.label, GUTTER - 24), 16, y + ROW_PAD + LANE_H / 2);
      ctx.fillStyle = P.line;
      ctx.fillRect(0, y + rb.h - 1, W, 1);
    }
    ctx.restore();
    ctx.fillStyle = P.line;
    ctx.fillRect(GUTTER - 1, AXIS_H, 1, H - AXIS_H);

    const aligned = this.files.some((f) => this.placed.get(f)!.shift !== 0n);
    drawAxis(fr, this.t1, this.axisOrigin, this.range, this.marks, aligned);
  }

  /** x (canvas px) and y (lane top, canvas px; NaN when its group is collapsed) of event s. */
  private boxOf(s: Sel, top: number, scale: number): { x0: number; x1: number; y: number } {
    const ev = s.file.events;
    const t0 = this.t0 - s.file.offset;
    const x0 = GUTTER + (ev.start(s.i) - t0) * scale;
    const x1 = GUTTER + (ev.end(s.i) - t0) * scale;
    const y = top + this.laneY.get(s.file)![laneOf(s.file, s.i)];
    return { x0, x1, y };
  }

  private drawSelection(fr: Frame): void {
    const { top, scale } = fr;
    const ctx = this.ctx;
    const P = this.pal;
    this.canvas.dataset.selX = "";
    this.canvas.dataset.selY = "";
    this.canvas.dataset.flow = "";
    for (const s of [this.hovered, this.selected]) {
      if (!s) continue;
      const p = s.file.events.partner(s.i);
      if (p === TL_NONE) continue;
      const a = this.boxOf(s, top, scale);
      const b = this.boxOf({ file: s.file, i: p }, top, scale);
      if (Number.isNaN(a.y) || Number.isNaN(b.y)) continue;
      // The flow goes from the launch (host) to the device work, start to start, as Kineto's ac2g flows do.
      const host = (s.file.events.flags(s.i) & Flag.FLOW_START) !== 0 ? a : b;
      const dev = host === a ? b : a;
      arrow(fr, host.x0, host.y + SLICE_H / 2, dev.x0, dev.y + SLICE_H / 2, s === this.selected);
      if (s === this.selected) {
        this.canvas.dataset.flow = [host.x0, host.y + SLICE_H / 2, dev.x0, dev.y + SLICE_H / 2].map(Math.round).join(",");
      }
      ctx.strokeStyle = P.accent;
      ctx.lineWidth = 1.5;
      const other = host === a ? b : a;
      ctx.strokeRect(other.x0 - 1, other.y - 1, Math.max(other.x1 - other.x0, 1) + 2, SLICE_H + 2);
    }
    const s = this.selected;
    if (!s) return;
    const b = this.boxOf(s, top, scale);
    if (Number.isNaN(b.y)) return;
    ctx.strokeStyle = P.selected;
    ctx.lineWidth = 2;
    ctx.strokeRect(b.x0 - 1, b.y - 1, Math.max(b.x1 - b.x0, 1) + 2, SLICE_H + 2);
    const cx = (Math.max(b.x0, GUTTER) + Math.min(Math.max(b.x1, b.x0 + 1), this.width)) / 2;
    if (cx >= GUTTER && cx <= this.width && b.y >= AXIS_H && b.y + SLICE_H <= this.height) {
      this.canvas.dataset.selX = String(Math.round(cx));
      this.canvas.dataset.selY = String(Math.round(b.y + SLICE_H / 2));
    }
  }

  // ---- Hit testing and input -------------------------------------------------------------------------------------

  /** The event under canvas point (x, y), within 3 px. */
  hit(x: number, y: number): Sel | null {
    if (x < GUTTER || y < AXIS_H) return null;
    const cy = y - AXIS_H + this.scrollY;
    const scale = (this.width - GUTTER) / (this.t1 - this.t0);
    const tol = 3 / scale;
    for (const rb of this.rows) {
      if (cy < rb.y || cy >= rb.y + rb.h) continue;
      const f = rb.file;
      const ly = this.laneY.get(f)!;
      const first = rowWord(f, rb.row, 4);
      const n = rowWord(f, rb.row, 5);
      for (let l = first; l < first + n; l++) {
        if (cy < ly[l] || cy >= ly[l] + SLICE_H) continue;
        const t = this.t0 - f.offset + (x - GUTTER) / scale;
        const ev = f.events;
        const lo = f.lanes.first(l);
        const hi = lo + f.lanes.count(l);
        if (rowWord(f, rb.row, 0) === RowClass.GPU_COUNTER) {
          // A counter track: the sample in effect under the pointer (its value holds until the next one).
          const i = lowerBoundStart(ev, lo, hi, t + tol) - 1;
          return i >= lo ? { file: f, i } : null;
        }
        if (f.lanes.overlapping(l)) {
          let best = -1;
          for (let i = lowerBoundStart(ev, lo, hi, t - f.lanes.maxDur(l) - tol); i < hi && ev.start(i) <= t + tol; i++) {
            if (ev.end(i) >= t - tol && (best < 0 || ev.dur(i) < ev.dur(best))) best = i;
          }
          return best >= 0 ? { file: f, i: best } : null;
        }
        const i = lowerBoundEnd(ev, lo, hi, t - tol);
        if (i >= hi || ev.start(i) > t + tol) return null;
        // Of two slices within the tolerance, the one under the pointer wins.
        if (i + 1 < hi && ev.end(i) < t && ev.start(i + 1) <= t + tol) return { file: f, i: i + 1 };
        return { file: f, i };
      }
      return null;
    }
    return null;
  }

  /** The group header under canvas point y, or null. */
  private headerAt(y: number): HeaderBox | null {
    if (y < AXIS_H) return null;
    const cy = y - AXIS_H + this.scrollY;
    return this.headers.find((h) => cy >= h.y && cy < h.y + HEADER_H) ?? null;
  }

  /** Rows whose boxes meet content heights [y0, y1]. */
  private rowsBetween(y0: number, y1: number): RowRef[] {
    const lo = Math.min(y0, y1);
    const hi = Math.max(y0, y1);
    return this.rows.filter((rb) => rb.y + rb.h > lo && rb.y <= hi).map((rb) => ({ file: rb.file, row: rb.row }));
  }

  /** Time at canvas x, snapped to the nearest edge of the slice under (x, y) when closer than {@link SNAP_PX}. */
  private snapTime(x: number, y: number): number {
    const scale = (this.width - GUTTER) / (this.t1 - this.t0);
    const t = this.t0 + (x - GUTTER) / scale;
    const s = this.hit(x, y);
    if (!s) return t;
    const a = s.file.offset + s.file.events.start(s.i);
    const b = s.file.offset + s.file.events.end(s.i);
    const da = Math.abs(a - t) * scale;
    const db = Math.abs(b - t) * scale;
    if (Math.min(da, db) > SNAP_PX) return t;
    return da <= db ? a : b;
  }

  select(s: Sel | null): void {
    this.selected = s;
    this.onselect(s);
    this.invalidate();
    this.onchange();
  }

  private setHover(s: Sel | null, x: number, y: number): void {
    const same = s === null ? this.hovered === null : this.hovered !== null && this.hovered.file === s.file && this.hovered.i === s.i;
    this.hovered = s;
    this.onhover(s, x, y);
    if (!same) this.invalidate();
  }

  private local(e: MouseEvent): [number, number] {
    const r = this.canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }

  /** Zooms around the middle of the plot by `factor` (below 1 zooms in). */
  zoomCenter(factor: number): void {
    this.zoomAt(GUTTER + (this.width - GUTTER) / 2, factor);
  }

  /** Pans by `frac` of the visible window (negative: earlier). */
  panBy(frac: number): void {
    // By the window's time, not its pixels: a window narrower than the labels has no plot (before: the pan ran
    // backwards, 30 windows at a press).
    const dt = frac * (this.t1 - this.t0);
    this.setWindow(this.t0 + dt, this.t1 + dt);
  }

  /** Scrolls the rows by `frac` of the visible height (negative: up). */
  scrollPage(frac: number): void {
    this.scrollRows((this.height - AXIS_H) * frac);
  }

  /** The visible window, ns on the view axis. */
  get visible(): [number, number] {
    return [this.t0, this.t1];
  }

  /** Content y of the middle of event s's lane (where a measurement next to it is drawn). */
  laneMid(s: Sel): number {
    return this.laneY.get(s.file)![laneOf(s.file, s.i)] + SLICE_H / 2;
  }

  /** Content y at the top of the visible rows. */
  get scrollTop(): number {
    return this.scrollY;
  }

  private zoomAt(x: number, factor: number): void {
    const plotW = this.plotPx();
    const px = Math.min(Math.max(0, x - GUTTER), plotW);
    const tAt = this.t0 + (px / plotW) * (this.t1 - this.t0);
    let span = (this.t1 - this.t0) * factor;
    span = Math.min(Math.max(span, 50), this.maxSpan()); // 50 ns across the plot at most zoomed in
    const t0 = tAt - (px / plotW) * span;
    this.setWindow(t0, t0 + span);
  }

  /** Pans by `dx` px of the plot (a wheel's sideways turn). */
  private pan(dx: number): void {
    this.panBy(dx / this.plotPx());
  }

  /** The plot's width (px), at least 1: a window narrower than the labels has no plot to divide by. */
  private plotPx(): number {
    return Math.max(1, this.width - GUTTER);
  }

  private scrollRows(dy: number): void {
    this.scrollY += dy;
    this.clampScroll();
    this.invalidate();
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    const [x] = this.local(e);
    const k = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    if (e.shiftKey || x < GUTTER) {
      this.scrollRows((e.deltaY || e.deltaX) * k);
      return;
    }
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      this.pan(e.deltaX * k);
      return;
    }
    this.zoomAt(x, Math.exp(e.deltaY * k * 0.0015));
  }

  private onDown(e: MouseEvent): void {
    if (e.button !== 0) return;
    const [x, y] = this.local(e);
    const scale = (this.width - GUTTER) / (this.t1 - this.t0);
    const mode: DragMode =
      y < AXIS_H && x >= GUTTER ? "range" : e.ctrlKey || e.metaKey ? "measure" : e.shiftKey && x >= GUTTER ? "rows" : "pan";
    const at = mode === "measure" ? this.snapTime(x, y) : this.t0 + (x - GUTTER) / scale;
    this.drag = { mode, x, y, t0: this.t0, t1: this.t1, sy: this.scrollY, moved: false, at, cy: y - AXIS_H + this.scrollY };
    this.canvas.focus();
    e.preventDefault();
  }

  private onMove(e: MouseEvent): void {
    const [x, y] = this.local(e);
    const d = this.drag;
    if (d) {
      if (!d.moved && Math.abs(x - d.x) + Math.abs(y - d.y) > 3) {
        d.moved = true;
        this.setHover(null, 0, 0);
      }
      if (!d.moved) return;
      const scale = (this.width - GUTTER) / (this.t1 - this.t0);
      const t = this.t0 + (Math.max(x, GUTTER) - GUTTER) / scale;
      if (d.mode === "pan") {
        const dt = ((x - d.x) / this.plotPx()) * (d.t1 - d.t0);
        this.scrollY = d.sy - (y - d.y);
        this.clampScroll();
        this.canvas.style.cursor = "grabbing";
        this.setWindow(d.t0 - dt, d.t1 - dt);
      } else if (d.mode === "range") {
        this.setRange({ t0: Math.min(d.at, t), t1: Math.max(d.at, t), rows: null });
      } else if (d.mode === "rows") {
        const cy = y - AXIS_H + this.scrollY;
        this.setRange({ t0: Math.min(d.at, t), t1: Math.max(d.at, t), rows: this.rowsBetween(d.cy, cy) });
      } else {
        this.setMeasure({ a: d.at, b: this.snapTime(x, y), y: d.cy });
      }
      return;
    }
    if (e.target !== this.canvas) return;
    this.pointer = [x, y];
    this.setHover(this.hit(x, y), x, y);
  }

  private onUp(e: MouseEvent): void {
    const d = this.drag;
    if (!d) return;
    this.drag = null;
    this.canvas.style.cursor = "";
    if (d.moved) return;
    const [x, y] = this.local(e);
    if (d.mode === "range") {
      // A click on the axis clears the range; the first click of a double-click (a mark) gives it back.
      if (this.range) {
        this.clearedByClick = { range: this.range, at: performance.now() };
        this.setRange(null);
      }
      return;
    }
    const h = this.headerAt(y);
    if (h) {
      if (x >= GUTTER - BTN_W && x < GUTTER) this.togglePin(h.key);
      else if (x >= GUTTER - BTN_W * 2 && x < GUTTER - BTN_W) this.moveUp(h.key);
      else this.toggleGroup(h.key);
      return;
    }
    this.select(this.hit(x, y));
  }

  private onDouble(e: MouseEvent): void {
    const [x, y] = this.local(e);
    if (y >= AXIS_H || x < GUTTER) return;
    // The double-click's first click cleared the range (a click cannot know a second follows): it comes back.
    const c = this.clearedByClick;
    this.clearedByClick = null;
    if (c && !this.range && performance.now() - c.at < DOUBLE_MS) this.setRange(c.range);
    this.toggleMark(this.t0 + ((x - GUTTER) / Math.max(1, this.width - GUTTER)) * (this.t1 - this.t0));
  }
}
