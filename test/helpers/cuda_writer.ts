/** A CUDA dump writer with the usual preamble for small hand-written tests: HEADER, CLOCK anchor, KIND_SIZES. */
import * as C from "../../src/tools/cupti_records.js";
import { RawtraceWriter } from "../../src/format/writer.js";

/**
 * A writer holding a HEADER (vendor 1, layout `l`, CUDA 12.8, process `pid`, start `t` Unix ns), a CLOCK anchor
 * mapping CUPTI time `t` to Unix `t`, and the record sizes of layout `l`; the caller adds the rest and `end()`s it.
 */
export function cudaWriter(l: C.CuptiLayout, t: bigint, pid: number): RawtraceWriter {
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[l], runtimeVersion: 12080, driverVersion: 12080, pid,
    rank: 0, worldSize: 1, startNs: t, hostname: "h", commandLine: "python3\0train.py",
  });
  w.clock({ which: 0, vendorNs: t, realtimeNs: t, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[l]).map(([k, s]) => [Number(k), s] as const));
  return w;
}
