// SPDX-License-Identifier: MIT
/**
 * XSpace of ROCm dumps opened by the real consumer, XProf (pinned in scripts/requirements-xprof.txt, .venv-xprof/):
 * the real MI250 Kineto trace turned into rocprofiler-sdk 1.0 records (src/tools/kineto_to_rocprof.ts) and converted
 * to XSpace; test/interop/xprof_check.py runs trace_viewer, trace_viewer@, kernel_stats, overview_page and
 * tool_names and compares what XProf shows with the original trace: every kernel and copy on its `/device:GPU:N`
 * plane and stream row to the ns, with the launch shape of its call, and every launch call's flow arrow.
 * The fake-SDK dumps (SDK 0.5 and 1.0) must open too, with one plane per GPU agent.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { xspaceProfilePath } from "../../src/node/convert.js";
import { kinetoToRocprof } from "../../src/tools/kineto_to_rocprof.js";
import { expectedRoundTripView, readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { fakeRocmDump } from "../helpers/rocm_fake.js";
import { xprofPython } from "../helpers/interop.js";

const TRACE = "../shared/data/real/kineto-rocm/minitoy_mi250.json.gz";

/** What xprof_check.py compares (see its docstring). Times in ns after the profile start. */
interface Expect {
  device_events: Array<{
    plane: string; row_prefix: string; name: string; ts_ns: number; dur_ns: number; correlation: number;
    kernel: { regs: number; shmem: number; block: string; grid: string } | null;
  }>;
  launches: Array<{ name: string; tid: number; ts_ns: number; dur_ns: number; correlation: number; device: number; plane: string }>;
}

const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-rocm-"));

/** XSpace of `bytes` in the TensorBoard log-directory layout; returns the file and its profile start (Unix ns). */
async function xspace(bytes: Uint8Array, name: string): Promise<{ file: string; start: bigint }> {
  const parts: Buffer[] = [];
  const r = await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const file = xspaceProfilePath(join(work, name), r.baseTimeNs, r.info.hostname);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, Buffer.concat(parts));
  const s = fromBinary(XSpaceSchema, readFileSync(file));
  const env = s.planes.find((p) => p.name === "Task Environment")!;
  const id = Object.values(env.statMetadata).find((m) => m.name === "profile_start_time")!.id;
  return { file, start: env.stats.find((x) => x.metadataId === id)!.value.value as bigint };
}

function check(file: string, e: Expect): { ok: boolean; failures: string[]; summary: Record<string, unknown> } {
  const ef = join(dirname(file), "expect.json");
  writeFileSync(ef, JSON.stringify(e));
  const r = spawnSync(xprofPython(), ["test/interop/xprof_check.py", file, ef], { encoding: "utf8", maxBuffer: 64 << 20, timeout: 300_000 });
  const last = r.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(`checker printed no result (rc ${r.status}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-4000)}`);
  }
}

test.after(() => rmSync(work, { recursive: true, force: true }));

test("real MI250 trace as rocprofiler-sdk 1.0 → XSpace: every kernel and copy on its GPU plane to the ns, every launch's flow", async () => {
  assert.ok(existsSync(TRACE), TRACE);
  const trace = readKinetoTrace(TRACE);
  const { file, start } = await xspace(kinetoToRocprof(trace, { sdk: "1.0" }).bytes, "mi250");
  const view = expectedRoundTripView(trace);
  const calls = new Map(trace.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => [Number(e.args!.correlation), e.args!]));
  const e: Expect = { device_events: [], launches: [] };
  const corrDevice = new Map<number, number>();
  for (const op of view.ops) {
    const call = calls.get(op.correlation) ?? {};
    const dims = (v: unknown) => (Array.isArray(v) ? v.join(",") : "1,1,1");
    e.device_events.push({
      plane: `/device:GPU:${op.pid}`, row_prefix: `Stream #${op.tid}(`,
      name: op.cat === "gpu_memcpy" ? "MemcpyH2D" : op.name, ts_ns: Number(op.ts - start), dur_ns: Number(op.dur),
      correlation: op.correlation,
      kernel: op.cat === "kernel"
        ? { regs: 0, shmem: Number(call["shared memory"] ?? 0), block: dims(call.block), grid: dims(call.grid) } : null,
    });
    corrDevice.set(op.correlation, op.pid);
  }
  for (const a of view.api) {
    const d = corrDevice.get(a.correlation);
    if (d === undefined) continue;
    e.launches.push({ name: a.name, tid: a.tid, ts_ns: Number(a.ts - start), dur_ns: Number(a.dur), correlation: a.correlation, device: d, plane: `/device:GPU:${d}` });
  }
  assert.is(e.device_events.filter((x) => x.kernel).length, 14);
  assert.is(e.launches.length, 16);
  const res = check(file, e);
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, 16);
  // kernel_stats has one row per kernel name and launch shape.
  const shapes = new Set(e.device_events.filter((x) => x.kernel).map((x) => `${x.name}|${x.kernel!.grid}|${x.kernel!.block}`));
  assert.is(res.summary.kernel_stats_rows, shapes.size);
  console.log(`  xprof mi250: ${e.device_events.length} device events, ${e.launches.length} launches with flows, ${res.summary.kernel_stats_rows} kernel_stats rows`);
});

for (const sdk of ["0.5", "1.0"] as const) {
  test(`fake rocprofiler-sdk ${sdk} dump → XSpace: XProf lists one /device:GPU:N process per GPU agent`, async () => {
    const { file } = await xspace(fakeRocmDump(sdk, 12).dump, `fake-${sdk}`);
    const res = check(file, { device_events: [], launches: [] });
    assert.ok(res.ok, res.failures.join("\n"));
    const procs = res.summary.processes as string[];
    assert.ok(procs.includes("/device:GPU:0") && procs.includes("/device:GPU:1"), JSON.stringify(procs));
    // kernel_stats has one row per kernel name and launch shape: every step of the fake has its own grid size.
    assert.is(res.summary.kernel_stats_rows, 12);
  });
}

test.run();
