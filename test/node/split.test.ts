/**
 * One file on several workers (src/node/split.ts, assembly/split.ts): the Chrome JSON of `convert --jobs N` on one
 * input equals one worker's byte for byte (SHA-256) for N = 2, 3 and 7, over the bundled samples (CUDA, ROCm, XPU,
 * HPU), the real H100 fixtures, dumps cut into many small ACTIVITY chunks so that flows, NVTX ranges and ROCTx/PTI
 * state cross the workers' shares, and damaged and truncated dumps (same warnings); options, the gzip output and the
 * CLI (its log line and --json) too.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { convertFile } from "../../src/node/convert.js";
import { WorkerPool } from "../../src/node/pool.js";
import { convertSplit, splitBounds } from "../../src/node/split.js";
import { generate } from "../../bench/generate.js";
import { convertKineto, readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { kinetoToPti } from "../../src/tools/kineto_to_pti.js";
import { kinetoToRocprof } from "../../src/tools/kineto_to_rocprof.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DATA = join(ROOT, "../shared/data/real/");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-split-"));
const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");

const inputs: string[] = [];
for (const f of readdirSync(join(ROOT, "samples")).filter((f) => f.endsWith(".rawtrace")).sort()) inputs.push(join(ROOT, "samples", f));
for (const f of readdirSync(join(ROOT, "test/fixtures/real/h100")).filter((f) => f.endsWith(".rawtrace")).sort()) {
  inputs.push(join(ROOT, "test/fixtures/real/h100", f));
}
function put(name: string, bytes: Uint8Array): string {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  inputs.push(p);
  return p;
}
// The bench loop in 16 KiB chunks: NVTX step ranges of 2000 ops and launch → kernel flows cross every share.
const GEN = join(tmp, "gen.rawtrace");
generate(20000, GEN, 16 << 10);
inputs.push(GEN);
put("alexnet_7.rawtrace", convertKineto(readKinetoTrace(join(DATA, "kineto-cuda/alexnet_a100_rank0.json.gz")), { layout: "cuda13", recordsPerChunk: 7 }).bytes);
put("xpu_5.rawtrace", kinetoToPti(readKinetoTrace(join(ROOT, "test/fixtures/xpu/kineto_xpu_train.json")), { pti: "1.2", recordsPerChunk: 5 }).bytes);
put("rocm_3.rawtrace", kinetoToRocprof(readKinetoTrace(join(DATA, "kineto-rocm/minitoy_mi250.json.gz")), { sdk: "1.0", recordsPerChunk: 3 }).bytes);
const gen = readFileSync(GEN);
put("gen_truncated.rawtrace", gen.subarray(0, Math.floor(gen.length * 0.61)));
const damaged = Buffer.from(gen);
for (const at of [0.3, 0.55, 0.8]) damaged[Math.floor(gen.length * at)] ^= 0x5a; // three chunks fail their CRC
put("gen_damaged.rawtrace", damaged);

let pool: WorkerPool;
test.before(() => {
  pool = new WorkerPool({ jobs: 7 });
});
test.after(async () => {
  await pool.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function split(input: string, output: string, n: number, gzip = false) {
  const fd = openSync(output, "w");
  try {
    return await convertSplit(pool, { input, output, gzip, traceName: "t" }, fd, n);
  } finally {
    closeSync(fd);
  }
}

test("shares: equal work per worker, in order, covering every chunk", () => {
  for (const n of [2, 3, 7]) {
    const b = splitBounds(n, 0.25);
    assert.is(b.length, n + 1);
    assert.is(b[0], 0);
    assert.is(b[n], 65536);
    for (let k = 0; k < n; k++) assert.ok(b[k + 1] > b[k], `share ${k} of ${n} is empty`);
    const cost = (k: number) => 0.25 * b[k] + (b[k + 1] - b[k]);
    for (let k = 1; k < n; k++) assert.ok(Math.abs(cost(k) - cost(0)) <= 2, `share ${k} of ${n}: ${cost(k)} vs ${cost(0)}`);
  }
  // Without decode cost the shares are equal.
  assert.equal(splitBounds(2, 0), [0, 32768, 65536]);
});

test("every input, N = 2, 3, 7: the same SHA-256 as one worker, and the same warnings", async () => {
  let split2 = 0;
  for (const input of inputs) {
    const one = join(tmp, "one.json");
    rmSync(one, { force: true });
    const r1 = await convertFile(input, one, { traceName: "t" });
    const want = sha(one);
    for (const n of [2, 3, 7]) {
      const out = join(tmp, `n${n}.json`);
      const r = await split(input, out, n);
      assert.is(sha(out), want, `${input} with ${n} workers`);
      assert.is(r.events, r1.events, `${input} events, ${n} workers`);
      assert.equal(r.info.warnings, r1.info.warnings, `${input} warnings, ${n} workers`);
      assert.is(r.parts.length, n);
      assert.is(r.parts.reduce((a, b) => a + b, 0), r1.events);
      if (r.parts.filter((e) => e > 0).length >= 2) split2++;
    }
  }
  // The work was shared: most inputs (all the many-chunk ones) had events written by at least two workers.
  assert.ok(split2 >= 20, `only ${split2} conversions used two workers or more`);
});

test("the many-chunk dumps: every worker writes events, warnings of the damaged dump kept", async () => {
  for (const input of [GEN, join(tmp, "alexnet_7.rawtrace"), join(tmp, "gen_damaged.rawtrace")]) {
    const r = await split(input, join(tmp, "p.json"), 7);
    assert.ok(r.parts.every((e) => e > 0), `${input}: parts ${r.parts}`);
  }
  const one = join(tmp, "dmg1.json");
  const r1 = await convertFile(join(tmp, "gen_damaged.rawtrace"), one, { traceName: "t" });
  assert.ok(r1.info.warnings.length > 0, "the damaged dump warns");
});

test("options: --all-api, --gpu-annotations off, --steps give the same bytes split", async () => {
  const cases = [{ allApi: true }, { analysis: { gpuAnnotations: false } }, { analysis: { steps: "^train" } }];
  for (const input of [GEN, join(ROOT, "samples/h100_torch_train_nvtx.rawtrace")]) {
    for (const c of cases) {
      const one = join(tmp, "opt1.json");
      rmSync(one, { force: true });
      await convertFile(input, one, { traceName: "t", allApi: c.allApi, ...c.analysis });
      const out = join(tmp, "opt3.json");
      const fd = openSync(out, "w");
      try {
        await convertSplit(pool, { input, output: out, traceName: "t", ...c }, fd, 3);
      } finally {
        closeSync(fd);
      }
      assert.is(sha(out), sha(one), `${input} ${JSON.stringify(c)}`);
    }
  }
});

test("gzip: the split output is the same block gzip", async () => {
  const one = join(tmp, "one.json.gz");
  rmSync(one, { force: true });
  await convertFile(GEN, one, { traceName: "t" });
  const out = join(tmp, "n3.json.gz");
  await split(GEN, out, 3, true);
  assert.is(sha(out), sha(one));
});

test("CLI: convert --jobs 3 on one file equals --jobs 1 and says how many workers wrote it", () => {
  const cli = (jobs: number, out: string) =>
    spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src/cli.ts"), "convert", GEN, "-o", out, "--jobs", String(jobs), "--json"], {
      encoding: "utf8",
    });
  const a = cli(1, join(tmp, "cli1.json"));
  const b = cli(3, join(tmp, "cli3.json"));
  assert.is(a.status, 0, a.stderr);
  assert.is(b.status, 0, b.stderr);
  assert.is(sha(join(tmp, "cli3.json")), sha(join(tmp, "cli1.json")));
  assert.is(JSON.parse(b.stdout).files[0].workers, 3);
  assert.is(JSON.parse(a.stdout).files[0].workers, 1);
  // The log says it; XSpace (never split) says one worker wrote it.
  const say = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src/cli.ts"), "convert", GEN, ...args, "--jobs", "2", "--force"], { encoding: "utf8" });
  const c = say(["-o", join(tmp, "cli2.json")]);
  assert.is(c.status, 0, c.stderr);
  assert.match(c.stderr, /, 2 workers/);
  const x = say(["-o", join(tmp, "cli2.xplane.pb"), "--format", "xspace", "--json"]);
  assert.is(x.status, 0, x.stderr);
  assert.is(JSON.parse(x.stdout).files[0].workers, 1);
  const y = say(["-o", join(tmp, "cli3.xplane.pb"), "--format", "xspace"]);
  assert.match(y.stderr, /one worker \(XSpace is not split\)/);
});

test.run();
