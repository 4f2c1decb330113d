// SPDX-License-Identifier: MIT
/**
 * XSpace of Intel XPU (PTI) dumps opened by the real consumer, XProf (pinned in scripts/requirements-xprof.txt,
 * .venv-xprof/): the bundled sample (samples/xpu_train_pti.rawtrace, PTI 1.2 `_v2` records) and the same trace as
 * PTI 0.17 v1 records, converted to XSpace; test/interop/xprof_check.py runs trace_viewer, trace_viewer@,
 * kernel_stats, overview_page and tool_names and compares what XProf shows with the Kineto-style original
 * (test/fixtures/xpu/kineto_xpu_train.json): every kernel, copy and fill on its `/device:GPU:N` plane and stream row
 * to the ns, every launch call's flow arrow, one kernel_stats row per kernel name with its count and total time.
 * PTI records carry no work-group sizes, so kernel_stats shows block and grid 0,0,0.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { xspaceProfilePath } from "../../src/node/convert.js";
import { kinetoToPti } from "../../src/tools/kineto_to_pti.js";
import { absoluteNs, argsOf, asInt, microsToNs, readKinetoTrace, traceBaseNs } from "../../src/tools/kineto_to_rawtrace.js";
import { xprofPython } from "../helpers/interop.js";

const TRACE = "test/fixtures/xpu/kineto_xpu_train.json";
const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-xpu-"));

interface Expect {
  device_events: Array<{
    plane: string; row_prefix: string; name: string; ts_ns: number; dur_ns: number; correlation: number;
    kernel: { regs: number; shmem: number; block: string; grid: string } | null;
  }>;
  launches: Array<{ name: string; tid: number; ts_ns: number; dur_ns: number; correlation: number; device: number; plane: string }>;
}

async function xspace(bytes: Uint8Array, name: string): Promise<{ file: string; start: bigint; planes: Map<string, string> }> {
  const parts: Buffer[] = [];
  const r = await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const file = xspaceProfilePath(join(work, name), r.baseTimeNs, r.info.hostname);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, Buffer.concat(parts));
  const s = fromBinary(XSpaceSchema, readFileSync(file));
  const env = s.planes.find((p) => p.name === "Task Environment")!;
  const id = Object.values(env.statMetadata).find((m) => m.name === "profile_start_time")!.id;
  // Device plane stats: vendor and device name.
  const planes = new Map<string, string>();
  for (const pl of s.planes.filter((p) => p.name.startsWith("/device:GPU:"))) {
    const stat = (n: string) => {
      const sid = Object.values(pl.statMetadata).find((m) => m.name === n)?.id;
      const v = pl.stats.find((x) => x.metadataId === sid)?.value;
      return v?.case === "refValue" ? pl.statMetadata[String(v.value)]?.name : String(v?.value);
    };
    planes.set(pl.name, `${stat("device_vendor")} ${stat("gpu_device_name")}`);
  }
  return { file, start: env.stats.find((x) => x.metadataId === id)!.value.value as bigint, planes };
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

for (const gen of ["1.2", "0.17"] as const) {
  test(`XPU trace as PTI ${gen} → XSpace: every kernel, copy and fill on its GPU plane to the ns, every launch's flow, kernel_stats`, async () => {
    const trace = readKinetoTrace(TRACE);
    const bytes = gen === "1.2" ? new Uint8Array(readFileSync("samples/xpu_train_pti.rawtrace")) : kinetoToPti(trace, { pti: gen }).bytes;
    const { file, start, planes } = await xspace(bytes, `xpu-${gen}`);
    assert.equal([...planes.keys()].sort(), ["/device:GPU:0", "/device:GPU:1"]);
    for (const v of planes.values()) assert.is(v, "Intel Intel(R) Data Center GPU Max 1550");
    const base = traceBaseNs(trace);
    const e: Expect = { device_events: [], launches: [] };
    const corrDevice = new Map<number, number>();
    for (const ev of trace.traceEvents) {
      if (ev.ph !== "X" || !["kernel", "gpu_memcpy", "gpu_memset"].includes(ev.cat ?? "")) continue;
      const a = argsOf(ev);
      const corr = asInt(a.correlation)!;
      const name = ev.cat === "kernel" ? ev.name! : ev.cat === "gpu_memset" ? "Memset 3"
        : a.fromDevice !== undefined ? "MemcpyP2P" : "MemcpyH2D";
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
    const res = check(file, e);
    assert.ok(res.ok, res.failures.join("\n"));
    assert.is(res.summary.flow_arrows, 27);
    assert.is(res.summary.kernel_stats_rows, 5);
    assert.is(res.summary.kernel_stats_checked, 5);
    console.log(`  xprof xpu PTI ${gen}: ${e.device_events.length} device events, ${e.launches.length} launches with flows, ${res.summary.kernel_stats_rows} kernel_stats rows`);
  });
}

test.run();
