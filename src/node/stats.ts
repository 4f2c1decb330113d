/**
 * `rawtrace stats` in Node: statistics of one file (in this thread, or on a pool) or of many files on a pool, and
 * the text tables the CLI prints. The numbers come from the core (src/core/stats.ts for their definitions).
 */
import { needOptions, needPath, needPaths, noSignal } from "./api_args.js";
import { RawtraceError, shownValue } from "../core/codes.js";
import type { ByteSource, FileInfo } from "../core/engine.js";
import { EventKind, byTotal, computeStats, kindName, type TraceStats } from "../core/stats.js";
import { createEngine } from "./wasm.js";
import { fileSource } from "./file_source.js";
import { WorkerPool, poolJobs } from "./pool.js";
import { fmtCount } from "./progress.js";
import { nameHints } from "../core/name_hints.js";

/** Options of {@link stats} and {@link statsFiles}. */
export interface StatsOptions {
  /** Count every API call (no Kineto blocklist). Default false: the calls a Chrome trace shows. */
  allApi?: boolean;
  /** Run on this pool (left open). */
  pool?: WorkerPool;
  /** Workers for {@link statsFiles} without a pool (default: one per core, at most one per input). */
  jobs?: number;
}

/** Statistics of one file: a path or a ByteSource (a ByteSource is read in this thread). */
export async function stats(input: string | ByteSource, opts: StatsOptions = {}): Promise<TraceStats> {
  if (typeof input === "string") needPath("stats", "input", input);
  else if (typeof input !== "object" || input === null || typeof (input as ByteSource).open !== "function") {
    throw new RawtraceError("USAGE", `stats: the input must be a file path or a ByteSource, not ${shownValue(input)}`);
  }
  needOptions("stats", opts);
  noSignal("stats", opts);
  if (typeof input === "string" && opts.pool) return (await opts.pool.stats(input, opts)).stats;
  const src = typeof input === "string" ? fileSource(input) : input;
  try {
    return (await computeStats(await createEngine(), src, { allApi: opts.allApi })).stats;
  } finally {
    if (typeof input === "string") (src as ReturnType<typeof fileSource>).close();
  }
}

/** One file's statistics, or why it failed. */
export interface StatsFileResult {
  input: string;
  ok: boolean;
  stats?: TraceStats;
  info?: FileInfo;
  seconds: number;
  error?: { code: string; message: string };
}

/** Statistics of many files in parallel; one bad file fails alone. */
export async function statsFiles(inputs: string[], opts: StatsOptions = {}): Promise<StatsFileResult[]> {
  needPaths("statsFiles", inputs);
  needOptions("statsFiles", opts);
  noSignal("statsFiles", opts);
  const jobs = poolJobs(inputs.length, opts.jobs); // checked also with a pool of the caller's
  const pool = opts.pool ?? new WorkerPool({ jobs });
  try {
    return await Promise.all(inputs.map(async (input): Promise<StatsFileResult> => {
      try {
        const r = await pool.stats(input, opts);
        return { input, ok: true, stats: r.stats, info: r.info, seconds: r.seconds };
      } catch (e) {
        const err = e as Error;
        return { input, ok: false, seconds: 0, error: { code: err instanceof RawtraceError ? err.code : err.name, message: err.message } };
      }
    }));
  } finally {
    if (!opts.pool) await pool.close();
  }
}

const ms = (ns: number) => (ns / 1e6).toFixed(3);
const us = (ns: number) => (ns / 1e3).toFixed(1);
const int = fmtCount;

function fmtBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

/** A table: right-aligned columns except the last (names), two spaces apart. */
function table(head: string[], rows: string[][], indent = "    "): string[] {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => (indent + r.map((c, i) => (i === r.length - 1 ? c : c.padStart(w[i]))).join("  ")).trimEnd();
  return [line(head), ...rows.map(line)];
}

/** The text report of one file's statistics: devices, top kernels, memcpy directions, API calls. */
export function formatStats(file: string, s: TraceStats, opts: { top?: number; vendor?: string[] } = {}): string {
  const top = opts.top ?? 10;
  const out: string[] = [];
  out.push(`${file}: ${int(s.events)} events over ${ms(s.spanNs)} ms`);
  for (const line of opts.vendor ?? []) out.push(`  ${line}`);
  out.push("  GPU busy (union of kernel, memcpy and memset time over the trace span)");
  out.push(...table(
    ["device", "busy %", "busy ms", "kernels", "kernel ms", "memcpys", "memcpy ms", "memsets", "memset ms", ""],
    s.devices.map((d) => [
      `GPU ${d.id}`, d.busyPercent.toFixed(2), ms(d.busyNs), int(d.kernels), ms(d.kernelNs), int(d.memcpys),
      ms(d.memcpyNs), int(d.memsets), ms(d.memsetNs), "",
    ]),
  ));
  // --top 0: the per-name tables are left out (not printed as empty tables).
  const kernels = byTotal(s, EventKind.KERNEL, top);
  const nKernels = s.names.filter((n) => n.kind === EventKind.KERNEL).length;
  if (top > 0) {
    out.push(`  top kernels by total time (${Math.min(top, nKernels)} of ${nKernels})`);
    const shown = cutNames(kernels.map((k) => k.name));
    out.push(...table(["count", "total ms", "mean µs", "max µs", "name"],
      kernels.map((k, i) => [int(k.count), ms(k.totalNs), us(k.meanNs), us(k.maxNs), shown[i]])));
  }
  out.push("  memcpy by direction");
  out.push(...table(["direction", "count", "bytes", "ms", "GB/s", ""],
    s.copies.map((c) => [c.direction, int(c.count), c.bytes === null ? "unknown" : fmtBytes(c.bytes), ms(c.totalNs),
      c.bandwidthGBs === null ? "unknown" : c.bandwidthGBs.toFixed(2), ""])));
  if (top > 0) {
    const api = byTotal(s, [EventKind.API_RUNTIME, EventKind.API_DRIVER], top);
    out.push("  API calls by total time");
    const shown = cutNames(api.map((a) => a.name));
    out.push(...table(["kind", "count", "total ms", "mean µs", "max µs", "name"],
      api.map((a, i) => [kindName(a.kind), int(a.count), ms(a.totalNs), us(a.meanNs), us(a.maxNs), shown[i]])));
  }
  return out.join("\n");
}

/** `v` with every bigint (64-bit ns, ids) as its decimal string, so that JSON.stringify takes it as it is. */
function jsonSafe(v: unknown): unknown {
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v !== null && typeof v === "object" && !ArrayBuffer.isView(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = jsonSafe(x);
    return out;
  }
  return v;
}

/**
 * `rawtrace stats --json`: one document `{"command":"stats","files":[…]}`, per file `{input, ok, seconds, stats,
 * warnings, loss}` or `{input, ok: false, error}` (`loss`: the damaged bytes skipped, as in `info --json`; also as
 * `lost`, its name before, for scripts that read it). Kinds are names ({@link kindName}), copy directions are text
 * ("HtoD", "DtoD (peer)"); times in ns, bytes in bytes. JSON-safe as returned: 64-bit values (ns since the epoch,
 * ids) are decimal strings, as the CLI prints them.
 */
export function statsJson(results: StatsFileResult[]): unknown {
  return jsonSafe({
    command: "stats",
    files: results.map((r) => {
      if (!r.ok || !r.stats) return { input: r.input, ok: false, seconds: r.seconds, error: r.error };
      const s = r.stats;
      return {
        input: r.input, ok: true, seconds: r.seconds,
        stats: {
          ...s,
          names: s.names.map(({ kind, ...n }) => ({ kind: kindName(kind), ...n })),
          copies: s.copies.map(({ copyKind: _k, ...c }) => c),
        },
        warnings: r.info?.warnings ?? [],
        loss: r.info?.loss,
        // The name before 2026-11-29, kept for scripts that read it.
        lost: r.info?.loss,
      };
    }),
  });
}

/** A long name (a C++ kernel's runs to kilobytes) cut to `n` characters for a text table; --json and --csv keep it whole. */
export function cutName(s: string, n = 80): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * `names` cut to `n` characters for a text table ({@link cutName}), names that would then read alike told apart: each
 * ends with `[hint]`, a word of its template arguments no other has (src/core/name_hints.ts), within the `n`.
 */
export function cutNames(names: readonly string[], n = 120): string[] {
  const hints = nameHints(names, (x) => cutName(x, n));
  return names.map((x, i) => {
    const h = hints[i];
    if (h === null) return cutName(x, n);
    const tag = ` [${cutName(h, 40)}]`;
    return `${cutName(x, n - tag.length)}${tag}`;
  });
}

/** One CSV field (RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes doubled). */
export function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Columns of `rawtrace stats --csv` (docs/node-api.md). */
export const STATS_CSV_COLUMNS = ["file", "kind", "name", "count", "total_ns", "mean_ns", "min_ns", "max_ns"] as const;

/**
 * `rawtrace stats --csv`: one table, a header row ({@link STATS_CSV_COLUMNS}), then per file that worked one row
 * per (kind, name) — by kind in {@link EventKind} order, then total time, largest first. Mean ns rounded to whole
 * ns. Lines end in \n.
 */
export function statsCsv(results: StatsFileResult[]): string {
  const lines = [STATS_CSV_COLUMNS.join(",")];
  for (const r of results) {
    if (!r.ok || !r.stats) continue;
    const names = [...r.stats.names].sort((a, b) => a.kind - b.kind || b.totalNs - a.totalNs || a.name.localeCompare(b.name));
    for (const n of names) {
      lines.push([
        csvField(r.input), kindName(n.kind), csvField(n.name), n.count, n.totalNs, Math.round(n.meanNs), n.minNs, n.maxNs,
      ].join(","));
    }
  }
  return lines.join("\n") + "\n";
}
