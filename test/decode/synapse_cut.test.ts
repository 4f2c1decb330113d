/**
 * A dump whose file ends inside a Habana HPU_TRACE chunk (one `synProfilerGetTrace` buffer) converts what the chunk
 * holds (docs/decoders/hpu.md "A cut buffer", docs/errors.md TRUNCATED): the trailer with the entry count is missing,
 * so the count is the chunk header's numEntries; every entry wholly in the file converts, the one the cut went
 * through is RECORD_TRUNCATED (its held bytes lost), a char* into the part of the string pool the cut took is
 * HPU_CUT_STRING (the name or argument left empty, the event kept with its times, engine and lane). Before, the whole
 * buffer was dropped (TRUNCATED).
 *
 * The expectation for a cut at byte `cut` is built independently of the cut: the same dump with the cut buffer
 * replaced by a whole one holding only its entries before the cut (based higher, so that every pool pointer still
 * resolves), its char* fields whose string the cut took set to null, and its metadata entries whose name the cut took
 * made inert. Converting the cut dump must give exactly that dump's events, in Chrome JSON and in XSpace.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XSpace } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { ChunkType, CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import { hpuTracePayload } from "../../src/tools/kineto_to_synapse.js";
import { info, toChrome, events, type ChromeTrace } from "../helpers/convert.js";
import { BASE, T0, metadata, synBuffer, synDump, tracePayload, type SynEntry } from "../helpers/synapse_records.js";

const SAMPLE = new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace"));
const HEAD = 48; // HPU_TRACE header before the buffer

interface Chunk { off: number; type: number; payload: number; len: number; end: number }
/** Every chunk of a well-formed dump. */
function chunksOf(b: Uint8Array): Chunk[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: Chunk[] = [];
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= b.length;) {
    const len = dv.getUint32(p + 12, true);
    const end = p + CHUNK_HEADER_SIZE + ((len + 7) & ~7);
    out.push({ off: p, type: dv.getUint16(p + 4, true), payload: p + CHUNK_HEADER_SIZE, len, end });
    p = end;
  }
  return out;
}

/** One HPU_TRACE chunk's buffer as the test sees it. */
interface Trace extends Chunk { base: bigint; size: number; num: number; buf: number }
function tracesOf(b: Uint8Array): Trace[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return chunksOf(b).filter((c) => c.type === ChunkType.HPU_TRACE).map((c) => ({
    ...c, base: dv.getBigUint64(c.payload, true), size: Number(dv.getBigUint64(c.payload + 8, true)),
    num: Number(dv.getBigUint64(c.payload + 16, true)), buf: c.payload + HEAD,
  }));
}

/**
 * The dump `b` cut at `cut` (inside the buffer of HPU_TRACE chunk `t`, past its 48-byte header) as a whole dump:
 * every chunk before `t` as it is, then `t` with the entries before the cut only, its char* whose string does not end
 * before the cut null, its metadata entries whose name does not made inert (engine type 0xfffffff0, index 1: they
 * name nothing), and nothing after (no END, as the cut file). `layout`: the buffer's entry size.
 */
function heldAsWhole(b: Uint8Array, t: Trace, cut: number, layout = 208): Uint8Array {
  const h = cut - t.buf; // buffer bytes in the file
  const held = Math.min(t.num, Math.floor(h / layout));
  const poolLo = t.num * layout;
  const poolHi = Math.min(t.size - 16, h);
  const src = b.subarray(t.buf, t.buf + t.size);
  const shift = (t.num - held) * layout;
  const out = new Uint8Array(t.size - shift);
  out.set(src.subarray(0, held * layout));
  out.set(src.subarray(poolLo), held * layout);
  const dv = new DataView(out.buffer);
  dv.setBigUint64(out.length - 16, BigInt(held), true);
  // True when the char* `p` of the whole buffer is null or a string that ends before the cut.
  const kept = (p: bigint): boolean => {
    if (p === 0n || p < t.base || p >= t.base + BigInt(t.size)) return true;
    const o = Number(p - t.base);
    if (o < poolLo || o >= t.size - 16) return true; // bad in the whole buffer as well
    for (let q = o; q < poolHi; q++) if (src[q] === 0) return true;
    return false;
  };
  // Writes null over the char* at `at` of the new buffer when its string is cut; true when it did.
  const nullCut = (at: number): boolean => {
    if (kept(dv.getBigUint64(at, true))) return false;
    dv.setBigUint64(at, 0n, true);
    return true;
  };
  for (let i = 0; i < held; i++) {
    const e = i * layout;
    const type = String.fromCharCode(out[e + 16]);
    nullCut(e);
    nullCut(e + 8);
    if (type === "M") {
      if (nullCut(e + 80)) { dv.setUint32(e + 64, 0xfffffff0, true); dv.setUint32(e + 68, 1, true); }
      continue;
    }
    if (type === "C") continue;
    nullCut(e + 80);
    nullCut(e + 88);
    if (layout === 112) { nullCut(e + 96); continue; }
    nullCut(e + 104);
    const count = out[e + 128];
    const arr = dv.getBigUint64(e + 136, true);
    if (count === 0 || arr < t.base || arr >= t.base + BigInt(t.size)) continue;
    const ao = Number(arr - t.base);
    if (ao + count * 24 > poolHi) { dv.setBigUint64(e + 136, 0n, true); continue; } // the array itself was cut
    for (let k = 0; k < count; k++) {
      const a = ao + k * 24 - shift; // the array, moved with the pool
      nullCut(a);
      if (dv.getUint32(a + 8, true) === 1) nullCut(a + 16);
    }
  }
  const w = RawtraceWriter.inMemory();
  for (const c of chunksOf(b)) {
    if (c.off >= t.off) break;
    w.chunk(c.type, b.slice(c.payload, c.payload + c.len));
  }
  const hdv = new DataView(b.buffer, b.byteOffset + t.payload, HEAD);
  w.chunk(ChunkType.HPU_TRACE, hpuTracePayload(t.base + BigInt(shift), out, BigInt(held), hdv.getUint32(24, true),
    hdv.getUint32(36, true), hdv.getBigUint64(40, true), hdv.getUint32(32, true)));
  return w.bytes();
}

/** XSpace of `bytes`. */
async function toXSpace(bytes: Uint8Array): Promise<XSpace> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (x) => parts.push(Buffer.from(x)), { format: "xspace" });
  return fromBinary(XSpaceSchema, Buffer.concat(parts));
}

/** A Chrome trace without the `rawtrace` trailer (warnings and lost ranges differ between a cut and a whole dump). */
const body = (t: ChromeTrace) => ({ ...t, rawtrace: undefined });
type Warn = { code: string; count: number; offset: number; detail: number };
const warnOf = (ws: Warn[], code: string) => ws.find((w) => w.code === code);
const work = (t: ChromeTrace) => t.traceEvents.filter((e) => e.ph === "X" || e.ph === "C");

/**
 * Converts `b` cut at `cut` inside trace `t` (past its header) and checks it against {@link heldAsWhole}: the same
 * Chrome JSON events and XSpace planes; TRUNCATED at the chunk; RECORD_TRUNCATED at the entry the cut went through
 * (its held bytes the only range lost) or, when the cut is at an entry boundary or past the entries, no range lost;
 * HPU_CUT_STRING, when said, at an entry before the cut, and never HPU_BAD_STRING; `rawtrace info`'s records per
 * type. Returns the cut's Chrome trace.
 */
async function checkCut(b: Uint8Array, t: Trace, cut: number, layout = 208): Promise<ChromeTrace> {
  const what = `cut at ${cut} (buffer byte ${cut - t.buf} of ${t.size})`;
  const bytes = b.subarray(0, cut);
  const want = heldAsWhole(b, t, cut, layout);
  const got = await toChrome(bytes);
  const ref = await toChrome(want);
  assert.equal(body(got.trace), body(ref.trace), `${what}: Chrome JSON as the held entries' whole buffer`);
  const ws = got.result.info.warnings as Warn[];
  const tr = warnOf(ws, "TRUNCATED");
  assert.ok(tr, `${what}: TRUNCATED`);
  assert.is(tr!.offset, t.off, `${what}: TRUNCATED at the chunk`);
  assert.is(tr!.detail, cut - t.off, `${what}: TRUNCATED bytes`);
  const h = cut - t.buf;
  const held = Math.min(t.num, Math.floor(h / layout));
  const part = h - held * layout;
  const rt = warnOf(ws, "RECORD_TRUNCATED");
  if (held < t.num && part > 0) {
    assert.equal([rt?.offset, rt?.detail], [t.buf + held * layout, part], `${what}: RECORD_TRUNCATED at the cut entry`);
    assert.equal(got.result.info.loss.ranges, [{ from: t.buf + held * layout, to: cut, code: "RECORD_TRUNCATED" }], what);
  } else {
    assert.is(rt, undefined, `${what}: no entry cut`);
    assert.equal(got.result.info.loss.ranges, [], `${what}: nothing skipped`);
  }
  // A cut string is said at an entry before the cut; never a bad string (the pointers are good).
  const cs = warnOf(ws, "HPU_CUT_STRING");
  if (cs) {
    assert.ok(cs.detail < held, `${what}: HPU_CUT_STRING names a held entry`);
    assert.is(cs.offset, t.buf + cs.detail * layout, `${what}: HPU_CUT_STRING at its entry`);
  }
  assert.is(warnOf(ws, "HPU_BAD_STRING"), undefined, `${what}: no bad string`);
  assert.is(warnOf(ws, "HPU_BAD_TRACE"), undefined, `${what}: the buffer was read`);
  // XSpace: the same planes (events, lines, names, stats) as the expectation's.
  const [xg, xr] = [await toXSpace(bytes), await toXSpace(want)];
  assert.equal(xg.planes, xr.planes, `${what}: XSpace planes as the held entries' whole buffer`);
  assert.ok(xg.errors.concat(xg.warnings).some((e) => e.startsWith("rawtrace TRUNCATED")), `${what}: XSpace says TRUNCATED`);
  // pass 1 alone (rawtrace info): the entries held, by type.
  const fi = await info(bytes);
  const fr = await info(want);
  assert.equal(fi.records, fr.records, `${what}: info's records per type`);
  return got.trace;
}

const traces = tracesOf(SAMPLE);
const [t1, t2] = traces;

test("the sample's second pull cut anywhere past its header: the entries before the cut convert, named where their strings are held", async () => {
  // Inside entries (at a boundary and through one), in the pool (early, middle, its last byte) and in the trailer:
  // each gives the whole-buffer conversion of the entries held (before: every event of the pull
  // was lost — the sample converts 288 events without it).
  const poolAt = t2.buf + t2.num * 208;
  const cuts = [t2.buf + 1, t2.buf + 208, t2.buf + 5 * 208 + 77, t2.buf + 100 * 208, t2.buf + 235 * 208 + 207, poolAt,
    poolAt + 1, poolAt + 500, poolAt + Math.floor((t2.size - 16 - t2.num * 208) / 2), t2.buf + t2.size - 17,
    t2.buf + t2.size - 16, t2.buf + t2.size - 1];
  const without = work((await toChrome(SAMPLE.subarray(0, t2.off))).trace).length;
  const whole = work((await toChrome(SAMPLE.subarray(0, t2.end))).trace);
  let last = without;
  for (const cut of cuts) {
    const tr = await checkCut(SAMPLE, t2, cut);
    const n = work(tr).length;
    assert.ok(n >= last, `cut at ${cut}: ${n} events, fewer than an earlier cut's ${last}`);
    last = n;
  }
  // A cut in the pool: every entry held, only names missing; a cut in the trailer or the padding: the whole pull.
  const inPool = work((await toChrome(SAMPLE.subarray(0, poolAt + 1))).trace);
  assert.is(inPool.length, whole.length);
  assert.ok(inPool.some((e) => e.name === "") && inPool.some((e) => e.name !== ""), "names held and names cut");
  assert.equal(work((await toChrome(SAMPLE.subarray(0, t2.buf + t2.size - 1))).trace), whole);
  assert.ok(last > without);
});

test("every cut of the sample's second pull at a 13-byte step: as the held entries' whole buffer, and no trap", async () => {
  const step = Math.floor(t2.len / 13);
  for (let cut = t2.buf + 3; cut < t2.payload + t2.len; cut += step) await checkCut(SAMPLE, t2, cut);
});

test("the sample's first pull cut in its pool: its engine types named, its events on their lanes; cut in its entries: no engine type is named", async () => {
  // The pool holds the metadata names first: a cut past them keeps every engine type and lane.
  const poolAt = t1.buf + t1.num * 208;
  const tr = await checkCut(SAMPLE, t1, poolAt + 400);
  const k = events(tr, "kernel");
  assert.ok(k.length > 0 && k.every((e) => e.tid >= 6000), "kernels on MME and TPC lanes");
  // Cut inside the entries: the pool with every engine-type name is gone, so no type is named (the bridge's rule:
  // work of an unnamed type is skipped, UNKNOWN_KIND) and the metadata names are HPU_CUT_STRING; no lane is named
  // after nothing.
  const cut = t1.buf + 60 * 208 + 8;
  const cutTrace = await checkCut(SAMPLE, t1, cut);
  assert.is(work(cutTrace).length, 0);
  const ws = (await toChrome(SAMPLE.subarray(0, cut))).result.info.warnings as Warn[];
  assert.ok(warnOf(ws, "UNKNOWN_KIND") && warnOf(ws, "HPU_CUT_STRING"), JSON.stringify(ws));
});

test("cut inside the 48-byte header: nothing to read, the cut tail lost (TRUNCATED), as before", async () => {
  for (const cut of [t2.payload + 1, t2.payload + 47]) {
    const { trace, result } = await toChrome(SAMPLE.subarray(0, cut));
    assert.is(work(trace).length, work((await toChrome(SAMPLE.subarray(0, t2.off))).trace).length);
    assert.equal(result.info.loss.ranges, [{ from: t2.off, to: cut, code: "TRUNCATED" }]);
    assert.is(warnOf(result.info.warnings as Warn[], "HPU_BAD_TRACE"), undefined);
  }
  // At 48 bytes the header is whole and no entry byte is here: nothing lost beyond the entries that are missing.
  const { result } = await toChrome(SAMPLE.subarray(0, t2.buf));
  assert.equal(result.info.loss.ranges, []);
  assert.ok(warnOf(result.info.warnings as Warn[], "TRUNCATED"));
});

// ---- Hand-built buffers ----------------------------------------------------------------------------------------

const X = (engineType: number, engineIndex: number, ts: bigint, dur: bigint, name: string, extra: Partial<SynEntry> = {}): SynEntry =>
  ({ type: "X", ts: T0 + ts, dur, engineType, engineIndex, name, ...extra });
const BASE2 = 0x7f00_1000_0000n;

/**
 * A dump of two pulls: the first names the engine types (its metadata entries of engine index 0), the second holds
 * `entries` (in `layout`), so that a cut in the second keeps its engine types whatever strings it loses.
 */
function afterNaming(entries: SynEntry[], layout: 208 | 112 = 208, pad = 0): { bytes: Uint8Array; t: Trace; buf: Uint8Array } {
  const types = metadata().filter((m) => m.engineIndex === 0);
  const buf = synBuffer(entries, { base: BASE2, layout, pad });
  const bytes = synDump([tracePayload(synBuffer(types, { layout })), tracePayload(buf, 0, BASE2)]);
  return { bytes, t: tracesOf(bytes)[1], buf };
}

test("a later pull cut in its entries: engine types named by the earlier pull, its events nameless on their lanes; engine names only it gave: the lanes' fallback", async () => {
  // The second pull names engines TPC1 and MME1 too; cut inside its entries, none of its strings is in the file.
  const { bytes, t } = afterNaming([...metadata(), X(8, 1, 200n, 10n, "tpc_op"), X(7, 1, 300n, 20n, "mme_op"),
    X(40, 1, 250n, 5n, "synLaunch"), X(4, 2, 400n, 30n, "memcpy_h2d"), X(8, 0, 500n, 10n, "lost")]);
  const m = metadata().length;
  const cut = t.buf + (m + 4) * 208 + 100;
  const tr = await checkCut(bytes, t, cut);
  assert.equal(events(tr, "kernel").map((e) => [e.name, e.tid, e.dur]), [["", 7001, 0.01], ["", 6001, 0.02]]);
  assert.equal(events(tr, "gpu_memcpy").map((e) => [e.name, e.tid]), [["", 3002]]);
  assert.equal(events(tr, "hpu_op").map((e) => [e.name, e.tid]), [["", 1]]);
  // TPC1, MME1, PDMA2 and the host thread were named only in the cut pull: no lane or thread takes an empty name.
  const named = (x: ChromeTrace) => x.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => `${e.pid}/${e.tid} ${e.args.name}`);
  assert.ok(!named(tr).some((n) => / $/.test(n) || /TPC1|MME1|PDMA2|Thread 1/.test(n)), JSON.stringify(named(tr)));
  // Whole, the same pull names them.
  assert.ok(named((await toChrome(bytes)).trace).some((n) => /TPC1/.test(n)));
  const { result } = await toChrome(bytes.subarray(0, cut));
  const ws = result.info.warnings as Warn[];
  assert.equal([warnOf(ws, "RECORD_TRUNCATED")?.offset, warnOf(ws, "RECORD_TRUNCATED")?.detail], [t.buf + (m + 4) * 208, 100]);
  assert.equal([warnOf(ws, "HPU_CUT_STRING")?.offset, warnOf(ws, "HPU_CUT_STRING")?.detail], [t.buf, 0], "first: metadata entry 0's name");
  assert.is(warnOf(ws, "UNKNOWN_KIND"), undefined, "every engine type known");
});

test("a pull cut inside its first entries: entry 0's type byte tells no layout (it is at 16 in both), so a cut in 112..207 bytes is the current layout's entry 0 cut (RECORD_TRUNCATED at it), not a whole 112-byte event", async () => {
  const { bytes, t } = afterNaming([X(8, 0, 100n, 10n, "k0", { recipeId: 5 }), X(8, 0, 200n, 10n, "k1"), X(7, 0, 300n, 10n, "k2")]);
  for (const h of [100, 111, 112, 150, 207, 208, 300, 415, 416, 500]) await checkCut(bytes, t, t.buf + h);
  const tr = await checkCut(bytes, t, t.buf + 150);
  assert.equal(events(tr, "kernel"), [], "entry 0 is cut: no event from half of it");
});

test("112-byte entries cut in their entries, pool and trailer: the old layout chosen from the held entries", async () => {
  const entries = [...metadata(), X(8, 1, 100n, 40n, "tpc_op", { dataType: "f32", context: 5n }), X(7, 0, 150n, 10n, "mm"), X(8, 0, 200n, 5n, "late_op")];
  const { bytes, t } = afterNaming(entries, 112);
  const poolAt = t.buf + entries.length * 112;
  for (const cut of [t.buf + 2 * 112 + 10, t.buf + 13 * 112 + 50, poolAt + 10, poolAt + 60, t.buf + t.size - 3]) await checkCut(bytes, t, cut, 112);
  const tr = await checkCut(bytes, t, t.buf + 13 * 112 + 50, 112);
  assert.equal(events(tr, "kernel").map((e) => [e.name, e.tid, e.args.context]), [["", 7001, 5], ["", 6000, 0]]);
});

test("'B' held, its 'E' cut off: an incomplete event; an extraArgs array past the cut: HPU_CUT_STRING, its args left out", async () => {
  const m = metadata().length;
  const be = (type: string, ts: bigint, name: string): SynEntry => ({ type, ts: T0 + ts, engineType: 7, engineIndex: 1, context: 3n, name });
  const entries = [...metadata(), be("B", 100n, "open"), X(8, 1, 120n, 10n, "args"), be("E", 200n, "closed")];
  const { buf } = afterNaming(entries, 208, 48);
  // The "args" entry's extraArgs: one UINT64 (key "args", value 7) in a 24-byte array at the pool's end (its padding).
  const dv = new DataView(buf.buffer);
  const arrAt = buf.length - 16 - 24;
  const keyAt = Buffer.from(buf).indexOf("args\0", entries.length * 208);
  dv.setBigUint64(arrAt, BASE2 + BigInt(keyAt), true);
  dv.setBigUint64(arrAt + 16, 7n, true);
  buf[(m + 1) * 208 + 128] = 1;
  dv.setBigUint64((m + 1) * 208 + 136, BASE2 + BigInt(arrAt), true);
  const bytes = synDump([tracePayload(synBuffer(metadata().filter((e) => e.engineIndex === 0))), tracePayload(buf, 0, BASE2)]);
  const t = tracesOf(bytes)[1];
  assert.equal(events((await toChrome(bytes)).trace, "kernel").map((e) => [e.name, e.args.args ?? null]), [["args", 7], ["closed", null]]);
  const cut = t.buf + arrAt + 8; // the array is cut, every name before it held
  const tr = await checkCut(bytes, t, cut);
  assert.equal(events(tr, "kernel").map((e) => [e.name, e.args.args ?? null, e.args.incomplete ?? false]), [["args", null, false], ["closed", null, false]]);
  const { result } = await toChrome(bytes.subarray(0, cut));
  assert.equal([warnOf(result.info.warnings as Warn[], "HPU_CUT_STRING")?.count, warnOf(result.info.warnings as Warn[], "HPU_CUT_STRING")?.detail], [1, m + 1]);
  // Cut inside the 'E': the 'B' is an incomplete event, as one still open at the end of any dump.
  const tr2 = await checkCut(bytes, t, t.buf + (m + 2) * 208 + 10);
  assert.equal(events(tr2, "kernel").map((e) => [e.name, e.dur, e.args.incomplete ?? false]), [["", 0, true], ["", 0.01, false]]);
});

test("a cut buffer's header: numEntries 0 is an empty pull (the cut tail lost, as before); more than size holds: HPU_BAD_TRACE 5; size off: 2", async () => {
  const entries = [...metadata(), X(8, 1, 100n, 10n, "k")];
  const buf = synBuffer(entries);
  const dump = (numEntries: bigint, size = BigInt(buf.length)) => {
    const p = hpuTracePayload(BASE, buf, numEntries, 0, 0, T0 + 1n);
    new DataView(p.buffer).setBigUint64(8, size, true);
    return synDump([p]);
  };
  const zero = dump(0n);
  const t = tracesOf(zero)[0];
  const cut = t.buf + t.size - 16; // every string held, the trailer cut off
  const bad = async (b: Uint8Array) => {
    const r = await toChrome(b.subarray(0, cut));
    return { w: warnOf(r.result.info.warnings as Warn[], "HPU_BAD_TRACE"), loss: r.result.info.loss };
  };
  let r = await bad(zero);
  assert.is(r.w, undefined);
  assert.equal(r.loss.ranges, [{ from: t.off, to: cut, code: "TRUNCATED" }]);
  r = await bad(dump(BigInt(Math.floor((buf.length - 16) / 112) + 1)));
  assert.equal([r.w?.offset, r.w?.detail], [t.off, 5]);
  assert.equal(r.loss.ranges, [{ from: t.off, to: cut, code: "HPU_BAD_TRACE" }]);
  assert.is(r.loss.activityChunks, 1);
  // As many as only the old layout holds: read as 112-byte entries, whose type bytes do not fit these 208-byte ones.
  r = await bad(dump(BigInt(Math.floor((buf.length - 16) / 112))));
  assert.is(r.w?.detail, 4);
  r = await bad(dump(BigInt(entries.length), BigInt(buf.length + 8)));
  assert.is(r.w?.detail, 2);
  // One fewer than the entries: the last one is not read (the header's count is the one there is).
  const fewer = dump(BigInt(entries.length - 1));
  const f = await toChrome(fewer.subarray(0, cut));
  assert.is(events(f.trace, "kernel").length, 0);
  assert.is(events((await toChrome(dump(BigInt(entries.length)).subarray(0, cut))).trace, "kernel").length, 1);
  // Whole, these chunks convert as before (numEntries is read only when the trailer is missing).
  assert.is(events((await toChrome(zero)).trace, "kernel").length, 1);
  assert.is(events((await toChrome(fewer)).trace, "kernel").length, 1);
});

test("zeros at the end of a cut buffer (a crash's never-written blocks): over 512 bytes are not read as entries, fewer are", async () => {
  const entries = [...metadata(), ...Array.from({ length: 12 }, (_, i) => X(8, i % 2, 100n + BigInt(i) * 20n, 10n, `op${i}`))];
  const { bytes, t } = afterNaming(entries);
  const e15 = t.buf + 15 * 208;
  const at = e15 + 40; // 15 entries and 40 bytes of the 16th written, then zeros
  const zeroed = (n: number) => { const b = bytes.slice(0, at + n); b.fill(0, at); return b; };
  // 1000 zeros: the file as if cut where they start (the entry they start in is RECORD_TRUNCATED), the zeros lost.
  const cutThere = await checkCut(bytes, t, at);
  assert.is(events(cutThere, "kernel").length, 4);
  const long = await toChrome(zeroed(1000));
  assert.equal(body(long.trace), body(cutThere));
  // (The zeros' range continues the cut entry's: one range.)
  assert.equal(long.result.info.loss, { bytes: 1040, activityChunks: 0, activityBytes: 0, rangesTotal: 1, ranges: [{ from: e15, to: at + 1000, code: "RECORD_TRUNCATED" }] });
  // 300 zeros: an entry's own zero fields, read as they are: the 16th entry whole (its engine type 0, which no
  // metadata names: UNKNOWN_KIND), the 17th the one cut.
  const short = await toChrome(zeroed(300));
  const ws = short.result.info.warnings as Warn[];
  assert.equal([warnOf(ws, "UNKNOWN_KIND")?.offset, warnOf(ws, "UNKNOWN_KIND")?.detail], [e15, 0]);
  assert.equal(short.result.info.loss.ranges, [{ from: e15 + 208, to: at + 300, code: "RECORD_TRUNCATED" }]);
  assert.is(events(short.trace, "kernel").length, 4);
});

test("another vendor's ACTIVITY chunk cut at the end of a Habana dump: FOREIGN_CHUNK, and its bytes lost (TRUNCATED)", async () => {
  // Nothing of it is read, so its cut tail is lost like any unread cut chunk's (before: said nowhere in the ranges).
  const bytes = synDump([tracePayload(synBuffer([...metadata(), X(8, 1, 100n, 10n, "k")]))], { before: [] });
  const chunks = chunksOf(bytes);
  const end = chunks.find((c) => c.type === ChunkType.END)!;
  const w = RawtraceWriter.inMemory();
  for (const c of chunks) if (c.off < end.off) w.chunk(c.type, bytes.slice(c.payload, c.payload + c.len));
  w.chunk(ChunkType.ACTIVITY, new Uint8Array(256).fill(7));
  const all = w.bytes();
  const act = chunksOf(all).at(-1)!;
  const { trace, result } = await toChrome(all.subarray(0, act.payload + 100));
  assert.is(events(trace, "kernel").length, 1);
  assert.is(warnOf(result.info.warnings as Warn[], "FOREIGN_CHUNK")?.detail, ChunkType.ACTIVITY);
  assert.equal(result.info.loss.ranges, [{ from: act.off, to: act.payload + 100, code: "TRUNCATED" }]);
});

test("read a few bytes at a time: the same output for a cut buffer, its entries converted", async () => {
  const cut = t2.buf + 120 * 208 + 33;
  const bytes = SAMPLE.subarray(0, cut);
  const { text, trace } = await toChrome(bytes);
  assert.ok(work(trace).length > work((await toChrome(SAMPLE.subarray(0, t2.off))).trace).length);
  for (const piece of [7, 4096]) {
    const src = {
      name: "test.rawtrace", size: bytes.length,
      open() {
        let off = 0;
        return { read(dst: Uint8Array) { const n = Math.min(dst.length, piece, bytes.length - off); dst.set(bytes.subarray(off, off + n)); off += n; return n; } };
      },
    };
    const parts: Buffer[] = [];
    await (await createEngine()).convert(src, (x) => parts.push(Buffer.from(x)));
    assert.is(Buffer.concat(parts).toString(), text, `reads of ${piece} bytes`);
  }
});

test.run();
