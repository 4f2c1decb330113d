/**
 * The damaged byte ranges the core reports (assembly/util/diag.ts `lose`, docs/errors.md "Damage"): for every way the
 * reader skips bytes, the exact range [from, to), its warning and chunk seq, in `FileInfo.loss` and the Chrome JSON
 * trailer's `rawtrace.lost`; an intact dump reports none.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { crc32 } from "node:zlib";
import { readFileSync } from "node:fs";
import { createEngine } from "../../src/node/wasm.js";
import { info, toChrome, trickle, warningOf } from "../helpers/convert.js";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { sampleDump, T0 } from "../helpers/sample_dump.js";
import { CHECKSUM_FLAGS, RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { CHUNK_HEADER_SIZE } from "../../src/format/container.js";

/** The bytes of `a` then `b`. */
function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

const base = sampleDump();
const all = chunkSpans(base);
const act = all.filter((c) => c.type === 5);

test("an intact dump reports no loss, and the trailer has no `lost`", async () => {
  assert.equal((await info(base)).loss, { bytes: 0, activityChunks: 0, activityBytes: 0, rangesTotal: 0, ranges: [] });
  assert.is((await toChrome(base)).trace.rawtrace.lost, undefined);
});

for (const checksum of ["xxh64", "xxh32", "crc32"] as const) {
  test(`a bad payload checksum (${checksum}): the whole chunk, with its seq, counted as an activity buffer`, async () => {
    const b = sampleDump({ checksum });
    assert.equal(chunkSpans(b), all, "same chunk layout whichever checksum");
    assert.is(new DataView(b.buffer).getUint16(act[1].off + 6, true), CHECKSUM_FLAGS[checksum], "flag bit");
    b[act[1].off + CHUNK_HEADER_SIZE + 3] ^= 0x10;
    const { trace, result } = await toChrome(b);
    const range = { from: act[1].off, to: act[1].end, code: "BAD_PAYLOAD_CRC", seq: act[1].seq };
    assert.equal(result.info.loss, { bytes: act[1].end - act[1].off, activityChunks: 1, activityBytes: act[1].len, rangesTotal: 1, ranges: [range] });
    assert.equal(trace.rawtrace.lost, {
      bytes: act[1].end - act[1].off, activity_chunks: 1, activity_bytes: act[1].len, ranges_total: 1, ranges: [range],
    });
  });
}

for (const bits of [3, 5, 6, 7]) {
  test(`a header that flags two checksums or more (bits ${bits}, header CRC intact): BAD_CHUNK_HEADER, that chunk skipped whole`, async () => {
    const b = base.slice();
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    dv.setUint16(act[1].off + 6, bits, true);
    dv.setUint32(act[1].off + 20, crc32(b.subarray(act[1].off, act[1].off + 20)) >>> 0, true);
    const { trace, result } = await toChrome(b);
    const range = { from: act[1].off, to: act[1].end, code: "BAD_CHUNK_HEADER", seq: act[1].seq };
    assert.equal(result.info.loss, { bytes: act[1].end - act[1].off, activityChunks: 1, activityBytes: act[1].len, rangesTotal: 1, ranges: [range] });
    const w = trace.rawtrace.warnings.find((x: any) => x.code === "BAD_CHUNK_HEADER");
    assert.is(w.offset, act[1].off);
    assert.is(w.detail, act[1].end - act[1].off, "bytes skipped");
    assert.not.ok(trace.rawtrace.warnings.some((x: any) => x.code === "BAD_PAYLOAD_CRC"), "not read as a chunk of one checksum");
    // The chunks after it convert: the same events as a dump whose payload check failed on that chunk.
    const failed = base.slice();
    failed[act[1].off + CHUNK_HEADER_SIZE + 3] ^= 0x10;
    assert.is(result.events, (await toChrome(failed)).result.events);
    assert.ok(result.events > 0);
  });
}

test("a chunk that lost its last 8 bytes (a dropped block): that chunk alone is lost, the next one starts inside its declared span", async () => {
  // Every chunk but the last of every bundled sample: the damaged chunk declares 8 bytes more than it has, so its
  // payload check fails and the next chunk's header starts inside its span. The conversion must be the one of the
  // dump without that chunk, and the loss range end where the next chunk now starts.
  for (const file of ["alexnet_a100_rank0", "mi250_minitoy_rocprof", "xpu_train_pti", "gaudi2_mlp_synapse"]) {
    const intact = new Uint8Array(readFileSync(new URL(`../../samples/${file}.rawtrace`, import.meta.url)));
    const cs = chunkSpans(intact);
    for (const c of cs.slice(0, -1)) {
      const hole = concatBytes(intact.subarray(0, c.end - 8), intact.subarray(c.end));
      const without = concatBytes(intact.subarray(0, c.off), intact.subarray(c.end));
      const got = await toChrome(hole);
      const want = await toChrome(without);
      const what = `${file}: chunk type ${c.type} at ${c.off}`;
      assert.is(got.result.events, want.result.events, `${what}: events`);
      assert.ok(warningOf(got.result, "BAD_PAYLOAD_CRC"), `${what}: BAD_PAYLOAD_CRC`);
      assert.is(warningOf(got.result, "BAD_CHUNK_HEADER"), undefined, `${what}: no bytes scanned past the next chunk`);
      assert.equal(got.result.info.loss.ranges, [{ from: c.off, to: c.end - 8, code: "BAD_PAYLOAD_CRC", seq: c.seq }], what);
      if (file !== "xpu_train_pti") continue;
      // Read a few bytes at a time, the chunk's end and the next header arrive in separate reads: both passes must
      // still decide where the next chunk starts on the same bytes (container.ts feed waits for them).
      for (const piece of [8, 13, 600]) {
        const parts: Buffer[] = [];
        const r = await (await createEngine()).convert(trickle(hole, piece), (b) => parts.push(Buffer.from(b)));
        assert.is(r.events, want.result.events, `${what}, reads of ${piece} bytes: events`);
        assert.is(Buffer.concat(parts).toString(), got.text, `${what}, reads of ${piece} bytes: the same JSON`);
      }
    }
  }
});

test("a damaged copy and an intact copy of one chunk (a duplicate), either order: the intact one's events are kept", async () => {
  const intact = new Uint8Array(readFileSync(new URL("../../samples/h100_torch_train_nvtx.rawtrace", import.meta.url)));
  const want = (await toChrome(intact)).result.events;
  const acts = chunkSpans(intact).filter((c) => c.type === 5 && c.len < 4096);
  assert.ok(acts.length > 0, "a small activity chunk");
  const c = acts[0];
  const copy = intact.slice(c.off, c.end);
  const bad = copy.slice();
  bad[CHUNK_HEADER_SIZE + 9] ^= 0x01; // its payload check fails
  for (const [first, second] of [[bad, copy], [copy, bad]]) {
    const b = concatBytes(concatBytes(intact.subarray(0, c.off), concatBytes(first, second)), intact.subarray(c.end));
    const { result } = await toChrome(b);
    assert.is(result.events, want, "every event of the intact copy");
    assert.ok(warningOf(result, "BAD_PAYLOAD_CRC"), "the damaged copy is reported");
  }
});

test("a damaged chunk and a copy of it without a payload checksum (same seq): the copy is read in both passes, every event kept", async () => {
  const want = await toChrome(base);
  const a = act[1];
  const copy = base.slice(a.off, a.end);
  const dv = new DataView(copy.buffer);
  dv.setUint16(6, 0, true); // no checksum flag
  dv.setUint32(16, 0, true);
  dv.setUint32(20, crc32(copy.subarray(0, 20)) >>> 0, true);
  const bad = base.slice();
  bad[a.off + CHUNK_HEADER_SIZE + 3] ^= 0x10;
  const b = concatBytes(concatBytes(bad.subarray(0, a.end), copy), bad.subarray(a.end));
  const { trace, result } = await toChrome(b);
  assert.ok(warningOf(result, "BAD_PAYLOAD_CRC"), "the damaged one is reported");
  // Pass 1 indexed the copy's records; pass 2 skipped it (its seq was on the damaged list): 12 events of 37.
  assert.is(trace.traceEvents.length, want.trace.traceEvents.length);
  assert.is(result.events, want.result.events);
});

test("a damaged chunk header: the bytes scanned to the next valid chunk", async () => {
  const b = base.slice();
  b[act[0].off + 9] ^= 0x01; // seq: the header CRC fails
  const l = (await info(b)).loss;
  assert.equal(l.ranges, [{ from: act[0].off, to: act[1].off, code: "BAD_CHUNK_HEADER" }]);
  assert.is(l.bytes, act[1].off - act[0].off);
  assert.is(l.activityChunks, 0, "the type of a damaged header is unknown");
});

test("a header declaring more than 256 MiB: one range from it to the next valid chunk", async () => {
  const b = base.slice();
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  dv.setUint32(act[0].off + 12, 0x20000000, true);
  dv.setUint32(act[0].off + 20, crc32(b.subarray(act[0].off, act[0].off + 20)) >>> 0, true);
  const i = await info(b);
  assert.ok(i.warnings.some((w) => w.code === "CHUNK_TOO_LARGE"));
  assert.equal(i.loss.ranges, [{ from: act[0].off, to: act[1].off, code: "CHUNK_TOO_LARGE" }]);
  assert.is(i.loss.bytes, act[1].off - act[0].off);
});

test("a file cut inside a chunk: the tail; damage up to the end of the file: up to the end", async () => {
  // Cut 16 bytes into an activity buffer's payload: those bytes are read as records, and only the record the cut
  // went through is lost (the whole tail was, before the cut buffer's whole records were kept).
  const cut = base.subarray(0, act[1].off + 40);
  assert.equal((await info(cut)).loss.ranges, [{ from: act[1].off + 24, to: act[1].off + 40, code: "RECORD_TRUNCATED" }]);
  // Cut inside a chunk that is not an activity buffer (a DEVICES table here): the tail, as before.
  const other = all.find((c) => c.type !== 5 && c.type !== 1 && c.len > 16)!;
  assert.equal((await info(base.subarray(0, other.off + 40))).loss.ranges.slice(-1),
    [{ from: other.off, to: other.off + 40, code: "TRUNCATED" }]);
  const b = base.slice();
  const last = all[all.length - 1];
  b[last.off + 9] ^= 0x01;
  assert.equal((await info(b)).loss.ranges, [{ from: last.off, to: b.length, code: "BAD_CHUNK_HEADER" }]);
});

test("a dump cut before its first activity buffer: no event, and Record Window End at the collector start (it stood at the time base, up to 3 months earlier)", async () => {
  const cut = base.subarray(0, act[0].off);
  const { text, trace } = await toChrome(cut);
  assert.is(trace.traceEvents.filter((e: Record<string, unknown>) => e.ph === "X").length, 0);
  const m = /"name":"Record Window End","pid":"","tid":"","ts":(\d+)\.(\d{3})/.exec(text)!;
  const endNs = BigInt(m[1]) * 1000n + BigInt(m[2]);
  const start = (await info(cut)).collectorStartNs;
  assert.ok(start > 0n);
  assert.is(endNs, start - BigInt(trace.baseTimeNanoseconds));
});

/** A dump with one activity buffer: a kernel record, then `tail`. Returns the bytes and the tail's file offset. */
function withTail(tail: Uint8Array): { bytes: Uint8Array; at: number } {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION.cuda13, pid: 1, startNs: T0, hostname: "h", commandLine: "app" });
  const rec = C.kernelRecord("cuda13", { start: T0 + 10n, end: T0 + 20n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 1, namePtr: 0n });
  w.activity(C.concat([rec, tail]));
  w.end();
  const bytes = w.bytes();
  const a = chunkSpans(bytes).find((c) => c.type === 5)!;
  return { bytes, at: a.off + CHUNK_HEADER_SIZE + rec.length };
}

test("an activity buffer that ends inside a record, or holds a kind of unknown size: the rest of the buffer", async () => {
  const rec = C.kernelRecord("cuda13", { start: T0, end: T0 + 1n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 2, namePtr: 0n });
  const cut = withTail(rec.subarray(0, 12));
  assert.equal((await info(cut.bytes)).loss.ranges, [{ from: cut.at, to: cut.at + 12, code: "RECORD_TRUNCATED" }]);
  const odd = new Uint8Array(16);
  new DataView(odd.buffer).setUint32(0, 0x7777, true);
  const unknown = withTail(odd);
  assert.equal((await info(unknown.bytes)).loss.ranges, [{ from: unknown.at, to: unknown.at + 16, code: "UNKNOWN_KIND_UNSIZED" }]);
});

test("a dump cut inside an activity buffer keeps every whole record of it (the buffer was lost whole before)", async () => {
  // The H100 sample (CUPTI), the MI250 sample (rocprofiler-sdk) and the XPU sample (PTI), each cut at points inside its
  // largest ACTIVITY chunk: the events only grow as the cut moves on, each is one of the whole dump's, and a cut 1 byte
  // short of the chunk's end keeps all but the record it went through (before: 917 of 1,979 H100 events, 0 of 37
  // MI250 events).
  for (const name of ["h100_torch_train_nvtx", "mi250_minitoy_rocprof", "xpu_train_pti"]) {
    const bytes = new Uint8Array(readFileSync(`samples/${name}.rawtrace`));
    const last = chunkSpans(bytes).filter((c) => c.type === 5).sort((a, b) => b.len - a.len)[0]; // the largest buffer
    const payloadEnd = last.off + CHUNK_HEADER_SIZE + last.len;
    const keys = (t: { traceEvents: Array<Record<string, any>> }) =>
      t.traceEvents.filter((e) => e.ph === "X").map((e) => `${e.cat}|${e.name}|${e.ts}|${e.pid}|${e.tid}`);
    const whole = new Set(keys((await toChrome(bytes.subarray(0, last.end))).trace));
    const none = keys((await toChrome(bytes.subarray(0, last.off + CHUNK_HEADER_SIZE))).trace).length;
    let before = none;
    const cuts = [0.25, 0.5, 0.75].map((f) => last.off + CHUNK_HEADER_SIZE + Math.floor(last.len * f)).concat(payloadEnd - 1);
    for (const cut of cuts) {
      const { trace } = await toChrome(bytes.subarray(0, cut));
      const k = keys(trace);
      assert.ok(k.length >= before, `${name} cut at ${cut}: ${k.length} events, fewer than an earlier cut's ${before}`);
      assert.ok(k.every((x) => whole.has(x)), `${name} cut at ${cut}: an event the whole dump does not have`);
      assert.ok(trace.rawtrace.warnings.some((w: { code: string }) => w.code === "TRUNCATED"), `${name}: TRUNCATED`);
      before = k.length;
    }
    assert.ok(before > none, `${name}: the cut buffer's records were kept (${before} events, ${none} without the buffer)`);
    // A crash can leave the file's last blocks as zeros: none of them is read as a record's fields (an API call of
    // pid 0 and kind 0 was made up from a record the zeros started in), at any 8-byte place they start.
    const held = Math.floor(last.len * 0.75);
    // (Zeros of more than a record: a shorter run can be the last whole record's own zero fields.)
    for (let z = 8; z + 512 <= held; z += Math.max(8, Math.floor(held / 97 / 8) * 8)) {
      const zeroed = bytes.slice(0, last.off + CHUNK_HEADER_SIZE + held);
      zeroed.fill(0, last.off + CHUNK_HEADER_SIZE + z);
      const k = keys((await toChrome(zeroed)).trace);
      assert.ok(k.every((x) => whole.has(x)), `${name}: zeros from payload byte ${z}: an event the whole dump does not have`);
    }
    assert.ok(before >= whole.size - 2, `${name}: a cut 1 byte short keeps ${before} of ${whole.size} events`);
    // Cuts right after 8 zero bytes that a nonzero byte follows (mostly a record ending in zero fields, then the next
    // record's start): as many events as the cut 1 byte later, which holds the same whole records (such a record was
    // dropped as if its zeros were never written).
    let tried = 0;
    for (let cut = last.off + CHUNK_HEADER_SIZE + 16; cut < payloadEnd - 1 && tried < 12; cut += 8) {
      if (bytes.subarray(cut - 8, cut).some((b) => b !== 0) || bytes[cut] === 0) continue;
      const n = keys((await toChrome(bytes.subarray(0, cut))).trace).length;
      const later = keys((await toChrome(bytes.subarray(0, cut + 1))).trace).length;
      assert.ok(n >= later, `${name}: cut at ${cut} gives ${n} events, a cut 1 byte later ${later}`);
      tried++;
    }
    assert.ok(tried > 0, `${name}: no place ending in zeros`);
  }
});

test("a Gaudi trace buffer (HPU_TRACE) that fails its checksum counts as a lost event buffer, as an ACTIVITY chunk does", async () => {
  const b = new Uint8Array(readFileSync("samples/gaudi2_mlp_synapse.rawtrace"));
  const hpu = chunkSpans(b).filter((c) => c.type === 14);
  assert.ok(hpu.length > 0);
  b[hpu[0].off + CHUNK_HEADER_SIZE + 100] ^= 1;
  const { result } = await toChrome(b);
  assert.ok(warningOf(result, "BAD_PAYLOAD_CRC"));
  // Before: activityChunks 0, so `DATA LOST` named no lost buffer of events and `rawtrace.lost.activity_chunks` was 0.
  assert.equal([result.info.loss.activityChunks, result.info.loss.activityBytes], [1, hpu[0].len]);
});

test.run();
