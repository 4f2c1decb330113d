/**
 * `rawtrace info` and `rawtrace stats` on the Habana sample (samples/gaudi2_mlp_synapse.rawtrace) through the built
 * command line: the vendor with the Synapse version, the Gaudi with its HBM, the entries per Synapse type; the
 * sample's counts are derived here from the generator's input (src/tools/gaudi2_sample.ts).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
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

test.run();
