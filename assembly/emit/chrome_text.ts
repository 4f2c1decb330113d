/**
 * Text the Chrome JSON writer repeats from event to event, kept instead of formatted again: the constant opening of
 * each category's events, the `"pid":…,"tid":…` run of each row, an event's whole opening up to its ts for each
 * (category, kept name, row), the device/context/stream run of each stream, the launch-shape args of each kernel
 * configuration and the graph / channel args of device work. Each cache maps its inputs to exactly the bytes the plain formatting writes (the miss path writes
 * them and keeps a copy), so the output does not depend on what is cached.
 */
import { Ev, EvFlag } from "../model/event";
import * as O from "./out";
import { tpl, putLit, put64, putU32, putU64, putJsonChars } from "./put";

// ---- Category openings --------------------------------------------------------------------------------------------

/** (category string address, template) pairs; categories are string literals, so their addresses are fixed. */
const CAT_SLOTS: i32 = 32;
const CATS: usize = memory.data(CAT_SLOTS * 8, 8);
let catCount: i32 = 0;

/**
 * Template of `,\n{"ph":"X","cat":"<cat>","name":"` for category literal `cat` (built on first use; static, so it
 * outlives heap.reset()). A new event category needs nothing here.
 */
export function catOpen(cat: string): usize {
  const k = <u32>changetype<usize>(cat);
  for (let i = 0; i < catCount; i++) {
    const a = CATS + (<usize>i << 3);
    if (load<u32>(a) == k) return <usize>load<u32>(a, 4);
  }
  const t = tpl(',\n{"ph":"X","cat":"' + cat + '","name":"');
  if (catCount < CAT_SLOTS) {
    const a = CATS + (<usize>catCount << 3);
    store<u32>(a, k);
    store<u32>(a, <u32>t, 4);
    catCount++;
  }
  return t;
}

// ---- Rows: `","pid":P,"tid":T,"ts":` --------------------------------------------------------------------------------

// 64 entries of 128 bytes: pid u64 @0, tid u64 @8, text length u32 @16 (0 = empty), text @32 (≤ 61 bytes + slack).
// A pure function of (pid, tid): static, never cleared.
const ROWS: usize = memory.data(64 * 128, 16);
const T_PID = tpl('","pid":');
const T_TID = tpl(',"tid":');
const T_TS = tpl(',"ts":');

/** Text of the row the last {@link putRow} wrote (valid until the next call): for the flow event that follows. */
export let rowText: usize = 0;
export let rowLen: usize = 0;

/** Writes `","pid":<pid>,"tid":<tid>,"ts":` (closing the name string before it). */
export function putRow(q: usize, pid: u64, tid: u64): usize {
  const h = <usize>(<u32>(pid * 0x9e3779b97f4a7c15 >> 40) ^ <u32>tid) & 63;
  const e = ROWS + (h << 7);
  let n = <usize>load<u32>(e, 16);
  if (n == 0 || load<u64>(e) != pid || load<u64>(e, 8) != tid) {
    let t = e + 32;
    t = putLit(t, T_PID);
    t = putU64(t, pid);
    t = putLit(t, T_TID);
    t = putU64(t, tid);
    t = putLit(t, T_TS);
    n = t - (e + 32);
    store<u64>(e, pid);
    store<u64>(e, tid, 8);
    store<u32>(e, <u32>n, 16);
  }
  rowText = e + 32;
  rowLen = n;
  return put64(q, e + 32, n);
}

// ---- Event openings: `,\n{"ph":"X","cat":"<cat>","name":"<name>","pid":P,"tid":T,"ts":` ----------------------------

// Events repeat a few (category, name, row) triples: their opening up to the ts is kept whole, so that an event whose
// name the decoder keeps (EvFlag.NAME_KEPT: the bytes at namePtr never change during the conversion) is written
// without escaping its name or looking its row up. 256 sets of two entries of 512 bytes: category template |
// namePtr << 32 u64 @0 (0 = empty: templates are never at address 0), name length u32 @8, text length u32 @12, pid
// u64 @16, tid u64 @24, the row's offset u32 @32 and length u32 @36 in the text, text @48 (≤ HEAD_CAP bytes). A new
// triple goes into a set's first entry, moving the one there to the second. Cleared per conversion (name addresses
// are per file).
const HEAD_SETS: usize = 256;
const HEAD_ENTRY: usize = 512;
const HEAD_TEXT: usize = 48;
const HEAD_CAP: usize = 384;
let heads: usize = 0;

/** True when entry `a` holds the opening of (key, n, pid, tid). */
// @ts-ignore: decorator
@inline function headIs(a: usize, key: u64, n: u32, pid: u64, tid: u64): bool {
  return ((load<u64>(a) ^ key) | <u64>(load<u32>(a, 8) ^ n) | (load<u64>(a, 16) ^ pid) | (load<u64>(a, 24) ^ tid)) == 0;
}

/**
 * Writes the opening of "X" event `e` at q: category template `t` (with its leading `,\n`), the escaped name, then
 * {@link putRow}'s `","pid":<pid>,"tid":<tid>,"ts":`; from the kept text when this (t, name, row) was written before.
 * Only for an event whose flags have NAME_KEPT; needs room for 8·nameLen + 448 bytes at q and the name readable 16
 * bytes past its end (canOverread). Sets rowText / rowLen as putRow does.
 */
export function putHead(q: usize, t: usize, e: Ev, pid: u64, tid: u64): usize {
  const p = e.namePtr;
  const n = e.nameLen;
  const h = (<u32>p ^ <u32>t * 0x85ebca6b ^ <u32>pid * 0xc2b2ae35 ^ <u32>tid * 0x27d4eb2f) * 0x9e3779b1;
  if (HEAD_SETS != 256) ERROR("putHead takes the top 8 bits of the hash");
  let a = heads + <usize>(h >> 24) * (HEAD_ENTRY * 2);
  const key = <u64>t | (<u64>p << 32);
  if (headIs(a, key, n, pid, tid) || headIs((a += HEAD_ENTRY), key, n, pid, tid)) {
    // 64 bytes per step: the reads stay inside the entry (HEAD_TEXT + HEAD_CAP + 64 ≤ HEAD_ENTRY, which also covers
    // the flow event's 64-byte read of the row); the up to 63 bytes written past the text fall within the reserve.
    if (HEAD_CAP % 64 != 0 || HEAD_TEXT + HEAD_CAP + 64 > HEAD_ENTRY) ERROR("putHead copies whole 64-byte steps");
    const m = <usize>load<u32>(a, 12);
    const src = a + HEAD_TEXT;
    for (let i: usize = 0; i < m; i += 64) {
      v128.store(q + i, v128.load(src + i));
      v128.store(q + i, v128.load(src + i, 16), 16);
      v128.store(q + i, v128.load(src + i, 32), 32);
      v128.store(q + i, v128.load(src + i, 48), 48);
    }
    rowText = src + <usize>load<u32>(a, 32);
    rowLen = <usize>load<u32>(a, 36);
    return q + m;
  }
  return headMiss(q, t, e, pid, tid, a - HEAD_ENTRY, key);
}

/** {@link putHead} on a miss: writes the opening and keeps it in set `a` (not inlined: no spills on a hit). */
function headMiss(q: usize, t: usize, e: Ev, pid: u64, tid: u64, a: usize, key: u64): usize {
  const n = e.nameLen;
  const q0 = q;
  q = putRow(putJsonChars(putLit(q, t), e.namePtr, n), pid, tid);
  const k = q - q0;
  if (k <= HEAD_CAP) {
    memory.copy(a + HEAD_ENTRY, a, HEAD_TEXT + <usize>load<u32>(a, 12));
    memory.copy(a + HEAD_TEXT, q0, k);
    store<u64>(a, key);
    store<u32>(a, n, 8);
    store<u32>(a, <u32>k, 12);
    store<u64>(a, pid, 16);
    store<u64>(a, tid, 24);
    store<u32>(a, <u32>(k - rowLen), 32);
    store<u32>(a, <u32>rowLen, 36);
  }
  return q;
}

// ---- Streams: `,"device":D,"context":C,"stream":S,"correlation":` -------------------------------------------------

// 64 entries of 128 bytes: device u32 @0, context u32 @4, stream u32 @8, length u32 @12 (0 = empty), text @16.
const STREAMS: usize = memory.data(64 * 128, 16);
const T_DEVICE = tpl(',"device":');
const T_CONTEXT = tpl(',"context":');
const T_STREAM = tpl(',"stream":');
const T_CORR = tpl(',"correlation":');

/** Writes `,"device":D,"context":C,"stream":S,"correlation":` (from byte `skip`: 1 drops the leading comma). */
export function putStream(q: usize, device: u32, context: u32, stream: u32, skip: usize): usize {
  const h = <usize>((device * 0x9e3779b1) ^ (context * 0x85ebca6b) ^ stream) & 63;
  const e = STREAMS + (h << 7);
  let n = <usize>load<u32>(e, 12);
  // One test: the key's three u32 as a u64 and a u32, and an empty entry (length 0) never matches.
  const key = <u64>device | (<u64>context << 32);
  if (((load<u64>(e) ^ key) | <u64>(load<u32>(e, 8) ^ stream) | <u64>(n == 0)) != 0) {
    let t = e + 16;
    t = putLit(t, T_DEVICE);
    t = putU32(t, device);
    t = putLit(t, T_CONTEXT);
    t = putU32(t, context);
    t = putLit(t, T_STREAM);
    t = putU32(t, stream);
    t = putLit(t, T_CORR);
    n = t - (e + 16);
    store<u32>(e, device);
    store<u32>(e, context, 4);
    store<u32>(e, stream, 8);
    store<u32>(e, <u32>n, 12);
  }
  const src = e + 16 + skip;
  n -= skip;
  v128.store(q, v128.load(src));
  v128.store(q, v128.load(src, 16), 16);
  v128.store(q, v128.load(src, 32), 32);
  v128.store(q, v128.load(src, 48), 48);
  if (n > 64) v128.store(q, v128.load(src, 64), 64);
  return q + n;
}

// ---- Kernel launch shapes ------------------------------------------------------------------------------------------

// Kernels repeat a few configurations: the args from "registers per thread" to the block dimensions are kept per
// (device, registers, shared memory, grid, block). 256 sets of two entries of 384 bytes: key @0 — the Ev's nine u32
// from gridX to dynamicSharedMemory as they lie in it (two v128, then dynamicSharedMemory u32 @32), device u32 @36 —,
// length u32 @40 (0 = empty), text @48 (≤ 320 bytes + slack). A new shape goes into a set's first entry, moving the
// one there to the second. Cleared per conversion (the text depends on the device table).
const LAUNCH_SETS: usize = 256;
const LAUNCH_ENTRY: usize = 384;
const LAUNCH_CAP: usize = 320;
let launches: usize = 0;

/** Allocates and clears the launch and opening caches (call after heap.reset(), per conversion). */
export function chromeTextBegin(): void {
  launches = heap.alloc(LAUNCH_SETS * LAUNCH_ENTRY * 2);
  memory.fill(launches, 0, LAUNCH_SETS * LAUNCH_ENTRY * 2);
  heads = heap.alloc(HEAD_SETS * HEAD_ENTRY * 2);
  memory.fill(heads, 0, HEAD_SETS * HEAD_ENTRY * 2);
}

/** True when launch entry `a` holds the text of shape (k0, k1, dyn) on device `dev`. */
// @ts-ignore: decorator
@inline function launchIs(a: usize, k0: v128, k1: v128, dyn: u32, dev: u32): bool {
  const diff = v128.or(v128.xor(v128.load(a), k0), v128.xor(v128.load(a, 16), k1));
  return ((<u32>v128.any_true(diff) | (load<u32>(a, 32) ^ dyn) | (load<u32>(a, 36) ^ dev) | <u32>(load<u32>(a, 40) == 0)) == 0);
}

/**
 * Writes the launch args of kernel `e` (`,"registers per thread":…` through the block array's `]`), from the cache
 * or with `write` (the plain formatter, writing at O.pos) on a miss.
 */
export function putLaunch(q: usize, e: Ev, write: (e: Ev) => void): usize {
  // The launch shape is nine consecutive u32 of the Ev: hashed and compared as two v128 and one u32, with the device.
  const g = offsetof<Ev>("gridX");
  if (
    offsetof<Ev>("blockX") != g + 12 || offsetof<Ev>("blockY") != g + 16 || offsetof<Ev>("registersPerThread") != g + 24 ||
    offsetof<Ev>("staticSharedMemory") != g + 28 || offsetof<Ev>("dynamicSharedMemory") != g + 32
  ) ERROR("putLaunch reads the launch shape as the Ev's nine u32 from gridX");
  const k = changetype<usize>(e) + g;
  const k0 = v128.load(k);
  const k1 = v128.load(k, 16);
  const dyn = e.dynamicSharedMemory;
  const dev = e.device;
  const m4 = v128.xor(i32x4.mul(k0, i32x4(0x27d4eb2f, 0x165667b1, 0xd3a2646c, 0xfd7046c5)), i32x4.mul(k1, i32x4(0xb55a4f09, 1, 0x85ebca6b, 0xc2b2ae35)));
  let h = i32x4.extract_lane(m4, 0) ^ i32x4.extract_lane(m4, 1) ^ i32x4.extract_lane(m4, 2) ^ i32x4.extract_lane(m4, 3);
  h = <i32>((<u32>h ^ dyn * 0x9e3779b1 ^ dev * 0x85ebca6b) * 0x9e3779b1);
  if (LAUNCH_SETS != 256) ERROR("putLaunch takes the top 8 bits of the hash");
  let a = launches + <usize>(<u32>h >> 24) * (LAUNCH_ENTRY * 2);
  if (launchIs(a, k0, k1, dyn, dev) || launchIs((a += LAUNCH_ENTRY), k0, k1, dyn, dev)) {
    const n = <usize>load<u32>(a, 40);
    // 64 bytes per step: LAUNCH_CAP is a multiple of 64, so the reads stay inside the entry; the up to 63 bytes
    // written past the text fall within the event's output reserve.
    if (LAUNCH_CAP % 64 != 0 || LAUNCH_CAP + 48 > LAUNCH_ENTRY) ERROR("putLaunch copies whole 64-byte steps of a text");
    const src = a + 48;
    for (let i: usize = 0; i < n; i += 64) {
      v128.store(q + i, v128.load(src + i));
      v128.store(q + i, v128.load(src + i, 16), 16);
      v128.store(q + i, v128.load(src + i, 32), 32);
      v128.store(q + i, v128.load(src + i, 48), 48);
    }
    return q + n;
  }
  a -= LAUNCH_ENTRY;
  O.pos = q;
  write(e);
  const m = O.pos - q;
  if (m <= LAUNCH_CAP) {
    memory.copy(a + LAUNCH_ENTRY, a, 48 + <usize>load<u32>(a, 40));
    memory.copy(a + 48, q, m);
    v128.store(a, k0);
    v128.store(a, k1, 16);
    store<u32>(a, dyn, 32);
    store<u32>(a, dev, 36);
    store<u32>(a, <u32>m, 40);
  }
  return O.pos;
}

// ---- Device-work tails: `,"graph id":G,"graph node id":N,"channel":C,"channel_type":T}}` ----------------------------

// A pure function of (which of graph / channel are valid, graph id, graph node id, channel, channel type): static,
// never cleared. 256 entries of 192 bytes: graph node id u64, channel u32 and channel type u32 @0 (the Ev's v128 from
// graphNodeId, as it lies), graph id u32 @16, the HAS_GRAPH | HAS_CHANNEL bits u32 @20 (0 = empty: such events are not
// looked up), text length u32 @24, text @32 (≤ 108 bytes: every field at its widest).
const TAIL_SLOTS: usize = 256;
const TAIL_ENTRY: usize = 192;
const TAILS: usize = memory.data(<i32>(TAIL_SLOTS * TAIL_ENTRY), 16);

/**
 * Writes the graph and channel args of device work `e` and the closing `}}` at q, from the kept text or with `write`
 * (the plain formatter, cursor style) on a miss. Only for an event with HAS_GRAPH or HAS_CHANNEL.
 */
export function putDeviceTail(q: usize, e: Ev, write: (q: usize, e: Ev) => usize): usize {
  const g = offsetof<Ev>("graphNodeId");
  if (offsetof<Ev>("channelId") != g + 8 || offsetof<Ev>("channelType") != g + 12) {
    ERROR("putDeviceTail reads graphNodeId, channelId and channelType as one v128");
  }
  const k = v128.load(changetype<usize>(e) + g);
  const f = e.flags & (EvFlag.HAS_GRAPH | EvFlag.HAS_CHANNEL);
  const gid = e.graphId;
  const m4 = i32x4.mul(k, i32x4(0x27d4eb2f, 0x165667b1, 0x85ebca6b, 0xc2b2ae35));
  let h = <u32>(i32x4.extract_lane(m4, 0) ^ i32x4.extract_lane(m4, 1) ^ i32x4.extract_lane(m4, 2) ^ i32x4.extract_lane(m4, 3));
  h = (h ^ gid * 0xd3a2646c ^ f) * 0x9e3779b1;
  if (TAIL_SLOTS != 256) ERROR("putDeviceTail takes the top 8 bits of the hash");
  const a = TAILS + <usize>(h >> 24) * TAIL_ENTRY;
  if ((<u32>v128.any_true(v128.xor(v128.load(a), k)) | (load<u32>(a, 16) ^ gid) | (load<u32>(a, 20) ^ f)) != 0) {
    return tailMiss(q, e, write, a, k, gid, f);
  }
  // 128 bytes, whatever the length: the reads stay inside the entry (32 + 128 ≤ TAIL_ENTRY); the bytes written past
  // the text fall within the event's output reserve.
  if (TAIL_ENTRY < 32 + 128) ERROR("putDeviceTail copies 128 bytes of an entry's text");
  const src = a + 32;
  v128.store(q, v128.load(src));
  v128.store(q, v128.load(src, 16), 16);
  v128.store(q, v128.load(src, 32), 32);
  v128.store(q, v128.load(src, 48), 48);
  v128.store(q, v128.load(src, 64), 64);
  v128.store(q, v128.load(src, 80), 80);
  v128.store(q, v128.load(src, 96), 96);
  v128.store(q, v128.load(src, 112), 112);
  return q + <usize>load<u32>(a, 24);
}

/** {@link putDeviceTail} on a miss: writes with `write` and keeps the text in entry `a` (not inlined: no spills on a hit). */
function tailMiss(q: usize, e: Ev, write: (q: usize, e: Ev) => usize, a: usize, k: v128, gid: u32, f: u32): usize {
  const end = write(q, e);
  const n = end - q;
  if (n <= 128) {
    memory.copy(a + 32, q, n);
    v128.store(a, k);
    store<u32>(a, gid, 16);
    store<u32>(a, f, 20);
    store<u32>(a, <u32>n, 24);
  }
  return end;
}
