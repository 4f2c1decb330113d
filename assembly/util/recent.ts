/**
 * A small direct-mapped cache of recent lookups, u64 key → nonzero u64 value, in front of a hash table or a paged
 * array whose answers do not change for a key once found (entry addresses): the records of a buffer repeat a few
 * keys (the same kernel names, the four streams), and a hit costs one multiply and two loads instead of a probe.
 *
 * A value of 0 means "not cached": callers cache only what they found. Heap-allocated, so a new file (heap.reset())
 * starts with a new cache.
 */

/** A cache handle: {shift u32 @0, pad u32 @4} followed by 2^bits entries {key + 1 u64 (0 = empty), value u64}. */
export type Recent = usize;

/** Creates an empty cache of 2^bits entries (16 B each). */
export function recentNew(bits: u32): Recent {
  const bytes = (<usize>16 << bits) + 8;
  const c = heap.alloc(bytes);
  memory.fill(c, 0, bytes);
  store<u32>(c, 32 - bits);
  return c;
}

// @ts-ignore: decorator
@inline function entryOf(c: Recent, key: u64): usize {
  return c + 8 + (<usize>(((<u32>key ^ <u32>(key >> 32)) * 0x9e3779b1) >> load<u32>(c)) << 4);
}

/** The value cached for `key`, or 0. */
// @ts-ignore: decorator
@inline export function recentGet(c: Recent, key: u64): u64 {
  const e = entryOf(c, key);
  // The key 2^64 − 1 is stored as 0, an empty entry: its value there is 0, "not cached".
  return load<u64>(e) == key + 1 ? load<u64>(e, 8) : 0;
}

/** Caches `value` (nonzero) for `key`, replacing whatever shared its entry. */
// @ts-ignore: decorator
@inline export function recentPut(c: Recent, key: u64, value: u64): void {
  const e = entryOf(c, key);
  store<u64>(e, key + 1);
  store<u64>(e, value, 8);
}
