/**
 * Output options for multi-file outputs (`rawtrace merge`), set by the host before rt_begin_emit through
 * {@link setOutputOptions} (export `rt_set_output`, assembly/batch.ts) and applied by the emitters:
 *
 * - a fixed time base (Unix ns, or {@link NO_BASE}): every file of a merge on one Chrome `baseTimeNanoseconds` / one
 *   XSpace profile start, so their (already Unix-epoch, anchor-aligned) events share one time axis;
 * - a pid namespace (a rank slot ≥ 0, or -1 for Kineto's own pids): the Chrome emitter writes
 *   pid = slot × {@link NS_STRIDE} + local (host processes 0..98, CUPTI overhead 99, GPU d at 100 + d) and flow
 *   ids = slot × 2^32 + correlation, so ranks never collide in one trace;
 * - a label ("rank 3 (node-a)") that the Chrome emitter puts in front of every process_name;
 * - events-only mode: the Chrome emitter writes only trace events, each as `,\n{...}` (no header, no
 *   "Record Window End", no trailer), so a host can stream file after file into one `traceEvents` array.
 *
 * - XSpace host merging (`rawtrace merge --format xspace` with several ranks on one host, {@link setXSpaceHost}):
 *   the ranks' XSpaces are written so that the host can join them into one XSpace per host without touching an
 *   event (src/node/xspace_merge.ts): metadata ids interleaved by rank index, well-known stats at fixed ids,
 *   correlation ids in a per-rank range, device planes numbered by the host's ordinals.
 *
 * The host sets every option for every conversion (src/core/engine.ts), so nothing leaks from one file to the next.
 */

/** Pids per namespace slot. */
export const NS_STRIDE: u64 = 1000;
/** Local pid of CUPTI overhead rows inside a slot. */
export const NS_OVERHEAD: u64 = 99;
/** Local pid of GPU 0 inside a slot. */
export const NS_GPU: u64 = 100;

/**
 * No fixed time base: each file chooses its own. Not 0, which is a time base a merge can have (ranks whose times
 * lie in the first 45 days of 1970 floor to it); no Unix ns time base reaches 2^64 − 1.
 */
export const NO_BASE: u64 = 0xffffffffffffffff;
/** Fixed output time base, Unix ns ({@link NO_BASE} = choose per file). */
export let fixedBaseNs: u64 = NO_BASE;
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

/** XSpace host merge: ranks sharing this file's host (1: not merged). */
export let hostRanks: u32 = 1;
/** XSpace host merge: this file's index among its host's ranks (0 ≤ hostIndex < hostRanks). */
export let hostIndex: u32 = 0;
/**
 * XSpace host merge: this file's step markers are the host's roots, which the other ranks' join (the first rank of
 * the host that has step markers: xspace_encode.ts stepRole).
 */
export let hostStepProducer: bool = true;
/**
 * XSpace host merge: the first ordinal of this file's devices that its device map does not list (a DEVICES chunk lost
 * or damaged, ROCm or XPU devices numbered after the listed ones: UNKNOWN_DEVICE), which are then `unmappedBase + id`:
 * above every GPU of the host and apart from the other ranks' (src/core/merge.ts planXSpaceHosts).
 */
let unmappedBase: u32 = 0;
/** Device map: {local device id u32, host ordinal u32, shared u32} × devMapCount (owned by the host's rt_alloc block). */
let devMapPtr: usize = 0;
let devMapCount: u32 = 0;

/**
 * Sets the XSpace host-merge options: `ranks` on this host (1 = off), this file's `index` among them, whether its
 * step markers are the host's roots (`producer`), the first ordinal of devices its map does not list (`base`), and
 * `n` device map entries at `p` ({local id, host ordinal, shared 0/1} as u32 each).
 */
export function setXSpaceHost(ranks: u32, index: u32, producer: bool, base: u32, p: usize, n: u32): void {
  hostRanks = ranks < 1 ? 1 : ranks;
  hostIndex = index < hostRanks ? index : 0;
  hostStepProducer = producer;
  unmappedBase = base;
  devMapPtr = p;
  devMapCount = n;
}

/** Address of the device-map entry of local device `dev`, or 0 (a short list: searched once per plane). */
function devMapEntry(dev: u32): usize {
  for (let i: u32 = 0; i < devMapCount; i++) {
    const a = devMapPtr + <usize>i * 12;
    if (load<u32>(a) == dev) return a;
  }
  return 0;
}

/**
 * XPlane id (GPU ordinal on the host) of local device `dev`: the map's; else, in a host merge, `unmappedBase + dev`
 * (before 2026-12-03 `dev` itself: another rank's GPU of that ordinal, two GPUs on one plane); else `dev`.
 */
export function deviceOrdinal(dev: u32): u32 {
  const a = devMapEntry(dev);
  return a != 0 ? load<u32>(a, 4) : hostRanks > 1 ? unmappedBase + dev : dev;
}

/** Whether the plane of local device `dev` is shared with other ranks of the host (unmapped devices: when merging). */
export function deviceShared(dev: u32): bool {
  const a = devMapEntry(dev);
  return a != 0 ? load<u32>(a, 8) != 0 : hostRanks > 1;
}
