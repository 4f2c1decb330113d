/**
 * Storage of the XSpace metadata lists (emit/xspace_meta.ts) with a fixed resident budget: the 16-byte entries by
 * id and the index name hash → id. Both grow with the distinct names of a trace (on the bench mix: the detail
 * strings, one per distinct memcpy size), so both live in pages of two paged arrays shared by every list of a
 * conversion (util/paged.ts: at most {@link pagedBudget} bytes of each resident, colder pages in the spill storage).
 *
 * Entries: a list's ids go in runs of {@link ENT_PER_PAGE} to pages of the entry array; the list keeps the page
 * number of each run (4 bytes per 256 ids).
 *
 * Index: extendible hashing. A list's directory (in memory, 2^depth u32 page numbers, indexed by the top `depth`
 * bits of the hash's high word) points to 4 KiB buckets of the bucket array: slot 0 holds {count u32, local depth
 * u32}, slots 1..511 {tag u32 (the hash's high word), id u32} placed by open addressing (linear probing from the
 * tag's low 9 bits). A bucket holding {@link SPLIT_AT} entries splits in two by the next hash bit (the directory
 * doubles when the bucket's depth is the directory's); at {@link MAX_DEPTH} bits a full bucket's further names go
 * to an in-memory overflow table (only names whose hashes share 20 leading bits with 384 others reach it). A tag
 * match is a candidate only: callers compare the names themselves.
 */
import { Paged, pagedNewSized, pagedReserve, pagedSlot, pagedSpilledPages } from "../util/paged";
import { Table, tableNew, tableUpsert, tableFind } from "../util/hash_table";
import { arenaAlloc } from "../util/arena";
import { regrow } from "../util/regrow";

/** Entries (16 bytes) a page of the entry array holds (4 KiB pages). */
export const ENT_PER_PAGE: u32 = 256;
const ENT_BITS: u32 = 8;
/** Slots (8 bytes) of a bucket (4 KiB), slot 0 its header. */
const BKT_BITS: u32 = 9;
const BKT_SLOTS: u32 = 511;
/** Entries a bucket takes before it splits (75% of its slots). */
const SPLIT_AT: u32 = 384;
/** Hash bits the directories use at most (4 MiB of directory). */
const MAX_DEPTH: u32 = 20;
/**
 * Pages of the entry array: 2^20 × 4 KiB, 2^28 entries (all lists of a conversion). Each name is a metadata map
 * entry of at least 10 bytes in the XSpace, so 2^28 names make one over 2 GiB: this is never the limit that binds.
 */
const ENT_MAX_PAGES: u32 = 1 << 20;
/** Bytes of XSpace a metadata name takes at least (map entry: tag, length, key, value: tag, length, id, name). */
export const MIN_META_BYTES: u64 = 10;
/** Pages of the bucket array: 2^18 × 4 KiB, buckets for about 100M names (then the overflow table). */
const BKT_MAX_PAGES: u32 = 1 << 18;

let ents: Paged = 0;
let entPages: u32 = 0;
let bkts: Paged = 0;
let bktPages: u32 = 0;
/** Three 4 KiB buffers for splitting a bucket (old, low half, high half). */
let scratch: usize = 0;
/** Names filed in overflow tables in this conversion. */
let overflowed: u32 = 0;
/** Test-only: AND-ed into every name and tuple hash to force collisions ({@link setNameHashMask}). */
export let hashMask: u64 = 0xffffffffffffffff;

/** Starts a conversion (the heap was rewound): empty arrays, created on first use. */
export function namesBegin(): void {
  ents = 0;
  entPages = 0;
  bkts = 0;
  bktPages = 0;
  scratch = 0;
  overflowed = 0;
}

/**
 * Test-only counters of the last conversion: `i` 0: entry pages spilled at least once, 1: bucket pages spilled, 2:
 * names in overflow tables, 3: bucket pages made.
 */
export function metaStoreStat(i: i32): u32 {
  if (i == 0) return ents != 0 ? pagedSpilledPages(ents) : 0;
  if (i == 1) return bkts != 0 ? pagedSpilledPages(bkts) : 0;
  if (i == 2) return overflowed;
  return bktPages;
}

/**
 * Test-only: keeps only the hash bits in `mask` (0: all) for the names and detail tuples of conversions after this,
 * so that distinct names share hashes, buckets split to {@link MAX_DEPTH} and overflow.
 */
export function setNameHashMask(mask: u64): void {
  hashMask = mask == 0 ? 0xffffffffffffffff : mask;
}

/** The name index and id pages of one metadata list (a field of MetaList). */
@unmanaged
export class NameStore {
  /** Directory: 2^depth bucket page numbers (u32), or 0 before the first name. */
  dir: usize;
  depth: u32;
  /** Entry-array page of each run of {@link ENT_PER_PAGE} ids (u32 each). */
  idPages: usize;
  idPageCap: u32;
  /** Names past a full bucket at {@link MAX_DEPTH}: tag → chain of {next u32, id u32}; 0 until needed. */
  over: Table;
}

/** An empty store. */
export function nameStoreNew(): NameStore {
  const s = changetype<NameStore>(heap.alloc(offsetof<NameStore>()));
  memory.fill(changetype<usize>(s), 0, offsetof<NameStore>());
  return s;
}

/**
 * Address of the entry of `id` (from 1) of `s`, for reading (`write` false) or writing; valid until the next
 * {@link entryAt} (of any list). The run of `id` must exist ({@link entryNew}).
 */
export function entryAt(s: NameStore, id: u32, write: bool): usize {
  const i = id - 1;
  const pg = load<u32>(s.idPages + (<usize>(i >> ENT_BITS) << 2));
  return pagedSlot(ents, (<u64>pg << ENT_BITS) | <u64>(i & (ENT_PER_PAGE - 1)), write);
}

/** Makes room for id `id` (the list's next) and returns its entry for writing, or 0 when the arrays are full. */
export function entryNew(s: NameStore, id: u32): usize {
  const i = id - 1;
  if ((i & (ENT_PER_PAGE - 1)) == 0) {
    const run = i >> ENT_BITS;
    if (run == s.idPageCap) {
      const cap = s.idPageCap == 0 ? 16 : s.idPageCap << 1;
      s.idPages = regrow(s.idPages, <usize>s.idPageCap << 2, <usize>cap << 2);
      s.idPageCap = cap;
    }
    if (entPages == ENT_MAX_PAGES) return 0;
    if (ents == 0) ents = pagedNewSized(4, ENT_BITS, ENT_MAX_PAGES);
    pagedReserve(ents, entPages + 1);
    store<u32>(s.idPages + (<usize>run << 2), entPages++);
  }
  return entryAt(s, id, true);
}

// Candidate iteration: the bucket page, slot and tag of the current lookup; the overflow chain after it.
let curPage: u32 = 0;
let curSlot: u32 = 0;
let curTag: u32 = 0;
let curChain: usize = 0;
let curStore: NameStore = changetype<NameStore>(0);

/** Directory index of `tag` at depth `depth`. */
// @ts-ignore: decorator
@inline function dirIndex(tag: u32, depth: u32): u32 {
  return depth == 0 ? 0 : tag >>> (32 - depth);
}
/** First probe slot of `tag` in a bucket (1..511). */
// @ts-ignore: decorator
@inline function firstSlot(tag: u32): u32 {
  return 1 + (tag & 511) % BKT_SLOTS;
}
// @ts-ignore: decorator
@inline function nextSlot(slot: u32): u32 {
  return slot == BKT_SLOTS ? 1 : slot + 1;
}

/**
 * First id of `s` whose name hash has the high word `tag`, or 0; {@link nameNext} gives the others. Candidates
 * only: the names must be compared. Between the calls only other arrays may be used (the entries, the pool).
 */
export function nameFirst(s: NameStore, tag: u32): u32 {
  curStore = s;
  curTag = tag;
  curChain = 0;
  if (s.over != 0) {
    const v = tableFind(s.over, <u64>tag);
    if (v != 0) curChain = <usize>load<u64>(v);
  }
  if (s.dir == 0) {
    curSlot = 0;
    return nameNext();
  }
  curPage = load<u32>(s.dir + (<usize>dirIndex(tag, s.depth) << 2));
  curSlot = firstSlot(tag);
  return nameNext();
}

/** Next candidate of the lookup {@link nameFirst} started, or 0 when none is left. */
export function nameNext(): u32 {
  if (curSlot != 0) {
    const b = pagedSlot(bkts, <u64>curPage << BKT_BITS, false);
    while (true) {
      const e = b + (<usize>curSlot << 3);
      const id = load<u32>(e, 4);
      if (id == 0) break;
      curSlot = nextSlot(curSlot);
      if (load<u32>(e) == curTag) return id;
    }
    curSlot = 0;
  }
  if (curChain == 0) return 0;
  const id = load<u32>(curChain, 4);
  curChain = <usize>load<u32>(curChain);
  return id;
}

/** A new, empty bucket of depth `depth`; its page number. */
function bucketNew(depth: u32): u32 {
  if (bkts == 0) bkts = pagedNewSized(3, BKT_BITS, BKT_MAX_PAGES);
  pagedReserve(bkts, bktPages + 1);
  const pg = bktPages++;
  store<u32>(pagedSlot(bkts, <u64>pg << BKT_BITS, true), depth, 4);
  return pg;
}

/** Puts {tag, id} in the bucket at `b` (room checked by the caller) and counts it. */
function place(b: usize, tag: u32, id: u32): void {
  let slot = firstSlot(tag);
  while (load<u32>(b + (<usize>slot << 3), 4) != 0) slot = nextSlot(slot);
  store<u32>(b + (<usize>slot << 3), tag);
  store<u32>(b + (<usize>slot << 3), id, 4);
  store<u32>(b, load<u32>(b) + 1);
}

/** Adds `id` under `tag` to the index of `s` (after a lookup found no name equal to its). */
export function nameAdd(s: NameStore, tag: u32, id: u32): void {
  if (s.dir == 0) {
    s.dir = heap.alloc(4);
    store<u32>(s.dir, bucketNew(0));
    s.depth = 0;
  }
  while (true) {
    const di = dirIndex(tag, s.depth);
    const pg = load<u32>(s.dir + (<usize>di << 2));
    const b = pagedSlot(bkts, <u64>pg << BKT_BITS, true);
    if (load<u32>(b) < SPLIT_AT) {
      place(b, tag, id);
      return;
    }
    const local = load<u32>(b, 4);
    if (local >= MAX_DEPTH || bktPages == BKT_MAX_PAGES) {
      overflowAdd(s, tag, id);
      return;
    }
    if (local == s.depth) dirDouble(s);
    split(s, pg, local, b, tag);
  }
}

/** Doubles the directory of `s`: entry i becomes entries 2i and 2i+1. */
function dirDouble(s: NameStore): void {
  const n: u32 = 1 << s.depth;
  const d = heap.alloc(<usize>n << 3);
  for (let i: u32 = 0; i < n; i++) {
    const pg = load<u32>(s.dir + (<usize>i << 2));
    store<u32>(d + (<usize>i << 3), pg);
    store<u32>(d + (<usize>i << 3), pg, 4);
  }
  s.dir = d;
  s.depth++;
}

/** Splits bucket page `pg` (at `b`, local depth `local` < the directory's) by hash bit `local`; `tag` is one of its. */
function split(s: NameStore, pg: u32, local: u32, b: usize, tag: u32): void {
  if (scratch == 0) scratch = heap.alloc(3 << 12);
  const lo = scratch + 4096;
  const hi = scratch + 8192;
  memory.copy(scratch, b, 4096);
  memory.fill(lo, 0, 8192);
  store<u32>(lo, local + 1, 4);
  store<u32>(hi, local + 1, 4);
  for (let slot: u32 = 1; slot <= BKT_SLOTS; slot++) {
    const e = scratch + (<usize>slot << 3);
    const id = load<u32>(e, 4);
    if (id == 0) continue;
    const t = load<u32>(e);
    place(((t >>> (31 - local)) & 1) != 0 ? hi : lo, t, id);
  }
  memory.copy(pagedSlot(bkts, <u64>pg << BKT_BITS, true), lo, 4096);
  const q = bucketNew(local + 1);
  memory.copy(pagedSlot(bkts, <u64>q << BKT_BITS, true), hi, 4096);
  // The directory entries of `pg`: 2^(depth-local) of them from `start`; their upper half now points to `q`.
  const span: u32 = 1 << (s.depth - local);
  const start = (dirIndex(tag, s.depth) >> (s.depth - local)) << (s.depth - local);
  for (let i = start + (span >> 1); i < start + span; i++) store<u32>(s.dir + (<usize>i << 2), q);
}

/** Files `id` under `tag` in the overflow table of `s`. */
function overflowAdd(s: NameStore, tag: u32, id: u32): void {
  overflowed++;
  if (s.over == 0) s.over = tableNew(16);
  const slot = tableUpsert(s.over, <u64>tag);
  const link = arenaAlloc(8);
  store<u32>(link, <u32>load<u64>(slot));
  store<u32>(link, id, 4);
  store<u64>(slot, link);
}
