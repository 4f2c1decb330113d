/**
 * The ref-valued detail stats of device events, as XLA formats them: `kernel_details`, `memcpy_details`,
 * `Memset_details`. Each distinct tuple of values is formatted once per plane and interned as stat metadata; events
 * refer to it by id.
 */
import { Ev } from "../model/event";
import { tableUpsert } from "../util/hash_table";
import { arenaAlloc } from "../util/arena";
import { metaAt, metaIntern } from "./xspace_meta";
import { occupancy } from "./xspace_occupancy";
import { Plane } from "./xspace_plane";
import { bAscii, bDim3, bN, bP, bPercentG, bStart, bU64, hashMix } from "./xspace_text";

// Detail tuples: up to 12 u32 words staged here, looked up per event without building the string.
const tup = memory.data(48);
let tupN: u32 = 0;

// @ts-ignore: decorator
@inline function tupSet(i: u32, v: u32): void {
  store<u32>(tup + (<usize>i << 2), v);
}
/** Words i and i+1: the low and high halves of v. */
// @ts-ignore: decorator
@inline function tupSet64(i: u32, v: u64): void {
  tupSet(i, <u32>v);
  tupSet(i + 1, <u32>(v >> 32));
}

/**
 * Stat id recorded for the staged tuple (tag, tup[0..tupN)), or 0 with the builder started: then build the details
 * string and {@link tupleAdd} it.
 */
let tupSlot: usize = 0;
function tupleFind(pl: Plane, tag: u32): u32 {
  let h: u64 = <u64>tag * 0x9e3779b97f4a7c15;
  for (let i: u32 = 0; i < tupN; i++) h = hashMix(h, <u64>load<u32>(tup + (<usize>i << 2)));
  if (h == 0xffffffffffffffff) h = 0;
  tupSlot = tableUpsert(pl.tuples, h);
  let c = <usize>load<u64>(tupSlot);
  const bytes = <usize>tupN << 2;
  while (c != 0) {
    if (load<u32>(c, 8) == tag && memory.compare(c + 12, tup, bytes) == 0) return load<u32>(c, 4);
    c = <usize>load<u32>(c);
  }
  bStart();
  return 0;
}
/** After a {@link tupleFind} miss: interns the built string (bP, bN) as the tuple's stat; returns its id. */
function tupleAdd(pl: Plane, tag: u32): u32 {
  // The detail strings grow with the distinct values of a trace: their text waits in the spilled pool.
  const statId = metaIntern(pl.st, bP, bN, 0, 0, true);
  const bytes = <usize>tupN << 2;
  const c = arenaAlloc(12 + bytes);
  store<u32>(c, <u32>load<u64>(tupSlot));
  store<u32>(c, statId, 4);
  store<u32>(c, tag, 8);
  memory.copy(c + 12, tup, bytes);
  store<u64>(tupSlot, c);
  return statId;
}

/** Stat id of the kernel_details string of `e` on `pl` (computed once per distinct launch shape). */
export function kernelDetails(pl: Plane, e: Ev): u32 {
  tupN = 9;
  tupSet(0, e.registersPerThread);
  tupSet(1, e.staticSharedMemory);
  tupSet(2, e.dynamicSharedMemory);
  tupSet(3, <u32>e.gridX);
  tupSet(4, <u32>e.gridY);
  tupSet(5, <u32>e.gridZ);
  tupSet(6, <u32>e.blockX);
  tupSet(7, <u32>e.blockY);
  tupSet(8, <u32>e.blockZ);
  let id = tupleFind(pl, 1);
  if (id != 0) return id;
  const block = <u64>(<u32>e.blockX) * <u64>(<u32>e.blockY) * <u64>(<u32>e.blockZ);
  const occ = occupancy(pl.dev, e.registersPerThread, e.staticSharedMemory, e.dynamicSharedMemory,
    block > 0xffffffff ? 0xffffffff : <u32>block);
  // ToXStat in XLA's cupti_buffer_events.h: "regs:%u static_shared:%u dynamic_shared:%u grid:%u,%u,%u
  // block:%u,%u,%u occ_pct:%g".
  bAscii("regs:");
  bU64(e.registersPerThread);
  bAscii(" static_shared:");
  bU64(e.staticSharedMemory);
  bAscii(" dynamic_shared:");
  bU64(e.dynamicSharedMemory);
  bDim3(" grid:", <u32>e.gridX, <u32>e.gridY, <u32>e.gridZ);
  bDim3(" block:", <u32>e.blockX, <u32>e.blockY, <u32>e.blockZ);
  bAscii(" occ_pct:");
  bPercentG(load<f64>(occ));
  id = tupleAdd(pl, 1);
  store<u32>(metaAt(pl.st, id), <u32>occ, 8);
  return id;
}

/** XLA's GetMemoryKindName. */
function memKindName(k: u32): string {
  switch (k) {
    case 1: return "pageable";
    case 2: return "pinned";
    case 3: return "device";
    case 4: return "array";
    case 5: return "managed";
    case 6: return "device_static";
    case 7: return "managed_static";
  }
  return "unknown";
}

/** Stat id of the memcpy_details string of `e` on `pl` (kinds, size, destination ordinal `dest`, `isAsync` 0/1), once per distinct tuple. */
export function memcpyDetails(pl: Plane, e: Ev, dest: u32, isAsync: u32): u32 {
  tupN = 6;
  tupSet(0, e.srcKind);
  tupSet(1, e.dstKind);
  tupSet64(2, e.bytes);
  tupSet(4, dest);
  tupSet(5, isAsync);
  const id = tupleFind(pl, 2);
  if (id != 0) return id;
  bAscii("kind_src:");
  bAscii(memKindName(e.srcKind));
  bAscii(" kind_dst:");
  bAscii(memKindName(e.dstKind));
  bAscii(" size:");
  bU64(e.bytes);
  bAscii(" dest:");
  bU64(dest);
  bAscii(" async:");
  bU64(isAsync);
  return tupleAdd(pl, 2);
}

/** Stat id of the Memset_details string of `e` on `pl` (kind, size, `isAsync` 0/1), once per distinct tuple. */
export function memsetDetails(pl: Plane, e: Ev, isAsync: u32): u32 {
  tupN = 4;
  tupSet(0, e.dstKind);
  tupSet64(1, e.bytes);
  tupSet(3, isAsync);
  const id = tupleFind(pl, 3);
  if (id != 0) return id;
  bAscii("kind:");
  bAscii(memKindName(e.dstKind));
  bAscii(" num_bytes:");
  bU64(e.bytes);
  bAscii(" async:");
  bU64(isAsync);
  return tupleAdd(pl, 3);
}
