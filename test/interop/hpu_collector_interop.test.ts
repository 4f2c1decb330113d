/**
 * A test-double dump converts to both outputs the real clients accept (issue 16): the real HPU collector
 * (collectors/hpu, LD_PRELOAD) records test/collectors/hpu_app.c under the libSynapse test double
 * (test/collectors/fake_synapse.c) on three devices (Gaudi2, Gaudi, Gaudi3); its dump is converted to Chrome JSON,
 * which HTA loads, and to XSpace, which XProf renders.
 *
 * The expectation is computed here from the dump's HPU_TRACE buffers (asserted equal to the buffers the double itself
 * handed out, its FAKE_SYNAPSE_DUMP side file), not from the converter: the 208-byte synTraceEvent entries are walked, their x87 long double µs turned into ns by
 * the documented rule (round(x · 1000), computed exactly with BigInt), names relocated into the string pool, engines
 * named by the 'M' entries, 'B'/'E' paired first-in first-out per (device, engine type, engine, context), device work
 * classified (TPC/MME → kernel, memset → gpu_memset, memcpy / DMA → gpu_memcpy) and linked to the latest recipe
 * launch before it (docs/decoders/hpu.md), profiler ns mapped to Unix ns through the dump's own CLOCK anchors (first
 * START, last END, linear).
 *
 * - HTA (one Gaudi2, as one rank of a PyTorch job has one device): its GPU rows are ours, and its kernel breakdown
 *   per name equals the summed durations computed here (HTA keeps whole µs of start and end: at most 2 µs per event).
 * - XProf: trace_viewer shows every device entry on its device's `/device:GPU:N` plane, on its engine's row, at its
 *   time and with its duration (to the ns); kernel_stats counts every TPC/MME kernel with its total duration; the
 *   streaming trace_viewer@ draws the counter samples ('C', `arguments.value`) as one counter track per device.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readDumpChunks } from "../helpers/dump_chunks.js";
import { ChunkType } from "../../src/format/container.js";
import { htaRankMatching, runHta, writeXprofSpace, xprofCheck } from "../helpers/interop.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD = join(ROOT, "build/c/hpu");
const STEPS = 20;
const ENTRY = 208;
/** Chunk type of one synProfilerGetTrace buffer (docs/format.md, "Habana HPU"). */
const HPU_TRACE = 14;

/** The bridge's engine-type prefixes, in its order: a lane is (index × 1000 + engineIndex) (docs/decoders/hpu.md). */
const PREFIXES = ["**DMA ", "**MME ", "**TPC ", "*PDMA", "*EDMA ", "*KDMA", "*MME ", "*TPC ", "*PSOC", "*SM", "*PMMU",
  "*ROTATOR", "*ARC_FARM", "*VIDEO_DECODER", "*NIC ", "*NIC External ", "*NIC Internal ", "**NIC "];

interface Delivered { base: bigint; size: number; dev: number; bytes: Buffer }

/** The double's side file: every buffer it handed out (u64 base, u64 size, u64 num, u32 device, u32 n, bytes, n × outside). */
function readDelivered(path: string): Delivered[] {
  const b = readFileSync(path);
  const out: Delivered[] = [];
  for (let o = 0; o < b.length;) {
    const base = b.readBigUInt64LE(o), size = Number(b.readBigUInt64LE(o + 8));
    const dev = b.readUInt32LE(o + 24), n = b.readUInt32LE(o + 28);
    o += 32;
    out.push({ base, size, dev, bytes: b.subarray(o, o + size) });
    o += size;
    for (let i = 0; i < n; i++) o += 12 + b.readUInt32LE(o + 8);
  }
  return out;
}

/**
 * The x87 80-bit long double of µs at `o` as integer ns: round(x · 1000), half away from zero, computed exactly.
 * (The decoder's rule is roundl(x * 1000.0L), whose product is rounded to 64 bits first; the two agree unless the
 * exact product lies within a long double ulp of a half, which is asserted not to happen here.)
 */
function f80ns(b: Buffer, o: number): bigint {
  const mant = b.readBigUInt64LE(o), se = b.readUInt16LE(o + 8), exp = se & 0x7fff;
  if (mant === 0n && exp === 0) return 0n;
  assert.ok((se & 0x8000) === 0 && exp !== 0x7fff && mant >> 63n === 1n, `a positive normal long double at ${o}`);
  const shift = exp - 16383 - 63;
  const num = mant * 1000n;
  if (shift >= 0) return num << BigInt(shift);
  const d = 1n << BigInt(-shift);
  const q = num / d, r = num % d;
  const twice = 2n * r;
  assert.ok(twice - d > d >> 50n || d - twice > d >> 50n, `x · 1000 at ${o} is not within an ulp of a half`);
  return twice >= d ? q + 1n : q;
}

/** NUL-terminated string at process address `ptr` of a buffer (the double lays every name out in the pool). */
function cstr(t: Delivered, ptr: bigint): string {
  if (ptr === 0n) return "";
  const off = Number(ptr - t.base);
  assert.ok(off >= 0 && off < t.size, `pointer ${ptr.toString(16)} inside the buffer`);
  return t.bytes.toString("latin1", off, t.bytes.indexOf(0, off));
}

/** One device operation as the expectation sees it: profiler ns, engine row, launch number. */
interface Op {
  dev: number; name: string; cat: string; lane: number; engine: string; start: bigint; end: bigint; corr: number;
}

/** One counter sample ('C'): its name, profiler ns and `arguments.value` (u64 @80, docs/decoders/hpu.md). */
interface Sample { dev: number; name: string; ts: bigint; value: bigint }

/** Walks the dump's HPU_TRACE buffers in file order. */
function expectedOps(delivered: Delivered[]): { ops: Op[]; counters: Sample[] } {
  const ops: Op[] = [];
  const open = new Map<string, Array<{ start: bigint; corr: number }>>();
  const latest = new Map<string, number>(); // device|recipe → launch number
  const typeName = new Map<string, string>(); // device|engineType → type name
  const engineName = new Map<string, string>(); // device|engineType|engineIndex → engine name
  let launches = 0;
  const counters: Sample[] = [];
  for (const t of delivered) {
    const b = t.bytes;
    assert.is(b.readBigUInt64LE(t.size - 8), 2n, "the double's trailing version");
    const num = Number(b.readBigUInt64LE(t.size - 16));
    for (let i = 0; i < num; i++) {
      const e = i * ENTRY;
      const ph = String.fromCharCode(b[e + 16]);
      const type = b.readUInt32LE(e + 64), index = b.readUInt32LE(e + 68);
      if (ph === "M") {
        const n = cstr(t, b.readBigUInt64LE(e + 80));
        if (index === 0) typeName.set(`${t.dev}|${type}`, n);
        else engineName.set(`${t.dev}|${type}|${index}`, n);
        continue;
      }
      if (ph === "C") {
        counters.push({ dev: t.dev, name: cstr(t, b.readBigUInt64LE(e + 0)), ts: f80ns(b, e + 32), value: b.readBigUInt64LE(e + 80) });
        continue;
      }
      const tn = typeName.get(`${t.dev}|${type}`);
      assert.ok(tn, `engine type ${type} named before its events`);
      const op = cstr(t, b.readBigUInt64LE(e + 88));
      const name = op || cstr(t, b.readBigUInt64LE(e + 0));
      const recipe = b.readUInt16LE(e + 96);
      const ts = f80ns(b, e + 32);
      if (tn === "***Host") {
        if (name.includes("enqueueWithExternalEvents") && recipe !== 0) latest.set(`${t.dev}|${recipe}`, ++launches);
        continue;
      }
      const key = `${t.dev}|${type}|${index}|${b.readBigUInt64LE(e + 72)}`;
      if (ph === "B") {
        const q = open.get(key) ?? [];
        q.push({ start: ts, corr: recipe ? latest.get(`${t.dev}|${recipe}`) ?? 0 : 0 });
        open.set(key, q);
        continue;
      }
      let start = ts, end = ts + f80ns(b, e + 48), corr = recipe ? latest.get(`${t.dev}|${recipe}`) ?? 0 : 0;
      if (ph === "E") {
        const b0 = open.get(key)?.shift();
        assert.ok(b0, `'E' at entry ${i} has its 'B'`);
        start = b0!.start;
        end = ts;
        corr = b0!.corr;
      } else assert.is(ph, "X");
      const prefix = PREFIXES.findIndex((p) => tn!.startsWith(p));
      assert.ok(prefix >= 0, `engine type name ${tn}`);
      const compute = /TPC|MME/.test(tn!);
      const cat = compute ? "kernel" : name.startsWith("memset") ? "gpu_memset" : "gpu_memcpy";
      assert.ok(compute || /DMA/.test(tn!), `device work of ${tn}`);
      ops.push({
        dev: t.dev, name, cat, lane: prefix * 1000 + index, engine: engineName.get(`${t.dev}|${type}|${index}`)!,
        start, end, corr,
      });
    }
  }
  for (const [k, q] of open) assert.is(q.length, 0, `no 'B' left open on ${k}`);
  return { ops, counters };
}

/** Profiler ns → Unix ns: the dump's first START and last END anchors, linear (model/clock.ts's documented rule). */
function clockOf(file: string): (v: bigint) => bigint {
  const cl = readDumpChunks(file).filter((c) => c.type === ChunkType.CLOCK)
    .map((c) => ({ which: c.p.readUInt32LE(0), v: c.p.readBigUInt64LE(8), r: c.p.readBigUInt64LE(16) }));
  const s = cl.find((a) => a.which === 0)!, e = cl.filter((a) => a.which === 1).pop()!;
  assert.ok(s && e && e.v > s.v, "START and END anchors");
  const slope = Number(e.r - s.r) / Number(e.v - s.v);
  assert.ok(slope > 0.5 && slope < 2, `slope ${slope}`);
  // Rates over 0.1 % apart are the read gap of a short run, not drift: the start offset alone.
  if (Math.abs(slope - 1) > 0.001) return (v) => v + (s.r - s.v);
  return (v) => s.r + BigInt(Math.round(Number(v - s.v) * slope));
}

let work = "";
/** The two recordings: `run` (one Gaudi2, as one rank of a PyTorch job has one device) and `multi` (three devices). */
const rec: Record<"run" | "multi", { dump: Uint8Array; ops: Op[]; counters: Sample[]; toUnix: (v: bigint) => bigint }> = {} as never;

function record(mode: "run" | "multi"): void {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(RAWTRACE_|FAKE_|RT_APP_|HABANA_|ENABLE_DEBUG_INFO$)/.test(k)) delete env[k];
  const file = join(work, `${mode}.rawtrace`), side = join(work, `${mode}.delivered`);
  Object.assign(env, {
    LD_PRELOAD: join(BUILD, "librawtrace_hpu.so"), LD_LIBRARY_PATH: join(BUILD, "fake"),
    RAWTRACE_SYNAPSE_LIB: join(BUILD, "fake/libSynapse.so"), FAKE_SYNAPSE_DUMP: side, RAWTRACE_OUTPUT: file,
    RT_APP_STEPS: String(STEPS),
  });
  const r = spawnSync(join(BUILD, "hpu_app"), [mode], { env, encoding: "utf8", timeout: 120_000 });
  assert.is(r.status, 0, r.stderr);
  // The dump's HPU_TRACE chunks (48-byte head: u64 base, u64 size, u64 num, u32 device, ...; then the buffer), read
  // here from the container, are the buffers the double handed out, in order.
  const traces: Delivered[] = readDumpChunks(file).filter((c) => c.type === HPU_TRACE).map((c) => ({
    base: c.p.readBigUInt64LE(0), size: Number(c.p.readBigUInt64LE(8)), dev: c.p.readUInt32LE(24), bytes: c.p.subarray(48),
  }));
  const delivered = readDelivered(side);
  assert.is(traces.length, delivered.length);
  traces.forEach((t, i) => {
    assert.equal([t.base, t.size, t.dev], [delivered[i].base, delivered[i].size, delivered[i].dev]);
    assert.ok(t.bytes.equals(delivered[i].bytes), `HPU_TRACE ${i} = delivered buffer ${i}`);
  });
  const { ops, counters } = expectedOps(traces);
  rec[mode] = { dump: new Uint8Array(readFileSync(file)), ops, counters, toUnix: clockOf(file) };
}

// uvu reports a failing before-hook with no message: print it.
test.before(() => { try { setup(); } catch (e) { console.error(e); throw e; } });
function setup(): void {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors/hpu"), "test-bins"], { stdio: "inherit" });
  work = mkdtempSync(join(tmpdir(), "rawtrace-hpu-interop-"));
  record("run");
  record("multi");
  // Per step: Gaudi2 and Gaudi3 TPC (B/E), MME, PDMA, EDMA (B/E), KDMA; Gaudi TPC (B/E), MME, DMA. One counter each.
  assert.is(rec.run.ops.length, STEPS * 5);
  assert.is(rec.multi.ops.length, STEPS * (5 + 5 + 3));
  assert.is(rec.multi.counters.length, 3 * STEPS);
}
test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test("HTA loads the collector's dump (one Gaudi2) as Chrome JSON: its kernel breakdown = the delivered entries' durations", async () => {
  const { ops, toUnix } = rec.run;
  const { report, ours } = await runHta(work, { collector: rec.run.dump });
  const hta = htaRankMatching(report, "collector", ours.collector);
  const want = new Map<string, { cat: string; count: number; us: number }>();
  for (const o of ops) {
    const w = want.get(o.name) ?? { cat: o.cat, count: 0, us: 0 };
    assert.is(w.cat, o.cat, o.name);
    w.count++;
    w.us += Number(toUnix(o.end) - toUnix(o.start)) / 1000;
    want.set(o.name, w);
  }
  assert.equal(ours.collector.map((r) => `${r.cat} ×${r.count} ${r.name}`).sort(),
    [...want].map(([n, w]) => `${w.cat} ×${w.count} ${n}`).sort(), "rawtrace's GPU rows = the delivered device entries");
  // HTA's breakdown has a row per kernel name and stream (engine lane): summed per name here.
  const breakdown = new Map<string, number>();
  for (const b of hta.breakdown) breakdown.set(b.name, (breakdown.get(b.name) ?? 0) + b.sum_us);
  let total = 0;
  for (const [name, w] of want) {
    const got = breakdown.get(name);
    assert.ok(got !== undefined, `${name} missing from HTA's kernel breakdown`);
    assert.ok(Math.abs(got! - w.us) <= 2 * w.count, `${name}: HTA ${got} µs, delivered entries ${w.us} µs`);
    total += w.us;
    console.log(`    ${name}: ${w.count} × ${w.cat}, ${w.us.toFixed(3)} µs, HTA ${got} µs`);
  }
  console.log(`  hta hpu collector: ${ops.length} device ops, ${want.size} names, ${total.toFixed(3)} µs, HTA ${report.hta_version}`);
});

test("XProf renders the collector's dump (three devices) as XSpace: every device entry on its engine row, kernel_stats counts", async () => {
  const { ops, toUnix } = rec.multi;
  const { file, start, space } = await writeXprofSpace(rec.multi.dump, work, "xspace");
  const planes = space.planes.map((p) => p.name);
  for (const d of [0, 1, 2]) assert.ok(planes.includes(`/device:GPU:${d}`), planes.join(","));
  // XProf names device work as XLA does: kernels by name, copies Memcpy<direction> (Synapse has none: MemcpyOther),
  // memsets "Memset <memory kind>" (unknown: 0); the line type lists what the line holds.
  const xname = (o: Op) => (o.cat === "kernel" ? o.name : o.cat === "gpu_memset" ? "Memset 0" : "MemcpyOther");
  const lineType = (o: Op) => (o.cat === "kernel" ? "Compute" : o.cat === "gpu_memset" ? "Memset" : "MemcpyOther");
  const all = ops.map((o) => ({
    plane: `/device:GPU:${o.dev}`, row_prefix: `${o.engine} (Stream #${o.lane}(`, name: xname(o),
    ts_ns: Number(toUnix(o.start) - start), dur_ns: Number(toUnix(o.end) - toUnix(o.start)), correlation: o.corr,
    kernel: o.cat === "kernel" ? { regs: 0, shmem: 0, block: "0,0,0", grid: "0,0,0" } : null,
  }));
  assert.ok(all.every((d) => d.correlation > 0), "every device entry follows a launch of its recipe");
  // trace_viewer finds an event by (correlation, name, plane): those it can tell apart are looked up (row, time,
  // duration); a step's two copies on a Gaudi2/3 share both (PDMA and EDMA, "MemcpyOther"): their rows are checked
  // below and every entry is counted.
  const n = new Map<string, number>();
  for (const d of all) n.set(`${d.correlation}|${d.name}|${d.plane}`, (n.get(`${d.correlation}|${d.name}|${d.plane}`) ?? 0) + 1);
  const device_events = all.filter((d) => n.get(`${d.correlation}|${d.name}|${d.plane}`) === 1);
  const stats_only = all.filter((d) => n.get(`${d.correlation}|${d.name}|${d.plane}`) !== 1);
  assert.ok(stats_only.every((d) => d.kernel === null), "every kernel is looked up");
  const rows: Record<string, string[]> = {};
  const seen = new Set<string>();
  for (const o of ops) {
    const row = `${o.engine} (Stream #${o.lane}(${lineType(o)}))`;
    if (seen.has(`${o.dev}|${row}`)) continue;
    seen.add(`${o.dev}|${row}`);
    (rows[`/device:GPU:${o.dev}`] ??= []).push(row);
  }
  // Counters: one track per device plane and counter name, every sample at its time with its value.
  const counters = [0, 1, 2].map((d) => ({
    plane: `/device:GPU:${d}`, name: "tpc_utilization",
    samples: rec.multi.counters.filter((c) => c.dev === d).map((c) => [Number(toUnix(c.ts) - start), Number(c.value)]),
  }));
  assert.ok(rec.multi.counters.every((c) => c.name === "tpc_utilization"));
  const res = xprofCheck(file, { device_events, launches: [], rows, stats_only, counters });
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.counter_samples_checked, 3 * STEPS);
  // Every device entry and every host call ('X' enqueue and the 'B'/'E' launch: two per step and device) is shown.
  assert.is(res.summary.trace_viewer_events, ops.length + 2 * 3 * STEPS);
  const kernelNames = new Set(ops.filter((o) => o.cat === "kernel").map((o) => o.name));
  assert.is(res.summary.kernel_stats_rows, kernelNames.size);
  assert.is(res.summary.kernel_stats_checked, kernelNames.size);
  console.log(`  xprof hpu collector: ${device_events.length}/${all.length} device entries looked up on their rows, ` +
    `${res.summary.rows_checked} rows, ${kernelNames.size} kernel_stats rows, ${res.summary.trace_viewer_events} trace_viewer events`);
});

test.run();
