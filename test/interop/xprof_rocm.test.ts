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
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WORK_ITEM_GRID, kinetoToRocprof } from "../../src/tools/kineto_to_rocprof.js";
import { expectedRoundTripView, readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { fakeRocmDump } from "../helpers/rocm_fake.js";
import { writeXprofSpace, xprofCheck, type XprofExpect } from "../helpers/interop.js";

const TRACE = "../shared/data/real/kineto-rocm/minitoy_mi250.json.gz";

const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-rocm-"));

test.after(() => rmSync(work, { recursive: true, force: true }));

test("real MI250 trace as rocprofiler-sdk 1.0 → XSpace: every kernel and copy on its GPU plane to the ns, every launch's flow", async () => {
  assert.ok(existsSync(TRACE), TRACE);
  const trace = readKinetoTrace(TRACE);
  const { file, start } = await writeXprofSpace(kinetoToRocprof(trace, { sdk: "1.0" }).bytes, work, "mi250");
  const view = expectedRoundTripView(trace);
  const calls = new Map(trace.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => [Number(e.args!.correlation), e.args!]));
  const callName = new Map(trace.traceEvents.filter((e) => e.cat === "cuda_runtime").map((e) => [Number(e.args!.correlation), String(e.name)]));
  const e: XprofExpect = { device_events: [], launches: [] };
  const corrDevice = new Map<number, number>();
  for (const op of view.ops) {
    const call = calls.get(op.correlation) ?? {};
    const dims = (v: unknown) => (Array.isArray(v) ? v.join(",") : "1,1,1");
    // Kineto gives these calls' grid in work-items (src/tools/kineto_to_rocprof.ts WORK_ITEM_GRID); XProf, work-groups.
    const grid = (v: unknown, block: unknown) => (Array.isArray(v) && Array.isArray(block) && WORK_ITEM_GRID.has(callName.get(op.correlation) ?? "")
      ? v.map((g, i) => Math.ceil(Number(g) / Number(block[i]))).join(",") : dims(v));
    e.device_events.push({
      plane: `/device:GPU:${op.pid}`, row_prefix: `Stream #${op.tid}(`,
      name: op.cat === "gpu_memcpy" ? "MemcpyHToD" : op.name, ts_ns: Number(op.ts - start), dur_ns: Number(op.dur),
      correlation: op.correlation,
      kernel: op.cat === "kernel"
        ? { regs: 0, shmem: Number(call["shared memory"] ?? 0), block: dims(call.block), grid: grid(call.grid, call.block) } : null,
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
  const res = xprofCheck(file, e);
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, 16);
  // kernel_stats has one row per kernel name and launch shape.
  const shapes = new Set(e.device_events.filter((x) => x.kernel).map((x) => `${x.name}|${x.kernel!.grid}|${x.kernel!.block}`));
  assert.is(res.summary.kernel_stats_rows, shapes.size);
  console.log(`  xprof mi250: ${e.device_events.length} device events, ${e.launches.length} launches with flows, ${res.summary.kernel_stats_rows} kernel_stats rows`);
});

for (const sdk of ["0.5", "1.0"] as const) {
  test(`fake rocprofiler-sdk ${sdk} dump → XSpace: XProf lists one /device:GPU:N process per GPU agent`, async () => {
    const { file } = await writeXprofSpace(fakeRocmDump(sdk, 12).dump, work, `fake-${sdk}`);
    const res = xprofCheck(file, { device_events: [], launches: [] });
    assert.ok(res.ok, res.failures.join("\n"));
    const procs = res.summary.processes as string[];
    assert.ok(procs.includes("/device:GPU:0") && procs.includes("/device:GPU:1"), JSON.stringify(procs));
    // kernel_stats has one row per kernel name and launch shape: every step of the fake has its own grid size.
    assert.is(res.summary.kernel_stats_rows, 12);
  });
}

test.run();
