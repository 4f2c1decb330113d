/**
 * XSpace step links (assembly/emit/xspace_steps.ts, docs/xspace.md "Events and stats"): a launch call of a thread
 * without `ProfilerStep#N` markers whose GPU has no work of that step launched under the marker carries the consumer
 * context (`_ct` 0, `_c` N) and the marker the producer context (`_pt` 0, `_p` N), so XProf's grouping puts that
 * GPU's work in step N; nothing else changes (no link on a GPU the marker's thread also drives in the step, none
 * outside a step, none to a step that overlaps another or shares its number, none from another process, none on a
 * GPU whose work outside the links would then join a step, no stat at all without such calls).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XPlane } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { MAIN, OTHER, SIDE, stepDump, type Launch, type Step } from "./xspace_step_dump.js";

const dump = (launches: Launch[], steps?: Step[], stepsFirst = false) => stepDump(launches, steps, stepsFirst).bytes;

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
    { tid: SIDE, at: 150n, device: 1, kernel: false }, { tid: SIDE, at: 220n, device: 1 },
  ]));
  assert.equal(links(host, MAIN), [
    ["ProfilerStep#1", PRODUCER(1n)], ["cudaLaunchKernel", {}], ["ProfilerStep#2", PRODUCER(2n)], ["cudaLaunchKernel", {}],
  ]);
  assert.equal(links(host, SIDE), [
    ["cudaLaunchKernel", CONSUMER(1n)], ["cudaLaunchKernel", CONSUMER(1n)],
    ["cudaStreamSynchronize", {}], // no device work: nothing to put in a step
    ["cudaStreamSynchronize", {}], // between the steps
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
  // One GPU a step: a launch in a step that takes no link is outside the links, which would block its GPU's others.
  const launches = [{ tid: SIDE, at: 20n, device: 1 }, { tid: SIDE, at: 220n, device: 2 }, { tid: SIDE, at: 420n, device: 3 }];
  // Step 2 overlaps a step of another thread (OTHER: 250..350 µs); steps 1 and 3 stand alone.
  let host = await hostPlane(dump(launches, [[MAIN, 1, 0n, 100n], [MAIN, 2, 200n, 300n], [OTHER, 7, 250n, 350n], [MAIN, 3, 400n, 500n]]));
  assert.equal(links(host, SIDE).map((x) => x[1]), [CONSUMER(1n), {}, CONSUMER(3n)]);
  // Two markers numbered 1 (the ids are step numbers): neither takes links.
  host = await hostPlane(dump(launches, [[MAIN, 1, 0n, 100n], [MAIN, 1, 200n, 300n], [MAIN, 3, 400n, 500n]]));
  assert.equal(links(host, SIDE).map((x) => x[1]), [{}, {}, CONSUMER(3n)]);
  assert.equal(links(host, MAIN).map((x) => x[1]), [{}, {}, PRODUCER(3n)]);
});

test("markers ending in decreasing start order (as a dump may list them): the links of the sorted dump", async () => {
  // 9 steps on MAIN 100 µs apart, listed last to first, a 10th overlapping step 5 from OTHER; SIDE drives GPU 1 in
  // steps 1, 4, 5 and 9, MAIN drives GPU 0 in each, and GPU 1 in step 4.
  const steps: Step[] = [];
  for (let n = 9; n >= 1; n--) steps.push([MAIN, n, BigInt(n * 100), BigInt(n * 100 + 80)]);
  steps.splice(3, 0, [OTHER, 50, 540n, 560n]);
  const launches: Launch[] = [];
  for (let n = 1; n <= 9; n++) launches.push({ tid: MAIN, at: BigInt(n * 100 + 10), device: n === 4 ? 1 : 0 });
  for (const n of [1, 4, 5, 9]) launches.push({ tid: SIDE, at: BigInt(n * 100 + 20), device: 1 });
  const want = [CONSUMER(1n), {}, {}, CONSUMER(9n)];
  for (const stepsFirst of [false, true]) {
    const host = await hostPlane(dump(launches, steps, stepsFirst));
    assert.equal(links(host, SIDE).map((x) => x[1]), want, `steps first: ${stepsFirst}`);
    const main = links(host, MAIN).filter((x) => x[0].startsWith("ProfilerStep"));
    assert.equal(main.map((x) => [x[0], x[1]]), Array.from({ length: 9 }, (_, i) => [`ProfilerStep#${i + 1}`, i === 0 || i === 8 ? PRODUCER(BigInt(i + 1)) : {}]));
  }
});

test("a thread of another process launching onto a GPU during a step: not linked (only the marker's process links)", async () => {
  const host = await hostPlane(dump([
    { tid: MAIN, at: 10n, device: 0 }, { tid: MAIN, at: 210n, device: 0 },
    { tid: 201, pid: 200, at: 20n, device: 1 }, { tid: 201, pid: 200, at: 220n, device: 1 },
  ]));
  assert.equal(links(host, 201).map((x) => x[1]), [{}, {}]);
  for (const n of ["_pt", "_p", "_ct", "_c"]) assert.not.ok(statNames(host).includes(n), n);
});

test("a GPU with launches outside the links after its first linked one takes none (its gap work would join a step)", async () => {
  const steps: Step[] = [[MAIN, 1, 100n, 200n], [MAIN, 2, 300n, 400n]];
  const inSteps: Launch[] = [
    { tid: MAIN, at: 110n, device: 0 }, { tid: MAIN, at: 310n, device: 0 },
    { tid: SIDE, at: 120n, device: 1 }, { tid: SIDE, at: 320n, device: 1 }, { tid: SIDE, at: 130n, device: 2 }, { tid: SIDE, at: 330n, device: 2 },
  ];
  // GPU 1 also between the steps, then after the last: none of its launches link; GPU 2 still does.
  for (const at of [250n, 450n]) {
    const host = await hostPlane(dump([...inSteps, { tid: SIDE, at, device: 1 }], steps));
    assert.equal(links(host, SIDE).map((x) => x[1]), [{}, CONSUMER(1n), ...(at === 250n ? [{}] : []), {}, CONSUMER(2n), ...(at === 450n ? [{}] : [])], `GPU 1 at ${at}`);
  }
  // Work outside the links from the marker's thread, or from another process, blocks the GPU as well.
  for (const extra of [{ tid: MAIN, at: 250n, device: 1 }, { tid: 201, pid: 200, at: 320n, device: 1 }]) {
    const host = await hostPlane(dump([...inSteps, extra], steps));
    assert.equal(links(host, SIDE).filter((x, i) => i % 2 === 0).map((x) => x[1]), [{}, {}], `${extra.tid} at ${extra.at}`);
  }
  // Before the first linked launch (warm-up) it does not; nor on a GPU the marker's thread drives under a marker
  // (XProf already gives its ungrouped work the group before it).
  let host = await hostPlane(dump([...inSteps, { tid: SIDE, at: 50n, device: 1 }], steps));
  assert.equal(links(host, SIDE).map((x) => x[1]), [{}, CONSUMER(1n), CONSUMER(1n), CONSUMER(2n), CONSUMER(2n)]);
  host = await hostPlane(dump([...inSteps, { tid: MAIN, at: 150n, device: 1 }, { tid: SIDE, at: 450n, device: 1 }], steps));
  assert.equal(links(host, SIDE).map((x) => x[1]), [{}, CONSUMER(1n), CONSUMER(2n), CONSUMER(2n), {}]);
});

test.run();
