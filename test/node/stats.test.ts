/**
 * `rawtrace stats`: the core's numbers (assembly/emit/stats.ts, decoded by src/core/stats.ts) against the same numbers
 * computed independently here from the Chrome JSON of the same dump, to the nanosecond: trace span, per device the
 * union of kernel/memcpy/memset intervals and the per-kind counts, times and bytes; per kernel name count, total,
 * min, max; memcpy count, bytes and time per direction; API calls per name. Inputs: the bundled samples, the eight
 * real DLRM ranks, a generated training loop (4 streams, overlapping work), a small synthetic dump, and 3,000 kernels
 * and copies written out of start order (the core sorts a device's busy intervals only when a linear check finds
 * them out of order, over several 1,024-interval chunks: both paths are compared here), and two real traces tiled,
 * whose device work arrives in ascending stretches (merged as decoded, or sorted when there are many).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { memorySource } from "../../src/core/engine.js";
import { EventKind, byTotal, computeStats, decodeStats, type TraceStats } from "../../src/core/stats.js";
import { createEngine } from "../../src/node/wasm.js";
import { WorkerPool } from "../../src/node/pool.js";
import { formatStats, statsFiles, statsJson } from "../../src/node/stats.js";
import { absoluteNs, microsToNs, parseKinetoJson, traceBaseNs, type KinetoEvent } from "../../src/tools/kineto_to_rawtrace.js";
import { generate } from "../../bench/generate.js";
import { tileDump } from "../../bench/tile_dump.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { dlrmRanks } from "../helpers/dlrm.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-stats-"));

/**
 * 3,000 kernels and copies on two devices and three streams, overlapping, written in a shuffled order (fixed seed) and
 * in ACTIVITY chunks of 500 records: every device's busy intervals arrive out of start order.
 */
function shuffledWork(): Uint8Array {
  const T = 1_780_000_000_000_000_000n;
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION.cuda13, runtimeVersion: 13000, driverVersion: 13000, pid: 7, rank: 0,
    worldSize: 1, startNs: T, hostname: "node", commandLine: "x",
  });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES.cuda13).map(([k, v]) => [Number(k), v] as const));
  w.strings([[0x1000n, "kern_a"], [0x1100n, "kern_b"]]);
  let seed = 12345;
  const rnd = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const recs: Uint8Array[] = [];
  for (let i = 0; i < 3000; i++) {
    const start = T + BigInt(i * 700 + rnd(500));
    const end = start + BigInt(200 + rnd(1500));
    const deviceId = i % 5 === 0 ? 1 : 0;
    const streamId = 7 + rnd(3);
    if (i % 7 === 3) {
      recs.push(C.memcpyRecord("cuda13", { start, end, deviceId, contextId: 1, streamId, correlationId: 100 + i, bytes: 4096n, copyKind: 1, srcKind: 2, dstKind: 3, async: true }));
    } else {
      recs.push(C.kernelRecord("cuda13", { start, end, deviceId, contextId: 1, streamId, correlationId: 100 + i, namePtr: i % 2 ? 0x1000n : 0x1100n }));
    }
  }
  for (let i = recs.length - 1; i > 0; i--) {
    const j = rnd(i + 1);
    [recs[i], recs[j]] = [recs[j], recs[i]];
  }
  for (let i = 0; i < recs.length; i += 500) w.activity(C.concat(recs.slice(i, i + 500)));
  w.end();
  return w.bytes();
}

/** The inputs: name → bytes. */
function inputs(): Array<[string, Uint8Array]> {
  const gen = join(tmp, "gen.rawtrace");
  generate(30000, gen);
  // Real traces tiled (bench/tile_dump.ts): torch.rawtrace's device work arrives in two interleaved ascending
  // stretches per copy (the core merges the stretches as it decodes them), jax_step's in hundreds of short ones.
  const torch = join(tmp, "torch_x20.rawtrace");
  tileDump(join(ROOT, "test/fixtures/real/h100/torch.rawtrace"), 20, torch);
  const jax = join(tmp, "jax_x4.rawtrace");
  tileDump(join(ROOT, "test/fixtures/real/h100/jax_step.rawtrace"), 4, jax);
  return [
    ["h100 sample", readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"))],
    ["alexnet sample", readFileSync(join(ROOT, "samples/alexnet_a100_rank0.rawtrace"))],
    ["generated 4 streams", readFileSync(gen)],
    ["synthetic", sampleDump()],
    ["3,000 records out of start order", shuffledWork()],
    ["torch.rawtrace × 20 (interleaved stretches)", readFileSync(torch)],
    ["jax_step.rawtrace × 4", readFileSync(jax)],
    ...dlrmRanks().map((r) => [`dlrm rank ${r.rank}`, r.bytes] as [string, Uint8Array]),
  ];
}

interface Expected {
  start: bigint;
  end: bigint;
  devices: Map<number, { busy: bigint; counts: number[]; ns: bigint[]; bytes: Array<bigint | null> }>;
  names: Map<string, { count: number; total: bigint; min: bigint; max: bigint }>;
  copies: Map<string, { count: number; bytes: bigint; ns: bigint }>;
}

/** The statistics recomputed from Chrome JSON text, exactly (ns as bigint). */
function fromChrome(text: string): Expected {
  const t = parseKinetoJson(text);
  const base = traceBaseNs(t);
  let start = -1n;
  let end = 0n;
  const intervals = new Map<number, Array<[bigint, bigint]>>();
  const devices: Expected["devices"] = new Map();
  const names: Expected["names"] = new Map();
  const copies: Expected["copies"] = new Map();
  const KIND: Record<string, number> = {
    kernel: 1, gpu_memcpy: 2, gpu_memset: 3, cuda_runtime: 4, cuda_driver: 5, cuda_sync: 6, cuda_event: 7,
    overhead: 8, cuda_graph: 11,
  };
  for (const e of t.traceEvents as KinetoEvent[]) {
    if ((e.ph !== "X" && e.ph !== "i") || e.cat === "gpu_user_annotation" || e.name === "Record Window End") continue;
    const s = absoluteNs(e.ts!, base);
    const d = e.ph === "X" ? microsToNs(e.dur!) : 0n;
    if (start < 0n || s < start) start = s;
    if (s + d > end) end = s + d;
    const kind = e.cat === "user_annotation" ? (e.ph === "X" ? 9 : 10) : KIND[e.cat!];
    // The Chrome JSON names a CUDA event record as Kineto does (cudaEvent); rawtrace's own reports call it Event Record.
    const key = `${kind}\u0000${e.cat === "cuda_event" && e.name === "cudaEvent" ? "Event Record" : e.name}`;
    const n = names.get(key) ?? { count: 0, total: 0n, min: -1n, max: 0n };
    n.count++;
    n.total += d;
    if (n.min < 0n || d < n.min) n.min = d;
    if (d > n.max) n.max = d;
    names.set(key, n);
    if (kind >= 1 && kind <= 3) {
      // The GPU's pid is its ordinal, or 5,000,000 + ordinal when the program's pid is an ordinal (docs/chrome_json.md).
      const dev = Number(e.pid) >= 5_000_000 ? Number(e.pid) - 5_000_000 : Number(e.pid);
      const x = devices.get(dev) ?? { busy: 0n, counts: [0, 0, 0], ns: [0n, 0n, 0n], bytes: [0n, 0n, 0n] as Array<bigint | null> };
      x.counts[kind - 1]++;
      x.ns[kind - 1] += d;
      // A copy or fill with no bytes in the JSON (no byte count in its record): the device's sum is unknown (null).
      const b = (e.args as Record<string, number>).bytes;
      if (kind > 1) x.bytes[kind - 1] = b === undefined || x.bytes[kind - 1] === null ? null : x.bytes[kind - 1]! + BigInt(b);
      devices.set(dev, x);
      const iv = intervals.get(dev) ?? [];
      iv.push([s, s + d]);
      intervals.set(dev, iv);
    }
    if (kind === 2) {
      const dir = /^Memcpy (\S+)/.exec(e.name!)![1] + ((e.args as Record<string, unknown>).fromDevice !== undefined ? " (peer)" : "");
      const c = copies.get(dir) ?? { count: 0, bytes: 0n, ns: 0n };
      c.count++;
      c.bytes += BigInt((e.args as Record<string, number>).bytes);
      c.ns += d;
      copies.set(dir, c);
    }
  }
  for (const [dev, iv] of intervals) {
    iv.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    let busy = 0n;
    let [cs, ce] = iv[0];
    for (const [s, e] of iv.slice(1)) {
      if (s <= ce) {
        if (e > ce) ce = e;
      } else {
        busy += ce - cs;
        [cs, ce] = [s, e];
      }
    }
    devices.get(dev)!.busy = busy + (ce - cs);
  }
  return { start: start < 0n ? 0n : start, end, devices, names, copies };
}

function compare(label: string, s: TraceStats, x: Expected): void {
  assert.is(s.startNs, x.start, `${label}: span start`);
  assert.is(s.endNs, x.end, `${label}: span end`);
  assert.equal(s.devices.map((d) => d.id), [...x.devices.keys()].sort((a, b) => a - b), `${label}: devices`);
  for (const d of s.devices) {
    const e = x.devices.get(d.id)!;
    assert.is(BigInt(d.busyNs), e.busy, `${label}: GPU ${d.id} busy`);
    assert.equal([d.kernels, d.memcpys, d.memsets], e.counts, `${label}: GPU ${d.id} counts`);
    assert.equal([d.kernelNs, d.memcpyNs, d.memsetNs].map(BigInt), e.ns, `${label}: GPU ${d.id} times`);
    assert.equal([d.memcpyBytes, d.memsetBytes].map((v) => (v === null ? null : BigInt(v))), e.bytes.slice(1), `${label}: GPU ${d.id} bytes`);
    const span = Number(x.end - x.start);
    assert.ok(Math.abs(d.busyPercent - (Number(e.busy) / span) * 100) < 1e-9, `${label}: busy %`);
  }
  const got = new Map(s.names.map((n) => [`${n.kind}\u0000${n.name}`, n]));
  assert.is(got.size, s.names.length, `${label}: names folded`);
  assert.equal([...got.keys()].sort(), [...x.names.keys()].sort(), `${label}: (kind, name) set`);
  for (const [k, e] of x.names) {
    const n = got.get(k)!;
    assert.equal([n.count, BigInt(n.totalNs), BigInt(n.minNs), BigInt(n.maxNs)], [e.count, e.total, e.min, e.max], `${label}: ${k}`);
  }
  assert.equal(new Map(s.copies.map((c) => [c.direction, { count: c.count, bytes: BigInt(c.bytes), ns: BigInt(c.totalNs) }])), x.copies, `${label}: copies`);
  for (const c of s.copies) assert.ok(Math.abs(c.bandwidthGBs - (c.totalNs ? c.bytes / c.totalNs : 0)) < 1e-12);
  assert.is(s.events, [...x.names.values()].reduce((n, v) => n + v.count, 0), `${label}: events`);
}

for (const [name, bytes] of inputs()) {
  test(`stats equal the numbers recomputed from the Chrome JSON: ${name}`, async () => {
    const engine = await createEngine();
    const parts: Buffer[] = [];
    await engine.convert(memorySource(bytes, "x.rawtrace"), (b) => parts.push(Buffer.from(b)));
    const expected = fromChrome(Buffer.concat(parts).toString("utf8"));
    const { stats, result } = await computeStats(engine, memorySource(bytes, "x.rawtrace"));
    assert.is(result.events, stats.events);
    compare(name, stats, expected);
    // Same again with every API call kept.
    const all: Buffer[] = [];
    await engine.convert(memorySource(bytes, "x.rawtrace"), (b) => all.push(Buffer.from(b)), { allApi: true });
    compare(`${name} (all API)`, (await computeStats(engine, memorySource(bytes, "x.rawtrace"), { allApi: true })).stats,
      fromChrome(Buffer.concat(all).toString("utf8")));
  });
}

test("busy time counts overlapping streams once; top kernels are ordered by total", async () => {
  const gen = join(tmp, "gen2.rawtrace");
  generate(30000, gen);
  const { stats } = await computeStats(await createEngine(), memorySource(readFileSync(gen)));
  const d = stats.devices[0];
  assert.ok(d.busyNs <= d.kernelNs + d.memcpyNs + d.memsetNs, "union ≤ sum");
  assert.ok(d.busyNs >= d.kernelNs / 4, "union ≥ sum / streams");
  assert.ok(d.busyPercent > 0 && d.busyPercent <= 100);
  const top = byTotal(stats, EventKind.KERNEL, 5);
  assert.is(top.length, 5);
  for (let i = 1; i < top.length; i++) assert.ok(top[i - 1].totalNs >= top[i].totalNs);
  assert.ok(stats.intervals > 0 && stats.intervals <= d.kernels + d.memcpys + d.memsets);
});

test("decodeStats rejects what is not a stats result", () => {
  assert.throws(() => decodeStats(new Uint8Array(64)), /not a rawtrace stats result/);
  assert.throws(() => decodeStats(new Uint8Array(8)), /not a rawtrace stats result/);
});

test("Gaudi: copies whose records have no byte count show bytes and GB/s as unknown (null in --json), never 0 B and 0 GB/s; those with bytes_moved their bytes", async () => {
  const file = join(ROOT, "samples/gaudi2_mlp_synapse.rawtrace");
  const [r] = await statsFiles([file]);
  assert.ok(r.ok, r.error?.message);
  const json = JSON.parse(JSON.stringify(statsJson([r]))) as { files: Array<{ stats: TraceStats }> };
  for (const copies of [r.stats!.copies, json.files[0].stats.copies]) {
    // The sample's 4 host-to-device copies carry extraArgs bytes_moved = 8 MiB; its 4 device-to-device copies nothing.
    assert.equal(copies.map((c) => [c.count, c.bytes]), [[4, 4 * 8388608], [4, null]]);
    assert.ok(copies[0].bandwidthGBs! > 0);
    assert.is(copies[1].bandwidthGBs, null);
    for (const c of copies) assert.ok(c.totalNs > 0);
  }
  // The device's sums of copy and fill bytes: unknown while some of them have no count, not 0 nor a partial sum.
  for (const d of [...r.stats!.devices, ...json.files[0].stats.devices]) assert.equal([d.memcpyBytes, d.memsetBytes], [null, null]);
  const text = formatStats(file, r.stats!);
  assert.match(text, /Unknown\s+4\s+32\.0 MiB\s+0\.173\s+193\.72/);
  assert.match(text, /Unknown\s+4\s+unknown\s+0\.048\s+unknown/);
  assert.not.match(text, /\s0\.00\s/);
});

test("Intel XPU: a wait PTI records twice (Level Zero call and synchronization view) is one driver call and one sync", async () => {
  const [r] = await statsFiles([join(ROOT, "samples/xpu_train_pti.rawtrace")]);
  assert.ok(r.ok, r.error?.message);
  const waits = r.stats!.names.filter((n) => n.name === "zeEventHostSynchronize");
  const by = Object.fromEntries(waits.map((n) => [n.kind, n]));
  assert.equal(Object.keys(by).map(Number).sort(), [EventKind.API_DRIVER, EventKind.SYNC]);
  assert.is(by[EventKind.API_DRIVER].count, 3, "the driver call counted once per wait (was 6)");
  assert.is(by[EventKind.SYNC].count, 3);
  assert.is(by[EventKind.SYNC].totalNs, by[EventKind.API_DRIVER].totalNs, "the same waits");
});

test("statsFiles on a pool: one bad file fails alone; the text report has the tables", async () => {
  const good = join(tmp, "good.rawtrace");
  const bad = join(tmp, "bad.rawtrace");
  writeFileSync(good, sampleDump());
  writeFileSync(bad, Buffer.from("definitely not a dump"));
  const pool = new WorkerPool({ jobs: 2 });
  try {
    const [a, b] = await statsFiles([good, bad], { pool });
    assert.is(a.ok, true);
    assert.is(b.ok, false);
    assert.is(b.error!.code, "BAD_MAGIC");
    const text = formatStats(good, a.stats!);
    for (const s of ["GPU busy", "GPU 0", "top kernels by total time", "memcpy by direction", "HtoD", "API calls by total time", "cudaLaunchKernel"]) {
      assert.ok(text.includes(s), `report has ${s}:\n${text}`);
    }
    // --top 0: no per-name tables, not empty ones.
    const none = formatStats(good, a.stats!, { top: 0 });
    assert.ok(none.includes("GPU busy") && none.includes("memcpy by direction"), none);
    assert.not.ok(none.includes("top kernels") || none.includes("API calls"), none);
    // Text tables cut long names (C++ kernels run to kilobytes): no line of the report is longer than 200 characters.
    const long = formatStats(good, { ...a.stats!, names: a.stats!.names.map((n) => ({ ...n, name: n.name + "x".repeat(3000) })) });
    assert.ok(long.split("\n").every((l) => l.length <= 200), "long names cut in the text");
    // statsJson is JSON-safe as returned (64-bit ns as decimal strings), the document --json prints.
    const doc = JSON.parse(JSON.stringify(statsJson([a, b]))) as { files: Array<{ ok: boolean; stats?: { startNs: unknown }; loss?: { bytes: number } }> };
    assert.is(doc.files.length, 2);
    // The damage report under the name convert/batch/info --json use.
    assert.is(doc.files[0].loss?.bytes, 0);
    assert.equal((doc.files[0] as { lost?: unknown }).lost, doc.files[0].loss, "and under its old name");
    assert.is(typeof doc.files[0].stats!.startNs, "string");
    assert.is(BigInt(doc.files[0].stats!.startNs as string), a.stats!.startNs);
  } finally {
    await pool.close();
  }
});

test("rawtrace stats CLI: tables on stdout, --json, exit 1 when a file fails", () => {
  const good = join(tmp, "cli.rawtrace");
  writeFileSync(good, sampleDump());
  const cli = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", "stats", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60000 });
  const r = cli([good, "--top", "3"]);
  assert.is(r.status, 0, r.stderr);
  assert.ok(r.stdout.includes("top kernels by total time"), r.stdout);
  const j = cli([good, "--json"]);
  assert.is(j.status, 0, j.stderr);
  const parsed = JSON.parse(j.stdout);
  assert.is(parsed.files[0].ok, true);
  assert.is(parsed.files[0].stats.devices[0].id, 0);
  const f = cli([good, join(tmp, "missing.rawtrace")]);
  assert.is(f.status, 1);
  assert.ok(f.stderr.includes("missing.rawtrace"), f.stderr);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
