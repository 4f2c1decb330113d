/**
 * src/tools/xspace_to_kineto.ts on crafted XSpaces: times exact to the ns against the profile start, and an event that
 * starts before the profile start (its line began before the session) kept where it is, the base moved before it.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { create } from "@bufbuild/protobuf";
import { XSpaceSchema, type XSpace } from "../../src/gen/xplane_pb.js";
import { xspaceToKineto } from "../../src/tools/xspace_to_kineto.js";

/** A space with profile start 1 ms, one kernel on GPU 0 at `offsetPs` from its line (at 0 ns), and its launch call. */
function space(offsetPs: bigint): XSpace {
  const corr = { "1": { id: 1n, name: "correlation_id" } };
  const stat = { metadataId: 1n, value: { case: "uint64Value" as const, value: 5n } };
  return create(XSpaceSchema, {
    planes: [
      { id: 1n, name: "Task Environment", statMetadata: { "1": { id: 1n, name: "profile_start_time" } }, stats: [{ metadataId: 1n, value: { case: "uint64Value", value: 1_000_000n } }] },
      {
        id: 2n, name: "/device:GPU:0", statMetadata: corr, eventMetadata: { "1": { id: 1n, name: "k" } },
        lines: [{ id: 7n, timestampNs: 0n, events: [{ metadataId: 1n, data: { case: "offsetPs", value: offsetPs }, durationPs: 2_000_000n, stats: [stat] }] }],
      },
      {
        id: 3n, name: "/host:CPU", statMetadata: corr, eventMetadata: { "1": { id: 1n, name: "hipLaunchKernel" } },
        lines: [{ id: 9n, timestampNs: 0n, events: [{ metadataId: 1n, data: { case: "offsetPs", value: 4_000_000n }, durationPs: 1_000_000n, stats: [stat] }] }],
      },
    ],
  });
}

test("times on the profile start, to the ns", () => {
  const t = xspaceToKineto(space(3_500_000n));
  assert.is(t.baseTimeNanoseconds, "1000000");
  assert.equal(t.traceEvents.map((e) => [e.cat, e.ts, e.dur]), [["kernel", "3.500", "2.000"], ["cuda_runtime", "4.000", "1.000"]]);
});

test("a kernel 1.5 µs before the profile start: the base moves before it, every time kept (before: its ts was clamped to 0, 1.5 µs late)", () => {
  const t = xspaceToKineto(space(-1_500_000n));
  assert.is(t.baseTimeNanoseconds, String(1_000_000 - 1_500));
  assert.equal(t.traceEvents.map((e) => [e.cat, e.ts, e.dur]), [["kernel", "0.000", "2.000"], ["cuda_runtime", "5.500", "1.000"]]);
});

test.run();
