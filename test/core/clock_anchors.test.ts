/**
 * Implausible CLOCK anchors (assembly/model/clock.ts, docs/errors.md "Clock anchors"): an anchor that is implausible
 * on its own, that the other anchor and the records or the HEADER contradict, or that is alone and far from every
 * record is set aside with BAD_CLOCK_ANCHOR at its chunk's offset, and the times keep their differences as
 * recorded. Before, one such anchor mapped every event of the H100 sample to 1970-01-01 with duration 0, silently
 * (`--strict` exited 0). A mapping that still clamps kept times says so once: CLOCK_CLAMPED, a loss.
 *
 * The mutated dumps are the real samples with one CLOCK field changed and the chunk's checksums recomputed
 * (payload: the algorithm its flags name; header: CRC-32), so the container sees intact chunks.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { fromBinary } from "@bufbuild/protobuf";
import { toChrome, info, events, type ChromeTrace } from "../helpers/convert.js";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { CLI, ROOT } from "../helpers/cli.js";
import { payloadChecksum } from "../../src/format/checksum.js";
import { ChunkType } from "../../src/format/container.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { isLossWarning } from "../../src/core/codes.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";

const H100 = readFileSync(join(ROOT, "samples/h100_torch_train_nvtx.rawtrace"));
const GAUDI = readFileSync(join(ROOT, "samples/gaudi2_mlp_synapse.rawtrace"));
const ALL_ONES = (1n << 64n) - 1n;

/** The CLOCK chunks of dump `b`: header offset and `which` (0 start, 1 end, 2 periodic). */
function clocks(b: Uint8Array): Array<{ off: number; which: number }> {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return chunkSpans(b).filter((c) => c.type === ChunkType.CLOCK).map((c) => ({ off: c.off, which: dv.getUint32(c.off + 24, true) }));
}
/** Header offset of the CLOCK chunk of `which` in `b` (the first). */
const clockAt = (b: Uint8Array, which: number) => clocks(b).find((c) => c.which === which)!.off;

/** CLOCK payload fields: byte offsets inside the payload (docs/format.md, "2 CLOCK"). */
const VENDOR = 8;
const REALTIME = 16;

/**
 * `b` with the u64 (or, `width` 4, the u32) at file offset `at` set to `v`, the checksums of the chunk holding it
 * recomputed: its payload checksum by its flags, its header CRC-32 over header bytes 0..19.
 */
function mutate(b: Uint8Array, at: number, v: bigint, width: 4 | 8 = 8): Buffer {
  const out = Buffer.from(b);
  if (width === 8) out.writeBigUInt64LE(v, at);
  else out.writeUInt32LE(Number(v), at);
  const c = chunkSpans(out).find((s) => at >= s.off + 24 && at < s.off + 24 + s.len)!;
  out.writeUInt32LE(payloadChecksum(out.readUInt16LE(c.off + 6), out.subarray(c.off + 24, c.off + 24 + c.len)), c.off + 16);
  out.writeUInt32LE(crc32(out.subarray(c.off, c.off + 20)), c.off + 20);
  return out;
}
/** Reads the u64 at `at`. */
const u64 = (b: Uint8Array, at: number) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).readBigUInt64LE(at);

const warning = (t: ChromeTrace, code: string) => (t.rawtrace.warnings as any[]).find((w) => w.code === code);
const codes = (t: ChromeTrace) => (t.rawtrace.warnings as any[]).map((w) => w.code);

/**
 * The events of a trace as comparable lines: everything but `ts`, which is given relative to the first event's in
 * ns (Chrome µs with 3 decimals), so two traces on different time bases compare by their events' relative times.
 */
function relative(t: ChromeTrace): string[] {
  const evs = t.traceEvents.filter((e) => e.ph !== "M");
  const t0 = Math.min(...evs.filter((e) => typeof e.ts === "number").map((e) => e.ts));
  return evs.map((e) => {
    const { ts, ...rest } = e;
    const rel = typeof ts === "number" ? Math.round((ts - t0) * 1000) : "-";
    return `${rel} ${JSON.stringify(rest)}`;
  });
}
/** Absolute Unix ns of the first event (base + first ts). */
function firstAbs(t: ChromeTrace): bigint {
  const evs = t.traceEvents.filter((e) => e.ph !== "M" && typeof e.ts === "number");
  const t0 = Math.min(...evs.map((e) => e.ts));
  return BigInt(t.baseTimeNanoseconds) + BigInt(Math.round(t0 * 1000));
}

const original = new Map<Uint8Array, ChromeTrace>();
async function unmutated(b: Uint8Array): Promise<ChromeTrace> {
  if (!original.has(b)) original.set(b, (await toChrome(b)).trace);
  return original.get(b)!;
}

/**
 * Converts the mutated `bytes` and checks BAD_CLOCK_ANCHOR (once, at `offset`, reason `detail`), no other warning
 * the unmutated dump lacks, every event kept with its duration and its time relative to the others, and the trace
 * where the unmutated one is in Unix time (within `withinNs`).
 */
async function assertSetAside(sample: Uint8Array, bytes: Uint8Array, offset: number, detail: number, withinNs = 1_000_000n) {
  const before = await unmutated(sample);
  const { trace, result } = await toChrome(bytes);
  assert.equal(warning(trace, "BAD_CLOCK_ANCHOR"), { code: "BAD_CLOCK_ANCHOR", count: 1, offset, detail });
  assert.equal(codes(trace).filter((c) => c !== "BAD_CLOCK_ANCHOR"), codes(before));
  assert.not.ok(result.info.warnings.some((w) => isLossWarning(w.code)), "no loss: --strict exits 0, rightly");
  const a = relative(before);
  const b = relative(trace);
  assert.is(b.length, a.length, "every event kept");
  assert.equal(b, a, "durations and relative times as recorded");
  const shift = firstAbs(trace) - firstAbs(before);
  assert.ok(shift >= -withinNs && shift <= withinNs, `the trace sits where it did (moved ${shift} ns)`);
  const i = await info(bytes);
  const i0 = await info(sample);
  assert.is(i.lastNs - i.firstNs, i0.lastNs - i0.firstNs, "the same time span");
  return { trace, info: i };
}

test("H100 sample, start anchor's vendor time 2^63 - 1: set aside (far from every record), the end anchor aligns", async () => {
  const at = clockAt(H100, 0);
  assert.is(at, 256);
  const bytes = mutate(H100, at + 24 + VENDOR, 0x7fffffffffffffffn);
  const { info: i } = await assertSetAside(H100, bytes, at, 4);
  assert.is(i.clock.start, undefined, "the start anchor is not in use");
  assert.ok(i.clock.end);
  assert.ok(i.firstNs > 1_700_000_000_000_000_000n, `not 1970: ${i.firstNs}`);
});

test("H100 sample, start anchor's CLOCK_REALTIME high word all ones: set aside (no Unix time), nothing collapses", async () => {
  const at = clockAt(H100, 0);
  const bytes = mutate(H100, at + 24 + REALTIME + 4, 0xffffffffn, 4);
  await assertSetAside(H100, bytes, at, 3);
});

test("H100 sample, end anchor's vendor time 2^63 - 1: the end anchor is set aside, the start anchor aligns", async () => {
  const at = clockAt(H100, 1);
  const bytes = mutate(H100, at + 24 + VENDOR, 0x7fffffffffffffffn);
  const { info: i } = await assertSetAside(H100, bytes, at, 4);
  assert.is(i.clock.end, undefined);
});

test("H100 sample, a plausible but wrong CLOCK_REALTIME (a year off): the HEADER's collector start tells which anchor", async () => {
  const YEAR = 365n * 86_400n * 1_000_000_000n;
  const s = clockAt(H100, 0);
  const e = clockAt(H100, 1);
  // The start anchor a year late: the HEADER's collector start contradicts it (reason 5); the end anchor aligns.
  await assertSetAside(H100, mutate(H100, s + 24 + REALTIME, u64(H100, s + 24 + REALTIME) + YEAR), s, 5);
  // The end anchor a year late: the start anchor agrees with the HEADER, the end anchor is set aside (reason 6).
  await assertSetAside(H100, mutate(H100, e + 24 + REALTIME, u64(H100, e + 24 + REALTIME) + YEAR), e, 6);
});

test("Gaudi sample, start anchor's vendor time or CLOCK_REALTIME all ones: set aside, the profiler times kept", async () => {
  const at = clockAt(GAUDI, 0);
  assert.is(at, 136);
  await assertSetAside(GAUDI, mutate(GAUDI, at + 24 + VENDOR, ALL_ONES), at, 2);
  await assertSetAside(GAUDI, mutate(GAUDI, at + 24 + REALTIME, ALL_ONES), at, 3);
  // Just below the limit: the end anchor disagrees and the records side with it.
  await assertSetAside(GAUDI, mutate(GAUDI, at + 24 + VENDOR, 0x7fffffffffffffffn), at, 4);
});

test("the outputs and the CLI say it: XSpace warnings (not errors), `convert --strict` exits 0 with the warning", async () => {
  const at = clockAt(H100, 0);
  const bytes = mutate(H100, at + 24 + VENDOR, 0x7fffffffffffffffn);
  const eng = await createEngine();
  const parts: Buffer[] = [];
  await eng.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const x = fromBinary(XSpaceSchema, Buffer.concat(parts));
  assert.ok(x.warnings.some((w) => w.includes("BAD_CLOCK_ANCHOR") && w.includes(`offset ${at}`)), x.warnings.join("\n"));
  assert.not.ok(x.errors.some((w) => w.includes("BAD_CLOCK_ANCHOR")));
  const dir = mkdtempSync(join(tmpdir(), "rawtrace-clock-"));
  try {
    writeFileSync(join(dir, "m.rawtrace"), bytes);
    const r = spawnSync(process.execPath, [CLI, "convert", "--strict", "m.rawtrace", "-o", "m.json"], { cwd: dir, encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`warning BAD_CLOCK_ANCHOR ×1 \\(offset ${at}\\): a CLOCK anchor is implausible \\(reason 4`));
    const doc = JSON.parse(readFileSync(join(dir, "m.json"), "utf8"));
    assert.ok(doc.baseTimeNanoseconds > 1.7e18, "not 1970");
    assert.ok(events(doc, "kernel").some((e) => e.dur > 0));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every sample's anchors are plausible: no BAD_CLOCK_ANCHOR, no CLOCK_CLAMPED", async () => {
  for (const f of ["alexnet_a100_rank0", "gaudi2_mlp_synapse", "h100_torch_train_nvtx", "mi250_minitoy_rocprof", "xpu_train_pti"]) {
    const { trace } = await toChrome(readFileSync(join(ROOT, `samples/${f}.rawtrace`)));
    assert.not.ok(codes(trace).includes("BAD_CLOCK_ANCHOR"), f);
    assert.not.ok(codes(trace).includes("CLOCK_CLAMPED"), f);
  }
});

// Crafted dumps: the cases the samples do not reach.
const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;
const S = 1_000_000_000n;
const HOUR = 3600n * S;
const kern = (corr: number, start: bigint) =>
  C.kernelRecord(L, { start, end: start + 1000n, deviceId: 0, contextId: 1, streamId: 7, correlationId: corr, namePtr: 0x10n });

/** A CUDA dump with `anchors` ([which, vendor, realtime]) before the records and `late` anchors after them. */
function crafted(recs: Uint8Array[], anchors: Array<[number, bigint, bigint]>, late: Array<[number, bigint, bigint]> = [], startNs = 0n) {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], pid: 7, startNs, hostname: "h", commandLine: "app" });
  const at: number[] = [];
  const clock = ([which, vendorNs, realtimeNs]: [number, bigint, bigint]) => {
    at.push(w.bytes().length);
    w.clock({ which, vendorNs, realtimeNs, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  };
  anchors.forEach(clock);
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.strings([[0x10n, "k"]]);
  w.activity(C.concat(recs));
  late.forEach(clock);
  w.end();
  return { bytes: w.bytes(), at };
}

test("the only anchor, 3 h from every record: set aside (reason 7) rather than dropping every record", async () => {
  const recs = Array.from({ length: 5 }, (_, i) => kern(i + 1, T + BigInt(i) * S));
  const { bytes, at } = crafted(recs, [[0, T + 3n * HOUR, T + 3n * HOUR + 5n * S]]);
  const { trace } = await toChrome(bytes);
  assert.equal(warning(trace, "BAD_CLOCK_ANCHOR"), { code: "BAD_CLOCK_ANCHOR", count: 1, offset: at[0], detail: 7 });
  assert.not.ok(codes(trace).includes("BAD_TIMESTAMP"), "no record dropped");
  // No anchor left: the vendor clock is CLOCK_REALTIME.
  assert.equal(events(trace, "kernel").map((e) => BigInt(trace.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000))),
    recs.map((_, i) => T + BigInt(i) * S));
});

test("the only anchor, just over 1 h from every record in the cell next to its window: set aside, no record dropped", async () => {
  // The window is on 2^36 ns cells: a start anchor at the end of its cell reaches back to the cell 52 before its own,
  // so records in the cell 53 before it (1 h 1 min earlier) lie outside it; an END anchor at the start of its cell
  // reaches forward to the cell 52 after its own. Either anchor alone would have dropped every record.
  const CELL = 1n << 36n;
  const c = T >> 36n;
  const before = [kern(1, (c - 53n) * CELL + 1000n), kern(2, (c - 53n) * CELL + 5000n)];
  const start = crafted(before, [[0, c * CELL + CELL - 1n, c * CELL + CELL - 1n + 5n * S]]);
  const a = (await toChrome(start.bytes)).trace;
  assert.equal(warning(a, "BAD_CLOCK_ANCHOR"), { code: "BAD_CLOCK_ANCHOR", count: 1, offset: start.at[0], detail: 7 });
  assert.not.ok(codes(a).includes("BAD_TIMESTAMP"), "no record dropped");
  assert.is(events(a, "kernel").length, 2);
  const after = [kern(1, (c + 53n) * CELL + 1000n), kern(2, (c + 53n) * CELL + 5000n)];
  const end = crafted(after, [], [[1, c * CELL, c * CELL + 5n * S]]);
  const b = (await toChrome(end.bytes)).trace;
  assert.equal(warning(b, "BAD_CLOCK_ANCHOR"), { code: "BAD_CLOCK_ANCHOR", count: 1, offset: end.at[0], detail: 7 });
  assert.not.ok(codes(b).includes("BAD_TIMESTAMP"), "no record dropped");
  assert.is(events(b, "kernel").length, 2);
});

test("the only anchor and the periodic ones, all 3 h from every record: the anchor set aside, no record dropped", async () => {
  const recs = Array.from({ length: 5 }, (_, i) => kern(i + 1, T + BigInt(i) * S));
  const { bytes, at } = crafted(recs, [[0, T + 3n * HOUR, T + 3n * HOUR + 5n * S]],
    [[2, T + 4n * HOUR, T + 4n * HOUR + 5n * S], [2, T + 5n * HOUR, T + 5n * HOUR + 5n * S]]);
  const { trace } = await toChrome(bytes);
  assert.equal(warning(trace, "BAD_CLOCK_ANCHOR"), { code: "BAD_CLOCK_ANCHOR", count: 1, offset: at[0], detail: 7 });
  assert.not.ok(codes(trace).includes("BAD_TIMESTAMP"), codes(trace).join());
  assert.is(events(trace, "kernel").length, 5, "every record kept");
});

test("a run that waited 2 h before its first kernel and died (start anchor only): the anchor aligns, nothing dropped", async () => {
  // The HEADER's collector start and the start anchor agree (5 s offset); the kernels come 2 h later; no END anchor.
  const recs = Array.from({ length: 5 }, (_, i) => kern(i + 1, T + 2n * HOUR + BigInt(i) * S));
  const { bytes } = crafted(recs, [[0, T, T + 5n * S]], [], T + 5n * S - 1000n);
  const { trace } = await toChrome(bytes);
  assert.equal(codes(trace), [], "no anchor set aside, no record dropped");
  assert.equal(events(trace, "kernel").map((e) => BigInt(trace.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000))),
    recs.map((_, i) => T + 2n * HOUR + BigInt(i) * S + 5n * S));
  // Records before a start anchor are no wait: with the same HEADER, a start anchor 3 h after them is set aside.
  const early = crafted(recs, [[0, T + 5n * HOUR, T + 5n * S]], [], T + 5n * S - 1000n);
  assert.equal(warning((await toChrome(early.bytes)).trace, "BAD_CLOCK_ANCHOR"),
    { code: "BAD_CLOCK_ANCHOR", count: 1, offset: early.at[0], detail: 7 });
});

test("a start anchor 2 h before the records with a periodic anchor among them: kept, the window reaches them", async () => {
  // No HEADER start to confirm it; the periodic anchor (a collection resumed) lies among the records.
  const recs = Array.from({ length: 5 }, (_, i) => kern(i + 1, T + 2n * HOUR + BigInt(i) * S));
  const { bytes } = crafted(recs, [[0, T, T + 5n * S]], [[2, T + 2n * HOUR + 10n * S, T + 2n * HOUR + 15n * S]]);
  const { trace } = await toChrome(bytes);
  assert.equal(codes(trace), []);
  assert.equal(events(trace, "kernel").map((e) => BigInt(trace.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000))),
    recs.map((_, i) => T + 2n * HOUR + BigInt(i) * S + 5n * S));
});

test("a start anchor 5 h before the records, periodic anchors before, among and after them: kept, nothing moved", async () => {
  // Periodic pulls through a long run whose device work came in the middle: the earliest and the latest periodic
  // anchors lie over 1 h from every record, the middle one among them; the window reaches them through the anchors.
  const recs = Array.from({ length: 5 }, (_, i) => kern(i + 1, T + 5n * HOUR + BigInt(i) * S));
  const { bytes } = crafted(recs, [[0, T, T + 5n * S], [2, T + 10n * 60n * S, T + 10n * 60n * S + 5n * S]],
    [[2, T + 5n * HOUR + 10n * S, T + 5n * HOUR + 15n * S], [2, T + 10n * HOUR, T + 10n * HOUR + 5n * S]]);
  const { trace } = await toChrome(bytes);
  assert.equal(codes(trace), [], "no anchor set aside, no record dropped");
  assert.equal(events(trace, "kernel").map((e) => BigInt(trace.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000))),
    recs.map((_, i) => T + 5n * HOUR + BigInt(i) * S + 5n * S));
  // Records between the anchors, none within 1 h of one: the window [T - 1 h, T + 11 h] holds them all the same.
  const between = crafted(recs, [[0, T, T + 5n * S]], [[2, T + 10n * HOUR, T + 10n * HOUR + 5n * S]]);
  const b = (await toChrome(between.bytes)).trace;
  assert.equal(codes(b), []);
  assert.equal(events(b, "kernel").map((e) => BigInt(b.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000))),
    recs.map((_, i) => T + 5n * HOUR + BigInt(i) * S + 5n * S));
  // Periodic anchors as far from the records as the start anchor, all on one side: it is still set aside.
  const far = crafted(recs, [[0, T, T + 5n * S], [2, T + 60n * S, T + 65n * S]], [[2, T + 2n * HOUR, T + 2n * HOUR + 5n * S]]);
  assert.equal(warning((await toChrome(far.bytes)).trace, "BAD_CLOCK_ANCHOR"),
    { code: "BAD_CLOCK_ANCHOR", count: 1, offset: far.at[0], detail: 7 });
});

test("a start anchor set aside: the run reaches back from the end anchor over the records (3 h run, none dropped)", async () => {
  const recs = Array.from({ length: 10 }, (_, i) => kern(i + 1, T + BigInt(i) * 20n * 60n * S));
  const end = T + 3n * HOUR + S;
  const { bytes, at } = crafted(recs, [[0, T, 0n]], [[1, end, end + 42n * S]]);
  const { trace } = await toChrome(bytes);
  assert.equal(warning(trace, "BAD_CLOCK_ANCHOR"), { code: "BAD_CLOCK_ANCHOR", count: 1, offset: at[0], detail: 3 });
  assert.not.ok(codes(trace).includes("BAD_TIMESTAMP"), codes(trace).join());
  // The end anchor's offset (42 s) aligns every record.
  assert.equal(events(trace, "kernel").map((e) => BigInt(trace.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000))),
    recs.map((_, i) => T + BigInt(i) * 20n * 60n * S + 42n * S));
});

test("an implausible start anchor gives way to a later valid one", async () => {
  const recs = [kern(1, T + S), kern(2, T + 2n * S)];
  const { bytes, at } = crafted(recs, [[0, 0n, T], [0, T, T + 7n * S]]);
  const { trace } = await toChrome(bytes);
  assert.equal(warning(trace, "BAD_CLOCK_ANCHOR"), { code: "BAD_CLOCK_ANCHOR", count: 1, offset: at[0], detail: 1 });
  const i = await info(bytes);
  assert.equal(i.clock.start, { vendorNs: T, realtimeNs: T + 7n * S });
  assert.is(i.firstNs, T + S + 7n * S);
});

test("a mapping that clamps kept times before 1970 says so once: CLOCK_CLAMPED, a loss", async () => {
  // CLOCK_REALTIME 1 s after the epoch at the anchor; records from 2 s before it (plausible on its own: nothing
  // contradicts it, so it aligns, and the first records would fall before 1970).
  const recs = [kern(1, T - 2n * S), kern(2, T - S / 2n), kern(3, T + S)];
  const { bytes, at } = crafted(recs, [[0, T, S]]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(warning(trace, "CLOCK_CLAMPED"), { code: "CLOCK_CLAMPED", count: 1, offset: at[0], detail: 1 });
  assert.ok(isLossWarning("CLOCK_CLAMPED"));
  assert.ok(result.info.warnings.some((w) => w.code === "CLOCK_CLAMPED"));
  const i = await info(bytes);
  assert.ok(i.warnings.some((w) => w.code === "CLOCK_CLAMPED"), "said by info (pass 1) too");
  // An anchor whose realtime maps every record after the epoch clamps nothing.
  const fine = await toChrome(crafted([kern(1, T + S)], [[0, T, S]]).bytes);
  assert.not.ok(codes(fine.trace).includes("CLOCK_CLAMPED"));
});

test("a run of 20 µs whose anchors were read 40 µs apart: they agree (read gap), no warning", async () => {
  // The vendor clock advances 20 µs, CLOCK_REALTIME 60 µs (a preemption between an anchor's two reads): rates 3×
  // apart, yet within 1 ms: no anchor is set aside.
  const recs = [kern(1, T + 10_000n)];
  const { bytes } = crafted(recs, [[0, T, T + 5n * S]], [[1, T + 20_000n, T + 5n * S + 60_000n]]);
  assert.equal(codes((await toChrome(bytes)).trace), []);
});

test("a run of 100 µs whose end anchor was read 50 µs late: no rate is fitted, durations as recorded", async () => {
  // The two clocks advance 100 µs and 150 µs between the anchors (a preemption between the end anchor's reads): they
  // agree (within 1 ms), but a rate 1.5× off is read gap, not drift: the start offset alone aligns (before: a 10 µs
  // kernel lasted 15 µs).
  const k = C.kernelRecord(L, { start: T + 20_000n, end: T + 30_000n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 1, namePtr: 0x10n });
  const { bytes } = crafted([k], [[0, T, T + 5n * S]], [[1, T + 100_000n, T + 5n * S + 150_000n]]);
  const { trace } = await toChrome(bytes);
  assert.equal(codes(trace), []);
  const [e] = events(trace, "kernel");
  assert.is(e.dur, 10);
  assert.is(BigInt(trace.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000)), T + 20_000n + 5n * S);
});

test("anchors that agree are used as before: drift corrected, no warning", async () => {
  // 100 ppm drift over 10 s, offset 5 s.
  const recs = [kern(1, T + S), kern(2, T + 9n * S)];
  const { bytes } = crafted(recs, [[0, T, T + 5n * S]], [[1, T + 10n * S, T + 10n * S + 5n * S + 1_000_000n]]);
  const { trace } = await toChrome(bytes);
  assert.equal(codes(trace), []);
  const abs = events(trace, "kernel").map((e) => BigInt(trace.baseTimeNanoseconds) + BigInt(Math.round(e.ts * 1000)));
  assert.equal(abs, [T + 6n * S + 100_000n, T + 14n * S + 900_000n]);
});

test.run();
