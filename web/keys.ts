/**
 * The timeline's keyboard commands. The page hands them every key typed outside a text field, so they work without
 * a click on the canvas first: W/S or ↑/↓ zoom, A/D or ←/→ pan, PageUp/PageDown scroll rows, F fits (the range when
 * there is one), R makes the selected slice's span (or the visible window) the range, M measures between two
 * selected slices, N marks the selected slice's start (or the middle of the view; again there removes that mark),
 * Escape clears the selection, then the measurement, then the range.
 */
import type { Sel, TimelineView } from "./view.js";

export class TimelineKeys {
  /** The first slice of a keyboard measurement (M), waiting for the second. */
  private measureFrom: Sel | null = null;

  constructor(private readonly view: TimelineView) {}

  /** Runs the command of `e`; returns whether it was one (its default action is then prevented). */
  handle(e: KeyboardEvent): boolean {
    if (e.ctrlKey || e.metaKey || e.altKey) return false;
    const v = this.view;
    switch (e.key) {
      case "w": case "W": case "ArrowUp":
        v.zoomCenter(0.7);
        break;
      case "s": case "S": case "ArrowDown":
        v.zoomCenter(1 / 0.7);
        break;
      case "a": case "A": case "ArrowLeft":
        v.panBy(-0.2);
        break;
      case "d": case "D": case "ArrowRight":
        v.panBy(0.2);
        break;
      case "PageUp":
        v.scrollPage(-0.8);
        break;
      case "PageDown":
        v.scrollPage(0.8);
        break;
      case "f": case "F":
        if (v.range) {
          const pad = (v.range.t1 - v.range.t0) * 0.02;
          v.setWindow(v.range.t0 - pad, v.range.t1 + pad);
        } else v.fit();
        break;
      case "r": case "R":
        this.range();
        break;
      case "m": case "M":
        this.measure();
        break;
      case "n": case "N": {
        const s = v.selected;
        const [a, b] = v.visible;
        // Exactly there only: a mark a pixel away (another slice's, zoomed out) stays.
        v.toggleMark(s ? s.file.offset + s.file.events.start(s.i) : (a + b) / 2, 0);
        break;
      }
      case "Escape":
        if (v.selected) v.select(null);
        else if (v.measure || this.measureFrom) {
          this.measureFrom = null;
          v.setMeasure(null);
        } else if (v.range) v.setRange(null);
        break;
      default:
        return false;
    }
    e.preventDefault();
    return true;
  }

  /** R: the selected slice's span (or, with none, the visible window) becomes the range over all tracks. */
  private range(): void {
    const v = this.view;
    const s = v.selected;
    if (s) {
      const a = s.file.offset + s.file.events.start(s.i);
      v.setRange({ t0: a, t1: a + s.file.events.dur(s.i), rows: null });
    } else {
      const [a, b] = v.visible;
      v.setRange({ t0: a, t1: b, rows: null });
    }
  }

  /**
   * M: the first press remembers the selected slice; the second (another slice selected) measures between their
   * facing edges (end of the earlier → start of the later; start → start when they overlap). With no selection, M
   * measures the range when there is one.
   */
  private measure(): void {
    const v = this.view;
    const s = v.selected;
    if (!s) {
      if (v.range) v.setMeasure({ a: v.range.t0, b: v.range.t1, y: v.scrollTop + 12 });
      return;
    }
    const y = v.laneMid(s);
    const from = this.measureFrom;
    if (!from || (from.file === s.file && from.i === s.i)) {
      this.measureFrom = s;
      const t = s.file.offset + s.file.events.end(s.i);
      v.setMeasure({ a: t, b: t, y });
      return;
    }
    const a0 = from.file.offset + from.file.events.start(from.i);
    const a1 = from.file.offset + from.file.events.end(from.i);
    const b0 = s.file.offset + s.file.events.start(s.i);
    const b1 = s.file.offset + s.file.events.end(s.i);
    this.measureFrom = null;
    if (b0 >= a1) v.setMeasure({ a: a1, b: b0, y });
    else if (a0 >= b1) v.setMeasure({ a: b1, b: a0, y });
    else v.setMeasure({ a: a0, b: b0, y });
  }
}
