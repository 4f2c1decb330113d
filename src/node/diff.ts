/**
 * `rawtrace diff A B`: the statistics of two runs (or two ranks) side by side, largest changes first — like HTA's
 * trace diff, but on raw dumps. Rows: the trace span, per device GPU busy % and kernel / memcpy / memset time, per
 * step (with `--steps`) the mean step time, busy % and launch overhead, and every (kind, name) by total time.
 */
import type { TraceStats } from "../core/stats.js";
import { kindName } from "../core/stats.js";
import { percentile, type StepStats } from "../core/step_stats.js";
import { cutNames } from "./stats.js";

/** One compared figure: its value in A and in B (0 where the figure is absent), B − A and B / A − 1 (%). */
export interface DiffRow {
  /** "trace", "device", "steps", or an event kind name ("kernel", "memcpy", "runtime", …). */
  group: string;
  /** What is compared: "span ms", "GPU 0 busy %", a kernel name, … */
  name: string;
  /** Unit of a and b: "ms", "%", "µs" or "count". */
  unit: string;
  a: number;
  b: number;
  delta: number;
  /** Relative change in % (null when A is 0). */
  deltaPct: number | null;
  /** Event counts in A and B (name rows). */
  countA?: number;
  countB?: number;
}

function row(group: string, name: string, unit: string, a: number, b: number, extra: Partial<DiffRow> = {}): DiffRow {
  return { group, name, unit, a, b, delta: b - a, deltaPct: a !== 0 ? (100 * (b - a)) / a : null, ...extra };
}

const mean = (v: number[]) => (v.length ? v.reduce((x, y) => x + y, 0) / v.length : 0);
/** The nearest-rank median, as the steps' launch p50 (the lower middle value for an even count). */
const median = (v: number[]) => percentile(v, 50);

/**
 * The comparison of two files' statistics (and per-step statistics when given): summary rows first (trace,
 * devices, steps), then one row per (kind, name) present in either, by the size of the change in total time.
 */
export function diffStats(a: TraceStats, b: TraceStats, stepsA?: StepStats[], stepsB?: StepStats[]): DiffRow[] {
  const out: DiffRow[] = [row("trace", "span", "ms", a.spanNs / 1e6, b.spanNs / 1e6)];
  const devices = [...new Set([...a.devices, ...b.devices].map((d) => d.id))].sort((x, y) => x - y);
  for (const id of devices) {
    const da = a.devices.find((d) => d.id === id);
    const db = b.devices.find((d) => d.id === id);
    out.push(row("device", `GPU ${id} busy`, "%", da?.busyPercent ?? 0, db?.busyPercent ?? 0));
    out.push(row("device", `GPU ${id} kernel time`, "ms", (da?.kernelNs ?? 0) / 1e6, (db?.kernelNs ?? 0) / 1e6));
    out.push(row("device", `GPU ${id} memcpy time`, "ms", (da?.memcpyNs ?? 0) / 1e6, (db?.memcpyNs ?? 0) / 1e6));
    out.push(row("device", `GPU ${id} memset time`, "ms", (da?.memsetNs ?? 0) / 1e6, (db?.memsetNs ?? 0) / 1e6));
  }
  if (stepsA && stepsB) {
    out.push(row("steps", "steps", "count", stepsA.length, stepsB.length));
  }
  // Per-step figures compare steps with steps: against a side with none they would compare with 0 ms.
  if (stepsA?.length && stepsB?.length) {
    out.push(row("steps", "mean step time", "ms", mean(stepsA.map((s) => s.spanNs)) / 1e6, mean(stepsB.map((s) => s.spanNs)) / 1e6));
    // The median, which a warm-up step (often 10× the others) does not move: what a steady step costs.
    out.push(row("steps", "median step time", "ms", median(stepsA.map((s) => s.spanNs)) / 1e6, median(stepsB.map((s) => s.spanNs)) / 1e6));
    out.push(row("steps", "mean busy", "%", mean(stepsA.map((s) => s.busyPct)), mean(stepsB.map((s) => s.busyPct))));
    out.push(row("steps", "mean launch p50", "µs", mean(stepsA.map((s) => s.launchP50Ns)) / 1e3, mean(stepsB.map((s) => s.launchP50Ns)) / 1e3));
    out.push(row("steps", "mean launch p99", "µs", mean(stepsA.map((s) => s.launchP99Ns)) / 1e3, mean(stepsB.map((s) => s.launchP99Ns)) / 1e3));
  }
  const key = (kind: number, name: string) => `${kind}\0${name}`;
  const names = new Map<string, { kind: number; name: string; a?: TraceStats["names"][0]; b?: TraceStats["names"][0] }>();
  for (const n of a.names) names.set(key(n.kind, n.name), { kind: n.kind, name: n.name, a: n });
  for (const n of b.names) {
    const e = names.get(key(n.kind, n.name)) ?? { kind: n.kind, name: n.name };
    e.b = n;
    names.set(key(n.kind, n.name), e);
  }
  const byName = [...names.values()].map((e) =>
    row(kindName(e.kind), e.name, "ms", (e.a?.totalNs ?? 0) / 1e6, (e.b?.totalNs ?? 0) / 1e6, { countA: e.a?.count ?? 0, countB: e.b?.count ?? 0 }));
  byName.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || x.group.localeCompare(y.group) || x.name.localeCompare(y.name));
  return [...out, ...byName];
}

const fmt = (v: number, unit: string) => (unit === "count" ? String(v) : v.toFixed(3));
const signed = (v: number, unit: string) => (v > 0 ? "+" : "") + fmt(v, unit);

/** A factor ≥ 10 in three digits: 55.5, 227, 3.02k, 95.6k, 2.00G (the unit chosen after rounding: never 1.00e+3). */
export function factor(x: number): string {
  const units = ["", "k", "M", "G", "T", "P"];
  let u = 0;
  // 999.5 rounds to 1000 in three digits: it is 1.00k.
  while (x >= 999.5 && u < units.length - 1) {
    x /= 1000;
    u++;
  }
  return `${x >= 99.95 ? Math.round(x) : x.toPrecision(3)}${units[u]}`;
}

/**
 * The change column: a percentage with one decimal (`+28.0%`), or from ten times as much on, the factor (`×95.6k`):
 * `+9555951.791%` was hard to read. A row in % (busy time) gets its B − A in percentage points (`pp`) so the two
 * are not mistaken for each other. "new" when A has none of what B has; a row that is 0 in both is unchanged (0.0%).
 */
function change(r: DiffRow): string {
  // A is 0: "new" when B has some (of the time, or of the events of a name row), else both are 0 and nothing changed.
  if (r.deltaPct === null) return r.b !== 0 || (!r.countA && (r.countB ?? 0) > 0) ? "new" : "0.0%";
  if (r.a > 0 && r.b / r.a >= 10) return `×${factor(r.b / r.a)}`;
  return `${r.deltaPct > 0 ? "+" : ""}${r.deltaPct.toFixed(1)}%`;
}

/** The text report: the summary rows, then the `top` (kind, name) rows with the largest changes. */
export function formatDiff(fileA: string, fileB: string, rows: DiffRow[], top = 15): string {
  const summary = rows.filter((r) => r.group === "trace" || r.group === "device" || r.group === "steps");
  const named = rows.filter((r) => !summary.includes(r)).slice(0, top);
  const cells = (r: DiffRow, label: string) => [
    label, fmt(r.a, r.unit), fmt(r.b, r.unit), `${signed(r.delta, r.unit)}${r.unit === "%" ? " pp" : ""}`, change(r),
  ];
  const lines: string[] = [`A: ${fileA}`, `B: ${fileB}`];
  const table = (head: string[], body: string[][]) => {
    const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
    const line = (r: string[]) => "  " + r.map((c, i) => (i === 0 ? c.padEnd(w[0]) : c.padStart(w[i]))).join("  ");
    lines.push(line(head), ...body.map(line));
  };
  table(["figure", "A", "B", "B − A", "change"], summary.map((r) => cells(r, `${r.name} (${r.unit})`)));
  const steps = summary.find((r) => r.group === "steps" && r.name === "steps");
  if (steps && (steps.a === 0 || steps.b === 0)) {
    const none = steps.a === 0 && steps.b === 0 ? "A nor B" : steps.a === 0 ? "A" : "B";
    lines.push(`  no steps in ${none} (--steps matched no range there): the per-step figures are left out`);
  }
  lines.push(`  largest changes in total time (${named.length} of ${rows.length - summary.length} kinds and names)`);
  // Names cut as `stats` cuts them (a C++ kernel's runs to kilobytes: a row per screenful), told apart where the cut
  // makes them read alike; --json keeps them whole.
  const shown = cutNames(named.map((r) => r.name));
  const nm = named.map((r, i) => [...cells(r, `${r.group} ms`), `${r.countA}→${r.countB}`, shown[i]]);
  const head = ["kind", "A", "B", "B − A", "change", "count", "name"];
  const w = head.map((h, i) => Math.max(h.length, ...nm.map((r) => r[i].length)));
  const line = (r: string[]) => ("  " + r.map((c, i) => (i === r.length - 1 ? c : i === 0 ? c.padEnd(w[0]) : c.padStart(w[i]))).join("  ")).trimEnd();
  lines.push(line(head), ...nm.map(line));
  return lines.join("\n");
}
