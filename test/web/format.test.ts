/**
 * The viewer's number formatting (web/format.ts) in Node: axis labels in the unit of their step with the whole part
 * grouped by three digits (zoomed into a long trace, "6205500 µs" read as one long number), durations, exact µs,
 * 1-2-5 steps.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { dur, niceStep, tick, usExact } from "../../web/format.js";

test("tick: the step's unit and decimals, the whole part grouped by three digits", () => {
  assert.is(tick(6_205_500_000, 500_000), "6,205,500 µs"); // 6.2 s into a trace, ticks 500 µs apart
  assert.is(tick(6_205_500_100, 100), "6,205,500,100 ns");
  assert.is(tick(0, 500_000), "0 µs");
  assert.is(tick(999_000, 1_000), "999 µs");
  assert.is(tick(-1_500_000, 500_000), "-1,500 µs");
  assert.is(tick(-150_000, 500_000), "-150 µs");
  assert.is(tick(1_234_500_000_000, 250_000_000), "1,234,500 ms"); // steps under 1 s: in ms
  assert.is(tick(12_300_000, 100_000), "12,300 µs"); // the unit is the step's: 0.1 ms steps in µs
  assert.is(tick(4_000_000_000, 1_000_000_000), "4 s");
  assert.is(tick(12_500_000_000_000, 2_000_000_000), "12,500 s");
  // Every label differs from its neighbours and parses back to its time.
  for (const step of [1, 20, 500, 2_000, 50_000, 1_000_000, 20_000_000, 5_000_000_000]) {
    const labels = [0, 1, 2, 3].map((k) => tick(7_777_000_000_000 + k * step, step));
    assert.is(new Set(labels).size, 4, `${step}: ${labels}`);
    for (const l of labels) assert.match(l, /^-?\d{1,3}(,\d{3})*(\.\d+)? (ns|µs|ms|s)$/, l);
  }
});

test("dur, usExact, niceStep", () => {
  assert.is(dur(840), "840 ns");
  assert.is(dur(12_340), "12.34 µs");
  assert.is(dur(4_560_000), "4.560 ms");
  assert.is(dur(1_234_000_000), "1.234 s");
  // Just under a unit: the next unit once rounded (before: "1000 ns", "1000.0 µs", "1000.0 ms").
  assert.is(dur(999.4), "999 ns");
  assert.is(dur(999.6), "1.000 µs");
  assert.is(dur(999_940), "999.9 µs");
  assert.is(dur(999_999), "1.000 ms");
  assert.is(dur(999_960_000), "1.000 s");
  assert.is(dur(-999_999), "-1.000 ms");
  assert.is(usExact(2501), "2.501");
  assert.is(usExact(-2501), "-2.501");
  assert.is(usExact(6_206_429_105), "6206429.105"); // exact, as the Chrome JSON writes it: not grouped
  for (const [min, want] of [[1, 1], [3, 5], [7, 10], [101, 200], [4_000, 5_000], [6e6, 1e7]] as const) assert.is(niceStep(min), want, `${min}`);
});

test.run();
