/**
 * Timeline tables for the in-browser viewer (web/): compact, fixed-size binary tables a canvas can draw from
 * without one JS object per event. The host gets them as a byte stream (src/core/timeline.ts parses it).
 *
 * The records leave the core as they are produced: each event becomes a 40-byte record ({@link REC}) written to
 * the output in arrival order, its row (host thread, device stream, …) and name interned on the way (the row is not
 * in the record: in timeline order the rows are contiguous, so the row table says it); the fields
 * only some kinds carry (a kernel's context, registers, shared memory and occupancy; a copy's devices; …) go to
 * extension entries of 16 bytes, so the records of API calls and ranges do not carry them. The core keeps only
 * each event's sort key (emit/timeline_order.ts, 20 B), and at the end of the pass ({@link timelineEnd}) sends the
 * rows, lanes and names, each event's partner (launch ↔ device work) and where each record goes in the timeline's
 * order (the host moves them there: src/core/timeline.ts), then the summary statistics of the same events
 * (emit/stats.ts, `rawtrace stats`), aggregated on the way so the viewer needs no second conversion for its
 * summary panel.
 *
 * Stream layout (little-endian; every block 8-byte aligned), blocks of a 16-byte head {u32 tag, u32 n, u32 m,
 * u32 0} and a payload:
 *   EVENTS (tag 1; its head's last word l), while the pass runs: n records in arrival order ({@link REC}; the lane
 *     0), then m extension entries of 16 B (u32 x3, x4, x5, x6) in arrival order (an event has an entry exactly
 *     when its flags have TF.EXT; x3..x6 are 0 otherwise), then l long durations of 16 B (u32 arrival index of the
 *     event, u32 0, f64 duration in ns) for the block's records whose duration field is {@link DUR_LONG}
 *   TABLES (tag 3): header 64 B: u32 magic "RTTL", u32 version, u32 events, u32 rows, u32 lanes, u32 names,
 *     u32 nameBytes (padded to 8), u32 flags (1 = rows capped, 2 = names capped), u64 baseNs (Unix ns of t = 0),
 *     f64 min start, f64 max end (ns since base), u32 lane cap, u32 extension entries;
 *     rows 32 B each in output order: u32 class ({@link RowClass}), u32 a (pid or device), u32 b (tid or stream),
 *     u32 name id of the thread/stream name (NONE = unnamed), u32 first lane, u32 lanes, u32 first event,
 *     u32 events;
 *     lanes 24 B each: u32 first event, u32 events, u32 row, u32 flags (1 = events may overlap), f64 max duration;
 *     names: `names` × {u32 offset, u32 length} then `nameBytes` bytes of UTF-8
 *   PARTNERS (tag 4, n = events): per event in output order, the output index of the launch (device work) or of
 *     the earliest device work (launch), NONE if none (u32; a u32 0 when n is odd)
 *   ORDER (tag 2, n = events): per event in arrival order, its output index (u32; a u32 0 when n is odd)
 *   then the stats: the result of emit/stats.ts (its own header gives its size; src/core/stats.ts decodeStats).
 * In output order events are grouped by row then lane and sorted by start within a lane.
 */
import { Ev, EvKind, EvFlag } from "../model/event";
import * as S from "../model/session";
import * as O from "./out";
import { statsBegin, statsEventNamed, statsEnd } from "./stats";
import { activeBlocks, occPlausible } from "./xspace";
import { internName, internNameInline, nameShared, namesReset, nameCount, namesPadded, namesCapped, writeNames } from "./timeline_names";
import { detailsOn, detailsWanted, detailsCapture, detailsEnd } from "./timeline_details";
import { RowClass, rowsReset, rowOf, rowKeys, rowCount, rowsCapped, sortRows } from "./timeline_rows";
import {
  K_FLOW_END, K_FLOW_START, MAX_LANES, keyCount, keyPush, keysReset, groupByRow, orderRow, lanes, laneCount,
  minStart, maxEnd, noteOutputIndex, resolvePartners, writePartners, writeInverse,
} from "./timeline_order";

/**
 * Event record (40 B; 48 B before stream version 5, with the row and an f64 duration):
 *   0 f64 start (ns since baseNs)
 *   8 u32 duration (ns; {@link DUR_LONG}: 2^32 - 1 ns or more, the f64 in its block's long durations)
 *  12 u32 name id (NONE: unnamed)
 *  16 u8 kind (EvKind)  17 u8 flags ({@link TF})  18 u16 lane within the row (set by the host)
 *  20 u32 correlation (low 32 bits; 0 = none)
 *  24 u32 the arrival index of the event's extension entry, NONE if none
 *  28 u32 x0  32 u32 x1  36 u32 x2, per kind:
 *     KERNEL: grid x; grid y | grid z << 16; block x | block y << 11 | block z << 22 (each packed dimension
 *       saturated at its field's largest value: 65535, 2047 or 1023; CUDA's own limits are 65535, 1024 and 64)
 *     MEMCPY: bytes low; bytes high; copy kind | src kind << 8 | dst kind << 16
 *     MEMSET: bytes low; bytes high; value
 *       (bytes: the model's count; a Gaudi copy's is its `bytes_moved` argument, decode/synapse.ts)
 *     API_RUNTIME / API_DRIVER: cbid; external id (low 32, TF.EXTERNAL); return value
 *     SYNC: sync type; event id; stream (NONE: context-wide)
 *     RANGE / INSTANT: color (ARGB); domain name id (NONE: default domain); training step number (TF.STEP,
 *       model/steps.ts; else 0)
 *     GPU_RANGE: device; stream; 0      GRAPH: graph id; external id; 0
 *     EVENT_RECORD: event id; 0; 0      OVERHEAD: overhead kind; 0; 0
 *     COUNTER: value low; value high; 0 (a sample of a device counter, duration 0, on its counter's row)
 * Extension entry (only for events where one of these is not 0): u32 x3, x4, x5, x6, per kind:
 *     KERNEL: context; registers per thread | theoretical occupancy << 16 (units of 0.01 %, {@link OCC_NONE} when
 *       the device table cannot tell: emit/xspace.ts's calculation); static shared memory; dynamic shared memory
 *     MEMCPY: context; source device; destination device      MEMSET, GRAPH: context
 *     SYNC: context; the correlation id and the stream of the CUDA event recording it waits on; 1 when those are
 *       known (EvFlag.WAIT_SOURCE), else 0, 0, 0
 *     API_RUNTIME / API_DRIVER: external id (high 32)
 */
export const REC: usize = 40;
/** Duration field value of a duration that does not fit it (2^32 - 1 ns, 4.3 s, or more): see the long durations. */
const DUR_LONG: u32 = 0xffffffff;
/** Bytes per long-duration entry. */
const LONG: usize = 16;
/** Bytes per extension entry in the stream (x3..x6). */
const EXT: usize = 16;
/** Records per EVENTS block. */
const STAGE: u32 = 4096;
/** Block tags. */
const T_EVENTS: u32 = 1;
const T_ORDER: u32 = 2;
const T_TABLES: u32 = 3;
const T_PARTNERS: u32 = 4;
/** The name of a CUDA event record in the tables, as the Chrome JSON's (Kineto's cuda_event slices). */
const CUDA_EVENT_NAME = memory.data<u8>([99, 117, 100, 97, 69, 118, 101, 110, 116]); // "cudaEvent"
/** Occupancy field value meaning "unknown" (no device table, or one the calculation cannot use). */
export const OCC_NONE: u32 = 0xffff;
export const NONE: u32 = 0xffffffff;
const MAGIC: u32 = 0x4c545452; // "RTTL"
const VERSION: u32 = 5;
const HEADER: usize = 64;

/** Record flag bits (byte 17). */
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
  /** x3..x6 are in the event's extension entry (else all 0). */
  EXT = 128,
}

// ---- State ---------------------------------------------------------------------------------------------------

let base: u64 = 0;
let lastTs: u64 = 0;
let extCount: u32 = 0;
let extStage: usize = 0; // STAGE extension entries of the open block
let longStage: usize = 0; // STAGE long durations of the open block
let blockHead: usize = 0; // head of the open EVENTS block in the output window (0: none)
let blockRecs: u32 = 0;
let blockExt: u32 = 0;
let blockLong: u32 = 0;

/** Last event end seen (Unix ns), for closing ranges left open. */
export function timelineLastTs(): u64 {
  return lastTs;
}

/** Starts the pass: `baseNs` is t = 0 of the tables (Unix ns). */
export function timelineBegin(baseNs: u64): void {
  base = baseNs;
  lastTs = 0;
  extCount = 0;
  extStage = heap.alloc(<usize>STAGE * EXT);
  longStage = heap.alloc(<usize>STAGE * LONG);
  blockHead = 0;
  blockRecs = 0;
  blockExt = 0;
  blockLong = 0;
  keysReset();
  rowsReset();
  namesReset();
  statsBegin();
  memory.fill(occCache, 0, <usize>OCC_CACHE * 24);
}

// @ts-ignore: decorator
@inline function blockHeadAt(p: usize, tag: u32, n: u32, m: u32, l: u32 = 0): void {
  store<u32>(p, tag);
  store<u32>(p, n, 4);
  store<u32>(p, m, 8);
  store<u32>(p, l, 12);
}

/** Writes a block head through the output window. */
function writeHead(tag: u32, n: u32): void {
  O.need(16);
  blockHeadAt(O.pos, tag, n, 0);
  O.pos += 16;
}

/** Writes a u32 0 when `n` (u32 words just written) is odd, keeping blocks 8-byte aligned. */
function pad4(n: u32): void {
  if ((n & 1) == 0) return;
  O.need(4);
  store<u32>(O.pos, 0);
  O.pos += 4;
}

/** Opens an EVENTS block: its head and room for {@link STAGE} records in the output window (no flush until closed). */
function openBlock(): void {
  O.need(16 + <usize>STAGE * REC);
  blockHead = O.pos;
  O.pos += 16;
  blockRecs = 0;
  blockExt = 0;
  blockLong = 0;
}

/** Closes the open EVENTS block (if any): its counts, then its extension entries and long durations. */
function closeBlock(): void {
  if (blockHead == 0) return;
  blockHeadAt(blockHead, T_EVENTS, blockRecs, blockExt, blockLong);
  O.raw(extStage, <usize>blockExt * EXT);
  O.raw(longStage, <usize>blockLong * LONG);
  blockHead = 0;
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

/**
 * The record's flags ({@link TF}) from the event's (EvFlag): the low four bits are the same, PEER, INCOMPLETE and
 * STEP move down (shifts and masks, not seven tests; the tests compiled to seven reloads of the flags).
 */
// @ts-ignore: decorator
@inline function tfOf(fl: u32): u32 {
  return (fl & (TF.EXTERNAL | TF.FLOW_START | TF.FLOW_END | TF.ASYNC)) | ((fl >> 5) & TF.PEER) |
    ((fl >> 6) & (TF.INCOMPLETE | TF.STEP));
}

/** Sends one event's record to the host and keeps its sort key. */
export function timelineEvent(e: Ev): void {
  if (keyCount == 0xffffffff) return;
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
    case EvKind.COUNTER:
      // A device counter's sample: a row per (device, counter name), drawn as a counter track.
      cls = RowClass.GPU_COUNTER;
      a = e.device;
      b = internNameInline(e.namePtr, e.nameLen, (e.flags & EvFlag.NAME_KEPT) != 0);
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
  if (e.end > lastTs) lastTs = e.end;
  const row = rowOf(cls, a, b);
  const kept = (e.flags & EvFlag.NAME_KEPT) != 0;
  // A CUDA event record is named as the Chrome JSON names it (Kineto's "cudaEvent", emit/chrome_json.ts), not by the
  // model's "Event Record" (XSpace's name, and `rawtrace stats`', which the summary's statistics keep: not by id).
  const record = e.kind == EvKind.EVENT_RECORD;
  const name = record ? internName(CUDA_EVENT_NAME, 9, true) : internNameInline(e.namePtr, e.nameLen, kept);
  // The stats key a kept name by its id (the id of a kept name stands for its text); they count the events they
  // aggregate: count the others (derived GPU ranges) here.
  if (!statsEventNamed(e, kept && !record && !nameShared(name) ? name : NONE)) S.addEvent();
  if (blockHead == 0 || blockRecs == STAGE) {
    closeBlock();
    openBlock();
  }
  const r = O.pos;
  O.pos += REC;
  blockRecs++;
  const start = rel(e.start);
  const d = e.end - e.start;
  const dur = <f64>d;
  store<f64>(r, start);
  if (d < <u64>DUR_LONG) store<u32>(r, <u32>d, 8);
  else {
    // Rare (ranges and waits over 4.3 s): the f64 goes with the block, so the record stays 40 bytes.
    store<u32>(r, DUR_LONG, 8);
    const l = longStage + <usize>blockLong * LONG;
    blockLong++;
    store<u32>(l, keyCount); // this event's arrival index (its key is pushed last)
    store<u32>(l, 0, 4);
    store<f64>(l, dur, 8);
  }
  store<u32>(r, name, 12);
  let f = tfOf(e.flags);
  store<u8>(r, <u8>e.kind, 16);
  store<u16>(r, 0, 18);
  store<u32>(r, <u32>e.correlation, 20);
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
    case EvKind.MEMCPY: {
      x3 = e.context;
      x4 = e.srcDevice;
      x5 = e.dstDevice;
      const n = e.bytes;
      x0 = <u32>n;
      x1 = <u32>(n >> 32);
      x2 = (e.copyKind & 0xff) | ((e.srcKind & 0xff) << 8) | ((e.dstKind & 0xff) << 16);
      break;
    }
    case EvKind.MEMSET: {
      x3 = e.context;
      const n = e.bytes;
      x0 = <u32>n;
      x1 = <u32>(n >> 32);
      x2 = e.memsetValue;
      break;
    }
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
      // The recording an event sync or stream wait waits on (decode/cupti_events.ts): its call and stream.
      if ((e.flags & EvFlag.WAIT_SOURCE) != 0) {
        x4 = e.srcContext;
        x5 = e.srcDevice;
        x6 = 1;
      }
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
    case EvKind.COUNTER:
      x0 = <u32>e.bytes;
      x1 = <u32>(e.bytes >> 32);
      break;
  }
  store<u32>(r, x0, 28);
  store<u32>(r, x1, 32);
  store<u32>(r, x2, 36);
  let ext: u32 = NONE;
  let bits = row;
  if ((x3 | x4 | x5 | x6) != 0) {
    ext = extCount++;
    const x = extStage + <usize>blockExt * EXT;
    blockExt++;
    store<u32>(x, x3);
    store<u32>(x, x4, 4);
    store<u32>(x, x5, 8);
    store<u32>(x, x6, 12);
    f |= TF.EXT;
  }
  const c = <u32>e.correlation;
  // Device work with its launch's correlation id links back to it (partner, flow arrow) even where the decoder drew
  // the Chrome arrow to the launch's first device op only (Synapse: one ac2g flow per launch; docs/decoders/hpu.md):
  // every op a launch lists names it. Not for an id two processes used (emit/dispatch.ts cleared its flow bits).
  if (c != 0 && (f & (TF.FLOW_START | TF.FLOW_END)) == 0 && isDeviceWork(e.kind) &&
      (S.ambiguousCorrs == 0 || !S.corrAmbiguous(<u64>e.correlation))) f |= TF.FLOW_END;
  store<u8>(r, <u8>f, 17);
  store<u32>(r, ext, 24);
  if (c != 0) {
    if ((f & TF.FLOW_START) != 0) bits |= K_FLOW_START;
    else if ((f & TF.FLOW_END) != 0) bits |= K_FLOW_END;
  }
  keyPush(start, dur, bits, c);
  // The viewer's details of an event (emit/timeline_details.ts): its Chrome JSON, written apart from the tables.
  if (detailsOn) {
    // Named by the row's words (class, a, b), as the page has them: past the row cap (timeline_rows.ts MAX_ROWS)
    // those are the shared last row's, not this event's own.
    const rk = rowKeys + (<usize>row << 5);
    if (detailsWanted(start, e.kind, load<u32>(rk, 8), load<u32>(rk, 12), load<u32>(rk, 16))) {
      closeBlock();
      detailsCapture(e, keyCount - 1);
    }
  }
}

/** Kernels, copies, fills and graphs: the work a host call launches. */
// @ts-ignore: decorator
@inline function isDeviceWork(k: u32): bool {
  return k == EvKind.KERNEL || k == EvKind.MEMCPY || k == EvKind.MEMSET || k == EvKind.GRAPH;
}

// Recent launch shapes → occupancy, direct-mapped (a training loop launches a few shapes over and over): 64 static
// entries of {u32 device, u32 registers, u32 static smem, u32 dynamic smem, u32 block threads, u32 result + 1}. The
// key is five words, too wide for util/recent.ts.
const OCC_CACHE: u32 = 64;
const occCache = memory.data(<i32>(OCC_CACHE * 24), 16);

/**
 * Theoretical occupancy of kernel `e` in units of 0.01 % (active warps per SM over the maximum, as XProf's
 * theoretical_occupancy_pct), or {@link OCC_NONE} when its device table cannot tell. The cache's hit path is inlined
 * into timelineEvent.
 */
// @ts-ignore: decorator
@inline function kernelOccupancy(e: Ev): u32 {
  const block = <u64>e.blockX * <u64>e.blockY * <u64>e.blockZ;
  const h = (e.device * 0x9e3779b1) ^ (e.registersPerThread * 0x85ebca6b) ^ (e.staticSharedMemory * 0xc2b2ae35) ^
    (e.dynamicSharedMemory * 0x27d4eb2f) ^ (<u32>block * 0x165667b1);
  const c = occCache + <usize>(h >> 26) * 24;
  return load<u32>(c, 20) != 0 && load<u32>(c) == e.device && load<u32>(c, 4) == e.registersPerThread &&
    load<u32>(c, 8) == e.staticSharedMemory && load<u32>(c, 12) == e.dynamicSharedMemory &&
    <u64>load<u32>(c, 16) == block ? load<u32>(c, 20) - 1 : occupancyMiss(e, block, c);
}

/** {@link kernelOccupancy} past its cache: computed and cached in entry `c`. */
function occupancyMiss(e: Ev, block: u64, c: usize): u32 {
  const r = occupancyOf(e, block);
  store<u32>(c, e.device);
  store<u32>(c, e.registersPerThread, 4);
  store<u32>(c, e.staticSharedMemory, 8);
  store<u32>(c, e.dynamicSharedMemory, 12);
  store<u32>(c, <u32>block, 16); // a block over 2^32 threads never matches a u32: computed each time
  store<u32>(c, r + 1, 20);
  return r;
}

/** {@link kernelOccupancy} computed (`block`: threads per block). */
function occupancyOf(e: Ev, block: u64): u32 {
  const d = S.findDevice(e.device);
  // NVIDIA's allocation rules (emit/xspace_occupancy.ts): another maker's GPU's is unknown (before 2026-12-03 an
  // MI250's kernels read 100 %).
  if (S.deviceMaker != "Nvidia" || !occPlausible(d)) return OCC_NONE;
  if (block == 0 || block > 0xffffffff) return 0;
  const active = activeBlocks(d, e.registersPerThread, e.staticSharedMemory, e.dynamicSharedMemory, <u32>block);
  const pct = <f64>active * <f64>block * 100.0 / <f64>load<u32>(d, 40);
  return <u32>Math.round(min(pct, 100.0) * 100.0);
}

// ---- End of pass -------------------------------------------------------------------------------------------------

/** Orders the events, lays out their lanes and writes the fix-up and the tables (see the stream layout above). */
export function timelineEnd(): void {
  closeBlock();
  const n = keyCount;
  const nRows = rowCount;
  const h = heap.alloc(HEADER);
  const order = heap.alloc(<usize>(nRows + 1) << 2);
  sortRows(order);
  const rowFirst = heap.alloc(<usize>(nRows + 1) << 2); // by row index
  const counts = heap.alloc(<usize>(nRows + 1) << 2); // by row index
  for (let r: u32 = 0; r < nRows; r++) store<u32>(counts + (<usize>r << 2), load<u32>(rowKeys + (<usize>r << 5), 24));
  groupByRow(order, nRows, rowFirst, counts);

  // Rows in output order, each sorted and split into lanes.
  const rowLanes = heap.alloc(<usize>(nRows + 1) << 3); // by output index: first lane, lane count
  for (let k: u32 = 0; k < nRows; k++) {
    const row = load<u32>(order + (<usize>k << 2));
    store<u32>(rowLanes + (<usize>k << 3), laneCount);
    const used = orderRow(k, load<u32>(rowFirst + (<usize>row << 2)), load<u32>(counts + (<usize>row << 2)));
    store<u32>(rowLanes + (<usize>k << 3), used, 4);
  }
  noteOutputIndex();
  resolvePartners();

  // TABLES.
  writeHead(T_TABLES, 0);
  memory.fill(h, 0, HEADER);
  store<u32>(h, MAGIC);
  store<u32>(h, VERSION, 4);
  store<u32>(h, n, 8);
  store<u32>(h, nRows, 12);
  store<u32>(h, laneCount, 16);
  store<u32>(h, nameCount, 20);
  store<u32>(h, namesPadded(), 24);
  store<u32>(h, (rowsCapped ? 1 : 0) | (namesCapped ? 2 : 0), 28);
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
  O.raw(lanes, <usize>laneCount * 24);
  writeNames(h);

  // PARTNERS (output order), ORDER (per record its output index), then the statistics.
  writeHead(T_PARTNERS, n);
  writePartners();
  pad4(n);
  writeHead(T_ORDER, n);
  writeInverse();
  pad4(n);
  statsEnd();
  O.flush();
  if (detailsOn) detailsEnd();
}
