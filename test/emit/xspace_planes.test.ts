// SPDX-License-Identifier: MIT
/**
 * The two ways assembly/emit/xspace.ts xspaceEnd writes the planes: one by one (sized, then written, before the next
 * is sized: when an upper bound of the whole — each event at 512 bytes, the diagnostics and the host name at their
 * most — is under the 2 GiB message limit) and all sized first (over that bound: the exact total checked before any
 * byte). Both must give the same bytes, with every event captured or the capture buffer full (a small spill
 * threshold shrinks it, emit/xspace_capture.ts), and the bound must hold for what the dump controls (a long host
 * name). Also the device_id stat of API calls (emit/xspace_encode.ts devStats: one entry per device plane) for
 * device ids of every varint length and more devices than planes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XPlane, type XStat } from "../../src/gen/xplane_pb.js";
import { memorySource, type Engine } from "../../src/core/engine.js";
import { RawtraceError } from "../../src/core/codes.js";
import { createEngine } from "../../src/node/wasm.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import { generate } from "../../bench/generate.js";
import * as C from "../../src/tools/cupti_records.js";

const dir = mkdtempSync(join(tmpdir(), "rawtrace-planes-test-"));
const generated = join(dir, "loop.rawtrace");
generate(20000, generated);

/** XSpace of `bytes` with spill threshold `spill` under limit `limit` (0: the default): hash and size, or the error. */
async function run(engine: Engine, bytes: Uint8Array, spill: number, limit: number): Promise<{ hash: string; bytes: number; err: RawtraceError | null }> {
  engine.xspaceSpillBytes = spill;
  engine.xspaceMaxBytes = limit;
  const h = createHash("sha256");
  let n = 0;
  let err: RawtraceError | null = null;
  try {
    await engine.convert(memorySource(bytes), (b) => {
      h.update(b);
      n += b.length;
    }, { format: "xspace" });
  } catch (e) {
    if (!(e instanceof RawtraceError)) throw e;
    err = e;
  } finally {
    engine.xspaceSpillBytes = 0;
    engine.xspaceMaxBytes = 0;
  }
  return { hash: h.digest("hex"), bytes: n, err };
}

/** The size an XSPACE_TOO_LARGE message gives. */
function sizeIn(err: RawtraceError | null): number {
  assert.ok(err, "XSPACE_TOO_LARGE");
  assert.is(err!.name, "XSPACE_TOO_LARGE");
  return Number(/would be (\d+) bytes/.exec(err!.message)![1]);
}

test("the planes written one by one give the bytes of the planes all sized first (captured whole or the buffer full)", async () => {
  const engine = await createEngine();
  const inputs = [
    "samples/h100_torch_train_nvtx.rawtrace",
    "samples/alexnet_a100_rank0.rawtrace",
    "test/fixtures/real/h100/torch_graph.rawtrace",
    generated,
  ];
  for (const path of inputs) {
    const bytes = readFileSync(path);
    // 0: the default buffers (every event captured); 1024: a 1.5 KiB buffer, full within the first line.
    for (const spill of [0, 1024]) {
      const byPlane = await run(engine, bytes, spill, 0);
      assert.is(byPlane.err, null, path);
      // Under a limit of 1 the bound is over it: the planes are all sized first and the exact total is reported.
      const total = sizeIn((await run(engine, bytes, spill, 1)).err);
      assert.ok(total >= byPlane.bytes && total < byPlane.bytes + 65536, `${path}: ${total} vs ${byPlane.bytes}`);
      // At that total the bound (512 bytes an event) is still over the limit: all sized first, then written.
      const allFirst = await run(engine, bytes, spill, total);
      assert.is(allFirst.err, null, path);
      assert.is(allFirst.hash, byPlane.hash, `${path}, spill ${spill}`);
      assert.is(allFirst.bytes, byPlane.bytes, path);
    }
  }
});

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;

/** A dump of one memcpy per device in `devices` (each after its runtime API call), `dropped` records reported lost. */
function dump(devices: number[], hostname: string, dropped: number): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: 1, startNs: T, hostname, commandLine: "x" });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, v]) => [Number(k), v] as const));
  const recs: Uint8Array[] = [];
  devices.forEach((deviceId, i) => {
    const start = T + BigInt(i + 1) * 10000n;
    const correlationId = i + 1;
    recs.push(C.apiRecord(L, { kind: 5, cbid: 41, start, end: start + 2000n, processId: 1, threadId: 7, correlationId }));
    recs.push(C.memcpyRecord(L, { start: start + 3000n, end: start + 3500n, deviceId, contextId: 1, streamId: 7, correlationId, bytes: 64n, copyKind: 1, srcKind: 2, dstKind: 3, async: true }));
  });
  w.activity(C.concat(recs));
  if (dropped > 0) w.dropped(dropped, 0);
  w.end();
  return w.bytes();
}

test("a long host name is counted twice against the limit (XSpace.hostnames and the drop line): over it, nothing is written", async () => {
  const engine = await createEngine();
  const bytes = dump([0], "h".repeat(50000), 5);
  const full = await run(engine, bytes, 0, 0);
  assert.is(full.err, null);
  assert.ok(full.bytes > 100000, "the host name twice");
  // One byte under the real size: the plane-by-plane bound (the diagnostics' estimate with the host name once, before)
  // let the whole file through.
  const over = await run(engine, bytes, 0, full.bytes - 1);
  assert.is(over.bytes, 0, "nothing written");
  assert.ok(sizeIn(over.err) >= full.bytes);
  // At the size reported, the file is written as it is under the default limit.
  const at = await run(engine, bytes, 0, sizeIn(over.err));
  assert.is(at.hash, full.hash);
});

const statName = (p: XPlane, s: XStat) => p.statMetadata[String(s.metadataId)]?.name;

test("an API call's device_id is its device work's plane id: ids of 1 to 5 varint bytes, more devices than planes", async () => {
  const engine = await createEngine();
  // 0, 900 (2 bytes), 2^21 (4), 0xFFFFFFF0 (5), then 260 more devices: beyond 256 planes the rest share the last.
  const ids = [0, 900, 1 << 21, 0xfffffff0];
  for (let i = 0; i < 260; i++) ids.push(1000 + i);
  const parts: Buffer[] = [];
  await engine.convert(memorySource(dump(ids, "h", 0)), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const space = fromBinary(XSpaceSchema, Buffer.concat(parts));
  // Plane id of each correlation id's memcpy.
  const planeOf = new Map<bigint, bigint>();
  const devPlanes = space.planes.filter((p) => p.name.startsWith("/device:GPU:"));
  assert.is(devPlanes.length, 256);
  for (const p of devPlanes) {
    for (const l of p.lines) for (const e of l.events) {
      const c = e.stats.find((s) => statName(p, s) === "correlation_id");
      if (c) planeOf.set(c.value.value as bigint, p.id);
    }
  }
  assert.is(planeOf.size, ids.length);
  const host = space.planes.find((p) => p.name === "/host:CPU")!;
  let calls = 0;
  for (const l of host.lines) for (const e of l.events) {
    const c = e.stats.find((s) => statName(host, s) === "correlation_id")!;
    const d = e.stats.find((s) => statName(host, s) === "device_id");
    assert.ok(d, "device_id");
    assert.is(d!.value.case, "uint64Value");
    assert.is(d!.value.value, planeOf.get(c.value.value as bigint), `correlation ${c.value.value}`);
    calls++;
  }
  assert.is(calls, ids.length);
  for (const id of [0n, 900n, 1n << 21n, 0xfffffff0n]) assert.ok(devPlanes.some((p) => p.id === id), `plane ${id}`);
});

test("device_id through the one-plane bits and their expansion: sparse ids, shared ids, evicted pages", async () => {
  // emit/xspace_corr.ts keeps a bit per id while all device work is on one plane and turns the bits into the u16 map
  // at the second plane. Ids spread over 2^23 (16 bit pages, 128 map pages), page edges included, the first plane's
  // ids before and after the second plane appears, some ids' work on two devices (the first noted wins).
  const engine = await createEngine();
  let x = 7;
  const rnd = () => ((x = (x * 1103515245 + 12345) >>> 0) >>> 8);
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: 1, startNs: T, hostname: "h", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, v]) => [Number(k), v] as const));
  const recs: Uint8Array[] = [];
  const first = new Map<number, number>(); // correlation id → device of its first device work
  let t = 10000n;
  const work = (corr: number, deviceId: number) => {
    if (!first.has(corr)) {
      first.set(corr, deviceId);
      recs.push(C.apiRecord(L, { kind: 5, cbid: 41, start: T + t, end: T + t + 2000n, processId: 1, threadId: 7, correlationId: corr }));
    }
    recs.push(C.memcpyRecord(L, { start: T + t + 3000n, end: T + t + 3500n, deviceId, contextId: 1, streamId: 7, correlationId: corr, bytes: 64n, copyKind: 1, srcKind: 2, dstKind: 3, async: true }));
    t += 10000n;
  };
  const edges = [1, 7, 8, 65535, 65536, 524287, 524288, 8388607];
  for (const id of edges) work(id, 0);
  for (let i = 0; i < 1500; i++) work(1 + (rnd() % 8388607), 0); // one plane: bits
  const seen = [...first.keys()];
  for (let i = 0; i < 200; i++) work(seen[rnd() % seen.length], 1); // already on plane 0: stays there
  for (let i = 0; i < 1500; i++) work(1 + (rnd() % 8388607), rnd() % 3);
  w.activity(C.concat(recs));
  w.end();
  const bytes = w.bytes();
  let base = "";
  for (const budget of [0, 1]) {
    engine.pagedBudgetBytes = budget;
    const parts: Buffer[] = [];
    try {
      await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
    } finally {
      engine.pagedBudgetBytes = 0;
    }
    const out = Buffer.concat(parts);
    const space = fromBinary(XSpaceSchema, out);
    const host = space.planes.find((p) => p.name === "/host:CPU")!;
    let calls = 0;
    for (const l of host.lines) for (const e of l.events) {
      const c = Number(e.stats.find((s) => statName(host, s) === "correlation_id")!.value.value);
      const d = e.stats.find((s) => statName(host, s) === "device_id");
      assert.is(d?.value.value, BigInt(first.get(c)!), `budget ${budget}: correlation ${c}`);
      calls++;
    }
    assert.is(calls, first.size);
    const hash = createHash("sha256").update(out).digest("hex");
    if (budget === 0) base = hash;
    else assert.is(hash, base, "evicted pages: the same bytes");
  }
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
