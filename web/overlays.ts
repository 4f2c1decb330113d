/**
 * What the timeline draws over the slices, and its time axis: the range selection band, the user's marks, the
 * measurement, the launch → kernel flow arrow, and the axis (ticks in the unit the zoom asks for, counted from the
 * trace start or from the range's start). Plain functions of one frame's geometry ({@link Frame}).
 */
import { dur, niceStep, tick } from "./format.js";
import type { Palette } from "./theme.js";
import type { RowRef } from "./aggregate.js";

/** Height of the time axis (px). */
export const AXIS_H = 24;
/** Width of the row labels (px). */
export const GUTTER = 250;
export const FONT = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
/** Average character width of {@link FONT} (px), for fitting labels without measuring. */
export const CHAR_W = 6.1;

/** Geometry of the frame being drawn: canvas size (CSS px), view start (ns), px per ns, content top. */
export interface Frame {
  ctx: CanvasRenderingContext2D;
  pal: Palette;
  width: number;
  height: number;
  t0: number;
  scale: number;
  top: number;
}

/** x (px) of view-axis time t. */
export function xOf(f: Frame, t: number): number {
  return GUTTER + (t - f.t0) * f.scale;
}

/**
 * `s` cut to `px` wide with an ellipsis, as `width` measures text (the canvas's measureText in the font it is drawn
 * in: a bold label is wider than {@link fitText}'s estimate for the regular font). The longest prefix that fits.
 */
export function fitWidth(s: string, px: number, width: (t: string) => number): string {
  if (width(s) <= px) return s;
  let lo = 0;
  let hi = s.length - 1;
  while (lo < hi) {
    const m = (lo + hi + 1) >> 1;
    if (width(`${s.slice(0, m)}…`) <= px) lo = m;
    else hi = m - 1;
  }
  return lo > 0 ? `${s.slice(0, lo)}…` : "";
}

/** Characters of a file's name a group header keeps at least when it shortens the name ({@link fitHeader}). */
const MIN_TAG = 8;

/**
 * A group header's `label` fitted to `px` as `width` measures it. Once several files are open the label holds the
 * file's name (`tag`, e.g. `(aligned) rawtrace-node7-rank3-41522.rawtrace · GPU 0 · NVIDIA H100`), and cut at its end
 * every group of a file with a long name read alike: the name is shortened first — its `.rawtrace` / `.rawtrace.gz`
 * dropped, then its middle, keeping its start and end (a rank, a pid) and at least {@link MIN_TAG} characters — as
 * little as lets the group's first words after it (CPU, GPU n) show; what still does not fit is cut at the end
 * ({@link fitWidth}). Without `tag`, or when the tag is not in the label, {@link fitWidth} alone.
 */
export function fitHeader(label: string, tag: string | undefined, px: number, width: (t: string) => number): string {
  // The name where the group's words follow it: a short name ("gned") may also be inside "(aligned) " before it.
  const at = !tag ? -1 : label.includes(`${tag} · `) ? label.indexOf(`${tag} · `) : label.lastIndexOf(tag);
  if (width(label) <= px || !tag || at < 0) return fitWidth(label, px, width);
  const head = label.slice(0, at);
  const tail = label.slice(at + tag.length);
  // "name.rawtrace (2)" → "name (2)": the extension says nothing about which file it is.
  const short = tag.replace(/\.rawtrace(\.gz)?(?=( \(\d+\))?$)/, "");
  // What must stay after the name: the group's first words (" · CPU", " · GPU 0"), then an ellipsis.
  const kindEnd = tail.indexOf(" · ", 3);
  const need = `${kindEnd > 0 ? tail.slice(0, kindEnd) : tail}…`;
  const fits = (name: string) => width(head + name + tail) <= px || width(head + name + need) <= px;
  if (fits(short)) return fitWidth(head + short + tail, px, width);
  const mid = (k: number) => `${short.slice(0, Math.ceil(k / 2))}…${short.slice(short.length - Math.floor(k / 2))}`;
  // The most characters of the name kept (an ellipsis in its middle's place) that leave the group's words room.
  let lo = Math.min(MIN_TAG, short.length - 1);
  let hi = short.length - 1;
  if (lo < 1) return fitWidth(head + short + tail, px, width);
  while (lo < hi) {
    const m = (lo + hi + 1) >> 1;
    if (fits(mid(m))) lo = m;
    else hi = m - 1;
  }
  return fitWidth(head + mid(lo) + tail, px, width);
}

/**
 * A slice's label in `px`: its short name when it fits, else its last `::` part (`leaf`: the kernel or function
 * itself, which says more in a narrow slice than "at::na…"), cut as {@link fitText} cuts.
 */
export function sliceLabel(short: string, leaf: string, px: number): string {
  return fitText(short.length * CHAR_W <= px ? short : leaf, px);
}

/** `s` cut to about `px` wide with an ellipsis (estimated for the regular font: cheap, for slice labels). */
export function fitText(s: string, px: number): string {
  const max = Math.floor(px / CHAR_W);
  if (s.length <= max) return s;
  return max > 1 ? `${s.slice(0, max - 1)}…` : "";
}

/** A flow arrow from (x0, y0) to (x1, y1); `strong` for the selection's. */
export function arrow(f: Frame, x0: number, y0: number, x1: number, y1: number, strong: boolean): void {
  const ctx = f.ctx;
  ctx.strokeStyle = strong ? f.pal.accent : f.pal.flow;
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

/** The range: a band over all tracks (stronger over its chosen rows, boxes in content y), with its edges. */
export function drawRange(
  f: Frame, r: { t0: number; t1: number; rows: RowRef[] | null } | null, boxes: Array<RowRef & { y: number; h: number }>,
): void {
  if (!r) return;
  const ctx = f.ctx;
  const x0 = xOf(f, r.t0);
  const x1 = Math.max(xOf(f, r.t1), x0 + 1);
  ctx.fillStyle = f.pal.range;
  ctx.fillRect(x0, AXIS_H, x1 - x0, f.height - AXIS_H);
  if (r.rows) {
    ctx.fillStyle = f.pal.rangeRows;
    for (const rb of boxes) {
      if (r.rows.some((x) => x.file === rb.file && x.row === rb.row)) ctx.fillRect(x0, f.top + rb.y, x1 - x0, rb.h);
    }
  }
  ctx.fillStyle = f.pal.rangeEdge;
  ctx.fillRect(x0, AXIS_H, 1, f.height - AXIS_H);
  ctx.fillRect(x1, AXIS_H, 1, f.height - AXIS_H);
}

/** Marks: dashed vertical lines (numbered on the axis by {@link drawAxis}). */
export function drawMarks(f: Frame, marks: number[]): void {
  const ctx = f.ctx;
  ctx.fillStyle = f.pal.mark;
  for (const m of marks) {
    const x = Math.round(xOf(f, m));
    if (x < GUTTER || x > f.width) continue;
    for (let y = AXIS_H; y < f.height; y += 8) ctx.fillRect(x, y, 1, 4);
  }
}

/** The measurement: a bracket between its two times at its content height, labelled with the duration. */
export function drawMeasure(f: Frame, m: { a: number; b: number; y: number } | null): void {
  if (!m) return;
  const ctx = f.ctx;
  const xa = xOf(f, Math.min(m.a, m.b));
  const xb = xOf(f, Math.max(m.a, m.b));
  const y = f.top + m.y;
  ctx.strokeStyle = f.pal.measure;
  ctx.fillStyle = f.pal.measure;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(xa, y);
  ctx.lineTo(xb, y);
  ctx.moveTo(xa, y - 7);
  ctx.lineTo(xa, y + 7);
  ctx.moveTo(xb, y - 7);
  ctx.lineTo(xb, y + 7);
  ctx.stroke();
  const label = dur(Math.abs(m.b - m.a));
  const w = label.length * CHAR_W + 8;
  const lx = Math.min(Math.max((xa + xb) / 2 - w / 2, GUTTER + 2), f.width - w - 2);
  ctx.fillRect(lx, y - 20, w, 14);
  ctx.fillStyle = "#ffffff";
  ctx.fillText(label, lx + 4, y - 13);
}

/**
 * The time axis for the window [f.t0, t1] (view axis), labelled relative to `origin` (the trace start, or the
 * range's start), with the range shaded and the marks numbered; `aligned`: a file from another run was moved to
 * start with the first (web/layout.ts), which the corner says.
 */
export function drawAxis(
  f: Frame, t1: number, origin: number, range: { t0: number; t1: number } | null, marks: number[], aligned = false,
): void {
  const ctx = f.ctx;
  const P = f.pal;
  const W = f.width;
  const scale = f.scale;
  ctx.fillStyle = P.bg;
  ctx.fillRect(0, 0, W, AXIS_H);
  ctx.fillStyle = P.line;
  ctx.fillRect(0, AXIS_H - 1, W, 1);
  if (range) {
    ctx.fillStyle = P.rangeRows;
    const x0 = Math.max(xOf(f, range.t0), GUTTER);
    ctx.fillRect(x0, 0, Math.max(xOf(f, range.t1), x0 + 1) - x0, AXIS_H - 1);
  }
  const a = f.t0 - origin;
  const b = t1 - origin;
  // Ticks at least as far apart as their longest label is wide.
  let minPx = 90;
  let step = niceStep(minPx / scale);
  for (let k = 0; k < 4; k++) {
    const w = Math.max(tick(a, step).length, tick(b, step).length) * CHAR_W + 16;
    if (w <= minPx) break;
    minPx = w;
    step = niceStep(minPx / scale);
  }
  ctx.fillStyle = P.axisText;
  ctx.font = FONT;
  // Ticks by index, not by adding `step` to t: far from 0 (a window restored from a link, or zoomed far out and
  // panned) a step below a double's resolution there leaves t unchanged and the loop would never end. The count is
  // bounded by the plot's width (ticks are ≥ 90 px apart).
  const first = Math.ceil(a / step);
  const ticks = Math.min(Math.floor(b / step) - first, Math.ceil(W / 8));
  for (let k = 0; k <= ticks; k++) {
    const t = (first + k) * step;
    const x = GUTTER + (t - a) * scale;
    ctx.fillRect(x, AXIS_H - 6, 1, 6);
    ctx.fillText(tick(t, step), x + 3, AXIS_H / 2);
  }
  ctx.fillStyle = P.mark;
  marks.forEach((m, k) => {
    const x = xOf(f, m);
    if (x >= GUTTER && x <= W) ctx.fillText(`▼${k + 1}`, x - 4, AXIS_H - 7);
  });
  ctx.fillStyle = P.gutter;
  ctx.fillRect(0, 0, GUTTER - 1, AXIS_H - 1);
  ctx.fillStyle = P.strong;
  const from = range ? "range start" : aligned ? "aligned starts" : "trace start";
  ctx.fillText(fitText(`window ${dur(b - a)} · 0 = ${from}`, GUTTER - 12), 8, AXIS_H / 2);
}
