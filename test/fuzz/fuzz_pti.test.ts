/**
 * Fuzzing the PTI decoder with a fixed seed and a fixed number of runs (test/fuzz/mutate.ts: blind and
 * structure-aware damage, CRCs recomputed so the decoder sees hostile records, KIND_SIZES, DEVICES and STRINGS):
 * seeds are the XPU sample (PTI 1.2 `_v2` records), the same trace as PTI 0.17 v1 records in small chunks, and a
 * dump without KIND_SIZES. Every mutated dump must convert to valid Chrome JSON and XSpace, or fail with a documented
 * fatal error naming an offset: never a trap or invalid output. RAWTRACE_FUZZ_RUNS and RAWTRACE_FUZZ_SEED run it
 * longer or with another seed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { mutate, rng, STRATEGIES } from "./mutate.js";
import { toChrome } from "../helpers/convert.js";
import { apiCall, copy, external, kernel, ptiDump } from "../helpers/pti_records.js";
import { FATAL_NAMES } from "../../src/core/codes.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { kinetoToPti } from "../../src/tools/kineto_to_pti.js";
import { readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";

const RUNS = Number(process.env.RAWTRACE_FUZZ_RUNS ?? 600);
const SEED = Number(process.env.RAWTRACE_FUZZ_SEED ?? 20261125);

test(`fuzz PTI: ${RUNS} mutated PTI dumps convert or fail cleanly (seed ${SEED})`, async () => {
  const trace = readKinetoTrace(fileURLToPath(new URL("../fixtures/xpu/kineto_xpu_train.json", import.meta.url)));
  const seeds = [
    new Uint8Array(readFileSync(fileURLToPath(new URL("../../samples/xpu_train_pti.rawtrace", import.meta.url)))),
    kinetoToPti(trace, { pti: "0.17", recordsPerChunk: 9 }).bytes,
    ptiDump([[apiCall(6, 17, 1, 10, 50), external(1, 9), kernel("0.17", 1, 100, 400), copy("0.17", 2, 500, 600, 6)]],
      { gen: "0.17", kindSizes: null }),
  ];
  const r = rng(SEED);
  const eng = await createEngine();
  const errors: Record<string, number> = {};
  const perStrategy: Record<string, number> = {};
  let converted = 0;
  for (let run = 0; run < RUNS; run++) {
    let { bytes, strategy } = mutate(seeds[run % seeds.length], r);
    if (r() < 0.3) bytes = mutate(bytes, r).bytes;
    perStrategy[strategy] = (perStrategy[strategy] ?? 0) + 1;
    try {
      const { trace: t } = await toChrome(bytes);
      for (const e of t.traceEvents) {
        if (e.ph === "X") assert.ok(Number.isFinite(e.ts) && Number.isFinite(e.dur) && e.dur >= 0, `finite ts/dur (${strategy})`);
      }
      if (run % 3 === 0) {
        const parts: Buffer[] = [];
        await eng.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
        assert.ok(fromBinary(XSpaceSchema, Buffer.concat(parts)).planes.some((p) => p.name === "/host:CPU"), `XSpace (${strategy})`);
      }
      converted++;
    } catch (e: any) {
      if (e.code === "ERR_ASSERTION" || e.name === "Assertion") throw e;
      assert.ok((FATAL_NAMES as readonly string[]).includes(e.name), `${strategy}: unexpected ${e.name}: ${e.message}`);
      assert.match(e.message, /offset \d+/);
      errors[e.name] = (errors[e.name] ?? 0) + 1;
    }
  }
  console.log(`fuzz pti: ${RUNS} runs, ${converted} converted, clean errors ${JSON.stringify(errors)}`);
  assert.ok(converted > RUNS / 2);
  assert.is(Object.keys(perStrategy).length, STRATEGIES.length, "every strategy ran");
});

test.run();
