/**
 * Encoding of one buffered record as an XLine.events entry (XEvent with its stats): {@link putEvent} writes it (when
 * the planes are sized, into emit/xspace_capture.ts's buffer while it has room, else when the line is written) and
 * {@link eventSize} sizes it (the events beyond the buffer), the two kept in step (emit/xspace_write.ts checks every
 * line's size as written).
 */
import { REC_GRAPH } from "./xspace_spill";
import { varintSize } from "./protobuf";
import { corrGet, nvtxStat } from "./xspace_corr";
import { MetaList, corrOut, evOut, metaAt, stOut } from "./xspace_meta";
import { Plane, planeCount, planeList } from "./xspace_plane";
import { META_MASK, R, STEP_CONTEXT_TYPE, WK } from "./xspace_schema";
import { hostRanks, hostStepProducer } from "./options";
import { stepLinkOf, stepLinked, stepNumber, stepProduces } from "./xspace_steps";

/** Unix ns of the line being sized or written (XEvent offsets are relative to it). */
export let curLineTs: u64 = 0;
/** The line being sized or written holds calls linked to a step (emit/xspace_steps.ts, Line.links). */
let curLinks = false;
/** Its process id. */
let curPid: u32 = 0;

/** Sets {@link curLineTs} (Unix ns), whether the line holds calls linked to a step, and its process id. */
// @ts-ignore: decorator
@inline export function setLineTs(ns: u64, links: bool, pid: u32): void {
  curLineTs = ns;
  curLinks = links;
  curPid = pid;
}
/** The plane being sized or written ({@link usePlane}). */
export let curPlane: Plane = changetype<Plane>(0);
let curStats: MetaList = changetype<MetaList>(0); // its stat metadata
let wkCorr: u32 = 0;
let wkDevice: u32 = 0;
let wkCtx: u32 = 0;
let wkKernel: u32 = 0;
let wkMemcpy: u32 = 0;
let wkMemset: u32 = 0;
let wkOcc: u32 = 0;
let wkMinGrid: u32 = 0;
let wkBlock: u32 = 0;
let wkGraph: u32 = 0;
let wkNode: u32 = 0;
let wkExec: u32 = 0;
let wkNvtx: u32 = 0;
let wkRoot: u32 = 0;
let wkStep: u32 = 0;
let wkValue: u32 = 0;
let wkPType: u32 = 0;
let wkPId: u32 = 0;
let wkCType: u32 = 0;
let wkCId: u32 = 0;

/**
 * Tail cache: the encoded stats of a device record after its correlation_id (nvtx_range, context_id and its kind's
 * detail stats), which depend only on (kind, NVTX range stat, context, detail) within a plane and repeat from event
 * to event. {@link TAIL_N} direct-mapped entries of {@link TAIL_BYTES}: {generation u32, kind u32, nvtx stat u32,
 * context u32, detail u32, length u32, 0, 0} then the bytes (under 128). An entry is valid while its generation
 * is {@link tailGen}: {@link usePlane} starts a new one (stat ids are per plane).
 */
const TAIL_N: u32 = 256;
const TAIL_BYTES: usize = 256;
const TAIL_HEAD: usize = 32;
let tails: usize = 0;
let tailGen: u32 = 0;

/** Starts a file (the heap was rewound): the tail cache is made anew by the first {@link usePlane}. */
export function encodeBegin(): void {
  tails = 0;
}

/** Makes `pl` the plane being sized or written: loads its well-known stat ids. */
export function usePlane(pl: Plane): void {
  if (tails == 0) {
    tails = heap.alloc(<usize>TAIL_N * TAIL_BYTES);
    memory.fill(tails, 0, <usize>TAIL_N * TAIL_BYTES); // generation 0: no entry is valid
    tailGen = 0;
  }
  tailGen++;
  curPlane = pl;
  curStats = pl.st;
  const w = pl.wk;
  wkCorr = load<u32>(w, WK.CORRELATION_ID << 2);
  wkDevice = load<u32>(w, WK.DEVICE_ID << 2);
  wkCtx = load<u32>(w, WK.CONTEXT_ID << 2);
  wkKernel = load<u32>(w, WK.KERNEL_DETAILS << 2);
  wkMemcpy = load<u32>(w, WK.MEMCPY_DETAILS << 2);
  wkMemset = load<u32>(w, WK.MEMSET_DETAILS << 2);
  wkOcc = load<u32>(w, WK.OCCUPANCY_PCT << 2);
  wkMinGrid = load<u32>(w, WK.OCC_MIN_GRID << 2);
  wkBlock = load<u32>(w, WK.OCC_BLOCK_SIZE << 2);
  wkGraph = load<u32>(w, WK.GRAPH_ID << 2);
  wkNode = load<u32>(w, WK.GRAPH_NODE_ID << 2);
  wkExec = load<u32>(w, WK.GRAPH_EXEC_ID << 2);
  wkNvtx = load<u32>(w, WK.NVTX_RANGE << 2);
  wkRoot = load<u32>(w, WK.IS_ROOT << 2);
  wkStep = load<u32>(w, WK.STEP_NUM << 2);
  wkValue = load<u32>(w, WK.VALUE << 2);
  wkPType = load<u32>(w, WK.PRODUCER_TYPE << 2);
  wkPId = load<u32>(w, WK.PRODUCER_ID << 2);
  wkCType = load<u32>(w, WK.CONSUMER_TYPE << 2);
  wkCId = load<u32>(w, WK.CONSUMER_ID << 2);
  if (wkDevice != 0) for (let d: u32 = 1; d <= planeCount; d++) devStatFill(d);
}

/**
 * The device_id stat of an API call whose device work is on device plane index + 1 `d` (1..256: planeList's cap),
 * encoded once per plane use instead of once per call: 16 bytes per plane, the stat (≤ 14 bytes: two varints of
 * u32 values) then its length in byte 15.
 */
const devStats = memory.data(256 << 4, 16);

/** Encodes the device_id stat of plane `d` into {@link devStats}. */
function devStatFill(d: u32): void {
  const s = devStats + (<usize>(d - 1) << 4);
  store<u8>(s, <u8>(wStatVarint(s, wkDevice, F_UINT64, planeIdOf(d)) - s), 15);
}
/** The {@link devStats} entry of plane `d`: copy 16 bytes, keep byte 15's count. */
// @ts-ignore: decorator
@inline function devStat(d: u32): usize {
  return devStats + (<usize>(d - 1) << 4);
}

// XStat sizes: the stat is an XEvent field 4 (one-byte tag + one-byte length: stats are < 128 bytes).
// @ts-ignore: decorator
@inline function statVarintSize(id: u32, v: u64): u32 {
  return 2 + 1 + varintSize(id) + 1 + varintSize(v);
}
/** Digits of a u32. */
// @ts-ignore: decorator
@inline function decDigits(v: u32): u32 {
  let n: u32 = 1;
  while (v >= 10) {
    v /= 10;
    n++;
  }
  return n;
}

/** The u64 value of a counter record (ctx @24 low, detail @28 high). */
// @ts-ignore: decorator
@inline function counterValue(r: usize): u64 {
  return <u64>load<u32>(r, 24) | (<u64>load<u32>(r, 28) << 32);
}

/** Size of the XEvent body of record `r`. */
// @ts-ignore: decorator
@inline export function eventSize(r: usize): u32 {
  const w = load<u32>(r, 16);
  const kind = <i32>((w >> 24) & 15);
  const dur = load<u64>(r, 8);
  let n = 1 + varintSize(evOut(w & META_MASK)) + 1 + varintSize(ps(load<u64>(r) - curLineTs));
  if (dur != 0) n += 1 + varintSize(ps(dur));
  const corr = load<u32>(r, 20);
  if (kind == R.API) {
    if (corr != 0) {
      const d = corrGet(corr);
      if (d != 0 && wkDevice != 0) n += <u32>load<u8>(devStat(d), 15);
      n += statVarintSize(wkCorr, corrOut(corr));
      const link = linkOf(r, d);
      if (link >= 0) n += statVarintSize(wkCType, STEP_CONTEXT_TYPE) + statVarintSize(wkCId, stepNumber(link));
    }
    return n;
  }
  if (kind == R.STEP) {
    const step = <u64>load<u32>(r, 28);
    const role = stepRole(r);
    if (role == ROLE_CONSUMER) {
      return n + statVarintSize(wkStep, step) + statVarintSize(wkCType, STEP_CONTEXT_TYPE) + statVarintSize(wkCId, step);
    }
    n += statVarintSize(wkRoot, 1) + statVarintSize(wkStep, step);
    if (role == ROLE_PRODUCER) n += statVarintSize(wkPType, STEP_CONTEXT_TYPE) + statVarintSize(wkPId, step);
    return n;
  }
  if (kind == R.COUNTER) return n + statVarintSize(wkValue, counterValue(r));
  if (kind < R.KERNEL) return n;
  if (corr != 0) n += statVarintSize(wkCorr, corrOut(corr));
  if ((w & REC_GRAPH) != 0) return n + <u32>(wTail(scratch, r, w, kind, corr) - scratch);
  return n + load<u32>(tailOf(r, kind, corr), 20);
}

/** Step marker roles ({@link stepRole}). */
const ROLE_ROOT: i32 = 0;
const ROLE_PRODUCER: i32 = 1;
const ROLE_CONSUMER: i32 = 2;

/**
 * The role of step marker record `r`: a root; a root that produces its step's context, for the calls of other threads
 * linked to it (emit/xspace_steps.ts) or, in a joined host merge, the producing rank's (the host's first rank with step
 * markers: options.ts hostStepProducer; xspace_schema.ts stepStats); or, another rank's in such a merge, a consumer of
 * the producing rank's step.
 */
// @ts-ignore: decorator
@inline function stepRole(r: usize): i32 {
  if (hostRanks > 1) return hostStepProducer ? ROLE_PRODUCER : ROLE_CONSUMER;
  return stepProduces(load<u64>(r), load<u32>(r, 28)) ? ROLE_PRODUCER : ROLE_ROOT;
}

/**
 * The step API record `r` (device plane index + 1 of its work `d`) is linked to on a line of a thread without step
 * markers (emit/xspace_steps.ts), or -1.
 */
// @ts-ignore: decorator
@inline function linkOf(r: usize, d: u32): i32 {
  if (!curLinks || d == 0) return -1;
  const i = stepLinkOf(load<u64>(r));
  return stepLinked(i, d, curPid) ? i : -1;
}

/** Room for one record's tail written to be measured (a record with CUDA graph ids, which the cache does not keep). */
const scratch = memory.data(256, 16);

/** Largest value of the int64 time fields (XLine.timestamp_ns, XEvent.offset_ps and duration_ps). */
export const I64_MAX: u64 = 0x7fffffffffffffff;

/**
 * ns → ps (XEvent offset_ps, duration_ps), saturating at 2^63 - 1 (the fields are int64): spans beyond ~106 days
 * (crafted or far-future timestamps) are written as the largest value rather than wrapped around or negative.
 */
// @ts-ignore: decorator
@inline function ps(ns: u64): u64 {
  return ns > I64_MAX / 1000 ? I64_MAX : ns * 1000;
}

/** XPlane.id of device plane index+1 `d`. */
// @ts-ignore: decorator
@inline function planeIdOf(d: u32): u64 {
  return changetype<Plane>(load<usize>(planeList + (<usize>(d - 1) << 2))).id;
}

/**
 * Writes v as a varint at `p`; returns the address after it. The caller reserved ≥ 10 bytes. The first six bytes
 * (values below 2^42: ids, offsets and durations in ps up to 73 minutes) unrolled, without a loop.
 */
// @ts-ignore: decorator
@inline function wVarint(p: usize, v: u64): usize {
  if (v < 0x80) {
    store<u8>(p, <u8>v);
    return p + 1;
  }
  store<u8>(p, <u8>(v | 0x80));
  if (v < (<u64>1 << 14)) {
    store<u8>(p, <u8>(v >> 7), 1);
    return p + 2;
  }
  store<u8>(p, <u8>((v >> 7) | 0x80), 1);
  if (v < (<u64>1 << 21)) {
    store<u8>(p, <u8>(v >> 14), 2);
    return p + 3;
  }
  store<u8>(p, <u8>((v >> 14) | 0x80), 2);
  if (v < (<u64>1 << 28)) {
    store<u8>(p, <u8>(v >> 21), 3);
    return p + 4;
  }
  store<u8>(p, <u8>((v >> 21) | 0x80), 3);
  if (v < (<u64>1 << 35)) {
    store<u8>(p, <u8>(v >> 28), 4);
    return p + 5;
  }
  store<u8>(p, <u8>((v >> 28) | 0x80), 4);
  if (v < (<u64>1 << 42)) {
    store<u8>(p, <u8>(v >> 35), 5);
    return p + 6;
  }
  store<u8>(p, <u8>((v >> 35) | 0x80), 5);
  return wVarintRest(p + 6, v >> 42);
}
/**
 * {@link wVarint} for offsets and durations in ps: the usual lengths — 6 bytes (34 ms to 73 min) and 4 bytes (2 µs
 * to 268 µs) — with the 7-bit groups spread into one word and stored at once (the store may write 2 bytes past the
 * 6: inside the room the caller reserved, and overwritten next).
 */
// @ts-ignore: decorator
@inline function wVarintTime(p: usize, v: u64): usize {
  if (v - (<u64>1 << 35) < (<u64>1 << 42) - (<u64>1 << 35)) {
    store<u64>(p, (v & 0x7f) | ((v << 1) & 0x7f00) | ((v << 2) & 0x7f0000) | ((v << 3) & 0x7f000000) |
      ((v << 4) & 0x7f00000000) | ((v << 5) & 0x7f0000000000) | 0x8080808080);
    return p + 6;
  }
  if (v - (<u64>1 << 21) < (<u64>1 << 28) - (<u64>1 << 21)) {
    const x = <u32>v;
    store<u32>(p, (x & 0x7f) | ((x << 1) & 0x7f00) | ((x << 2) & 0x7f0000) | ((x << 3) & 0x7f000000) | 0x808080);
    return p + 4;
  }
  return wVarint(p, v);
}
/** The bytes of a varint after its sixth ({@link wVarint}): `v` is what is left of the value. */
function wVarintRest(p: usize, v: u64): usize {
  while (v >= 0x80) {
    store<u8>(p, <u8>(v | 0x80));
    v >>= 7;
    p++;
  }
  store<u8>(p, <u8>v);
  return p + 1;
}

/**
 * Writes the head of an XEvent.stats entry at `p`: its tag (field 4, LEN), a length byte left for the caller
 * ({@link wStatEnd}: stats are < 128 bytes) and XStat.metadata_id `id`; returns the address after it.
 */
// @ts-ignore: decorator
@inline function wStatHead(p: usize, id: u32): usize {
  store<u8>(p, 0x22);
  if (id < 0x80) {
    store<u16>(p, <u16>(0x08 | (id << 8)), 2);
    return p + 4;
  }
  store<u8>(p, 0x08, 2);
  return wVarint(p + 3, id);
}
/** Ends the stat begun at `at` by {@link wStatHead}, written up to `p`: its length byte. Returns `p`. */
// @ts-ignore: decorator
@inline function wStatEnd(at: usize, p: usize): usize {
  store<u8>(at, <u8>(p - at - 2), 1);
  return p;
}

/** Writes an XStat with metadata id `id` and varint value field `field` (F_*) = v at `p`; returns the end. */
// @ts-ignore: decorator
@inline function wStatVarint(p: usize, id: u32, field: u32, v: u64): usize {
  let q = wStatHead(p, id);
  store<u8>(q, <u8>(field << 3));
  q = wVarint(q + 1, v);
  return wStatEnd(p, q);
}
/** Writes an XStat with metadata id `id` and double_value v at `p`; returns the end. */
// @ts-ignore: decorator
@inline function wStatDouble(p: usize, id: u32, v: f64): usize {
  const q = wStatHead(p, id);
  store<u8>(q, <u8>((F_DOUBLE << 3) | 1));
  store<f64>(q, v, 1);
  return wStatEnd(p, q + 9);
}
/** Writes the context stat (str_value "$$<ctx>") with metadata id `id` at `p`; returns the end. */
function wCtxStat(p: usize, id: u32, ctx: u32): usize {
  let q = wStatHead(p, id);
  const nd = decDigits(ctx);
  store<u8>(q, 0x2a); // field 5 (str_value), LEN
  store<u8>(q, <u8>(2 + nd), 1); // < 128
  store<u8>(q, 36, 2);
  store<u8>(q, 36, 3);
  q += 4 + nd;
  let d = q;
  let v = ctx;
  for (let i: u32 = 0; i < nd; i++) {
    d--;
    store<u8>(d, <u8>(48 + v % 10));
    v /= 10;
  }
  return wStatEnd(p, q);
}

// XStat value fields.
const F_DOUBLE: u32 = 2;
export const F_UINT64: u32 = 3;
export const F_INT64: u32 = 4;
const F_REF: u32 = 7;

/**
 * Writes the stats of device record `r` (word `w`, kind ≥ KERNEL, correlation id `corr`) that follow its
 * correlation_id at `p`: nvtx_range, context_id, the CUDA graph ids, the kind's detail stats. Returns the end.
 */
function wTail(p: usize, r: usize, w: u32, kind: i32, corr: u32): usize {
  if (kind <= R.GRAPH) {
    const nv = nvtxStat(corr);
    if (nv != 0) p = wStatVarint(p, wkNvtx, F_REF, stOut(nv));
  }
  p = wCtxStat(p, wkCtx, load<u32>(r, 24));
  if ((w & REC_GRAPH) != 0) {
    const g = load<u32>(r, 32);
    const node = load<u64>(r, 40);
    if (g != 0) p = wStatVarint(p, wkGraph, F_UINT64, g);
    if (node != 0) p = wStatVarint(p, wkNode, F_UINT64, node);
  }
  const detail = load<u32>(r, 28);
  switch (kind) {
    case R.KERNEL: {
      const occ = <usize>load<u32>(metaAt(curStats, detail), 8);
      p = wStatDouble(p, wkOcc, load<f64>(occ));
      p = wStatVarint(p, wkMinGrid, F_INT64, <u64>load<i32>(occ, 8));
      p = wStatVarint(p, wkBlock, F_INT64, <u64>load<i32>(occ, 12));
      p = wStatVarint(p, wkKernel, F_REF, stOut(detail));
      break;
    }
    case R.MEMCPY:
      p = wStatVarint(p, wkMemcpy, F_REF, stOut(detail));
      break;
    case R.MEMSET:
      p = wStatVarint(p, wkMemset, F_REF, stOut(detail));
      break;
    case R.GRAPH:
      if (detail != 0) p = wStatVarint(p, wkGraph, F_UINT64, detail);
      p = wStatVarint(p, wkExec, F_UINT64, detail);
      break;
  }
  return p;
}

/**
 * The tail cache entry of device record `r` without CUDA graph ids (kind ≥ KERNEL, correlation id `corr`), filled
 * by {@link wTail} when it holds another tail.
 */
// @ts-ignore: decorator
@inline function tailOf(r: usize, kind: i32, corr: u32): usize {
  const nv = kind <= R.GRAPH ? nvtxStat(corr) : 0;
  const ctx = load<u32>(r, 24);
  const detail = load<u32>(r, 28);
  const h = ((<u64>detail << 32) | <u64>ctx) * 0x9e3779b97f4a7c15 ^ ((<u64>nv << 8) | <u64>kind) * 0xc2b2ae3d27d4eb4f;
  const e = tails + <usize>(<u32>(h >> 56) & (TAIL_N - 1)) * TAIL_BYTES;
  // The key as two u64 and a u32 (three compares, not five).
  if (load<u64>(e) == (<u64>tailGen | (<u64>kind << 32)) && load<u64>(e, 8) == (<u64>nv | (<u64>ctx << 32)) &&
    load<u32>(e, 16) == detail) return e;
  const end = wTail(e + TAIL_HEAD, r, 0, kind, corr);
  store<u32>(e, tailGen);
  store<u32>(e, <u32>kind, 4);
  store<u32>(e, nv, 8);
  store<u32>(e, ctx, 12);
  store<u32>(e, detail, 16);
  store<u32>(e, <u32>(end - e - TAIL_HEAD), 20);
  return e;
}

/**
 * Writes record `r` as XLine.events entry (tag, length, body) at `begin`, which has room for 512 bytes
 * (emit/xspace_capture.ts EVENT_ROOM). Returns the address after it.
 */
// @ts-ignore: decorator
@inline export function putEvent(begin: usize, r: usize): usize {
  store<u8>(begin, 0x22); // field 4 (events), LEN
  const lenAt = begin + 1; // one length byte; moved to two below when the body is ≥ 128 bytes
  let p = begin + 2;
  const w = load<u32>(r, 16);
  const kind = <i32>((w >> 24) & 15);
  const dur = load<u64>(r, 8);
  store<u8>(p, 0x08); // metadata_id
  p = wVarint(p + 1, evOut(w & META_MASK));
  store<u8>(p, 0x10); // offset_ps
  p = wVarintTime(p + 1, ps(load<u64>(r) - curLineTs));
  if (dur != 0) {
    store<u8>(p, 0x18); // duration_ps
    p = wVarintTime(p + 1, ps(dur));
  }
  const corr = load<u32>(r, 20);
  if (kind == R.API) {
    if (corr != 0) {
      const d = corrGet(corr);
      if (d != 0 && wkDevice != 0) {
        // 16 bytes copied: up to 15 past the stat, inside the 512 reserved (and overwritten next).
        const s = devStat(d);
        v128.store(p, v128.load(s));
        p += <usize>load<u8>(s, 15);
      }
      p = wStatVarint(p, wkCorr, F_UINT64, corrOut(corr));
      const link = linkOf(r, d);
      if (link >= 0) {
        p = wStatVarint(p, wkCType, F_INT64, STEP_CONTEXT_TYPE);
        p = wStatVarint(p, wkCId, F_UINT64, stepNumber(link));
      }
    }
  } else if (kind == R.STEP) {
    const step = <u64>load<u32>(r, 28);
    const role = stepRole(r);
    if (role != ROLE_CONSUMER) p = wStatVarint(p, wkRoot, F_INT64, 1);
    p = wStatVarint(p, wkStep, F_INT64, step);
    if (role != ROLE_ROOT) {
      const produce = role == ROLE_PRODUCER;
      p = wStatVarint(p, produce ? wkPType : wkCType, F_INT64, STEP_CONTEXT_TYPE);
      p = wStatVarint(p, produce ? wkPId : wkCId, F_UINT64, step);
    }
  } else if (kind == R.COUNTER) {
    p = wStatVarint(p, wkValue, F_UINT64, counterValue(r));
  } else if (kind >= R.KERNEL) {
    if (corr != 0) p = wStatVarint(p, wkCorr, F_UINT64, corrOut(corr));
    if ((w & REC_GRAPH) != 0) p = wTail(p, r, w, kind, corr);
    else {
      const t = tailOf(r, kind, corr);
      const n = <usize>load<u32>(t, 20);
      // The first 64 bytes (most tails: nvtx_range, context_id and a kernel's four detail stats) without a loop, the
      // rest 16 a step: up to 63 written past the tail, inside the 512 reserved (and overwritten next).
      const s = t + TAIL_HEAD;
      v128.store(p, v128.load(s));
      v128.store(p, v128.load(s, 16), 16);
      v128.store(p, v128.load(s, 32), 32);
      v128.store(p, v128.load(s, 48), 48);
      for (let i: usize = 64; i < n; i += 16) v128.store(p + i, v128.load(s + i));
      p += n;
    }
  }
  const body = <u32>(p - lenAt - 1);
  if (body < 128) store<u8>(lenAt, <u8>body);
  else {
    memory.copy(lenAt + 2, lenAt + 1, body);
    store<u8>(lenAt, <u8>((body & 0x7f) | 0x80));
    store<u8>(lenAt + 1, <u8>(body >> 7));
    p++;
  }
  return p;
}
