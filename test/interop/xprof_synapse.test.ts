// SPDX-License-Identifier: MIT
/**
 * XSpace of Habana (Synapse) dumps opened by the real consumer, XProf (pinned in scripts/requirements-xprof.txt,
 * .venv-xprof/). The bundled Gaudi2 sample (src/tools/gaudi2_sample.ts) is converted to XSpace and
 * test/interop/xprof_check.py runs trace_viewer, trace_viewer@, kernel_stats, overview_page and tool_names on it.
 * Expectations come from the sample's Kineto-style input, not from the converter: every TPC/MME kernel on the
 * `/device:GPU:0` plane, on its engine's row ("MME0 (Stream #6000(Compute))"), to the ns; every recipe launch
 * (`synLaunchWithExternalEvents`) on /host:CPU with its flow to the device work of its recipe — the launch numbers
 * derived here from the bridge's rule (the latest enqueue of the recipe before the device op); kernel_stats totals
 * per kernel name. A two-device dump must give one `/device:GPU:N` plane per Gaudi.
 *
 * Plane name: XProf's trace viewer converts `/device:GPU:*` planes (else TPU, else `/device:CUSTOM:*` ones), and
 * offers kernel_stats only when a `/device:GPU:` plane exists (xprof/convert/xplane_to_tool_names.cc); a
 * `/device:CUSTOM:N` plane would lose kernel_stats and the overview's device side, so Gaudi planes are GPU planes
 * (docs/decoders/hpu.md).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kinetoToSynapse } from "../../src/tools/kineto_to_synapse.js";
import { gaudi2SampleTrace } from "../../src/tools/gaudi2_sample.js";
import { microsToNs, traceBaseNs, type KinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { writeXprofSpace, xprofCheck } from "../helpers/interop.js";

const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-hpu-"));

async function xspace(bytes: Uint8Array, name: string): Promise<{ file: string; start: bigint; planes: string[] }> {
  const { file, start, space } = await writeXprofSpace(bytes, work, name);
  return { file, start, planes: space.planes.map((p) => p.name) };
}

interface Op { name: string; cat: string; pid: number; tid: number; start: bigint; dur: bigint; recipe: number }

/** The device and host events of a Kineto-style HPU trace, absolute ns. */
function opsOf(t: KinetoTrace): { dev: Op[]; host: Op[] } {
  const base = traceBaseNs(t);
  const dev: Op[] = [];
  const host: Op[] = [];
  for (const e of t.traceEvents) {
    if (e.ph !== "X") continue;
    const op = {
      name: e.name!, cat: e.cat!, pid: Number(e.pid), tid: Number(e.tid), start: microsToNs(e.ts!) + base,
      dur: microsToNs(e.dur!), recipe: Number(e.args?.recipeId ?? 0),
    };
    (e.cat === "hpu_op" ? host : dev).push(op);
  }
  return { dev, host };
}

test.after(() => rmSync(work, { recursive: true, force: true }));

test("Gaudi2 sample → XSpace: kernels on their engine rows of /device:GPU:0 to the ns, recipe launches with flows, kernel_stats", async () => {
  // The committed sample (test/tools/roundtrip_synapse.test.ts holds it equal to the tool's output for this input).
  const trace = gaudi2SampleTrace();
  const { file, start } = await xspace(new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace")), "gaudi2");
  const { dev, host } = opsOf(trace);
  // The bridge's launch rule, computed here: enqueue calls numbered in time order; device work takes the latest
  // enqueue of its recipe that started before it.
  const enq = host.filter((h) => h.name.includes("enqueueWithExternalEvents") && h.recipe !== 0).sort((a, b) => (a.start < b.start ? -1 : 1));
  const corrOf = (o: Op) => {
    let c = 0;
    enq.forEach((h, i) => { if (h.recipe === o.recipe && h.start <= o.start) c = i + 1; });
    return c;
  };
  const names = new Map<number, string>();
  for (const e of trace.traceEvents) if (e.ph === "M" && e.name === "thread_name" && e.pid === 0) names.set(Number(e.tid), String(e.args!.name));
  const kernels = dev.filter((o) => o.cat === "kernel");
  const pairs = new Map<string, number>();
  for (const k of kernels) pairs.set(`${corrOf(k)}|${k.name}`, (pairs.get(`${corrOf(k)}|${k.name}`) ?? 0) + 1);
  const device_events = kernels.map((k) => ({
    plane: "/device:GPU:0", row_prefix: `${names.get(k.tid)} (Stream #${k.tid}(Compute`, name: k.name,
    ts_ns: Number(k.start - start), dur_ns: Number(k.dur), correlation: corrOf(k),
    kernel: { regs: 0, shmem: 0, block: "0,0,0", grid: "0,0,0" },
  }));
  // trace_viewer finds an event by (correlation, name): check the time and row of those it can tell apart; all of
  // them count in kernel_stats.
  const unique = device_events.filter((d) => pairs.get(`${d.correlation}|${d.name}`) === 1);
  const launches = enq.map((h, i) => ({
    name: h.name, tid: h.tid, ts_ns: Number(h.start - start), dur_ns: Number(h.dur), correlation: i + 1, device: 0, plane: "/device:GPU:0",
  }));
  const rows = { "/device:GPU:0": [...new Set(dev.map((o) => o.tid))].map((tid) => `${names.get(tid)} (Stream #${tid}(${dev.some((o) => o.tid === tid && o.cat === "kernel") ? "Compute"
    : dev.some((o) => o.tid === tid && o.cat === "gpu_memset") ? "Memset" : "MemcpyOther"}))`) };
  assert.ok(unique.length >= 20, `${unique.length} distinguishable kernels`);
  assert.is(launches.length, 12);
  // trace_viewer looks up the distinguishable kernels; kernel_stats counts every kernel.
  const others = device_events.filter((d) => pairs.get(`${d.correlation}|${d.name}`) !== 1);
  const res = xprofCheck(file, { device_events: unique, launches, rows, stats_only: others });
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, 12);
  assert.is(res.summary.kernel_stats_rows, new Set(kernels.map((k) => k.name)).size);
  assert.is(res.summary.kernel_stats_checked, new Set(kernels.map((k) => k.name)).size);
  assert.ok((res.summary.tool_names as string[]).includes("kernel_stats"));
  console.log(`  xprof gaudi2: ${unique.length}/${kernels.length} kernels checked on their rows, ${launches.length} launches with flows, ` +
    `${res.summary.kernel_stats_rows} kernel_stats rows, ${res.summary.rows_checked} rows`);
});

test("two Gaudi devices → one /device:GPU:N plane each, both shown by XProf's trace viewer", async () => {
  const t: KinetoTrace = {
    baseTimeNanoseconds: "1779840000000000000",
    deviceProperties: [{ id: 0, name: "GAUDI2" }, { id: 1, name: "GAUDI2" }],
    traceEvents: [0, 1].flatMap((d) => [
      { ph: "X", cat: "kernel", name: `gemm_dev${d}`, pid: d, tid: 6000, ts: "10.000", dur: "4.000", args: {} },
      { ph: "X", cat: "kernel", name: `add_dev${d}`, pid: d, tid: 7001, ts: "15.000", dur: "1.500", args: {} },
    ]),
  };
  const { file, planes } = await xspace(kinetoToSynapse(t).bytes, "two");
  assert.ok(planes.includes("/device:GPU:0") && planes.includes("/device:GPU:1"), planes.join(","));
  const res = xprofCheck(file, { device_events: [], launches: [] });
  assert.ok(res.ok, res.failures.join("\n"));
  const procs = res.summary.processes as string[];
  assert.ok(procs.includes("/device:GPU:0") && procs.includes("/device:GPU:1"), JSON.stringify(procs));
  assert.is(res.summary.kernel_stats_rows, 4);
});

test.run();
