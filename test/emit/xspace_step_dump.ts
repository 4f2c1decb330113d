/**
 * Small CUDA dumps of `ProfilerStep#N` ranges and kernel launches from several threads and processes, for the step
 * link tests (test/emit/xspace_step_links.test.ts, test/interop/answers_step_links.test.ts).
 */
import * as C from "../../src/tools/cupti_records.js";
import { cudaWriter } from "../helpers/cuda_writer.js";

export const L: C.CuptiLayout = "cuda13";
/** Unix ns of the dump's time 0. */
export const T = 1_780_000_000_000_000_000n;
export const PID = 100;
export const MAIN = 101;
export const SIDE = 102;
export const OTHER = 103;
export const US = 1000n;

/**
 * A launch: its thread and process (default {@link PID}), start (µs after T), the GPU its kernel runs on, the kernel's
 * start after the call (`kat`, default 5 µs) and length (`kdur`, default 4 µs); `kernel` false: a call without device
 * work. Each call lasts 1 µs; its kernel runs on stream 7.
 */
export interface Launch { tid: number; pid?: number; at: bigint; device: number; kernel?: boolean; kat?: bigint; kdur?: bigint }
/** A step range: thread, number, start and end (µs after T). */
export type Step = [number, number, bigint, bigint];
/** A kernel of the dump: its launch and its span (Unix ns). */
export interface Kernel { launch: Launch; callStart: bigint; start: bigint; end: bigint }

/**
 * The dump of `launches` and `steps` (default: 1 on MAIN 0..100 µs, 2 on MAIN 200..300 µs), host records in time
 * order; `stepsFirst`: the steps' records first, in the order given (a dump may list ranges with decreasing starts).
 */
export function stepDump(launches: Launch[], steps: Step[] = [[MAIN, 1, 0n, 100n], [MAIN, 2, 200n, 300n]], stepsFirst = false): { bytes: Uint8Array; kernels: Kernel[] } {
  const w = cudaWriter(L, T, PID);
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 131, "cudaStreamSynchronize_v3020"]]);
  const names: Array<[bigint, string]> = [[0x40n, "k"]];
  const marks: Uint8Array[] = [];
  const host: Array<[bigint, Uint8Array]> = [];
  steps.forEach(([tid, num, a, b], i) => {
    const ptr = 0x100n + BigInt(i);
    names.push([ptr, `ProfilerStep#${num}`]);
    const recs: Array<[bigint, Uint8Array]> = [
      [T + a * US, C.markerRecord(L, 2, T + a * US, 50 + i, PID, tid, ptr)],
      [T + b * US, C.markerRecord(L, 4, T + b * US, 50 + i, PID, tid, 0n)],
    ];
    if (stepsFirst) marks.push(...recs.map((r) => r[1]));
    else host.push(...recs);
  });
  const device: Uint8Array[] = [];
  const kernels: Kernel[] = [];
  launches.forEach((l, i) => {
    const s = T + l.at * US;
    const sync = l.kernel === false;
    host.push([s + US, C.apiRecord(L, { kind: 5, cbid: sync ? 131 : 211, start: s, end: s + US, processId: l.pid ?? PID, threadId: l.tid, correlationId: 1 + i })]);
    if (sync) return;
    const ks = s + (l.kat ?? 5n) * US;
    const ke = ks + (l.kdur ?? 4n) * US;
    kernels.push({ launch: l, callStart: s, start: ks, end: ke });
    device.push(C.kernelRecord(L, { start: ks, end: ke, deviceId: l.device, contextId: 1, streamId: 7, correlationId: 1 + i, namePtr: 0x40n }));
  });
  w.strings(names);
  host.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  w.activity(C.concat([...marks, ...host.map((h) => h[1])]));
  if (device.length) w.activity(C.concat(device));
  w.end();
  return { bytes: w.bytes(), kernels };
}
