/**
 * XProf's overview of a joined host merge (`rawtrace merge --format xspace`, several ranks in one `<host>.xplane.pb`):
 * the steps it shows must be the job's steps, once each, as for one rank. XProf groups events into steps from roots
 * (`_r`); with every rank's `ProfilerStep#N` a root of its own it listed each rank's steps one after the other (two
 * ranks of the H100 sample: 12 steps averaging 49.8 ms, the other rank's 550 ms warm-up step kept, where each rank
 * alone gives 5 steps averaging 4.2 ms). The other ranks' steps now join the first rank's step N through a context
 * link (assembly/emit/xspace_schema.ts stepStats). Inputs: the H100 sample as ranks 0 and 1 of one host, each with its
 * own GPU (a different uuid), as DDP runs one process per GPU.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { asRank } from "../helpers/dump_rank.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const CHECK = join(ROOT, "test/interop/fidelity_check.py");
const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const STEPS = "^train_step$";

interface XprofOut {
  steps: Array<{ step: string; step_ms: number; compute_ms: number }>;
  step_avg_ms: number;
  kernels: Array<{ name: string; occurrences: number; total_us: number }>;
}

let work = "";
let xprofPy = "";

test.before(() => {
  execFileSync("bash", [join(ROOT, "scripts/xprof-env.sh")], { stdio: ["ignore", "ignore", "inherit"], timeout: 900_000 });
  xprofPy = join(ROOT, ".venv-xprof/bin/python");
  work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-merge-"));
});
test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function cli(...args: string[]): void {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 300_000 });
  // The signal too: a run ended by one (status null, nothing on stderr) said only "null" (seen once in a full run).
  assert.is(r.status, 0, `${args.join(" ")}: status ${r.status}, signal ${r.signal}, ${r.error?.message ?? ""}: ${r.stderr}`);
}

function xprof(file: string): XprofOut {
  return JSON.parse(execFileSync(xprofPy, [CHECK, "xprof", file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 << 20 })) as XprofOut;
}

test("merge --format xspace of two ranks on one host (a GPU each): XProf's steps are the ranks' steps once each, as for one rank", () => {
  const sample = readFileSync(SAMPLE);
  const ranks = [0, 1].map((r) => {
    const f = join(work, `rank${r}.rawtrace`);
    writeFileSync(f, asRank(sample, { rank: r, world: 2, uuidTail: 0xa0 + r }));
    return f;
  });
  const logdir = join(work, "merged");
  cli("merge", ...ranks, "--format", "xspace", "-o", logdir, "--steps", STEPS);
  const run = readdirSync(join(logdir, "plugins/profile"))[0];
  const hosts = readdirSync(join(logdir, "plugins/profile", run)).filter((f) => f.endsWith(".xplane.pb"));
  assert.is(hosts.length, 1, "both ranks on one host: one file");
  const merged = xprof(join(logdir, "plugins/profile", run, hosts[0]));
  const single = join(work, "rank0.xplane.pb");
  cli("convert", ranks[0], "-o", single, "--steps", STEPS);
  const one = xprof(single);
  assert.is(one.steps.length, 5, "one rank: 7 steps, XProf drops the first and the last");
  assert.equal(merged.steps.map((s) => s.step_ms), one.steps.map((s) => s.step_ms), "the same steps, each once");
  assert.is(merged.step_avg_ms, one.step_avg_ms);
  // Both GPUs' work is in the steps: every kernel twice, and the same device compute per step (the ranks are alike).
  const count = (o: XprofOut) => new Map(o.kernels.map((k) => [k.name, k.occurrences]));
  const [m, s] = [count(merged), count(one)];
  assert.equal([...m.keys()].sort(), [...s.keys()].sort());
  for (const [name, n] of s) assert.is(m.get(name), 2 * n, name);
  merged.steps.forEach((st, i) => assert.ok(Math.abs(st.compute_ms - one.steps[i].compute_ms) < 1e-6, `step ${st.step}: ${st.compute_ms} vs ${one.steps[i].compute_ms}`));
});

test("the host's first rank without step markers (cut before its first step): XProf's steps are the next rank's, not none", () => {
  const sample = readFileSync(SAMPLE);
  const first = join(work, "cut_rank0.rawtrace");
  writeFileSync(first, asRank(sample, { rank: 0, world: 2, uuidTail: 0xb0 }).subarray(0, 70000));
  const second = join(work, "rank1_of_cut.rawtrace");
  writeFileSync(second, asRank(sample, { rank: 1, world: 2, uuidTail: 0xb1 }));
  const logdir = join(work, "merged_cut");
  cli("merge", first, second, "--format", "xspace", "-o", logdir, "--steps", STEPS);
  const run = readdirSync(join(logdir, "plugins/profile"))[0];
  const hosts = readdirSync(join(logdir, "plugins/profile", run)).filter((f) => f.endsWith(".xplane.pb"));
  const merged = xprof(join(logdir, "plugins/profile", run, hosts[0]));
  const single = join(work, "rank1_of_cut.xplane.pb");
  cli("convert", second, "-o", single, "--steps", STEPS);
  const one = xprof(single);
  // Before: only the first rank's step markers were roots, so the host had 0 steps in XProf.
  assert.is(one.steps.length, 5);
  assert.equal(merged.steps.map((s) => s.step_ms), one.steps.map((s) => s.step_ms), "the second rank's steps");
});

test.run();
