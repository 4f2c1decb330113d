/**
 * The HPU collector (collectors/hpu) end to end, without a Gaudi or Synapse.
 *
 * `make -C collectors/hpu test-bins` builds the collector, the libSynapse.so test double (test/collectors/
 * fake_synapse.c: 208-byte synTraceEvent buffers with x87 long double timestamps, metadata naming every engine type,
 * host and device events, counters, extra args in and outside the buffer) and the test program
 * (test/collectors/hpu_app.c), linked against the double and run with LD_PRELOAD=librawtrace_hpu.so. The double
 * appends every buffer it hands out, with its address and the pointers outside it, to a side file; the dump's
 * HPU_TRACE chunks must hold exactly those buffers in order, each preceded by STRINGS for exactly those outside
 * pointers. Read here straight from the container, every chunk's CRCs checked.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exitLeft, readDumpChunks, type DumpChunk } from "../helpers/dump_chunks.js";
import { startFifoReader } from "../helpers/fifo_reader.js";
import { CHUNK_HEADER_SIZE, ChunkType, ClockWhich, DropReason, PREAMBLE_SIZE, Vendor } from "../../src/format/container.js";
import { toChrome } from "../helpers/convert.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/hpu");
const LIB = join(BUILD, "librawtrace_hpu.so");
const FAKE = join(BUILD, "fake/libSynapse.so");
const APP = join(BUILD, "hpu_app");
const CLI = join(ROOT, "dist/node/cli.js");
/** Chunk types of the HPU dumps (docs/format.md, "Habana HPU"). */
const HPU_TRACE = 14, HPU_DEVICE = 15;
const ENTRY = 208;
const REASON = { RELEASE: 0, EXIT: 1, PERIODIC: 2, EXPLICIT: 3 };
const STEPS = 20;
/** Events per step the double records: host 3, TPC 2, MME 1, PDMA 1, EDMA 2, KDMA 1, counter 1 (Gaudi: no EDMA/KDMA). */
const PER_STEP = { gaudi2: 11, gaudi: 8 };

let dir = "";

interface Delivered { base: bigint; size: number; num: bigint; dev: number; bytes: Buffer; outside: Map<bigint, string> }
/** The double's side file: every buffer it handed out, with the pointers outside it (ptr → bytes as latin1). */
function readDelivered(path: string): Delivered[] {
  if (!existsSync(path)) return [];
  const b = readFileSync(path);
  const out: Delivered[] = [];
  for (let o = 0; o < b.length;) {
    const base = b.readBigUInt64LE(o), size = Number(b.readBigUInt64LE(o + 8)), num = b.readBigUInt64LE(o + 16);
    const dev = b.readUInt32LE(o + 24), n = b.readUInt32LE(o + 28);
    o += 32;
    const bytes = b.subarray(o, o + size);
    o += size;
    const outside = new Map<bigint, string>();
    for (let i = 0; i < n; i++) {
      const ptr = b.readBigUInt64LE(o), len = b.readUInt32LE(o + 8);
      outside.set(ptr, b.toString("latin1", o + 12, o + 12 + len));
      o += 12 + len;
    }
    out.push({ base, size, num, dev, bytes, outside });
  }
  return out;
}

interface Trace {
  base: bigint; size: number; num: bigint; dev: number; type: number; reason: number; pull: number; ns: bigint;
  bytes: Buffer; strings: Map<bigint, string>;
}
/** HPU_TRACE chunks, each with the STRINGS entries written since the previous one. */
function traces(chunks: DumpChunk[]): Trace[] {
  const out: Trace[] = [];
  let strings = new Map<bigint, string>();
  for (const c of chunks) {
    if (c.type === ChunkType.STRINGS) {
      for (let o = 4, i = 0, n = c.p.readUInt32LE(0); i < n; i++) {
        const ptr = c.p.readBigUInt64LE(o), len = c.p.readUInt32LE(o + 8);
        assert.not.ok(strings.has(ptr), `pointer ${ptr} twice before one trace`);
        strings.set(ptr, c.p.toString("latin1", o + 12, o + 12 + len));
        o += 12 + len;
      }
    }
    if (c.type !== HPU_TRACE) continue;
    const p = c.p;
    const size = Number(p.readBigUInt64LE(8));
    assert.is(p.length, 48 + size, "payload = 48-byte head + the buffer");
    out.push({
      base: p.readBigUInt64LE(0), size, num: p.readBigUInt64LE(16), dev: p.readUInt32LE(24), type: p.readUInt32LE(28),
      reason: p.readUInt32LE(32), pull: p.readUInt32LE(36), ns: p.readBigUInt64LE(40), bytes: p.subarray(48), strings,
    });
    strings = new Map();
  }
  return out;
}

/** An x87 80-bit long double (10 bytes at `o`) as a JS number. */
function f80(b: Buffer, o: number): number {
  const mant = b.readBigUInt64LE(o), se = b.readUInt16LE(o + 8), exp = se & 0x7fff;
  if (mant === 0n && exp === 0) return 0;
  return (se & 0x8000 ? -1 : 1) * Number(mant) * 2 ** (exp - 16383 - 63);
}

/** C string at buffer address `ptr` (relocated by `base`), as the decoder will read it. */
function cstr(t: { base: bigint; bytes: Buffer }, ptr: bigint): string {
  if (ptr === 0n) return "";
  const off = Number(ptr - t.base);
  assert.ok(off >= 0 && off < t.bytes.length, `pointer ${ptr} inside the buffer`);
  return t.bytes.toString("latin1", off, t.bytes.indexOf(0, off));
}

interface Parsed { seqs: number[]; meta: Map<number, string>; ts: number[] }
/** Walks a buffer's entries: sequence numbers of the non-metadata events, engine-type names, timestamps (µs). */
function parse(t: { base: bigint; bytes: Buffer; size: number }): Parsed {
  const b = t.bytes;
  const num = Number(b.readBigUInt64LE(t.size - 16));
  assert.is(b.readBigUInt64LE(t.size - 8), 2n, "trailing version");
  assert.ok(num * ENTRY <= t.size - 16);
  const out: Parsed = { seqs: [], meta: new Map(), ts: [] };
  for (let i = 0; i < num; i++) {
    const e = i * ENTRY, ph = String.fromCharCode(b[e + 16]);
    if (ph === "M") {
      if (b.readUInt32LE(e + 68) === 0) out.meta.set(b.readUInt32LE(e + 64), cstr(t, b.readBigUInt64LE(e + 80)));
      continue;
    }
    out.ts.push(f80(b, e + 32));
    if (ph === "C") out.seqs.push(b.readDoubleLE(e + 96));
    else {
      assert.ok("BEX".includes(ph), `event type ${ph}`);
      out.seqs.push(Number(b.readBigUInt64LE(e + 120)));
      assert.ok(cstr(t, b.readBigUInt64LE(e + 0)).length > 0, "name relocates into the pool");
    }
  }
  return out;
}

/** `limitKiB`: the process's file size limit (ulimit -f), for write errors. */
function run(name: string, mode: string, extra: Record<string, string> = {}, program = APP, limitKiB?: number) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|HABANA_|ENABLE_DEBUG_INFO$)/.test(k)) delete env[k];
  Object.assign(env, {
    LD_PRELOAD: LIB, LD_LIBRARY_PATH: join(BUILD, "fake"), RAWTRACE_SYNAPSE_LIB: FAKE,
    FAKE_SYNAPSE_DUMP: join(dir, `${name}.delivered`), RAWTRACE_OUTPUT: join(dir, `${name}.rawtrace`),
    RT_APP_STEPS: String(STEPS), ...extra,
  });
  const r = limitKiB === undefined
    ? spawnSync(program, [mode], { env, encoding: "utf8", timeout: 120_000 })
    // The collector preloaded into the program only: bash would load it too.
    : spawnSync("bash", ["-c", `ulimit -f ${limitKiB}; LD_PRELOAD="$2" exec "$0" "$1"`, program, mode, LIB],
      { env: { ...env, LD_PRELOAD: undefined }, encoding: "utf8", timeout: 120_000 });
  const lines = (r.stdout ?? "").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const final = lines.find((l) => "events" in l) as { events: number; pulls: number; env: string; allocs: number; misuse: number } | undefined;
  return { ...r, lines, final, file: join(dir, `${name}.rawtrace`), delivered: readDelivered(join(dir, `${name}.delivered`)) };
}

/** The HPU_TRACE chunks are exactly the buffers the double handed out (all, or the first ones when `prefix`). */
function sameAsDelivered(ts: Trace[], delivered: Delivered[], prefix = false) {
  assert.ok(delivered.length > 0);
  if (prefix) assert.ok(ts.length <= delivered.length && ts.length > 0, `${ts.length} of ${delivered.length}`);
  else assert.is(ts.length, delivered.length, "one chunk per buffer handed out");
  ts.forEach((t, i) => {
    const d = delivered[i];
    assert.is(t.base, d.base, "base = the buffer's address");
    assert.is(t.size, d.size, "size = the bytes the second synProfilerGetTrace wrote");
    assert.is(t.num, d.num, "numEntries");
    assert.is(t.dev, d.dev, "device");
    assert.is(t.type, 1, "synTraceAll");
    assert.ok(t.bytes.equals(d.bytes), `chunk ${i}: the buffer verbatim`);
    assert.equal(t.strings, d.outside, `chunk ${i}: STRINGS = exactly the pointers outside the buffer`);
  });
}

function anchors(chunks: DumpChunk[]) {
  return chunks.filter((c) => c.type === ChunkType.CLOCK).map((c) => ({ which: c.p.readUInt32LE(0), ns: c.p.readBigUInt64LE(8) }));
}

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/hpu"), "test-bins"], { stdio: "inherit" });
  dir = mkdtempSync(join(tmpdir(), "rawtrace-hpu-"));
});
test.after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

test("release: one HPU_TRACE chunk that is the buffer Synapse returned, with strings, device, clocks", () => {
  const r = run("run", "run");
  assert.is(r.status, 0, r.stderr);
  assert.is(r.lines[0].collector, 1);
  assert.is(r.final?.env, "1", "HABANA_PROFILE set by the collector before synInitialize");
  assert.is(r.final?.allocs, 0, "the profiler's device buffer was allocated and freed at release");
  assert.is(r.final?.events, PER_STEP.gaudi2 * STEPS);
  const chunks = readDumpChunks(r.file);
  const types = chunks.map((c) => c.type);
  assert.is(types[0], ChunkType.HEADER);
  const h = chunks[0].p;
  assert.is(h.readUInt32LE(0), Vendor.HABANA);
  assert.is(h.readUInt32LE(8), 11900, "synDriverGetVersion 1.19.0.561 → 10000 × 1 + 100 × 19 + 0");
  assert.is(types[types.length - 1], ChunkType.END);
  // HPU_DEVICE: id 0, synDeviceGaudi2 (4), 96 GiB, "GAUDI2", before the trace
  const dv = chunks.find((c) => c.type === HPU_DEVICE)!.p;
  assert.is(dv.readUInt32LE(0), 0);
  assert.is(dv.readUInt32LE(4), 4);
  assert.is(dv.readBigUInt64LE(8), 96n << 30n);
  assert.is(dv.toString("utf8", 20, 20 + dv.readUInt32LE(16)), "GAUDI2");
  assert.is(dv.length, 20 + 6);
  assert.ok(types.indexOf(HPU_DEVICE) < types.indexOf(HPU_TRACE));
  // THREAD_NAMES: the main thread (tid = pid), before the first trace: the process id again, checksummed on its own.
  const names = chunks.find((c) => c.type === ChunkType.THREAD_NAMES)!.p;
  assert.equal([names.readUInt32LE(0), names.readUInt32LE(4), names.readUInt32LE(8)], [1, h.readUInt32LE(20), h.readUInt32LE(20)]);
  assert.ok(types.indexOf(ChunkType.THREAD_NAMES) < types.indexOf(HPU_TRACE));
  const ts = traces(chunks);
  sameAsDelivered(ts, r.delivered);
  assert.is(ts[0].reason, REASON.RELEASE);
  assert.is(ts[0].pull, 0);
  assert.ok(ts[0].strings.size > 2 * STEPS, "outside arrays, their keys and values");
  assert.ok([...ts[0].strings.values()].includes("API_ID"));
  // every event once; engine types named by 'M' entries at engineIndex 0
  const p = parse(ts[0]);
  assert.equal(p.seqs.sort((a, b) => a - b), Array.from({ length: PER_STEP.gaudi2 * STEPS }, (_, i) => i));
  assert.equal([...p.meta.values()].sort(), ["***Host", "*EDMA ", "*KDMA", "*MME ", "*PDMA", "*TPC "]);
  // clocks on the profiler's clock: START before the first event, END (= the chunk's profiler ns) after the last
  const a = anchors(chunks);
  assert.equal(a.map((x) => x.which), [ClockWhich.START, ClockWhich.END]);
  assert.is(a[1].ns, ts[0].ns, "END anchor read right after synProfilerStop, as the chunk's profiler ns");
  const first = Math.min(...p.ts), last = Math.max(...p.ts);
  assert.ok(Number(a[0].ns) / 1000 <= first && last <= Number(a[1].ns) / 1000, "events between the anchors (µs)");
});

test("the HEADER lost (its chunk header damaged): Synapse's host rows keep the process, read from THREAD_NAMES (before: pid 0)", async () => {
  const r = run("run", "run");
  assert.is(r.status, 0, r.stderr);
  const bytes = new Uint8Array(readFileSync(r.file));
  const pid = new DataView(bytes.buffer).getUint32(PREAMBLE_SIZE + CHUNK_HEADER_SIZE + 20, true);
  const hostPids = async (b: Uint8Array) => {
    const { trace } = await toChrome(b);
    return [...new Set(trace.traceEvents.filter((e: any) => e.ph === "X" && e.cat === "hpu_op").map((e: any) => e.pid))];
  };
  assert.equal(await hostPids(bytes), [pid]);
  bytes[PREAMBLE_SIZE + 20] ^= 1; // the HEADER's chunk header CRC: skipped whole (NO_HEADER)
  assert.equal(await hostPids(bytes), [pid]);
});

test("three devices by every acquire call: each its device chunk and trace, Gaudi 1 engine names", () => {
  const r = run("multi", "multi");
  assert.is(r.status, 0, r.stderr);
  assert.is(r.final?.events, (2 * PER_STEP.gaudi2 + PER_STEP.gaudi) * STEPS);
  const chunks = readDumpChunks(r.file);
  const devs = chunks.filter((c) => c.type === HPU_DEVICE).map((c) =>
    `${c.p.readUInt32LE(0)}:${c.p.readUInt32LE(4)}:${c.p.readBigUInt64LE(8) >> 30n}:${c.p.toString("utf8", 20)}`);
  assert.equal(devs, ["0:4:96:GAUDI2", "1:2:32:GAUDI", "2:5:128:GAUDI3"]);
  const ts = traces(chunks);
  sameAsDelivered(ts, r.delivered);
  assert.equal(ts.map((t) => t.dev), [1, 0, 2], "pulled at each release, in release order");
  assert.ok(ts.every((t) => t.reason === REASON.RELEASE && t.pull === 0));
  assert.equal([...parse(ts[0]).meta.values()].sort(), ["***Host", "**DMA ", "**MME ", "**TPC "]);
  const seqs = ts.flatMap((t) => parse(t).seqs).sort((a, b) => a - b);
  assert.equal(seqs, Array.from({ length: r.final!.events }, (_, i) => i));
  const a = anchors(chunks).map((x) => x.which);
  assert.equal(a, [ClockWhich.START, ClockWhich.PERIODIC, ClockWhich.PERIODIC, ClockWhich.END, ClockWhich.END, ClockWhich.END]);
  assert.is(r.final?.allocs, 0);
});

test("RAWTRACE_HPU_PERIOD_MS: stop → get → start pulls, every event in exactly one chunk", () => {
  const r = run("periodic", "periodic", { RAWTRACE_HPU_PERIOD_MS: "20", RT_APP_PULLS: "4" });
  assert.is(r.status, 0, r.stderr);
  const chunks = readDumpChunks(r.file);
  const ts = traces(chunks);
  sameAsDelivered(ts, r.delivered);
  assert.ok(ts.length >= 5, `${ts.length} chunks: 4 waited-for pulls and the release`);
  assert.equal(ts.map((t) => t.pull), ts.map((_, i) => i), "pull index 0, 1, 2, …");
  assert.ok(ts.slice(0, -1).every((t) => t.reason === REASON.PERIODIC));
  assert.is(ts[ts.length - 1].reason, REASON.RELEASE);
  const seqs = ts.flatMap((t) => parse(t).seqs).sort((a, b) => a - b);
  assert.is(r.final?.events, PER_STEP.gaudi2 * STEPS * 5);
  assert.equal(seqs, Array.from({ length: r.final!.events }, (_, i) => i), "none lost, none twice");
  for (let i = 1; i < ts.length; i++) assert.ok(ts[i].ns > ts[i - 1].ns, "profiler ns increases");
  // anchors: START, then per periodic pull a stop and a restart (PERIODIC), then END at release
  const a = anchors(chunks);
  assert.is(a[0].which, ClockWhich.START);
  assert.is(a[a.length - 1].which, ClockWhich.END);
  assert.is(a.filter((x) => x.which === ClockWhich.PERIODIC).length, 2 * (ts.length - 1));
  assert.is(r.final?.allocs, 0);
});

test("a release that goes ahead while the collector's thread is stuck on its output: that device is not touched again", async () => {
  // The output is a FIFO read only once the program released the device (it creates `go` then; before: read 2 s after
  // it opened, which a slow machine could reach before the release): the thread blocks writing the release's trace,
  // the program's wait for it gives up after RAWTRACE_EXIT_TIMEOUT and the device is released; once the thread gets
  // going again it must not call Synapse for the released device (here: free the profiler's device buffer).
  const fifo = join(dir, "stall.fifo");
  const copy = join(dir, "stall-copy.rawtrace");
  const go = join(dir, "stall.go");
  const reader = startFifoReader(fifo, copy, { goFile: go });
  await reader.ready; // the collector gives a FIFO without reader 2 s: on a loaded machine Python can take longer
  const r = run("stall", "stall", {
    RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "1", RT_APP_STEPS: "3000", RT_APP_STALL_MS: "4000", FAKE_SYNAPSE_NEED: "4096",
    RT_APP_GO: go,
  });
  if (!existsSync(go)) writeFileSync(go, ""); // the program failed before: let the reader finish
  await reader.closed;
  assert.is(r.status, 0, r.stderr);
  assert.ok(r.final, r.stdout);
  assert.is((r.final as { misuse: number } & typeof r.final).misuse, 0, "no Synapse call for the released device");
  const chunks = readDumpChunks(copy);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END);
  assert.is(chunks.filter((c) => c.type === ChunkType.HPU_TRACE).length, 1, "the trace pulled before the release is kept");
});

test("a periodic pull whose writes stall (a FIFO nobody reads): the profiler was restarted before them, so the work meanwhile is recorded", async () => {
  // The output is a 16 KiB FIFO that is read only once the program created `go`. When the double has handed out more
  // than 16 KiB of traces, the collector's thread is stuck writing its last pull (nothing was read) and no other pull
  // can come: the 20 steps the program then tries once each are recorded only if that pull restarted the profiler
  // before its writes. Before, the restart followed the writes: the profiler stayed stopped as long as the output did.
  const fifo = join(dir, "stall-pull.fifo"), copy = join(dir, "stall-pull-copy.rawtrace"), go = join(dir, "stall-pull.go");
  const reader = startFifoReader(fifo, copy, { pipeBytes: 16384, goFile: go });
  await reader.ready;
  const r = run("stall-pull", "stall-pull", {
    RAWTRACE_OUTPUT: fifo, RAWTRACE_HPU_PERIOD_MS: "20", RT_APP_PIPE_BYTES: "16384", RT_APP_GO: go,
  });
  if (!existsSync(go)) writeFileSync(go, ""); // the program failed before: let the reader finish
  await reader.closed;
  assert.is(r.status, 0, r.stderr);
  assert.equal(r.lines.find((l) => "stalled_steps" in l), { restarted: 1, stalled_steps: STEPS, refused: 0 },
    "the profiler records while the output is stalled: every step recorded at its first try");
  const chunks = readDumpChunks(copy);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END);
  const ts = traces(chunks);
  sameAsDelivered(ts, r.delivered);
  assert.is(r.final?.events, PER_STEP.gaudi2 * STEPS * 2);
  assert.equal(ts.flatMap((t) => parse(t).seqs).sort((a, b) => a - b), Array.from({ length: r.final!.events }, (_, i) => i),
    "none lost, none twice");
  // The restart's anchor is read before the pull's writes but written after them: the anchors stay in the order they
  // were read (each pull's stop, then its restart), on the profiler's clock and on CLOCK_MONOTONIC.
  const a = chunks.filter((c) => c.type === ChunkType.CLOCK)
    .map((c) => ({ which: c.p.readUInt32LE(0), ns: c.p.readBigUInt64LE(8), mono: c.p.readBigUInt64LE(24) }));
  assert.equal(a.map((x) => x.which),
    [ClockWhich.START, ...Array(2 * (ts.length - 1)).fill(ClockWhich.PERIODIC), ClockWhich.END]);
  for (let i = 1; i < a.length; i++) assert.ok(a[i].ns > a[i - 1].ns && a[i].mono > a[i - 1].mono, `anchor ${i} read after anchor ${i - 1}`);
});

test("RAWTRACE_HPU_PERIOD_MS that is not a number: a warning line, no periodic pulls (not a silent 0)", () => {
  const r = run("period-qq", "run", { RAWTRACE_HPU_PERIOD_MS: "qq" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /RAWTRACE_HPU_PERIOD_MS=qq is not a whole number from 0; ignored/);
  // A negative period is no period either: said, not silently read as 0.
  const neg = run("period-neg", "run", { RAWTRACE_HPU_PERIOD_MS: "-5" });
  assert.is(neg.status, 0, neg.stderr);
  assert.match(neg.stderr, /RAWTRACE_HPU_PERIOD_MS=-5 is not a whole number from 0; ignored/);
  // A zero exit timeout would give the exit pull no time: said, and the default (10 s) used.
  const zero = run("exit-zero", "run", { RAWTRACE_EXIT_TIMEOUT: "0" });
  assert.is(zero.status, 0, zero.stderr);
  assert.match(zero.stderr, /RAWTRACE_EXIT_TIMEOUT=0 is not a number of seconds above 0, up to 1e6; ignored/);
  assert.ok(readFileSync(zero.file).length > 0, "the dump is written");
});

test("an output name another run took: the dump gets a numbered name and the line says so (no %p: another process)", () => {
  const first = run("taken", "run");
  assert.is(first.status, 0, first.stderr);
  const second = run("taken", "run");
  assert.is(second.status, 0, second.stderr);
  assert.match(second.stderr, /taken\.rawtrace already exists \(another process, or an earlier run, uses this RAWTRACE_OUTPUT; add %p for one file per process\); writing .*taken\.1\.rawtrace instead/);
  assert.ok(existsSync(join(dir, "taken.1.rawtrace")));
});

test("two vendors' collectors preloaded into one process with one output name: each writes its own dump, and the line names the other collector (before: an exec or an earlier pid)", () => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/xpu"), "test-bins"], { stdio: "inherit" });
  const XPU = join(ROOT, "build/c/xpu");
  const r = run("two", "run", {
    LD_PRELOAD: `${LIB}:${join(XPU, "librawtrace_xpu.so")}`, LD_LIBRARY_PATH: `${join(BUILD, "fake")}:${join(XPU, "fake")}`,
    RAWTRACE_PTI_LIB: join(XPU, "fake/libpti_view.so"), FAKE_PTI_VERSION: "1.2.0", RAWTRACE_OUTPUT: join(dir, "two-%p.rawtrace"),
  });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /two-\d+\.rawtrace already exists \(another rawtrace collector loaded into this process writes it: one dump per collector\); writing .*two-\d+\.1\.rawtrace instead/);
  const dumps = readdirSync(dir).filter((f) => /^two-\d+(\.1)?\.rawtrace$/.test(f));
  assert.is(dumps.length, 2, dumps.join());
});

test("SIGKILL after some periodic pulls: the dump holds every pulled buffer, `rawtrace info` reads it", () => {
  const r = run("kill", "kill", { RAWTRACE_HPU_PERIOD_MS: "20", RT_APP_PULLS: "3" });
  assert.is(r.signal, "SIGKILL");
  const chunks = readDumpChunks(r.file);
  assert.not.ok(chunks.some((c) => c.type === ChunkType.END));
  const ts = traces(chunks);
  assert.ok(ts.length >= 3, `${ts.length} pulls written before the kill`);
  sameAsDelivered(ts, r.delivered, true);
  assert.ok(ts.every((t) => t.reason === REASON.PERIODIC));
  const seqs = ts.flatMap((t) => parse(t).seqs).sort((a, b) => a - b);
  assert.equal(seqs, Array.from({ length: seqs.length }, (_, i) => i), "none lost, none twice");
  assert.ok(seqs.length >= PER_STEP.gaudi2 * STEPS * 3, "every batch the program waited a pull for");
  const info = spawnSync(process.execPath, [CLI, "info", r.file], { encoding: "utf8", timeout: 60_000 });
  assert.is(info.status, 0, info.stderr);
  assert.match(info.stdout, "NOT closed cleanly (no END chunk)");
  // The collector's own dump, cut by the kill, converts with the Synapse decoder: device work and host calls.
  const out = `${r.file}.json`;
  const conv = spawnSync(process.execPath, [CLI, "convert", r.file, "-o", out], { encoding: "utf8", timeout: 60_000 });
  assert.is(conv.status, 0, conv.stderr);
  const ev = (JSON.parse(readFileSync(out, "utf8")) as { traceEvents: Array<{ cat?: string; ph?: string }> }).traceEvents;
  assert.ok(ev.filter((e) => e.ph === "X" && e.cat === "kernel").length > 0, "TPC/MME kernels");
  assert.ok(ev.filter((e) => e.ph === "X" && e.cat === "hpu_op").length > 0, "Synapse host calls");
});

test("exit without release: the exit hook pulls (reason 1) and completes the file", () => {
  const r = run("exit", "exit");
  assert.is(r.status, 0, r.stderr);
  const chunks = readDumpChunks(r.file);
  const ts = traces(chunks);
  sameAsDelivered(ts, r.delivered);
  assert.equal(ts.map((t) => t.reason), [REASON.EXIT]);
  assert.is(parse(ts[0]).seqs.length, PER_STEP.gaudi2 * STEPS);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END);
  assert.is(anchors(chunks).pop()!.which, ClockWhich.END);
});

test("exit with three devices not released: one device's trace held at a time, each written before the next is fetched", () => {
  // Before, the exit flush fetched every device's trace into its own buffer before writing any (up to 64 devices ×
  // RAWTRACE_MAX_MEMORY at once). The collector counts its trace buffers; the double says how much of the dump was
  // written when each fetch began.
  const name = "multi-exit";
  const r = run(name, name, { RAWTRACE_LOG: "info", FAKE_SYNAPSE_PRINT_FETCH: "1", FAKE_SYNAPSE_WATCH: join(dir, `${name}.rawtrace`) });
  assert.is(r.status, 0, r.stderr);
  const chunks = readDumpChunks(r.file);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END);
  const ts = traces(chunks);
  sameAsDelivered(ts, r.delivered);
  assert.equal(ts.map((t) => `${t.dev}/${t.reason}`), ["0/1", "1/1", "2/1"], "one exit pull per device");
  assert.equal(ts.flatMap((t) => parse(t).seqs).sort((a, b) => a - b), Array.from({ length: r.final!.events }, (_, i) => i));
  assert.match(r.stderr, /at most 1 trace buffer\(s\), \d+ bytes, held at once/);
  const fetches = r.lines.filter((l) => "watched" in l) as Array<{ dev: number; watched: number }>;
  assert.equal(fetches.map((f) => f.dev), [0, 1, 2]);
  const traceEnds = chunks.filter((c) => c.type === HPU_TRACE).map((c) => c.off + 24 + c.p.length);
  for (let k = 1; k < fetches.length; k++)
    assert.ok(fetches[k].watched >= traceEnds[k - 1], `device ${k}'s fetch began with ${fetches[k].watched} bytes written, before device ${k - 1}'s trace (ending at ${traceEnds[k - 1]})`);
});

test("exit with three devices' traces for an output too slow for RAWTRACE_EXIT_TIMEOUT: the traces that fit are written, the rest counted (DROPPED reason 4) and said, END written", async () => {
  // 600 steps on each of three devices (≈ 1.6 MB of trace each) for a FIFO read at ≈ 1.3 MB/s, and a 4 s exit
  // timeout: the first device's trace (written unmeasured: no pull before) takes ≈ 1.2 s, the second as long, the
  // third would end past the deadline (the timeout less 0.4 s). Before, the exit hook's wait ran out while the third
  // trace was being written: the file ended inside it, without END.
  const fifo = join(dir, "exit-slow.fifo");
  const copy = join(dir, "exit-slow-copy.rawtrace");
  const reader = startFifoReader(fifo, copy, { pauseS: 0.05 });
  await reader.ready;
  const r = run("exit-slow", "multi-exit", { RT_APP_STEPS: "600", RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "4" });
  await reader.closed;
  assert.is(r.status, 0, r.stderr);
  const chunks = readDumpChunks(copy);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END, r.stderr);
  const n = exitLeft(chunks, r.stderr, "device traces");
  const ts = traces(chunks);
  assert.ok(ts.length > 0, `${ts.length} traces written, ${n} left`);
  assert.is(ts.length + n, 3, "every device's trace written or counted");
  sameAsDelivered(ts, r.delivered, true);
});

test("rawtrace_hpu_flush: an explicit stop → get → start (reason 3), then the release", () => {
  const r = run("flush", "flush");
  assert.is(r.status, 0, r.stderr);
  assert.ok(r.lines.some((l) => l.flushed === 0), r.stdout);
  const ts = traces(readDumpChunks(r.file));
  sameAsDelivered(ts, r.delivered);
  assert.equal(ts.map((t) => `${t.reason}/${t.pull}`), [`${REASON.EXPLICIT}/0`, `${REASON.RELEASE}/1`]);
  assert.equal(ts.flatMap((t) => parse(t).seqs).sort((a, b) => a - b),
    Array.from({ length: 2 * PER_STEP.gaudi2 * STEPS }, (_, i) => i));
});

test("SIGTERM with the default disposition: the handler has the collector's thread pull and close the file", () => {
  const r = run("term", "term");
  assert.is(r.signal, "SIGTERM");
  const chunks = readDumpChunks(r.file);
  const ts = traces(chunks);
  sameAsDelivered(ts, r.delivered);
  assert.equal(ts.map((t) => t.reason), [REASON.EXIT]);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END);
});

test("SIGTERM while the signalled thread holds Synapse's lock (inside a launch): the exit flush does not wait on Synapse for ever, END is written", () => {
  // Step 2 raises SIGTERM inside the double's fake_synapse_run, with its lock held: the handler waits for the exit
  // flush, whose synProfilerStop needs that lock. Before, it waited until the handler's wait (RAWTRACE_EXIT_TIMEOUT,
  // 3 s) ran out and the process died without END.
  const r = run("held-lock", "run", { FAKE_SYNAPSE_RUN_RAISE: "2", RAWTRACE_EXIT_TIMEOUT: "3" });
  assert.is(r.signal, "SIGTERM", r.stderr);
  assert.match(r.stderr, /synProfilerStop \/ synProfilerGetTrace did not return within 1\.5 s/);
  const chunks = readDumpChunks(r.file);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END, "END written");
  assert.ok(chunks.some((c) => c.type === ChunkType.LOG && c.p.toString("latin1").includes("did not return")), "said in the file");
});

test("SIGTERM on a thread waiting for rawtrace_hpu_flush, with the queue's done lock held: the exit flush goes on without that lock, END is written", async () => {
  // The program's pthread_cond_timedwait raises SIGTERM inside the flush's wait, where the collector holds its done
  // lock (the signal landing between the lock and the wait). The collector's thread is then still writing the flush's
  // trace into a 16 KiB FIFO whose reader starts 2 s after it opened; once written, it marks the item done under that
  // lock, held for ever by the thread in the handler. Before (session 25's audit, reproduced with gdb only): the
  // handler's wait ran out (RAWTRACE_EXIT_TIMEOUT) and the process died without END. The reader starts only when the
  // program is about to raise (it creates `go` then; before: 2 s after the reader opened, which a slow machine could
  // reach before the flush): the thread cannot have finished the trace before the program's wait, on any machine.
  const fifo = join(dir, "done-lock.fifo");
  const copy = join(dir, "done-lock-copy.rawtrace");
  const go = join(dir, "done-lock.go");
  const reader = startFifoReader(fifo, copy, { pipeBytes: 16384, goFile: go });
  await reader.ready;
  const t0 = Date.now();
  const r = run("done-lock", "flush", {
    RT_APP_STEPS: "200", RT_APP_RAISE_IN_WAIT: "1", RAWTRACE_OUTPUT: fifo, RAWTRACE_EXIT_TIMEOUT: "6", RT_APP_GO: go,
  });
  const took = Date.now() - t0; // ≈ 0.5 s; before the fix, the whole 6 s timeout
  if (!existsSync(go)) writeFileSync(go, ""); // the program failed before: let the reader finish
  await reader.closed;
  assert.ok(r.lines.some((l) => l.raised_in_wait === 1), `raised inside the flush's wait: ${r.stdout}`);
  assert.is(r.signal, "SIGTERM", r.stderr);
  const chunks = readDumpChunks(copy);
  assert.is(chunks[chunks.length - 1].type, ChunkType.END, `END written after ${took} ms: ${r.stderr}`);
  assert.equal(traces(chunks).map((t) => t.reason), [REASON.EXPLICIT, REASON.EXIT], "the flush's trace, then the exit's");
});

test("every anchor of a pull is read when the profiler stops, before its trace is fetched (periodic, release and exit pulls)", () => {
  // The host clocks of an anchor read after the fetch lagged the profiler's clock by the fetch's time (169 ms for a
  // 20,000-step exit pull) and stretched the device timeline between the anchors.
  for (const mode of ["run", "exit", "periodic"]) {
    const r = run(`anchor-${mode}`, mode, { FAKE_SYNAPSE_PRINT_FETCH: "1", RT_APP_PULLS: "3" , ...(mode === "periodic" ? { RAWTRACE_HPU_PERIOD_MS: "50" } : {}) });
    assert.ok(r.status === 0 || mode === "exit", r.stderr);
    const fetches = r.lines.filter((l) => "fetch_mono" in l).map((l) => BigInt(l.fetch_mono as string));
    const later = readDumpChunks(r.file).filter((c) => c.type === ChunkType.CLOCK && c.p.readUInt32LE(0) !== 0)
      .map((c) => c.p.readBigUInt64LE(24)); // CLOCK_MONOTONIC of each PERIODIC / END anchor (docs/format.md §2)
    assert.ok(fetches.length > 0 && later.length > 0, `${mode}: ${fetches.length} fetches, ${later.length} anchors`);
    // Each pull: its anchor, then its fetch. The k-th anchor after START precedes the k-th fetch.
    for (let k = 0; k < Math.min(fetches.length, later.length); k++) {
      assert.ok(later[k] <= fetches[k], `${mode}: anchor ${k} read at ${later[k]}, after its fetch began at ${fetches[k]}`);
    }
  }
});

test("a write error stops Synapse's profiler too (nothing recorded or fetched after it), not only the writing", () => {
  // 1 KiB of file: the header and device chunk fit, no trace does (EFBIG). No side file of the double's (it would hit
  // the same limit). Before, the profiler recorded the rest of the run and the release fetched it, to be freed.
  const r = run("write-error", "write-error", { RAWTRACE_HPU_PERIOD_MS: "20", FAKE_SYNAPSE_DUMP: "" }, APP, 1);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stderr, /File too large\); recording stops/);
  const v = r.lines.find((l) => "recording_after" in l)!;
  assert.is(v.recording_after, 0, `the profiler still records ${v.waited_ms} ms after the first pull: ${r.stderr}`);
  assert.is(v.recorded_after, 0, "the program's later steps are not recorded");
  assert.is(r.final?.pulls, 1, "only the trace whose write failed was fetched: not the release's");
  assert.is(r.final?.allocs, 0, "the profiler's device buffer still freed at release");
  assert.is(r.final?.misuse, 0);
});

test("memory cap: a trace larger than RAWTRACE_MAX_MEMORY is not fetched; its entries are counted as dropped", () => {
  const r = run("cap", "run", { RAWTRACE_MAX_MEMORY: "1k" });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.delivered.length, 0, "no buffer fetched");
  const chunks = readDumpChunks(r.file);
  assert.not.ok(chunks.some((c) => c.type === HPU_TRACE));
  const dropped = chunks.filter((c) => c.type === ChunkType.DROPPED);
  assert.is(dropped.length, 1);
  assert.is(dropped[0].p.readUInt32LE(8), DropReason.MEMORY_CAP);
  assert.is(Number(dropped[0].p.readBigUInt64LE(0)), PER_STEP.gaudi2 * STEPS + 18, "events + 18 metadata entries");
  assert.match(r.stderr, "exceeds RAWTRACE_MAX_MEMORY");
});

test("a trace Synapse says is larger than the buffer it sized: not written, its entries counted as dropped and said", () => {
  const r = run("oversize", "run", { FAKE_SYNAPSE_OVERSIZE: "1" });
  assert.is(r.status, 0, r.stderr);
  const chunks = readDumpChunks(r.file);
  assert.not.ok(chunks.some((c) => c.type === HPU_TRACE));
  const dropped = chunks.filter((c) => c.type === ChunkType.DROPPED);
  assert.is(dropped.length, 1, "nothing said before: the trace vanished");
  assert.is(dropped[0].p.readUInt32LE(8), DropReason.VENDOR);
  assert.is(Number(dropped[0].p.readBigUInt64LE(0)), PER_STEP.gaudi2 * STEPS + 18, "events + 18 metadata entries");
  assert.match(r.stderr, "synProfilerGetTrace reported");
});

test("a stale pointer in the extra args is skipped (no entry, no crash) and counted in a LOG line", () => {
  const r = run("wild", "run", { FAKE_SYNAPSE_WILD: "1" });
  assert.is(r.status, 0, r.stderr);
  const chunks = readDumpChunks(r.file);
  sameAsDelivered(traces(chunks), r.delivered);
  const logs = chunks.filter((c) => c.type === ChunkType.LOG).map((c) => c.p.toString("utf8", 8));
  assert.ok(logs.includes("1 pointer(s) outside the trace buffers could not be read"), logs.join(" | "));
});

test("HABANA_PROFILE: a user value is kept; 0 keeps the profiler off; too late to set says so once", () => {
  let r = run("env-user", "run", { HABANA_PROFILE: "profile_api_light" });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.final?.env, "profile_api_light");
  assert.is(traces(readDumpChunks(r.file)).length, 1);

  r = run("env-zero", "run", { HABANA_PROFILE: "0" });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.final?.env, "0");
  assert.is(r.final?.events, 0, "the program ran unprofiled");
  assert.match(r.stderr, "HABANA_PROFILE=0 is kept");
  assert.is(r.stderr.split("\n").filter((l) => l.includes("synProfilerStart")).length, 1);
  let chunks = readDumpChunks(r.file);
  assert.not.ok(chunks.some((c) => c.type === HPU_TRACE));
  assert.ok(chunks.some((c) => c.type === ChunkType.LOG && c.p.toString("utf8").includes("HABANA_PROFILE=0")));
  assert.is(r.final?.allocs, 0);

  // Synapse that initializes at load (before the collector's constructor could set the variable)
  r = run("env-late", "run", { FAKE_SYNAPSE_INIT_AT_LOAD: "1" });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.final?.env, "(unset)");
  const lines = r.stderr.split("\n").filter((l) => l.includes("synProfilerStart"));
  assert.is(lines.length, 1);
  assert.match(lines[0], "set HABANA_PROFILE=1 before the program starts");
  chunks = readDumpChunks(r.file);
  assert.not.ok(chunks.some((c) => c.type === HPU_TRACE));
});

test("no Synapse library: the program runs unchanged, one line says why, no file", () => {
  const r = run("nolib", "run", { RAWTRACE_SYNAPSE_LIB: join(dir, "missing/libSynapse.so") });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.final?.events, 0, "calls forwarded to Synapse; the profiler never started");
  assert.is(r.final?.env, "(unset)", "HABANA_PROFILE left alone");
  const lines = r.stderr.split("\n").filter((l) => l.includes("HPU collector inactive"));
  assert.is(lines.length, 1);
  assert.match(lines[0], /RAWTRACE_SYNAPSE_LIB=.*missing\/libSynapse\.so cannot be loaded/);
  assert.not.ok(existsSync(r.file));
  // the same with Synapse loaded privately (RTLD_LOCAL): the calls still reach it
  const l = run("nolib-local", "run", { RAWTRACE_SYNAPSE_LIB: join(dir, "missing/libSynapse.so") }, join(BUILD, "hpu_launch"));
  assert.is(l.status, 0, l.stderr);
  assert.is(l.final?.events, 0);
  assert.is(l.stderr.split("\n").filter((x) => x.includes("HPU collector inactive")).length, 1);
  // a program without Synapse, nothing on the search path
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LD_PRELOAD: LIB, RAWTRACE_OUTPUT: join(dir, "none.rawtrace") };
  const t = spawnSync("true", [], { env, encoding: "utf8" });
  assert.is(t.status, 0);
  const ls = t.stderr.split("\n").filter((l) => l.includes("HPU collector inactive"));
  assert.is(ls.length, 1, t.stderr);
  assert.match(ls[0], "no libSynapse.so on the loader's search path");
  assert.not.ok(existsSync(join(dir, "none.rawtrace")));
});

test("RAWTRACE_SYNAPSE_LIB unset: libSynapse found as the program loaded it, also privately (RTLD_LOCAL)", () => {
  const r = run("found", "run", { RAWTRACE_SYNAPSE_LIB: "" });
  assert.is(r.status, 0, r.stderr);
  sameAsDelivered(traces(readDumpChunks(r.file)), r.delivered);
  // hpu_launch dlopens the program as a library (RTLD_LOCAL) that links libSynapse, as Python loads the bridge
  const l = run("local", "run", { RAWTRACE_SYNAPSE_LIB: "" }, join(BUILD, "hpu_launch"));
  assert.is(l.status, 0, l.stderr);
  assert.is(l.final?.env, "1");
  const ts = traces(readDumpChunks(l.file));
  sameAsDelivered(ts, l.delivered);
  assert.is(parse(ts[0]).seqs.length, PER_STEP.gaudi2 * STEPS);
});

test.run();
