/**
 * One benchmark measurement in its own process (so peak RSS is this task's alone). Prints one JSON line:
 * {task, seconds, cpuSeconds (user + system, every thread of the process), bytesIn, bytesOut, events, maxRssMB}.
 *
 *   tsx bench/task.ts <floor|chrome|chrome-file|chrome-gz|chrome-gz0|chrome-gz1|chrome-gz3|chrome-gz6|xspace|peer|hta|xprof> <file.rawtrace>
 *
 * hta and xprof time the real Python clients on our outputs (for context): HTA loading the Chrome JSON
 * (TraceAnalysis), xprof rendering the XSpace as trace_viewer; the conversion before them is not timed. They need the
 * venvs made by scripts/python-env.sh and scripts/xprof-env.sh.
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../src/node/wasm.js";
import { fileSource } from "../src/node/file_source.js";
import type { convertFile } from "../src/node/convert.js";
import { peerConvert } from "./peer_ts.js";

const WINDOW = 4 << 20;
const [task, file] = process.argv.slice(2);
const bytesIn = statSync(file).size;

async function run(): Promise<{ bytesOut: number; events: number }> {
  switch (task) {
    case "floor": {
      // The same reads through the same 4 MiB window in WebAssembly memory, plus one copy out, no decoding.
      const mem = new WebAssembly.Memory({ initial: (2 * WINDOW) / 65536 });
      const win = new Uint8Array(mem.buffer, 0, WINDOW);
      const out = new Uint8Array(mem.buffer, WINDOW, WINDOW);
      const fd = openSync(file, "r");
      let total = 0;
      for (;;) {
        const n = readSync(fd, win, 0, WINDOW, null);
        if (n === 0) break;
        out.set(win.subarray(0, n));
        total += n;
      }
      closeSync(fd);
      return { bytesOut: total, events: 0 };
    }
    case "chrome": {
      const eng = await createEngine();
      const r = await eng.convert(fileSource(file), () => {});
      return { bytesOut: r.bytesOut, events: r.events };
    }
    case "chrome-file":
    case "chrome-gz":
    case "chrome-gz0":
    case "chrome-gz1":
    case "chrome-gz3":
    case "chrome-gz6": {
      // The shipped path: convertFile → FdSink → parallel block gzip (src/node/block_gzip.ts), into a file on tmpfs
      // (its size is the compressed output). chrome-gz: the default level; chrome-gzN: level N (0: rawtrace's encoder).
      // convertFile of the bundle (dist/node/index.js, npm run build) as the CLI runs it: from source, level 0's
      // worker threads would each start tsx first (0.3–0.4 CPU s per thread), which the shipped package never does.
      // chrome-file: the same path writing plain JSON, what the gzip tasks' speed compares with (the chrome task
      // discards its output: it never pays for writing 274 MB, which every real conversion does).
      const gz = task !== "chrome-file";
      const level = task === "chrome-gz" || !gz ? undefined : Number(task.slice("chrome-gz".length));
      const shipped = shippedConvertFile!;
      const dir = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "rawtrace-bench-"));
      try {
        const out = join(dir, gz ? "out.json.gz" : "out.json");
        const r = await shipped(file, out, gz ? { gzip: true, gzipLevel: level } : {});
        return { bytesOut: statSync(out).size, events: r.events };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    case "xspace": {
      const eng = await createEngine();
      const res = await eng.convert(fileSource(file), () => {}, { format: "xspace" });
      return { bytesOut: res.bytesOut, events: res.events };
    }
    case "peer": {
      let outBytes = 0;
      const events = peerConvert(file, (s) => { outBytes += Buffer.byteLength(s); });
      return { bytesOut: outBytes, events };
    }
  }
  throw new Error(`unknown task ${task}`);
}

/** Converts `file` into `path` (not timed: the clients' own time is what is measured). */
async function convertTo(path: string, format: "chrome" | "xspace"): Promise<number> {
  const eng = await createEngine();
  const fd = openSync(path, "w");
  const r = await eng.convert(fileSource(file), (b) => { writeSync(fd, b); }, { format });
  closeSync(fd);
  return r.events;
}

// The gzip tasks' package is loaded before the clock starts, as the other tasks' modules are (static imports): under
// tsx, loading the bundle goes through its loader hooks and took 0.2–0.3 s, which is start-up, not conversion.
let shippedConvertFile: typeof convertFile | null = null;
if (task.startsWith("chrome-gz") || task === "chrome-file") {
  const bundle = new URL("../dist/node/index.js", import.meta.url);
  if (!existsSync(bundle)) throw new Error(`${task} runs the built package: ${bundle.pathname} is missing (npm run build)`);
  shippedConvertFile = ((await import(bundle.href)) as { convertFile: typeof convertFile }).convertFile;
}

let t0 = performance.now();
const cpu0 = process.cpuUsage();
let r: { bytesOut: number; events: number };
if (task === "hta" || task === "xprof") {
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-bench-"));
  try {
    if (task === "hta") {
      const events = await convertTo(join(dir, "rank-0.json"), "chrome");
      t0 = performance.now();
      execFileSync(".venv/bin/python", ["-c", "import sys\nfrom hta.trace_analysis import TraceAnalysis\nTraceAnalysis(trace_dir=sys.argv[1])", dir], { stdio: "ignore" });
      r = { bytesOut: statSync(join(dir, "rank-0.json")).size, events };
    } else {
      const run = join(dir, "plugins", "profile", "2026_11_22_00_00_00");
      mkdirSync(run, { recursive: true });
      const pb = join(run, "bench.xplane.pb");
      const events = await convertTo(pb, "xspace");
      t0 = performance.now();
      execFileSync(".venv-xprof/bin/python", ["-c", "import sys\nfrom xprof.convert import raw_to_tool_data as r\nr.xspace_to_tool_data([sys.argv[1]], 'trace_viewer', {'use_saved_result': False})", pb], { stdio: "ignore" });
      r = { bytesOut: statSync(pb).size, events };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else r = await run();
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ task, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, bytesIn, ...r, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
