/**
 * Bad input to the rocprofiler-sdk decoder: record headers that do not frame a record (a size past the chunk, too
 * small, not repeated by the record, a foreign category: the walk goes on at the next record), the last record cut,
 * records too short for their kind, kinds the dump does not name, unknown kernel ids, negative
 * durations, ROCTx pops without a push and pushes never popped, malformed AGENTS and KERNEL_SYMBOLS. Each is a counted
 * warning at the offset of the record or chunk (docs/errors.md); every good record around it still converts.
 */
import { test } from "uvu";
import { readFileSync } from "node:fs";
import * as assert from "uvu/assert";
import { PayloadBuilder } from "../../src/format/writer.js";
import { ChunkType, RocpDomain } from "../../src/format/container.js";
import { framed, record } from "../../src/tools/kineto_to_rocprof.js";
import { toChrome, events, warningOf } from "../helpers/convert.js";
import { firstActivityOffset } from "../helpers/dump_chunks.js";
import { K, apiRecord, dumpWith, kernel, marker } from "../helpers/rocm_records.js";
import { KIND_NAMES } from "../../src/tools/kineto_to_rocprof.js";
import { isLossWarning } from "../../src/core/codes.js";


test("a size field past the chunk with records after it: BAD_RECORD_HEADER at that record, the walk goes on at the next record (before: RECORD_TRUNCATED, the rest of the chunk lost)", async () => {
  const bad = kernel(2, 100, 200);
  new DataView(bad.buffer).setBigUint64(8, 4096n, true);
  const bytes = dumpWith([[kernel(1, 0, 50), bad, kernel(3, 300, 400)], [kernel(4, 500, 600)]]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((e) => e.args.correlation), [1, 3, 4]);
  const w = warningOf(result, "BAD_RECORD_HEADER")!;
  const at = firstActivityOffset(bytes) + kernel(1, 0, 50).length;
  assert.equal([w.offset, w.detail, w.count], [at, 4096, 1]);
  assert.equal(result.info.loss.ranges, [{ from: at, to: at + bad.length, code: "BAD_RECORD_HEADER" }], "the damaged record's bytes");
  assert.not.ok(warningOf(result, "RECORD_TRUNCATED"));
});

test("the last record's size past the chunk (a buffer's cut record): RECORD_TRUNCATED with the bytes it holds", async () => {
  const last = kernel(2, 100, 200);
  new DataView(last.buffer).setBigUint64(8, 4096n, true);
  const bytes = dumpWith([[kernel(1, 0, 50), last]]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((e) => e.args.correlation), [1]);
  const w = warningOf(result, "RECORD_TRUNCATED")!;
  assert.equal([w.offset, w.detail], [firstActivityOffset(bytes) + kernel(1, 0, 50).length, last.length], "its bytes, not the size it gave");
});

test("a size too small to frame a record (< 16), a foreign category, a size its record does not repeat: BAD_RECORD_HEADER, each record after it kept", async () => {
  const tiny = new Uint8Array(24);
  const dv = new DataView(tiny.buffer);
  dv.setUint32(0, 1, true);
  dv.setUint32(4, K("KERNEL_DISPATCH"), true);
  dv.setBigUint64(8, 8n, true);
  // The collector writes tracing records only (docs/format.md §5): category 3 is a damaged byte.
  const counters = kernel(3, 300, 400);
  new DataView(counters.buffer).setUint32(0, 3, true);
  // The size one bit off (64 → 72 in a real cut dump): the record's own first field still says the true one.
  const flipped = kernel(4, 500, 600);
  const fv = new DataView(flipped.buffer);
  fv.setBigUint64(8, fv.getBigUint64(8, true) + 8n, true);
  const { trace, result } = await toChrome(dumpWith([[kernel(1, 0, 50), tiny, kernel(2, 100, 200), counters, kernel(5, 700, 800), flipped, kernel(6, 900, 1000)]]));
  assert.equal(events(trace, "kernel").map((e) => e.args.correlation), [1, 2, 5, 6]);
  const w = warningOf(result, "BAD_RECORD_HEADER")!;
  assert.is(w.count, 3);
  assert.is(w.detail, 8, "the first one's size");
  assert.is(result.info.loss.rangesTotal, 3);
  assert.equal(result.info.loss.bytes, tiny.length + counters.length + flipped.length);
  assert.ok(isLossWarning("BAD_RECORD_HEADER"));
});

test("the real MI250 dump cut inside a buffer, one bit of its first record's size flipped (64 → 72): every other record of the cut buffer kept, 80 bytes said lost (before: 1 of its 35 events, 136 bytes said)", async () => {
  const cut = new Uint8Array(readFileSync("samples/mi250_minitoy_rocprof.rawtrace").subarray(0, 13000));
  // The activity chunk the cut goes through starts at 8528; its first record's header at 8552.
  const dv = new DataView(cut.buffer);
  assert.equal([dv.getUint32(8552, true), Number(dv.getBigUint64(8560, true))], [1, 64], "the sample as it was");
  const whole = await toChrome(cut);
  cut[8560] ^= 0x08;
  const { trace, result } = await toChrome(cut);
  const all = (t: typeof trace) => t.traceEvents.filter((e) => e.ph === "X").length;
  assert.is(all(trace), all(whole.trace) - 1, "the damaged record's event only");
  const w = warningOf(result, "BAD_RECORD_HEADER")!;
  assert.equal([w.offset, w.detail], [8552, 72]);
  assert.equal(result.info.loss.ranges.filter((r) => r.code === "BAD_RECORD_HEADER"), [{ from: 8552, to: 8552 + 16 + 64, code: "BAD_RECORD_HEADER" }]);
});

test("a kernel record too short for its fields: RECORD_TOO_SMALL, skipped; the next one decodes", async () => {
  const { trace, result } = await toChrome(dumpWith([[kernel(1, 0, 50, 1, 96), kernel(2, 100, 200)]]));
  assert.equal(events(trace, "kernel").map((e) => e.args.correlation), [2]);
  assert.is(warningOf(result, "RECORD_TOO_SMALL")!.count, 1);
});

test("a ROCTx record too short for its fields: RECORD_TOO_SMALL as for the other kinds (it was dropped unsaid); the range around it kept", async () => {
  const short = framed(K("MARKER_CORE_API"), record(32, K("MARKER_CORE_API"), 1).b);
  const { trace, result } = await toChrome(dumpWith([[marker(1, 1, 0), short, marker(2, 2, 100), kernel(3, 10, 50)]]));
  assert.is(warningOf(result, "RECORD_TOO_SMALL")?.count, 1, JSON.stringify(result.info.warnings));
  assert.ok(isLossWarning("RECORD_TOO_SMALL"));
  assert.is(events(trace, "kernel").length, 1);
});

test("a kind the dump does not name: UNNAMED_KIND (a loss: its names were lost)", async () => {
  const unknown = framed(200, record(32, 200, 0).b);
  const { trace, result } = await toChrome(dumpWith([[unknown, kernel(1, 0, 50)]]));
  assert.is(events(trace, "kernel").length, 1);
  assert.equal(result.info.warnings.map((w) => [w.code, w.count, w.detail]), [["UNNAMED_KIND", 1, 200]], "once per record, not once per pass");
  assert.ok(isLossWarning("UNNAMED_KIND"));
});

test("a kind the dump names but the decoder does not turn into events (OMPT): UNKNOWN_KIND once per record, not a loss", async () => {
  const ompt = framed(K("OMPT"), record(32, K("OMPT"), 0).b);
  const { trace, result } = await toChrome(dumpWith([[ompt, ompt, kernel(1, 0, 50)]]));
  assert.is(events(trace, "kernel").length, 1);
  assert.equal(result.info.warnings.map((w) => [w.code, w.count, w.detail]), [["UNKNOWN_KIND", 2, K("OMPT")]]);
  assert.not.ok(isLossWarning("UNKNOWN_KIND"));
});

test("a decoded kind whose name API_NAMES holds damaged (KERNED_DISPATCH, its checksum recomputed): its records are UNKNOWN_KIND, not dropped without a word", async () => {
  const renamed = dumpWith([[kernel(1, 0, 50), kernel(2, 60, 90)]], (w) => w.apiNames([[RocpDomain.KINDS, K("KERNEL_DISPATCH"), "KERNED_DISPATCH"]]));
  const { trace, result } = await toChrome(renamed);
  assert.is(events(trace, "kernel").length, 0);
  assert.equal(result.info.warnings.map((w) => [w.code, w.count, w.detail]), [["UNKNOWN_KIND", 2, K("KERNEL_DISPATCH")]]);
});

test("no HEADER: the API record layout from the first API-layout record, a ROCTx range record first too: the same events as with it", async () => {
  // A range record (thread range), a HIP launch, its kernel; the range projected onto the kernel's stream.
  const recs = [apiRecord("MARKER_CORE_RANGE_API", 1, 100, 1000, 50000, 5), apiRecord("HIP_RUNTIME_API", 3, 1, 2000, 3000, 5), kernel(1, 4000, 9000)];
  const withHeader = dumpWith([recs], (w) => w.apiNames([[RocpDomain.OPS | K("MARKER_CORE_RANGE_API"), 1, "roctxThreadRangeA"]]), 10000);
  const dv = new DataView(withHeader.buffer, withHeader.byteOffset);
  const first = 24 + ((dv.getUint32(16 + 12, true) + 7) & ~7); // the HEADER, the first chunk
  const without = new Uint8Array(withHeader.length - first);
  without.set(withHeader.subarray(0, 16));
  without.set(withHeader.subarray(16 + first), 16);
  const a = await toChrome(withHeader);
  const b = await toChrome(without);
  const shape = (t: typeof a.trace) => t.traceEvents.filter((e) => e.ph === "X").map((e) => `${e.cat} ${e.name} ${e.dur}`).sort();
  assert.ok(shape(a.trace).some((e) => e.startsWith("gpu_user_annotation")), "the range projected");
  assert.equal(shape(b.trace), shape(a.trace));
  // The range read right in pass 1 too: no timestamp it would misread.
  const codes = (r: typeof a) => r.result.info.warnings.map((w) => w.code).filter((c) => c !== "NO_HEADER" && c !== "SEQ_GAP");
  assert.equal(codes(b), codes(a));
  assert.ok(warningOf(b.result, "NO_HEADER"));
});

test("kind names that come after records of that kind (a later API_NAMES chunk): those records skipped in both passes, as UNNAMED_KIND", async () => {
  const names: Array<[number, number, string]> = KIND_NAMES["1.0"].map((n, i) => [RocpDomain.KINDS, i, n] as [number, number, string]);
  const bytes = dumpWith([[apiRecord("HIP_RUNTIME_API", 3, 1, 2000, 3000, 5), kernel(1, 4000, 9000)]], undefined, 10000, {
    kinds: names.filter(([, i]) => i !== K("KERNEL_DISPATCH")),
    after: (w) => w.apiNames(names.filter(([, i]) => i === K("KERNEL_DISPATCH"))),
  });
  const { trace, result } = await toChrome(bytes);
  assert.is(events(trace, "kernel").length, 0, "not indexed by pass 1, so not emitted by pass 2");
  assert.equal(result.info.warnings.map((w) => [w.code, w.count]), [["UNNAMED_KIND", 1]]);
});

test("a kernel id without a symbol: MISSING_STRING, named <unknown kernel>; end before start: dropped, NEGATIVE_DURATION (the timestamp rule)", async () => {
  const { trace, result } = await toChrome(dumpWith([[kernel(1, 0, 50, 9), kernel(2, 300, 200)]]));
  const k = events(trace, "kernel");
  assert.is(k.length, 1, "the inverted kernel is dropped (docs/errors.md, Timestamps)");
  assert.is(k[0].name, "<unknown kernel>");
  assert.ok(warningOf(result, "MISSING_STRING"));
  assert.is(warningOf(result, "NEGATIVE_DURATION")!.count, 1);
});

test("ROCTx: a pop without a push is UNMATCHED_RANGE_END; a push never popped closes at the end with UNCLOSED_RANGE", async () => {
  const bytes = dumpWith([[marker(2, 10, 0), marker(1, 11, 100), kernel(1, 200, 900)]], (w) => w.strings([[11n, "outer"]]));
  const { trace, result } = await toChrome(bytes);
  const r = events(trace, "user_annotation");
  assert.is(r.length, 1);
  assert.is(r[0].name, "outer");
  assert.ok(warningOf(result, "UNMATCHED_RANGE_END"));
  assert.ok(warningOf(result, "UNCLOSED_RANGE"));
});

test("malformed AGENTS (fixed part under 120 B) and KERNEL_SYMBOLS (name past the end): BAD_PAYLOAD, conversion goes on", async () => {
  const bytes = dumpWith([[kernel(1, 0, 50)]], (w) => {
    w.chunk(ChunkType.AGENTS, new PayloadBuilder().u32(1).u32(64).bytes(new Uint8Array(64)).result());
    w.chunk(ChunkType.KERNEL_SYMBOLS, new PayloadBuilder().u32(1).u32(48).bytes(new Uint8Array(48)).u32(1000).result());
  });
  const { trace, result } = await toChrome(bytes);
  assert.is(events(trace, "kernel").length, 1);
  assert.is(warningOf(result, "BAD_PAYLOAD")!.count, 2);
});

test("a fixed-part size near 2^32 (position + size wraps in 32 bits): BAD_PAYLOAD, no entry read from past the payload", async () => {
  // Before, KERNEL_SYMBOLS with fixed 0xfffffff8 passed the bounds check (q + fixed wrapped below the end) and its
  // count entries were read from the bytes after the 8-byte payload, without a warning.
  for (const type of [ChunkType.KERNEL_SYMBOLS, ChunkType.AGENTS]) {
    const bytes = dumpWith([[kernel(1, 0, 50)]], (w) => w.chunk(type, new PayloadBuilder().u32(4).u32(0xfffffff8).result()));
    const { trace, result } = await toChrome(bytes);
    assert.is(events(trace, "kernel").length, 1);
    assert.equal(result.info.warnings.map((x) => [x.code, x.count]), [["BAD_PAYLOAD", 1]], `chunk type ${type}`);
  }
});

test.run();
