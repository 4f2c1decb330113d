/**
 * Chrome Trace Event JSON, as Kineto writes it (kineto.md §3; ../shared/data/real/kineto-cuda): schemaVersion,
 * deviceProperties, version metadata, baseTimeNanoseconds, traceEvents with Kineto's categories, args and ac2g
 * flows, process/thread metadata, then a `rawtrace` object with what the conversion saw (warnings, drops).
 *
 * Compact (one event per line), always valid JSON: names are escaped (session strings are valid UTF-8 already),
 * numbers never NaN/Infinity. Timestamps are µs relative to baseTimeNanoseconds with exactly three decimals.
 * Bytes go straight into the output window (emit/out.ts); nothing is built as a string. The end of the trace (row
 * metadata, the trailer) is emit/chrome_meta.ts, from the rows and state this module exports; its head (everything
 * before the first event, and the time base) is emit/chrome_header.ts.
 */
import { Ev, EvKind, EvFlag } from "../model/event";
import * as S from "../model/session";
import * as O from "./out";
import { Table, tableNew, tableUpsert, tableFind, inserted } from "../util/hash_table";
import * as X from "./options";
import { xpuDeviceArgs } from "./chrome_xpu";
import { apiCategory } from "./chrome_category";
import { tpl, tplLen, tplText, putLit, putU32, putU64, putMicros, putTs, putTsInline, putJsonChars, canOverread, tsReset, putId, CORR_IDS, EXTERNAL_IDS, putConst, tplIs } from "./put";
import { catOpen, putRow, rowText, rowLen, putHead, putStream, putLaunch, putDeviceTail, chromeTextBegin } from "./chrome_text";
import { chromeArgs } from "./chrome_args";
import { chromeHeader, keyU } from "./chrome_header";
import { chromeLead } from "./chrome_meta";
import { occPlausible, activeBlocks } from "./xspace_occupancy";
import { nsOn, nsBase, flowBase, gpid, hpid, chromePidsBegin } from "./chrome_pids";
import { RowTable, rowLogNote, rowLogOn, rowLogCount, rowLogTable, rowLogKey, rowLogSeg } from "./chrome_split";

/** Kineto's tid offset for the "stream N (sync)" rows (kSyncStreamTidOffset). */
export const SYNC_TID_OFFSET: u64 = 1000000;
/** Row used for context-wide syncs that have no stream. */
const CONTEXT_SYNC_TID: u64 = 999999;

let base: u64 = 0;
let first = true;
/** Latest event end written (Unix ns). */
export let lastTs: u64 = 0;
/** Host rows seen: (pid << 32 | tid) → 1 (chrome_meta.ts writes their metadata). */
export let hostRows: Table = 0;
/** GPU rows seen: (device << 32 | tid) → 1 stream row, 3 context-sync row (tid < 2^32). */
export let gpuRows: Table = 0;
/**
 * (device << 32 | stream) → 1: the "stream N (sync)" rows, tid N + SYNC_TID_OFFSET (≥ 2^32 for stream ids near
 * 2^32, so they are keyed by the stream, not the tid).
 */
export let syncRows: Table = 0;
/** Whether a CUPTI overhead event was written (its process gets metadata). */
export let overheadSeen = false;
/** The trace name (UTF-8, session-owned), or length 0. */
export let traceNamePtr: usize = 0;
export let traceNameLen: u32 = 0;

function rowTablesNew(): void {
  hostRows = tableNew(64);
  gpuRows = tableNew(64);
  syncRows = tableNew(16);
}

/** Split conversion (assembly/split.ts): this part writes the JSON header (the first part only). */
export let chromeSplitHeader = true;
/** Sets whether a split part writes the header. */
export function chromeSplitSetHeader(on: bool): void {
  chromeSplitHeader = on;
}
/**
 * A split conversion's segment after the first starts: its first event (or the end's first row) is written with
 * its comma, whatever this worker wrote before; the host drops the comma when no earlier segment wrote an event.
 */
export function chromeSplitSegmentStart(): void {
  first = false;
}

/** Value of the row `key` of table `t` (a split part's log entry, for export). */
export function chromeRowValue(t: u32, key: u64): u64 {
  const s = tableFind(t == RowTable.HOST ? hostRows : t == RowTable.GPU ? gpuRows : syncRows, key);
  return s == 0 ? 0 : load<u64>(s);
}

/**
 * The split conversion's end writer, before the end: rebuilds the row tables as one conversion of the whole file
 * would have filled them — the other workers' rows (`n` entries {table u64 | segment << 32, key u64, value u64} at
 * `p`, in segment order) merged in segment order with this worker's own log — and takes the other workers' last
 * event end and CUPTI-overhead flag.
 */
export function chromeRowsReplay(p: usize, n: u32, lastEnd: u64, overhead: bool): void {
  const oh = hostRows, og = gpuRows, os = syncRows;
  rowTablesNew();
  const m = rowLogCount();
  let i: u32 = 0;
  let j: u32 = 0;
  while (i < n || j < m) {
    // Segments belong to one worker each: never equal between the two lists.
    if (j == m || (i < n && <u32>(load<u64>(p + <usize>i * 24) >> 32) < rowLogSeg(j))) {
      const a = p + <usize>i * 24;
      const t = <u32>load<u64>(a);
      store<u64>(tableUpsert(t == RowTable.HOST ? hostRows : t == RowTable.GPU ? gpuRows : syncRows, load<u64>(a, 8)), load<u64>(a, 16));
      i++;
    } else {
      const t = rowLogTable(j);
      const k = rowLogKey(j);
      const s = tableFind(t == RowTable.HOST ? oh : t == RowTable.GPU ? og : os, k);
      store<u64>(tableUpsert(t == RowTable.HOST ? hostRows : t == RowTable.GPU ? gpuRows : syncRows, k), s == 0 ? 0 : load<u64>(s));
      j++;
    }
  }
  // The recent-row set refers to the old tables' contents: clear it so that later notes reach the new tables.
  memory.fill(seenRows, 0, SEEN_SLOTS * 16 * 2);
  if (lastEnd > lastTs) lastTs = lastEnd;
  if (overhead) overheadSeen = true;
}

/** True when an event (or metadata row) was written since the header: the next one starts with a comma. */
export function chromeWroteEvent(): bool {
  return !first;
}

/** True when the emitter met a CUPTI overhead event (a split part's export). */
export function chromeOverheadSeen(): bool {
  return overheadSeen;
}

/** Sets the traceName written at the end (bytes owned by the caller, copied). */
export function chromeSetTraceName(p: usize, n: u32): void {
  traceNamePtr = p;
  traceNameLen = n;
}

/** Last event end seen (Unix ns). */
export function chromeLastTs(): u64 {
  return lastTs;
}

/** `t` (Unix ns) relative to the trace's base (ns; 0 before it). */
// @ts-ignore: decorator
@inline export function rel(t: u64): u64 {
  return t > base ? t - base : 0;
}

/**
 * Writes everything before the first event. `baseNs` is the time base (Unix ns); `startNs` the time it was floored
 * from (the earliest kept time, else the collector start, Unix ns): where "Record Window End" stands when the dump
 * holds no event (every event ends at or after it, so it never moves the end of one that does). `headerless`: write
 * nothing, every event with its leading comma (the viewer's details of single events: emit/timeline_details.ts).
 */
export function chromeBegin(baseNs: u64, startNs: u64, headerless: bool = false): void {
  base = baseNs;
  first = true;
  lastTs = startNs;
  rowTablesNew();
  seenRows = heap.alloc(SEEN_SLOTS * 16 * 2);
  memory.fill(seenRows, 0, SEEN_SLOTS * 16 * 2);
  tsReset();
  chromeTextBegin();
  overheadSeen = false;
  chromePidsBegin();
  if (headerless || X.eventsOnly || (rowLogOn && !chromeSplitHeader)) {
    // Events only: every event, the first too, is written as ",\n{...}"; the host writes header and trailer
    // (a split conversion's later parts: the host writes the first part's header and drops one comma).
    first = false;
    // A merge's rank (events only) opens its part with its lead too; a split's later parts and single events do not.
    if (!headerless && X.eventsOnly) chromeLead();
    return;
  }
  chromeHeader(base);
  chromeLead();
}

/** The separator before an event: a newline first, then a comma and a newline. */
// @ts-ignore: decorator
@inline export function sep(): void {
  if (first) {
    first = false;
    O.byte(10);
  } else {
    O.byte(44);
    O.byte(10);
  }
}

// The ts text of the last event head (≤ 24 bytes + v128 slack): its flow event repeats pid, tid (putRow's text) and ts.
const HEAD_TS: usize = memory.data(48, 16);
let headTsLen: usize = 0;
/** Longest name the fast path writes (escaped, it may grow 6×: within the reserve asked for). */
const NAME_FAST: u32 = 4096;
const T_DUR = tplIs(tpl(',"dur":'), 7);
const T_ARGS = tplIs(tpl(',"args":{'), 9);
const T_INCOMPLETE = tpl('"incomplete":true,');
const T_EXTERNAL = tplIs(tpl('"External id":'), 14);
const T_FLOW_S = tplIs(tpl(',\n{"ph":"s","id":'), 17);
const T_FLOW_F = tplIs(tpl(',\n{"ph":"f","id":'), 17);
const T_FLOW_S_END = tplIs(tpl(',"cat":"ac2g","name":"ac2g"}'), 28);
const T_FLOW_F_END = tplIs(tpl(',"cat":"ac2g","name":"ac2g","bp":"e"}'), 37);

/** Writes template `t` (which starts with the `,\n` separator), without its comma for the first event. */
// @ts-ignore: decorator
@inline function open(q: usize, t: usize): usize {
  if (!first) return putLit(q, t);
  first = false;
  const n = <usize>load<u32>(t);
  for (let i: usize = 1; i < n; i++) store<u8>(q + i - 1, load<u8>(t + 16 + i));
  return q + n - 1;
}

// The openings of the categories head writes, looked up once (catOpen searches its list).
const T_CAT_KERNEL = catOpen("kernel");
const T_CAT_MEMCPY = catOpen("gpu_memcpy");
const T_CAT_MEMSET = catOpen("gpu_memset");
const T_CAT_SYNC = catOpen("cuda_sync");
const T_CAT_EVENT = catOpen("cuda_event");
/** Kineto's name of a CUDA event record slice. */
const CUDA_EVENT_NAME = memory.data<u8>([99, 117, 100, 97, 69, 118, 101, 110, 116]); // "cudaEvent"
/** Opening template of each host-call category ({@link ApiCat} value → template, 0 = not yet looked up). */
const API_CAT_T: usize = memory.data(256 * 4, 4);

/** Opening template of API event `e`'s category (emit/chrome_category.ts names it). */
// @ts-ignore: decorator
@inline function apiCatOpen(e: Ev): usize {
  const a = API_CAT_T + (<usize>e.apiCat << 2);
  let t = <usize>load<u32>(a);
  if (t == 0) {
    t = catOpen(apiCategory(e));
    store<u32>(a, <u32>t);
  }
  return t;
}

/**
 * Writes the opening of an "X" event (`t`: its category's opening template, from catOpen) up to its args' first
 * key: name, pid, tid, ts, dur, then `"incomplete":true,` and `"External id":N,` when they apply.
 */
function head(t: usize, e: Ev, pid: u64, tid: u64): void {
  const n = e.nameLen;
  let q: usize;
  if (n <= NAME_FAST && canOverread(e.namePtr, n)) {
    O.need(O.EVENT_RESERVE + (<usize>n << 3));
    // A kept name after the first event: the opening through the row from chrome_text's cache.
    if ((e.flags & EvFlag.NAME_KEPT) != 0 && !first) q = putHead(O.pos, t, e, pid, tid);
    else q = putRow(putJsonChars(open(O.pos, t), e.namePtr, n), pid, tid);
  } else {
    // A long name (or one at the very end of memory): written in pieces, flushing as needed. The template without
    // its leading ",\n" (sep writes the separator).
    O.need(O.EVENT_RESERVE);
    sep();
    O.raw(tplText(t) + 2, tplLen(t) - 2);
    O.jsonChars(e.namePtr, e.nameLen);
    O.need(O.EVENT_RESERVE);
    q = putRow(O.pos, pid, tid);
  }
  O.pos = headRest(q, e);
}

/**
 * Writes the rest of an event head after its row text (putRow's, ending in `"ts":`): `…,"dur":…,"args":{` and the
 * incomplete / External id args; keeps the ts text for the flow event that may follow. Returns the end.
 */
function headTail(q: usize, e: Ev): usize {
  return headRest(q, e);
}

/** {@link headTail} written out in {@link head} (one call less per event). */
// @ts-ignore: decorator
@inline function headRest(q: usize, e: Ev): usize {
  const ts = q;
  q = putTsInline(q, rel(e.start));
  headTsLen = q - ts;
  v128.store(HEAD_TS, v128.load(ts));
  v128.store(HEAD_TS, v128.load(ts, 16), 16);
  q = putConst(q, T_DUR, 7);
  q = putMicros(q, e.end - e.start);
  q = putConst(q, T_ARGS, 9);
  // No end in the vendor record (model/timing.ts): written with dur 0 at its start.
  if ((e.flags & EvFlag.INCOMPLETE) != 0) q = putLit(q, T_INCOMPLETE);
  if ((e.flags & EvFlag.HAS_EXTERNAL) != 0) {
    q = putId(putConst(q, T_EXTERNAL, 14), e.externalId, EXTERNAL_IDS);
    store<u8>(q, 44);
    q++;
  }
  return q;
}

/**
 * Writes the ac2g flow event of `e` (a flow end, when device work `e` has one: FLOW_END), right after {@link head}
 * wrote `e` itself: pid, tid and ts are the same, so their text is copied from what head wrote.
 */
function flowEnd(e: Ev): void {
  if ((e.flags & EvFlag.FLOW_END) == 0) return; // device work no host call is linked to
  flowAt(e, T_FLOW_F, 17, T_FLOW_F_END, 37);
}

/** {@link flowEnd} for the flow start of host call `e`. */
function flowStart(e: Ev): void {
  flowAt(e, T_FLOW_S, 17, T_FLOW_S_END, 28);
}

/** The flow event of `e`, between opening template `open` and closing template `close` (`n`, `m` bytes: constants). */
// @ts-ignore: decorator
@inline function flowAt(e: Ev, open: usize, n: usize, close: usize, m: usize): void {
  if (S.ambiguousCorrs != 0 && S.corrAmbiguous(<u64>e.correlation)) return; // two processes' id: no arrow (warned)
  if (e.correlation == 0) return; // 0 is no correlation (putCorr): no arrow joining every 0 to every other 0
  let q = putId(putConst(O.pos, open, n), e.correlation + flowBase, CORR_IDS);
  // The row text without its leading quote, 64 bytes whatever its length (≤ 61): putRow's and putHead's entries
  // are readable that far.
  const r = rowText + 1;
  v128.store(q, v128.load(r));
  v128.store(q, v128.load(r, 16), 16);
  v128.store(q, v128.load(r, 32), 32);
  v128.store(q, v128.load(r, 48), 48);
  q += rowLen - 1;
  v128.store(q, v128.load(HEAD_TS));
  v128.store(q, v128.load(HEAD_TS, 16), 16);
  O.pos = putConst(q + headTsLen, close, m);
}

const T_GRAPH = tpl(',"graph id":');
const T_GRAPH_NODE = tpl(',"graph node id":');
const T_CHANNEL = tpl(',"channel":');
const T_CHANNEL_TYPE = tpl(',"channel_type":');

/** Writes the graph and channel args of device work `e` (when valid) and the two closing braces at q. */
function putGpuTail(q: usize, e: Ev): usize {
  if ((e.flags & (EvFlag.HAS_GRAPH | EvFlag.HAS_CHANNEL)) == 0) {
    store<u16>(q, 0x7d7d); // }}
    return q + 2;
  }
  return putDeviceTail(q, e, gpuArgs);
}

/** {@link putGpuTail}'s plain formatting, for args to write (chrome_text.ts keeps the text it writes). */
function gpuArgs(q: usize, e: Ev): usize {
  if ((e.flags & EvFlag.HAS_GRAPH) != 0) {
    q = putU32(putLit(q, T_GRAPH), e.graphId);
    q = putU64(putLit(q, T_GRAPH_NODE), e.graphNodeId);
  }
  if ((e.flags & EvFlag.HAS_CHANNEL) != 0) {
    q = putU32(putLit(q, T_CHANNEL), e.channelId);
    q = putU32(putLit(q, T_CHANNEL_TYPE), e.channelType);
  }
  store<u16>(q, 0x7d7d); // }}
  return q + 2;
}

/** The graph and channel args of device work `e` at O.pos, without the closing braces: for event writers in the O.* style. */
// @ts-ignore: decorator
@inline function gpuTail(e: Ev): void {
  O.pos = putGpuTail(O.pos, e) - 2;
}

// Rows repeat: a small direct-mapped set of recently noted rows (64 GPU, then 64 host entries of {key, kind}, placed
// by key alone, so an entry always holds the kind last noted for its key) skips most table updates. Kinds are never
// 0, so the zeroed set matches nothing.
const SEEN_SLOTS: usize = 64;
let seenRows: usize = 0;

/**
 * Notes GPU row `row` of `device` (both < 2^32): kind 1 a stream row (row = stream), 2 a stream's sync row (row =
 * the stream; the row's tid is stream + SYNC_TID_OFFSET), 3 the context-sync row (row = CONTEXT_SYNC_TID).
 */
// @ts-ignore: decorator
@inline function noteGpuRow(device: u64, row: u64, kind: u64): void {
  const k = (device << 32) | row;
  const a = seenRows + ((<usize>(k ^ (k >> 29)) & (SEEN_SLOTS - 1)) << 4);
  if (((load<u64>(a) ^ k) | (load<u64>(a, 8) ^ kind)) != 0) {
    store<u64>(a, k);
    store<u64>(a, kind, 8);
    if (kind == 2) {
      store<u64>(tableUpsert(syncRows, k), 1);
      if (inserted) rowLogNote(RowTable.SYNC, k);
    } else {
      store<u64>(tableUpsert(gpuRows, k), kind);
      if (inserted) rowLogNote(RowTable.GPU, k);
    }
  }
}
// @ts-ignore: decorator
@inline function noteHostRow(pid: u64, tid: u64): void {
  const k = (pid << 32) | tid;
  const a = seenRows + ((SEEN_SLOTS + (<usize>(k ^ (k >> 29)) & (SEEN_SLOTS - 1))) << 4);
  if (((load<u64>(a) ^ k) | (load<u64>(a, 8) ^ 1)) != 0) {
    store<u64>(a, k);
    store<u64>(a, 1, 8);
    store<u64>(tableUpsert(hostRows, k), 1);
    if (inserted) rowLogNote(RowTable.HOST, k);
  }
}

// @ts-ignore: decorator
@inline function noteEnd(t: u64): void {
  if (t > lastTs) lastTs = t;
}

/** `,"ptr":"0x…","size":N` of an allocating or freeing API call (Kineto's ROCm malloc rows); size only when known. */
function allocArgs(e: Ev): void {
  O.ascii(',"ptr":"0x');
  let shift: i32 = 60;
  while (shift > 0 && ((e.address >> <u64>shift) & 0xf) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) {
    const d = <u32>((e.address >> <u64>shift) & 0xf);
    O.byte(d < 10 ? 48 + d : 87 + d);
  }
  O.byte(34);
  if (e.bytes != 0) keyU(',"size":', e.bytes);
}

const T_QUEUED = tpl('"queued":');
const T_QUEUED0 = tplIs(tpl('"queued":0'), 10);
const T_BYTES = tpl(',"bytes":');
const T_CBID = tplIs(tpl('"cbid":'), 7);
const T_CORR = tplIs(tpl(',"correlation":'), 15);
const T_GRAPH_OPEN = tpl(',\n{"ph":"X","cat":"cuda_graph","name":"CUDA Graph ');

/**
 * The launch-shape args of kernel `e` at O.pos: registers, shared memory, blocks and warps per SM (when the device
 * is known), grid and block, and Kineto's estimated achieved occupancy (when the device table holds what the
 * occupancy calculation needs). A pure function of the device table and the fields putLaunch keys its cache on.
 */
function launchArgs(e: Ev): void {
  keyU(',"registers per thread":', e.registersPerThread);
  keyU(',"shared memory":', <u64>e.staticSharedMemory + <u64>e.dynamicSharedMemory);
  const d = S.findDevice(e.device);
  const threads = <f64>e.blockX * <f64>e.blockY * <f64>e.blockZ;
  const blocks = <f64>e.gridX * <f64>e.gridY * <f64>e.gridZ;
  if (d != 0 && load<u32>(d, 4) != 0) {
    const sms = <f64>load<u32>(d, 4);
    const warp = load<u32>(d, 52) != 0 ? <f64>load<u32>(d, 52) : 32.0;
    O.ascii(',"blocks per SM":');
    O.fixed(blocks / sms, 6);
    // Kineto's definition: blocks per SM × threads per block / warp size (not whole warps per block).
    O.ascii(',"warps per SM":');
    O.fixed((blocks / sms) * threads / warp, 6);
  }
  O.ascii(',"grid":[');
  O.i64dec(e.gridX);
  O.byte(44);
  O.i64dec(e.gridY);
  O.byte(44);
  O.i64dec(e.gridZ);
  O.ascii('],"block":[');
  O.i64dec(e.blockX);
  O.byte(44);
  O.i64dec(e.blockY);
  O.byte(44);
  O.i64dec(e.blockZ);
  O.byte(93);
  // Kineto's "est. achieved occupancy %": the resident blocks per SM (cudaOccMaxActiveBlocksPerMultiprocessor, here
  // emit/xspace_occupancy.ts), at most the grid's blocks per SM, × threads per block / max threads per SM; rounded to
  // a whole percent. Computed in f32 as Kineto does, so a value on a .5 boundary rounds the same way.
  // NVIDIA devices only: the calculation is NVIDIA's (register and shared-memory allocation rules); Kineto's ROCm and
  // XPU builds write no occupancy either.
  if (S.deviceMaker == "Nvidia" && occPlausible(d) && threads > 0 && threads <= <f64>load<u32>(d, 36) && load<u32>(d, 4) != 0) {
    const active = activeBlocks(d, e.registersPerThread, e.staticSharedMemory, e.dynamicSharedMemory, <u32>threads);
    const perSm = <f32>blocks / <f32>load<u32>(d, 4);
    const eff = <f32>active < perSm ? <f32>active : perSm;
    const occ = eff * <f32>threads / <f32>load<u32>(d, 40);
    keyU(',"est. achieved occupancy %":', <u64>Math.round(<f64>occ * 100.0));
  }
}

/**
 * After a sync's or CUDA event record's head (which wrote the CPU op's External id if it has one): Kineto's External id
 * for one without, its own correlation id (HTA and Chakra join on it), and the comma after it.
 */
function ownExternal(e: Ev): void {
  if ((e.flags & EvFlag.HAS_EXTERNAL) != 0 || e.correlation == 0) return;
  keyU('"External id":', e.correlation);
  O.byte(44);
}

/**
 * Writes correlation id `corr` at q, right after the `,"correlation":` key just written there (the stream text's or
 * T_CORR); returns the end. 0 is "not correlated" (Gaudi's unlinked calls and copies, XPU's collectives): the key is
 * taken back instead, so that HTA reads its "none" (-1) rather than joining every 0 to every other 0.
 */
// @ts-ignore: decorator
@inline function putCorr(q: usize, corr: u64): usize {
  return corr != 0 ? putId(q, corr, CORR_IDS) : q - 15;
}

/** Writes the vendor args of `e` (model/args.ts, e.g. Synapse recipe fields) at q, if it has any; returns the end. */
// @ts-ignore: decorator
@inline function vendorArgs(q: usize, e: Ev): usize {
  return e.argsLen == 0 ? q : vendorArgsAt(q, e);
}

/** {@link vendorArgs} for an event that has some. */
function vendorArgsAt(q: usize, e: Ev): usize {
  O.pos = q;
  chromeArgs(e);
  O.need(O.EVENT_RESERVE); // the tail and the flow event that follow assume head's reserve
  return O.pos;
}

/** Writes one event (and its flow event, if any). */
export function chromeEvent(e: Ev): void {
  S.addEvent();
  noteEnd(e.end);
  switch (e.kind) {
    case EvKind.KERNEL: {
      const dev = <u64>e.device;
      const tid = <u64>e.stream;
      noteGpuRow(dev, tid, 1);
      head(T_CAT_KERNEL, e, gpid(dev), tid);
      if ((e.flags & EvFlag.HAS_HANDLES) != 0) {
        xpuDeviceArgs(e, base);
        O.ascii("}}");
        flowEnd(e);
        break;
      }
      let q = O.pos;
      if ((e.flags & EvFlag.HAS_QUEUED) != 0) q = putTs(putLit(q, T_QUEUED), rel(e.queued));
      else q = putConst(q, T_QUEUED0, 10);
      q = putCorr(putStream(q, e.device, e.context, e.stream, 0), e.correlation);
      // Launch shape only where the vendor has one (CUDA, ROCm): a Gaudi kernel has none, as in Kineto's HPU events.
      if ((e.flags & EvFlag.HAS_LAUNCH) != 0) q = putLaunch(q, e, launchArgs);
      O.pos = putGpuTail(vendorArgs(q, e), e);
      flowEnd(e);
      break;
    }
    case EvKind.MEMCPY:
    case EvKind.MEMSET: {
      const dev = <u64>e.device;
      const tid = <u64>e.stream;
      noteGpuRow(dev, tid, 1);
      head(e.kind == EvKind.MEMCPY ? T_CAT_MEMCPY : T_CAT_MEMSET, e, gpid(dev), tid);
      if ((e.flags & EvFlag.HAS_HANDLES) != 0) {
        xpuDeviceArgs(e, base);
        O.ascii("}}");
        flowEnd(e);
        break;
      }
      if ((e.flags & EvFlag.PEER) != 0) {
        keyU('"fromDevice":', e.srcDevice);
        keyU(',"inDevice":', e.device);
        keyU(',"toDevice":', e.dstDevice);
        keyU(',"fromContext":', e.srcContext);
        keyU(',"inContext":', e.context);
        keyU(',"toContext":', e.dstContext);
        keyU(',"stream":', e.stream);
        if (e.correlation != 0) keyU(',"correlation":', e.correlation);
      } else O.pos = putCorr(putStream(O.pos, e.device, e.context, e.stream, 1), e.correlation);
      // No byte count in the vendor record: neither bytes nor bandwidth (a 0 would be summed and averaged as real).
      if ((e.flags & EvFlag.BYTES_UNKNOWN) == 0) {
        O.pos = putU64(putLit(O.pos, T_BYTES), e.bytes);
        const dur = e.end - e.start;
        if (dur > 0) {
          // bytes per ns == GB/s
          O.ascii(',"memory bandwidth (GB/s)":');
          O.fixed(<f64>e.bytes / <f64>dur, 9);
        }
      }
      O.pos = putGpuTail(vendorArgs(O.pos, e), e);
      flowEnd(e);
      break;
    }
    case EvKind.API_RUNTIME:
    case EvKind.API_DRIVER: {
      const pid = <u64>e.pid;
      const tid = <u64>e.tid;
      noteHostRow(pid, tid);
      head(apiCatOpen(e), e, hpid(pid), tid);
      let q = putCorr(putConst(putU32(putConst(O.pos, T_CBID, 7), e.apiId), T_CORR, 15), e.correlation);
      if ((e.flags & EvFlag.HAS_ALLOC) != 0) {
        O.pos = q;
        allocArgs(e);
        q = O.pos;
      }
      q = vendorArgs(q, e);
      store<u16>(q, 0x7d7d); // }}
      O.pos = q + 2;
      if ((e.flags & EvFlag.FLOW_START) != 0) flowStart(e);
      break;
    }
    case EvKind.SYNC: {
      const dev = <u64>e.device;
      const noStream = (e.flags & EvFlag.NO_STREAM) != 0;
      const tid = noStream ? CONTEXT_SYNC_TID : <u64>e.stream + SYNC_TID_OFFSET;
      noteGpuRow(dev, noStream ? CONTEXT_SYNC_TID : <u64>e.stream, noStream ? 3 : 2);
      head(T_CAT_SYNC, e, gpid(dev), tid);
      ownExternal(e);
      O.ascii('"cuda_sync_kind":');
      O.jsonString(e.namePtr, e.nameLen);
      O.need(512);
      if (e.apiId == 1 || e.apiId == 2) {
        // Event sync and stream wait: the recording the wait is on (-1 when unknown, as Kineto writes it).
        if ((e.flags & EvFlag.WAIT_SOURCE) != 0) {
          keyU(',"wait_on_stream":', e.srcDevice);
          keyU(',"wait_on_cuda_event_record_corr_id":', e.srcContext);
        } else O.ascii(',"wait_on_stream":-1,"wait_on_cuda_event_record_corr_id":-1');
        keyU(',"wait_on_cuda_event_id":', e.eventId);
      }
      O.ascii(',"stream":');
      if (noStream) O.ascii("-1");
      else O.u64dec(e.stream);
      if (e.correlation != 0) keyU(',"correlation":', e.correlation);
      keyU(',"device":', e.device);
      keyU(',"context":', e.context);
      O.byte(125);
      O.byte(125);
      flowEnd(e);
      break;
    }
    case EvKind.EVENT_RECORD: {
      const dev = <u64>e.device;
      const tid = <u64>e.stream;
      noteGpuRow(dev, tid, 1);
      // Named as Kineto names its cuda_event slices (the model's "Event Record" is XSpace's name for them).
      const np = e.namePtr;
      const nl = e.nameLen;
      e.namePtr = CUDA_EVENT_NAME;
      e.nameLen = 9;
      head(T_CAT_EVENT, e, gpid(dev), tid);
      e.namePtr = np;
      e.nameLen = nl;
      // Kineto's cuda_event args, in its order: External id, event_id, stream, correlation, device, context.
      ownExternal(e);
      keyU('"event_id":', e.eventId);
      keyU(',"stream":', e.stream);
      if (e.correlation != 0) keyU(',"correlation":', e.correlation);
      keyU(',"device":', e.device);
      keyU(',"context":', e.context);
      O.byte(125);
      O.byte(125);
      break;
    }
    case EvKind.OVERHEAD: {
      overheadSeen = true;
      O.need(O.EVENT_RESERVE);
      sep();
      O.ascii('{"ph":"X","cat":"overhead","name":');
      O.jsonString(e.namePtr, e.nameLen);
      O.need(O.EVENT_RESERVE);
      if (nsOn) keyU(',"pid":', nsBase + X.NS_OVERHEAD);
      else O.ascii(',"pid":2147483647'); // OVERHEAD_PID (chrome_meta.ts)
      // One row, tid 0, as Kineto writes its overhead events (the record's thread stays in the viewer and XSpace).
      O.ascii(',"tid":0');
      O.ascii(',"ts":');
      O.micros(rel(e.start));
      O.ascii(',"dur":');
      O.micros(e.end - e.start);
      if ((e.flags & EvFlag.INCOMPLETE) != 0) O.ascii(',"args":{"incomplete":true}');
      O.ascii("}");
      break;
    }
    case EvKind.RANGE:
    case EvKind.INSTANT: {
      const pid = <u64>e.pid;
      const tid = <u64>e.tid;
      noteHostRow(pid, tid);
      if ((e.flags & EvFlag.STEP) != 0 && !isProfilerStep(e.namePtr, e.nameLen)) stepEvent(e, pid, tid);
      O.need(O.EVENT_RESERVE);
      sep();
      if (e.kind == EvKind.RANGE) O.ascii('{"ph":"X","cat":"user_annotation","name":');
      else O.ascii('{"ph":"i","s":"t","cat":"user_annotation","name":');
      O.jsonString(e.namePtr, e.nameLen);
      O.need(O.EVENT_RESERVE);
      keyU(',"pid":', hpid(pid));
      keyU(',"tid":', tid);
      O.ascii(',"ts":');
      O.micros(rel(e.start));
      if (e.kind == EvKind.RANGE) {
        O.ascii(',"dur":');
        O.micros(e.end - e.start);
      }
      if (e.domainLen != 0 || e.color != 0) {
        O.ascii(',"args":{');
        let comma = false;
        if (e.domainLen != 0) {
          O.ascii('"domain":');
          O.jsonString(e.domainPtr, e.domainLen);
          O.need(256);
          comma = true;
        }
        if (e.color != 0) {
          if (comma) O.byte(44);
          keyU('"color":', e.color);
        }
        O.byte(125);
      }
      O.byte(125);
      break;
    }
    case EvKind.GPU_RANGE: {
      // Kineto widens these by 1 ns on each side so they enclose their kernels on the same row.
      const dev = <u64>e.device;
      const tid = <u64>e.stream;
      noteGpuRow(dev, tid, 1);
      O.need(O.EVENT_RESERVE);
      sep();
      O.ascii('{"ph":"X","cat":"gpu_user_annotation","name":');
      O.jsonString(e.namePtr, e.nameLen);
      O.need(O.EVENT_RESERVE);
      keyU(',"pid":', gpid(dev));
      keyU(',"tid":', tid);
      O.ascii(',"ts":');
      O.micros(rel(e.start > 0 ? e.start - 1 : 0));
      O.ascii(',"dur":');
      const span = e.end - e.start;
      O.micros(span > 0xfffffffffffffffd ? 0xffffffffffffffff : span + 2);
      // No "stream"/"device" args, as Kineto: HTA counts every event with args.stream as a GPU kernel.
      O.ascii("}");
      break;
    }
    case EvKind.COUNTER: {
      // A device counter sample (Synapse 'C'): Chrome's counter event on the device's process.
      O.need(O.EVENT_RESERVE);
      sep();
      O.ascii('{"ph":"C","name":');
      O.jsonString(e.namePtr, e.nameLen);
      O.need(O.EVENT_RESERVE);
      keyU(',"pid":', gpid(<u64>e.device));
      O.ascii(',"tid":0,"ts":');
      O.micros(rel(e.start));
      keyU(',"args":{"value":', e.bytes);
      O.ascii("}}");
      break;
    }
    case EvKind.GRAPH: {
      const dev = <u64>e.device;
      const tid = <u64>e.stream;
      noteGpuRow(dev, tid, 1);
      O.need(O.EVENT_RESERVE);
      let q = putU32(open(O.pos, T_GRAPH_OPEN), e.graphId);
      q = headTail(putRow(q, gpid(dev), tid), e);
      q = putCorr(putStream(q, e.device, e.context, e.stream, 1), e.correlation);
      q = putU32(putLit(q, T_GRAPH), e.graphId);
      store<u16>(q, 0x7d7d); // }}
      O.pos = q + 2;
      flowEnd(e);
      break;
    }
  }
}

const PROFILER_STEP = "ProfilerStep#";

/** True when the name already is PyTorch's step marker ("ProfilerStep#…", what HTA looks for). */
function isProfilerStep(p: usize, n: u32): bool {
  const k = PROFILER_STEP.length;
  if (n < <u32>k) return false;
  for (let i = 0; i < k; i++) if (load<u8>(p + i) != <u8>PROFILER_STEP.charCodeAt(i)) return false;
  return true;
}

/**
 * A step range not named like PyTorch's: the `ProfilerStep#N` user_annotation Kineto writes around each step, on
 * the range's thread over the range's span, so HTA's step logic (iterations, temporal breakdown) finds it.
 */
function stepEvent(e: Ev, pid: u64, tid: u64): void {
  S.addEvent();
  O.need(O.EVENT_RESERVE);
  sep();
  keyU('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#', e.stepNum);
  keyU('","pid":', hpid(pid));
  keyU(',"tid":', tid);
  O.ascii(',"ts":');
  O.micros(rel(e.start));
  O.ascii(',"dur":');
  O.micros(e.end - e.start);
  O.ascii("}");
}
