/**
 * The step and annotation options as a user types them (`node dist/node/cli.js`, built by scripts/setup.sh):
 * `convert --steps/--gpu-annotations`, their usage errors (exit 2, naming the option), and `stats --steps`
 * (`stats --steps --csv` and `--gaps`: test/interop/fidelity_gaps.test.ts).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const SAMPLE = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-steps-cli-"));
const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: "utf8", timeout: 120000 });

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("usage errors: --gpu-annotations takes on|off, --steps a regular expression, stats --csv one table, --gap-min µs", () => {
  const a = cli(["convert", SAMPLE, "-o", "x.json", "--gpu-annotations", "maybe"]);
  assert.is(a.status, 2);
  assert.match(a.stderr, "--gpu-annotations must be on or off, not 'maybe'");
  const b = cli(["convert", SAMPLE, "-o", "x.json", "--steps", "train_("]);
  assert.is(b.status, 2);
  assert.match(b.stderr, "--steps: 'train_(' is not a regular expression");
  const c = cli(["stats", SAMPLE, "--steps", "x", "--gaps", "--csv"]);
  assert.is(c.status, 2);
  assert.match(c.stderr, "--csv prints one table: --steps or --gaps, not both");
  const d = cli(["stats", SAMPLE, "--gaps", "--gap-min", "soon"]);
  assert.is(d.status, 2);
  assert.match(d.stderr, "--gap-min must be a decimal number of µs ≥ 0 (such as 10 or 2.5), not 'soon'");
});

test("convert --steps train_step --gpu-annotations off: ProfilerStep#1..7, no GPU annotations", () => {
  const r = cli(["convert", SAMPLE, "-o", "t.json", "--steps", "^train_step$", "--gpu-annotations", "off"]);
  assert.is(r.status, 0, r.stderr);
  const t = JSON.parse(readFileSync(join(tmp, "t.json"), "utf8")) as { traceEvents: Array<{ cat?: string; name?: string }> };
  const steps = t.traceEvents.filter((e) => e.cat === "user_annotation" && e.name!.startsWith("ProfilerStep#")).map((e) => e.name);
  assert.equal(steps.sort(), [1, 2, 3, 4, 5, 6, 7].map((n) => `ProfilerStep#${n}`));
  assert.is(t.traceEvents.filter((e) => e.cat === "gpu_user_annotation").length, 0);
});

test("stats --steps --json: one entry per step and device, numbered as the outputs", () => {
  const r = cli(["stats", SAMPLE, "--steps", "^train_step$", "--json"]);
  assert.is(r.status, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { files: Array<{ steps: Array<{ step: number; device: number; spanNs: number; busyPct: number }> }> };
  const s = doc.files[0].steps;
  assert.equal(s.map((x) => x.step), [1, 2, 3, 4, 5, 6, 7]);
  for (const x of s) assert.ok(x.device === 0 && x.spanNs > 0 && x.busyPct > 0 && x.busyPct <= 100);
  const text = cli(["stats", SAMPLE, "--steps", "^train_step$"]);
  assert.match(text.stdout, /steps \(train_step…/);
});

test.run();
