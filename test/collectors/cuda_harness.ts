/**
 * What the CUDA collector's tests (cuda_collector*.test.ts) share, without a GPU: building the collector, the CUPTI
 * test double (test/collectors/fake_cupti.c, compiled against the real CUDA 12 and 13 headers so its records are the
 * real structs) and the test program (test/collectors/cuda_app.c) with `make -C collectors/cuda TAG=<tag> test-bins`;
 * running one scenario of the program with the collector loaded the way a user would (CUDA_INJECTION64_PATH-style
 * InitializeInjection, LD_PRELOAD, or the explicit API) and reading the events it printed (JSON lines); converting
 * the .rawtrace it wrote with the real core; reading the container's chunks directly.
 *
 * Needs build/rawtrace.wasm (npm run build:wasm; scripts/test.sh builds it).
 */
import * as assert from "uvu/assert";
import type { Test } from "uvu";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import type { ConvertResult, Engine } from "../../src/core/engine.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/cuda");
export const APP = join(BUILD, "cuda_app");
export const TAGS = ["cu12", "cu13", "cu135"] as const;
export type Tag = (typeof TAGS)[number];
export const lib = (tag: Tag) => join(BUILD, tag, "librawtrace_cuda.so");
const fake = (tag: Tag) => join(BUILD, tag, "libcupti_fake.so");

/** The folder of the running test file's outputs (a fresh one per file, see cudaSuite). */
export let dir = "";
let engine: Engine | null = null;

// ---- running the program ---------------------------------------------------------------------------------------

export type Ev = Record<string, any>;
export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  events: Ev[];
  stderr: string;
  pid: number;
}

/** The environment of one run: the caller's, minus anything that would steer the collector, plus `extra`. */
export function envFor(tag: Tag, name: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
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

export function runSync(tag: Tag, scenario: string, name: string, extra: Record<string, string | undefined> = {}): Run {
  const r = spawnSync(APP, [scenario], { env: envFor(tag, name, extra), encoding: "utf8", timeout: 120_000 });
  const events = parseLines(r.stdout ?? "");
  const loaded = events.find((e) => e.ev === "loaded");
  return { status: r.status, signal: r.signal, events, stderr: r.stderr ?? "", pid: loaded?.pid ?? -1 };
}

/** Runs asynchronously; `onEvent` sees each stdout line and may signal the child. */
export function runAsync(
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

export const outPath = (tag: Tag, name: string, pid: number) => join(dir, `${tag}-${name}-${pid}.rawtrace`);

export function ok(run: Run, what: string): void {
  assert.is(run.signal, null, `${what}: killed by ${run.signal}; stderr:\n${run.stderr}`);
  assert.is(run.status, 0, `${what}: exit ${run.status}; stderr:\n${run.stderr}`);
  assert.ok(run.events.some((e) => e.ev === "done"), `${what}: no "done" line; stderr:\n${run.stderr}`);
}

export const one = (run: Run, ev: string): Ev => {
  const e = run.events.find((x) => x.ev === ev);
  assert.ok(e, `no ${ev} line in the program's output`);
  return e!;
};

// ---- converting ------------------------------------------------------------------------------------------------

export interface Converted {
  r: ConvertResult;
  trace: { traceEvents: Ev[]; rawtrace: Ev; [k: string]: any };
  base: bigint;
}

export async function convert(path: string, allApi = false): Promise<Converted> {
  engine ??= await createEngine();
  const parts: Buffer[] = [];
  const r = await engine.convert(fileSource(path), (b) => parts.push(Buffer.from(b)), { allApi });
  const text = Buffer.concat(parts).toString("utf8");
  const m = /"baseTimeNanoseconds":(\d+)/.exec(text);
  assert.ok(m, "no baseTimeNanoseconds in the output");
  return { r, trace: JSON.parse(text), base: BigInt(m![1]) };
}

export const byCat = (c: Converted, cat: string) => c.trace.traceEvents.filter((e) => e.cat === cat && e.ph === "X");

/** Checks a trace event's ts/dur (µs from the base, ns precision) against vendor ns strings. */
export function assertTimes(e: Ev, start: string, end: string, base: bigint, what: string): void {
  const ts = Number(BigInt(start) - base) / 1000;
  const dur = Number(BigInt(end) - BigInt(start)) / 1000;
  assert.ok(Math.abs(e.ts - ts) < 0.0011, `${what}: ts ${e.ts} != ${ts}`);
  assert.ok(Math.abs(e.dur - dur) < 0.0011, `${what}: dur ${e.dur} != ${dur}`);
}

// ---- reading the container directly ----------------------------------------------------------------------------

export interface Chunk {
  type: number;
  seq: number;
  off: number;
  p: Buffer;
}
export const T = { HEADER: 1, CLOCK: 2, KIND_SIZES: 3, API_NAMES: 4, ACTIVITY: 5, STRINGS: 6, DEVICES: 7, DROPPED: 8,
  THREAD_NAMES: 9, END: 10, LOG: 11 } as const;

/** Complete chunks of a file, in order (stops at the first incomplete or unsynchronized one). */
export function chunks(path: string): Chunk[] {
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

export function readKindSizes(p: Buffer): Map<number, number> {
  const m = new Map<number, number>();
  const n = p.readUInt32LE(0);
  for (let i = 0; i < n; i++) m.set(p.readUInt32LE(4 + 8 * i), p.readUInt32LE(8 + 8 * i));
  return m;
}

export function readLog(p: Buffer): { level: number; msg: string } {
  const len = p.readUInt32LE(4);
  return { level: p.readUInt32LE(0), msg: p.subarray(8, 8 + len).toString("utf8") };
}

// ---- setup -----------------------------------------------------------------------------------------------------

/**
 * The hooks of one test file: before its tests, the builds for every tag (make does nothing when they are up to date)
 * and a fresh folder for its outputs (`dir`); after them, that folder removed.
 */
export function cudaSuite(test: Test): void {
  test.before(() => {
    for (const tag of TAGS) {
      execFileSync("make", ["-s", "-C", join(ROOT, "collectors/cuda"), `TAG=${tag}`, "test-bins"], { stdio: "pipe" });
    }
    dir = mkdtempSync(join(tmpdir(), "rawtrace-cuda-"));
  });

  test.after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
}
