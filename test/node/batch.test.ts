/**
 * The batch pipeline (src/node/batch.ts, pool.ts, worker.ts, the CLI's convert of many files): outputs of a parallel
 * run equal a serial run and an in-process conversion byte for byte, gzip outputs gunzip to the same bytes, a bad
 * file fails alone, nothing is overwritten without --force, directories and globs expand, the --json summary, and
 * processes that use the pool exit on their own.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import fs, { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { convertBatch } from "../../src/node/batch.js";
import { convertFile } from "../../src/node/convert.js";
import { WorkerPool, defaultJobs } from "../../src/node/pool.js";
import { convertingWorkers } from "../../src/node/split.js";
import { expandInputs } from "../../src/node/inputs.js";
import { failureSummary } from "../../src/node/commands.js";
import { progressLines } from "../../src/node/progress.js";
import { generate } from "../../bench/generate.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { dlrmRanks } from "../helpers/dlrm.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-batch-"));
const IN = join(tmp, "in");
mkdirSync(IN);

/** The inputs: samples (one with NVTX ranges), a generated loop, the synthetic dump (12 and 13 layouts), 3 DLRM ranks. */
const files: string[] = [];
function put(name: string, bytes: Uint8Array): string {
  const p = join(IN, name);
  writeFileSync(p, bytes);
  files.push(p);
  return p;
}
put("h100_nvtx.rawtrace", readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace")));
put("alexnet.rawtrace", readFileSync(join(ROOT, "samples/alexnet_a100_rank0.rawtrace")));
generate(40000, join(IN, "gen.rawtrace"));
files.push(join(IN, "gen.rawtrace"));
put("synthetic13.rawtrace", sampleDump());
put("synthetic12.rawtrace", sampleDump({ layout: "cuda12", clockOffset: 123_456_789n }));
for (const r of dlrmRanks().slice(0, 3)) put(`rank${r.rank}.rawtrace`, r.bytes);

const stem = (p: string) => p.replace(/^.*\//, "").replace(/\.rawtrace$/, "");
const cli = (args: string[], timeout = 120000) =>
  spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { cwd: ROOT, encoding: "utf8", timeout });

test("parallel output equals serial output and the in-process conversion, byte for byte", async () => {
  const par = join(tmp, "par");
  const ser = join(tmp, "ser");
  const one = join(tmp, "one");
  mkdirSync(one);
  const pool = new WorkerPool({ jobs: 2 });
  try {
    const a = await convertBatch(files, { pool, outDir: par });
    assert.is(a.failed, 0, JSON.stringify(a.files.filter((f) => !f.ok)));
    assert.is(a.jobs, 2);
  } finally {
    await pool.close();
  }
  const b = await convertBatch(files, { jobs: 1, outDir: ser });
  assert.is(b.failed, 0);
  assert.is(b.jobs, 1);
  for (const f of files) {
    await convertFile(f, join(one, `${stem(f)}.json`), { traceName: f.replace(/^.*\//, "") });
    const x = readFileSync(join(par, `${stem(f)}.json`));
    assert.ok(x.length > 1000);
    assert.ok(x.equals(readFileSync(join(ser, `${stem(f)}.json`))), `${f}: parallel ≠ serial`);
    assert.ok(x.equals(readFileSync(join(one, `${stem(f)}.json`))), `${f}: parallel ≠ in-process`);
    JSON.parse(x.toString("utf8"));
  }
  assert.equal(readdirSync(par).filter((n) => n.includes(".tmp")), [], "no temporary file left");
});

test("gzip round trip: .json.gz gunzips to the plain JSON", async () => {
  const gz = join(tmp, "gz");
  const r = await convertBatch(files, { jobs: 2, outDir: gz, gzip: true });
  assert.is(r.failed, 0);
  for (const f of files) {
    const z = readFileSync(join(gz, `${stem(f)}.json.gz`));
    assert.is(z[0], 0x1f);
    assert.is(z[1], 0x8b);
    assert.ok(gunzipSync(z).equals(readFileSync(join(tmp, "par", `${stem(f)}.json`))), `${f}: gzip round trip`);
  }
});

test("a bad file fails alone: the others convert, the CLI lists the failures and exits 1", () => {
  const dir = join(tmp, "mixed");
  mkdirSync(dir);
  const corrupt = join(dir, "corrupt.rawtrace");
  const b = Buffer.from(readFileSync(files[1]));
  b.write("NOTATRACE", 0, "latin1"); // magic destroyed
  writeFileSync(corrupt, b);
  const empty = join(dir, "empty.rawtrace");
  writeFileSync(empty, new Uint8Array(0));
  const good = [files[0], files[3], files[5]];
  const out = join(tmp, "mixed-out");
  const r = cli(["convert", good[0], corrupt, good[1], empty, good[2], join(dir, "missing.rawtrace"), "--out-dir", out, "--jobs", "2"]);
  assert.is(r.status, 1, r.stderr);
  for (const g of good) {
    assert.ok(readFileSync(join(out, `${stem(g)}.json`)).equals(readFileSync(join(tmp, "par", `${stem(g)}.json`))), g);
  }
  assert.ok(!existsSync(join(out, "corrupt.json")) && !existsSync(join(out, "empty.json")));
  assert.equal(readdirSync(out).sort(), good.map((g) => `${stem(g)}.json`).sort(), "only the good outputs, no .tmp");
  assert.match(r.stderr, /converted 3 of 6 files/);
  assert.match(r.stderr, /3 failed:/);
  const summary = r.stderr.slice(r.stderr.indexOf("3 failed:"));
  assert.match(summary, /corrupt\.rawtrace \(BAD_MAGIC\)/);
  assert.match(summary, /empty\.rawtrace \(EMPTY\)/);
  assert.match(summary, /missing\.rawtrace \(IO\)/);
  // Each failure's message is said once, when it is known; the summary only names it.
  for (const name of ["corrupt", "empty", "missing"]) {
    const said = r.stderr.split("\n").filter((l) => l.startsWith("rawtrace: ") && l.includes(`${name}.rawtrace`));
    assert.is(said.length, 1, `${name}: ${r.stderr}`);
  }
  assert.not.match(r.stderr, /shard 0\/1|in all\)/, "no shard talk without --shard");
});

test("an onProgress that throws rejects the batch (and a merge) with its error at the end, instead of ending the process from a timer", async () => {
  class Mine extends Error {}
  const out = join(tmp, "progress-throws");
  const thrown = await convertBatch(files.slice(0, 2), { outDir: out, jobs: 2, progressMs: 1, onProgress: () => { throw new Mine("callback bug"); } })
    .then(() => null, (e: unknown) => e);
  assert.ok(thrown instanceof Mine, String(thrown));
  assert.equal(readdirSync(out).sort(), files.slice(0, 2).map((f) => `${stem(f)}.json`).sort(), "the files were converted, nothing else left");
  const { merge } = await import("../../src/node/merge.js");
  const m = await merge(files.slice(0, 2), join(tmp, "progress-merge.json"), { jobs: 2, progressMs: 1, onProgress: () => { throw new Mine("merge bug"); } })
    .then(() => null, (e: unknown) => e);
  assert.ok(m instanceof Mine, String(m));
});

test("the failure summary names at most 20 failures", () => {
  const failed = Array.from({ length: 23 }, (_, i) => ({
    input: `f${i}.rawtrace`, ok: false, events: 0, bytesIn: 0, bytesOut: 0, seconds: 0, warnings: [], error: { code: "EMPTY", message: "" },
  }));
  const lines = failureSummary(failed);
  assert.is(lines[0], "23 failed:");
  assert.is(lines.length, 22);
  assert.is(lines[20], "  f19.rawtrace (EMPTY)");
  assert.is(lines[21], "  … and 3 more (--json lists every failure)");
  assert.equal(failureSummary([]), []);
});

test("never overwrites without --force; --force does; -o with several inputs is a usage error", () => {
  const out = join(tmp, "force");
  const args = ["convert", files[3], files[4], "--out-dir", out];
  assert.is(cli(args).status, 0);
  const again = cli(args);
  assert.is(again.status, 1);
  assert.match(again.stderr, /already exists \(to overwrite it: --force; Node API: force: true\)/);
  const single = cli(["convert", files[3], "-o", join(out, `${stem(files[3])}.json`)]);
  assert.is(single.status, 3, "one input keeps its own exit code (EXISTS = 3)");
  assert.is(cli([...args, "--force"]).status, 0);
  assert.is(cli(["convert", files[3], files[4], "-o", "x.json"]).status, 2);
});

test("outputs go next to the inputs by default; two inputs with one output name fail the second", async () => {
  const d1 = join(tmp, "a");
  const d2 = join(tmp, "b");
  mkdirSync(d1);
  mkdirSync(d2);
  writeFileSync(join(d1, "x.rawtrace"), sampleDump());
  writeFileSync(join(d2, "x.rawtrace"), sampleDump());
  const r = await convertBatch([join(d1, "x.rawtrace"), join(d2, "x.rawtrace")], { jobs: 2 });
  assert.is(r.ok, 2);
  assert.ok(existsSync(join(d1, "x.json")) && existsSync(join(d2, "x.json")));
  const clash = await convertBatch([join(d1, "x.rawtrace"), join(d2, "x.rawtrace")], { jobs: 2, outDir: join(tmp, "clash") });
  assert.is(clash.ok, 1);
  assert.is(clash.files[1].error!.code, "USAGE");
  assert.match(clash.files[1].error!.message, /same output as/);
});

test("directories and globs expand to .rawtrace files in natural order", () => {
  const d = join(tmp, "tree");
  mkdirSync(join(d, "sub"), { recursive: true });
  for (const n of ["rank10.rawtrace", "rank2.rawtrace", "notes.txt", "sub/rank1.rawtrace"]) writeFileSync(join(d, n), "");
  assert.equal(expandInputs([d]).files, ["rank2.rawtrace", "rank10.rawtrace", "sub/rank1.rawtrace"].map((n) => join(d, n)));
  assert.equal(expandInputs([join(d, "rank*.rawtrace")]).files, [join(d, "rank2.rawtrace"), join(d, "rank10.rawtrace")]);
  assert.equal(expandInputs([join(d, "**", "rank?.rawtrace")]).files, [join(d, "rank2.rawtrace"), join(d, "sub/rank1.rawtrace")]);
  assert.equal(expandInputs([join(d, "nothing*.rawtrace")]).unmatched, [join(d, "nothing*.rawtrace")]);
  assert.equal(expandInputs([join(d, "rank2.rawtrace"), d]).files.length, 3, "no duplicates");
});

test("--json summary: per file events, bytes in/out, seconds, warnings", () => {
  const out = join(tmp, "json");
  const r = cli(["convert", IN, "--out-dir", out, "--json", "--jobs", "2"]);
  assert.is(r.status, 0, r.stderr);
  // No progress or per-file lines with --json; data loss is still said (the synthetic dumps' collector dropped records).
  const lost = /^rawtrace: \S+synthetic1[23]\.rawtrace: DATA LOST: the collector dropped 7 records$/;
  assert.equal(r.stderr.split("\n").filter((l) => l && !lost.test(l)), [], "quiet when not a TTY with --json, but for data loss");
  const s = JSON.parse(r.stdout);
  assert.is(s.command, "convert");
  assert.is(s.ok, files.length);
  assert.is(s.failed, 0);
  assert.is(s.files.length, files.length);
  for (const f of s.files) {
    assert.ok(f.ok && f.events > 0 && f.bytesIn > 0 && f.bytesOut > 0 && f.seconds > 0, JSON.stringify(f));
    assert.ok(Array.isArray(f.warnings));
    assert.ok(existsSync(f.output));
  }
  const dropped = s.files.find((f: { input: string }) => f.input.endsWith("synthetic13.rawtrace"));
  assert.ok(dropped.warnings.some((w: { code: string }) => w.code === "DROPPED_RECORDS"), JSON.stringify(dropped));
});

test("XSpace batch: one log directory per input, as the single-file convert lays it out", async () => {
  const out = join(tmp, "xs");
  const r = await convertBatch([files[3], files[5]], { jobs: 2, outDir: out, format: "xspace" });
  assert.is(r.failed, 0, JSON.stringify(r.files));
  for (const f of r.files) {
    assert.match(f.output!, /_xprof\/plugins\/profile\/\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\/[^/]+\.xplane\.pb$/);
    assert.ok(readFileSync(f.output!).length > 100);
  }
  // Running it again into the same directory (--force) keeps the names: a previous run's log directory is not
  // an input, so the default name does not switch to `<name>.rawtrace_xprof` (nor fail the run after that).
  for (let run = 0; run < 2; run++) {
    const again = await convertBatch([files[3], files[5]], { jobs: 2, outDir: out, format: "xspace", force: true });
    assert.is(again.failed, 0, JSON.stringify(again.files));
    assert.equal(again.files.map((f) => f.output), r.files.map((f) => f.output));
  }
});

test("XSpace batch again without --force: EXISTS for each input, and the temporary's descriptor closed once (before: a second close of its number, which another thread may have reopened)", async () => {
  const out = join(tmp, "xs-twice");
  const r = await convertBatch([files[3], files[5]], { jobs: 2, outDir: out, format: "xspace" });
  assert.is(r.failed, 0, JSON.stringify(r.files));
  // Every closeSync of this thread while the refused run goes: none may be of a descriptor already closed.
  const badCloses: number[] = [];
  const closeSync = fs.closeSync;
  fs.closeSync = ((fd: number) => {
    try {
      closeSync(fd);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EBADF") badCloses.push(fd);
      throw e;
    }
  }) as typeof fs.closeSync;
  syncBuiltinESMExports();
  let again;
  try {
    again = await convertBatch([files[3], files[5]], { jobs: 2, outDir: out, format: "xspace" });
  } finally {
    fs.closeSync = closeSync;
    syncBuiltinESMExports();
  }
  assert.equal(again.files.map((f) => f.error?.code), ["EXISTS", "EXISTS"]);
  assert.equal(badCloses, [], "no descriptor closed twice");
});

test("progress lines: per file pass and bytes, total rate and ETA", () => {
  const lines = progressLines({
    files: 4, filesDone: 1, filesFailed: 0, bytesTotal: 400e6, bytesDone: 150e6, seconds: 3,
    active: [{ file: "/x/a.rawtrace", done: 50e6, total: 100e6, pass: 2 }],
  });
  assert.is(lines.length, 2);
  assert.match(lines[0], /a\.rawtrace {2}emit {2}50% {2}50\.0 MB \/ 100\.0 MB/);
  assert.match(lines[1], /\[1\/4 files\] 150\.0 MB \/ 400\.0 MB \(38%\) {2}50\.0 MB\/s {2}ETA 5 s/);
});

test("a pool made for the call: one worker per core at most, and jobs N on one Chrome JSON input splits it as --jobs N", async () => {
  // docs/node-api.md: WorkerPool's default is one worker per core; a batch without `pool` made one per input.
  const many = join(tmp, "many");
  mkdirSync(many);
  const inputs = Array.from({ length: defaultJobs() + 1 }, (_, i) => {
    const p = join(many, `m${i}.rawtrace`);
    writeFileSync(p, sampleDump());
    return p;
  });
  const r = await convertBatch(inputs, { outDir: join(tmp, "many_out") });
  assert.is(r.failed, 0);
  assert.ok(r.jobs <= defaultJobs(), `${r.jobs} workers on ${defaultJobs()} cores`);
  // One Chrome JSON input with jobs: 3 is converted by two workers while this thread writes it (as the CLI does).
  const gen = join(IN, "gen.rawtrace");
  const one = await convertBatch([gen], { jobs: 3, outDir: join(tmp, "split_out") });
  assert.is(one.failed, 0);
  assert.is(one.files[0].writer, true);
  assert.is(one.files[0].workers, convertingWorkers(3, readFileSync(gen).length));
  assert.ok(readFileSync(join(tmp, "split_out", "gen.json")).equals(readFileSync(join(tmp, "ser", "gen.json"))), "the same bytes as one worker");
  const serial = await convertBatch([gen], { jobs: 1, outDir: join(tmp, "serial_out") });
  assert.is(serial.files[0].workers, 1);
  assert.is(serial.files[0].writer, false);
  // XSpace is never split: one worker, no writer (false, as the docs say, not left out).
  const xs = await convertBatch([gen], { jobs: 3, outDir: join(tmp, "split_xs"), format: "xspace" });
  assert.is(xs.files[0].workers, 1);
  assert.is(xs.files[0].writer, false);
});

test("pool: reusable across calls, errors keep their codes, closed pools refuse work", async () => {
  const pool = new WorkerPool({ jobs: 2 });
  const a = await pool.info(files[0]);
  const b = await pool.convert({ input: files[3], output: join(tmp, "pool.json") });
  assert.is(a.vendor, "cuda");
  assert.ok(b.events > 0);
  // An XSpace file's missing folders are made, as convertFile makes them (before: IO, the folder did not exist).
  const xs = await pool.convert({ input: files[3], output: join(tmp, "pool-new/run/x.xplane.pb"), format: "xspace" });
  assert.ok(xs.events > 0 && existsSync(join(tmp, "pool-new/run/x.xplane.pb")));
  const err = await pool.info(join(tmp, "nope.rawtrace")).catch((e) => e);
  assert.is(err.name, "IO");
  assert.is(err.code, "IO");
  assert.ok((await pool.info(files[1])).devices.length > 0, "the worker survives a failed task");
  await pool.close();
  const closed = await pool.info(files[0]).catch((e) => e);
  assert.is(closed.name, "API_MISUSE");
});

test("processes exit on their own: the CLI, a pool closed, and a pool never closed", () => {
  const t0 = Date.now();
  const r = cli(["convert", files[3], files[4], files[5], "--out-dir", join(tmp, "exit"), "--jobs", "2"], 60000);
  assert.is(r.signal, null, "the CLI was not killed by the timeout");
  assert.is(r.status, 0, r.stderr);
  const script = (close: boolean) => `
    import { WorkerPool } from ${JSON.stringify(join(ROOT, "src/node/pool.ts"))};
    const pool = new WorkerPool({ jobs: 2 });
    const r = await Promise.all([pool.info(${JSON.stringify(files[3])}), pool.info(${JSON.stringify(files[4])})]);
    console.log(r.length);
    ${close ? "await pool.close();" : ""}`;
  for (const close of [true, false]) {
    const p = join(tmp, `exit-${close}.mts`);
    writeFileSync(p, script(close));
    const x = spawnSync(process.execPath, ["--import", "tsx", p], { cwd: ROOT, encoding: "utf8", timeout: 60000 });
    assert.is(x.signal, null, `pool ${close ? "closed" : "never closed"}: process hung`);
    assert.is(x.status, 0, x.stderr);
    assert.is(x.stdout.trim(), "2");
  }
  assert.ok(Date.now() - t0 < 60000);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("an onFile that throws: every file still converts, onFile once per file, then the batch rejects with that error", async () => {
  const out = join(tmp, "onfile");
  const seen: string[] = [];
  const bug = new Error("user callback bug");
  const e = await convertBatch([files[3], files[5]], {
    jobs: 2, outDir: out, onFile: (r) => {
      seen.push(r.input);
      assert.ok(r.ok, `${r.input} converted`);
      if (seen.length === 1) throw bug;
    },
  }).then(() => null, (x) => x);
  assert.is(e, bug, "the callback's own error");
  assert.equal(seen.sort(), [files[3], files[5]].sort(), "once per file");
  assert.is(readdirSync(out).filter((f) => f.endsWith(".json")).length, 2, "both outputs published");
});

test.run();
