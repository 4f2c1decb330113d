/**
 * One file on several threads (src/node/split.ts, src/node/split_protocol.ts, assembly/split.ts): the Chrome JSON
 * converted by N = 1, 2, 3 and 7 workers while the main thread writes equals one worker's byte for byte (SHA-256),
 * with one segment per worker and with many rounds of small segments, over the bundled samples (CUDA, ROCm, XPU,
 * HPU), the real H100 fixtures, dumps cut into many small ACTIVITY chunks so that flows, NVTX ranges and ROCTx/PTI
 * state cross the workers' segments, and damaged and truncated dumps (a Gaudi one cut inside a trace buffer too, and
 * both with their tails zeroed instead of cut; same warnings); options, the gzip output and
 * the CLI (its log line and --json) too.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { convertFile } from "../../src/node/convert.js";
import { WorkerPool } from "../../src/node/pool.js";
import { convertSplit, convertingWorkers, splitSegments, MIN_WORKER_BYTES, SEGMENT_BYTES } from "../../src/node/split.js";
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
// A chunk whose length field runs past the end of the file (its header CRC still right): the reader finds the
// complete chunks after it only in its end-of-file scan, when the input is finished — which the worker writing the
// end must do before it closes its segments.
put("gen_eofscan.rawtrace", lengthPastEnd(gen, 0.05));
// The Gaudi sample cut inside its second pull (HPU_TRACE chunk at 75424), 33 bytes into its entry 120: that pull's
// entries before the cut convert in the last segment, whichever worker owns it.
const gaudi = readFileSync(join(ROOT, "samples/gaudi2_mlp_synapse.rawtrace"));
put("gaudi_cut.rawtrace", gaudi.subarray(0, 75424 + 24 + 48 + 120 * 208 + 33));
// The same cuts with zeros up to the files' full sizes (a crash's never-written blocks): the buffer they start in is
// complete by its length but fails its checksum, and is read as a cut one (assembly/format/container.ts zeroTailed)
// by both passes of every worker.
put("gen_zero_tail.rawtrace", zeroTail(gen, Math.floor(gen.length * 0.61) & ~7));
put("gaudi_zero_tail.rawtrace", zeroTail(gaudi, 75424 + 24 + 48 + 120 * 208 + 33));

/** `dump` with every byte from `from` on zero. */
function zeroTail(dump: Uint8Array, from: number): Uint8Array {
  const b = Buffer.from(dump);
  b.fill(0, from);
  return b;
}

/** `dump` with the length field of the chunk at `at` (a fraction of the chunks) set to run past the end of the file. */
function lengthPastEnd(dump: Uint8Array, at: number): Uint8Array {
  const b = Buffer.from(dump);
  const chunks: number[] = [];
  for (let i = 8; i + 24 <= b.length; i += 8) {
    // A chunk: the sync word and a header CRC that matches (docs/format.md, "Chunks"); then skip its payload.
    if (b.readUInt32LE(i) !== 0x4b435452 || crc32(b.subarray(i, i + 20)) !== b.readUInt32LE(i + 20)) continue;
    chunks.push(i);
    i += 24 + ((b.readUInt32LE(i + 12) + 7) & ~7) - 8;
  }
  const c = chunks[Math.floor(chunks.length * at)];
  b.writeUInt32LE(b.length - c, c + 12);
  b.writeUInt32LE(crc32(b.subarray(c, c + 20)), c + 20);
  return b;
}

let pool: WorkerPool;
test.before(() => {
  pool = new WorkerPool({ jobs: 7 });
});
test.after(async () => {
  await pool.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function split(input: string, output: string, n: number, gzip = false, segmentBytes?: number) {
  const fd = openSync(output, "w");
  try {
    return await convertSplit(pool, { input, output, gzip, traceName: "t" }, fd, n, { segmentBytes });
  } finally {
    closeSync(fd);
  }
}

test("segments: a multiple of the workers, about SEGMENT_BYTES of input each, at least one round; threads", () => {
  assert.is(splitSegments(1e9, 1), 1);
  assert.is(splitSegments(0, 2), 2);
  assert.is(splitSegments(1000, 7), 7);
  assert.is(splitSegments(78e6, 2), 2 * Math.round(78e6 / (2 * SEGMENT_BYTES)));
  assert.is(splitSegments(1.1e9, 3), 3 * Math.round(1.1e9 / (3 * SEGMENT_BYTES)));
  assert.is(splitSegments(1e6, 2, 4096), 244);
  // At most 65,536 segments.
  assert.is(splitSegments(1e12, 3, 1), 3 * Math.floor(65536 / 3));
  // --jobs N: N − 1 convert, the main thread writes; at least one converts.
  assert.is(convertingWorkers(1), 1);
  assert.is(convertingWorkers(2), 1);
  assert.is(convertingWorkers(8), 7);
  // No more workers than the input has MIN_WORKER_BYTES: --jobs 1000 on a 10 KB file is one worker and the writer.
  assert.is(convertingWorkers(1000, 10_000), 1);
  assert.is(convertingWorkers(1000, 3 * MIN_WORKER_BYTES), 3);
  assert.is(convertingWorkers(3, 1e9), 2);
});

test("every input, N = 1, 2, 3, 7, one round and many: the same SHA-256 as one worker, and the same warnings", async () => {
  let split2 = 0;
  let rounds = 0;
  for (const input of inputs) {
    const one = join(tmp, "one.json");
    rmSync(one, { force: true });
    const r1 = await convertFile(input, one, { traceName: "t" });
    const want = sha(one);
    // Default segments (one per worker for these small files), and segments of 2 KiB of input: many rounds, so every
    // worker emits, skips and resumes many times and the row tables are rebuilt from interleaved logs.
    for (const [n, segmentBytes] of [[1, undefined], [2, undefined], [3, undefined], [7, undefined], [2, 2048], [3, 2048], [7, 2048]] as const) {
      const out = join(tmp, `n${n}.json`);
      const r = await split(input, out, n, false, segmentBytes);
      const what = `${input} with ${n} workers, ${r.segments} segments`;
      assert.is(sha(out), want, what);
      assert.is(r.events, r1.events, `${what}: events`);
      assert.equal(r.info.warnings, r1.info.warnings, `${what}: warnings`);
      assert.is(r.parts.length, n);
      assert.is(r.parts.reduce((a, b) => a + b, 0), r1.events);
      if (r.parts.filter((e) => e > 0).length >= 2) split2++;
      if (r.segments >= 4 * n) rounds++;
    }
  }
  // The work was shared: most inputs (all the many-chunk ones) had events written by at least two workers.
  assert.ok(split2 >= 40, `only ${split2} conversions used two workers or more`);
  assert.ok(rounds >= 20, `only ${rounds} conversions had four rounds of segments or more`);
});

test("the end-of-file scan's chunks go where one conversion puts them (their own segments, before the end)", async () => {
  const input = join(tmp, "gen_eofscan.rawtrace");
  const one = join(tmp, "eof1.json");
  rmSync(one, { force: true });
  const r1 = await convertFile(input, one, { traceName: "t" });
  assert.ok(r1.info.warnings.some((w) => w.code === "BAD_CHUNK_HEADER"), "the damaged length is reported");
  for (const [n, pieceBytes] of [[2, undefined], [3, undefined], [2, 4096]] as const) {
    const out = join(tmp, "eof.json");
    const fd = openSync(out, "w");
    try {
      await convertSplit(pool, { input, output: out, traceName: "t" }, fd, n, { segmentBytes: 8192, pieceBytes, piecesInFlight: pieceBytes ? 4 : undefined });
    } finally {
      closeSync(fd);
    }
    assert.is(sha(out), sha(one), `${n} workers, pieces of ${pieceBytes ?? "4 MiB"}`);
  }
});

test("the many-chunk dumps: every worker writes events, warnings of the damaged dump kept", async () => {
  for (const input of [GEN, join(tmp, "alexnet_7.rawtrace"), join(tmp, "gen_damaged.rawtrace")]) {
    const r = await split(input, join(tmp, "p.json"), 7);
    assert.ok(r.parts.every((e) => e > 0), `${input}: parts ${r.parts}`);
    const many = await split(input, join(tmp, "p.json"), 7, false, 4096);
    assert.ok(many.parts.every((e) => e > 0), `${input}: parts ${many.parts} (${many.segments} segments)`);
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
        await convertSplit(pool, { input, output: out, traceName: "t", ...c }, fd, 3, { segmentBytes: 8192 });
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
  await split(GEN, out, 3, true, 4096);
  assert.is(sha(out), sha(one), "many segments");
  await split(GEN, out, 1, true);
  assert.is(sha(out), sha(one), "one worker, the main thread writing");
});

test("tiny pieces, two in flight: workers wait for their buffers to come back, the bytes are the same", async () => {
  const one = join(tmp, "tiny1.json");
  rmSync(one, { force: true });
  await convertFile(GEN, one, { traceName: "t" });
  for (const [n, gzip] of [[1, false], [3, false], [2, true]] as const) {
    const out = join(tmp, gzip ? "tiny.json.gz" : "tiny.json");
    const oneGz = join(tmp, "tiny1.json.gz");
    if (gzip) {
      rmSync(oneGz, { force: true });
      await convertFile(GEN, oneGz, { traceName: "t" });
    }
    const fd = openSync(out, "w");
    try {
      await convertSplit(pool, { input: GEN, output: out, gzip, traceName: "t" }, fd, n, { segmentBytes: 8192, pieceBytes: 512, piecesInFlight: 2 });
    } finally {
      closeSync(fd);
    }
    assert.is(sha(out), sha(gzip ? oneGz : one), `${n} workers${gzip ? ", gzip" : ""}`);
  }
});

test("a write error (a full disk) fails the conversion with IO naming the output; the workers are free after", async () => {
  for (const n of [1, 3]) {
    const fd = openSync("/dev/full", "w");
    try {
      await convertSplit(pool, { input: GEN, output: "/dev/full", traceName: "t" }, fd, n, { segmentBytes: 4096 });
      assert.unreachable("writing to /dev/full succeeded");
    } catch (e) {
      assert.is((e as Error).name, "IO", String(e));
      assert.match((e as Error).message, /gen\.rawtrace: \/dev\/full: cannot write the output \(disk full\)/);
    } finally {
      closeSync(fd);
    }
  }
  // Nobody is left waiting: the same pool converts the file again, the same bytes as one worker.
  const one = join(tmp, "after1.json");
  rmSync(one, { force: true });
  await convertFile(GEN, one, { traceName: "t" });
  const out = join(tmp, "after.json");
  await split(GEN, out, 7, false, 4096);
  assert.is(sha(out), sha(one));
});

test("CLI: convert --jobs 3 and 2 on one file equal --jobs 1 and say how many workers converted it", () => {
  const cli = (jobs: number, out: string) =>
    spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src/cli.ts"), "convert", GEN, "-o", out, "--jobs", String(jobs), "--json"], {
      encoding: "utf8",
    });
  const a = cli(1, join(tmp, "cli1.json"));
  const b = cli(3, join(tmp, "cli3.json"));
  assert.is(a.status, 0, a.stderr);
  assert.is(b.status, 0, b.stderr);
  assert.is(sha(join(tmp, "cli3.json")), sha(join(tmp, "cli1.json")));
  // --jobs 3: two workers convert, the main thread writes; --jobs 1: one worker does both.
  assert.is(JSON.parse(b.stdout).files[0].workers, 2);
  assert.is(JSON.parse(b.stdout).files[0].writer, true);
  assert.is(JSON.parse(a.stdout).files[0].workers, 1);
  assert.is(JSON.parse(a.stdout).files[0].writer, false);
  // The log says it; XSpace (never split) says one worker wrote it.
  const say = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src/cli.ts"), "convert", GEN, ...args, "--jobs", "2", "--force"], { encoding: "utf8" });
  const c = say(["-o", join(tmp, "cli2.json")]);
  assert.is(c.status, 0, c.stderr);
  assert.match(c.stderr, /, a worker and a writer/);
  assert.is(sha(join(tmp, "cli2.json")), sha(join(tmp, "cli1.json")));
  const d = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src/cli.ts"), "convert", GEN, "-o", join(tmp, "cli3b.json"), "--jobs", "3"], { encoding: "utf8" });
  assert.is(d.status, 0, d.stderr);
  assert.match(d.stderr, /, 2 workers and a writer/);
  const x = say(["-o", join(tmp, "cli2.xplane.pb"), "--format", "xspace", "--json"]);
  assert.is(x.status, 0, x.stderr);
  assert.is(JSON.parse(x.stdout).files[0].workers, 1);
  const y = say(["-o", join(tmp, "cli3.xplane.pb"), "--format", "xspace"]);
  assert.match(y.stderr, /one worker \(XSpace is not split\)/);
  // --jobs far beyond the input: the workers it can use (one per 256 KiB), and the batch says how many threads ran.
  const small = join(ROOT, "samples/xpu_train_pti.rawtrace");
  const z = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src/cli.ts"), "convert", small, "-o", join(tmp, "small.json"), "--jobs", "1000", "--json"], { encoding: "utf8" });
  assert.is(z.status, 0, z.stderr);
  const zr = JSON.parse(z.stdout);
  assert.is(zr.files[0].workers, 1);
  assert.is(zr.jobs, 2, "a worker and the writer");
});

test.run();
