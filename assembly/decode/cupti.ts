/**
 * CUPTI activity decoder (NVIDIA CUDA). Walks the raw buffers of ACTIVITY chunks record by record using the
 * dump's own kind → size table (KIND_SIZES, measured by the collector), falling back to the built-in table of the
 * dump's CUPTI version. Every field is read only when the record's size covers it, so the record versions of CUDA
 * 11.8, 12.x and 13.x (append-only families, vendor-record-layouts.md §1.5) all decode with one set of offsets.
 *
 * Pass 1 ({@link cuptiScan}) counts records and collects the join tables (external correlation, devices,
 * contexts, names); pass 2 ({@link cuptiDecode}) turns records into normalized events for the emitter.
 */
import { Ev, EvKind, EvFlag, ApiCat, evClear } from "../model/event";
import * as S from "../model/session";
import { toUnix } from "../model/clock";
import { Timing, timingNote, timingCheck, timingApply } from "../model/timing";
import { Warn } from "../util/error";
import { warn, lose } from "../util/diag";
import { arenaAlloc } from "../util/arena";
import { emitEvent } from "../emit/dispatch";
import * as R from "../model/ranges";
import { stepOf } from "../model/steps";
import { cuptiApiFlags, cuptiApiName } from "./cupti_api";
import { attachExternal } from "./external";
import { install, ignoreTable, noIndexed, showAllApi } from "./decoder";

/** CUpti_ActivityKind values this decoder reads. */
const enum K {
  MEMCPY = 1,
  MEMSET = 2,
  KERNEL = 3,
  DRIVER = 4,
  RUNTIME = 5,
  DEVICE = 8,
  CONTEXT = 9,
  CONCURRENT_KERNEL = 10,
  NAME = 11,
  MARKER = 12,
  MARKER_DATA = 13,
  OVERHEAD = 17,
  MEMCPY2 = 22,
  CUDA_EVENT = 36,
  STREAM = 37,
  SYNCHRONIZATION = 38,
  EXTERNAL_CORRELATION = 39,
  INTERNAL_LAUNCH_API = 48,
  GRAPH_TRACE = 51,
}

/** CUPTI's "invalid" marker for stream ids of context-wide syncs. */
const INVALID_U32: u32 = 0xffffffff;

/** Registers this decoder as the active one (decode/registry.ts: vendor 1, every CUPTI version). */
export function cuptiInstall(): void {
  install(1, cuptiApiName, cuptiPrepare, cuptiScan, cuptiProject, cuptiDecode, cuptiFinish, ignoreTable, noIndexed);
}

// ---- Built-in record sizes (used only when a dump has no KIND_SIZES chunk) -----------------------------------------

/**
 * Record sizes of the struct each CUPTI version emits, by CUPTI_API_VERSION, used only when a dump has no
 * KIND_SIZES chunk. Verified against the header wheels of CUDA 11.8 (API 18), 12.9 (API 28), 13.0U1 (130001) and
 * 13.5 (130500) by test/fixtures/cupti and test/decode; versions between 18 and 28 take the 11.8 sizes (CUDA 12.0
 * also reports 18), versions from 130000 to 130499 the 13.0 sizes. 13.5 brought Kernel13 (248 B), Memcpy7 (112),
 * Memset5 (104), Device6 (192), Context4 (40) and CudaEvent3 (80), each an append-only successor.
 */
function builtinSize(kind: u32, version: u32): u32 {
  const v12 = version >= 28;
  const v13 = version >= 130000;
  const v135 = version >= 130500;
  switch (kind) {
    case K.MEMCPY: return v135 ? 112 : v12 ? 96 : 88;
    case K.MEMSET: return v135 ? 104 : 88;
    case K.KERNEL:
    case K.CONCURRENT_KERNEL: return v135 ? 248 : v13 ? 216 : v12 ? 208 : 200;
    case K.DRIVER:
    case K.RUNTIME:
    case K.INTERNAL_LAUNCH_API: return 40;
    case K.DEVICE: return v135 ? 192 : v12 ? 184 : 176;
    case K.CONTEXT: return v135 ? 40 : v12 ? 32 : 16;
    case K.NAME: return 32;
    case K.MARKER: return 56;
    case K.MARKER_DATA: return v13 ? 40 : 32;
    case K.OVERHEAD: return v12 ? 56 : 40;
    case K.MEMCPY2: return 96;
    case K.CUDA_EVENT: return v135 ? 80 : v12 ? 56 : 24;
    case K.STREAM: return 24;
    case K.SYNCHRONIZATION: return v12 ? 56 : 40;
    case K.EXTERNAL_CORRELATION: return 24;
    case K.GRAPH_TRACE: return v12 ? 56 : 48;
  }
  return 0;
}

/** Largest CUPTI API version whose layouts this build knows (13.x). */
const NEWEST_KNOWN_VERSION: u32 = 139999;

/** Prepares the stride table: the dump's own sizes, completed by the built-in ones. Call before pass 1. */
export function cuptiPrepare(): void {
  if (S.vendorVersion > NEWEST_KNOWN_VERSION) warn(Warn.UNKNOWN_VENDOR_VERSION, 0, S.vendorVersion);
  for (let k: u32 = 1; k < S.MAX_KIND; k++) {
    let s = S.kindSize(k);
    if (s != 0 && (s > 65536 || (s & 7) != 0 || s < 8)) {
      warn(Warn.BAD_KIND_SIZE, 0, k);
      s = 0;
    }
    if (s == 0) s = builtinSize(k, S.vendorVersion);
    S.putKindSize(k, s);
  }
  R.rangesTrackOrder();
}

// (domain, callback id) → {name entry u32, flags u32 | API_CACHED}, filled in pass 2 as ids appear (API names are
// all known after pass 1): one name lookup and one flags switch per callback id, not per record. Ids from
// API_CACHE_IDS on are looked up each time.
const API_CACHE_IDS: u32 = 2048;
const API_CACHED: u32 = 0x80000000;
let apiCache: usize = 0; // [2 domains][API_CACHE_IDS] × 8 B, per file (heap, made by the first pass-2 buffer)
let apiName: usize = 0; // the last apiLookup's answer
let apiFlags: u32 = 0;

/** Sets apiName / apiFlags for callback `cbid` of `domain` (1 driver, 2 runtime). */
// @ts-ignore: decorator
@inline function apiLookup(domain: u32, cbid: u32): void {
  if (cbid < API_CACHE_IDS) {
    const c = apiCache + ((<usize>(domain - 1) * API_CACHE_IDS + <usize>cbid) << 3);
    let f = load<u32>(c, 4);
    if (f == 0) {
      store<u32>(c, <u32>S.apiEntry(domain, cbid));
      f = cuptiApiFlags(domain, cbid) | API_CACHED;
      store<u32>(c, f, 4);
    }
    apiName = <usize>load<u32>(c);
    apiFlags = f;
  } else {
    apiName = S.apiEntry(domain, cbid);
    apiFlags = cuptiApiFlags(domain, cbid);
  }
}

// ---- API names -------------------------------------------------------------------------------------------------

// Kineto's display names, hiding and flow starts of API calls live in cupti_api.ts; the engine stores API_NAMES
// entries through this re-export.
export { cuptiApiName } from "./cupti_api";

// ---- Static names ------------------------------------------------------------------------------------------------

let copyNames: usize = 0; // [11 copy kinds][8 src][8 dst] × {ptr u32, len u32}, built on demand
let memsetNames: usize = 0; // [8] × {ptr, len}
let syncNames: usize = 0; // [5] × {ptr, len}
let overheadNames: usize = 0; // [10] × {ptr, len}
let scratchName: usize = 0;

function copyKindStr(k: u32): string {
  switch (k) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoA";
    case 4: return "AtoH";
    case 5: return "AtoA";
    case 6: return "AtoD";
    case 7: return "DtoA";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
  }
  return "Unknown";
}
function memKindStr(k: u32): string {
  switch (k) {
    case 1: return "Pageable";
    case 2: return "Pinned";
    case 3: return "Device";
    case 4: return "Array";
    case 5: return "Managed";
    case 6: return "Device Static";
    case 7: return "Managed Static";
  }
  return "Unknown";
}
function syncStr(k: u32): string {
  switch (k) {
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
  }
  return "Unknown Sync";
}
function overheadStr(k: u32): string {
  switch (k) {
    case 1: return "Driver Compiler";
    case 0x10000: return "Buffer Flush";
    case 0x20000: return "Instrumentation";
    case 0x30000: return "Resource";
    case 0x40000: return "Runtime Triggered Module Loading";
    case 0x50000: return "Lazy Function Loading";
    case 0x60000: return "Command Buffer Full";
    case 0x70000: return "Activity Buffer Request";
    case 0x80000: return "UVM Activity Init";
  }
  return "Unknown Overhead";
}

/** Appends ASCII `s` at q; returns the new end. */
function put(q: usize, s: string): usize {
  for (let i = 0; i < s.length; i++) store<u8>(q + i, <u8>s.charCodeAt(i));
  return q + s.length;
}

/** Sets e's name to a static (arena) name built once: the (ptr, len) pair stored at slot. */
// @ts-ignore: decorator
@inline function nameFromSlot(e: Ev, slot: usize): void {
  e.namePtr = <usize>load<u32>(slot);
  e.nameLen = load<u32>(slot, 4);
}

function memcpyName(e: Ev, copyKind: u32, src: u32, dst: u32): void {
  if (copyKind > 10) copyKind = 0;
  if (src > 7) src = 0;
  if (dst > 7) dst = 0;
  if (copyNames == 0) {
    copyNames = arenaAlloc(11 * 8 * 8 * 8);
    memory.fill(copyNames, 0, 11 * 8 * 8 * 8);
  }
  const slot = copyNames + ((<usize>copyKind * 64 + <usize>src * 8 + <usize>dst) << 3);
  if (load<u32>(slot, 4) == 0) {
    // "Memcpy HtoD (Pinned -> Device)", Kineto's naming
    const p = arenaAlloc(64);
    let q = put(p, "Memcpy ");
    q = put(q, copyKindStr(copyKind));
    q = put(q, " (");
    q = put(q, memKindStr(src));
    q = put(q, " -> ");
    q = put(q, memKindStr(dst));
    q = put(q, ")");
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

function memsetName(e: Ev, kind: u32): void {
  if (kind > 7) kind = 0;
  if (memsetNames == 0) {
    memsetNames = arenaAlloc(8 * 8);
    memory.fill(memsetNames, 0, 64);
  }
  const slot = memsetNames + (<usize>kind << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(32);
    let q = put(p, "Memset (");
    q = put(q, memKindStr(kind));
    q = put(q, ")");
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

function syncName(e: Ev, kind: u32): void {
  if (kind > 4) kind = 0;
  if (syncNames == 0) {
    syncNames = arenaAlloc(5 * 8);
    memory.fill(syncNames, 0, 40);
  }
  const slot = syncNames + (<usize>kind << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(24);
    const q = put(p, syncStr(kind));
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

function overheadName(e: Ev, kind: u32): void {
  let i: u32 = 9;
  if (kind == 1) i = 0;
  else if ((kind & 0xffff) == 0 && kind >> 16 >= 1 && kind >> 16 <= 8) i = kind >> 16;
  if (overheadNames == 0) {
    overheadNames = arenaAlloc(10 * 8);
    memory.fill(overheadNames, 0, 80);
  }
  const slot = overheadNames + (<usize>i << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(40);
    const q = put(p, overheadStr(i == 9 ? 0xffffffff : i == 0 ? 1 : i << 16));
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

/** Name for an API record without a name-table entry: "cbid <n>" (runtime) / "driver cbid <n>". */
function unknownApiName(e: Ev, domain: u32, cbid: u32): void {
  if (scratchName == 0) scratchName = arenaAlloc(64);
  let q = put(scratchName, domain == 1 ? "cuda_driver_cbid_" : "cuda_runtime_cbid_");
  // decimal cbid
  let tmp = cbid;
  let nd: u32 = 1;
  while (tmp >= 10) {
    tmp /= 10;
    nd++;
  }
  for (let i: u32 = 0; i < nd; i++) {
    store<u8>(q + nd - 1 - i, <u8>(48 + (cbid % 10)));
    cbid /= 10;
  }
  q += nd;
  e.namePtr = scratchName;
  e.nameLen = <u32>(q - scratchName);
}

/** Forgets static names (after heap.reset()). */
export function cuptiReset(): void {
  copyNames = 0;
  memsetNames = 0;
  syncNames = 0;
  overheadNames = 0;
  scratchName = 0;
  apiCache = 0;
  markerOpen = 0;
  colorTable = 0;
}

// ---- Field access ------------------------------------------------------------------------------------------------

// A field is read only when the record (of `size` bytes) covers it: older struct versions are prefixes.
// @ts-ignore: decorator
@inline function f32(p: usize, size: u32, off: u32): u32 {
  return off + 4 <= size ? load<u32>(p + off) : 0;
}
// @ts-ignore: decorator
@inline function f64u(p: usize, size: u32, off: u32): u64 {
  return off + 8 <= size ? load<u64>(p + off) : 0;
}

// ---- Pass 1 ------------------------------------------------------------------------------------------------------

/** Pass 1 over one ACTIVITY payload [p, p+n) at file offset `off`: counts, join tables, time span. */
export function cuptiScan(p: usize, n: u32, off: u64): void {
  const end = p + n;
  let r = p;
  while (r + 4 <= end) {
    const kind = load<u32>(r);
    const size = S.kindSize(kind);
    if (size == 0) {
      warn(Warn.UNKNOWN_KIND_UNSIZED, off + <u64>(r - p) + 24, kind);
      lose(Warn.UNKNOWN_KIND_UNSIZED, off + <u64>(r - p) + 24, off + <u64>n + 24);
      return;
    }
    if (r + size > end) {
      warn(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, <u64>(end - r));
      lose(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, off + <u64>n + 24);
      return;
    }
    S.countRecord(kind);
    const at = off + <u64>(r - p) + 24;
    // Every kind pass 2 turns into an event hands its times to the timestamp rule (model/timing.ts) first, with pass 2's
    // minimum sizes, so that both passes judge the same records.
    switch (kind) {
      case K.CONCURRENT_KERNEL:
      case K.KERNEL:
        if (size >= 104) timingNote(load<u64>(r, 16), load<u64>(r, 24), kind, at);
        if (size >= 52) S.setContextDevice(load<u32>(r, 44), load<u32>(r, 40));
        if (size >= 96) R.rangesNoteDeviceCorr(load<u32>(r, 92));
        break;
      case K.MEMCPY:
      case K.MEMSET:
        if (size >= 48) timingNote(load<u64>(r, 16), load<u64>(r, 24), kind, at);
        if (size >= 44) S.setContextDevice(load<u32>(r, 36), load<u32>(r, 32));
        if (size >= 48) R.rangesNoteDeviceCorr(load<u32>(r, 44));
        break;
      case K.MEMCPY2:
        if (size >= 64) timingNote(load<u64>(r, 16), load<u64>(r, 24), kind, at);
        if (size >= 44) S.setContextDevice(load<u32>(r, 36), load<u32>(r, 32));
        if (size >= 64) R.rangesNoteDeviceCorr(load<u32>(r, 60));
        break;
      case K.RUNTIME:
      case K.DRIVER:
        if (size >= 36) timingNote(load<u64>(r, 8), load<u64>(r, 16), kind, at);
        if (size >= 24) R.rangesNoteApi();
        if (size >= 36) {
          R.rangesNoteCallCorr(load<u32>(r, 32));
          if (!S.noteApiProcess(load<u32>(r, 32), load<u32>(r, 24))) {
            warn(Warn.CORRELATION_PROCESSES, at, load<u32>(r, 32));
          }
        }
        break;
      case K.INTERNAL_LAUNCH_API:
        if (size >= 36) {
          timingNote(load<u64>(r, 8), load<u64>(r, 16), kind, at);
          R.rangesNoteCallCorr(load<u32>(r, 32));
        }
        break;
      case K.SYNCHRONIZATION:
      case K.GRAPH_TRACE:
        if (size >= 40) timingNote(load<u64>(r, 8), load<u64>(r, 16), kind, at);
        break;
      case K.OVERHEAD:
        if (size >= 40) timingNote(load<u64>(r, 24), load<u64>(r, 32), kind, at);
        break;
      case K.CUDA_EVENT:
        // 0 = device timestamps not enabled (a setting, not damage): skipped without a warning in pass 2.
        if (size >= 48 && load<u64>(r, 40) != 0) timingNote(load<u64>(r, 40), load<u64>(r, 40), kind, at);
        break;
      case K.MARKER:
        if (size >= 36) timingNote(load<u64>(r, 8), load<u64>(r, 8), kind, at);
        // Ranges for the GPU projection, in vendor time (compared with API records' vendor time).
        if (size >= 36 && load<u32>(r, 20) == 2 && load<u64>(r, 8) != 0) {
          const flags = load<u32>(r, 4);
          if ((flags & MARKER_START) != 0) {
            R.rangeOpen(load<u32>(r, 16), load<u32>(r, 24), load<u32>(r, 28), load<u64>(r, 8), size >= 48 ? load<u64>(r, 40) : 0);
          } else if ((flags & MARKER_END) != 0) R.rangeClose(load<u32>(r, 16), load<u64>(r, 8));
        }
        break;
      case K.EXTERNAL_CORRELATION:
        if (size >= 20) {
          if (!S.setExternal(<u64>load<u32>(r, 16), load<u32>(r, 4), load<u64>(r, 8))) {
            warn(Warn.DUPLICATE_CORRELATION, at, load<u32>(r, 16));
          }
        }
        break;
      case K.CONTEXT:
        if (size >= 12) S.setContextDevice(load<u32>(r, 4), load<u32>(r, 8));
        break;
      case K.DEVICE:
        scanDevice(r, size);
        break;
      case K.NAME:
        scanName(r, size);
        break;
      case K.MARKER_DATA:
        // Pass 1, because the data record may come after its range's END marker.
        if (size >= 28) markerData(load<u32>(r, 8), load<u32>(r, 4), load<u32>(r, 24));
        break;
    }
    r += size;
  }
  if (r < end) {
    warn(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, <u64>(end - r));
    lose(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, off + <u64>n + 24);
  }
}

function scanDevice(r: usize, size: u32): void {
  if (size < 116) return;
  const e = S.deviceEntry(load<u32>(r, 112));
  if (e == 0) return;
  // Bandwidth in the record is KB/s; the session keeps bytes/s.
  store<u32>(e, load<u32>(r, 44), 4); // multiprocessors
  store<u64>(e, load<u64>(r, 16), 8); // global memory
  const kbps = load<u64>(r, 8);
  store<u64>(e, kbps > 18446744073709551 ? 0xffffffffffffffff : kbps * 1000, 16); // bandwidth (saturating)
  store<u32>(e, load<u32>(r, 36), 24); // clock kHz
  store<u32>(e, load<u32>(r, 104), 28);
  store<u32>(e, load<u32>(r, 108), 32);
  store<u32>(e, load<u32>(r, 76), 36); // max threads per block
  const threadsSM = <u64>load<u32>(r, 52) * <u64>load<u32>(r, 32); // warps/SM × warp size (saturating)
  store<u32>(e, threadsSM > 0xffffffff ? 0xffffffff : <u32>threadsSM, 40);
  store<u32>(e, load<u32>(r, 68), 44);
  store<u32>(e, load<u32>(r, 64), 48);
  store<u32>(e, load<u32>(r, 32), 52);
  store<u32>(e, load<u32>(r, 72), 56);
  store<u32>(e, load<u32>(r, 60), 60);
  if (load<u32>(e, 64) == 0) store<u32>(e, load<u32>(r, 72), 64);
  store<u32>(e, load<u32>(r, 56), 68);
  if (size >= 136) memory.copy(e + 72, r + 120, 16);
  if (size >= 144 && load<u32>(e, 92) == 0) {
    const np = S.stringDisplay(load<u64>(r, 136), false);
    if (np != 0) S.setDeviceName(e, np, S.displayLen);
  }
}

function scanName(r: usize, size: u32): void {
  if (size < 32) return;
  const objKind = load<u32>(r, 4);
  const np = S.stringDisplay(load<u64>(r, 24), false);
  if (np == 0) return;
  if (objKind == 2) S.setThreadName(load<u32>(r, 8), load<u32>(r, 12), np, S.displayLen);
  else if (objKind == 5) S.setStreamName(load<u32>(r, 8), load<u32>(r, 16), np, S.displayLen);
  else if (objKind == 3) {
    const e = S.deviceEntry(load<u32>(r, 8));
    if (e != 0) S.setDeviceName(e, np, S.displayLen);
  }
}

// ---- Projection pass ---------------------------------------------------------------------------------------------

/** Bit k set for the record kinds of launch calls (RUNTIME, DRIVER, INTERNAL_LAUNCH_API). */
const LAUNCH_CALL_KINDS: u64 = (<u64>1 << K.RUNTIME) | (<u64>1 << K.DRIVER) | (<u64>1 << K.INTERNAL_LAUNCH_API);

/**
 * Between passes 1 and 2, only when the dump has NVTX ranges and a launch call follows a device op of its id in the
 * file (else pass 2 does this as it decodes): maps launch calls to their innermost range.
 */
export function cuptiProject(p: usize, n: u32): void {
  const end = p + n;
  let r = p;
  while (r + 4 <= end) {
    const kind = load<u32>(r);
    const size = S.kindSize(kind);
    if (size == 0 || r + size > end) return;
    // One test for the three launch-call kinds (all < 64; a kind ≥ 64 shifts to a bit outside the mask).
    if (((LAUNCH_CALL_KINDS >> (<u64>kind & 63)) & (kind < 64 ? 1 : 0)) != 0 && size >= 36) {
      R.rangesMapCall(<u64>load<u32>(r, 32), load<u32>(r, 28), load<u64>(r, 8));
    }
    r += size;
  }
}

// ---- Pass 2 ------------------------------------------------------------------------------------------------------

const ev = changetype<Ev>(memory.data(offsetof<Ev>()));

/** Open NVTX ranges: id → entry {namePtr u32, nameLen u32, domPtr u32, domLen u32, pid u32, tid u32, start u64}. */
let markerOpen: usize = 0;
import { Table, tableNew, tableUpsert, tableFind, tableSlots, tableKeyAt, tableValueAt } from "../util/hash_table";
const MARK_ENTRY: usize = 32;

// @ts-ignore: decorator
@inline function kernelName(e: Ev, ptr: u64, at: u64): void {
  const np = S.stringDisplay(ptr, true);
  if (np != 0) {
    e.namePtr = np;
    e.nameLen = S.displayLen;
  } else {
    warn(Warn.MISSING_STRING, at, <u32>ptr);
    e.namePtr = changetype<usize>(UNKNOWN_KERNEL);
    e.nameLen = UNKNOWN_KERNEL_LEN;
  }
}
const UNKNOWN_KERNEL = memory.data<u8>([60, 117, 110, 107, 110, 111, 119, 110, 32, 107, 101, 114, 110, 101, 108, 62]);
const UNKNOWN_KERNEL_LEN: u32 = 16; // "<unknown kernel>"

/**
 * A kernel record's device, context and stream (@40, 12 bytes) and launch shape (grid and block @52, 24 bytes; static
 * and dynamic shared memory @76, 8 bytes) copied in wide moves: the Ev fields lie in the record's order (checked).
 */
// @ts-ignore: decorator
@inline function kernelFields(e: Ev, r: usize): void {
  const p = changetype<usize>(e);
  const d = offsetof<Ev>("device");
  const g = offsetof<Ev>("gridX");
  if (
    offsetof<Ev>("context") != d + 4 || offsetof<Ev>("stream") != d + 8 || offsetof<Ev>("gridY") != g + 4 ||
    offsetof<Ev>("gridZ") != g + 8 || offsetof<Ev>("blockX") != g + 12 || offsetof<Ev>("blockY") != g + 16 ||
    offsetof<Ev>("blockZ") != g + 20 || offsetof<Ev>("staticSharedMemory") != g + 28 ||
    offsetof<Ev>("dynamicSharedMemory") != g + 32
  ) {
    ERROR("kernelFields: Ev's device/context/stream or launch-shape fields moved");
  }
  store<u64>(p + d, load<u64>(r, 40));
  store<u32>(p + d, load<u32>(r, 48), 8);
  v128.store(p + g, v128.load(r, 52));
  store<u64>(p + g, load<u64>(r, 68), 16);
  store<u64>(p + g, load<u64>(r, 76), 28);
}

/** Pass 2 over one ACTIVITY payload: normalized events to the emitter. */
export function cuptiDecode(p: usize, n: u32, off: u64): void {
  if (markerOpen == 0) markerOpen = tableNew(64);
  if (apiCache == 0) {
    apiCache = heap.alloc(<usize>API_CACHE_IDS << 4);
    memory.fill(apiCache, 0, <usize>API_CACHE_IDS << 4);
  }
  const end = p + n;
  const e = ev;
  let r = p;
  while (r + 4 <= end) {
    const kind = load<u32>(r);
    const size = S.kindSize(kind);
    if (size == 0 || r + size > end) return; // reported by pass 1
    const at = off + 24 + <u64>(r - p);
    switch (kind) {
      case K.CONCURRENT_KERNEL:
      case K.KERNEL: {
        if (size < 104) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        evClear(e);
        e.kind = EvKind.KERNEL;
        e.recordKind = kind;
        e.flags = EvFlag.HAS_LAUNCH | EvFlag.FLOW_END | EvFlag.NAME_KEPT;
        if (!timingApply(e, load<u64>(r, 16), load<u64>(r, 24))) break;
        e.registersPerThread = <u32>load<u16>(r, 6);
        kernelFields(e, r);
        e.correlation = load<u32>(r, 92);
        if (size >= 112) kernelName(e, load<u64>(r, 104), at);
        else kernelName(e, 0, at);
        if (size >= 128) {
          const q = load<u64>(r, 120);
          if (q != 0) {
            e.queued = toUnix(q);
            e.flags |= EvFlag.HAS_QUEUED;
          }
        }
        if (size >= 160) {
          e.graphNodeId = load<u64>(r, 144);
          e.graphId = load<u32>(r, 156);
          e.flags |= EvFlag.HAS_GRAPH;
        }
        if (size >= 176) {
          e.channelId = load<u32>(r, 168);
          e.channelType = load<u32>(r, 172);
          e.flags |= EvFlag.HAS_CHANNEL;
        }
        attachExternal(e, e.correlation);
        R.rangesNoteDeviceOp(e.correlation, e.device, e.stream, e.start, e.end);
        emitEvent(e);
        break;
      }
      case K.MEMCPY: {
        if (size < 48) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        evClear(e);
        e.kind = EvKind.MEMCPY;
        e.recordKind = kind;
        e.flags = EvFlag.FLOW_END | EvFlag.NAME_KEPT;
        e.copyKind = <u32>load<u8>(r, 4);
        e.srcKind = <u32>load<u8>(r, 5);
        e.dstKind = <u32>load<u8>(r, 6);
        if ((load<u8>(r, 7) & 1) != 0) e.flags |= EvFlag.ASYNC;
        e.bytes = load<u64>(r, 8);
        if (!timingApply(e, load<u64>(r, 16), load<u64>(r, 24))) break;
        e.device = load<u32>(r, 32);
        e.context = load<u32>(r, 36);
        e.stream = load<u32>(r, 40);
        e.correlation = load<u32>(r, 44);
        if (size >= 76) {
          e.graphNodeId = load<u64>(r, 64);
          e.graphId = load<u32>(r, 72);
          e.flags |= EvFlag.HAS_GRAPH;
        }
        if (size >= 84) {
          e.channelId = load<u32>(r, 76);
          e.channelType = load<u32>(r, 80);
          e.flags |= EvFlag.HAS_CHANNEL;
        }
        memcpyName(e, e.copyKind, e.srcKind, e.dstKind);
        attachExternal(e, e.correlation);
        R.rangesNoteDeviceOp(e.correlation, e.device, e.stream, e.start, e.end);
        emitEvent(e);
        break;
      }
      case K.MEMCPY2: {
        if (size < 64) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        evClear(e);
        e.kind = EvKind.MEMCPY;
        e.recordKind = kind;
        e.flags = EvFlag.FLOW_END | EvFlag.PEER | EvFlag.NAME_KEPT;
        e.copyKind = <u32>load<u8>(r, 4);
        e.srcKind = <u32>load<u8>(r, 5);
        e.dstKind = <u32>load<u8>(r, 6);
        if ((load<u8>(r, 7) & 1) != 0) e.flags |= EvFlag.ASYNC;
        e.bytes = load<u64>(r, 8);
        if (!timingApply(e, load<u64>(r, 16), load<u64>(r, 24))) break;
        e.device = load<u32>(r, 32);
        e.context = load<u32>(r, 36);
        e.stream = load<u32>(r, 40);
        e.srcDevice = load<u32>(r, 44);
        e.srcContext = load<u32>(r, 48);
        e.dstDevice = load<u32>(r, 52);
        e.dstContext = load<u32>(r, 56);
        e.correlation = load<u32>(r, 60);
        if (size >= 84) {
          e.graphNodeId = load<u64>(r, 72);
          e.graphId = load<u32>(r, 80);
          e.flags |= EvFlag.HAS_GRAPH;
        }
        if (size >= 92) {
          e.channelId = load<u32>(r, 84);
          e.channelType = load<u32>(r, 88);
          e.flags |= EvFlag.HAS_CHANNEL;
        }
        memcpyName(e, e.copyKind, e.srcKind, e.dstKind);
        attachExternal(e, e.correlation);
        R.rangesNoteDeviceOp(e.correlation, e.device, e.stream, e.start, e.end);
        emitEvent(e);
        break;
      }
      case K.MEMSET: {
        if (size < 48) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        evClear(e);
        e.kind = EvKind.MEMSET;
        e.recordKind = kind;
        e.flags = EvFlag.FLOW_END | EvFlag.NAME_KEPT;
        e.memsetValue = load<u32>(r, 4);
        e.bytes = load<u64>(r, 8);
        if (!timingApply(e, load<u64>(r, 16), load<u64>(r, 24))) break;
        e.device = load<u32>(r, 32);
        e.context = load<u32>(r, 36);
        e.stream = load<u32>(r, 40);
        e.correlation = load<u32>(r, 44);
        let memKind: u32 = 0;
        if (size >= 52) {
          if ((load<u16>(r, 48) & 1) != 0) e.flags |= EvFlag.ASYNC;
          memKind = <u32>load<u16>(r, 50);
        }
        e.dstKind = memKind;
        if (size >= 76) {
          e.graphNodeId = load<u64>(r, 64);
          e.graphId = load<u32>(r, 72);
          e.flags |= EvFlag.HAS_GRAPH;
        }
        if (size >= 84) {
          e.channelId = load<u32>(r, 76);
          e.channelType = load<u32>(r, 80);
          e.flags |= EvFlag.HAS_CHANNEL;
        }
        memsetName(e, memKind);
        attachExternal(e, e.correlation);
        R.rangesNoteDeviceOp(e.correlation, e.device, e.stream, e.start, e.end);
        emitEvent(e);
        break;
      }
      case K.RUNTIME:
      case K.DRIVER:
      case K.INTERNAL_LAUNCH_API: {
        if (size < 36) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        // The NVTX projection done here instead of in an extra pass (model/ranges.ts), hidden calls included.
        if (R.projectInline) R.rangesMapCall(<u64>load<u32>(r, 32), load<u32>(r, 28), load<u64>(r, 8));
        const domain: u32 = kind == K.DRIVER ? 1 : 2;
        const cbid = load<u32>(r, 4);
        apiLookup(domain, cbid);
        const entry = apiName;
        const aflags = apiFlags;
        if ((aflags & S.API_HIDDEN) != 0 && !showAllApi) {
          S.addApiFiltered();
          break;
        }
        evClear(e);
        e.kind = kind == K.DRIVER ? EvKind.API_DRIVER : EvKind.API_RUNTIME;
        e.apiCat = kind == K.DRIVER ? ApiCat.CUDA_DRIVER : ApiCat.CUDA_RUNTIME;
        e.recordKind = kind;
        e.apiId = cbid;
        if (!timingApply(e, load<u64>(r, 8), load<u64>(r, 16))) break;
        e.pid = load<u32>(r, 24);
        e.tid = load<u32>(r, 28);
        e.correlation = load<u32>(r, 32);
        if (size >= 40) e.returnValue = load<u32>(r, 36);
        if ((aflags & S.API_FLOW) != 0) e.flags |= EvFlag.FLOW_START;
        if (entry != 0) {
          e.namePtr = <usize>load<u32>(entry);
          e.nameLen = load<u32>(entry, 4);
          e.flags |= EvFlag.NAME_KEPT;
        } else unknownApiName(e, domain, cbid); // a scratch name: not kept
        attachExternal(e, e.correlation);
        emitEvent(e);
        break;
      }
      case K.SYNCHRONIZATION: {
        if (size < 40) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        evClear(e);
        e.kind = EvKind.SYNC;
        e.recordKind = kind;
        e.flags = EvFlag.FLOW_END | EvFlag.NAME_KEPT;
        const st = load<u32>(r, 4);
        e.apiId = st;
        if (!timingApply(e, load<u64>(r, 8), load<u64>(r, 16))) break;
        e.correlation = load<u32>(r, 24);
        e.context = load<u32>(r, 28);
        e.stream = load<u32>(r, 32);
        e.eventId = load<u32>(r, 36);
        if (e.stream == INVALID_U32) e.flags |= EvFlag.NO_STREAM;
        if (size >= 52) e.returnValue = load<u32>(r, 48);
        e.device = S.contextDevice(e.context, 0);
        syncName(e, st);
        attachExternal(e, e.correlation);
        emitEvent(e);
        break;
      }
      case K.CUDA_EVENT: {
        // Only CudaEvent2 carries a device timestamp; without it there is nothing to place on the timeline.
        if (size < 48) break;
        const ts = load<u64>(r, 40);
        if (ts == 0 || timingCheck(ts, ts) == Timing.DROP) break;
        evClear(e);
        e.kind = EvKind.EVENT_RECORD;
        e.recordKind = kind;
        e.correlation = load<u32>(r, 4);
        e.context = load<u32>(r, 8);
        e.stream = load<u32>(r, 12);
        e.eventId = load<u32>(r, 16);
        e.device = load<u32>(r, 24);
        e.start = toUnix(ts);
        e.end = e.start;
        e.namePtr = changetype<usize>(EVENT_RECORD_NAME);
        e.nameLen = 12;
        e.flags = EvFlag.NAME_KEPT;
        emitEvent(e);
        break;
      }
      case K.OVERHEAD: {
        if (size < 40) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        evClear(e);
        e.kind = EvKind.OVERHEAD;
        e.recordKind = kind;
        const ok = load<u32>(r, 4);
        e.apiId = ok;
        const objKind = load<u32>(r, 8);
        if (objKind == 1 || objKind == 2) {
          e.pid = load<u32>(r, 12);
          e.tid = load<u32>(r, 16);
        } else if (objKind >= 3) {
          e.device = load<u32>(r, 12);
          e.context = load<u32>(r, 16);
          e.stream = load<u32>(r, 20);
        }
        if (!timingApply(e, load<u64>(r, 24), load<u64>(r, 32))) break;
        if (size >= 44) e.correlation = load<u32>(r, 40);
        overheadName(e, ok);
        emitEvent(e);
        break;
      }
      case K.MARKER:
        marker(e, r, size, at);
        break;
      case K.GRAPH_TRACE: {
        if (size < 40) {
          warn(Warn.RECORD_TOO_SMALL, at, kind);
          break;
        }
        evClear(e);
        e.kind = EvKind.GRAPH;
        e.recordKind = kind;
        e.flags = EvFlag.FLOW_END | EvFlag.HAS_GRAPH;
        e.correlation = load<u32>(r, 4);
        if (!timingApply(e, load<u64>(r, 8), load<u64>(r, 16))) break;
        e.device = load<u32>(r, 24);
        e.graphId = load<u32>(r, 28);
        e.context = load<u32>(r, 32);
        e.stream = load<u32>(r, 36);
        attachExternal(e, e.correlation);
        emitEvent(e);
        break;
      }
      case K.EXTERNAL_CORRELATION:
      case K.DEVICE:
      case K.CONTEXT:
      case K.NAME:
      case K.STREAM:
      case K.MARKER_DATA:
        break; // consumed by pass 1
      default:
        warn(Warn.UNKNOWN_KIND, at, kind);
    }
    r += size;
  }
}
const EVENT_RECORD_NAME = memory.data<u8>([69, 118, 101, 110, 116, 32, 82, 101, 99, 111, 114, 100]); // "Event Record"

// ---- NVTX ranges -------------------------------------------------------------------------------------------------

const MARKER_INSTANT: u32 = 1;
const MARKER_START: u32 = 2;
const MARKER_END: u32 = 4;

function marker(e: Ev, r: usize, size: u32, at: u64): void {
  if (size < 36) {
    warn(Warn.RECORD_TOO_SMALL, at, K.MARKER);
    return;
  }
  const flags = load<u32>(r, 4);
  const vts = load<u64>(r, 8);
  if (timingCheck(vts, vts) == Timing.DROP) return; // counted in pass 1 (model/timing.ts)
  const ts = toUnix(vts);
  const id = load<u32>(r, 16);
  const objKind = load<u32>(r, 20);
  const pid = objKind == 2 || objKind == 1 ? load<u32>(r, 24) : 0;
  const tid = objKind == 2 ? load<u32>(r, 28) : 0;
  let np: usize = 0;
  let nl: u32 = 0;
  let dp: usize = 0;
  let dl: u32 = 0;
  if ((flags & MARKER_END) == 0) {
    if (size >= 48) {
      const nptr = load<u64>(r, 40);
      if (nptr != 0) {
        np = S.stringDisplay(nptr, false);
        // displayLen is only set by a hit: a missing name is empty, not the previous lookup's length
        nl = np != 0 ? S.displayLen : 0;
        if (np == 0) warn(Warn.MISSING_STRING, at, <u32>nptr);
      }
    }
    if (size >= 56) {
      const dptr = load<u64>(r, 48);
      if (dptr != 0) {
        dp = S.stringDisplay(dptr, false);
        dl = dp != 0 ? S.displayLen : 0;
      }
    }
  }
  if ((flags & MARKER_INSTANT) != 0) {
    evClear(e);
    e.kind = EvKind.INSTANT;
    e.recordKind = K.MARKER;
    e.start = ts;
    e.end = ts;
    e.pid = pid;
    e.tid = tid;
    e.namePtr = np;
    e.nameLen = nl;
    e.domainPtr = dp;
    e.domainLen = dl;
    emitEvent(e);
    return;
  }
  if ((flags & MARKER_START) != 0) {
    const slot = tableUpsert(markerOpen, id);
    let m = <usize>load<u64>(slot);
    if (m == 0) {
      m = arenaAlloc(MARK_ENTRY);
      store<u64>(slot, m);
    }
    store<u32>(m, <u32>np);
    store<u32>(m, nl, 4);
    store<u32>(m, <u32>dp, 8);
    store<u32>(m, dl, 12);
    store<u32>(m, pid, 16);
    store<u32>(m, tid, 20);
    store<u64>(m, ts, 24);
    return;
  }
  if ((flags & MARKER_END) != 0) {
    const slot = tableFind(markerOpen, id);
    const m: usize = slot == 0 ? 0 : <usize>load<u64>(slot);
    if (m == 0 || load<u64>(m, 24) == 0) {
      warn(Warn.UNMATCHED_RANGE_END, at, id);
      return;
    }
    rangeEvent(e, m, ts, id);
    store<u64>(m, 0, 24); // closed
  }
}

/** MARKER_DATA: remembers the color of open range `id` (ARGB when flags has COLOR_ARGB = 2). */
let colorTable: Table = 0;
function markerData(id: u32, flags: u32, color: u32): void {
  if ((flags & 2) == 0) return;
  if (colorTable == 0) colorTable = tableNew(64);
  store<u64>(tableUpsert(colorTable, id), <u64>color | (<u64>1 << 32));
}

function rangeEvent(e: Ev, m: usize, endTs: u64, id: u32): void {
  evClear(e);
  e.color = rangeColor(id);
  e.kind = EvKind.RANGE;
  e.recordKind = K.MARKER;
  e.namePtr = <usize>load<u32>(m);
  e.nameLen = load<u32>(m, 4);
  e.domainPtr = <usize>load<u32>(m, 8);
  e.domainLen = load<u32>(m, 12);
  e.pid = load<u32>(m, 16);
  e.tid = load<u32>(m, 20);
  e.start = load<u64>(m, 24);
  e.end = endTs < e.start ? e.start : endTs;
  const step = stepOf(id);
  if (step >= 0) {
    e.flags |= EvFlag.STEP;
    e.stepNum = <u64>step;
  }
  emitEvent(e);
}

/** End of pass 2: closes ranges still open at the last timestamp (nothing lost), with a warning. */
export function cuptiFinish(lastTs: u64): void {
  emitProjections();
  if (markerOpen == 0) return;
  const n = tableSlots(markerOpen);
  for (let i: u32 = 0; i < n; i++) {
    if (tableKeyAt(markerOpen, i) == 0xffffffffffffffff) continue;
    const m = <usize>tableValueAt(markerOpen, i);
    if (m == 0 || load<u64>(m, 24) == 0) continue;
    warn(Warn.UNCLOSED_RANGE, 0, tableKeyAt(markerOpen, i));
    rangeEvent(ev, m, lastTs, <u32>tableKeyAt(markerOpen, i));
    store<u64>(m, 0, 24);
  }
}

/** Emits the device-stream spans of NVTX ranges (Kineto's gpu_user_annotation). */
function emitProjections(): void {
  const n = R.spanSlots();
  const e = ev;
  for (let i: u32 = 0; i < n; i++) {
    if (!R.spanAt(i)) continue;
    evClear(e);
    e.kind = EvKind.GPU_RANGE;
    e.recordKind = K.MARKER;
    e.device = R.spanDevice;
    e.stream = R.spanStream;
    e.pid = R.spanPid;
    e.start = R.spanStart;
    e.end = R.spanEnd;
    const np = R.spanName != 0 ? S.stringDisplay(R.spanName, false) : 0;
    e.namePtr = np;
    e.nameLen = np != 0 ? S.displayLen : 0;
    emitEvent(e);
  }
}

/** Color of range `id` from MARKER_DATA (ARGB), or 0. */
export function rangeColor(id: u32): u32 {
  if (colorTable == 0) return 0;
  const p = tableFind(colorTable, id);
  return p == 0 ? 0 : <u32>load<u64>(p);
}
