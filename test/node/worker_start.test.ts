/**
 * src/node/worker_start.ts: rawtrace's worker threads (conversion pool, gzip pool) start without the process's
 * preload options (`--import`, `--require`, `--loader`), keeping every other Node option.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { workerExecArgv } from "../../src/node/worker_start.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

test("workerExecArgv drops preloads in both spellings and keeps every other option", () => {
  assert.equal(workerExecArgv([]), []);
  assert.equal(
    workerExecArgv(["--import", "tsx", "--max-old-space-size=4096", "--require", "/x/preflight.cjs", "--expose-gc"]),
    ["--max-old-space-size=4096", "--expose-gc"],
  );
  assert.equal(workerExecArgv(["--import=tsx", "-r", "a.cjs", "--loader", "l.mjs", "--experimental-loader=m.mjs", "--enable-source-maps"]), ["--enable-source-maps"]);
  // An option whose value merely looks like a preload is kept whole.
  assert.equal(workerExecArgv(["--title=--import", "--stack-size", "2000"]), ["--title=--import", "--stack-size", "2000"]);
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
