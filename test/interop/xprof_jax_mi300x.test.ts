// SPDX-License-Identifier: MIT
/**
 * A real XSpace as ground truth for ours: the JAX convolution run on 8 MI300X GPUs that XLA's ROCm tracer wrote
 * (../shared/data/real/xspace/jax_conv_mi300x.xplane.pb) turned into the rocprofiler-sdk 1.0 records our collector
 * would have written for it (src/tools/xspace_to_kineto.ts, then src/tools/kineto_to_rocprof.ts), converted to XSpace
 * by rawtrace and opened in XProf (test/interop/xprof_check.py, the pinned XProf of scripts/requirements-xprof.txt).
 * XProf must show every kernel of the real file on its `/device:GPU:N` plane to the ns, each launch call on its host
 * thread with its flow to the kernel, one stream row per real stream, the real file's device capabilities — and
 * kernel_stats must give the same rows (name, grid, block, occurrences, total time) for our file as for the real one.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { kinetoToRocprof } from "../../src/tools/kineto_to_rocprof.js";
import { planeEvents, profileStartNs, statOf, xspaceToKineto } from "../../src/tools/xspace_to_kineto.js";
import { planeCapabilities, summedKernelStats, writeXprofSpace, xprofCheck, xprofCheckReal, type XprofExpect } from "../helpers/interop.js";

const REAL = "../shared/data/real/xspace/jax_conv_mi300x.xplane.pb";
const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-mi300x-"));

test.after(() => rmSync(work, { recursive: true, force: true }));

test("real JAX MI300X XSpace → rocprofiler-sdk 1.0 records → XSpace: XProf shows every kernel and launch to the ns with its flow, the real device capabilities, and the real file's kernel_stats", async () => {
  assert.ok(existsSync(REAL), REAL);
  const real = fromBinary(XSpaceSchema, readFileSync(REAL));
  const trace = xspaceToKineto(real, 4242);
  const { file, start, space } = await writeXprofSpace(kinetoToRocprof(trace, { sdk: "1.0", arch: "gfx942" }).bytes, work, "mi300x");

  // What the real file holds, read independently of the tools: each GPU plane's events and their launch calls.
  const realStart = profileStartNs(real);
  const e: XprofExpect = { device_events: [], launches: [] };
  const corrDevice = new Map<number, number>();
  for (const p of real.planes) {
    const gpu = /^\/device:GPU:(\d+)$/.exec(p.name);
    if (!gpu) continue;
    for (const ev of planeEvents(p, realStart)) {
      const details = String(statOf(p, ev.e, "kernel_details"));
      const dim = (key: string) => new RegExp(`${key}:(\\d+,\\d+,\\d+)`).exec(details)![1];
      const correlation = Number(statOf(p, ev.e, "correlation_id"));
      e.device_events.push({
        plane: p.name, row_prefix: "Stream #", name: ev.name, ts_ns: Number(ev.start - start), dur_ns: Number(ev.dur), correlation,
        kernel: { regs: 0, shmem: Number(/group_mem:(\d+)/.exec(details)![1]), grid: dim("grid"), block: dim("block") },
      });
      corrDevice.set(correlation, Number(gpu[1]));
    }
  }
  const host = real.planes.find((p) => p.name === "/host:CPU")!;
  for (const ev of planeEvents(host, realStart)) {
    const c = statOf(host, ev.e, "correlation_id");
    const d = c === undefined ? undefined : corrDevice.get(Number(c));
    if (d === undefined) continue;
    e.launches.push({ name: ev.name, tid: Number(ev.line), ts_ns: Number(ev.start - start), dur_ns: Number(ev.dur), correlation: Number(c), device: d, plane: `/device:GPU:${d}` });
  }
  assert.is(e.device_events.length, 235, "kernels on the 8 GPU planes of the real file");
  assert.is(e.launches.length, 234, "their launch calls (two kernels share correlation 477)");

  const ours = xprofCheck(file, e);
  assert.ok(ours.ok, ours.failures.join("\n"));
  assert.is(ours.summary.flow_arrows, 234);

  // One stream row per real stream, and the real device capabilities on every GPU plane.
  for (const p of real.planes.filter((x) => x.name.startsWith("/device:GPU:"))) {
    const mine = space.planes.find((x) => x.name === p.name);
    assert.ok(mine, p.name);
    assert.is(mine!.lines.length, p.lines.length, `${p.name}: stream rows`);
    // No memory bandwidth: rocprofiler-sdk's agent table has none to record.
    const keys = Object.keys(planeCapabilities(p)).filter((k) => k !== "memory_bandwidth");
    assert.equal(planeCapabilities(mine!, keys), planeCapabilities(p, keys), `${p.name}: device capabilities`);
  }

  // XProf's kernel_stats of the real file itself gives the same rows as of ours, summed per name, shape and
  // registers (XProf reads no shared memory from the ROCm tracer's `group_mem:` text, where ours gives the LDS as
  // `static_shared:`, checked against group_mem above).
  const theirs = xprofCheckReal(work, REAL);
  assert.ok(theirs.ok, theirs.failures.join("\n"));
  const rows = summedKernelStats(theirs.summary.kernel_stats, false);
  assert.is(rows.length, 6, "kernels of the real file by name and shape");
  assert.equal(summedKernelStats(ours.summary.kernel_stats, false), rows);
  console.log(`  xprof mi300x: ${e.device_events.length} kernels on 8 GPUs, ${e.launches.length} launches with flows, ${rows.length} kernel_stats rows as the real file's`);
});

test.run();
