/**
 * `rawtrace merge` with a rank that tells no time (its dump cut before or inside its HEADER: no event, no collector
 * start, no clock anchor), and with ranks whose times floor to a time base of 0 (the first 45 days of 1970). Both
 * failed as INTERNAL (exit 70): 0 meant "no fixed time base" to the core, so a time-less rank and every rank of a
 * merge based at 0 chose a base of their own. Now the time-less rank takes the merge's base, contributes no event,
 * keeps its TRUNCATED/NO_END warnings and is left out of the clock report (or `--max-skew` failed it as 56 years
 * off); a base of 0 is kept.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { merge } from "../../src/node/merge.js";
import { WorkerPool } from "../../src/node/pool.js";
import { sampleDump, T0 } from "../helpers/sample_dump.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-merge-no-time-"));
const pool = new WorkerPool({ jobs: 2 });

/** The sample cut after `n` bytes (16: the preamble alone; 20, 40, 100: inside the HEADER chunk). */
function cut(n: number): string {
  const p = join(tmp, `cut${n}.rawtrace`);
  writeFileSync(p, readFileSync(SAMPLE).subarray(0, n));
  return p;
}

/** profile_start_time of an XSpace file's Task Environment plane. */
function profileStart(file: string): bigint {
  const space = fromBinary(XSpaceSchema, readFileSync(file));
  const task = space.planes.find((p) => p.name === "Task Environment")!;
  const st = task.stats.find((s) => task.statMetadata[String(s.metadataId)]?.name === "profile_start_time")!;
  return st.value.value as bigint;
}

test("Chrome: a rank cut before or inside its HEADER adds no event, keeps its warnings, stays out of the clock report", async () => {
  const alone = await merge([SAMPLE], join(tmp, "alone.json"), { pool });
  for (const n of [16, 20, 40, 100]) {
    const out = join(tmp, `m${n}.json`);
    const r = await merge([SAMPLE, cut(n)], out, { pool, maxSkewMs: 1000 });
    assert.is(r.plan.baseTimeNs, alone.plan.baseTimeNs, `cut at ${n}: the whole rank's base`);
    assert.equal(r.ranks.map((x) => x.events), [alone.events, 0], `cut at ${n}`);
    const codes = r.ranks[1].warnings.map((w) => w.code);
    assert.ok(codes.includes("NO_END"), `cut at ${n}: ${codes}`);
    if (n > 16) assert.ok(codes.includes("TRUNCATED"), `cut at ${n}: ${codes}`);
    assert.is(r.clock.ranks[1].startOffsetNs, null);
    assert.is(r.clock.ranks[0].startOffsetNs, 0);
    assert.is(r.clock.residualSkewNs, 0);
    assert.equal(r.clock.skewed, []);
    const doc = JSON.parse(readFileSync(out, "utf8"));
    assert.is(doc.baseTimeNanoseconds, Number(alone.plan.baseTimeNs));
    assert.is(doc.rawtrace.merge.ranks[1].start_offset_ns, null);
    assert.ok(doc.rawtrace.warnings.some((w: { file: string; code: string }) => w.file.endsWith(`cut${n}.rawtrace`) && w.code === "NO_END"));
  }
});

test("XSpace: a rank cut inside its HEADER is written on the merge's profile start", async () => {
  const r = await merge([SAMPLE, cut(100)], join(tmp, "xprof"), { pool, format: "xspace", maxSkewMs: 1000 });
  assert.is(r.outputs.length, 2, "the whole rank's host and the cut rank's unknown host");
  for (const f of r.outputs) assert.is(profileStart(f), r.plan.profileStartNs, f);
  assert.equal(r.ranks.map((x) => x.events > 0), [true, false]);
});

test("ranks whose times lie in January 1970 keep the time base 0 (it is not 'no base')", async () => {
  const early = join(tmp, "early.rawtrace");
  const late = join(tmp, "late.rawtrace");
  writeFileSync(early, sampleDump({ rank: 0, shiftNs: 1_000_000_000n - T0 }));
  writeFileSync(late, sampleDump({ rank: 1 }));
  const c = await merge([early, late], join(tmp, "epoch.json"), { pool });
  assert.is(c.plan.baseTimeNs, 0n);
  assert.ok(c.ranks.every((x) => x.events > 0));
  assert.is(JSON.parse(readFileSync(join(tmp, "epoch.json"), "utf8")).baseTimeNanoseconds, 0);
  // Both on one host: two parts joined into one XSpace, both on the early rank's profile start.
  const x = await merge([early, late], join(tmp, "epoch_xprof"), { pool, format: "xspace" });
  assert.ok(x.plan.profileStartNs < 2_000_000_000n);
  assert.is(x.outputs.length, 1);
  assert.is(profileStart(x.outputs[0]), x.plan.profileStartNs);
});

test.after(async () => {
  await pool.close();
  rmSync(tmp, { recursive: true, force: true });
});

test.run();
