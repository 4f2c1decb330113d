/**
 * The viewer's timeline tables (assembly/emit/timeline.ts, src/core/timeline.ts) against the Chrome JSON of the
 * same dumps: every event once, on its Kineto row; lanes sorted and non-overlapping; launch ↔ kernel partners;
 * kernel launch shapes and copy sizes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { toChrome } from "../helpers/convert.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import {
  Flag, Kind, RowClass, TL_CHUNK, TL_NONE, TimelineEvents, TimelineLanes, TimelineParser, decodeNames,
} from "../../src/core/timeline.js";
import { sampleDump, T0, PID, TID } from "../helpers/sample_dump.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { computeStats, decodeStats } from "../../src/core/stats.js";

const FILES = ["test/fixtures/real/h100/cuda_sample.rawtrace", "samples/h100_torch_train_nvtx.rawtrace", "test/fixtures/real/h100/torch_graph.rawtrace"];

async function timeline(bytes: Uint8Array, feed = 0) {
  const engine = await createEngine();
  const events = new TimelineEvents();
  const firsts: number[] = [];
  const parser = new TimelineParser((chunk, first) => {
    firsts.push(first);
    events.add(chunk);
  });
  // Optionally re-slice the output into tiny pieces: the parser must not care how bytes arrive.
  const sink = feed > 0
    ? (b: Uint8Array) => {
        for (let o = 0; o < b.length; o += feed) parser.push(b.subarray(o, o + feed));
      }
    : parser.sink;
  const result = await engine.convert(memorySource(bytes, "t.rawtrace"), sink, { format: "timeline" });
  const meta = parser.finish();
  return { meta, events, lanes: new TimelineLanes(meta.lanes), names: decodeNames(meta), result, firsts };
}

function chromeKey(cls: number, a: number, b: number): string {
  if (cls === RowClass.GPU_SYNC) return `${a}/${b + 1000000}`;
  if (cls === RowClass.GPU_CONTEXT_SYNC) return `${a}/999999`;
  // The viewer keeps a row per CUPTI thread; the Chrome JSON puts every overhead on tid 0, as Kineto.
  if (cls === RowClass.HOST_OVERHEAD) return "2147483647/0"; // on its own pid, not Kineto's -1 (docs/chrome_json.md)
  return `${a}/${b}`;
}

for (const file of FILES) {
  test(`${file}: every Chrome JSON event is in the tables, on its row`, async () => {
    const bytes = new Uint8Array(readFileSync(file));
    const { trace } = await toChrome(bytes, {}, "t.rawtrace");
    const t = await timeline(bytes);
    assert.is(t.meta.header.events, t.result.events);
    assert.is(t.events.length, t.meta.header.events);
    // The tables keep Kineto's 3-month grid, the JSON half of it (docs/chrome_json.md "Time base"): one first time.
    const jsonBase = BigInt(trace.baseTimeNanoseconds);
    assert.is(t.meta.header.baseNs, jsonBase - (jsonBase % (7_889_238n * 1_000_000_000n)), "the JSON's base on Kineto's grid");
    const want = new Map<string, number>();
    for (const e of trace.traceEvents) {
      if ((e.ph !== "X" && e.ph !== "i") || e.pid === "") continue;
      want.set(`${e.pid}/${e.tid}`, (want.get(`${e.pid}/${e.tid}`) ?? 0) + 1);
    }
    const got = new Map<string, number>();
    let sum = 0;
    for (let r = 0; r < t.meta.header.rows; r++) {
      const w = t.meta.rows.subarray(r * 8, r * 8 + 8);
      assert.is(w[6], sum, "rows are contiguous");
      sum += w[7];
      const k = chromeKey(w[0], w[1], w[2]);
      got.set(k, (got.get(k) ?? 0) + w[7]);
    }
    assert.is(sum, t.events.length);
    assert.equal(got, want);
  });

  test(`${file}: lanes are sorted and non-overlapping; partners share the correlation`, async () => {
    const t = await timeline(new Uint8Array(readFileSync(file)), 7);
    const { events: ev, lanes } = t;
    for (let l = 0; l < lanes.length; l++) {
      const row = lanes.row(l);
      assert.ok(!lanes.overlapping(l));
      for (let i = lanes.first(l); i < lanes.first(l) + lanes.count(l); i++) {
        assert.is(ev.row(i), row);
        assert.ok(ev.dur(i) <= lanes.maxDur(l));
        if (i > lanes.first(l)) assert.ok(ev.start(i) >= ev.end(i - 1), `lane ${l} event ${i} overlaps`);
      }
    }
    let pairs = 0;
    for (let i = 0; i < ev.length; i++) {
      const p = ev.partner(i);
      if (p === TL_NONE) continue;
      pairs++;
      assert.is(ev.correlation(p), ev.correlation(i));
      const host = (ev.flags(i) & Flag.FLOW_START) !== 0;
      assert.is((ev.flags(p) & (host ? Flag.FLOW_END : Flag.FLOW_START)) !== 0, true);
    }
    assert.ok(pairs > 0);
    // Which partner, computed from the events alone: a launch's is its correlation's earliest device work (the
    // first in timeline order among equal starts; a graph launch has many), device work's the first launch.
    const launches = new Map<number, number>();
    const device = new Map<number, number>();
    for (let i = 0; i < ev.length; i++) {
      const f = ev.flags(i);
      const c = ev.correlation(i);
      if (f & Flag.FLOW_START) {
        if (!launches.has(c)) launches.set(c, i);
      } else if (f & Flag.FLOW_END) {
        const d = device.get(c);
        if (d === undefined || ev.start(i) < ev.start(d)) device.set(c, i);
      }
    }
    let many = 0;
    for (let i = 0; i < ev.length; i++) {
      const f = ev.flags(i);
      const c = ev.correlation(i);
      if (f & Flag.FLOW_START) assert.is(ev.partner(i), device.get(c) ?? TL_NONE, `launch ${i}`);
      else if (f & Flag.FLOW_END) {
        assert.is(ev.partner(i), launches.get(c) ?? TL_NONE, `device work ${i}`);
        if (device.get(c) !== i) many++;
      }
    }
    if (file.includes("graph")) assert.ok(many > 0, "graph launches have several kernels");
  });
}

test("kernel and memcpy payloads match the JSON args", async () => {
  const bytes = new Uint8Array(readFileSync(FILES[0]));
  const { trace } = await toChrome(bytes, {}, "t.rawtrace");
  const t = await timeline(bytes);
  const byCorr = new Map<string, Record<string, any>>();
  for (const e of trace.traceEvents) if (e.ph === "X" && e.args?.correlation) byCorr.set(`${e.cat}/${e.args.correlation}`, e);
  let kernels = 0;
  let copies = 0;
  for (let i = 0; i < t.events.length; i++) {
    const k = t.events.kind(i);
    const x0 = t.events.word(i, 9);
    const x1 = t.events.word(i, 10);
    const x2 = t.events.word(i, 11);
    if (k === Kind.KERNEL) {
      const e = byCorr.get(`kernel/${t.events.correlation(i)}`)!;
      assert.is(t.names[t.events.name(i)], e.name);
      assert.equal([x0, x1 & 0xffff, x1 >>> 16], e.args.grid);
      assert.equal([x2 & 0x7ff, (x2 >>> 11) & 0x7ff, (x2 >>> 22) & 0x3ff], e.args.block);
      assert.is(t.events.dur(i), Math.round(e.dur * 1000));
      kernels++;
    } else if (k === Kind.MEMCPY) {
      const e = byCorr.get(`gpu_memcpy/${t.events.correlation(i)}`)!;
      assert.is(x0 + x1 * 2 ** 32, e.args.bytes);
      copies++;
    }
  }
  assert.is(kernels, 60);
  assert.is(copies, 60);
});

test("the stats that follow the tables are `rawtrace stats` of the same file", async () => {
  for (const file of FILES) {
    const bytes = new Uint8Array(readFileSync(file));
    const t = await timeline(bytes);
    const { stats } = await computeStats(await createEngine(), memorySource(bytes, "t.rawtrace"));
    assert.equal(decodeStats(t.meta.trailer), stats, file);
  }
});

test("durations of 2^32 - 1 ns and more (kept aside from the u32 sort keys): exact, ordered longer first, laned", async () => {
  const L = "cuda13";
  const w = RawtraceWriter.inMemory({});
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: PID, rank: 0,
    worldSize: 1, startNs: T0, hostname: "n", commandLine: "x",
  });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 5n, monotonicRawNs: 5n, boottimeNs: 5n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, sz]) => [Number(k), sz] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
  w.strings([[0x1000n, "k"]]);
  w.threadNames([[PID, TID, "main"]]);
  // Same start, durations around the u32 limit (2^32 - 1 is the first kept aside), then short ones.
  const durs = [2n ** 32n - 2n, 2n ** 32n - 1n, 2n ** 32n, 5_000_000_000n, 5n, 10n];
  const starts = [1000n, 1000n, 1000n, 1000n, 2000n, 6_000_000_000n];
  const recs: Uint8Array[] = [];
  durs.forEach((d, i) => {
    const corr = 101 + i;
    recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + 10n * BigInt(i), end: T0 + 10n * BigInt(i) + 5n, processId: PID, threadId: TID, correlationId: corr }));
    recs.push(C.kernelRecord(L, { start: T0 + starts[i], end: T0 + starts[i] + d, deviceId: 0, contextId: 1, streamId: 7, correlationId: corr, namePtr: 0x1000n }));
  });
  w.activity(C.concat(recs));
  w.end();
  const t = await timeline(w.bytes());
  const { events: ev, lanes } = t;
  const kernels = [...Array(ev.length).keys()].filter((i) => ev.kind(i) === Kind.KERNEL);
  assert.equal(kernels.map((i) => ev.dur(i)).sort((a, b) => a - b), durs.map(Number).sort((a, b) => a - b), "exact durations");
  // Longer first among equal starts, each on the lowest lane free at its start: lane 0 holds the 5 s kernel and,
  // after it ends, the one at 6 s; the three around 2^32 ns take lanes 1-3, the short one at 2000 ns lane 4.
  const laneOf = new Map(kernels.map((i) => [ev.dur(i), ev.lane(i)]));
  assert.equal([5e9, 10, 2 ** 32, 2 ** 32 - 1, 2 ** 32 - 2, 5].map((d) => laneOf.get(d)), [0, 0, 1, 2, 3, 4]);
  for (let l = 0; l < lanes.length; l++) assert.ok(!lanes.overlapping(l), `lane ${l}`);
  // In timeline order, lane by lane: the lane's events by start.
  assert.equal(kernels.map((i) => ev.dur(i)), [5e9, 10, 2 ** 32, 2 ** 32 - 1, 2 ** 32 - 2, 5]);
  // Every launch's partner is its kernel (the correlation word of the keys).
  for (const i of kernels) assert.is(ev.correlation(ev.partner(i)), ev.correlation(i));
  // The device's busy time (the stats' intervals: lengths of 2^32 ns and more and a 6 s gap are kept as u64 pairs):
  // the union [1000, 5e9 + 1000) ∪ [6e9, 6e9 + 10).
  const stats = decodeStats(t.meta.trailer);
  assert.is(stats.devices[0].busyNs, 5e9 + 10);
});

test("names are interned by text; an empty trace gives empty tables", async () => {
  const t = await timeline(sampleDump());
  assert.is(new Set(t.names).size, t.names.length, "one id per distinct name");
  const none = await timeline(new Uint8Array(readFileSync(FILES[0])).subarray(0, 16));
  assert.is(none.meta.header.events, 0);
  assert.is(none.firsts.length, 0);
  assert.ok(TL_CHUNK >= 65536);
});

test.run();
