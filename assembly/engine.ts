/**
 * One conversion = two passes over the same file bytes:
 *  1. index: container chunks are validated; metadata chunks fill the session; ACTIVITY buffers are scanned for
 *     counts and the join tables (external correlation, contexts, devices, names). `rawtrace info` stops here.
 *  2. emit: ACTIVITY buffers are decoded into normalized events and handed to the chosen emitter; STRINGS chunks
 *     are re-applied in file order so a reused pointer resolves to the bytes valid at that point.
 * Memory is bounded by the join tables (≈ 16 B per external correlation, per distinct string and device), not by
 * the number of events or the output size.
 */
import { shownHostsReset, shownHostsFinish } from "./model/shown_hosts";
import {
  Chunk, readerReset, setDamagedHandler, feed as containerFeed, finish as containerFinish, cutUnread, fedBytes,
  cutDeclared, CHUNK_HEADER,
} from "./format/container";
import * as S from "./model/session";
import { clockAnchor, clockPrepare, clockSettle, toUnix } from "./model/clock";
import * as D from "./decode/decoder";
import { recheckStrides, stridesReset } from "./decode/strides";
import { selectDecoder } from "./decode/registry";
import { rangesPrepare, rangesNeedProjection, rangesBeginProject } from "./model/ranges";
import { timingReset, timingFinish } from "./model/timing";
import { stepsNumber } from "./model/steps";
import { Fatal, Warn } from "./util/error";
import { fail, failed, warn, lose, setRecordContainerWarnings } from "./util/diag";
import { setSink, Sink } from "./emit/dispatch";
import { chromeBegin, chromeLastTs } from "./emit/chrome_json";
import { chromeBaseFor, kinetoBaseFor } from "./emit/chrome_header";
import { chromeEnd } from "./emit/chrome_meta";
import { xspaceBegin, xspaceEnd, xspaceLastTs, xspaceProfileStart } from "./emit/xspace";
import { timelineBegin, timelineEnd, timelineLastTs } from "./emit/timeline";
import { statsBegin, statsEnd, statsLastTs } from "./emit/stats";
import { fixedBaseNs, NO_BASE } from "./emit/options";
import { detailsOn, detailsBegin } from "./emit/timeline_details";
import { splitBegin, splitGate, Gate, splitWritesEnd, splitBeforeEnd, splitAfterEnd } from "./split";

let pass: i32 = 0;
let prepared = false;
let baseNs: u64 = 0;
let sinkKind: i32 = 0;

/** Time base chosen for the output (Unix ns). */
export function outputBase(): u64 {
  return baseNs;
}

// ---- Bounded payload cursor for metadata chunks ----------------------------------------------------------------------

let cp: usize = 0;
let cend: usize = 0;
let cok = true;
let strP: usize = 0;
let strN: u32 = 0;

function cursor(p: usize, n: u32): void {
  cp = p;
  cend = p + n;
  cok = true;
}
function rd32(): u32 {
  if (cp + 4 > cend) {
    cok = false;
    return 0;
  }
  const v = load<u32>(cp);
  cp += 4;
  return v;
}
function rd64(): u64 {
  if (cp + 8 > cend) {
    cok = false;
    return 0;
  }
  const v = load<u64>(cp);
  cp += 8;
  return v;
}
/** Reads a `u32 length + bytes` string into strP/strN; the length is checked against the payload end. */
function rdStr(): void {
  const n = rd32();
  if (!cok || <usize>n > cend - cp) {
    cok = false;
    strP = 0;
    strN = 0;
    return;
  }
  strP = cp;
  strN = n;
  cp += n;
}

// Kinds one KIND_SIZES chunk lists, then those it lists twice with two sizes: one bit per kind below S.MAX_KIND each.
const KIND_BITS_BYTES: u32 = S.MAX_KIND >> 3;
const kindsListedP = memory.data(KIND_BITS_BYTES * 2);
// @ts-ignore: decorator
@inline function kindBit(p: usize, k: u32): bool {
  return (load<u8>(p + (k >> 3)) & (<u8>1 << <u8>(k & 7))) != 0;
}
// @ts-ignore: decorator
@inline function setKindBit(p: usize, k: u32): void {
  store<u8>(p + (k >> 3), load<u8>(p + (k >> 3)) | (<u8>1 << <u8>(k & 7)));
}

/** Count field of a list payload, capped by what the payload can hold (`minEntry` bytes each). */
function rdCount(minEntry: u32): u32 {
  const n = rd32();
  const room = <u32>((cend - cp) / minEntry);
  if (n > room) {
    cok = false;
    return room;
  }
  return n;
}

// ---- Pass 1 -------------------------------------------------------------------------------------------------------

function ensureVendor(off: u64): bool {
  if (!D.active && !selectDecoder(S.vendor, S.vendorVersion)) {
    fail(Fatal.UNSUPPORTED_VENDOR, off, S.vendor);
    return false;
  }
  if (!prepared) {
    prepared = true;
    D.dPrepare();
  }
  return true;
}

/**
 * Reads the HEADER at the cursor (chunk at file offset `off`); the first one sets the session and installs the
 * vendor's decoder. `damaged`: the payload failed its checksum (salvageHeader) — its fields are used only when the
 * whole layout holds (a known vendor, a pointer size of 4 or 8, the three strings inside the payload) and are reported
 * as HEADER_DAMAGED, since any of them may be the byte that changed. Returns true when this HEADER was the one used.
 */
function readHeader(off: u64, damaged: bool): bool {
  const v = rd32();
  const ps = rd32();
  const vv = rd32();
  const rv = rd32();
  const dv = rd32();
  const pid = rd32();
  const r = <i32>rd32();
  const lr = <i32>rd32();
  const ws = <i32>rd32();
  const cv = rd32();
  const st = rd64();
  if (!cok) return false;
  rdStr();
  const hp = strP, hl = strN;
  rdStr();
  const cpp = strP, cl = strN;
  rdStr();
  if (damaged && (!cok || !(v == 1 || v == 2 || v == 4 || v == 5) || !(ps == 4 || ps == 8))) {
    cok = true; // the chunk was already reported (BAD_PAYLOAD_CRC); not a second warning
    return false;
  }
  // The first HEADER is the dump's; an intact one replaces a damaged one read before any activity, and either
  // replaces the guess made without a HEADER (beginWithoutHeader).
  if (S.haveHeader && !(salvaged && (!damaged || headerMissing) && !prepared)) return false;
  let rank = r, localRank = lr, world = ws;
  if (damaged) {
    // A changed bit in a rank field would place the file wrongly in a merge (pids and flow ids from it): ranks
    // from a damaged HEADER are kept only where plausible.
    if (world <= 0 || world > RANK_LIMIT) world = -1;
    if (rank < -1 || rank > RANK_LIMIT || (world >= 0 && rank >= world)) rank = -1;
    if (localRank < -1 || localRank > RANK_LIMIT) localRank = -1;
  }
  const replacing = S.haveHeader;
  S.setHeader(v, ps, vv, rv, dv, pid, rank, localRank, world, cv, st);
  selectDecoder(v, vv);
  if (replacing) replayToDecoder(); // what was read under the damaged HEADER's decoder
  if (cok) S.setHeaderStrings(hp, hl, cpp, cl, strP, strN);
  salvaged = damaged;
  salvagedAt = off;
  // A damaged HEADER read after chunks that came without one keeps what they showed and the tables they held.
  if (!headerMissing) evidence = 0;
  if (!damaged) keptCount = 0;
  headerMissing = false;
  return true;
}

/** Largest rank or world size taken from a damaged HEADER. */
const RANK_LIMIT: i32 = 1 << 20;

// A HEADER read despite its failed checksum (salvageHeader) names a vendor that the chunks after it can contradict
// (one changed bit turns 1 into 5, 4 into 5): what they show is noted until the first activity chunk settles it.
let salvaged = false;
/** The unsettled vendor is a guess made without any HEADER (its chunk header was damaged: skipped whole). */
let headerMissing = false;
let salvagedAt: u64 = 0;
let evidence: u32 = 0;
const EV_KIND_SIZES: u32 = 1; // CUDA and XPU write KIND_SIZES; ROCm and Synapse do not
const EV_ROCM: u32 = 2; // AGENTS or KERNEL_SYMBOLS, or rocprofiler-sdk's API_NAMES domains (0, 0x10000 | kind)
const EV_CUDA: u32 = 4; // API_NAMES domain 2 (CUPTI runtime API)
const EV_XPU: u32 = 8; // API_NAMES domain 3 (SYCL / Unified Runtime)
const EV_HPU: u32 = 16; // HPU_DEVICE

// Vendor tables read while a salvaged HEADER is unsettled, kept (copies) so that a decoder installed when the vendor
// is corrected still gets them: {type u32, length u32, file offset u64, bytes usize} each.
const KEPT_MAX: u32 = 256;
const KEPT_BYTES_MAX: usize = 64 << 20;
let kept: usize = 0;
let keptCount: u32 = 0;
let keptBytes: usize = 0;

/** Keeps a copy of vendor table `type` [p, p+n) at file offset `off` while a salvaged HEADER is unsettled. */
function keepTable(type: u32, p: usize, n: u32, off: u64): void {
  if (!salvaged || keptCount >= KEPT_MAX || keptBytes + <usize>n > KEPT_BYTES_MAX) return;
  if (kept == 0) kept = heap.alloc(<usize>KEPT_MAX * 24);
  const c = heap.alloc(n > 0 ? <usize>n : 1);
  memory.copy(c, p, n);
  const e = kept + <usize>(keptCount++) * 24;
  store<u64>(e, (<u64>n << 32) | type); // type, then length
  store<u64>(e, off, 8);
  store<usize>(e, c, 16);
  keptBytes += n;
}

/** Hands the API names and the kept vendor tables to the decoder just installed in place of another. */
function replayToDecoder(): void {
  if (!D.active) return;
  S.apiNamesReplay(D.dApiName);
  for (let i: u32 = 0; i < keptCount; i++) {
    const e = kept + <usize>i * 24;
    D.dTable(load<u32>(e), load<usize>(e, 16), load<u32>(e, 4), load<u64>(e, 8));
  }
}

/** Notes what an API_NAMES domain says about the vendor (while a salvaged HEADER is unsettled). */
// @ts-ignore: decorator
@inline function noteDomain(domain: u32): void {
  if (!salvaged) return;
  if (domain == 0 || domain >= 0x10000) evidence |= EV_ROCM;
  else if (domain == 2) evidence |= EV_CUDA;
  else if (domain == 3) evidence |= EV_XPU;
}

/**
 * At the first activity chunk (`type`) or the end of pass 1: the vendor of a salvaged HEADER against what the
 * chunks showed. A contradicted vendor is replaced (its decoder installed, the API names and kept tables handed to
 * it: replayToDecoder); either way HEADER_DAMAGED is reported with the vendor used.
 */
function settleSalvage(type: u32): void {
  if (!salvaged) return;
  salvaged = false;
  const cur = S.vendor;
  let v: u32 = cur;
  if (type == Chunk.HPU_TRACE || (evidence & EV_HPU) != 0) v = 5;
  else if ((evidence & EV_ROCM) != 0) v = 2;
  else if ((evidence & EV_XPU) != 0) v = 4;
  else if ((evidence & EV_CUDA) != 0) v = 1;
  else if (cur == 5 && type == Chunk.ACTIVITY) v = 1; // Synapse writes HPU_TRACE, never ACTIVITY
  else if (cur == 2 && (evidence & EV_KIND_SIZES) != 0) v = 1; // rocprofiler-sdk dumps have no KIND_SIZES
  if (v != cur) {
    S.setVendor(v);
    selectDecoder(v, S.vendorVersion);
    replayToDecoder();
  }
  keptCount = 0;
  if (v == 5) S.clearThreadNames(); // read while salvaged: not a Gaudi dump's row names (the THREAD_NAMES case)
  S.settleNamesPid();
  warn(headerMissing ? Warn.NO_HEADER : Warn.HEADER_DAMAGED, salvagedAt, v);
  headerMissing = false;
}

/**
 * A chunk other than a HEADER before any HEADER (the HEADER's chunk header damaged, so the container skipped it
 * whole, or a dump written without one): the dump is read as CUDA for now, but — as for a damaged HEADER — the
 * chunks up to the first activity chunk settle the vendor (settleSalvage), so that a ROCm, XPU or Gaudi dump does
 * not lose every event to one changed bit. An intact HEADER that still comes first replaces the guess.
 */
function beginWithoutHeader(off: u64): void {
  S.setHeader(1, 8, 0, 0, 0, 0, -1, -1, -1, 0, 0);
  selectDecoder(1, 0);
  salvaged = true;
  headerMissing = true;
  salvagedAt = off;
  evidence = 0;
  keptCount = 0;
}

/**
 * Pass 1's hook for a chunk that failed its payload checksum (format/container.ts setDamagedHandler). A HEADER is
 * read anyway when no HEADER came before and no decoder was chosen yet: otherwise one flipped byte in it would make
 * the dump read as CUDA, and a ROCm, XPU or Gaudi dump would lose every event.
 */
function salvageHeader(type: u32, p: usize, n: u32, off: u64, seq: u32): void {
  if (type != Chunk.HEADER || ((S.haveHeader || D.active) && !(headerMissing && !prepared))) return;
  cursor(p, n);
  readHeader(off, true);
}

function onChunkPass1(type: u32, p: usize, n: u32, off: u64, seq: u32): void {
  S.addChunk();
  if (type != Chunk.HEADER && !S.haveHeader && !D.active && !prepared) beginWithoutHeader(off);
  cursor(p, n);
  switch (type) {
    case Chunk.HEADER:
      readHeader(off, false);
      break;
    case Chunk.CLOCK: {
      const which = rd32();
      rd32();
      const vendorNs = rd64();
      const realNs = rd64();
      if (cok) clockAnchor(which, vendorNs, realNs, off);
      break;
    }
    case Chunk.KIND_SIZES: {
      if (salvaged) evidence |= EV_KIND_SIZES;
      const count = rdCount(8);
      // A collector sizes each kind once: a kind listed twice with two sizes is a changed kind field (CRC recomputed or
      // written so), and either size may be the wrong one — a stride too large steps over the records after one
      // without a trace. Neither is used: the built-in size is (prepareStrides), with BAD_KIND_SIZE at this chunk.
      memory.fill(kindsListedP, 0, KIND_BITS_BYTES * 2);
      if (!prepared) S.setKindSizesAt(off);
      for (let i: u32 = 0; i < count; i++) {
        const kind = rd32();
        const size = rd32();
        // After the first ACTIVITY chunk the strides are fixed (both passes walk every buffer with the same table):
        // a later size that disagrees is reported and not used.
        if (!prepared) {
          if (kind < S.MAX_KIND && kindBit(kindsListedP, kind) && size != S.kindSize(kind) && !kindBit(kindsListedP + KIND_BITS_BYTES, kind)) {
            setKindBit(kindsListedP + KIND_BITS_BYTES, kind);
            warn(Warn.BAD_KIND_SIZE, off, kind);
          }
          S.setKindSize(kind, size);
          if (kind < S.MAX_KIND) setKindBit(kindsListedP, kind);
        } else if (cok && size != S.kindSize(kind)) warn(Warn.BAD_KIND_SIZE, off, kind);
      }
      if (!prepared) {
        for (let k: u32 = 0; k < S.MAX_KIND; k++) if (kindBit(kindsListedP + KIND_BITS_BYTES, k)) S.putKindSize(k, 0);
      }
      break;
    }
    case Chunk.API_NAMES: {
      const count = rdCount(12);
      for (let i: u32 = 0; i < count && cok; i++) {
        const domain = rd32();
        const id = rd32();
        rdStr();
        if (!cok) break;
        noteDomain(domain);
        if (D.active) D.dApiName(domain, id, strP, strN);
        else S.setApiName(domain, id, strP, strN, 0);
      }
      break;
    }
    case Chunk.ACTIVITY:
    case Chunk.HPU_TRACE:
      if (salvaged && !prepared) settleSalvage(type);
      if (!ensureVendor(off)) return;
      // The other vendors' activity chunk type is not this decoder's (the HEADER's vendor or this chunk's type
      // damaged, checksums intact): nothing of it is decoded, a loss said as such (before: "chunk type 5 is unknown",
      // not a loss, and a dump of every event converted to none with exit 0 under --strict). A cut one is lost whole
      // as TRUNCATED.
      if (type != D.activityChunk) {
        warn(Warn.FOREIGN_CHUNK, off, type);
        const end = off + <u64>(CHUNK_HEADER + ((<usize>n + 7) & ~<usize>7));
        if (cutDeclared == 0) lose(Warn.FOREIGN_CHUNK, off, end, seq, <u64>n);
        cutUnread();
        break;
      }
      recheckStrides(p, n); // a dump without KIND_SIZES: may these records tell its layout? (decode/strides.ts)
      S.addActivity(n);
      S.bufferBegin();
      D.setChunkSeq(seq);
      D.dScan(p, n, off);
      S.bufferEnd();
      break;
    case Chunk.STRINGS: {
      const count = rdCount(12);
      for (let i: u32 = 0; i < count && cok; i++) {
        const ptr = rd64();
        rdStr();
        if (cok) S.setString(ptr, strP, strN, false);
      }
      break;
    }
    case Chunk.DEVICES: {
      const count = rdCount(92);
      for (let i: u32 = 0; i < count && cok; i++) {
        if (cp + 88 > cend) {
          cok = false;
          break;
        }
        const e = S.deviceEntry(load<u32>(cp));
        if (e != 0) memory.copy(e, cp, 88);
        cp += 88;
        rdStr();
        if (cok && e != 0) S.setDeviceName(e, strP, strN);
      }
      // A table after the entries (Intel XPU: device and sub-device handles, docs/format.md §7) is the decoder's.
      if (cok && cp < cend && D.active && D.activeVendor == 4) D.dTable(type, cp, <u32>(cend - cp), off);
      else if (cok && cp < cend) {
        // Only XPU dumps have a table after the DEVICES entries: evidence, and kept should a salvage turn to XPU.
        if (salvaged) evidence |= EV_XPU;
        keepTable(type, cp, <u32>(cend - cp), off);
      }
      break;
    }
    case Chunk.DROPPED: {
      const count = rd64();
      // The reason says the unit (records or buffers); a payload cut after the count is counted as records.
      const reason: u32 = cok && cp + 4 <= cend ? rd32() : 0;
      if (cok) S.addDropped(count, reason, off);
      break;
    }
    case Chunk.THREAD_NAMES: {
      const count = rdCount(12);
      for (let i: u32 = 0; i < count && cok; i++) {
        const pid = rd32();
        const tid = rd32();
        rdStr();
        if (!cok) break;
        // Not on a Gaudi dump: Synapse's host rows are engines (tid = engine index), which an OS thread's name would
        // label when a pid equals an index (PID 1 in a container). While the vendor is a guess, settleSalvage drops them.
        if (salvaged || S.vendor != 5) S.setThreadName(pid, tid, strP, strN);
        if (salvaged) S.noteNamesPid(pid); // the process of a lost or damaged HEADER (S.hostPid)
      }
      break;
    }
    case Chunk.END:
      S.setHaveEnd();
      break;
    case Chunk.LOG: {
      const level = rd32();
      if (cok && level >= 2) warn(Warn.COLLECTOR_ERROR, off, seq);
      break;
    }
    default:
      if (salvaged && type >= <u32>Chunk.FIRST_VENDOR_TABLE) {
        if (type == Chunk.AGENTS || type == Chunk.KERNEL_SYMBOLS) evidence |= EV_ROCM;
        else if (type == Chunk.HPU_DEVICE) evidence |= EV_HPU;
        keepTable(type, p, n, off);
      }
      // Vendor table chunks (ROCm AGENTS, KERNEL_SYMBOLS, …): the vendor's decoder reads them.
      if (type >= <u32>Chunk.FIRST_VENDOR_TABLE && D.active) D.dTable(type, p, n, off);
  }
  if (!cok) warn(Warn.BAD_PAYLOAD, off, type);
}

// ---- Pass 2 -------------------------------------------------------------------------------------------------------

function onChunkPass2(type: u32, p: usize, n: u32, off: u64, seq: u32): void {
  if (type == Chunk.STRINGS) {
    cursor(p, n);
    const count = rdCount(12);
    for (let i: u32 = 0; i < count && cok; i++) {
      const ptr = rd64();
      rdStr();
      if (cok) S.setString(ptr, strP, strN, true);
    }
  } else if (type == D.activityChunk) {
    if (!D.active) return;
    const g = splitGate();
    D.setChunkSeq(seq);
    if (g == Gate.EMIT) D.dDecode(p, n, off);
    else if (g == Gate.DECODE_ONLY) {
      // An earlier worker's share (split conversion): decoded for the decoder's state, emitted by nobody here.
      setSink(Sink.NONE);
      D.dDecode(p, n, off);
      setSink(<Sink>sinkKind);
    }
  }
}

// ---- Projection pass (only for dumps with NVTX ranges) -------------------------------------------------------------

function onChunkProject(type: u32, p: usize, n: u32, off: u64, seq: u32): void {
  if (type == D.activityChunk && D.active) D.dProject(p, n);
}

/** True after pass 1 when the dump has host ranges to project onto device streams (run {@link beginProject}). */
export function needsProjection(): bool {
  return rangesNeedProjection();
}

/**
 * Asks for the projection (between index and emit; see model/ranges.ts). Returns true when the host must feed the
 * file once more as the projection pass (then {@link endPass}); false when pass 2 projects as it decodes.
 */
export function beginProject(): bool {
  if (!rangesBeginProject()) return false;
  pass = 3;
  inputFinished = false;
  setRecordContainerWarnings(false);
  readerReset(onChunkProject, false);
  return true;
}

// ---- Pass control -------------------------------------------------------------------------------------------------

/** Starts pass 1 (index). */
export function beginIndex(): void {
  pass = 1;
  inputFinished = false;
  prepared = false;
  stridesReset();
  timingReset();
  shownHostsReset();
  setRecordContainerWarnings(true);
  readerReset(onChunkPass1, true);
  setDamagedHandler(salvageHeader);
  salvaged = false;
  headerMissing = false;
  evidence = 0;
  kept = 0; // the heap was rewound for this file
  keptCount = 0;
  keptBytes = 0;
}

/** Starts pass 2 (emit) with emitter `sink` (see emit/dispatch.ts). */
export function beginEmit(sink: i32): void {
  pass = 2;
  inputFinished = false;
  sinkKind = sink;
  setRecordContainerWarnings(false);
  readerReset(onChunkPass2, false);
  stepsNumber();
  clockPrepare();
  // The earliest kept timestamp (model/timing.ts: never an unknown or dropped one), else the collector start, else
  // the start anchor's wall clock.
  const first = S.minVendorTs != 0 ? toUnix(S.minVendorTs) : S.startNs != 0 ? S.startNs
    : S.haveStartAnchor ? S.anchorStartReal : 0;
  // A merge puts every file on one time base (emit/options.ts); it must not be after this file's first event. A
  // file with no time at all (a dump cut in its HEADER) has nothing to place: it takes the merge's as it is.
  const timed = S.minVendorTs != 0 || S.startNs != 0 || S.haveStartAnchor;
  const fixed = fixedBaseNs != NO_BASE && (!timed || fixedBaseNs <= first);
  const chromeBase = fixed ? fixedBaseNs : chromeBaseFor(first);
  baseNs = fixed ? fixedBaseNs : sink == Sink.TIMELINE ? kinetoBaseFor(first) : chromeBase;
  setSink(<Sink>sink);
  S.setExternalLookups(sink == Sink.CHROME_JSON || sink == Sink.TIMELINE);
  splitBegin();
  if (sink == Sink.CHROME_JSON) chromeBegin(baseNs, first);
  else if (sink == Sink.XSPACE) xspaceBegin();
  else if (sink == Sink.TIMELINE) {
    timelineBegin(baseNs);
    // The viewer's details of single events: their Chrome JSON, on its own time base (emit/timeline_details.ts).
    if (detailsOn) detailsBegin(chromeBase, first);
  } else if (sink == Sink.STATS) statsBegin();
}

/** Feeds `n` bytes written at the input window to the current pass. */
export function feedBytes(n: usize): bool {
  if (pass == 0) {
    fail(Fatal.API_MISUSE, 0, 0);
    return false;
  }
  return containerFeed(n);
}

/** The current pass's input is finished (its last complete chunks handed over): {@link finishInput} ran. */
let inputFinished = false;

/**
 * Hands over what the input still holds at its end (complete chunks found by the end-of-file scan, the truncation
 * warnings): once per pass, before the pass ends — or earlier, when a split conversion's end writer must have seen
 * every chunk before it closes its segments and takes the other workers' rows (rt_split_close).
 */
export function finishInput(): void {
  if (inputFinished) return;
  inputFinished = true;
  containerFinish();
}

/** Ends the current pass. Returns false after a fatal error. */
export function endPass(): bool {
  finishInput();
  inputFinished = false;
  if (failed()) return false;
  if (pass == 1) {
    settleSalvage(0); // a dump with no activity chunk: the HEADER's vendor, reported
    if (!S.haveEnd) warn(Warn.NO_END, fedBytes(), 0); // where the file ends
    S.settleDropped(S.vendor);
    // At the first DROPPED chunk that counted them (not 0: the file's start is no chunk).
    if (S.droppedRecords > 0) warn(Warn.DROPPED_RECORDS, S.droppedRecordsAt, S.droppedRecords);
    if (S.droppedBuffers > 0) warn(Warn.DROPPED_BUFFERS, S.droppedBuffersAt, S.droppedBuffers);
    if (!D.active && S.haveHeader) fail(Fatal.UNSUPPORTED_VENDOR, 0, S.vendor);
    if (D.active) D.dIndexed();
    // Anchors the other anchor or the records show wrong are set aside before they bound the run (BAD_CLOCK_ANCHOR).
    clockSettle();
    // The run's time window is known now: count what it drops, and keep the time span of the rest.
    timingFinish();
    shownHostsFinish(); // the Chrome lead's candidates, by the window
    rangesPrepare(S.maxVendorTs);
    // The clock mapping is known now: rt_info's time span (info, merge planning) must not use a previous file's. A
    // mapping that clamps a kept time is said here, once (CLOCK_CLAMPED).
    clockPrepare(true);
  } else if (pass == 2 && !splitWritesEnd()) {
    // A split conversion's worker that does not write the end: its segments' events only.
    splitAfterEnd();
    setSink(Sink.NONE);
  } else if (pass == 2) {
    splitBeforeEnd();
    if (D.active) {
      D.dFinish(sinkKind == Sink.XSPACE ? xspaceLastTs() : sinkKind == Sink.TIMELINE ? timelineLastTs()
        : sinkKind == Sink.STATS ? statsLastTs() : chromeLastTs());
    }
    if (sinkKind == Sink.CHROME_JSON) chromeEnd();
    else if (sinkKind == Sink.TIMELINE) timelineEnd();
    else if (sinkKind == Sink.STATS) statsEnd();
    else if (sinkKind == Sink.XSPACE) {
      xspaceEnd();
      // XSpace times are relative to the profile start (Task Environment profile_start_time): report that base.
      baseNs = xspaceProfileStart();
    }
    splitAfterEnd();
    setSink(Sink.NONE);
  }
  pass = 0;
  return !failed();
}
