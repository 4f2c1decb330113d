/**
 * Event metadata (XEvent names) of the buffered events, cached per plane by a source key (name pointer, API id,
 * memcpy type…) so a name is hashed once per plane, not once per event.
 */
import { Ev, EvFlag } from "../model/event";
import { tableUpsert } from "../util/hash_table";
import { Plane, evIntern } from "./xspace_plane";
import { T_D2D, T_D2H, T_H2D, T_OTHER, T_P2P, typeName } from "./xspace_schema";
import { asciiCopy, bAscii, bBytes, bN, bP, bStart, bU64 } from "./xspace_text";

// Event-metadata cache keys: namespace in bits 60..63.
const NS_PTR: u64 = 1 << 60;
const NS_API: u64 = 2 << 60;
const NS_MEMCPY: u64 = 3 << 60;
export const NS_MEMSET: u64 = 4 << 60;
export const NS_GRAPH: u64 = 5 << 60;
export const NS_STEP: u64 = 6 << 60;

/** Cache slot of the last {@link evCached} lookup. */
let evSlot: usize = 0;

/**
 * Entries of a plane's recent-key cache in front of its evCache table ({@link Plane.evRecent}): {key u64, id u32,
 * 0} each, direct-mapped by the key's hash; most events repeat a few API ids and kernel names.
 */
const RECENT_BITS: u64 = 6;

/** Event metadata id cached for source key `key` in `pl`, or 0: then the caller names it with {@link evCache}. */
// @ts-ignore: decorator
@inline function evCached(pl: Plane, key: u64): u32 {
  let rc = pl.evRecent;
  if (rc == 0) {
    rc = heap.alloc(16 << <usize>RECENT_BITS);
    memory.fill(rc, 0, 16 << <usize>RECENT_BITS);
    pl.evRecent = rc;
  }
  // Keys are never 0 (a namespace is in their top bits): an empty entry matches none.
  const e = rc + (<usize>((key * 0x9e3779b97f4a7c15) >> (64 - RECENT_BITS)) << 4);
  if (load<u64>(e) == key) return load<u32>(e, 8);
  evSlot = tableUpsert(pl.evCache, key);
  const id = <u32>load<u64>(evSlot);
  if (id != 0) {
    store<u64>(e, key);
    store<u32>(e, id, 8);
  }
  return id;
}

/** After an {@link evCached} miss: the event metadata id of the name [p, p+n), kept in the cache slot. */
export function evCache(pl: Plane, p: usize, n: u32): u32 {
  const id = evIntern(pl, p, n, 0, 0);
  store<u64>(evSlot, id);
  return id;
}

/** Event metadata id of the name [p, p+n), cached under `key`. */
// @ts-ignore: decorator
@inline function evByKey(pl: Plane, key: u64, p: usize, n: u32): u32 {
  const id = evCached(pl, key);
  return id != 0 ? id : evCache(pl, p, n);
}

/**
 * Event metadata id for the name of `e` (bytes the session owns and never rewrites: the string arena and static
 * names, model/event.ts), cached by (pointer, length) so a name is hashed once per plane, not once per event.
 */
// @ts-ignore: decorator
@inline export function evByName(pl: Plane, p: usize, n: u32): u32 {
  return evByKey(pl, NS_PTR | (<u64>p << 28) | <u64>(n & 0xfffffff), p, n);
}
/** {@link evByName} as a call: inline for kernels only (most events), called for the rarer kinds. */
export function evByNameCall(pl: Plane, p: usize, n: u32): u32 {
  return evByName(pl, p, n);
}

/**
 * Event metadata for an API call: by its name's bytes when the decoder keeps them (EvFlag.NAME_KEPT: never rewritten
 * during the conversion), else by (kind, API id) — a name in a scratch buffer the next unknown call overwrites. API ids
 * alone do not tell calls apart: they repeat across a vendor's API tables (PTI's Level Zero, OpenCL and SYCL groups,
 * rocprofiler-sdk's HIP and RCCL, its HSA core and extension tables), a PTI sync carries its sync type and a comms call
 * none. Before 2026-12-03 every call was keyed by (kind, API id), and one sharing a key showed in XProf under the
 * first one's name.
 */
export function evByApi(pl: Plane, e: Ev): u32 {
  if ((e.flags & EvFlag.NAME_KEPT) != 0) return evByName(pl, e.namePtr, e.nameLen);
  return evByKey(pl, NS_API | (<u64>e.kind << 32) | e.apiId, e.namePtr, e.nameLen);
}

/** Stream-line type (T_*) of memcpy `e`: by copy kind, peer copies as P2P. */
export function memcpyType(e: Ev): u32 {
  if ((e.flags & EvFlag.PEER) != 0) return T_P2P;
  switch (e.copyKind) {
    case 1: return T_H2D;
    case 2: return T_D2H;
    case 8: return T_D2D;
    case 10: return T_P2P;
  }
  return T_OTHER;
}

/**
 * Name of a memcpy event of stream-line type `t`. XLA names them as its line types ("MemcpyH2D"…), but XProf
 * classifies a device event as a host-to-device, device-to-host or device-to-device copy only when its name starts
 * with "MemcpyHToD", "MemcpyDToH" or "MemcpyDToD" (tsl ParseTfOpFullname, used by xprof/convert/
 * xplane_to_step_events.cc ClassifyGpuEvent): with XLA's names its overview and input pipeline count every copy as
 * device compute. These three are named so XProf tells them apart; the others keep XLA's names.
 */
export function memcpyEventName(t: u32): string {
  switch (t) {
    case T_H2D: return "MemcpyHToD";
    case T_D2H: return "MemcpyDToH";
    case T_D2D: return "MemcpyDToD";
  }
  return typeName(t);
}

/** Memcpy events are named by type ({@link memcpyEventName}); the record's details carry the memory kinds. */
export function evByMemcpy(pl: Plane, t: u32): u32 {
  const id = evCached(pl, NS_MEMCPY | t);
  if (id != 0) return id;
  const s = memcpyEventName(t);
  return evCache(pl, asciiCopy(s), s.length);
}

/**
 * Event metadata named `prefix`<v>, cached under `ns` | v: memsets ("Memset <memory kind>" as XLA names them) and
 * graph executions ("CudaGraphExec:<graph id>").
 */
export function evByNumber(pl: Plane, ns: u64, prefix: string, v: u32): u32 {
  const id = evCached(pl, ns | v);
  if (id != 0) return id;
  bStart();
  bAscii(prefix);
  bU64(v);
  return evCache(pl, bP, bN);
}

/** NVTX ranges and marks: "NVTX:<domain>:<name>" (or "NVTX:<name>"), displayed as the range name. */
export function evByNvtx(pl: Plane, e: Ev): u32 {
  bStart();
  bAscii("NVTX:");
  if (e.domainLen != 0) {
    bBytes(e.domainPtr, e.domainLen);
    bAscii(":");
  }
  bBytes(e.namePtr, e.nameLen);
  return evIntern(pl, bP, bN, e.namePtr, e.nameLen);
}
