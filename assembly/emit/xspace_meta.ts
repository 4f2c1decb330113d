/**
 * A plane's event or stat metadata tables (XPlane.event_metadata / stat_metadata): names interned once per plane
 * ({@link metaIntern}), the ids they are written as when a host's ranks are merged ({@link evOut}, {@link stOut}),
 * and the encoding of the two maps ({@link metaMapSize}, {@link putMetaMap}).
 */
import * as O from "./out";
import { arenaAlloc } from "../util/arena";
import { fail } from "../util/diag";
import { Fatal } from "../util/error";
import { varintSize, putVarintField, putLenPrefix, putBytesField } from "./protobuf";
import { WK } from "./xspace_schema";
import { bytesEq, hashBytes } from "./xspace_text";
import { poolAdd, poolAt, poolEq, poolFits } from "./xspace_pool";
import { MIN_META_BYTES, NameStore, entryAt, entryNew, hashMask, nameAdd, nameFirst, nameNext, nameStoreNew } from "./xspace_meta_store";
import { hostRanks, hostIndex } from "./options";

/**
 * A plane's event or stat metadata: 16-byte entries {name u32, name length u32, aux u32, display-name length u32}
 * by id (from 1), names unique per list; entries and the name index are paged (emit/xspace_meta_store.ts).
 */
@unmanaged
export class MetaList {
  /** 1: stat metadata (ids written through {@link stOut}), 0: event metadata ({@link evOut}). */
  isStat: u32;
  /** Entries, by id, and the index name hash → id. */
  names: NameStore;
  count: u32;
  /** Hash seed of the names. */
  seed: u64;
}

/**
 * Entry `id` of `m`, for reading: valid until the next metadata access ({@link metaIntern}, {@link metaAt},
 * {@link metaSetAux}, of any list).
 */
// @ts-ignore: decorator
@inline export function metaAt(m: MetaList, id: u32): usize {
  return entryAt(m.names, id, false);
}

/** Sets the aux word of entry `id` of `m` (stat metadata of kernel details: the occupancy entry). */
export function metaSetAux(m: MetaList, id: u32, v: u32): void {
  store<u32>(entryAt(m.names, id, true), v, 8);
}

/** An empty metadata list; `seed` seeds its name hashes, `isStat` 1 for stat metadata. */
export function newMetaList(seed: u64, isStat: u32): MetaList {
  const m = changetype<MetaList>(heap.alloc(offsetof<MetaList>()));
  m.isStat = isStat;
  m.names = nameStoreNew();
  m.count = 0;
  m.seed = seed;
  return m;
}

/**
 * Marks an entry whose name is in the spilled text pool (emit/xspace_pool.ts; the name field holds its position) in
 * place of the display-name length: only stat metadata, which has no display name, is pooled.
 */
const POOLED: u32 = 0xffffffff;

/** Whether entry `id` of `m` is named [p, p+n). */
function nameIs(m: MetaList, id: u32, p: usize, n: u32): bool {
  const e = metaAt(m, id);
  if (load<u32>(e, 4) != n) return false;
  const name = load<u32>(e);
  return load<u32>(e, 12) == POOLED ? poolEq(name, p, n) : bytesEq(<usize>name, n, p, n);
}

/** Whether the last {@link metaIntern} made a new entry. */
export let metaAdded = false;

/**
 * Id of the entry named [p, p+n) in `m`, created on first use with display name [dp, dp+dn) (dn = 0: none). Names
 * are unique per plane, as XPlaneBuilder keeps them (and stat refs share the stat names). With `pooled` (stat
 * metadata only) a new name goes to the spilled text pool instead of memory (read back when written). Sets
 * {@link metaAdded}.
 */
export function metaIntern(m: MetaList, p: usize, n: u32, dp: usize, dn: u32, pooled: bool = false): u32 {
  const tag = <u32>((hashBytes(p, n, m.seed) & hashMask) >> 32);
  let c = nameFirst(m.names, tag);
  while (c != 0) {
    if (nameIs(m, c, p, n)) {
      metaAdded = false;
      return c;
    }
    c = nameNext();
  }
  const id = m.count + 1;
  const e = entryNew(m.names, id);
  if (e == 0) {
    // 2^28 names: their metadata maps alone are over 2 GiB (the size given is that lower bound).
    fail(Fatal.XSPACE_TOO_LARGE, 0, <u64>id * MIN_META_BYTES);
    metaAdded = false;
    return 1;
  }
  m.count = id;
  store<u32>(e, n, 4);
  if (pooled && dn == 0 && poolFits(n)) {
    store<u32>(e, poolAdd(p, n));
    store<u32>(e, 0, 8);
    store<u32>(e, POOLED, 12);
  } else {
    const q = arenaAlloc(n > 0 ? <usize>n : 1);
    memory.copy(q, p, n);
    store<u32>(e, <u32>q);
    if (dn != 0) {
      const dq = arenaAlloc(dn);
      memory.copy(dq, dp, dn);
      store<u32>(e, <u32>dq, 8);
    } else store<u32>(e, 0, 8);
    store<u32>(e, dn, 12);
  }
  nameAdd(m.names, tag, id);
  metaAdded = true;
  return id;
}

// Host merge (emit/options.ts): ranks on the host (R), this file's index (k) and its correlation-id range.
let mR: u64 = 1;
let mK: u64 = 0;
let corrHi: u64 = 0;

/** Starts a file: the ranks on its host and its index among them (emit/options.ts) set the ids written. */
export function mergeIdsBegin(): void {
  mR = hostRanks;
  mK = hostIndex;
  corrHi = hostRanks > 1 ? <u64>hostIndex << 32 : 0;
}

/** Written id of event metadata `id`: (id - 1) × R + k + 1, so the ranks of a host never share an id. */
// @ts-ignore: decorator
@inline export function evOut(id: u32): u64 {
  return <u64>(id - 1) * mR + mK + 1;
}
/** Written id of stat metadata `id`: well-known stats (ids 1..WK.COUNT when merging) as they are, others interleaved. */
// @ts-ignore: decorator
@inline export function stOut(id: u32): u64 {
  return id <= <u32>WK.COUNT ? <u64>id : <u64>(id - <u32>WK.COUNT - 1) * mR + mK + <u64>WK.COUNT + 1;
}
// @ts-ignore: decorator
@inline function metaOut(m: MetaList, id: u32): u64 {
  return m.isStat != 0 ? stOut(id) : evOut(id);
}
/** Written correlation id: k × 2^32 + id when merging (XProf hashes the whole value into the flow id). */
// @ts-ignore: decorator
@inline export function corrOut(corr: u32): u64 {
  return corrHi | <u64>corr;
}

/**
 * XEventMetadata / XStatMetadata body of entry `id` of `m`: id (1), name (2) and, when it has one (event
 * metadata only), display_name (4).
 */
function metaSize(m: MetaList, id: u32): u64 {
  const e = metaAt(m, id);
  return metaBodySize(m, id, load<u32>(e, 4), load<u32>(e, 12));
}
/** {@link metaSize} of entry `id` of `m` with name length `nn` and display-name length (or POOLED) `dn`. */
function metaBodySize(m: MetaList, id: u32, nn: u32, dn: u32): u64 {
  let body: u64 = 1 + varintSize(metaOut(m, id)) + 1 + varintSize(nn) + nn;
  if (dn != 0 && dn != POOLED) body += 1 + varintSize(dn) + dn;
  return body;
}
/** Map entry {1: key, 2: value} size around a value of `v` bytes. */
// @ts-ignore: decorator
@inline function mapEntrySize(id: u64, v: u64): u64 {
  return 1 + varintSize(id) + 1 + varintSize(v) + v;
}
/** Size of the map entries (tag, length, entry) of all of `m` in an XPlane (event_metadata or stat_metadata). */
export function metaMapSize(m: MetaList): u64 {
  let n: u64 = 0;
  for (let id: u32 = 1; id <= m.count; id++) {
    const b = metaSize(m, id);
    const out = metaOut(m, id);
    n += 1 + varintSize(mapEntrySize(out, b)) + mapEntrySize(out, b);
  }
  return n;
}
/** Writes all of `m` as XPlane map field `field` (4 event_metadata, 5 stat_metadata), sized by {@link metaSize}. */
export function putMetaMap(field: u32, m: MetaList): void {
  for (let id: u32 = 1; id <= m.count; id++) {
    const e = metaAt(m, id);
    const name = load<u32>(e);
    const nn = load<u32>(e, 4);
    const aux = load<u32>(e, 8);
    const dn = load<u32>(e, 12);
    const b = metaBodySize(m, id, nn, dn);
    const out = metaOut(m, id);
    putLenPrefix(field, mapEntrySize(out, b));
    O.need(32);
    putVarintField(1, out);
    putLenPrefix(2, b);
    O.need(32);
    putVarintField(1, out);
    putBytesField(2, dn == POOLED ? poolAt(name) : <usize>name, nn);
    if (dn != 0 && dn != POOLED) putBytesField(4, <usize>aux, dn);
  }
}
