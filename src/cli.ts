/**
 * The `rawtrace` command line: `convert` (many files in parallel), `batch` (convert of many inputs, sharded over
 * machines: docs/cluster.md), `merge`, `stats`, `diff`, `info`, `record` (run a program with a collector attached)
 * `view` (the viewer on localhost) and `help`. Each command
 * takes only its own options (any other is a usage error). Errors print one line naming the file, offset and what
 * was expected, and exit with the code listed in docs/errors.md.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXIT, errorLine, runBatch, runConvert, runDiff, runInfo, runMerge, runStats, type CliValues } from "./node/commands.js";
import { RawtraceError, isRawtraceError } from "./core/codes.js";
import { recordEndedBy, runRecord } from "./node/record.js";
import { runView } from "./node/view.js";
import { removeFoldersLeftEmpty } from "./node/owned.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** One command: its options (parseArgs), its help text and what it runs. */
interface Command {
  summary: string;
  help: string;
  options: Options;
  run(args: string[], values: CliValues): Promise<number>;
}

const HELP_OPT: Options = { help: { type: "boolean", short: "h" } };
const JOBS = "  -j, --jobs N       worker threads (default: one per core, at most one per input)";
/** --strict of a command that writes outputs (`written`) or only prints statistics (stats, diff). */
const strict = (what: "the outputs are still written" | "the statistics are still printed") =>
  "  --strict           exit 6 (LOSS) when any input lost data (damaged bytes skipped, records dropped by the\n" +
  `                     collector, no END chunk); ${what}`;
const STRICT = strict("the outputs are still written");
const STRICT_STATS = strict("the statistics are still printed");
const ALL_API = "  --all-api          keep API calls Kineto hides (cudaGetDevice, most driver calls)";
const ANALYSIS = "  --gpu-annotations on|off\n" +
  "                     project NVTX ranges onto the GPU streams they launched work on (gpu_user_annotation, as\n" +
  "                     Kineto; default on)\n" +
  "  --steps REGEX      NVTX ranges whose name matches mark training steps (default ^ProfilerStep#\\d+$): Kineto's\n" +
  "                     ProfilerStep#N for HTA, XProf step markers for its overview (docs/analysis.md)";
const ANALYSIS_OPT: Options = { "gpu-annotations": { type: "string" }, steps: { type: "string" } };
/**
 * The options `convert` and `batch` share (their outputs, format, analysis, workers); `formatHelp` and `gzipHelp`
 * describe -F and -z (convert's also name what its -o selects).
 */
const outputs = (formatHelp: string, gzipHelp: string) => `  -d, --out-dir DIR  directory for the outputs (created when missing; default: next to each input)
  -F, --format F     ${formatHelp}
  -z, --gzip         ${gzipHelp}
  --gzip-level N     gzip level: 0 (the default) is rawtrace's own encoder, the fastest; 1 to 9
                     (smallest) are zlib's; 6 is about 25% smaller than 0 for about 3× the CPU
                     (docs/performance/gzip.md)
  -f, --force        overwrite existing outputs
${ALL_API}
${ANALYSIS}
${JOBS}; a single regular file
                     of at most 96 MiB (any size on one CPU) is converted on the main thread (no worker to start)
                     unless N ≥ 2 is given;
                     a larger single Chrome JSON input gets 2 on 2 cores or more: with N ≥ 2, N − 1 workers
                     convert it while the main thread writes it, byte-identical to one worker, at most one per
                     256 KiB of input started (XSpace: one worker)`;
const OUTPUTS = outputs("chrome (default) or xspace", "gzip Chrome JSON outputs (.json.gz)");
const MANY_OPT: Options = {
  "out-dir": { type: "string", short: "d" }, format: { type: "string", short: "F" }, gzip: { type: "boolean", short: "z" },
  "gzip-level": { type: "string" },
  force: { type: "boolean", short: "f" }, "all-api": { type: "boolean" }, jobs: { type: "string", short: "j" },
  json: { type: "boolean" }, strict: { type: "boolean" }, ...ANALYSIS_OPT, ...HELP_OPT,
};

const COMMANDS: Record<string, Command> = {
  convert: {
    summary: "raw dumps to Chrome Trace JSON (or XSpace), many files in parallel",
    help: `Usage:
  rawtrace convert <in.rawtrace> [-o out.json | out.json.gz | out.xplane.pb] [options]
  rawtrace convert <in.rawtrace> --format xspace [-o logdir] [options]
  rawtrace convert <files, directories, globs…> [--out-dir dir] [--gzip] [--format xspace] [options]

Kineto-compatible Chrome Trace JSON (Perfetto UI, chrome://tracing, HTA). Default output: next to the input, its
name with .json. --format xspace writes an XSpace protobuf for XProf / TensorBoard's profile plugin, laid out as
they load it: <logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb (run = profile start, UTC; default
logdir: next to the input, its name with _xprof), or one file with -o name.xplane.pb (that name alone selects
XSpace; with --format chrome it is a usage error). Many inputs convert in parallel; a bad file fails alone
(exit 1). Damaged input is reported on standard error (the byte ranges skipped) and in the output (Chrome JSON:
rawtrace.lost; XSpace: errors). Inputs may be gzip-compressed (x.rawtrace.gz: the same output as
x.rawtrace); - reads standard input (name the output with -o or --out-dir).

Options:
  -o, --output PATH  the output of a single input
${outputs("chrome or xspace (default: xspace when -o ends in .xplane.pb, else chrome)",
  "gzip Chrome JSON outputs (.json.gz; also when -o ends in .gz)")}
  --json             print a JSON summary on standard output (per file: events, bytes, seconds, warnings, loss)
${STRICT}
  -h, --help         this help`,
    options: { output: { type: "string", short: "o" }, ...MANY_OPT },
    run: runConvert,
  },
  batch: {
    summary: "convert of many inputs, or of shard I of N of them (one process per node: docs/cluster.md)",
    help: `Usage:
  rawtrace batch <files, directories, globs…> [--list FILE] [--shard I/N] [--out-dir dir] [options]

Converts many inputs as \`rawtrace convert\` does (same outputs, byte for byte), or with --shard I/N only the inputs
of shard I of N, so that N processes on N machines (a Kubernetes Indexed Job, a Slurm job array) convert every
input exactly once with no coordinator. A file's shard is a hash of its path below the deepest directory holding
every input, modulo N: it does not depend on the working directory, the mount point or the order of the inputs.
Give every shard the same inputs (a --list written once is safest). Every shard checks the whole list first: two
inputs that would write the same output are a usage error in every shard; globs matching nothing are reported
by shard 0. A shard with no inputs exits 0. Then \`rawtrace merge\` the inputs for one job trace (docs/cluster.md).

Options:
  --shard I/N        convert only shard I of N (I from 0 to N−1, as JOB_COMPLETION_INDEX)
  --list FILE        more inputs, one a line (files, directories or globs; blank and # lines skipped; relative to
                     the working directory; - is standard input); may be repeated
${OUTPUTS}
  --json             print a JSON summary on standard output (as convert's, with shard: {index, count, total})
${STRICT}
  -h, --help         this help`,
    options: { shard: { type: "string" }, list: { type: "string", multiple: true }, ...MANY_OPT },
    run: runBatch,
  },
  merge: {
    summary: "one trace for a multi-rank job (Chrome JSON, or one XSpace per host)",
    help: `Usage:
  rawtrace merge <rank files…> [--list FILE] [-o job.json | job.json.gz] [options]
  rawtrace merge <rank files…> [--list FILE] --format xspace -o logdir [options]

One Chrome trace for a multi-rank job: each rank its own process group ("rank N (host)"), every rank on one time
base, a clock report in rawtrace.merge.clock. A rank whose clock start is more than 1 s from the median of the
ranks' is reported on standard error and in rawtrace.merge.clock.skewed_ranks (XSpace: a warning in every host's
file): its clock disagrees, or it is not from the same run (two ranks that disagree are named together: which
one is off cannot be told). --format xspace: one <host>.xplane.pb per host under
<logdir>/plugins/profile/<run>/.

Options:
  -o, --output PATH  the merged trace (default merged.json; xspace: the log directory, default merged_xprof;
                     never a .xplane.pb file: XSpace is one file per host)
  --list FILE        more rank files, one a line, as batch --list reads them (may be repeated; - : standard input)
  -F, --format F     chrome (default) or xspace
  -z, --gzip         gzip the Chrome JSON (also when -o ends in .gz)
  --gzip-level N     gzip level: 0 (the default) is rawtrace's own encoder, the fastest; 1 to 9
                     (smallest) are zlib's; 6 is about 25% smaller than 0 for about 3× the CPU
                     (docs/performance/gzip.md)
  -f, --force        overwrite an existing output
  --max-skew MS      fail (exit 7, CLOCK_SKEW) before writing when a rank's clock start is more than MS
                     milliseconds from the median (also the threshold of the skew report)
${ALL_API}
${ANALYSIS}
${JOBS}
  --json             print the merge report as JSON on standard output
${STRICT}
  -h, --help         this help`,
    options: {
      output: { type: "string", short: "o" }, format: { type: "string", short: "F" },
      gzip: { type: "boolean", short: "z" }, "gzip-level": { type: "string" }, force: { type: "boolean", short: "f" },
      "max-skew": { type: "string" }, list: { type: "string", multiple: true },
      "all-api": { type: "boolean" }, jobs: { type: "string", short: "j" }, json: { type: "boolean" },
      strict: { type: "boolean" }, ...ANALYSIS_OPT, ...HELP_OPT,
    },
    run: runMerge,
  },
  stats: {
    summary: "GPU busy %, top kernels, memcpy bandwidth, API time",
    help: `Usage:
  rawtrace stats <files, directories, globs…> [--top N] [--json | --csv] [--steps REGEX] [--gaps] [options]

Per file: GPU busy % (union of kernel, memcpy and memset time over the trace span), top kernels by total time,
memcpy bytes and bandwidth per direction, API calls by total time. Event kinds are named: kernel, memcpy, memset,
runtime, driver, sync, event, overhead, range, instant, graph. JSON and CSV forms: docs/node-api.md.

Options:
  --top N            rows per text table (default 10; 0: devices and copies only; --json and --csv list every name)
  --json             one JSON document: {"command":"stats","files":[…]}
  --csv              one table with a header row: file,kind,name,count,total_ns,mean_ns,min_ns,max_ns
                     (one row per kind and name, every file; names quoted as RFC 4180)
  --steps REGEX      per training step (NVTX / ROCTx ranges whose name matches) and device: step time (the step's
                     device span, as XProf), host time, GPU busy / kernel / memcpy / memset / idle %, launch overhead
                     (kernel start − launch end) p50/p99 (docs/analysis.md); --csv: one row per step and device
  --gaps             GPU idle gaps per device (the GPU runs nothing, more work to come) and what the host thread that
                     launched the next op did meanwhile: in API calls or between launches, the covering call and
                     range; top N in the text, all in --json; --csv: one row per gap (docs/analysis.md)
  --gap-min US       shortest gap listed, µs (default 10)
${ALL_API}
${JOBS}
${STRICT_STATS}
  -h, --help         this help`,
    options: {
      top: { type: "string" }, json: { type: "boolean" }, csv: { type: "boolean" }, "all-api": { type: "boolean" },
      steps: { type: "string" }, gaps: { type: "boolean" }, "gap-min": { type: "string" },
      jobs: { type: "string", short: "j" }, strict: { type: "boolean" }, ...HELP_OPT,
    },
    run: runStats,
  },
  diff: {
    summary: "two runs' (or ranks') statistics side by side, largest changes first",
    help: `Usage:
  rawtrace diff <A.rawtrace> <B.rawtrace> [--steps REGEX] [--top N] [--json] [options]

The statistics of \`rawtrace stats\` for two files side by side: the trace span, per GPU busy % and kernel /
memcpy / memset time, with --steps the mean and median step time, busy % and launch overhead, then every kernel,
copy and API call by the change in its total time, largest first (B − A, in percentage points for rows in %; the
change as +28.0%, or ×55.5 from ten times on; "new" when A has none of what B has; 0.0% when both have none).

Options:
  --steps REGEX      compare the training steps too (NVTX ranges whose name matches; docs/analysis.md)
  --top N            (kind, name) rows in the text (default 15; --json lists all)
  --json             {"command":"diff","a":…,"b":…,"rows":[{group,name,unit,a,b,delta,deltaPct,countA,countB}]}
${ALL_API}
${JOBS}
${STRICT_STATS}
  -h, --help         this help`,
    options: {
      steps: { type: "string" }, top: { type: "string" }, json: { type: "boolean" }, "all-api": { type: "boolean" },
      jobs: { type: "string", short: "j" }, strict: { type: "boolean" }, ...HELP_OPT,
    },
    run: runDiff,
  },
  info: {
    summary: "header, devices, records per kind, time span, dropped records, warnings, damage",
    help: `Usage:
  rawtrace info <files…> [--json]

What a dump holds: header, devices, records per kind, time span, dropped records, warnings and the damaged byte
ranges skipped. --json prints one JSON document for any number of files, {"command":"info","files":[…]} (one file
too); a file that cannot be read is {"file":…,"ok":false,"error":{"code":…,"message":…}} in it.

Options:
  --json             one JSON document on standard output
  -h, --help         this help`,
    options: { json: { type: "boolean" }, ...HELP_OPT },
    run: runInfo,
  },
  record: {
    summary: "run a program with the GPU vendor's collector attached (like nsys profile)",
    help: `Usage:
  rawtrace record [--vendor cuda|rocm|xpu|hpu|auto] [-o DIR] -- <command…>

Runs the command with rawtrace's collector attached, no change to the program: CUDA through
CUDA_INJECTION64_PATH, ROCm through ROCP_TOOL_LIBRARIES, Intel XPU and Habana Gaudi through LD_PRELOAD (Gaudi with
HABANA_PROFILE=1, kept when already set to another value than 0). Each process writes
DIR/rawtrace-<host>-rank<RANK or LOCAL_RANK, else 0>-<pid>.rawtrace (RAWTRACE_OUTPUT); the other RAWTRACE_*
settings of docs/collectors/ pass through. record's options come before the command: everything from \`--\`, or
from the first word that is not one of them, is the command and its arguments, untouched. At the end it lists the
new dumps and the commands that convert or merge exactly those. The exit status is the program's (127 command not
found, 126 not executable); when a signal ended it, record ends by the same signal (SIGINT, SIGTERM, SIGHUP; others as 128 + n), so
that a shell loop around it stops on Ctrl-C. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to rawtrace are forwarded to
the program.

The collector library comes from this package's build output (build/c/cuda/cu13, cu135, cu12, cu118;
build/c/rocm; build/c/xpu; build/c/hpu), or from the folder RAWTRACE_COLLECTOR_DIR names. --vendor auto (the default) picks the vendor
whose runtime is installed (libcuda/libcupti; librocprofiler-sdk/libamdhip64; libpti_view; libSynapse, looked up
with ldconfig -p, in LD_LIBRARY_PATH and the usual install folders, or only in the ':'-separated folders of
RAWTRACE_LIB_SEARCH). When several vendors' runtimes are found (Python wheels carry them), it picks the one whose
driver made device nodes (/dev/nvidiactl; /dev/kfd; an i915 or xe render node; /dev/accel or /dev/hl0). None
found, or several and not exactly one of them with device nodes, is a usage error asking for --vendor.

Options:
  --vendor V         cuda, rocm, xpu, hpu or auto (default auto)
  -o, --output DIR   folder for the dumps (default ./rawtrace-record, created when missing)
  -h, --help         this help`,
    options: { vendor: { type: "string" }, output: { type: "string", short: "o" }, ...HELP_OPT },
    run: (args, values) => runRecord(args, values as { vendor?: string; output?: string }),
  },
  view: {
    summary: "open dumps in the in-browser viewer, served on this machine only",
    help: `Usage:
  rawtrace view <files…> [--port N] [--host 127.0.0.1|::1] [--no-open]

Starts the viewer (docs/viewer.md) on a local web server with the named files, prints the page's URL and opens it
in the default browser (xdg-open, open, start); the page loads the files and converts them in the browser, as when
they are opened there. The server binds to a loopback address only and serves nothing but the viewer and the
named files. Without --port it takes 8080, or the next free port when 8080 is in use; a --port that is in use is
an error (exit 4). Ctrl+C stops it.

Options:
  --port N           port to listen on (0: any free port)
  --host H           loopback address to bind: 127.0.0.1 (default), ::1 or localhost; any other is refused
  --no-open          do not start a browser: only print the URL
  -h, --help         this help`,
    options: { port: { type: "string" }, host: { type: "string" }, "no-open": { type: "boolean" }, ...HELP_OPT },
    run: (args, values) => runView(args, values as { port?: string; host?: string; "no-open"?: boolean }),
  },
};

/** rawtrace's version, from the package.json above this file (dist/node/cli.js or src/cli.ts), read at run time. */
function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    const p = join(dir, "package.json");
    if (!existsSync(p)) continue;
    const pkg = JSON.parse(readFileSync(p, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "rawtrace" && pkg.version) return pkg.version;
  }
  throw new RawtraceError("INTERNAL", `package.json of rawtrace not found above ${fileURLToPath(import.meta.url)}`);
}

function usage(): string {
  const names = Object.keys(COMMANDS);
  return `rawtrace ${version()} — raw GPU activity dumps to Chrome Trace JSON and XSpace

Usage:
  rawtrace <command> [options] <files…>
  rawtrace help [command]        this text, or a command's options
  rawtrace <command> --help      a command's options
  rawtrace -V | -v | --version   the version

Commands:
${names.map((n) => `  ${n.padEnd(9)}${COMMANDS[n].summary}`).join("\n")}

Exit codes: 0 ok, 1 a file failed, 2 usage, 3 output exists, 4 I/O, 5 core not built, 6 data lost (--strict),
7 clock skew (--max-skew), 70 internal error, 130 / 143 interrupted (SIGINT / SIGTERM), 141 standard output
closed by its reader (docs/errors.md).`;
}

/** Edit distance of `a` and `b` (insertions, deletions, substitutions, adjacent swaps), at most `cap` + 1. */
function distance(a: string, b: string, cap = 3): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** " (did you mean 'x'?)" for the closest of `known` to `given` (a typo: at most 2 edits), else "". */
function didYouMean(given: string, known: string[]): string {
  let best = "";
  let bestD = 3;
  for (const k of known) {
    const dk = distance(given, k);
    if (dk < bestD) {
      best = k;
      bestD = dk;
    }
  }
  return best ? ` (did you mean '${best}'?)` : "";
}

/** parseArgs' errors as one-line usage errors naming the command. */
function parse(cmd: string, args: string[]): { values: CliValues & { help?: boolean }; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options: COMMANDS[cmd].options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    const err = e as Error & { code?: string };
    const unknown = /Unknown option '([^']+)'/.exec(err.message);
    // A value that starts with '-' (`--jobs -1`) reads as another option to parseArgs: say what was given.
    const ambiguous = /Option '(-[\w-]+)[^']*' argument is ambiguous/.exec(err.message);
    const name = ambiguous?.[1];
    const value = name === undefined ? undefined : args[args.indexOf(name) + 1];
    // `-o` at the end: parseArgs says "Option '-o, --output <value>' argument missing".
    const missing = /Option '(-\w)?,? ?(--[\w-]+)[^']*' argument missing/.exec(err.message);
    const longs = Object.keys(COMMANDS[cmd].options).map((o) => `--${o}`);
    const msg = unknown
      ? `unknown option '${unknown[1]}' for '${cmd}'${unknown[1].startsWith("--") ? didYouMean(unknown[1].split("=")[0], longs) : ""}`
      : missing
        ? `${missing[1] ?? missing[2]} needs a value`
        : name !== undefined
          ? `${name} ${value ?? ""}: a value cannot start with '-'${value !== undefined && /^-\d/.test(value) ? ` (${name} takes no negative numbers)` : ""}`
          : err.message.split(/\.(\s|$)/)[0];
    throw new RawtraceError("USAGE", `${msg} (rawtrace ${cmd} --help lists its options)`);
  }
  // An empty value (`-o ''`, `--top=`) is no value: named as the user wrote the option, never silently ignored.
  // An option that takes a value given twice (`-o a.json -o b.json`) is refused rather than the last one winning.
  const given = new Map<string, string>();
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== "option") continue;
    if (t.value === "") throw new RawtraceError("USAGE", `${t.rawName} needs a value, not an empty one`);
    const spec = COMMANDS[cmd].options[t.name];
    if (spec?.type !== "string" || spec.multiple) continue;
    const before = given.get(t.name);
    if (before !== undefined) {
      throw new RawtraceError("USAGE",
        `--${t.name} given twice ('${before}', then '${t.value ?? ""}'): '${cmd}' takes one (rawtrace ${cmd} --help lists its options)`);
    }
    given.set(t.name, t.value ?? "");
  }
  return { values: parsed.values as CliValues & { help?: boolean }, positionals: parsed.positionals };
}

/** `record`'s arguments as [its own options, the command]: the command starts at `--` or at the first word that is
 * not an option (nor the value of -o / --output / --vendor). */
function splitRecordArgs(args: string[]): [string[], string[]] {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") return [args.slice(0, i), args.slice(i + 1)];
    if (!a.startsWith("-") || a === "-") return [args.slice(0, i), args.slice(i)];
    if (a === "-o" || a === "--output" || a === "--vendor") i++; // its value
  }
  return [args, []];
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    console.error(usage());
    return EXIT.USAGE;
  }
  if (first === "-V" || first === "-v" || first === "--version") {
    if (rest.length) throw new RawtraceError("USAGE", `${first} takes no arguments`);
    console.log(version());
    return 0;
  }
  if (first === "-h" || first === "--help" || first === "help") {
    if (rest[0] === "-h" || rest[0] === "--help") rest.shift(); // rawtrace help --help
    if (rest.length > 1) throw new RawtraceError("USAGE", "help takes at most one command name");
    if (rest.length === 0) console.log(usage());
    else if (Object.hasOwn(COMMANDS, rest[0])) console.log(COMMANDS[rest[0]].help);
    else throw new RawtraceError("USAGE", `unknown command '${rest[0]}'${didYouMean(rest[0], Object.keys(COMMANDS))} (rawtrace help lists the commands)`);
    return 0;
  }
  if (first.startsWith("-")) {
    throw new RawtraceError("USAGE", `unknown option '${first}': options follow the command (rawtrace help)`);
  }
  if (!Object.hasOwn(COMMANDS, first)) {
    throw new RawtraceError("USAGE", `unknown command '${first}'${didYouMean(first, Object.keys(COMMANDS))} (rawtrace help lists the commands)`);
  }
  // record: its options end where the command starts (`--`, or the first word that is not an option or an option's
  // value), so that the program's own options (`python train.py -o out`) reach the program, not record.
  const [own, command] = first === "record" ? splitRecordArgs(rest) : [rest, null];
  const { values, positionals } = parse(first, own);
  if (command) positionals.push(...command);
  if (values.help) {
    console.log(COMMANDS[first].help);
    return 0;
  }
  return COMMANDS[first].run(positionals, values);
}

/**
 * Exits with `code`, or, when `record`'s program was ended by SIGINT, SIGTERM or SIGHUP, by that signal (its default
 * action), as a shell expects of a command whose child it ended: a loop around `rawtrace record` then stops on
 * Ctrl-C. Where the signal is ignored (a background job of a non-interactive shell), the code still ends the run.
 */
function endWith(code: number): void {
  removeFoldersLeftEmpty();
  const sig = recordEndedBy();
  if (sig) {
    process.removeAllListeners(sig);
    process.kill(process.pid, sig);
  }
  setImmediate(() => process.exit(code));
}

/**
 * Exits with `code` once stdout and stderr have taken every byte written to them: into a pipe whose reader is slow
 * (`rawtrace stats … | less`) Node queues what the pipe cannot take yet, and exiting at once lost the tail.
 */
function exitWhenFlushed(code: number): void {
  let pending = 2;
  // A write that failed has its 'error' event still queued: let it run (it exits 141 or IO) before exiting here.
  const done = () => {
    if (--pending === 0) setImmediate(() => endWith(code));
  };
  for (const s of [process.stdout, process.stderr]) {
    if (s.destroyed || s.writableLength === 0) done();
    else s.write("", done);
  }
}

// A reader that stops early (`rawtrace stats … | head`) ends the run quietly, as a command ended by SIGPIPE
// (status 141), instead of an unhandled 'error' event. Output files and `-o -` report their own write errors (IO).
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(141);
  process.stderr.write(`rawtrace: standard output: cannot write: ${e.message}\n`);
  process.exit(EXIT.IO);
});

// Standard error that goes away (`2>&1 | head`): rawtrace's messages are lost, the work goes on (exit as it would).
process.stderr.on("error", () => {});

main(process.argv.slice(2)).then(
  (code) => exitWhenFlushed(code),
  (e: unknown) => {
    const err = e as Error;
    // `-o - | head`: the reader stopped early on purpose; quiet, as a command ended by SIGPIPE.
    if (err.name !== "PIPE_CLOSED") console.error(errorLine(err));
    const known = err instanceof RawtraceError || isRawtraceError(err);
    const stack = (e as Error).stack;
    if (!known && stack) console.error(stack);
    exitWhenFlushed(EXIT[err.name] ?? (known ? 1 : EXIT.INTERNAL));
  },
);
