/**
 * Round trip of the real ROCm Kineto trace (../shared/data/real/kineto-rocm/minitoy_mi250.json.gz, a PyTorch
 * training step on MI250, ROCm 6.2): original JSON → `.rawtrace` of rocprofiler-sdk 1.0 and 0.5 records
 * (src/tools/kineto_to_rocprof.ts) → the engine → Chrome JSON, compared with the original's GPU side to the
 * nanosecond: every kernel and copy (name, pid, tid, ts, dur, correlation, External id), every HIP runtime call
 * (name, pid, tid, ts, dur, correlation, External id), the "f" flows on GPU events and the "s" flows on launch calls.
 * Kineto's ROCm build puts the launch shape on the call, not on the kernel, and no byte counts on copies: those are
 * compared separately with what the tool wrote. Prints one line of matched/total counts per SDK layout.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fileURLToPath } from "node:url";
import { WORK_ITEM_GRID, gfxTargetVersion, kinetoToRocprof, type RocpSdk } from "../../src/tools/kineto_to_rocprof.js";
import { readFileSync } from "node:fs";
import {
  compareViews, expectedRoundTripView, kinetoView, parseKinetoJson, readKinetoTrace,
  type CategoryMatch, type KinetoTrace, type TraceView,
} from "../../src/tools/kineto_to_rawtrace.js";
import { Engine, memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

const TRACE = fileURLToPath(new URL("../../../shared/data/real/kineto-rocm/minitoy_mi250.json.gz", import.meta.url));
const SDKS: RocpSdk[] = ["1.0", "0.5"];

/** The fields Kineto's ROCm build and rawtrace both write: launch shape and bytes are left out. */
function common(v: TraceView): TraceView {
  return {
    ops: v.ops.map(({ cat, name, pid, tid, ts, dur, correlation, externalId }) => ({ cat, name, pid, tid, ts, dur, correlation, externalId })),
    api: v.api.map((a) => ({ ...a, cbid: -1 })),
    syncs: v.syncs,
    flows: v.flows,
  };
}

let engine: Engine | null = null;
let original: KinetoTrace;

/**
 * The trace converted to a dump and back. `allApi` by default: the trace was written by Kineto's roctracer build,
 * which shows hipGetDevicePropertiesR0600; rawtrace hides the calls Kineto's rocprofiler-sdk logger hides (its
 * collector's SDK), that one among them.
 */
async function roundTrip(sdk: RocpSdk, perChunk?: number, allApi = true): Promise<{ trace: KinetoTrace; hidden: number }> {
  const { bytes } = kinetoToRocprof(original, { sdk, recordsPerChunk: perChunk });
  engine ??= await createEngine();
  const parts: Buffer[] = [];
  const r = await engine.convert(memorySource(bytes, `mi250-${sdk}.rawtrace`), (b) => parts.push(Buffer.from(b)), { allApi });
  return { trace: parseKinetoJson(Buffer.concat(parts).toString("utf8")), hidden: r.apiCallsHidden };
}

const fmt = (m: CategoryMatch) => `${m.matched}/${m.total}`;

test.before(() => {
  original = readKinetoTrace(TRACE);
});

for (const sdk of SDKS) {
  test(`MI250 trace, rocprofiler-sdk ${sdk}: every kernel, copy, HIP call and flow back to the nanosecond`, async () => {
    const { trace: ours } = await roundTrip(sdk, 7);
    const expected = common(expectedRoundTripView(original));
    const m = compareViews(expected, common(kinetoView(ours)));
    console.log(`roundtrip mi250 rocprofiler-sdk ${sdk}: kernels ${fmt(m.kernels)}, memcpy ${fmt(m.memcpy)}, api ${fmt(m.api)}, ` +
      `flows f ${fmt(m.flowEnds)}, flows s ${fmt(m.flowStarts)}`);
    assert.is(m.kernels.total, 14);
    assert.is(m.memcpy.total, 2);
    assert.is(m.api.total, 21);
    assert.is(m.flowStarts.total, 16);
    for (const [cat, c] of Object.entries(m) as Array<[string, CategoryMatch]>) {
      assert.is(c.matched, c.total, `${cat}: ${c.matched}/${c.total}\n  ${c.problems.join("\n  ")}`);
      assert.is(c.extra, 0, `${cat}: ${c.extra} events not in the original: ${JSON.stringify(c.extraItems.slice(0, 3), (_k, v) => typeof v === "bigint" ? String(v) : v)}`);
    }
    // What Kineto puts on the launch call: on the kernel here, as grid and block; copies carry their bytes.
    const calls = new Map(original.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => [e.args!.correlation, e.args!]));
    const callName = new Map(original.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => [e.args!.correlation, e.name]));
    let inItems = 0;
    for (const k of ours.traceEvents.filter((e) => e.cat === "kernel")) {
      const call = calls.get(k.args!.correlation)!;
      const block = call.block as number[];
      if (WORK_ITEM_GRID.has(String(callName.get(k.args!.correlation)))) {
        // Kineto's roctracer build writes this call's grid in work-items (the union's globalWorkSize); the dispatch
        // record gives work-groups (before 2026-12-03 the tool multiplied it by the block again, so both read 512).
        assert.equal(k.args!.grid, (call.grid as number[]).map((g, i) => Math.ceil(g / block[i])));
        inItems++;
      } else assert.equal(k.args!.grid, call.grid);
      assert.equal(k.args!.block, call.block);
      assert.is(k.args!["shared memory"], call["shared memory"]);
    }
    assert.is(inItems, 2, "the trace's two hipExtModuleLaunchKernel kernels");
    for (const c of ours.traceEvents.filter((e) => e.cat === "gpu_memcpy")) {
      assert.is(c.args!.bytes, Number(calls.get(c.args!.correlation)!.size));
    }
    // deviceProperties: the agents, with the fields HTA and Kineto's readers use.
    const devs = ours.deviceProperties!;
    assert.is(devs.length, original.deviceProperties!.length);
    for (const [i, d] of devs.entries()) {
      const o = original.deviceProperties![i];
      for (const key of ["id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "maxThreadsPerBlock",
        "maxThreadsPerMultiprocessor", "warpSize", "sharedMemPerBlock", "numSms"] as const) {
        assert.is((d as Record<string, unknown>)[key], (o as Record<string, unknown>)[key], `device ${i} ${key}`);
      }
    }
  });
}

test("by default the HIP calls Kineto's rocprofiler-sdk logger hides are hidden: the trace's 4 hipGetDevicePropertiesR0600, counted", async () => {
  const { trace, hidden } = await roundTrip("1.0", undefined, false);
  const calls = trace.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => e.name);
  assert.is(hidden, 4);
  assert.is(calls.length, 17);
  assert.not.ok(calls.includes("hipGetDevicePropertiesR0600"));
  assert.ok(calls.includes("hipLaunchKernel") && calls.includes("hipMemcpyWithStream"));
});

test("gfx target names: the version rocprofiler reports (major, minor, stepping as hex digits)", () => {
  assert.is(gfxTargetVersion("gfx90a"), 90010);
  assert.is(gfxTargetVersion("gfx942"), 90402);
  assert.is(gfxTargetVersion("gfx1100"), 110000);
  assert.throws(() => gfxTargetVersion("mi250"), /not a gfx target/);
});

test("samples/mi250_minitoy_rocprof.rawtrace is exactly this tool's output for the real trace (--arch gfx90a)", () => {
  const sample = readFileSync(fileURLToPath(new URL("../../samples/mi250_minitoy_rocprof.rawtrace", import.meta.url)));
  const { bytes } = kinetoToRocprof(original, { sdk: "1.0", arch: "gfx90a" });
  assert.ok(Buffer.from(bytes).equals(sample), "regenerate: tsx src/tools/kineto_to_rocprof.ts <trace> -o <sample> --arch gfx90a");
});

test("the generator refuses an unknown SDK and a bad chunk size", () => {
  assert.throws(() => kinetoToRocprof(original, { sdk: "2.0" as RocpSdk }), /unknown SDK/);
  assert.throws(() => kinetoToRocprof(original, { sdk: "1.0", recordsPerChunk: 0 }), /recordsPerChunk/);
});

test.run();
