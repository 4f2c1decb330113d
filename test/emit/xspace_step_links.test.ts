/**
 * XSpace step links (assembly/emit/xspace_steps.ts, docs/xspace.md "Events and stats"): a launch call of a thread
 * without `ProfilerStep#N` markers whose GPU has no work of that step launched under the marker carries the consumer
 * context (`_ct` 0, `_c` N) and the marker the producer context (`_pt` 0, `_p` N), so XProf's grouping puts that
 * GPU's work in step N; nothing else changes (no link on a GPU the marker's thread also drives in the step, none
 * outside a step, none to a step that overlaps another or shares its number, no stat at all without such calls).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import * as C from "../../src/tools/cupti_records.js";
import { XSpaceSchema, type XPlane } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { cudaWriter } from "../helpers/cuda_writer.js";

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;
const PID = 100;
const MAIN = 101;
const SIDE = 102;
const OTHER = 103;
const US = 1000n;

/** A launch: its thread, start (µs after T), the GPU its kernel runs on; `kernel` false: a call without device work. */
interface Launch { tid: number; at: bigint; device: number; kernel?: boolean }

/**
 * Two `ProfilerStep#N` ranges on MAIN (1: 0..100 µs, 2: 200..300 µs; `steps` replaces them as [tid, number, start µs,
 * end µs]) and the launches, each kernel 5 µs after its call on stream 7.
 */
function dump(launches: Launch[], steps: Array<[number, number, bigint, bigint]> = [[MAIN, 1, 0n, 100n], [MAIN, 2, 200n, 300n]]): Uint8Array {
  const w = cudaWriter(L, T, PID);
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 131, "cudaStreamSynchronize_v3020"]]);
  const names: Array<[bigint, string]> = [[0x40n, "k"]];
  const host: Array<[bigint, Uint8Array]> = [];
  steps.forEach(([tid, num, a, b], i) => {
    const ptr = 0x100n + BigInt(i);
    names.push([ptr, `ProfilerStep#${num}`]);
    host.push([T + a * US, C.markerRecord(L, 2, T + a * US, 50 + i, PID, tid, ptr)]);
    host.push([T + b * US, C.markerRecord(L, 4, T + b * US, 50 + i, PID, tid, 0n)]);
  });
  const device: Uint8Array[] = [];
  launches.forEach((l, i) => {
    const s = T + l.at * US;
    const sync = l.kernel === false;
    host.push([s + US, C.apiRecord(L, { kind: 5, cbid: sync ? 131 : 211, start: s, end: s + US, processId: PID, threadId: l.tid, correlationId: 1 + i })]);
    if (!sync) device.push(C.kernelRecord(L, { start: s + 5n * US, end: s + 9n * US, deviceId: l.device, contextId: 1, streamId: 7, correlationId: 1 + i, namePtr: 0x40n }));
  });
  w.strings(names);
  host.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  w.activity(C.concat(host.map((h) => h[1])));
  w.activity(C.concat(device));
  w.end();
  return w.bytes();
}

async function hostPlane(bytes: Uint8Array): Promise<XPlane> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  return fromBinary(XSpaceSchema, Buffer.concat(parts)).planes.find((p) => p.name === "/host:CPU")!;
}

/** Per event of thread `tid`, in order: its name and its context stats (`_pt`, `_p`, `_ct`, `_c`) as [case, value]. */
function links(host: XPlane, tid: number): Array<[string, Record<string, [string | undefined, unknown]>]> {
  const line = host.lines.find((l) => l.id === BigInt(tid))!;
  return line.events.map((e) => {
    const ctx: Record<string, [string | undefined, unknown]> = {};
    for (const s of e.stats) {
      const n = host.statMetadata[String(s.metadataId)]?.name ?? "";
      if (["_pt", "_p", "_ct", "_c"].includes(n)) ctx[n] = [s.value.case, s.value.value];
    }
    return [host.eventMetadata[String(e.metadataId)].name.replace(/_v\d+$/, ""), ctx];
  });
}

const CONSUMER = (n: bigint) => ({ _ct: ["int64Value", 0n], _c: ["uint64Value", n] });
const PRODUCER = (n: bigint) => ({ _pt: ["int64Value", 0n], _p: ["uint64Value", n] });
const statNames = (host: XPlane) => Object.values(host.statMetadata).map((m) => m.name);

test("a GPU driven only from a thread without markers: its launches in step N consume step N's context, the markers produce it", async () => {
  const host = await hostPlane(dump([
    { tid: MAIN, at: 10n, device: 0 }, { tid: MAIN, at: 210n, device: 0 },
    { tid: SIDE, at: 20n, device: 1 }, { tid: SIDE, at: 30n, device: 1 }, { tid: SIDE, at: 40n, device: 1, kernel: false },
    { tid: SIDE, at: 150n, device: 1 }, { tid: SIDE, at: 220n, device: 1 },
  ]));
  assert.equal(links(host, MAIN), [
    ["ProfilerStep#1", PRODUCER(1n)], ["cudaLaunchKernel", {}], ["ProfilerStep#2", PRODUCER(2n)], ["cudaLaunchKernel", {}],
  ]);
  assert.equal(links(host, SIDE), [
    ["cudaLaunchKernel", CONSUMER(1n)], ["cudaLaunchKernel", CONSUMER(1n)],
    ["cudaStreamSynchronize", {}], // no device work: nothing to put in a step
    ["cudaLaunchKernel", {}], // between the steps
    ["cudaLaunchKernel", CONSUMER(2n)],
  ]);
});

test("no link where XProf already groups the GPU's step: a GPU the marker's thread launches onto in that step", async () => {
  const host = await hostPlane(dump([
    { tid: MAIN, at: 10n, device: 0 }, { tid: MAIN, at: 210n, device: 1 },
    { tid: SIDE, at: 20n, device: 0 }, { tid: SIDE, at: 30n, device: 1 }, { tid: SIDE, at: 220n, device: 0 }, { tid: SIDE, at: 230n, device: 1 },
  ]));
  // Step 1: GPU 0 has the marker thread's launch, GPU 1 none; step 2 the other way round.
  assert.equal(links(host, SIDE).map((x) => x[1]), [{}, CONSUMER(1n), CONSUMER(2n), {}]);
  assert.equal(links(host, MAIN).map((x) => x[1]), [PRODUCER(1n), {}, PRODUCER(2n), {}]);
});

test("every launch under the marker's thread, or one on the marker's GPU: no context stat is written at all", async () => {
  for (const side of [MAIN, SIDE]) {
    const host = await hostPlane(dump([{ tid: MAIN, at: 10n, device: 0 }, { tid: side, at: 20n, device: 0 }, { tid: MAIN, at: 210n, device: 0 }]));
    for (const n of ["_pt", "_p", "_ct", "_c"]) assert.not.ok(statNames(host).includes(n), `${n} (launches on thread ${side})`);
  }
});

test("no link to a step that overlaps another step or shares its number with another marker", async () => {
  const launches = [{ tid: SIDE, at: 20n, device: 1 }, { tid: SIDE, at: 220n, device: 1 }, { tid: SIDE, at: 420n, device: 1 }];
  // Step 2 overlaps a step of another thread (OTHER: 250..350 µs); steps 1 and 3 stand alone.
  let host = await hostPlane(dump(launches, [[MAIN, 1, 0n, 100n], [MAIN, 2, 200n, 300n], [OTHER, 7, 250n, 350n], [MAIN, 3, 400n, 500n]]));
  assert.equal(links(host, SIDE).map((x) => x[1]), [CONSUMER(1n), {}, CONSUMER(3n)]);
  // Two markers numbered 1 (the ids are step numbers): neither takes links.
  host = await hostPlane(dump(launches, [[MAIN, 1, 0n, 100n], [MAIN, 1, 200n, 300n], [MAIN, 3, 400n, 500n]]));
  assert.equal(links(host, SIDE).map((x) => x[1]), [{}, {}, CONSUMER(3n)]);
  assert.equal(links(host, MAIN).map((x) => x[1]), [{}, {}, PRODUCER(3n)]);
});

test.run();
