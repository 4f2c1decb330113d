/**
 * Synapse profiler decoder (Habana Gaudi, HEADER vendor 5). Reads the HPU_TRACE chunks the HPU collector writes —
 * each one `synProfilerGetTrace` buffer verbatim (decode/synapse_buffer.ts: validation, layout, `char*` relocation,
 * x87 `long double` times) — the HPU_DEVICE table, STRINGS (extraArgs arrays and their strings that live outside the
 * buffer) and the CLOCK anchors (profiler ns ↔ Unix ns, model/clock.ts). What each entry becomes follows the Gaudi
 * PyTorch bridge's conversion into Kineto events (docs/decoders/hpu.md):
 *  - 'M' metadata names engine types and engines (decode/synapse_engines.ts): device engines become device lanes,
 *    host engines host threads; entries of engine types no metadata named are skipped (UNKNOWN_KIND);
 *  - 'X' complete events (start = timestamp, end = timestamp + duration) and 'B'/'E' pairs, paired per device by
 *    (engineType, engineIndex, contextId) first-in first-out in file order; the pair takes the 'E' entry's name and
 *    arguments (as the bridge); an 'E' without an open 'B' is HPU_UNMATCHED_END, a 'B' never closed an incomplete
 *    event (model/timing.ts);
 *  - the display name is `arguments.operation` when non-empty, else `name`; entries named "…write to mem…" are
 *    skipped (as the bridge);
 *  - host engines → host API calls (Chrome `hpu_op`) on thread engineIndex; TPC and MME engines and `DmaTranspose`
 *    → kernels; names starting `memset` → memsets; names starting `memcpy` and the other DMA engine work →
 *    memcopies; work of the other device engines (NIC, rotator, …) → kernels on their lanes;
 *  - 'C' → device counter samples (value = `arguments.value`, u64);
 *  - flows: a host entry whose name contains `enqueueWithExternalEvents` with a non-zero recipeId is the launch of
 *    that recipe on its device until the next such entry, the buffers taken in the order the collector wrote them
 *    (chunk seq), whatever order the file holds them in; device work with that recipeId that comes after it (a 'B'
 *    at its begin) links to it (correlation id = launch number, launches numbered in that order), and the first such
 *    device op in that order gets the arrow (Chrome ac2g) when the launch is emitted too, every one the correlation
 *    id (XSpace). Pass 1 joins within each buffer and notes, per buffer and recipe, its work before its first launch
 *    of the recipe (a "head"); the end of pass 1 links each head to the latest launch of an earlier buffer;
 *  - recipeId, recipeName, streamHandle, eventHandle, dataType and the extraArgs become event arguments.
 * Times: `long double` µs on the `synProfilerGetCurrentTimeNS` clock → ns with util/f80.ts; an unusable value drops
 * its entry (HPU_BAD_TIME); every kept time goes through model/timing.ts like every vendor.
 * A buffer the file's end cut is walked up to its cut (synapse_buffer.ts `held`): its strings past the cut are empty
 * (HPU_CUT_STRING) and its metadata names past the cut name nothing.
 */
import { Ev, EvKind, EvFlag, ApiCat, evClear } from "../model/event";
import { HEADER_PROCESS, noteShownHost } from "../model/shown_hosts";
import * as S from "../model/session";
import { timingNote, timingApply } from "../model/timing";
import { Warn } from "../util/error";
import { warn } from "../util/diag";
import { arenaAlloc } from "../util/arena";
import { Table, tableNew, tableUpsert, tableFind, tableSlots, tableKeyAt, tableValueAt, inserted } from "../util/hash_table";
import { emitEvent } from "../emit/dispatch";
import * as A from "../model/args";
import { install, ignoreTable, setActivityChunk } from "./decoder";
import * as B from "./synapse_buffer";
import * as L from "./synapse_launches";
import {
  ENG_UNKNOWN, ENG_HOST, ENG_TPC, ENG_MME, ENG_DMA, enginesInit, enginesReset, engineMeta, engineClass, engineLane, bufferSeen,
  hpuDevice,
} from "./synapse_engines";

const T_BEGIN: u32 = 66; // 'B'
const T_END: u32 = 69; // 'E'
const T_COMPLETE: u32 = 88; // 'X'
const T_META: u32 = 77; // 'M'
const T_COUNTER: u32 = 67; // 'C'

// Per-file tables (pass 1 and 2).
let openAtEnd: Table = 0; // file offset of a 'B' never closed (end of pass 1)
let engines: Table = 0; // (device << 32 | engineType) → engine-type number + 1
let engineIdx: Table = 0; // (engine-type number << 32 | engineIndex) → engine number + 1
let contexts: Table = 0; // contextId → context number + 1
// Per-pass state (reset at the end of each pass: both passes walk the file the same way).
let queues: Table = 0; // (engine number << 32 | context number) → queue {head u32, tail u32}
let freeNodes: usize = 0;

/** Forgets per-file state (after heap.reset()). */
export function synapseReset(): void {
  openAtEnd = 0;
  engines = 0;
  engineIdx = 0;
  contexts = 0;
  queues = 0;
  freeNodes = 0;
  denseNext = 0;
  L.launchesReset();
  enginesReset();
  B.bufferReset();
  A.argsReset();
}

/** Registers this decoder as the active one (decode/registry.ts: vendor 5). */
export function synapseInstall(): void {
  if (openAtEnd == 0) {
    openAtEnd = tableNew(16);
    engines = tableNew(64);
    engineIdx = tableNew(256);
    contexts = tableNew(64);
    L.launchesInit();
    passTables();
    enginesInit();
  }
  install(5, noApiName, noPrepare, synScan, noProject, synDecode, synFinish, synTable, synIndexed);
  setActivityChunk(14);
}

function noApiName(domain: u32, id: u32, p: usize, n: u32): void {
  S.setApiName(domain, id, p, n, 0);
}
function noPrepare(): void {}
function noProject(p: usize, n: u32): void {}

function passTables(): void {
  queues = tableNew(64);
  L.launchesPass();
}

/** HPU_DEVICE (15); other table chunks are not this vendor's. */
function synTable(type: u32, p: usize, n: u32, off: u64): void {
  if (type == 15) {
    if (!hpuDevice(p, n)) warn(Warn.BAD_PAYLOAD, off, type);
  } else ignoreTable(type, p, n, off);
}

// ---- Keys ----------------------------------------------------------------------------------------------------------

// Dense numbers, handed out in order of first appearance (one counter for the three tables: unique in each).
let denseNext: u32 = 0;
function dense(t: Table, key: u64): u32 {
  const s = tableUpsert(t, key);
  if (inserted) store<u64>(s, <u64>(++denseNext));
  return <u32>load<u64>(s);
}

/** The pairing key of (device, engineType, engineIndex, contextId), exact (numbers from three dense tables). */
function pairKey(device: u32, engineType: u32, engineIndex: u32, ctx: u64): u64 {
  const et = dense(engines, (<u64>device << 32) | engineType);
  const en = dense(engineIdx, (<u64>et << 32) | engineIndex);
  const cx = dense(contexts, ctx);
  return (<u64>en << 32) | cx;
}

// ---- Open 'B' queues -------------------------------------------------------------------------------------------------

// Node (32 B): next u32 @0, launch link u32 @4 (synapse_launches.ts), begin ns u64 @8, file offset u64 @16, seq of its
// buffer u32 @24, host u32 @28 (1: a host engine's entry, whose launch is its own; else device work linked to that
// launch).
const NODE: usize = 32;

function push(key: u64, launch: u32, ts: u64, at: u64, seq: u32, host: bool): void {
  let nd = freeNodes;
  if (nd != 0) freeNodes = <usize>load<u32>(nd);
  else nd = arenaAlloc(NODE);
  store<u32>(nd, 0);
  store<u32>(nd, launch, 4);
  store<u64>(nd, ts, 8);
  store<u64>(nd, at, 16);
  store<u32>(nd, seq, 24);
  store<u32>(nd, host ? 1 : 0, 28);
  const q = tableUpsert(queues, key);
  const tail = <usize>load<u32>(q, 4);
  if (tail != 0) store<u32>(tail, <u32>nd);
  else store<u32>(q, <u32>nd);
  store<u32>(q, <u32>nd, 4);
}

/** Removes and returns the oldest open 'B' of `key` (0 when none); the caller frees it with {@link release}. */
function pop(key: u64): usize {
  const q = tableFind(queues, key);
  if (q == 0) return 0;
  const head = <usize>load<u32>(q);
  if (head == 0) return 0;
  const next = load<u32>(head);
  store<u32>(q, next);
  if (next == 0) store<u32>(q, 0, 4);
  return head;
}

function release(nd: usize): void {
  store<u32>(nd, <u32>freeNodes);
  freeNodes = nd;
}

// ---- Walk ----------------------------------------------------------------------------------------------------------

/** True when [p, p+n) contains ASCII `s`. */
function contains(p: usize, n: u32, s: string): bool {
  const k = <u32>s.length;
  if (n < k) return false;
  for (let i: u32 = 0; i + k <= n; i++) {
    let j: u32 = 0;
    while (j < k && <i32>load<u8>(p + i + j) == s.charCodeAt(j)) j++;
    if (j == k) return true;
  }
  return false;
}
/** True when [p, p+n) starts with ASCII `s`. */
function startsWith(p: usize, n: u32, s: string): bool {
  if (n < <u32>s.length) return false;
  for (let i = 0; i < s.length; i++) if (<i32>load<u8>(p + i) != s.charCodeAt(i)) return false;
  return true;
}

function synScan(p: usize, n: u32, off: u64): void {
  if (!B.hpuOpen(p, n, off, true)) return;
  walk(true);
}

function synDecode(p: usize, n: u32, off: u64): void {
  L.launchesWindow();
  if (!B.hpuOpen(p, n, off, false)) return;
  walk(false);
}

// Name of the entry being walked (display: operation if non-empty, else name).
let nameP: usize = 0;
let nameN: u32 = 0;

function walk(report: bool): void {
  const dev = B.device;
  const isNew = B.entrySize == B.ENTRY_NEW;
  bufferSeen(B.bufOff); // buffers numbered in file order (pass 1), before any lookup by number
  L.launchesBuffer(B.bufOff, report);
  const seq = L.curSeq;
  // The buffer's metadata first (pass 1), wherever it stands in the buffer: an engine type is known from the buffer
  // that first names it on, in both passes alike.
  // Of a cut buffer, the entries before the cut (B.held); a metadata name the cut took names nothing (the engine
  // keeps the name an earlier buffer gave it, or its lane's fallback; an engine type stays unnamed).
  if (report) {
    for (let i: u32 = 0; i < B.held; i++) {
      const e = B.entryAt(i);
      if (<u32>load<u8>(e, 16) != T_META) continue;
      const np = B.hpuStr(load<u64>(e, 80), i, true);
      if (!B.strCut) engineMeta(dev, load<u32>(e, 64), load<u32>(e, 68), np, B.strLen, S.hostPid(), B.bufOff);
    }
  }
  for (let i: u32 = 0; i < B.held; i++) {
    const e = B.entryAt(i);
    const at = B.entryOff(i);
    const t = <u32>load<u8>(e, 16);
    const et = load<u32>(e, 64);
    const ei = load<u32>(e, 68);
    if (report) S.countRecord(t);
    if (t == T_META) continue;
    const cls = engineClass(dev, et, B.bufOff);
    if (cls == ENG_UNKNOWN) {
      if (report) warn(Warn.UNKNOWN_KIND, at, et);
      continue;
    }
    if (t != T_BEGIN && t != T_END && t != T_COMPLETE && t != T_COUNTER) {
      if (report) warn(Warn.UNKNOWN_KIND, at, t);
      continue;
    }
    // Display name: operation (not in counters) when non-empty, else name.
    nameP = 0;
    nameN = 0;
    if (t != T_COUNTER) {
      nameP = B.hpuStr(load<u64>(e, 88), i, report);
      nameN = B.strLen;
    }
    const rawName = B.hpuStr(load<u64>(e), i, report);
    const rawLen = B.strLen;
    if (nameN == 0) {
      nameP = rawName;
      nameN = rawLen;
    }
    if (contains(rawName, rawLen, "write to mem")) continue;
    const ts = B.hpuTime(e + 32);
    if (B.timeStatus != 0) {
      if (report) warn(Warn.HPU_BAD_TIME, at, B.timeStatus);
      continue;
    }
    const recipe: u32 = isNew ? <u32>load<u16>(e, 96) : 0;
    const ctx: u64 = isNew ? load<u64>(e, 72) : <u64>load<u32>(e, 72);
    if (t == T_COUNTER) {
      if (report) timingNote(ts, ts, t, at);
      else counter(e, dev, ts);
      continue;
    }
    // 'X': the duration must be usable too before the entry counts (as a launch or anything else).
    let dur: u64 = 0;
    if (t == T_COMPLETE) {
      dur = B.hpuTime(e + 48);
      let st = B.timeStatus;
      if (st == 0 && ts + dur < ts) st = 5; // ≥ 2^64 ns
      if (st != 0) {
        if (report) warn(Warn.HPU_BAD_TIME, at, st);
        continue;
      }
    }
    if (report) {
      args(e, i, true); // every char* of the entry checked once (HPU_BAD_STRING)
      if (cls == ENG_HOST) B.noteHostName(nameP, nameN, seq, at); // its number (cbid): in the order written
    }
    // The launch this entry is (host enqueue) or links to (device work): a link (synapse_launches.ts).
    let launch: u32 = 0;
    if (t != T_END && recipe != 0) {
      const lk = (<u64>dev << 16) | recipe;
      if (cls == ENG_HOST) {
        if (contains(rawName, rawLen, "enqueueWithExternalEvents")) launch = L.launchNew(lk, report);
      } else launch = L.launchLink(lk, report);
    }
    if (t == T_COMPLETE) {
      if (report) {
        if (timingNote(ts, ts + dur, t, at)) {
          if (launch != 0) L.launchKept(cls == ENG_HOST, launch, seq, at, ts, ts + dur);
          if (cls == ENG_HOST) noteShownHost(HEADER_PROCESS, ts, ts + dur, at); // a host call: the HEADER's process's
        }
      } else emitEntry(e, i, cls, dev, et, ei, ctx, launch, seq, at, ts, ts + dur);
      continue;
    }
    const key = pairKey(dev, et, ei, ctx);
    if (t == T_BEGIN) {
      if (!report && tableFind(openAtEnd, at) != 0) {
        // Never closed (pass 1 knew): an incomplete event now, with this entry's name and arguments.
        emitEntry(e, i, cls, dev, et, ei, ctx, launch, seq, at, ts, 0);
      } else push(key, launch, ts, at, seq, cls == ENG_HOST);
      continue;
    }
    // 'E': closes the oldest open 'B' of its engine and context.
    const nd = pop(key);
    if (nd == 0) {
      if (report) warn(Warn.HPU_UNMATCHED_END, at, (<u64>(et & 0xffff) << 16) | (ei & 0xffff));
      continue;
    }
    const bl = load<u32>(nd, 4);
    const bs = load<u64>(nd, 8);
    const bat = load<u64>(nd, 16);
    const bseq = load<u32>(nd, 24);
    release(nd);
    if (report) {
      if (timingNote(bs, ts, T_BEGIN, bat)) {
        if (bl != 0) L.launchKept(cls == ENG_HOST, bl, bseq, bat, bs, ts);
        if (cls == ENG_HOST) noteShownHost(HEADER_PROCESS, bs, ts, bat);
      }
    } else emitEntry(e, i, cls, dev, et, ei, ctx, bl, bseq, bat, bs, ts);
  }
}

/**
 * End of pass 1: every 'B' still open becomes an incomplete event (noted now, emitted when pass 2 reaches it); then
 * the recipe launches are joined over the whole file (synapse_launches.ts).
 */
function synIndexed(): void {
  const n = tableSlots(queues);
  for (let i: u32 = 0; i < n; i++) {
    if (tableKeyAt(queues, i) == 0xffffffffffffffff) continue;
    let nd = <usize>(tableValueAt(queues, i) & 0xffffffff);
    while (nd != 0) {
      const launch = load<u32>(nd, 4);
      const kept = timingNote(load<u64>(nd, 8), 0, T_BEGIN, load<u64>(nd, 16));
      if (kept && launch != 0) L.launchKept(load<u32>(nd, 28) != 0, launch, load<u32>(nd, 24), load<u64>(nd, 16), load<u64>(nd, 8), 0);
      if (kept && load<u32>(nd, 28) != 0) noteShownHost(HEADER_PROCESS, load<u64>(nd, 8), 0, load<u64>(nd, 16));
      tableUpsert(openAtEnd, load<u64>(nd, 16));
      nd = <usize>load<u32>(nd);
    }
  }
  freeNodes = 0;
  L.launchesResolve();
  B.numberHostNames();
  passTables();
}

/** End of pass 2: the per-pass state starts over (another emit pass may follow). */
function synFinish(lastTs: u64): void {
  freeNodes = 0;
  passTables();
}

// ---- Events --------------------------------------------------------------------------------------------------------

const ev = changetype<Ev>(memory.data(offsetof<Ev>()));

/**
 * Emits entry `i` (at `e`) of class `cls` from `start` to `end` (vendor ns; end 0 = never closed): a host call or
 * device work, with its launch link (synapse_launches.ts) and arguments. `seq` and `at`: the buffer sequence number
 * and file offset of the entry that begins it (a pair's 'B').
 */
function emitEntry(
  e: usize, i: u32, cls: u32, dev: u32, et: u32, ei: u32, ctx: u64, link: u32, seq: u32, at: u64, start: u64, end: u64,
): void {
  const launch = L.launchSerial(link);
  const x = ev;
  evClear(x);
  x.recordKind = <u32>load<u8>(e, 16);
  if (cls == ENG_HOST) {
    x.kind = EvKind.API_RUNTIME;
    x.apiCat = ApiCat.HPU_OP;
    x.pid = S.hostPid();
    x.tid = ei;
    x.correlation = L.launchNumber(launch);
    if (L.launchFlowStart(launch)) x.flags |= EvFlag.FLOW_START;
  } else {
    const transpose = nameN == 12 && startsWith(nameP, nameN, "DmaTranspose");
    if (cls == ENG_TPC || cls == ENG_MME || transpose) x.kind = EvKind.KERNEL;
    else if (startsWith(nameP, nameN, "memset")) x.kind = EvKind.MEMSET;
    else if (startsWith(nameP, nameN, "memcpy") || cls == ENG_DMA) x.kind = EvKind.MEMCPY;
    else x.kind = EvKind.KERNEL;
    x.device = dev;
    x.stream = engineLane(dev, et, ei);
    x.context = <u32>ctx;
    x.correlation = L.launchNumber(launch);
    if (x.kind != EvKind.KERNEL) x.flags |= EvFlag.ASYNC;
  }
  if (!timingApply(x, start, end)) return;
  // One arrow per launch (a Chrome flow ends once), of a launch whose enqueue is emitted too, to its first linked
  // device op in the order the buffers were written: work dropped for its times takes no end, and no end without a
  // start.
  if (cls != ENG_HOST && L.launchFlowEnd(launch, seq, at)) x.flags |= EvFlag.FLOW_END;
  x.namePtr = B.stableName(nameP, nameN);
  x.nameLen = nameN;
  // Host calls: one API id per distinct name (emitters key API event names by it).
  if (cls == ENG_HOST) x.apiId = B.nameId;
  args(e, i, false);
  x.argsPtr = A.argsPtr();
  x.argsLen = A.argsLen();
  // Synapse entries carry no byte count (docs/decoders/hpu.md): a copy's or fill's bytes are its `bytes_moved`
  // extraArgs entry where it has one, else unknown (not 0), so every output and stats agree on them.
  if (x.kind == EvKind.MEMCPY || x.kind == EvKind.MEMSET) {
    x.bytes = A.findU64(x.argsPtr, x.argsLen, key(K_BYTES_MOVED), K_BYTES_MOVED.length);
    if (!A.found) x.flags |= EvFlag.BYTES_UNKNOWN;
  }
  emitEvent(x);
}

/** A counter sample ('C'): value = arguments.value (u64). */
function counter(e: usize, dev: u32, ts: u64): void {
  const x = ev;
  evClear(x);
  x.kind = EvKind.COUNTER;
  x.recordKind = T_COUNTER;
  x.device = dev;
  if (!timingApply(x, ts, ts)) return;
  x.namePtr = B.stableName(nameP, nameN);
  x.nameLen = nameN;
  x.bytes = load<u64>(e, 80);
  emitEvent(x);
}

// ---- Arguments -------------------------------------------------------------------------------------------------------

const K_RECIPE_ID = "recipeId";
const K_RECIPE_NAME = "recipeName";
const K_STREAM = "streamHandle";
const K_EVENT = "eventHandle";
const K_DATA_TYPE = "dataType";
const K_KERNEL_FILE = "kernel_file_name";
const K_BYTES_MOVED = "bytes_moved";

// Static data (not heap or arena: it must survive heap.reset() between files).
const keyBuf = memory.data(32);
/** Key bytes of ASCII `s` (static scratch: one key at a time). */
function key(s: string): usize {
  for (let i = 0; i < s.length; i++) store<u8>(keyBuf + i, <u8>s.charCodeAt(i));
  return keyBuf;
}

function argString(k: string, ptr: u64, i: u32, report: bool): void {
  const v = B.hpuStr(ptr, i, report);
  if (B.strLen != 0) A.argStr(key(k), k.length, v, B.strLen);
}

/**
 * The event arguments of entry `i` (at `e`) into the args list (model/args.ts); `report` (pass 1) warns each
 * unresolvable char* (HPU_BAD_STRING).
 */
function args(e: usize, i: u32, report: bool): void {
  A.argsBegin();
  if (B.entrySize == B.ENTRY_NEW) {
    const recipe = <u64>load<u16>(e, 96);
    const rn = load<u64>(e, 104);
    if (recipe != 0 || rn != 0) {
      A.argU64(key(K_RECIPE_ID), K_RECIPE_ID.length, recipe);
      argString(K_RECIPE_NAME, rn, i, report);
      A.argHex(key(K_STREAM), K_STREAM.length, load<u64>(e, 112));
      A.argHex(key(K_EVENT), K_EVENT.length, load<u64>(e, 120));
    }
    argString(K_DATA_TYPE, load<u64>(e, 80), i, report);
    extraArgs(<u32>load<u8>(e, 128), load<u64>(e, 136), i, report);
  } else {
    argString(K_DATA_TYPE, load<u64>(e, 80), i, report);
    argString(K_KERNEL_FILE, load<u64>(e, 96), i, report);
  }
}

/**
 * `extraArgs`: `count` synTraceEventArg (24 B: key char* @0, type u32 @8 — 0 UINT64, 1 CHAR_PTR, 2 DOUBLE — value
 * @16) at `ptr`, inside the pool (relocated) or in STRINGS (the collector copied the array). An array that is neither
 * is HPU_BAD_STRING (warned when `report`).
 */
function extraArgs(count: u32, ptr: u64, i: u32, report: bool): void {
  if (count == 0 || ptr == 0) return;
  const arr = extraArray(count, ptr);
  if (arr == 0) {
    if (report) warn(extraCut ? Warn.HPU_CUT_STRING : Warn.HPU_BAD_STRING, B.entryOff(i), i);
    return;
  }
  for (let k: u32 = 0; k < count; k++) {
    const a = arr + <usize>k * 24;
    const kc = B.hpuStr(load<u64>(a), i, report);
    const kn = B.strLen;
    if (kn == 0) continue;
    const type = load<u32>(a, 8);
    if (type == 0) A.argU64(kc, kn, load<u64>(a, 16));
    else if (type == 2) A.argF64(kc, kn, load<f64>(a, 16));
    else if (type == 1) {
      const vp = B.hpuStr(load<u64>(a, 16), i, report);
      A.argStr(kc, kn, vp, B.strLen);
    }
  }
}

/** True when the last {@link extraArray} gave 0 because its array lies in the part of the pool the file's end cut. */
let extraCut = false;

/**
 * The synTraceEventArg array of `count` entries at `ptr`, or 0 when it is not in the pool nor in STRINGS (or, in a
 * cut buffer, in the pool past the cut: {@link extraCut}).
 */
function extraArray(count: u32, ptr: u64): usize {
  const need = <u64>count * 24;
  extraCut = false;
  if (ptr >= B.base && ptr - B.base < B.bufSize) {
    const o = ptr - B.base;
    const where = B.poolSpan(o, need);
    if (where == B.POOL_HELD) return B.buf + <usize>o;
    extraCut = where == B.POOL_CUT;
    return 0;
  }
  const r = S.stringRaw(ptr);
  if (r == 0 || <u64>S.rawLen < need) return 0;
  return r;
}
