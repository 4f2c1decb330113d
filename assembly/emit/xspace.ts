/**
 * XSpace/XPlane protobuf (proto/xplane.proto, package tensorflow.profiler), laid out the way XLA's GPU tracer and
 * session post-processing write it, so XProf and the TensorBoard profile plugin render it (trace viewer, kernel
 * stats, overview). Layout, names and stat types: docs/xspace.md (from ../shared/reference/xspace-xplane.md).
 *
 *  - `/host:CPU` (id 0): one line per OS thread (line id = tid) with the vendor API calls; NVTX ranges on a
 *    line of their own per thread (id = 2^30 + tid, so partially overlapping start/end ranges never break the
 *    API line's nesting); thread-level tracing overhead of every thread on one `CUPTI overhead` line (id 2^29).
 *  - `/device:GPU:<n>` (XPlane.id = n) per device that has events: one line per stream (line id = stream id) named
 *    `Stream #<id>(<types>)`; syncs and event records on `Synchronization` lines (id 2^30 + stream, 2^31 - 1 for
 *    context-wide); device-level overhead on `CUPTI overhead` (id 2^31 - 2). Device capabilities as plane stats.
 *  - `/host:metadata` (CUDA/CUPTI versions) and `Task Environment` (profile_start_time, profile_stop_time).
 *  - XSpace.hostnames, XSpace.warnings (dropped records, decode warnings), XSpace.errors (data-loss diagnostics).
 *
 * Protobuf needs every length before its content and XLines group events by row, so pass 2 only buffers: each
 * event becomes a compact record (32 bytes, 48 with CUDA-graph ids; no names, see {@link REC_BASE}) appended to its
 * line's chunk list, with event metadata (names) and ref-valued stat strings (kernel_details, memcpy_details,
 * Memset_details) de-duplicated per plane as they arrive. At the end ({@link xspaceEnd}) each plane's exact size
 * is computed from the records, then the plane is written straight into the output window (emit/out.ts): one pass
 * to size, one to write, no object per event and no second copy of the file.
 *
 * Time: the profile start is the earliest of the collector start (HEADER) and the first event; every line's
 * timestamp_ns is its first event's start relative to the profile start (ns), and offsets/durations are in ps.
 *
 * Host merging (emit/options.ts setXSpaceHost: rank k of R on one host): the file is one part of its host's XSpace,
 * written so that src/node/xspace_merge.ts can join the parts' planes field by field without decoding an event:
 * event metadata id i is written as (i - 1) × R + k + 1 and stat metadata beyond the well-known ones likewise
 * ({@link evOut}, {@link stOut}), the well-known stats sit at ids 1..WK.COUNT in every plane (so `correlation_id`
 * has one id per merged plane, which XProf's flow linking needs), correlation ids are k × 2^32 + id (XProf hashes
 * the 64-bit value into flow ids), device planes take the host's GPU ordinals, and row labels and diagnostics say
 * which rank they belong to.
 */
import { Paged, pagedNew, pagedSlot } from "../util/paged";
import { Ev, EvKind, EvFlag } from "../model/event";
import * as S from "../model/session";
import * as O from "./out";
import { Wire, varintSize, putVarint, putTag, putVarintField, putDoubleField, putLenPrefix, putBytesField } from "./protobuf";
import { Table, tableNew, tableUpsert, tableFind, inserted } from "../util/hash_table";
import { arenaAlloc } from "../util/arena";
import { WARN_COUNT, Warn, Fatal } from "../util/error";
import { fail, warningCount, warningOffset, warningDetail, lossTotal, lossRange, NO_SEQ } from "../util/diag";
import { warnName } from "../util/error_names";
import {
  REC_BASE, REC_GRAPH_EXTRA, REC_GRAPH, RUN_BYTES, RunList, recSize, sortIndex, spillRun, spillReset, runIter, runNext,
  runIterReserve, spillAt, regrow, runLoad, runBytes,
} from "./xspace_spill";
import { xspaceMaxBytes } from "./xspace_limit";
import { fedBytes } from "../format/container";
import { fixedBaseNs, labelPtr, labelLen, hostRanks, hostIndex, deviceOrdinal, deviceShared } from "./options";

// ---- Records ---------------------------------------------------------------------------------------------------

/**
 * Buffered event record, little-endian, 8-byte aligned:
 *   0 u64 start (Unix ns)      8 u64 duration (ns)
 *  16 u32 event metadata id (bits 0..23) | record kind (bits 24..27) | flags (bits 28..31)
 *  20 u32 correlation id (0 = none)
 *  24 u32 context id (device events)
 *  28 u32 detail: kernel_details / memcpy_details / Memset_details stat-metadata id, or the graph id
 * and, only with REC_GRAPH: 32 u32 graph id, 36 u32 0, 40 u64 graph node id.
 */
const META_MASK: u32 = 0xffffff;

const enum R {
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
const T_COMPUTE: u32 = 1;
const T_H2D: u32 = 2;
const T_D2H: u32 = 4;
const T_D2D: u32 = 8;
const T_P2P: u32 = 16;
const T_OTHER: u32 = 32;
const T_MEMSET: u32 = 64;
const T_GRAPH: u32 = 128;

/**
 * Line classes in the high half of a line's lookup key (the low half is the tid or stream id). The XLine.id written
 * is {@link lineIdFor}: the trace viewer keys rows by the low 32 bits of the id, so the extra lines get ids that
 * differ there (OS tids stay below 2^22 on Linux, CUPTI stream ids are small).
 */
const LINE_NVTX: u64 = 1 << 32;
const LINE_SYNC: u64 = 1 << 32;
const LINE_OVERHEAD: u64 = 2 << 32;
/** Device planes: XProf's counter line (`_counters_`, tsl kCounterEventsLineName): a counter track per event name. */
const LINE_COUNTERS: u64 = 3 << 32;
const ID_NVTX: u64 = 0x40000000;
const ID_HOST_OVERHEAD: u64 = 0x20000000;
const ID_SYNC: u64 = 0x40000000;
const ID_CONTEXT_SYNC: u64 = 0x7fffffff;
const ID_DEVICE_OVERHEAD: u64 = 0x7ffffffe;
const ID_COUNTERS: u64 = 0x7ffffffd;

/** XLine.id of the line with lookup key `key` on a host (`device` false) or device plane. */
function lineIdFor(device: bool, key: u64): u64 {
  const low = key & 0xffffffff;
  if (key < LINE_NVTX) return low;
  if (!device) return (key >= LINE_OVERHEAD ? ID_HOST_OVERHEAD : ID_NVTX) | (low & 0x1fffffff);
  if (key >= LINE_COUNTERS) return ID_COUNTERS;
  if (key >= LINE_OVERHEAD) return ID_DEVICE_OVERHEAD;
  return low == 0xffffffff ? ID_CONTEXT_SYNC : ID_SYNC | (low & 0x3fffffff);
}

// ---- Well-known stat names (xplane_schema.cc GetStatTypeStr) --------------------------------------------------

const enum WK {
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
  COUNT = 24,
}

function wkName(i: i32): string {
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
  }
  return "";
}

/** Stats each record kind carries (bit i = WK i), so their metadata exists before the plane is sized. */
function kindStats(k: i32): u32 {
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
    case R.EVENT_RECORD: return corrCtx;
    case R.STEP: return (1 << WK.IS_ROOT) | (1 << WK.STEP_NUM);
    case R.COUNTER: return 1 << WK.VALUE;
  }
  return 0;
}
const GRAPH_STATS: u32 = (1 << WK.GRAPH_ID) | (1 << WK.GRAPH_NODE_ID);

// ---- Planes and lines ------------------------------------------------------------------------------------------

@unmanaged
class Plane {
  id: u64;
  /** 0 host threads, 1 device, 2 stats-only (metadata, task environment). */
  kind: u32;
  /** Session device entry (DEV_ENTRY), or 0. */
  dev: usize;
  /** Device id in the dump (device planes; XPlane.id is the host ordinal when merging). */
  local: u32;
  nameP: usize;
  nameN: u32;
  lines: Table;
  lineList: usize;
  lineCount: u32;
  lineCap: u32;
  /** Fast event-metadata lookup by source key (name pointer, API id, memcpy type…) → id. */
  evCache: Table;
  /** Event metadata: {nameP u32, nameN u32, dispP u32, dispN u32}. */
  ev: MetaList;
  /** Stat metadata: {nameP u32, nameN u32, aux u32 (kernel occupancy entry), 0}. */
  st: MetaList;
  /** Detail tuple hash → chain of {next u32, statId u32, words…} (kernel_details, memcpy/memset details). */
  tuples: Table;
  /** Well-known stat ids (WK.COUNT u32, 0 = not created). */
  wk: usize;
  /** Bit i: well-known stat i is used by some event. */
  used: u32;
  /** Plane stats: {statId u32, type u32 (0 str, 1 int64, 2 uint64), value u64 or ptr, len u32, 0}. */
  pstats: usize;
  pstatCount: u32;
  /** Position in planeList (device planes). */
  index: u32;
  /** nvtx_range stat id by host-plane event metadata id of the range (u32 each), or 0 when no launch had one. */
  nvtxMap: usize;
  lastKey: u64;
  lastLine: usize;
  size: u64;
}
const PSTAT: usize = 24;
const MAX_PSTATS: u32 = 16;

/** A plane's event or stat metadata: 16-byte entries by id-1 (ids from 1), names unique per list. */
@unmanaged
class MetaList {
  /** 1: stat metadata (ids written through {@link stOut}), 0: event metadata ({@link evOut}). */
  isStat: u32;
  /** Name hash → chain of {next u32, id u32}. */
  content: Table;
  list: usize;
  count: u32;
  cap: u32;
  /** Hash seed of the names. */
  seed: u64;
}

/** Entry `id` of `m`. */
// @ts-ignore: decorator
@inline function metaAt(m: MetaList, id: u32): usize {
  return m.list + (<usize>(id - 1) << 4);
}

@unmanaged
class Line {
  /** Lookup key: class (LINE_*) << 32 | tid or stream. */
  key: u64;
  /** XLine.id. */
  id: u64;
  head: usize;
  tail: usize;
  count: u32;
  kinds: u32;
  pid: u32;
  unsorted: u32;
  lastStart: u64;
  lastDur: u64;
  minStart: u64;
  bytes: u64;
  nameP: usize;
  nameN: u32;
  dispP: usize;
  dispN: u32;
  size: u64;
  /** Spilled runs (emit/xspace_spill.ts RunList: list, count, capacity; in this order). */
  runList: usize;
  runCount: u32;
  runCap: u32;
  /** The records in memory (since the last spill) arrived out of start order. */
  chunkUnsorted: u32;
}

/** The spilled runs of `ln`. */
// @ts-ignore: decorator
@inline function runsOf(ln: Line): RunList {
  return changetype<RunList>(changetype<usize>(ln) + offsetof<Line>("runList"));
}

/** Chunk of a line's records: {next u32, used u32, cap u32, 0} then `cap` bytes. */
const CHUNK_HEAD: usize = 16;
const CHUNK_FIRST: u32 = 1024;
const CHUNK_MAX: u32 = RUN_BYTES;

let hostPlane: Plane = changetype<Plane>(0);
let devPlanes: Table = 0; // device id → Plane
let planeList: usize = 0; // device planes in creation order
let planeCount: u32 = 0;
const MAX_PLANES: u32 = 256;
let lastDev: u32 = 0xffffffff;
let lastDevPlane: Plane = changetype<Plane>(0);

let minStart: u64 = 0;
let maxEnd: u64 = 0;
let hostEvents: u64 = 0;
let deviceEvents: u64 = 0;
let profileStart: u64 = 0;
let profileStop: u64 = 0;

// correlation id → device plane index + 1 (one byte per id, pages of 64 Ki ids allocated on first use; util/paged.ts)
let corrPlane: Paged = 0;
const CORR_PAGE_BITS: u32 = 16;
// At most 1024 pages (64 Mi ids): 64 MiB for the u8 map, 256 MiB for the u32 NVTX map, whatever crafted sparse ids
// a dump holds.
const CORR_MAX_PAGES: u32 = 1024;
let corrAny = false;

// ---- Byte helpers ------------------------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function hashMix(h: u64, v: u64): u64 {
  h ^= v;
  h *= 0x9e3779b97f4a7c15;
  return h ^ (h >> 29);
}

function hashBytes(p: usize, n: u32, seed: u64): u64 {
  let h = seed ^ (<u64>n * 0xff51afd7ed558ccd);
  let i: u32 = 0;
  while (i + 8 <= n) {
    h = hashMix(h, load<u64>(p + i));
    i += 8;
  }
  let t: u64 = 0;
  let s: u64 = 0;
  while (i < n) {
    t |= <u64>load<u8>(p + i) << s;
    s += 8;
    i++;
  }
  h = hashMix(h, t);
  // The table cannot store the all-ones key.
  return h == 0xffffffffffffffff ? 0 : h;
}

function bytesEq(a: usize, an: u32, b: usize, bn: u32): bool {
  return an == bn && (an == 0 || memory.compare(a, b, an) == 0);
}

/** Copies an ASCII AS string into the arena; returns the address (length = s.length). */
function asciiCopy(s: string): usize {
  const n = s.length;
  const p = arenaAlloc(n > 0 ? <usize>n : 1);
  for (let i = 0; i < n; i++) store<u8>(p + i, <u8>s.charCodeAt(i));
  return p;
}

// Scratch builder for names and detail strings: bStart, then appends, then bP/bN.
let bP: usize = 0;
let bN: u32 = 0;
let bCap: u32 = 0;

function bReserve(n: u32): void {
  if (bN + n <= bCap) return;
  let cap = bCap < 256 ? <u32>256 : bCap;
  while (cap < bN + n) cap <<= 1;
  const q = arenaAlloc(cap);
  if (bN != 0) memory.copy(q, bP, bN);
  bP = q;
  bCap = cap;
}
function bStart(): void {
  bN = 0;
}
/** Copies what was built into the arena; returns the address (length bN). */
function bKeep(): usize {
  const p = arenaAlloc(bN);
  memory.copy(p, bP, bN);
  return p;
}
function bAscii(s: string): void {
  const n = <u32>s.length;
  bReserve(n);
  for (let i: u32 = 0; i < n; i++) store<u8>(bP + bN + i, <u8>s.charCodeAt(i));
  bN += n;
}
function bBytes(p: usize, n: u32): void {
  bReserve(n);
  memory.copy(bP + bN, p, n);
  bN += n;
}
function bU64(v: u64): void {
  bReserve(20);
  let n: u32 = 1;
  let t = v;
  while (t >= 10) {
    t /= 10;
    n++;
  }
  for (let i: u32 = 0; i < n; i++) {
    store<u8>(bP + bN + n - 1 - i, <u8>(48 + v % 10));
    v /= 10;
  }
  bN += n;
}
/** `label`x,y,z (kernel grid and block sizes). */
function bDim3(label: string, x: u32, y: u32, z: u32): void {
  bAscii(label);
  bU64(x);
  bAscii(",");
  bU64(y);
  bAscii(",");
  bU64(z);
}
function bI64(v: i64): void {
  if (v < 0) {
    bAscii("-");
    bU64(<u64>-v);
  } else bU64(<u64>v);
}
/** printf("%g") for 0 ≤ v < 1e6 (occupancy percentages): 6 significant digits, trailing zeros trimmed. */
function bPercentG(v: f64): void {
  if (!(v > 0) || !isFinite(v)) {
    bAscii("0");
    return;
  }
  if (v >= 1e6) v = 999999;
  let e = <i32>Math.floor(Math.log10(v));
  let r = <u64>Math.round(v * Math.pow(10, <f64>(5 - e)));
  if (r >= 1000000) {
    e++;
    r = <u64>Math.round(v * Math.pow(10, <f64>(5 - e)));
  }
  if (r < 100000) {
    e--;
    r = <u64>Math.round(v * Math.pow(10, <f64>(5 - e)));
  }
  // r has 6 digits d0..d5; value = d0.d1d2d3d4d5 × 10^e.
  bReserve(16);
  const digits = bP + bN + 8; // build the 6 digits past the output position, then copy
  let t = r;
  for (let i = 5; i >= 0; i--) {
    store<u8>(digits + i, <u8>(48 + t % 10));
    t /= 10;
  }
  let last = 5;
  while (last > 0 && load<u8>(digits + last) == 48 && last > e) last--;
  const out = bP + bN;
  let k: u32 = 0;
  if (e >= 0) {
    for (let i = 0; i <= e; i++) store<u8>(out + k++, load<u8>(digits + i));
    if (last > e) {
      const tmp = arenaAlloc(8);
      memory.copy(tmp, digits + e + 1, <usize>(last - e));
      store<u8>(out + k++, 46);
      memory.copy(out + k, tmp, <usize>(last - e));
      k += <u32>(last - e);
    }
  } else {
    const tmp = arenaAlloc(8);
    memory.copy(tmp, digits, <usize>(last + 1));
    store<u8>(out + k++, 48);
    store<u8>(out + k++, 46);
    for (let i = 0; i < -e - 1; i++) store<u8>(out + k++, 48);
    memory.copy(out + k, tmp, <usize>(last + 1));
    k += <u32>(last + 1);
  }
  bN += k;
}

// ---- Planes ------------------------------------------------------------------------------------------------------

function newPlane(kind: u32, id: u64): Plane {
  const pl = changetype<Plane>(heap.alloc(offsetof<Plane>()));
  memory.fill(changetype<usize>(pl), 0, offsetof<Plane>());
  pl.kind = kind;
  pl.id = id;
  pl.lines = tableNew(16);
  pl.lineCap = 16;
  pl.lineList = heap.alloc(<usize>pl.lineCap << 2);
  pl.evCache = tableNew(64);
  pl.ev = newMetaList(0x51, 0);
  pl.st = newMetaList(0x57, 1);
  pl.tuples = tableNew(64);
  pl.wk = heap.alloc(<usize>WK.COUNT << 2);
  memory.fill(pl.wk, 0, <usize>WK.COUNT << 2);
  pl.pstats = heap.alloc(<usize>MAX_PSTATS * PSTAT);
  pl.lastKey = 0xffffffffffffffff;
  // A part of a host merge: the well-known stats first, at ids 1..WK.COUNT in every rank's plane.
  if (hostRanks > 1 && kind != 2) for (let w = 0; w < WK.COUNT; w++) wkId(pl, w);
  return pl;
}

function newMetaList(seed: u64, isStat: u32): MetaList {
  const m = changetype<MetaList>(heap.alloc(offsetof<MetaList>()));
  m.isStat = isStat;
  m.content = tableNew(64);
  m.cap = 64;
  m.list = heap.alloc(<usize>m.cap << 4);
  m.count = 0;
  m.seed = seed;
  return m;
}

function setPlaneName(pl: Plane, s: string): void {
  pl.nameP = asciiCopy(s);
  pl.nameN = s.length;
}

/** The plane of device `dev`, created on first use. */
function devPlane(dev: u32): Plane {
  // lastDevPlane 0: nothing cached yet (the id 0xFFFFFFFF is a valid, if crafted, device id).
  if (dev == lastDev && changetype<usize>(lastDevPlane) != 0) return lastDevPlane;
  const slot = tableUpsert(devPlanes, dev);
  let pl: Plane;
  if (inserted) {
    if (planeCount >= MAX_PLANES) {
      // Beyond 256 devices everything shares the last plane (the session keeps at most 256 devices too).
      pl = changetype<Plane>(load<usize>(planeList + ((<usize>MAX_PLANES - 1) << 2)));
    } else {
      pl = newPlane(1, deviceOrdinal(dev));
      pl.dev = S.findDevice(dev);
      pl.local = dev;
      bStart();
      bAscii("/device:GPU:");
      bU64(pl.id);
      pl.nameP = bKeep();
      pl.nameN = bN;
      pl.index = planeCount;
      store<usize>(planeList + (<usize>planeCount << 2), changetype<usize>(pl));
      planeCount++;
    }
    store<u64>(slot, changetype<usize>(pl));
  } else pl = changetype<Plane>(<usize>load<u64>(slot));
  lastDev = dev;
  lastDevPlane = pl;
  return pl;
}

function getLine(pl: Plane, key: u64): Line {
  if (key == pl.lastKey) return changetype<Line>(pl.lastLine);
  const slot = tableUpsert(pl.lines, key);
  let ln: Line;
  if (inserted) {
    ln = changetype<Line>(heap.alloc(offsetof<Line>()));
    memory.fill(changetype<usize>(ln), 0, offsetof<Line>());
    ln.key = key;
    ln.id = lineIdFor(pl.kind != 0, key);
    ln.minStart = 0xffffffffffffffff;
    store<u64>(slot, changetype<usize>(ln));
    if (pl.lineCount == pl.lineCap) {
      const list = heap.alloc(<usize>pl.lineCap << 3);
      memory.copy(list, pl.lineList, <usize>pl.lineCap << 2);
      pl.lineList = list;
      pl.lineCap <<= 1;
    }
    store<usize>(pl.lineList + (<usize>pl.lineCount << 2), changetype<usize>(ln));
    pl.lineCount++;
  } else ln = changetype<Line>(<usize>load<u64>(slot));
  pl.lastKey = key;
  pl.lastLine = changetype<usize>(ln);
  return ln;
}

/**
 * Hands every record of `ln` held in memory to the spill storage (emit/xspace_spill.ts), one run per chunk, and
 * keeps its last chunk, emptied, as its only one.
 */
function spillLine(ln: Line): void {
  const sorted = ln.chunkUnsorted == 0;
  let c = ln.head;
  while (c != 0) {
    spillRun(runsOf(ln), c + CHUNK_HEAD, load<u32>(c, 4), sorted);
    c = <usize>load<u32>(c);
  }
  const t = ln.tail;
  store<u32>(t, 0);
  store<u32>(t, 0, 4);
  ln.head = t;
  ln.chunkUnsorted = 0;
}

/** Reserves `n` record bytes at the end of line `ln`; returns their address. */
function lineAppend(ln: Line, n: u32): usize {
  let t = ln.tail;
  if (t == 0 || load<u32>(t, 4) + n > load<u32>(t, 8)) {
    if (t != 0 && load<u32>(t, 8) >= spillAt) {
      // A full largest chunk: the line's records go to the spill storage, so memory stays flat.
      spillLine(ln);
    } else {
      let cap = t == 0 ? CHUNK_FIRST : load<u32>(t, 8) << 1;
      if (cap > CHUNK_MAX) cap = CHUNK_MAX;
      if (cap < n) cap = n;
      const c = heap.alloc(CHUNK_HEAD + <usize>cap);
      store<u32>(c, 0);
      store<u32>(c, 0, 4);
      store<u32>(c, cap, 8);
      if (t == 0) ln.head = c;
      else store<u32>(t, <u32>c);
      ln.tail = c;
      t = c;
    }
  }
  const used = load<u32>(t, 4);
  store<u32>(t, used + n, 4);
  ln.bytes += n;
  ln.count++;
  return t + CHUNK_HEAD + used;
}

// ---- Metadata ----------------------------------------------------------------------------------------------------

/**
 * Id of the entry named [p, p+n) in `m`, created on first use with display name [dp, dp+dn) (dn = 0: none). Names
 * are unique per plane, as XPlaneBuilder keeps them (and stat refs share the stat names).
 */
function metaIntern(m: MetaList, p: usize, n: u32, dp: usize, dn: u32): u32 {
  const h = hashBytes(p, n, m.seed);
  const slot = tableUpsert(m.content, h);
  let c = <usize>load<u64>(slot);
  while (c != 0) {
    const id = load<u32>(c, 4);
    const e = metaAt(m, id);
    if (bytesEq(<usize>load<u32>(e), load<u32>(e, 4), p, n)) return id;
    c = <usize>load<u32>(c);
  }
  if (m.count == m.cap) {
    const list = heap.alloc(<usize>m.cap << 5);
    memory.copy(list, m.list, <usize>m.cap << 4);
    m.list = list;
    m.cap <<= 1;
  }
  m.count++;
  const id = m.count;
  const e = metaAt(m, id);
  const q = arenaAlloc(n > 0 ? <usize>n : 1);
  memory.copy(q, p, n);
  store<u32>(e, <u32>q);
  store<u32>(e, n, 4);
  if (dn != 0) {
    const dq = arenaAlloc(dn);
    memory.copy(dq, dp, dn);
    store<u32>(e, <u32>dq, 8);
  } else store<u32>(e, 0, 8);
  store<u32>(e, dn, 12);
  const link = arenaAlloc(8);
  store<u32>(link, <u32>load<u64>(slot));
  store<u32>(link, id, 4);
  store<u64>(slot, link);
  return id;
}

/** Event metadata id of (name, display) in `pl`, created on first use. */
// @ts-ignore: decorator
@inline function evIntern(pl: Plane, p: usize, n: u32, dp: usize, dn: u32): u32 {
  return metaIntern(pl.ev, p, n, dp, dn);
}

/** Stat metadata id whose name is [p, p+n) in `pl`, created on first use. */
// @ts-ignore: decorator
@inline function stIntern(pl: Plane, p: usize, n: u32): u32 {
  return metaIntern(pl.st, p, n, 0, 0);
}

/** Id of well-known stat `w` in `pl` (created on first use). */
function wkId(pl: Plane, w: i32): u32 {
  const a = pl.wk + (<usize>w << 2);
  let id = load<u32>(a);
  if (id == 0) {
    const s = wkName(w);
    id = stIntern(pl, asciiCopy(s), s.length);
    store<u32>(a, id);
  }
  return id;
}

// Detail tuples: up to 12 u32 words staged here, looked up per event without building the string.
const tup = memory.data(48);
let tupN: u32 = 0;

// @ts-ignore: decorator
@inline function tupSet(i: u32, v: u32): void {
  store<u32>(tup + (<usize>i << 2), v);
}
/** Words i and i+1: the low and high halves of v. */
// @ts-ignore: decorator
@inline function tupSet64(i: u32, v: u64): void {
  tupSet(i, <u32>v);
  tupSet(i + 1, <u32>(v >> 32));
}

/**
 * Stat id recorded for the staged tuple (tag, tup[0..tupN)), or 0 with the builder started: then build the details
 * string and {@link tupleAdd} it.
 */
let tupSlot: usize = 0;
function tupleFind(pl: Plane, tag: u32): u32 {
  let h: u64 = <u64>tag * 0x9e3779b97f4a7c15;
  for (let i: u32 = 0; i < tupN; i++) h = hashMix(h, <u64>load<u32>(tup + (<usize>i << 2)));
  if (h == 0xffffffffffffffff) h = 0;
  tupSlot = tableUpsert(pl.tuples, h);
  let c = <usize>load<u64>(tupSlot);
  const bytes = <usize>tupN << 2;
  while (c != 0) {
    if (load<u32>(c, 8) == tag && memory.compare(c + 12, tup, bytes) == 0) return load<u32>(c, 4);
    c = <usize>load<u32>(c);
  }
  bStart();
  return 0;
}
/** After a {@link tupleFind} miss: interns the built string (bP, bN) as the tuple's stat; returns its id. */
function tupleAdd(pl: Plane, tag: u32): u32 {
  const statId = stIntern(pl, bP, bN);
  const bytes = <usize>tupN << 2;
  const c = arenaAlloc(12 + bytes);
  store<u32>(c, <u32>load<u64>(tupSlot));
  store<u32>(c, statId, 4);
  store<u32>(c, tag, 8);
  memory.copy(c + 12, tup, bytes);
  store<u64>(tupSlot, c);
  return statId;
}

// ---- Kernel occupancy (cudaOccMaxActiveBlocksPerMultiprocessor, cudaOccMaxPotentialOccupancyBlockSize) -----------

/**
 * Plausibility limits of the device-table fields the occupancy calculation uses. Real GPUs are far inside them
 * (warp 32 or 64, ≤ 1024 threads per block, ≤ 2048 per SM, ≤ 256 SMs); a damaged or crafted table beyond them gets
 * no occupancy (all three stats 0, `occ_pct:0`), so no arithmetic below can divide by zero, overflow or loop long.
 */
const OCC_MAX_WARP: u32 = 1024;
const OCC_MAX_THREADS_PER_BLOCK: u32 = 1 << 16;
const OCC_MAX_THREADS_PER_SM: u32 = 1 << 20;
const OCC_MAX_SMS: u32 = 1 << 16;
/** Most block sizes (multiples of the warp size) tried for the suggested block size. */
const OCC_MAX_BLOCK_SIZES: u32 = 1024;

/** Whether device entry `d` holds what the occupancy calculation needs, within {@link OCC_MAX_WARP} & co. */
export function occPlausible(d: usize): bool {
  if (d == 0) return false;
  const warp = load<u32>(d, 52);
  const maxThreadsBlock = load<u32>(d, 36);
  const maxThreadsSM = load<u32>(d, 40);
  return load<u32>(d, 28) != 0 && warp != 0 && warp <= OCC_MAX_WARP &&
    maxThreadsSM != 0 && maxThreadsSM <= OCC_MAX_THREADS_PER_SM &&
    maxThreadsBlock != 0 && maxThreadsBlock <= OCC_MAX_THREADS_PER_BLOCK &&
    maxThreadsBlock / warp <= OCC_MAX_BLOCK_SIZES && load<u32>(d, 4) <= OCC_MAX_SMS;
}

/**
 * Active blocks per SM of a launch (≤ max threads per SM / block size), or 0 when the launch does not fit. `d`
 * must pass {@link occPlausible}; products are taken in 64 bits.
 */
export function activeBlocks(d: usize, regs: u32, staticSmem: u32, dynSmem: u32, block: u32): u32 {
  const warp = <u64>load<u32>(d, 52);
  const maxThreadsSM = <u64>load<u32>(d, 40);
  const maxThreadsBlock = load<u32>(d, 36);
  if (block == 0 || block > maxThreadsBlock) return 0;
  const major = load<u32>(d, 28);
  const warpsPerBlock = (<u64>block + warp - 1) / warp; // ≥ 1
  let limit = (maxThreadsSM / warp) / warpsPerBlock;
  let maxBlocks = <u64>load<u32>(d, 68);
  if (maxBlocks == 0) maxBlocks = major >= 9 || (major == 8 && load<u32>(d, 32) == 0) ? 32 : 16;
  if (maxBlocks < limit) limit = maxBlocks;
  // Registers: allocated per warp in units of 256, from 4 sub-partitions of the SM's register file.
  if (regs > 0) {
    if (regs > 255) return 0;
    const regsPerWarp = ((<u64>regs * warp + 255) / 256) * 256; // ≥ 256
    const regsPerBlock = <u64>load<u32>(d, 44);
    if (regsPerBlock != 0 && regsPerWarp * warpsPerBlock > regsPerBlock) return 0;
    const regsSM = <u64>load<u32>(d, 48);
    if (regsSM != 0) {
      const warpsSM = ((regsSM / 4) / regsPerWarp) * 4;
      const byRegs = warpsSM / warpsPerBlock;
      if (byRegs < limit) limit = byRegs;
    }
  }
  // Shared memory: static + dynamic + the per-block system reservation (1 KiB from compute capability 8.0), in
  // allocation units of 128 B (8.0+) or 256 B.
  const perBlockMax = dynSmem > load<u32>(d, 56) && load<u32>(d, 64) != 0 ? load<u32>(d, 64) : load<u32>(d, 56);
  const smem = <u64>staticSmem + <u64>dynSmem;
  if (perBlockMax != 0 && smem > <u64>perBlockMax) return 0;
  const reserved: u64 = major >= 8 ? 1024 : 0;
  const gran: u64 = major >= 8 ? 128 : 256;
  const smemSM = <u64>load<u32>(d, 60);
  if (smem + reserved > 0 && smemSM != 0) {
    const per = ((smem + reserved + gran - 1) / gran) * gran;
    const bySmem = smemSM / per;
    if (bySmem < limit) limit = bySmem;
  }
  return <u32>limit;
}

/**
 * Occupancy entry: {pct f64, minGridSize i32, suggestedBlockSize i32}; all 0 when the device table lacks a field
 * the calculation needs or holds implausible values ({@link occPlausible}).
 */
function occupancy(d: usize, regs: u32, staticSmem: u32, dynSmem: u32, block: u32): usize {
  const o = arenaAlloc(16);
  store<f64>(o, 0);
  store<i32>(o, 0, 8);
  store<i32>(o, 0, 12);
  if (!occPlausible(d)) return o;
  const maxThreadsSM = <u64>load<u32>(d, 40);
  const active = activeBlocks(d, regs, staticSmem, dynSmem, block);
  store<f64>(o, <f64>active * <f64>block * 100.0 / <f64>maxThreadsSM);
  // Best block size: the largest multiple of the warp size with the most resident threads.
  const warp = load<u32>(d, 52);
  let best: u32 = 0;
  let bestBlocks: u64 = 0;
  let bestThreads: u64 = 0;
  let b = (load<u32>(d, 36) / warp) * warp;
  while (b > 0) {
    const blocks = <u64>activeBlocks(d, regs, staticSmem, dynSmem, b);
    if (blocks * b > bestThreads) {
      bestThreads = blocks * b;
      best = b;
      bestBlocks = blocks;
    }
    if (bestThreads == maxThreadsSM) break;
    b -= warp;
  }
  // ≤ 2^20 blocks per SM × ≤ 2^16 SMs: clamped to the i32 the entry holds.
  const grid = bestBlocks * <u64>load<u32>(d, 4);
  store<i32>(o, grid > 0x7fffffff ? 0x7fffffff : <i32>grid, 8);
  store<i32>(o, <i32>best, 12);
  return o;
}

/** Stat id of the kernel_details string of `e` on `pl` (computed once per distinct launch shape). */
function kernelDetails(pl: Plane, e: Ev): u32 {
  tupN = 9;
  tupSet(0, e.registersPerThread);
  tupSet(1, e.staticSharedMemory);
  tupSet(2, e.dynamicSharedMemory);
  tupSet(3, <u32>e.gridX);
  tupSet(4, <u32>e.gridY);
  tupSet(5, <u32>e.gridZ);
  tupSet(6, <u32>e.blockX);
  tupSet(7, <u32>e.blockY);
  tupSet(8, <u32>e.blockZ);
  let id = tupleFind(pl, 1);
  if (id != 0) return id;
  const block = <u64>(<u32>e.blockX) * <u64>(<u32>e.blockY) * <u64>(<u32>e.blockZ);
  const occ = occupancy(pl.dev, e.registersPerThread, e.staticSharedMemory, e.dynamicSharedMemory,
    block > 0xffffffff ? 0xffffffff : <u32>block);
  // ToXStat in XLA's cupti_buffer_events.h: "regs:%u static_shared:%u dynamic_shared:%u grid:%u,%u,%u
  // block:%u,%u,%u occ_pct:%g".
  bAscii("regs:");
  bU64(e.registersPerThread);
  bAscii(" static_shared:");
  bU64(e.staticSharedMemory);
  bAscii(" dynamic_shared:");
  bU64(e.dynamicSharedMemory);
  bDim3(" grid:", <u32>e.gridX, <u32>e.gridY, <u32>e.gridZ);
  bDim3(" block:", <u32>e.blockX, <u32>e.blockY, <u32>e.blockZ);
  bAscii(" occ_pct:");
  bPercentG(load<f64>(occ));
  id = tupleAdd(pl, 1);
  store<u32>(metaAt(pl.st, id), <u32>occ, 8);
  return id;
}

/** XLA's GetMemoryKindName. */
function memKindName(k: u32): string {
  switch (k) {
    case 1: return "pageable";
    case 2: return "pinned";
    case 3: return "device";
    case 4: return "array";
    case 5: return "managed";
    case 6: return "device_static";
    case 7: return "managed_static";
  }
  return "unknown";
}

function memcpyDetails(pl: Plane, e: Ev, dest: u32, isAsync: u32): u32 {
  tupN = 6;
  tupSet(0, e.srcKind);
  tupSet(1, e.dstKind);
  tupSet64(2, e.bytes);
  tupSet(4, dest);
  tupSet(5, isAsync);
  const id = tupleFind(pl, 2);
  if (id != 0) return id;
  bAscii("kind_src:");
  bAscii(memKindName(e.srcKind));
  bAscii(" kind_dst:");
  bAscii(memKindName(e.dstKind));
  bAscii(" size:");
  bU64(e.bytes);
  bAscii(" dest:");
  bU64(dest);
  bAscii(" async:");
  bU64(isAsync);
  return tupleAdd(pl, 2);
}

function memsetDetails(pl: Plane, e: Ev, isAsync: u32): u32 {
  tupN = 4;
  tupSet(0, e.dstKind);
  tupSet64(1, e.bytes);
  tupSet(3, isAsync);
  const id = tupleFind(pl, 3);
  if (id != 0) return id;
  bAscii("kind:");
  bAscii(memKindName(e.dstKind));
  bAscii(" num_bytes:");
  bU64(e.bytes);
  bAscii(" async:");
  bU64(isAsync);
  return tupleAdd(pl, 3);
}

// Event-metadata cache keys: namespace in bits 60..63.
const NS_PTR: u64 = 1 << 60;
const NS_API: u64 = 2 << 60;
const NS_MEMCPY: u64 = 3 << 60;
const NS_MEMSET: u64 = 4 << 60;
const NS_GRAPH: u64 = 5 << 60;
const NS_STEP: u64 = 6 << 60;

/** Cache slot of the last {@link evCached} lookup. */
let evSlot: usize = 0;

/** Event metadata id cached for source key `key` in `pl`, or 0: then the caller names it with {@link evCache}. */
// @ts-ignore: decorator
@inline function evCached(pl: Plane, key: u64): u32 {
  evSlot = tableUpsert(pl.evCache, key);
  return <u32>load<u64>(evSlot);
}

/** After an {@link evCached} miss: the event metadata id of the name [p, p+n), kept in the cache slot. */
function evCache(pl: Plane, p: usize, n: u32): u32 {
  const id = evIntern(pl, p, n, 0, 0);
  store<u64>(evSlot, id);
  return id;
}

/** Event metadata id of the name [p, p+n), cached under `key`. */
// @ts-ignore: decorator
@inline function evByKey(pl: Plane, key: u64, p: usize, n: u32): u32 {
  const id = evCached(pl, key);
  return id != 0 ? id : evCache(pl, p, n);
}

/**
 * Event metadata id for the name of `e` (bytes the session owns and never rewrites: the string arena and static
 * names, model/event.ts), cached by (pointer, length) so a name is hashed once per plane, not once per event.
 */
function evByName(pl: Plane, p: usize, n: u32): u32 {
  return evByKey(pl, NS_PTR | (<u64>p << 28) | <u64>(n & 0xfffffff), p, n);
}

/** Event metadata for an API call: keyed by (kind, API id), since unknown-API names share a scratch buffer. */
function evByApi(pl: Plane, e: Ev): u32 {
  return evByKey(pl, NS_API | (<u64>e.kind << 32) | e.apiId, e.namePtr, e.nameLen);
}

function memcpyType(e: Ev): u32 {
  if ((e.flags & EvFlag.PEER) != 0) return T_P2P;
  switch (e.copyKind) {
    case 1: return T_H2D;
    case 2: return T_D2H;
    case 8: return T_D2D;
    case 10: return T_P2P;
  }
  return T_OTHER;
}

function typeName(t: u32): string {
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

/** Memcpy events are named by type as XLA does ("MemcpyH2D"…); the record's details carry the memory kinds. */
function evByMemcpy(pl: Plane, t: u32): u32 {
  const id = evCached(pl, NS_MEMCPY | t);
  if (id != 0) return id;
  const s = typeName(t);
  return evCache(pl, asciiCopy(s), s.length);
}

/**
 * Event metadata named `prefix`<v>, cached under `ns` | v: memsets ("Memset <memory kind>" as XLA names them) and
 * graph executions ("CudaGraphExec:<graph id>").
 */
function evByNumber(pl: Plane, ns: u64, prefix: string, v: u32): u32 {
  const id = evCached(pl, ns | v);
  if (id != 0) return id;
  bStart();
  bAscii(prefix);
  bU64(v);
  return evCache(pl, bP, bN);
}

/** NVTX ranges and marks: "NVTX:<domain>:<name>" (or "NVTX:<name>"), displayed as the range name. */
function evByNvtx(pl: Plane, e: Ev): u32 {
  bStart();
  bAscii("NVTX:");
  if (e.domainLen != 0) {
    bBytes(e.domainPtr, e.domainLen);
    bAscii(":");
  }
  bBytes(e.namePtr, e.nameLen);
  return evIntern(pl, bP, bN, e.namePtr, e.nameLen);
}

// ---- Correlation → device ----------------------------------------------------------------------------------------

function corrSet(corr: u64, planeIdx: u32): void {
  if (corr == 0) return;
  const a = pagedSlot(corrPlane, corr, true);
  if (a == 0) return; // beyond the page cap (crafted ids): the flow is simply not linked
  if (load<u8>(a) == 0) store<u8>(a, <u8>(planeIdx + 1));
  corrAny = true;
}

/** correlation id → host-plane event metadata id of the innermost NVTX range around its launch (u32 per id). */
let nvtxMeta: Paged = 0;

function nvtxSet(corr: u32, meta: u32): void {
  if (nvtxMeta == 0) nvtxMeta = pagedNew(2, CORR_PAGE_BITS, CORR_MAX_PAGES);
  const a = pagedSlot(nvtxMeta, corr, true);
  if (a != 0) store<u32>(a, meta);
}

/** nvtx_range stat id of device work `corr` on the current plane, or 0. */
function nvtxStat(corr: u32): u32 {
  const map = curPlane.nvtxMap;
  if (map == 0 || corr == 0 || nvtxMeta == 0) return 0;
  const a = pagedSlot(nvtxMeta, corr, false);
  const meta = a == 0 ? 0 : load<u32>(a);
  return meta == 0 ? 0 : load<u32>(map + (<usize>meta << 2));
}

/** Device plane index + 1 of the device work of `corr`, or 0. */
function corrGet(corr: u32): u32 {
  if (corr == 0) return 0;
  const a = pagedSlot(corrPlane, corr, false);
  return a == 0 ? 0 : <u32>load<u8>(a);
}

// ---- Pass 2: buffering ---------------------------------------------------------------------------------------------

/** Starts an XSpace emit pass (after heap.reset(): everything is allocated anew). */
export function xspaceBegin(): void {
  mR = hostRanks;
  mK = hostIndex;
  corrHi = hostRanks > 1 ? <u64>hostIndex << 32 : 0;
  spillReset();
  hostPlane = newPlane(0, 0);
  setPlaneName(hostPlane, "/host:CPU");
  devPlanes = tableNew(16);
  planeList = heap.alloc(<usize>MAX_PLANES << 2);
  planeCount = 0;
  lastDev = 0xffffffff;
  lastDevPlane = changetype<Plane>(0);
  minStart = 0xffffffffffffffff;
  maxEnd = 0;
  hostEvents = 0;
  deviceEvents = 0;
  profileStart = 0;
  profileStop = 0;
  corrPlane = pagedNew(0, CORR_PAGE_BITS, CORR_MAX_PAGES);
  corrAny = false;
  // Heap pointers of the previous file (rt_reset rewound the heap): an Engine converts file after file.
  nvtxMeta = 0;
  rangeStack = 0;
  stackCap = 0;
  nvtxMeta = 0;
  bP = 0;
  bN = 0;
  bCap = 0;
  // Device planes are created by the first event of their device: a DEVICES entry without events gets none.
}

/** Last event end seen (Unix ns), for closing ranges left open. */
export function xspaceLastTs(): u64 {
  return maxEnd;
}

/** Profile start chosen at the end of the pass (Unix ns): Task Environment profile_start_time. */
export function xspaceProfileStart(): u64 {
  return profileStart;
}

function record(pl: Plane, ln: Line, e: Ev, kind: i32, meta: u32, ctx: u32, detail: u32, graph: bool): void {
  S.addEvent();
  const start = e.start;
  const dur = e.end - e.start;
  if (start < minStart) minStart = start;
  if (e.end > maxEnd) maxEnd = e.end;
  if (start < ln.lastStart || (start == ln.lastStart && dur > ln.lastDur)) {
    ln.unsorted = 1;
    ln.chunkUnsorted = 1;
  }
  ln.lastStart = start;
  ln.lastDur = dur;
  if (start < ln.minStart) ln.minStart = start;
  const r = lineAppend(ln, graph ? REC_BASE + REC_GRAPH_EXTRA : REC_BASE);
  store<u64>(r, start);
  store<u64>(r, dur, 8);
  store<u32>(r, (meta & META_MASK) | (<u32>kind << 24) | (graph ? REC_GRAPH : 0), 16);
  // A correlation id two processes used links nothing (CORRELATION_PROCESSES).
  store<u32>(r, S.ambiguousCorrs != 0 && S.corrAmbiguous(<u64>e.correlation) ? 0 : <u32>e.correlation, 20);
  store<u32>(r, ctx, 24);
  store<u32>(r, detail, 28);
  let used = kindStats(kind);
  if (graph) {
    store<u32>(r, e.graphId, 32);
    store<u32>(r, 0, 36);
    store<u64>(r, e.graphNodeId, 40);
    used |= GRAPH_STATS;
  }
  pl.used |= used;
}

/** Buffers an event of the host plane on its line `ln` (a line takes the pid of its first event). */
// @ts-ignore: decorator
@inline function hostRecord(ln: Line, e: Ev, kind: i32, meta: u32): void {
  if (ln.count == 0) ln.pid = e.pid;
  record(hostPlane, ln, e, kind, meta, 0, 0, false);
  hostEvents++;
}

/**
 * A training step (model/steps.ts) as XProf's step grouping wants it: `ProfilerStep#N` on the thread's API line
 * (not the NVTX line), so the launch calls inside it nest under it, with `_r` = 1 (a root: GroupTfEvents gives it
 * and everything it reaches — nested launches, their kernels through correlation_id — one group_id) and `step_num`.
 */
function stepMarker(e: Ev): void {
  const ln = getLine(hostPlane, e.tid);
  if (ln.count == 0) ln.pid = e.pid;
  record(hostPlane, ln, e, R.STEP, evByNumber(hostPlane, NS_STEP, "ProfilerStep#", <u32>e.stepNum), 0, <u32>e.stepNum, false);
  hostEvents++;
}

/** The stream line of device work `e` on `pl`, marked as carrying work of type `t` (T_*). */
// @ts-ignore: decorator
@inline function streamLine(pl: Plane, e: Ev, t: u32): Line {
  const ln = getLine(pl, e.stream);
  ln.kinds |= t;
  return ln;
}

/** Buffers device work `e` on line `ln` of `pl` and notes which plane its correlation id went to. */
// @ts-ignore: decorator
@inline function deviceRecord(pl: Plane, ln: Line, e: Ev, kind: i32, meta: u32, detail: u32, graph: bool): void {
  record(pl, ln, e, kind, meta, e.context, detail, graph);
  corrSet(e.correlation, pl.index);
  deviceEvents++;
}

/** Whether device work `e` carries CUDA graph ids (graph_id / graph node id stats). */
// @ts-ignore: decorator
@inline function hasGraphIds(e: Ev): bool {
  return (e.flags & EvFlag.HAS_GRAPH) != 0 && (e.graphId != 0 || e.graphNodeId != 0);
}

/**
 * Buffers one event. Kinds XLA has no counterpart for are not written (and not counted): GPU_RANGE, the Kineto-style
 * projection of NVTX ranges onto device streams — XProf gets that from the `nvtx_range` stat of the device events.
 */
export function xspaceEvent(e: Ev): void {
  switch (e.kind) {
    case EvKind.API_RUNTIME:
    case EvKind.API_DRIVER:
      hostRecord(getLine(hostPlane, e.tid), e, R.API, evByApi(hostPlane, e));
      break;
    case EvKind.RANGE:
    case EvKind.INSTANT: {
      const kind = e.kind == EvKind.RANGE ? R.RANGE : R.INSTANT;
      hostRecord(getLine(hostPlane, LINE_NVTX | e.tid), e, kind, evByNvtx(hostPlane, e));
      if ((e.flags & EvFlag.STEP) != 0) stepMarker(e);
      break;
    }
    case EvKind.OVERHEAD: {
      // Thread-level overhead on the host plane, device/context/stream-level on the device's plane (as XLA), each
      // on one `CUPTI overhead` line: one row per plane, not one identically named row per thread.
      const onHost = e.tid != 0;
      const pl = onHost ? hostPlane : devPlane(e.device);
      const ln = getLine(pl, LINE_OVERHEAD);
      if (onHost && ln.count == 0) ln.pid = e.pid;
      record(pl, ln, e, R.OVERHEAD, evByName(pl, e.namePtr, e.nameLen), 0, 0, false);
      if (onHost) hostEvents++;
      else deviceEvents++;
      break;
    }
    case EvKind.COUNTER: {
      // XProf shows the `_counters_` line's events as counter tracks named by the event (trace_viewer@), value = stat.
      const pl = devPlane(e.device);
      record(pl, getLine(pl, LINE_COUNTERS), e, R.COUNTER, evByName(pl, e.namePtr, e.nameLen), <u32>e.bytes,
        <u32>(e.bytes >> 32), false);
      deviceEvents++;
      break;
    }
    case EvKind.KERNEL: {
      const pl = devPlane(e.device);
      const ln = streamLine(pl, e, T_COMPUTE);
      deviceRecord(pl, ln, e, R.KERNEL, evByName(pl, e.namePtr, e.nameLen), kernelDetails(pl, e), hasGraphIds(e));
      break;
    }
    case EvKind.MEMCPY: {
      const pl = devPlane(e.device);
      const t = memcpyType(e);
      const ln = streamLine(pl, e, t);
      // XLA's `dest:` is a device ordinal: the host's when merging.
      const dest = deviceOrdinal((e.flags & EvFlag.PEER) != 0 ? e.dstDevice : e.device);
      const isAsync: u32 = (e.flags & EvFlag.ASYNC) != 0 ? 1 : 0;
      deviceRecord(pl, ln, e, R.MEMCPY, evByMemcpy(pl, t), memcpyDetails(pl, e, dest, isAsync), hasGraphIds(e));
      break;
    }
    case EvKind.MEMSET: {
      const pl = devPlane(e.device);
      const ln = streamLine(pl, e, T_MEMSET);
      const isAsync: u32 = (e.flags & EvFlag.ASYNC) != 0 ? 1 : 0;
      deviceRecord(pl, ln, e, R.MEMSET, evByNumber(pl, NS_MEMSET, "Memset ", e.dstKind),
        memsetDetails(pl, e, isAsync), hasGraphIds(e));
      break;
    }
    case EvKind.GRAPH: {
      const pl = devPlane(e.device);
      const ln = streamLine(pl, e, T_GRAPH);
      deviceRecord(pl, ln, e, R.GRAPH, evByNumber(pl, NS_GRAPH, "CudaGraphExec:", e.graphId), e.graphId, false);
      break;
    }
    case EvKind.SYNC:
    case EvKind.EVENT_RECORD: {
      const pl = devPlane(e.device);
      const stream = (e.flags & EvFlag.NO_STREAM) != 0 ? 0xffffffff : e.stream;
      const ln = getLine(pl, LINE_SYNC | stream);
      const kind = e.kind == EvKind.SYNC ? R.SYNC : R.EVENT_RECORD;
      deviceRecord(pl, ln, e, kind, evByName(pl, e.namePtr, e.nameLen), 0, false);
      break;
    }
  }
}

// ---- End of pass: naming, sizing, writing ------------------------------------------------------------------------

function addPlaneStat(pl: Plane, statId: u32, type: u32, v: u64, len: u32): void {
  if (pl.pstatCount >= MAX_PSTATS) return;
  const a = pl.pstats + <usize>pl.pstatCount * PSTAT;
  store<u32>(a, statId);
  store<u32>(a, type, 4);
  store<u64>(a, v, 8);
  store<u32>(a, len, 16);
  store<u32>(a, 0, 20);
  pl.pstatCount++;
}
function addPlaneStr(pl: Plane, name: string, p: usize, n: u32): void {
  addPlaneStat(pl, stIntern(pl, asciiCopy(name), name.length), 0, p, n);
}
/** The decimal text of v, copied into the arena (length bN). */
function decimalCopy(v: u64): usize {
  bStart();
  bU64(v);
  return bKeep();
}
function addPlaneDecimal(pl: Plane, name: string, v: u64): void {
  const p = decimalCopy(v);
  addPlaneStr(pl, name, p, bN);
}
function addPlaneStrAscii(pl: Plane, name: string, value: string): void {
  addPlaneStr(pl, name, asciiCopy(value), value.length);
}

function deviceStats(pl: Plane): void {
  const d = pl.dev;
  const vendor = S.deviceMaker;
  addPlaneStat(pl, wkId(pl, WK.DEVICE_VENDOR), 0, asciiCopy(vendor), vendor.length);
  if (d == 0) return;
  if (load<u32>(d, 92) != 0) addPlaneStat(pl, wkId(pl, WK.GPU_DEVICE_NAME), 0, load<u32>(d, 88), load<u32>(d, 92));
  if (load<u32>(d, 24) != 0) addPlaneStat(pl, wkId(pl, WK.CLOCK_RATE), 1, load<u32>(d, 24), 0);
  if (load<u32>(d, 4) != 0) addPlaneStat(pl, wkId(pl, WK.CORE_COUNT), 1, load<u32>(d, 4), 0);
  if (load<u64>(d, 16) != 0) addPlaneStat(pl, wkId(pl, WK.MEMORY_BANDWIDTH), 2, load<u64>(d, 16), 0);
  if (load<u64>(d, 8) != 0) addPlaneStat(pl, wkId(pl, WK.MEMORY_SIZE), 2, load<u64>(d, 8), 0);
  if (load<u32>(d, 28) != 0) {
    addPlaneStat(pl, wkId(pl, WK.CC_MAJOR), 1, load<u32>(d, 28), 0);
    addPlaneStat(pl, wkId(pl, WK.CC_MINOR), 1, load<u32>(d, 32), 0);
  }
}

/**
 * Makes the XLine.ids of `pl` distinct in their low 32 bits (what the trace viewer keys rows on): {@link lineIdFor}
 * maps crafted tids or stream ids ≥ 2^29 onto the ids of other lines. A later line that collides moves by steps of
 * 2^22, as src/node/xspace_merge.ts moves lines of different ranks, then by 1 if 1024 such steps are all taken.
 */
function uniqueLineIds(pl: Plane): void {
  if (pl.lineCount < 2) return;
  const ids = tableNew(pl.lineCount);
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    let id = ln.id;
    for (let tries: u32 = 0; ; tries++) {
      tableUpsert(ids, id & 0xffffffff);
      if (inserted) break;
      id += tries < 1024 ? <u64>(1 << 22) : 1;
    }
    ln.id = id;
  }
}

/** Names the lines of a plane and creates the stat metadata its events use. */
function finishPlane(pl: Plane): void {
  uniqueLineIds(pl);
  for (let w = 0; w < WK.COUNT; w++) if ((pl.used & (1 << w)) != 0) wkId(pl, w);
  if (pl.kind == 0 && corrAny && (pl.used & (1 << WK.CORRELATION_ID)) != 0) wkId(pl, WK.DEVICE_ID);
  // Rows of a plane the host's ranks share are labelled with the rank ("rank 3: thread 12 (python)").
  const labelRows = hostRanks > 1 && labelLen != 0 && (pl.kind == 0 || (pl.kind == 1 && deviceShared(pl.local)));
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    const key = ln.key;
    bStart();
    if (pl.kind == 0) {
      const tid = <u32>key;
      const tn = S.threadName(ln.pid, tid);
      if (key >= LINE_OVERHEAD) bAscii(S.overheadName);
      else if (tn != 0 && load<u32>(tn, 4) != 0) bBytes(<usize>load<u32>(tn), load<u32>(tn, 4));
      else {
        bAscii("thread ");
        bU64(tid);
      }
      if (key >= LINE_NVTX && key < LINE_OVERHEAD) bAscii("/NVTX");
      ln.nameP = bKeep();
      ln.nameN = bN;
      // Named threads also get "thread <tid> (<name>)" as the row label, as the Chrome JSON output shows them (the
      // one overhead line of the plane serves every thread: it keeps its plain name).
      const named = key < LINE_OVERHEAD && tn != 0 && load<u32>(tn, 4) != 0;
      if (named) {
        bStart();
        bAscii("thread ");
        bU64(tid);
        bAscii(" (");
        bBytes(<usize>load<u32>(tn), load<u32>(tn, 4));
        bAscii(")");
        if (key >= LINE_NVTX) bAscii("/NVTX");
        ln.dispP = bKeep();
        ln.dispN = bN;
      }
    } else {
      if (key >= LINE_COUNTERS) bAscii("_counters_");
      else if (key >= LINE_OVERHEAD) bAscii(S.overheadName);
      else if (key >= LINE_SYNC) {
        const stream = <u32>key;
        if (stream == 0xffffffff) bAscii("Synchronization (context)");
        else {
          bAscii("Synchronization (Stream #");
          bU64(stream);
          bAscii(")");
        }
      } else {
        bAscii("Stream #");
        bU64(key);
        if (ln.kinds != 0) {
          bAscii("(");
          let first = true;
          for (let t: u32 = 1; t <= T_GRAPH; t <<= 1) {
            if ((ln.kinds & t) == 0) continue;
            if (!first) bAscii(",");
            first = false;
            bAscii(typeName(t));
          }
          bAscii(")");
        }
      }
      ln.nameP = bKeep();
      ln.nameN = bN;
      // A named stream (a Gaudi engine: decode/synapse_engines.ts) shows its name first: "MME0 (Stream #6000(Compute))".
      const sn = key < LINE_SYNC ? S.streamName(pl.local, <u32>key) : 0;
      if (sn != 0 && load<u32>(sn, 4) != 0) {
        bStart();
        bBytes(<usize>load<u32>(sn), load<u32>(sn, 4));
        bAscii(" (");
        bBytes(ln.nameP, ln.nameN);
        bAscii(")");
        ln.dispP = bKeep();
        ln.dispN = bN;
      }
    }
    if (labelRows) labelRow(ln);
  }
  if (pl.kind == 1) deviceStats(pl);
}

/** Host merge: the rank label in front of row `ln`'s display name (its name stays what XProf keys on). */
function labelRow(ln: Line): void {
  bStart();
  bBytes(labelPtr, labelLen);
  bAscii(": ");
  if (ln.dispN != 0) bBytes(ln.dispP, ln.dispN);
  else bBytes(ln.nameP, ln.nameN);
  ln.dispP = bKeep();
  ln.dispN = bN;
}

/** Host merge: the rank label and ": " in front of a diagnostic being built. */
function bRankPrefix(): void {
  if (hostRanks > 1 && labelLen != 0) {
    bBytes(labelPtr, labelLen);
    bAscii(": ");
  }
}

// ---- Event encoding ------------------------------------------------------------------------------------------------

let curLineTs: u64 = 0; // Unix ns of the line being sized or written
let curPlane: Plane = changetype<Plane>(0);
let curStats: MetaList = changetype<MetaList>(0); // its stat metadata
let wkCorr: u32 = 0;
let wkDevice: u32 = 0;
let wkCtx: u32 = 0;
let wkKernel: u32 = 0;
let wkMemcpy: u32 = 0;
let wkMemset: u32 = 0;
let wkOcc: u32 = 0;
let wkMinGrid: u32 = 0;
let wkBlock: u32 = 0;
let wkGraph: u32 = 0;
let wkNode: u32 = 0;
let wkExec: u32 = 0;
let wkNvtx: u32 = 0;
let wkRoot: u32 = 0;
let wkStep: u32 = 0;
let wkValue: u32 = 0;

// Host merge (emit/options.ts): ranks on the host (R), this file's index (k) and its correlation-id range.
let mR: u64 = 1;
let mK: u64 = 0;
let corrHi: u64 = 0;

/** Written id of event metadata `id`: (id - 1) × R + k + 1, so the ranks of a host never share an id. */
// @ts-ignore: decorator
@inline function evOut(id: u32): u64 {
  return <u64>(id - 1) * mR + mK + 1;
}
/** Written id of stat metadata `id`: well-known stats (ids 1..WK.COUNT when merging) as they are, others interleaved. */
// @ts-ignore: decorator
@inline function stOut(id: u32): u64 {
  return id <= <u32>WK.COUNT ? <u64>id : <u64>(id - <u32>WK.COUNT - 1) * mR + mK + <u64>WK.COUNT + 1;
}
// @ts-ignore: decorator
@inline function metaOut(m: MetaList, id: u32): u64 {
  return m.isStat != 0 ? stOut(id) : evOut(id);
}
/** Written correlation id: k × 2^32 + id when merging (XProf hashes the whole value into the flow id). */
// @ts-ignore: decorator
@inline function corrOut(corr: u32): u64 {
  return corrHi | <u64>corr;
}

function usePlane(pl: Plane): void {
  curPlane = pl;
  curStats = pl.st;
  const w = pl.wk;
  wkCorr = load<u32>(w, WK.CORRELATION_ID << 2);
  wkDevice = load<u32>(w, WK.DEVICE_ID << 2);
  wkCtx = load<u32>(w, WK.CONTEXT_ID << 2);
  wkKernel = load<u32>(w, WK.KERNEL_DETAILS << 2);
  wkMemcpy = load<u32>(w, WK.MEMCPY_DETAILS << 2);
  wkMemset = load<u32>(w, WK.MEMSET_DETAILS << 2);
  wkOcc = load<u32>(w, WK.OCCUPANCY_PCT << 2);
  wkMinGrid = load<u32>(w, WK.OCC_MIN_GRID << 2);
  wkBlock = load<u32>(w, WK.OCC_BLOCK_SIZE << 2);
  wkGraph = load<u32>(w, WK.GRAPH_ID << 2);
  wkNode = load<u32>(w, WK.GRAPH_NODE_ID << 2);
  wkExec = load<u32>(w, WK.GRAPH_EXEC_ID << 2);
  wkNvtx = load<u32>(w, WK.NVTX_RANGE << 2);
  wkRoot = load<u32>(w, WK.IS_ROOT << 2);
  wkStep = load<u32>(w, WK.STEP_NUM << 2);
  wkValue = load<u32>(w, WK.VALUE << 2);
}

// XStat sizes: the stat is an XEvent field 4 (one-byte tag + one-byte length: stats are < 128 bytes).
// @ts-ignore: decorator
@inline function statVarintSize(id: u32, v: u64): u32 {
  return 2 + 1 + varintSize(id) + 1 + varintSize(v);
}
// @ts-ignore: decorator
@inline function statDoubleSize(id: u32): u32 {
  return 2 + 1 + varintSize(id) + 9;
}
/** Digits of a u32. */
// @ts-ignore: decorator
@inline function decDigits(v: u32): u32 {
  let n: u32 = 1;
  while (v >= 10) {
    v /= 10;
    n++;
  }
  return n;
}
// @ts-ignore: decorator
@inline function ctxStatSize(id: u32, ctx: u32): u32 {
  // str_value "$$<ctx>"
  return 2 + 1 + varintSize(id) + 2 + 2 + decDigits(ctx);
}

/** The u64 value of a counter record (ctx @24 low, detail @28 high). */
// @ts-ignore: decorator
@inline function counterValue(r: usize): u64 {
  return <u64>load<u32>(r, 24) | (<u64>load<u32>(r, 28) << 32);
}

/** Size of the XEvent body of record `r`. */
function eventSize(r: usize): u32 {
  const w = load<u32>(r, 16);
  const kind = <i32>((w >> 24) & 15);
  const dur = load<u64>(r, 8);
  let n = 1 + varintSize(evOut(w & META_MASK)) + 1 + varintSize(ps(load<u64>(r) - curLineTs));
  if (dur != 0) n += 1 + varintSize(ps(dur));
  const corr = load<u32>(r, 20);
  if (kind == R.API) {
    if (corr != 0) {
      const d = corrGet(corr);
      if (d != 0 && wkDevice != 0) n += statVarintSize(wkDevice, <u64>planeIdOf(d));
      n += statVarintSize(wkCorr, corrOut(corr));
    }
    return n;
  }
  if (kind == R.STEP) return n + statVarintSize(wkRoot, 1) + statVarintSize(wkStep, <u64>load<u32>(r, 28));
  if (kind == R.COUNTER) return n + statVarintSize(wkValue, counterValue(r));
  if (kind < R.KERNEL) return n;
  if (corr != 0) n += statVarintSize(wkCorr, corrOut(corr));
  if (kind <= R.GRAPH) {
    const nv = nvtxStat(corr);
    if (nv != 0) n += statVarintSize(wkNvtx, stOut(nv));
  }
  n += ctxStatSize(wkCtx, load<u32>(r, 24));
  if ((w & REC_GRAPH) != 0) {
    const g = load<u32>(r, 32);
    const node = load<u64>(r, 40);
    if (g != 0) n += statVarintSize(wkGraph, g);
    if (node != 0) n += statVarintSize(wkNode, node);
  }
  const detail = load<u32>(r, 28);
  switch (kind) {
    case R.KERNEL: {
      const occ = <usize>load<u32>(metaAt(curStats, detail), 8);
      n += statDoubleSize(wkOcc);
      n += statVarintSize(wkMinGrid, <u64>load<i32>(occ, 8));
      n += statVarintSize(wkBlock, <u64>load<i32>(occ, 12));
      n += statVarintSize(wkKernel, stOut(detail));
      break;
    }
    case R.MEMCPY:
      n += statVarintSize(wkMemcpy, stOut(detail));
      break;
    case R.MEMSET:
      n += statVarintSize(wkMemset, stOut(detail));
      break;
    case R.GRAPH:
      if (detail != 0) n += statVarintSize(wkGraph, detail);
      n += statVarintSize(wkExec, detail);
      break;
  }
  return n;
}

/** Largest value of the int64 time fields (XLine.timestamp_ns, XEvent.offset_ps and duration_ps). */
const I64_MAX: u64 = 0x7fffffffffffffff;

/**
 * ns → ps (XEvent offset_ps, duration_ps), saturating at 2^63 - 1 (the fields are int64): spans beyond ~106 days
 * (crafted or far-future timestamps) are written as the largest value rather than wrapped around or negative.
 */
// @ts-ignore: decorator
@inline function ps(ns: u64): u64 {
  return ns > I64_MAX / 1000 ? I64_MAX : ns * 1000;
}

/** XPlane.id of device plane index+1 `d`. */
function planeIdOf(d: u32): u64 {
  return changetype<Plane>(load<usize>(planeList + (<usize>(d - 1) << 2))).id;
}

// @ts-ignore: decorator
@inline function putStatVarint(id: u32, field: u32, v: u64): void {
  putTag(4, Wire.LEN);
  const at = O.pos;
  O.pos++;
  putVarintField(1, id);
  putVarintField(field, v);
  store<u8>(at, <u8>(O.pos - at - 1));
}
// @ts-ignore: decorator
@inline function putStatDouble(id: u32, v: f64): void {
  putTag(4, Wire.LEN);
  const at = O.pos;
  O.pos++;
  putVarintField(1, id);
  putDoubleField(2, v);
  store<u8>(at, <u8>(O.pos - at - 1));
}
function putCtxStat(id: u32, ctx: u32): void {
  putTag(4, Wire.LEN);
  const at = O.pos;
  O.pos++;
  putVarintField(1, id);
  putTag(5, Wire.LEN);
  const nd = decDigits(ctx);
  putVarint(2 + nd);
  store<u8>(O.pos, 36);
  store<u8>(O.pos + 1, 36);
  let q = O.pos + 2 + nd;
  let v = ctx;
  for (let i: u32 = 0; i < nd; i++) {
    q--;
    store<u8>(q, <u8>(48 + v % 10));
    v /= 10;
  }
  O.pos += 2 + nd;
  store<u8>(at, <u8>(O.pos - at - 1));
}

// XStat value fields.
const F_DOUBLE: u32 = 2;
const F_UINT64: u32 = 3;
const F_INT64: u32 = 4;
const F_REF: u32 = 7;

/** Writes record `r` as XLine.events entry (tag, length, body). Returns the bytes written. */
function putEvent(r: usize): u32 {
  O.need(512);
  const begin = O.pos;
  putTag(4, Wire.LEN);
  const lenAt = O.pos;
  O.pos++; // one length byte; moved to two below when the body is ≥ 128 bytes
  const w = load<u32>(r, 16);
  const kind = <i32>((w >> 24) & 15);
  const dur = load<u64>(r, 8);
  putVarintField(1, evOut(w & META_MASK));
  putVarintField(2, ps(load<u64>(r) - curLineTs));
  if (dur != 0) putVarintField(3, ps(dur));
  const corr = load<u32>(r, 20);
  if (kind == R.API) {
    if (corr != 0) {
      const d = corrGet(corr);
      if (d != 0 && wkDevice != 0) putStatVarint(wkDevice, F_UINT64, planeIdOf(d));
      putStatVarint(wkCorr, F_UINT64, corrOut(corr));
    }
  } else if (kind == R.STEP) {
    putStatVarint(wkRoot, F_INT64, 1);
    putStatVarint(wkStep, F_INT64, <u64>load<u32>(r, 28));
  } else if (kind == R.COUNTER) {
    putStatVarint(wkValue, F_UINT64, counterValue(r));
  } else if (kind >= R.KERNEL) {
    if (corr != 0) putStatVarint(wkCorr, F_UINT64, corrOut(corr));
    if (kind <= R.GRAPH) {
      const nv = nvtxStat(corr);
      if (nv != 0) putStatVarint(wkNvtx, F_REF, stOut(nv));
    }
    putCtxStat(wkCtx, load<u32>(r, 24));
    if ((w & REC_GRAPH) != 0) {
      const g = load<u32>(r, 32);
      const node = load<u64>(r, 40);
      if (g != 0) putStatVarint(wkGraph, F_UINT64, g);
      if (node != 0) putStatVarint(wkNode, F_UINT64, node);
    }
    const detail = load<u32>(r, 28);
    switch (kind) {
      case R.KERNEL: {
        const occ = <usize>load<u32>(metaAt(curStats, detail), 8);
        putStatDouble(wkOcc, load<f64>(occ));
        putStatVarint(wkMinGrid, F_INT64, <u64>load<i32>(occ, 8));
        putStatVarint(wkBlock, F_INT64, <u64>load<i32>(occ, 12));
        putStatVarint(wkKernel, F_REF, stOut(detail));
        break;
      }
      case R.MEMCPY:
        putStatVarint(wkMemcpy, F_REF, stOut(detail));
        break;
      case R.MEMSET:
        putStatVarint(wkMemset, F_REF, stOut(detail));
        break;
      case R.GRAPH:
        if (detail != 0) putStatVarint(wkGraph, F_UINT64, detail);
        putStatVarint(wkExec, F_UINT64, detail);
        break;
    }
  }
  const body = <u32>(O.pos - lenAt - 1);
  if (body < 128) store<u8>(lenAt, <u8>body);
  else {
    memory.copy(lenAt + 2, lenAt + 1, body);
    store<u8>(lenAt, <u8>((body & 0x7f) | 0x80));
    store<u8>(lenAt + 1, <u8>(body >> 7));
    O.pos++;
  }
  return <u32>(O.pos - begin);
}

// ---- Line iteration (in start order) ------------------------------------------------------------------------------

/**
 * Scratch indexes for sorting a line held in memory: {start u64, record u32, arrival u32} × events of the largest
 * unsorted line without spilled runs (≤ about 2 × RUN_BYTES / 32), plus one spare entry; the second serves
 * {@link lineIter} slot 1.
 */
let sortIdx: usize = 0;
let sortIdx2: usize = 0;
let sortCap: u32 = 0;

// What a walk over a line's records does with each record (see {@link visit}).
const V_INDEX: i32 = 0; // add it to the sort index; the result is the entry count
const V_SIZE: i32 = 1; // the result is the sum of the encoded event sizes (tag + length + body)
const V_PUT: i32 = 2; // write the event; the result is the sum of the bytes written

/** Visits record `r` for `what` (V_*); returns the running result `acc` updated. */
// @ts-ignore: decorator
@inline function visit(r: usize, what: i32, acc: u64): u64 {
  if (what == V_SIZE) {
    const b = eventSize(r);
    return acc + <u64>(1 + varintSize(b) + b);
  }
  if (what == V_PUT) return acc + putEvent(r);
  const e = sortIdx + (<usize>acc << 4);
  store<u64>(e, load<u64>(r));
  store<u32>(e, <u32>r, 8);
  store<u32>(e, <u32>acc, 12);
  return acc + 1;
}

/** Visits the spilled records of `ln` (slot 0), merged into start order when `merge`, else in arrival order. */
function walkRuns(ln: Line, what: i32, merge: bool): u64 {
  let acc: u64 = 0;
  if (!merge) {
    // Arrival order: each run read whole, its records visited in a plain loop.
    const runs = runsOf(ln);
    for (let k: u32 = 0; k < runs.count; k++) {
      let r = runLoad(runs, k);
      const end = r + runBytes(runs, k);
      while (r < end) {
        acc = visit(r, what, acc);
        r += recSize(r);
      }
    }
    return acc;
  }
  runIter(0, runsOf(ln), merge);
  for (;;) {
    const r = runNext(0);
    if (r == 0) break;
    acc = visit(r, what, acc);
  }
  return acc;
}

/** Visits the records of `ln` for `what` in the order they arrived (chunk by chunk); returns the result. */
// @ts-ignore: decorator
@inline function walkArrival(ln: Line, what: i32): u64 {
  if (ln.runCount != 0) return walkRuns(ln, what, false);
  let acc: u64 = 0;
  let c = ln.head;
  while (c != 0) {
    const used = load<u32>(c, 4);
    let r = c + CHUNK_HEAD;
    const end = r + used;
    while (r < end) {
      acc = visit(r, what, acc);
      r += recSize(r);
    }
    c = <usize>load<u32>(c);
  }
  return acc;
}

/** Visits the records of `ln` for `what` in start order (through the sort index when they arrived out of order). */
// @ts-ignore: decorator
@inline function walkStart(ln: Line, what: i32): u64 {
  if (ln.runCount != 0) return walkRuns(ln, what, ln.unsorted != 0);
  if (ln.unsorted == 0) return walkArrival(ln, what);
  sortLine(ln);
  let acc: u64 = 0;
  for (let i: u32 = 0; i < ln.count; i++) acc = visit(<usize>load<u32>(sortIdx + (<usize>i << 4), 8), what, acc);
  return acc;
}

/** Builds the sorted index (at sortIdx) of an unsorted line held in memory. */
function sortLine(ln: Line): void {
  const k = <u32>walkArrival(ln, V_INDEX);
  if (k > 1) sortIndex(sortIdx, sortIdx + (<usize>sortCap << 4), 0, <i32>k - 1);
}

/** Sum of the encoded sizes (tag + length + body) of the events of `ln` (order-independent). */
function lineEventsSize(ln: Line): u64 {
  return walkArrival(ln, V_SIZE);
}

/** Writes the events of `ln` in start order; returns the bytes written. */
function putLineEvents(ln: Line): u64 {
  return walkStart(ln, V_PUT);
}

/**
 * Two lines read side by side in start order (slot 0 and 1: {@link nvtxSweep}'s API calls and NVTX ranges), held
 * in memory or spilled: per slot {mode u32 (0 runs, 1 chunks, 2 sort index), chunk u32, record u32, next u32,
 * count u32, index u32}.
 */
const iters = memory.data(2 * 24);

/** Starts reading `ln` in start order in slot `slot` (0 or 1). */
function lineIter(slot: i32, ln: Line): void {
  const it = iters + <usize>slot * 24;
  if (ln.runCount != 0) {
    store<u32>(it, 0);
    runIter(slot, runsOf(ln), ln.unsorted != 0);
  } else if (ln.unsorted != 0) {
    const idx = slot == 0 ? sortIdx : sortIdx2;
    const save = sortIdx;
    sortIdx = idx;
    sortLine(ln);
    sortIdx = save;
    store<u32>(it, 2);
    store<u32>(it, 0, 12);
    store<u32>(it, ln.count, 16);
    store<u32>(it, <u32>idx, 20);
  } else {
    store<u32>(it, 1);
    const c = ln.head;
    store<u32>(it, <u32>c, 4);
    store<u32>(it, c != 0 ? <u32>(c + CHUNK_HEAD) : 0, 8);
  }
}

/** Next record of slot `slot` in start order (valid until the next call on the slot), or 0 at the end. */
function lineNext(slot: i32): usize {
  const it = iters + <usize>slot * 24;
  const mode = load<u32>(it);
  if (mode == 0) return runNext(slot);
  if (mode == 2) {
    const k = load<u32>(it, 12);
    if (k >= load<u32>(it, 16)) return 0;
    store<u32>(it, k + 1, 12);
    return <usize>load<u32>(<usize>load<u32>(it, 20) + (<usize>k << 4), 8);
  }
  let c = <usize>load<u32>(it, 4);
  let r = <usize>load<u32>(it, 8);
  while (c != 0 && r >= c + CHUNK_HEAD + <usize>load<u32>(c, 4)) {
    c = <usize>load<u32>(c);
    r = c + CHUNK_HEAD;
  }
  if (c == 0) return 0;
  store<u32>(it, <u32>c, 4);
  store<u32>(it, <u32>(r + recSize(r)), 8);
  return r;
}

// ---- Message sizes -----------------------------------------------------------------------------------------------

/** XLine.timestamp_ns of `ln`: its first start after the profile start, saturating at 2^63 - 1 (an int64 field). */
function lineTsNs(ln: Line): u64 {
  const ts = ln.minStart > profileStart ? ln.minStart - profileStart : 0;
  return ts > I64_MAX ? I64_MAX : ts;
}

/** XLine body size, without its events. */
function lineHeadSize(ln: Line): u64 {
  let n: u64 = 0;
  if (ln.id != 0) n += 1 + varintSize(ln.id);
  n += 1 + varintSize(ln.nameN) + ln.nameN;
  if (ln.dispN != 0) n += 1 + varintSize(ln.dispN) + ln.dispN;
  const ts = lineTsNs(ln);
  if (ts != 0) n += 1 + varintSize(ts);
  return n;
}

/**
 * XEventMetadata / XStatMetadata body of entry `id` of `m`: id (1), name (2) and, when it has one (event
 * metadata only), display_name (4).
 */
function metaSize(m: MetaList, id: u32): u64 {
  const e = metaAt(m, id);
  const nn = load<u32>(e, 4);
  const dn = load<u32>(e, 12);
  let body: u64 = 1 + varintSize(metaOut(m, id)) + 1 + varintSize(nn) + nn;
  if (dn != 0) body += 1 + varintSize(dn) + dn;
  return body;
}
/** Map entry {1: key, 2: value} size around a value of `v` bytes. */
// @ts-ignore: decorator
@inline function mapEntrySize(id: u64, v: u64): u64 {
  return 1 + varintSize(id) + 1 + varintSize(v) + v;
}
/** Size of the map entries (tag, length, entry) of all of `m` in an XPlane (event_metadata or stat_metadata). */
function metaMapSize(m: MetaList): u64 {
  let n: u64 = 0;
  for (let id: u32 = 1; id <= m.count; id++) {
    const b = metaSize(m, id);
    const out = metaOut(m, id);
    n += 1 + varintSize(mapEntrySize(out, b)) + mapEntrySize(out, b);
  }
  return n;
}
/** Writes all of `m` as XPlane map field `field` (4 event_metadata, 5 stat_metadata), sized by {@link metaSize}. */
function putMetaMap(field: u32, m: MetaList): void {
  for (let id: u32 = 1; id <= m.count; id++) {
    const e = metaAt(m, id);
    const b = metaSize(m, id);
    const out = metaOut(m, id);
    putLenPrefix(field, mapEntrySize(out, b));
    O.need(32);
    putVarintField(1, out);
    putLenPrefix(2, b);
    O.need(32);
    putVarintField(1, out);
    putBytesField(2, <usize>load<u32>(e), load<u32>(e, 4));
    if (load<u32>(e, 12) != 0) putBytesField(4, <usize>load<u32>(e, 8), load<u32>(e, 12));
  }
}

function pstatBody(a: usize): u64 {
  const type = load<u32>(a, 4);
  const id = stOut(load<u32>(a));
  if (type == 0) {
    const n = load<u32>(a, 16);
    return 1 + varintSize(id) + 1 + varintSize(n) + n;
  }
  return 1 + varintSize(id) + 1 + varintSize(load<u64>(a, 8));
}

/** Computes every line's size and the plane's size (stored in ln.size / pl.size). */
function sizePlane(pl: Plane): void {
  usePlane(pl);
  let n: u64 = 0;
  if (pl.id != 0) n += 1 + varintSize(pl.id);
  n += 1 + varintSize(pl.nameN) + pl.nameN;
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    curLineTs = profileStart + lineTsNs(ln);
    ln.size = lineHeadSize(ln) + lineEventsSize(ln);
    n += 1 + varintSize(ln.size) + ln.size;
  }
  n += metaMapSize(pl.ev);
  n += metaMapSize(pl.st);
  for (let i: u32 = 0; i < pl.pstatCount; i++) {
    const b = pstatBody(pl.pstats + <usize>i * PSTAT);
    n += 1 + varintSize(b) + b;
  }
  pl.size = n;
}

/** Writes XSpace.planes entry `pl` (sized by {@link sizePlane}). */
function putPlane(pl: Plane): void {
  usePlane(pl);
  putLenPrefix(1, pl.size);
  const bodyStart = O.written + <u64>O.pos;
  O.need(16);
  if (pl.id != 0) putVarintField(1, pl.id);
  putBytesField(2, pl.nameP, pl.nameN);
  for (let i: u32 = 0; i < pl.lineCount; i++) {
    const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>i << 2)));
    const ts = lineTsNs(ln);
    curLineTs = profileStart + ts;
    putLenPrefix(3, ln.size);
    const lineStart = O.written + <u64>O.pos;
    O.need(32);
    if (ln.id != 0) putVarintField(1, ln.id);
    putBytesField(2, ln.nameP, ln.nameN);
    O.need(16);
    if (ts != 0) putVarintField(3, ts);
    putLineEvents(ln);
    // Fields in number order, as protobuf encoders write them (display_name is field 11).
    if (ln.dispN != 0) putBytesField(11, ln.dispP, ln.dispN);
    // The sizes were computed by a separate code path: a mismatch would corrupt the file, so stop instead.
    if (O.written + <u64>O.pos - lineStart != ln.size) unreachable();
  }
  putMetaMap(4, pl.ev);
  putMetaMap(5, pl.st);
  for (let i: u32 = 0; i < pl.pstatCount; i++) {
    const a = pl.pstats + <usize>i * PSTAT;
    putLenPrefix(6, pstatBody(a));
    O.need(32);
    putVarintField(1, stOut(load<u32>(a)));
    const type = load<u32>(a, 4);
    if (type == 0) putBytesField(5, <usize>load<u64>(a, 8), load<u32>(a, 16));
    else putVarintField(type == 1 ? F_INT64 : F_UINT64, load<u64>(a, 8));
  }
  if (O.written + <u64>O.pos - bodyStart != pl.size) unreachable();
}

/** A warning or error line for XSpace: "<CODE>: <count> (first at file offset <o>, detail <d>)". */
function putDiag(field: u32, code: i32): void {
  bStart();
  bRankPrefix();
  bAscii("rawtrace ");
  bAscii(warnName(code));
  bAscii(": ");
  bU64(warningCount(code));
  bAscii(warningCount(code) == 1 ? " occurrence" : " occurrences");
  bAscii(" (first at file offset ");
  bU64(warningOffset(code));
  bAscii(", detail ");
  bU64(warningDetail(code));
  bAscii(")");
  putBytesField(field, bP, bN);
}

/**
 * The skipped byte ranges as XSpace errors: "rawtrace skipped bytes <from>-<to> (chunk seq <s>: <CODE>)" for each kept
 * range, then one line with the totals when more ranges were skipped than kept.
 */
function putLoss(): void {
  const kept = <i32>lossTotal(1);
  for (let i = 0; i < kept; i++) {
    bStart();
    bRankPrefix();
    bAscii("rawtrace skipped bytes ");
    bU64(lossRange(i, 0));
    bAscii("-");
    bU64(lossRange(i, 1));
    bAscii(" (");
    if (<u32>lossRange(i, 3) != NO_SEQ) {
      bAscii("chunk seq ");
      bU64(lossRange(i, 3));
      bAscii(": ");
    }
    bAscii(warnName(<i32>lossRange(i, 2)));
    bAscii(")");
    putBytesField(2, bP, bN);
  }
  if (lossTotal(0) > <u64>kept) {
    bStart();
    bRankPrefix();
    bAscii("rawtrace skipped ");
    bU64(lossTotal(0));
    bAscii(" byte ranges in all (");
    bU64(lossTotal(4));
    bAscii(" bytes); the first ");
    bU64(<u64>kept);
    bAscii(" are listed");
    putBytesField(2, bP, bN);
  }
}

/** Warning codes that mean data was lost: written to XSpace.errors; the others go to XSpace.warnings. */
function isDataLoss(code: i32): bool {
  // By name, not number: codes are appended as the format grows. BAD_TIMESTAMP: records dropped by model/timing.ts.
  return code == Warn.TRUNCATED || code == Warn.BAD_CHUNK_HEADER || code == Warn.BAD_PAYLOAD_CRC ||
    code == Warn.CHUNK_TOO_LARGE || code == Warn.SEQ_GAP || code == Warn.UNKNOWN_KIND_UNSIZED ||
    code == Warn.RECORD_TRUNCATED || code == Warn.NEGATIVE_DURATION || code == Warn.COLLECTOR_ERROR ||
    code == Warn.BAD_TIMESTAMP;
}

/**
 * nvtx_range, as XLA attaches it: each kernel, memcpy, memset or graph launch gets the innermost NVTX range that was
 * open on the launching thread when the launch call started (a ref to the range's name). Per thread, the API calls
 * and the ranges are walked together in start order with a stack of open ranges; the result is kept per correlation
 * id ({@link nvtxSet}) and each device plane interns the range names its events use.
 */
function nvtxSweep(): void {
  const hp = hostPlane;
  for (let i: u32 = 0; i < hp.lineCount; i++) {
    const nl = changetype<Line>(load<usize>(hp.lineList + (<usize>i << 2)));
    if (nl.key < LINE_NVTX || nl.key >= LINE_OVERHEAD) continue;
    const slot = tableFind(hp.lines, nl.key & 0xffffffff);
    if (slot == 0) continue;
    const al = changetype<Line>(<usize>load<u64>(slot));
    // The thread's ranges (slot 1) and API calls (slot 0), both in start order; instants never contain anything.
    lineIter(1, nl);
    let rr = nextRange();
    if (rr == 0) continue;
    let sp: u32 = 0;
    lineIter(0, al);
    for (;;) {
      const rec = lineNext(0);
      if (rec == 0) break;
      const st = load<u64>(rec);
      while (rr != 0 && load<u64>(rr) <= st) {
        // Open ranges: {start u64, end u64 (start + duration, wrapping as before), meta u32, 0}.
        if (sp == stackCap) {
          stackCap = stackCap == 0 ? 64 : stackCap << 1;
          rangeStack = regrow(rangeStack, <usize>sp * 24, <usize>stackCap * 24);
        }
        const e = rangeStack + <usize>sp * 24;
        store<u64>(e, load<u64>(rr));
        store<u64>(e, load<u64>(rr) + load<u64>(rr, 8), 8);
        store<u32>(e, load<u32>(rr, 16) & META_MASK, 16);
        sp++;
        rr = nextRange();
      }
      while (sp > 0) {
        if (load<u64>(rangeStack + <usize>(sp - 1) * 24, 8) > st) break;
        sp--;
      }
      if (sp == 0) continue;
      const corr = load<u32>(rec, 20);
      const d = corrGet(corr);
      if (d == 0) continue;
      const meta = load<u32>(rangeStack + <usize>(sp - 1) * 24, 16);
      nvtxSet(corr, meta);
      const dp = changetype<Plane>(load<usize>(planeList + (<usize>(d - 1) << 2)));
      if (dp.nvtxMap == 0) {
        dp.nvtxMap = heap.alloc((<usize>hp.ev.count + 1) << 2);
        memory.fill(dp.nvtxMap, 0, (<usize>hp.ev.count + 1) << 2);
      }
      const at = dp.nvtxMap + (<usize>meta << 2);
      if (load<u32>(at) == 0) {
        // The range name without domain, as XLA's NVTXRangeTracker reports it (the metadata's display name).
        const e = metaAt(hp.ev, meta);
        store<u32>(at, stIntern(dp, <usize>load<u32>(e, 8), load<u32>(e, 12)));
        dp.used |= 1 << WK.NVTX_RANGE;
      }
    }
  }
}

/** Open NVTX ranges of {@link nvtxSweep} (24 bytes each), grown as needed. */
let rangeStack: usize = 0;
let stackCap: u32 = 0;

/** Next NVTX range record of {@link lineIter} slot 1 (marks skipped), or 0. */
function nextRange(): usize {
  let r = lineNext(1);
  while (r != 0 && ((load<u32>(r, 16) >> 24) & 15) != R.RANGE) r = lineNext(1);
  return r;
}

/** Ends the pass: sizes and writes every plane, then hostnames, errors and warnings, and flushes. */
export function xspaceEnd(): void {
  // Profile span: from the collector start (when it precedes the first event) to the last event end.
  profileStart = minStart;
  if (S.startNs != 0 && (S.startNs < profileStart || minStart == 0xffffffffffffffff)) profileStart = S.startNs;
  if (profileStart == 0xffffffffffffffff) profileStart = 0;
  // A merge puts every file on one profile start (emit/options.ts), when it is not after this file's own.
  if (fixedBaseNs != 0 && fixedBaseNs <= profileStart) profileStart = fixedBaseNs;
  profileStop = maxEnd > profileStart ? maxEnd : profileStart;
  if (S.haveEndAnchor && S.anchorEndReal > profileStop && S.anchorEndReal - profileStop < 3600000000000) {
    profileStop = S.anchorEndReal;
  }

  // Lines that spilled go to the spill storage whole; scratch for sorting the largest unsorted line still in
  // memory, and read-back buffers for the line with the most runs.
  let need: u32 = 0;
  let maxRuns: u32 = 0;
  for (let i: u32 = 0; i <= planeCount; i++) {
    const pl = i == 0 ? hostPlane : changetype<Plane>(load<usize>(planeList + (<usize>(i - 1) << 2)));
    for (let j: u32 = 0; j < pl.lineCount; j++) {
      const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>j << 2)));
      if (ln.runCount != 0) {
        spillLine(ln);
        if (ln.runCount > maxRuns) maxRuns = ln.runCount;
      } else if (ln.unsorted != 0 && ln.count > need) need = ln.count;
    }
  }
  sortCap = need;
  sortIdx = need > 0 ? heap.alloc((<usize>need + 1) << 4) : 0;
  sortIdx2 = need > 0 ? heap.alloc((<usize>need + 1) << 4) : 0;
  runIterReserve(0, maxRuns);
  runIterReserve(1, maxRuns);

  nvtxSweep();

  // Metadata and names.
  finishPlane(hostPlane);
  for (let i: u32 = 0; i < planeCount; i++) finishPlane(changetype<Plane>(load<usize>(planeList + (<usize>i << 2))));
  const meta = newPlane(2, 0);
  setPlaneName(meta, "/host:metadata");
  if (S.haveHeader && S.cudaVersions) {
    if (S.runtimeVersion != 0) {
      const p = decimalCopy(S.runtimeVersion);
      const n = bN;
      addPlaneStr(meta, "cuda_version", p, n);
      addPlaneStr(meta, "cuda_runtime_version", p, n);
    }
    if (S.driverVersion != 0) addPlaneDecimal(meta, "cuda_driver_version", S.driverVersion);
    if (S.vendorVersion != 0) addPlaneDecimal(meta, "cupti_version", S.vendorVersion);
  }
  if (S.vendorTextLen != 0) addPlaneStr(meta, "vendor_library_version", S.vendorTextPtr, S.vendorTextLen);
  const task = newPlane(2, 0);
  setPlaneName(task, "Task Environment");
  addPlaneStat(task, stIntern(task, asciiCopy("profile_start_time"), 18), 2, profileStart, 0);
  addPlaneStat(task, stIntern(task, asciiCopy("profile_stop_time"), 17), 2, profileStop, 0);

  // Planes: host, devices by id, metadata, task environment; all sized before a byte is written.
  const order = heap.alloc((<usize>planeCount + 3) << 2);
  let np: u32 = 0;
  store<u32>(order, changetype<u32>(hostPlane));
  np++;
  let prev: i64 = -1;
  for (let k: u32 = 0; k < planeCount; k++) {
    // Next device plane by ascending id (few planes: selection is fine).
    let best: Plane = changetype<Plane>(0);
    for (let i: u32 = 0; i < planeCount; i++) {
      const pl = changetype<Plane>(load<usize>(planeList + (<usize>i << 2)));
      if (<i64>pl.id > prev && (changetype<usize>(best) == 0 || pl.id < best.id)) best = pl;
    }
    if (changetype<usize>(best) == 0) break;
    prev = <i64>best.id;
    store<u32>(order + (<usize>np << 2), changetype<u32>(best));
    np++;
  }
  if (meta.pstatCount != 0) {
    store<u32>(order + (<usize>np << 2), changetype<u32>(meta));
    np++;
  }
  store<u32>(order + (<usize>np << 2), changetype<u32>(task));
  np++;
  let total: u64 = 0;
  for (let i: u32 = 0; i < np; i++) {
    const pl = changetype<Plane>(<usize>load<u32>(order + (<usize>i << 2)));
    sizePlane(pl);
    total += 1 + <u64>varintSize(pl.size) + pl.size;
  }
  // Errors, warnings and the host name: at most one line per warning code and kept loss range, plus the drop line.
  total += (<u64>WARN_COUNT + lossTotal(1) + 2) * (320 + <u64>labelLen) + <u64>S.hostnameLen + 16;
  if (total > xspaceMaxBytes) {
    // Over protobuf's message limit: XProf could not open it, so write nothing (emit/xspace_limit.ts).
    fail(Fatal.XSPACE_TOO_LARGE, fedBytes(), total);
    return;
  }
  for (let i: u32 = 0; i < np; i++) putPlane(changetype<Plane>(<usize>load<u32>(order + (<usize>i << 2))));

  // errors (2) and warnings (3).
  for (let c = 0; c < WARN_COUNT; c++) if (warningCount(c) != 0 && isDataLoss(c)) putDiag(2, c);
  putLoss();
  if (S.droppedRecords > 0) {
    // XLA's wording (CuptiTraceCollectorImpl::ReportNumEventsIfDropped), so tools that look for it find it.
    bStart();
    bRankPrefix();
    bAscii("Detected GPU events dropped on ");
    if (S.hostnameLen != 0) bBytes(S.hostnamePtr, S.hostnameLen);
    else bAscii("unknown host");
    bAscii(": Profiler has collected ");
    bU64(hostEvents);
    bAscii(" driver events and ");
    bU64(deviceEvents);
    bAscii(" device events. ");
    if (S.droppedRecords == 0xffffffffffffffff) bAscii("At least "); // saturated, never wrapped
    bU64(S.droppedRecords);
    bAscii(" events dropped because the collector reported lost records.");
    putBytesField(3, bP, bN);
  }
  for (let c = 0; c < WARN_COUNT; c++) if (warningCount(c) != 0 && !isDataLoss(c)) putDiag(3, c);
  // hostnames (4)
  if (S.hostnameLen != 0) putBytesField(4, S.hostnamePtr, S.hostnameLen);
  O.flush();
}
