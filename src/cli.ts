/**
 * The `rawtrace` command line: `convert` (many files in parallel), `merge`, `stats` and `info`. Errors print one
 * line naming the file, offset and what was expected, and exit with the code listed in docs/errors.md.
 */
import { parseArgs } from "node:util";
import { infoFile } from "./node/convert.js";
import { runConvert, runMerge, runStats } from "./node/commands.js";
import type { FileInfo } from "./core/engine.js";
import { RawtraceError } from "./core/codes.js";

const VERSION = "0.1.0";

const USAGE = `rawtrace ${VERSION} — raw GPU activity dumps to Chrome Trace JSON and XSpace

Usage:
  rawtrace convert <in.rawtrace> [-o out.json | out.json.gz] [--all-api] [--force]
  rawtrace convert <in.rawtrace> --format xspace [-o logdir | -o out.xplane.pb] [--all-api] [--force]
  rawtrace convert <files, directories, globs…> [--out-dir dir] [--gzip] [--format xspace] [--jobs N] [--json]
  rawtrace merge <rank files…> [-o job.json | job.json.gz | --format xspace -o logdir] [--jobs N] [--json]
  rawtrace stats <files…> [--top N] [--jobs N] [--json]
  rawtrace info <in.rawtrace> [--json]
  rawtrace --version | --help

convert   Kineto-compatible Chrome Trace JSON (Perfetto UI, chrome://tracing, HTA). Default output: next to
          the input, its name with .json. --all-api keeps API calls Kineto hides (cudaGetDevice, most driver calls).
          --format xspace writes an XSpace protobuf for XProf / TensorBoard's profile plugin, laid out as they
          load it: <logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb (run = profile start, UTC;
          default logdir: next to the input, its name with _xprof), or one file with -o name.xplane.pb.
          Many inputs convert in parallel, one worker thread per core (--jobs N); outputs go next to their
          inputs or into --out-dir; existing files are kept unless --force. A bad file fails alone (exit 1).
          Progress on a terminal; --json prints a summary (per file: events, bytes in/out, seconds, warnings).
merge     one Chrome trace for a multi-rank job: each rank its own process group ("rank N (host)"), every
          rank on one time base, clock report in rawtrace.merge; --format xspace: one .xplane.pb per host.
stats     per file: GPU busy %, top kernels by total time, memcpy bytes and bandwidth per direction, API time.
info      header, devices, records per kind, time span, dropped records and warnings.
`;

function fmtBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

function printInfo(i: FileInfo): void {
  const out: string[] = [];
  out.push(`${i.file}: ${fmtBytes(i.bytes)}, ${i.complete ? "complete" : "NOT closed cleanly (no END chunk)"}`);
  out.push(`  vendor        ${i.vendor} (tracing library ${i.vendorVersion}, runtime ${i.runtimeVersion || "?"}, driver ${i.driverVersion || "?"})`);
  out.push(`  process       pid ${i.pid} on ${i.hostname || "?"}: ${i.commandLine.join(" ") || "?"}`);
  if (i.rank >= 0) out.push(`  rank          ${i.rank} of ${i.worldSize >= 0 ? i.worldSize : "?"} (local ${i.localRank})`);
  if (i.firstNs > 0n) {
    const span = Number(i.lastNs - i.firstNs) / 1e6;
    out.push(`  time span     ${new Date(Number(i.firstNs / 1000000n)).toISOString()} + ${span.toFixed(3)} ms`);
  }
  out.push(`  chunks        ${i.chunks} (${i.activityChunks} activity buffers, ${fmtBytes(i.activityBytes)})`);
  out.push(`  dropped       ${i.droppedRecordsText} records`);
  for (const d of i.devices) {
    out.push(`  device ${d.id}      ${d.name} (cc ${d.computeCapability}, ${d.multiprocessors} SMs, ${fmtBytes(d.globalMemoryBytes)})`);
  }
  out.push("  records");
  for (const [k, n] of Object.entries(i.records).sort((a, b) => b[1] - a[1])) out.push(`    ${k.padEnd(24)} ${n}`);
  if (i.warnings.length) {
    out.push("  warnings");
    for (const w of i.warnings) out.push(`    ${w.code} ×${w.count} (first at offset ${w.offset}): ${w.message}`);
  }
  console.log(out.join("\n"));
}

function jsonReplacer(_k: string, v: unknown): unknown {
  return typeof v === "bigint" ? v.toString() : v;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      output: { type: "string", short: "o" },
      json: { type: "boolean" },
      "all-api": { type: "boolean" },
      format: { type: "string", short: "F" },
      force: { type: "boolean", short: "f" },
      jobs: { type: "string", short: "j" },
      "out-dir": { type: "string", short: "d" },
      gzip: { type: "boolean", short: "z" },
      top: { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
    },
  });
  if (values.version) {
    console.log(VERSION);
    return 0;
  }
  const [cmd, ...files] = positionals;
  if (values.help || !cmd) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  if (cmd === "info") {
    if (files.length === 0) throw new RawtraceError("USAGE", "info needs a .rawtrace file");
    for (const f of files) {
      const info = await infoFile(f);
      if (values.json) console.log(JSON.stringify(info, jsonReplacer, 2));
      else printInfo(info);
    }
    return 0;
  }
  if (cmd === "convert") return runConvert(files, values);
  if (cmd === "merge") return runMerge(files, values);
  if (cmd === "stats") return runStats(files, values);
  throw new RawtraceError("USAGE", `unknown command '${cmd}'\n${USAGE}`);
}

/** Exit codes by error name (docs/errors.md). */
const EXIT: Record<string, number> = { USAGE: 2, EXISTS: 3, IO: 4, NO_CORE: 5 };

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    const err = e as Error;
    console.error(`rawtrace: ${err.name === "USAGE" ? "usage: " : ""}${err.message}`);
    process.exit(EXIT[err.name] ?? (err instanceof RawtraceError ? 1 : 70));
  },
);
