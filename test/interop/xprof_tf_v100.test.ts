// SPDX-License-Identifier: MIT
/**
 * A real CUDA XSpace as ground truth for ours: the TensorFlow multi-worker BERT run on 8 V100 that XProf's demo
 * ships (../shared/data/real/xspace/tf_multiworker_v100.xplane.pb) — its GPU side turned into the CUPTI records our
 * collector would have written (src/tools/xspace_to_kineto.ts, then src/tools/kineto_to_rawtrace.ts, CUDA 12
 * layouts), converted to XSpace by rawtrace and opened in XProf (test/interop/xprof_check.py, the pinned XProf).
 * XProf must show every kernel and copy of the real file on its `/device:GPU:N` plane and on the row of the same name
 * to the ns, the real planes' device capabilities, and kernel_stats with the same rows (name, grid, block, registers,
 * shared memory, occurrences, total time) as for the real file. The real file's host events are TensorFlow's own
 * (its launches are named by their kernel), not CUDA API calls, so none becomes a record.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { convertKineto } from "../../src/tools/kineto_to_rawtrace.js";
import { planeEvents, profileStartNs, statOf, xspaceToKineto } from "../../src/tools/xspace_to_kineto.js";
import { planeCapabilities, summedKernelStats, writeXprofSpace, xprofCheck, xprofCheckReal, type XprofExpect } from "../helpers/interop.js";

const REAL = "../shared/data/real/xspace/tf_multiworker_v100.xplane.pb";
const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-v100-"));

test.after(() => rmSync(work, { recursive: true, force: true }));

/** XProf's name of a copy (xprof's op classification keys on MemcpyHToD / DToH / DToD) from XLA's (MemcpyH2D…). */
const copyName = (n: string) => n.replace(/^Memcpy([HDP])2([HDP])$/, "Memcpy$1To$2");

test("real TensorFlow V100 XSpace → CUPTI records → XSpace: XProf shows every kernel and copy on its plane and row to the ns, the real device capabilities, and the real file's kernel_stats", async () => {
  assert.ok(existsSync(REAL), REAL);
  const real = fromBinary(XSpaceSchema, readFileSync(REAL));
  const trace = xspaceToKineto(real);
  trace.traceEvents = trace.traceEvents.filter((e) => e.cat !== "cuda_runtime");
  const { bytes, stats } = convertKineto(trace, { layout: "cuda12" });
  assert.equal([stats.kernels, stats.memcpys, stats.skipped], [1330, 226, 0]);
  const { file, start, space } = await writeXprofSpace(bytes, work, "v100");

  // What the real file holds, read independently of the tools: each GPU plane's kernels and copies on their rows.
  const realStart = profileStartNs(real);
  const e: XprofExpect = { device_events: [], launches: [], rows: {} };
  for (const p of real.planes) {
    if (!/^\/device:GPU:\d+$/.test(p.name)) continue;
    const rows = p.lines.filter((l) => l.name.startsWith("Stream #")).map((l) => l.name);
    if (rows.length) e.rows![p.name] = rows;
    const lineName = new Map(p.lines.map((l) => [BigInt(l.id), l.name]));
    for (const ev of planeEvents(p, realStart)) {
      const corr = statOf(p, ev.e, "correlation_id");
      if (corr === undefined) continue;
      const details = String(statOf(p, ev.e, "kernel_details") ?? "");
      const num = (key: string) => Number(new RegExp(`${key}:(\\d+)`).exec(details)![1]);
      const dim = (key: string) => new RegExp(`${key}:(\\d+,\\d+,\\d+)`).exec(details)![1];
      const copy = ev.name.startsWith("Memcpy");
      e.device_events.push({
        plane: p.name, row_prefix: lineName.get(ev.line)!, name: copy ? copyName(ev.name) : ev.name,
        ts_ns: Number(ev.start - start), dur_ns: Number(ev.dur), correlation: Number(corr),
        kernel: copy ? null : { regs: num("regs"), shmem: num("shm"), grid: dim("grid"), block: dim("block") },
      });
    }
  }
  assert.is(e.device_events.length, 1556, "kernels and copies on the GPU planes of the real file");
  const ours = xprofCheck(file, e);
  assert.ok(ours.ok, ours.failures.join("\n"));
  assert.is(ours.summary.rows_checked, 9, "stream rows of GPUs 1, 4 and 6");

  // The real device capabilities on every GPU plane that has events.
  for (const p of real.planes.filter((x) => /^\/device:GPU:\d+$/.test(x.name) && x.lines.length)) {
    const mine = space.planes.find((x) => x.name === p.name);
    assert.ok(mine, p.name);
    const want = planeCapabilities(p);
    assert.equal(planeCapabilities(mine!, Object.keys(want)), want, `${p.name}: device capabilities`);
  }

  // XProf's kernel_stats of the real file itself gives the same rows as of ours, summed per name and shape.
  const theirs = xprofCheckReal(work, REAL);
  assert.ok(theirs.ok, theirs.failures.join("\n"));
  const rows = summedKernelStats(theirs.summary.kernel_stats, true);
  assert.ok(rows.length >= 10, `${rows.length} kernel_stats rows of the real file`);
  assert.equal(summedKernelStats(ours.summary.kernel_stats, true), rows);
  console.log(`  xprof v100: ${e.device_events.length} kernels and copies on 3 GPUs, ${rows.length} kernel_stats rows as the real file's`);
});

test.run();
