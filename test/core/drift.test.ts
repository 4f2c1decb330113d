/**
 * Corruption and version drift with a defined outcome each (issue: hostile input): a counted warning surfaced in
 * the outputs, and output that is still valid — never a crash or silently wrong events.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { toChrome, events } from "../helpers/convert.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;

function dump(vendorVersion: number, body: (w: RawtraceWriter) => void): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion, pid: 7, startNs: T, hostname: "h", commandLine: "app" });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
  w.strings([[0x10n, "k"]]);
  body(w);
  w.end();
  return w.bytes();
}
const kern = (corr: number, start: bigint, end: bigint, name = 0x10n) =>
  C.kernelRecord(L, { start, end, deviceId: 0, contextId: 1, streamId: 7, correlationId: corr, namePtr: name });
const launch = (corr: number, start: bigint) =>
  C.apiRecord(L, { kind: 5, cbid: 211, start, end: start + 100n, processId: 7, threadId: 8, correlationId: corr });

async function both(bytes: Uint8Array) {
  const chrome = await toChrome(bytes);
  const eng = await createEngine();
  const parts: Buffer[] = [];
  await eng.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const xspace = fromBinary(XSpaceSchema, Buffer.concat(parts));
  return { chrome, xspace };
}
const codes = (t: any) => t.rawtrace.warnings.map((w: any) => w.code);

test("an unknown (newer) CUPTI version: known fields read, UNKNOWN_VENDOR_VERSION reported", async () => {
  const { chrome, xspace } = await both(dump(150002, (w) => w.activity(C.concat([launch(1, T), kern(1, T + 500n, T + 900n)]))));
  assert.ok(codes(chrome.trace).includes("UNKNOWN_VENDOR_VERSION"));
  assert.is(events(chrome.trace, "kernel").length, 1);
  assert.ok(xspace.warnings.some((w) => w.includes("UNKNOWN_VENDOR_VERSION") || w.includes("150002")), "XSpace warning");
});

test("a name pointer missing from the string table: '<unknown kernel>' and MISSING_STRING", async () => {
  const { chrome } = await both(dump(130001, (w) => w.activity(C.concat([kern(1, T, T + 10n, 0x999n)]))));
  assert.equal(events(chrome.trace, "kernel").map((e) => e.name), ["<unknown kernel>"]);
  const w = chrome.trace.rawtrace.warnings.find((x: any) => x.code === "MISSING_STRING");
  assert.is(w.detail, 0x999);
});

test("zero and negative durations: zero kept, negative dropped with NEGATIVE_DURATION (docs/errors.md, timestamps)", async () => {
  const { chrome, xspace } = await both(dump(130001, (w) => w.activity(C.concat([kern(1, T, T), kern(2, T + 100n, T + 50n)]))));
  const k = events(chrome.trace, "kernel");
  assert.equal(k.map((e) => [e.args.correlation, e.dur]), [[1, 0]]);
  assert.equal(codes(chrome.trace), ["NEGATIVE_DURATION"]);
  const dev = xspace.planes.find((p) => p.name === "/device:GPU:0")!;
  const evs = dev.lines.flatMap((l) => l.events);
  assert.is(evs.length, 1);
  assert.ok(evs.every((e) => e.durationPs === 0n));
  assert.ok(xspace.errors.some((e) => e.includes("NEGATIVE_DURATION")), "a loss: an XSpace error");
});

test("duplicate correlation ids: the first external id is kept, DUPLICATE_CORRELATION reported", async () => {
  const { chrome } = await both(dump(130001, (w) => w.activity(C.concat([
    C.externalRecord(L, 3, 100n, 1), C.externalRecord(L, 3, 200n, 1), launch(1, T), kern(1, T + 500n, T + 600n),
  ]))));
  assert.is(events(chrome.trace, "kernel")[0].args["External id"], 100);
  assert.is(events(chrome.trace, "cuda_runtime")[0].args["External id"], 100);
  assert.ok(codes(chrome.trace).includes("DUPLICATE_CORRELATION"));
});

test("external ids of 2^32 - 1 and more (kept in the table, not the 4-byte array): a correlation's first mapping wins either way", async () => {
  const W = 1n << 40n;
  const recs = [
    C.externalRecord(L, 3, 100n, 1), C.externalRecord(L, 3, W, 1), // narrow, then wide: 100 kept
    C.externalRecord(L, 3, W, 2), C.externalRecord(L, 3, 100n, 2), // wide, then narrow: 2^40 kept
    C.externalRecord(L, 3, W, 3), C.externalRecord(L, 3, W, 3), // the same twice: no conflict
    C.externalRecord(L, 3, 4294967294n, 4), C.externalRecord(L, 3, 4294967295n, 4), // the widest narrow, then 2^32 - 1
    C.externalRecord(L, 1, 7n, 5), C.externalRecord(L, 3, 7n, 5), // UNKNOWN and CUSTOM0 both mark framework ops
    C.externalRecord(L, 1, W + 1n, 6), C.externalRecord(L, 3, 5n, 6), // a wide UNKNOWN, then a narrow CUSTOM0
    C.externalRecord(L, 3, 4294967295n, 7), // alone: 2^32 - 1 itself
    C.externalRecord(L, 1, W + 5n, 8), C.externalRecord(L, 3, W + 6n, 8), // two wide ids of the two kinds: the first kept
    C.externalRecord(L, 11, 60n, 9), C.externalRecord(L, 1, 50n, 9), // a kind of 8 or more is no framework op
    C.externalRecord(L, 3, 2n ** 64n - 1n, 10), C.externalRecord(L, 3, 9n, 10), // 2^64 - 1 first: kept (before: 9)
  ];
  for (let c = 1; c <= 10; c++) recs.push(launch(c, T + BigInt(c) * 1000n));
  const { chrome } = await both(dump(130001, (w) => w.activity(C.concat(recs))));
  const ext = new Map(events(chrome.trace, "cuda_runtime").map((e) => [e.args.correlation, e.args["External id"]]));
  assert.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((c) => ext.get(c)), [
    100, Number(W), Number(W), 4294967294, 7, Number(W + 1n), 4294967295, Number(W + 5n), 50, Number(2n ** 64n - 1n),
  ]);
  const dup = chrome.trace.rawtrace.warnings.find((w: any) => w.code === "DUPLICATE_CORRELATION");
  assert.is(dup?.count, 6, "correlations 1, 2, 4, 6, 8 and 10");
});

test("external ids past the array's page cap go to the table under one framework-op key: the first still kept", async () => {
  // One framework-op id on each of 8,192 pages of 16 Ki correlation ids fills the array's page cap; a correlation
  // past it gets UNKNOWN 111 then CUSTOM0 222.
  const recs: Uint8Array[] = [];
  for (let k = 1; k <= 8192; k++) recs.push(C.externalRecord(L, 3, BigInt(k), k * 16384));
  const X = 9000 * 16384;
  recs.push(C.externalRecord(L, 1, 111n, X), C.externalRecord(L, 3, 222n, X), launch(X, T), launch(16384, T + 1000n));
  const { chrome } = await both(dump(130001, (w) => w.activity(C.concat(recs))));
  const ext = new Map(events(chrome.trace, "cuda_runtime").map((e) => [e.args.correlation, e.args["External id"]]));
  assert.is(ext.get(X), 111);
  assert.is(ext.get(16384), 1);
  assert.is(chrome.trace.rawtrace.warnings.find((w: any) => w.code === "DUPLICATE_CORRELATION")?.count, 1);
});

test("buffers delivered out of time order: every join still exact, the count reported (not a warning)", async () => {
  const later = C.concat([launch(2, T + 10_000n), kern(2, T + 10_500n, T + 11_000n)]);
  const earlier = C.concat([C.externalRecord(L, 3, 42n, 1), launch(1, T), kern(1, T + 500n, T + 900n)]);
  const inOrder = await toChrome(dump(130001, (w) => { w.activity(earlier); w.activity(later); }));
  const swapped = await toChrome(dump(130001, (w) => { w.activity(later); w.activity(earlier); }));
  assert.is(inOrder.trace.rawtrace.out_of_order_buffers, 0);
  assert.is(swapped.trace.rawtrace.out_of_order_buffers, 1);
  assert.is(swapped.result.info.outOfOrderBuffers, 1);
  assert.equal(codes(swapped.trace), codes(inOrder.trace));
  const key = (t: any) => t.traceEvents.filter((e: any) => e.ph !== "M").map((e: any) => JSON.stringify(e)).sort();
  assert.equal(key(swapped.trace), key(inOrder.trace), "same events, same flows, same external ids");
});

test.run();
