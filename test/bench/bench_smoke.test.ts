/**
 * CI smoke test of the benchmark harness (issue: benchmarks): the smallest size, every rawtrace output and the
 * peer, one run each. It checks the harness works and its outputs agree on the event count; it judges no speed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";

const ROOT = new URL("../../", import.meta.url).pathname;

test("npm run bench at the smallest size prints the table and writes the results file", () => {
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", "bench/run.ts", "--sizes", "2e4", "--repeat", "1", "--tasks", "floor,chrome,chrome-file,chrome-gz,chrome-gz0,chrome-gz1,chrome-gz6,xspace,peer"],
    { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  for (const task of ["floor", "chrome", "chrome-file", "chrome-gz", "xspace", "peer"]) assert.match(out, new RegExp(`\\| ${task} \\|`), task);
  // The gzip levels side by side: speed as % of chrome and of chrome-file (plain JSON written through the same
  // shipped path), size against level 6 (1.000× for level 6 itself).
  assert.match(out, "| records | gzip task | s | CPU s | events/s | speed vs chrome | on 2 free cores | vs chrome-file | gzip bytes | size vs level 6 |");
  assert.match(out, /\| chrome-gz6 \| [\d.]+ \| [\d.]+ \| [\d.]+M \| \d+% \| \d+% \| \d+% \| \d+ \| 1\.000× \|/);
  const date = new Date().toISOString().slice(0, 10);
  const file = `${ROOT}bench/results/${date}.json`;
  assert.ok(existsSync(file));
  const r = JSON.parse(readFileSync(file, "utf8"));
  const events = (t: string) => r.results.find((x: any) => x.task === t).events;
  assert.ok(events("chrome") > 10000);
  assert.is(events("chrome-gz"), events("chrome"));
  assert.is(events("chrome-file"), events("chrome"));
  const bytes = (t: string) => r.results.find((x: any) => x.task === t).bytesOut;
  assert.is(bytes("chrome-file"), bytes("chrome"), "the plain file holds the JSON the chrome task makes");
  assert.is(bytes("chrome-gz"), bytes("chrome-gz0"), "the default level is 0");
  assert.ok(bytes("chrome-gz1") > bytes("chrome-gz6") && bytes("chrome-gz6") < bytes("chrome") / 5, "gzip files, level 6 smaller");
  rmSync(`${ROOT}bench/data/cupti_20000.rawtrace`, { force: true });
});

test("npm run bench -- --vendor rocm: the ROCm mix (rocprofiler-sdk records) through every rawtrace output", () => {
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", "bench/run.ts", "--vendor", "rocm", "--sizes", "2e4", "--repeat", "1", "--tasks", "floor,chrome,xspace,peer"],
    { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  for (const task of ["floor", "chrome", "xspace"]) assert.match(out, new RegExp(`\\| ${task} \\|`), task);
  assert.not.match(out, /\| peer \|/, "the CUPTI peer is not run on ROCm dumps");
  const date = new Date().toISOString().slice(0, 10);
  const r = JSON.parse(readFileSync(`${ROOT}bench/results/${date}-rocm.json`, "utf8"));
  assert.is(r.vendor, "rocm");
  // 2e4 records: about half are HIP calls, the rest kernels and copies, each one event, plus ranges.
  assert.ok(r.results.find((x: any) => x.task === "chrome").events > 19000);
  rmSync(`${ROOT}bench/data/rocprof_20000.rawtrace`, { force: true });
});

test("npm run bench -- --tile: a real dump of 3 copies (bench/tile_dump.ts) through the tasks, counted in copies", () => {
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", "bench/run.ts", "--tile", "test/fixtures/real/h100/torch_nvtx.rawtrace", "--sizes", "3", "--repeat", "1", "--tasks", "floor,chrome,xspace,peer"],
    { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  assert.match(out, "| copies of torch_nvtx | input MB |");
  for (const task of ["floor", "chrome", "xspace"]) assert.match(out, new RegExp(`\\| 3 \\| \\d+ \\| ${task} \\|`), task);
  assert.not.match(out, /\| peer \|/, "the peer is not run on tiled dumps");
  const date = new Date().toISOString().slice(0, 10);
  const r = JSON.parse(readFileSync(`${ROOT}bench/results/${date}-torch_nvtx.json`, "utf8"));
  // torch_nvtx.rawtrace converts to 1,981 events; three copies to three times that.
  assert.is(r.results.find((x: any) => x.task === "chrome").events, 3 * 1981);
  rmSync(`${ROOT}bench/data/real_torch_nvtx_x3.rawtrace`, { force: true });
});

test.run();
