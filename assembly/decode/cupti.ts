/**
 * CUPTI activity decoder (NVIDIA CUDA). Walks the raw buffers of ACTIVITY chunks record by record using the
 * dump's own kind → size table (KIND_SIZES, measured by the collector), falling back to the built-in table of the
 * dump's CUPTI version. Every field is read only when the record's size covers it, so the record versions of CUDA
 * 11.8, 12.x and 13.x (append-only families, vendor-record-layouts.md §1.5) all decode with one set of offsets.
 *
 * Pass 1 (cuptiScan, decode/cupti_scan.ts) counts records and collects the join tables (external correlation,
 * devices, contexts, names); pass 2 ({@link cuptiDecode}, here) turns records into normalized events for the
 * emitter; NVTX ranges are decode/cupti_nvtx.ts, the static names decode/cupti_names.ts, the record kinds and
 * built-in sizes decode/cupti_kinds.ts.
 */
import { Ev, EvKind, EvFlag, ApiCat, evClear } from "../model/event";
import * as S from "../model/session";
import { toUnix } from "../model/clock";
import { Timing, timingCheck, timingApply } from "../model/timing";
import { Warn } from "../util/error";
import { warn } from "../util/diag";
import { emitEvent } from "../emit/dispatch";
import * as R from "../model/ranges";
import { cuptiApiFlags, cuptiApiName } from "./cupti_api";
import { attachExternal } from "./external";
import { install, ignoreTable, noIndexed, showAllApi } from "./decoder";
import { prepareStrides } from "./strides";
import { K, INVALID_U32, builtinSize, NEWEST_KNOWN_VERSION } from "./cupti_kinds";
import { memcpyName, memsetName, syncName, overheadName, unknownApiName, cuptiNamesReset } from "./cupti_names";
import { cuptiScan, cuptiProject } from "./cupti_scan";
import { marker, nvtxFinish, nvtxReset } from "./cupti_nvtx";
import { cudaEventNote, cudaEventWaited, cudaEventsReset, cudaEventsRestart, waitCorr, waitStream } from "./cupti_events";

/** Registers this decoder as the active one (decode/registry.ts: vendor 1, every CUPTI version). */
export function cuptiInstall(): void {
  install(1, cuptiApiName, cuptiPrepare, cuptiScan, cuptiProject, cuptiDecode, cuptiFinish, ignoreTable, noIndexed);
}

/** CUPTI API versions whose record layouts builtinSize knows, newest first: 13.5, 13.0, 12.x, 11.8. */
const CUPTI_LAYOUTS: StaticArray<u32> = [130500, 130001, 28, 18];

/**
 * Prepares the stride table: the dump's own sizes, completed by the built-in ones (without a KIND_SIZES table, those
 * of the layout the buffers walk exactly under: decode/strides.ts). Call before pass 1.
 */
export function cuptiPrepare(): void {
  if (S.vendorVersion > NEWEST_KNOWN_VERSION) warn(Warn.UNKNOWN_VENDOR_VERSION, 0, S.vendorVersion);
  prepareStrides(builtinSize, CUPTI_LAYOUTS);
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

/** Forgets static names, the API cache and the NVTX tables (after heap.reset()). */
export function cuptiReset(): void {
  cuptiNamesReset();
  nvtxReset();
  cudaEventsReset();
  apiCache = 0;
}

// ---- Pass 2 ------------------------------------------------------------------------------------------------------

const ev = changetype<Ev>(memory.data(offsetof<Ev>()));

/** Open NVTX ranges: id → entry {namePtr u32, nameLen u32, domPtr u32, domLen u32, pid u32, tid u32, start u64}. */
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
        // An event sync or a stream wait: which stream recorded the event it waits on, and by which call.
        if ((st == 1 || st == 2) && cudaEventWaited(e.context, e.eventId, <u32>e.correlation)) {
          e.flags |= EvFlag.WAIT_SOURCE;
          e.srcDevice = waitStream;
          e.srcContext = waitCorr;
        }
        e.device = S.contextDevice(e.context, 0);
        syncName(e, st);
        attachExternal(e, e.correlation);
        emitEvent(e);
        break;
      }
      case K.CUDA_EVENT: {
        // Every version has correlation @4, context @8, stream @12, event @16: what later waits on it resolve to.
        if (size >= 20) cudaEventNote(load<u32>(r, 8), load<u32>(r, 16), load<u32>(r, 4), load<u32>(r, 12));
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
        // Its CPU op's id, as for the call that recorded it (Kineto links both to the op).
        attachExternal(e, e.correlation);
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

/**
 * End of pass 2: NVTX's projected spans and the ranges still open (decode/cupti_nvtx.ts); the CUDA event records are
 * forgotten for the next pass 2.
 */
export function cuptiFinish(lastTs: u64): void {
  nvtxFinish(ev, lastTs);
  cudaEventsRestart();
}
