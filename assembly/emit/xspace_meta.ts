/**
 * A plane's event or stat metadata tables (XPlane.event_metadata / stat_metadata): names interned once per plane
 * ({@link metaIntern}), the ids they are written as when a host's ranks are merged ({@link evOut}, {@link stOut}),
 * and the encoding of the two maps ({@link metaMapSize}, {@link putMetaMap}).
 */
import * as O from "./out";
import { Table, tableNew, tableUpsert } from "../util/hash_table";
import { arenaAlloc } from "../util/arena";
import { varintSize, putVarintField, putLenPrefix, putBytesField } from "./protobuf";
import { WK } from "./xspace_schema";
import { bytesEq, hashBytes } from "./xspace_text";
import { poolAdd, poolAt, poolFits } from "./xspace_pool";
import { hostRanks, hostIndex } from "./options";

/** A plane's event or stat metadata: 16-byte entries by id-1 (ids from 1), names unique per list. */
@unmanaged
export class MetaList {
  /** 1: stat metadata (ids written through {@link stOut}), 0: event metadata ({@link evOut}). */
  isStat: u32;
  /** Name hash → chain of {next u32, id u32}. */
  content: Table;
  list: usize;
  count: u32;
  cap: u32;
  /** Hash seed of the names. */
  seed: u64;
}

/** Entry `id` of `m`. */
// @ts-ignore: decorator
@inline export function metaAt(m: MetaList, id: u32): usize {
  return m.list + (<usize>(id - 1) << 4);
}

/** An empty metadata list; `seed` seeds its name hashes, `isStat` 1 for stat metadata. */
export function newMetaList(seed: u64, isStat: u32): MetaList {
  const m = changetype<MetaList>(heap.alloc(offsetof<MetaList>()));
  m.isStat = isStat;
  m.content = tableNew(64);
  m.cap = 64;
  m.list = heap.alloc(<usize>m.cap << 4);
  m.count = 0;
  m.seed = seed;
  return m;
}

/**
 * Marks an entry whose name is in the spilled text pool (emit/xspace_pool.ts; the name field holds its position) in
 * place of the display-name length: only stat metadata, which has no display name, is pooled.
 */
const POOLED: u32 = 0xffffffff;

/** Address of the name of entry `e` (valid until the next pool access: {@link poolAt}). */
// @ts-ignore: decorator
@inline function nameOf(e: usize): usize {
  return load<u32>(e, 12) == POOLED ? poolAt(load<u32>(e)) : <usize>load<u32>(e);
}

/**
 * Id of the entry named [p, p+n) in `m`, created on first use with display name [dp, dp+dn) (dn = 0: none). Names
 * are unique per plane, as XPlaneBuilder keeps them (and stat refs share the stat names). With `pooled` (stat
 * metadata only) a new name goes to the spilled text pool instead of memory (read back when written).
 */
export function metaIntern(m: MetaList, p: usize, n: u32, dp: usize, dn: u32, pooled: bool = false): u32 {
  const h = hashBytes(p, n, m.seed);
  const slot = tableUpsert(m.content, h);
  let c = <usize>load<u64>(slot);
  while (c != 0) {
    const id = load<u32>(c, 4);
    const e = metaAt(m, id);
    if (bytesEq(nameOf(e), load<u32>(e, 4), p, n)) return id;
    c = <usize>load<u32>(c);
  }
  if (m.count == m.cap) {
    const list = heap.alloc(<usize>m.cap << 5);
    memory.copy(list, m.list, <usize>m.cap << 4);
    m.list = list;
    m.cap <<= 1;
  }
  m.count++;
  const id = m.count;
  const e = metaAt(m, id);
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
  const link = arenaAlloc(8);
  store<u32>(link, <u32>load<u64>(slot));
  store<u32>(link, id, 4);
  store<u64>(slot, link);
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
  const nn = load<u32>(e, 4);
  const dn = load<u32>(e, 12);
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
    const b = metaSize(m, id);
    const out = metaOut(m, id);
    putLenPrefix(field, mapEntrySize(out, b));
    O.need(32);
    putVarintField(1, out);
    putLenPrefix(2, b);
    O.need(32);
    putVarintField(1, out);
    putBytesField(2, nameOf(e), load<u32>(e, 4));
    const dn = load<u32>(e, 12);
    if (dn != 0 && dn != POOLED) putBytesField(4, <usize>load<u32>(e, 8), dn);
  }
}
