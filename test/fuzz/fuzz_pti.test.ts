/**
 * Fuzzing the PTI decoder with a fixed seed and a fixed number of runs (test/fuzz/mutate.ts: blind and
 * structure-aware damage, CRCs recomputed so the decoder sees hostile records, KIND_SIZES, DEVICES and STRINGS):
 * seeds are the XPU sample (PTI 1.2 `_v2` records), the same trace as PTI 0.17 v1 records in small chunks, and a
 * dump without KIND_SIZES. Every mutated dump must convert to valid Chrome JSON and XSpace, or fail with a documented
 * fatal error naming an offset: never a trap or invalid output. RAWTRACE_FUZZ_RUNS and RAWTRACE_FUZZ_SEED run it
 * longer or with another seed.
 */
import { test } from "uvu";
import { fuzzVendorDumps } from "../helpers/fuzz_vendor.js";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { apiCall, copy, external, kernel, ptiDump } from "../helpers/pti_records.js";
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
  await fuzzVendorDumps("pti", seeds, RUNS, SEED);
});

test.run();
