/**
 * The `rawtrace` command line: `convert` and `info`. Errors print one line naming the file, offset and what was
 * expected, and exit with the code listed in docs/errors.md.
 */
import { parseArgs } from "node:util";
import { basename, dirname, extname } from "node:path";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { convertFile, infoFile, xspaceProfilePath } from "./node/convert.js";
import type { FileInfo } from "./core/engine.js";
import { RawtraceError } from "./core/codes.js";

const VERSION = "0.1.0";

const USAGE = `rawtrace ${VERSION} — raw GPU activity dumps to Chrome Trace JSON and XSpace

Usage:
  rawtrace convert <in.rawtrace> [-o out.json | out.json.gz] [--all-api] [--force]
  rawtrace convert <in.rawtrace> --format xspace [-o logdir | -o out.xplane.pb] [--all-api] [--force]
  rawtrace info <in.rawtrace> [--json]
  rawtrace --version | --help

convert   Kineto-compatible Chrome Trace JSON (Perfetto UI, chrome://tracing, HTA). Default output: the input
          name with .json. --all-api keeps API calls Kineto hides (cudaGetDevice, most driver calls).
          --format xspace writes an XSpace protobuf for XProf / TensorBoard's profile plugin, laid out as they
          load it: <logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb (run = profile start, UTC;
          default logdir: the input name with _xprof), or exactly one file with -o name.xplane.pb.
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
  out.push(`  dropped       ${i.droppedRecords} records`);
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
  if (cmd === "convert") {
    if (files.length !== 1) throw new RawtraceError("USAGE", "convert needs exactly one input file");
    const input = files[0];
    const format = values.format ?? "chrome";
    if (format !== "chrome" && format !== "xspace") {
      throw new RawtraceError("USAGE", `--format must be chrome or xspace, not '${format}'`);
    }
    if (format === "xspace") return convertXSpace(input, values.output, !!values.force, !!values["all-api"]);
    const output = values.output ?? `${basename(input, extname(input))}.json`;
    if (existsSync(output) && !values.force) {
      throw new RawtraceError("EXISTS", `${output}: already exists (use --force to overwrite)`, output);
    }
    const t0 = performance.now();
    const r = await convertFile(input, output, { allApi: values["all-api"] });
    const s = (performance.now() - t0) / 1000;
    const mb = r.info.bytes / 1e6;
    console.error(
      `${input} → ${output}: ${r.events} events, ${fmtBytes(r.info.bytes)} in, ${fmtBytes(r.bytesOut)} JSON out, ` +
        `${s.toFixed(2)} s (${(mb / s).toFixed(0)} MB/s)`,
    );
    for (const w of r.info.warnings) console.error(`  warning ${w.code} ×${w.count} (offset ${w.offset}): ${w.message}`);
    return 0;
  }
  throw new RawtraceError("USAGE", `unknown command '${cmd}'\n${USAGE}`);
}

/**
 * `convert --format xspace`: one `.xplane.pb` when -o names one, else the TensorBoard/XProf layout under a log
 * directory. The run directory is named after the profile start, known only once the conversion is done, so the
 * file is written under a temporary name first and moved into place.
 */
async function convertXSpace(input: string, out: string | undefined, force: boolean, allApi: boolean): Promise<number> {
  if (out !== undefined && out.endsWith(".gz")) throw new RawtraceError("USAGE", "XSpace output cannot be gzipped (XProf reads .xplane.pb)");
  const single = out !== undefined && out.endsWith(".xplane.pb");
  if (single && existsSync(out) && !force) {
    throw new RawtraceError("EXISTS", `${out}: already exists (use --force to overwrite)`, out);
  }
  const logdir = out ?? `${basename(input, extname(input))}_xprof`;
  let target = single ? out : `${logdir}/plugins/profile/.rawtrace-${process.pid}.xplane.pb`;
  mkdirSync(dirname(target), { recursive: true });
  const t0 = performance.now();
  const r = await convertFile(input, target, { allApi, format: "xspace" });
  if (!single) {
    const final = xspaceProfilePath(logdir, r.baseTimeNs, r.info.hostname);
    if (existsSync(final) && !force) {
      rmSync(target, { force: true });
      throw new RawtraceError("EXISTS", `${final}: already exists (use --force to overwrite)`, final);
    }
    mkdirSync(dirname(final), { recursive: true });
    renameSync(target, final);
    target = final;
  }
  const s = (performance.now() - t0) / 1000;
  console.error(
    `${input} → ${target}: ${r.events} events, ${fmtBytes(r.info.bytes)} in, ${fmtBytes(r.bytesOut)} XSpace out, ` +
      `${s.toFixed(2)} s (${(r.info.bytes / 1e6 / s).toFixed(0)} MB/s)`,
  );
  for (const w of r.info.warnings) console.error(`  warning ${w.code} ×${w.count} (offset ${w.offset}): ${w.message}`);
  return 0;
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
