/**
 * XSpace record and line vocabulary (emit/xspace.ts): record kinds ({@link R}), stream-line types (T_*), line
 * classes and the XLine ids they get ({@link lineIdFor}), and the well-known stats of xplane_schema.cc ({@link WK})
 * with the ones each record kind carries.
 */

/**
 * Buffered event record, little-endian, 8-byte aligned:
 *   0 u64 start (Unix ns)      8 u64 duration (ns)
 *  16 u32 event metadata id (bits 0..23) | record kind (bits 24..27) | flags (bits 28..31)
 *  20 u32 correlation id (0 = none)
 *  24 u32 context id (device events)
 *  28 u32 detail: kernel_details / memcpy_details / Memset_details stat-metadata id, or the graph id
 * and, only with REC_GRAPH: 32 u32 graph id, 36 u32 0, 40 u64 graph node id.
 */
export const META_MASK: u32 = 0xffffff;

/** Record kinds (bits 24..27 of the record word). */
export const enum R {
  API = 1,
  RANGE = 2,
  INSTANT = 3,
  OVERHEAD = 4,
  KERNEL = 5,
  MEMCPY = 6,
  MEMSET = 7,
  GRAPH = 8,
  SYNC = 9,
  EVENT_RECORD = 10,
  /** A training step's host marker (detail = step number): the root XProf's step grouping starts from. */
  STEP = 11,
  /** A device counter sample (Synapse 'C'; ctx | detail << 32 = the u64 value) on the plane's `_counters_` line. */
  COUNTER = 12,
}

/** Stream-line type bits, named as XLA's GetTraceEventTypeName (in this order in the line name). */
export const T_COMPUTE: u32 = 1;
export const T_H2D: u32 = 2;
export const T_D2H: u32 = 4;
export const T_D2D: u32 = 8;
export const T_P2P: u32 = 16;
export const T_OTHER: u32 = 32;
export const T_MEMSET: u32 = 64;
export const T_GRAPH: u32 = 128;

/**
 * Line classes in the high half of a line's lookup key (the low half is the tid or stream id). The XLine.id written
 * is {@link lineIdFor}: the trace viewer keys rows by the low 32 bits of the id, so the extra lines get ids that
 * differ there (OS tids stay below 2^22 on Linux, CUPTI stream ids are small).
 */
export const LINE_NVTX: u64 = 1 << 32;
export const LINE_SYNC: u64 = 1 << 32;
export const LINE_OVERHEAD: u64 = 2 << 32;
/** Device planes: XProf's counter line (`_counters_`, tsl kCounterEventsLineName): a counter track per event name. */
export const LINE_COUNTERS: u64 = 3 << 32;
const ID_NVTX: u64 = 0x40000000;
const ID_HOST_OVERHEAD: u64 = 0x20000000;
const ID_SYNC: u64 = 0x40000000;
const ID_CONTEXT_SYNC: u64 = 0x7fffffff;
const ID_DEVICE_OVERHEAD: u64 = 0x7ffffffe;
const ID_COUNTERS: u64 = 0x7ffffffd;

/** XLine.id of the line with lookup key `key` on a host (`device` false) or device plane. */
export function lineIdFor(device: bool, key: u64): u64 {
  const low = key & 0xffffffff;
  if (key < LINE_NVTX) return low;
  if (!device) return (key >= LINE_OVERHEAD ? ID_HOST_OVERHEAD : ID_NVTX) | (low & 0x1fffffff);
  if (key >= LINE_COUNTERS) return ID_COUNTERS;
  if (key >= LINE_OVERHEAD) return ID_DEVICE_OVERHEAD;
  return low == 0xffffffff ? ID_CONTEXT_SYNC : ID_SYNC | (low & 0x3fffffff);
}

// ---- Well-known stat names (xplane_schema.cc GetStatTypeStr) --------------------------------------------------

/** Well-known stats, in the order of their ids when a host is merged (1..WK.COUNT). */
export const enum WK {
  CORRELATION_ID = 0,
  DEVICE_ID = 1,
  CONTEXT_ID = 2,
  KERNEL_DETAILS = 3,
  MEMCPY_DETAILS = 4,
  MEMSET_DETAILS = 5,
  OCCUPANCY_PCT = 6,
  OCC_MIN_GRID = 7,
  OCC_BLOCK_SIZE = 8,
  GRAPH_ID = 9,
  GRAPH_NODE_ID = 10,
  GRAPH_EXEC_ID = 11,
  DEVICE_VENDOR = 12,
  GPU_DEVICE_NAME = 13,
  CLOCK_RATE = 14,
  CORE_COUNT = 15,
  MEMORY_BANDWIDTH = 16,
  MEMORY_SIZE = 17,
  CC_MAJOR = 18,
  CC_MINOR = 19,
  NVTX_RANGE = 20,
  IS_ROOT = 21,
  STEP_NUM = 22,
  VALUE = 23,
  // Context links (tsl ContextType + id): how XProf's event grouping joins a step of one rank to the same step of the
  // host's first rank when several ranks share a host file (a joined host merge).
  PRODUCER_TYPE = 24,
  PRODUCER_ID = 25,
  CONSUMER_TYPE = 26,
  CONSUMER_ID = 27,
  COUNT = 28,
}

/** Name of well-known stat `i` (xplane_schema.cc GetStatTypeStr). */
export function wkName(i: i32): string {
  switch (i) {
    case WK.CORRELATION_ID: return "correlation_id";
    case WK.DEVICE_ID: return "device_id";
    case WK.CONTEXT_ID: return "context_id";
    case WK.KERNEL_DETAILS: return "kernel_details";
    case WK.MEMCPY_DETAILS: return "memcpy_details";
    case WK.MEMSET_DETAILS: return "Memset_details";
    case WK.OCCUPANCY_PCT: return "theoretical_occupancy_pct";
    case WK.OCC_MIN_GRID: return "occupancy_min_grid_size";
    case WK.OCC_BLOCK_SIZE: return "occupancy_suggested_block_size";
    case WK.GRAPH_ID: return "cuda_graph_id";
    case WK.GRAPH_NODE_ID: return "cuda_graph_node_id";
    case WK.GRAPH_EXEC_ID: return "cuda_graph_exec_id";
    case WK.DEVICE_VENDOR: return "device_vendor";
    case WK.GPU_DEVICE_NAME: return "gpu_device_name";
    case WK.CLOCK_RATE: return "clock_rate";
    case WK.CORE_COUNT: return "core_count";
    case WK.MEMORY_BANDWIDTH: return "memory_bandwidth";
    case WK.MEMORY_SIZE: return "memory_size";
    case WK.CC_MAJOR: return "compute_cap_major";
    case WK.CC_MINOR: return "compute_cap_minor";
    case WK.NVTX_RANGE: return "nvtx_range";
    case WK.IS_ROOT: return "_r";
    case WK.STEP_NUM: return "step_num";
    case WK.VALUE: return "value";
    case WK.PRODUCER_TYPE: return "_pt";
    case WK.PRODUCER_ID: return "_p";
    case WK.CONSUMER_TYPE: return "_ct";
    case WK.CONSUMER_ID: return "_c";
  }
  return "";
}

/** Stats each record kind carries (bit i = WK i), so their metadata exists before the plane is sized. */
export function kindStats(k: i32): u32 {
  const corrCtx: u32 = (1 << WK.CORRELATION_ID) | (1 << WK.CONTEXT_ID);
  switch (k) {
    case R.API: return 1 << WK.CORRELATION_ID;
    case R.KERNEL:
      return corrCtx | (1 << WK.KERNEL_DETAILS) | (1 << WK.OCCUPANCY_PCT) | (1 << WK.OCC_MIN_GRID) |
        (1 << WK.OCC_BLOCK_SIZE);
    case R.MEMCPY: return corrCtx | (1 << WK.MEMCPY_DETAILS);
    case R.MEMSET: return corrCtx | (1 << WK.MEMSET_DETAILS);
    case R.GRAPH: return corrCtx | (1 << WK.GRAPH_ID) | (1 << WK.GRAPH_EXEC_ID);
    case R.SYNC:
    case R.EVENT_RECORD: return 1 << WK.CONTEXT_ID;
    case R.STEP: return (1 << WK.IS_ROOT) | (1 << WK.STEP_NUM);
    case R.COUNTER: return 1 << WK.VALUE;
  }
  return 0;
}
/**
 * Stats of a step marker in a part of a joined host merge: the producing rank's steps (`producer`: the host's first
 * rank with step markers) are roots that produce (`_pt`, `_p` = the step number), every other rank's steps consume
 * that context (`_ct`, `_c`) instead of being roots of their own, so XProf groups step N of every rank on the host
 * into one step, as it groups one process's launches to several GPUs (without it, it counted each rank's steps one
 * after the other: its first-step drop kept the other ranks' warm-up steps). The step's span is the producing rank's.
 */
export function stepStats(producer: bool): u32 {
  return producer
    ? (1 << WK.IS_ROOT) | (1 << WK.STEP_NUM) | (1 << WK.PRODUCER_TYPE) | (1 << WK.PRODUCER_ID)
    : (1 << WK.STEP_NUM) | (1 << WK.CONSUMER_TYPE) | (1 << WK.CONSUMER_ID);
}

/** tsl ContextType of the step links (kGeneric). */
export const STEP_CONTEXT_TYPE: u64 = 0;

/** Stats of records carrying CUDA-graph ids. */
export const GRAPH_STATS: u32 = (1 << WK.GRAPH_ID) | (1 << WK.GRAPH_NODE_ID);

/** Name of stream-line type `t` (T_*) as XLA writes it in the line name. */
export function typeName(t: u32): string {
  switch (t) {
    case T_COMPUTE: return "Compute";
    case T_H2D: return "MemcpyH2D";
    case T_D2H: return "MemcpyD2H";
    case T_D2D: return "MemcpyD2D";
    case T_P2P: return "MemcpyP2P";
    case T_OTHER: return "MemcpyOther";
    case T_MEMSET: return "Memset";
    case T_GRAPH: return "CudaGraph";
  }
  return "";
}
