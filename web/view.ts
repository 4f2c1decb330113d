/**
 * The timeline canvas: one row per host thread / device stream (split into lanes for nesting and overlaps), slices
 * drawn straight from the core's tables. Per frame and lane, the visible window is found by binary search and
 * slices narrower than a pixel are merged into one rectangle per pixel column (the next one found by binary search
 * again), so a frame costs O(pixels × log n) whatever the number of events. No JS object per event anywhere.
 *
 * Input: wheel zooms around the pointer (shift+wheel or wheel over the labels scrolls rows; a horizontal wheel
 * pans), drag pans, click selects, hover shows a tooltip and the launch → kernel flow; W/S zoom, A/D pan, F fits,
 * Escape clears the selection.
 */
import { Flag, Kind, TL_NONE } from "../src/core/timeline.js";
import { dur, niceStep, tick } from "./format.js";
import { eventName, laneOf, lowerBoundEnd, lowerBoundStart, rowWord, type LoadedFile } from "./model.js";

/** A selected or hovered event. */
export interface Sel {
  file: LoadedFile;
  i: number;
}

interface RowBox {
  file: LoadedFile;
  row: number;
  y: number;
  h: number;
  label: string;
  /** Group header drawn above this row ("" = none). */
  header: string;
  headerY: number;
}

const LANE_H = 16;
const SLICE_H = 14;
const ROW_PAD = 3;
const HEADER_H = 20;
const AXIS_H = 24;
const GUTTER = 250;
const FONT = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const CHAR_W = 6.1;

const KERNEL_COLORS = [
  "#4e79a7", "#59a14f", "#76b7b2", "#3b8bc2", "#6a9f58", "#8c6bb1", "#2f7f7a", "#5778a4", "#7aa974", "#6f63a8",
  "#3f9aa8", "#52869e",
];
const RANGE_COLORS = ["#b07aa1", "#9c755f", "#bab0ac", "#d4a6c8", "#a39171", "#c49c94"];

function kindColor(f: LoadedFile, i: number): string {
  const ev = f.events;
  const k = ev.kind(i);
  switch (k) {
    case Kind.KERNEL:
      return KERNEL_COLORS[ev.name(i) % KERNEL_COLORS.length];
    case Kind.MEMCPY: {
      const ck = ev.word(i, 11) & 0xff;
      return ck === 1 ? "#e8710a" : ck === 2 ? "#d93025" : ck === 8 ? "#b06000" : "#f28e2b";
    }
    case Kind.MEMSET:
      return "#edc948";
    case Kind.API_RUNTIME:
      return "#8d9db6";
    case Kind.API_DRIVER:
      return "#a7adb4";
    case Kind.SYNC:
      return "#e15759";
    case Kind.RANGE:
    case Kind.INSTANT: {
      const c = ev.word(i, 9);
      if (c !== 0) return `#${(c & 0xffffff).toString(16).padStart(6, "0")}`;
      return RANGE_COLORS[ev.name(i) % RANGE_COLORS.length];
    }
    case Kind.GPU_RANGE:
      return "#c9b3d9";
    case Kind.GRAPH:
      return "#17becf";
    default:
      return "#9e9e9e";
  }
}

/** Dark or light text on a slice color. */
function textColor(bg: string): string {
  const v = parseInt(bg.slice(1), 16);
  const l = 0.299 * (v >> 16) + 0.587 * ((v >> 8) & 255) + 0.114 * (v & 255);
  return l > 150 ? "#1b1b1b" : "#ffffff";
}

export class TimelineView {
  private readonly ctx: CanvasRenderingContext2D;
  private files: LoadedFile[] = [];
  private rows: RowBox[] = [];
  /** Per file: y (content coordinates) of each of its lanes. */
  private laneY = new Map<LoadedFile, Float64Array>();
  private contentH = 0;
  private width = 0;
  private height = 0;
  private dpr = 1;
  /** Visible window, ns on the view axis. */
  private t0 = 0;
  private t1 = 1;
  /** Trace start on the view axis (displayed times are relative to it). */
  private origin = 0;
  private scrollY = 0;
  private dirty = false;
  private drag: { x: number; y: number; t0: number; t1: number; sy: number; moved: boolean } | null = null;
  selected: Sel | null = null;
  hovered: Sel | null = null;
  /** Per file: 1 for the name ids that match the search (null: no search). */
  matches: Map<LoadedFile, Uint8Array> | null = null;
  onselect: (s: Sel | null) => void = () => {};
  onhover: (s: Sel | null, x: number, y: number) => void = () => {};

  constructor(private readonly canvas: HTMLCanvasElement) {
    this.ctx = canvas.getContext("2d", { alpha: false })!;
    new ResizeObserver(() => this.resize()).observe(canvas.parentElement!);
    this.resize();
    canvas.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    canvas.addEventListener("mousedown", (e) => this.onDown(e));
    window.addEventListener("mousemove", (e) => this.onMove(e));
    window.addEventListener("mouseup", (e) => this.onUp(e));
    canvas.addEventListener("mouseleave", () => {
      if (!this.drag) this.setHover(null, 0, 0);
    });
    canvas.tabIndex = 0;
    canvas.addEventListener("keydown", (e) => this.onKey(e));
  }

  // ---- Data and layout -------------------------------------------------------------------------------------------

  /** Shows these files (their `offset` fields are set here) and fits the view to them. */
  setFiles(files: LoadedFile[]): void {
    this.files = files;
    // Common axis: ns since the earliest file base (exact in f64: bases and spans stay far below 2^53 ns).
    let minBase: bigint | null = null;
    for (const f of files) if (minBase === null || f.meta.header.baseNs < minBase) minBase = f.meta.header.baseNs;
    for (const f of files) f.offset = Number(f.meta.header.baseNs - (minBase ?? 0n));
    this.layout();
    this.fit();
  }

  private layout(): void {
    this.rows = [];
    this.laneY.clear();
    let y = 0;
    for (const f of this.files) {
      const ly = new Float64Array(f.lanes.length);
      this.laneY.set(f, ly);
      let group = "";
      for (let r = 0; r < f.meta.header.rows; r++) {
        let header = "";
        let headerY = 0;
        const g = this.files.length > 1 ? `${f.name} · ${f.rowGroups[r]}` : f.rowGroups[r];
        if (g !== group) {
          group = g;
          header = g;
          headerY = y;
          y += HEADER_H;
        }
        const firstLane = rowWord(f, r, 4);
        const lanes = rowWord(f, r, 5);
        const h = Math.max(1, lanes) * LANE_H + ROW_PAD * 2;
        for (let l = 0; l < lanes; l++) ly[firstLane + l] = y + ROW_PAD + l * LANE_H;
        this.rows.push({ file: f, row: r, y, h, label: f.rowLabels[r], header, headerY });
        y += h;
      }
    }
    this.contentH = y;
    this.clampScroll();
  }

  /** Shows the whole trace. */
  fit(): void {
    let lo = Infinity;
    let hi = -Infinity;
    for (const f of this.files) {
      if (f.meta.header.events === 0) continue;
      lo = Math.min(lo, f.offset + f.meta.header.minStart);
      hi = Math.max(hi, f.offset + f.meta.header.maxEnd);
    }
    if (!isFinite(lo)) {
      lo = 0;
      hi = 1e6;
    }
    this.origin = lo;
    const pad = Math.max((hi - lo) * 0.01, 10);
    this.t0 = lo - pad;
    this.t1 = hi + pad;
    this.invalidate();
  }

  /**
   * Zooms so that event `s` fills about a third of the width (with its launch or kernel when that is close by, so
   * the flow shows) and scrolls its row into view.
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
    this.t0 = s.file.offset + (a + b) / 2 - span / 2;
    this.t1 = this.t0 + span;
    const y = this.laneY.get(s.file)![laneOf(s.file, s.i)];
    const viewH = this.height - AXIS_H;
    if (y - this.scrollY < 0 || y - this.scrollY > viewH - LANE_H) this.scrollY = y - viewH / 3;
    this.clampScroll();
    this.invalidate();
  }

  /** Trace start on the view axis (for relative times). */
  get traceOrigin(): number {
    return this.origin;
  }

  /** The visible window as ns since the trace start. */
  get window(): [number, number] {
    return [this.t0 - this.origin, this.t1 - this.origin];
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
    this.paint();
    // Exposed for the load benchmark (bench/web_load.ts): the cost of the last frame.
    this.canvas.dataset.drawMs = (performance.now() - started).toFixed(2);
  }

  private paint(): void {
    const ctx = this.ctx;
    const W = this.width;
    const H = this.height;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, W, H);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const plotW = W - GUTTER;
    const scale = plotW / (this.t1 - this.t0);
    const top = AXIS_H - this.scrollY;

    // Rows.
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, AXIS_H, plotW, H - AXIS_H);
    ctx.clip();
    for (const rb of this.rows) {
      const y = top + rb.y;
      if (y > H || y + rb.h < AXIS_H) continue;
      if (rb.row % 2 === 1) {
        ctx.fillStyle = "#f7f8fa";
        ctx.fillRect(GUTTER, y, plotW, rb.h);
      }
      const first = rowWord(rb.file, rb.row, 4);
      const n = rowWord(rb.file, rb.row, 5);
      for (let l = first; l < first + n; l++) this.drawLane(rb.file, l, top + this.laneY.get(rb.file)![l], scale);
    }
    this.drawSelection(top, scale);
    ctx.restore();

    // Gutter: group headers and row labels.
    ctx.fillStyle = "#fafafa";
    ctx.fillRect(0, AXIS_H, GUTTER, H - AXIS_H);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, W, H - AXIS_H);
    ctx.clip();
    for (const rb of this.rows) {
      if (rb.header) {
        const hy = top + rb.headerY;
        if (hy < H && hy + HEADER_H > AXIS_H) {
          ctx.fillStyle = "#e8eaed";
          ctx.fillRect(0, hy, W, HEADER_H);
          ctx.fillStyle = "#202124";
          ctx.font = `600 ${FONT}`;
          ctx.fillText(rb.header, 8, hy + HEADER_H / 2);
          ctx.font = FONT;
        }
      }
      const y = top + rb.y;
      if (y > H || y + rb.h < AXIS_H) continue;
      ctx.fillStyle = "#3c4043";
      ctx.fillText(this.fitText(rb.label, GUTTER - 24), 16, y + ROW_PAD + LANE_H / 2);
      ctx.fillStyle = "#dadce0";
      ctx.fillRect(0, y + rb.h - 1, W, 1);
    }
    ctx.restore();
    ctx.fillStyle = "#dadce0";
    ctx.fillRect(GUTTER - 1, AXIS_H, 1, H - AXIS_H);

    this.drawAxis(scale);
  }

  private fitText(s: string, px: number): string {
    const max = Math.floor(px / CHAR_W);
    if (s.length <= max) return s;
    return max > 1 ? `${s.slice(0, max - 1)}…` : "";
  }

  /** Draws lane `l` of file `f` at y. */
  private drawLane(f: LoadedFile, l: number, y: number, scale: number): void {
    const ctx = this.ctx;
    const ev = f.events;
    const L = f.lanes;
    const lo = L.first(l);
    const hi = lo + L.count(l);
    const t0 = this.t0 - f.offset;
    const t1 = this.t1 - f.offset;
    const plotW = this.width - GUTTER;
    const mask = this.matches?.get(f) ?? null;
    let i = L.overlapping(l) ? lowerBoundStart(ev, lo, hi, t0 - L.maxDur(l)) : lowerBoundEnd(ev, lo, hi, t0);
    let fill = "";
    let alpha = 1;
    const setFill = (c: string, a: number) => {
      if (c !== fill) {
        ctx.fillStyle = c;
        fill = c;
      }
      if (a !== alpha) {
        ctx.globalAlpha = a;
        alpha = a;
      }
    };
    while (i < hi) {
      const s = ev.start(i);
      if (s > t1) break;
      const e = s + ev.dur(i);
      const x0 = (s - t0) * scale;
      const x1 = (e - t0) * scale;
      const hit = mask === null || (ev.name(i) !== TL_NONE && mask[ev.name(i)] === 1);
      if (x1 - x0 >= 1) {
        const a = Math.max(x0, -2);
        const b = Math.min(x1, plotW + 2);
        const c = kindColor(f, i);
        setFill(c, hit ? 1 : 0.18);
        ctx.fillRect(GUTTER + a, y, b - a, SLICE_H);
        if (b - a > 28 && hit) {
          const label = this.fitText(f.shortNames[ev.name(i)] ?? eventName(f, i), b - a - 6);
          if (label) {
            ctx.fillStyle = textColor(c);
            fill = "";
            ctx.fillText(label, GUTTER + a + 3, y + SLICE_H / 2 + 0.5);
          }
        }
        i++;
        continue;
      }
      // Sub-pixel slices: everything starting in this pixel column becomes one rectangle.
      const px = Math.floor(x0);
      const j = Math.max(i + 1, lowerBoundStart(ev, i, hi, t0 + (px + 1) / scale));
      let xe = (ev.end(j - 1) - t0) * scale;
      if (xe < px + 1) xe = px + 1;
      setFill(kindColor(f, i), mask === null ? 0.85 : this.anyMatch(f, i, j, mask) ? 1 : 0.18);
      ctx.fillRect(GUTTER + px, y, Math.min(xe, plotW + 2) - px, SLICE_H);
      i = j;
    }
    if (alpha !== 1) ctx.globalAlpha = 1;
  }

  private anyMatch(f: LoadedFile, i: number, j: number, mask: Uint8Array): boolean {
    // Bounded scan: a merged pixel with thousands of slices is drawn as a match if any of the first 64 is.
    const end = Math.min(j, i + 64);
    for (let k = i; k < end; k++) {
      const n = f.events.name(k);
      if (n !== TL_NONE && mask[n] === 1) return true;
    }
    return false;
  }

  /** x (canvas px) and y (lane top, canvas px) of event s, or null when its lane is unknown. */
  private boxOf(s: Sel, top: number, scale: number): { x0: number; x1: number; y: number } {
    const ev = s.file.events;
    const t0 = this.t0 - s.file.offset;
    const x0 = GUTTER + (ev.start(s.i) - t0) * scale;
    const x1 = GUTTER + (ev.end(s.i) - t0) * scale;
    const y = top + this.laneY.get(s.file)![laneOf(s.file, s.i)];
    return { x0, x1, y };
  }

  private drawSelection(top: number, scale: number): void {
    const ctx = this.ctx;
    this.canvas.dataset.selX = "";
    this.canvas.dataset.selY = "";
    for (const s of [this.hovered, this.selected]) {
      if (!s) continue;
      const p = s.file.events.partner(s.i);
      if (p === TL_NONE) continue;
      const a = this.boxOf(s, top, scale);
      const b = this.boxOf({ file: s.file, i: p }, top, scale);
      // The flow goes from the launch (host) to the device work, start to start, as Kineto's ac2g flows do.
      const host = (s.file.events.flags(s.i) & Flag.FLOW_START) !== 0 ? a : b;
      const dev = host === a ? b : a;
      this.arrow(host.x0, host.y + SLICE_H / 2, dev.x0, dev.y + SLICE_H / 2, s === this.selected);
      ctx.strokeStyle = "#1a73e8";
      ctx.lineWidth = 1.5;
      const other = host === a ? b : a;
      ctx.strokeRect(other.x0 - 1, other.y - 1, Math.max(other.x1 - other.x0, 1) + 2, SLICE_H + 2);
    }
    const s = this.selected;
    if (!s) return;
    const b = this.boxOf(s, top, scale);
    ctx.strokeStyle = "#000000";
    ctx.lineWidth = 2;
    ctx.strokeRect(b.x0 - 1, b.y - 1, Math.max(b.x1 - b.x0, 1) + 2, SLICE_H + 2);
    const cx = (Math.max(b.x0, GUTTER) + Math.min(Math.max(b.x1, b.x0 + 1), this.width)) / 2;
    if (cx >= GUTTER && cx <= this.width && b.y >= AXIS_H && b.y + SLICE_H <= this.height) {
      this.canvas.dataset.selX = String(Math.round(cx));
      this.canvas.dataset.selY = String(Math.round(b.y + SLICE_H / 2));
    }
  }

  private arrow(x0: number, y0: number, x1: number, y1: number, strong: boolean): void {
    const ctx = this.ctx;
    ctx.strokeStyle = strong ? "#1a73e8" : "#5f6368";
    ctx.fillStyle = ctx.strokeStyle;
    ctx.lineWidth = strong ? 2 : 1.5;
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    const my = (y0 + y1) / 2;
    ctx.bezierCurveTo(x0, my, x1, my, x1, y1);
    ctx.stroke();
    const dir = y1 >= y0 ? 1 : -1;
    ctx.beginPath();
    ctx.moveTo(x1, y1 - dir);
    ctx.lineTo(x1 - 4, y1 - dir * 8);
    ctx.lineTo(x1 + 4, y1 - dir * 8);
    ctx.closePath();
    ctx.fill();
  }

  private drawAxis(scale: number): void {
    const ctx = this.ctx;
    const W = this.width;
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, W, AXIS_H);
    ctx.fillStyle = "#dadce0";
    ctx.fillRect(0, AXIS_H - 1, W, 1);
    const a = this.t0 - this.origin;
    const b = this.t1 - this.origin;
    // Ticks at least as far apart as their longest label is wide.
    let minPx = 90;
    let step = niceStep(minPx / scale);
    for (let k = 0; k < 4; k++) {
      const w = Math.max(tick(a, step).length, tick(b, step).length) * CHAR_W + 16;
      if (w <= minPx) break;
      minPx = w;
      step = niceStep(minPx / scale);
    }
    ctx.fillStyle = "#5f6368";
    ctx.font = FONT;
    for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
      const x = GUTTER + (t - a) * scale;
      ctx.fillRect(x, AXIS_H - 6, 1, 6);
      ctx.fillText(tick(t, step), x + 3, AXIS_H / 2);
    }
    ctx.fillStyle = "#202124";
    ctx.fillText(`window ${dur(b - a)}`, 8, AXIS_H / 2);
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

  select(s: Sel | null): void {
    this.selected = s;
    this.onselect(s);
    this.invalidate();
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

  private zoomAt(x: number, factor: number): void {
    const px = Math.max(0, x - GUTTER);
    const plotW = this.width - GUTTER;
    const tAt = this.t0 + (px / plotW) * (this.t1 - this.t0);
    let span = (this.t1 - this.t0) * factor;
    span = Math.max(span, 50); // 50 ns across the plot at most zoomed in
    this.t0 = tAt - (px / plotW) * span;
    this.t1 = this.t0 + span;
    this.invalidate();
  }

  private pan(dx: number): void {
    const dt = (dx / (this.width - GUTTER)) * (this.t1 - this.t0);
    this.t0 += dt;
    this.t1 += dt;
    this.invalidate();
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    const [x] = this.local(e);
    const k = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    if (e.shiftKey || x < GUTTER) {
      this.scrollY += (e.deltaY || e.deltaX) * k;
      this.clampScroll();
      this.invalidate();
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
    this.drag = { x, y, t0: this.t0, t1: this.t1, sy: this.scrollY, moved: false };
    this.canvas.focus();
    e.preventDefault();
  }

  private onMove(e: MouseEvent): void {
    const [x, y] = this.local(e);
    const d = this.drag;
    if (d) {
      if (!d.moved && Math.abs(x - d.x) + Math.abs(y - d.y) > 3) d.moved = true;
      if (d.moved) {
        const dt = ((x - d.x) / (this.width - GUTTER)) * (d.t1 - d.t0);
        this.t0 = d.t0 - dt;
        this.t1 = d.t1 - dt;
        this.scrollY = d.sy - (y - d.y);
        this.clampScroll();
        this.canvas.style.cursor = "grabbing";
        this.invalidate();
      }
      return;
    }
    if (e.target !== this.canvas) return;
    this.setHover(this.hit(x, y), x, y);
  }

  private onUp(e: MouseEvent): void {
    const d = this.drag;
    if (!d) return;
    this.drag = null;
    this.canvas.style.cursor = "";
    if (!d.moved) {
      const [x, y] = this.local(e);
      this.select(this.hit(x, y));
    }
  }

  private onKey(e: KeyboardEvent): void {
    const W = this.width;
    switch (e.key) {
      case "w":
      case "W":
        this.zoomAt(GUTTER + (W - GUTTER) / 2, 0.7);
        break;
      case "s":
      case "S":
        this.zoomAt(GUTTER + (W - GUTTER) / 2, 1 / 0.7);
        break;
      case "a":
      case "A":
        this.pan(-(W - GUTTER) * 0.2);
        break;
      case "d":
      case "D":
        this.pan((W - GUTTER) * 0.2);
        break;
      case "f":
      case "F":
        this.fit();
        break;
      case "Escape":
        this.select(null);
        break;
      default:
        return;
    }
    e.preventDefault();
  }
}
