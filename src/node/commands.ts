/**
 * The CLI's commands (src/cli.ts parses the arguments): `convert` of many files, `merge`, `stats`, `info`. The batch
 * commands run on one {@link WorkerPool}; each returns the exit code: 0 when everything worked; when files failed,
 * the failed file's own code (docs/errors.md) for a single input, else 1; else with `--strict`, 6 (LOSS) when any
 * input lost data. Progress is drawn on standard error when it is a TTY (and --json is not given); `--json` prints
 * one machine-readable document on standard output. Damage (skipped byte ranges) and clock skew are always reported
 * on standard error, --json or not.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { constants as zlibConstants, gunzipSync } from "node:zlib";
import { LOSS_WARNINGS, RawtraceError, type Warning } from "../core/codes.js";
import { damageLines, int, lossLines, plural, warningLines } from "../core/loss_lines.js";
import { stepPattern, vendorName, type AnalysisOptions, type FileInfo } from "../core/engine.js";
import { skewMessages } from "../core/merge.js";
import { gzipStart, repairGzipMagic } from "../core/gzip_magic.js";
import { infoFile } from "./convert.js";
import { convertBatch, sizeOf, type FileResult } from "./batch.js";
import { splitNote } from "./split.js";
import { merge } from "./merge.js";
import { formatStats, statsCsv, statsJson, statsFiles, type StatsFileResult } from "./stats.js";
import { formatSteps, stepStats, stepsCsv, timelineStats } from "./step_report.js";
import { formatGaps, gapsCsv } from "./gap_report.js";
import { DEFAULT_MIN_GAP_NS, type DeviceGaps } from "../core/gaps.js";
import { diffStats, formatDiff } from "./diff.js";
import type { StepStats } from "../core/step_stats.js";
import { IN_THREAD_MAX_BYTES, MAX_JOBS, WorkerPool, convertsInThread, poolJobs } from "./pool.js";
import { expandInputs } from "./inputs.js";
import { givenNames, isGzipFile, spoolInputs } from "./file_source.js";
import { gzipByName } from "./block_gzip.js";
import { isStdout } from "./output.js";
import { checkOutputNames, parseShard, readList, selectShard, type Shard } from "./shard.js";
import { ProgressView, fmtCount, fmtMB } from "./progress.js";
import { readHeader, type ReadHeader } from "../format/header.js";

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
  "gzip-level"?: string;
  top?: string;
  csv?: boolean;
  strict?: boolean;
  "max-skew"?: string;
  "gpu-annotations"?: string;
  steps?: string;
  gaps?: boolean;
  "gap-min"?: string;
  shard?: string;
  list?: string[];
}

/** --gpu-annotations on|off and --steps REGEX (validated here: a bad value is a usage error before any work). */
function analysis(v: CliValues): AnalysisOptions {
  const g = v["gpu-annotations"];
  if (g !== undefined && g !== "on" && g !== "off") {
    throw new RawtraceError("USAGE", `--gpu-annotations must be on or off, not '${g}'`);
  }
  if (v.steps !== undefined) stepPattern(v.steps);
  return { gpuAnnotations: g !== "off", steps: v.steps };
}

/** Exit codes by error name (docs/errors.md). */
export const EXIT: Record<string, number> = {
  USAGE: 2, EXISTS: 3, IO: 4, NO_CORE: 5, LOSS: 6, CLOCK_SKEW: 7, INTERNAL: 70, PIPE_CLOSED: 141,
};

/** True when any of `warnings` means trace data was lost (what `--strict` fails on). */
export function lostData(warnings: Warning[]): boolean {
  return warnings.some((w) => LOSS_WARNINGS.has(w.code));
}

/**
 * The one line an error prints on standard error: `rawtrace: <message>`, and for a usage error (exit 2)
 * `rawtrace: usage: <message>` (docs/errors.md), whether it ends the command or fails one input of several.
 */
export function errorLine(e: { code?: string; name?: string; message: string }): string {
  return `rawtrace: ${(e.code ?? e.name) === "USAGE" ? "usage: " : ""}${e.message}`;
}

/** XSpace output names, by any case (`X.XPLANE.PB` too; gzip by name: gzipByName). */
const XPLANE_NAME = /\.xplane\.pb$/i;

/** " (83.1 kB gzipped)" for a gzipped output file (the JSON's size is printed beside it), else "". */
function gzNote(output: string | undefined): string {
  return gzipByName(output) ? ` (${fmtMB(sizeOf(output!))} gzipped)` : "";
}

/**
 * What `stats` and `diff` say on standard error about a file they read: its damage and warnings as the viewer says
 * them ({@link damageLines}), or only its damage when `warnings` is false (`stats --json` keeps them in its document).
 */
function readReport(file: string, info: FileInfo, warnings = true): string[] {
  return (warnings ? damageLines : lossLines)(file, info.warnings, info.loss, info.bytes);
}

/**
 * The output format: `--format`, else XSpace for an `-o` named *.xplane.pb (convert), else Chrome JSON. A .xplane.pb
 * name with `--format chrome` is refused, and so is any for merge, whose XSpace is one file per host in a folder.
 */
function format(v: CliValues, cmd: "convert" | "batch" | "merge"): "chrome" | "xspace" {
  const f = v.format;
  if (f !== undefined && f !== "chrome" && f !== "xspace") throw new RawtraceError("USAGE", `--format must be chrome or xspace, not '${f}'`);
  const o = v.output;
  if (o !== undefined && XPLANE_NAME.test(o)) {
    if (cmd === "merge") {
      throw new RawtraceError("USAGE", `-o ${o}: merge writes XSpace as one <host>.xplane.pb per host under a log directory, not one .xplane.pb file: give --format xspace -o DIR (or -o NAME.json for one Chrome trace)`);
    }
    if (f === "chrome") throw new RawtraceError("USAGE", `--format chrome with -o ${o}: a .xplane.pb file is XSpace (leave out --format chrome, or name the output .json)`);
    return "xspace";
  }
  return f ?? "chrome";
}

/** Gzip the Chrome JSON: `--gzip`, or an output name ending in .gz (any case). XSpace: only what --gzip says (refused). */
function gzipOutput(v: CliValues, fmt: "chrome" | "xspace", output = v.output): boolean {
  return !!v.gzip || (fmt === "chrome" && gzipByName(output));
}

/**
 * `--gzip-level N`: a whole number from 0 (rawtrace's own encoder) to 9, only with gzip output (`--gzip` or an
 * output ending in .gz); undefined when not given (the default level of src/node/block_gzip.ts).
 */
function gzipLevel(v: CliValues, fmt: "chrome" | "xspace"): number | undefined {
  const s = v["gzip-level"];
  if (s === undefined) return undefined;
  const n = numberOpt(s, false);
  if (n === null || n > 9) {
    throw new RawtraceError("USAGE", `--gzip-level must be a whole number from 0 (fastest) to 9 (smallest), not '${s}'`);
  }
  if (fmt === "xspace") throw new RawtraceError("USAGE", "--gzip-level: XSpace output is never gzipped (XProf reads .xplane.pb)");
  if (!gzipOutput(v, fmt)) throw new RawtraceError("USAGE", "--gzip-level needs gzip output: --gzip or an output ending in .gz");
  return n;
}

/**
 * A number option's value written in decimal digits (with `fraction`, also a decimal fraction: "2.5", ".5"), else
 * null. Number() would take 0x10, 1e3, ' 4', '' (0) and 1.0 for a whole number: an option takes what it documents.
 */
function numberOpt(s: string, fraction: boolean): number | null {
  return (fraction ? /^(\d+(\.\d*)?|\.\d+)$/ : /^\d+$/).test(s) ? Number(s) : null;
}

/**
 * Worker threads: `--jobs`, else one per core and at most one per input — or two for one Chrome JSON input on two
 * cores or more (one converts, the other writes: src/node/split.ts).
 */
function jobs(v: CliValues, inputs: number, fmt: "chrome" | "xspace" = "xspace"): number {
  if (v.jobs === undefined) return poolJobs(inputs, undefined, fmt === "chrome");
  const n = numberOpt(v.jobs, false);
  // At most MAX_JOBS: each worker slot is made up front.
  if (n === null || n < 1 || n > MAX_JOBS) {
    throw new RawtraceError("USAGE", `--jobs must be a whole number from 1 to ${MAX_JOBS}, not '${v.jobs}'`);
  }
  return n;
}

/**
 * The pool of a command over `files`: one regular file of at most {@link IN_THREAD_MAX_BYTES} (a gzipped one —
 * by its magic bytes, whatever its name — counted at 8× its size, about what it inflates to), or of any size when
 * the process may use one CPU only ({@link convertsInThread}), with no `--jobs` above 1, is converted on this
 * thread, which saves starting a worker; anything else runs on `jobs` workers.
 */
function commandPool(v: CliValues, files: string[], fmt?: "chrome" | "xspace"): WorkerPool {
  const n = jobs(v, files.length, fmt);
  if (files.length === 1 && (v.jobs === undefined || n === 1)) {
    // Not a regular file, or one that cannot be looked at: a worker (which reports it as for any other input).
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(files[0]);
    } catch {
      st = undefined;
    }
    if (st?.isFile() && convertsInThread(st.size * (isGzipFile(files[0]) ? 8 : 1))) return new WorkerPool({ inThread: true });
  }
  return new WorkerPool({ jobs: n });
}

/** Most `x.rawtrace.gz` left out beside their `x.rawtrace` that are named one by one on standard error. */
const SKIPPED_NAMED = 10;

/**
 * Expands the command's inputs; globs and directories matching nothing become failures of their own. When nothing
 * at all matches it is an IO error (exit 4), except with `allowNone` (batch: they are failed inputs of shard 0, which
 * exits 1 as for any failed input, with or without --shard; the other shards hold no input and exit 0,
 * docs/cluster.md).
 */
function inputs(args: string[], what: string, allowNone = false): { files: string[]; missing: Array<FileResult & { error: { code: string; message: string } }> } {
  if (args.length === 0) throw new RawtraceError("USAGE", `${what} needs .rawtrace files, directories or globs`);
  const { files, unmatched, repeated, aliases, skipped } = expandInputs(args);
  const alias = new Set(aliases.map((a) => a.path));
  for (const p of repeated) if (!alias.has(p)) console.error(`rawtrace: ${p} is named more than once; ${what} reads it once`);
  for (const a of aliases) console.error(`rawtrace: ${a.path} is the same file as ${a.of}; ${what} reads it once`);
  // A folder's x.rawtrace.gz beside its x.rawtrace: said, so that a dump missing from the outputs is accounted for.
  for (const p of skipped.slice(0, SKIPPED_NAMED)) console.error(`rawtrace: ${p} left out: ${p.slice(0, -3)} beside it is the same dump`);
  if (skipped.length > SKIPPED_NAMED) console.error(`rawtrace: … and ${skipped.length - SKIPPED_NAMED} more .rawtrace.gz left out beside their .rawtrace`);
  const missing = unmatched.map((p) => ({
    input: p, ok: false, events: 0, bytesIn: 0, bytesOut: 0, seconds: 0, warnings: [],
    error: { code: "IO", message: `${p}: no .rawtrace file matches` },
  }));
  if (files.length === 0 && !allowNone) throw new RawtraceError("IO", missing.map((m) => m.error.message).join("; "));
  return { files, missing };
}

function exitCode(results: Array<{ ok: boolean; error?: { code: string } }>, strict = false, lost = false): number {
  const bad = results.filter((r) => !r.ok);
  if (bad.length === 0) return strict && lost ? EXIT.LOSS : 0;
  return results.length === 1 ? EXIT[bad[0].error!.code] ?? 1 : 1;
}

const replacer = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);

function withView<T>(v: CliValues, run: (view: ProgressView | null) => Promise<T>): Promise<T> {
  const view = process.stderr.isTTY && !v.json ? new ProgressView(process.stderr) : null;
  return run(view).finally(() => view?.done());
}

/** `--json` and `-o -` (or `/dev/fd/1`, any path to standard output's file) both want standard output. */
function stdoutOnce(v: CliValues): void {
  if (v.json && v.output !== undefined && isStdout(v.output)) {
    throw new RawtraceError("USAGE", `--json prints its summary on standard output, where -o ${v.output} writes the trace: give -o a file`);
  }
}

/**
 * Options that contradict each other or the output's name: refused before any work rather than one of them
 * silently winning (`-o a.json --out-dir d` wrote ./a.json and made an empty d/; `--gzip -o a.json` wrote gzip
 * into a .json; `-F xspace -o a.json` made a folder named a.json).
 */
function checkOutputArgs(v: CliValues, fmt: "chrome" | "xspace", cmd: "convert" | "batch" | "merge"): void {
  const o = v.output;
  // `-` is standard output everywhere else: not a folder to make (it made one named `-`).
  if (v["out-dir"] === "-") {
    throw new RawtraceError("USAGE", "--out-dir -: --out-dir names a folder, not standard output (-o - writes one input's trace there)");
  }
  if (o !== undefined && v["out-dir"] !== undefined) {
    throw new RawtraceError("USAGE", `-o ${o} and --out-dir ${v["out-dir"]}: give one (-o names one output, --out-dir a folder for many)`);
  }
  if (o === undefined) return;
  if (fmt === "chrome" && v.gzip && /\.json$/i.test(o)) {
    throw new RawtraceError("USAGE", `--gzip with -o ${o}: gzip output is named .json.gz (or leave out --gzip)`);
  }
  if (fmt === "xspace" && /\.json(\.gz)?$/i.test(o)) {
    throw new RawtraceError("USAGE", cmd === "merge"
      ? `--format xspace with -o ${o}: merge writes XSpace to a log directory (one <host>.xplane.pb per host), not a .json name: give -o a directory`
      : `--format xspace with -o ${o}: XSpace goes to a log directory or a .xplane.pb file, not a .json name`);
  }
  if (fmt === "xspace" && gzipByName(o)) {
    throw new RawtraceError("USAGE", `--format xspace with -o ${o}: XSpace is never gzipped (XProf reads .xplane.pb)`);
  }
}

/** `rawtrace convert <files, directories, globs…>`. */
export async function runConvert(args: string[], v: CliValues): Promise<number> {
  const fmt = format(v, "convert");
  stdoutOnce(v);
  checkOutputArgs(v, fmt, "convert");
  const an = analysis(v);
  const { files, missing } = inputs(args, "convert");
  return convertFiles(files, missing, v, fmt, an);
}

/**
 * Standard input holds a --list or an input (`-`), not both: read as the list first, the input `-` then found it
 * empty ("file ends before the 16-byte preamble (0 bytes)"). A usage error naming `what` the `-` would be.
 */
function stdinOnce(args: string[], v: CliValues, what: string): void {
  const stdin = (a: string) => a === "-" || a === "/dev/stdin";
  if ((v.list ?? []).some(stdin) && args.some(stdin)) {
    throw new RawtraceError("USAGE", `standard input cannot be both ${what} (-) and the --list: give the list as a file`);
  }
}

/**
 * `rawtrace batch <files, directories, globs…> [--list FILE…] [--shard I/N]`: convert of many inputs, of which this
 * process takes shard I of N (src/node/shard.ts, docs/cluster.md). Every shard checks the whole list (usage, output
 * names) before any work; globs and directories that match nothing are reported by shard 0 only, so that the
 * shards together report every input exactly once.
 */
export async function runBatch(args: string[], v: CliValues): Promise<number> {
  const fmt = format(v, "batch");
  const an = analysis(v);
  checkOutputArgs(v, fmt, "batch");
  const shard: Shard = v.shard === undefined ? { index: 0, count: 1 } : parseShard(v.shard);
  jobs(v, 1); // a bad --jobs is a usage error in every shard, its own inputs or none
  stdinOnce(args, v, "an input");
  const lists = (v.list ?? []).map((l) => ({ l, names: readList(l) }));
  const named = [...args, ...lists.flatMap((x) => x.names)];
  if (named.length === 0 && lists.length === 0) throw new RawtraceError("USAGE", "batch needs .rawtrace files, directories, globs or --list FILE");
  // Nothing matching at all is not special: each pattern is a failed input, and batch exits 1 for those. So is a
  // list that names nothing (a `find > ranks.txt` that found no dump): shard 0 says it (before: a usage error in every
  // shard, which did not name the list).
  const { files: all, missing } = named.length ? inputs(named, "batch", true) : { files: [], missing: [] };
  for (const { l, names } of lists) {
    if (names.length > 0) continue;
    missing.push({
      input: `--list ${l}`, ok: false, events: 0, bytesIn: 0, bytesOut: 0, seconds: 0, warnings: [],
      error: { code: "IO", message: `--list ${l}: the list names no input (empty, or only blank lines and # comments)` },
    });
  }
  checkOutputNames(all, v["out-dir"]);
  const mine = selectShard(all, shard);
  return convertFiles(mine, shard.index === 0 ? missing : [], v, fmt, an, { ...shard, total: all.length });
}

async function convertFiles(
  files: string[], missing: FileResult[], v: CliValues, fmt: "chrome" | "xspace", an: AnalysisOptions,
  shard?: Shard & { total: number },
): Promise<number> {
  // A batch without --shard is shard 0 of 1: it says nothing of shards.
  const sharded = shard !== undefined && shard.count > 1;
  const tag = sharded ? `shard ${shard.index}/${shard.count}: ` : "";
  const level = gzipLevel(v, fmt);
  if (files.length === 0 && missing.length === 0) {
    if (v.json) {
      console.log(JSON.stringify({
        command: "batch", format: fmt, shard, jobs: 0, ok: 0, failed: 0, events: 0, bytesIn: 0, bytesOut: 0, seconds: 0, files: [],
      }, replacer, 2));
    } else console.error(`${tag}no inputs of ${shard?.total ?? 0} fall in this shard`);
    return 0;
  }
  const pool = commandPool(v, files, fmt);
  const say = (line: string, view: ProgressView | null) => (view ? view.log(line) : v.json ? undefined : console.error(line));
  // Inputs that do not exist are said first, as the failures of the conversion are said when they happen; the
  // summary then names every failure once more, by name and code only.
  for (const m of missing) say(errorLine(m.error!), null);
  const r = await withView(v, (view) =>
    convertBatch(files, {
      pool, format: fmt, gzip: gzipOutput(v, fmt), gzipLevel: level, outDir: v["out-dir"], output: v.output, force: v.force, allApi: v["all-api"],
      analysis: an,
      onProgress: view ? (p) => view.update(p) : undefined,
      onFile: (f) => {
        if (!f.ok) return f.error!.code === "PIPE_CLOSED" ? undefined : say(errorLine(f.error!), view);
        const mbs = f.seconds > 0 ? f.bytesIn / 1e6 / f.seconds : 0;
        const gz = gzNote(f.output);
        say(`${f.input} → ${f.output}: ${fmtCount(f.events)} events, ${fmtMB(f.bytesIn)} in, ${fmtMB(f.bytesOut)} ${fmt === "xspace" ? "XSpace" : "JSON"}${gz} out, ` +
          `${f.seconds.toFixed(2)} s (${mbs.toFixed(0)} MB/s)${splitNote(f.workers, fmt, files.length === 1 ? pool.size : 1, f.writer)}`, view);
        for (const line of warningLines(f.warnings)) say(line, view);
        for (const line of lossLines(f.input, f.warnings, f.loss, f.bytesIn)) view ? view.log(line) : console.error(line);
      },
    }).finally(() => pool.close()));
  const all = [...r.files, ...missing];
  const failed = all.filter((f) => !f.ok);
  if (v.json) {
    console.log(JSON.stringify({
      command: shard ? "batch" : "convert", format: fmt, ...(shard ? { shard } : {}), jobs: r.jobs, ok: r.ok, failed: failed.length, events: r.events,
      bytesIn: r.bytesIn, bytesOut: r.bytesOut, seconds: r.seconds, files: all,
    }, replacer, 2));
  } else if (all.length > 1 || shard) {
    console.error(`${tag}converted ${r.ok} of ${all.length} files${sharded ? ` (of ${shard.total} in all)` : ""} with ${r.jobs} worker${r.jobs > 1 ? "s" : ""}: ` +
      `${fmtMB(r.bytesIn)} in, ${fmtMB(r.bytesOut)} out, ${r.seconds.toFixed(2)} s (${(r.bytesIn / 1e6 / r.seconds).toFixed(0)} MB/s)`);
    for (const line of failureSummary(failed)) console.error(line);
  }
  // batch: 1 when any input failed, however many this shard happened to hold (convert: one input, its own code).
  if (shard && failed.length) return 1;
  return exitCode(all, v.strict, all.some((f) => f.ok && lostData(f.warnings)));
}

/** Most failures the summary names one by one; `--json` lists them all. */
const SUMMARY_FAILURES = 20;

/**
 * The summary's lines for the failed inputs: each was already said in full when it failed, so here only its name and
 * error code (docs/errors.md), at most {@link SUMMARY_FAILURES} of them.
 */
export function failureSummary(failed: Array<{ input: string; error?: { code: string } }>): string[] {
  if (failed.length === 0) return [];
  const lines = [`${failed.length} failed:`];
  for (const f of failed.slice(0, SUMMARY_FAILURES)) lines.push(`  ${f.input} (${f.error!.code})`);
  if (failed.length > SUMMARY_FAILURES) lines.push(`  … and ${failed.length - SUMMARY_FAILURES} more (--json lists every failure)`);
  return lines;
}

function maxSkew(v: CliValues): number | undefined {
  if (v["max-skew"] === undefined) return undefined;
  const ms = numberOpt(v["max-skew"], true);
  if (ms === null || !Number.isFinite(ms)) {
    throw new RawtraceError("USAGE", `--max-skew must be a decimal number of milliseconds ≥ 0 (such as 5 or 0.5), not '${v["max-skew"]}'`);
  }
  return ms;
}

/** `rawtrace merge <rank files…> -o job.json`. */
export async function runMerge(args: string[], v: CliValues): Promise<number> {
  const fmt = format(v, "merge");
  stdoutOnce(v);
  checkOutputArgs(v, fmt, "merge");
  const an = analysis(v);
  // --list FILE: the ranks one a line, read as batch reads it (docs/cluster.md has shards and the merge share one list).
  stdinOnce(args, v, "a rank");
  const { files, missing } = inputs([...args, ...(v.list ?? []).flatMap(readList)], "merge");
  if (missing.length) throw new RawtraceError("IO", missing.map((m) => m.error.message).join("; "));
  const output = v.output ?? (fmt === "xspace" ? "merged_xprof" : v.gzip ? "merged.json.gz" : "merged.json");
  const maxSkewMs = maxSkew(v);
  const level = gzipLevel(v, fmt);
  const pool = new WorkerPool({ jobs: jobs(v, files.length) });
  const r = await withView(v, (view) =>
    merge(files, output, {
      pool, format: fmt, gzip: gzipOutput(v, fmt, output), gzipLevel: level, force: v.force, allApi: v["all-api"], maxSkewMs, analysis: an,
      onProgress: view ? (p) => view.update(p) : undefined,
    }).finally(() => pool.close()));
  for (const m of skewMessages(r.clock)) console.error(`rawtrace: warning CLOCK_SKEW: ${m}`);
  for (const w of r.rankWarnings) console.error(`rawtrace: warning ${w.code}: ${w.message}`);
  for (const x of r.ranks) for (const line of lossLines(x.file, x.warnings, x.loss, x.bytesIn)) console.error(line);
  const code = v.strict && r.ranks.some((x) => lostData(x.warnings)) ? EXIT.LOSS : 0;
  if (v.json) {
    console.log(JSON.stringify({ command: "merge", format: fmt, ...r }, replacer, 2));
    return code;
  }
  const out: string[] = [];
  out.push(`merged ${r.ranks.length} rank${r.ranks.length > 1 ? "s" : ""} (world size ${r.plan.worldSize}) → ${r.output}: ` +
    `${fmtCount(r.events)} events, ${fmtMB(r.bytesIn)} in, ${fmtMB(r.bytesOut)}${gzNote(r.output)} out, ${r.seconds.toFixed(2)} s`);
  for (const [k, x] of r.ranks.entries()) {
    const c = r.clock.ranks[k];
    out.push(`  ${r.plan.ranks[k].label}: ${x.file}${x.output && x.output !== r.output ? ` → ${x.output}` : ""}, ${fmtCount(x.events)} events, ` +
      (fmt === "chrome" ? `pids ${x.slot * 1000}–${x.slot * 1000 + 999}, ` : "") +
      (c.startOffsetNs === null ? "start unknown (no time in the dump)"
        : `start ${c.startOffsetNs >= 0 ? "+" : ""}${(c.startOffsetNs / 1e6).toFixed(3)} ms`) +
      (c.anchorOffsetNs !== null ? `, clock offset ${(c.anchorOffsetNs / 1e6).toFixed(3)} ms` : "") +
      (c.driftPpm !== null ? `, drift ${c.driftPpm.toFixed(2)} ppm` : ""));
    out.push(...warningLines(x.warnings, "    "));
  }
  out.push(`  residual skew (spread of collector starts): ${(r.clock.residualSkewNs / 1e6).toFixed(3)} ms`);
  console.error(out.join("\n"));
  return code;
}

/** Writes `text` to stdout and waits until it is written (the CLI exits right after; a pipe takes it in pieces). */
function writeOut(text: string): Promise<void> {
  return new Promise<void>((done) => process.stdout.write(text, () => done()));
}

/** `--top N` (a whole number ≥ 0), or `dflt`. */
function topOpt(s: string | undefined, dflt: number): number {
  if (s === undefined) return dflt;
  const n = numberOpt(s, false);
  if (n === null) throw new RawtraceError("USAGE", `--top must be a whole number, not '${s}'`);
  return n;
}

/** `--gap-min US` (µs, default 10) in ns. */
function gapMinNs(v: string | undefined): number {
  if (v === undefined) return DEFAULT_MIN_GAP_NS;
  const n = numberOpt(v, true);
  if (n === null || !Number.isFinite(n)) throw new RawtraceError("USAGE", `--gap-min must be a decimal number of µs ≥ 0 (such as 10 or 2.5), not '${v}'`);
  return Math.round(n * 1000);
}

/** `rawtrace stats <files…>`. */
export async function runStats(args: string[], v: CliValues): Promise<number> {
  const { files, missing } = inputs(args, "stats");
  const top = topOpt(v.top, 10);
  if (v.json && v.csv) throw new RawtraceError("USAGE", "--json and --csv exclude each other");
  if (v.steps !== undefined && v.gaps && v.csv) throw new RawtraceError("USAGE", "--csv prints one table: --steps or --gaps, not both");
  if (v.steps !== undefined) stepPattern(v.steps);
  if (v["gap-min"] !== undefined && !v.gaps) throw new RawtraceError("USAGE", "--gap-min sets the shortest gap --gaps reports: add --gaps");
  const minGapNs = gapMinNs(v["gap-min"]);
  // --steps and --gaps read every file a second time (a timeline pass in this thread): standard input and FIFOs are
  // spooled once for both reads (src/node/file_source.ts spoolInputs), then named as given.
  const twice = v.steps !== undefined || v.gaps === true;
  // Spooled one by one: an input that cannot be (a stream that is not a dump) fails alone, as in the first read.
  const spoolFailed: StatsFileResult[] = [];
  const names: string[] = [];
  const paths: string[] = [];
  const releases: Array<() => void> = [];
  for (const f of files) {
    if (!twice) {
      names.push(f);
      paths.push(f);
      continue;
    }
    try {
      const s = spoolInputs([f]);
      releases.push(s.release);
      names.push(f);
      paths.push(s.paths[0]);
    } catch (e) {
      const err = e as RawtraceError;
      spoolFailed.push({ input: f, ok: false, seconds: 0, error: { code: err.code ?? err.name, message: err.message } });
    }
  }
  const spooled = { paths, release: () => releases.forEach((r) => r()) };
  const perFile = new Map<string, { steps?: StepStats[]; gaps?: DeviceGaps[] }>();
  let results: StatsFileResult[];
  try {
    const pool = commandPool(v, spooled.paths);
    // Named as given, in the errors too (never the temporary copy).
    results = (await statsFiles(spooled.paths, { pool, allApi: v["all-api"] }).finally(() => pool.close()))
      .map((r, i) => ({ ...r, input: names[i], error: r.error && { ...r.error, message: r.error.message.split(spooled.paths[i]).join(names[i]) } }));
    // Per-step figures (--steps) and GPU idle gaps (--gaps): one timeline pass per file that worked, in this thread.
    if (twice) {
      for (const [i, r] of results.entries()) {
        if (r.ok) perFile.set(r.input, await timelineStats(spooled.paths[i], { steps: v.steps, gaps: v.gaps, minGapNs, allApi: v["all-api"] }));
      }
    }
  } finally {
    spooled.release();
  }
  const all: StatsFileResult[] = [...results, ...spoolFailed, ...missing.map((m) => ({ input: m.input, ok: false, seconds: 0, error: m.error }))];
  const done = results.filter((r) => perFile.has(r.input)).map((r) => ({ input: r.input, ...perFile.get(r.input)! }));
  if (v.json) {
    const doc = statsJson(all) as { files: Array<{ input: string; steps?: StepStats[]; gaps?: unknown }> };
    for (const f of doc.files) {
      const t = perFile.get(f.input);
      if (t?.steps) f.steps = t.steps;
      if (t?.gaps) f.gaps = { minGapNs, devices: t.gaps };
    }
    await writeOut(JSON.stringify(doc, replacer, 2) + "\n");
  } else if (v.csv) {
    const text = v.gaps ? gapsCsv(done.map((f) => ({ input: f.input, gaps: f.gaps! })))
      : v.steps !== undefined ? stepsCsv(done.map((f) => ({ input: f.input, steps: f.steps! }))) : statsCsv(all);
    await writeOut(text);
  } else {
    const blocks = results.filter((r) => r.ok).map((r) => {
      const t = perFile.get(r.input);
      return formatStats(r.input, r.stats!, { top, vendor: r.info ? vendorLines(r.info) : undefined }) +
        (t?.steps ? `\n${formatSteps(t.steps)}` : "") + (t?.gaps ? `\n${formatGaps(t.gaps, minGapNs, top, r.stats!.startNs)}` : "");
    });
    if (blocks.length) console.log(blocks.join("\n\n"));
  }
  // Warnings are in the --json document; damage is said on standard error in every form.
  for (const r of all) {
    if (!r.ok) console.error(errorLine(r.error!));
    else if (r.info) for (const line of readReport(r.input, r.info, !v.json)) console.error(line);
  }
  if (!v.json && all.length > 1) for (const line of failureSummary(all.filter((r) => !r.ok))) console.error(line);
  return exitCode(all, v.strict, all.some((r) => r.ok && r.info && lostData(r.info.warnings)));
}

/** `rawtrace diff A B`: two files' statistics side by side, largest changes first. */
export async function runDiff(args: string[], v: CliValues): Promise<number> {
  if (args.length !== 2) throw new RawtraceError("USAGE", `diff takes two files, not ${args.length}`);
  const top = topOpt(v.top, 15);
  if (v.steps !== undefined) stepPattern(v.steps);
  // Each argument on its own (a file may be compared with itself): exactly one file each.
  const files = args.map((arg) => {
    const { files: f, missing } = inputs([arg], "diff");
    if (missing.length) throw new RawtraceError("IO", missing[0].error.message);
    if (f.length !== 1) throw new RawtraceError("USAGE", `diff compares two files: '${arg}' names ${f.length}`);
    return f[0];
  });
  // Standard input and FIFOs are read once, into a temporary that every read uses: the statistics, the steps, and
  // both sides of `diff - -` (read twice, the second read found them drained: a false "0 bytes", or a wait forever).
  const unique = [...new Set(files)];
  const spooled = spoolInputs(unique);
  const paths = files.map((f) => spooled.paths[unique.indexOf(f)]);
  let a: StatsFileResult;
  let b: StatsFileResult;
  let steps: [StepStats[], StepStats[]] | undefined;
  try {
    const pool = new WorkerPool({ jobs: jobs(v, 2) });
    [a, b] = (await statsFiles(paths, { pool, allApi: v["all-api"] }).finally(() => pool.close()))
      .map((r, i) => ({ ...r, input: files[i] }));
    for (const r of [a, b]) if (!r.ok) throw new RawtraceError(r.error!.code, r.error!.message);
    if (v.steps !== undefined) {
      const [sa, sb] = await Promise.all(paths.map((f) => stepStats(f, { steps: v.steps, allApi: v["all-api"] })));
      steps = [sa, sb];
    }
  } catch (e) {
    throw givenNames(e, paths, files); // the input as given, never the temporary copy
  } finally {
    spooled.release();
  }
  const rows = diffStats(a.stats!, b.stats!, steps?.[0], steps?.[1]);
  if (v.json) console.log(JSON.stringify({ command: "diff", a: files[0], b: files[1], rows }, replacer, 2));
  else console.log(formatDiff(files[0], files[1], rows, top));
  for (const r of [a, b]) if (r.info) for (const line of readReport(r.input, r.info)) console.error(line);
  return v.strict && [a, b].some((r) => r.info && lostData(r.info.warnings)) ? EXIT.LOSS : 0;
}

function fmtBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

/** The vendor line and one line per device of a file (`info`, `stats`), without indentation. */
export function vendorLines(i: FileInfo): string[] {
  const out = [i.vendor === "rocm"
    ? `vendor        rocm (rocprofiler-sdk ${i.vendorVersionText || "?"}, version ${i.vendorVersion})`
    : i.vendor === "xpu" ? `vendor        xpu (PTI ${i.vendorVersionText || "?"}, version ${i.vendorVersion})`
    : i.vendor === "hpu" ? `vendor        hpu (Synapse ${i.vendorVersionText || i.vendorVersion || "?"})`
    : `vendor        ${i.vendor} (tracing library ${i.vendorVersion}, runtime ${i.runtimeVersion || "?"}, driver ${i.driverVersion || "?"})`];
  for (const d of i.devices) {
    out.push(i.vendor === "xpu"
      ? `device ${d.id}      ${d.name || "?"} (${d.multiprocessors} Xe cores, ${fmtBytes(d.globalMemoryBytes)}${d.uuid && !/^0+$/.test(d.uuid) ? `, uuid ${d.uuid}` : ""})`
      : i.vendor === "hpu" ? `device ${d.id}      ${d.name} (${fmtBytes(d.globalMemoryBytes)} HBM)`
      : d.arch !== undefined
      ? `device ${d.id}      ${d.name} (${d.arch || "gfx?"}, ${d.multiprocessors} CUs, wavefront ${d.limits.warpSize}, ${fmtBytes(d.globalMemoryBytes)})`
      : `device ${d.id}      ${d.name} (cc ${d.computeCapability}, ${d.multiprocessors} SMs, ${fmtBytes(d.globalMemoryBytes)})`);
  }
  return out;
}

/** The text report of `rawtrace info` for one file. */
export function formatInfo(i: FileInfo): string {
  const out: string[] = [];
  out.push(`${i.file}: ${fmtBytes(i.bytes)}, ${i.complete ? "complete" : "NOT closed cleanly (no END chunk)"}`);
  const [vendor, ...devices] = vendorLines(i);
  out.push(`  ${vendor}`);
  out.push(...processLines(i, i.warnings.some((w) => w.code === "HEADER_DAMAGED")));
  if (i.firstNs > 0n) {
    const span = Number(i.lastNs - i.firstNs) / 1e6;
    out.push(`  time span     ${new Date(Number(i.firstNs / 1000000n)).toISOString()} + ${span.toFixed(3)} ms`);
  }
  out.push(`  chunks        ${i.chunks} (${plural(i.activityChunks, "activity buffer")}, ${fmtBytes(i.activityBytes)})`);
  out.push(`  dropped       ${i.droppedRecordsText} records` +
    (i.droppedBuffers > 0 ? `, and ${plural(i.droppedBuffers, "whole buffer")} of records` : ""));
  for (const d of devices) out.push(`  ${d}`);
  out.push("  records");
  for (const [k, n] of Object.entries(i.records).sort((a, b) => b[1] - a[1])) out.push(`    ${k.padEnd(24)} ${n}`);
  if (i.warnings.length) {
    out.push("  warnings");
    for (const w of i.warnings) out.push(`    ${w.code} ×${w.count} (first at offset ${w.offset}): ${w.message}`);
  }
  if (i.loss.rangesTotal > 0) {
    out.push(`  damaged       ${int(i.loss.bytes)} bytes skipped in ${plural(i.loss.rangesTotal, "range")}` +
      (i.loss.activityChunks ? ` (${plural(i.loss.activityChunks, "activity buffer")}, ${int(i.loss.activityBytes)} bytes of records)` : ""));
    for (const r of i.loss.ranges) {
      out.push(`    bytes ${r.from}–${r.to} (${r.seq !== undefined ? `chunk seq ${r.seq}: ` : ""}${r.code})`);
    }
    if (i.loss.rangesTotal > i.loss.ranges.length) out.push(`    … and ${i.loss.rangesTotal - i.loss.ranges.length} more`);
  }
  return out.join("\n");
}

/**
 * The HEADER of a dump the core refused (UNSUPPORTED_VENDOR), read from its first 64 KiB (inflated when the file is
 * gzipped); null when it cannot be read.
 */
function headerOf(file: string): ReadHeader | null {
  try {
    // A FIFO or device was drained by the first read: opening it again would wait for a writer that never comes.
    if (!statSync(file).isFile()) return null;
    const fd = openSync(file, "r");
    const buf = Buffer.alloc(1 << 16);
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } finally {
      closeSync(fd);
    }
    let bytes: Uint8Array = buf.subarray(0, n);
    // A gzip stream cut after 64 KiB: inflate what is there (the HEADER is the first chunk); its first bytes
    // repaired when damaged, as a conversion reads them.
    const gz = gzipStart(bytes);
    if (gz === "damaged") repairGzipMagic(bytes, 0);
    if (gz) bytes = gunzipSync(bytes, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    return readHeader(bytes);
  } catch {
    return null;
  }
}

/** `info`'s process and rank lines (from the core's FileInfo, or from a HEADER read without the core). */
function processLines(p: { pid: number; programPid?: number; hostname: string; commandLine: string[]; rank: number; worldSize: number; localRank: number }, headerDamaged = false): string[] {
  // A HEADER lost or damaged: the pid its records give (FileInfo.programPid), said as such; "?" when nothing tells
  // (no process has pid 0); a damaged HEADER's own pid, when no record gives another, said to be that.
  const pid = p.programPid === undefined || p.programPid === p.pid
    ? `pid ${p.pid || "?"}${headerDamaged && p.pid !== 0 ? " (the damaged HEADER's: no record gives another; it may be wrong)" : ""}`
    : p.pid === 0 ? `pid ${p.programPid} (from its records: no HEADER)` : `pid ${p.programPid} (from its records; the damaged HEADER says ${p.pid})`;
  const out = [`  process       ${pid} on ${p.hostname || "?"}: ${p.commandLine.join(" ") || "?"}`];
  if (p.rank >= 0) {
    out.push(`  rank          ${p.rank} of ${p.worldSize >= 0 ? p.worldSize : "?"}${p.localRank >= 0 ? ` (local ${p.localRank})` : ""}`);
  }
  return out;
}

/** The text `rawtrace info` shows of a dump whose vendor this build cannot decode: what its HEADER says. */
export function formatHeaderOnly(file: string, bytes: number, h: ReadHeader): string {
  const out = [`${file}: ${fmtBytes(bytes)}, vendor code ${h.vendor} (${vendorName(h.vendor)}): no decoder in this build, only its HEADER is shown`];
  const lib = `tracing library ${h.vendorVersion}${h.vendorVersionText ? ` "${h.vendorVersionText}"` : ""}`;
  out.push(`  vendor        ${lib}, runtime ${h.runtimeVersion || "?"}, driver ${h.driverVersion || "?"}`);
  out.push(...processLines(h));
  const v = h.collectorVersion;
  out.push(`  collector     ${v >>> 16}.${(v >>> 8) & 255}.${v & 255}, started ${new Date(Number(h.startNs / 1000000n)).toISOString()}`);
  return out.join("\n");
}

/**
 * `rawtrace info <files…>`: text per file, or with --json one document `{"command":"info","files":[…]}` for any number of files
 * (one file too), each entry with `input`, the path as given; a file that fails is `{"file","input","ok":false,
 * "error":{code,message}}` in it and on standard error.
 */
export async function runInfo(args: string[], v: CliValues): Promise<number> {
  if (args.length === 0) throw new RawtraceError("USAGE", "info needs .rawtrace files");
  // Directories and globs expand as for convert and stats; those matching nothing fail on their own.
  const { files, missing } = inputs(args, "info");
  const results: Array<{
    ok: boolean; info?: FileInfo; file: string; error?: { code: string; message: string }; header?: ReadHeader;
  }> = missing.map((m) => ({ ok: false, file: m.input, error: m.error }));
  for (const file of files) {
    try {
      results.push({ ok: true, file, info: await infoFile(file) });
    } catch (e) {
      const err = e as Error;
      if (!(err instanceof RawtraceError)) throw err;
      // A vendor this build cannot decode: still say what the HEADER says (which process, host, library).
      const header = err.code === "UNSUPPORTED_VENDOR" ? headerOf(file) ?? undefined : undefined;
      results.push({ ok: false, file, error: { code: err.code, message: err.message }, header });
    }
  }
  if (v.json) {
    // `input`: the path as given, as convert and stats say it (FileInfo.file is the base name: two x.rawtrace in
    // different folders read alike without it).
    const files = results.map((r) => (r.ok ? { ...r.info!, input: r.file, ok: true }
      : { file: r.file, input: r.file, ok: false, error: r.error, ...(r.header ? { header: r.header } : {}) }));
    console.log(JSON.stringify({ command: "info", files }, replacer, 2));
  } else {
    // Each block is headed by the path as given (two x.rawtrace in different folders, x.rawtrace and x.rawtrace.gz).
    const blocks = results.filter((r) => r.ok || r.header).map((r) => r.ok
      ? formatInfo({ ...r.info!, file: r.file })
      : formatHeaderOnly(r.file, sizeOf(r.file), r.header!));
    if (blocks.length) console.log(blocks.join("\n\n"));
  }
  for (const r of results) if (!r.ok) console.error(errorLine(r.error!));
  return exitCode(results);
}
