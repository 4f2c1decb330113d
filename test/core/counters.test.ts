/**
 * Counters never wrap and joins never guess (assembly/model/session.ts, assembly/emit/stats.ts): dropped-record
 * totals saturate at 2^64 − 1 and say "≥" (never 0, never negative); whole buffers lost are counted apart from records; `rawtrace info` prints u64 totals exactly; GPU
 * busy time is a union of intervals inside the trace span (≤ 100 %), also with events that have no start time; a
 * correlation id used by API calls of two processes draws no launch→kernel arrow and is reported.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { RawtraceWriter } from "../../src/format/writer.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import * as C from "../../src/tools/cupti_records.js";
import { computeStats } from "../../src/core/stats.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { info, toChrome } from "../helpers/convert.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;
const tmp = mkdtempSync(join(tmpdir(), "rawtrace-counters-"));

/** A dump: header, clock, kind sizes, API names, one kernel name, one device, then `activity` and `more`. */
function dump(activity: Uint8Array[], more: (w: RawtraceWriter) => void = () => {}): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 13000, driverVersion: 13000, pid: 100,
    startNs: T, hostname: "h", commandLine: "app",
  });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
  w.strings([[0x1000n, "k"]]);
  w.devices([{
    id: 0, multiprocessors: 1, globalMemoryBytes: 1n << 30n, memoryBandwidth: 1n, coreClockKhz: 1, ccMajor: 9,
    ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 1, regsPerMultiprocessor: 1,
    warpSize: 32, sharedMemPerBlock: 1, sharedMemPerMultiprocessor: 1, sharedMemPerBlockOptin: 1,
    maxBlocksPerMultiprocessor: 1, name: "GPU",
  }]);
  if (activity.length) w.activity(C.concat(activity));
  more(w);
  w.end();
  return w.bytes();
}

const launch = (corr: number, pid: number, at: bigint) =>
  C.apiRecord(L, { kind: 5, cbid: 211, start: T + at, end: T + at + 100n, processId: pid, threadId: pid, correlationId: corr });
const kernel = (corr: number, s: bigint, e: bigint, stream = 7) =>
  C.kernelRecord(L, { start: s, end: e, deviceId: 0, contextId: 1, streamId: stream, correlationId: corr, namePtr: 0x1000n });

test("dropped totals 2^63 + 2^63 saturate: ≥ 2^64 − 1, never 0 or negative (info, warning, Chrome JSON, CLI)", async () => {
  const bytes = dump([launch(1, 100, 0n)], (w) => {
    w.dropped(1n << 63n, 1);
    w.dropped(1n << 63n, 1);
  });
  const i = await info(bytes);
  assert.ok(i.droppedRecords > 0);
  assert.is(i.droppedRecordsText, "≥ 18446744073709551615");
  const w = i.warnings.find((x) => x.code === "DROPPED_RECORDS")!;
  assert.ok(w);
  assert.match(w.message, "lost ≥ 18446744073709551615 records");
  const { text } = await toChrome(bytes);
  assert.match(text, '"dropped_records":18446744073709551615,"dropped_records_saturated":true');
  const p = join(tmp, "sat.rawtrace");
  writeFileSync(p, bytes);
  const r = spawnSync(process.execPath, [join(ROOT, "dist/node/cli.js"), "info", p], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /dropped +≥ 18446744073709551615 records/);
  assert.not.match(r.stdout, /-\d{6,}/, "no negative number");
});

test("a dropped total above 2^63 that did not overflow is printed exactly, not negative", async () => {
  const bytes = dump([launch(1, 100, 0n)], (w) => {
    w.dropped(1n << 63n, 1);
    w.dropped(5, 1);
  });
  const i = await info(bytes);
  assert.is(i.droppedRecordsText, "9223372036854775813");
  assert.ok(i.droppedRecords > 9e18);
  const w = i.warnings.find((x) => x.code === "DROPPED_RECORDS")!;
  assert.match(w.message, "lost 9223372036854775813 records");
  assert.ok(w.detail > 0);
  const { text } = await toChrome(bytes);
  assert.match(text, '"dropped_records":9223372036854775813,');
  assert.not.match(text, "dropped_records_saturated");
});

test("DROPPED chunks that count whole buffers (CUDA's memory cap, a write error, an exit flush out of time) are not added to the lost records", async () => {
  // Reasons 2 (the CUDA collector: buffers), 3 and 4 count buffers; 1 and an unknown reason count records.
  const bytes = dump([launch(1, 100, 0n)], (w) => {
    w.dropped(10, 1);
    w.dropped(3, 2);
    w.dropped(1, 3);
    w.dropped(2, 4);
    w.dropped(7, 9);
  });
  const i = await info(bytes);
  assert.is(i.droppedRecords, 17);
  assert.is(i.droppedBuffers, 6);
  assert.equal(i.warnings.filter((x) => /^DROPPED_/.test(x.code)).map((x) => [x.code, x.detail]),
    [["DROPPED_RECORDS", 17], ["DROPPED_BUFFERS", 6]]);
  const { text } = await toChrome(bytes);
  assert.match(text, '"dropped_records":17,"dropped_buffers":6,');
  // XSpace: XLA's line counts the records; the buffers are an error line of their own (a loss).
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const space = fromBinary(XSpaceSchema, Buffer.concat(parts));
  assert.ok(space.warnings.some((w) => /17 events dropped because the collector reported lost records/.test(w)), space.warnings.join("\n"));
  assert.ok(space.errors.some((e) => /^rawtrace DROPPED_BUFFERS: 1 occurrence .*detail 6\)$/.test(e)), space.errors.join("\n"));
  const p = join(tmp, "buffers.rawtrace");
  writeFileSync(p, bytes);
  const r = spawnSync(process.execPath, [join(ROOT, "dist/node/cli.js"), "info", p], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /dropped +17 records, and 6 whole buffers of records/);
  const strict = spawnSync(process.execPath, [join(ROOT, "dist/node/cli.js"), "convert", "--strict", p, "-o", join(tmp, "b.json")], { encoding: "utf8" });
  assert.is(strict.status, 6, "a loss under --strict");
  assert.match(strict.stderr, /the collector dropped 17 records; the collector lost 6 whole buffers of records/);
  // rocprofiler-sdk's memory cap counts the records it refused (docs/format.md §8): reason 2 from vendor 2 is records.
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 2, vendorVersion: 10000, runtimeVersion: 0, driverVersion: 0, pid: 1, startNs: T, hostname: "h", commandLine: "app" });
  w.dropped(3, 2);
  w.end();
  const ri = await info(w.bytes());
  assert.is(ri.droppedRecords, 3);
  assert.is(ri.droppedBuffers, 0);
  // Dumps without such chunks keep their Chrome JSON as it was: no dropped_buffers key.
  assert.not.match((await toChrome(dump([launch(1, 100, 0n)], (x) => x.dropped(4, 1)))).text, "dropped_buffers");
});

test("GPU busy: overlapping streams count once, an event without start time does not count; busy ≤ 100 %", async () => {
  const bytes = dump([
    launch(1, 100, 0n), launch(2, 100, 200n), launch(3, 100, 400n),
    kernel(1, T + 1000n, T + 3000n, 7),
    kernel(2, T + 2000n, T + 4000n, 8), // overlaps the first on another stream
    kernel(3, 0n, T + 5000n, 9), // no start time (vendor 0): before, [0, end) made busy ≫ span
  ]);
  const engine = await createEngine();
  const { stats } = await computeStats(engine, memorySource(bytes));
  const d = stats.devices.find((x) => x.id === 0)!;
  assert.ok(d, `${stats.devices.length} devices`);
  assert.is(d.busyNs, 3000, "the union of [1000, 3000) and [2000, 4000)");
  assert.ok(d.busyPercent <= 100, `${d.busyPercent}`);
  assert.ok(d.busyPercent > 0);
});

test("a correlation id used by two processes: no launch→kernel arrow for it, CORRELATION_PROCESSES reported", async () => {
  const bytes = dump([
    launch(5, 100, 0n), launch(5, 200, 50n), // two processes, one id
    launch(6, 100, 300n),
    kernel(5, T + 1000n, T + 2000n), kernel(6, T + 3000n, T + 4000n),
  ]);
  const { trace } = await toChrome(bytes);
  const flows = trace.traceEvents.filter((e) => e.cat === "ac2g");
  assert.equal(flows.map((f) => `${f.ph}${f.id}`).sort(), ["f6", "s6"], "only the unambiguous id keeps its arrow");
  const w = trace.rawtrace.warnings.find((x: any) => x.code === "CORRELATION_PROCESSES");
  assert.ok(w, JSON.stringify(trace.rawtrace.warnings));
  assert.is(w.detail, 5);
  assert.is(w.count, 1);
  // Both launches and the kernel are still there, with their correlation ids.
  assert.is(trace.traceEvents.filter((e) => e.cat === "cuda_runtime" && e.args?.correlation === 5).length, 2);
  assert.is(trace.traceEvents.filter((e) => e.cat === "kernel" && e.args?.correlation === 5).length, 1);
  // One process per id: arrows as before, no warning.
  const one = await toChrome(dump([launch(5, 100, 0n), kernel(5, T + 1000n, T + 2000n)]));
  assert.is(one.trace.traceEvents.filter((e) => e.cat === "ac2g").length, 2);
  assert.not.ok(one.trace.rawtrace.warnings.some((x: any) => x.code === "CORRELATION_PROCESSES"));
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
