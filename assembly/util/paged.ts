/**
 * Paged direct array indexed by u32 ids (correlation ids): `id → fixed-size element`, pages allocated on demand.
 *
 * Correlation ids are small, sequential and arrive roughly in order, so a direct array is cache-friendly where a
 * hash table would miss on almost every lookup. Pages are capped: ids from untrusted input spread over the u32
 * range stop getting pages once the cap is reached ({@link pagedSlot} returns 0 and callers fall back or skip),
 * so memory never grows with the values of ids alone.
 */

/** A paged array handle: a pointer to {dir: usize @0, pages: u32 @4, maxPages: u32 @8, elemShift: u32 @12, bits: u32 @16}. */
export type Paged = usize;

/**
 * Creates an empty paged array of 2^elemShift-byte elements, 2^pageBits elements a page, at most `maxPages` pages.
 * Nothing but the 20-byte handle is allocated until the first {@link pagedSlot} with `create`.
 */
export function pagedNew(elemShift: u32, pageBits: u32, maxPages: u32): Paged {
  const a = heap.alloc(20);
  store<usize>(a, 0);
  store<u32>(a, 0, 4);
  store<u32>(a, maxPages, 8);
  store<u32>(a, elemShift, 12);
  store<u32>(a, pageBits, 16);
  return a;
}

/**
 * Address of the element of `id` (zero-filled when new), or 0 when `id` does not fit in u32, the page does not
 * exist and `create` is false, or the page cap is reached.
 */
export function pagedSlot(a: Paged, id: u64, create: bool): usize {
  if (id > 0xffffffff) return 0;
  const bits = load<u32>(a, 16);
  const shift = load<u32>(a, 12);
  let dir = load<usize>(a);
  if (dir == 0) {
    if (!create) return 0;
    const dirBytes = <usize>1 << (34 - bits); // 2^(32-bits) page pointers × 4 bytes
    dir = heap.alloc(dirBytes);
    memory.fill(dir, 0, dirBytes);
    store<usize>(a, dir);
  }
  const slot = dir + (<usize>(<u32>id >> bits) << 2);
  let page = load<usize>(slot);
  if (page == 0) {
    const pages = load<u32>(a, 4);
    if (!create || pages >= load<u32>(a, 8)) return 0;
    const bytes = <usize>1 << (bits + shift);
    page = heap.alloc(bytes);
    memory.fill(page, 0, bytes);
    store<usize>(slot, page);
    store<u32>(a, pages + 1, 4);
  }
  return page + ((<usize>id & ((<usize>1 << bits) - 1)) << shift);
}
