/**
 * assembly/emit/xspace_names.ts evByApi: an API call's XEvent metadata in XSpace has the call's own name. The names
 * were cached by (event kind, API id) alone, and ids repeat: PTI's Level Zero and OpenCL number their calls
 * separately, a PTI sync carries its sync type as its id and a comms call none, rocprofiler-sdk's HSA core and
 * extension tables number their operations separately. A call then showed in XProf under the name of the first call
 * with its key (the Chrome JSON was right). Each case here checks XSpace's host-plane names against the Chrome JSON's.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { RocpDomain } from "../../src/format/container.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { toChrome } from "../helpers/convert.js";
import { T0, ptr, rec, apiCall, ptiDump } from "../helpers/pti_records.js";
import { K, apiRecord, dumpWith } from "../helpers/rocm_records.js";

/** The names of the XEvents on the XSpace's host plane, sorted. */
async function xspaceHostNames(bytes: Uint8Array, allApi = false): Promise<string[]> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes, "t.rawtrace"), (b) => parts.push(Buffer.from(b)), { format: "xspace", allApi });
  const host = fromBinary(XSpaceSchema, Buffer.concat(parts)).planes.find((p) => p.name === "/host:CPU")!;
  return host.lines.flatMap((l) => l.events.map((e) => host.eventMetadata[String(e.metadataId)].name)).sort();
}

/** The Chrome JSON's complete events of the categories `cats`, by name, sorted. */
async function chromeNames(bytes: Uint8Array, cats: string[], allApi = false): Promise<string[]> {
  const { trace } = await toChrome(bytes, { allApi });
  return trace.traceEvents.filter((e) => e.ph === "X" && cats.includes(e.cat)).map((e) => String(e.name)).sort();
}

/** A PTI 1.2 synchronization record (kind 11) of sync type `type`, made by API call `group`:`id`. */
function sync(type: number, group: number, id: number, corr: number, start: number, end: number): Uint8Array {
  const r = rec(11, "1.2");
  r.dv.setUint32(4, type, true);
  r.u64(8, 0x6000n);
  r.u64(16, 0x5000n);
  r.u64(32, T0 + BigInt(start));
  r.u64(40, T0 + BigInt(end));
  r.dv.setUint32(48, 7, true);
  r.dv.setUint32(52, corr, true);
  r.dv.setUint32(64, id, true);
  r.dv.setUint32(68, group, true);
  return r.b;
}

/** A PTI 1.2 communication record (kind 12) named by string `name`. */
function comm(name: number, start: number, end: number): Uint8Array {
  const r = rec(12, "1.2");
  r.u64(8, T0 + BigInt(start));
  r.u64(16, T0 + BigInt(end));
  r.dv.setUint32(24, 4242, true);
  r.dv.setUint32(28, 7, true);
  r.u64(56, ptr(name));
  return r.b;
}

/** A PTI 1.2 driver API record (kind 3) of API group `group`. */
function driverCall(group: number, id: number, corr: number, start: number, end: number): Uint8Array {
  const b = apiCall(3, id, corr, start, end);
  new DataView(b.buffer, b.byteOffset).setUint32(24, group, true);
  return b;
}

test("PTI: Level Zero and OpenCL calls of one id, a sync whose type is a call's id, two syncs of one type, comms of two names: each its own name", async () => {
  const dump = ptiDump([[
    driverCall(1, 4, 1, 100, 200), // zeMemAllocDevice (Level Zero 4)
    sync(4, 1, 84, 2, 300, 400), // HOST_EVENT (4) by zeEventHostSynchronize: before, named zeMemAllocDevice
    sync(4, 1, 90, 3, 500, 600), // HOST_EVENT by zeFenceHostSynchronize: before, the first sync's name
    driverCall(2, 4, 4, 700, 800), // OpenCL 4 (clGetPlatformIDs): before, zeMemAllocDevice
    comm(2, 900, 1000), // xccl::allreduce
    comm(3, 1100, 1200), // xccl::allgather: before, xccl::allreduce
    driverCall(2, 999, 5, 1300, 1400), // an id the dump does not name: <unknown api 2:999>
    driverCall(1, 999, 6, 1500, 1600), // <unknown api 1:999>: before, the first unknown's name
  ]], {
    apiNames: [[1, 4, "zeMemAllocDevice"], [1, 84, "zeEventHostSynchronize"], [1, 90, "zeFenceHostSynchronize"], [2, 4, "clGetPlatformIDs"]],
    strings: [[ptr(0), "gemm_kernel"], [ptr(1), "x"], [ptr(2), "allreduce"], [ptr(3), "allgather"]],
  });
  const chrome = await chromeNames(dump, ["xpu_driver", "xpu_sync", "collective_comm"]);
  assert.equal(chrome, [
    "<unknown api 1:999>", "<unknown api 2:999>", "clGetPlatformIDs", "xccl::allgather", "xccl::allreduce",
    "zeEventHostSynchronize", "zeFenceHostSynchronize", "zeMemAllocDevice",
  ], "the Chrome JSON names each call by its own API");
  assert.equal(await xspaceHostNames(dump), chrome);
});

test("rocprofiler-sdk: HSA core and AMD extension operations of one number: each its own name", async () => {
  const dump = dumpWith([[
    apiRecord("HSA_CORE_API", 7, 1, 100, 200),
    apiRecord("HSA_AMD_EXT_API", 7, 2, 300, 400), // before: named hsa_queue_create
    apiRecord("HSA_AMD_EXT_API", 4, 3, 500, 600),
  ]], (w) => w.apiNames([[RocpDomain.OPS | K("HSA_AMD_EXT_API"), 7, "hsa_amd_profiling_get_dispatch_time"]]));
  const chrome = await chromeNames(dump, ["cuda_driver"], true);
  assert.equal(chrome, ["hsa_amd_memory_pool_allocate", "hsa_amd_profiling_get_dispatch_time", "hsa_queue_create"]);
  assert.equal(await xspaceHostNames(dump, true), chrome);
});

test.run();
