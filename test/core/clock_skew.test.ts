/**
 * src/core/merge.ts skewMessages: the CLOCK_SKEW warning of an undecided skew (no majority of the ranks agrees)
 * gives how far apart the ranks' clocks are, from the earliest to the latest, whichever side of the median the
 * skewed ranks are on.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { clockReport, skewMessages, type ClockReport, type MergePlan, type SkewedRank } from "../../src/core/merge.js";
import type { FileInfo } from "../../src/core/engine.js";

const S = 1e9;
const rank = (r: number, offsetNs: number): SkewedRank => ({ slot: r, rank: r, host: `node-${r}`, file: `rank${r}.rawtrace`, offsetNs });

function report(agreeing: SkewedRank[], skewed: SkewedRank[]): ClockReport {
  return {
    ranks: [], skewThresholdNs: S, skewed, agreeing, undecided: true, residualSkewNs: 0, medianStartNs: 0n,
  } as unknown as ClockReport;
}

test("two ranks: the later one's offset is the distance between them", () => {
  const [m] = skewMessages(report([rank(0, 0)], [rank(1, 5 * S)]));
  assert.ok(m.includes("clocks 5000.000 ms apart"), m);
  assert.ok(m.includes("(a third rank of the run would tell)"), m);
});

test("three ranks 5 s apart each: the clocks are 10 s apart, not the 5 s of the largest offset from the median", () => {
  const [m] = skewMessages(report([rank(1, 0)], [rank(0, -5 * S), rank(2, 5 * S)]));
  assert.ok(m.includes("clocks 10000.000 ms apart"), m);
  assert.not.ok(m.includes("a third rank"), `three ranks are there already: ${m}`);
});

test("an even split (two and two): from the earliest to the latest", () => {
  const [m] = skewMessages(report([rank(0, -0.5 * S), rank(1, 0)], [rank(2, 4.5 * S), rank(3, 5 * S)]));
  assert.ok(m.includes("clocks 5500.000 ms apart"), m);
});

test("clockReport: a rank whose dump gives no collector start and no event starts at its start anchor, not at 0", () => {
  const T = 1_779_840_000_000_000_000n;
  const info = (collectorStartNs: bigint, firstNs: bigint, anchor: bigint) => ({
    collectorStartNs, firstNs, clock: { start: { vendorNs: 5n, realtimeNs: anchor } },
  }) as unknown as FileInfo;
  const plan = { ranks: [0, 1, 2].map((k) => ({ index: k, slot: k, rank: k, host: "h", file: `r${k}.rawtrace` })) } as unknown as MergePlan;
  // Rank 2 lost its HEADER and every event; its CLOCK start anchor is intact, 1 ms after rank 0's start.
  const c = clockReport(plan, [info(T, T + 10n, T), info(T + 2_000_000n, T + 2_000_010n, T + 2_000_000n), info(0n, 0n, T + 1_000_000n)]);
  assert.is(c.medianStartNs, T + 1_000_000n);
  assert.is(c.residualSkewNs, 2_000_000);
  assert.equal(c.ranks.map((r) => r.startOffsetNs), [-1_000_000, 1_000_000, 0]);
  assert.equal(c.skewed, []);
});

test.run();
