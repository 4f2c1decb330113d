/**
 * Bad input to the PTI decoder: kinds with no size (PTI records carry no length: the rest of the buffer is lost),
 * records cut by the buffer end, sizes too small for a kind's fields or implausible, kinds the decoder does not read,
 * memory / memcpy types outside their enums, device UUIDs missing from DEVICES, API ids without a name, unknown,
 * missing and inverted times. Each is a counted warning at the offset of the record (docs/errors.md); every good
 * record around it still converts.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome, events, warningOf } from "../helpers/convert.js";
import { firstActivityOffset } from "../helpers/dump_chunks.js";
import { apiCall, copy, kernel, ptiDump } from "../helpers/pti_records.js";


test("kind 0 (or any kind without a size): UNKNOWN_KIND_UNSIZED at it, the rest of its buffer lost, the next buffer read", async () => {
  const k1 = kernel("1.2", 1, 10, 20);
  const bytes = ptiDump([[k1, new Uint8Array(48), kernel("1.2", 2, 30, 40)], [kernel("1.2", 3, 50, 60)]]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((e) => e.args.correlation), [1, 3]);
  const w = warningOf(result, "UNKNOWN_KIND_UNSIZED")!;
  assert.is(w.offset, firstActivityOffset(bytes) + k1.length);
  assert.is(result.info.loss.rangesTotal, 1);
});

test("a record cut by the buffer end: RECORD_TRUNCATED, the records before it kept", async () => {
  const k = kernel("1.2", 2, 30, 40);
  const { trace, result } = await toChrome(ptiDump([[kernel("1.2", 1, 10, 20), k.subarray(0, 100)]]));
  assert.is(events(trace, "kernel").length, 1);
  assert.is(warningOf(result, "RECORD_TRUNCATED")!.count, 1);
});

test("KIND_SIZES smaller than a kind's fields: RECORD_TOO_SMALL per record; implausible sizes: BAD_KIND_SIZE, built-in used", async () => {
  // Kernels claimed 48 bytes: each 48-byte record is too small, and is skipped.
  const short = (corr: number) => {
    const b = kernel("1.2", corr, 10, 20).slice(0, 48);
    return b;
  };
  const small = ptiDump([[short(1), short(2), apiCall(6, 17, 3, 30, 40)]], {
    kindSizes: [[1, 48], [6, 48], [3, 48]],
  });
  const r1 = await toChrome(small);
  assert.is(events(r1.trace, "kernel").length, 0);
  assert.is(events(r1.trace, "xpu_runtime").length, 1);
  assert.is(warningOf(r1.result, "RECORD_TOO_SMALL")!.count, 2);
  // A size that is not a multiple of 8: the built-in 184 of PTI 1.2 is used and the kernels decode.
  const odd = ptiDump([[kernel("1.2", 1, 10, 20), kernel("1.2", 2, 30, 40)]], { kindSizes: [[1, 185]] });
  const r2 = await toChrome(odd);
  assert.is(events(r2.trace, "kernel").length, 2);
  assert.ok(warningOf(r2.result, "BAD_KIND_SIZE"));
});

test("a KIND_SIZES size over 4× the kind's built-in (a high bit flipped before the checksum): BAD_KIND_SIZE, built-in used, no record after it swallowed", async () => {
  // A copy claimed 8,344 bytes (152 | 0x2000): stepping by it skips the kernels after the copy and still ends inside
  // the buffer, so nothing else would say they are gone.
  const kernels = Array.from({ length: 60 }, (_, i) => kernel("1.2", 10 + i, 100 + i * 10, 105 + i * 10));
  const sizes: Array<[number, number]> = [[1, 184], [3, 48], [6, 48], [7, 24], [8, 152 | 0x2000], [9, 152]];
  const { trace, result } = await toChrome(ptiDump([[copy("1.2", 1, 10, 20, 0), ...kernels]], { kindSizes: sizes }));
  assert.is(events(trace, "kernel").length, 60);
  assert.is(events(trace, "gpu_memcpy").length, 1);
  assert.is(warningOf(result, "BAD_KIND_SIZE")!.detail, 8);
  // Four times the built-in is a newer layout's room to grow: taken as the dump says.
  const grown = kernel("1.2", 1, 10, 20, { size: 184 * 4 });
  const r2 = await toChrome(ptiDump([[grown, grown]], { kindSizes: [[1, 184 * 4]] }));
  assert.is(events(r2.trace, "kernel").length, 2);
  assert.not.ok(warningOf(r2.result, "BAD_KIND_SIZE"));
});

test("no KIND_SIZES and a HEADER whose version names another layout (0.17 for 1.2 records): the layout the first buffer walks exactly under is used, every record decodes", async () => {
  const recs = [apiCall(6, 17, 1, 5, 8), ...Array.from({ length: 5 }, (_, i) => kernel("1.2", 10 + i, 100 + i * 10, 105 + i * 10)), copy("1.2", 2, 200, 210, 0)];
  const { trace, result } = await toChrome(ptiDump([recs, [kernel("1.2", 20, 300, 310)]], { gen: "0.17", kindSizes: null }));
  assert.equal(events(trace, "kernel").map((e) => e.args.correlation), [10, 11, 12, 13, 14, 20]);
  assert.is(events(trace, "gpu_memcpy").length, 1);
  assert.is(result.info.loss.rangesTotal, 0);
  assert.not.ok(warningOf(result, "UNKNOWN_KIND_UNSIZED"));
});

test("a kind the decoder does not read but the dump sizes (2: CPU kernel): UNKNOWN_KIND, stepped over", async () => {
  const cpu = new Uint8Array(32);
  new DataView(cpu.buffer).setUint32(0, 2, true);
  const { trace, result } = await toChrome(ptiDump([[cpu, kernel("1.2", 1, 10, 20)]], {
    kindSizes: [[1, 184], [2, 32], [3, 48], [6, 48], [7, 24], [8, 152]],
  }));
  assert.is(events(trace, "kernel").length, 1);
  assert.is(warningOf(result, "UNKNOWN_KIND")!.count, 1);
});

test("memcpy and memory types outside their enums: BAD_ENUM_VALUE, named INVALID; copy still drawn", async () => {
  const bad = copy("1.2", 1, 10, 20, 6);
  new DataView(bad.buffer).setUint32(4, 99, true);
  const { trace, result } = await toChrome(ptiDump([[bad, copy("1.2", 2, 30, 40, 9)]]));
  assert.equal(events(trace, "gpu_memcpy").map((e) => e.name), ["Memcpy INVALID (INVALID -> INVALID)", "Memcpy D2H (DEVICE -> HOST)"]);
  const w = warningOf(result, "BAD_ENUM_VALUE")!;
  assert.is(w.count, 1);
});

test("a device UUID not in DEVICES: UNKNOWN_DEVICE once per UUID, numbered after the listed devices, listed in deviceProperties", async () => {
  const bytes = ptiDump([[kernel("1.2", 1, 10, 20, { dev: 0 }), kernel("1.2", 2, 30, 40, { dev: 5 }),
    kernel("1.2", 3, 50, 60, { dev: 5 }), kernel("1.2", 4, 70, 80, { dev: 6 })]], { devices: [0] });
  const { trace, result } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((e) => e.pid), [0, 1, 1, 2]);
  assert.is(warningOf(result, "UNKNOWN_DEVICE")!.detail, 2);
  assert.equal(trace.deviceProperties.map((d: { id: number }) => d.id), [0, 1, 2]);
});

test("an API id with no name: <unknown api group:id>; times: start 0 dropped (BAD_TIMESTAMP), end 0 kept incomplete, end < start dropped", async () => {
  const { trace, result } = await toChrome(ptiDump([[apiCall(6, 999, 1, 10, 20), kernel("1.2", 2, 0, 0),
    kernel("1.2", 3, 100, 0), kernel("1.2", 4, 500, 400), kernel("1.2", 5, 600, 700)]]));
  assert.is(events(trace, "xpu_runtime")[0].name, "<unknown api 3:999>");
  assert.equal(events(trace, "kernel").map((e) => [e.args.correlation, e.dur, e.args.incomplete ?? false]), [[3, 0, true], [5, 0.1, false]]);
  assert.is(warningOf(result, "BAD_TIMESTAMP")!.count, 1);
  assert.is(warningOf(result, "NEGATIVE_DURATION")!.count, 1);
  assert.is(warningOf(result, "INCOMPLETE_RECORD")!.count, 1);
});

test.run();
