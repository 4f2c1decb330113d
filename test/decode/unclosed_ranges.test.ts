/**
 * Ranges left open at the end (UNCLOSED_RANGE) and ROCTx pops without a push (UNMATCHED_RANGE_END) name the file
 * offset of their record, as every warning does (README: "every warning with the file offset of its first
 * occurrence"): the CUPTI decoder (assembly/decode/cupti_nvtx.ts) and the rocprofiler-sdk one
 * (assembly/decode/rocprofiler.ts) said offset 0. One warning counts them all, at the record that comes first in the
 * file, whatever order the decoder walks them in (a hash table; threads, then time).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { toChrome, events } from "../helpers/convert.js";
import { dumpWith, kernel, marker } from "../helpers/rocm_records.js";

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;

/** File offset of `record` in `dump` (each record of these dumps is unique). */
function offsetOf(dump: Uint8Array, record: Uint8Array): number {
  const at = Buffer.from(dump.buffer, dump.byteOffset, dump.byteLength).indexOf(Buffer.from(record));
  assert.ok(at > 0, "record found");
  return at;
}

test("CUPTI: NVTX ranges never ended, UNCLOSED_RANGE at the first one's start record, all counted", async () => {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], pid: 7, startNs: T, hostname: "h", commandLine: "app" });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.strings([[0x30n, "range"]]);
  const start = (id: number, ts: bigint) => C.markerRecord(L, 2, ts, id, 7, 8, 0x30n);
  // Ids whose hash order is not the file's; range 4 ends, the others do not.
  const first = start(91, T + 100n);
  w.activity(C.concat([C.kernelRecord(L, { start: T + 50n, end: T + 60n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 1, namePtr: 0n }), first]));
  w.activity(C.concat([start(3, T + 200n), start(4, T + 250n), start(1000, T + 300n), C.markerRecord(L, 4, T + 400n, 4, 7, 8, 0n), start(17, T + 500n)]));
  const bytes = w.bytes();
  const { trace, result } = await toChrome(bytes);
  assert.is(events(trace, "user_annotation").length, 5, "every range drawn, the open ones to the last timestamp");
  const u = result.info.warnings.find((x) => x.code === "UNCLOSED_RANGE")!;
  assert.equal([u.count, u.offset, u.detail], [4, offsetOf(bytes, first), 91]);
});

test("ROCTx: pushes never popped and pops without a push, each warned at its first record in the file", async () => {
  // Thread 9's push comes first in the file, thread 5's first in the decoder's walk (threads in order, then time).
  const push9 = marker(1, 21, 100, 9);
  const push5 = marker(1, 22, 50, 5);
  const pop9 = marker(2, 31, 10, 9);
  const pop5 = marker(2, 32, 5, 5);
  const bytes = dumpWith([[kernel(1, 0, 50), pop9, push9], [pop5, push5, kernel(2, 200, 300)]], (w) => w.strings([[21n, "a"], [22n, "b"]]));
  const { trace, result } = await toChrome(bytes);
  assert.is(events(trace, "user_annotation").length, 2);
  const u = result.info.warnings.find((x) => x.code === "UNCLOSED_RANGE")!;
  assert.equal([u.count, u.offset, u.detail], [2, offsetOf(bytes, push9), 21]);
  const m = result.info.warnings.find((x) => x.code === "UNMATCHED_RANGE_END")!;
  assert.equal([m.count, m.offset, m.detail], [2, offsetOf(bytes, pop9), 31]);
});

test.run();
