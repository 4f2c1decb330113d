/**
 * Search over every event: a query (case-insensitive substring, or a regular expression) is tested once per
 * distinct name; the events whose name matches are listed per file as one Uint32Array of event indices (4 B per
 * match, no object per event). Stepping (Enter / Shift+Enter) goes to the next / previous match in time order
 * (start, then file, then index) from the current one, a linear scan of the matches per step, so no sort of a
 * million matches is ever needed.
 */
import { TL_NONE } from "../src/core/timeline.js";
import type { LoadedFile } from "./model.js";

/** Matches of one query. */
export interface SearchResult {
  /** Per file: 1 for the name ids that match (what the timeline highlights). */
  masks: Map<LoadedFile, Uint8Array>;
  /** Per file: indices of the matching events, in table order. */
  events: Map<LoadedFile, Uint32Array>;
  total: number;
}

/**
 * The name test of a query: `regex` true reads it as a regular expression (case-insensitive, `u` flag); else a
 * case-insensitive substring. Throws a SyntaxError naming the problem for a bad expression.
 */
export function nameTest(query: string, regex: boolean): (name: string) => boolean {
  if (regex) {
    const re = new RegExp(query, "iu");
    return (s) => re.test(s);
  }
  const q = query.toLowerCase();
  return (s) => s.toLowerCase().includes(q);
}

/** Every event of `files` whose name passes `test`. */
export function searchEvents(files: LoadedFile[], test: (name: string) => boolean): SearchResult {
  const masks = new Map<LoadedFile, Uint8Array>();
  const events = new Map<LoadedFile, Uint32Array>();
  let total = 0;
  for (const f of files) {
    const mask = new Uint8Array(f.names.length);
    let any = false;
    for (let n = 0; n < f.names.length; n++) {
      if (test(f.names[n])) {
        mask[n] = 1;
        any = true;
      }
    }
    masks.set(f, mask);
    const ev = f.events;
    let count = 0;
    if (any) for (let i = 0; i < ev.length; i++) {
      const n = ev.name(i);
      if (n !== TL_NONE && mask[n] === 1) count++;
    }
    const out = new Uint32Array(count);
    if (count) {
      let k = 0;
      for (let i = 0; i < ev.length; i++) {
        const n = ev.name(i);
        if (n !== TL_NONE && mask[n] === 1) out[k++] = i;
      }
    }
    events.set(f, out);
    total += count;
  }
  return { masks, events, total };
}

/** A match: file and event index. */
export interface Hit {
  file: LoadedFile;
  i: number;
}

/** Time-order key comparison of (view-axis start, file order, index). */
function cmp(files: LoadedFile[], a: Hit, ta: number, b: Hit, tb: number): number {
  if (ta !== tb) return ta - tb;
  const fa = files.indexOf(a.file);
  const fb = files.indexOf(b.file);
  return fa !== fb ? fa - fb : a.i - b.i;
}

/**
 * The match after (`dir` 1) or before (-1) `from` in time order, wrapping around; the first (last) match when
 * `from` is null. Also returns its 1-based rank among all matches. Null when there are none.
 */
export function stepMatch(files: LoadedFile[], r: SearchResult, from: Hit | null, dir: 1 | -1): { hit: Hit; rank: number } | null {
  if (r.total === 0) return null;
  const tFrom = from ? from.file.offset + from.file.events.start(from.i) : 0;
  let best: Hit | null = null;
  let tBest = 0;
  let wrap: Hit | null = null; // extreme match in the other direction, for wrapping
  let tWrap = 0;
  for (const f of files) {
    const list = r.events.get(f);
    if (!list) continue;
    const ev = f.events;
    for (let k = 0; k < list.length; k++) {
      const h: Hit = { file: f, i: list[k] };
      const t = f.offset + ev.start(h.i);
      if (!wrap || dir * cmp(files, h, t, wrap, tWrap) < 0) {
        wrap = h;
        tWrap = t;
      }
      if (from && dir * cmp(files, h, t, from, tFrom) <= 0) continue;
      if (!best || dir * cmp(files, h, t, best, tBest) < 0) {
        best = h;
        tBest = t;
      }
    }
  }
  const hit = best ?? wrap!;
  const tHit = best ? tBest : tWrap;
  // Rank: matches before it in time order, plus one.
  let rank = 1;
  for (const f of files) {
    const list = r.events.get(f);
    if (!list) continue;
    for (let k = 0; k < list.length; k++) {
      const h: Hit = { file: f, i: list[k] };
      if (cmp(files, h, f.offset + f.events.start(h.i), hit, tHit) < 0) rank++;
    }
  }
  return { hit, rank };
}
