/**
 * The Synapse recipe-launch join does not depend on the order of the HPU_TRACE chunks in the file
 * (docs/decoders/hpu.md "Host → device flows", docs/errors.md: every join spans the whole file). A dump whose pulls
 * come in another order — chunks swapped or moved, each with its own sequence number and checksums, nothing else
 * changed — converts to the same events as the dump in the order the collector wrote: the same correlation ids on
 * launches and device work, the same arrows, in Chrome JSON and in XSpace. Only the order of the events in the output
 * follows the file (events are written as their buffer is read), so outputs are compared as sets of events.
 *
 * Before, the join walked the buffers in file order: device work whose launch is in a pull that the file holds
 * later lost its correlation (the Gaudi2 sample with its two pulls swapped: 12 kernels of the last launch of pull 0,
 * 475 → 463 events with one), and launches and host call names (`cbid`) were numbered in file order.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XSpace } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { ChunkType } from "../../src/format/container.js";
import { toChrome, events, type ChromeTrace } from "../helpers/convert.js";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { T0, metadata, synBuffer, synDump, tracePayload, type SynEntry } from "../helpers/synapse_records.js";

const SAMPLE = new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace"));

/**
 * `b` with its HPU_TRACE chunks put in the order `perm` (perm[i]: which of them goes to the i-th HPU_TRACE place),
 * every byte of each chunk (header, seq, checksums, padding) as it was: only their places change.
 */
function permuteTraces(b: Uint8Array, perm: number[]): Uint8Array {
  const spans = chunkSpans(b);
  const traces = spans.filter((s) => s.type === ChunkType.HPU_TRACE);
  assert.is(perm.length, traces.length);
  let k = 0;
  const parts: Uint8Array[] = [b.subarray(0, spans[0].off)];
  for (const s of spans) {
    const t = s.type === ChunkType.HPU_TRACE ? traces[perm[k++]] : s;
    parts.push(b.subarray(t.off, t.end));
  }
  const out = Buffer.concat(parts);
  assert.is(out.length, b.length);
  return new Uint8Array(out);
}

/** Every permutation of 0 … n − 1. */
function permutations(n: number): number[][] {
  if (n === 1) return [[0]];
  return permutations(n - 1).flatMap((p) => Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
}

async function toXSpace(bytes: Uint8Array): Promise<XSpace> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (x) => parts.push(Buffer.from(x)), { format: "xspace" });
  return fromBinary(XSpaceSchema, Buffer.concat(parts));
}

const sorted = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).sort();

/**
 * A Chrome trace as a set: its events in any order (rows' metadata included), everything else as it is but the
 * `rawtrace` trailer, whose counts of buffers out of time order depend on the order by design.
 */
const chromeSet = (t: ChromeTrace) => ({ ...t, traceEvents: sorted(t.traceEvents), rawtrace: undefined });

/**
 * XSpace planes as sets: each line's events in any order (same line ids and names), the plane's metadata as they are
 * (ids are handed out as names are first met: compared by name), stats as a set.
 */
function xspaceSet(x: XSpace) {
  return x.planes.map((p) => {
    const evName = (id: bigint) => p.eventMetadata[String(id)]?.name ?? `?${id}`;
    const statName = (id: bigint) => p.statMetadata[String(id)]?.name ?? `?${id}`;
    const stat = (s: { metadataId: bigint; value: { case?: string; value?: unknown } }) => {
      const v = s.value.case === "refValue" ? statName(s.value.value as bigint) : s.value.value;
      return [statName(s.metadataId), s.value.case, typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? Array.from(v) : v];
    };
    return {
      id: String(p.id),
      name: p.name,
      stats: sorted(p.stats.map(stat)),
      lines: p.lines.map((l) => ({
        id: String(l.id), name: l.name, displayName: l.displayName, timestampNs: String(l.timestampNs),
        events: sorted(l.events.map((e) => [evName(e.metadataId), String(e.data.value), String(e.durationPs), sorted(e.stats.map(stat))])),
      })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.name < b.name ? -1 : 1)),
    };
  });
}

test("the Gaudi2 sample with its two pulls swapped converts to the same events: correlations, arrows, XSpace", async () => {
  const spans = chunkSpans(SAMPLE).filter((s) => s.type === ChunkType.HPU_TRACE);
  assert.is(spans.length, 2);
  assert.is(spans[0].end, spans[1].off, "the two pulls are neighbours");
  const swapped = permuteTraces(SAMPLE, [1, 0]);
  assert.not.equal(swapped, SAMPLE);
  const [a, b] = [await toChrome(SAMPLE), await toChrome(swapped)];
  assert.equal(a.result.info.warnings, []);
  assert.equal(b.result.info.warnings, [], "no warning either way");
  const corr = (t: ChromeTrace) => t.traceEvents.filter((e) => e.args?.correlation !== undefined).length;
  assert.is(corr(a.trace), 475);
  assert.is(corr(b.trace), 475, "every device op keeps the launch of its recipe (before: 463)");
  assert.equal(chromeSet(b.trace), chromeSet(a.trace));
  // Flows: one arrow per launch, to the same device op.
  const flows = (t: ChromeTrace, ph: string) => sorted(events(t, "ac2g", ph).map((f) => [f.id, f.pid, f.tid, f.ts]));
  assert.is(events(a.trace, "ac2g", "s").length, 12);
  assert.equal(flows(b.trace, "s"), flows(a.trace, "s"));
  assert.equal(flows(b.trace, "f"), flows(a.trace, "f"));
  assert.equal(xspaceSet(await toXSpace(swapped)), xspaceSet(await toXSpace(SAMPLE)));
});

const HOST = 40;
const enq = (ts: bigint, recipe: number): SynEntry => ({
  type: "X", ts: T0 + ts, dur: 5n, engineType: HOST, engineIndex: 1, name: "synLaunchWithExternalEvents enqueueWithExternalEvents",
  recipeId: recipe, recipeName: `r${recipe}`,
});
const op = (ts: bigint, recipe: number, name: string, engineIndex = 0): SynEntry =>
  ({ type: "X", ts: T0 + ts, dur: 2n, engineType: 8, engineIndex, name, recipeId: recipe });
const call = (ts: bigint, name: string): SynEntry => ({ type: "X", ts: T0 + ts, dur: 1n, engineType: HOST, engineIndex: 1, name });
const be = (type: string, ts: bigint, recipe: number, name: string): SynEntry =>
  ({ type, ts: T0 + ts, engineType: 7, engineIndex: 1, context: 1n, name, recipeId: recipe });

/** A dump of `pulls` (entries per pull), each pull a trace buffer with the metadata first, at its own base address. */
function pullsDump(pulls: SynEntry[][]): Uint8Array {
  return synDump(pulls.map((es, k) => {
    const base = 0x7f00_0000_0000n + (BigInt(k) << 28n);
    return tracePayload(synBuffer([...metadata(), ...es], { base }), 0, base);
  }));
}

/** Four pulls of one device, as the collector writes them (pull k at its own base). */
function fourPulls(): Uint8Array {
  const pulls: SynEntry[][] = [
    // Pull 0: recipe 3 launched twice, recipe 4 once at its end (its work runs in pull 1 and 2).
    [op(5n, 3, "before_any_launch"), enq(10n, 3), op(20n, 3, "p0_k1"), enq(30n, 3), op(40n, 3, "p0_k2"), enq(50n, 4)],
    // Pull 1: recipe 4's work (launched in pull 0; a pair and a complete op), then a launch of recipe 3.
    [call(55n, "synHostMap"), be("B", 60n, 4, "p1_pair"), be("E", 70n, 4, "p1_pair"), op(75n, 4, "p1_k4", 1), enq(80n, 3)],
    // Pull 2: recipe 3's work (launched in pull 1), more of recipe 4's (still the launch of pull 0).
    [op(90n, 3, "p2_k3"), op(95n, 4, "p2_k4"), enq(100n, 5)],
    // Pull 3: recipe 5's work between two host calls.
    [call(105n, "synStreamSynchronize"), op(110n, 5, "p3_k5"), op(120n, 5, "p3_k5b", 1), call(125n, "synHostMap")],
  ];
  return pullsDump(pulls);
}

test("hand-built pulls in every order: the same launches, correlation ids and arrows as in the order written", async () => {
  const dump = fourPulls();
  const ref = await toChrome(dump);
  assert.equal(ref.result.info.warnings, []);
  const corr = (t: ChromeTrace) => Object.fromEntries(events(t, "kernel").map((e) => [e.name, e.args.correlation]));
  // Launches numbered in the order written (pull, then entry), each op linked to the latest earlier launch of its
  // recipe over the whole file.
  const want = { before_any_launch: undefined, p0_k1: 1, p0_k2: 2, p1_pair: 3, p1_k4: 3, p2_k3: 4, p2_k4: 3, p3_k5: 5, p3_k5b: 5 };
  assert.equal(corr(ref.trace), want);
  assert.equal(events(ref.trace, "hpu_op").filter((e) => e.args.recipeId).map((e) => e.args.correlation).sort(), [1, 2, 3, 4, 5]);
  // Host calls numbered by name (cbid) in the order of each name's first call as written.
  assert.equal([...new Set(events(ref.trace, "hpu_op").map((e) => `${e.args.cbid} ${e.name}`))].sort(),
    ["1 synLaunchWithExternalEvents enqueueWithExternalEvents", "2 synHostMap", "3 synStreamSynchronize"]);
  // One arrow per launch, to its first device op in the order written (recipe 4: the pair of pull 1).
  const fl = (t: ChromeTrace) => events(t, "ac2g", "f").map((f) => {
    const to = t.traceEvents.find((e) => e.ph === "X" && e.pid === f.pid && e.tid === f.tid && e.ts === f.ts)!;
    return `${f.id}→${to.name}`;
  }).sort();
  assert.equal(fl(ref.trace), ["1→p0_k1", "2→p0_k2", "3→p1_pair", "4→p2_k3", "5→p3_k5"]);
  const refSet = chromeSet(ref.trace);
  const refX = xspaceSet(await toXSpace(dump));
  for (const perm of permutations(4)) {
    const bytes = permuteTraces(dump, perm);
    const r = await toChrome(bytes);
    assert.equal(r.result.info.warnings, [], `order ${perm}`);
    assert.equal(chromeSet(r.trace), refSet, `order ${perm}: Chrome JSON`);
    assert.equal(fl(r.trace), fl(ref.trace), `order ${perm}: arrows`);
    if (perm.join() === "3,2,1,0" || perm.join() === "1,0,3,2") assert.equal(xspaceSet(await toXSpace(bytes)), refX, `order ${perm}: XSpace`);
  }
});

test("a launch's first linked op dropped by the run's window (known after pass 1): the arrow goes to the one emitted, either order", async () => {
  const HOURS_3 = 3n * 3600n * 1_000_000_000n;
  const pulls = [[enq(10n, 3), op(HOURS_3, 3, "far_away")], [op(40n, 3, "k_ok")]];
  const dump = pullsDump(pulls);
  for (const bytes of [dump, permuteTraces(dump, [1, 0])]) {
    const { trace, result } = await toChrome(bytes);
    assert.equal(result.info.warnings.map((w) => w.code), ["BAD_TIMESTAMP"]);
    assert.equal(events(trace, "kernel").map((e) => [e.name, e.args.correlation]), [["k_ok", 1]]);
    const f = events(trace, "ac2g", "f");
    const k = events(trace, "kernel")[0];
    assert.equal(events(trace, "ac2g", "s").map((e) => e.id), [1]);
    assert.equal(f.map((e) => [e.id, e.tid, e.ts]), [[1, k.tid, k.ts]], "an arrow with both ends");
  }
});

test("a launch whose host enqueue the run's window drops (known after pass 1) draws no arrow: no 'f' without its 's', either order", async () => {
  const HOURS_3 = 3n * 3600n * 1_000_000_000n;
  // The enqueue's time is far outside the run (a damaged time); its device work is inside it.
  const pulls = [[enq(HOURS_3, 3), op(40n, 3, "k_ok")], [op(60n, 3, "k_next")]];
  const dump = pullsDump(pulls);
  for (const bytes of [dump, permuteTraces(dump, [1, 0])]) {
    const { trace, result } = await toChrome(bytes);
    assert.equal(result.info.warnings.map((w) => w.code), ["BAD_TIMESTAMP"]);
    assert.equal(events(trace, "hpu_op").length, 0, "the enqueue is dropped");
    assert.equal(events(trace, "kernel").map((e) => e.name).sort(), ["k_next", "k_ok"]);
    assert.equal(events(trace, "ac2g", "s").length, 0);
    assert.equal(events(trace, "ac2g", "f").length, 0, "no arrow end without its start (before: an 'f' on k_ok)");
  }
});

test("a launch whose linked ops the run's window all drops starts no arrow: no 's' without its 'f', either order", async () => {
  const HOURS_3 = 3n * 3600n * 1_000_000_000n;
  // Recipe 3's work (in both pulls) all far after the run (damaged times); recipe 5's inside it.
  const pulls = [
    [enq(10n, 3), op(HOURS_3, 3, "late_a"), enq(30n, 5), op(40n, 5, "k5")],
    [op(HOURS_3 + 100n, 3, "late_b", 1)],
  ];
  const dump = pullsDump(pulls);
  for (const bytes of [dump, permuteTraces(dump, [1, 0])]) {
    const { trace, result } = await toChrome(bytes);
    assert.equal(result.info.warnings.map((w) => [w.code, w.count]), [["BAD_TIMESTAMP", 2]]);
    assert.equal(events(trace, "kernel").map((e) => e.name), ["k5"]);
    assert.equal(events(trace, "hpu_op").length, 2, "both launches are written");
    assert.equal(events(trace, "ac2g", "s").map((e) => e.id), [2], "before: also 1, an arrow to nothing");
    assert.equal(events(trace, "ac2g", "f").map((e) => e.id), [2]);
  }
});

test.run();
