/**
 * Per-step statistics (`rawtrace stats --steps`, docs/analysis.md): for each training step and device, the step's
 * time, how busy the GPU was and with what, and the launch overhead — computed from the viewer's timeline tables
 * (src/core/timeline.ts), host side, with the step pattern of src/core/engine.ts.
 *
 * A step's device work is every kernel, memcpy and memset whose launch call started in the step or after it, before
 * the next step started (XProf's grouping, checked against XProf by test/interop/fidelity.test.ts). Over the step's
 * device span (first op's start to last op's end, XProf's step time): busy = the union of that work, kernel /
 * memcpy / memset = the union of each kind, idle = span − busy; launch overhead = kernel start − launch call end.
 * Synchronizations the step's calls waited on count in the span (XProf counts them) but not as busy.
 */
import { type ByteSource, type ConvertOptions, type Engine, stepNumberOf, stepPattern } from "./engine.js";
import { Kind, RowClass, TimelineEvents, TimelineParser, decodeNames, type TimelineMeta } from "./timeline.js";

/** One step on one device. Times in ns; shares in % of the device span. */
export interface StepStats {
  /** The step number (`ProfilerStep#N`'s N, else 1, 2, … in start order, as the outputs number them). */
  step: number;
  /** The step range's name. */
  name: string;
  device: number;
  /** Host range: start (Unix ns) and duration. */
  hostStartNs: bigint;
  hostNs: number;
  /** Device span of the step's work (XProf's step time): first op's start to last op's end. */
  spanNs: number;
  busyPct: number;
  kernelPct: number;
  memcpyPct: number;
  memsetPct: number;
  idlePct: number;
  kernels: number;
  /** Kernel start − launch call end, nearest-rank percentiles (0 without kernels). */
  launchP50Ns: number;
  launchP99Ns: number;
}

/** Length of the union of [start, end) intervals. */
export function unionNs(iv: Array<[number, number]>): number {
  const s = [...iv].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let cs = -Infinity;
  let ce = -Infinity;
  for (const [a, b] of s) {
    if (a > ce) {
      if (ce > cs) total += ce - cs;
      cs = a;
      ce = b;
    } else if (b > ce) ce = b;
  }
  if (ce > cs) total += ce - cs;
  return total;
}

/** Nearest-rank percentile `p` (0–100) of `v` (0 when empty). */
export function percentile(v: number[], p: number): number {
  if (v.length === 0) return 0;
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const pct = (part: number, whole: number) => (whole > 0 ? (100 * part) / whole : 0);

/** The viewer's timeline tables of one file (one timeline pass): what the per-step and gap figures are computed from. */
export interface Timeline {
  ev: TimelineEvents;
  meta: TimelineMeta;
  /** The name table (decodeNames). */
  names: string[];
}

/** Runs the timeline pass over `src` (`steps` marks the step ranges, as in the outputs). */
export async function timelinePass(
  engine: Engine, src: ByteSource, opts: Pick<ConvertOptions, "allApi" | "steps" | "onProgress"> = {},
): Promise<Timeline> {
  const ev = new TimelineEvents();
  const parser = new TimelineParser((chunk) => ev.add(chunk));
  await engine.convert(src, parser.sink, { ...opts, format: "timeline" });
  const meta = parser.finish();
  return { ev, meta, names: decodeNames(meta) };
}

/** Runs the timeline pass over `src` and computes the statistics of every step found with `opts.steps`. */
export async function computeStepStats(
  engine: Engine, src: ByteSource, opts: Pick<ConvertOptions, "allApi" | "steps" | "onProgress"> = {},
): Promise<StepStats[]> {
  return stepStatsOf(await timelinePass(engine, src, opts), opts.steps);
}

/** The statistics of every step found with the step pattern `steps` (src/core/engine.ts stepPattern) in `tl`. */
export function stepStatsOf(tl: Timeline, steps: string | RegExp | undefined): StepStats[] {
  const { ev, meta, names } = tl;
  const base = meta.header.baseNs;
  const re = stepPattern(steps);
  const rowClass = (r: number) => meta.rows[r * 8];
  const rowA = (r: number) => meta.rows[r * 8 + 1];

  // The steps: host ranges whose name matches, in start order, numbered as the core numbers them.
  const found: Array<{ i: number; name: string; start: number }> = [];
  for (let i = 0; i < ev.length; i++) {
    if (ev.kind(i) !== Kind.RANGE || rowClass(ev.row(i)) !== RowClass.HOST_RANGES) continue;
    const name = ev.name(i) < names.length ? names[ev.name(i)] : "";
    if (re.test(name)) found.push({ i, name, start: ev.start(i) });
  }
  found.sort((a, b) => a.start - b.start || a.i - b.i);
  let ordinal = 0;
  const numbers = found.map((s) => (stepNumberOf(s.name) >= 0 ? stepNumberOf(s.name) : ++ordinal));

  // Device work per (step, device).
  interface Acc { span: [number, number]; all: Array<[number, number]>; k: Array<[number, number]>; c: Array<[number, number]>; m: Array<[number, number]>; launch: number[] }
  const acc = new Map<string, Acc>();
  for (let i = 0; i < ev.length; i++) {
    const kind = ev.kind(i);
    if (kind !== Kind.KERNEL && kind !== Kind.MEMCPY && kind !== Kind.MEMSET && kind !== Kind.SYNC) continue;
    const launch = ev.partner(i);
    if (launch === 0xffffffff) continue;
    const t = ev.start(launch);
    let lo = 0;
    let hi = found.length - 1;
    let g = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (found[mid].start <= t) {
        g = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (g < 0) continue;
    const key = `${g}/${rowA(ev.row(i))}`;
    let a = acc.get(key);
    if (!a) acc.set(key, (a = { span: [Infinity, -Infinity], all: [], k: [], c: [], m: [], launch: [] }));
    const iv: [number, number] = [ev.start(i), ev.end(i)];
    a.span[0] = Math.min(a.span[0], iv[0]);
    a.span[1] = Math.max(a.span[1], iv[1]);
    if (kind === Kind.SYNC) continue;
    a.all.push(iv);
    if (kind === Kind.KERNEL) {
      a.k.push(iv);
      a.launch.push(ev.start(i) - ev.end(launch));
    } else (kind === Kind.MEMCPY ? a.c : a.m).push(iv);
  }

  const out: StepStats[] = [];
  for (const [key, a] of acc) {
    const [g, device] = key.split("/").map(Number);
    const s = found[g];
    const span = a.span[1] - a.span[0];
    const busy = unionNs(a.all);
    out.push({
      step: numbers[g], name: s.name, device,
      hostStartNs: base + BigInt(Math.round(s.start)), hostNs: ev.dur(s.i),
      spanNs: span, busyPct: pct(busy, span), kernelPct: pct(unionNs(a.k), span), memcpyPct: pct(unionNs(a.c), span),
      memsetPct: pct(unionNs(a.m), span), idlePct: pct(span - busy, span), kernels: a.k.length,
      launchP50Ns: percentile(a.launch, 50), launchP99Ns: percentile(a.launch, 99),
    });
  }
  return out.sort((x, y) => (x.hostStartNs < y.hostStartNs ? -1 : x.hostStartNs > y.hostStartNs ? 1 : x.device - y.device));
}
