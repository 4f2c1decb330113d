/**
 * Real H100 dumps from test/gpu/run_device_record.sh (test/fixtures/real/h100/README.md): a PyTorch loop recorded by
 * `rawtrace record` with NVTX ranges named as PyTorch names steps, a jitted JAX step next to JAX's own profiler
 * output for the same program, and kernels replayed from a CUDA graph.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { toChrome, info } from "../helpers/convert.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DIR = join(ROOT, "test/fixtures/real/h100");
const load = (f: string) => new Uint8Array(readFileSync(join(DIR, f)));
const count = <T>(xs: T[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<T, number>());

test("torch_profilerstep (rawtrace record): 8 ProfilerStep#N steps found by default, kernels per step from the launches", async () => {
  const bytes = load("torch_profilerstep.rawtrace");
  const fi = await info(bytes);
  assert.match(JSON.stringify(fi, (_k, v) => (typeof v === "bigint" ? String(v) : v)), "test/gpu/torch_step.py"); // what record ran
  const { trace } = await toChrome(bytes);
  assert.equal(trace.rawtrace.warnings, []);
  const ev = trace.traceEvents;
  const steps = ev.filter((e) => e.cat === "user_annotation" && /^ProfilerStep#\d+$/.test(e.name))
    .sort((a, b) => a.ts - b.ts);
  assert.equal(steps.map((e) => e.name), [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `ProfilerStep#${i}`));
  // Independently of the step code: a kernel belongs to the step whose host time range holds the API call that
  // launched it (joined by correlation id; on any thread: PyTorch runs backward on its autograd thread).
  const launches = new Map<number, Record<string, any>>();
  for (const e of ev) if ((e.cat === "cuda_runtime" || e.cat === "cuda_driver") && e.ph === "X") launches.set(e.args.correlation, e);
  const perStep = steps.map(() => 0);
  for (const k of ev.filter((e) => e.cat === "kernel")) {
    const l = launches.get(k.args.correlation);
    assert.ok(l, "every kernel has its launch");
    const i = steps.findIndex((s) => s.ts <= l!.ts && l!.ts + l!.dur <= s.ts + s.dur);
    if (i >= 0) perStep[i]++;
  }
  assert.equal(perStep.slice(1), [60, 60, 60, 60, 60, 60, 60]); // warm-up step 0 also runs cuDNN's set-up kernels
  const r = spawnSync(process.execPath, [join(ROOT, "dist/node/cli.js"), "stats", join(DIR, "torch_profilerstep.rawtrace"),
    "--steps", "^ProfilerStep#\\d+$", "--json"], { encoding: "utf8", timeout: 120000 });
  assert.is(r.status, 0, r.stderr);
  const st = JSON.parse(r.stdout).files[0].steps as Array<{ name: string; kernels: number; hostNs: number }>;
  assert.equal(st.map((s) => s.name), steps.map((s) => s.name));
  assert.equal(st.map((s) => s.kernels), perStep);
  for (let i = 0; i < st.length; i++) assert.ok(Math.abs(st[i].hostNs / 1e3 - steps[i].dur) < 0.002, "host step time");
});

test("jax_step: the 10 profiled steps ran the 180 kernels JAX's own profiler saw, in the same order", async () => {
  const xs = fromBinary(XSpaceSchema, new Uint8Array(gunzipSync(readFileSync(join(DIR, "jax_step_jaxprofiler.xplane.pb.gz")))));
  const gpu = xs.planes.find((p) => p.name === "/device:GPU:0")!;
  const meta = new Map(Object.entries(gpu.eventMetadata).map(([k, v]) => [k, v.name]));
  const theirs = gpu.lines.flatMap((l) => l.events.map((e) => ({ t: BigInt(l.timestampNs) * 1000n + BigInt(e.data.case === "offsetPs" ? e.data.value : 0), n: meta.get(String(e.metadataId))! })))
    .sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0)).map((e) => e.n);
  assert.is(theirs.length, 180);
  assert.is(new Set(theirs).size, 18);
  const { trace } = await toChrome(load("jax_step.rawtrace"));
  assert.equal(trace.rawtrace.warnings, []);
  const kernels = trace.traceEvents.filter((e) => e.cat === "kernel").sort((a, b) => a.ts - b.ts);
  assert.is(kernels.length, 1490);
  const names = new Set(theirs);
  const ours = kernels.filter((k) => names.has(k.name)).map((k) => k.name);
  // Our collector saw the whole process (compilation and autotuning too); the step program's last 10 runs are
  // the last 180 of these kernels, and they are JAX's 180, name by name.
  assert.equal(ours.slice(-180), theirs);
  // Warm-up (3) + measured (10) runs of the kernels autotuning does not also launch.
  const c = count(ours);
  for (const n of ["triton_softmax_1", "loop_negate_fusion", "loop_select_fusion", "input_scatter_fusion"]) assert.is(c.get(n), 13, n);
});

test("torch_graph: 10 graph launches, each with the 6 replayed kernels on its correlation id", async () => {
  const { trace } = await toChrome(load("torch_graph.rawtrace"));
  assert.equal(trace.rawtrace.warnings, []);
  const ev = trace.traceEvents;
  const launches = ev.filter((e) => e.cat === "cuda_runtime" && e.name === "cudaGraphLaunch");
  assert.is(launches.length, 10);
  const graphKernels = ev.filter((e) => e.cat === "kernel" && e.args["graph id"] !== undefined && e.args["graph id"] !== 0);
  assert.is(graphKernels.length, 60);
  const byCorr = count(graphKernels.map((k) => k.args.correlation));
  assert.equal([...byCorr.keys()].sort(), launches.map((l) => l.args.correlation).sort());
  for (const n of byCorr.values()) assert.is(n, 6);
  for (const k of graphKernels) {
    const l = launches.find((x) => x.args.correlation === k.args.correlation)!;
    assert.ok(k.ts >= l.ts, "a replayed kernel starts after its graph launch began");
  }
  // 3 eager warm-up passes + 10 replays of each of the forward pass's kernels.
  const names = count(ev.filter((e) => e.cat === "kernel").map((e) => e.name));
  assert.is([...names.values()].filter((n) => n === 13).length, 6);
});

test.run();
