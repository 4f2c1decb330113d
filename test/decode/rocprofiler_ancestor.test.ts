/**
 * rocprofiler-sdk 1.0 `correlation_id.ancestor` (docs/collectors/rocm.md): device work whose correlation id is a
 * call not drawn as a HIP call — an HSA call (recorded with HSA_CORE_API / HSA_AMD_EXT_API) or a hidden HIP call —
 * belongs to the nearest drawn HIP call up its ancestor chain, as Kineto's ROCm build shows it (it traces HIP calls
 * only): the kernel's or copy's `correlation`, the `ac2g` flow, the XSpace correlation_id and the GPU projection of
 * the ROCTx range around the call are the HIP call's. A visible HIP call nested in another keeps its own work; a
 * chain that reaches no HIP call, a cycle and SDK 0.5 (no ancestor field) leave the record's own id.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { toChrome, events } from "../helpers/convert.js";
import { K, GPU, BOOT, apiRecord, dumpWith, kernel, marker } from "../helpers/rocm_records.js";
import { RocpDomain } from "../../src/format/container.js";
import { framed, record } from "../../src/tools/kineto_to_rocprof.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";

/** An API record (64 B, 1.0) with an ancestor id. */
function call(kind: string, op: number, corr: number, ancestor: number, start: number, end: number, tid = 5): Uint8Array {
  const r = apiRecord(kind, op, corr, start, end, tid);
  new DataView(r.buffer, r.byteOffset).setBigUint64(16 + 32, BigInt(ancestor), true);
  return r;
}

/** A MEMORY_COPY record (1.0, 96 B) host → GPU with correlation id `corr`. */
function copy(corr: number, start: number, end: number): Uint8Array {
  const { b, dv } = record(96, K("MEMORY_COPY"), 2);
  dv.setBigUint64(16, BigInt(corr), true);
  dv.setBigUint64(40, BOOT + BigInt(start), true);
  dv.setBigUint64(48, BOOT + BigInt(end), true);
  dv.setBigUint64(56, GPU, true);
  dv.setBigUint64(64, 0x1000n, true);
  dv.setBigUint64(72, 4096n, true);
  return framed(K("MEMORY_COPY"), b);
}

const names = (w: { apiNames(n: Array<[number, number, string]>): unknown; strings(s: Array<[bigint, string]>): unknown }) => {
  w.apiNames([
    [RocpDomain.OPS | K("HIP_RUNTIME_API"), 30, "hipMemcpy"], [RocpDomain.OPS | K("HIP_RUNTIME_API"), 31, "hipMemcpyToSymbol"],
    [RocpDomain.OPS | K("HIP_RUNTIME_API"), 9, "hipGetDevice"],
    [RocpDomain.OPS | K("HSA_AMD_EXT_API"), 8, "hsa_amd_memory_async_copy"],
  ]);
  w.strings([[100n, "step"]]);
};

/**
 * hipMemcpy (1) → hsa_amd_memory_async_copy (2, ancestor 1) → the copy (2); hipMemcpyToSymbol (3) → hipMemcpy (4,
 * ancestor 3) → its copy (4); hipLaunchKernel (5) → a hidden hipGetDevice (6, ancestor 5) → a kernel (6); an HSA
 * call (7) with no HIP ancestor and its kernel (7); a crafted cycle 8 ↔ 9 with a kernel (8). A ROCTx range around
 * the first call. Records of a batch arrive device work first.
 */
function dump(): Uint8Array {
  return dumpWith([[
    copy(2, 1500, 1800), copy(4, 5500, 5900), kernel(6, 8000, 8100), kernel(7, 9500, 9600), kernel(8, 11000, 11100),
  ], [
    marker(1, 100, 50), marker(2, 101, 2000),
    call("HIP_RUNTIME_API", 30, 1, 0, 100, 1900),
    call("HSA_AMD_EXT_API", 8, 2, 1, 200, 300),
    call("HIP_RUNTIME_API", 31, 3, 0, 4000, 6000),
    call("HIP_RUNTIME_API", 30, 4, 3, 4100, 5950),
    call("HIP_RUNTIME_API", 3, 5, 0, 7000, 7500),
    call("HIP_RUNTIME_API", 9, 6, 5, 7100, 7200),
    call("HSA_AMD_EXT_API", 8, 7, 0, 9000, 9100),
    call("HSA_AMD_EXT_API", 8, 8, 9, 10000, 10100),
    call("HSA_AMD_EXT_API", 8, 9, 8, 10200, 10300),
  ]], names);
}

test("Chrome JSON: device work of an HSA or hidden call is linked to its HIP ancestor (correlation and flow)", async () => {
  const { trace, result } = await toChrome(dump());
  assert.is(result.info.warnings.length, 0, JSON.stringify(result.info.warnings));
  const dev = [...events(trace, "gpu_memcpy"), ...events(trace, "kernel")].sort((a, b) => a.ts - b.ts);
  assert.equal(dev.map((e) => e.args.correlation), [1, 4, 5, 7, 8]);
  const starts = trace.traceEvents.filter((e) => e.ph === "s" && e.cat === "ac2g");
  const ends = trace.traceEvents.filter((e) => e.ph === "f" && e.cat === "ac2g");
  assert.equal(starts.map((e) => e.id).sort((a, b) => a - b), [1, 4, 5, 7, 8], "flows start at the launch calls only");
  assert.equal(ends.map((e) => e.id).sort((a, b) => a - b), [1, 4, 5, 7, 8]);
  // Each flow starts at its call: the HIP call for the HSA-issued copy, not the HSA call.
  const byCorr = new Map(trace.traceEvents.filter((e) => e.ph === "X" && (e.cat === "cuda_runtime" || e.cat === "cuda_driver"))
    .map((e) => [e.args.correlation, e]));
  for (const s of starts) assert.is(s.ts, byCorr.get(s.id)!.ts, `flow ${s.id} starts at its call`);
  assert.is(byCorr.get(1)!.name, "hipMemcpy");
  assert.is(byCorr.get(2)!.cat, "cuda_driver");
  // The HSA call stays nested in the HIP call on the same thread (the viewers' parent relation).
  const [outer, inner] = [byCorr.get(1)!, byCorr.get(2)!];
  assert.is(inner.tid, outer.tid);
  assert.ok(inner.ts >= outer.ts && inner.ts + inner.dur <= outer.ts + outer.dur);
  // A visible HIP call nested in another keeps its work: hipMemcpy (4) inside hipMemcpyToSymbol (3).
  assert.is(byCorr.get(4)!.name, "hipMemcpy");
  assert.is(byCorr.get(3)!.name, "hipMemcpyToSymbol");
  assert.not.ok(byCorr.has(6), "hipGetDevice stays hidden");
});

test("the ROCTx range around a HIP call is projected onto the stream of the work its HSA call issued", async () => {
  const { trace } = await toChrome(dump());
  const g = events(trace, "gpu_user_annotation");
  assert.equal(g.map((e) => e.name), ["step"]);
  const cp = events(trace, "gpu_memcpy")[0];
  assert.ok(Math.abs(g[0].ts - (cp.ts - 0.001)) < 1e-6 && Math.abs(g[0].dur - (cp.dur + 0.002)) < 1e-6, JSON.stringify([g[0], cp]));
});

test("XSpace: the device events carry the HIP call's correlation_id", async () => {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(dump()), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const space = fromBinary(XSpaceSchema, Buffer.concat(parts));
  const corrOf = (p: (typeof space.planes)[number], e: (typeof space.planes)[number]["lines"][number]["events"][number]) => {
    const s = e.stats.find((x) => p.statMetadata[String(x.metadataId)]?.name === "correlation_id");
    return s ? Number(s.value.value) : undefined;
  };
  const gpu = space.planes.find((p) => p.name === "/device:GPU:0")!;
  const dev = gpu.lines.flatMap((l) => l.events.map((e) => corrOf(gpu, e))).filter((c) => c !== undefined).sort((a, b) => a! - b!);
  assert.equal(dev, [1, 4, 5, 7, 8]);
  const host = space.planes.find((p) => p.name === "/host:CPU")!;
  const hostCorr = new Map(host.lines.flatMap((l) => l.events.map((e) => [corrOf(host, e), host.eventMetadata[String(e.metadataId)]?.name])));
  assert.is(hostCorr.get(1), "hipMemcpy", "the copy's correlation_id is the hipMemcpy event's");
  assert.is(hostCorr.get(5), "hipLaunchKernel");
});

test("SDK 0.5 has no ancestor: an HSA-issued copy stays linked to the HSA call", async () => {
  // The same records in the 0.5 layout (56-byte API records: no ancestor field).
  const api05 = (kind: string, op: number, corr: number, start: number, end: number) => {
    const { b, dv } = record(56, K(kind), op);
    dv.setBigUint64(16, BigInt(corr), true);
    dv.setBigUint64(32, BOOT + BigInt(start), true);
    dv.setBigUint64(40, BOOT + BigInt(end), true);
    dv.setBigUint64(48, 5n, true);
    return framed(K(kind), b);
  };
  const copy05 = (corr: number, start: number, end: number) => {
    const { b, dv } = record(80, K("MEMORY_COPY"), 2);
    dv.setBigUint64(16, BigInt(corr), true);
    dv.setBigUint64(40, BOOT + BigInt(start), true);
    dv.setBigUint64(48, BOOT + BigInt(end), true);
    dv.setBigUint64(56, GPU, true);
    dv.setBigUint64(64, 0x1000n, true);
    return framed(K("MEMORY_COPY"), b);
  };
  const bytes = dumpWith([[copy05(2, 1500, 1800), api05("HIP_RUNTIME_API", 30, 1, 100, 1900), api05("HSA_AMD_EXT_API", 8, 2, 200, 300)]], names, 500);
  const { trace } = await toChrome(bytes);
  assert.equal(events(trace, "gpu_memcpy").map((e) => e.args.correlation), [2]);
  assert.equal(trace.traceEvents.filter((e) => e.ph === "s").map((e) => e.id), [2]);
});

test.run();
