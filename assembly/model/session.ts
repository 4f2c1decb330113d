/**
 * Per-file session state shared by the container reader, decoders and emitters: the HEADER fields, clock anchors,
 * record-size table, API names, string table, devices, thread names and counters, and, re-exported, the processes of
 * correlation ids (model/corr_processes.ts) and external correlation (model/external_ids.ts). Everything lives in
 * linear memory allocated after the last heap.reset(); {@link sessionReset} must run first for every file.
 */
import { Table, tableNew, tableUpsert, tableFind, inserted, tableSlots, tableKeyAt, tableValueAt, tableCount } from "../util/hash_table";
import { arenaCopy, arenaAlloc } from "../util/arena";
import { repairUtf8, repairedLen } from "./utf8";
import { demangle } from "../util/demangle";
import { Recent, recentNew, recentGet, recentPut } from "../util/recent";
import { externalIdsReset } from "./external_ids";
import { corrProcessesReset, firstApiPid } from "./corr_processes";
import { warningCount } from "../util/diag";
import { Warn } from "../util/error";

// ---- HEADER --------------------------------------------------------------------------------------------------

export let haveHeader = false;
export let vendor: u32 = 0;
export let pointerSize: u32 = 8;
export let vendorVersion: u32 = 0;
export let runtimeVersion: u32 = 0;
export let driverVersion: u32 = 0;
export let processId: u32 = 0;
export let rank: i32 = -1;
export let localRank: i32 = -1;
export let worldSize: i32 = -1;
export let collectorVersion: u32 = 0;
/** Collector start, Unix-epoch ns. */
export let startNs: u64 = 0;
export let hostnamePtr: usize = 0;
export let hostnameLen: u32 = 0;
export let cmdlinePtr: usize = 0;
export let cmdlineLen: u32 = 0;
export let vendorTextPtr: usize = 0;
export let vendorTextLen: u32 = 0;

export function setHeader(
  v: u32, ps: u32, vv: u32, rv: u32, dv: u32, pid: u32, r: i32, lr: i32, ws: i32, cv: u32, st: u64,
): void {
  haveHeader = true;
  vendor = v;
  pointerSize = ps;
  vendorVersion = vv;
  runtimeVersion = rv;
  driverVersion = dv;
  processId = pid;
  rank = r;
  localRank = lr;
  worldSize = ws;
  collectorVersion = cv;
  startNs = st;
}

/**
 * The program's pid for host events whose records hold none (PTI waits) and for Kineto's GPU pid rule: the HEADER's,
 * unless the HEADER is lost (pid 0) or failed its checksum (its pid may be the damaged byte): then the first process
 * whose API calls pass 1 saw, when there is one (CUDA, XPU: their API records carry the pid); else {@link hostPid}.
 */
export function programPid(): u32 {
  if (haveHeader && processId != 0 && warningCount(Warn.HEADER_DAMAGED) == 0) return processId;
  const api = firstApiPid();
  return api != 0 ? api : hostPid();
}

/** Pid of the first THREAD_NAMES entry read while a lost or damaged HEADER was unsettled (0: none). */
let namesPid: u32 = 0;
/** Whether {@link hostPid} is {@link namesPid} (settled at the first activity chunk). */
let namesPidUsed = false;

/** Pass 1, a THREAD_NAMES entry of process `pid` read before a lost or damaged HEADER settled (engine.ts). */
export function noteNamesPid(pid: u32): void {
  if (namesPid == 0) namesPid = pid;
}

/**
 * Settles {@link hostPid} where a lost or damaged HEADER settles (engine.ts settleSalvage: at the first activity
 * chunk, before any record is decoded, so every pass sees one value): the THREAD_NAMES' process when one came first.
 */
export function settleNamesPid(): void {
  namesPidUsed = namesPid != 0;
}

/**
 * The pid of host events whose records hold none (ROCm's, Gaudi's): the HEADER's, or, when the HEADER was lost or
 * failed its checksum, the process of the THREAD_NAMES chunks read before the first activity chunk (their payload
 * checksum intact; a collector names its own process's threads only: collectors/rocm/rocm_writer.c note_threads, the
 * Gaudi collector its main thread, collectors/hpu/rawtrace_hpu.c open_output), so
 * that such a dump's host rows keep their process and thread names instead of pid 0 or a damaged byte.
 */
export function hostPid(): u32 {
  return namesPidUsed ? namesPid : processId;
}

/** Replaces the HEADER's vendor id (engine.ts: a damaged HEADER's vendor that the dump's chunks contradict). */
export function setVendor(v: u32): void {
  vendor = v;
}

export function setHeaderStrings(hp: usize, hl: u32, cp: usize, cl: u32, vp: usize, vl: u32): void {
  hostnamePtr = repairUtf8(arenaCopy(hp, hl), hl);
  hostnameLen = repairedLen;
  cmdlinePtr = arenaCopy(cp, cl);
  cmdlineLen = cl;
  vendorTextPtr = repairUtf8(arenaCopy(vp, vl), vl);
  vendorTextLen = repairedLen;
}

// ---- What the dump's decoder says about its source (set when decode/registry.ts installs it) ---------------------

/** Maker of the dump's devices, printed as data (XSpace `device_vendor`): "Nvidia", "AMD" or "Intel". */
export let deviceMaker = "Nvidia";
/** Name of the rows that hold the tracing library's own overhead events (EvKind.OVERHEAD), e.g. "CUPTI overhead". */
export let overheadName = "CUPTI overhead";
/**
 * The HEADER's versions are CUDA's: vendorVersion is the CUPTI version, runtimeVersion and driverVersion those of
 * the CUDA runtime and driver; emitters write them under CUDA's names (cupti_version, cuda_runtime_version, …) when
 * there is a HEADER ({@link haveHeader}: a dump read as CUDA before any HEADER has no versions to write).
 */
export let cudaVersions = false;
/**
 * The decoder's API records carry the calling process's pid and pass 1 notes it ({@link noteApiProcess}: CUPTI,
 * PTI); false where host events take the HEADER's pid (rocprofiler-sdk, Synapse).
 */
export let apiPidsNoted = false;

/**
 * Sets what the installed decoder says about its source ({@link deviceMaker}, {@link overheadName},
 * {@link cudaVersions}, {@link apiPidsNoted}).
 */
export function setSource(maker: string, overhead: string, cuda: bool, apiPids: bool): void {
  deviceMaker = maker;
  overheadName = overhead;
  cudaVersions = cuda;
  apiPidsNoted = apiPids;
}

// ---- Clock anchors ---------------------------------------------------------------------------------------------

export let haveStartAnchor = false;
export let haveEndAnchor = false;
export let anchorStartVendor: u64 = 0;
export let anchorStartReal: u64 = 0;
export let anchorEndVendor: u64 = 0;
export let anchorEndReal: u64 = 0;
/** File offsets of the CLOCK chunks of the start and end anchors in use (BAD_CLOCK_ANCHOR, CLOCK_CLAMPED). */
export let anchorStartAt: u64 = 0;
export let anchorEndAt: u64 = 0;
/**
 * Earliest and latest vendor time of the CLOCK anchors (start, periodic, end) that were not set aside
 * (model/clock.ts), for the run's time window (model/timing.ts).
 */
export let haveAnyAnchor = false;
export let anchorMinVendor: u64 = 0;
export let anchorMaxVendor: u64 = 0;
/** The anchors other than the start and end anchors in use (periodic ones, later start anchors, replaced end anchors). */
export let haveOtherAnchor = false;
/** Earliest and latest vendor time of those other anchors (when {@link haveOtherAnchor}). */
export let otherMinVendor: u64 = 0;
export let otherMaxVendor: u64 = 0;

function noteOtherAnchor(vendorNs: u64): void {
  if (!haveOtherAnchor || vendorNs < otherMinVendor) otherMinVendor = vendorNs;
  if (!haveOtherAnchor || vendorNs > otherMaxVendor) otherMaxVendor = vendorNs;
  haveOtherAnchor = true;
}

function noteAnchorSpan(vendorNs: u64): void {
  if (!haveAnyAnchor || vendorNs < anchorMinVendor) anchorMinVendor = vendorNs;
  if (!haveAnyAnchor || vendorNs > anchorMaxVendor) anchorMaxVendor = vendorNs;
  haveAnyAnchor = true;
}

/** Recomputes {@link anchorMinVendor} / {@link anchorMaxVendor} from the anchors in use. */
function anchorSpan(): void {
  haveAnyAnchor = false;
  anchorMinVendor = 0;
  anchorMaxVendor = 0;
  if (haveStartAnchor) noteAnchorSpan(anchorStartVendor);
  if (haveEndAnchor) noteAnchorSpan(anchorEndVendor);
  if (haveOtherAnchor) {
    noteAnchorSpan(otherMinVendor);
    noteAnchorSpan(otherMaxVendor);
  }
}

/**
 * Records a CLOCK anchor read from the chunk at file offset `at`: `which` 0 = start, 1 = end (periodic anchors are
 * not needed for linear alignment, only for the run's time window). model/clock.ts has already set aside an anchor
 * whose values are implausible on their own (clockAnchor).
 */
export function setAnchor(which: u32, vendorNs: u64, realNs: u64, at: u64): void {
  if (which == 0 && !haveStartAnchor) {
    haveStartAnchor = true;
    anchorStartVendor = vendorNs;
    anchorStartReal = realNs;
    anchorStartAt = at;
  } else if (which == 1) {
    if (haveEndAnchor) noteOtherAnchor(anchorEndVendor);
    haveEndAnchor = true;
    anchorEndVendor = vendorNs;
    anchorEndReal = realNs;
    anchorEndAt = at;
  } else noteOtherAnchor(vendorNs);
  anchorSpan();
}

/** Sets aside the start (`which` 0) or end (1) anchor in use: it no longer aligns times nor bounds the run. */
export function dropAnchor(which: u32): void {
  if (which == 0) {
    haveStartAnchor = false;
    anchorStartVendor = 0;
    anchorStartReal = 0;
    anchorStartAt = 0;
  } else {
    haveEndAnchor = false;
    anchorEndVendor = 0;
    anchorEndReal = 0;
    anchorEndAt = 0;
  }
  anchorSpan();
}

// ---- Record sizes --------------------------------------------------------------------------------------------

/** Number of vendor record kinds the size table covers. */
export const MAX_KIND: u32 = 256;
// Static data, not heap: heap.reset() between files must not free these.
const kindSizesP = memory.data(MAX_KIND * 4);
const recordsPerKindP = memory.data(MAX_KIND * 8);
/** Record size of vendor kind `k` (0 = unknown). */
// @ts-ignore: decorator
@inline export function kindSize(k: u32): u32 {
  return k < MAX_KIND ? load<u32>(kindSizesP + (<usize>k << 2)) : 0;
}
/** Overrides the record size of kind `k` (< MAX_KIND). */
export function putKindSize(k: u32, s: u32): void {
  if (k < MAX_KIND) store<u32>(kindSizesP + (<usize>k << 2), s);
}
/** Records of kind `k` seen in pass 1. */
export function recordsOfKind(k: u32): u64 {
  return k < MAX_KIND ? load<u64>(recordsPerKindP + (<usize>k << 3)) : 0;
}
export let haveKindSizes = false;
/** File offset of the KIND_SIZES chunk the sizes in use came from (what BAD_KIND_SIZE names); 0 = none read. */
export let kindSizesAt: u64 = 0;
/** Notes the file offset of a KIND_SIZES chunk whose sizes were taken. */
export function setKindSizesAt(off: u64): void { kindSizesAt = off; }

// ---- Counters --------------------------------------------------------------------------------------------------

export let chunksSeen: u64 = 0;
export let activityChunks: u64 = 0;
export let activityBytes: u64 = 0;
export let droppedRecords: u64 = 0;
/** Whole buffers of records the collector lost (DROPPED chunks that count buffers: {@link addDropped}). */
export let droppedBuffers: u64 = 0;
export let haveEnd = false;
/** Earliest and latest vendor timestamps of the records kept (model/timing.ts), known after pass 1 (0 when none). */
export let minVendorTs: u64 = 0;
export let maxVendorTs: u64 = 0;
/** Events written by the emitter (pass 2). */
export let eventsEmitted: u64 = 0;
/** Host API records hidden by the default filters (Kineto's blocklist). */
export let apiFiltered: u64 = 0;

/** Sets the time span of the kept records (end of pass 1, model/timing.ts). */
export function setTimeSpan(min: u64, max: u64): void {
  minVendorTs = min;
  maxVendorTs = max;
}

/** Notes a record's start (vendor ns, not 0) for the out-of-order buffer count (pass 1). */
export function noteBufferTs(t: u64): void {
  if (bufMin == 0 || t < bufMin) bufMin = t;
}

// Earliest timestamp of the current activity buffer and of the previous one (pass 1), to count buffers that arrive
// out of time order. The outputs do not depend on buffer order (every join is done across the whole file); the count
// is reported so a collector problem is visible.
let bufMin: u64 = 0;
let prevBufMin: u64 = 0;
/** Starts a new activity buffer (pass 1). */
export function bufferBegin(): void {
  bufMin = 0;
}
/** Activity buffers that started before the previous one (pass 1). */
export let outOfOrderBuffers: u64 = 0;
/** Ends an activity buffer (pass 1): counts it when it started before the previous buffer did. */
export function bufferEnd(): void {
  if (bufMin != 0 && prevBufMin != 0 && bufMin < prevBufMin) outOfOrderBuffers++;
  if (bufMin != 0) prevBufMin = bufMin;
}
export function addChunk(): void { chunksSeen++; }
export function addActivity(n: u64): void { activityChunks++; activityBytes += n; }
/** a + b, saturating at 2^64 − 1 (a dropped total never wraps: the host shows a saturated one as "≥"). */
function satAdd(a: u64, b: u64): u64 {
  const t = a + b;
  return t < a ? 0xffffffffffffffff : t;
}
// Reason 2's counts until the vendor is settled (settleDropped): records, or the CUDA collector's whole buffers.
let droppedCap: u64 = 0;
const NO_OFFSET: u64 = 0xffffffffffffffff;
/**
 * File offset of the first DROPPED chunk that added to {@link droppedRecords} and to {@link droppedBuffers} (the
 * offsets of their warnings, DROPPED_RECORDS and DROPPED_BUFFERS); 0xffffffffffffffff while none has.
 */
export let droppedRecordsAt: u64 = NO_OFFSET;
export let droppedBuffersAt: u64 = NO_OFFSET;
let droppedCapAt: u64 = NO_OFFSET;
/** The smaller of a first-offset `at` and `off` (chunks come in file order: the first one kept). */
// @ts-ignore: decorator
@inline function firstAt(at: u64, off: u64): u64 {
  return off < at ? off : at;
}
/**
 * Adds the count `n` of a DROPPED chunk of `reason` (docs/format.md §8) at file offset `off`: whole buffers for
 * reasons 3 (a write error) and 4 (left by the exit flush); records for 1 and unknown reasons; reason 2 (the memory
 * cap) is set aside until the vendor is known for sure (a salvaged HEADER's vendor can still change):
 * {@link settleDropped}. A count of 0 loses nothing and leaves the offsets as they are.
 */
export function addDropped(n: u64, reason: u32, off: u64): void {
  if (n == 0) return;
  if (reason == 2) {
    droppedCap = satAdd(droppedCap, n);
    droppedCapAt = firstAt(droppedCapAt, off);
  } else if (reason == 3 || reason == 4) {
    droppedBuffers = satAdd(droppedBuffers, n);
    droppedBuffersAt = firstAt(droppedBuffersAt, off);
  } else {
    droppedRecords = satAdd(droppedRecords, n);
    droppedRecordsAt = firstAt(droppedRecordsAt, off);
  }
}
/**
 * End of pass 1, the vendor settled: reason 2's counts become whole buffers for the CUDA collector (vendor 1), which
 * refuses whole buffers, and records for the others, which count the records they refuse.
 */
export function settleDropped(v: u32): void {
  if (droppedCap != 0) {
    if (v == 1) {
      droppedBuffers = satAdd(droppedBuffers, droppedCap);
      droppedBuffersAt = firstAt(droppedBuffersAt, droppedCapAt);
    } else {
      droppedRecords = satAdd(droppedRecords, droppedCap);
      droppedRecordsAt = firstAt(droppedRecordsAt, droppedCapAt);
    }
  }
  droppedCap = 0;
  droppedCapAt = NO_OFFSET;
}
export function setHaveEnd(): void { haveEnd = true; }
export function addEvent(): void { eventsEmitted++; }
/** Adds `n` events another worker emitted (a split conversion's last part: assembly/split.ts). */
export function addEvents(n: u64): void { eventsEmitted += n; }
/** Sets the emitted count back to `n`: the details pass writes again, as Chrome JSON, events its timeline counted. */
export function eventsBackTo(n: u64): void { eventsEmitted = n; }
export function addApiFiltered(): void { apiFiltered++; }
export function setKindSize(kind: u32, size: u32): void {
  if (kind < MAX_KIND) {
    putKindSize(kind, size);
    haveKindSizes = true;
  }
}
export function countRecord(kind: u32): void {
  if (kind < MAX_KIND) {
    const a = recordsPerKindP + (<usize>kind << 3);
    store<u64>(a, load<u64>(a) + 1);
  }
}

// ---- API names ---------------------------------------------------------------------------------------------------

/** API name entry: {namePtr: usize(4), nameLen: u32, flags: u32}. */
export const API_ENTRY: usize = 12;
/** API flag: this call starts an async flow (launch, copy, set, sync) — Kineto's requiresFlowCorrelation. */
export const API_FLOW: u32 = 1;
/** API flag: hidden by default (Kineto's runtime blocklist / untracked driver calls). */
export const API_HIDDEN: u32 = 2;
let apiTable: Table = 0;

/** Stores the name of (domain, id) and returns its entry address; flags are derived by the vendor decoder. */
export function setApiName(domain: u32, id: u32, p: usize, n: u32, flags: u32): void {
  const slot = tableUpsert(apiTable, (<u64>domain << 32) | id);
  let e = <usize>load<u64>(slot);
  if (e == 0) {
    e = arenaAlloc(API_ENTRY);
    store<u64>(slot, e);
  }
  const q = repairUtf8(arenaCopy(p, n), n);
  store<usize>(e, q);
  store<u32>(e, repairedLen, 4);
  store<u32>(e, flags, 8);
}

/**
 * Hands every API name entry to `f` (domain, id, name bytes, length) again — after the decoder changed (engine.ts
 * settleSalvage), so that the new decoder stores them its way. `f` may rewrite the entries (setApiName).
 */
export function apiNamesReplay(f: (domain: u32, id: u32, p: usize, n: u32) => void): void {
  // The (key, entry) pairs first: an upsert of an existing key can still grow the table (tableUpsert grows before it
  // looks), which would move the slots under the loop.
  const slots = tableSlots(apiTable);
  const pairs = heap.alloc(<usize>tableCount(apiTable) * 16 + 16);
  let n: u32 = 0;
  for (let i: u32 = 0; i < slots; i++) {
    const key = tableKeyAt(apiTable, i);
    const e = <usize>tableValueAt(apiTable, i);
    if (key == 0xffffffffffffffff || e == 0) continue;
    store<u64>(pairs + (<usize>n << 4), key);
    store<u64>(pairs + (<usize>n << 4), <u64>e, 8);
    n++;
  }
  for (let i: u32 = 0; i < n; i++) {
    const key = load<u64>(pairs + (<usize>i << 4));
    const e = <usize>load<u64>(pairs + (<usize>i << 4), 8);
    f(<u32>(key >> 32), <u32>key, <usize>load<u32>(e), load<u32>(e, 4));
  }
  heap.free(pairs);
}

/** Entry address for (domain, id), or 0. */
export function apiEntry(domain: u32, id: u32): usize {
  const key = (<u64>domain << 32) | id;
  // An entry, once made, keeps its address (setApiName rewrites it in place): found ones are cached.
  let e = <usize>recentGet(apiRecent, key);
  if (e != 0) return e;
  const slot = tableFind(apiTable, key);
  if (slot == 0) return 0;
  e = <usize>load<u64>(slot);
  if (e != 0) recentPut(apiRecent, key, e);
  return e;
}
let apiRecent: Recent = 0;

// ---- Strings -----------------------------------------------------------------------------------------------------

/**
 * String entry: {rawPtr, rawLen, dispPtr, dispLen} (4 × 4 bytes). dispLen = 0xFFFFFFFF until the display form
 * (demangled, valid UTF-8) is computed on first use — once per distinct name, not per event.
 */
export const STR_ENTRY: usize = 16;
let strTable: Table = 0;
let strRecent: Recent = 0;
let demangleBuf: usize = 0;
const DEMANGLE_CAP: u32 = 1 << 16;

/**
 * Stores the bytes of pointer value `ptr`. When `replace` is false an existing entry is kept (pass 1 keeps the first
 * version; pass 2 replaces in file order so records see the bytes valid at their time).
 */
export function setString(ptr: u64, p: usize, n: u32, replace: bool): void {
  const slot = tableUpsert(strTable, ptr);
  let e = <usize>load<u64>(slot);
  if (!inserted) {
    if (!replace) return;
    // Same bytes again: nothing to do (the common case for pass 2).
    if (load<u32>(e, 4) == n && memory.compare(<usize>load<u32>(e), p, n) == 0) return;
  } else {
    e = arenaAlloc(STR_ENTRY);
    store<u64>(slot, e);
  }
  store<u32>(e, <u32>arenaCopy(p, n));
  store<u32>(e, n, 4);
  store<u32>(e, 0, 8);
  store<u32>(e, 0xffffffff, 12);
}

/** Length of the last {@link stringRaw} result (0 when it found no entry). */
export let rawLen: u32 = 0;

/** The bytes stored for pointer value `ptr` as they are (binary-safe: not repaired), or 0 when there is none. */
export function stringRaw(ptr: u64): usize {
  const slot = tableFind(strTable, ptr);
  if (slot == 0) {
    rawLen = 0;
    return 0;
  }
  const e = <usize>load<u64>(slot);
  rawLen = load<u32>(e, 4);
  return <usize>load<u32>(e);
}

/** Display length of the last {@link stringDisplay} call (0 when it found no entry). */
export let displayLen: u32 = 0;

/**
 * Display bytes for pointer value `ptr` (demangled when it is an Itanium-mangled name, UTF-8 repaired), or 0 when
 * the string table has no entry; {@link displayLen} is then 0 too, so a caller that takes (pointer, length) as they
 * come gets an empty name, never a stale length over address 0.
 */
// @ts-ignore: decorator
@inline export function stringDisplay(ptr: u64, demangleIt: bool): usize {
  // The common case inline (no call per kernel name): a cached entry whose display form is made.
  const e = <usize>recentGet(strRecent, ptr);
  if (e != 0 && load<u32>(e, 12) != 0xffffffff) {
    displayLen = load<u32>(e, 12);
    return <usize>load<u32>(e, 8);
  }
  return stringDisplayAny(ptr, demangleIt, e);
}

/** {@link stringDisplay} past its cache test: `e` is the cached entry of `ptr` (its display form not made), or 0. */
function stringDisplayAny(ptr: u64, demangleIt: bool, e: usize): usize {
  // An entry, once made, keeps its address (setString rewrites it in place): found ones are cached.
  if (e == 0) {
    const slot = tableFind(strTable, ptr);
    if (slot == 0) {
      displayLen = 0;
      return 0;
    }
    e = <usize>load<u64>(slot);
    recentPut(strRecent, ptr, e);
  }
  if (load<u32>(e, 12) == 0xffffffff) {
    const raw = <usize>load<u32>(e);
    const rawLen = load<u32>(e, 4);
    let dp = raw;
    let dl = rawLen;
    if (demangleIt && rawLen > 2 && load<u8>(raw) == 0x5f && load<u8>(raw, 1) == 0x5a) {
      if (demangleBuf == 0) demangleBuf = arenaAlloc(DEMANGLE_CAP);
      const r = demangle(raw, rawLen, demangleBuf, DEMANGLE_CAP);
      if (r > 0) {
        dp = arenaCopy(demangleBuf, <usize>r);
        dl = <u32>r;
      }
    }
    dp = repairUtf8(dp, dl);
    store<u32>(e, <u32>dp, 8);
    store<u32>(e, repairedLen, 12);
  }
  displayLen = load<u32>(e, 12);
  return <usize>load<u32>(e, 8);
}

// ---- Devices -----------------------------------------------------------------------------------------------------

/**
 * Device entry (fixed, 136 bytes): the DEVICES chunk entry layout (docs/format.md §7) for bytes 0..87, then
 * namePtr u32 @88, nameLen u32 @92, seen-in-events flag u32 @96, then the vendor-neutral extras an AMD GPU has
 * (0 elsewhere): architecture kind u32 @100 (0 CUDA-shaped, 2 AMD GCN/CDNA), gfx target version u32 @104 (90010 =
 * gfx90a), SIMDs per CU u32 @108, max waves per CU u32 @112, XCCs u32 @116, arch name ptr u32 @120 / len u32 @124
 * (e.g. `gfx90a`). Compute units are the multiprocessors @4, the wavefront size the warp size @52, LDS the shared
 * memory fields.
 */
export const DEV_ENTRY: usize = 136;
/** Architecture kind @100 of an AMD GPU. */
export const DEV_ARCH_AMD: u32 = 2;
const MAX_DEVICES: u32 = 256;
let devTable: Table = 0;
let devList: usize = 0; // MAX_DEVICES entry pointers in insertion order
let devCount: u32 = 0;

/** Entry of device `id`, creating a zeroed one when new (returns 0 beyond 256 devices). */
export function deviceEntry(id: u32): usize {
  const slot = tableUpsert(devTable, id);
  let e = <usize>load<u64>(slot);
  if (e == 0) {
    if (devCount >= MAX_DEVICES) return 0;
    e = arenaAlloc(DEV_ENTRY);
    memory.fill(e, 0, DEV_ENTRY);
    store<u32>(e, id);
    store<u64>(slot, e);
    store<usize>(devList + (<usize>devCount << 2), e);
    devCount++;
  }
  return e;
}
/** Device entry by id, or 0. */
export function findDevice(id: u32): usize {
  const slot = tableFind(devTable, id);
  return slot == 0 ? 0 : <usize>load<u64>(slot);
}
export function deviceCount(): u32 { return devCount; }
export function deviceAt(i: u32): usize { return load<usize>(devList + (<usize>i << 2)); }
/** One past the largest device id listed so far (0 for none): where devices a table lacks are numbered from. */
export function nextDeviceId(): u32 {
  let next: u32 = 0;
  for (let i: u32 = 0; i < devCount; i++) {
    const id = load<u32>(deviceAt(i));
    if (id + 1 > next) next = id + 1;
  }
  return next;
}
export function setDeviceName(e: usize, p: usize, n: u32): void {
  const q = repairUtf8(arenaCopy(p, n), n);
  store<u32>(e, <u32>q, 88);
  store<u32>(e, repairedLen, 92);
}

/** Sets the AMD extras of device entry `e` (see {@link DEV_ENTRY}); the arch name bytes are copied. */
export function setDeviceAmd(e: usize, gfx: u32, simdPerCu: u32, wavesPerCu: u32, xcc: u32, np: usize, nn: u32): void {
  store<u32>(e, DEV_ARCH_AMD, 100);
  store<u32>(e, gfx, 104);
  store<u32>(e, simdPerCu, 108);
  store<u32>(e, wavesPerCu, 112);
  store<u32>(e, xcc, 116);
  const q = repairUtf8(arenaCopy(np, nn), nn);
  store<u32>(e, <u32>q, 120);
  store<u32>(e, repairedLen, 124);
}

// ---- Contexts, threads, streams ------------------------------------------------------------------------------------

let ctxTable: Table = 0;
/** Records that context `ctx` belongs to `device` (CUPTI CONTEXT records and device ops). */
// @ts-ignore: decorator
@inline export function setContextDevice(ctx: u32, device: u32): void {
  // Device ops repeat the pair of the one before: the table already holds it (nothing iterates this table). Inline
  // test, so that pass 1 pays no call for the repeat.
  if (ctx != lastCtx || device != lastCtxDevice || ctxTable != lastCtxTable) setContextDeviceNew(ctx, device);
}
/** {@link setContextDevice} for a pair that is not the last one. */
function setContextDeviceNew(ctx: u32, device: u32): void {
  store<u64>(tableUpsert(ctxTable, ctx), <u64>device + 1);
  lastCtx = ctx;
  lastCtxDevice = device;
  lastCtxTable = ctxTable;
}
let lastCtx: u32 = 0;
let lastCtxDevice: u32 = 0;
let lastCtxTable: Table = 0;
/** Device of context `ctx`, or `dflt` when unknown. */
export function contextDevice(ctx: u32, dflt: u32): u32 {
  const p = tableFind(ctxTable, ctx);
  return p == 0 ? dflt : <u32>(load<u64>(p) - 1);
}

let threadNames: Table = 0;
/** Names a host thread (pid, tid). */
export function setThreadName(pid: u32, tid: u32, p: usize, n: u32): void {
  const q = repairUtf8(arenaCopy(p, n), n);
  const e = arenaAlloc(8);
  store<u32>(e, <u32>q);
  store<u32>(e, repairedLen, 4);
  store<u64>(tableUpsert(threadNames, (<u64>pid << 32) | tid), e);
}
/**
 * Forgets every thread name (engine.ts settleSalvage: THREAD_NAMES read before a dump without an intact HEADER proved
 * to be Gaudi's, whose host rows are Synapse engines, not threads). Before the first activity chunk: no decoder has
 * named a row yet.
 */
export function clearThreadNames(): void {
  threadNames = tableNew(64);
}
/** Name entry {ptr u32, len u32} of (pid, tid), or 0. */
export function threadName(pid: u32, tid: u32): usize {
  const p = tableFind(threadNames, (<u64>pid << 32) | tid);
  return p == 0 ? 0 : <usize>load<u64>(p);
}

let streamNames: Table = 0;
/** Names a device stream (device, stream). */
export function setStreamName(device: u32, stream: u32, p: usize, n: u32): void {
  const q = repairUtf8(arenaCopy(p, n), n);
  const e = arenaAlloc(8);
  store<u32>(e, <u32>q);
  store<u32>(e, repairedLen, 4);
  store<u64>(tableUpsert(streamNames, (<u64>device << 32) | stream), e);
}
/** Name entry {ptr u32, len u32} of (device, stream), or 0. */
export function streamName(device: u32, stream: u32): usize {
  const p = tableFind(streamNames, (<u64>device << 32) | stream);
  return p == 0 ? 0 : <usize>load<u64>(p);
}

// ---- Correlation ids and processes (model/corr_processes.ts, re-exported: decoders and emitters read them as S.*)

export {
  ambiguousCorrs, noteShownApi, noteHostShown, apiProcessSeen, firstApiPid, noteApiProcess, corrAmbiguous,
} from "./corr_processes";

// ---- External correlation (model/external_ids.ts, re-exported: decoders and emitters read them as S.*) -----------

export {
  setExternal, extOp, extOpFound, extUser, extUserFound, extLookups, setExternalLookups, lookupExternal, externalCount,
} from "./external_ids";

// ---- Lifecycle -----------------------------------------------------------------------------------------------------

/** Resets every table and counter; call right after heap.reset(). */
export function sessionReset(): void {
  haveHeader = false;
  vendor = 0;
  pointerSize = 8;
  vendorVersion = 0;
  runtimeVersion = 0;
  driverVersion = 0;
  processId = 0;
  namesPid = 0;
  namesPidUsed = false;
  rank = -1;
  localRank = -1;
  worldSize = -1;
  collectorVersion = 0;
  startNs = 0;
  hostnamePtr = 0;
  hostnameLen = 0;
  cmdlinePtr = 0;
  cmdlineLen = 0;
  vendorTextPtr = 0;
  vendorTextLen = 0;
  setSource("Nvidia", "CUPTI overhead", false, false);
  haveStartAnchor = false;
  haveEndAnchor = false;
  anchorStartVendor = 0;
  anchorStartReal = 0;
  anchorEndVendor = 0;
  anchorEndReal = 0;
  anchorStartAt = 0;
  anchorEndAt = 0;
  haveAnyAnchor = false;
  anchorMinVendor = 0;
  anchorMaxVendor = 0;
  haveOtherAnchor = false;
  otherMinVendor = 0;
  otherMaxVendor = 0;
  haveKindSizes = false;
  kindSizesAt = 0;
  memory.fill(kindSizesP, 0, MAX_KIND * 4);
  memory.fill(recordsPerKindP, 0, MAX_KIND * 8);
  chunksSeen = 0;
  activityChunks = 0;
  activityBytes = 0;
  droppedRecords = 0;
  droppedBuffers = 0;
  droppedCap = 0;
  droppedRecordsAt = NO_OFFSET;
  droppedBuffersAt = NO_OFFSET;
  droppedCapAt = NO_OFFSET;
  haveEnd = false;
  minVendorTs = 0;
  maxVendorTs = 0;
  bufMin = 0;
  prevBufMin = 0;
  outOfOrderBuffers = 0;
  eventsEmitted = 0;
  apiFiltered = 0;
  apiTable = tableNew(1024);
  apiRecent = recentNew(6);
  strTable = tableNew(1024);
  strRecent = recentNew(8);
  displayLen = 0;
  demangleBuf = 0;
  devTable = tableNew(16);
  devList = heap.alloc(<usize>MAX_DEVICES << 2);
  devCount = 0;
  ctxTable = tableNew(16);
  lastCtxTable = 0; // a new table may have the old one's address (heap.reset)
  threadNames = tableNew(64);
  streamNames = tableNew(64);
  corrProcessesReset();
  externalIdsReset();
}
