/**
 * Fuzzing the Synapse decoder (Habana, vendor 5) with a fixed seed and a fixed number of runs: test/fuzz/mutate.ts's
 * blind and structure-aware damage plus HPU-aware damage (a u64 or a type byte inside an entry of an HPU_TRACE
 * chunk — pointers, long double times, engine fields, the trailer's num/version, the header's size — with the CRCs
 * recomputed so the decoder sees hostile buffers). Seeds: the bundled Gaudi2 sample, the same trace as 'B'/'E' pairs
 * in 112-byte entries over small pulls, and with extraArgs in STRINGS. Every mutated dump must convert to valid
 * Chrome JSON (and XSpace for every third) or fail with a documented fatal error naming an offset: never a trap.
 * A second run feeds test/fuzz/harness.ts's cases of small Synapse dumps through every output path, some against a
 * fresh engine (state left over from an earlier file shows as a difference).
 * RAWTRACE_FUZZ_RUNS and RAWTRACE_FUZZ_SEED run it longer or with another seed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { chunks, fixCrc, mutate, rng } from "./mutate.js";
import { PATHS, cases, newStats, runCase, summary } from "./harness.js";
import { toChrome } from "../helpers/convert.js";
import { FATAL_NAMES } from "../../src/core/codes.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { CHUNK_HEADER_SIZE, ChunkType } from "../../src/format/container.js";
import { kinetoToSynapse } from "../../src/tools/kineto_to_synapse.js";
import { gaudi2Sample, gaudi2SampleTrace } from "../../src/tools/gaudi2_sample.js";

const RUNS = Number(process.env.RAWTRACE_FUZZ_RUNS ?? 400);
const SEED = Number(process.env.RAWTRACE_FUZZ_SEED ?? 20261125);

/** Damage inside one HPU_TRACE chunk: a u64 of an entry, header or trailer, or a type byte; CRCs fixed. */
function mutateHpu(input: Uint8Array, r: () => number): Uint8Array {
  const b = input.slice();
  const hs = chunks(b).filter((c) => c.type === ChunkType.HPU_TRACE && c.len > 64);
  if (!hs.length) return b;
  const c = hs[Math.floor(r() * hs.length)];
  const p = c.off + CHUNK_HEADER_SIZE;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const vals = [0n, 1n, 0xffffffffffffffffn, 0x7fffffffffffffffn, 0x8000000000000000n, BigInt(Math.floor(r() * 2 ** 32)),
    dv.getBigUint64(p, true) + BigInt(Math.floor(r() * 4096))];
  const v = vals[Math.floor(r() * vals.length)];
  const where = r();
  let at: number;
  if (where < 0.1) at = p + 8 * Math.floor(r() * 6); // header
  else if (where < 0.2) at = p + c.len - 16 + 8 * Math.floor(r() * 2); // trailer num / version
  else at = p + 48 + 8 * Math.floor(r() * ((c.len - 64) / 8)); // entries and pool
  if (r() < 0.2) b[at] = [0x42, 0x45, 0x58, 0x4d, 0x43, 0x51, 0][Math.floor(r() * 7)];
  else dv.setBigUint64(at, v, true);
  fixCrc(b, c.off);
  return b;
}

test(`fuzz HPU: ${RUNS} mutated Synapse dumps convert or fail cleanly (seed ${SEED})`, async () => {
  const t = gaudi2SampleTrace(2);
  const seeds = [
    gaudi2Sample(),
    kinetoToSynapse(t, { layout: 112, beginEnd: true, perPull: 40 }).bytes,
    kinetoToSynapse(t, { externalArgs: true, perPull: 120 }).bytes,
  ];
  const r = rng(SEED);
  const eng = await createEngine();
  const errors: Record<string, number> = {};
  let converted = 0;
  let hpuAware = 0;
  for (let run = 0; run < RUNS; run++) {
    const seed = seeds[run % seeds.length];
    let bytes: Uint8Array;
    let strategy: string;
    if (r() < 0.5) {
      bytes = mutateHpu(seed, r);
      if (r() < 0.3) bytes = mutateHpu(bytes, r);
      strategy = "hpu";
      hpuAware++;
    } else ({ bytes, strategy } = mutate(seed, r));
    try {
      const { trace } = await toChrome(bytes);
      for (const e of trace.traceEvents) {
        if (e.ph === "X") assert.ok(Number.isFinite(e.ts) && Number.isFinite(e.dur) && e.dur >= 0, `finite ts/dur (${strategy})`);
      }
      if (run % 3 === 0) {
        const parts: Buffer[] = [];
        await eng.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
        fromBinary(XSpaceSchema, Buffer.concat(parts));
      }
      converted++;
    } catch (e: any) {
      if (e.code === "ERR_ASSERTION" || e.name === "Assertion") throw e;
      assert.ok((FATAL_NAMES as readonly string[]).includes(e.name), `${strategy} run ${run}: unexpected ${e.name}: ${e.message}`);
      assert.match(e.message, /offset \d+/);
      errors[e.name] = (errors[e.name] ?? 0) + 1;
    }
  }
  console.log(`fuzz hpu: ${RUNS} runs (${hpuAware} HPU-aware), ${converted} converted, clean errors ${JSON.stringify(errors)}`);
  assert.ok(converted > RUNS / 2);
});

test("fuzz HPU on every output path: 600 harness cases (Chrome, XSpace, XSpace host part, timeline, stats), every 8th against a fresh engine", async () => {
  const t = gaudi2SampleTrace(1);
  const seeds = [kinetoToSynapse(t, { perPull: 60 }).bytes, kinetoToSynapse(t, { layout: 112, beginEnd: true, perPull: 50 }).bytes,
    kinetoToSynapse(t, { externalArgs: true, beginEnd: true }).bytes];
  const eng = await createEngine();
  const stats = newStats();
  const t0 = performance.now();
  for (const c of cases(SEED, seeds)) {
    if (c.index >= 600) break;
    const defects = await runCase(eng, c, stats, c.index % 8 === 0 ? await createEngine() : undefined);
    assert.equal(defects.map((d) => d.message), [], `case ${c.index} (${c.strategy})`);
  }
  console.log(summary(stats, SEED, performance.now() - t0));
  for (const p of PATHS) assert.is(stats.executions[p], 600);
  assert.ok(stats.outcomes.converted > 1500);
});

test.run();
