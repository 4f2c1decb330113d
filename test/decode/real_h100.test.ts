/**
 * Real dumps from an H100 recorded by our CUDA collector (test/fixtures/real/h100/README.md): what the GPU ran, with
 * nothing lost, and the same kernels PyTorch's own profiler (Kineto) saw for the same 50 training steps.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { toChrome } from "../helpers/convert.js";

const DIR = new URL("../fixtures/real/h100/", import.meta.url).pathname;
const load = (f: string) => new Uint8Array(readFileSync(DIR + f));
const count = <T>(xs: T[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<T, number>());

test("cuda_sample: every kernel, copy, memset and NVTX range of the 20 steps, nothing lost", async () => {
  const { trace, result } = await toChrome(load("cuda_sample.rawtrace"));
  const ev = trace.traceEvents;
  assert.equal(trace.rawtrace.warnings, []);
  assert.ok(trace.rawtrace.complete);
  assert.is(trace.rawtrace.dropped_records, 0);
  assert.is(trace.deviceProperties[0].name, "NVIDIA H100 80GB HBM3");
  assert.is(trace.deviceProperties[0].numSms, 132);
  assert.is(trace.cupti_version, 130001);
  const k = count(ev.filter((e) => e.cat === "kernel").map((e) => e.name));
  assert.equal([...k.entries()].sort(), [
    ["block_reduce", 20],
    ["vector_add(float const*, float const*, float*, int)", 20],
    ["void scale_kernel<float, 4>(float*, float, int)", 20],
  ]);
  const c = count(ev.filter((e) => e.cat === "gpu_memcpy").map((e) => e.name));
  assert.equal([...c.entries()].sort(), [
    ["Memcpy DtoH (Device -> Pageable)", 20], ["Memcpy HtoD (Pageable -> Device)", 20], ["Memcpy HtoD (Pinned -> Device)", 20],
  ]);
  assert.is(ev.filter((e) => e.cat === "gpu_memset").length, 20);
  const r = count(ev.filter((e) => e.cat === "user_annotation").map((e) => e.name));
  assert.equal([...r.entries()].sort(), [["compute", 20], ["step", 20], ["upload", 20]]);
  // The three kernels of a step ran inside its "compute" range, on streams s1 and s2.
  const g = ev.filter((e) => e.cat === "gpu_user_annotation" && e.name === "compute");
  assert.is(new Set(g.map((e) => e.tid)).size, 2);
  for (const kern of ev.filter((e) => e.cat === "kernel")) {
    assert.ok(g.some((s) => s.tid === kern.tid && s.ts <= kern.ts && kern.ts + kern.dur <= s.ts + s.dur), "kernel inside a projected compute range");
  }
  // Every kernel and copy has its launch flow.
  const s = new Set(ev.filter((e) => e.ph === "s").map((e) => e.id));
  for (const e of ev.filter((e) => e.cat === "kernel" || e.cat === "gpu_memcpy")) assert.ok(s.has(e.args.correlation), "flow start");
  assert.is(result.info.records.CONCURRENT_KERNEL, 60);
});

test("torch: the 50 steps have exactly the kernels Kineto recorded for the same steps (3000, 41 names)", async () => {
  const { trace } = await toChrome(load("torch.rawtrace"));
  const kineto = JSON.parse(gunzipSync(readFileSync(DIR + "torch_kineto.json.gz")).toString());
  const ours = count(trace.traceEvents.filter((e) => e.cat === "kernel").map((e) => e.name));
  const theirs = count(kineto.traceEvents.filter((e: any) => e.cat === "kernel").map((e: any) => e.name as string));
  assert.is([...ours.values()].reduce((a, b) => a + b), 3000);
  assert.is([...theirs.values()].reduce((a, b) => a + b), 3000);
  assert.is(ours.size, theirs.size);
  const onlyTheirs = [...theirs.keys()].filter((n) => !ours.has(n));
  const onlyOurs = [...ours.keys()].filter((n) => !theirs.has(n));
  // One 1,675-byte cuDNN/CUTLASS name Kineto leaves mangled; we demangle it (as c++filt --no-recurse-limit does).
  assert.is(onlyTheirs.length, 1);
  assert.ok(onlyTheirs[0].startsWith("_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolution"));
  assert.is(onlyOurs.length, 1);
  assert.ok(onlyOurs[0].startsWith("void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::conv::kernel::ImplicitGemmConvolution<"));
  assert.is(ours.get(onlyOurs[0]), theirs.get(onlyTheirs[0]));
  for (const [n, c] of theirs) if (n !== onlyTheirs[0]) assert.is(ours.get(n), c, n);
  // Memsets too; runtime calls: Kineto adds the profiler's own cudaDeviceSynchronize when it stops.
  const memsets = (t: any) => t.traceEvents.filter((e: any) => e.cat === "gpu_memset").length;
  assert.is(memsets(trace), memsets(kineto));
  const rt = (t: any) => t.traceEvents.filter((e: any) => e.cat === "cuda_runtime").length;
  assert.ok(Math.abs(rt(trace) - rt(kineto)) <= 1, `runtime calls ${rt(trace)} vs ${rt(kineto)}`);
});

test("torch: every runtime and driver call Kineto shows, by name, count and ac2g flow start", async () => {
  const { trace } = await toChrome(load("torch.rawtrace"));
  const kineto = JSON.parse(gunzipSync(readFileSync(DIR + "torch_kineto.json.gz")).toString());
  /** "cat:name" → [calls, calls that start a flow]. */
  const calls = (t: any) => {
    const starts = new Set(t.traceEvents.filter((e: any) => e.ph === "s" && e.cat === "ac2g").map((e: any) => Number(e.id)));
    const m = new Map<string, [number, number]>();
    for (const e of t.traceEvents) {
      if (e.ph !== "X" || (e.cat !== "cuda_runtime" && e.cat !== "cuda_driver")) continue;
      const v = m.get(`${e.cat}:${e.name}`) ?? [0, 0];
      v[0]++;
      if (starts.has(Number(e.args.correlation))) v[1]++;
      m.set(`${e.cat}:${e.name}`, v);
    }
    return m;
  };
  const ours = calls(trace);
  const theirs = calls(kineto);
  assert.equal([...ours.keys()].sort(), [...theirs.keys()].sort(), "the same calls shown (hidden ones hidden)");
  assert.ok(ours.size >= 10, `${ours.size} distinct calls`);
  for (const [name, [n, flows]] of theirs) {
    // Kineto's own cudaDeviceSynchronize when the profiler stops is the one call only it has.
    const extra = name === "cuda_runtime:cudaDeviceSynchronize" ? 1 : 0;
    assert.equal(ours.get(name), [n - extra, flows - extra], name);
  }
  assert.ok(theirs.get("cuda_driver:cuLaunchKernel")![1] > 0 && theirs.get("cuda_runtime:cudaPeekAtLastError")![1] === 0);
});

test("torch_nvtx: the train_step ranges and their GPU projection", async () => {
  const { trace } = await toChrome(load("torch_nvtx.rawtrace"));
  const ranges = trace.traceEvents.filter((e) => e.cat === "user_annotation" && e.name === "train_step");
  assert.is(ranges.length, 7); // 2 warm-up + 5 steps
  const proj = trace.traceEvents.filter((e) => e.cat === "gpu_user_annotation" && e.name === "train_step");
  assert.ok(proj.length >= 7, "every step projected onto the stream it used");
  assert.equal(trace.rawtrace.warnings, []);
});

test.run();
