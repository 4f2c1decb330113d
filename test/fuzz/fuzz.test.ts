/**
 * Deterministic CI fuzzing: a fixed seed and a fixed number of cases, so every machine runs exactly the same inputs
 * whatever its speed. Each case (a mutated seed dump, mutate.ts) runs through every output path (harness.ts:
 * Chrome JSON, XSpace, an XSpace host part, timeline tables, stats) and must convert to a well-formed output or fail
 * with a documented fatal error that names an offset, and the paths that converted must agree on the device work
 * (harness.ts crossCheck). Longer runs from other seeds: `npm run fuzz -- --seconds N`
 * (run.ts), which keeps any crash input in test/fixtures/fuzz/ (fixtures.test.ts).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createEngine } from "../../src/node/wasm.js";
import { readFileSync } from "node:fs";
import { Defect, PATHS, cases, crossCheck, execute, newStats, runCase, summary, totalExecutions, type FuzzPath, type Tally } from "./harness.js";
import { STRATEGIES } from "./mutate.js";

/** The CI run: 6,000 cases × 5 paths = 30,000 executions; every 20th case also against a fresh engine. */
const SEED = 20261122;
const CASES = 6000;
const FRESH_EVERY = 20;

test(`fuzz: ${CASES} cases from seed ${SEED} convert or fail cleanly on every path`, async () => {
  const eng = await createEngine();
  const stats = newStats();
  const t0 = performance.now();
  for (const c of cases(SEED)) {
    if (c.index >= CASES) break;
    const defects = await runCase(eng, c, stats, c.index % FRESH_EVERY === 0 ? await createEngine() : undefined);
    assert.equal(defects.map((d) => d.message), [], `case ${c.index} (${c.strategy})`);
  }
  console.log(summary(stats, SEED, performance.now() - t0));
  assert.is(stats.cases, CASES);
  for (const p of PATHS) assert.is(stats.executions[p], CASES, `executions on ${p}`);
  assert.is(stats.freshChecks, (CASES / FRESH_EVERY) * PATHS.length);
  assert.ok(totalExecutions(stats) >= 20000);
  assert.equal(Object.keys(stats.strategies).sort(), [...STRATEGIES].sort(), "every strategy ran");
  // The mutations reach the decoders: most cases convert, and the fatal errors are among them too.
  assert.ok(stats.outcomes.converted > totalExecutions(stats) / 2, "most cases convert");
  assert.ok(Object.keys(stats.outcomes).length > 2, "some cases fail with a documented error");
});

test("the cross-path check sees the device work of a real dump on every path, and fails when two paths disagree", async () => {
  const eng = await createEngine();
  const dump = new Uint8Array(readFileSync("samples/h100_torch_train_nvtx.rawtrace"));
  const t: Partial<Record<FuzzPath, Tally>> = {};
  for (const p of PATHS) assert.is(await execute(eng, dump, p, undefined, (x) => (t[p] = x)), "converted");
  // `rawtrace stats` of this sample: 442 kernels, 13 memcpys, 39 memsets on its device.
  assert.equal(t.chrome!.ops.slice(0, 3), [442, 13, 39]);
  assert.is(t.xspace!.drawn, 442 + 13 + 39);
  crossCheck(t);
  const off = (x: Tally, i: number): Tally => ({ ops: x.ops.map((v, j) => (j === i ? v + 1 : v)), drawn: x.drawn });
  assert.throws(() => crossCheck({ ...t, stats: off(t.stats!, 3) }), (e: unknown) => e instanceof Defect && /stats: device work/.test(e.message));
  assert.throws(() => crossCheck({ ...t, timeline: off(t.timeline!, 1) }), (e: unknown) => e instanceof Defect && /timeline/.test(e.message));
  assert.throws(() => crossCheck({ ...t, xspace: { ops: [], drawn: t.xspace!.drawn - 1 } }), (e: unknown) => e instanceof Defect && /stream lines/.test(e.message));
});

test.run();
