/**
 * A batch or merge checks every output against its inputs (an output is never an input) through one InputSet built
 * per run (src/node/output.ts): one stat per input in all. Before, every output's name (defaultOutput) and every
 * output opened (refuseInput) stat'ed every input again once the output existed: N² stat calls on a --force rerun
 * (2 million, 17.8 s for 1,000 inputs, the workers idle most of the time). Counted here, not timed: the stat calls
 * of this thread during a --force rerun of 120 inputs must grow linearly (a few per input), not with 120².
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import fs, { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { convertBatch } from "../../src/node/batch.js";
import { merge } from "../../src/node/merge.js";
import { InputSet, isInput } from "../../src/node/output.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const N = 120;
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-inputset-"));
const IN = join(tmp, "in");
mkdirSync(IN);
const files = Array.from({ length: N }, (_, i) => {
  const p = join(IN, `rank${String(i).padStart(4, "0")}.rawtrace`);
  copyFileSync(join(ROOT, "samples/xpu_train_pti.rawtrace"), p);
  return p;
});

/** Runs `fn` counting this thread's statSync and lstatSync calls. */
async function countingStats(fn: () => Promise<unknown>): Promise<number> {
  const stat = fs.statSync;
  const lstat = fs.lstatSync;
  let n = 0;
  fs.statSync = ((...a: Parameters<typeof stat>) => (n++, stat(...a))) as typeof stat;
  fs.lstatSync = ((...a: Parameters<typeof lstat>) => (n++, lstat(...a))) as typeof lstat;
  syncBuiltinESMExports();
  try {
    await fn();
  } finally {
    fs.statSync = stat;
    fs.lstatSync = lstat;
    syncBuiltinESMExports();
  }
  return n;
}

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("batch --force rerun: stat calls linear in the inputs", async () => {
  const outDir = join(tmp, "out");
  const first = await convertBatch(files, { outDir, jobs: 2 });
  assert.is(first.ok, N);
  let r: Awaited<ReturnType<typeof convertBatch>> | undefined;
  const calls = await countingStats(async () => (r = await convertBatch(files, { outDir, jobs: 2, force: true })));
  assert.is(r!.ok, N);
  // Before: ≈ 2·N² (defaultOutput and refuseInput each stat'ed every input per output) = 28,800.
  assert.ok(calls < 20 * N, `${calls} stat calls for ${N} inputs`);
});

test("merge --force rerun: stat calls linear in the inputs", async () => {
  const out = join(tmp, "m.json");
  await merge(files, out, { jobs: 2 });
  const calls = await countingStats(() => merge(files, out, { jobs: 2, force: true }));
  assert.ok(calls < 20 * N, `${calls} stat calls for ${N} inputs`);
});

test("InputSet: by path and by device and inode", () => {
  const set = new InputSet(files.slice(0, 3));
  assert.ok(isInput(files[0], set));
  assert.ok(isInput(join(IN, ".", "rank0001.rawtrace"), set));
  assert.not.ok(isInput(files[3], set));
  assert.not.ok(isInput(join(IN, "nothing.json"), set));
  fs.linkSync(files[2], join(tmp, "hard.rawtrace"));
  assert.ok(isInput(join(tmp, "hard.rawtrace"), set));
});

test.run();
