/**
 * The CUDA collector (collectors/cuda) end to end, without a GPU.
 *
 * Builds the collector, the CUPTI test double (test/collectors/fake_cupti.c, compiled against the real CUDA 12 and
 * 13 headers so its records are the real structs) and the test program (test/collectors/cuda_app.c) with
 * `make -C collectors/cuda TAG=<tag> test-bins`, runs each scenario of the program with the collector loaded the
 * way a user would (CUDA_INJECTION64_PATH-style InitializeInjection, LD_PRELOAD, or the explicit API), and converts
 * the .rawtrace it wrote with the real core. The program prints every event it made (JSON lines); the trace must
 * hold exactly those, with the same names, correlation ids and timestamps. Also checks the container itself
 * (chunk order, STRINGS before the ACTIVITY that needs them, KIND_SIZES = the real struct sizes, DROPPED reasons,
 * LOG chunks) and the failure paths: memory cap, signals, kill -9, write errors, CUPTI errors.
 *
 * Needs build/rawtrace.wasm (npm run build:wasm; scripts/test.sh builds it).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { closeSync, constants as fsConstants, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine } from "../../src/node/wasm.js";
import { fifoReader } from "../helpers/fifo_reader.js";
import { readDumpChunks } from "../helpers/dump_chunks.js";
import { ChunkType, DropReason } from "../../src/format/container.js";
import { fileSource } from "../../src/node/file_source.js";
import type { ConvertResult, Engine } from "../../src/core/engine.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/cuda");
const APP = join(BUILD, "cuda_app");
const TAGS = ["cu12", "cu13", "cu135"] as const;
type Tag = (typeof TAGS)[number];
const lib = (tag: Tag) => join(BUILD, tag, "librawtrace_cuda.so");
const fake = (tag: Tag) => join(BUILD, tag, "libcupti_fake.so");

/** CUPTI API version of each header set (cupti_version.h), as the fake reports it. */
const CUPTI_VERSION: Record<Tag, number> = { cu12: 28, cu13: 130001, cu135: 130500 };
/** sizeof of the structs the fake writes, per kind (the real CUDA 12.9 / 13.0U1 / 13.5 structs). */
const SIZES: Record<Tag, Record<number, number>> = {
  cu12: { 1: 96, 2: 88, 3: 208, 4: 40, 5: 40, 8: 184, 9: 32, 10: 208, 11: 32, 12: 56, 13: 32, 17: 56, 22: 96,
    36: 56, 37: 24, 38: 56, 39: 24, 48: 40 },
  cu13: { 1: 96, 2: 88, 3: 216, 4: 40, 5: 40, 8: 184, 9: 32, 10: 216, 11: 32, 12: 56, 13: 40, 17: 56, 22: 96,
    36: 56, 37: 24, 38: 56, 39: 24, 48: 40 },
  cu135: { 1: 112, 2: 104, 3: 248, 4: 40, 5: 40, 8: 192, 9: 40, 10: 248, 11: 32, 12: 56, 13: 40, 17: 56, 22: 96,
    36: 80, 37: 24, 38: 56, 39: 24, 48: 40 },
};

let dir = "";
let engine: Engine | null = null;

// ---- running the program ---------------------------------------------------------------------------------------

type Ev = Record<string, any>;
interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  events: Ev[];
  stderr: string;
  pid: number;
}

/** The environment of one run: the caller's, minus anything that would steer the collector, plus `extra`. */
function envFor(tag: Tag, name: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (/^(RAWTRACE_|FAKE_CUPTI_|RT_APP_)/.test(k) || /^(CUDA_INJECTION64_PATH|NVTX_INJECTION64_PATH|LD_PRELOAD|RANK|LOCAL_RANK|WORLD_SIZE)$/.test(k)) {
      delete env[k];
    }
  }
  env.RT_APP_COLLECTOR = lib(tag);
  env.RAWTRACE_CUPTI_LIB = fake(tag);
  env.RAWTRACE_CUDA_DRIVER_LIB = fake(tag);
  env.RAWTRACE_OUTPUT = join(dir, `${tag}-${name}-%p.rawtrace`);
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

function parseLines(text: string): Ev[] {
  return text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

function runSync(tag: Tag, scenario: string, name: string, extra: Record<string, string | undefined> = {}): Run {
  const r = spawnSync(APP, [scenario], { env: envFor(tag, name, extra), encoding: "utf8", timeout: 120_000 });
  const events = parseLines(r.stdout ?? "");
  const loaded = events.find((e) => e.ev === "loaded");
  return { status: r.status, signal: r.signal, events, stderr: r.stderr ?? "", pid: loaded?.pid ?? -1 };
}

/** Runs asynchronously; `onEvent` sees each stdout line and may signal the child. */
function runAsync(
  tag: Tag, scenario: string, name: string, extra: Record<string, string | undefined>,
  onEvent: (e: Ev, child: ReturnType<typeof spawn>) => void,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(APP, [scenario], { env: envFor(tag, name, extra), stdio: ["ignore", "pipe", "pipe"] });
    const events: Ev[] = [];
    let buf = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      buf += d;
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (!line.startsWith("{")) continue;
        const e = JSON.parse(line);
        events.push(e);
        onEvent(e, child);
      }
    });
    child.stderr!.on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, events, stderr, pid: child.pid ?? -1 });
    });
  });
}

const outPath = (tag: Tag, name: string, pid: number) => join(dir, `${tag}-${name}-${pid}.rawtrace`);

function ok(run: Run, what: string): void {
  assert.is(run.signal, null, `${what}: killed by ${run.signal}; stderr:\n${run.stderr}`);
  assert.is(run.status, 0, `${what}: exit ${run.status}; stderr:\n${run.stderr}`);
  assert.ok(run.events.some((e) => e.ev === "done"), `${what}: no "done" line; stderr:\n${run.stderr}`);
}

const one = (run: Run, ev: string): Ev => {
  const e = run.events.find((x) => x.ev === ev);
  assert.ok(e, `no ${ev} line in the program's output`);
  return e!;
};

// ---- converting ------------------------------------------------------------------------------------------------

interface Converted {
  r: ConvertResult;
  trace: { traceEvents: Ev[]; rawtrace: Ev; [k: string]: any };
  base: bigint;
}

async function convert(path: string, allApi = false): Promise<Converted> {
  engine ??= await createEngine();
  const parts: Buffer[] = [];
  const r = await engine.convert(fileSource(path), (b) => parts.push(Buffer.from(b)), { allApi });
  const text = Buffer.concat(parts).toString("utf8");
  const m = /"baseTimeNanoseconds":(\d+)/.exec(text);
  assert.ok(m, "no baseTimeNanoseconds in the output");
  return { r, trace: JSON.parse(text), base: BigInt(m![1]) };
}

const byCat = (c: Converted, cat: string) => c.trace.traceEvents.filter((e) => e.cat === cat && e.ph === "X");

/** Checks a trace event's ts/dur (µs from the base, ns precision) against vendor ns strings. */
function assertTimes(e: Ev, start: string, end: string, base: bigint, what: string): void {
  const ts = Number(BigInt(start) - base) / 1000;
  const dur = Number(BigInt(end) - BigInt(start)) / 1000;
  assert.ok(Math.abs(e.ts - ts) < 0.0011, `${what}: ts ${e.ts} != ${ts}`);
  assert.ok(Math.abs(e.dur - dur) < 0.0011, `${what}: dur ${e.dur} != ${dur}`);
}

// ---- reading the container directly ----------------------------------------------------------------------------

interface Chunk {
  type: number;
  seq: number;
  off: number;
  p: Buffer;
}
const T = { HEADER: 1, CLOCK: 2, KIND_SIZES: 3, API_NAMES: 4, ACTIVITY: 5, STRINGS: 6, DEVICES: 7, DROPPED: 8,
  THREAD_NAMES: 9, END: 10, LOG: 11 } as const;

/** Complete chunks of a file, in order (stops at the first incomplete or unsynchronized one). */
function chunks(path: string): Chunk[] {
  const b = readFileSync(path);
  assert.is(b.subarray(0, 8).toString("latin1"), "RAWTRACE");
  const out: Chunk[] = [];
  let off = 16;
  while (off + 24 <= b.length && b.readUInt32LE(off) === 0x4b435452) {
    const len = b.readUInt32LE(off + 12);
    if (off + 24 + len > b.length) break;
    out.push({ type: b.readUInt16LE(off + 4), seq: b.readUInt32LE(off + 8), off, p: b.subarray(off + 24, off + 24 + len) });
    off += 24 + len + ((8 - (len % 8)) % 8);
  }
  return out;
}

function readStrings(p: Buffer): Array<[bigint, string]> {
  const n = p.readUInt32LE(0);
  const out: Array<[bigint, string]> = [];
  let o = 4;
  for (let i = 0; i < n; i++) {
    const ptr = p.readBigUInt64LE(o);
    const len = p.readUInt32LE(o + 8);
    out.push([ptr, p.subarray(o + 12, o + 12 + len).toString("utf8")]);
    o += 12 + len;
  }
  return out;
}

function readKindSizes(p: Buffer): Map<number, number> {
  const m = new Map<number, number>();
  const n = p.readUInt32LE(0);
  for (let i = 0; i < n; i++) m.set(p.readUInt32LE(4 + 8 * i), p.readUInt32LE(8 + 8 * i));
  return m;
}

function readLog(p: Buffer): { level: number; msg: string } {
  const len = p.readUInt32LE(4);
  return { level: p.readUInt32LE(0), msg: p.subarray(8, 8 + len).toString("utf8") };
}

/** Sum of DROPPED counts per reason. */
function dropped(cs: Chunk[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const c of cs.filter((c) => c.type === T.DROPPED)) {
    const reason = c.p.readUInt32LE(8);
    out[reason] = (out[reason] ?? 0) + Number(c.p.readBigUInt64LE(0));
  }
  return out;
}

/**
 * Every pointer field the collector must resolve (kernel names, NVTX names and domains) appears in a STRINGS chunk
 * written before the ACTIVITY chunk holding the record. Returns the strings in force for each pointer, in order.
 */
function assertStringsBeforeActivity(cs: Chunk[]): Map<bigint, string[]> {
  const sizes = readKindSizes(cs.find((c) => c.type === T.KIND_SIZES)!.p);
  const known = new Map<bigint, string[]>();
  let checked = 0;
  for (const c of cs) {
    if (c.type === T.STRINGS) {
      for (const [ptr, s] of readStrings(c.p)) known.set(ptr, [...(known.get(ptr) ?? []), s]);
    } else if (c.type === T.ACTIVITY) {
      let o = 0;
      while (o + 4 <= c.p.length) {
        const kind = c.p.readUInt32LE(o);
        const size = sizes.get(kind);
        assert.ok(size, `record of kind ${kind} without a size in KIND_SIZES`);
        const ptrs: bigint[] = [];
        if ((kind === 3 || kind === 10) && size! >= 112) ptrs.push(c.p.readBigUInt64LE(o + 104));
        if (kind === 12 && size! >= 56) ptrs.push(c.p.readBigUInt64LE(o + 40), c.p.readBigUInt64LE(o + 48));
        if (kind === 11 && size! >= 32) ptrs.push(c.p.readBigUInt64LE(o + 24));
        for (const ptr of ptrs) {
          if (ptr === 0n) continue;
          assert.ok(known.has(ptr), `pointer 0x${ptr.toString(16)} (kind ${kind}, chunk ${c.seq}) used before any STRINGS`);
          checked++;
        }
        o += size!;
      }
      assert.is(o, c.p.length, `ACTIVITY chunk ${c.seq} is not a whole number of records`);
    }
  }
  assert.ok(checked > 0, "no pointer field checked");
  return known;
}

// ---- setup -----------------------------------------------------------------------------------------------------

test.before(() => {
  for (const tag of TAGS) {
    execFileSync("make", ["-s", "-C", join(ROOT, "collectors/cuda"), `TAG=${tag}`, "test-bins"], { stdio: "pipe" });
  }
  dir = mkdtempSync(join(tmpdir(), "rawtrace-cuda-"));
});

test.after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("the collector library exports only its entry points", () => {
  for (const tag of TAGS) {
    const syms = execFileSync("nm", ["-D", "--defined-only", lib(tag)], { encoding: "utf8" })
      .split("\n").map((l) => l.trim().split(/\s+/)[2]).filter(Boolean).sort();
    assert.equal(syms, ["InitializeInjection", "InitializeInjectionNvtx2", "rawtrace_flush", "rawtrace_get_stats", "rawtrace_pop_external_id",
      "rawtrace_push_external_id", "rawtrace_start", "rawtrace_stop"], tag);
    const needed = execFileSync("readelf", ["-d", lib(tag)], { encoding: "utf8" });
    assert.not.match(needed, /libcupti|libcuda/, `${tag}: must not link CUPTI or the driver`);
  }
});

// ---- basic: exact events -----------------------------------------------------------------------------------------

async function checkBasic(tag: Tag, load: string, extra: Record<string, string> = {}): Promise<{ run: Run; cs: Chunk[] }> {
  const name = `basic-${load}`;
  const run = runSync(tag, "basic", name, {
    RT_APP_LOAD: load, LD_PRELOAD: load === "preload" || load === "both" ? lib(tag) : undefined,
    RAWTRACE_ACTIVITIES: "default,nvtx", RANK: "3", WORLD_SIZE: "8",
    RAWTRACE_OUTPUT: join(dir, `${tag}-${name}-%r-%h-%p.rawtrace`), ...extra,
  });
  ok(run, `${tag} basic (${load})`);
  const loaded = one(run, "loaded");
  assert.is(one(run, "fake").loaded_by_collector, true, "the collector loads libcupti itself");
  const path = join(dir, `${tag}-${name}-3-${hostname()}-${run.pid}.rawtrace`);
  assert.ok(readdirSync(dir).includes(`${tag}-${name}-3-${hostname()}-${run.pid}.rawtrace`), "RAWTRACE_OUTPUT %r %h %p");
  const c = await convert(path);
  const { r, trace, base } = c;

  // header facts
  assert.is(r.info.vendor, "cuda");
  assert.is(r.info.vendorVersion, CUPTI_VERSION[tag]);
  assert.is(r.info.runtimeVersion, 12090);
  assert.is(r.info.driverVersion, 13000);
  assert.is(r.info.pid, run.pid);
  assert.is(r.info.rank, 3);
  assert.is(r.info.worldSize, 8);
  assert.is(r.info.hostname, hostname());
  assert.equal(r.info.commandLine, [APP, "basic"]);
  assert.is(r.info.complete, true);
  assert.is(r.info.droppedRecords, 5);
  assert.is(trace.rawtrace.dropped_records, 5);
  assert.is(r.info.devices.length, 1);
  assert.is(r.info.devices[0].name, "Fake H100 80GB HBM3");
  assert.is(r.info.devices[0].multiprocessors, 132);
  assert.is(r.info.devices[0].memoryBandwidth, 2619000 * 1000 * (5120 / 8) * 2);
  assert.is(r.info.devices[0].computeCapability, "9.0");
  assert.is(r.info.devices[0].uuid, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
  assert.is(trace.deviceProperties[0].sharedMemPerBlockOptin, 232448);
  assert.equal(r.info.warnings.map((w) => w.code), ["DROPPED_RECORDS"]);

  // exactly the kernels the program made: names, correlation ids, streams, timestamps
  const kernels = byCat(c, "kernel");
  const want = run.events.filter((e) => e.ev === "kernel");
  assert.is(kernels.length, want.length, "kernel count");
  for (const w of want) {
    const k = kernels.filter((e) => e.args.correlation === w.corr);
    assert.is(k.length, 1, `kernel for correlation ${w.corr}`);
    assert.is(k[0].name, w.name);
    assert.is(k[0].tid, w.stream);
    assert.is(k[0].pid, 0);
    assertTimes(k[0], w.start, w.end, base, `kernel ${w.name}`);
  }
  assert.ok(kernels.some((k) => k.name === "mutable_kernel_v1") && kernels.some((k) => k.name === "mutable_kernel_v2"),
    "a name pointer reused with other bytes resolves to both names");

  const runtime = byCat(c, "cuda_runtime");
  const wantRt = run.events.filter((e) => e.ev === "runtime");
  for (const w of wantRt) {
    const e = runtime.find((x) => x.args.correlation === w.corr);
    assert.ok(e, `runtime call ${w.corr}`);
    assert.is(e!.name, "cudaLaunchKernel");
    assert.is(e!.pid, run.pid);
    assert.is(e!.tid, loaded.tid, "thread ids are system tids (cuptiSetThreadIdType)");
    assertTimes(e!, w.start, w.end, base, "cudaLaunchKernel");
  }
  assert.equal(runtime.map((e) => e.name).sort(), [
    ...wantRt.map(() => "cudaLaunchKernel"), "cudaDeviceSynchronize", "cudaMemcpy", "cudaMemset"].sort(),
  "runtime calls (cudaGetDevice is turned off in CUPTI, as Kineto does)");
  assert.is(r.info.records.RUNTIME, wantRt.length + 3, "no cudaGetDevice record at all");

  const drv = one(run, "driver");
  const cu = byCat(c, "cuda_driver");
  assert.is(cu.length, 1);
  assert.is(cu[0].name, "cuLaunchKernel");
  assert.is(cu[0].args.correlation, drv.corr);
  assertTimes(cu[0], drv.start, drv.end, base, "cuLaunchKernel");

  const mc = one(run, "memcpy");
  const memcpys = byCat(c, "gpu_memcpy");
  assert.is(memcpys.length, 1);
  assert.is(memcpys[0].name, "Memcpy HtoD (Pageable -> Device)");
  assert.is(memcpys[0].args.bytes, mc.bytes);
  assert.is(memcpys[0].args.correlation, mc.corr);
  assertTimes(memcpys[0], mc.start, mc.end, base, "memcpy");
  const ms = one(run, "memset");
  const memsets = byCat(c, "gpu_memset");
  assert.is(memsets.length, 1);
  assert.is(memsets[0].args.correlation, ms.corr);
  assertTimes(memsets[0], ms.start, ms.end, base, "memset");
  const sy = one(run, "sync");
  const syncs = byCat(c, "cuda_sync");
  assert.is(syncs.length, 1);
  assert.is(syncs[0].name, "Context Sync");
  assert.is(syncs[0].args.correlation, sy.corr);
  assertTimes(syncs[0], sy.start, sy.end, base, "sync");

  const ext = one(run, "external");
  for (const e of trace.traceEvents.filter((x) => x.args?.correlation === ext.corr && x.ph === "X")) {
    assert.is(e.args["External id"], 4242, `${e.cat} of the pushed external id`);
  }
  assert.is(trace.traceEvents.filter((x) => x.args?.["External id"] !== undefined).length, 2);

  const rg = one(run, "range");
  const ranges = byCat(c, "user_annotation");
  assert.is(ranges.length, 1);
  assert.is(ranges[0].name, "step 1");
  assert.is(ranges[0].args.domain, "train");
  assert.is(ranges[0].tid, loaded.tid);
  assertTimes(ranges[0], rg.start, rg.end, base, "NVTX range");

  const meta = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => e.args.name);
  assert.ok(meta.includes(`thread ${loaded.tid} (cuda_app)`), `THREAD_NAMES: ${meta}`);
  assert.ok(meta.includes("stream 7 (compute-stream)"), `NVTX stream name: ${meta}`);

  // flows: every launch starts one, every GPU op ends one
  const flows = trace.traceEvents.filter((e) => e.cat === "ac2g");
  assert.is(flows.filter((e) => e.ph === "s").length, wantRt.length + 1 + 3);
  assert.is(flows.filter((e) => e.ph === "f").length, want.length + 3);

  // the container as written
  const cs = chunks(path);
  assert.is(cs[0].type, T.HEADER);
  assert.is(cs[1].type, T.CLOCK);
  assert.is(cs[1].p.readUInt32LE(0), 0, "START anchor");
  assert.is(cs.filter((x) => x.type === T.HEADER).length, 1, "started once");
  assert.is(cs[cs.length - 1].type, T.END);
  assert.is(cs.filter((x) => x.type === T.END).length, 1, "one END (the forked child wrote nothing)");
  assert.is(cs[cs.length - 2].type, T.CLOCK);
  assert.is(cs[cs.length - 2].p.readUInt32LE(0), 1, "END anchor");
  cs.forEach((x, i) => assert.is(x.seq, i, "sequence numbers"));
  const sizes = readKindSizes(cs.find((x) => x.type === T.KIND_SIZES)!.p);
  assert.equal(Object.fromEntries(sizes), SIZES[tag], "KIND_SIZES measured with cuptiActivityGetNextRecord");
  const apiNames = cs.find((x) => x.type === T.API_NAMES)!.p;
  assert.ok(apiNames.includes(Buffer.from("cudaLaunchKernel_v7000")) && apiNames.includes(Buffer.from("cuLaunchKernel")));
  const known = assertStringsBeforeActivity(cs);
  const mutable = [...known.values()].find((v) => v.includes("mutable_kernel_v1"));
  assert.equal(mutable, ["mutable_kernel_v1", "mutable_kernel_v2"], "same pointer written again with its new bytes");
  const allStrings = [...known.values()].flat();
  assert.is(new Set(allStrings).size, allStrings.length, "each string written once");
  assert.equal(dropped(cs), { 1: 5 });
  assert.is(cs.filter((x) => x.type === T.DEVICES).length, 1);
  assert.is(cs.filter((x) => x.type === T.THREAD_NAMES).length, 1);
  assert.not.match(run.stderr, /: error: /);
  return { run, cs };
}

test("basic, CUDA 13 headers, loaded by InitializeInjection: every event exactly as made", async () => {
  await checkBasic("cu13", "inject");
});

test("basic, CUDA 13.5 headers (Kernel13, Memcpy7, Memset5), LD_PRELOAD: every event exactly as made", async () => {
  await checkBasic("cu135", "preload");
});

test("basic, CUDA 12 headers, LD_PRELOAD plus InitializeInjection: starts once; a kind CUPTI refuses is logged", async () => {
  const { cs, run } = await checkBasic("cu12", "both", { FAKE_CUPTI_FAIL: "cuptiActivityEnable:22" });
  const logs = cs.filter((x) => x.type === T.LOG).map((x) => readLog(x.p));
  const refused = logs.filter((l) => /cuptiActivityEnable\(kind 22\)/.test(l.msg));
  assert.is(refused.length, 1, JSON.stringify(logs));
  assert.is(refused[0].level, 1, "a warning");
  assert.match(run.stderr, /warning: cuptiActivityEnable\(kind 22\) failed/);
});

test("explicit API: rawtrace_start from a dlopen'ed collector", async () => {
  const run = runSync("cu13", "plain", "api", { RT_APP_LOAD: "api" });
  ok(run, "api");
  assert.is(one(run, "loaded").rc, 0);
  const { r } = await convert(outPath("cu13", "api", run.pid));
  assert.is(r.info.records.CONCURRENT_KERNEL, 100);
  assert.is(r.info.records.RUNTIME, 100);
  assert.is(r.info.complete, true);
});

test("NVTX_INJECTION64_PATH = the collector: NVTX's init reaches the libcupti the collector records through", async () => {
  const run = runSync("cu13", "plain", "nvtx", { RT_APP_LOAD: "inject", RT_APP_NVTX: "1", RAWTRACE_ACTIVITIES: "default,nvtx" });
  ok(run, "nvtx");
  const n = one(run, "nvtx");
  assert.is(n.rc, 1, "CUPTI's answer passed back to NVTX");
  assert.is(n.cupti_calls, 1);
  assert.is(n.cupti_arg, 0x5eed, "NVTX's export table handed over unchanged");
  assert.is(one(run, "fake").loaded_by_collector, true, "the same libcupti instance");
  const { r } = await convert(outPath("cu13", "nvtx", run.pid));
  assert.is(r.info.complete, true);
});

// ---- many threads --------------------------------------------------------------------------------------------------

for (const tag of TAGS) {
  test(`${tag}: 8 threads × 10k launches at once`, async () => {
    const run = runSync(tag, "threads", "threads", { RAWTRACE_BUFFER_SIZE: "1M" });
    ok(run, "threads");
    const threads = run.events.filter((e) => e.ev === "thread");
    assert.is(threads.length, 8);
    const c = await convert(outPath(tag, "threads", run.pid));
    assert.is(c.r.info.complete, true);
    assert.equal(c.r.info.warnings, []);
    const kernels = byCat(c, "kernel");
    const launches = byCat(c, "cuda_runtime");
    assert.is(kernels.length, 80000);
    assert.is(launches.length, 80000);
    const kc = new Set(kernels.map((k) => k.args.correlation));
    const rc = new Set(launches.map((k) => k.args.correlation));
    assert.is(kc.size, 80000, "unique correlation ids");
    for (const id of kc) assert.ok(rc.has(id), `kernel ${id} has its launch`);
    for (const t of threads) {
      const mine = launches.filter((e) => e.tid === t.tid);
      assert.is(mine.length, 10000, `launches of ${t.name}`);
      assert.ok(kernels.filter((k) => k.tid === 100 + t.index).length === 10000, `kernels on stream ${100 + t.index}`);
    }
    const meta = c.trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => e.args.name);
    for (const t of threads) assert.ok(meta.includes(`thread ${t.tid} (${t.name})`), `thread name of ${t.name}`);
    const names = new Set(kernels.map((k) => k.name));
    assert.equal([...names].sort(), ["gemm_f16", "layernorm", "relu", "softmax"]);
    assertStringsBeforeActivity(chunks(outPath(tag, "threads", run.pid)));
  });
}

// ---- memory cap ----------------------------------------------------------------------------------------------------

test("memory cap, CUPTI that takes a NULL buffer (≥ 27): refused buffers and CUPTI's lost records are counted", async () => {
  const run = runSync("cu13", "exhaust", "cap", { RAWTRACE_BUFFER_SIZE: "64K", RAWTRACE_MAX_MEMORY: "300K" });
  ok(run, "exhaust");
  const em = one(run, "emitted");
  const st = one(run, "stats");
  const per = em.per_buffer;
  assert.is(st.refused, 6);
  assert.is(st.fake_refusals, 6);
  const path = outPath("cu13", "cap", run.pid);
  const cs = chunks(path);
  assert.equal(dropped(cs), { 1: 6 * per, 2: 6 }, "reason 1: records CUPTI lost; reason 2: buffers refused");
  const { r, trace } = await convert(path);
  assert.is(r.info.records.CONCURRENT_KERNEL, 4 * per, "the 4 buffers under the cap are all there");
  assert.is(r.info.droppedRecords, 6 * per + 6);
  assert.is(trace.rawtrace.dropped_records, 6 * per + 6);
  assert.ok(r.info.warnings.some((w) => w.code === "DROPPED_RECORDS"));
});

test("memory cap, older CUPTI (no NULL buffers): emergency reserve, never NULL, overflow discarded and counted", async () => {
  const run = runSync("cu13", "exhaust", "cap-old", {
    RAWTRACE_BUFFER_SIZE: "64K", RAWTRACE_MAX_MEMORY: "300K", FAKE_CUPTI_VERSION: "18",
  });
  ok(run, "exhaust on CUPTI 18 (the fake aborts on a NULL buffer)");
  const per = one(run, "emitted").per_buffer;
  const st = one(run, "stats");
  assert.is(st.refused, 0);
  assert.is(st.fake_refusals, 0);
  assert.is(st.discarded, 6);
  const path = outPath("cu13", "cap-old", run.pid);
  assert.equal(dropped(chunks(path)), { 2: 6 });
  const { r } = await convert(path);
  assert.is(r.info.vendorVersion, 18);
  assert.is(r.info.records.CONCURRENT_KERNEL, 4 * per);
  assert.is(r.info.droppedRecords, 6);
});

// ---- collection windows ----------------------------------------------------------------------------------------

test("RAWTRACE_SIGNAL=USR2: starts stopped, each signal toggles; only the records while on are kept", async () => {
  const run = runSync("cu13", "signal", "signal", { RAWTRACE_SIGNAL: "USR2" });
  ok(run, "signal");
  assert.is(one(run, "enabled_at_start").on, 0);
  const path = outPath("cu13", "signal", run.pid);
  const c = await convert(path);
  assert.equal(byCat(c, "kernel").map((k) => k.name).sort(), ["again_0", "between_0", "between_1", "between_2"]);
  const c2 = await convert(path, true);
  assert.equal(byCat(c2, "cuda_runtime").map((e) => e.name), Array(4).fill("cudaLaunchKernel"),
    "no cudaGetDevice after the second start either (even with allApi)");
  const clocks = chunks(path).filter((x) => x.type === T.CLOCK).map((x) => x.p.readUInt32LE(0));
  assert.equal(clocks, [0, 2, 2, 2, 1], "START, PERIODIC at each stop and restart, END");
});

test("RAWTRACE_START_DELAY / RAWTRACE_DURATION: only the records inside the window", async () => {
  const run = runSync("cu12", "window", "window", { RAWTRACE_START_DELAY: "0.5", RAWTRACE_DURATION: "0.4" });
  ok(run, "window");
  const w = one(run, "window");
  assert.ok(w.start_after_s >= 0.45, `started after ${w.start_after_s} s`);
  assert.ok(w.duration_s >= 0.35, `ran ${w.duration_s} s`);
  const c = await convert(outPath("cu12", "window", run.pid));
  assert.equal(byCat(c, "kernel").map((k) => k.name).sort(), ["during_0", "during_1", "during_2"]);
});

// ---- abrupt ends -----------------------------------------------------------------------------------------------

test("kill -9 mid-run: the file converts up to its last complete chunk", async () => {
  let flushed = 0;
  const run = await runAsync("cu13", "kill9", "kill9", { RAWTRACE_BUFFER_SIZE: "256K" }, (e, child) => {
    if (e.ev === "batch") {
      flushed = e.kernels;
      if (e.batch === 5) child.kill("SIGKILL");
    }
  });
  assert.is(run.signal, "SIGKILL");
  const path = outPath("cu13", "kill9", run.pid);
  const c = await convert(path);
  assert.is(c.r.info.complete, false, "no END after kill -9");
  const kernels = byCat(c, "kernel").length;
  assert.ok(kernels >= flushed, `${kernels} kernels, ${flushed} were flushed before the kill`);
  assert.ok(byCat(c, "kernel").every((k) => k.name === "batch_kernel"));

  // cut inside the last ACTIVITY chunk: still converts, with fewer records and a truncation warning
  const cs = chunks(path);
  const lastAct = [...cs].reverse().find((x) => x.type === T.ACTIVITY)!;
  const cut = join(dir, "kill9-cut.rawtrace");
  writeFileSync(cut, readFileSync(path).subarray(0, lastAct.off + 24 + 1000));
  const c2 = await convert(cut);
  assert.is(c2.r.info.complete, false);
  assert.ok(byCat(c2, "kernel").length < kernels);
  assert.ok(c2.r.info.warnings.length > 0);
});

test("SIGTERM (default action): flushed, END written, then the process dies of SIGTERM", async () => {
  let expected = -1;
  const run = await runAsync("cu12", "sigterm", "sigterm", {}, (e, child) => {
    if (e.ev === "ready") {
      expected = e.kernels;
      child.kill("SIGTERM");
    }
  });
  assert.is(run.signal, "SIGTERM", `stderr:\n${run.stderr}`);
  assert.is(expected, 3000);
  const c = await convert(outPath("cu12", "sigterm", run.pid));
  assert.is(c.r.info.complete, true);
  assert.is(byCat(c, "kernel").length, 3000, "every record, also those still in CUPTI's current buffer");
});

test("SIGTERM with the program's own handler: chained, the program goes on, exit flush at the end", async () => {
  const run = await runAsync("cu13", "sigterm_chain", "sigterm-chain", {}, (e, child) => {
    if (e.ev === "ready") child.kill("SIGTERM");
  });
  assert.is(run.signal, null);
  assert.is(run.status, 0, run.stderr);
  assert.is(one(run, "after_term").kernels, 3010);
  const c = await convert(outPath("cu13", "sigterm-chain", run.pid));
  assert.is(c.r.info.complete, true);
  assert.is(byCat(c, "kernel").length, 3010);
});

test("exit() from a thread while four threads keep launching into a slow output: the exit flush is not starved, END is written", async () => {
  // The writer used to drain its queue until empty before looking at the exit request; with buffers arriving faster
  // than the output takes them it never was, so the exit waited the whole RAWTRACE_EXIT_TIMEOUT and the file had no
  // END. The output here is a FIFO that a reader drains at ≈ 30 MB/s into a file.
  const fifo = join(dir, "busy.fifo");
  const copy = join(dir, "busy-copy.rawtrace");
  const closed = fifoReader(fifo, copy, { pauseS: 0.002 });
  const run = runSync("cu13", "exit_busy", "exit-busy", {
    RAWTRACE_OUTPUT: fifo, RAWTRACE_BUFFER_SIZE: "256K", RAWTRACE_MAX_MEMORY: "4M", RAWTRACE_EXIT_TIMEOUT: "20",
  });
  await closed;
  assert.is(run.status, 0, run.stderr);
  assert.ok(run.events.some((e) => e.ev === "exiting"), run.stderr);
  assert.not.match(run.stderr, /did not finish/);
  const c = await convert(copy);
  assert.is(c.r.info.complete, true, "END written");
  assert.ok(byCat(c, "kernel").length > 0);
});

test("a FIFO nobody reads: the program is not blocked; one line says why nothing is recorded", () => {
  const fifo = join(dir, "unread.fifo");
  execFileSync("mkfifo", [fifo]);
  const run = runSync("cu13", "plain", "fifo", { RAWTRACE_OUTPUT: fifo });
  ok(run, "FIFO without reader");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /cannot create .*unread\.fifo: no process is reading that FIFO/);
});

test("a FIFO another process writes (a child with the same RAWTRACE_OUTPUT): one line, nothing interleaved into it", async () => {
  const fifo = join(dir, "taken.fifo");
  execFileSync("mkfifo", [fifo]);
  // A shell that opens the FIFO (read and write: it does not block) and holds the writer's lock, as a first collector does.
  const holder = spawn("bash", ["-c", `exec 3<>'${fifo}'; flock -n 3 && echo locked && sleep 30`], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    await new Promise<void>((res, rej) => {
      holder.stdout!.on("data", (d: Buffer) => (d.toString().includes("locked") ? res() : undefined));
      holder.on("exit", () => rej(new Error("the lock holder ended")));
    });
    const run = runSync("cu13", "plain", "taken", { RAWTRACE_OUTPUT: fifo });
    ok(run, "FIFO taken");
    const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
    assert.is(lines.length, 1, run.stderr);
    assert.match(lines[0], /cannot create .*taken\.fifo: another process writes that FIFO/);
  } finally {
    holder.kill("SIGKILL");
  }
});

test("an output that stalls (a FIFO read by nobody after it opened): the exit waits RAWTRACE_EXIT_TIMEOUT once, not once per exit handler", async () => {
  const fifo = join(dir, "stalled.fifo");
  execFileSync("mkfifo", [fifo]);
  // This process opens the FIFO for reading and never reads: the writer's writes block once the pipe is full.
  const rd = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    // Two exit hooks (registered again at the first buffer request): the first waits RAWTRACE_EXIT_TIMEOUT (3 s), the
    // second finds the writer stuck and gives it 1 s, not 3 s again (before: 6 s and two warnings).
    const t0 = Date.now();
    const run = runSync("cu13", "many", "stalled", { RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "3" });
    const took = Date.now() - t0;
    assert.is(run.status, 0, run.stderr);
    const warned = run.stderr.split("\n").filter((l) => /exit flush did not finish/.test(l));
    assert.is(warned.length, 1, run.stderr);
    assert.ok(took >= 3000 && took < 5800, `${took} ms: the exit waits 3 s, then 1 s for the stuck writer`);
  } finally {
    closeSync(rd);
  }
});

test("an output that stalls, and a program that handles SIGINT: a signal's wait that found the writer stuck is not repeated in full by the next signals or the exit", async () => {
  const fifo = join(dir, "stalled_sigint.fifo");
  execFileSync("mkfifo", [fifo]);
  const rd = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK); // opened, never read
  try {
    const t0 = Date.now();
    const run = runSync("cu13", "sigint_stalled", "stalled-sigint", { RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "4" });
    const took = Date.now() - t0;
    assert.is(run.status, 0, run.stderr);
    const waits = run.events.filter((e) => e.ev === "sigint") as unknown as Array<{ ms: number; handled: number }>;
    assert.is(waits.length, 3, run.stderr);
    assert.ok(waits.every((w) => w.handled === 1), "the program's own handler ran each time");
    // A SIGINT waits up to 3 s for the flush it asks for. The writer is blocked in a write from the first signal on,
    // so by the second wait at the latest it is known to be stuck: the third gets 1 s (before: 3 s each, and the exit
    // then waited its full 4 s and 1 s more).
    assert.ok(waits[0].ms >= 2900, `first wait ${waits[0].ms} ms`);
    assert.ok(waits[2].ms < 1800, `third wait ${waits[2].ms} ms: the writer was known stuck`);
    const exitMs = took - waits.reduce((a, w) => a + w.ms, 0);
    assert.ok(exitMs < 3500, `the exit after them took ${exitMs} ms (1 s per exit hook for a stuck writer; 5 s before)`);
  } finally {
    closeSync(rd);
  }
});

test("CUPTI losing records at every buffer: every loss in a DROPPED chunk, but one line for the first and one summing the rest", async () => {
  const run = runSync("cu13", "drops", "drops");
  ok(run, "drops");
  const lines = run.stderr.split("\n").filter((l) => /CUPTI dropped/.test(l));
  assert.is(lines.length, 2, run.stderr);
  assert.match(lines[0], /CUPTI dropped 3 activity records/);
  assert.match(lines[1], /CUPTI dropped 147 more activity records \(150 in all/);
  const dumps = readDumpChunks(outPath("cu13", "drops", run.pid));
  const drops = dumps.filter((c) => c.type === ChunkType.DROPPED && c.p.readUInt32LE(8) === DropReason.VENDOR);
  assert.is(drops.reduce((n, c) => n + Number(c.p.readBigUInt64LE(0)), 0), 150);
  // The same two lines as LOG chunks, the last one before END.
  const logs = dumps.filter((c) => c.type === ChunkType.LOG).map((c) => c.p.subarray(8, 8 + c.p.readUInt32LE(4)).toString("utf8"));
  assert.equal(logs.filter((l) => /CUPTI dropped/.test(l)).length, 2, logs.join("\n"));
  assert.is(dumps[dumps.length - 1].type, ChunkType.END);
});

test("RAWTRACE_PROCESS: a program it does not name is not traced, silently; one it names is", () => {
  const other = runSync("cu13", "plain", "process-other", { RAWTRACE_PROCESS: "python*" });
  ok(other, "not named");
  assert.not.match(other.stderr, /rawtrace\[/);
  assert.not.ok(existsSync(outPath("cu13", "process-other", other.pid)));
  const mine = runSync("cu13", "plain", "process-mine", { RAWTRACE_PROCESS: "python*,cuda_app" });
  ok(mine, "named");
  assert.ok(existsSync(outPath("cu13", "process-mine", mine.pid)));
  // The script a program runs (its first argument that is not an option: here the scenario), spaces trimmed.
  const script = runSync("cu13", "plain", "process-script", { RAWTRACE_PROCESS: " python* , plain " });
  ok(script, "named by its first argument");
  assert.ok(existsSync(outPath("cu13", "process-script", script.pid)));
});

test("settings that cannot work are refused with a line that says why; the program runs normally", () => {
  const said = (extra: Record<string, string>, what: string, runs = true): string[] => {
    const run = runSync("cu13", "plain", "refused", extra);
    if (runs) ok(run, what);
    return run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  };
  // An output pattern whose expansion does not fit a path: refused, not cut (a cut name lost the pid and extension).
  const long = said({ RAWTRACE_OUTPUT: join(dir, "d".repeat(4090), "trace-%h-%p.rawtrace") }, "long path");
  assert.is(long.length, 1, long.join("\n"));
  assert.match(long[0], /error: cannot create .*: File name too long; nothing is recorded/);
  assert.equal(readdirSync(dir).filter((f) => f.startsWith("ddd")), []);
  // RAWTRACE_ACTIVITIES with no kind this collector knows.
  const none = said({ RAWTRACE_ACTIVITIES: "@@@" }, "no kinds");
  assert.ok(none.some((l) => /unknown activity '@@@'/.test(l)), none.join("\n"));
  assert.ok(none.some((l) => /RAWTRACE_ACTIVITIES names no activity kind; nothing is recorded/.test(l)), none.join("\n"));
  assert.not.ok(none.some((l) => /CUPTI_SUCCESS/.test(l)), none.join("\n"));
  // RAWTRACE_CUPTI_LIB naming a library that loads but is not CUPTI: the line names the variable and the reason.
  // (The test app then stops: it drives the fake through that same variable.)
  const libc = said({ RAWTRACE_CUPTI_LIB: "libc.so.6" }, "not CUPTI", false);
  assert.is(libc.length, 1, libc.join("\n"));
  assert.match(libc[0], /RAWTRACE_CUPTI_LIB=libc\.so\.6: it has no cupti\w+ \(not a libcupti\); nothing is recorded/);
  // An unknown RAWTRACE_PRELOAD: said, and the default (eager) used.
  const pre = said({ RT_APP_LOAD: "preload", LD_PRELOAD: lib("cu13"), RAWTRACE_PRELOAD: "maybe" }, "preload");
  assert.ok(pre.some((l) => /RAWTRACE_PRELOAD=maybe is not eager, lazy or off; eager is used/.test(l)), pre.join("\n"));
  // Seconds beyond what the timers hold (inf, 1e30): warned and ignored, not an endless or an at-once timeout.
  const inf = said({ RAWTRACE_EXIT_TIMEOUT: "inf", RAWTRACE_DURATION: "1e30" }, "inf");
  assert.ok(inf.some((l) => /RAWTRACE_EXIT_TIMEOUT/.test(l)) && inf.some((l) => /RAWTRACE_DURATION/.test(l)), inf.join("\n"));
});

test("two processes with the same RAWTRACE_OUTPUT (no %p): exclusive create, the second gets a numbered name and says so", async () => {
  const out = join(dir, "shared.rawtrace");
  // Both start at once and stay in the program until both have created their files.
  const extra = { RAWTRACE_OUTPUT: out };
  const [a, b] = await Promise.all([
    runAsync("cu13", "basic", "sharedA", extra, () => {}),
    runAsync("cu13", "basic", "sharedB", extra, () => {}),
  ]);
  ok(a, "first");
  ok(b, "second");
  const files = readdirSync(dir).filter((f) => f.startsWith("shared")).sort();
  assert.equal(files, ["shared.1.rawtrace", "shared.rawtrace"]);
  const notes = [a, b].map((r) => r.stderr).filter((e) => /already exists .* writing .*shared\.1\.rawtrace instead/.test(e));
  assert.is(notes.length, 1, `exactly one process says it took another name:\n${a.stderr}\n---\n${b.stderr}`);
  // Each file holds one whole process: complete, its own pid, all of its kernels.
  const pids = new Set<number>();
  for (const f of files) {
    const c = await convert(join(dir, f));
    assert.is(c.r.info.complete, true, f);
    assert.not.ok(c.r.info.warnings.some((w) => w.code === "DUPLICATE_CHUNK" || w.code === "SEQ_REUSED"), f);
    pids.add(c.r.info.pid);
    const run = c.r.info.pid === a.pid ? a : b;
    assert.is(byCat(c, "kernel").length, run.events.filter((e) => e.ev === "kernel").length, f);
  }
  assert.equal([...pids].sort((x, y) => x - y), [a.pid, b.pid].sort((x, y) => x - y));
  // A third run while both names exist takes .2; an existing device is written, never replaced.
  const c3 = runSync("cu13", "plain", "third", extra);
  ok(c3, "third");
  assert.ok(readdirSync(dir).includes("shared.2.rawtrace"));
});

// ---- errors never reach the program --------------------------------------------------------------------------------

test("RAWTRACE_CHECKSUM: XXH32 payload checks by default, CRC-32 when asked (format 1.0 readers verify those), other values warned and ignored", async () => {
  const flagsOf = (path: string) => {
    const b = readFileSync(path);
    assert.is(b.readUInt16LE(10), 1, "format minor 1");
    return new Set(chunks(path).map((c) => b.readUInt16LE(c.off + 6) & 3));
  };
  for (const [value, flags, warned] of [[undefined, 2, false], ["crc32", 1, false], ["CRC32", 1, false], ["xxh32", 2, false], ["md5", 2, true]] as const) {
    const name = `sum-${value ?? "unset"}`;
    const run = runSync("cu13", "plain", name, { RAWTRACE_CHECKSUM: value });
    ok(run, name);
    const path = join(dir, `cu13-${name}-${run.pid}.rawtrace`);
    assert.equal([...flagsOf(path)], [flags], `${name}: every chunk's payload check`);
    assert.is(/RAWTRACE_CHECKSUM=md5 is not xxh32 or crc32; ignored/.test(run.stderr), warned, `${name}: ${run.stderr}`);
    const c = await convert(path);
    assert.ok(c.r.events > 0, name);
    assert.not.ok(c.r.info.warnings.some((w) => w.code === "BAD_PAYLOAD_CRC" || w.code === "BAD_CHUNK_HEADER"), `${name}: every payload verified`);
  }
});

test("RAWTRACE_OUTPUT=/dev/full: one error line, the program runs normally", () => {
  const run = runSync("cu13", "plain", "full", { RAWTRACE_OUTPUT: "/dev/full" });
  ok(run, "/dev/full");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /error: cannot create \/dev\/full: No space left on device/);
  assert.ok(statSync("/dev/full").isCharacterDevice(), "the device is written, never replaced");
  assert.not.ok(readdirSync("/dev").includes("full.1"));
});

test("write error mid-run (file size limit): writing stops, the file stays a valid prefix, the program goes on", async () => {
  const run = runSync("cu13", "write_limit", "limit", { RAWTRACE_BUFFER_SIZE: "64K" });
  ok(run, "write_limit");
  const st = one(run, "stats");
  assert.is(st.state, 3, "disabled");
  assert.is(st.error, -27, "EFBIG");
  assert.is(st.kernel_enabled, 0, "CUPTI collection turned off after the error");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /File too large/);
  const path = outPath("cu13", "limit", run.pid);
  assert.ok(statSync(path).size <= 256 * 1024);
  const c = await convert(path);
  assert.is(c.r.info.complete, false);
  const n = byCat(c, "kernel").length;
  assert.ok(n > 0 && n < 20000, `${n} kernels`);
});

test("a CUPTI error disables collection: one log line, one LOG chunk, END, the program runs normally", async () => {
  const run = runSync("cu12", "plain", "cupti-error", { FAKE_CUPTI_FAIL: "cuptiActivityRegisterCallbacks" });
  ok(run, "CUPTI error");
  const lines = run.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /error: cuptiActivityRegisterCallbacks failed: CUPTI_ERROR_UNKNOWN \(999\)/);
  assert.is(one(run, "stats").state, 3);
  const path = outPath("cu12", "cupti-error", run.pid);
  const cs = chunks(path);
  const logs = cs.filter((x) => x.type === T.LOG).map((x) => readLog(x.p));
  assert.is(logs.length, 1);
  assert.is(logs[0].level, 2);
  assert.match(logs[0].msg, /cuptiActivityRegisterCallbacks failed/);
  assert.is(cs[cs.length - 1].type, T.END);
  const c = await convert(path);
  assert.is(c.r.info.complete, true);
  assert.is(c.r.info.activityChunks, 0);
  assert.ok(c.r.info.warnings.some((w) => w.code === "COLLECTOR_ERROR"));
});

// ---- unfinished work at the exit flush (docs/errors.md, Timestamps) --------------------------------------------------

for (const tag of TAGS) {
  test(`${tag}: a kernel still running at exit comes with end 0 from the forced flush; converted as incomplete`, async () => {
    const run = runSync(tag, "unfinished", "unfinished");
    ok(run, "unfinished");
    const running = one(run, "running");
    const path = outPath(tag, "unfinished", run.pid);
    // The dump holds CUPTI's record as delivered: the kernel's end is CUPTI_TIMESTAMP_UNKNOWN (0).
    const cs = chunks(path);
    const sizes = readKindSizes(cs.find((x) => x.type === T.KIND_SIZES)!.p);
    const ends: Array<[number, bigint]> = []; // CONCURRENT_KERNEL: correlationId @92, end @24
    for (const c of cs.filter((x) => x.type === T.ACTIVITY)) {
      for (let o = 0; o + 4 <= c.p.length; o += sizes.get(c.p.readUInt32LE(o))!) {
        if (c.p.readUInt32LE(o) === 10) ends.push([c.p.readUInt32LE(o + 92), c.p.readBigUInt64LE(o + 24)]);
      }
    }
    assert.equal(ends.filter(([, e]) => e === 0n).map(([corr]) => corr), [running.corr], "one record with end 0");
    assert.is(cs[cs.length - 1].type, T.END);

    const c = await convert(path);
    const made = run.events.filter((e) => e.ev === "kernel");
    const k = byCat(c, "kernel");
    assert.equal(k.map((e) => e.name), [...made.map((e) => e.name), "unfinished_kernel"]);
    made.forEach((m, i) => assertTimes(k[i], m.start, m.end, c.base, m.name));
    const u = k[k.length - 1];
    assertTimes(u, running.start, running.start, c.base, "unfinished_kernel at its start, dur 0");
    assert.is(u.args.incomplete, true);
    assert.is(u.args.correlation, running.corr);
    // Neither the base nor the trace's extent comes from the unknown end.
    const first = BigInt(run.events.find((e) => e.ev === "runtime").start);
    assert.ok(c.base > 0n && c.base <= first && first - c.base < 7_889_238_000_000_000n, `base ${c.base}`);
    const last = BigInt(running.start) - c.base;
    for (const e of c.trace.traceEvents.filter((x) => x.ph === "X")) {
      assert.ok(Math.round((e.ts + e.dur) * 1000) <= Number(last), `${e.name} ends by the last known time`);
    }
    const w = c.r.info.warnings.map((x) => [x.code, x.count, x.detail]);
    assert.equal(w, [["INCOMPLETE_RECORD", 1, 10]]);
  });
}

// ---- cost ------------------------------------------------------------------------------------------------------

test("cost per delivered 8 MiB buffer (printed, not asserted)", async () => {
  const run = runSync("cu13", "bench", "bench", {});
  ok(run, "bench");
  const b = one(run, "bench");
  const st = one(run, "stats");
  assert.ok(st.written >= 24, `${st.written} buffers written`);
  const cb = st.callback_ns / st.completed / 1000;
  const wr = st.writer_ns / st.written / 1000;
  const mbs = st.activity_bytes / (st.writer_ns / 1e9) / 1e6;
  console.log(`collector cost: bufferCompleted ${cb.toFixed(2)} µs/buffer, writer ${wr.toFixed(0)} µs/buffer `
    + `(${mbs.toFixed(0)} MB/s) over ${st.written} buffers of ${b.records / 24 | 0} kernel records`);
  const { r } = await convert(outPath("cu13", "bench", run.pid));
  assert.is(r.info.records.CONCURRENT_KERNEL, b.records);
});

test.run();
