/**
 * `rawtrace record [--vendor cuda|rocm|xpu|hpu|auto] [-o DIR] -- <command…>`: runs a program with the vendor's
 * collector attached (the way `nsys profile` or `rocprofv3 -- cmd` do), then says where the dumps went and how to
 * convert them. The program's exit status passes through (a signal as 128 + n); SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * sent to rawtrace are forwarded to it.
 */
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, realpathSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RawtraceError } from "../core/codes.js";
import { makeDir } from "./output.js";

/** The vendors `record` knows. */
export type Vendor = "cuda" | "rocm" | "xpu" | "hpu";
export const VENDORS: readonly Vendor[] = ["cuda", "rocm", "xpu", "hpu"];

/** Per vendor: the collector library, where the build puts it, and the runtime libraries that reveal the vendor. */
const VENDOR_INFO: Record<Vendor, { lib: string; built: string[]; runtime: RegExp; label: string }> = {
  cuda: {
    lib: "librawtrace_cuda.so",
    built: ["cuda/cu13", "cuda/cu135", "cuda/cu12", "cuda/cu118"],
    runtime: /^lib(cuda|cupti)\.so(\.|$)/,
    label: "NVIDIA CUDA (libcuda / libcupti)",
  },
  rocm: {
    lib: "librawtrace_rocm.so",
    built: ["rocm"],
    runtime: /^lib(rocprofiler-sdk|amdhip64)\.so(\.|$)/,
    label: "AMD ROCm (librocprofiler-sdk / libamdhip64)",
  },
  xpu: { lib: "librawtrace_xpu.so", built: ["xpu"], runtime: /^libpti_view\.so(\.|$)/, label: "Intel XPU (libpti_view)" },
  hpu: { lib: "librawtrace_hpu.so", built: ["hpu"], runtime: /^libSynapse\.so(\.|$)/, label: "Habana Gaudi (libSynapse)" },
};

/** Folders searched for vendor runtimes besides `ldconfig -p` and LD_LIBRARY_PATH. */
const KNOWN_LIB_DIRS = [
  "/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
  "/usr/lib/wsl/lib", "/opt/rocm/lib", "/opt/intel/oneapi/pti/latest/lib", "/usr/lib/habanalabs",
];

/** rawtrace's package root (the folder holding its package.json), from this file's location. */
function packageRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) if (existsSync(join(dir, "package.json"))) return dir;
  return null;
}

/**
 * The collector library of `vendor`: `$RAWTRACE_COLLECTOR_DIR/<lib>` when that variable is set (and nothing else),
 * else the package's build output (build/c/cuda/cu13, cu135, cu12, cu118 for CUDA; build/c/rocm, build/c/xpu,
 * build/c/hpu for the others).
 */
export function findCollector(vendor: Vendor, env: NodeJS.ProcessEnv = process.env): string {
  const info = VENDOR_INFO[vendor];
  const override = env.RAWTRACE_COLLECTOR_DIR;
  const candidates: string[] = [];
  if (override) candidates.push(join(resolve(override), info.lib));
  else {
    const root = packageRoot();
    if (root) for (const sub of info.built) candidates.push(join(root, "build", "c", sub, info.lib));
  }
  const found = candidates.find((p) => existsSync(p));
  if (found) return found;
  const make = vendor === "cuda" ? "make -C collectors/cuda TAG=cu13" : `make -C collectors ${vendor}`;
  throw new RawtraceError("NO_COLLECTOR",
    `the ${vendor.toUpperCase()} collector is not built: none of ${candidates.join(", ") || "(no package root)"} ` +
    `exists (run \`${make}\` in the rawtrace checkout, or set RAWTRACE_COLLECTOR_DIR to the folder holding ${info.lib})`);
}

/** Library file names visible to the dynamic loader: `ldconfig -p`, LD_LIBRARY_PATH and {@link KNOWN_LIB_DIRS}. */
function visibleLibraries(env: NodeJS.ProcessEnv): { names: Set<string>; searched: string } {
  const names = new Set<string>();
  const search = env.RAWTRACE_LIB_SEARCH;
  let dirs: string[];
  let searched: string;
  if (search !== undefined) {
    dirs = search.split(delimiter).filter(Boolean);
    searched = `RAWTRACE_LIB_SEARCH=${search}`;
  } else {
    for (const ldconfig of ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]) {
      try {
        const out = execFileSync(ldconfig, ["-p"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
        for (const m of out.matchAll(/^\s+(\S+)\s+\(/gm)) names.add(m[1]);
        break;
      } catch {
        // not at this path (or not allowed): try the next
      }
    }
    dirs = [...(env.LD_LIBRARY_PATH ?? "").split(delimiter).filter(Boolean), ...KNOWN_LIB_DIRS];
    searched = "ldconfig -p, LD_LIBRARY_PATH and " + KNOWN_LIB_DIRS.join(", ");
  }
  for (const d of dirs) {
    try {
      for (const f of readdirSync(d)) names.add(f);
    } catch {
      // a folder that does not exist holds nothing
    }
  }
  return { names, searched };
}

/**
 * Whether `vendor`'s kernel driver made its device nodes: /dev/nvidiactl (NVIDIA), /dev/kfd (AMD), /dev/accel or
 * /dev/hl0 (Habana), a /sys/class/drm render node bound to i915 or xe (Intel). RAWTRACE_DEV_DIR and
 * RAWTRACE_SYS_DIR replace /dev and /sys (tests).
 */
export function hasDeviceNodes(vendor: Vendor, env: NodeJS.ProcessEnv = process.env): boolean {
  const dev = env.RAWTRACE_DEV_DIR ?? "/dev";
  const sys = env.RAWTRACE_SYS_DIR ?? "/sys";
  switch (vendor) {
    case "cuda": return existsSync(join(dev, "nvidiactl"));
    case "rocm": return existsSync(join(dev, "kfd"));
    case "hpu": return existsSync(join(dev, "accel")) || existsSync(join(dev, "hl0"));
    case "xpu": {
      const drm = join(sys, "class", "drm");
      let nodes: string[] = [];
      try {
        nodes = readdirSync(drm).filter((n) => n.startsWith("renderD"));
      } catch {
        return false;
      }
      return nodes.some((n) => {
        try {
          return /^(i915|xe)$/.test(basename(realpathSync(join(drm, n, "device", "driver"))));
        } catch {
          return false;
        }
      });
    }
  }
}

/**
 * The vendor whose runtime libraries are present (see {@link VENDOR_INFO}); RAWTRACE_LIB_SEARCH (folders, ':'
 * separated) replaces the default search. Several found: the one with device nodes ({@link hasDeviceNodes}).
 * None, or several and no single one with a device: a usage error asking for --vendor.
 */
export function detectVendor(env: NodeJS.ProcessEnv = process.env): Vendor {
  const { names, searched } = visibleLibraries(env);
  let found = VENDORS.filter((v) => [...names].some((n) => VENDOR_INFO[v].runtime.test(n)));
  if (found.length > 1) {
    // Runtime libraries travel inside Python wheels (an NVIDIA box with PyTorch or JAX installed can hold a ROCm
    // library too): when several vendors' libraries are visible, the one whose driver made device nodes wins.
    const withDevice = found.filter((v) => hasDeviceNodes(v, env));
    if (withDevice.length === 1) return withDevice[0];
    if (withDevice.length > 1) found = withDevice;
  }
  if (found.length === 1) return found[0];
  if (found.length === 0) {
    throw new RawtraceError("USAGE",
      `no GPU runtime found (searched ${searched} for ${VENDORS.map((v) => VENDOR_INFO[v].label).join("; ")}): ` +
      "pass --vendor cuda|rocm|xpu|hpu");
  }
  throw new RawtraceError("USAGE",
    `several GPU runtimes found (${found.map((v) => VENDOR_INFO[v].label).join("; ")}): pass --vendor ${found.join("|")}`);
}

/** The environment that attaches `vendor`'s collector at `lib` and sends its dumps to `outPattern`. */
export function recordEnv(vendor: Vendor, lib: string, outPattern: string, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, RAWTRACE_OUTPUT: outPattern };
  const preload = () => (base.LD_PRELOAD ? `${lib}:${base.LD_PRELOAD}` : lib);
  switch (vendor) {
    case "cuda":
      env.CUDA_INJECTION64_PATH = lib;
      // NVTX ranges (PyTorch's ProfilerStep#N, user ranges) through the collector's own libcupti; a user's own
      // choice of NVTX injection or activity kinds wins.
      env.NVTX_INJECTION64_PATH = base.NVTX_INJECTION64_PATH || lib;
      env.RAWTRACE_ACTIVITIES = base.RAWTRACE_ACTIVITIES || "default,nvtx";
      break;
    case "rocm": env.ROCP_TOOL_LIBRARIES = base.ROCP_TOOL_LIBRARIES ? `${lib}:${base.ROCP_TOOL_LIBRARIES}` : lib; break;
    case "xpu": env.LD_PRELOAD = preload(); break;
    case "hpu": // Synapse enables its profiler only if HABANA_PROFILE is set (not "0") when it initializes
      env.LD_PRELOAD = preload();
      env.HABANA_PROFILE = base.HABANA_PROFILE && base.HABANA_PROFILE !== "0" ? base.HABANA_PROFILE : "1";
      break;
  }
  return env;
}

/** Options of `rawtrace record`. */
export interface RecordOptions {
  vendor?: string;
  output?: string;
}

const FORWARDED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/** Signals record ends by when they ended its program (the others, as 128 + n). */
const ENDS_BY: readonly string[] = ["SIGINT", "SIGTERM", "SIGHUP"];
let endedBy: NodeJS.Signals | null = null;

/** The signal that ended the last recorded program, when record should end by it too (src/cli.ts); else null. */
export function recordEndedBy(): NodeJS.Signals | null {
  return endedBy;
}

/** `s` as one word of a POSIX shell command line (quoted when it holds anything but plain path characters). */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/**
 * A path of the collector that LD_PRELOAD (and ROCP_TOOL_LIBRARIES) can hold: they split at spaces and ':', so a
 * library under such a folder (a checkout in "My Projects") is reached through a symlink in a fresh folder of the
 * system's temporary directory, removed by the returned `release` when the program has ended.
 */
function loadablePath(lib: string): { path: string; release: () => void } {
  if (!/[\s:]/.test(lib)) return { path: lib, release: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-collector-"));
  const path = join(dir, basename(lib));
  if (/[\s:]/.test(path)) {
    rmSync(dir, { recursive: true, force: true });
    throw new RawtraceError("USAGE", `the collector ${lib} is in a folder whose name has a space or ':', which LD_PRELOAD cannot ` +
      "hold, and so does the temporary folder: set RAWTRACE_COLLECTOR_DIR (or TMPDIR) to a folder without them");
  }
  symlinkSync(lib, path);
  return { path, release: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Throws IO naming `dir` when no file can be created in it (read-only, no permission, /proc): checked before the program runs. */
function checkWritable(dir: string): void {
  const probe = join(dir, `.rawtrace-record-${process.pid}.probe`);
  try {
    closeSync(openSync(probe, "wx", 0o600));
    unlinkSync(probe);
  } catch (e) {
    throw new RawtraceError("IO", `${dir}: the collector could not write its dumps there: ${(e as Error).message}`, dir);
  }
}

/**
 * This run's dumps, sorted: the names its collectors marked in `marks` (RAWTRACE_DUMP_MARKS: each makes an empty file
 * named as its dump when it creates it) that are in `dir`. A run writing into the same folder at the same time marks
 * in its own folder, so its dumps are not listed here.
 */
function markedDumps(marks: string, dir: string): string[] {
  try {
    return readdirSync(marks).filter((f) => f.endsWith(".rawtrace") && existsSync(join(dir, f))).sort();
  } catch {
    return [];
  }
}

/**
 * Runs `command` with the collector attached and returns the exit code to leave with: the program's own, or
 * 128 + n when a signal ended it (127: command not found, 126: not executable).
 */
export async function runRecord(command: string[], opts: RecordOptions): Promise<number> {
  if (command.length === 0) {
    throw new RawtraceError("USAGE", "no command to run: rawtrace record [options] -- <command…>");
  }
  const v = opts.vendor ?? "auto";
  if (v !== "auto" && !(VENDORS as readonly string[]).includes(v)) {
    throw new RawtraceError("USAGE", `unknown vendor '${v}' (cuda, rocm, xpu, hpu or auto)`);
  }
  const vendor = v === "auto" ? detectVendor() : (v as Vendor);
  const found = findCollector(vendor);
  const dir = resolve(opts.output ?? "rawtrace-record");
  // Kept on Ctrl-C: record forwards the signal to the program, whose collector may still write its dump there.
  makeDir(dir, "the output folder", false);
  checkWritable(dir);
  // RAWTRACE_OUTPUT expands %h, %r, %p: a '%' of the folder's own name is written %%.
  const pattern = join(dir.replace(/%/g, "%%"), "rawtrace-%h-rank%r-%p.rawtrace");
  // The run's own marks folder, inside the output folder so that processes on other hosts sharing it mark there too.
  const marks = mkdtempSync(join(dir, ".rawtrace-record-"));
  const lib = vendor === "cuda" ? { path: found, release: () => {} } : loadablePath(found);
  const env = { ...recordEnv(vendor, lib.path, pattern, process.env), RAWTRACE_DUMP_MARKS: marks };
  console.error(`rawtrace: recording ${vendor} with ${found}; dumps go to ${dir}`);
  endedBy = null;

  const child = spawn(command[0], command.slice(1), { env, stdio: "inherit" });
  const forward = (sig: NodeJS.Signals) => () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };
  const handlers = FORWARDED.map((sig) => [sig, forward(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  let code: number;
  try {
    code = await new Promise<number>((done, fail) => {
      child.once("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "ENOENT") {
          console.error(`rawtrace: ${command[0]}: command not found`);
          done(127);
        } else if (e.code === "EACCES") {
          console.error(`rawtrace: ${command[0]}: not executable`);
          done(126);
        } else fail(new RawtraceError("IO", `cannot run ${command[0]}: ${e.message}`));
      });
      child.once("close", (status, signal) => {
        if (signal && ENDS_BY.includes(signal)) endedBy = signal;
        if (signal) done(128 + (constants.signals[signal] ?? 0));
        else done(status ?? 0);
      });
    });
  } finally {
    for (const [sig, h] of handlers) process.off(sig, h);
    lib.release();
  }

  const dumps = markedDumps(marks, dir);
  rmSync(marks, { recursive: true, force: true });
  if (dumps.length === 0) {
    console.error(`rawtrace: no dump was written to ${dir} (the program may not have used the ${vendor} runtime)`);
  } else {
    console.error(`rawtrace: ${dumps.length} dump${dumps.length > 1 ? "s" : ""} in ${dir}:`);
    for (const d of dumps) console.error(`  ${d}`);
    // The commands name this run's dumps (a folder reused across runs holds older ones, and another run may write into
    // it at the same time), quoted for a shell.
    const files = dumps.map((d) => shellWord(join(dir, d))).join(" ");
    console.error("convert with:");
    if (dumps.length === 1) console.error(`  rawtrace convert ${files}`);
    else {
      console.error(`  rawtrace convert ${files} --out-dir ${shellWord(dir)}`);
      console.error(`  rawtrace merge ${files} -o ${shellWord(join(dir, "job.json"))}   (one trace for all ranks)`);
    }
  }
  return code;
}
