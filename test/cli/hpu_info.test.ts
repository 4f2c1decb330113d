/**
 * `rawtrace info` and `rawtrace stats` on the Habana sample (samples/gaudi2_mlp_synapse.rawtrace) through the built
 * command line: the vendor with the Synapse version, the Gaudi with its HBM, the entries per Synapse type; the
 * sample's counts are derived here from the generator's input (src/tools/gaudi2_sample.ts). The sample cut inside
 * its second pull: the entries before the cut, counted here from the bytes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gaudi2SampleTrace } from "../../src/tools/gaudi2_sample.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SAMPLE = join(ROOT, "samples/gaudi2_mlp_synapse.rawtrace");
const cli = (args: string[]) => spawnSync(process.execPath, [join(ROOT, "dist/node/cli.js"), ...args], { encoding: "utf8", timeout: 120000 });

const input = gaudi2SampleTrace().traceEvents;
const complete = input.filter((e) => e.ph === "X").length;
const counters = input.filter((e) => e.ph === "C").length;

test("info: vendor hpu with the Synapse version, the Gaudi2 and its HBM, entries per Synapse type", () => {
  const r = cli(["info", SAMPLE]);
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.ok(lines.includes("  vendor        hpu (Synapse 1.19.0)"), r.stdout);
  assert.ok(lines.includes("  device 0      GAUDI2 (95.09 GiB HBM)"), r.stdout);
  assert.match(r.stdout, new RegExp(`^ {4}X \\(complete\\) +${complete}$`, "m"));
  assert.match(r.stdout, new RegExp(`^ {4}C \\(counter\\) +${counters}$`, "m"));
  assert.match(r.stdout, /^ {4}M \(metadata\) +\d+$/m);
  assert.not.match(r.stdout, /warnings/);
});

test("stats: the vendor line and the device above the busy table; kernels and host calls counted", () => {
  const r = cli(["stats", SAMPLE]);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /vendor {8}hpu \(Synapse 1\.19\.0\)\n {2}device 0 {6}GAUDI2 \(95\.09 GiB HBM\)/);
  const kernels = input.filter((e) => e.ph === "X" && e.cat === "kernel").length;
  assert.match(r.stdout, new RegExp(`GPU 0 +[\\d.]+ +[\\d.]+ +${kernels} `));
  assert.match(r.stdout, /synLaunchWithExternalEvents enqueueWithExternalEvents/);
});

test("info on the sample cut inside its second pull's entries: the entries before the cut per type, the cut said", () => {
  // The second HPU_TRACE chunk (its header at 75424) cut 33 bytes into its entry 120: every entry of the first pull
  // and 120 of the second are in the file (before, the second pull was not read at all).
  const bytes = readFileSync(SAMPLE);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunk = 75424;
  assert.is(dv.getUint16(chunk + 4, true), 14, "HPU_TRACE");
  const buf2 = chunk + 24 + 48;
  const cut = buf2 + 120 * 208 + 33;
  const count = new Map<string, number>();
  const tally = (buf: number, n: number) => {
    for (let i = 0; i < n; i++) { const t = String.fromCharCode(bytes[buf + i * 208 + 16]); count.set(t, (count.get(t) ?? 0) + 1); }
  };
  tally(264 + 24 + 48, Number(dv.getBigUint64(264 + 24 + 16, true)));
  tally(buf2, 120);
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-hpu-cut-"));
  try {
    const file = join(dir, "cut.rawtrace");
    writeFileSync(file, bytes.subarray(0, cut));
    const r = cli(["info", file]);
    assert.is(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^ {4}X \\(complete\\) +${count.get("X")}$`, "m"));
    assert.match(r.stdout, new RegExp(`^ {4}M \\(metadata\\) +${count.get("M")}$`, "m"));
    assert.match(r.stdout, new RegExp(`^ {4}C \\(counter\\) +${count.get("C")}$`, "m"));
    assert.match(r.stdout, new RegExp(`^ {4}TRUNCATED ×1 \\(first at offset ${chunk}\\)`, "m"));
    assert.match(r.stdout, new RegExp(`^ {4}RECORD_TRUNCATED ×1 \\(first at offset ${buf2 + 120 * 208}\\): .*\\(33 bytes\\)$`, "m"));
    assert.match(r.stdout, new RegExp(`^ {4}HPU_CUT_STRING ×\\d+ \\(first at offset ${buf2}\\)`, "m"));
    assert.match(r.stdout, new RegExp(`^ {4}bytes ${buf2 + 120 * 208}–${cut} \\(RECORD_TRUNCATED\\)$`, "m"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
