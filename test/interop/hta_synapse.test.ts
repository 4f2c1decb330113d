/**
 * Holistic Trace Analysis reads rawtrace's Chrome JSON of Habana (Synapse) dumps: the bundled Gaudi2 sample
 * (src/tools/gaudi2_sample.ts, 'X' entries) and the same trace written as 'B'/'E' pairs in the old 112-byte layout.
 * test/interop/hta_check.py loads each with `TraceAnalysis` and runs the GPU kernel breakdown. HTA must find every
 * device row of our JSON (same names, categories and counts), and its kernel breakdown per name must equal the
 * kernels' durations computed here from the generator's input (µs; HTA truncates times to whole µs: at most 2 µs per
 * event), memcpys and memsets included.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { kinetoToSynapse, type SynapseOptions } from "../../src/tools/kineto_to_synapse.js";
import { gaudi2SampleTrace } from "../../src/tools/gaudi2_sample.js";
import { microsToNs } from "../../src/tools/kineto_to_rawtrace.js";
import { toChrome } from "../helpers/convert.js";
import { gpuStreamRows, type StreamRow } from "../helpers/interop.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = join(ROOT, ".venv/bin/python");

interface HtaRank { kernels: StreamRow[]; breakdown: Array<{ name: string; kernel_type: string; sum_us: number }> }
interface HtaReport { traces: Record<string, { ranks: Record<string, HtaRank> }> }

/** The committed sample (samples/gaudi2_mlp_synapse.rawtrace, the tool's output with SAMPLE_OPTIONS) and a variant. */
const CASES: Record<string, SynapseOptions | "samples/gaudi2_mlp_synapse.rawtrace"> = {
  sample: "samples/gaudi2_mlp_synapse.rawtrace", "begin-end-112": { layout: 112, beginEnd: true, perPull: 200 },
};
const ours: Record<string, StreamRow[]> = {};
let report: HtaReport;
let work = "";

test.before(async () => {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-hpu-"));
  for (const [dir, opts] of Object.entries(CASES)) {
    const bytes = typeof opts === "string" ? new Uint8Array(readFileSync(join(ROOT, opts))) : kinetoToSynapse(gaudi2SampleTrace(), opts).bytes;
    const { text } = await toChrome(bytes);
    mkdirSync(join(work, dir));
    writeFileSync(join(work, dir, "rank-0.json"), text);
    ours[dir] = gpuStreamRows(text);
  }
  const out = execFileSync(PYTHON, [join(ROOT, "test/interop/hta_check.py"), ...Object.keys(CASES).map((d) => join(work, d))], {
    encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20,
  });
  const raw = JSON.parse(out) as HtaReport;
  report = { traces: {} };
  for (const [d, t] of Object.entries(raw.traces)) report.traces[d.slice(work.length + 1)] = t;
});

test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Device work of the generator input per (name, category): count and summed duration in µs, exact. */
function inputRows(): Map<string, { count: number; us: number }> {
  const rows = new Map<string, { count: number; us: number }>();
  for (const e of gaudi2SampleTrace().traceEvents) {
    if (e.ph !== "X" || !["kernel", "gpu_memcpy", "gpu_memset"].includes(e.cat!)) continue;
    const k = `${e.name}\0${e.cat}`;
    const r = rows.get(k) ?? { count: 0, us: 0 };
    r.count++;
    r.us += Number(microsToNs(e.dur!)) / 1000;
    rows.set(k, r);
  }
  return rows;
}

for (const dir of Object.keys(CASES)) {
  test(`HTA ${dir}: every device row found; kernel breakdown = the generator's kernel durations`, () => {
    const ranks = Object.values(report.traces[dir].ranks);
    assert.is(ranks.length, 1);
    const hta = ranks[0];
    const shape = (k: StreamRow[]) => k.map((r) => `${r.cat} ×${r.count} ${r.name}`).sort();
    assert.equal(shape(hta.kernels), shape(ours[dir]), "HTA's device rows differ from rawtrace's");
    const input = inputRows();
    assert.equal(shape(ours[dir]), [...input.entries()].map(([k, r]) => `${k.split("\0")[1]} ×${r.count} ${k.split("\0")[0]}`).sort(),
      "rawtrace's device rows differ from the generator's input");
    const breakdown = new Map(hta.breakdown.map((b) => [b.name, b]));
    let htaTotal = 0;
    let inTotal = 0;
    let events = 0;
    for (const [k, r] of input) {
      const name = k.split("\0")[0];
      const b = breakdown.get(name);
      assert.ok(b, `${name} missing from HTA's kernel breakdown`);
      assert.ok(Math.abs(b!.sum_us - r.us) <= 2 * r.count, `${name}: HTA ${b!.sum_us} µs, input ${r.us} µs`);
      htaTotal += b!.sum_us;
      inTotal += r.us;
      events += r.count;
    }
    assert.ok(Math.abs(htaTotal - inTotal) <= 2 * events);
    console.log(`hta hpu ${dir}: ${events} device ops, ${input.size} names, breakdown ${htaTotal} µs, input ${inTotal.toFixed(3)} µs`);
  });
}

test.run();
