/**
 * The timestamp rule (assembly/model/timing.ts, docs/errors.md "Timestamps"; issue 21): unknown (0) starts and ends,
 * inverted times and times far outside the run, for every record kind the CUPTI decoder turns into events, checked
 * in the Chrome JSON, XSpace, the viewer's timeline, the stats and `rawtrace info`. Dumps use real CUPTI layouts
 * (src/tools/cupti_records.ts).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { toChrome, info, events, type ChromeTrace } from "../helpers/convert.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource, type Engine } from "../../src/core/engine.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { Flag, Kind, TimelineEvents, TimelineParser } from "../../src/core/timeline.js";
import { computeStats } from "../../src/core/stats.js";
import { LOSS_WARNINGS } from "../../src/core/codes.js";
import { rng } from "../fuzz/mutate.js";

const L: C.CuptiLayout = "cuda13";
/** Vendor clock at the start anchor, and CLOCK_REALTIME − vendor clock (the decoder judges times in vendor ns). */
const T = 1_780_000_000_000_000_000n;
const OFF = 7_000_000_123n;
const S = 1_000_000_000n;
const HOUR = 3600n * S;
const PID = 7;
const TID = 8;

interface DumpOptions {
  /** Vendor time of the END clock anchor; null: none (the collector died). Default T + 10 s. */
  endAnchor?: bigint | null;
  /** Write the start anchor (default true). */
  startAnchor?: boolean;
}

/** A dump whose activity buffers are `buffers`; returns the bytes and each buffer's payload file offset. */
function dump(buffers: Uint8Array[][], o: DumpOptions = {}): { bytes: Uint8Array; at: number[] } {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], pid: PID, startNs: T + OFF, hostname: "h", commandLine: "app" });
  const anchor = (which: number, v: bigint) =>
    w.clock({ which, vendorNs: v, realtimeNs: v + OFF, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  if (o.startAnchor ?? true) anchor(0, T);
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [1, 307, "cuLaunchKernel"]]);
  w.strings([[0x10n, "good_kernel"], [0x20n, "odd_kernel"], [0x30n, "range"]]);
  const at: number[] = [];
  for (const b of buffers) {
    at.push(w.bytes().length + 24);
    w.activity(C.concat(b));
  }
  const end = o.endAnchor === undefined ? T + 10n * S : o.endAnchor;
  if (end !== null) anchor(1, end);
  if (end !== null) w.end();
  return { bytes: w.bytes(), at };
}

const kern = (corr: number, start: bigint, end: bigint, namePtr = 0x10n, streamId = 7) =>
  C.kernelRecord(L, { start, end, deviceId: 0, contextId: 1, streamId, correlationId: corr, namePtr });
const launch = (corr: number, start: bigint, end = start + 1000n) =>
  C.apiRecord(L, { kind: 5, cbid: 211, start, end, processId: PID, threadId: TID, correlationId: corr });
const copy = (corr: number, start: bigint, end: bigint) =>
  C.memcpyRecord(L, { start, end, deviceId: 0, contextId: 1, streamId: 7, correlationId: corr, bytes: 4096n, copyKind: 1, srcKind: 2, dstKind: 3 });

/** The valid part of every dump: a launch, its kernel (4 µs) and a copy (2 µs), from T + 1 µs to T + 12 µs. */
const GOOD = () => [launch(1, T + 1000n, T + 2000n), kern(1, T + 5000n, T + 9000n), copy(2, T + 10_000n, T + 12_000n)];
const GOOD_FIRST = T + 1000n;
const GOOD_LAST = T + 12_000n;

let shared: Engine | null = null;
async function engine(): Promise<Engine> {
  shared ??= await createEngine();
  return shared;
}
/** XSpace of `bytes`; line timestamps are ns after the profile start, which is `result.baseTimeNs`. */
async function xspace(bytes: Uint8Array) {
  const parts: Buffer[] = [];
  const result = await (await engine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  return { x: fromBinary(XSpaceSchema, Buffer.concat(parts)), result };
}
async function timeline(bytes: Uint8Array) {
  const evs = new TimelineEvents();
  const parser = new TimelineParser((chunk) => evs.add(chunk));
  await (await engine()).convert(memorySource(bytes, "t.rawtrace"), parser.sink, { format: "timeline" });
  return { meta: parser.finish(), evs };
}
async function stats(bytes: Uint8Array) {
  return (await computeStats(await engine(), memorySource(bytes, "t.rawtrace"))).stats;
}

/** Start of an XSpace event in ps after its line's timestamp. */
const offsetPs = (e: { data: { case: string | undefined; value?: bigint } }) => (e.data.case === "offsetPs" ? e.data.value! : 0n);
const warning = (t: ChromeTrace, code: string) => t.rawtrace.warnings.find((w: any) => w.code === code);
/** Absolute Unix ns of a Chrome µs value. */
const abs = (t: ChromeTrace, us: number) => BigInt(t.baseTimeNanoseconds) + BigInt(Math.round(us * 1000));
/** Every complete event's [start, end] in Unix ns. */
function spans(t: ChromeTrace): Array<[bigint, bigint]> {
  return t.traceEvents.filter((e) => e.ph === "X").map((e) => [abs(t, e.ts), abs(t, e.ts + e.dur)]);
}

test("the issue's dump: an incomplete kernel (end 0) and an unknown one (0, 0) neither stretch the trace nor move its base", async () => {
  const { bytes, at } = dump([GOOD(), [kern(3, T + 20_000n, 0n, 0x20n), kern(4, 0n, 0n, 0x20n)]]);
  const incompleteAt = at[1];
  const unknownAt = at[1] + C.SIZES[L][C.CK.CONCURRENT_KERNEL];
  const { trace } = await toChrome(bytes);

  // Time base: the grid floor (half of Kineto's 3 months) of the first kept time, never 0.
  const first = GOOD_FIRST + OFF;
  const base = BigInt(trace.baseTimeNanoseconds);
  assert.ok(base > 0n && base <= first && first - base < 3_944_619n * S, `base ${base}`);
  const k = events(trace, "kernel");
  assert.equal(k.map((e) => e.name), ["good_kernel", "odd_kernel"]);
  assert.is(k[0].dur, 4);
  assert.is(abs(trace, k[1].ts), T + 20_000n + OFF, "the incomplete kernel sits at its start");
  assert.is(k[1].dur, 0);
  assert.is(k[1].args.incomplete, true);
  assert.is(k[0].args.incomplete, undefined);
  for (const [s, e] of spans(trace)) assert.ok(s >= first && e <= T + 20_000n + OFF, `event [${s}, ${e}] within the kept times`);
  const end = trace.traceEvents.find((e) => e.name === "Record Window End");
  assert.is(abs(trace, end.ts), T + 20_000n + OFF);

  assert.equal(warning(trace, "INCOMPLETE_RECORD"), { code: "INCOMPLETE_RECORD", count: 1, offset: incompleteAt, detail: 10 });
  assert.equal(warning(trace, "BAD_TIMESTAMP"), { code: "BAD_TIMESTAMP", count: 1, offset: unknownAt, detail: 10 });
  assert.ok(LOSS_WARNINGS.has("BAD_TIMESTAMP") && !LOSS_WARNINGS.has("INCOMPLETE_RECORD"));

  // rawtrace info (pass 1 only) reports the same, and its time span holds only kept times.
  const i = await info(bytes);
  assert.equal(i.warnings.map((w) => [w.code, w.count, w.offset, w.detail]), [
    ["BAD_TIMESTAMP", 1, unknownAt, 10], ["INCOMPLETE_RECORD", 1, incompleteAt, 10],
  ]);
  assert.is(i.firstNs, first);
  assert.is(i.lastNs, T + 20_000n + OFF);
  assert.match(i.warnings[0].message, /dropped/);

  // XSpace: the profile start is the collector start (it precedes the first kept time), not 0; the kernel has
  // duration 0; the drop is an error, the rest a warning.
  const { x, result } = await xspace(bytes);
  assert.is(result.baseTimeNs, T + OFF);
  const dev = x.planes.find((p) => p.name === "/device:GPU:0")!;
  const devEvents = dev.lines.flatMap((l) => l.events.map((e) => ({ name: dev.eventMetadata[String(e.metadataId)].name, ps: e.durationPs, line: l })));
  const kernels = devEvents.filter((e) => e.name.endsWith("_kernel"));
  assert.equal(kernels.map((e) => [e.name, e.ps]).sort(), [["good_kernel", 4_000_000n], ["odd_kernel", 0n]]);
  for (const l of dev.lines) {
    for (const e of l.events) {
      const s = result.baseTimeNs + l.timestampNs + offsetPs(e) / 1000n;
      assert.ok(s >= first && s + e.durationPs / 1000n <= T + 20_000n + OFF, "XSpace event within the kept times");
    }
  }
  assert.ok(x.errors.some((e) => e.includes("BAD_TIMESTAMP")), "BAD_TIMESTAMP is an XSpace error");
  assert.ok(x.warnings.some((w) => w.includes("INCOMPLETE_RECORD")), "INCOMPLETE_RECORD is an XSpace warning");

  // The viewer: the same first time floored to Kineto's own 3-month grid (its tables keep Kineto's base), the kernel
  // flagged INCOMPLETE with duration 0, nothing after the kept times.
  const tl = await timeline(bytes);
  assert.is(tl.meta.header.baseNs, first - (first % (7_889_238n * S)));
  const flagged: number[] = [];
  for (let j = 0; j < tl.evs.length; j++) {
    if ((tl.evs.flags(j) & Flag.INCOMPLETE) !== 0) flagged.push(j);
    assert.ok(tl.evs.end(j) <= Number(T + 20_000n + OFF - tl.meta.header.baseNs) + 1, "timeline event within the kept times");
  }
  assert.is(flagged.length, 1);
  assert.is(tl.evs.kind(flagged[0]), Kind.KERNEL);
  assert.is(tl.evs.end(flagged[0]) - tl.evs.start(flagged[0]), 0);

  // Stats: the incomplete kernel adds no time, no count and no 0 minimum; busy time is the two real intervals.
  const st = await stats(bytes);
  const d = st.devices.find((x) => x.id === 0)!;
  assert.is(d.kernels, 1);
  assert.is(d.kernelNs, 4000);
  assert.is(d.busyNs, 6000);
  assert.is(st.startNs, first);
  assert.is(st.endNs, GOOD_LAST + OFF);
  assert.ok(!st.names.some((n) => n.name === "odd_kernel"));
});

test("without a kept record the base is the collector start, not 0", async () => {
  const { bytes } = dump([[kern(1, 0n, 0n), kern(2, 0n, T + 5000n)]]);
  const { trace } = await toChrome(bytes);
  assert.is(events(trace, "kernel").length, 0);
  assert.is(warning(trace, "BAD_TIMESTAMP").count, 2);
  const base = BigInt(trace.baseTimeNanoseconds);
  assert.ok(base > 0n && base <= T + OFF && T + OFF - base < 7_889_238n * S);
  assert.is((await xspace(bytes)).result.baseTimeNs, T + OFF);
});

/** One record kind with a builder of a record with given times, and where the decoder puts it in the Chrome JSON. */
interface KindCase {
  name: string;
  kind: number;
  cat: string;
  make: (corr: number, start: bigint, end: bigint) => Uint8Array;
  /** Only one time (markers, CUDA events): start = end. */
  instant?: boolean;
}
const KINDS: KindCase[] = [
  { name: "kernel", kind: 10, cat: "kernel", make: (c, s, e) => kern(c, s, e, 0x20n) },
  { name: "memcpy", kind: 1, cat: "gpu_memcpy", make: copy },
  {
    name: "memset", kind: 2, cat: "gpu_memset",
    make: (c, s, e) => C.memsetRecord(L, { start: s, end: e, deviceId: 0, contextId: 1, streamId: 9, correlationId: c, bytes: 64n, memoryKind: 3 }),
  },
  { name: "runtime API", kind: 5, cat: "cuda_runtime", make: (c, s, e) => launch(c, s, e) },
  {
    name: "driver API", kind: 4, cat: "cuda_driver",
    make: (c, s, e) => C.apiRecord(L, { kind: 4, cbid: 307, start: s, end: e, processId: PID, threadId: TID, correlationId: c }),
  },
  {
    name: "synchronization", kind: 38, cat: "cuda_sync",
    make: (c, s, e) => C.syncRecord(L, { type: 3, start: s, end: e, correlationId: c, contextId: 1, streamId: 7 }),
  },
  {
    name: "overhead", kind: 17, cat: "overhead",
    make: (c, s, e) => C.overheadRecord(L, { overheadKind: 0x10000, objectKind: 2, id0: PID, id1: TID, start: s, end: e, correlationId: c }),
  },
  {
    name: "graph trace", kind: 51, cat: "cuda_graph",
    make: (c, s, e) => C.graphTraceRecord(L, { correlationId: c, start: s, end: e, deviceId: 0, graphId: 5, contextId: 1, streamId: 7 }),
  },
  {
    name: "NVTX instant marker", kind: 12, cat: "user_annotation", instant: true,
    make: (c, s) => C.markerRecord(L, 1, s, c, PID, TID, 0x30n),
  },
  {
    name: "CUDA event record", kind: 36, cat: "cuda_event", instant: true,
    make: (c, s) => C.cudaEventRecord(L, { correlationId: c, contextId: 1, streamId: 7, eventId: 3, deviceId: 0, deviceTimestamp: s }),
  },
];

for (const k of KINDS) {
  test(`${k.name}: valid kept, end 0 incomplete, start 0 / inverted / far outside dropped, each counted`, async () => {
    const size = k.make(0, 1n, 1n).length;
    const t0 = T + 100_000n;
    // [corr, start, end, expected]: "ok", "incomplete", "bad" (BAD_TIMESTAMP), "neg" (NEGATIVE_DURATION).
    const cases: Array<[bigint, bigint, string]> = k.instant
      ? [
        [t0, t0, "ok"],
        [T - 30n * 60n * S, T - 30n * 60n * S, "ok"], // before the first anchor, within 1 h
        [T - 2n * HOUR, T - 2n * HOUR, "bad"],
        [T + 10n * S + 2n * HOUR, T + 10n * S + 2n * HOUR, "bad"], // after the END anchor by 2 h
        [0xffff_ffff_ffff_0000n, 0xffff_ffff_ffff_0000n, "bad"],
      ]
      : [
        [t0, t0 + 3000n, "ok"],
        [t0 + 5000n, 0n, "incomplete"],
        [0n, t0 + 6000n, "bad"],
        [0n, 0n, "bad"],
        [t0 + 9000n, t0 + 8000n, "neg"],
        [T - 30n * 60n * S, T - 30n * 60n * S + 500n, "ok"],
        [T - 2n * HOUR, T - 2n * HOUR + 500n, "bad"],
        [t0 + 10_000n, T + 10n * S + 2n * HOUR, "bad"], // ends 2 h after the END anchor
        [t0 + 11_000n, 1n << 63n, "bad"],
        [1n, t0 + 12_000n, "bad"],
      ];
    const recs = cases.map(([s, e], i) => k.make(100 + i, s, e));
    const { bytes, at } = dump([GOOD(), recs]);
    const offsetOf = (want: string) => {
      const i = cases.findIndex((c) => c[2] === want);
      return i < 0 ? undefined : at[1] + i * size;
    };
    const count = (want: string) => cases.filter((c) => c[2] === want).length;
    const { trace } = await toChrome(bytes);

    const kept = cases.filter((c) => c[2] === "ok" || c[2] === "incomplete");
    const got = trace.traceEvents.filter((e) => e.cat === k.cat && (e.ph === "X" || e.ph === "i") && (e.name !== "good_kernel"));
    const mine = k.cat === "gpu_memcpy" || k.cat === "cuda_runtime" ? got.filter((e) => e.args.correlation >= 100) : got;
    assert.equal(
      mine.map((e) => [abs(trace, e.ts), e.ph === "i" ? 0 : e.dur, e.args?.incomplete === true]),
      kept.map(([s, e, w]) => [s + OFF, w === "incomplete" ? 0 : Number(e - s) / 1000, w === "incomplete"]),
      "kept events: times as recorded, the incomplete one at its start with dur 0",
    );
    const expect = (code: string, want: string) => {
      const w = warning(trace, code);
      if (count(want) === 0) return assert.is(w, undefined, code);
      assert.equal(w, { code, count: count(want), offset: offsetOf(want), detail: k.kind }, code);
    };
    expect("BAD_TIMESTAMP", "bad");
    expect("NEGATIVE_DURATION", "neg");
    expect("INCOMPLETE_RECORD", "incomplete");
    // The same counts before any output is written (rawtrace info).
    const i = await info(bytes);
    assert.equal(
      i.warnings.map((w) => [w.code, w.count]).sort(),
      trace.rawtrace.warnings.map((w: any) => [w.code, w.count]).sort(),
    );
    // Nothing reaches outside the kept times, in every output.
    const lo = T - 30n * 60n * S + OFF;
    const hi = T + 10n * S + OFF;
    for (const [s, e] of spans(trace)) assert.ok(s >= lo - 1n && e <= hi, `Chrome event [${s}, ${e}]`);
    const { x, result } = await xspace(bytes);
    for (const p of x.planes) {
      for (const l of p.lines) {
        for (const e of l.events) {
          const s = result.baseTimeNs + l.timestampNs + offsetPs(e) / 1000n;
          assert.ok(s >= lo && s + e.durationPs / 1000n <= hi, `XSpace event on ${p.name}`);
        }
      }
    }
    const tl = await timeline(bytes);
    let incomplete = 0;
    for (let j = 0; j < tl.evs.length; j++) {
      if ((tl.evs.flags(j) & Flag.INCOMPLETE) !== 0) incomplete++;
      assert.ok(tl.evs.end(j) <= Number(hi - tl.meta.header.baseNs) + 1, "timeline event within the kept times");
    }
    assert.is(incomplete, count("incomplete"));
  });
}

test("a CUDA event record without a device timestamp (0) is skipped silently: device timestamps were off", async () => {
  const ev = C.cudaEventRecord(L, { correlationId: 1, contextId: 1, streamId: 7, eventId: 3, deviceId: 0, deviceTimestamp: 0n });
  const { trace } = await toChrome(dump([GOOD(), [ev]]).bytes);
  assert.is(events(trace, "cuda_event").length, 0);
  assert.equal(trace.rawtrace.warnings, []);
});

test("NVTX ranges: a dropped start leaves its end unmatched, a dropped end leaves the range to close at the last kept time", async () => {
  const m = (flags: number, ts: bigint, id: number) => C.markerRecord(L, flags, ts, id, PID, TID, flags === 4 ? 0n : 0x30n);
  const { bytes } = dump([GOOD(), [m(2, 0n, 1), m(4, T + 3000n, 1), m(2, T + 4000n, 2), m(4, T + 5n * HOUR, 2)]]);
  const { trace } = await toChrome(bytes);
  const r = events(trace, "user_annotation");
  assert.equal(r.map((e) => [abs(trace, e.ts), abs(trace, e.ts + e.dur)]), [[T + 4000n + OFF, GOOD_LAST + OFF]]);
  assert.is(warning(trace, "BAD_TIMESTAMP").count, 2);
  assert.ok(warning(trace, "UNMATCHED_RANGE_END"));
  assert.ok(warning(trace, "UNCLOSED_RANGE"));
});

test("NVTX ranges dropped by the rule are not projected onto device streams either (gpu_user_annotation)", async () => {
  const m = (flags: number, ts: bigint, id: number) => C.markerRecord(L, flags, ts, id, PID, TID, flags === 4 ? 0n : 0x30n);
  // Range 3 starts 2 h before the first anchor (dropped) and ends after the launch of kernel 1; range 4 is valid.
  const kept = await toChrome(dump([[m(2, T + 500n, 4), ...GOOD(), m(4, T + 3000n, 4)]]).bytes);
  assert.is(events(kept.trace, "gpu_user_annotation").length, 1, "a valid range is projected");
  const { trace } = await toChrome(dump([[m(2, T - 2n * HOUR, 3), ...GOOD(), m(4, T + 3000n, 3)]]).bytes);
  assert.is(events(trace, "user_annotation").length, 0);
  assert.is(events(trace, "gpu_user_annotation").length, 0);
  assert.ok(warning(trace, "UNMATCHED_RANGE_END"));
  // A range whose end is dropped stays open to the last kept time, in the projection as on the host row.
  const open = await toChrome(dump([[m(2, T + 500n, 5), ...GOOD(), m(4, T + 5n * HOUR, 5)]]).bytes);
  assert.equal(events(open.trace, "user_annotation").map((e) => abs(open.trace, e.ts + e.dur)), [GOOD_LAST + OFF]);
  assert.is(events(open.trace, "gpu_user_annotation").length, 1);
});

test("no END anchor (the collector died): the run goes on as long as records keep coming; a lone far record is dropped", async () => {
  // Work every 20 min for 3 h after the only anchor, then one kernel 2 days later and one ending 10 years later.
  const steady = Array.from({ length: 10 }, (_, i) => kern(10 + i, T + BigInt(i) * 20n * 60n * S, T + BigInt(i) * 20n * 60n * S + 1000n));
  const late = T + 48n * HOUR;
  const { bytes, at } = dump([steady, [kern(30, late, late + 1000n), kern(31, T + 5000n, T + 10n * 365n * 24n * HOUR)]], { endAnchor: null });
  const { trace } = await toChrome(bytes);
  assert.is(events(trace, "kernel").length, 10);
  assert.equal(warning(trace, "BAD_TIMESTAMP"), { code: "BAD_TIMESTAMP", count: 2, offset: at[1], detail: 10 });
  const last = T + 9n * 20n * 60n * S + 1000n + OFF;
  for (const [, e] of spans(trace)) assert.ok(e <= last);
  assert.is((await info(bytes)).lastNs, last);
});

test("no clock anchor at all: the run is the stretch around the busiest minute; strays days away are dropped", async () => {
  const recs = [...GOOD(), kern(40, T - 72n * HOUR, T - 72n * HOUR + 500n), kern(41, T + 30n * 60n * S, T + 30n * 60n * S + 500n)];
  const { bytes } = dump([recs], { startAnchor: false, endAnchor: null });
  const { trace } = await toChrome(bytes);
  // Without anchors the vendor clock is CLOCK_REALTIME: times are as recorded.
  assert.equal(events(trace, "kernel").map((e) => abs(trace, e.ts)), [T + 5000n, T + 30n * 60n * S]);
  assert.is(warning(trace, "BAD_TIMESTAMP").count, 1);
  const base = BigInt(trace.baseTimeNanoseconds);
  assert.ok(base <= GOOD_FIRST && GOOD_FIRST - base < 7_889_238n * S);
});

test("invariant: whatever the times, no event is longer than the span of the kept records (seeded, 200 dumps)", async () => {
  const r = rng(21);
  const pick = (): bigint => {
    const x = r();
    if (x < 0.15) return 0n;
    if (x < 0.25) return 1n + BigInt(Math.floor(r() * 1e9));
    if (x < 0.35) return (1n << 64n) - 1n - BigInt(Math.floor(r() * 1e9));
    if (x < 0.45) return T + BigInt(Math.floor((r() - 0.5) * 6 * 3600)) * S;
    return T + BigInt(Math.floor(r() * 10_000_000));
  };
  for (let n = 0; n < 200; n++) {
    const recs: Uint8Array[] = [];
    for (let i = 0; i < 6; i++) {
      const k = KINDS[Math.floor(r() * KINDS.length)];
      const s = pick();
      recs.push(k.make(200 + i, s, r() < 0.3 ? pick() : s + BigInt(Math.floor(r() * 5000))));
    }
    const end = r() < 0.5 ? T + 10n * S : null;
    const { bytes } = dump([GOOD(), recs], { endAnchor: end });
    const { trace } = await toChrome(bytes);
    const i = await info(bytes);
    for (const [s, e] of spans(trace)) {
      assert.ok(s >= i.firstNs - 1n && e <= i.lastNs + 1n, `dump ${n}: event [${s}, ${e}] inside the kept span [${i.firstNs}, ${i.lastNs}]`);
    }
    // Picks stay within 3 h of T and the window reaches 1 h (+ one 68.7-s cell) past the anchors or the last start.
    assert.ok(i.lastNs - i.firstNs < 5n * HOUR + 3n * 60n * S, `dump ${n}: kept span ${i.lastNs - i.firstNs} ns`);
    assert.ok(BigInt(trace.baseTimeNanoseconds) > 0n);
  }
});

test.run();
