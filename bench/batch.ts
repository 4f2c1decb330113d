/**
 * Batch pipeline scaling: the same files converted by the bundled CLI with `--jobs 1` and with `--jobs N`, side by
 * side in one run (interleaved, each measured in its own process, median of `--repeat`). Inputs are `--copies`
 * copies of one bench/generate.ts dump; inputs and outputs live in a scratch directory removed at the end, on
 * tmpfs (/dev/shm) when there is one, so that what is measured is the pipeline, not the disk's write-back.
 *
 *   tsx bench/batch.ts [--records 1e6] [--copies 8] [--jobs 2] [--repeat 3] [--format chrome|chrome-gz|xspace]
 *                      [--scratch dir]
 *
 * Prints a table and the jobs N / jobs 1 speed-up; writes bench/results/batch-<date>.json.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cliBenchSetup } from "./cli_setup.js";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "1e6" },
    copies: { type: "string", default: "8" },
    jobs: { type: "string", default: "2" },
    repeat: { type: "string", default: "3" },
    format: { type: "string", default: "chrome" },
    scratch: { type: "string", default: existsSync("/dev/shm") ? "/dev/shm" : tmpdir() },
  },
});
const records = Number(values.records);
const copies = Number(values.copies);
const jobs = Number(values.jobs);
const repeat = Number(values.repeat);
const format = values.format!;

const source = cliBenchSetup(records);
const scratch = mkdtempSync(join(values.scratch!, "rawtrace-batch-"));
const inputs: string[] = [];
for (let i = 0; i < copies; i++) {
  const p = join(scratch, `copy${i}.rawtrace`);
  copyFileSync(source, p);
  inputs.push(p);
}
const bytesIn = statSync(source).size * copies;

interface Run { jobs: number; seconds: number; bytesOut: number; events: number }

/** One CLI run in its own process; wall time around it (process start included, as a user sees it). */
function run(n: number): Run {
  const out = join(scratch, `out-${n}`);
  rmSync(out, { recursive: true, force: true });
  const args = ["dist/node/cli.js", "convert", ...inputs, "--out-dir", out, "--jobs", String(n), "--json", "--force"];
  if (format === "chrome-gz") args.push("--gzip");
  if (format === "xspace") args.push("--format", "xspace");
  const t0 = performance.now();
  const text = execFileSync(process.execPath, args, { encoding: "utf8", maxBuffer: 16 << 20 });
  const seconds = (performance.now() - t0) / 1000;
  const r = JSON.parse(text);
  if (r.failed !== 0) throw new Error(`bench run failed: ${text}`);
  rmSync(out, { recursive: true, force: true });
  return { jobs: n, seconds, bytesOut: r.bytesOut, events: r.events };
}

try {
  const runs: Run[] = [];
  run(jobs); // warm the page cache and the disk
  for (let i = 0; i < repeat; i++) {
    for (const n of [1, jobs]) {
      const r = run(n);
      runs.push(r);
      console.error(`jobs ${n}: ${r.seconds.toFixed(2)} s (${(bytesIn / 1e6 / r.seconds).toFixed(0)} MB/s in)`);
    }
  }
  const median = (n: number) => {
    const s = runs.filter((r) => r.jobs === n).map((r) => r.seconds).sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  };
  const one = median(1);
  const many = median(jobs);
  const r0 = runs[0];
  const lines = [
    `| jobs | files | input MB | output MB | events | s (median of ${repeat}) | input MB/s | speed-up |`,
    `|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...[[1, one], [jobs, many]].map(([n, s]) =>
      `| ${n} | ${copies} | ${(bytesIn / 1e6).toFixed(0)} | ${(r0.bytesOut / 1e6).toFixed(0)} | ${r0.events} | ${s.toFixed(2)} | ` +
      `${(bytesIn / 1e6 / s).toFixed(0)} | ${(one / s).toFixed(2)}× |`),
  ];
  console.log(lines.join("\n"));
  console.log(`\n--jobs ${jobs} / --jobs 1: ${(one / many).toFixed(2)}× (${cpus().length} cores: ${cpus()[0]?.model ?? "?"}; Node ${process.version})`);
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(`bench/results/batch-${date}.json`, JSON.stringify({
    date, records, copies, jobs, repeat, format, bytesIn, scratch: values.scratch, cores: cpus().length, node: process.version, runs,
    medians: { 1: one, [jobs]: many }, speedup: one / many,
  }, null, 2));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
