/**
 * rocprofiler-sdk decoder (AMD ROCm, HEADER vendor 2). Reads the records the ROCm collector copies verbatim
 * (docs/format.md §5: `{u32 category, u32 kind, u64 size, payload[size]}` padded to 8) in either ABI generation:
 * SDK 0.5 (16-byte correlation ids, 56-byte API records) or SDK ≥ 1.0 (24-byte correlation ids, 64-byte API records),
 * chosen by the HEADER's vendor version (≥ 10000 = 1.0). Offsets: collectors/rocm/rocprofiler_abi.h.
 *
 * Kinds and operations are decoded by name (API_NAMES domain 0 = kind names, 0x10000 | kind = operation names), never
 * by number: both were renumbered between releases.
 * - KERNEL_DISPATCH → kernels: agent → GPU index (AGENTS), queue → stream (order of first appearance), grid in
 *   work-groups (the SDK's grid is in work-items), LDS (static from KERNEL_SYMBOLS, the rest dynamic), VGPRs, name from
 *   KERNEL_SYMBOLS (demangled).
 * - MEMORY_COPY → copies: direction from the src/dst agents' types (peer copies between GPUs), else (an agent the
 *   dump does not describe) from the operation's name; bytes.
 * - HIP_RUNTIME_API, RCCL_API → host API calls with their names (HSA_*_API, when recorded: driver-layer calls); an
 *   `ac2g` flow starts at each call whose internal correlation id has device work (found in pass 1), so flows hold
 *   for every launch and copy call by construction; an operation without a name is `<unknown op N>`.
 * - MARKER_CORE_API (push/pop, paired per thread in time order) or, when recorded, MARKER_CORE_RANGE_API (one record
 *   per range) → ROCTx ranges with their messages (STRINGS keyed by correlation id), projected onto GPU streams
 *   through model/ranges.ts; roctxMarkA → instants.
 * - correlation_id.external (non-zero) → External id (framework ops).
 * - correlation_id.ancestor (1.0 API records) → the launch call of device work: a kernel or copy whose correlation id
 *   is a call that is not drawn as a HIP call (an HSA call, a hidden HIP call) belongs to the nearest drawn HIP/RCCL
 *   call up its ancestor chain: its `correlation` and flow are that call's ({@link launchOf}).
 * - ROCTx ranges whose name matches the step pattern are training steps (model/steps.ts).
 * Times are CLOCK_BOOTTIME, mapped to Unix ns through the CLOCK anchors (model/clock.ts).
 * - MEMORY_ALLOCATION (SDK 0.6 and 1.0) → the address and size on the HIP call of the same correlation id (`ptr`,
 *   `size`, as Kineto's ROCm malloc rows).
 * SCRATCH_MEMORY and CORRELATION_ID_RETIREMENT records are counted, not drawn.
 * The AGENTS and KERNEL_SYMBOLS tables are read by decode/rocprofiler_tables.ts.
 */
import { Ev, EvKind, EvFlag, ApiCat, evClear } from "../model/event";
import * as S from "../model/session";
import { toUnix, setClockSameRate } from "../model/clock";
import { Timing, timingNote, timingCheck, timingApply } from "../model/timing";
import { HEADER_PROCESS, noteShownHost } from "../model/shown_hosts";
import { Warn } from "../util/error";
import { warn, lose } from "../util/diag";
import { arenaAlloc } from "../util/arena";
import { Table, tableNew, tableUpsert, tableFind, tableCount, tableSlots, tableKeyAt } from "../util/hash_table";
import { Paged, pagedNew, pagedSlot } from "../util/paged";
import { emitEvent } from "../emit/dispatch";
import { emitProjectedSpans } from "./projected_spans";
import * as R from "../model/ranges";
import { install, showAllApi } from "./decoder";
import { stepOf } from "../model/steps";
import { marksReset, marksInit, addMark, marksPair, pushEnd, warnUnclosed, markTotal, unclosedPush, markTid, markTs, markCorr } from "./rocprofiler_marks";
import { KERNEL_KEY, rocpTable, rocpTablesInit, rocpTablesReset, gpuOf, isGpu, knownAgent, kernelSymbol, noteGpuAgent, resolveAgents } from "./rocprofiler_tables";

/** Decoder roles of buffer-tracing kinds (found by kind name). */
namespace Role {
  export const NONE: u32 = 0;
  export const HIP_API: u32 = 1;
  export const KERNEL: u32 = 2;
  export const COPY: u32 = 3;
  export const ALLOC: u32 = 4;
  export const SCRATCH: u32 = 5;
  export const MARKER_API: u32 = 6;
  export const MARKER_RANGE: u32 = 7;
  export const RETIRE: u32 = 8;
  export const RCCL_API: u32 = 9;
  /** Named by the library but not decoded (page migration, OMPT, …). */
  export const OTHER: u32 = 10;
  /** HSA runtime API calls (HSA_CORE_API, HSA_AMD_EXT_API, HSA_IMAGE_EXT_API, HSA_FINALIZE_EXT_API). */
  export const HSA_API: u32 = 11;
}

/** Operation roles (found by operation name). */
namespace Op {
  export const NONE: u32 = 0;
  export const PUSH: u32 = 1;
  export const POP: u32 = 2;
  export const MARK: u32 = 3;
  export const RANGE: u32 = 4;
  export const START: u32 = 5;
  export const STOP: u32 = 6;
  export const HIDDEN: u32 = 7;
  /** MEMORY_COPY operations: the direction their name says (the agents' types say it when the dump has them). */
  export const COPY_HTOH: u32 = 8;
  export const COPY_HTOD: u32 = 9;
  export const COPY_DTOH: u32 = 10;
  export const COPY_DTOD: u32 = 11;
}

const MAX_KINDS: u32 = 256;
const roles = memory.data(MAX_KINDS); // u8 role per kind value
const opsSeen = memory.data(MAX_KINDS); // 1 when the dump names operations of this kind (the collector recorded it)

let v1 = true;
/** Whether {@link v1} is settled: from the HEADER's SDK version, else (a dump without one) by the first API record. */
let v1Known = false;
/** Kind roles no longer change (from the first activity chunk on: rocpPrepare). */
let rolesFixed = false;
let useRangeRecords = false;
// Flags per internal correlation id (ID_* below, pass 1): a paged u8 array (util/paged.ts: ids are sequential), the hash
// table for ids past its cap.
let workDense: Paged = 0;
let corrWithWork: Table = 0;
let queues: Table = 0; // queue id → stream ordinal + 1
let queueCount: u32 = 0;
let allocs: Table = 0; // correlation id → allocation entry {address u64, bytes u64} (MEMORY_ALLOCATION, pass 1)
let redirects: Table = 0; // correlation id of a call not drawn as a HIP call → its ancestor's (1.0, pass 1)
let copyNames: usize = 0;

/** Forgets per-file state (after heap.reset()). */
export function rocprofilerReset(): void {
  memory.fill(roles, 0, MAX_KINDS);
  memory.fill(opsSeen, 0, MAX_KINDS);
  v1 = true;
  v1Known = false;
  rolesFixed = false;
  useRangeRecords = false;
  workDense = 0;
  corrWithWork = 0;
  queues = 0;
  queueCount = 0;
  marksReset();
  allocs = 0;
  redirects = 0;
  copyNames = 0;
  scratchName = 0;
  rocpTablesReset();
}

/** Registers this decoder as the active one (decode/registry.ts: vendor 2, SDK 0.5 and ≥ 1.0). */
export function rocprofilerInstall(): void {
  if (queues == 0) {
    rocpTablesInit();
    queues = tableNew(16);
    corrWithWork = tableNew(64);
    workDense = pagedNew(0, 16, 2048);
    marksInit();
    allocs = tableNew(16);
    redirects = tableNew(16);
  }
  // SDK timestamps are CLOCK_BOOTTIME: REALTIME plus a constant (it differs only across suspend or clock steps).
  setClockSameRate(true);
  install(2, rocpApiName, rocpPrepare, rocpScan, rocpProject, rocpDecode, rocpFinish, rocpTable, rocpIndexed);
}

// ---- Names ---------------------------------------------------------------------------------------------------------

/** True when [p, p+n) equals ASCII `s`. */
function eq(p: usize, n: u32, s: string): bool {
  if (<i32>n != s.length) return false;
  return starts(p, n, s);
}

/** True when [p, p+n) starts with ASCII `s`. */
function starts(p: usize, n: u32, s: string): bool {
  if (<i32>n < s.length) return false;
  for (let i = 0; i < s.length; i++) if (<i32>load<u8>(p + i) != s.charCodeAt(i)) return false;
  return true;
}

/**
 * Operation flag (above the marker role's bits 8..15): a HIP call that allocates or frees memory, the only calls that
 * carry a MEMORY_ALLOCATION record's `ptr` and `size`, as Kineto's malloc rows (its rocprofiler-sdk logger:
 * hipMalloc and hipFree). Before 2026-12-03 any call with an allocation record under it did (a stream create, a module
 * load, a copy's staging buffer).
 */
const OP_ALLOC: u32 = 1 << 16;

function kindRole(p: usize, n: u32): u32 {
  if (eq(p, n, "HIP_RUNTIME_API")) return Role.HIP_API;
  if (eq(p, n, "KERNEL_DISPATCH")) return Role.KERNEL;
  if (eq(p, n, "MEMORY_COPY")) return Role.COPY;
  if (eq(p, n, "MEMORY_ALLOCATION")) return Role.ALLOC;
  if (eq(p, n, "SCRATCH_MEMORY")) return Role.SCRATCH;
  if (eq(p, n, "MARKER_CORE_API")) return Role.MARKER_API;
  if (eq(p, n, "MARKER_CORE_RANGE_API")) return Role.MARKER_RANGE;
  if (eq(p, n, "CORRELATION_ID_RETIREMENT")) return Role.RETIRE;
  if (eq(p, n, "RCCL_API")) return Role.RCCL_API;
  if (eq(p, n, "HSA_CORE_API") || eq(p, n, "HSA_AMD_EXT_API") || eq(p, n, "HSA_IMAGE_EXT_API") ||
    eq(p, n, "HSA_FINALIZE_EXT_API")) return Role.HSA_API;
  return Role.OTHER;
}

/** Operation flags stored with the name (session API_* flags, the marker role in bits 8..15, {@link OP_ALLOC}). */
function opFlags(p: usize, n: u32): u32 {
  if (starts(p, n, "hipMalloc") || starts(p, n, "hipFree") || starts(p, n, "hipHostMalloc") || starts(p, n, "hipHostFree") ||
    starts(p, n, "hipExtMalloc") || starts(p, n, "hipMemAlloc")) return OP_ALLOC;
  if (eq(p, n, "roctxRangePushA")) return Op.PUSH << 8;
  if (eq(p, n, "roctxRangePop")) return Op.POP << 8;
  if (eq(p, n, "roctxMarkA")) return Op.MARK << 8;
  if (eq(p, n, "roctxThreadRangeA") || eq(p, n, "roctxProcessRangeA")) return Op.RANGE << 8;
  if (eq(p, n, "roctxRangeStartA")) return Op.START << 8;
  if (eq(p, n, "roctxRangeStop")) return Op.STOP << 8;
  if (eq(p, n, "MEMORY_COPY_HOST_TO_HOST")) return Op.COPY_HTOH << 8;
  if (eq(p, n, "MEMORY_COPY_HOST_TO_DEVICE")) return Op.COPY_HTOD << 8;
  if (eq(p, n, "MEMORY_COPY_DEVICE_TO_HOST")) return Op.COPY_DTOH << 8;
  if (eq(p, n, "MEMORY_COPY_DEVICE_TO_DEVICE")) return Op.COPY_DTOD << 8;
  // The HIP calls Kineto's rocprofiler-sdk logger leaves out of traces (pytorch/kineto libkineto/src/RocprofLogger.cpp
  // at 00ca10e8, toolInit's inverted RocprofApiIdList): the same SDK this collector records with. Before 2026-12-03
  // the CUDA list renamed (hipEventCreate and hipEventDestroy hidden, hipGetDevicePropertiesR0600 and
  // hipDeviceGetAttribute shown, which PyTorch calls at every step).
  if (eq(p, n, "hipGetDevice") || eq(p, n, "hipSetDevice") || eq(p, n, "hipGetLastError") ||
    eq(p, n, "hipCtxSetCurrent") || eq(p, n, "hipGetDevicePropertiesR0600") || eq(p, n, "hipGetDeviceCount") ||
    eq(p, n, "hipDeviceGetAttribute") || eq(p, n, "hipRuntimeGetVersion") || eq(p, n, "hipPeekAtLastError") ||
    eq(p, n, "hipModuleGetFunction")) return S.API_HIDDEN;
  return 0;
}

/** API_NAMES: domain 0 names the buffer-tracing kinds, 0x10000 | kind the operations of that kind. */
function rocpApiName(domain: u32, id: u32, p: usize, n: u32): void {
  if (domain == 0) {
    // Fixed from the first activity chunk on (rocpPrepare), as KIND_SIZES are: a kind named only after records of
    // it were scanned would be decoded by pass 2 but not indexed by pass 1.
    if (id < MAX_KINDS && !rolesFixed) store<u8>(roles + id, <u8>kindRole(p, n));
    S.setApiName(domain, id, p, n, 0);
    return;
  }
  if ((domain & 0x10000) != 0 && (domain & 0xffff) < MAX_KINDS) store<u8>(opsSeen + (domain & 0xffff), 1);
  S.setApiName(domain, id, p, n, opFlags(p, n));
}

// @ts-ignore: decorator
@inline function roleOf(kind: u32): u32 {
  return kind < MAX_KINDS ? <u32>load<u8>(roles + kind) : Role.NONE;
}

/** Operation flags of (kind, op) from API_NAMES, or 0. */
function opEntryFlags(kind: u32, op: u32): u32 {
  const e = S.apiEntry(0x10000 | kind, op);
  return e == 0 ? 0 : load<u32>(e, 8);
}

function rocpPrepare(): void {
  // SDK 1.0's API record is 64 bytes, 0.5's 56: with no version in the HEADER (none read: engine.ts
  // beginWithoutHeader) the first API record's own size tells (scanRecord).
  v1 = S.vendorVersion >= 10000;
  v1Known = S.vendorVersion != 0;
  rolesFixed = true;
  useRangeRecords = false;
  for (let k: u32 = 0; k < MAX_KINDS; k++) {
    if (<u32>load<u8>(roles + k) == Role.MARKER_RANGE && load<u8>(opsSeen + k) != 0) useRangeRecords = true;
  }
}

// Per correlation id flags (pass 1): a paged u8 array (util/paged.ts: ids are sequential), the hash table for ids
// past its cap.
/** The id has device work (a kernel or copy carries it). */
const ID_WORK: u8 = 1;
/** The id is a drawn HIP or RCCL call (a launch call a device op can be linked to). */
const ID_LAUNCH: u8 = 2;
/** The id's device work belongs to an ancestor call ({@link launchOf}): the id starts no flow. */
const ID_MOVED: u8 = 4;

function setFlag(corr: u64, f: u8): void {
  const s = pagedSlot(workDense, corr, true);
  if (s != 0) store<u8>(s, load<u8>(s) | f);
  else {
    const t = tableUpsert(corrWithWork, corr);
    store<u64>(t, load<u64>(t) | <u64>f);
  }
}
function flagsOf(corr: u64): u8 {
  const s = pagedSlot(workDense, corr, false);
  if (s != 0) return load<u8>(s);
  const t = tableFind(corrWithWork, corr);
  return t == 0 ? 0 : <u8>load<u64>(t);
}
/** Pass 1: correlation id `corr` has device work. */
// @ts-ignore: decorator
@inline function markWork(corr: u64): void {
  setFlag(corr, ID_WORK);
}
/** True when the call of correlation id `corr` starts a flow: it has device work of its own, not moved up. */
function startsFlow(corr: u64): bool {
  return (flagsOf(corr) & (ID_WORK | ID_MOVED)) == ID_WORK;
}

/** Ancestor hops followed at most (a cycle in crafted input ends there). */
const MAX_HOPS: u32 = 32;

/**
 * The launch call of device work with correlation id `corr` (after pass 1): `corr` itself when it is a drawn HIP or
 * RCCL call; else the nearest drawn HIP/RCCL call up its `correlation_id.ancestor` chain (SDK 1.0: an HSA call — or a
 * hidden HIP call — issued inside a HIP call has an id of its own, whose ancestor is the HIP call's); else `corr`.
 */
function launchOf(corr: u64): u64 {
  if (tableCount(redirects) == 0) return corr;
  let c = corr;
  for (let hop: u32 = 0; hop < MAX_HOPS; hop++) {
    if ((flagsOf(c) & ID_LAUNCH) != 0) return c;
    const r = tableFind(redirects, c);
    if (r == 0) return corr;
    c = load<u64>(r);
  }
  return corr;
}

/** End of pass 1: device work of a call that is not drawn moves to its launch call (flows start there). */
function moveWork(): void {
  const n = tableSlots(redirects);
  for (let i: u32 = 0; i < n; i++) {
    const c = tableKeyAt(redirects, i);
    if (c == 0xffffffffffffffff || (flagsOf(c) & ID_WORK) == 0) continue;
    const l = launchOf(c);
    if (l == c) continue;
    setFlag(l, ID_WORK);
    setFlag(c, ID_MOVED);
  }
}

/** Pass 1: notes an API record's ancestor link (1.0) and whether it is a drawn launch call; `at`: its file offset. */
function noteCall(role: u32, kind: u32, q: usize, at: u64): void {
  const corr = load<u64>(q, 16);
  const hidden = (opEntryFlags(kind, <u32>load<i32>(q, 12)) & S.API_HIDDEN) != 0 && !showAllApi;
  if (!hidden) noteShownHost(HEADER_PROCESS, load<u64>(q + <usize>(apiStartOff())), load<u64>(q + <usize>(apiStartOff() + 8)), at);
  if ((role == Role.HIP_API || role == Role.RCCL_API) && !hidden) {
    setFlag(corr, ID_LAUNCH);
    return;
  }
  const anc = v1 ? load<u64>(q, 32) : 0;
  if (anc != 0 && anc != corr) store<u64>(tableUpsert(redirects, corr), anc);
}

// ---- Record walk ---------------------------------------------------------------------------------------------------

// API record offsets (rocprofiler_abi.h rt_rocp_api_record_v0 / _v1).
// @ts-ignore: decorator
@inline function apiStartOff(): u32 { return v1 ? 40 : 32; }
// @ts-ignore: decorator
@inline function apiThreadOff(): u32 { return v1 ? 56 : 48; }
// @ts-ignore: decorator
@inline function apiSize(): u32 { return v1 ? 64 : 56; }

/** Walks the records of one ACTIVITY payload, calling `visit(role, kind, payload, size, fileOffset)` on each. */
function walk(p: usize, n: u32, off: u64, report: bool, pass: i32): void {
  const end = p + n;
  let r = p;
  while (r + 16 <= end) {
    const category = load<u32>(r);
    const kind = load<u32>(r, 4);
    const size = load<u64>(r, 8);
    const at = off + 24 + <u64>(r - p);
    if (!frames(r, end)) {
      // Not a record here: a damaged byte (a buffer cut by the file's end is read unverified), or the record the cut
      // went through. Walking on by a damaged size would read every later record misaligned and skip them unsaid
      // (a one-bit flip of the first record's size lost 34 of 35 records, said as 136 bytes): the walk goes on at
      // the next header that frames a record, the bytes between said lost.
      let next = r + 8;
      while (next + 24 <= end && !frames(next, end)) next += 8;
      const cut = next + 24 > end;
      // None follows, and this header's size runs past the buffer: the record the cut (or the buffer's end) went
      // through, as before.
      if (cut && category == 1 && size >= 16 && size > <u64>(end - r - 16)) {
        if (report) {
          warn(Warn.RECORD_TRUNCATED, at, <u64>(end - r));
          lose(Warn.RECORD_TRUNCATED, at, off + <u64>n + 24);
        }
        return;
      }
      if (report) {
        warn(Warn.BAD_RECORD_HEADER, at, size);
        lose(Warn.BAD_RECORD_HEADER, at, cut ? off + <u64>n + 24 : off + 24 + <u64>(next - p));
      }
      if (cut) return;
      r = next;
      continue;
    }
    const q = r + 16;
    const sz = <u32>size;
    if (pass == 1) scanRecord(kind, q, sz, at);
    else if (pass == 2) decodeRecord(kind, q, sz, at);
    else projectRecord(kind, q, sz);
    r = q + ((<usize>sz + 7) & ~<usize>7);
  }
  if (r < end && report) {
    warn(Warn.RECORD_TRUNCATED, off + 24 + <u64>(r - p), <u64>(end - r));
    lose(Warn.RECORD_TRUNCATED, off + 24 + <u64>(r - p), off + <u64>n + 24);
  }
}

/**
 * True when the 16-byte header at `r` frames a record of the buffer ending at `end`: a tracing record (category 1;
 * the collector copies no other), at least 16 bytes, inside the buffer, its payload's first field (rocprofiler-sdk
 * records start with their own size) repeating the size.
 */
// @ts-ignore: decorator
@inline function frames(r: usize, end: usize): bool {
  if (r + 24 > end) return false;
  const size = load<u64>(r, 8);
  return load<u32>(r) == 1 && size >= 16 && size <= <u64>(end - r - 16) && load<u64>(r, 16) == size;
}

function rocpScan(p: usize, n: u32, off: u64): void {
  walk(p, n, off, true, 1);
}
function rocpDecode(p: usize, n: u32, off: u64): void {
  walk(p, n, off, false, 2);
}
function rocpProject(p: usize, n: u32): void {
  walk(p, n, 0, false, 3);
}

// ---- Pass 1 --------------------------------------------------------------------------------------------------------

/** The API record layout by the size of the first API record, when the HEADER gave no SDK version. */
// @ts-ignore: decorator
@inline function settleLayout(size: u32): void {
  if (v1Known) return;
  v1 = size >= 64;
  v1Known = true;
}

function scanRecord(kind: u32, q: usize, size: u32, at: u64): void {
  S.countRecord(kind);
  const role = roleOf(kind);
  switch (role) {
    case Role.KERNEL: {
      if (size < 128) return;
      if (!timingNote(load<u64>(q, 40), load<u64>(q, 48), kind, at)) return; // dropped (model/timing.ts)
      markWork(load<u64>(q, 16));
      noteGpuAgent(load<u64>(q, 64), at);
      const slot = tableUpsert(queues, load<u64>(q, 72));
      if (load<u64>(slot) == 0) store<u64>(slot, <u64>(++queueCount));
      break;
    }
    case Role.COPY: {
      if (size < 80) return;
      if (!timingNote(load<u64>(q, 40), load<u64>(q, 48), kind, at)) return; // dropped (model/timing.ts)
      markWork(load<u64>(q, 16));
      // Its device side by the operation's direction (as decodeRecord reads an agent AGENTS lacks).
      const dir = (opEntryFlags(kind, <u32>load<i32>(q, 12)) >> 8) & 0xff;
      if (dir == Op.COPY_HTOD || dir == Op.COPY_DTOD) noteGpuAgent(load<u64>(q, 56), at);
      if (dir == Op.COPY_DTOH || dir == Op.COPY_DTOD) noteGpuAgent(load<u64>(q, 64), at);
      break;
    }
    case Role.HIP_API:
    case Role.RCCL_API:
    case Role.HSA_API:
      settleLayout(size);
      if (size < apiSize()) return;
      if (!timingNote(load<u64>(q + <usize>(apiStartOff())), load<u64>(q + <usize>(apiStartOff() + 8)), kind, at)) return;
      R.rangesNoteApi();
      noteCall(role, kind, q, at);
      break;
    case Role.MARKER_API: {
      settleLayout(size);
      if (size < apiSize() || useRangeRecords) return;
      if (!timingNote(load<u64>(q + <usize>(apiStartOff())), load<u64>(q + <usize>(apiStartOff() + 8)), kind, at)) return;
      const what = opEntryFlags(kind, <u32>load<i32>(q, 12)) >> 8;
      if (what == Op.PUSH || what == Op.POP) {
        const s = load<u64>(q + <usize>(apiStartOff()));
        const e = load<u64>(q + <usize>(apiStartOff() + 8));
        noteShownHost(HEADER_PROCESS, s, e, at); // a ROCTx range on the host
        addMark(<u32>load<u64>(q + <usize>(apiThreadOff())), what == Op.PUSH, what == Op.PUSH ? s : e, load<u64>(q, 16), at);
      }
      break;
    }
    case Role.MARKER_RANGE: {
      settleLayout(size);
      if (size < apiSize() || !useRangeRecords) return;
      if (!timingNote(load<u64>(q + <usize>(apiStartOff())), load<u64>(q + <usize>(apiStartOff() + 8)), kind, at)) return;
      const what = opEntryFlags(kind, <u32>load<i32>(q, 12)) >> 8;
      if (what == Op.RANGE) {
        noteShownHost(HEADER_PROCESS, load<u64>(q + <usize>(apiStartOff())), load<u64>(q + <usize>(apiStartOff() + 8)), at);
        const corr = load<u64>(q, 16);
        R.rangeOpen(<u32>corr, S.hostPid(), <u32>load<u64>(q + <usize>(apiThreadOff())), load<u64>(q + <usize>(apiStartOff())), corr);
        R.rangeClose(<u32>corr, load<u64>(q + <usize>(apiStartOff() + 8)));
      }
      break;
    }
    case Role.ALLOC: {
      // rocprofiler_buffer_tracing_memory_allocation_record_t: 1.0 (88 B, 24-byte correlation id): address @72,
      // allocation_size @80; SDK 0.6 (ROCm 6.4: 80 B, 16-byte correlation id, no ancestor): address @64, size @72.
      // Keyed by its correlation id and by its ancestor's (@32, 1.0): the allocator runs under the HIP call, whose id
      // is the record's own or, when the SDK gave the allocation an id of its own, its ancestor.
      const ao: u32 = v1 ? 72 : 64;
      if (size < ao + 16) {
        warn(Warn.RECORD_TOO_SMALL, at, kind);
        return;
      }
      const a = arenaAlloc(16);
      store<u64>(a, load<u64>(q + <usize>ao));
      store<u64>(a, load<u64>(q + <usize>(ao + 8)), 8);
      // The first allocation under a call, by its own id as by its ancestor's (before, its own id kept the last).
      const own = tableUpsert(allocs, load<u64>(q, 16));
      if (load<u64>(own) == 0) store<u64>(own, a);
      const anc = v1 ? load<u64>(q, 32) : 0;
      if (anc != 0) {
        const slot = tableUpsert(allocs, anc);
        if (load<u64>(slot) == 0) store<u64>(slot, a);
      }
      break;
    }
    case Role.NONE:
    case Role.OTHER:
      skippedKind(kind, at);
      break;
  }
}

/**
 * A record of a kind with no role: a kind the dump names but this decoder does not decode (OMPT, PAGE_MIGRATION added
 * with RAWTRACE_ROCM_KINDS; a name a damaged API_NAMES or a renaming SDK changed) is skipped by design and said
 * (UNKNOWN_KIND, as for CUPTI and PTI); one it never names was lost with its API_NAMES chunk (UNNAMED_KIND, a loss).
 */
function skippedKind(kind: u32, at: u64): void {
  warn(S.apiEntry(0, kind) != 0 ? Warn.UNKNOWN_KIND : Warn.UNNAMED_KIND, at, kind);
}

/**
 * End of pass 1: moves device work to its launch call ({@link launchOf}), then pairs the ROCTx pushes and pops
 * (decode/rocprofiler_marks.ts marksPair).
 */
function rocpIndexed(): void {
  if (tableCount(redirects) != 0) moveWork();
  marksPair();
  resolveAgents();
}

// ---- Projection pass -----------------------------------------------------------------------------------------------

function projectRecord(kind: u32, q: usize, size: u32): void {
  const role = roleOf(kind);
  if ((role == Role.HIP_API || role == Role.RCCL_API) && size >= apiSize()) {
    R.rangesMapCall(load<u64>(q, 16), <u32>load<u64>(q + <usize>(apiThreadOff())), load<u64>(q + <usize>(apiStartOff())));
  }
}

// ---- Pass 2 --------------------------------------------------------------------------------------------------------

const ev = changetype<Ev>(memory.data(offsetof<Ev>()));

// @ts-ignore: decorator
@inline function external(e: Ev, ext: u64): void {
  if (ext != 0) {
    e.externalId = ext;
    e.flags |= EvFlag.HAS_EXTERNAL;
  }
}

function decodeRecord(kind: u32, q: usize, size: u32, at: u64): void {
  const role = roleOf(kind);
  const e = ev;
  switch (role) {
    case Role.KERNEL: {
      if (size < 128) {
        warn(Warn.RECORD_TOO_SMALL, at, kind);
        return;
      }
      evClear(e);
      e.kind = EvKind.KERNEL;
      e.recordKind = kind;
      e.flags = EvFlag.HAS_LAUNCH | EvFlag.FLOW_END;
      e.correlation = launchOf(load<u64>(q, 16));
      external(e, load<u64>(q, 24));
      if (!timingApply(e, load<u64>(q, 40), load<u64>(q, 48))) return;
      e.device = gpuOf(load<u64>(q, 64));
      const qs = tableFind(queues, load<u64>(q, 72));
      e.stream = qs == 0 ? 0 : <u32>load<u64>(qs) - 1;
      const kid = load<u64>(q, 80);
      const lds = load<u32>(q, 100);
      const wx = load<u32>(q, 104), wy = load<u32>(q, 108), wz = load<u32>(q, 112);
      e.blockX = <i32>wx;
      e.blockY = <i32>wy;
      e.blockZ = <i32>wz;
      e.gridX = <i32>(wx != 0 ? (load<u32>(q, 116) + wx - 1) / wx : 0);
      e.gridY = <i32>(wy != 0 ? (load<u32>(q, 120) + wy - 1) / wy : 0);
      e.gridZ = <i32>(wz != 0 ? (load<u32>(q, 124) + wz - 1) / wz : 0);
      const sym = kernelSymbol(kid);
      const staticLds = sym != 0 ? min(load<u32>(sym), lds) : 0;
      e.staticSharedMemory = staticLds;
      e.dynamicSharedMemory = lds - staticLds;
      if (sym != 0) {
        // Arch plus accumulation VGPRs (one register file on gfx90a/gfx94x). rocprofiler-sdk 0.5 computed the
        // accumulation count in unsigned arithmetic that wraps on those GPUs (4,294,966,464 for 64 arch VGPRs): a
        // count past the most VGPRs a work-item has on any AMD GPU (512) is not one, and the arch count is kept.
        const arch = load<u32>(sym, 12);
        const accum = load<u32>(sym, 16);
        e.registersPerThread = accum <= MAX_VGPRS && arch + accum <= MAX_VGPRS ? arch + accum : arch;
      }
      const np = S.stringDisplay(kid | KERNEL_KEY, true);
      if (np != 0) {
        e.namePtr = np;
        e.nameLen = S.displayLen;
      } else {
        warn(Warn.MISSING_STRING, at, kid);
        e.namePtr = changetype<usize>(UNKNOWN_KERNEL);
        e.nameLen = 16;
      }
      R.rangesNoteDeviceOp(e.correlation, e.device, e.stream, e.start, e.end);
      emitEvent(e);
      break;
    }
    case Role.COPY: {
      if (size < 80) {
        warn(Warn.RECORD_TOO_SMALL, at, kind);
        return;
      }
      evClear(e);
      e.kind = EvKind.MEMCPY;
      e.recordKind = kind;
      e.flags = EvFlag.FLOW_END | EvFlag.ASYNC;
      e.correlation = launchOf(load<u64>(q, 16));
      external(e, load<u64>(q, 24));
      if (!timingApply(e, load<u64>(q, 40), load<u64>(q, 48))) return;
      const dst = load<u64>(q, 56), src = load<u64>(q, 64);
      let dg = isGpu(dst), sg = isGpu(src);
      if (!knownAgent(dst) || !knownAgent(src)) {
        // An agent the dump does not describe (no AGENTS chunk, or a handle missing from it): the operation's name
        // says which side is a device (a host-to-device copy was drawn host-to-host on device 0 before).
        const dir = (opEntryFlags(kind, <u32>load<i32>(q, 12)) >> 8) & 0xff;
        if (dir >= Op.COPY_HTOH && dir <= Op.COPY_DTOD) {
          if (!knownAgent(dst)) dg = dir == Op.COPY_HTOD || dir == Op.COPY_DTOD;
          if (!knownAgent(src)) sg = dir == Op.COPY_DTOH || dir == Op.COPY_DTOD;
        }
      }
      e.bytes = load<u64>(q, 72);
      e.dstDevice = gpuOf(dst);
      e.srcDevice = gpuOf(src);
      e.device = dg ? e.dstDevice : e.srcDevice;
      e.stream = 0;
      // CUPTI-compatible copy kinds (model/event.ts): 1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH, 10 PtoP.
      e.copyKind = dg ? (sg ? (e.srcDevice != e.dstDevice ? 10 : 8) : 1) : sg ? 2 : 9;
      e.srcKind = sg ? 3 : 1;
      e.dstKind = dg ? 3 : 1;
      if (e.copyKind == 10) e.flags |= EvFlag.PEER;
      copyName(e);
      R.rangesNoteDeviceOp(e.correlation, e.device, e.stream, e.start, e.end);
      emitEvent(e);
      break;
    }
    case Role.HIP_API:
    case Role.RCCL_API:
    case Role.HSA_API: {
      if (size < apiSize()) {
        warn(Warn.RECORD_TOO_SMALL, at, kind);
        return;
      }
      const op = <u32>load<i32>(q, 12);
      const entry = S.apiEntry(0x10000 | kind, op);
      const flags = entry == 0 ? 0 : load<u32>(entry, 8);
      if ((flags & S.API_HIDDEN) != 0 && !showAllApi) {
        S.addApiFiltered();
        return;
      }
      evClear(e);
      // HSA is the layer under HIP, as the CUDA driver is under the runtime.
      e.kind = role == Role.HSA_API ? EvKind.API_DRIVER : EvKind.API_RUNTIME;
      e.apiCat = role == Role.HSA_API ? ApiCat.CUDA_DRIVER : ApiCat.CUDA_RUNTIME; // as Kineto's ROCm build names them
      e.recordKind = kind;
      e.apiId = op;
      e.correlation = load<u64>(q, 16);
      external(e, load<u64>(q, 24));
      if (!timingApply(e, load<u64>(q + <usize>(apiStartOff())), load<u64>(q + <usize>(apiStartOff() + 8)))) return;
      e.pid = S.hostPid();
      e.tid = <u32>load<u64>(q + <usize>(apiThreadOff()));
      if (startsFlow(e.correlation)) e.flags |= EvFlag.FLOW_START;
      if ((flags & OP_ALLOC) != 0 && tableCount(allocs) != 0) {
        const as = tableFind(allocs, e.correlation);
        if (as != 0) {
          const a = <usize>load<u64>(as);
          e.address = load<u64>(a);
          e.bytes = load<u64>(a, 8);
          e.flags |= EvFlag.HAS_ALLOC;
        }
      }
      if (entry != 0) {
        e.namePtr = <usize>load<u32>(entry);
        e.nameLen = load<u32>(entry, 4);
        e.flags |= EvFlag.NAME_KEPT; // API_NAMES' names: never rewritten (an unknown op's is scratch, keyed by id)
      } else unknownOp(e, op);
      emitEvent(e);
      break;
    }
    case Role.MARKER_API:
    case Role.MARKER_RANGE: {
      if (size < apiSize()) {
        // As a kernel, copy or API record too short for its fields (before 2026-12-03 a ROCTx record was dropped unsaid).
        warn(Warn.RECORD_TOO_SMALL, at, kind);
        return;
      }
      if ((role == Role.MARKER_RANGE) != useRangeRecords) return; // one source of ranges (docs/collectors/rocm.md)
      const what = opEntryFlags(kind, <u32>load<i32>(q, 12)) >> 8;
      const corr = load<u64>(q, 16);
      const tid = <u32>load<u64>(q + <usize>(apiThreadOff()));
      const s = load<u64>(q + <usize>(apiStartOff()));
      const en = load<u64>(q + <usize>(apiStartOff() + 8));
      if (what == Op.MARK) {
        evClear(e);
        e.kind = EvKind.INSTANT;
        e.recordKind = kind;
        if (timingCheck(s, s) == Timing.DROP) return; // counted in pass 1 (model/timing.ts)
        e.start = toUnix(s);
        e.end = e.start;
        e.pid = S.hostPid();
        e.tid = tid;
        message(e, corr, at);
        emitEvent(e);
      } else if (what == Op.RANGE || what == Op.PUSH) {
        let endTs = en;
        if (what == Op.PUSH) {
          const ps = pushEnd(corr);
          if (ps == 0) return; // unclosed: emitted by finish
          endTs = load<u64>(ps);
          store<u64>(ps, 0xffffffffffffffff); // emitted
        }
        evClear(e);
        e.kind = EvKind.RANGE;
        e.recordKind = kind;
        e.pid = S.hostPid();
        e.tid = tid;
        if (!timingApply(e, s, endTs)) return;
        external(e, load<u64>(q, 24));
        message(e, corr, at);
        markStep(e, corr);
        emitEvent(e);
      }
      break;
    }
    case Role.NONE:
      break; // reported by pass 1 (scanRecord), once per record
  }
}

/** Flags a ROCTx range as a training step when its name matched the step pattern (range id = its correlation id). */
function markStep(e: Ev, corr: u64): void {
  const step = stepOf(<u32>corr);
  if (step >= 0) {
    e.flags |= EvFlag.STEP;
    e.stepNum = <u64>step;
  }
}

function message(e: Ev, corr: u64, at: u64): void {
  const np = S.stringDisplay(corr, false);
  if (np != 0) {
    e.namePtr = np;
    e.nameLen = S.displayLen;
  } else warn(Warn.MISSING_STRING, at, corr);
}

const UNKNOWN_KERNEL = memory.data<u8>([60, 117, 110, 107, 110, 111, 119, 110, 32, 107, 101, 114, 110, 101, 108, 62]);


function put(q: usize, s: string): usize {
  for (let i = 0; i < s.length; i++) store<u8>(q + i, <u8>s.charCodeAt(i));
  return q + s.length;
}

let scratchName: usize = 0;
/** Names `e` "<unknown op N>" (an operation the dump's API_NAMES does not name). */
function unknownOp(e: Ev, op: u32): void {
  if (scratchName == 0) scratchName = arenaAlloc(32);
  let q = put(scratchName, "<unknown op ");
  let nd: u32 = 1;
  for (let t = op; t >= 10; t /= 10) nd++;
  for (let i: u32 = 0, v = op; i < nd; i++, v /= 10) store<u8>(q + nd - 1 - i, <u8>(48 + v % 10));
  q = put(q + nd, ">");
  e.namePtr = scratchName;
  e.nameLen = <u32>(q - scratchName);
}

/** The most VGPRs a work-item can have on an AMD GPU (gfx90a/gfx94x: 512 arch and accumulation together). */
const MAX_VGPRS: u32 = 512;

/** Kineto's ROCm copy names: "Memcpy HtoD (Host -> Device)". */
function copyName(e: Ev): void {
  if (copyNames == 0) {
    copyNames = arenaAlloc(11 * 8);
    memory.fill(copyNames, 0, 11 * 8);
  }
  const slot = copyNames + (<usize>e.copyKind << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(48);
    let q = put(p, "Memcpy ");
    const k = e.copyKind;
    q = put(q, k == 1 ? "HtoD (Host -> Device)" : k == 2 ? "DtoH (Device -> Host)" : k == 8 ? "DtoD (Device -> Device)"
      : k == 10 ? "PtoP (Device -> Device)" : "HtoH (Host -> Host)");
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  e.namePtr = <usize>load<u32>(slot);
  e.nameLen = load<u32>(slot, 4);
}

/** End of pass 2: pushes never popped become ranges to the last timestamp (warned), then the projected spans. */
function rocpFinish(lastTs: u64): void {
  const e = ev;
  warnUnclosed();
  const n = markTotal();
  for (let i: u32 = 0; i < n; i++) {
    const m = unclosedPush(i);
    if (m == 0) continue;
    evClear(e);
    e.kind = EvKind.RANGE;
    e.pid = S.hostPid();
    e.tid = markTid(m);
    e.start = toUnix(markTs(m));
    e.end = lastTs < e.start ? e.start : lastTs;
    message(e, markCorr(m), 0);
    markStep(e, markCorr(m));
    emitEvent(e);
  }
  emitProjectedSpans(e, 0);
}
