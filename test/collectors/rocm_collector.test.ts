/**
 * The ROCm collector (collectors/rocm) end to end, without a GPU or ROCm.
 *
 * Builds the collector, the rocprofiler-sdk test double (test/collectors/fake_rocprofiler.c), the test program
 * (test/collectors/rocm_app.c) and the ABI truth test (test/collectors/rocm_abi.c) with
 * `make -C collectors/rocm test-bins`. The program loads the fake SDK, which registers the collector from
 * ROCP_TOOL_LIBRARIES exactly as the real SDK does and delivers records in the SDK 0.5 or 1.0 layouts and enum
 * numbering (FAKE_ROCP_SDK). The fake prints every record it delivered; the dump must hold exactly those bytes, in
 * delivery order, plus the tables a decoder needs (kind and operation names, agents, kernel symbols, ROCTx messages,
 * clocks) — read here straight from the container, every chunk's CRCs checked.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exitLeft, readDumpChunks, type DumpChunk } from "../helpers/dump_chunks.js";
import { startFifoReader } from "../helpers/fifo_reader.js";
import { toChrome } from "../helpers/convert.js";
import { ChunkType, ClockWhich, DropReason, RocpDomain, Vendor } from "../../src/format/container.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/rocm");
const LIB = join(BUILD, "librawtrace_rocm.so");
const SDK = join(BUILD, "fake/librocprofiler-sdk.so");
const APP = join(BUILD, "rocm_app");
const SDKS = ["0.5", "1.0"] as const;
type Sdk = (typeof SDKS)[number];

/** Buffer-tracing kind values of each release (the fake's tables, from the real fwd.h enums). */
const KIND: Record<Sdk, Record<string, number>> = {
  "0.5": { HIP_RUNTIME_API: 5, MARKER_CORE_API: 7, MEMORY_COPY: 10, KERNEL_DISPATCH: 11, PAGE_MIGRATION: 12,
    SCRATCH_MEMORY: 13, CORRELATION_ID_RETIREMENT: 14, RCCL_API: 15 },
  "1.0": { HIP_RUNTIME_API: 5, MARKER_CORE_API: 7, MEMORY_COPY: 10, KERNEL_DISPATCH: 11, SCRATCH_MEMORY: 12,
    CORRELATION_ID_RETIREMENT: 13, RCCL_API: 14, MEMORY_ALLOCATION: 16, MARKER_CORE_RANGE_API: 32 },
};
/** Record sizes (bytes) the decoder will see, per release. */
const SIZE: Record<Sdk, Record<string, number>> = {
  "0.5": { HIP_RUNTIME_API: 56, MARKER_CORE_API: 56, RCCL_API: 56, MEMORY_COPY: 80, KERNEL_DISPATCH: 184,
    SCRATCH_MEMORY: 80, CORRELATION_ID_RETIREMENT: 32 },
  "1.0": { HIP_RUNTIME_API: 64, MARKER_CORE_API: 64, RCCL_API: 64, MARKER_CORE_RANGE_API: 64, MEMORY_COPY: 96,
    KERNEL_DISPATCH: 184, SCRATCH_MEMORY: 96, CORRELATION_ID_RETIREMENT: 32, MEMORY_ALLOCATION: 88 },
};
const STEPS = 12;

let dir = "";

// ---- running the program ---------------------------------------------------------------------------------------

type Ev = Record<string, any>;
interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  events: Ev[];
  stderr: string;
  pid: number;
}

function envFor(sdk: Sdk, name: string, extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_ROCP_|RT_APP_|ROCP_)/.test(k)) delete env[k];
  Object.assign(env, {
    RT_APP_SDK: SDK, RT_APP_COLLECTOR: LIB, ROCP_TOOL_LIBRARIES: LIB, FAKE_ROCP_SDK: sdk,
    RT_APP_STEPS: String(STEPS), RAWTRACE_OUTPUT: join(dir, `${sdk}-${name}-%p.rawtrace`),
  });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

const parseLines = (text: string): Ev[] => text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));

function runSync(sdk: Sdk, scenario: string, name: string, extra: Record<string, string | undefined> = {}): Run {
  // Every delivered record is a line on stdout (≈ 180 bytes): 64 MiB, not spawnSync's 1 MiB, before it kills the program.
  const r = spawnSync(APP, [scenario], { env: envFor(sdk, name, extra), encoding: "utf8", timeout: 60_000, maxBuffer: 64 << 20 });
  const events = parseLines(r.stdout ?? "");
  return { status: r.status, signal: r.signal, events, stderr: r.stderr ?? "", pid: events[0]?.pid ?? -1 };
}

/** Runs the program and sends `sig` once it printed "flushed". */
function runUntilFlushed(sdk: Sdk, scenario: string, name: string, sig: NodeJS.Signals,
  o: { env?: Record<string, string>; second?: NodeJS.Signals; at?: string; afterSecond?: () => void } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(APP, [scenario], { env: envFor(sdk, name, o.env ?? {}), stdio: ["ignore", "pipe", "pipe"] });
    let signalled = false;
    let out = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      out += d;
      if (!signalled && out.includes(o.at ?? "\"ev\":\"flushed\"")) {
        signalled = true;
        child.kill(sig);
        // A second signal while the exit flush the first asked for is still under way (Ctrl-C reaching the program
        // and `rawtrace record` forwarding it).
        if (o.second) {
          setTimeout(() => {
            child.kill(o.second!);
            o.afterSecond?.();
          }, 300);
        }
      }
    });
    child.stderr!.on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, events: parseLines(out), stderr, pid: child.pid ?? -1 });
    });
  });
}

function ok(run: Run, what: string): void {
  assert.is(run.signal, null, `${what}: killed by ${run.signal}; stderr:\n${run.stderr}`);
  assert.is(run.status, 0, `${what}: exit ${run.status}; stderr:\n${run.stderr}`);
  assert.ok(run.events.some((e) => e.ev === "done"), `${what}: no "done" line; stderr:\n${run.stderr}`);
}

const outPath = (sdk: Sdk, name: string, pid: number) => join(dir, `${sdk}-${name}-${pid}.rawtrace`);

// ---- reading the container -------------------------------------------------------------------------------------

/** Every complete chunk, CRCs checked (a killed collector's dump may end in a cut one: reading stops there). */
const readChunks = (path: string | Buffer): DumpChunk[] => readDumpChunks(path, true);

/** Sequential little-endian reader over one payload. */
class Cursor {
  o = 0;
  constructor(readonly p: Buffer) {}
  u16() { this.o += 2; return this.p.readUInt16LE(this.o - 2); }
  u32() { this.o += 4; return this.p.readUInt32LE(this.o - 4); }
  i32() { this.o += 4; return this.p.readInt32LE(this.o - 4); }
  u64() { this.o += 8; return this.p.readBigUInt64LE(this.o - 8); }
  bytes(n: number) { this.o += n; return this.p.subarray(this.o - n, this.o); }
  str() { return this.bytes(this.u32()).toString("utf8"); }
  end() { assert.is(this.o, this.p.length, "payload fully read"); }
}

interface Rec { cat: number; kind: number; size: number; hex: string; payload: Buffer }

/** Records of one ACTIVITY payload: {u32 category, u32 kind, u64 size, payload[size], zero pad to 8}. */
function activityRecords(p: Buffer): Rec[] {
  const out: Rec[] = [];
  const c = new Cursor(p);
  while (c.o < p.length) {
    const cat = c.u32();
    const kind = c.u32();
    const size = Number(c.u64());
    const payload = c.bytes(size);
    assert.is(payload.readBigUInt64LE(0), BigInt(size), "the record header's size is the payload's own size field");
    const pad = c.bytes((8 - (size % 8)) % 8);
    assert.ok(pad.every((x) => x === 0), "zero padding");
    out.push({ cat, kind, size, hex: payload.toString("hex"), payload });
  }
  return out;
}

/** API_NAMES as domain → id → name. */
function readNames(p: Buffer): Map<number, Map<number, string>> {
  const m = new Map<number, Map<number, string>>();
  const c = new Cursor(p);
  for (let n = c.u32(); n > 0; n--) {
    const domain = c.u32();
    const id = c.u32();
    const name = c.str();
    if (!m.has(domain)) m.set(domain, new Map());
    assert.not.ok(m.get(domain)!.has(id), `duplicate name ${domain}/${id}`);
    m.get(domain)!.set(id, name);
  }
  c.end();
  return m;
}

/** AGENTS (docs/format.md §12). */
function readAgents(p: Buffer): Ev[] {
  const c = new Cursor(p);
  const n = c.u32();
  const fixed = c.u32();
  assert.is(fixed, 120);
  const out: Ev[] = [];
  for (let i = 0; i < n; i++) {
    const start = c.o;
    const a: Ev = {
      id: c.u64(), type: c.u32(), nodeId: c.u32(), logicalNodeId: c.i32(), logicalNodeTypeId: c.i32(),
      cuCount: c.u32(), simdCount: c.u32(), simdPerCu: c.u32(), maxWavesPerSimd: c.u32(), maxWavesPerCu: c.u32(),
      wavefrontSize: c.u32(), ldsKb: c.u32(), workgroupMaxSize: c.u32(), maxClockMhz: c.u32(), gfxTarget: c.u32(),
      numXcc: c.u32(), familyId: c.u32(), vendorId: c.u16(), deviceId: c.u16(), locationId: c.u32(), pciDomain: c.u32(),
    };
    c.u32();
    a.gpuId = c.u64();
    a.localMemBytes = c.u64();
    a.uuid = c.bytes(16).toString("hex");
    assert.is(c.o - start, fixed);
    a.name = c.str();
    a.productName = c.str();
    a.vendorName = c.str();
    a.modelName = c.str();
    out.push(a);
  }
  c.end();
  return out;
}

/** KERNEL_SYMBOLS (docs/format.md §13). */
function readKernelSymbols(p: Buffer): Ev[] {
  const c = new Cursor(p);
  const n = c.u32();
  assert.is(c.u32(), 48);
  const out: Ev[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ kernelId: c.u64(), codeObjectId: c.u64(), kernelObject: c.u64(), kernarg: c.u32(), lds: c.u32(),
      scratch: c.u32(), sgpr: c.u32(), archVgpr: c.u32(), accumVgpr: c.u32(), name: c.str() });
  }
  c.end();
  return out;
}

/** STRINGS: key → text (for ROCm, the key is a correlation id of a ROCTx call). */
function readStrings(p: Buffer): Array<[bigint, string]> {
  const c = new Cursor(p);
  const out: Array<[bigint, string]> = [];
  for (let n = c.u32(); n > 0; n--) out.push([c.u64(), c.str()]);
  c.end();
  return out;
}

const delivered = (run: Run): Array<Omit<Rec, "payload">> =>
  run.events.filter((e) => e.ev === "rec").map((e) => ({ cat: e.cat, kind: e.kind, size: e.size, hex: e.hex }));

const dumped = (cs: DumpChunk[]): Rec[] => cs.filter((c) => c.type === ChunkType.ACTIVITY).flatMap((c) => activityRecords(c.p));

// ---- setup -----------------------------------------------------------------------------------------------------

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/rocm"), "test-bins"], { stdio: "pipe" });
  dir = mkdtempSync(join(tmpdir(), "rawtrace-rocm-"));
});

test.after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("ABI declarations equal the reference sizes and offsets (rocm_abi.c)", () => {
  const r = spawnSync(join(BUILD, "rocm_abi"), { encoding: "utf8" });
  assert.is(r.status, 0, r.stdout);
  assert.match(r.stdout, /^ok \d+ checks\n$/);
  assert.ok(Number(/ok (\d+)/.exec(r.stdout)![1]) > 100, "all checks ran");
});

test("the collector exports only rocprofiler_configure and its API, and needs nothing from ROCm", () => {
  const syms = execFileSync("nm", ["-D", "--defined-only", LIB], { encoding: "utf8" })
    .split("\n").map((l) => l.trim().split(/\s+/)[2]).filter(Boolean).sort();
  assert.equal(syms, ["rawtrace_rocm_flush", "rawtrace_rocm_get_stats", "rawtrace_rocm_pop_external_id",
    "rawtrace_rocm_push_external_id", "rawtrace_rocm_start", "rawtrace_rocm_stop", "rocprofiler_configure"]);
  assert.not.match(execFileSync("readelf", ["-d", LIB], { encoding: "utf8" }), /rocprofiler|libhsa|libamdhip/);
});

for (const sdk of SDKS) {
  test(`SDK ${sdk}: every delivered record is in the dump byte for byte, in delivery order`, () => {
    const run = runSync(sdk, "basic", "verbatim");
    ok(run, `${sdk} basic`);
    const cs = readChunks(outPath(sdk, "verbatim", run.pid));
    const want = delivered(run);
    assert.ok(want.length >= STEPS * 14, `the fake delivered ${want.length} records`);
    const got = dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex }));
    assert.equal(got, want);
    assert.is(run.events.filter((e) => e.ev === "foreign").length, 1, "the fake delivered a counters header");
    assert.ok(got.every((r) => r.cat === 1), "only tracing records are copied");
    const st = run.events.find((e) => e.ev === "stats")!;
    assert.is(st.skipped, 1, "the counters header was skipped and counted");
    // the fake shuffles header order: the dump keeps the SDK's order, not emplacement or time order
    const kinds = got.map((r) => r.kind);
    assert.not.equal(kinds, [...kinds].sort((a, b) => a - b));
    // sizes per kind are this release's struct sizes
    for (const [name, size] of Object.entries(SIZE[sdk])) {
      const recs = got.filter((r) => r.kind === KIND[sdk][name]);
      assert.ok(recs.length > 0, `${sdk}: records of ${name}`);
      assert.ok(recs.every((r) => r.size === size), `${sdk}: ${name} records are ${size} B`);
    }
    const kindsSeen = new Set(got.map((r) => r.kind));
    assert.equal([...kindsSeen].sort((a, b) => a - b), Object.values(KIND[sdk]).filter((k) => k !== 12 || sdk === "1.0")
      .sort((a, b) => a - b), "records of every default kind the release has");
  });

  test(`SDK ${sdk}: header, clocks, kind/operation names, agents, kernel symbols, ROCTx messages, END`, () => {
    const run = runSync(sdk, "basic", "tables", { RANK: "2", WORLD_SIZE: "4" });
    ok(run, `${sdk} basic`);
    const cs = readChunks(outPath(sdk, "tables", run.pid));
    cs.forEach((c, i) => assert.is(c.seq, i, "sequence numbers"));

    // HEADER: vendor 2, the `version` argument and the runtime version string
    assert.is(cs[0].type, ChunkType.HEADER);
    const h = new Cursor(cs[0].p);
    assert.is(h.u32(), Vendor.ROCM_SDK);
    assert.is(h.u32(), 8);
    assert.is(h.u32(), sdk === "1.0" ? 10000 : 500);
    h.u32(); h.u32();
    assert.is(h.u32(), run.pid);
    assert.is(h.i32(), 2);
    h.i32();
    assert.is(h.i32(), 4);
    h.u32(); h.u64(); h.str(); h.str();
    assert.is(h.str(), sdk === "1.0" ? "1.0.0" : "0.5.0");
    h.end();

    // CLOCK anchors: SDK time is CLOCK_BOOTTIME, read right before the system clocks
    const clocks = cs.filter((c) => c.type === ChunkType.CLOCK);
    assert.is(cs[1].type, ChunkType.CLOCK);
    assert.equal(clocks.map((c) => c.p.readUInt32LE(0)), [ClockWhich.START, ClockWhich.END]);
    for (const c of clocks) {
      const vendor = c.p.readBigUInt64LE(8);
      const boot = c.p.readBigUInt64LE(40);
      assert.ok(vendor <= boot && boot - vendor < 50_000_000n, `vendor ${vendor} ~ BOOTTIME ${boot}`);
      assert.ok(c.p.readBigUInt64LE(16) > 1_600_000_000_000_000_000n, "REALTIME in the anchor");
    }
    assert.is(cs[cs.length - 2].type, ChunkType.CLOCK);

    // API_NAMES: kind names by the release's numbering, operations of the recorded kinds only
    const names = readNames(cs.find((c) => c.type === ChunkType.API_NAMES)!.p);
    const kinds = names.get(RocpDomain.KINDS)!;
    for (const [name, value] of Object.entries(KIND[sdk])) assert.is(kinds.get(value), name, `${sdk} kind ${value}`);
    assert.is(kinds.size, sdk === "1.0" ? 33 : 16);
    const ops = (kind: string) => names.get(RocpDomain.OPS | KIND[sdk][kind]);
    assert.is(ops("HIP_RUNTIME_API")!.get(sdk === "1.0" ? 106 : 49), "hipLaunchKernel", "HIP ids differ by release");
    assert.is(ops("MEMORY_COPY")!.get(2), "MEMORY_COPY_HOST_TO_DEVICE");
    assert.is(ops("KERNEL_DISPATCH")!.get(2), "KERNEL_DISPATCH_COMPLETE");
    assert.is(ops("MARKER_CORE_API")!.get(1), "roctxRangePushA");
    assert.is(ops("RCCL_API")!.get(sdk === "1.0" ? 7 : 5), "ncclAllReduce");
    assert.is(names.get(RocpDomain.OPS | 1), undefined, "no operation table for HSA_CORE_API, not recorded");
    const recs = dumped(cs);
    for (const r of recs) {
      assert.ok(kinds.has(r.kind), `kind ${r.kind} has a name`);
      if (kinds.get(r.kind) === "CORRELATION_ID_RETIREMENT") continue;
      const op = r.payload.readInt32LE(12);
      assert.ok(names.get(RocpDomain.OPS | r.kind)?.has(op), `${kinds.get(r.kind)} operation ${op} has a name`);
    }

    // AGENTS: one CPU, two gfx90a GPUs; uuid only in 1.0
    const agents = readAgents(cs.find((c) => c.type === ChunkType.AGENTS)!.p);
    assert.is(agents.length, 3);
    assert.is(agents[0].type, 1);
    assert.is(agents[0].name, "AMD EPYC 7763 64-Core Processor");
    for (const [i, a] of agents.slice(1).entries()) {
      assert.is(a.type, 2);
      assert.is(a.id, 0x5100n + BigInt(i) * 0x100n);
      assert.is(a.name, "gfx90a");
      assert.is(a.productName, "AMD Instinct MI250X/MI250");
      assert.is(a.modelName, "aldebaran");
      assert.is(a.vendorName, "AMD");
      assert.is(a.logicalNodeTypeId, i);
      assert.is(a.cuCount, 104);
      assert.is(a.wavefrontSize, 64);
      assert.is(a.simdPerCu, 4);
      assert.is(a.maxWavesPerCu, 32);
      assert.is(a.ldsKb, 64);
      assert.is(a.maxClockMhz, 1700);
      assert.is(a.gfxTarget, 90010);
      assert.is(a.vendorId, 0x1002);
      assert.is(a.deviceId, 0x740c);
      assert.is(a.gpuId, 40001n + BigInt(i));
      assert.is(a.localMemBytes, 68702699520n);
      assert.is(a.uuid, sdk === "1.0" ? Buffer.from(Array.from({ length: 16 }, (_, k) => 0xa0 + (i + 1) * 16 + k))
        .toString("hex") : "00".repeat(16));
    }

    // KERNEL_SYMBOLS before the first dispatch that needs them; ROCTx messages before their records
    const firstActivity = cs.findIndex((c) => c.type === ChunkType.ACTIVITY);
    const ksChunk = cs.findIndex((c) => c.type === ChunkType.KERNEL_SYMBOLS);
    assert.ok(ksChunk >= 0 && ksChunk < firstActivity, "KERNEL_SYMBOLS before any ACTIVITY");
    const ks = readKernelSymbols(cs[ksChunk].p);
    assert.equal(ks.map((k) => [k.kernelId, k.name]), [[1n, "_Z10vector_addPfPKfS1_i"],
      [2n, "_Z4gemmILi128EEvPKfS1_Pfiii"], [3n, "_ZN7rocprim6detail11scan_kernelILb0EEEvPfi"]]);
    assert.equal([ks[2].lds, ks[2].scratch, ks[2].sgpr, ks[2].archVgpr, ks[2].accumVgpr, ks[2].kernarg],
      [2048, 32, 32, 64, 8, 40]);
    const messages = new Map<bigint, string>();
    let checkedMarkers = 0;
    for (const c of cs) {
      if (c.type === ChunkType.STRINGS) for (const [k, v] of readStrings(c.p)) messages.set(k, v);
      if (c.type !== ChunkType.ACTIVITY) continue;
      for (const r of activityRecords(c.p)) {
        const push = r.kind === KIND[sdk].MARKER_CORE_API && r.payload.readInt32LE(12) === 1; // roctxRangePushA
        const range = r.kind === KIND[sdk].MARKER_CORE_RANGE_API; // roctxThreadRangeA, own correlation id
        if (!push && !range) continue;
        const corr = r.payload.readBigUInt64LE(16);
        assert.match(messages.get(corr) ?? "", /^step \d+$/, `message of ${push ? "push" : "range"} ${corr} before`);
        checkedMarkers++;
      }
    }
    const ranges = sdk === "1.0" ? 2 : 1;
    assert.is(checkedMarkers, ranges * STEPS);
    assert.is(messages.size, ranges * STEPS);

    // THREAD_NAMES: the thread of the API records (the program's main thread), before the first ACTIVITY chunk
    const tn = cs.findIndex((c) => c.type === ChunkType.THREAD_NAMES);
    assert.ok(tn >= 0 && tn < firstActivity, "THREAD_NAMES before the ACTIVITY that needs it");
    // …written at initialization, right after the HEADER and its CLOCK: the pid again before any activity (a reader's
    // hostPid when the HEADER is lost), whichever buffer first holds the main thread's API records.
    assert.equal(cs.slice(0, 3).map((c) => c.type), [ChunkType.HEADER, ChunkType.CLOCK, ChunkType.THREAD_NAMES]);
    const tnames = cs.filter((c) => c.type === ChunkType.THREAD_NAMES).flatMap((c) => {
      const cur = new Cursor(c.p);
      const out: Array<[number, number, string]> = [];
      for (let n = cur.u32(); n > 0; n--) out.push([cur.u32(), cur.u32(), cur.str()]);
      cur.end();
      return out;
    });
    // Named at initialization, and again when its records first come (by the name it has then: here the same).
    assert.equal(tnames, [[run.pid, run.pid, "rocm_app"], [run.pid, run.pid, "rocm_app"]], "one thread, named twice");

    // External ids pushed through rawtrace_rocm_push_external_id reach the dispatch records
    const dispatches = recs.filter((r) => r.kind === KIND[sdk].KERNEL_DISPATCH);
    assert.is(dispatches.length, STEPS);
    for (const d of dispatches) {
      const step = Number(d.payload.readBigUInt64LE(56 + 32)) - 1; // dispatch_info.dispatch_id = step + 1
      assert.is(d.payload.readBigUInt64LE(24), BigInt(1000 + step), `external id of step ${step}`);
      assert.ok(ks.some((k) => k.kernelId === d.payload.readBigUInt64LE(56 + 24)), "dispatch kernel_id is known");
    }
    assert.ok(run.events.filter((e) => e.ev === "step").every((e) => e.push === 0 && e.pop === 0));

    // END: last chunk, totals over the file
    const end = cs[cs.length - 1];
    assert.is(end.type, ChunkType.END);
    assert.is(end.p.readBigUInt64LE(0), BigInt(cs.length - 1));
    const activityBytes = cs.filter((c) => c.type === ChunkType.ACTIVITY).reduce((s, c) => s + c.p.length, 0);
    assert.is(end.p.readBigUInt64LE(8), BigInt(activityBytes));
    assert.is(end.p.readBigUInt64LE(16), 0n);
    assert.is(cs.filter((c) => c.type === ChunkType.DROPPED).length, 0);
  });

  test(`SDK ${sdk}: drop_count becomes DROPPED (vendor) chunks; the records that did arrive are all there`, () => {
    const run = runSync(sdk, "basic", "drops", { FAKE_ROCP_DROP_EVERY: "7" });
    ok(run, `${sdk} drops`);
    const cs = readChunks(outPath(sdk, "drops", run.pid));
    const lost = run.events.filter((e) => e.ev === "dropped").reduce((s, e) => s + e.n, 0);
    assert.ok(lost >= 20, `the fake lost ${lost} records`);
    const drops = cs.filter((c) => c.type === ChunkType.DROPPED);
    assert.ok(drops.every((c) => c.p.readUInt32LE(8) === DropReason.VENDOR));
    assert.is(drops.reduce((s, c) => s + Number(c.p.readBigUInt64LE(0)), 0), lost);
    assert.is(cs[cs.length - 1].p.readBigUInt64LE(16), BigInt(lost), "END dropped total");
    assert.equal(dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex })), delivered(run));
  });
}

test("RAWTRACE_ROCM_KINDS picks kinds by SDK name", () => {
  const run = runSync("1.0", "basic", "kinds", { RAWTRACE_ROCM_KINDS: "kernel_dispatch, MEMORY_COPY" });
  ok(run, "kinds");
  assert.equal(run.events.filter((e) => e.ev === "enabled").map((e) => e.name), ["MEMORY_COPY", "KERNEL_DISPATCH"]);
  const recs = dumped(readChunks(outPath("1.0", "kinds", run.pid)));
  assert.is(recs.length, 2 * STEPS);
  assert.equal([...new Set(recs.map((r) => r.kind))].sort(), [10, 11]);
});

test("RAWTRACE_ROCM_KINDS: a name this SDK lacks is one warning line and ignored; a list that selects no kind says so", () => {
  const typo = runSync("1.0", "basic", "kinds-typo", { RAWTRACE_ROCM_KINDS: "KERNEL_DISPATCH,KERNAL_DISPATCH" });
  ok(typo, "kinds-typo");
  assert.equal(typo.events.filter((e) => e.ev === "enabled").map((e) => e.name), ["KERNEL_DISPATCH"]);
  const lines = typo.stderr.split("\n").filter((l) => l.startsWith("rawtrace["));
  assert.is(lines.length, 1, typo.stderr);
  assert.match(lines[0], /RAWTRACE_ROCM_KINDS: 'KERNAL_DISPATCH' is not a buffer-tracing kind of this rocprofiler-sdk; ignored/);
  const none = runSync("1.0", "basic", "kinds-none", { RAWTRACE_ROCM_KINDS: "bogus" });
  assert.is(none.status, 0, none.stderr);
  assert.match(none.stderr, /'bogus' is not a buffer-tracing kind/);
  assert.match(none.stderr, /no buffer-tracing kind could be enabled .*; ROCm collection disabled/);
  assert.not.match(none.stderr, /Success/);
});

test("an SDK opened RTLD_LOCAL is found through the finalize function it passed to initialize", () => {
  const run = runSync("1.0", "basic", "local", { RT_APP_SDK_LOCAL: "1", RAWTRACE_LOG: "info" });
  ok(run, "RTLD_LOCAL");
  assert.ok(run.stderr.includes(`rocprofiler-sdk 1.0.0 (version 10000, priority 0) from ${SDK}`), run.stderr);
  const want = delivered(run);
  assert.ok(want.length > 0);
  assert.equal(dumped(readChunks(outPath("1.0", "local", run.pid))).map(({ cat, kind, size, hex }) => ({ cat, kind, size,
    hex })), want);
});

test("a main thread renamed after the tool's initialization (PyTorch's pt_main_thread): its row has the new name (before: the name at initialization)", async () => {
  const run = runSync("1.0", "basic", "rename", { RT_APP_RENAME: "pt_main_thread" });
  ok(run, "rename");
  const { trace } = await toChrome(new Uint8Array(readFileSync(outPath("1.0", "rename", run.pid))));
  const names = trace.traceEvents.filter((e: any) => e.ph === "M" && e.name === "thread_name" && e.pid === run.pid && e.tid === run.pid);
  assert.equal(names.map((e: any) => e.args.name), [`thread ${run.pid} (pt_main_thread)`]);
  // The name at initialization is still the first THREAD_NAMES chunk's: the process id before any activity.
  const first = readChunks(outPath("1.0", "rename", run.pid)).find((c) => c.type === ChunkType.THREAD_NAMES)!.p;
  assert.equal([first.readUInt32LE(0), first.readUInt32LE(4), first.readUInt32LE(8)], [1, run.pid, run.pid]);
});

test("rawtrace_rocm_stop / rawtrace_rocm_start: nothing recorded in between, a CLOCK anchor at each", () => {
  const run = runSync("1.0", "pause", "pause");
  ok(run, "pause");
  assert.is(run.events.find((e) => e.ev === "stop")?.rc, 0);
  assert.is(run.events.find((e) => e.ev === "start")?.rc, 0);
  const cs = readChunks(outPath("1.0", "pause", run.pid));
  assert.equal(cs.filter((c) => c.type === ChunkType.CLOCK).map((c) => c.p.readUInt32LE(0)),
    [ClockWhich.START, ClockWhich.PERIODIC, ClockWhich.PERIODIC, ClockWhich.END]);
  const steps = dumped(cs).filter((r) => r.kind === KIND["1.0"].KERNEL_DISPATCH)
    .map((r) => Number(r.payload.readBigUInt64LE(56 + 32)) - 1).sort((a, b) => a - b);
  assert.equal(steps, [...Array(STEPS).keys()].filter((i) => i < 4 || i >= 6), "steps 4 and 5 ran while stopped");
  assert.equal(dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex })), delivered(run));
});

/**
 * Runs the program with its output on a FIFO that the test leaves unread until the program has made all its
 * records (its "stats" line): the writer thread blocks, so what the callbacks make piles up against the memory
 * caps. Returns the run and the chunks read from the FIFO afterwards.
 */
async function runStalled(name: string, steps: number, quiet = false): Promise<{ run: Run; cs: DumpChunk[] }> {
  const fifo = join(dir, `${name}.fifo`);
  execFileSync("mkfifo", [fifo]);
  const env = envFor("1.0", name, { RAWTRACE_OUTPUT: fifo, RAWTRACE_BUFFER_SIZE: "128k", RAWTRACE_MAX_MEMORY: "1",
    RT_APP_STEPS: String(steps), FAKE_ROCP_BATCH: "64", FAKE_ROCP_QUIET: quiet ? "1" : undefined });
  const child = spawn(APP, ["basic"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const reader = createReadStream(fifo);
  reader.pause();
  const parts: Buffer[] = [];
  let out = "";
  let stderr = "";
  let reading = false;
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (d: string) => (stderr += d));
  child.stdout!.on("data", (d: string) => {
    out += d;
    if (!reading && out.includes("\"ev\":\"stats\"")) {
      reading = true;
      reader.on("data", (b) => parts.push(b as Buffer)).resume();
    }
  });
  const [status] = await Promise.all([
    new Promise<number | null>((res) => child.on("close", (code) => res(code))),
    new Promise<void>((res) => reader.on("close", () => res())),
  ]);
  assert.is(status, 0, stderr);
  const events = parseLines(out);
  const run: Run = { status, signal: null, events, stderr, pid: events[0].pid };
  return { run, cs: readChunks(Buffer.concat(parts)) };
}

test("memory cap: a writer that cannot write makes the callback drop records, counted exactly in DROPPED", async () => {
  // The copy buffers reach RAWTRACE_MAX_MEMORY (= one buffer), and later records are counted, not kept.
  const { run, cs } = await runStalled("cap", 400);
  assert.is(cs[cs.length - 1].type, ChunkType.END);
  const capped = cs.filter((c) => c.type === ChunkType.DROPPED && c.p.readUInt32LE(8) === DropReason.MEMORY_CAP)
    .reduce((n, c) => n + Number(c.p.readBigUInt64LE(0)), 0);
  const kept = dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex }));
  const want = delivered(run);
  assert.ok(capped > 0, "records were capped");
  assert.ok(kept.length > 0, "records were kept");
  assert.is(kept.length + capped, want.length, "every delivered record is either in the dump or counted");
  let j = 0; // the kept records are a subsequence of the delivered ones, in order
  for (const r of kept) {
    while (j < want.length && want[j].hex !== r.hex) j++;
    assert.ok(j < want.length, "kept record in delivery order");
    j++;
  }
});

test("memory cap: ROCTx messages made while the writer cannot write stop at a quarter of the cap (at least 1 MiB), the rest counted in DROPPED", async () => {
  // 30,000 steps, each a roctxRangePushA and a roctxThreadRangeA message (≈ 60 bytes queued each): ≈ 3.4 MiB of
  // messages against the 1 MiB budget while the FIFO is unread. Before the budget they were all queued.
  const steps = 30000;
  const { run, cs } = await runStalled("cap-messages", steps, true);
  const stats = run.events.find((e) => e.ev === "stats")!;
  const made = 2 * steps;
  // 21,093 of 60,000 kept here (items of 50 bytes and their queue links against 1 MiB).
  assert.ok(stats.messages > 10000 && stats.messages < made / 2, `messages kept ${stats.messages} of ${made}`);
  const strings = cs.filter((c) => c.type === ChunkType.STRINGS).reduce((n, c) => n + c.p.readUInt32LE(0), 0);
  assert.is(strings, stats.messages, "every message kept is in the dump");
  const capped = cs.filter((c) => c.type === ChunkType.DROPPED && c.p.readUInt32LE(8) === DropReason.MEMORY_CAP)
    .reduce((n, c) => n + Number(c.p.readBigUInt64LE(0)), 0);
  assert.ok(capped >= made - stats.messages, `DROPPED (memory cap) counts the messages left out: ${capped}`);
  assert.is(cs[cs.length - 1].type, ChunkType.END);
});

test("kill -9 after a flush: the file is a valid prefix holding every record delivered before", async () => {
  const run = await runUntilFlushed("1.0", "kill", "kill", "SIGKILL");
  assert.is(run.signal, "SIGKILL");
  assert.is(run.events.find((e) => e.ev === "flushed")?.rc, 0);
  const cs = readChunks(outPath("1.0", "kill", run.pid));
  assert.is(cs[0].type, ChunkType.HEADER);
  assert.is(cs.filter((c) => c.type === ChunkType.END).length, 0, "no END after kill -9");
  assert.ok(cs.some((c) => c.type === ChunkType.KERNEL_SYMBOLS) && cs.some((c) => c.type === ChunkType.AGENTS));
  const want = delivered(run);
  assert.ok(want.length >= STEPS * 15);
  assert.equal(dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex })), want);
});

test("SIGTERM (default action): the exit flush writes END, then the process dies of SIGTERM", async () => {
  const run = await runUntilFlushed("0.5", "term", "term", "SIGTERM");
  assert.is(run.signal, "SIGTERM");
  const cs = readChunks(outPath("0.5", "term", run.pid));
  assert.is(cs[cs.length - 1].type, ChunkType.END);
  assert.equal(dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex })), delivered(run));
});

test("SIGTERM while the program's thread holds the SDK's lock (inside a flush): the exit flush does not wait on the SDK for ever, END is written", async () => {
  // The program's rocprofiler_flush_buffer holds the SDK's lock 4 s; the signal is handled on that thread, whose
  // handler waits for the exit flush, whose stop and flush of the SDK need that lock. Before, the flush waited for the
  // lock until the handler's wait (RAWTRACE_EXIT_TIMEOUT, 3 s) ran out and the process died without END.
  const run = await runUntilFlushed("1.0", "kill", "held-lock", "SIGTERM", {
    env: { FAKE_ROCP_FLUSH_HOLD_MS: "4000", RAWTRACE_EXIT_TIMEOUT: "3" }, at: "\"ev\":\"flush_holding\"",
  });
  assert.is(run.signal, "SIGTERM", run.stderr);
  assert.match(run.stderr, /the SDK's stop and flush did not return within 1\.5 s/);
  const cs = readChunks(outPath("1.0", "held-lock", run.pid));
  assert.is(cs[cs.length - 1].type, ChunkType.END, "END written");
  const logs = cs.filter((c) => c.type === ChunkType.LOG).map((c) => new Cursor(c.p)).map((c) => [c.u32(), c.str()]);
  assert.ok(logs.some(([, msg]) => String(msg).includes("did not return")), "the loss is said in the file too");
  // What the SDK had delivered before the flush that holds its lock is all there.
  const dumpedHex = new Set(dumped(cs).map((r) => r.hex));
  const before = delivered(run);
  assert.ok(before.length >= STEPS * 10, `${before.length} records delivered before the held flush`);
  assert.ok(before.every((r) => dumpedHex.has(r.hex)), "every record delivered before the held flush is in the dump");
});

test("a normal exit waits for a slow SDK flush as long as it takes (the bound is for a signal's exit flush only)", () => {
  // The exit flush's own rocprofiler_flush_buffer holds 2 s; the exit timeout is 3 s (a signal's flush would give the
  // SDK 1.5 s). Every record is in the dump and nothing is said.
  const run = runSync("1.0", "basic", "slow-exit-flush", { FAKE_ROCP_FLUSH_HOLD_MS: "2000", RAWTRACE_EXIT_TIMEOUT: "3" });
  ok(run, "slow exit flush");
  assert.not.match(run.stderr, /did not return/);
  const cs = readChunks(outPath("1.0", "slow-exit-flush", run.pid));
  assert.is(cs[cs.length - 1].type, ChunkType.END);
  assert.equal(dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex })), delivered(run));
});

test("an exit with more queued than a slow output takes within RAWTRACE_EXIT_TIMEOUT: the buffers that fit are written in order, the rest counted (DROPPED reason 4) and said, END written", async () => {
  // 3,000 steps (48,001 records, ≈ 4 MB; delivered 500 at a time) for a FIFO read at ≈ 1.3 MB/s, and a 2 s exit
  // timeout. Before, the exit hook's wait ran out while the writer still wrote, and the file ended inside a chunk,
  // without END.
  const fifo = join(dir, "exit-slow.fifo");
  const copy = join(dir, "exit-slow-copy.rawtrace");
  const reader = startFifoReader(fifo, copy, { pauseS: 0.05 });
  await reader.ready;
  const run = runSync("1.0", "basic", "exit-slow", {
    RT_APP_STEPS: "3000", FAKE_ROCP_BATCH: "500", RAWTRACE_BUFFER_SIZE: "128K", RAWTRACE_OUTPUT: fifo,
    RAWTRACE_EXIT_TIMEOUT: "2",
  });
  await reader.closed;
  ok(run, "exit into a slow output");
  const cs = readChunks(copy);
  assert.is(cs[cs.length - 1].type, ChunkType.END, run.stderr);
  exitLeft(cs, run.stderr, "record buffers");
  // What was written is what the SDK delivered first, in order: only the last buffers are missing.
  const got = dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex }));
  const want = delivered(run);
  assert.ok(got.length > 0 && got.length < want.length, `${got.length} of ${want.length} records written`);
  assert.equal(got, want.slice(0, got.length));
});

test("two signals at once: the second waits for the exit flush the first asked for (the common handler of ROCm, XPU and Gaudi)", async () => {
  // The output is a FIFO of 16 KiB (the dump's first chunks, written at start, fit; its ≈ 21 KB do not) whose reader
  // starts only once the second signal was sent (`go`); the program waits after its last step without flushing (no
  // thread of it inside the SDK or the collector). The exit flush the first signal asks for cannot have finished when
  // the second lands (300 ms later, when it is blocked on the FIFO), on a machine of any speed (before: the reader
  // started 2 s after it opened, which a slow machine could reach before the second signal). The second used to end
  // the program there, without END.
  for (const [first, second] of [["SIGTERM", "SIGINT"], ["SIGINT", "SIGHUP"]] as const) {
    const name = `double-${first}-${second}`.toLowerCase();
    const fifo = join(dir, `${name}.fifo`);
    const copy = join(dir, `${name}-copy.rawtrace`);
    const go = join(dir, `${name}.go`);
    const reader = startFifoReader(fifo, copy, { pipeBytes: 16384, goFile: go });
    await reader.ready;
    const run = await runUntilFlushed("1.0", "wait", name, first, {
      env: { RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "30" }, second, at: "\"ev\":\"waiting\"",
      afterSecond: () => writeFileSync(go, ""),
    });
    if (!existsSync(go)) writeFileSync(go, ""); // the program ended before: let the reader finish
    await reader.closed;
    assert.ok(run.signal === first || run.signal === second, `${name}: ended by a signal (${run.signal}): ${run.stderr}`);
    const bytes = readFileSync(copy);
    const cs = readChunks(bytes);
    assert.ok(bytes.length > 16384, `${name}: ${bytes.length} bytes, no more than the pipe holds: nothing blocked`);
    assert.is(cs[cs.length - 1].type, ChunkType.END,
      `${name}: END written (the second signal cut the exit flush short): ${bytes.length} bytes, ${run.signal}, ${run.stderr}`);
    // Every record delivered is in the dump, in order. (The double prints a batch after its callback returned: the
    // process may end between the two, so the last batch can be in the dump and not on stdout.)
    const want = delivered(run);
    assert.equal(dumped(cs).map(({ cat, kind, size, hex }) => ({ cat, kind, size, hex })).slice(0, want.length), want, name);
  }
});

for (const fn of ["rocprofiler_create_buffer", "rocprofiler_start_context"]) {
  test(`${fn} fails: one error line and LOG chunk, no records, the program runs normally`, () => {
    const run = runSync("1.0", "basic", `fail-${fn}`, { FAKE_ROCP_FAIL: fn });
    ok(run, fn);
    assert.is(run.events.find((e) => e.ev === "registered")?.ok, 0, "initialize reports the failure to the SDK");
    assert.match(run.stderr, new RegExp(`rawtrace\\[\\d+\\]: error: ${fn} failed`));
    assert.is(delivered(run).length, 0);
    const cs = readChunks(outPath("1.0", `fail-${fn}`, run.pid));
    const logs = cs.filter((c) => c.type === ChunkType.LOG).map((c) => new Cursor(c.p)).map((c) => [c.u32(), c.str()]);
    assert.ok(logs.some(([level, msg]) => level === 2 && String(msg).includes(fn)), JSON.stringify(logs));
    assert.is(cs.filter((c) => c.type === ChunkType.ACTIVITY).length, 0);
    assert.is(cs[cs.length - 1].type, ChunkType.END, "the file is closed with END (at once, or by the exit flush)");
  });
}

test("a default kind the SDK refuses (RCCL_API): an info LOG chunk, no warning on stderr, the rest recorded", () => {
  const run = runSync("1.0", "basic", "refused", { FAKE_ROCP_FAIL: "RCCL_API" });
  ok(run, "refused RCCL_API");
  assert.not.match(run.stderr, /RCCL_API/);
  const cs = readChunks(outPath("1.0", "refused", run.pid));
  const logs = cs.filter((c) => c.type === ChunkType.LOG).map((c) => new Cursor(c.p)).map((c) => [c.u32(), c.str()]);
  assert.ok(logs.some(([level, msg]) => level === 0 && /buffer tracing of RCCL_API \(kind 14\) refused/.test(String(msg))),
    JSON.stringify(logs));
  const recs = dumped(cs);
  assert.ok(recs.length > 0 && !recs.some((r) => r.kind === KIND["1.0"].RCCL_API));
  const explicit = runSync("1.0", "basic", "refused2", { FAKE_ROCP_FAIL: "RCCL_API", RAWTRACE_ROCM_KINDS: "default,RCCL_API" });
  assert.match(explicit.stderr, /warning: buffer tracing of RCCL_API \(kind 14\) refused/, "asked for by name: a warning");
});

test("a write error stops the SDK's tracing too (its context stopped while the program runs), not only the writing", () => {
  // 4 KiB of file: the header and tables fit, the record buffers do not (EFBIG).
  const env = envFor("1.0", "write-error", { RT_APP_STEPS: "200" });
  const r = spawnSync("bash", ["-c", `ulimit -f 4; exec "$0" stopped`, APP], { env, encoding: "utf8", timeout: 60_000, maxBuffer: 64 << 20 });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /File too large; collection stopped/);
  const sdk = parseLines(r.stdout ?? "").find((e) => e.ev === "sdk")!;
  assert.is(sdk.started, 0, `the SDK's context still started after ${sdk.waited_ms} ms`);
});

test("RAWTRACE_OUTPUT=/dev/full: one error line, no tool, the program runs normally", () => {
  const run = runSync("1.0", "basic", "devfull", { RAWTRACE_OUTPUT: "/dev/full" });
  ok(run, "/dev/full");
  assert.match(run.stderr, /rawtrace\[\d+\]: error: cannot create \/dev\/full/);
  assert.is(run.events.find((e) => e.ev === "registered")?.ok, 0);
});

test.run();
