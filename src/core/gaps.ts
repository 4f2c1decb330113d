/**
 * Host-side gaps where the GPU starves (`rawtrace stats --gaps`, docs/analysis.md "GPU idle gaps"): per device, the
 * intervals in which the GPU runs nothing although more work is still to come, and what the host thread that issued
 * that next work was doing meanwhile — inside a runtime/driver call, or between calls (its own code: Python, the
 * framework, data loading). Computed host side from the viewer's timeline tables (src/core/timeline.ts), the same
 * pass as the per-step figures (src/core/step_stats.ts).
 *
 * Definitions (every time in ns):
 * - a device's work: its kernels, memcpys and memsets on every stream (synchronizations are not work); busy = their
 *   union; the device span = first op's start to last op's end;
 * - a gap: a maximal interval [start, end) inside the span where none of that work runs, at least `minGapNs` long;
 * - its next op: the op that ends it (the earliest to start at `end`; first in file order on ties), and that op's
 *   launch call (its correlation partner) and host thread;
 * - in API: the length of the union of the launching thread's API calls (runtime and driver calls, as the Chrome
 *   trace shows them) within the gap; between launches = gap − in API;
 * - launch delay: launch call start − gap start (≥ 0: the host issued the work only after the GPU had gone idle —
 *   the host was late; < 0: the work was already queued and waited on something else, e.g. an event or a copy);
 * - covering call: the launching thread's API call with the largest overlap with the gap (earliest on ties), and
 *   covering range: the innermost host range (NVTX, ROCTx) of that thread containing the whole gap.
 * The launch call is the op's flow partner, else the API call with its correlation id (driver calls `--all-api` shows
 * launch work without a flow); without either the host side of a gap is unknown: in API 0, between = the gap, no call.
 */
import { Kind, RowClass } from "./timeline.js";
import type { Timeline } from "./step_stats.js";

/** One gap. */
export interface Gap {
  device: number;
  /** Gap start, Unix ns. */
  startNs: bigint;
  durNs: number;
  /** The op that ends the gap: kind ("kernel", "memcpy", "memset"), name and correlation id. */
  next: { kind: string; name: string; correlation: number };
  /** Its launch call: name, host process and thread, start − gap start; null without one. */
  launch: { name: string; pid: number; tid: number; delayNs: number } | null;
  /** Time of the gap the launching thread spent inside API calls, and outside them. */
  inApiNs: number;
  betweenNs: number;
  /** The launching thread's API call overlapping the gap the most; null when none overlaps. */
  call: { name: string; correlation: number; overlapNs: number } | null;
  /** Innermost host range of the launching thread containing the whole gap; null when none. */
  range: string | null;
}

/** The gaps of one device. */
export interface DeviceGaps {
  device: number;
  /** Device span (first op's start to last op's end) and busy time (union of its work). */
  spanNs: number;
  busyNs: number;
  /** Every idle interval inside the span, however short: span − busy. */
  idleNs: number;
  /** Gaps of at least the threshold: how many, their total, and its split by what the host was doing. */
  gaps: number;
  gapNs: number;
  inApiNs: number;
  betweenNs: number;
  /** Those gaps, longest first (then by start). */
  list: Gap[];
}

/** Default threshold of a gap (10 µs): shorter idle time is launch latency, not starvation. */
export const DEFAULT_MIN_GAP_NS = 10_000;

const KIND_TEXT: Record<number, string> = { [Kind.KERNEL]: "kernel", [Kind.MEMCPY]: "memcpy", [Kind.MEMSET]: "memset" };

/** A host thread's API calls and ranges, sorted by start. */
interface Thread {
  /** API call event indices by start, and the longest call (bounds the backward scan). */
  calls: number[];
  maxCall: number;
  /** Merged (disjoint, sorted) call intervals and the prefix sums of their lengths. */
  merged: Array<[number, number]>;
  prefix: number[];
  ranges: number[];
  maxRange: number;
}

/** Last index in `a` (sorted by key) whose key ≤ x, or -1. */
function lastAtOrBefore(n: number, key: (i: number) => number, x: number): number {
  let lo = 0;
  let hi = n - 1;
  let f = -1;
  while (lo <= hi) {
    const m = (lo + hi) >> 1;
    if (key(m) <= x) {
      f = m;
      lo = m + 1;
    } else hi = m - 1;
  }
  return f;
}

/** Length of the part of [a, b) covered by the thread's merged API calls. */
function coveredNs(t: Thread, a: number, b: number): number {
  const m = t.merged;
  // Merged intervals are disjoint and sorted: those from the last one starting ≤ a to the last starting < b.
  let i = Math.max(0, lastAtOrBefore(m.length, (k) => m[k][0], a));
  let n = 0;
  for (; i < m.length && m[i][0] < b; i++) n += Math.max(0, Math.min(b, m[i][1]) - Math.max(a, m[i][0]));
  return n;
}

/** The gaps of every device in `tl`, of at least `minGapNs` (default {@link DEFAULT_MIN_GAP_NS}). */
export function gapsOf(tl: Timeline, minGapNs = DEFAULT_MIN_GAP_NS): DeviceGaps[] {
  const { ev, meta, names } = tl;
  const rows = meta.rows;
  const base = meta.header.baseNs;
  const nameOf = (i: number) => (ev.name(i) < names.length ? names[ev.name(i)] : "");

  // Device work per device, and each host thread's calls and ranges (keyed by pid/tid).
  const work = new Map<number, number[]>();
  // API calls by correlation id, for device work whose launch draws no flow (`--all-api` shows driver calls that
  // launch work without starting one: cuMemsetD32Async, cuMemcpyHtoDAsync_v2, cuGraphLaunch); -1 where two
  // processes used the id (no launch is named rather than a wrong one).
  const byCorr = new Map<number, number>();
  const threads = new Map<string, Thread>();
  const thread = (r: number) => {
    const key = `${rows[r * 8 + 1]}/${rows[r * 8 + 2]}`;
    let t = threads.get(key);
    if (!t) threads.set(key, (t = { calls: [], maxCall: 0, merged: [], prefix: [], ranges: [], maxRange: 0 }));
    return t;
  };
  for (let i = 0; i < ev.length; i++) {
    const k = ev.kind(i);
    const r = ev.row(i);
    const cls = rows[r * 8];
    if ((k === Kind.KERNEL || k === Kind.MEMCPY || k === Kind.MEMSET) && cls === RowClass.GPU_STREAM) {
      const d = rows[r * 8 + 1];
      let w = work.get(d);
      if (!w) work.set(d, (w = []));
      w.push(i);
    } else if ((k === Kind.API_RUNTIME || k === Kind.API_DRIVER) && cls === RowClass.HOST_API) {
      const t = thread(r);
      t.calls.push(i);
      t.maxCall = Math.max(t.maxCall, ev.dur(i));
      const c = ev.correlation(i);
      if (c !== 0) {
        const seen = byCorr.get(c);
        if (seen === undefined) byCorr.set(c, i);
        else if (seen >= 0 && rows[ev.row(seen) * 8 + 1] !== rows[r * 8 + 1]) byCorr.set(c, -1);
      }
    } else if (k === Kind.RANGE && cls === RowClass.HOST_RANGES) {
      const t = thread(r);
      t.ranges.push(i);
      t.maxRange = Math.max(t.maxRange, ev.dur(i));
    }
  }
  for (const t of threads.values()) {
    t.calls.sort((a, b) => ev.start(a) - ev.start(b) || a - b);
    t.ranges.sort((a, b) => ev.start(a) - ev.start(b) || ev.dur(b) - ev.dur(a) || a - b);
    for (const c of t.calls) {
      const last = t.merged[t.merged.length - 1];
      if (last && ev.start(c) <= last[1]) last[1] = Math.max(last[1], ev.end(c));
      else t.merged.push([ev.start(c), ev.end(c)]);
    }
  }

  const out: DeviceGaps[] = [];
  for (const [device, ops] of [...work].sort((a, b) => a[0] - b[0])) {
    ops.sort((a, b) => ev.start(a) - ev.start(b) || a - b);
    const first = ev.start(ops[0]);
    let end = ev.end(ops[0]);
    let busy = 0;
    let segStart = first;
    const list: Gap[] = [];
    const dg: DeviceGaps = { device, spanNs: 0, busyNs: 0, idleNs: 0, gaps: 0, gapNs: 0, inApiNs: 0, betweenNs: 0, list };
    for (let j = 1; j < ops.length; j++) {
      const o = ops[j];
      if (ev.start(o) <= end) {
        end = Math.max(end, ev.end(o));
        continue;
      }
      busy += end - segStart;
      const a = end;
      const b = ev.start(o);
      segStart = b;
      end = ev.end(o);
      if (b - a >= minGapNs) list.push(gapAt(tl, threads, byCorr, device, a, b, o, base, nameOf));
    }
    busy += end - segStart;
    dg.spanNs = end - first;
    dg.busyNs = busy;
    dg.idleNs = dg.spanNs - busy;
    for (const g of list) {
      dg.gaps++;
      dg.gapNs += g.durNs;
      dg.inApiNs += g.inApiNs;
      dg.betweenNs += g.betweenNs;
    }
    list.sort((x, y) => y.durNs - x.durNs || (x.startNs < y.startNs ? -1 : x.startNs > y.startNs ? 1 : 0));
    out.push(dg);
  }
  return out;
}

/** The gap [a, b) on `device` that op `o` ends. */
function gapAt(
  tl: Timeline, threads: Map<string, Thread>, byCorr: Map<number, number>, device: number, a: number, b: number, o: number,
  base: bigint, nameOf: (i: number) => string,
): Gap {
  const { ev, meta } = tl;
  const rows = meta.rows;
  const dur = b - a;
  const gap: Gap = {
    device, startNs: base + BigInt(Math.round(a)), durNs: dur,
    next: { kind: KIND_TEXT[ev.kind(o)], name: nameOf(o), correlation: ev.correlation(o) },
    launch: null, inApiNs: 0, betweenNs: dur, call: null, range: null,
  };
  let l = ev.partner(o);
  if (l === 0xffffffff) {
    // No flow to its launch: the API call with its correlation id, where one was recorded.
    const c = ev.correlation(o);
    const byId = c !== 0 ? byCorr.get(c) : undefined;
    if (byId === undefined || byId < 0) return gap;
    l = byId;
  }
  const lr = ev.row(l);
  const pid = rows[lr * 8 + 1];
  const tid = rows[lr * 8 + 2];
  gap.launch = { name: nameOf(l), pid, tid, delayNs: ev.start(l) - a };
  const t = threads.get(`${pid}/${tid}`);
  if (!t) return gap;
  gap.inApiNs = coveredNs(t, a, b);
  gap.betweenNs = dur - gap.inApiNs;
  // Covering call: the largest overlap among the calls starting before b (back to the longest call's reach).
  let best = -1;
  let bestOv = 0;
  for (let k = lastAtOrBefore(t.calls.length, (x) => ev.start(t.calls[x]), b - 1); k >= 0; k--) {
    const c = t.calls[k];
    if (ev.start(c) < a - t.maxCall) break;
    const ov = Math.min(b, ev.end(c)) - Math.max(a, ev.start(c));
    if (ov > 0 && (ov > bestOv || (ov === bestOv && ev.start(c) <= ev.start(best)))) {
      best = c;
      bestOv = ov;
    }
  }
  if (best >= 0) gap.call = { name: nameOf(best), correlation: ev.correlation(best), overlapNs: bestOv };
  // Covering range: the innermost (latest-starting) range containing [a, b).
  for (let k = lastAtOrBefore(t.ranges.length, (x) => ev.start(t.ranges[x]), a); k >= 0; k--) {
    const r = t.ranges[k];
    if (ev.start(r) < a - t.maxRange) break;
    if (ev.end(r) >= b) {
      gap.range = nameOf(r);
      break;
    }
  }
  return gap;
}
