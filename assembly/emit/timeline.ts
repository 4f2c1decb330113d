/**
 * Timeline tables for the in-browser viewer (web/): compact, fixed-size binary tables a canvas can draw from
 * without one JS object per event. The page gets them as ArrayBuffers (src/core/timeline.ts parses the stream).
 *
 * Pass 2 only buffers: each event becomes a 48-byte record ({@link REC}) appended in arrival order, its row
 * (host thread, device stream, …) and name interned on the way; the fields only some kinds carry (a kernel's
 * context, registers, shared memory and occupancy; a copy's devices; …) go to a side table of 16-byte entries, so
 * the records of API calls and ranges do not carry them. At the end ({@link timelineEnd}):
 *  1. records are grouped per row (counting sort) and each row is sorted by start (ties: longer first) with a
 *     bottom-up merge sort that costs one linear check for the usual already-sorted row;
 *  2. every row is split into lanes: an event takes the lowest lane free at its start, so nested ranges stack
 *     and overlapping kernels (PDL) never hide each other; a lane is then non-overlapping and sorted by start
 *     *and* end, so the viewer finds its visible window by binary search;
 *  3. launch ↔ device-work pairs (the correlation id) are resolved to final event indices (`partner`);
 *  4. the stream is written: header, rows, lanes, names, events (rows in Kineto's order: host, then GPU),
 *     then the summary statistics of the same events (emit/stats.ts, `rawtrace stats`), aggregated on the way so
 *     the viewer needs no second conversion for its summary panel.
 *
 * Stream layout (little-endian; every section 8-byte aligned):
 *   header 64 B: u32 magic "RTTL", u32 version, u32 events, u32 rows, u32 lanes, u32 names, u32 nameBytes (padded
 *     to 8), u32 flags (1 = rows capped, 2 = names capped), u64 baseNs (Unix ns of t = 0), f64 min start,
 *     f64 max end (ns since base), u32 lane cap, u32 extension entries
 *   rows 32 B each: u32 class ({@link RowClass}), u32 a (pid or device), u32 b (tid or stream), u32 name id of the
 *     thread/stream name (NONE = unnamed), u32 first lane, u32 lanes, u32 first event, u32 events
 *   lanes 24 B each: u32 first event, u32 events, u32 row, u32 flags (1 = events may overlap), f64 max duration
 *   names: `names` × {u32 offset, u32 length} then `nameBytes` bytes of UTF-8
 *   events, grouped by row then lane, sorted by start within a lane, in chunks of {@link CHUNK} (the last one
     shorter), each: u32 count, u32 0, `count` extension entries of 20 B (u32 index of the event within the
     chunk, ascending; u32 x3, x4, x5, x6), zeros to a multiple of 8, then the chunk's records ({@link REC}); an
     event has an entry exactly when its flags have TF.EXT (x3..x6 are 0 otherwise)
 *   stats: the result of emit/stats.ts (its own header gives its size; src/core/stats.ts decodeStats).
 */
import { Ev, EvKind, EvFlag } from "../model/event";
import * as S from "../model/session";
import * as O from "./out";
import { Table, tableNew, tableUpsert, tableFind, inserted } from "../util/hash_table";
import { Paged, pagedNew, pagedSlot } from "../util/paged";
import { arenaCopy, arenaAscii, lastLen } from "../util/arena";
import { statsBegin, statsEvent, statsEnd } from "./stats";
import { activeBlocks, occPlausible } from "./xspace";

/**
 * Event record (48 B):
 *   0 f64 start (ns since baseNs)   8 f64 duration (ns)
 *  16 u32 row                      20 u32 name id (NONE: unnamed)
 *  24 u8 kind (EvKind)  25 u8 flags ({@link TF})  26 u16 lane within the row
 *  28 u32 correlation (low 32 bits; 0 = none)
 *  32 u32 partner: final index of the launch (device work) or of the earliest device work (launch), NONE if none
 *     (while the pass buffers: the index of the event's extension entry, NONE if none)
 *  36 u32 x0  40 u32 x1  44 u32 x2, per kind:
 *     KERNEL: grid x; grid y | grid z << 16; block x | block y << 11 | block z << 22 (each packed dimension
 *       saturated at its field's largest value: 65535, 2047 or 1023; CUDA's own limits are 65535, 1024 and 64)
 *     MEMCPY: bytes low; bytes high; copy kind | src kind << 8 | dst kind << 16
 *     MEMSET: bytes low; bytes high; value
 *     API_RUNTIME / API_DRIVER: cbid; external id (low 32, TF.EXTERNAL); return value
 *     SYNC: sync type; event id; stream (NONE: context-wide)
 *     RANGE / INSTANT: color (ARGB); domain name id (NONE: default domain); training step number (TF.STEP,
 *       model/steps.ts; else 0)
 *     GPU_RANGE: device; stream; 0      GRAPH: graph id; external id; 0
 *     EVENT_RECORD: event id; 0; 0      OVERHEAD: overhead kind; 0; 0
 * Extension entry (side table, only for events where one of these is not 0): u32 x3, x4, x5, x6, per kind:
 *     KERNEL: context; registers per thread | theoretical occupancy << 16 (units of 0.01 %, {@link OCC_NONE} when
 *       the device table cannot tell: emit/xspace.ts's calculation); static shared memory; dynamic shared memory
 *     MEMCPY: context; source device; destination device      MEMSET, SYNC, GRAPH: context
 *     API_RUNTIME / API_DRIVER: external id (high 32)
 */
export const REC: usize = 48;
/** Records per output chunk (src/core/timeline.ts TL_CHUNK). */
const CHUNK_SHIFT: u32 = 17;
const CHUNK: u32 = 1 << CHUNK_SHIFT;
/** Bytes per extension entry in the pass's side table (x3..x6) and in the stream (event index + x3..x6). */
const EXT: usize = 16;
const EXT_OUT: usize = 20;
/** Occupancy field value meaning "unknown" (no device table, or one the calculation cannot use). */
export const OCC_NONE: u32 = 0xffff;
export const NONE: u32 = 0xffffffff;
const MAGIC: u32 = 0x4c545452; // "RTTL"
const VERSION: u32 = 3;
const HEADER: usize = 64;

/** Record flag bits (byte 25). */
const enum TF {
  EXTERNAL = 1,
  FLOW_START = 2,
  FLOW_END = 4,
  ASYNC = 8,
  PEER = 16,
  /** No end in the vendor record (model/timing.ts): duration 0 at its start; left out of the statistics. */
  INCOMPLETE = 32,
  /** A host range recognised as a training step (model/steps.ts): x2 holds its step number. */
  STEP = 64,
  /** x3..x6 are in the chunk's extension entries (else all 0). */
  EXT = 128,
}

/** Row classes; rows are written ordered by (host/GPU, pid or device, tid or stream, class). */
const enum RowClass {
  HOST_RANGES = 1,
  HOST_API = 2,
  HOST_OVERHEAD = 3,
  GPU_ANNOTATIONS = 8,
  GPU_STREAM = 9,
  GPU_SYNC = 10,
  GPU_CONTEXT_SYNC = 11,
  GPU_OVERHEAD = 12,
}

/** Rows beyond this share one overflow row (crafted input with millions of tids). */
const MAX_ROWS: u32 = 16384;
/** Lanes per row; events beyond go to the last lane, flagged as overlapping. */
const MAX_LANES: u32 = 64;
/** Distinct names beyond this are shown as the overflow name. */
const MAX_NAMES: u32 = 1 << 22;

const BLOCK_BITS: u32 = 16;
const BLOCK_RECS: u32 = 1 << BLOCK_BITS;
const MAX_BLOCKS: u32 = 1 << 16; // 2^32 records: the u32 index space

// ---- State ---------------------------------------------------------------------------------------------------

let base: u64 = 0;
let lastTs: u64 = 0;
let count: u32 = 0;
let blocks: usize = 0; // MAX_BLOCKS block pointers
let extBlocks: usize = 0; // MAX_BLOCKS pointers to blocks of BLOCK_RECS extension entries
let extCount: u32 = 0;
let flags: u32 = 0;

let rowTables: usize = 0; // per row class (16 Table handles, created on first use): (a << 32 | b) → row index + 1
// MAX_ROWS × 32 B: u64 major sort key (GPU << 32 | a), u32 class, u32 a, u32 b, u32 name, u32 count, u32 0
let rowKeys: usize = 0;
let rowCount: u32 = 0;
let lastRowKey: u64 = 0;
let lastRowCls: u32 = 0; // 0: nothing cached
let lastRow: u32 = 0;

let namePtrTable: Table = 0; // (ptr << 32 | len) → name id + 1
let nameHashTable: Table = 0; // content hash (probed) → name id + 1
let nameList: usize = 0; // {u32 ptr (our copy), u32 len} per name
let nameCap: u32 = 0;
let nameCount: u32 = 0;
let nameBytes: u64 = 0;
let lastNameP: usize = 0;
let lastNameN: u32 = 0;
let lastNameId: u32 = NONE;
let overflowName: u32 = NONE;

/** Last event end seen (Unix ns), for closing ranges left open. */
export function timelineLastTs(): u64 {
  return lastTs;
}

/** Starts the pass: `baseNs` is t = 0 of the tables (Unix ns). */
export function timelineBegin(baseNs: u64): void {
  base = baseNs;
  lastTs = 0;
  count = 0;
  flags = 0;
  blocks = heap.alloc(<usize>MAX_BLOCKS << 2);
  memory.fill(blocks, 0, <usize>MAX_BLOCKS << 2);
  extBlocks = heap.alloc(<usize>MAX_BLOCKS << 2);
  memory.fill(extBlocks, 0, <usize>MAX_BLOCKS << 2);
  extCount = 0;
  rowTables = heap.alloc(16 << 2);
  memory.fill(rowTables, 0, 16 << 2);
  rowKeys = heap.alloc(<usize>MAX_ROWS * 32);
  rowCount = 0;
  lastRowKey = 0;
  lastRowCls = 0;
  lastRow = 0;
  namePtrTable = tableNew(1024);
  nameHashTable = tableNew(1024);
  nameCap = 1024;
  nameList = heap.alloc(<usize>nameCap << 3);
  nameCount = 0;
  nameBytes = 0;
  lastNameP = 0;
  lastNameN = 0;
  lastNameId = NONE;
  overflowName = NONE;
  statsBegin();
}

// ---- Interning ---------------------------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function fnv(p: usize, n: u32): u64 {
  let h: u64 = 0xcbf29ce484222325;
  for (let i: u32 = 0; i < n; i++) {
    h ^= <u64>load<u8>(p + i);
    h *= 0x100000001b3;
  }
  return h;
}

function addName(p: usize, n: u32): u32 {
  if (nameCount >= MAX_NAMES) {
    flags |= 2;
    if (overflowName == NONE) {
      // One more slot past the cap for the shared overflow name.
      overflowName = nameCount;
      nameCount++;
      const q = arenaAscii("(more names)");
      store<u32>(nameList + (<usize>overflowName << 3), <u32>q);
      store<u32>(nameList + (<usize>overflowName << 3), lastLen, 4);
      nameBytes += lastLen;
    }
    return overflowName;
  }
  if (nameCount + 1 >= nameCap) {
    const cap = nameCap << 1;
    const list = heap.alloc(<usize>cap << 3);
    memory.copy(list, nameList, <usize>nameCount << 3);
    nameList = list;
    nameCap = cap;
  }
  const id = nameCount++;
  const q = arenaCopy(p, n);
  store<u32>(nameList + (<usize>id << 3), <u32>q);
  store<u32>(nameList + (<usize>id << 3), n, 4);
  nameBytes += n;
  return id;
}

/**
 * Name id of the UTF-8 bytes [p, p+n): the same text always gets the same id, whatever pointer carries it. A
 * pointer seen before is checked against its bytes (a decoder may reuse a scratch buffer for different names).
 */
function internName(p: usize, n: u32): u32 {
  if (n == 0) return NONE;
  if (p == lastNameP && n == lastNameN) {
    const e = nameList + (<usize>lastNameId << 3);
    if (load<u32>(e, 4) == n && memory.compare(<usize>load<u32>(e), p, n) == 0) return lastNameId;
  }
  const pk = (<u64>p << 32) | <u64>n;
  const ps = tableUpsert(namePtrTable, pk);
  if (!inserted) {
    const id = <u32>(load<u64>(ps) - 1);
    const e = nameList + (<usize>id << 3);
    if (load<u32>(e, 4) == n && memory.compare(<usize>load<u32>(e), p, n) == 0) {
      lastNameP = p;
      lastNameN = n;
      lastNameId = id;
      return id;
    }
  }
  // By content: probe successive keys from the hash until the bytes match or a free key is found.
  let key = fnv(p, n) & 0x7fffffffffffffff;
  let id: u32 = NONE;
  while (true) {
    const hs = tableUpsert(nameHashTable, key);
    if (inserted) {
      id = addName(p, n);
      store<u64>(hs, <u64>id + 1);
      break;
    }
    const cand = <u32>(load<u64>(hs) - 1);
    const e = nameList + (<usize>cand << 3);
    if (load<u32>(e, 4) == n && memory.compare(<usize>load<u32>(e), p, n) == 0) {
      id = cand;
      break;
    }
    key = (key + 1) & 0x7fffffffffffffff;
  }
  store<u64>(ps, <u64>id + 1);
  lastNameP = p;
  lastNameN = n;
  lastNameId = id;
  return id;
}

function nameOfEntry(entry: usize): u32 {
  return entry == 0 ? NONE : internName(<usize>load<u32>(entry), load<u32>(entry, 4));
}

/** Row index of (class, a, b), creating it (with its thread or stream name) when new. Every 32-bit a and b counts. */
function rowOf(cls: u32, a: u32, b: u32): u32 {
  const key = (<u64>a << 32) | <u64>b;
  if (key == lastRowKey && cls == lastRowCls) return lastRow;
  const ta = rowTables + (<usize>(cls & 15) << 2);
  if (load<usize>(ta) == 0) store<usize>(ta, tableNew(16));
  const slot = tableUpsert(load<usize>(ta), key);
  let row: u32;
  if (!inserted) row = <u32>(load<u64>(slot) - 1);
  else if (rowCount >= MAX_ROWS) {
    // Past the cap everything shares the last row.
    flags |= 1;
    row = MAX_ROWS - 1;
    store<u64>(slot, <u64>row + 1);
  } else {
    row = rowCount++;
    store<u64>(slot, <u64>row + 1);
    const r = rowKeys + (<usize>row << 5);
    const gpu: u64 = cls >= <u32>RowClass.GPU_ANNOTATIONS ? 1 : 0;
    // Sort order (rowAfter): host before GPU, then pid/device, tid/stream (context-wide rows last), class.
    store<u64>(r, (gpu << 32) | <u64>a);
    store<u32>(r, cls, 8);
    store<u32>(r, a, 12);
    store<u32>(r, b, 16);
    let nm: u32 = NONE;
    if (cls == <u32>RowClass.HOST_API || cls == <u32>RowClass.HOST_RANGES) nm = nameOfEntry(S.threadName(a, b));
    else if (cls == <u32>RowClass.GPU_STREAM) nm = nameOfEntry(S.streamName(a, b));
    store<u32>(r, nm, 20);
    store<u32>(r, 0, 24);
    store<u32>(r, 0, 28);
  }
  lastRowKey = key;
  lastRowCls = cls;
  lastRow = row;
  return row;
}

// ---- Pass 2 ------------------------------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function recAt(i: u32): usize {
  return load<usize>(blocks + (<usize>(i >> BLOCK_BITS) << 2)) + (<usize>(i & (BLOCK_RECS - 1)) * REC);
}

// @ts-ignore: decorator
@inline function extAt(i: u32): usize {
  return load<usize>(extBlocks + (<usize>(i >> BLOCK_BITS) << 2)) + (<usize>(i & (BLOCK_RECS - 1)) * EXT);
}

// @ts-ignore: decorator
@inline function rel(t: u64): f64 {
  return t > base ? <f64>(t - base) : 0.0;
}

/** `v` clamped to `max` (a launch dimension packed into fewer bits; negative i32 values count as huge). */
// @ts-ignore: decorator
@inline function sat(v: u32, max: u32): u32 {
  return v > max ? max : v;
}

/** Buffers one event. */
export function timelineEvent(e: Ev): void {
  if (count == 0xffffffff) return;
  let cls: u32;
  let a: u32;
  let b: u32;
  switch (e.kind) {
    case EvKind.KERNEL:
    case EvKind.MEMCPY:
    case EvKind.MEMSET:
    case EvKind.EVENT_RECORD:
    case EvKind.GRAPH:
      cls = RowClass.GPU_STREAM;
      a = e.device;
      b = e.stream;
      break;
    case EvKind.GPU_RANGE:
      cls = RowClass.GPU_ANNOTATIONS;
      a = e.device;
      b = e.stream;
      break;
    case EvKind.SYNC:
      a = e.device;
      if ((e.flags & EvFlag.NO_STREAM) != 0) {
        cls = RowClass.GPU_CONTEXT_SYNC;
        b = NONE;
      } else {
        cls = RowClass.GPU_SYNC;
        b = e.stream;
      }
      break;
    case EvKind.API_RUNTIME:
    case EvKind.API_DRIVER:
      cls = RowClass.HOST_API;
      a = e.pid;
      b = e.tid;
      break;
    case EvKind.RANGE:
    case EvKind.INSTANT:
      cls = RowClass.HOST_RANGES;
      a = e.pid;
      b = e.tid;
      break;
    case EvKind.OVERHEAD:
      // CUPTI overhead: per thread when the record names one, else per device.
      if (e.tid != 0 || e.pid != 0) {
        cls = RowClass.HOST_OVERHEAD;
        a = e.pid;
        b = e.tid;
      } else {
        cls = RowClass.GPU_OVERHEAD;
        a = e.device;
        b = 0;
      }
      break;
    default:
      return;
  }
  // The stats emitter counts the events it aggregates; count the others (derived GPU ranges) here.
  const counted = S.eventsEmitted;
  statsEvent(e);
  if (S.eventsEmitted == counted) S.addEvent();
  if (e.end > lastTs) lastTs = e.end;
  const row = rowOf(cls, a, b);
  const rk = rowKeys + (<usize>row << 5);
  store<u32>(rk, load<u32>(rk, 24) + 1, 24);

  const blk = blocks + (<usize>(count >> BLOCK_BITS) << 2);
  if (load<usize>(blk) == 0) store<usize>(blk, heap.alloc(<usize>BLOCK_RECS * REC));
  const r = recAt(count);
  count++;
  store<f64>(r, rel(e.start));
  store<f64>(r, <f64>(e.end - e.start), 8);
  store<u32>(r, row, 16);
  store<u32>(r, internName(e.namePtr, e.nameLen), 20);
  let f: u32 = 0;
  if ((e.flags & EvFlag.HAS_EXTERNAL) != 0) f |= TF.EXTERNAL;
  if ((e.flags & EvFlag.FLOW_START) != 0) f |= TF.FLOW_START;
  if ((e.flags & EvFlag.FLOW_END) != 0) f |= TF.FLOW_END;
  if ((e.flags & EvFlag.ASYNC) != 0) f |= TF.ASYNC;
  if ((e.flags & EvFlag.PEER) != 0) f |= TF.PEER;
  if ((e.flags & EvFlag.INCOMPLETE) != 0) f |= TF.INCOMPLETE;
  if ((e.flags & EvFlag.STEP) != 0) f |= TF.STEP;
  store<u8>(r, <u8>e.kind, 24);
  store<u16>(r, 0, 26);
  store<u32>(r, <u32>e.correlation, 28);
  let x0: u32 = 0;
  let x1: u32 = 0;
  let x2: u32 = 0;
  let x3: u32 = 0;
  let x4: u32 = 0;
  let x5: u32 = 0;
  let x6: u32 = 0;
  switch (e.kind) {
    case EvKind.KERNEL:
      x3 = e.context;
      x4 = sat(e.registersPerThread, 0xffff) | (kernelOccupancy(e) << 16);
      x5 = e.staticSharedMemory;
      x6 = e.dynamicSharedMemory;
      x0 = <u32>e.gridX;
      x1 = sat(<u32>e.gridY, 0xffff) | (sat(<u32>e.gridZ, 0xffff) << 16);
      x2 = sat(<u32>e.blockX, 0x7ff) | (sat(<u32>e.blockY, 0x7ff) << 11) | (sat(<u32>e.blockZ, 0x3ff) << 22);
      break;
    case EvKind.MEMCPY:
      x3 = e.context;
      x4 = e.srcDevice;
      x5 = e.dstDevice;
      x0 = <u32>e.bytes;
      x1 = <u32>(e.bytes >> 32);
      x2 = (e.copyKind & 0xff) | ((e.srcKind & 0xff) << 8) | ((e.dstKind & 0xff) << 16);
      break;
    case EvKind.MEMSET:
      x3 = e.context;
      x0 = <u32>e.bytes;
      x1 = <u32>(e.bytes >> 32);
      x2 = e.memsetValue;
      break;
    case EvKind.API_RUNTIME:
    case EvKind.API_DRIVER:
      x0 = e.apiId;
      x1 = <u32>e.externalId;
      x2 = e.returnValue;
      x3 = <u32>(e.externalId >> 32);
      break;
    case EvKind.SYNC:
      x3 = e.context;
      x0 = e.apiId;
      x1 = e.eventId;
      x2 = (e.flags & EvFlag.NO_STREAM) != 0 ? NONE : e.stream;
      break;
    case EvKind.RANGE:
    case EvKind.INSTANT:
      x0 = e.color;
      x1 = e.domainLen != 0 ? internName(e.domainPtr, e.domainLen) : NONE;
      if ((e.flags & EvFlag.STEP) != 0) x2 = <u32>min<u64>(e.stepNum, 0xffffffff);
      break;
    case EvKind.GPU_RANGE:
      x0 = e.device;
      x1 = e.stream;
      break;
    case EvKind.GRAPH:
      x3 = e.context;
      x0 = e.graphId;
      x1 = <u32>e.externalId;
      break;
    case EvKind.EVENT_RECORD:
      x0 = e.eventId;
      break;
    case EvKind.OVERHEAD:
      x0 = e.apiId;
      break;
  }
  store<u32>(r, x0, 36);
  store<u32>(r, x1, 40);
  store<u32>(r, x2, 44);
  let ext: u32 = NONE;
  if ((x3 | x4 | x5 | x6) != 0) {
    ext = extCount++;
    const eb = extBlocks + (<usize>(ext >> BLOCK_BITS) << 2);
    if (load<usize>(eb) == 0) store<usize>(eb, heap.alloc(<usize>BLOCK_RECS * EXT));
    const x = extAt(ext);
    store<u32>(x, x3);
    store<u32>(x, x4, 4);
    store<u32>(x, x5, 8);
    store<u32>(x, x6, 12);
    f |= TF.EXT;
  }
  store<u8>(r, <u8>f, 25);
  store<u32>(r, ext, 32);
}

/**
 * Theoretical occupancy of kernel `e` in units of 0.01 % (active warps per SM over the maximum, as XProf's
 * theoretical_occupancy_pct), or {@link OCC_NONE} when its device table cannot tell.
 */
function kernelOccupancy(e: Ev): u32 {
  const d = S.findDevice(e.device);
  if (!occPlausible(d)) return OCC_NONE;
  const block = <u64>e.blockX * <u64>e.blockY * <u64>e.blockZ;
  if (block == 0 || block > 0xffffffff) return 0;
  const active = activeBlocks(d, e.registersPerThread, e.staticSharedMemory, e.dynamicSharedMemory, <u32>block);
  const pct = <f64>active * <f64>block * 100.0 / <f64>load<u32>(d, 40);
  return <u32>Math.round(min(pct, 100.0) * 100.0);
}

// ---- End of pass: order, lanes, partners, write ------------------------------------------------------------------

// @ts-ignore: decorator
@inline function before(i: u32, j: u32): bool {
  const ri = recAt(i);
  const rj = recAt(j);
  const si = load<f64>(ri);
  const sj = load<f64>(rj);
  return si < sj || (si == sj && load<f64>(ri, 8) > load<f64>(rj, 8));
}

/** Stable sort of the u32 record indices [a, a + 4n) by (start, longer first); `tmp` holds n indices. */
function sortIndices(a: usize, tmp: usize, n: u32): void {
  let sorted = true;
  for (let i: u32 = 1; i < n; i++) {
    if (before(load<u32>(a + (<usize>i << 2)), load<u32>(a + (<usize>(i - 1) << 2)))) {
      sorted = false;
      break;
    }
  }
  if (sorted) return;
  // Insertion sort of 32-element runs, then bottom-up merges ping-ponging between a and tmp.
  const RUN: u32 = 32;
  for (let lo: u32 = 0; lo < n; lo += RUN) {
    const hi = lo + RUN < n ? lo + RUN : n;
    for (let i = lo + 1; i < hi; i++) {
      const v = load<u32>(a + (<usize>i << 2));
      let j = i;
      while (j > lo && before(v, load<u32>(a + (<usize>(j - 1) << 2)))) {
        store<u32>(a + (<usize>j << 2), load<u32>(a + (<usize>(j - 1) << 2)));
        j--;
      }
      store<u32>(a + (<usize>j << 2), v);
    }
  }
  let src = a;
  let dst = tmp;
  for (let w: u32 = RUN; w < n; w <<= 1) {
    for (let lo: u32 = 0; lo < n; lo += w << 1) {
      const mid = lo + w < n ? lo + w : n;
      const hi = lo + (w << 1) < n ? lo + (w << 1) : n;
      let i = lo;
      let j = mid;
      let k = lo;
      if (mid < hi && before(load<u32>(src + (<usize>mid << 2)), load<u32>(src + (<usize>(mid - 1) << 2)))) {
        while (i < mid && j < hi) {
          const vi = load<u32>(src + (<usize>i << 2));
          const vj = load<u32>(src + (<usize>j << 2));
          if (before(vj, vi)) {
            store<u32>(dst + (<usize>k << 2), vj);
            j++;
          } else {
            store<u32>(dst + (<usize>k << 2), vi);
            i++;
          }
          k++;
        }
      }
      // Whatever remains (all of it when the halves are already in order) is copied as is.
      if (i < mid) {
        memory.copy(dst + (<usize>k << 2), src + (<usize>i << 2), <usize>(mid - i) << 2);
        k += mid - i;
      }
      if (j < hi) memory.copy(dst + (<usize>k << 2), src + (<usize>j << 2), <usize>(hi - j) << 2);
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memory.copy(a, src, <usize>n << 2);
}

/** Whether row u sorts after row v: by (host/GPU, pid or device), then tid or stream, then class. */
function rowAfter(u: u32, v: u32): bool {
  const ru = rowKeys + (<usize>u << 5);
  const rv = rowKeys + (<usize>v << 5);
  const mu = load<u64>(ru);
  const mv = load<u64>(rv);
  if (mu != mv) return mu > mv;
  const bu = load<u32>(ru, 16);
  const bv = load<u32>(rv, 16);
  if (bu != bv) return bu > bv;
  return load<u32>(ru, 8) > load<u32>(rv, 8);
}

/** Row order for writing: indices sorted by {@link rowAfter} (shell sort; rows are few). */
function sortRows(order: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i++) store<u32>(order + (<usize>i << 2), i);
  let gap: u32 = 1;
  while (gap < n / 3) gap = gap * 3 + 1;
  while (gap > 0) {
    for (let i = gap; i < n; i++) {
      const v = load<u32>(order + (<usize>i << 2));
      let j = i;
      while (j >= gap) {
        const u = load<u32>(order + (<usize>(j - gap) << 2));
        if (!rowAfter(u, v)) break;
        store<u32>(order + (<usize>j << 2), u);
        j -= gap;
      }
      store<u32>(order + (<usize>j << 2), v);
    }
    gap /= 3;
  }
}

/** Orders, lanes and writes the tables. */
export function timelineEnd(): void {
  const h = heap.alloc(HEADER); // header, then reused to build rows and name index entries
  const n = count;
  const nRows = rowCount;
  // 1. Group by row in output row order (counting sort of record indices).
  const order = heap.alloc(<usize>(nRows + 1) << 2);
  sortRows(order, nRows);
  const rowFirst = heap.alloc(<usize>(nRows + 1) << 2); // by row index
  let acc: u32 = 0;
  for (let k: u32 = 0; k < nRows; k++) {
    const row = load<u32>(order + (<usize>k << 2));
    store<u32>(rowFirst + (<usize>row << 2), acc);
    acc += load<u32>(rowKeys + (<usize>row << 5), 24);
  }
  const idx = heap.alloc(<usize>(n > 0 ? n : <u32>1) << 2);
  const fill = heap.alloc(<usize>(nRows + 1) << 2);
  memory.copy(fill, rowFirst, <usize>nRows << 2);
  for (let i: u32 = 0; i < n; i++) {
    const row = load<u32>(recAt(i), 16);
    const f = fill + (<usize>row << 2);
    const at = load<u32>(f);
    store<u32>(idx + (<usize>at << 2), i);
    store<u32>(f, at + 1);
  }
  // 2. Sort each row by start, assign lanes, regroup by lane. Lane table: up to MAX_LANES per row.
  let maxRow: u32 = 0;
  for (let r: u32 = 0; r < nRows; r++) {
    const c = load<u32>(rowKeys + (<usize>r << 5), 24);
    if (c > maxRow) maxRow = c;
  }
  const tmp = heap.alloc(<usize>(maxRow > 0 ? maxRow : <u32>1) << 2);
  const laneEnd = heap.alloc(<usize>MAX_LANES << 3);
  const laneCnt = heap.alloc(<usize>MAX_LANES << 2);
  const laneMax = heap.alloc(<usize>MAX_LANES << 3);
  const laneOvl = heap.alloc(<usize>MAX_LANES << 2);
  // Lanes of all rows, in output order: {first, count, row (output index), flags, maxDur}.
  let laneCap: u32 = nRows + 16;
  let lanes = heap.alloc(<usize>laneCap * 24);
  let nLanes: u32 = 0;
  const rowLanes = heap.alloc(<usize>(nRows + 1) << 3); // by output index: first lane, lane count
  let minStart: f64 = Infinity;
  let maxEnd: f64 = 0;
  for (let k: u32 = 0; k < nRows; k++) {
    const row = load<u32>(order + (<usize>k << 2));
    const first = load<u32>(rowFirst + (<usize>row << 2));
    const cnt = load<u32>(rowKeys + (<usize>row << 5), 24);
    const seg = idx + (<usize>first << 2);
    sortIndices(seg, tmp, cnt);
    let used: u32 = 0;
    memory.fill(laneCnt, 0, <usize>MAX_LANES << 2);
    memory.fill(laneOvl, 0, <usize>MAX_LANES << 2);
    for (let i: u32 = 0; i < cnt; i++) {
      const r = recAt(load<u32>(seg + (<usize>i << 2)));
      const s = load<f64>(r);
      const d = load<f64>(r, 8);
      const e = s + d;
      if (s < minStart) minStart = s;
      if (e > maxEnd) maxEnd = e;
      let lane: u32 = 0;
      while (lane < used && load<f64>(laneEnd + (<usize>lane << 3)) > s) lane++;
      if (lane == used) {
        if (used < MAX_LANES) {
          used++;
          store<f64>(laneMax + (<usize>lane << 3), 0);
          store<f64>(laneEnd + (<usize>lane << 3), 0);
        } else {
          lane = MAX_LANES - 1;
          store<u32>(laneOvl + (<usize>lane << 2), 1);
        }
      }
      const le = laneEnd + (<usize>lane << 3);
      if (e > load<f64>(le)) store<f64>(le, e);
      const lm = laneMax + (<usize>lane << 3);
      if (d > load<f64>(lm)) store<f64>(lm, d);
      store<u16>(r, <u16>lane, 26);
      store<u32>(laneCnt + (<usize>lane << 2), load<u32>(laneCnt + (<usize>lane << 2)) + 1);
    }
    // Stable regroup by lane (counting sort through tmp).
    if (used > 1) {
      let off: u32 = 0;
      for (let l: u32 = 0; l < used; l++) {
        const c = load<u32>(laneCnt + (<usize>l << 2));
        store<u32>(laneEnd + (<usize>l << 3), off); // reuse as the fill cursor
        off += c;
      }
      for (let i: u32 = 0; i < cnt; i++) {
        const v = load<u32>(seg + (<usize>i << 2));
        const l = <u32>load<u16>(recAt(v), 26);
        const cur = laneEnd + (<usize>l << 3);
        const at = load<u32>(cur);
        store<u32>(tmp + (<usize>at << 2), v);
        store<u32>(cur, at + 1);
      }
      memory.copy(seg, tmp, <usize>cnt << 2);
    }
    store<u32>(rowLanes + (<usize>k << 3), nLanes);
    store<u32>(rowLanes + (<usize>k << 3), used, 4);
    if (nLanes + used > laneCap) {
      const cap = (nLanes + used) * 2;
      const nl = heap.alloc(<usize>cap * 24);
      memory.copy(nl, lanes, <usize>nLanes * 24);
      lanes = nl;
      laneCap = cap;
    }
    let at = first;
    for (let l: u32 = 0; l < used; l++) {
      const c = load<u32>(laneCnt + (<usize>l << 2));
      const ln = lanes + <usize>nLanes * 24;
      store<u32>(ln, at);
      store<u32>(ln, c, 4);
      store<u32>(ln, k, 8);
      store<u32>(ln, load<u32>(laneOvl + (<usize>l << 2)), 12);
      store<f64>(ln, load<f64>(laneMax + (<usize>l << 3)), 16);
      nLanes++;
      at += c;
    }
  }
  if (n == 0) minStart = 0;

  // 3. Partners: correlation → final index of the launch and of the earliest device work.
  const corr: Paged = pagedNew(3, 13, 4096);
  for (let pos: u32 = 0; pos < n; pos++) {
    const r = recAt(load<u32>(idx + (<usize>pos << 2)));
    const c = load<u32>(r, 28);
    const f = <u32>load<u8>(r, 25);
    if (c == 0 || (f & (TF.FLOW_START | TF.FLOW_END)) == 0) continue;
    const slot = pagedSlot(corr, c, true);
    if (slot == 0) continue;
    if ((f & TF.FLOW_START) != 0) {
      if (load<u32>(slot) == 0) store<u32>(slot, pos + 1);
    } else {
      const cur = load<u32>(slot, 4);
      if (cur == 0) store<u32>(slot, pos + 1, 4);
      else {
        const other = recAt(load<u32>(idx + (<usize>(cur - 1) << 2)));
        if (load<f64>(r) < load<f64>(other)) store<u32>(slot, pos + 1, 4);
      }
    }
  }

  // 4. Write.
  const nb = <u32>((nameBytes + 7) & ~7);
  memory.fill(h, 0, HEADER);
  store<u32>(h, MAGIC);
  store<u32>(h, VERSION, 4);
  store<u32>(h, n, 8);
  store<u32>(h, nRows, 12);
  store<u32>(h, nLanes, 16);
  store<u32>(h, nameCount, 20);
  store<u32>(h, nb, 24);
  store<u32>(h, flags, 28);
  store<u64>(h, base, 32);
  store<f64>(h, minStart, 40);
  store<f64>(h, maxEnd, 48);
  store<u32>(h, MAX_LANES, 56);
  store<u32>(h, extCount, 60);
  O.raw(h, HEADER);
  for (let k: u32 = 0; k < nRows; k++) {
    const row = load<u32>(order + (<usize>k << 2));
    const rk = rowKeys + (<usize>row << 5);
    store<u32>(h, load<u32>(rk, 8));
    store<u32>(h, load<u32>(rk, 12), 4);
    store<u32>(h, load<u32>(rk, 16), 8);
    store<u32>(h, load<u32>(rk, 20), 12);
    store<u32>(h, load<u32>(rowLanes + (<usize>k << 3)), 16);
    store<u32>(h, load<u32>(rowLanes + (<usize>k << 3), 4), 20);
    store<u32>(h, load<u32>(rowFirst + (<usize>row << 2)), 24);
    store<u32>(h, load<u32>(rk, 24), 28);
    O.raw(h, 32);
  }
  O.raw(lanes, <usize>nLanes * 24);
  let off: u32 = 0;
  for (let i: u32 = 0; i < nameCount; i++) {
    store<u32>(h, off);
    store<u32>(h, load<u32>(nameList + (<usize>i << 3), 4), 4);
    O.raw(h, 8);
    off += load<u32>(nameList + (<usize>i << 3), 4);
  }
  for (let i: u32 = 0; i < nameCount; i++) {
    const e = nameList + (<usize>i << 3);
    O.raw(<usize>load<u32>(e), <usize>load<u32>(e, 4));
  }
  if (nb > off) {
    memory.fill(h, 0, 8);
    O.raw(h, <usize>(nb - off));
  }
  // Events in final order, chunk by chunk (its extension entries first); the row field becomes the output row index.
  const rowOut = heap.alloc(<usize>(nRows + 1) << 2);
  for (let k: u32 = 0; k < nRows; k++) store<u32>(rowOut + (<usize>load<u32>(order + (<usize>k << 2)) << 2), k);
  const scratch = heap.alloc(8 + <usize>(n < CHUNK ? (n > 0 ? n : <u32>1) : CHUNK) * EXT_OUT + 8);
  for (let pos: u32 = 0; pos < n; pos++) {
    if ((pos & (CHUNK - 1)) == 0) {
      const end = n - pos < CHUNK ? n : pos + CHUNK;
      let cnt: u32 = 0;
      for (let q = pos; q < end; q++) {
        const ext = load<u32>(recAt(load<u32>(idx + (<usize>q << 2))), 32);
        if (ext == NONE) continue;
        const o = scratch + 8 + <usize>cnt * EXT_OUT;
        const x = extAt(ext);
        store<u32>(o, q - pos);
        store<u32>(o, load<u32>(x), 4);
        store<u32>(o, load<u32>(x, 4), 8);
        store<u32>(o, load<u32>(x, 8), 12);
        store<u32>(o, load<u32>(x, 12), 16);
        cnt++;
      }
      store<u32>(scratch, cnt);
      store<u32>(scratch, 0, 4);
      const bytes: usize = <usize>8 + <usize>cnt * EXT_OUT;
      const padded: usize = (bytes + <usize>7) & ~(<usize>7);
      memory.fill(scratch + bytes, 0, padded - bytes);
      O.raw(scratch, padded);
    }
    const r = recAt(load<u32>(idx + (<usize>pos << 2)));
    store<u32>(r, NONE, 32);
    store<u32>(r, load<u32>(rowOut + (<usize>load<u32>(r, 16) << 2)), 16);
    const c = load<u32>(r, 28);
    const f = <u32>load<u8>(r, 25);
    if (c != 0 && (f & (TF.FLOW_START | TF.FLOW_END)) != 0) {
      const slot = pagedSlot(corr, c, false);
      if (slot != 0) {
        const p = (f & TF.FLOW_START) != 0 ? load<u32>(slot, 4) : load<u32>(slot);
        if (p != 0) store<u32>(r, p - 1, 32);
      }
    }
    O.raw(r, REC);
  }
  statsEnd();
  O.flush();
}
