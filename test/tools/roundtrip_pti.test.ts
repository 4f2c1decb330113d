/**
 * Round trip of a Kineto-style XPU trace (test/fixtures/xpu/kineto_xpu_train.json: the categories and args Kineto's
 * XPU plugin writes, three training steps on two Intel GPUs) → `.rawtrace` of PTI records, v1 (0.17) and `_v2` (1.2)
 * (src/tools/kineto_to_pti.ts) → the engine → Chrome JSON, compared with the original event by event: every kernel,
 * copy, fill, SYCL / UR runtime call, Level Zero driver call, xpu_sync, collective_comm and overhead event (category,
 * name, pid, tid, ts, dur to the nanosecond, correlation, External id), every ac2g flow point, and the device args
 * (sycl queue, l0 queue, context, appended, submitted, bytes, l0 call, kernel_id, source file and line). Prints matched/total per PTI
 * generation.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { kinetoToPti, ptiSizes, deviceUuid, type PtiGen } from "../../src/tools/kineto_to_pti.js";
import { absoluteNs, argsOf, asInt, microsToNs, parseKinetoJson, readKinetoTrace, traceBaseNs, type KinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { Engine, memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

const TRACE = fileURLToPath(new URL("../fixtures/xpu/kineto_xpu_train.json", import.meta.url));
const SAMPLE = fileURLToPath(new URL("../../samples/xpu_train_pti.rawtrace", import.meta.url));
const CATS = new Set(["xpu_runtime", "xpu_driver", "kernel", "gpu_memcpy", "gpu_memset", "xpu_sync", "collective_comm", "overhead"]);
const DEVICE_ARGS = ["sycl queue", "l0 queue", "context", "appended", "submitted", "bytes", "l0 call", "kernel_id", "device",
  "source_file_name", "source_line_number"];

let engine: Engine | null = null;
let original: KinetoTrace;

async function toChrome(bytes: Uint8Array, name: string): Promise<KinetoTrace> {
  engine ??= await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(memorySource(bytes, name), (b) => parts.push(Buffer.from(b)));
  return parseKinetoJson(Buffer.concat(parts).toString("utf8"));
}

/** One key per event: category, name, pid, tid, absolute ns start and duration, correlation, External id. */
function eventKeys(t: KinetoTrace): string[] {
  const base = traceBaseNs(t);
  const out: string[] = [];
  for (const e of t.traceEvents) {
    if (e.ph !== "X" || !CATS.has(e.cat ?? "")) continue;
    const a = argsOf(e);
    const host = e.cat === "collective_comm" || e.cat === "overhead";
    // Overhead sits on pid 2^31 - 1 in ours where Kineto writes -1 (which Perfetto reads as GPU 0's pid 0).
    const pid = e.cat === "overhead" && e.pid === 2147483647 ? -1 : e.pid;
    out.push([e.cat, e.name, pid, e.tid, absoluteNs(e.ts!, base), microsToNs(e.dur ?? 0),
      host ? "" : asInt(a.correlation), a["External id"] ?? ""].join("|"));
  }
  return out.sort();
}
function flowKeys(t: KinetoTrace): string[] {
  const base = traceBaseNs(t);
  return t.traceEvents.filter((e) => (e.ph === "s" || e.ph === "f") && e.cat === "ac2g")
    .map((e) => [e.ph, e.id, e.pid, e.tid, absoluteNs(e.ts!, base)].join("|")).sort();
}
/** The device args of kernels, copies and fills by correlation, appended / submitted as absolute ns. */
function deviceArgs(t: KinetoTrace): Map<number, Record<string, unknown>> {
  const base = traceBaseNs(t);
  const m = new Map<number, Record<string, unknown>>();
  for (const e of t.traceEvents) {
    if (e.ph !== "X" || (e.cat !== "kernel" && e.cat !== "gpu_memcpy" && e.cat !== "gpu_memset")) continue;
    const a = argsOf(e);
    const r: Record<string, unknown> = {};
    for (const k of DEVICE_ARGS) {
      if (a[k] === undefined) continue;
      r[k] = k === "appended" || k === "submitted" ? String(absoluteNs(a[k] as string, base)) : a[k];
    }
    m.set(asInt(a.correlation)!, r);
  }
  return m;
}

test.before(() => {
  original = readKinetoTrace(TRACE);
});

for (const gen of ["1.2", "0.17"] as PtiGen[]) {
  test(`PTI ${gen}: every event, flow and device arg back to the nanosecond`, async () => {
    const { bytes, stats } = kinetoToPti(original, { pti: gen, recordsPerChunk: 5 });
    assert.is(stats.skipped, 0);
    const ours = await toChrome(bytes, `xpu-${gen}.rawtrace`);
    const want = eventKeys(original);
    const got = eventKeys(ours);
    const missing = want.filter((k) => !got.includes(k));
    const extra = got.filter((k) => !want.includes(k));
    const fw = flowKeys(original);
    const fg = flowKeys(ours);
    console.log(`roundtrip xpu PTI ${gen}: events ${want.length - missing.length}/${want.length}, ` +
      `flows ${fw.filter((k) => fg.includes(k)).length}/${fw.length}`);
    assert.is(want.length, 94);
    assert.equal(missing, [], "missing");
    assert.equal(extra, [], "extra");
    assert.equal(fg, fw);
    const wa = deviceArgs(original);
    const ga = deviceArgs(ours);
    assert.is(ga.size, wa.size);
    for (const [c, a] of wa) assert.equal(ga.get(c), a, `device args of correlation ${c}`);
    assert.ok([...wa.values()].some((a) => a.source_file_name === "/opt/src/gemm.cpp"), "the fixture has kernels with a source file");
    // The categories Kineto's XPU plugin writes, and flows start only at runtime calls.
    const cats = new Set(ours.traceEvents.filter((e) => e.ph === "X").map((e) => e.cat));
    for (const c of CATS) assert.ok(cats.has(c), c);
    const at = new Map(ours.traceEvents.filter((e) => e.ph === "X").map((e) => [`${e.pid}/${e.tid}/${e.ts}`, e.cat]));
    for (const s of ours.traceEvents.filter((e) => e.ph === "s")) assert.is(at.get(`${s.pid}/${s.tid}/${s.ts}`), "xpu_runtime");
    // deviceProperties: the two Intel GPUs.
    assert.equal(ours.deviceProperties!.map((d) => [d.id, d.name, d.numSms, d.totalGlobalMem]),
      original.deviceProperties!.map((d) => [d.id, d.name, d.numSms, d.totalGlobalMem]));
  });
}

test("the peer copy carries both devices; record sizes per generation are the real libraries'", async () => {
  const ours = await toChrome(kinetoToPti(original, { pti: "1.2" }).bytes, "p2p.rawtrace");
  const p2p = ours.traceEvents.filter((e) => e.cat === "gpu_memcpy" && argsOf(e).fromDevice !== undefined);
  assert.is(p2p.length, 3);
  for (const e of p2p) {
    assert.is(argsOf(e).fromDevice, 0);
    assert.is(argsOf(e).toDevice, 1);
  }
  assert.equal(ptiSizes("0.17"), { 1: 168, 3: 48, 5: 56, 6: 48, 7: 24, 8: 136, 9: 136, 10: 168, 11: 72, 12: 56 });
  assert.equal(ptiSizes("1.2"), { 1: 184, 3: 48, 5: 56, 6: 48, 7: 24, 8: 152, 9: 152, 10: 192, 11: 72, 12: 64 });
  assert.is(deviceUuid(1)[0], 0x86);
});

test("samples/xpu_train_pti.rawtrace is exactly this tool's output for the fixture (PTI 1.2)", () => {
  const sample = readFileSync(SAMPLE);
  const { bytes } = kinetoToPti(original, { pti: "1.2" });
  assert.ok(Buffer.from(bytes).equals(sample), "regenerate: tsx src/tools/kineto_to_pti.ts test/fixtures/xpu/kineto_xpu_train.json -o samples/xpu_train_pti.rawtrace");
});

test("the generator refuses an unknown PTI generation and a bad chunk size", () => {
  assert.throws(() => kinetoToPti(original, { pti: "2.0" as PtiGen }), /unknown PTI generation/);
  assert.throws(() => kinetoToPti(original, { pti: "1.2", recordsPerChunk: 0 }), /recordsPerChunk/);
});

test.run();
