/**
 * `rawtrace diff A B` (src/node/diff.ts) on the bundled samples, checked against figures recomputed from the raw
 * records (test/interop/fidelity_records.ts): kernel totals and counts per name on both sides, the mean and median step time,
 * and a file against itself changes nothing.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readDump, demangleAll, deviceSpan, stepsOf } from "./fidelity_records.js";
import type { DiffRow } from "../../src/node/diff.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/node/cli.js");
const H100 = join(ROOT, "samples/h100_torch_train_nvtx.rawtrace");
const ALEXNET = join(ROOT, "samples/alexnet_a100_rank0.rawtrace");

function diff(...args: string[]): { rows: DiffRow[] } {
  const r = spawnSync(process.execPath, [CLI, "diff", ...args, "--json"], { encoding: "utf8", timeout: 120000, maxBuffer: 64 << 20 });
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { rows: DiffRow[] };
}

/** Kernel total ns and count per (c++filt-demangled) name, from the records. */
function kernels(file: string): Map<string, { n: number; ns: bigint }> {
  const d = readDump(new Uint8Array(readFileSync(file)));
  const names = demangleAll(d.ops.filter((o) => o.kind === "kernel").map((o) => o.name));
  const out = new Map<string, { n: number; ns: bigint }>();
  for (const o of d.ops) {
    if (o.kind !== "kernel") continue;
    const k = out.get(names.get(o.name)!) ?? { n: 0, ns: 0n };
    k.n++;
    k.ns += o.end - o.start;
    out.set(names.get(o.name)!, k);
  }
  return out;
}

test("h100 vs alexnet: every kernel's total time and count on each side equal the records'", () => {
  const { rows } = diff(H100, ALEXNET);
  const a = kernels(H100);
  const b = kernels(ALEXNET);
  const kr = rows.filter((r) => r.group === "kernel");
  assert.equal(kr.map((r) => r.name).sort(), [...new Set([...a.keys(), ...b.keys()])].sort());
  for (const r of kr) {
    const ka = a.get(r.name);
    const kb = b.get(r.name);
    assert.ok(Math.abs(r.a - Number(ka?.ns ?? 0n) / 1e6) < 1e-9 && Math.abs(r.b - Number(kb?.ns ?? 0n) / 1e6) < 1e-9, r.name);
    assert.equal([r.countA, r.countB], [ka?.n ?? 0, kb?.n ?? 0], r.name);
    assert.ok(Math.abs(r.delta - (r.b - r.a)) < 1e-12);
  }
  // Largest change first.
  const named = rows.filter((r) => !["trace", "device", "steps"].includes(r.group));
  for (let i = 1; i < named.length; i++) assert.ok(Math.abs(named[i - 1].delta) >= Math.abs(named[i].delta));
});

test("a file against itself: no change; --steps compares the mean step time (the records' device spans)", () => {
  const { rows } = diff(H100, H100, "--steps", "^train_step$");
  for (const r of rows) assert.is(r.delta, 0, `${r.group} ${r.name}`);
  const steps = stepsOf(readDump(new Uint8Array(readFileSync(H100))), /^train_step$/);
  const mean = steps.reduce((n, s) => { const [x, y] = deviceSpan(s); return n + Number(y - x); }, 0) / steps.length / 1e6;
  const r = rows.find((x) => x.group === "steps" && x.name === "mean step time")!;
  assert.ok(Math.abs(r.a - mean) < 1e-9, `${r.a} vs ${mean}`);
  // The median of 7 spans: the 4th smallest, which the 550 ms warm-up step does not move.
  const spans = steps.map((s) => { const [x, y] = deviceSpan(s); return Number(y - x); }).sort((x, y) => x - y);
  const med = rows.find((x) => x.group === "steps" && x.name === "median step time")!;
  assert.ok(Math.abs(med.a - spans[3] / 1e6) < 1e-9, `${med.a} vs ${spans[3] / 1e6}`);
  assert.ok(med.a < mean / 5, "the warm-up step moves the mean, not the median");
  assert.is(rows.find((x) => x.group === "steps" && x.name === "steps")!.a, 7);
});

test("usage: exactly two files", () => {
  const r = spawnSync(process.execPath, [CLI, "diff", H100], { encoding: "utf8" });
  assert.is(r.status, 2);
  assert.match(r.stderr, "diff takes two files, not 1");
});

test.run();
