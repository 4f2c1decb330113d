/**
 * The CLI's batch commands (src/cli.ts parses the arguments): `convert` of many files, `merge`, `stats`. Each runs
 * on one {@link WorkerPool} and returns the exit code: 0 when everything worked; when files failed, the failed
 * file's own code (docs/errors.md) for a single input, else 1. Progress is drawn on standard error when it is a
 * TTY (and --json is not given); `--json` prints one machine-readable summary on standard output.
 */
import { RawtraceError } from "../core/codes.js";
import { convertBatch, type FileResult } from "./batch.js";
import { merge } from "./merge.js";
import { formatStats, statsFiles, type StatsFileResult } from "./stats.js";
import { WorkerPool, defaultJobs } from "./pool.js";
import { expandInputs } from "./inputs.js";
import { ProgressView, fmtMB } from "./progress.js";

/** Parsed options the batch commands read. */
export interface CliValues {
  output?: string;
  json?: boolean;
  "all-api"?: boolean;
  format?: string;
  force?: boolean;
  jobs?: string;
  "out-dir"?: string;
  gzip?: boolean;
  top?: string;
}

/** Exit codes by error name (docs/errors.md). */
export const EXIT: Record<string, number> = { USAGE: 2, EXISTS: 3, IO: 4, NO_CORE: 5, INTERNAL: 70 };

function format(v: CliValues): "chrome" | "xspace" {
  const f = v.format ?? "chrome";
  if (f !== "chrome" && f !== "xspace") throw new RawtraceError("USAGE", `--format must be chrome or xspace, not '${f}'`);
  return f;
}

function jobs(v: CliValues, inputs: number): number {
  if (v.jobs === undefined) return Math.max(1, Math.min(defaultJobs(), inputs));
  const n = Number(v.jobs);
  if (!Number.isInteger(n) || n < 1) throw new RawtraceError("USAGE", `--jobs must be a whole number ≥ 1, not '${v.jobs}'`);
  return n;
}

/** Expands the command's inputs; globs and directories matching nothing become failures of their own. */
function inputs(args: string[], what: string): { files: string[]; missing: Array<FileResult & { error: { code: string; message: string } }> } {
  if (args.length === 0) throw new RawtraceError("USAGE", `${what} needs .rawtrace files, directories or globs`);
  const { files, unmatched } = expandInputs(args);
  const missing = unmatched.map((p) => ({
    input: p, ok: false, events: 0, bytesIn: 0, bytesOut: 0, seconds: 0, warnings: [],
    error: { code: "IO", message: `${p}: no .rawtrace file matches` },
  }));
  if (files.length === 0) throw new RawtraceError("IO", missing.map((m) => m.error.message).join("; "));
  return { files, missing };
}

function exitCode(results: Array<{ ok: boolean; error?: { code: string } }>): number {
  const bad = results.filter((r) => !r.ok);
  if (bad.length === 0) return 0;
  return results.length === 1 ? EXIT[bad[0].error!.code] ?? 1 : 1;
}

const replacer = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);

function withView<T>(v: CliValues, run: (view: ProgressView | null) => Promise<T>): Promise<T> {
  const view = process.stderr.isTTY && !v.json ? new ProgressView(process.stderr) : null;
  return run(view).finally(() => view?.done());
}

/** `--json` and `-o -` both want standard output. */
function stdoutOnce(v: CliValues): void {
  if (v.json && (v.output === "-" || v.output === "/dev/stdout")) {
    throw new RawtraceError("USAGE", `--json prints its summary on standard output, where -o ${v.output} writes the trace: give -o a file`);
  }
}

/** `rawtrace convert <files, directories, globs…>`. */
export async function runConvert(args: string[], v: CliValues): Promise<number> {
  const fmt = format(v);
  stdoutOnce(v);
  const { files, missing } = inputs(args, "convert");
  const pool = new WorkerPool({ jobs: jobs(v, files.length) });
  const say = (line: string, view: ProgressView | null) => (view ? view.log(line) : v.json ? undefined : console.error(line));
  const r = await withView(v, (view) =>
    convertBatch(files, {
      pool, format: fmt, gzip: v.gzip, outDir: v["out-dir"], output: v.output, force: v.force, allApi: v["all-api"],
      onProgress: view ? (p) => view.update(p) : undefined,
      onFile: (f) => {
        if (!f.ok) return say(`rawtrace: ${f.error!.message}`, view);
        const mbs = f.seconds > 0 ? f.bytesIn / 1e6 / f.seconds : 0;
        say(`${f.input} → ${f.output}: ${f.events} events, ${fmtMB(f.bytesIn)} in, ${fmtMB(f.bytesOut)} ${fmt === "xspace" ? "XSpace" : "JSON"} out, ` +
          `${f.seconds.toFixed(2)} s (${mbs.toFixed(0)} MB/s)`, view);
        for (const w of f.warnings) say(`  warning ${w.code} ×${w.count} (offset ${w.offset}): ${w.message}`, view);
      },
    }).finally(() => pool.close()));
  const all = [...r.files, ...missing];
  const failed = all.filter((f) => !f.ok);
  if (v.json) {
    console.log(JSON.stringify({
      command: "convert", format: fmt, jobs: r.jobs, ok: r.ok, failed: failed.length, events: r.events,
      bytesIn: r.bytesIn, bytesOut: r.bytesOut, seconds: r.seconds, files: all,
    }, replacer, 2));
  } else if (all.length > 1) {
    console.error(`converted ${r.ok} of ${all.length} files with ${r.jobs} worker${r.jobs > 1 ? "s" : ""}: ` +
      `${fmtMB(r.bytesIn)} in, ${fmtMB(r.bytesOut)} out, ${r.seconds.toFixed(2)} s (${(r.bytesIn / 1e6 / r.seconds).toFixed(0)} MB/s)`);
    if (failed.length) {
      console.error(`${failed.length} failed:`);
      for (const f of failed) console.error(`  ${f.input}: ${f.error!.code}: ${f.error!.message}`);
    }
  }
  return exitCode(all);
}

/** `rawtrace merge <rank files…> -o job.json`. */
export async function runMerge(args: string[], v: CliValues): Promise<number> {
  const fmt = format(v);
  stdoutOnce(v);
  const { files, missing } = inputs(args, "merge");
  if (missing.length) throw new RawtraceError("IO", missing.map((m) => m.error.message).join("; "));
  const output = v.output ?? (fmt === "xspace" ? "merged_xprof" : v.gzip ? "merged.json.gz" : "merged.json");
  const pool = new WorkerPool({ jobs: jobs(v, files.length) });
  const r = await withView(v, (view) =>
    merge(files, output, {
      pool, format: fmt, gzip: v.gzip, force: v.force, allApi: v["all-api"],
      onProgress: view ? (p) => view.update(p) : undefined,
    }).finally(() => pool.close()));
  if (v.json) {
    console.log(JSON.stringify({ command: "merge", format: fmt, ...r }, replacer, 2));
    return 0;
  }
  const out: string[] = [];
  out.push(`merged ${r.ranks.length} rank${r.ranks.length > 1 ? "s" : ""} (world size ${r.plan.worldSize}) → ${r.output}: ` +
    `${r.events} events, ${fmtMB(r.bytesIn)} in, ${fmtMB(r.bytesOut)} out, ${r.seconds.toFixed(2)} s`);
  for (const [k, x] of r.ranks.entries()) {
    const c = r.clock.ranks[k];
    out.push(`  ${r.plan.ranks[k].label}: ${x.file}${x.output && x.output !== r.output ? ` → ${x.output}` : ""}, ${x.events} events, ` +
      (fmt === "chrome" ? `pids ${x.slot * 1000}–${x.slot * 1000 + 999}, ` : "") +
      `start ${c.startOffsetNs >= 0 ? "+" : ""}${(c.startOffsetNs / 1e6).toFixed(3)} ms` +
      (c.anchorOffsetNs !== null ? `, clock offset ${(c.anchorOffsetNs / 1e6).toFixed(3)} ms` : "") +
      (c.driftPpm !== null ? `, drift ${c.driftPpm.toFixed(2)} ppm` : ""));
    for (const w of x.warnings) out.push(`    warning ${w.code} ×${w.count} (offset ${w.offset}): ${w.message}`);
  }
  out.push(`  residual skew (spread of collector starts): ${(r.clock.residualSkewNs / 1e6).toFixed(3)} ms`);
  console.error(out.join("\n"));
  return 0;
}

/** `rawtrace stats <files…>`. */
export async function runStats(args: string[], v: CliValues): Promise<number> {
  const { files, missing } = inputs(args, "stats");
  const top = v.top === undefined ? 10 : Number(v.top);
  if (!Number.isInteger(top) || top < 0) throw new RawtraceError("USAGE", `--top must be a whole number, not '${v.top}'`);
  const pool = new WorkerPool({ jobs: jobs(v, files.length) });
  const results = await statsFiles(files, { pool, allApi: v["all-api"] }).finally(() => pool.close());
  const all: StatsFileResult[] = [...results, ...missing.map((m) => ({ input: m.input, ok: false, seconds: 0, error: m.error }))];
  if (v.json) {
    console.log(JSON.stringify({ command: "stats", files: all.map(({ info: _info, ...r }) => r) }, replacer, 2));
  } else {
    const blocks = results.filter((r) => r.ok).map((r) => formatStats(r.input, r.stats!, { top }));
    if (blocks.length) console.log(blocks.join("\n\n"));
    for (const r of all) if (!r.ok) console.error(`rawtrace: ${r.error!.message}`);
  }
  return exitCode(all);
}
