/**
 * `rawtrace batch --shard I/N` (src/node/shard.ts, docs/cluster.md): 4 shards run as separate processes of the
 * built CLI convert every one of 12 rank dumps exactly once, their outputs together equal one plain `batch` run and
 * one `convert` run byte for byte, a merge of the inputs the shards converted equals the merge of all; the shard of
 * a file does not depend on how the inputs were named (relative, absolute, order); shard and list validation.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkOutputNames, commonRoot, fnv1a32, parseShard, selectShard, shardKeys } from "../../src/node/shard.js";
import { sampleDump } from "../helpers/sample_dump.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-shard-"));
const DUMPS = join(tmp, "dumps");
mkdirSync(DUMPS);
const RANKS = 12;
const inputs: string[] = [];
for (let r = 0; r < RANKS; r++) {
  const p = join(DUMPS, `rank${r}.rawtrace`);
  writeFileSync(p, sampleDump({ rank: r, hostname: `node-${r >> 2}`, clockOffset: BigInt(r) * 1000n }));
  inputs.push(p);
}
// The list file: relative to the working directory (tmp), a comment, a blank line, reversed order.
writeFileSync(join(tmp, "ranks.txt"), `# every rank of the job\n\n${inputs.map((p) => `dumps/${p.slice(DUMPS.length + 1)}`).reverse().join("\n")}\n`);

function built(): void {
  if (!existsSync(CLI)) throw new Error("dist/node not built (node scripts/build.mjs)");
}

const cli = (args: string[], cwd = tmp) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8", timeout: 120000 });

/** Runs the CLI as a separate process; resolves with its exit code and output. */
function cliAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, [CLI, ...args], { cwd: tmp });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("error", fail);
    p.on("close", (status) => done({ status, stdout, stderr }));
  });
}

const files = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

test("FNV-1a 32 matches its published test vectors", () => {
  assert.is(fnv1a32(""), 0x811c9dc5);
  assert.is(fnv1a32("a"), 0xe40c292c);
  assert.is(fnv1a32("foobar"), 0xbf9cf968);
});

test("checkOutputNames: a .rawtrace and a .rawtrace.gz of one name clash in one --out-dir (both write x.json)", () => {
  assert.throws(() => checkOutputNames(["a/x.rawtrace", "b/x.rawtrace.gz"], "out"), /would write the same output/);
  checkOutputNames(["a/x.rawtrace", "b/y.rawtrace.gz"], "out");
  checkOutputNames(["a/x.rawtrace", "b/x.rawtrace.gz"], undefined); // beside each input: different folders
});

test("parseShard: I/N from 0; everything else is a usage error naming the value", () => {
  assert.equal(parseShard("0/1"), { index: 0, count: 1 });
  assert.equal(parseShard("3/4"), { index: 3, count: 4 });
  for (const bad of ["4/4", "-1/4", "1/0", "a/b", "1/4/2", "", "1", "1.5/4", "0x1/4", "1/ 4"]) {
    try {
      parseShard(bad);
      assert.unreachable(`'${bad}' accepted`);
    } catch (e) {
      assert.is((e as Error).name, "USAGE", bad);
      assert.ok((e as Error).message.includes("--shard"), (e as Error).message);
    }
  }
});

test("a file's shard does not depend on how the inputs are named: relative, absolute, order, working directory", () => {
  assert.is(commonRoot(inputs), DUMPS);
  assert.equal(shardKeys(inputs), inputs.map((_, r) => `rank${r}.rawtrace`));
  const rel = inputs.map((p) => join("..", tmp.split("/").pop()!, "dumps", p.slice(DUMPS.length + 1)));
  const cwd = process.cwd();
  process.chdir(join(tmp, "dumps"));
  try {
    for (let i = 0; i < 4; i++) {
      const a = selectShard(inputs, { index: i, count: 4 });
      const b = selectShard([...rel].reverse(), { index: i, count: 4 }).map((p) => join(tmp, "dumps", p.split("/").pop()!));
      assert.equal([...b].sort(), [...a].sort(), `shard ${i}`);
    }
  } finally {
    process.chdir(cwd);
  }
  // The 4 shards partition the inputs; a deeper or shallower common root only renames the keys.
  const parts = [0, 1, 2, 3].map((i) => selectShard(inputs, { index: i, count: 4 }));
  assert.equal(parts.flat().sort(), [...inputs].sort());
  assert.equal(selectShard(inputs, { index: 0, count: 1 }), inputs);
});

test("4 shards as separate processes convert each input once; together they equal one batch and one convert run", async () => {
  built();
  const runs = await Promise.all([0, 1, 2, 3].map((i) =>
    cliAsync(["batch", "--list", "ranks.txt", "--shard", `${i}/4`, "--out-dir", join(tmp, `shard${i}`), "--jobs", "1", "--json"])));
  const seen: string[] = [];
  for (const [i, r] of runs.entries()) {
    assert.is(r.status, 0, `shard ${i}: ${r.stderr}`);
    const doc = JSON.parse(r.stdout) as { command: string; shard: { index: number; count: number; total: number }; files: Array<{ input: string; ok: boolean; output: string }> };
    assert.is(doc.command, "batch");
    assert.equal(doc.shard, { index: i, count: 4, total: RANKS });
    for (const f of doc.files) {
      assert.ok(f.ok, f.input);
      seen.push(f.input);
    }
    // The shard wrote exactly the outputs of its own inputs.
    assert.equal(files(join(tmp, `shard${i}`)), doc.files.map((f) => f.input.replace(/^.*\//, "").replace(".rawtrace", ".json")).sort());
  }
  assert.equal(seen.map((p) => join(tmp, p)).sort(), [...inputs].sort(), "every input exactly once");
  assert.is(new Set(seen).size, RANKS);
  assert.ok(runs.filter((r) => JSON.parse(r.stdout).files.length > 0).length >= 2, "the work is spread over shards");

  const plain = cli(["batch", "dumps", "--out-dir", "all", "--jobs", "1"]);
  assert.is(plain.status, 0, plain.stderr);
  const conv = cli(["convert", "dumps", "--out-dir", "conv", "--jobs", "1"]);
  assert.is(conv.status, 0, conv.stderr);
  assert.is(files(join(tmp, "all")).length, RANKS);
  assert.equal(files(join(tmp, "conv")), files(join(tmp, "all")));
  const union = new Map<string, Buffer>();
  for (let i = 0; i < 4; i++) for (const f of files(join(tmp, `shard${i}`))) union.set(f, readFileSync(join(tmp, `shard${i}`, f)));
  assert.equal([...union.keys()].sort(), files(join(tmp, "all")));
  for (const [name, bytes] of union) {
    assert.ok(bytes.equals(readFileSync(join(tmp, "all", name))), `${name}: shard output differs from the batch run`);
    assert.ok(bytes.equals(readFileSync(join(tmp, "conv", name))), `${name}: shard output differs from convert`);
  }

  // The reduce: merge the inputs the shards converted (named as the list names them), in shard order, against the
  // merge of all of them.
  mkdirSync(join(tmp, "m1"));
  mkdirSync(join(tmp, "m2"));
  const m1 = cli(["merge", ...seen, "-o", join(tmp, "m1", "job.json"), "--jobs", "1"]);
  assert.is(m1.status, 0, m1.stderr);
  const m2 = cli(["merge", "dumps", "-o", join(tmp, "m2", "job.json"), "--jobs", "1"]);
  assert.is(m2.status, 0, m2.stderr);
  const a = readFileSync(join(tmp, "m1", "job.json"));
  assert.ok(a.equals(readFileSync(join(tmp, "m2", "job.json"))), "merge of the shards' inputs differs from the merge of all");
  const doc = JSON.parse(a.toString("utf8")) as { traceEvents: Array<{ ph: string; name: string; args?: { name?: string } }> };
  const ranks = doc.traceEvents.filter((e) => e.ph === "M" && e.name === "process_name" && /^rank \d+ /.test(e.args?.name ?? ""));
  assert.ok(ranks.length >= RANKS, `${ranks.length} rank process names`);
});

test("usage errors exit 2 in every shard before any work; an unreadable list exits 4; an empty shard exits 0", () => {
  built();
  for (const bad of ["4/4", "-1/4", "1/0", "one/4", "1/4/2"]) {
    const r = cli(["batch", "dumps", "--shard", bad, "--out-dir", "never"]);
    assert.is(r.status, 2, `${bad}: ${r.stderr}`);
    assert.match(r.stderr, /rawtrace: usage: .*--shard/);
  }
  assert.not.ok(existsSync(join(tmp, "never")));
  const noInputs = cli(["batch", "--shard", "0/2"]);
  assert.is(noInputs.status, 2, noInputs.stderr);
  assert.match(noInputs.stderr, /batch needs/);
  const missingList = cli(["batch", "--list", "nope.txt", "--shard", "0/2"]);
  assert.is(missingList.status, 4, missingList.stderr);
  assert.match(missingList.stderr, /--list nope\.txt: cannot read the list \(ENOENT\)/);
  const badJobs = cli(["batch", "dumps", "--shard", "0/2", "--jobs", "0"]);
  assert.is(badJobs.status, 2, badJobs.stderr);
  const unknown = cli(["batch", "dumps", "-o", "x.json"]);
  assert.is(unknown.status, 2, unknown.stderr);
  assert.match(unknown.stderr, /unknown option '-o' for 'batch'/);

  // Two inputs that would write the same output: refused by every shard, whichever holds them.
  mkdirSync(join(tmp, "twins/a"), { recursive: true });
  mkdirSync(join(tmp, "twins/b"), { recursive: true });
  writeFileSync(join(tmp, "twins/a/rank0.rawtrace"), sampleDump({ rank: 0 }));
  writeFileSync(join(tmp, "twins/b/rank0.rawtrace"), sampleDump({ rank: 1 }));
  for (let i = 0; i < 3; i++) {
    const r = cli(["batch", "twins", "--shard", `${i}/3`, "--out-dir", "twins-out"]);
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, /would write the same output/);
  }
  assert.not.ok(existsSync(join(tmp, "twins-out")));
  // Next to their inputs they do not collide.
  const beside = cli(["batch", "twins", "--shard", "0/1"]);
  assert.is(beside.status, 0, beside.stderr);
  assert.ok(existsSync(join(tmp, "twins/a/rank0.json")) && existsSync(join(tmp, "twins/b/rank0.json")));

  // One input, 4 shards: three have nothing to do and say so; the one that has it converts it.
  const codes = [0, 1, 2, 3].map((i) => cli(["batch", "dumps/rank5.rawtrace", "--shard", `${i}/4`, "--out-dir", "single", "--json"]));
  for (const r of codes) assert.is(r.status, 0, r.stderr);
  assert.equal(codes.map((r) => JSON.parse(r.stdout).files.length).sort(), [0, 0, 0, 1]);
  assert.equal(files(join(tmp, "single")), ["rank5.json"]);

  // A glob that matches nothing fails once: in shard 0 only.
  const globs = [0, 1].map((i) => cli(["batch", "dumps/rank1.rawtrace", "missing/*.rawtrace", "--shard", `${i}/2`, "--out-dir", "globs"]));
  assert.is(globs[0].status, 1, globs[0].stderr);
  assert.match(globs[0].stderr, /missing\/\*\.rawtrace: no \.rawtrace file matches/);
  assert.not.match(globs[1].stderr, /no \.rawtrace file matches/);

  // Nothing matches at all (an empty or misnamed dumps folder): shard 0 fails naming it (exit 1), the others hold no
  // input and exit 0 — not every task of the array failing with exit 4. Without --shard (or with 0/1, the whole list)
  // the same: a failed input, exit 1, as batch exits for any (docs/errors.md), not 4.
  mkdirSync(join(tmp, "empty-dumps"), { recursive: true });
  const none = [0, 1, 2].map((i) => cli(["batch", "empty-dumps", "--shard", `${i}/3`, "--out-dir", "none"]));
  assert.equal(none.map((r) => r.status), [1, 0, 0], none.map((r) => r.stderr).join("\n"));
  assert.match(none[0].stderr, /empty-dumps: no \.rawtrace file matches/);
  for (const r of none.slice(1)) assert.match(r.stderr, /no inputs of 0 fall in this shard/);
  // The same for a --list that names nothing (cluster.md's `find … > ranks.txt` that found no dump): before, a usage
  // error in every shard (exit 2) that did not name the list.
  writeFileSync(join(tmp, "empty-list.txt"), "# ranks of run 7\n\n");
  const listed = [0, 1, 2].map((i) => cli(["batch", "--list", "empty-list.txt", "--shard", `${i}/3`, "--out-dir", "none"]));
  assert.equal(listed.map((r) => r.status), [1, 0, 0], listed.map((r) => r.stderr).join("\n"));
  assert.match(listed[0].stderr, "rawtrace: --list empty-list.txt: the list names no input (empty, or only blank lines and # comments)");
  for (const r of listed.slice(1)) assert.match(r.stderr, /no inputs of 0 fall in this shard/);
  for (const args of [["empty-dumps"], ["zz*.rawtrace"], ["zz*.rawtrace", "--shard", "0/1"], ["zz*.rawtrace", "--json"]]) {
    const r = cli(["batch", ...args, "--out-dir", "none"]);
    assert.is(r.status, 1, `${args.join(" ")}: ${r.stderr}`);
    if (args.includes("--json")) {
      const doc = JSON.parse(r.stdout) as { failed: number; files: Array<{ input: string; error: { message: string } }> };
      assert.is(doc.failed, 1);
      assert.is(doc.files[0].error.message, `${args[0]}: no .rawtrace file matches`);
    } else {
      assert.match(r.stderr, `rawtrace: ${args[0]}: no .rawtrace file matches`);
      assert.match(r.stderr, `1 failed:\n  ${args[0]} (IO)`);
    }
  }
  assert.not.ok(existsSync(join(tmp, "none")), "nothing made");
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
