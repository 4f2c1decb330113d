/**
 * GPU idle gaps (src/core/gaps.ts, docs/analysis.md): a small CUDA dump written record by record whose gaps, and
 * what the host did in each, are worked out by hand below — not from any output of ours.
 *
 *   thread 101, range "loop" [0, 100] µs        thread 102 (no range)
 *   c1 cudaLaunchKernel [1, 2]   → K1 GPU 0 [3, 10]
 *   c7 cudaFuncGetAttributes [12, 20] (no device work)
 *   c3 cudaLaunchKernel [20.5, 21] → K3 GPU 0 [41, 45]
 *   c2 cudaLaunchKernel [30, 32] → K2 GPU 0 [33, 40]
 *                                                c4 cudaLaunchKernel [50, 51] → K4 GPU 0 [60, 70]
 *   c5 cudaLaunchKernel [52, 53] → K5 GPU 0 stream 8 [90, 95]
 *   c6 cudaLaunchKernel [4, 4.5] → K6 GPU 1 [5, 6]
 *
 * GPU 0: span 3 → 95 = 92 µs, busy 7 + 7 + 4 + 10 + 5 = 33 µs, idle 59 µs; gaps ≥ 10 µs:
 *   [10, 33) 23 µs, next K2 (c2, thread 101): in API = c7's 8 + c3's 0.5 + c2's 2 = 10.5, between 12.5, delay 20, covering
 *            call c7 (8 µs), range "loop";
 *   [45, 60) 15 µs, next K4 (c4, thread 102): in API 1 (c4), between 14, delay 5, call c4 (1 µs), no range;
 *   [70, 90) 20 µs, next K5 (c5, thread 101, launched before the gap): in API 0, between 20, delay 52 − 70 = −18,
 *            no call, range "loop";
 *   [40, 41) 1 µs is idle but no gap. GPU 1: one kernel, no gap.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as C from "../../src/tools/cupti_records.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { timelinePass } from "../../src/core/step_stats.js";
import { gapsOf } from "../../src/core/gaps.js";

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;
const PID = 100;
const us = (x: number) => T + BigInt(Math.round(x * 1000));

function dump(): Uint8Array {
  const w = cudaWriter(L, T, PID);
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 999, "cudaFuncGetAttributes_v3020"]]);
  w.strings([[0x10n, "loop"], [0x40n, "k"]]);
  const call = (corr: number, a: number, b: number, tid = 101, cbid = 211) =>
    C.apiRecord(L, { kind: 5, cbid, start: us(a), end: us(b), processId: PID, threadId: tid, correlationId: corr });
  const k = (corr: number, a: number, b: number, device = 0, stream = 7) =>
    C.kernelRecord(L, { start: us(a), end: us(b), deviceId: device, contextId: 1, streamId: stream, correlationId: corr, namePtr: 0x40n });
  // Device records first and out of order, as buffers arrive.
  w.activity(C.concat([k(5, 90, 95, 0, 8), k(4, 60, 70), k(2, 33, 40), k(1, 3, 10), k(3, 41, 45), k(6, 5, 6, 1)]));
  w.activity(C.concat([
    C.markerRecord(L, 2, us(0), 1, PID, 101, 0x10n),
    call(1, 1, 2), call(6, 4, 4.5), call(7, 12, 20, 101, 999), call(3, 20.5, 21), call(2, 30, 32), call(4, 50, 51, 102),
    call(5, 52, 53),
    C.markerRecord(L, 4, us(100), 1, PID, 101, 0n),
  ]));
  w.end();
  return w.bytes();
}

test("gaps: spans, idle, gaps ≥ 10 µs with the host's share, launch delay, covering call and range", async () => {
  const tl = await timelinePass(await createEngine(), memorySource(dump()), {});
  const [g0, g1, ...rest] = gapsOf(tl, 10_000);
  assert.is(rest.length, 0);
  assert.equal([g0.device, g0.spanNs, g0.busyNs, g0.idleNs, g0.gaps, g0.gapNs, g0.inApiNs, g0.betweenNs],
    [0, 92_000, 33_000, 59_000, 3, 58_000, 11_500, 46_500]);
  assert.equal([g1.device, g1.spanNs, g1.busyNs, g1.gaps, g1.list.length], [1, 1000, 1000, 0, 0]);
  const rows = g0.list.map((g) => [
    Number(g.startNs - T), g.durNs, g.next.correlation, g.launch?.tid, g.launch?.delayNs, g.inApiNs, g.betweenNs,
    g.call?.name, g.call?.overlapNs, g.range,
  ]);
  assert.equal(rows, [
    [10_000, 23_000, 2, 101, 20_000, 10_500, 12_500, "cudaFuncGetAttributes", 8000, "loop"],
    [70_000, 20_000, 5, 101, -18_000, 0, 20_000, undefined, undefined, "loop"],
    [45_000, 15_000, 4, 102, 5000, 1000, 14_000, "cudaLaunchKernel", 1000, null],
  ]);
  assert.equal(g0.list.map((g) => [g.next.kind, g.next.name, g.launch?.name, g.launch?.pid]),
    [["kernel", "k", "cudaLaunchKernel", PID], ["kernel", "k", "cudaLaunchKernel", PID], ["kernel", "k", "cudaLaunchKernel", PID]]);
  // The threshold: 0 lists the 1 µs idle interval too; 21 µs keeps only the longest.
  assert.is(gapsOf(tl, 0)[0].gaps, 4);
  assert.equal(gapsOf(tl, 21_000)[0].list.map((g) => g.durNs), [23_000]);
});

test.run();
