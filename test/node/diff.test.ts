/**
 * src/node/diff.ts's text: the change column (a percentage, or from ten times on a factor in three digits whose unit
 * is chosen after rounding) and percentage points for rows in %. The figures themselves: test/interop/fidelity_diff.test.ts.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { diffStats, factor, formatDiff, type DiffRow } from "../../src/node/diff.js";
import type { TraceStats } from "../../src/core/stats.js";
import type { StepStats } from "../../src/core/step_stats.js";

test("factor: three digits, k/M/G after rounding (never 1.00e+3)", () => {
  const cases: Array<[number, string]> = [
    [10, "10.0"], [55.5, "55.5"], [99.96, "100"], [227, "227"], [999.4, "999"], [999.6, "1.00k"], [3015, "3.02k"],
    [9999.6, "10.0k"], [95560, "95.6k"], [999700, "1.00M"], [2e9, "2.00G"],
  ];
  for (const [x, want] of cases) assert.is(factor(x), want, String(x));
});

test("formatDiff: +28.0% below ten times, ×N from ten times on, new for none in A, pp for rows in %", () => {
  const row = (group: string, name: string, unit: string, a: number, b: number): DiffRow => ({
    group, name, unit, a, b, delta: b - a, deltaPct: a === 0 ? null : ((b - a) / a) * 100, countA: 1, countB: 1,
  } as DiffRow);
  const text = formatDiff("A", "B", [
    row("device", "GPU 0 busy", "%", 0.119, 0.154), row("kernel", "k1", "ms", 8.353, 10.692),
    row("runtime", "cudaFree", "ms", 0.069, 6553.827), row("runtime", "cudaNew", "ms", 0, 5),
  ]);
  assert.match(text, /GPU 0 busy \(%\)\s+0\.119\s+0\.154\s+\+0\.035 pp\s+\+29\.4%/);
  assert.match(text, /kernel ms\s+8\.353\s+10\.692\s+\+2\.339\s+\+28\.0%/);
  assert.match(text, /\+6553\.758\s+×95\.0k/);
  assert.match(text, /\+5\.000\s+new/);
  // A long (C++) name is cut at 120 characters, as in `stats` (before: whole, kilobytes on one line).
  const long = `void at::native::reduce_kernel<512, 1, at::native::ReduceOp<${"float, ".repeat(60)}4> >(void)`;
  const cut = formatDiff("A", "B", [row("kernel", long, "ms", 1, 2)]).split("\n").at(-1)!;
  assert.ok(cut.endsWith(`${long.slice(0, 119)}…`), cut);
});

test("diffStats with --steps: a side with no steps gets the count row only, and the text says why", () => {
  const stats = { spanNs: 1e9, devices: [], names: [] } as unknown as TraceStats;
  const step = (spanNs: number) => ({ spanNs, busyPct: 50, launchP50Ns: 5000, launchP99Ns: 9000 }) as unknown as StepStats;
  const one = diffStats(stats, stats, [], [step(4e6), step(5e6)]);
  assert.equal(one.filter((r) => r.group === "steps").map((r) => r.name), ["steps"]);
  assert.match(formatDiff("a", "b", one), /no steps in A \(--steps matched no range there\): the per-step figures are left out/);
  const both = diffStats(stats, stats, [step(3e6)], [step(4e6), step(5e6)]);
  assert.equal(both.filter((r) => r.group === "steps").map((r) => r.name),
    ["steps", "mean step time", "median step time", "mean busy", "mean launch p50", "mean launch p99"]);
  assert.is(both.find((r) => r.name === "median step time")!.b, 4, "nearest rank: the lower middle of two");
  assert.not.match(formatDiff("a", "b", both), /no steps in/);
});

test.run();
