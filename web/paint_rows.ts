/**
 * The timeline's rows painted straight from the core's tables (web/view.ts calls these once per visible lane and
 * counter row each frame): per lane the visible window is found by binary search and slices narrower than a pixel
 * are merged into one rectangle per pixel column, so a frame costs O(pixels × log n) whatever the number of events.
 */
import { TL_NONE } from "../src/core/timeline.js";
import { counterValue, eventName, lowerBoundEnd, lowerBoundStart, rowWord, type LoadedFile } from "./model.js";
import { kindColor, textColor } from "./theme.js";
import { GUTTER, fitText, sliceLabel } from "./overlays.js";

/** Height of a slice (px). */
export const SLICE_H = 14;

/** What painting a row needs from the view, for one frame. */
export interface RowPaint {
  ctx: CanvasRenderingContext2D;
  /** The visible window on the view axis (ns). */
  t0: number;
  t1: number;
  /** Canvas width (CSS px), the label gutter included. */
  width: number;
  /** Per file, the names a search matches (1 = match); null when no search is active. */
  matches: Map<LoadedFile, Uint8Array> | null;
  /** Per file and counter row, its largest value (filled on first need, kept by the view across frames). */
  counterMax: Map<LoadedFile, Map<number, number>>;
}

/** Draws lane `l` of file `f` at y. */
export function drawLane(p: RowPaint, f: LoadedFile, l: number, y: number, scale: number): void {
  const ctx = p.ctx;
  const ev = f.events;
  const L = f.lanes;
  const lo = L.first(l);
  const hi = lo + L.count(l);
  const t0 = p.t0 - f.offset;
  const t1 = p.t1 - f.offset;
  const plotW = p.width - GUTTER;
  const mask = p.matches?.get(f) ?? null;
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
        const n = ev.name(i);
        const short = f.shortNames[n];
        const label = short === undefined ? fitText(eventName(f, i), b - a - 6) : sliceLabel(short, f.leafNames[n], b - a - 6);
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
    setFill(kindColor(f, i), mask === null ? 0.85 : anyMatch(f, i, j, mask) ? 1 : 0.18);
    ctx.fillRect(GUTTER + px, y, Math.min(xe, plotW + 2) - px, SLICE_H);
    i = j;
  }
  if (alpha !== 1) ctx.globalAlpha = 1;
}

/**
 * Draws counter row `row` of file `f` (a device counter's samples, in start order) at y as a counter track, as
 * Perfetto draws one: each sample's value holds until the next sample (the last one's to the end of the file), as
 * a bar scaled to the row's largest value. Samples closer than a pixel become one column at their largest value,
 * the next column found by binary search, so a frame costs O(pixels × log n) here too.
 */
export function drawCounter(p: RowPaint, f: LoadedFile, row: number, y: number, scale: number): void {
  const ctx = p.ctx;
  const ev = f.events;
  const lo = rowWord(f, row, 6);
  const hi = lo + rowWord(f, row, 7);
  if (hi === lo) return;
  const t0 = p.t0 - f.offset;
  const t1 = p.t1 - f.offset;
  const plotW = p.width - GUTTER;
  const max = counterMax(p.counterMax, f, row);
  const mask = p.matches?.get(f) ?? null;
  const n = ev.name(lo);
  ctx.fillStyle = kindColor(f, lo);
  ctx.globalAlpha = mask === null || (n !== TL_NONE && mask[n] === 1) ? 0.75 : 0.18;
  const bar = (xa: number, xb: number, v: number) => {
    const a = Math.max(xa, -2);
    const b = Math.min(xb, plotW + 2);
    if (b <= a) return;
    const h = max > 0 ? Math.max(1, (v / max) * SLICE_H) : 1;
    ctx.fillRect(GUTTER + a, y + SLICE_H - h, b - a, h);
  };
  // From the sample in effect at the window's start.
  let i = Math.max(lo, lowerBoundStart(ev, lo, hi, t0) - 1);
  while (i < hi) {
    const s = ev.start(i);
    if (s > t1) break;
    const x0 = (s - t0) * scale;
    const next = i + 1 < hi ? (ev.start(i + 1) - t0) * scale : (f.meta.header.maxEnd - t0) * scale;
    if (next - x0 >= 1 || i + 1 >= hi) {
      bar(x0, Math.max(next, x0 + 1), counterValue(f, i));
      i++;
      continue;
    }
    // Samples within this pixel column: one column at their largest value (the first 64 looked at).
    const px = Math.floor(x0);
    const j = Math.max(i + 1, lowerBoundStart(ev, i, hi, t0 + (px + 1) / scale));
    let v = 0;
    for (let k = i; k < Math.min(j, i + 64); k++) v = Math.max(v, counterValue(f, k));
    bar(px, px + 1, v);
    i = j;
  }
  ctx.globalAlpha = 1;
}

/** The largest value of counter row `row` of `f` (computed once per row). */
function counterMax(cache: Map<LoadedFile, Map<number, number>>, f: LoadedFile, row: number): number {
  let m = cache.get(f);
  if (!m) cache.set(f, (m = new Map()));
  let v = m.get(row);
  if (v === undefined) {
    v = 0;
    const lo = rowWord(f, row, 6);
    for (let i = lo; i < lo + rowWord(f, row, 7); i++) v = Math.max(v, counterValue(f, i));
    m.set(row, v);
  }
  return v;
}

function anyMatch(f: LoadedFile, i: number, j: number, mask: Uint8Array): boolean {
  // Bounded scan: a merged pixel with thousands of slices is drawn as a match if any of the first 64 is.
  const end = Math.min(j, i + 64);
  for (let k = i; k < end; k++) {
    const n = f.events.name(k);
    if (n !== TL_NONE && mask[n] === 1) return true;
  }
  return false;
}
