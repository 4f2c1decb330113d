/**
 * Bad input to the Synapse decoder (Habana, vendor 5): HPU_TRACE chunks whose header, size, trailer or entry layout
 * do not hold (HPU_BAD_TRACE with the reason, the chunk counted as lost), `char*` that do not resolve to a string of
 * the buffer's pool nor to STRINGS (HPU_BAD_STRING), long double times that are infinite, NaN, denormal, negative or
 * invalid encodings (HPU_BAD_TIME with the first one's status), an 'E' without a 'B' (HPU_UNMATCHED_END), a 'B'
 * never closed (INCOMPLETE_RECORD), entries of unnamed engine types or unknown phases (UNKNOWN_KIND), a short
 * HPU_DEVICE (BAD_PAYLOAD) and a foreign ACTIVITY chunk (FOREIGN_CHUNK). Each is counted at the offset of its chunk
 * or entry (docs/errors.md); every good entry around it still converts. None traps.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ChunkType } from "../../src/format/container.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import { toChrome, events } from "../helpers/convert.js";
import { isLossWarning } from "../../src/core/codes.js";
import { BASE, T0, chunkPayloads, f80Raw, metadata, synBuffer, synDump, tracePayload, type SynEntry } from "../helpers/synapse_records.js";

type R = { info: { warnings: Array<{ code: string; count: number; offset: number; detail: number }>; loss: { rangesTotal: number; activityChunks: number } } };
const warning = (r: R, code: string) => r.info.warnings.find((w) => w.code === code);
const tpc = (ts: bigint, dur: bigint, name = "k", extra: Partial<SynEntry> = {}): SynEntry =>
  ({ type: "X", ts: T0 + ts, dur, engineType: 8, engineIndex: 0, name, ...extra });
const good = () => tracePayload(synBuffer([...metadata(), tpc(100n, 50n, "good")]));
const ENTRY0 = 48; // first entry, from the chunk payload
const at = (b: Uint8Array, chunk: number, entry: number, layout = 208) => chunkPayloads(b, ChunkType.HPU_TRACE)[chunk] + ENTRY0 + entry * layout;

test("a chunk shorter than its 48-byte header: HPU_BAD_TRACE reason 1 at the chunk, lost; the next chunk converts", async () => {
  const bytes = synDump([new Uint8Array(40), good()]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((e) => e.name), ["good"]);
  const w = warning(result, "HPU_BAD_TRACE")!;
  assert.is(w.detail, 1);
  assert.is(w.offset, chunkPayloads(bytes, ChunkType.HPU_TRACE)[0] - 24);
  assert.is(result.info.loss.activityChunks, 1);
});

test("a size field that is not the bytes after the header, or below 16: reason 2", async () => {
  const p = good();
  new DataView(p.buffer).setBigUint64(8, BigInt(p.length - 48 + 8), true);
  const { trace, result } = await toChrome(synDump([p, good()]));
  assert.is(events(trace, "kernel").length, 1);
  assert.is(warning(result, "HPU_BAD_TRACE")!.detail, 2);
  const small = new Uint8Array(48 + 8);
  new DataView(small.buffer).setBigUint64(8, 8n, true);
  const r2 = await toChrome(synDump([small, good()]));
  assert.is(warning(r2.result, "HPU_BAD_TRACE")!.detail, 2);
});

test("a trailing num larger than any layout allows: reason 3; entries whose types make sense in neither layout: reason 4", async () => {
  const buf = synBuffer([...metadata(), tpc(100n, 50n)], { num: 1_000_000n });
  const r = await toChrome(synDump([tracePayload(buf), good()]));
  assert.is(warning(r.result, "HPU_BAD_TRACE")!.detail, 3);
  const bad = synBuffer([...metadata(), tpc(100n, 50n)]);
  for (let i = 0; i < metadata().length + 1; i++) bad[i * 208 + 16] = 0x51; // 'Q': not an entry type
  const r2 = await toChrome(synDump([tracePayload(bad), good()]));
  assert.is(warning(r2.result, "HPU_BAD_TRACE")!.detail, 4);
  assert.is(events(r2.trace, "kernel").length, 1);
});

test("a base that relocates no entry's name into the pool: reason 6, the buffer lost (a loss, not UNKNOWN_KIND and HPU_BAD_STRING)", async () => {
  // Later pull, engine types named by the first: its entries would keep their times with every name empty.
  const second = tracePayload(synBuffer([...metadata(), tpc(300n, 50n, "second")]), 0, BASE + 0x10_0000n);
  const r = await toChrome(synDump([good(), second]));
  assert.equal(events(r.trace, "kernel").map((e) => e.name), ["good"]);
  const w = warning(r.result, "HPU_BAD_TRACE")!;
  assert.is(w.detail, 6);
  assert.is(w.offset, chunkPayloads(synDump([good(), second]), ChunkType.HPU_TRACE)[1] - 24);
  assert.ok(isLossWarning(w.code));
  assert.is(warning(r.result, "HPU_BAD_STRING"), undefined);
  assert.ok(r.result.info.loss.rangesTotal > 0);
  // First pull: its metadata names nothing, so every entry was skipped as UNKNOWN_KIND (not a loss) before.
  const first = tracePayload(synBuffer([...metadata(), tpc(100n, 50n, "first")]), 0, 0n);
  const r2 = await toChrome(synDump([first, good()]));
  assert.is(warning(r2.result, "HPU_BAD_TRACE")!.detail, 6);
  assert.is(warning(r2.result, "UNKNOWN_KIND"), undefined);
  assert.equal(events(r2.trace, "kernel").map((e) => e.name), ["good"]);
  assert.ok(r2.result.info.loss.rangesTotal > 0);
  // A base that fits (the same buffer at its own base), and a buffer whose names all live outside it (STRINGS, no
  // pool): read as before.
  const r3 = await toChrome(synDump([tracePayload(synBuffer([...metadata(), tpc(100n, 50n, "k")], { base: BASE + 64n }), 0, BASE + 64n)]));
  assert.is(warning(r3.result, "HPU_BAD_TRACE"), undefined);
  assert.is(events(r3.trace, "kernel").length, 1);
});

test("a base a few bytes off (most names relocated into the middle of a string, some onto another string): reason 6", async () => {
  // Names of 7 bytes and their NUL: a base 8 bytes off relocates each name onto its neighbour's start.
  const entries = [...metadata(), ...["kernelA", "kernelB", "kernelC", "kernelD", "kernelE"].map((n, i) => tpc(300n + 100n * BigInt(i), 50n, n))];
  for (const delta of [8n, -8n, 16n]) {
    const r = await toChrome(synDump([good(), tracePayload(synBuffer(entries), 0, BASE + delta)]));
    assert.equal(events(r.trace, "kernel").map((e) => e.name), ["good"], `base ${delta}`);
    assert.is(warning(r.result, "HPU_BAD_TRACE")!.detail, 6, `base ${delta}`);
  }
});

test("char* into the entries, a pool string without its NUL, a foreign pointer without STRINGS: HPU_BAD_STRING at the entry", async () => {
  const m = metadata();
  const entries = [...m, tpc(100n, 50n, "ok"), tpc(200n, 50n, "x", { name: BASE + 8n }), tpc(300n, 50n, "y", { name: 0x1234_5678n }),
    tpc(400n, 50n, "z", { operation: "op-z" })];
  const buf = synBuffer(entries);
  // The last pool string ("op-z") loses its NUL: the pool is filled with 'A' up to the trailer.
  const end = buf.length - 16;
  const s = new TextDecoder().decode(buf.subarray(entries.length * 208, end)).lastIndexOf("op-z");
  buf.fill(0x41, entries.length * 208 + s + 4, end);
  const bytes = synDump([tracePayload(buf)]);
  const { trace, result } = await toChrome(bytes);
  const w = warning(result, "HPU_BAD_STRING")!;
  assert.is(w.count, 3);
  assert.is(w.offset, at(bytes, 0, m.length + 1));
  assert.is(w.detail, m.length + 1);
  // Kept, with the name left empty (z falls back to its name when its operation is unreadable).
  assert.equal(events(trace, "kernel").map((e) => e.name), ["ok", "", "", "z"]);
});

test("a foreign pointer that STRINGS resolves is the collector's copy: no warning; extraArgs arrays likewise", async () => {
  const key = 0x5600_0000_0000n;
  const arr = new Uint8Array(24);
  const dv = new DataView(arr.buffer);
  dv.setBigUint64(0, key, true);
  dv.setUint32(8, 0, true);
  dv.setBigUint64(16, 42n, true);
  const entries = [...metadata(), tpc(100n, 50n, "k", { name: 0x4400n, extraCount: 1, extraPtr: 0x5600_0000_1000n }),
    tpc(200n, 50n, "k2", { extraCount: 2, extraPtr: 0x5600_0000_2000n })];
  const bytes = synDump([tracePayload(synBuffer(entries))], { strings: [[0x4400n, "from_strings"], [key, "iters"], [0x5600_0000_1000n, arr]] });
  const { trace, result } = await toChrome(bytes);
  const k = events(trace, "kernel");
  assert.equal(k.map((e) => e.name), ["from_strings", "k2"]);
  assert.is(k[0].args.iters, 42);
  const w = warning(result, "HPU_BAD_STRING")!;
  assert.is(w.count, 1); // k2's array is in neither place
  assert.is(w.detail, metadata().length + 1);
});

test("long double times: +inf, NaN, denormal, negative, unnormal → HPU_BAD_TIME (first status), dropped; 0 → BAD_TIMESTAMP", async () => {
  const I = 0x8000_0000_0000_0000n;
  const m = metadata();
  const entries = [...m,
    tpc(0n, 10n, "inf", { ts: f80Raw(I, 0x7fff) }),
    tpc(0n, 10n, "nan", { ts: f80Raw(I | 1n, 0x7fff) }),
    tpc(0n, 10n, "denormal", { ts: f80Raw(1n, 0) }),
    tpc(0n, 10n, "negative", { ts: f80Raw(I, 0x8000 | 16390) }),
    tpc(0n, 10n, "unnormal", { ts: f80Raw(1n << 40n, 16390) }),
    tpc(100n, 10n, "bad dur", { dur: f80Raw(I | 1n, 0x7fff) }),
    tpc(0n, 10n, "zero", { ts: new Uint8Array(10) }),
    tpc(500n, 20n, "fine"),
  ];
  const bytes = synDump([tracePayload(synBuffer(entries))]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((e) => e.name), ["fine"]);
  const w = warning(result, "HPU_BAD_TIME")!;
  assert.is(w.count, 6);
  assert.is(w.detail, 2); // the first: infinity
  assert.is(w.offset, at(bytes, 0, m.length));
  assert.is(warning(result, "BAD_TIMESTAMP")!.count, 1);
});

test("an 'E' without an open 'B': HPU_UNMATCHED_END (engine type << 16 | index); a 'B' never closed: incomplete", async () => {
  const m = metadata();
  const be = (type: string, ts: bigint, ctx: bigint, name: string): SynEntry => ({ type, ts: T0 + ts, engineType: 7, engineIndex: 1, context: ctx, name });
  const entries = [...m, be("E", 50n, 9n, "orphan"), be("B", 100n, 1n, "mm"), be("E", 180n, 1n, "mm"), be("B", 300n, 2n, "open")];
  const bytes = synDump([tracePayload(synBuffer(entries))]);
  const { trace, result } = await toChrome(bytes);
  const k = events(trace, "kernel");
  assert.equal(k.map((e) => [e.name, e.dur, e.args.incomplete ?? false]), [["mm", 0.08, false], ["open", 0, true]]);
  const w = warning(result, "HPU_UNMATCHED_END")!;
  assert.is(w.detail, (7 << 16) | 1);
  assert.is(w.offset, at(bytes, 0, m.length));
  assert.is(warning(result, "INCOMPLETE_RECORD")!.count, 1);
});

test("entries of an engine type no metadata names, and unknown phases: UNKNOWN_KIND, skipped", async () => {
  const entries = [...metadata(), tpc(100n, 5n, "unnamed type", { engineType: 99 }), { ...tpc(200n, 5n, "q"), type: "Q" }, tpc(300n, 5n, "ok")];
  const { trace, result } = await toChrome(synDump([tracePayload(synBuffer(entries))]));
  assert.equal(events(trace, "kernel").map((e) => e.name), ["ok"]);
  assert.is(warning(result, "UNKNOWN_KIND")!.count, 2);
  assert.is(warning(result, "UNKNOWN_KIND")!.detail, 99);
});

test("a short HPU_DEVICE: BAD_PAYLOAD; an ACTIVITY chunk in a Habana dump: FOREIGN_CHUNK (a loss); both skipped", async () => {
  const bytes = synDump([good()], { before: [[ChunkType.HPU_DEVICE, new Uint8Array(12)], [ChunkType.ACTIVITY, new Uint8Array(64)]] });
  const { trace, result } = await toChrome(bytes);
  assert.is(events(trace, "kernel").length, 1);
  assert.is(warning(result, "BAD_PAYLOAD")!.detail, ChunkType.HPU_DEVICE);
  assert.is(warning(result, "FOREIGN_CHUNK")!.detail, ChunkType.ACTIVITY);
  assert.is(result.info.loss.activityChunks, 1);
});

test("random bytes as HPU_TRACE payloads never trap: each is converted or counted", async () => {
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 0xff;
  const traces: Uint8Array[] = [];
  for (let i = 0; i < 40; i++) {
    const p = good().slice();
    // Flip bytes in the header, entries, pool and trailer.
    for (let k = 0; k < 12; k++) p[(rnd() * 131 + rnd()) % p.length] = rnd();
    traces.push(p);
  }
  const w = RawtraceWriter.inMemory();
  void w;
  const { result } = await toChrome(synDump(traces));
  assert.ok(result.info.warnings.length > 0);
});

test.run();
