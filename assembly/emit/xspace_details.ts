/**
 * The ref-valued detail stats of device events, as XLA formats them: `kernel_details`, `memcpy_details`,
 * `Memset_details`. Each distinct tuple of values is formatted as a string interned as stat metadata of its plane;
 * events refer to it by id. A bounded cache of recent tuples skips the formatting for repeated ones.
 */
import { Ev, EvFlag } from "../model/event";
import { arenaAlloc } from "../util/arena";
import { metaAdded, metaAt, metaIntern, metaSetAux } from "./xspace_meta";
import { hashMask } from "./xspace_meta_store";
import { occupancy } from "./xspace_occupancy";
import { Plane } from "./xspace_plane";
import { bAscii, bDim3, bN, bP, bPercentG, bStart, bU64, hashMix } from "./xspace_text";

// Detail tuples: up to 12 u32 words staged here (the unused ones 0), looked up per event without building the string.
const tup = memory.data(48, 16);
let tupN: u32 = 0;

/** Starts staging a tuple of `n` words (≤ 12): all 12 zeroed, so tuples compare and hash as 48 bytes. */
// @ts-ignore: decorator
@inline function tupStart(n: u32): void {
  tupN = n;
  const z = i64x2.splat(0);
  v128.store(tup, z);
  v128.store(tup, z, 16);
  v128.store(tup, z, 32);
}

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
 * Tuple cache: the stat ids of recent detail tuples, {@link CACHE_N} entries of 64 bytes {plane u32, tag u32, stat
 * id u32, 0, words u32 × 12}, direct-mapped by the tuple's hash (256 KiB, whatever the trace). A cache only: a tuple
 * it misses is formatted again and looked up by its string in the plane's stat metadata (emit/xspace_meta.ts),
 * which keeps the first id of every distinct string, so the ids are those of a complete index.
 */
const CACHE_N: u32 = 1 << 12;
let cache: usize = 0;
let tupSlot: usize = 0;

/** Starts a conversion (the heap was rewound): the cache is made on first use. */
export function detailsBegin(): void {
  cache = 0;
}

/**
 * Stat id cached for the staged tuple (tag, tup[0..tupN)) on `pl`, or 0 with the builder started: then build the
 * details string and {@link tupleAdd} it.
 */
// @ts-ignore: decorator
@inline function tupleFind(pl: Plane, tag: u32): u32 {
  if (cache == 0) {
    cache = heap.alloc(<usize>CACHE_N << 6);
    memory.fill(cache, 0, <usize>CACHE_N << 6);
  }
  // The 48 staged bytes (zero past the tuple) as six u64, without a loop (a cache only: any hash of the tuple will do).
  let h: u64 = <u64>tag * 0x9e3779b97f4a7c15;
  h = hashMix(h, load<u64>(tup) ^ rotl<u64>(load<u64>(tup, 8), 21) ^ rotl<u64>(load<u64>(tup, 16), 42));
  h = hashMix(h, load<u64>(tup, 24) ^ rotl<u64>(load<u64>(tup, 32), 21) ^ rotl<u64>(load<u64>(tup, 40), 42));
  h &= hashMask; // tests cut it to force collisions
  tupSlot = cache + (<usize>(<u32>(h ^ (h >> 32)) & (CACHE_N - 1)) << 6);
  if (load<u32>(tupSlot) == <u32>changetype<usize>(pl) && load<u32>(tupSlot, 4) == tag) {
    const eq = v128.and(v128.and(i32x4.eq(v128.load(tupSlot, 16), v128.load(tup)),
      i32x4.eq(v128.load(tupSlot, 32), v128.load(tup, 16))), i32x4.eq(v128.load(tupSlot, 48), v128.load(tup, 32)));
    if (i32x4.all_true(eq)) return load<u32>(tupSlot, 8);
  }
  bStart();
  return 0;
}
/**
 * After a {@link tupleFind} miss: interns the built string (bP, bN) as the tuple's stat (its text in the spilled
 * pool) and caches it; returns its id (metaAdded: whether the string is new).
 */
function tupleAdd(pl: Plane, tag: u32): u32 {
  const statId = metaIntern(pl.st, bP, bN, 0, 0, true);
  store<u32>(tupSlot, <u32>changetype<usize>(pl));
  store<u32>(tupSlot, tag, 4);
  store<u32>(tupSlot, statId, 8);
  v128.store(tupSlot, v128.load(tup), 16);
  v128.store(tupSlot, v128.load(tup, 16), 32);
  v128.store(tupSlot, v128.load(tup, 32), 48);
  return statId;
}

/** Occupancy of the launch being formatted (kept, in the arena, only for a kernel_details string without one). */
const occ = memory.data(16);

/** Stat id of the kernel_details string of `e` on `pl` (computed once per distinct launch shape). */
export function kernelDetails(pl: Plane, e: Ev): u32 {
  tupStart(9);
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
  occupancy(occ, pl.dev, e.registersPerThread, e.staticSharedMemory, e.dynamicSharedMemory,
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
  // A new string, or one a stat of another kind was named first (none is, today: NVTX ranges are named at the end):
  // it gets the launch's occupancy, as it did when every miss wrote it.
  if (metaAdded || load<u32>(metaAt(pl.st, id), 8) == 0) {
    const o = arenaAlloc(16);
    memory.copy(o, occ, 16);
    metaSetAux(pl.st, id, <u32>o);
  }
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

/** Stat id of the memcpy_details string of `e` on `pl` (kinds, size unless unknown, destination ordinal `dest`, `isAsync` 0/1), once per distinct tuple. */
export function memcpyDetails(pl: Plane, e: Ev, dest: u32, isAsync: u32): u32 {
  const unknown: u32 = (e.flags & EvFlag.BYTES_UNKNOWN) != 0 ? 1 : 0;
  tupStart(7);
  tupSet(0, e.srcKind);
  tupSet(1, e.dstKind);
  tupSet64(2, e.bytes);
  tupSet(4, dest);
  tupSet(5, isAsync);
  tupSet(6, unknown);
  const id = tupleFind(pl, 2);
  if (id != 0) return id;
  bAscii("kind_src:");
  bAscii(memKindName(e.srcKind));
  bAscii(" kind_dst:");
  bAscii(memKindName(e.dstKind));
  // No byte count in the record (Gaudi without bytes_moved): no size rather than a size of 0.
  if (unknown == 0) {
    bAscii(" size:");
    bU64(e.bytes);
  }
  bAscii(" dest:");
  bU64(dest);
  bAscii(" async:");
  bU64(isAsync);
  return tupleAdd(pl, 2);
}

/** Stat id of the Memset_details string of `e` on `pl` (kind, size unless unknown, `isAsync` 0/1), once per distinct tuple. */
export function memsetDetails(pl: Plane, e: Ev, isAsync: u32): u32 {
  const unknown: u32 = (e.flags & EvFlag.BYTES_UNKNOWN) != 0 ? 1 : 0;
  tupStart(5);
  tupSet(0, e.dstKind);
  tupSet64(1, e.bytes);
  tupSet(3, isAsync);
  tupSet(4, unknown);
  const id = tupleFind(pl, 3);
  if (id != 0) return id;
  bAscii("kind:");
  bAscii(memKindName(e.dstKind));
  if (unknown == 0) {
    bAscii(" num_bytes:");
    bU64(e.bytes);
  }
  bAscii(" async:");
  bU64(isAsync);
  return tupleAdd(pl, 3);
}
