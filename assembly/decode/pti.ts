/**
 * Intel PTI decoder (Intel XPU, HEADER vendor 4). Reads the view buffers the XPU collector copies verbatim
 * (docs/format.md "Intel XPU"): records back to back, each starting with `u32 pti_view_kind`, stepped by the dump's
 * KIND_SIZES (measured from the loaded library's own `ptiViewGetNextRecord`), else by the built-in sizes of the
 * HEADER's PTI version (0.11–0.17: v1 records; ≥ 0.18 / 1.x: `_v2` records, which extend v1 without moving a field).
 * Offsets: collectors/xpu/pti_abi.h (vendor-record-layouts.md §3.3).
 *
 * - DEVICE_GPU_KERNEL (1) → kernels: name (`_name`, STRINGS, demangled when Itanium-mangled), device by
 *   `_device_uuid` (decode/pti_tables.ts), stream = SYCL queue id, device start/end as the event, append and submit
 *   times, L0 queue, context, kernel id and source file / line (when compiled with debug info) as args. PTI records carry no global or local work sizes.
 * - DEVICE_GPU_MEM_COPY (8) / _P2P (10) → copies named `Memcpy <src×4+dst> (<src> -> <dst>)` (Kineto's XPU names);
 *   P2P copies carry source and destination devices (PEER). DEVICE_GPU_MEM_FILL (9) → fills `Memset (v -> type)`.
 * - RUNTIME_API (6: SYCL / Unified Runtime) and DRIVER_API (3: Level Zero) → host calls named by API_NAMES (domain =
 *   `_api_group`); Kineto's launch / copy / fill calls start an ac2g flow (pti_tables.ts startsFlow).
 * - DEVICE_SYNCHRONIZATION (11) → host events named by their API (category `xpu_sync`); COMMUNICATION (12) → host
 *   events `xccl::<name>` (`collective_comm`); COLLECTION_OVERHEAD (5) → overhead named by its kind.
 * - EXTERNAL_CORRELATION (7) → framework op ids (CUSTOM_0, UNKNOWN) and user ids (CUSTOM_1) for the `_correlation_id`.
 * Times are PTI's (CLOCK_REALTIME unless the program set a timestamp callback), mapped through the CLOCK anchors.
 */
import { Ev, EvKind, EvFlag, ApiCat, evClear } from "../model/event";
import * as S from "../model/session";
import { timingNote, timingApply } from "../model/timing";
import { noteShownHost, shownHostNoted } from "../model/shown_hosts";
import { toUnix } from "../model/clock";
import { Warn } from "../util/error";
import { warn, lose } from "../util/diag";
import { arenaAlloc } from "../util/arena";
import { emitEvent } from "../emit/dispatch";
import { attachExternal } from "./external";
import { install, ignoreTable } from "./decoder";
import { prepareStrides } from "./strides";
import { Chunk } from "../format/container";
import * as A from "../model/args";
import * as T from "./pti_tables";

/** pti_view_kind values decoded here. */
namespace K {
  export const KERNEL: u32 = 1;
  export const DRIVER_API: u32 = 3;
  export const OVERHEAD: u32 = 5;
  export const RUNTIME_API: u32 = 6;
  export const EXTERNAL: u32 = 7;
  export const COPY: u32 = 8;
  export const FILL: u32 = 9;
  export const P2P: u32 = 10;
  export const SYNC: u32 = 11;
  export const COMM: u32 = 12;
}

/** The smallest record of each kind that holds every field read here (the v1 sizes; comms: 0.17's 56 B). */
function minSize(kind: u32): u32 {
  switch (kind) {
    case K.KERNEL: return 168;
    case K.DRIVER_API:
    case K.RUNTIME_API: return 48;
    case K.OVERHEAD: return 56;
    case K.EXTERNAL: return 24;
    case K.COPY:
    case K.FILL: return 136;
    case K.P2P: return 168;
    case K.SYNC: return 72;
    case K.COMM: return 56;
  }
  return 0;
}

/** PTI version as 10000 × major + 100 × minor + patch from which records are `_v2` (0.18). */
const V2_FROM: u32 = 1800;
/** Newest PTI generation whose layouts this build knows (1.x). */
const NEWEST_KNOWN_VERSION: u32 = 19999;

/**
 * Built-in record size of `kind` for PTI version `version` (used for kinds the dump's KIND_SIZES lacks), as the real
 * 0.12.4, 0.17.0 and 1.2.0 libraries step them (test/collectors/pti_abi.test.ts); 0 = unknown.
 */
export function ptiBuiltinSize(kind: u32, version: u32): u32 {
  const v2 = version >= V2_FROM;
  switch (kind) {
    case K.KERNEL: return v2 ? 184 : 168;
    case K.DRIVER_API:
    case K.RUNTIME_API: return 48;
    case K.OVERHEAD: return 56;
    case K.EXTERNAL: return 24;
    case K.COPY:
    case K.FILL: return v2 ? 152 : 136;
    case K.P2P: return v2 ? 192 : 168;
    case K.SYNC: return 72;
    case K.COMM: return version >= 10000 ? 64 : version >= 1700 && version < V2_FROM ? 56 : 0;
  }
  return 0;
}

/** Offset of the comms `_name` pointer: 48 in 0.17's 56-byte record, 56 in 1.x's 64-byte one. */
let commNameOff: u32 = 56;
/** `_v2` records (device handles present): the kernel stride is ≥ 184. */
let v2 = false;

/** Forgets per-file state (after heap.reset()). */
export function ptiReset(): void {
  v2 = false;
  commNameOff = 56;
  T.ptiTablesReset();
}

/** Registers this decoder as the active one (decode/registry.ts: vendor 4, every PTI version). */
export function ptiInstall(): void {
  T.ptiTablesInit();
  install(4, ptiApiName, ptiPrepare, ptiScan, ptiProject, ptiDecode, ptiFinish, ptiTable, ptiIndexed);
}

/** Vendor tables: the device / sub-device handle table after the DEVICES entries (pti_tables.ts). */
function ptiTable(type: u32, p: usize, n: u32, off: u64): void {
  if (type == Chunk.DEVICES) T.ptiHandleTable(p, n, off);
  else ignoreTable(type, p, n, off);
}

/** API_NAMES: domain = `pti_api_group_id`; SYCL / UR calls that enqueue device work start flows. */
function ptiApiName(domain: u32, id: u32, p: usize, n: u32): void {
  S.setApiName(domain, id, p, n, domain != 1 && T.startsFlow(p, n) ? S.API_FLOW : 0);
}

/** PTI versions (major × 10000 + minor × 100 + patch) whose record layouts ptiBuiltinSize knows, newest first: 1.x, 0.17, 0.12. */
const PTI_LAYOUTS: StaticArray<u32> = [10200, 1700, 1200];

/** Prepares the stride table: the dump's sizes, checked, completed by the built-in ones of the HEADER's version. */
function ptiPrepare(): void {
  const ver = S.vendorVersion;
  if (ver > NEWEST_KNOWN_VERSION) warn(Warn.UNKNOWN_VENDOR_VERSION, 0, ver);
  prepareStrides(ptiBuiltinSize, PTI_LAYOUTS);
  v2 = S.kindSize(K.KERNEL) >= 184;
  commNameOff = S.kindSize(K.COMM) >= 64 ? 56 : 48;
}

// ---- Record walk ---------------------------------------------------------------------------------------------------

/**
 * Walks one ACTIVITY payload [p, p+n) at file offset `off`, calling the pass's record function. Pass 1 reports a
 * kind with no size (the rest of the buffer is lost: PTI records have no length) and a record cut by the buffer end.
 */
function walk(p: usize, n: u32, off: u64, pass: i32): void {
  const end = p + n;
  let r = p;
  while (r + 4 <= end) {
    const kind = load<u32>(r);
    const size = S.kindSize(kind);
    const at = off + 24 + <u64>(r - p);
    if (size == 0) {
      if (pass == 1) {
        warn(Warn.UNKNOWN_KIND_UNSIZED, at, kind);
        lose(Warn.UNKNOWN_KIND_UNSIZED, at, off + <u64>n + 24);
      }
      return;
    }
    if (<usize>size > end - r) {
      if (pass == 1) {
        warn(Warn.RECORD_TRUNCATED, at, <u64>(end - r));
        lose(Warn.RECORD_TRUNCATED, at, off + <u64>n + 24);
      }
      return;
    }
    if (pass == 1) scanRecord(kind, r, size, at);
    else if (pass == 2) decodeRecord(kind, r, size, at);
    r += size;
  }
  if (r < end && pass == 1) {
    warn(Warn.RECORD_TRUNCATED, off + 24 + <u64>(r - p), <u64>(end - r));
    lose(Warn.RECORD_TRUNCATED, off + 24 + <u64>(r - p), off + <u64>n + 24);
  }
}

function ptiScan(p: usize, n: u32, off: u64): void {
  walk(p, n, off, 1);
}
function ptiDecode(p: usize, n: u32, off: u64): void {
  walk(p, n, off, 2);
}
/** No host ranges in PTI dumps: nothing to project. */
function ptiProject(p: usize, n: u32): void {}

/** Start and end offsets of a timed kind (0 when the kind has no times). */
function startOff(kind: u32): u32 {
  switch (kind) {
    case K.KERNEL: return 104;
    case K.COPY: return 96;
    case K.FILL: return 88;
    case K.P2P: return 128;
    case K.DRIVER_API:
    case K.RUNTIME_API:
    case K.OVERHEAD:
    case K.COMM: return 8;
    case K.SYNC: return 32;
  }
  return 0;
}

/** UUID offset of device work (0 = none). */
function uuidOff(kind: u32): u32 {
  return kind == K.KERNEL ? 80 : kind == K.COPY ? 56 : kind == K.FILL ? 48 : kind == K.P2P ? 72 : 0;
}
/** `_v2` device handle offset of device work (the P2P source handle; 0 = none or v1). */
function handleOff(kind: u32, size: u32): u32 {
  const o: u32 = kind == K.KERNEL ? 168 : kind == K.COPY || kind == K.FILL ? 136 : kind == K.P2P ? 168 : 0;
  return o != 0 && o + 8 <= size ? o : 0;
}
// @ts-ignore: decorator
@inline function handleAt(r: usize, o: u32): u64 {
  return o == 0 ? 0 : load<u64>(r + <usize>o);
}

// ---- Pass 1 --------------------------------------------------------------------------------------------------------

function scanRecord(kind: u32, r: usize, size: u32, at: u64): void {
  S.countRecord(kind);
  const need = minSize(kind);
  if (need == 0) {
    warn(Warn.UNKNOWN_KIND, at, kind);
    return;
  }
  if (size < need) return; // RECORD_TOO_SMALL in pass 2
  if (kind == K.EXTERNAL) {
    // PTI external kinds: 1 UNKNOWN, 2..5 CUSTOM_0..3; the session's are CUPTI's (1 UNKNOWN, 3 CUSTOM0, 4 CUSTOM1, ...).
    const ek = load<u32>(r, 16);
    const corr = <u64>load<u32>(r, 4);
    if (ek >= 1 && ek <= 5 && !S.setExternal(corr, ek == 1 ? 1 : ek + 1, load<u64>(r, 8))) {
      warn(Warn.DUPLICATE_CORRELATION, at, corr);
    }
    return;
  }
  const so = startOff(kind);
  if (!timingNote(load<u64>(r + <usize>so), load<u64>(r + <usize>(so + 8)), kind, at)) return;
  const uo = uuidOff(kind);
  if (uo != 0) {
    T.noteDevice(r + <usize>uo, handleAt(r, handleOff(kind, size)), at);
    if (kind == K.P2P) T.noteDevice(r + 88, handleAt(r, size >= 184 ? 176 : 0), at);
    // Streams: the SYCL queue id, else the L0 queue handle in order of first appearance.
    if (kind == K.KERNEL) T.streamOf(load<u64>(r, 152), load<u64>(r, 8), true);
    else if (kind == K.FILL) T.streamOf(load<u64>(r, 128), load<u64>(r, 8), true);
    else if (kind == K.COPY) T.streamOf(load<u64>(r, 128), load<u64>(r, 16), true);
    else T.streamOf(load<u64>(r, 160), load<u64>(r, 16), true);
  } else if (kind == K.DRIVER_API || kind == K.RUNTIME_API) {
    if (!S.noteApiProcess(load<u32>(r, 40), load<u32>(r, 32))) warn(Warn.CORRELATION_PROCESSES, at, load<u32>(r, 40));
    const pid = load<u32>(r, 32);
    const s0 = load<u64>(r + <usize>so);
    const s1 = load<u64>(r + <usize>(so + 8));
    if (!shownHostNoted(pid, s0, s1)) noteShownHost(pid, s0, s1, at); // PTI hides no call
  }
}

/** End of pass 1: device ids for every UUID seen. */
function ptiIndexed(): void {
  T.resolveDevices();
}

// ---- Pass 2 --------------------------------------------------------------------------------------------------------

const ev = changetype<Ev>(memory.data(offsetof<Ev>()));

/** Name of a string-table pointer, or `fallback` with a MISSING_STRING warning (a null pointer gives `fallback`). */
function nameOf(e: Ev, ptr: u64, demangle: bool, fallback: string, at: u64): void {
  const np: usize = ptr == 0 ? 0 : S.stringDisplay(ptr, demangle);
  if (np != 0) {
    e.namePtr = np;
    e.nameLen = S.displayLen;
    return;
  }
  if (ptr != 0) warn(Warn.MISSING_STRING, at, ptr & 0xffffffff);
  e.namePtr = staticName(fallback);
  e.nameLen = <u32>fallback.length;
}

function decodeRecord(kind: u32, r: usize, size: u32, at: u64): void {
  const need = minSize(kind);
  if (need == 0 || kind == K.EXTERNAL) return;
  if (size < need) {
    warn(Warn.RECORD_TOO_SMALL, at, kind);
    return;
  }
  const e = ev;
  evClear(e);
  e.recordKind = kind;
  switch (kind) {
    case K.KERNEL: {
      e.kind = EvKind.KERNEL;
      if (!deviceWork(e, r, size, 104, 96, 120, 56, 152, 8, 16)) return;
      e.kernelId = load<u64>(r, 48);
      nameOf(e, load<u64>(r, 24), true, "<unknown kernel>", at);
      // `_source_file_name` (NULL without debug info) and `_source_line_number`, as Kineto's args.
      call(e, load<u64>(r, 32));
      e.sourceLine = load<u64>(r, 40);
      break;
    }
    case K.COPY:
    case K.P2P: {
      e.kind = EvKind.MEMCPY;
      const p2p = kind == K.P2P;
      if (p2p) {
        if (!deviceWork(e, r, size, 128, 120, 144, 112, 160, 16, 24)) return;
      } else if (!deviceWork(e, r, size, 96, 88, 112, 80, 128, 16, 24)) return;
      e.flags |= EvFlag.ASYNC;
      const type = load<u32>(r, 4), src = load<u32>(r, 8), dst = load<u32>(r, 12);
      if (!T.copyName(type, src, dst)) badEnum(type < 16 ? (src < 4 ? dst : src) : type, at);
      e.namePtr = T.namePtr;
      e.nameLen = T.nameLen;
      e.bytes = load<u64>(r + <usize>(p2p ? 152 : 120));
      const srcDev = src == 2 || src == 3, dstDev = dst == 2 || dst == 3;
      e.srcKind = memKind(src);
      e.dstKind = memKind(dst);
      if (p2p) {
        e.srcDevice = T.deviceOf(r + 72, handleAt(r, handleOff(kind, size)));
        e.dstDevice = T.deviceOf(r + 88, handleAt(r, size >= 184 ? 176 : 0));
        e.device = e.srcDevice;
        e.flags |= EvFlag.PEER;
        e.copyKind = 10;
      } else {
        // CUPTI-compatible copy kinds (model/event.ts): 1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH; 0 unknown.
        e.copyKind = src > 3 || dst > 3 ? 0 : srcDev ? (dstDev ? 8 : 2) : dstDev ? 1 : 9;
      }
      call(e, load<u64>(r, 32));
      break;
    }
    case K.FILL: {
      e.kind = EvKind.MEMSET;
      if (!deviceWork(e, r, size, 88, 80, 104, 72, 128, 8, 16)) return;
      e.flags |= EvFlag.ASYNC;
      const mt = load<u32>(r, 4);
      if (mt > 3) badEnum(mt, at);
      const value = load<u64>(r, 120);
      T.fillName(value, mt);
      e.namePtr = T.namePtr;
      e.nameLen = T.nameLen;
      e.bytes = load<u64>(r, 112);
      e.memsetValue = <u32>value;
      e.dstKind = memKind(mt);
      call(e, load<u64>(r, 24));
      break;
    }
    case K.RUNTIME_API:
    case K.DRIVER_API: {
      e.kind = kind == K.RUNTIME_API ? EvKind.API_RUNTIME : EvKind.API_DRIVER;
      e.apiCat = kind == K.RUNTIME_API ? ApiCat.XPU_RUNTIME : ApiCat.XPU_DRIVER;
      if (!timingApply(e, load<u64>(r, 8), load<u64>(r, 16))) return;
      const group = load<u32>(r, 24);
      const id = load<u32>(r, 28);
      e.apiId = id;
      e.pid = load<u32>(r, 32);
      e.tid = load<u32>(r, 36);
      e.correlation = <u64>load<u32>(r, 40);
      e.returnValue = load<u32>(r, 44);
      attachExternal(e, e.correlation);
      const entry = S.apiEntry(group, id);
      if (entry != 0) {
        e.namePtr = <usize>load<u32>(entry);
        e.nameLen = load<u32>(entry, 4);
        // Kineto's XPU plugin: only runtime calls start flows.
        if (kind == K.RUNTIME_API && (load<u32>(entry, 8) & S.API_FLOW) != 0) e.flags |= EvFlag.FLOW_START;
      } else unknownApi(e, group, id);
      e.flags |= EvFlag.NAME_KEPT; // API_NAMES' and unknownApi's names are made once, never rewritten
      break;
    }
    case K.SYNC: {
      // Host-side waits and GPU barriers: on the calling thread, named by their API call (Kineto's xpu_sync).
      e.kind = EvKind.API_DRIVER;
      e.apiCat = ApiCat.XPU_SYNC;
      if (!timingApply(e, load<u64>(r, 32), load<u64>(r, 40))) return;
      e.apiId = load<u32>(r, 4); // pti_view_synchronization_type
      // The record holds no pid: the program's (the HEADER's, or with the HEADER lost or damaged the process of its API
      // calls: they were drawn as a process 0, or of the damaged pid, of their own).
      e.pid = S.programPid();
      e.tid = load<u32>(r, 48);
      e.correlation = <u64>load<u32>(r, 52);
      e.returnValue = load<u32>(r, 60);
      e.contextHandle = load<u64>(r, 8);
      e.queueHandle = load<u64>(r, 16);
      attachExternal(e, e.correlation);
      const group = load<u32>(r, 68), id = load<u32>(r, 64);
      const entry = S.apiEntry(group, id);
      if (entry != 0) {
        e.namePtr = <usize>load<u32>(entry);
        e.nameLen = load<u32>(entry, 4);
      } else unknownApi(e, group, id);
      e.flags |= EvFlag.NAME_KEPT;
      break;
    }
    case K.COMM: {
      e.kind = EvKind.API_RUNTIME;
      e.apiCat = ApiCat.COLLECTIVE_COMM;
      if (!timingApply(e, load<u64>(r, 8), load<u64>(r, 16))) return;
      e.pid = load<u32>(r, 24);
      e.tid = load<u32>(r, 28);
      const ptr = load<u64>(r + <usize>commNameOff);
      const np: usize = ptr == 0 ? 0 : S.stringDisplay(ptr, false);
      if (np != 0) {
        T.commName(ptr, np, S.displayLen);
        e.namePtr = T.namePtr;
        e.nameLen = T.nameLen;
      } else {
        if (ptr != 0) warn(Warn.MISSING_STRING, at, ptr & 0xffffffff);
        e.namePtr = staticName("xccl::<unknown>");
        e.nameLen = 15;
      }
      e.flags |= EvFlag.NAME_KEPT; // commName's names are made once per pointer
      break;
    }
    case K.OVERHEAD: {
      e.kind = EvKind.OVERHEAD;
      if (!timingApply(e, load<u64>(r, 8), load<u64>(r, 16))) return;
      e.tid = load<u32>(r, 24);
      e.apiId = load<u32>(r, 48);
      T.overheadName(e.apiId);
      e.namePtr = T.namePtr;
      e.nameLen = T.nameLen;
      break;
    }
  }
  emitEvent(e);
}

/**
 * Fills the common fields of a kernel, copy or fill: times (start @so, end @so+8), append @ao and submit @sub
 * (args), correlation @co, device (UUID / handle), stream (SYCL queue @qo, else L0 queue @ho), context @cx.
 * Returns false when the record is dropped (model/timing.ts).
 */
function deviceWork(e: Ev, r: usize, size: u32, so: u32, ao: u32, sub: u32, co: u32, qo: u32, ho: u32, cx: u32): bool {
  e.flags = EvFlag.FLOW_END | EvFlag.HAS_HANDLES;
  if (!timingApply(e, load<u64>(r + <usize>so), load<u64>(r + <usize>(so + 8)))) return false;
  const append = load<u64>(r + <usize>ao);
  if (append != 0) {
    e.queued = toUnix(append);
    e.flags |= EvFlag.HAS_QUEUED;
  }
  const submit = load<u64>(r + <usize>sub);
  if (submit != 0) e.submitted = toUnix(submit);
  e.correlation = <u64>load<u32>(r + <usize>co);
  attachExternal(e, e.correlation);
  const kind = e.recordKind;
  e.device = T.deviceOf(r + <usize>uuidOff(kind), handleAt(r, handleOff(kind, size)));
  const tile = T.lastTile;
  e.queueHandle = load<u64>(r + <usize>ho);
  e.contextHandle = load<u64>(r + <usize>cx);
  e.context = T.contextOf(e.contextHandle);
  e.stream = T.streamOf(load<u64>(r + <usize>qo), e.queueHandle, false);
  if (tile != 0) tileOf(e, tile - 1);
  return true;
}

const TILE_KEY = memory.data<u8>([116, 105, 108, 101]); // "tile"
const tileText = memory.data(16);

/**
 * Work of a tile (a sub-device under Level Zero's COMPOSITE hierarchy) on its root device: the `tile` arg, and the
 * stream named `tile N` (Chrome JSON row "stream Q (tile N)", XSpace line "tile N (Stream #Q(...))"). A queue belongs
 * to one Level Zero device, so each (tile, queue) pair is its own row / line.
 */
function tileOf(e: Ev, tile: u32): void {
  A.argsBegin();
  A.argU64(TILE_KEY, 4, <u64>tile);
  e.argsPtr = A.argsPtr();
  e.argsLen = A.argsLen();
  if (S.streamName(e.device, e.stream) != 0) return;
  let q = tileText;
  for (let i = 0; i < 5; i++) store<u8>(q + i, <u8>"tile ".charCodeAt(i));
  q += 5;
  let digits: u32 = 1;
  for (let t = tile; t >= 10; t /= 10) digits++;
  let v = tile;
  for (let i: i32 = <i32>digits - 1; i >= 0; i--) {
    store<u8>(q + <usize>i, <u8>(48 + v % 10));
    v /= 10;
  }
  S.setStreamName(e.device, e.stream, tileText, 5 + digits);
}

/** PTI memory type → the model's memory kind (CUPTI's: 1 pageable, 2 pinned, 3 device, 5 managed; 0 unknown). */
function memKind(t: u32): u32 {
  return t == 0 ? 1 : t == 1 ? 2 : t == 2 ? 3 : t == 3 ? 5 : 0;
}

function badEnum(v: u32, at: u64): void {
  warn(Warn.BAD_ENUM_VALUE, at, v);
}

/**
 * A second string of device work: the back-end call of a copy or fill (`_name`, e.g. `zeCommandListAppendMemoryCopy`:
 * its `l0 call` arg) or a kernel's source file.
 */
function call(e: Ev, ptr: u64): void {
  const np: usize = ptr == 0 ? 0 : S.stringDisplay(ptr, false);
  if (np != 0) {
    e.callPtr = np;
    e.callLen = S.displayLen;
  }
}

function put(q: usize, s: string): usize {
  for (let i = 0; i < s.length; i++) store<u8>(q + i, <u8>s.charCodeAt(i));
  return q + s.length;
}

/** Static ASCII text as bytes in the arena (per call: only for rare fallbacks). */
function staticName(s: string): usize {
  const p = arenaAlloc(<usize>s.length);
  put(p, s);
  return p;
}

/** Names `e` "<unknown api G:N>" (an API id the dump's API_NAMES does not name; made once per group and id). */
function unknownApi(e: Ev, group: u32, id: u32): void {
  T.unknownApiName(group, id);
  e.namePtr = T.namePtr;
  e.nameLen = T.nameLen;
}

/** End of pass 2: PTI dumps have no open ranges. */
function ptiFinish(lastTs: u64): void {}
