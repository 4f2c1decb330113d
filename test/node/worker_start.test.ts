/**
 * src/node/worker_start.ts: rawtrace's worker threads (conversion pool, gzip pool) start without the process's
 * preload options (`--import`, `--require`, `--loader`), keeping every other Node option that Node accepts for a
 * worker; V8's and per-process options (which Node refuses there and which already hold for every thread) are dropped.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { invalidExecArgv, startWorker, workerExecArgv } from "../../src/node/worker_start.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

test("workerExecArgv drops preloads in both spellings and keeps every other option", () => {
  assert.equal(workerExecArgv([]), []);
  assert.equal(
    workerExecArgv(["--import", "tsx", "--max-old-space-size=4096", "--require", "/x/preflight.cjs", "--expose-gc"]),
    ["--max-old-space-size=4096", "--expose-gc"],
  );
  assert.equal(workerExecArgv(["--import=tsx", "-r", "a.cjs", "--loader", "l.mjs", "--experimental-loader=m.mjs", "--enable-source-maps"]), ["--enable-source-maps"]);
  // What the main program is (a host run as `node --input-type=module -e …`): no worker may inherit it.
  assert.equal(workerExecArgv(["--input-type=module", "--no-warnings", "-e", "code", "--input-type", "module", "--eval=x", "-p", "1"]), ["--no-warnings"]);
  // An option whose value merely looks like a preload is kept whole.
  assert.equal(workerExecArgv(["--title=--import", "--stack-size", "2000"]), ["--title=--import", "--stack-size", "2000"]);
});

test("a host run as node --input-type=module -e: the pool's workers and the gzip workers start (they refused its --input-type)", () => {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-eval-host-"));
  try {
    const api = JSON.stringify(join(ROOT, "dist/node/index.js"));
    const sample = JSON.stringify(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"));
    const code = `import { convertFile, WorkerPool } from ${api};
      const r = await convertFile(${sample}, ${JSON.stringify(join(dir, "a.json.gz"))});
      const pool = new WorkerPool({ jobs: 1 });
      const i = await pool.info(${sample});
      await pool.close();
      console.log(JSON.stringify({ events: r.events, rank: i.rank }));`;
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8", timeout: 120_000 }));
    assert.ok(out.events > 0);
    assert.ok(statSync(join(dir, "a.json.gz")).size > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("invalidExecArgv reads the options out of Node's ERR_WORKER_INVALID_EXEC_ARGV message", () => {
  assert.equal(invalidExecArgv("Initiated Worker with invalid execArgv flags: --max-old-space-size=4096, --expose-gc"),
    ["--max-old-space-size=4096", "--expose-gc"]);
  assert.equal(invalidExecArgv("Initiated Worker with invalid execArgv flags: --title"), ["--title"]);
  assert.equal(invalidExecArgv("something else"), []);
});

/** Starts a worker through startWorker with `argv` as the process's options; resolves with what the worker reports. */
function reportFrom(argv: string[]): Promise<{ heapMb: number; warnings: boolean }> {
  const code = `import { parentPort } from "node:worker_threads"; import v8 from "node:v8";
    parentPort.postMessage({ heapMb: v8.getHeapStatistics().heap_size_limit / 1048576, warnings: process.execArgv.includes("--no-warnings") });`;
  const w = startWorker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), {}, argv);
  return new Promise((resolve, reject) => {
    w.once("message", (m) => { resolve(m); void w.terminate(); });
    w.once("error", reject);
  });
}

test("startWorker drops the options Node refuses for a worker (V8's, per-process ones and their values) and keeps the rest", async () => {
  // Node itself throws ERR_WORKER_INVALID_EXEC_ARGV for these: the reason `node --max-old-space-size=… rawtrace` failed.
  let threw = "";
  try {
    const { Worker } = await import("node:worker_threads");
    new Worker("0", { eval: true, execArgv: ["--max-old-space-size=4096"] });
  } catch (e) {
    threw = (e as NodeJS.ErrnoException).code ?? "";
  }
  assert.is(threw, "ERR_WORKER_INVALID_EXEC_ARGV");
  const argv = ["--import", "tsx", "--max-old-space-size=4096", "--no-warnings", "--expose-gc", "--title", "rt", "--stack-size=900"];
  const first = await reportFrom(argv);
  assert.ok(first.warnings, "--no-warnings (accepted by workers) carried over");
  assert.ok(first.heapMb > 0);
  // Remembered: the second start does not throw on the way either, and still keeps what workers accept.
  const again = await reportFrom(argv);
  assert.ok(again.warnings);
});

test("rawtrace run as node --max-old-space-size=… --expose-gc: batch, one file on two threads and the gzip pool all convert", () => {
  const cli = join(ROOT, "dist/node/cli.js");
  assert.ok(existsSync(cli), "dist/node/cli.js (npm run build)");
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-v8flags-"));
  try {
    const s = join(ROOT, "samples");
    const node = (args: string[]) => JSON.parse(execFileSync(process.execPath,
      ["--max-old-space-size=1024", "--expose-gc", cli, ...args, "--json"], { encoding: "utf8" }));
    const batch = node(["convert", join(s, "alexnet_a100_rank0.rawtrace"), join(s, "xpu_train_pti.rawtrace"), "--out-dir", join(dir, "b"), "--jobs", "2"]);
    assert.is(batch.failed, 0);
    assert.is(batch.files.length, 2);
    const one = node(["convert", join(s, "h100_torch_train_nvtx.rawtrace"), "-o", join(dir, "one.json"), "--jobs", "2"]);
    assert.is(one.failed, 0);
    assert.is(one.files[0].writer, true, "one input on two threads: a converting worker and the writer");
    const gz = node(["convert", join(s, "h100_torch_train_nvtx.rawtrace"), "-o", join(dir, "one.json.gz"), "--jobs", "1"]);
    assert.is(gz.failed, 0);
    assert.ok(statSync(join(dir, "one.json.gz")).size > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the shipped package's worker threads do not run the host's --import preload (gzip and conversion pools)", () => {
  const bundle = join(ROOT, "dist/node/index.js");
  assert.ok(existsSync(bundle), "dist/node/index.js (npm run build)");
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-preload-"));
  try {
    // The preload notes every thread it runs in; the program gzips a sample (level 0: the gzip pool) and converts two
    // samples in a batch of 2 jobs (the conversion pool), then lists the threads that ran the preload.
    const log = join(dir, "threads.log");
    writeFileSync(join(dir, "preload.mjs"),
      `import { appendFileSync } from "node:fs"; import { threadId } from "node:worker_threads"; appendFileSync(${JSON.stringify(log)}, threadId + "\\n");`);
    const program = `
      import { convertFile, convertBatch } from ${JSON.stringify(bundle)};
      const s = ${JSON.stringify(join(ROOT, "samples"))};
      const r = await convertFile(s + "/h100_torch_train_nvtx.rawtrace", ${JSON.stringify(join(dir, "a.json.gz"))}, { gzip: true, gzipLevel: 0 });
      const b = await convertBatch([s + "/alexnet_a100_rank0.rawtrace", s + "/xpu_train_pti.rawtrace"], { outDir: ${JSON.stringify(join(dir, "out"))}, jobs: 2 });
      console.log(JSON.stringify({ events: r.events, files: b.files.length }));
      process.exit(0);`;
    writeFileSync(join(dir, "program.mjs"), program);
    const out = execFileSync(process.execPath, ["--import", join(dir, "preload.mjs"), join(dir, "program.mjs")], { encoding: "utf8" });
    const res = JSON.parse(out.trim().split("\n").pop()!);
    assert.ok(res.events > 0);
    assert.is(res.files, 2);
    assert.ok(existsSync(join(dir, "a.json.gz")));
    assert.equal(readFileSync(log, "utf8").trim().split("\n"), ["0"], "only the main thread ran the preload");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
