/**
 * Training steps and GPU annotations in Chrome JSON (docs/analysis.md): which NVTX ranges are steps (the default
 * `ProfilerStep#N` pattern, a user `steps` pattern), how they are numbered (the name's number, else start order
 * whatever order the buffers arrive in), the `ProfilerStep#N` user_annotation Kineto writes, and
 * `gpu_user_annotation` spans that carry no `stream` (so HTA does not count them as kernels) and can be turned off.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as C from "../../src/tools/cupti_records.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import { toChrome, events } from "../helpers/convert.js";
import { memorySource, stepNumberOf, stepPattern, type ConvertOptions } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XPlane } from "../../src/gen/xplane_pb.js";

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;
const PID = 100;
const TID = 101;

/**
 * Three "train_step" ranges (written latest first, in two buffers), each with one launch and its kernel, and two
 * "ProfilerStep#41"/"#42" ranges around the second and third.
 */
function stepDump(): Uint8Array {
  const w = cudaWriter(L, T, PID);
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
  w.strings([[0x10n, "train_step"], [0x20n, "ProfilerStep#41"], [0x30n, "ProfilerStep#42"], [0x40n, "k"]]);
  const step = (i: number): Uint8Array[] => {
    const t = T + BigInt(i) * 100_000n;
    const recs = [
      C.markerRecord(L, 2, t + 1000n, 10 + i, PID, TID, 0x10n),
      C.apiRecord(L, { kind: 5, cbid: 211, start: t + 2000n, end: t + 3000n, processId: PID, threadId: TID, correlationId: 1 + i }),
      C.markerRecord(L, 4, t + 50_000n, 10 + i, PID, TID, 0n),
      C.kernelRecord(L, { start: t + 4000n, end: t + 9000n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 1 + i, namePtr: 0x40n }),
    ];
    if (i > 0) {
      recs.unshift(C.markerRecord(L, 2, t + 500n, 20 + i, PID, TID, i === 1 ? 0x20n : 0x30n));
      recs.push(C.markerRecord(L, 4, t + 60_000n, 20 + i, PID, TID, 0n));
    }
    return recs;
  };
  w.activity(C.concat([...step(2), ...step(1)]));
  w.activity(C.concat(step(0)));
  w.end();
  return w.bytes();
}

test("the step pattern: default ProfilerStep#N, a user regex, numbers as HTA reads them, bad patterns named", () => {
  assert.ok(stepPattern(undefined).test("ProfilerStep#3"));
  assert.not.ok(stepPattern(undefined).test("train_step"));
  assert.ok(stepPattern("train_").test("train_step"));
  assert.is(stepNumberOf("ProfilerStep#12"), 12);
  assert.is(stepNumberOf("train_step"), -1);
  assert.throws(() => stepPattern("("), (e: Error) => e.name === "USAGE" && e.message.includes("'('"));
});

test("default: only ProfilerStep#N ranges are steps; they are already Kineto's markers (no extra event)", async () => {
  const { trace, result } = await toChrome(stepDump());
  assert.is(result.steps, 2);
  const ua = events(trace, "user_annotation").map((e) => e.name).sort();
  assert.equal(ua, ["ProfilerStep#41", "ProfilerStep#42", "train_step", "train_step", "train_step"]);
});

test("--steps train_step: ProfilerStep#1..3 in start order around each range, on its thread, over its span", async () => {
  const { trace, result } = await toChrome(stepDump(), { steps: "^train_step$" });
  assert.is(result.steps, 3);
  const base = BigInt(trace.baseTimeNanoseconds);
  const us = (ns: bigint) => Number(ns - base) / 1000;
  const ps = events(trace, "user_annotation").filter((e) => e.name.startsWith("ProfilerStep#") && !/#4\d$/.test(e.name));
  ps.sort((a, b) => a.ts - b.ts);
  assert.equal(ps.map((e) => e.name), ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]);
  ps.forEach((e, i) => {
    assert.is(e.pid, PID);
    assert.is(e.tid, TID);
    assert.ok(Math.abs(e.ts - us(T + BigInt(i) * 100_000n + 1000n)) < 1e-3, `${e.name} ts`);
    assert.ok(Math.abs(e.dur - 49) < 1e-6, `${e.name} dur`);
  });
});

test("a pattern matching both names: ProfilerStep#N keeps its number, the others are numbered 1, 2, … by start", async () => {
  const { trace, result } = await toChrome(stepDump(), { steps: "train_step|ProfilerStep" });
  assert.is(result.steps, 5);
  const names = events(trace, "user_annotation").map((e) => e.name).sort();
  assert.equal(names, [
    "ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#41", "ProfilerStep#42",
    "train_step", "train_step", "train_step",
  ]);
});

test("gpu_user_annotation carries no stream/device args (HTA counts those as kernels), and --gpu-annotations off drops it", async () => {
  const on = await toChrome(stepDump());
  const g = events(on.trace, "gpu_user_annotation");
  assert.is(g.length, 3 + 2, "train_step ×3 and ProfilerStep#41/#42 projected onto stream 7");
  for (const e of g) {
    assert.is(e.tid, 7);
    assert.is(e.args, undefined, "no args: Kineto writes only its External id there");
  }
  const off = await toChrome(stepDump(), { gpuAnnotations: false });
  assert.is(events(off.trace, "gpu_user_annotation").length, 0);
  assert.is(events(off.trace, "kernel").length, 3, "kernels unchanged");
});

async function toXSpace(bytes: Uint8Array, opts: ConvertOptions) {
  const parts: Buffer[] = [];
  const result = await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { ...opts, format: "xspace" });
  return { space: fromBinary(XSpaceSchema, Buffer.concat(parts)), result };
}

/** Stats of an event by name: [value case, value]. */
function statsOf(p: XPlane, e: { stats: Array<{ metadataId: bigint; value: { case?: string; value?: unknown } }> }) {
  return Object.fromEntries(e.stats.map((s) => [p.statMetadata[String(s.metadataId)]?.name, [s.value.case, s.value.value]]));
}

test("XSpace: each step is a ProfilerStep#N root (_r = 1, step_num = N) on its thread's API line, over the launches", async () => {
  const { space, result } = await toXSpace(stepDump(), { steps: "^train_step$" });
  assert.is(result.steps, 3);
  const host = space.planes.find((p) => p.name === "/host:CPU")!;
  const api = host.lines.find((l) => l.id === BigInt(TID))!;
  assert.ok(api, "the thread's API line");
  const name = (e: { metadataId: bigint }) => host.eventMetadata[String(e.metadataId)]?.name;
  const steps = api.events.filter((e) => name(e)?.startsWith("ProfilerStep#"));
  assert.equal(steps.map(name), ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"], "in start order, before their launches");
  for (const [i, e] of steps.entries()) {
    const st = statsOf(host, e);
    assert.equal(st._r, ["int64Value", 1n]);
    assert.equal(st.step_num, ["int64Value", BigInt(i + 1)]);
    assert.is(e.durationPs, 49_000_000n, "the range's span (49 µs)");
    // The step's launch is on the same line, inside it: XProf's intra-thread nesting makes it the step's child.
    const off = (x: typeof e) => (x.data.case === "offsetPs" ? x.data.value : -1n);
    const launch = api.events.find((x) => name(x)?.startsWith("cudaLaunchKernel") && off(x) >= off(e) && off(x) + x.durationPs <= off(e) + e.durationPs);
    assert.ok(launch, `a launch nested in ${name(e)}`);
  }
  const nvtx = host.lines.find((l) => l.name.endsWith("/NVTX"))!;
  assert.is(nvtx.events.length, 5, "the ranges themselves stay on the NVTX line");
  // Default pattern: only the ProfilerStep#41/#42 ranges.
  const d = await toXSpace(stepDump(), {});
  const dApi = d.space.planes.find((p) => p.name === "/host:CPU")!;
  const dn = dApi.lines.find((l) => l.id === BigInt(TID))!.events.map((e) => dApi.eventMetadata[String(e.metadataId)]?.name);
  assert.equal(dn.filter((n) => n?.startsWith("ProfilerStep")), ["ProfilerStep#41", "ProfilerStep#42"]);
});

test.run();
