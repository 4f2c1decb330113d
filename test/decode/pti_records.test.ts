/**
 * The PTI decoder (assembly/decode/pti.ts) on hand-built records: v1 and `_v2` layouts stepped by KIND_SIZES or,
 * without it, by the HEADER's PTI version; demangled SYCL kernel names; devices by UUID; streams from SYCL queue ids
 * and, for Level Zero programs, from queue handles; append / submit args; external ids (framework op vs user);
 * synchronization, communication (0.17 and 1.x layouts) and overhead records; and the XSpace device planes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome, events } from "../helpers/convert.js";
import { T0, apiCall, copy, external, kernel, ptiDump, ptr, rec } from "../helpers/pti_records.js";
import { deviceUuid } from "../../src/tools/kineto_to_pti.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { Engine, memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { timelineOf } from "../helpers/timeline_digest.js";

const MANGLED = "_ZN4sycl3_V16detail18RoundedRangeKernelINS0_4itemILi1ELb1EEELi1EZ4mainEUlNS0_2idILi1EEEE_EE";

for (const gen of ["1.2", "0.17"] as const) {
  test(`PTI ${gen}: kernel with its launch call, flows, device, stream, times and args`, async () => {
    const bytes = ptiDump([[apiCall(6, 17, 5, 100, 900), apiCall(3, 55, 5, 200, 700), external(5, 77),
      kernel(gen, 5, 1000, 3000, { dev: 1, queue: 3n })]], { gen });
    const { trace, result } = await toChrome(bytes);
    assert.equal(result.info.warnings, []);
    const [k] = events(trace, "kernel");
    assert.is(k.name, "gemm_kernel");
    assert.is(k.pid, 1);
    assert.is(k.tid, 3);
    assert.is(k.dur, 2);
    assert.is(k.args.correlation, 5);
    assert.is(k.args["External id"], 77);
    assert.is(k.args["sycl queue"], 3);
    assert.is(k.args["l0 queue"], "0x0000000000005000");
    assert.is(k.args.appended_rel_to_start, "-0.050");
    assert.is(k.args.submitted_rel_to_start, "-0.020");
    assert.is(k.args.kernel_id, 5);
    const [rt] = events(trace, "xpu_runtime");
    const [drv] = events(trace, "xpu_driver");
    assert.is(rt.name, "urEnqueueKernelLaunch");
    assert.is(drv.name, "zeCommandListAppendLaunchKernel");
    assert.is(rt.args["External id"], 77);
    assert.is(rt.pid, 4242);
    assert.is(rt.tid, 7);
    // One flow: from the runtime call to the kernel (the driver call starts none).
    const s = events(trace, "ac2g", "s");
    const f = events(trace, "ac2g", "f");
    assert.is(s.length, 1);
    assert.is(f.length, 1);
    assert.is(s[0].ts, rt.ts);
    assert.is(f[0].ts, k.ts);
    assert.is(trace.deviceProperties.length, 2);
  });
}

test("no KIND_SIZES: the HEADER's version picks v1 (0.17) or _v2 (1.2) strides", async () => {
  for (const gen of ["1.2", "0.17"] as const) {
    const { trace, result } = await toChrome(ptiDump([[kernel(gen, 1, 10, 20), kernel(gen, 2, 30, 40), copy(gen, 3, 50, 60, 6)]], { gen, kindSizes: null }));
    assert.equal(result.info.warnings, [], gen);
    assert.is(events(trace, "kernel").length, 2, gen);
    assert.is(events(trace, "gpu_memcpy")[0].name, "Memcpy H2D (HOST -> DEVICE)", gen);
  }
});

test("SYCL kernel names are demangled; a kernel without a name string is <unknown kernel> (MISSING_STRING)", async () => {
  const bytes = ptiDump([[kernel("1.2", 1, 10, 20, { name: 2 }), kernel("1.2", 2, 30, 40, { name: 9 })]], {
    strings: [[ptr(2), MANGLED]],
  });
  const { trace, result } = await toChrome(bytes);
  const names = events(trace, "kernel").map((e) => e.name);
  assert.match(names[0], /^sycl::_V1::detail::RoundedRangeKernel<sycl::_V1::item<1, true>, 1, main::\{lambda/);
  assert.is(names[1], "<unknown kernel>");
  assert.is(result.info.warnings.find((w) => w.code === "MISSING_STRING")!.count, 1);
});

test("copies: Kineto's names for every src×4+dst type, copy kinds for statistics; peer copies carry both devices", async () => {
  const recs = [copy("1.2", 1, 10, 20, 6), copy("1.2", 2, 30, 40, 9), copy("1.2", 3, 50, 60, 10), copy("1.2", 4, 70, 80, 15),
    copy("1.2", 5, 90, 100, 0)];
  const p = rec(10, "1.2");
  p.dv.setUint32(4, 10, true);
  p.dv.setUint32(8, 2, true);
  p.dv.setUint32(12, 2, true);
  p.b.set(deviceUuid(1), 72);
  p.b.set(deviceUuid(0), 88);
  p.dv.setUint32(112, 6, true);
  p.u64(128, T0 + 200n);
  p.u64(136, T0 + 400n);
  p.u64(152, 1 << 20);
  const { trace } = await toChrome(ptiDump([[...recs, p.b]]));
  const c = events(trace, "gpu_memcpy");
  assert.equal(c.map((e) => e.name), ["Memcpy H2D (HOST -> DEVICE)", "Memcpy D2H (DEVICE -> HOST)",
    "Memcpy D2D (DEVICE -> DEVICE)", "Memcpy S2S (SHARED -> SHARED)", "Memcpy M2M (MEMORY(Unknown) -> MEMORY(Unknown))",
    "Memcpy D2D (DEVICE -> DEVICE)"]);
  assert.equal(c.map((e) => e.args["l0 call"] ?? null), ["zeCommandListAppendMemoryCopy", "zeCommandListAppendMemoryCopy",
    "zeCommandListAppendMemoryCopy", "zeCommandListAppendMemoryCopy", "zeCommandListAppendMemoryCopy", null]);
  const peer = c[5];
  assert.is(peer.pid, 1);
  assert.is(peer.args.fromDevice, 1);
  assert.is(peer.args.toDevice, 0);
  assert.is(peer.args.bytes, 1 << 20);
  // Bandwidth in GB/s (bytes per ns) when the copy has a duration; a zero-length one has none (before 2026-12-03 a
  // string "N/A", which makes HTA's memory_bw_gbps column non-numeric).
  assert.is(c[0].args["memory bandwidth (GB/s)"], 4096 / 10);
  const { trace: zero } = await toChrome(ptiDump([[copy("1.2", 1, 10, 10, 6)]]));
  const [z] = events(zero, "gpu_memcpy");
  assert.is(z.args.bytes, 4096);
  assert.not.ok("memory bandwidth (GB/s)" in z.args, JSON.stringify(z.args));
});

test("fills: Memset (value -> type), bytes; Level Zero queues without a SYCL id get streams 2^30 + order", async () => {
  const f = rec(9, "1.2");
  f.dv.setUint32(4, 2, true);
  f.u64(8, 0xabc0n);
  f.b.set(deviceUuid(0), 48);
  f.dv.setUint32(72, 9, true);
  f.u64(88, T0 + 10n);
  f.u64(96, T0 + 90n);
  f.u64(112, 8192);
  f.u64(120, 255);
  f.u64(128, 0xfffffffffffffffen); // PTI_INVALID_QUEUE_ID
  const k2 = kernel("1.2", 10, 100, 200, { queue: 0xfffffffffffffffen, l0q: 0xdef0n });
  const k3 = kernel("1.2", 11, 300, 400, { queue: 0xfffffffffffffffen, l0q: 0xabc0n });
  const { trace } = await toChrome(ptiDump([[f.b, k2, k3]]));
  const [m] = events(trace, "gpu_memset");
  assert.is(m.name, "Memset (255 -> DEVICE)");
  assert.is(m.args.bytes, 8192);
  assert.is(m.tid, 0x40000000);
  assert.equal(events(trace, "kernel").map((e) => e.tid), [0x40000001, 0x40000000]);
});

test("external ids: CUSTOM_0 and UNKNOWN are framework ops (External id), CUSTOM_1 is not; a second id for a correlation is DUPLICATE_CORRELATION", async () => {
  const bytes = ptiDump([[external(1, 11, 2), kernel("1.2", 1, 10, 20), external(2, 22, 1), kernel("1.2", 2, 30, 40),
    external(3, 33, 3), kernel("1.2", 3, 50, 60), external(1, 99, 2)]]);
  const { trace, result } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((e) => e.args["External id"] ?? null), [11, 22, null]);
  assert.is(result.info.warnings.find((w) => w.code === "DUPLICATE_CORRELATION")!.count, 1);
});

test("synchronization → xpu_sync on its thread, named by its API; comms → collective_comm xccl::<name> (0.17 and 1.x); overhead → its kind, on the PTI Overhead process", async () => {
  for (const gen of ["1.2", "0.17"] as const) {
    const s = rec(11, gen);
    s.dv.setUint32(4, 4, true);
    s.u64(32, T0 + 100n);
    s.u64(40, T0 + 900n);
    s.dv.setUint32(48, 7, true);
    s.dv.setUint32(52, 40, true);
    s.dv.setUint32(64, 84, true);
    s.dv.setUint32(68, 1, true);
    const c = rec(12, gen);
    c.u64(8, T0 + 1000n);
    c.u64(16, T0 + 5000n);
    c.dv.setUint32(24, 4242, true);
    c.dv.setUint32(28, 8, true);
    c.u64(gen === "1.2" ? 56 : 48, ptr(3));
    const o = rec(5, gen);
    o.u64(8, T0 + 6000n);
    o.u64(16, T0 + 7000n);
    o.dv.setUint32(24, 7, true);
    o.dv.setUint32(48, 3, true);
    const { trace, result } = await toChrome(ptiDump([[s.b, c.b, o.b]], { gen, strings: [[ptr(3), "allreduce"]] }));
    assert.equal(result.info.warnings, [], gen);
    const [sync] = events(trace, "xpu_sync");
    assert.is(sync.name, "zeEventHostSynchronize");
    assert.is(sync.tid, 7);
    assert.is(sync.args.correlation, 40);
    const [comm] = events(trace, "collective_comm");
    assert.is(comm.name, "xccl::allreduce", gen);
    assert.is(comm.tid, 8);
    assert.is(comm.dur, 4);
    const [ov] = events(trace, "overhead");
    assert.is(ov.name, "BUFFER_FLUSH");
    // Its process is PTI's, not CUPTI's (Kineto's CUDA name).
    const pname = trace.traceEvents.find((e: { ph: string; name: string; pid: number }) => e.ph === "M" && e.name === "process_name" && e.pid === ov.pid);
    assert.is(pname?.args.name, "PTI Overhead", gen);
  }
});

test("XSpace: one /device:GPU:N plane per Intel GPU with vendor Intel and its name; kernels on their stream lines", async () => {
  const bytes = ptiDump([[apiCall(6, 17, 1, 100, 900), kernel("1.2", 1, 1000, 3000, { dev: 0 }),
    apiCall(6, 17, 2, 1000, 1900), kernel("1.2", 2, 4000, 5000, { dev: 1, queue: 2n })]]);
  const engine: Engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const s = fromBinary(XSpaceSchema, Buffer.concat(parts));
  for (const d of [0, 1]) {
    const pl = s.planes.find((p) => p.name === `/device:GPU:${d}`)!;
    assert.ok(pl, `plane ${d}`);
    const stat = (n: string) => {
      const id = Object.values(pl.statMetadata).find((m) => m.name === n)?.id;
      const v = pl.stats.find((x) => x.metadataId === id)?.value;
      return v?.case === "refValue" ? pl.statMetadata[String(v.value)]?.name : v?.value;
    };
    assert.is(stat("device_vendor"), "Intel");
    const events = pl.lines.flatMap((l) => l.events);
    assert.is(events.length, 1);
    assert.is(pl.eventMetadata[String(events[0].metadataId)].name, "gemm_kernel");
  }
});

test("contexts: ids 1, 2, … by first appearance of the Level Zero handle in XSpace and the timeline; Chrome JSON keeps the handle", async () => {
  const ctxs = [0xa000n, 0xb000n, 0xa000n, 0n];
  const bytes = ptiDump([ctxs.map((ctx, i) => kernel("1.2", i + 1, 1000 * (i + 1), 1000 * (i + 1) + 500, { ctx }))]);
  const { trace } = await toChrome(bytes);
  assert.equal(events(trace, "kernel").map((k) => k.args.context),
    ["0x000000000000a000", "0x000000000000b000", "0x000000000000a000", "0x0000000000000000"]);
  const engine: Engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const pl = fromBinary(XSpaceSchema, Buffer.concat(parts)).planes.find((p) => p.name === "/device:GPU:0")!;
  const ctxId = Object.values(pl.statMetadata).find((m) => m.name === "context_id")!.id;
  const got = pl.lines.flatMap((l) => l.events).sort((a, b) => Number(a.offsetPs - b.offsetPs))
    .map((e) => e.stats.find((x) => x.metadataId === ctxId)?.value.value);
  assert.equal(got, ["$$1", "$$2", "$$1", "$$0"]);
  const t = await timelineOf(bytes);
  const kernels = [];
  for (let i = 0; i < t.events.length; i++) if (t.events.kind(i) === 1) kernels.push([t.events.start(i), t.events.word(i, 12)]);
  kernels.sort((a, b) => a[0] - b[0]);
  assert.equal(kernels.map((k) => k[1]), [1, 2, 1, 0]);
});

test("correlation 0 (PTI's none) is not written on device work, and no flow joins such ops; other args unchanged", async () => {
  for (const gen of ["1.2", "0.17"] as const) {
    const { trace, result } = await toChrome(ptiDump([[kernel(gen, 0, 1000, 3000), copy(gen, 0, 4000, 5000, 6), kernel(gen, 4, 6000, 7000)]], { gen }));
    assert.equal(result.info.warnings, [], gen);
    const ks = events(trace, "kernel");
    const [c] = events(trace, "gpu_memcpy");
    assert.is(ks.length, 2, gen);
    assert.not.ok("correlation" in ks[0].args, gen);
    assert.not.ok("correlation" in c.args, gen);
    assert.is(ks[1].args.correlation, 4, gen);
    // The rest of the args as with an id.
    for (const k of ["device", "context", "sycl queue", "l0 queue", "stream", "kernel_id", "appended_rel_to_start", "submitted_rel_to_start"]) {
      assert.ok(k in ks[0].args, `${gen} ${k}`);
    }
    assert.ok("bytes" in c.args && "memory bandwidth (GB/s)" in c.args, gen);
    assert.is(events(trace, "ac2g", "s").filter((e) => e.id === 0).length, 0, gen);
  }
});

test.run();
