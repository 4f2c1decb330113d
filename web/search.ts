/**
 * Search over every event: a query (case-insensitive substring, or a regular expression) is tested once per
 * distinct name; the events whose name matches are listed per file as one Uint32Array of event indices (4 B per
 * match, no object per event). Stepping (Enter / Shift+Enter) goes to the next / previous match in time order
 * (start, then file, then index) from the current one, a linear scan of the matches per step, so no sort of a
 * million matches is ever needed.
 */
import { Kind, TL_NONE } from "../src/core/timeline.js";
import { eventName, type LoadedFile } from "./model.js";

/** Matches of one query. */
export interface SearchResult {
  /** Per file: 1 for the name ids that match (what the timeline highlights). */
  masks: Map<LoadedFile, Uint8Array>;
  /** Per file: indices of the matching events, in table order. */
  events: Map<LoadedFile, Uint32Array>;
  total: number;
}

/**
 * The name test of a query: `regex` true reads it as a regular expression (case-insensitive; without the `u` flag,
 * so the escapes people type out of habit, `\_` or `\-`, mean the character as in most regex engines); else a
 * case-insensitive substring. Throws a SyntaxError naming the problem for a bad expression.
 */
export function nameTest(query: string, regex: boolean): (name: string) => boolean {
  if (regex) {
    const re = new RegExp(query, "i");
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
    // CUDA graphs have no entry in the name table: they match by the name the page shows ("CUDA Graph 3").
    const hit = (i: number) => {
      const n = ev.name(i);
      return n !== TL_NONE ? mask[n] === 1 : ev.kind(i) === Kind.GRAPH && test(eventName(f, i));
    };
    let count = 0;
    for (let i = 0; i < ev.length; i++) if ((any || ev.name(i) === TL_NONE) && hit(i)) count++;
    const out = new Uint32Array(count);
    if (count) {
      let k = 0;
      for (let i = 0; i < ev.length; i++) if ((any || ev.name(i) === TL_NONE) && hit(i)) out[k++] = i;
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

/** Calls `fn(t, fileIndex, i)` for every match of `r`: `t` the event's start on the view's axis (file offset added). */
function eachMatch(files: LoadedFile[], r: SearchResult, fn: (t: number, fi: number, i: number) => void): void {
  for (let fi = 0; fi < files.length; fi++) {
    const f = files[fi];
    const list = r.events.get(f);
    if (!list) continue;
    const ev = f.events;
    for (let k = 0; k < list.length; k++) fn(f.offset + ev.start(list[k]), fi, list[k]);
  }
}

/**
 * The first `n` matches of `r` in time order (view-axis start, then file order, then index), as stepping visits
 * them: one pass over the matches keeping the earliest `n` in a sorted list (no sort of every match).
 */
export function firstMatches(files: LoadedFile[], r: SearchResult, n: number): Hit[] {
  const keep: Array<{ t: number; fi: number; i: number }> = [];
  if (n <= 0) return [];
  const before = (a: { t: number; fi: number; i: number }, t: number, fi: number, i: number) => (a.t - t || a.fi - fi || a.i - i) < 0;
  eachMatch(files, r, (t, fi, i) => {
    if (keep.length === n && !before({ t, fi, i }, keep[n - 1].t, keep[n - 1].fi, keep[n - 1].i)) return;
    let lo = 0;
    let hi = keep.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(keep[mid], t, fi, i)) lo = mid + 1;
      else hi = mid;
    }
    keep.splice(lo, 0, { t, fi, i });
    if (keep.length > n) keep.pop();
  });
  return keep.map((m) => ({ file: files[m.fi], i: m.i }));
}

/**
 * The match after (`dir` 1) or before (-1) `from` in time order (view-axis start, then file order, then index),
 * wrapping around; the first (last) match when `from` is null. Also returns its 1-based rank among all matches.
 * Null when there are none. Two linear scans of the matches, no allocation per match.
 */
export function stepMatch(files: LoadedFile[], r: SearchResult, from: Hit | null, dir: 1 | -1): { hit: Hit; rank: number } | null {
  if (r.total === 0) return null;
  const fromT = from ? from.file.offset + from.file.events.start(from.i) : 0;
  const fromF = from ? files.indexOf(from.file) : 0;
  const fromI = from ? from.i : 0;
  // Best candidate after `from`, and the extreme match (for wrapping), as (t, file, index) triples.
  let bT = 0, bF = -1, bI = 0;
  let wT = 0, wF = -1, wI = 0;
  eachMatch(files, r, (t, fi, i) => {
    if (wF < 0 || dir * (t - wT || fi - wF || i - wI) < 0) {
      wT = t; wF = fi; wI = i;
    }
    if (from && dir * (t - fromT || fi - fromF || i - fromI) <= 0) return;
    if (bF < 0 || dir * (t - bT || fi - bF || i - bI) < 0) {
      bT = t; bF = fi; bI = i;
    }
  });
  const [hT, hF, hI] = bF >= 0 ? [bT, bF, bI] : [wT, wF, wI];
  // Rank: matches before it in time order, plus one.
  let rank = 1;
  eachMatch(files, r, (t, fi, i) => {
    if ((t - hT || fi - hF || i - hI) < 0) rank++;
  });
  return { hit: { file: files[hF], i: hI }, rank };
}
