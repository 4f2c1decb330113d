/**
 * `merge --list FILE` reads the rank files as `batch --list` does (docs/cluster.md has the shards and the merge share
 * one list): the same trace as the files given as arguments. And a string where convertBatch or merge take an array
 * of inputs is USAGE before anything is made (it was spread into characters after outDir was created: a TypeError).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { convertBatch } from "../../src/node/batch.js";
import { merge } from "../../src/node/merge.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-mlist-"));
const ranks = ["xpu_train_pti", "mi250_minitoy_rocprof", "alexnet_a100_rank0"].map((s) => {
  const p = join(tmp, `${s}.rawtrace`);
  copyFileSync(join(ROOT, "samples", `${s}.rawtrace`), p);
  return p;
});
const cli = (args: string[], input?: Buffer) => spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: "utf8", timeout: 60000, input });

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("merge --list: the same trace as the files as arguments", () => {
  writeFileSync(join(tmp, "ranks.txt"), `# the job's ranks\n${ranks[0]}\n\n${ranks[1]}\n`);
  const a = cli(["merge", ranks[2], ranks[0], ranks[1], "-o", "args.json"]); // arguments first, then the list
  assert.is(a.status, 0, a.stderr);
  const l = cli(["merge", "--list", "ranks.txt", ranks[2], "-o", "list.json"]);
  assert.is(l.status, 0, l.stderr);
  const strip = (f: string) => readFileSync(join(tmp, f), "utf8").replace(/"(list|args)\.json"/g, "NAME");
  assert.is(strip("list.json"), strip("args.json"));
});

test("merge - --list -: standard input cannot be both, USAGE (a rank read after the list found it empty)", () => {
  const r = cli(["merge", "-", "--list", "-", "-o", "both.json"], Buffer.from(`${ranks[0]}\n`));
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stderr, /standard input cannot be both a rank \(-\) and the --list/);
});

test("batch - --list - (and /dev/stdin): standard input cannot be both, USAGE as merge says it (before: exit 1, the input found standard input empty)", () => {
  for (const input of ["-", "/dev/stdin"]) {
    const r = cli(["batch", "--list", "-", input, "--out-dir", join(tmp, "both")], Buffer.from(`${ranks[0]}\n`));
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, /standard input cannot be both an input \(-\) and the --list/);
    assert.not.ok(existsSync(join(tmp, "both")), "nothing made");
  }
});

test("convertBatch and merge: a string for the inputs is USAGE, nothing made", async () => {
  const outDir = join(tmp, "never");
  for (const f of [() => convertBatch(ranks[0] as unknown as string[], { outDir }), () => merge(ranks[0] as unknown as string[], join(outDir, "m.json"))]) {
    try {
      await f();
      assert.unreachable("resolved");
    } catch (e) {
      assert.is((e as { code?: string }).code, "USAGE");
    }
  }
  assert.not.ok(existsSync(outDir));
});

test.run();
