/**
 * One file on several cores: `rawtrace convert --jobs N big.rawtrace` (N − 1 workers convert, the main thread
 * writes) against `--jobs 1` (one worker converts and writes), side by side in one run
 * (alternating, each in its own process of the bundled CLI, median of `--repeat`), wall clock and CPU time (user +
 * system of the process and its threads). Checks once that both outputs have the same SHA-256. The input is the
 * bench/generate.ts dump of `--records`; input and output live on tmpfs (/dev/shm) when there is one.
 *
 *   tsx bench/jobs.ts [--records 1e6] [--jobs 2] [--repeat 5] [--gzip] [--scratch dir]
 *
 * Prints a table and the speed-up; writes bench/results/jobs-<date>-<records>.json.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cliBenchSetup } from "./cli_setup.js";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "1e6" },
    jobs: { type: "string", default: "2" },
    repeat: { type: "string", default: "5" },
    gzip: { type: "boolean", default: false },
    scratch: { type: "string", default: existsSync("/dev/shm") ? "/dev/shm" : tmpdir() },
  },
});
const records = Number(values.records);
const jobs = Number(values.jobs);
const repeat = Number(values.repeat);

const source = cliBenchSetup(records);
const bytesIn = statSync(source).size;
const scratch = mkdtempSync(join(values.scratch!, "rawtrace-jobs-"));
const ext = values.gzip ? ".json.gz" : ".json";

interface Run { jobs: number; seconds: number; cpu: number; events: number; bytesOut: number; workers: number; writer: boolean }

/** One CLI run in its own process: wall clock around it, CPU time from the shell's `times` (its children). */
function run(n: number, keep = false): Run {
  const out = join(scratch, `out-${n}${ext}`);
  rmSync(out, { force: true });
  const t0 = performance.now();
  const r = spawnSync("bash", ["-c", 'node "$@" > "$OUT_JSON"; s=$?; times; exit $s', "bash", "dist/node/cli.js", "convert", source, "-o", out,
    "--jobs", String(n), "--json", "--force"], { encoding: "utf8", env: { ...process.env, OUT_JSON: join(scratch, "summary.json") } });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`bench run failed: ${r.stderr}`);
  // `times`: the shell's own user/system, then its children's ("0m1.234s 0m0.100s").
  const child = r.stdout.trim().split("\n")[1].split(/\s+/).map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t)!;
    return Number(m[1]) * 60 + Number(m[2]);
  });
  const s = JSON.parse(readFileSync(join(scratch, "summary.json"), "utf8"));
  if (!keep) rmSync(out, { force: true });
  return { jobs: n, seconds, cpu: child[0] + child[1], events: s.events, bytesOut: s.bytesOut, workers: s.files[0].workers, writer: !!s.files[0].writer };
}

/** SHA-256 of a file read in 16 MiB windows (outputs of large dumps pass 2 GiB, more than one Buffer holds). */
function sha(p: string): string {
  const h = createHash("sha256");
  const fd = openSync(p, "r");
  try {
    const b = Buffer.allocUnsafe(16 << 20);
    for (let n; (n = readSync(fd, b, 0, b.length, null)) > 0;) h.update(b.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return h.digest("hex");
}

/**
 * In-process CPU time of pass 1 alone (info), of a whole conversion, and of worker 0's part of a `--jobs N`
 * conversion (N − 1 workers convert, the main thread writes: src/node/split.ts; worker 0 emits every (N − 1)-th
 * segment and decodes the others without writing them): whole / part is the speed-up the conversion itself allows
 * on free cores, before process start, reading and writing (1 for N = 2, whose gain is the writing moved off the
 * converting thread). Median of `repeat`, after one warm-up.
 */
async function calibrate(): Promise<{ index: number; full: number; part: number; ceiling: number }> {
  const { createEngine } = await import("../src/node/wasm.js");
  const { fileSource } = await import("../src/node/file_source.js");
  const { splitSegments, convertingWorkers } = await import("../src/node/split.js");
  const engine = await createEngine();
  const workers = convertingWorkers(jobs);
  const segments = splitSegments(bytesIn, workers);
  const cpu = async (fn: () => Promise<unknown>) => {
    const a = process.cpuUsage();
    await fn();
    const d = process.cpuUsage(a);
    return (d.user + d.system) / 1e6;
  };
  const once = async (what: "index" | "full" | "part") => {
    const src = fileSource(source);
    try {
      return await cpu(() => what === "index" ? engine.info(src) : engine.convert(src, () => {}, what === "full" ? {} : {
        split: { worker: 0, workers, segments },
      }));
    } finally {
      src.close();
    }
  };
  const med = async (what: "index" | "full" | "part") => {
    await once(what);
    const s: number[] = [];
    for (let i = 0; i < repeat; i++) s.push(await once(what));
    return s.sort((a, b) => a - b)[s.length >> 1];
  };
  const index = await med("index"), full = await med("full");
  // One converting worker converts the whole file: its part is the whole conversion.
  const part = workers > 1 ? await med("part") : full;
  return { index, full, part, ceiling: full / part };
}

try {
  const cal = await calibrate();
  console.log(`in-process CPU: pass 1 ${cal.index.toFixed(3)} s, whole conversion ${cal.full.toFixed(3)} s` + (jobs > 2
    ? `, worker 0's part (of ${jobs - 1} converting) ${cal.part.toFixed(3)} s: the conversion alone allows ×${cal.ceiling.toFixed(2)}`
    : jobs === 2 ? "; one worker converts, the main thread writes: the gain is the writing moved off the converting thread" : ""));
  run(1, true);
  run(jobs, true);
  const same = sha(join(scratch, `out-1${ext}`)) === sha(join(scratch, `out-${jobs}${ext}`));
  if (!same) throw new Error(`--jobs ${jobs} and --jobs 1 wrote different bytes`);
  const runs: Run[] = [];
  for (let i = 0; i < repeat; i++) {
    for (const n of [1, jobs]) {
      const r = run(n);
      runs.push(r);
      console.error(`jobs ${n}: ${r.seconds.toFixed(2)} s wall, ${r.cpu.toFixed(2)} s CPU (${r.workers} worker${r.workers > 1 ? "s" : ""}` +
        `${r.writer ? " converting, the main thread writing" : ""})`);
    }
  }
  const median = (n: number, k: "seconds" | "cpu") => {
    const s = runs.filter((r) => r.jobs === n).map((r) => r[k]).sort((a, b) => a - b);
    return s[s.length >> 1];
  };
  const w1 = median(1, "seconds"), wn = median(jobs, "seconds");
  const c1 = median(1, "cpu"), cn = median(jobs, "cpu");
  const events = runs[0].events;
  console.log(`| --jobs | wall s | CPU s | events/s | MB/s in |`);
  console.log(`|---:|---:|---:|---:|---:|`);
  for (const [n, w, c] of [[1, w1, c1], [jobs, wn, cn]]) {
    console.log(`| ${n} | ${w.toFixed(2)} | ${c.toFixed(2)} | ${(events / w / 1e6).toFixed(2)}M | ${(bytesIn / 1e6 / w).toFixed(0)} |`);
  }
  console.log(`speed-up ×${(w1 / wn).toFixed(2)} wall (CPU ×${(cn / c1).toFixed(2)}); outputs identical (SHA-256); ${cpus().length} CPUs`);
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(`bench/results/jobs-${date}-${values.records}.json`, JSON.stringify({
    date, records, bytesIn, events, jobs, gzip: values.gzip, repeat, cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version,
    calibration: cal, runs, medianWall: { 1: w1, [jobs]: wn }, medianCpu: { 1: c1, [jobs]: cn }, speedup: w1 / wn,
  }, null, 2));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
