/**
 * Output options for multi-file outputs (`rawtrace merge`), set by the host before rt_begin_emit through
 * {@link setOutputOptions} (export `rt_set_output`, assembly/batch.ts) and applied by the emitters:
 *
 * - a fixed time base (Unix ns): every file of a merge on one Chrome `baseTimeNanoseconds` / one XSpace profile
 *   start, so their (already Unix-epoch, anchor-aligned) events share one time axis;
 * - a pid namespace (a rank slot ≥ 0, or -1 for Kineto's own pids): the Chrome emitter writes
 *   pid = slot × {@link NS_STRIDE} + local (host processes 0..98, CUPTI overhead 99, GPU d at 100 + d) and flow
 *   ids = slot × 2^32 + correlation, so ranks never collide in one trace;
 * - a label ("rank 3 (node-a)") that the Chrome emitter puts in front of every process_name;
 * - events-only mode: the Chrome emitter writes only trace events, each as `,\n{...}` (no header, no
 *   "Record Window End", no trailer), so a host can stream file after file into one `traceEvents` array.
 *
 * The host sets every option for every conversion (src/core/engine.ts), so nothing leaks from one file to the next.
 */

/** Pids per namespace slot. */
export const NS_STRIDE: u64 = 1000;
/** Local pid of CUPTI overhead rows inside a slot. */
export const NS_OVERHEAD: u64 = 99;
/** Local pid of GPU 0 inside a slot. */
export const NS_GPU: u64 = 100;

/** Fixed output time base, Unix ns (0 = choose per file). */
export let fixedBaseNs: u64 = 0;
/** Pid namespace slot, or -1 (Kineto pids). */
export let pidNamespace: i32 = -1;
/** Chrome JSON: trace events only, each preceded by ",\n". */
export let eventsOnly = false;
/** Process-name label bytes (owned by the host's rt_alloc block) and length. */
export let labelPtr: usize = 0;
export let labelLen: u32 = 0;

/** Sets every output option at once. */
export function setOutputOptions(baseNs: u64, ns: i32, onlyEvents: bool, lp: usize, ln: u32): void {
  fixedBaseNs = baseNs;
  pidNamespace = ns < 0 ? -1 : ns;
  eventsOnly = onlyEvents;
  labelPtr = lp;
  labelLen = ln;
}
