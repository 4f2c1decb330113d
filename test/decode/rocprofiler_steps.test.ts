/**
 * ROCTx ranges named like PyTorch's `ProfilerStep#N` are training steps (docs/analysis.md), as NVTX ones are: the
 * real MI250 Kineto trace's host annotations (`ProfilerStep#1`, `Optimizer.step#SGD.step`, `ProfilerStep#2`) written
 * as ROCTx ranges by src/tools/kineto_to_rocprof.ts (`roctx`: SDK 1.0 MARKER_CORE_RANGE_API records, SDK 0.5
 * roctxRangePushA / roctxRangePop pairs) come back as Chrome JSON `user_annotation` ProfilerStep events with the
 * original times, XSpace `ProfilerStep#N` roots (`_r`, `step_num`) on the thread's API line, and `stats --steps`
 * rows. test/interop/hta_rocm.test.ts has HTA find them.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { toChrome, events } from "../helpers/convert.js";
import { kinetoToRocprof, type RocpSdk } from "../../src/tools/kineto_to_rocprof.js";
import { readKinetoTrace, type KinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { computeStepStats } from "../../src/core/step_stats.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const trace: KinetoTrace = readKinetoTrace(join(ROOT, "../shared/data/real/kineto-rocm/minitoy_mi250.json.gz"));
/** The original's annotations: name, tid, ts and dur as written (µs text). */
const annotations = trace.traceEvents.filter((e) => e.ph === "X" && e.cat === "user_annotation");

for (const sdk of ["1.0", "0.5"] as RocpSdk[]) {
  test(`SDK ${sdk}: ROCTx ProfilerStep#N ranges → Chrome ProfilerStep user_annotations at the original times`, async () => {
    const { bytes, stats } = kinetoToRocprof(trace, { sdk, arch: "gfx90a", roctx: true });
    assert.is(stats.ranges, annotations.length);
    assert.is(annotations.length, 3);
    const { trace: out, result } = await toChrome(bytes);
    assert.is(result.steps, 2, "ProfilerStep#1 and #2");
    assert.is(result.info.warnings.length, 0, JSON.stringify(result.info.warnings));
    const ua = events(out, "user_annotation");
    assert.equal(ua.map((e) => e.name).sort(), annotations.map((e) => e.name).sort(), "no extra marker: the names are Kineto's already");
    const base = BigInt(out.baseTimeNanoseconds);
    const origBase = BigInt(trace.baseTimeNanoseconds ?? 0);
    for (const a of annotations) {
      const e = ua.find((x) => x.name === a.name)!;
      assert.is(e.tid, a.tid);
      // Same instant to the ns (µs with 3 decimals in both files).
      assert.is(base + BigInt(Math.round(e.ts * 1000)), origBase + BigInt(Math.round(Number(a.ts) * 1000)), `${a.name} ts`);
      assert.is(Math.round(e.dur * 1000), Math.round(Number(a.dur) * 1000), `${a.name} dur`);
    }
    // The GPU projection of each step, as Kineto's gpu_user_annotation rows.
    // The GPU projections, as Kineto's gpu_user_annotation rows (ProfilerStep#2 only synchronizes: no GPU work).
    const orig = trace.traceEvents.filter((e) => e.ph === "X" && e.cat === "gpu_user_annotation").map((e) => e.name).sort();
    assert.equal(events(out, "gpu_user_annotation").map((e) => e.name).sort(), orig);
  });

  test(`SDK ${sdk}: XSpace ProfilerStep#N roots with step_num, and stats --steps rows`, async () => {
    const { bytes } = kinetoToRocprof(trace, { sdk, arch: "gfx90a", roctx: true });
    const parts: Buffer[] = [];
    const engine = await createEngine();
    const r = await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
    assert.is(r.steps, 2);
    const space = fromBinary(XSpaceSchema, Buffer.concat(parts));
    const host = space.planes.find((p) => p.name === "/host:CPU")!;
    const name = (e: { metadataId: bigint }) => host.eventMetadata[String(e.metadataId)]?.name;
    const stat = (e: { stats: Array<{ metadataId: bigint; value: { value?: unknown } }> }, n: string) =>
      e.stats.find((s) => host.statMetadata[String(s.metadataId)]?.name === n)?.value.value;
    const mainTid = annotations.find((a) => a.name === "ProfilerStep#1")!.tid as number;
    const api = host.lines.find((l) => l.id === BigInt(mainTid))!;
    const steps = api.events.filter((e) => name(e)?.startsWith("ProfilerStep#"));
    assert.equal(steps.map(name), ["ProfilerStep#1", "ProfilerStep#2"]);
    assert.equal(steps.map((e) => stat(e, "step_num")), [1n, 2n]);
    assert.equal(steps.map((e) => stat(e, "_r")), [1n, 1n]);
    const st = await computeStepStats(engine, memorySource(bytes), {});
    assert.equal(st.map((s) => [s.step, s.device, s.kernels]), [[1, 2, 14]], "step 2 launches no GPU work; step 1 all 14 kernels");
  });
}

test.run();
