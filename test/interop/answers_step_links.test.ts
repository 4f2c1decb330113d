/**
 * XProf 2.24.2's overview steps of dumps whose second GPU is driven from a thread without `ProfilerStep#N` markers
 * (emit/xspace_steps.ts step links, docs/xspace.md "Steps launched from other threads"), against the records the
 * dumps were written from: each step's time (the span of its device work) and its device compute and other time
 * (every kernel is compute), the step's work being the kernels of the step's process whose launch call started in
 * the step's span.
 *
 *  - both GPUs' work inside the steps only: both GPUs in every step, as the records;
 *  - the side thread also launching between the steps and after the last: XProf would give that work the step
 *    before it (its ungrouped events take the latest group on the GPU), so that GPU takes no link and stays in no
 *    step — the steps hold GPU 0's work, never more than the records' (with links: 0.938 ms steps, the last 1.978 ms,
 *    against the records' 0.597 ms);
 *  - a second process without markers driving GPU 1 during the steps: not in this process's steps (with links:
 *    0.995 ms steps and 0.88 ms of compute).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { xprofPython } from "../helpers/interop.js";
import { MAIN, PID, SIDE, T, US, stepDump, type Kernel, type Launch, type Step } from "../emit/xspace_step_dump.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "rawtrace-answers-links-"));
test.after(() => rmSync(work, { recursive: true, force: true }));

interface XprofSteps { steps: Array<{ step: string; step_ms: number; parts: Record<string, number> }> }

/** Four 800 µs steps 1000 µs apart on MAIN, 40 launches onto GPU 0 in each from MAIN, and `more` per step start. */
function scenario(more: (a: bigint) => Launch[], tail: Launch[] = []): { steps: Step[]; launches: Launch[] } {
  const steps: Step[] = [];
  const launches: Launch[] = [];
  for (let s = 0; s < 4; s++) {
    const a = BigInt(s * 1000);
    steps.push([MAIN, s + 1, a, a + 800n]);
    for (let j = 0; j < 40; j++) launches.push({ tid: MAIN, at: a + 10n + BigInt(j * 15), device: 0, kdur: 10n });
    launches.push(...more(a));
  }
  return { steps, launches: [...launches, ...tail] };
}
/** GPU 1's launches from SIDE: kernels inside GPU 0's span (XProf's step time is the longest GPU's span). */
const side = (a: bigint): Launch[] => Array.from({ length: 39 }, (_, j) => ({ tid: SIDE, at: a + 12n + BigInt(j * 15), device: 1, kdur: 10n }));

/** The records' step `s`: span and busy time (ms) of `kernels` launched in it by its process, on the GPUs `gpus`. */
function records(steps: Step[], kernels: Kernel[], s: number, gpus: number[]): { step_ms: number; compute_ms: number } {
  const [, , a, b] = steps[s];
  const ks = kernels
    .filter((k) => (k.launch.pid ?? PID) === PID && gpus.includes(k.launch.device))
    .filter((k) => k.callStart >= T + a * US && k.callStart < T + b * US)
    .sort((x, y) => (x.start < y.start ? -1 : 1));
  let busy = 0n;
  let end = 0n;
  for (const k of ks) {
    if (k.end <= end) continue;
    busy += k.end - (k.start > end ? k.start : end);
    end = k.end;
  }
  const last = ks.reduce((m, k) => (k.end > m ? k.end : m), 0n);
  return { step_ms: Number(last - ks[0].start) / 1e6, compute_ms: Number(busy) / 1e6 };
}

async function xprofSteps(bytes: Uint8Array, name: string): Promise<XprofSteps["steps"]> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const path = join(work, `${name}.xplane.pb`);
  writeFileSync(path, Buffer.concat(parts));
  const out = execFileSync(xprofPython(), [join(ROOT, "test/interop/answers_check.py"), "xprof", path], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 });
  return (JSON.parse(out) as XprofSteps).steps;
}

/** XProf's steps of the scenario equal the records' of `gpus` (time, device compute, the rest of the span as other). */
async function assertSteps(sc: { steps: Step[]; launches: Launch[] }, name: string, gpus: number[]): Promise<void> {
  const d = stepDump(sc.launches, sc.steps);
  const got = await xprofSteps(d.bytes, name);
  assert.is(got.length, sc.steps.length, `${name}: every step shown`);
  got.forEach((g, s) => {
    const want = records(sc.steps, d.kernels, s, gpus);
    const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-6, `${name} step ${s} ${what}: XProf ${a}, records ${b}`);
    near(g.step_ms, want.step_ms, "time");
    near(g.parts.deviceComputeTimeMs, want.compute_ms, "device compute");
    near(g.parts.otherTimeMs, want.step_ms - want.compute_ms, "other");
  });
}

test("GPU 1 driven from a thread without markers, inside the steps only: both GPUs in every step, as the records", async () => {
  await assertSteps(scenario(side), "dpclean", [0, 1]);
});

test("the side thread's GPU also busy between the steps and after the last: that GPU in no step, no step inflated", async () => {
  const gap = (a: bigint): Launch[] => [...side(a), { tid: SIDE, at: a + 850n, device: 1, kdur: 100n }];
  const tail = Array.from({ length: 20 }, (_, j): Launch => ({ tid: SIDE, at: 4000n + BigInt(j * 50), device: 1, kdur: 40n }));
  await assertSteps(scenario(gap, tail), "dp", [0]);
});

test("another process (no markers) driving GPU 1 during the steps: not in this process's steps", async () => {
  const other = (a: bigint): Launch[] => Array.from({ length: 40 }, (_, j) => ({ tid: 201, pid: 200, at: a + BigInt(j * 25), device: 1, kdur: 20n }));
  await assertSteps(scenario(other), "multiproc", [0]);
});

test.run();
