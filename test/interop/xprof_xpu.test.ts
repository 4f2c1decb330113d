// SPDX-License-Identifier: MIT
/**
 * XSpace of Intel XPU (PTI) dumps opened by the real consumer, XProf (pinned in scripts/requirements-xprof.txt,
 * .venv-xprof/): the bundled sample (samples/xpu_train_pti.rawtrace, PTI 1.2 `_v2` records) and the same trace as
 * PTI 0.17 v1 records, converted to XSpace; test/interop/xprof_check.py runs trace_viewer, trace_viewer@,
 * kernel_stats, overview_page and tool_names and compares what XProf shows with the Kineto-style original
 * (test/fixtures/xpu/kineto_xpu_train.json): every kernel, copy and fill on its `/device:GPU:N` plane and stream row
 * to the ns, every launch call's flow arrow, one kernel_stats row per kernel name with its count and total time.
 * PTI records carry no work-group sizes, so kernel_stats shows block and grid 0,0,0. Tiles under Level Zero's
 * COMPOSITE hierarchy: their kernels on their card's plane, on rows "tile N (Stream #Q(...))", with their flows.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { XSpace } from "../../src/gen/xplane_pb.js";
import { kinetoToPti } from "../../src/tools/kineto_to_pti.js";
import { absoluteNs, argsOf, asInt, microsToNs, readKinetoTrace, traceBaseNs } from "../../src/tools/kineto_to_rawtrace.js";
import { writeXprofSpace, xprofCheck, type XprofExpect } from "../helpers/interop.js";
import { T0, apiCall, kernel, ptiDump } from "../helpers/pti_records.js";
import { deviceUuid } from "../../src/tools/kineto_to_pti.js";

const TRACE = "test/fixtures/xpu/kineto_xpu_train.json";
const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-xpu-"));

/** The device planes of `space` with their vendor and device name stats (`<device_vendor> <gpu_device_name>`). */
function gpuPlanes(space: XSpace): Map<string, string> {
  const planes = new Map<string, string>();
  for (const pl of space.planes.filter((p) => p.name.startsWith("/device:GPU:"))) {
    const stat = (n: string) => {
      const sid = Object.values(pl.statMetadata).find((m) => m.name === n)?.id;
      const v = pl.stats.find((x) => x.metadataId === sid)?.value;
      return v?.case === "refValue" ? pl.statMetadata[String(v.value)]?.name : String(v?.value);
    };
    planes.set(pl.name, `${stat("device_vendor")} ${stat("gpu_device_name")}`);
  }
  return planes;
}

test.after(() => rmSync(work, { recursive: true, force: true }));

for (const gen of ["1.2", "0.17"] as const) {
  test(`XPU trace as PTI ${gen} → XSpace: every kernel, copy and fill on its GPU plane to the ns, every launch's flow, kernel_stats`, async () => {
    const trace = readKinetoTrace(TRACE);
    const bytes = gen === "1.2" ? new Uint8Array(readFileSync("samples/xpu_train_pti.rawtrace")) : kinetoToPti(trace, { pti: gen }).bytes;
    const { file, start, space } = await writeXprofSpace(bytes, work, `xpu-${gen}`);
    const planes = gpuPlanes(space);
    assert.equal([...planes.keys()].sort(), ["/device:GPU:0", "/device:GPU:1"]);
    for (const v of planes.values()) assert.is(v, "Intel Intel(R) Data Center GPU Max 1550");
    const base = traceBaseNs(trace);
    const e: XprofExpect = { device_events: [], launches: [] };
    const corrDevice = new Map<number, number>();
    for (const ev of trace.traceEvents) {
      if (ev.ph !== "X" || !["kernel", "gpu_memcpy", "gpu_memset"].includes(ev.cat ?? "")) continue;
      const a = argsOf(ev);
      const corr = asInt(a.correlation)!;
      const name = ev.cat === "kernel" ? ev.name! : ev.cat === "gpu_memset" ? "Memset 3"
        : a.fromDevice !== undefined ? "MemcpyP2P" : "MemcpyHToD";
      e.device_events.push({
        plane: `/device:GPU:${ev.pid}`, row_prefix: `Stream #${ev.tid}(`, name,
        ts_ns: Number(absoluteNs(ev.ts!, base) - start), dur_ns: Number(microsToNs(ev.dur!)), correlation: corr,
        kernel: ev.cat === "kernel" ? { regs: 0, shmem: 0, block: "0,0,0", grid: "0,0,0" } : null,
      });
      corrDevice.set(corr, asInt(ev.pid)!);
    }
    for (const ev of trace.traceEvents) {
      if (ev.ph !== "X" || ev.cat !== "xpu_runtime") continue;
      const corr = asInt(argsOf(ev).correlation)!;
      const d = corrDevice.get(corr);
      if (d === undefined) continue;
      e.launches.push({ name: ev.name!, tid: asInt(ev.tid)!, ts_ns: Number(absoluteNs(ev.ts!, base) - start),
        dur_ns: Number(microsToNs(ev.dur!)), correlation: corr, device: d, plane: `/device:GPU:${d}` });
    }
    assert.is(e.device_events.filter((x) => x.kernel).length, 18);
    assert.is(e.launches.length, 27);
    const res = xprofCheck(file, e);
    assert.ok(res.ok, res.failures.join("\n"));
    assert.is(res.summary.flow_arrows, 27);
    assert.is(res.summary.kernel_stats_rows, 5);
    assert.is(res.summary.kernel_stats_checked, 5);
    console.log(`  xprof xpu PTI ${gen}: ${e.device_events.length} device events, ${e.launches.length} launches with flows, ${res.summary.kernel_stats_rows} kernel_stats rows`);
  });
}

test("COMPOSITE tiles → XSpace: a tile's kernels on their card's plane, one trace-viewer row per (tile, queue)", async () => {
  // Tiles by their own UUID (test/decode/pti_tiles.test.ts): card 1 tiles 0 and 1, card 0 tile 1.
  const tileUuid = (d: number, t: number) => {
    const u = deviceUuid(d).slice();
    u[15] = 0x80 + t;
    return u;
  };
  const handles = [0, 1].flatMap((d) => [{ handle: BigInt(0x1000 + d), uuid: deviceUuid(d), device: d },
    ...[0, 1].map((t) => ({ handle: BigInt(0x2000 + 16 * d + t), uuid: tileUuid(d, t), device: d, tile: t }))]);
  const tiles = [[1, 0, 110], [1, 1, 111], [0, 1, 101], [1, 0, 110]] as const; // (card, tile, SYCL queue)
  const recs = tiles.flatMap(([d, t, q], i) => [apiCall(6, 17, i + 1, 1000 * i, 1000 * i + 300),
    kernel("1.2", i + 1, 1000 * i + 400, 1000 * i + 900 + 7 * i, { uuid: tileUuid(d, t), queue: BigInt(q) })]);
  const { file, start } = await writeXprofSpace(ptiDump([recs], { handles }), work, "tiles");
  const e: XprofExpect = {
    device_events: tiles.map(([d, t, q], i) => ({
      plane: `/device:GPU:${d}`, row_prefix: `tile ${t} (Stream #${q}(`, name: "gemm_kernel",
      ts_ns: Number(T0 + BigInt(1000 * i + 400) - start), dur_ns: 500 + 7 * i, correlation: i + 1,
      kernel: { regs: 0, shmem: 0, block: "0,0,0", grid: "0,0,0" },
    })),
    launches: tiles.map(([d], i) => ({ name: "urEnqueueKernelLaunch", tid: 7, ts_ns: Number(T0 + BigInt(1000 * i) - start),
      dur_ns: 300, correlation: i + 1, device: d, plane: `/device:GPU:${d}` })),
    rows: { "/device:GPU:1": ["tile 0 (Stream #110(Compute))", "tile 1 (Stream #111(Compute))"],
      "/device:GPU:0": ["tile 1 (Stream #101(Compute))"] },
  };
  const res = xprofCheck(file, e);
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, 4);
  assert.equal((res.summary.processes as string[]).filter((p) => p.includes("/device:GPU:")).length, 2, "no plane for a tile");
});

test.run();
