/**
 * Fuzzing the rocprofiler-sdk decoder with a fixed seed and a fixed number of runs (test/fuzz/mutate.ts: blind and
 * structure-aware damage, CRCs recomputed so the decoder sees hostile records, AGENTS and KERNEL_SYMBOLS): seeds are
 * the ROCm sample (SDK 1.0 records of a real MI250 trace), the same trace as SDK 0.5 records, and a small dump with
 * ROCTx ranges, an allocation and HSA calls. Every mutated dump must convert to valid Chrome JSON and XSpace, or fail
 * with a documented fatal error naming an offset: never a trap or invalid output. RAWTRACE_FUZZ_RUNS and
 * RAWTRACE_FUZZ_SEED run it longer or with another seed (12,000 runs with seed 777: no defect).
 */
import { test } from "uvu";
import { fuzzVendorDumps } from "../helpers/fuzz_vendor.js";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { apiRecord, dumpWith, kernel, marker } from "../helpers/rocm_records.js";
import { kinetoToRocprof } from "../../src/tools/kineto_to_rocprof.js";
import { readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";

const RUNS = Number(process.env.RAWTRACE_FUZZ_RUNS ?? 1500);
const SEED = Number(process.env.RAWTRACE_FUZZ_SEED ?? 20261125);

test(`fuzz ROCm: ${RUNS} mutated rocprofiler-sdk dumps convert or fail cleanly (seed ${SEED})`, async () => {
  const trace = readKinetoTrace(fileURLToPath(new URL("../../../shared/data/real/kineto-rocm/minitoy_mi250.json.gz", import.meta.url)));
  const seeds = [
    new Uint8Array(readFileSync(fileURLToPath(new URL("../../samples/mi250_minitoy_rocprof.rawtrace", import.meta.url)))),
    kinetoToRocprof(trace, { sdk: "0.5", recordsPerChunk: 9 }).bytes,
    dumpWith([[marker(1, 11, 0), apiRecord("HIP_RUNTIME_API", 3, 1, 10, 50), apiRecord("HSA_CORE_API", 7, 2, 20, 30),
      kernel(1, 100, 400), marker(2, 12, 500)]], (w) => w.strings([[11n, "step"]])),
  ];
  await fuzzVendorDumps("rocm", seeds, RUNS, SEED);
});

test.run();
