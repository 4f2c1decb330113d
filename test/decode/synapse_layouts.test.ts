/**
 * The Synapse decoder on hand-built buffers (test/helpers/synapse_records.ts): both entry layouts (208-byte current,
 * 112-byte SynapseAI_Core) chosen from the bytes, the trailing `num` taken as it is (the bridge's `num − 1` would drop
 * the last entry), 'B'/'E' pairing first-in first-out per (engine, context) and across pulls, what each engine's work
 * becomes (kernel / gpu_memcpy / gpu_memset / hpu_op), engine lanes and names from the metadata, recipe-launch flows
 * by the bridge's rule, counters and devices.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome, events } from "../helpers/convert.js";
import { T0, metadata, synBuffer, synDump, tracePayload, unix, type SynEntry } from "../helpers/synapse_records.js";
import { hpuTracePayload } from "../../src/tools/kineto_to_synapse.js";
import { ChunkType, PREAMBLE_SIZE } from "../../src/format/container.js";
import { PayloadBuilder } from "../../src/format/writer.js";
import { microsToNs } from "../../src/tools/kineto_to_rawtrace.js";

const X = (engineType: number, engineIndex: number, ts: bigint, dur: bigint, name: string, extra: Partial<SynEntry> = {}): SynEntry =>
  ({ type: "X", ts: T0 + ts, dur, engineType, engineIndex, name, ...extra });
const absNs = (trace: { baseTimeNanoseconds: number }, e: Record<string, any>) => microsToNs(String(e.ts)) + BigInt(trace.baseTimeNanoseconds);

test("112-byte entries (SynapseAI_Core): chosen from the type bytes, u32 context, dataType arg", async () => {
  const entries = [...metadata(), X(8, 1, 100n, 40n, "tpc_op", { dataType: "f32", context: 5n })];
  const buf = synBuffer(entries, { layout: 112 });
  const { trace, result } = await toChrome(synDump([tracePayload(buf)]));
  assert.equal(result.info.warnings, []);
  const k = events(trace, "kernel");
  assert.is(k.length, 1);
  assert.is(k[0].name, "tpc_op");
  assert.is(k[0].args.context, 5);
  assert.is(k[0].args.dataType, "f32");
  assert.is(k[0].tid, 7001);
  assert.is(absNs(trace, k[0]), unix(T0 + 100n));
  assert.is(k[0].dur, 0.04);
});

test("the trailing num is authoritative: the last entry converts (the bridge's num − 1 would drop it); numEntries differs", async () => {
  const entries = [...metadata(), X(8, 0, 100n, 10n, "first"), X(8, 0, 200n, 10n, "last")];
  const buf = synBuffer(entries);
  const p = hpuTracePayload(0x7f00_0000_0000n, buf, BigInt(entries.length + 1), 0, 0, T0 + 1n);
  const { trace, result } = await toChrome(synDump([p]));
  assert.equal(result.info.warnings, []);
  assert.equal(events(trace, "kernel").map((e) => e.name), ["first", "last"]);
});

test("'B'/'E' pairs: first in, first out per (engine, context); contexts and engines apart; a pair split over two pulls", async () => {
  const be = (type: string, ts: bigint, ctx: bigint, name: string, idx = 1): SynEntry => ({ type, ts: T0 + ts, engineType: 7, engineIndex: idx, context: ctx, name });
  const pull1 = [...metadata(), be("B", 100n, 1n, "a"), be("B", 110n, 1n, "b"), be("B", 120n, 2n, "c"), be("B", 130n, 1n, "d", 0)];
  const pull2 = [...metadata(), be("E", 200n, 1n, "A"), be("E", 210n, 2n, "C"), be("E", 220n, 1n, "B"), be("E", 230n, 1n, "D", 0)];
  const { trace, result } = await toChrome(synDump([tracePayload(synBuffer(pull1)), tracePayload(synBuffer(pull2, { base: 0x7f00_1000_0000n }), 0, 0x7f00_1000_0000n)]));
  assert.equal(result.info.warnings, []);
  // The pair takes the 'E' entry's name (as the bridge), the 'B' entry's start.
  const k = events(trace, "kernel").map((e) => [e.name, Number(absNs(trace, e) - unix(T0)), Math.round(e.dur * 1000), e.tid]);
  assert.equal(k.sort(), [["A", 100, 100, 6001], ["B", 110, 110, 6001], ["C", 120, 90, 6001], ["D", 130, 100, 6000]].sort());
});

test("what engine work becomes: TPC/MME/DmaTranspose kernels, memset/memcpy on DMA, NIC work kernels, host calls hpu_op", async () => {
  const entries = [...metadata(),
    X(40, 1, 10n, 5n, "synLaunch"),
    X(8, 0, 20n, 5n, "tpc_name", { operation: "add_fwd" }),
    X(7, 1, 30n, 5n, "gemm"),
    X(4, 2, 40n, 5n, "dma", { operation: "DmaTranspose" }),
    X(4, 2, 50n, 5n, "memset_zero"),
    X(4, 2, 60n, 5n, "dma_copy"),
    X(15, 3, 70n, 5n, "allreduce_chunk"),
    X(8, 1, 80n, 5n, "write to mem 0x10"),
  ];
  const { trace } = await toChrome(synDump([tracePayload(synBuffer(entries))]));
  const got = trace.traceEvents.filter((e) => e.ph === "X").map((e) => `${e.cat} ${e.name} ${e.pid}/${e.tid}`);
  assert.equal(got, ["hpu_op synLaunch 777/1", "kernel add_fwd 0/7000", "kernel gemm 0/6001", "kernel DmaTranspose 0/3002",
    "gpu_memset memset_zero 0/3002", "gpu_memcpy dma_copy 0/3002", "kernel allreduce_chunk 0/14003"]);
  // Gaudi work has no launch shape: no zeros pretending to be one.
  for (const k of events(trace, "kernel")) assert.equal(["grid", "block", "registers per thread"].filter((a) => a in k.args), []);
  const names = Object.fromEntries(trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => [`${e.pid}/${e.tid}`, e.args.name]));
  assert.is(names["0/7000"], "stream 7000 (TPC0)");
  assert.is(names["0/6001"], "stream 6001 (MME1)");
  assert.is(names["0/14003"], "stream 14003 (NIC3)");
  assert.is(names["777/1"], "thread 1 (Synapse/Thread 1)");
});

test("recipe launches: device work links to the latest earlier enqueue of its recipe; one arrow per launch", async () => {
  const enq = (ts: bigint, recipe: number) => X(40, 1, ts, 5n, "synLaunchWithExternalEvents enqueueWithExternalEvents", { recipeId: recipe, recipeName: `r${recipe}` });
  const entries = [...metadata(),
    X(8, 0, 5n, 2n, "before_launch", { recipeId: 3 }),
    enq(10n, 3),
    X(8, 0, 20n, 2n, "k1", { recipeId: 3 }),
    X(8, 1, 21n, 2n, "k2", { recipeId: 3 }),
    X(8, 0, 25n, 2n, "other_recipe", { recipeId: 4 }),
    enq(30n, 3),
    X(8, 0, 40n, 2n, "k3", { recipeId: 3 }),
    X(8, 0, 50n, 2n, "no_recipe"),
  ];
  const { trace } = await toChrome(synDump([tracePayload(synBuffer(entries))]));
  const corr = Object.fromEntries(events(trace, "kernel").map((e) => [e.name, e.args.correlation]));
  // Unlinked work carries no correlation (0 is "none"; HTA would join every 0: docs/chrome_json.md).
  assert.equal(corr, { before_launch: undefined, k1: 1, k2: 1, other_recipe: undefined, k3: 2, no_recipe: undefined });
  const launches = events(trace, "hpu_op");
  assert.equal(launches.map((e) => [e.args.correlation, e.args.recipeId, e.args.recipeName]), [[1, 3, "r3"], [2, 3, "r3"]]);
  const s = trace.traceEvents.filter((e) => e.ph === "s").map((e) => e.id);
  const f = trace.traceEvents.filter((e) => e.ph === "f").map((e) => [e.id, e.tid, String(e.ts)]);
  assert.equal(s, [1, 2]);
  const k1 = events(trace, "kernel").find((e) => e.name === "k1")!;
  const k3 = events(trace, "kernel").find((e) => e.name === "k3")!;
  assert.equal(f, [[1, 7000, String(k1.ts)], [2, 7000, String(k3.ts)]]);
});

test("recipe-launch flows have both ends: not to work dropped for its times, not from or to a dropped enqueue", async () => {
  const enq = (ts: bigint): SynEntry => X(40, 1, ts, 5n, "synLaunchWithExternalEvents enqueueWithExternalEvents", { recipeId: 3 });
  const be = (type: string, ts: bigint, engineType: number, name: string): SynEntry =>
    ({ type, ts: T0 + ts, engineType, engineIndex: engineType === 40 ? 1 : 0, context: 1n, name, recipeId: 3 });
  const flows = async (entries: SynEntry[]) => {
    const { trace, result } = await toChrome(synDump([tracePayload(synBuffer([...metadata(), ...entries]))]));
    const at = (ph: string) => events(trace, "ac2g", ph).map((f) => `${f.pid}/${f.tid}@${Number(absNs(trace, f) - unix(T0))}`);
    return { s: at("s"), f: at("f"), warnings: result.info.warnings.map((w) => w.code) };
  };
  // The first device op of the launch ends before it starts (dropped, NEGATIVE_DURATION): the arrow goes to the next.
  assert.equal(await flows([enq(10n), be("B", 30n, 8, "bad"), be("E", 20n, 8, "bad"), X(8, 0, 40n, 2n, "k1", { recipeId: 3 })]),
    { s: ["777/1@10"], f: ["0/7000@40"], warnings: ["NEGATIVE_DURATION"] });
  // The enqueue itself is dropped: no arrow (before: an "f" with no "s").
  assert.equal(await flows([be("B", 30n, 40, "enqueueWithExternalEvents"), X(8, 0, 40n, 2n, "k1", { recipeId: 3 }),
    be("E", 20n, 40, "enqueueWithExternalEvents")]), { s: [], f: [], warnings: ["NEGATIVE_DURATION"] });
  // The only linked device op is never closed (an incomplete event): it still gets the arrow, with its start.
  assert.equal(await flows([enq(10n), be("B", 30n, 8, "open")]), { s: ["777/1@10"], f: ["0/7000@30"], warnings: ["INCOMPLETE_RECORD"] });
});

test("counters ('C') become counter events on the device; the device id comes from the chunk header", async () => {
  const entries: SynEntry[] = [...metadata(), { type: "C", ts: T0 + 100n, engineType: 8, engineIndex: 0, name: "spmu_busy", value: 123456789n }, X(8, 0, 200n, 5n, "k")];
  const { trace } = await toChrome(synDump([tracePayload(synBuffer(entries), 3)], { device: 3 }));
  const c = trace.traceEvents.filter((e) => e.ph === "C");
  assert.equal(c.map((e) => [e.name, e.pid, e.args.value]), [["spmu_busy", 3, 123456789]]);
  assert.is(events(trace, "kernel")[0].pid, 3);
  assert.equal(trace.deviceProperties.map((d: Record<string, unknown>) => [d.id, d.name, d.totalGlobalMem]), [[3, "GAUDI2", 96 * 2 ** 30]]);
});

test("one engine, many files: a Synapse dump, another vendor's, the same Synapse dump again give identical output", async () => {
  const { readFileSync } = await import("node:fs");
  const entries = [...metadata(), X(40, 1, 10n, 5n, "synLaunchWithExternalEvents enqueueWithExternalEvents", { recipeId: 2, recipeName: "r" }),
    X(8, 0, 20n, 5n, "k", { recipeId: 2, dataType: "bf16" })];
  const bytes = synDump([tracePayload(synBuffer(entries))]);
  const first = (await toChrome(bytes)).text;
  await toChrome(new Uint8Array(readFileSync(new URL("../../samples/mi250_minitoy_rocprof.rawtrace", import.meta.url))));
  await toChrome(new Uint8Array(readFileSync(new URL("../../samples/gaudi2_mlp_synapse.rawtrace", import.meta.url))));
  assert.is((await toChrome(bytes)).text, first);
});

test("metadata anywhere in its buffer names the engines of the whole buffer; an engine named only by a later buffer is unknown before it", async () => {
  const late = [X(8, 0, 100n, 5n, "before_meta_same_buffer"), ...metadata()];
  const early: SynEntry[] = [{ type: "M", ts: 0n, engineType: 40, engineIndex: 0, meta: "***Host", name: "m" }, X(8, 0, 50n, 5n, "type_not_named_yet")];
  const { trace, result } = await toChrome(synDump([tracePayload(synBuffer(early)), tracePayload(synBuffer(late, { base: 0x7f00_2000_0000n }), 0, 0x7f00_2000_0000n)]));
  assert.equal(events(trace, "kernel").map((e) => e.name), ["before_meta_same_buffer"]);
  const w = result.info.warnings.find((x) => x.code === "UNKNOWN_KIND")!;
  assert.equal([w.count, w.detail], [1, 8]);
});

test("a THREAD_NAMES entry whose tid is a host engine's index (a pid such as 1 in a container) names no Synapse row, HEADER intact or lost", async () => {
  // Host engine 2 has no name of its own; the collector names its main thread (tid = pid): here pid 777 = tid 2 would
  // be the clash of a program whose pid is 2. The row keeps the engine's own numbering.
  const names = new PayloadBuilder().u32(1).u32(777).u32(2).str("python3").result();
  const entries = [...metadata(), X(40, 2, 100n, 10n, "host_call"), X(8, 0, 120n, 10n, "tpc_op")];
  const dump = synDump([tracePayload(synBuffer(entries))], { before: [[ChunkType.THREAD_NAMES, names]] });
  const rowName = (t: { traceEvents: Array<Record<string, any>> }) =>
    t.traceEvents.find((e) => e.ph === "M" && e.name === "thread_name" && e.pid === 777 && e.tid === 2)?.args.name;
  const intact = await toChrome(dump);
  assert.is(events(intact.trace, "hpu_op").length, 1);
  assert.is(rowName(intact.trace), "thread 2");
  // The HEADER's chunk header damaged: the dump is read as CUDA's until its first trace settles it as Gaudi's, the
  // names read meanwhile give the pid (S.hostPid) and are then dropped.
  const lost = new Uint8Array(dump);
  lost[PREAMBLE_SIZE + 20] ^= 1;
  const { trace, result } = await toChrome(lost);
  assert.ok(result.info.warnings.some((w) => w.code === "NO_HEADER"));
  assert.equal(events(trace, "hpu_op").map((e) => e.pid), [777]);
  assert.is(rowName(trace), "thread 2");
});

test.run();
