/**
 * Paged direct array indexed by u32 ids (correlation ids): `id → fixed-size element`, pages allocated on demand.
 *
 * Correlation ids are small, sequential and arrive roughly in order, so a direct array is cache-friendly where a
 * hash table would miss on almost every lookup. Pages are capped: ids from untrusted input spread over the u32
 * range stop getting pages once the cap is reached ({@link pagedSlot} returns 0 and callers fall back or skip),
 * so memory never grows with the values of ids alone.
 *
 * Memory stays flat with the input: at most {@link pagedBudget} bytes of an array's pages are resident (page
 * frames); beyond that, a new or reloaded page takes the frame of the page resident longest (first in, first out),
 * which is appended to the host's spill storage (util/spill.ts) and read back when it is next accessed. Correlation
 * ids are used near the current one, so a page is usually written out once (when written through a `create` slot
 * since it was last spilled) and read back once per pass. A resident page costs what it did, plus one byte store
 * when asked for with `create`; a pointer from {@link pagedSlot} is valid until the next {@link pagedSlot} on the
 * same array.
 *
 * Callers that keep a page's address between calls (a last-page cache, to skip even the directory load) must also
 * keep {@link pagedEpoch} from when they got it and use the address only while the epoch is unchanged: every
 * eviction changes it, and a page can move to another frame when it is read back. A cache used for writing must be
 * filled from a `create` slot (that marks the page written; the mark lasts until the page is evicted, which changes
 * the epoch), never from a lookup.
 */
import { spillAppend, spillLoad } from "./spill";
import { regrowZeroed } from "./regrow";

/**
 * A paged array handle: a pointer to {dir: usize @0, pages: u32 @4, maxPages: u32 @8, elemShift: u32 @12,
 * bits: u32 @16, frames: usize @20, frameCount: u32 @24, frameCap: u32 @28, hand: u32 @32, spillDir: usize @36,
 * offsets: usize @40, spilled: u32 @44, dirty: usize @48 (a byte per page: written since it was last spilled),
 * epoch: u32 @52 (evictions so far: see {@link pagedEpoch}), dirPages: u32 @56 (pages the directories cover; 0:
 * 2^(32-bits), every u32 id; see {@link pagedNewSized})}.
 */
export type Paged = usize;

const HANDLE: usize = 64;

/** Memory lent for new frames ({@link pagedFramePool}): [poolNext, poolEnd). */
let poolNext: usize = 0;
let poolEnd: usize = 0;

/**
 * Lends [ptr, ptr + bytes) for the frames made from now on (memory its owner no longer needs, which the stub
 * runtime's heap cannot take back): new frames are carved from it while it lasts, then from the heap. The owner
 * ends the loan ({@link pagedFramePool}(0, 0)) before the memory is used for anything else, and no paged array
 * with frames in it may be used after that; {@link pagedPoolReset} ends it at a file's start.
 */
export function pagedFramePool(ptr: usize, bytes: usize): void {
  poolNext = (ptr + 15) & ~<usize>15;
  poolEnd = bytes != 0 && ptr + bytes > poolNext ? ptr + bytes : poolNext;
}

/** Ends any loan of {@link pagedFramePool} (a new file: the heap was rewound). */
export function pagedPoolReset(): void {
  poolNext = 0;
  poolEnd = 0;
}

/** Default resident bytes of one paged array (frames), when no budget is set: 8 MiB. */
const DEFAULT_BUDGET: u32 = 8 << 20;
let budget: u32 = DEFAULT_BUDGET;

/**
 * Sets the resident bytes of each paged array whose first page is created after this (0: the default, 8 MiB). At
 * least two pages stay resident whatever the budget. Tests set tiny budgets to force eviction on every access.
 */
export function setPagedBudget(bytes: u32): void {
  budget = bytes == 0 ? DEFAULT_BUDGET : bytes;
}

/** The resident bytes a paged array created now gets (before rounding to whole pages, at least two). */
export function pagedBudget(): u32 {
  return budget;
}

/**
 * Creates an empty paged array of 2^elemShift-byte elements, 2^pageBits elements a page, at most `maxPages` pages.
 * Nothing but the handle is allocated until the first {@link pagedSlot} with `create`.
 */
export function pagedNew(elemShift: u32, pageBits: u32, maxPages: u32): Paged {
  const a = heap.alloc(HANDLE);
  memory.fill(a, 0, HANDLE);
  store<u32>(a, maxPages, 8);
  store<u32>(a, elemShift, 12);
  store<u32>(a, pageBits, 16);
  return a;
}

/**
 * Like {@link pagedNew}, but the page directories cover only the pages made room for with {@link pagedReserve} (4 + 1
 * bytes each, 4 more once a page is spilled; at first 64) instead of every u32 id: for arrays of small pages whose
 * pages the caller numbers itself from 0, where directories over the whole u32 range would be megabytes. Callers
 * must keep ids below (pages reserved) << pageBits ({@link pagedSlot} does not check it).
 */
export function pagedNewSized(elemShift: u32, pageBits: u32, maxPages: u32): Paged {
  const a = pagedNew(elemShift, pageBits, maxPages);
  store<u32>(a, maxPages < 64 ? maxPages : 64, 56);
  return a;
}

/**
 * Makes the directories of `a` (from {@link pagedNewSized}) cover pages [0, n), n ≤ its page cap: doubled (copied,
 * the old copies left to the heap) when they cover fewer.
 */
export function pagedReserve(a: Paged, n: u32): void {
  const cap = load<u32>(a, 56);
  if (n <= cap) return;
  let c = cap;
  while (c < n) c <<= 1;
  if (c > load<u32>(a, 8)) c = load<u32>(a, 8);
  const dir = load<usize>(a);
  if (dir != 0) {
    store<usize>(a, regrowZeroed(dir, <usize>cap << 2, <usize>c << 2));
    store<usize>(a, regrowZeroed(load<usize>(a, 48), <usize>cap, <usize>c), 48);
    const spillDir = load<usize>(a, 36);
    if (spillDir != 0) store<usize>(a, regrowZeroed(spillDir, <usize>cap << 2, <usize>c << 2), 36);
  }
  store<u32>(a, c, 56);
}

/** Bytes of the page directory of `a` (a u32 per page). */
// @ts-ignore: decorator
@inline function dirBytesOf(a: Paged): usize {
  const pages = load<u32>(a, 56);
  return pages != 0 ? <usize>pages << 2 : <usize>1 << (34 - load<u32>(a, 16));
}

/**
 * Address of the element of `id` (zero-filled when new), or 0 when `id` does not fit in u32, the page does not
 * exist and `create` is false, or the page cap is reached. Valid until the next call on `a` (which may evict it).
 */
export function pagedSlot(a: Paged, id: u64, create: bool): usize {
  if (id > 0xffffffff) return 0;
  const bits = load<u32>(a, 16);
  const shift = load<u32>(a, 12);
  let dir = load<usize>(a);
  if (dir == 0) {
    if (!create) return 0;
    dir = pagedDir(a);
  }
  let page = load<usize>(dir + (<usize>(<u32>id >> bits) << 2));
  if (page == 0) {
    page = pagedMiss(a, <u32>id >> bits, create);
    if (page == 0) return 0;
  }
  // Callers write only through slots asked for with `create`: only those pages need writing out when evicted.
  if (create) store<u8>(load<usize>(a, 48) + (<usize>(<u32>id >> bits)), 1);
  return page + ((<usize>id & ((<usize>1 << bits) - 1)) << shift);
}

/** Allocates the page directory of `a` (2^(32-bits) page pointers) and its frame table; returns the directory. */
function pagedDir(a: Paged): usize {
  const bits = load<u32>(a, 16);
  const dirBytes = dirBytesOf(a); // a page pointer (4 bytes) per page
  const dir = heap.alloc(dirBytes);
  memory.fill(dir, 0, dirBytes);
  store<usize>(a, dir);
  const dirty = heap.alloc(dirBytes >> 2);
  memory.fill(dirty, 0, dirBytes >> 2);
  store<usize>(a, dirty, 48);
  // Frames: the budget in whole pages, at least two, never more than the page cap.
  const pageShift = bits + load<u32>(a, 12);
  let cap: u32 = pageShift >= 32 ? 0 : budget >> pageShift;
  if (cap < 2) cap = 2;
  if (cap > load<u32>(a, 8)) cap = load<u32>(a, 8);
  store<u32>(a, cap, 28);
  const frames = heap.alloc(<usize>cap << 3); // {page address u32, page index u32} per frame
  store<usize>(a, frames, 20);
  return dir;
}

/**
 * Slow path of {@link pagedSlot}: page `idx` is not resident. Reloads it when it was evicted, creates it when
 * `create` and the cap allows; returns its address, or 0.
 */
function pagedMiss(a: Paged, idx: u32, create: bool): usize {
  const bytes = <u32>1 << (load<u32>(a, 16) + load<u32>(a, 12));
  const spillDir = load<usize>(a, 36);
  const ord = spillDir != 0 ? load<u32>(spillDir + (<usize>idx << 2)) : 0;
  if (ord == 0) {
    const pages = load<u32>(a, 4);
    if (!create || pages >= load<u32>(a, 8)) return 0;
    const page = pagedFrame(a, idx);
    memory.fill(page, 0, bytes);
    store<u8>(load<usize>(a, 48) + <usize>idx, 1);
    store<u32>(a, pages + 1, 4);
    return page;
  }
  const page = pagedFrame(a, idx);
  spillLoad(load<u64>(load<usize>(a, 40) + (<usize>(ord - 1) << 3)), page, bytes);
  store<u8>(load<usize>(a, 48) + <usize>idx, 0); // as spilled, until written through a `create` slot
  return page;
}

/**
 * A frame for page `idx` of `a`, entered in the directory: a new one while under the budget, else the frame of the
 * page resident longest, whose bytes go to the spill storage first.
 */
function pagedFrame(a: Paged, idx: u32): usize {
  const bits = load<u32>(a, 16);
  const bytes = <u32>1 << (bits + load<u32>(a, 12));
  const dir = load<usize>(a);
  const frames = load<usize>(a, 20);
  const count = load<u32>(a, 24);
  let f: usize;
  let page: usize;
  if (count < load<u32>(a, 28)) {
    f = frames + (<usize>count << 3);
    if (poolEnd - poolNext >= <usize>bytes) {
      page = poolNext;
      poolNext += <usize>bytes;
    } else page = heap.alloc(bytes);
    store<u32>(f, <u32>page);
    store<u32>(a, count + 1, 24);
  } else {
    const hand = load<u32>(a, 32);
    f = frames + (<usize>hand << 3);
    store<u32>(a, hand + 1 == count ? 0 : hand + 1, 32);
    page = <usize>load<u32>(f);
    pagedEvict(a, load<u32>(f, 4), page, bytes);
    store<u32>(a, load<u32>(a, 52) + 1, 52); // cached page addresses of `a` are stale from here
    store<usize>(dir + (<usize>load<u32>(f, 4) << 2), 0);
  }
  store<u32>(f, idx, 4);
  store<usize>(dir + (<usize>idx << 2), page);
  return page;
}

/**
 * Writes page `idx` of `a` (at `page`, `bytes` long) to the spill storage and notes where, unless its spilled copy
 * is current (read back and not written since).
 */
function pagedEvict(a: Paged, idx: u32, page: usize, bytes: u32): void {
  let spillDir = load<usize>(a, 36);
  if (spillDir == 0) {
    // First eviction: page index → ordinal + 1 (u32 each), ordinal → spill offset (u64, at most maxPages).
    const dirBytes = dirBytesOf(a);
    spillDir = heap.alloc(dirBytes);
    memory.fill(spillDir, 0, dirBytes);
    store<usize>(a, spillDir, 36);
    store<usize>(a, heap.alloc(<usize>load<u32>(a, 8) << 3), 40);
  }
  const at = spillDir + (<usize>idx << 2);
  let ord = load<u32>(at);
  const dirty = load<usize>(a, 48) + <usize>idx;
  if (ord != 0 && load<u8>(dirty) == 0) return; // its spilled copy is current
  if (ord == 0) {
    ord = load<u32>(a, 44) + 1;
    store<u32>(a, ord, 44);
    store<u32>(at, ord);
  }
  store<u8>(dirty, 0);
  // Appended anew when written since (the storage is append-only).
  store<u64>(load<usize>(a, 40) + (<usize>(ord - 1) << 3), spillAppend(page, bytes));
}

/**
 * Evictions from `a` so far: a page address kept across {@link pagedSlot} calls is valid only while this is the
 * value it was taken under (one load; see the module note).
 */
// @ts-ignore: decorator
@inline export function pagedEpoch(a: Paged): u32 {
  return load<u32>(a, 52);
}

/** Bytes of the frames `a` holds (resident pages, or frames that held one), at most its budget. */
export function pagedResidentBytes(a: Paged): usize {
  return <usize>load<u32>(a, 24) << (load<u32>(a, 16) + load<u32>(a, 12));
}

/** Pages of `a` written to the spill storage at least once (for tests). */
export function pagedSpilledPages(a: Paged): u32 {
  return load<u32>(a, 44);
}
