/**
 * Pieces of a `.rawtrace` that the Kineto round-trip tools (kineto_to_rawtrace.ts, kineto_to_pti.ts,
 * kineto_to_rocprof.ts) write the same way: the ACTIVITY chunks of a list of vendor records and the host
 * THREAD_NAMES taken from Kineto's thread rows.
 */
import type { RawtraceWriter } from "../format/writer.js";
import { concat } from "./cupti_records.js";
import { argsOf, asInt, type KinetoTrace } from "./kineto_to_rawtrace.js";

/** Writes `records` (whole vendor records, in order) as ACTIVITY chunks of `perChunk` records each; returns the chunk count. */
export function writeActivityChunks(w: RawtraceWriter, records: Uint8Array[], perChunk: number): number {
  let chunks = 0;
  for (let i = 0; i < records.length; i += perChunk) {
    w.activity(concat(records.slice(i, i + perChunk)));
    chunks++;
  }
  return chunks;
}

/**
 * Host thread names as [pid, tid, name]: Kineto's `thread_name` rows `thread <tid> (<name>)` of process `hostPid`
 * for the threads in `threads` (first row per thread wins), in trace order.
 */
export function hostThreadNames(
  trace: KinetoTrace, hostPid: number | undefined, threads: ReadonlySet<number>,
): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  for (const e of trace.traceEvents) {
    if (e.ph !== "M" || e.name !== "thread_name" || asInt(e.pid) !== hostPid) continue;
    const tid = asInt(e.tid);
    const m = /^thread \d+ \((.*)\)$/.exec(String(argsOf(e).name ?? ""));
    if (tid !== undefined && m && threads.has(tid) && !out.some((x) => x[1] === tid)) out.push([hostPid!, tid, m[1]]);
  }
  return out;
}
