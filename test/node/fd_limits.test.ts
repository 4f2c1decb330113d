/**
 * Descriptors a run holds do not grow with its inputs: a batch opens an input's output (temporary and lock file)
 * only when a worker is about to convert it (src/node/batch.ts lanes), a merge holds a rank's fragment or part only
 * while the rank is converted or waits to be appended (src/node/merge.ts). Before, every output or fragment was
 * opened up front: 1,000 inputs failed with EMFILE under the default `ulimit -n 1024`.
 *
 * Counted two ways: the descriptors of this process while a Node API batch of 150 inputs runs (sampled in onFile),
 * and the built CLI under `ulimit -n 64` with the same 150 inputs, every one converted.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { convertBatch } from "../../src/node/batch.js";
import { merge } from "../../src/node/merge.js";
import { WorkerPool } from "../../src/node/pool.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const N = 150;
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-fds-"));
const IN = join(tmp, "in");
mkdirSync(IN);
const files = Array.from({ length: N }, (_, i) => {
  const p = join(IN, `rank${String(i).padStart(4, "0")}.rawtrace`);
  copyFileSync(join(ROOT, i % 2 ? "samples/mi250_minitoy_rocprof.rawtrace" : "samples/xpu_train_pti.rawtrace"), p);
  return p;
});
const fds = () => readdirSync("/proc/self/fd").length;

/** The CLI under `ulimit -n 64`. */
function limited(args: string[]) {
  if (!existsSync(CLI)) throw new Error("dist/node not built (node scripts/build.mjs)");
  const cmd = `ulimit -n 64 && exec "${process.execPath}" "${CLI}" "$@"`;
  return spawnSync("bash", ["-c", cmd, "bash", ...args], { cwd: tmp, encoding: "utf8", timeout: 120000 });
}

test.after(() => rmSync(tmp, { recursive: true, force: true }));

for (const format of ["chrome", "xspace"] as const) {
  test(`batch (${format}): at most a few outputs open at a time`, async () => {
    const pool = new WorkerPool({ jobs: 2 });
    try {
      await convertBatch(files.slice(0, 2), { pool, format, outDir: join(tmp, `warm-${format}`) }); // workers started
      const base = fds();
      let most = 0;
      const r = await convertBatch(files, { pool, format, outDir: join(tmp, `api-${format}`), onFile: () => void (most = Math.max(most, fds())) });
      assert.is(r.ok, N);
      // Before: two descriptors per input (temporary and lock file, XSpace: the temporary) from the start: > 150.
      assert.ok(most - base <= 8, `${most - base} descriptors more than idle during a batch of ${N} inputs`);
    } finally {
      await pool.close();
    }
  });

  test(`batch (${format}) under ulimit -n 64: every input converts`, () => {
    const out = join(tmp, `cli-${format}`);
    const r = limited(["batch", IN, "--format", format, "--out-dir", out, "--jobs", "2", "--json"]);
    assert.is(r.status, 0, r.stderr.slice(-2000));
    const s = JSON.parse(r.stdout);
    assert.is(s.ok, N);
    assert.is(s.failed, 0);
  });
}

for (const format of ["chrome", "xspace"] as const) {
  test(`merge (${format}): a few fragments or parts open at a time`, async () => {
    const pool = new WorkerPool({ jobs: 2 });
    try {
      await merge(files.slice(0, 2), join(tmp, `warm-m-${format}`), { pool, format }); // workers started
      const base = fds();
      let most = 0;
      const out = join(tmp, `api-m-${format}${format === "chrome" ? ".json" : ""}`);
      const r = await merge(files, out, { pool, format, progressMs: 1, onProgress: () => void (most = Math.max(most, fds())) });
      assert.is(r.ranks.length, N);
      // Before: one fragment (Chrome) or part (XSpace, one host) per rank from the start, and every part at the join.
      assert.ok(most - base <= 12, `${most - base} descriptors more than idle during a merge of ${N} ranks`);
    } finally {
      await pool.close();
    }
  });

  test(`merge (${format}) under ulimit -n 64: every rank merged, nothing left behind`, () => {
    const out = join(tmp, `cli-m-${format}${format === "chrome" ? ".json" : ""}`);
    const r = limited(["merge", IN, "--format", format, "-o", out, "--jobs", "2", "--json"]);
    assert.is(r.status, 0, r.stderr.slice(-2000));
    assert.is(JSON.parse(r.stdout).ranks.length, N);
    const left = readdirSync(tmp, { recursive: true }).map(String).filter((f) => /\.(part|tmp|lock)$/.test(f));
    assert.equal(left, []);
  });
}

test.run();
