/**
 * The rocprofiler-sdk decoder (assembly/decode/rocprofiler.ts) on dumps of the ROCm collector running under the SDK
 * test double (test/helpers/rocm_fake.ts), in both ABI generations: SDK 0.5 (16-byte correlation ids, 56-byte API
 * records, push/pop ROCTx ranges) and SDK 1.0 (24-byte ids, 64-byte API records, MARKER_CORE_RANGE_API records).
 * The fake numbers kinds and HIP operations differently in each release, so only decoding by name passes.
 *
 * What the output must show is derived here from the records the fake printed as delivered (their own bytes, read
 * with the offsets of collectors/rocm/rocprofiler_abi.h), not from the decoder: every kernel (name from its kernel
 * symbol, demangled; GPU from the agent; stream from the queue; grid in work-groups; LDS; VGPR + AGPR), every copy
 * (direction, peer GPUs, bytes), every HIP and RCCL call by name, the ac2g flow pairs, the External ids, the ROCTx
 * ranges and their GPU projection, AMD deviceProperties, and an XSpace with one plane per GPU.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fakeRocmDump, fakeRocmDumpKilled, type FakeRun } from "../helpers/rocm_fake.js";
import { toChrome, info, events, type ChromeTrace } from "../helpers/convert.js";
import { Engine, memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { chunkSpans } from "../helpers/dump_chunks.js";
import { ChunkType } from "../../src/format/container.js";

const STEPS = 12;
const SDKS = ["0.5", "1.0"] as const;
type Sdk = (typeof SDKS)[number];

/** Kind values of each release (the fake's tables, from the real fwd.h enums). */
const KIND: Record<Sdk, Record<string, number>> = {
  "0.5": { HIP_RUNTIME_API: 5, MARKER_CORE_API: 7, MEMORY_COPY: 10, KERNEL_DISPATCH: 11, RCCL_API: 15 },
  "1.0": { HIP_RUNTIME_API: 5, MARKER_CORE_API: 7, MEMORY_COPY: 10, KERNEL_DISPATCH: 11, RCCL_API: 14,
    MARKER_CORE_RANGE_API: 32 },
};
const HIP = ["hipGetDevice", "hipMalloc", "hipMemcpyAsync", "hipLaunchKernel", "hipDeviceSynchronize", "hipFree"];
const hipName = (sdk: Sdk, op: number) => HIP[sdk === "1.0" ? (op - 100) / 2 : (op - 40) / 3];
const KERNELS = ["vector_add(float*, float const*, float const*, int)",
  "void gemm<128>(float const*, float const*, float*, int, int, int)",
  "void rocprim::detail::scan_kernel<false>(float*, int)"];
/** VGPR + AGPR of kernel id k (the fake's symbols: 32 + 16i arch, 4i accumulation). */
const regs = (k: number) => 32 + 16 * (k - 1) + 4 * (k - 1);
/** Agent handle → GPU index (the fake: CPU 0x5000, GPUs 0x5100 and 0x5200). */
const gpu = (h: bigint) => Number(h - 0x5100n) / 0x100;

const ns = (e: Record<string, any>, base: bigint) => base + BigInt(Math.round(Number(e.ts) * 1000));
const durNs = (e: Record<string, any>) => Math.round(Number(e.dur) * 1000);

let engine: Engine | null = null;
const runs = new Map<Sdk, { run: FakeRun; trace: ChromeTrace }>();
async function get(sdk: Sdk): Promise<{ run: FakeRun; trace: ChromeTrace }> {
  let r = runs.get(sdk);
  if (!r) {
    const run = fakeRocmDump(sdk, STEPS);
    r = { run, trace: (await toChrome(run.dump, {}, `fake-${sdk}.rawtrace`)).trace };
    runs.set(sdk, r);
  }
  return r;
}

for (const sdk of SDKS) {
  const apiOff = sdk === "1.0" ? 40 : 32; // start; end at +8, thread id at +16
  test(`SDK ${sdk}: every kernel with its symbol name, GPU, stream, launch shape, LDS, registers, External id, flow`, async () => {
    const { run, trace } = await get(sdk);
    const base = BigInt(trace.baseTimeNanoseconds);
    const recs = run.records.filter((r) => r.kind === KIND[sdk].KERNEL_DISPATCH).map((r) => r.bytes);
    assert.is(recs.length, STEPS);
    const apis = new Map<bigint, Buffer>();
    for (const r of run.records.filter((x) => x.kind === KIND[sdk].HIP_RUNTIME_API)) apis.set(r.bytes.readBigUInt64LE(16), r.bytes);
    const kernels = events(trace, "kernel");
    assert.is(kernels.length, STEPS);
    const queues: bigint[] = [];
    for (const b of recs) {
      const q = b.readBigUInt64LE(72);
      if (!queues.includes(q)) queues.push(q);
    }
    for (const b of recs) {
      const corr = b.readBigUInt64LE(16);
      const k = kernels.find((e) => BigInt(e.args.correlation) === corr);
      assert.ok(k, `kernel of correlation ${corr}`);
      const kid = Number(b.readBigUInt64LE(80));
      assert.is(k!.name, KERNELS[kid - 1]);
      assert.is(k!.args["External id"], Number(b.readBigUInt64LE(24)));
      assert.is(k!.args.device, gpu(b.readBigUInt64LE(64)));
      assert.is(k!.pid, gpu(b.readBigUInt64LE(64)));
      assert.is(k!.args.stream, queues.indexOf(b.readBigUInt64LE(72)));
      const wg = [b.readUInt32LE(104), b.readUInt32LE(108), b.readUInt32LE(112)];
      assert.equal(k!.args.block, wg);
      assert.equal(k!.args.grid, [0, 1, 2].map((i) => Math.ceil(b.readUInt32LE(116 + 4 * i) / wg[i])));
      assert.is(k!.args["shared memory"], b.readUInt32LE(100));
      assert.is(k!.args["registers per thread"], regs(kid));
      assert.ok(Math.abs(durNs(k!) - Number(b.readBigUInt64LE(48) - b.readBigUInt64LE(40))) === 0, "kernel duration");
      // Launch → kernel distance as in the records (one clock mapping for both).
      const api = apis.get(corr)!;
      const h = events(trace, "cuda_runtime").find((e) => BigInt(e.args.correlation) === corr)!;
      assert.is(h.name, "hipLaunchKernel");
      const d = Number(ns(k!, base) - ns(h, base));
      assert.ok(Math.abs(d - Number(b.readBigUInt64LE(40) - api.readBigUInt64LE(apiOff))) === 0, `launch→kernel ${d}`);
      const f = trace.traceEvents.filter((e) => e.ph === "f" && e.cat === "ac2g" && BigInt(e.id) === corr);
      const s = trace.traceEvents.filter((e) => e.ph === "s" && e.cat === "ac2g" && BigInt(e.id) === corr);
      assert.is(f.length, 1);
      assert.is(s.length, 1);
      assert.is(f[0].pid, k!.pid);
      assert.is(s[0].tid, h.tid);
    }
  });

  test(`SDK ${sdk}: every copy with its direction, GPUs (peer copies), bytes and flow`, async () => {
    const { run, trace } = await get(sdk);
    const recs = run.records.filter((r) => r.kind === KIND[sdk].MEMORY_COPY).map((r) => r.bytes);
    assert.is(recs.length, STEPS);
    const copies = events(trace, "gpu_memcpy");
    assert.is(copies.length, STEPS);
    for (const b of recs) {
      const corr = b.readBigUInt64LE(16);
      const c = copies.find((e) => BigInt(e.args.correlation) === corr)!;
      assert.ok(c, `copy ${corr}`);
      const dst = b.readBigUInt64LE(56), src = b.readBigUInt64LE(64);
      assert.is(c.args.bytes, Number(b.readBigUInt64LE(72)));
      if (src === 0x5000n) {
        assert.is(c.name, "Memcpy HtoD (Host -> Device)");
        assert.is(c.args.device, gpu(dst));
      } else {
        assert.is(c.name, "Memcpy PtoP (Device -> Device)");
        assert.is(c.args.fromDevice, gpu(src));
        assert.is(c.args.toDevice, gpu(dst));
      }
      assert.ok(Math.abs(durNs(c) - Number(b.readBigUInt64LE(48) - b.readBigUInt64LE(40))) === 0);
      assert.is(trace.traceEvents.filter((e) => e.cat === "ac2g" && BigInt(e.id) === corr).length, 2);
      const h = events(trace, "cuda_runtime").find((e) => BigInt(e.args.correlation) === corr)!;
      assert.is(h.name, "hipMemcpyAsync");
    }
  });

  test(`SDK ${sdk}: every HIP and RCCL call by its operation name, on its thread, with its External id`, async () => {
    const { run, trace } = await get(sdk);
    const calls = events(trace, "cuda_runtime");
    const hip = run.records.filter((r) => r.kind === KIND[sdk].HIP_RUNTIME_API).map((r) => r.bytes);
    const rccl = run.records.filter((r) => r.kind === KIND[sdk].RCCL_API).map((r) => r.bytes);
    assert.is(calls.length, hip.length + rccl.length);
    for (const b of [...hip, ...rccl]) {
      const corr = b.readBigUInt64LE(16);
      const c = calls.find((e) => BigInt(e.args.correlation) === corr)!;
      assert.ok(c, `call ${corr}`);
      const op = b.readInt32LE(12);
      assert.is(c.name, b.readUInt32LE(8) === KIND[sdk].RCCL_API ? "ncclAllReduce" : hipName(sdk, op));
      assert.is(c.tid, Number(b.readBigUInt64LE(apiOff + 16)));
      assert.is(c.pid, run.pid);
      assert.is(c.args["External id"], Number(b.readBigUInt64LE(24)));
      assert.ok(Math.abs(durNs(c) - Number(b.readBigUInt64LE(apiOff + 8) - b.readBigUInt64LE(apiOff))) === 0);
      // Flows only where there is device work: launches and copies, not hipMalloc or RCCL.
      const flows = trace.traceEvents.filter((e) => e.ph === "s" && BigInt(e.id) === corr).length;
      assert.is(flows, c.name === "hipLaunchKernel" || c.name === "hipMemcpyAsync" ? 1 : 0, c.name);
    }
  });

  test(`SDK ${sdk}: hipMalloc carries the address and size of its MEMORY_ALLOCATION record (1.0), as Kineto's malloc rows`, async () => {
    const { run, trace } = await get(sdk);
    const allocs = run.records.filter((r) => r.kind === 16 && sdk === "1.0").map((r) => r.bytes);
    const mallocs = events(trace, "cuda_runtime").filter((e) => e.name === "hipMalloc");
    assert.is(mallocs.length, STEPS);
    assert.is(allocs.length, sdk === "1.0" ? STEPS : 0);
    for (const m of mallocs) {
      const a = allocs.find((b) => b.readBigUInt64LE(16) === BigInt(m.args.correlation));
      if (!a) {
        assert.is(m.args.ptr, undefined);
        continue;
      }
      assert.is(m.args.ptr, `0x${a.readBigUInt64LE(72).toString(16)}`);
      assert.is(m.args.size, Number(a.readBigUInt64LE(80)));
    }
  });

  test(`SDK ${sdk}: ROCTx ranges with their messages, once each, projected onto the GPU streams`, async () => {
    const { trace } = await get(sdk);
    const ranges = events(trace, "user_annotation");
    assert.equal(ranges.map((e) => e.name).sort(), Array.from({ length: STEPS }, (_, i) => `step ${i}`).sort());
    const kernels = events(trace, "kernel");
    for (const r of ranges) {
      const i = Number(r.name.slice(5));
      const inside = [...kernels, ...events(trace, "gpu_memcpy")].filter((e) => e.args["External id"] === 1000 + i);
      const spans = events(trace, "gpu_user_annotation").filter((e) => e.name === r.name);
      assert.ok(spans.length >= 1, `gpu span of ${r.name}`);
      for (const s of spans) {
        const on = inside.filter((e) => e.pid === s.pid && e.tid === s.tid);
        assert.ok(on.length > 0, `${r.name} on ${s.pid}/${s.tid}`);
        const start = Math.min(...on.map((e) => Number(e.ts)));
        assert.ok(Math.abs(Number(s.ts) - start) < 0.002, `${r.name} span start`);
      }
    }
  });

  test(`SDK ${sdk}: AMD deviceProperties and info (vendor, SDK version, agents, kind names)`, async () => {
    const { run, trace } = await get(sdk);
    assert.is(trace.deviceProperties.length, 2);
    for (const d of trace.deviceProperties) {
      assert.is(d.name, "AMD Instinct MI250X/MI250");
      assert.is(d.gcnArchName, "gfx90a");
      assert.is(d.numSms, 104);
      assert.is(d.warpSize, 64);
      assert.is(d.computeMajor, 9);
      assert.is(d.maxThreadsPerMultiprocessor, 32 * 64);
      assert.is(d.maxSharedMemoryPerMultiProcessor, 65536);
    }
    const i = await info(run.dump);
    assert.is(i.vendor, "rocm");
    assert.is(i.vendorVersionText, sdk === "1.0" ? "1.0.0" : "0.5.0");
    assert.is(i.devices.length, 2);
    assert.is(i.devices[0].arch, "gfx90a");
    assert.is(i.records.KERNEL_DISPATCH, STEPS);
    assert.is(i.records.HIP_RUNTIME_API, 3 * STEPS);
    assert.is(i.warnings.length, 0, JSON.stringify(i.warnings));
  });

  test(`SDK ${sdk}: XSpace has one /device:GPU:N plane per GPU agent`, async () => {
    const { run } = await get(sdk);
    engine ??= await createEngine();
    const parts: Buffer[] = [];
    await engine.convert(memorySource(run.dump, "x.rawtrace"), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
    const bytes = Buffer.concat(parts).toString("latin1");
    assert.ok(bytes.includes("/device:GPU:0") && bytes.includes("/device:GPU:1"));
    assert.not.ok(bytes.includes("/device:GPU:2"));
  });
}

test("SDK 1.0 with records lost by the SDK: the rest decodes, the loss is reported", async () => {
  const run = fakeRocmDump("1.0", STEPS, { FAKE_ROCP_DROP_EVERY: "7" });
  const { trace, result } = await toChrome(run.dump);
  assert.ok(result.info.droppedRecords > 0);
  assert.is(events(trace, "kernel").length, run.records.filter((r) => r.kind === 11).length);
  assert.ok(result.info.warnings.some((w) => w.code === "DROPPED_RECORDS"));
});

test("SDK 1.0 with its AGENTS chunk lost: each GPU agent a device of its own, numbered in order of first appearance, UNKNOWN_DEVICE said (before: every GPU's work on GPU 0)", async () => {
  const { run } = await get("1.0");
  const agents = chunkSpans(run.dump).find((c) => c.type === ChunkType.AGENTS)!;
  assert.ok(agents);
  const dump = new Uint8Array([...run.dump.subarray(0, agents.off), ...run.dump.subarray(agents.end)]);
  const { trace, result } = await toChrome(dump);
  // The GPU agents the kernels and copies run on, in the order their first record comes in the file.
  const order: bigint[] = [];
  for (const r of run.records) {
    const hs = r.kind === KIND["1.0"].KERNEL_DISPATCH ? [r.bytes.readBigUInt64LE(64)] : r.kind === KIND["1.0"].MEMORY_COPY ? [r.bytes.readBigUInt64LE(56), r.bytes.readBigUInt64LE(64)] : [];
    for (const h of hs) if (h !== 0x5000n && !order.includes(h)) order.push(h);
  }
  assert.is(order.length, 2, "the fake's two GPUs");
  const kernels = events(trace, "kernel");
  assert.is(kernels.length, STEPS);
  for (const r of run.records.filter((x) => x.kind === KIND["1.0"].KERNEL_DISPATCH)) {
    const k = kernels.find((e) => BigInt(e.args.correlation) === r.bytes.readBigUInt64LE(16))!;
    const want = order.indexOf(r.bytes.readBigUInt64LE(64));
    assert.is(k.args.device, want);
    assert.is(k.pid, want);
  }
  assert.equal(new Set(kernels.map((e) => e.pid)).size, 2, "two GPUs, as the dump has");
  const w = result.info.warnings.find((x) => x.code === "UNKNOWN_DEVICE");
  assert.ok(w && w.detail === 2, JSON.stringify(result.info.warnings));
  assert.match(w!.message, "records name 2 device(s) missing from the dump's device table");
  // Both listed as devices (process names for each GPU pid).
  const names = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "process_name").map((e) => e.pid);
  for (const d of [0, 1]) assert.ok(names.includes(d), `GPU ${d} named`);
});

for (const sdk of SDKS) {
  test(`SDK ${sdk}, process killed (SIGKILL) after a flush: every delivered kernel, copy and call converts, NO_END`, async () => {
    const run = await fakeRocmDumpKilled(sdk, 6);
    const { trace, result } = await toChrome(run.dump);
    assert.is(result.info.complete, false);
    assert.ok(result.info.warnings.some((w) => w.code === "NO_END"));
    const count = (k: string) => run.records.filter((r) => r.kind === KIND[sdk][k]).length;
    assert.is(count("KERNEL_DISPATCH"), 6);
    assert.is(events(trace, "kernel").length, count("KERNEL_DISPATCH"));
    assert.is(events(trace, "gpu_memcpy").length, count("MEMORY_COPY"));
    assert.is(events(trace, "cuda_runtime").length, count("HIP_RUNTIME_API") + count("RCCL_API"));
    assert.is(events(trace, "user_annotation").length, 6);
  });
}

test.run();
