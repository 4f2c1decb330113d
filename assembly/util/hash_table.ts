/**
 * Flat open-addressing hash table, u64 key → u64 value, in linear memory (linear probing, power-of-two capacity,
 * load ≤ 1/2). About 4× faster than std Map and allocation-free per operation (stack-notes.md §1). Keys are stored
 * as key+1 so that 0 marks an empty slot; the key 0xFFFFFFFFFFFFFFFF (which keys taken from input, such as string
 * pointers, can be) lives in the descriptor instead: found and counted like any other, but not visited by slot
 * iteration ({@link tableKeyAt}).
 */

/**
 * A table handle: a pointer to a 24-byte descriptor {slots: usize, mask: u32, count: u32, hasMax: u32 (the key
 * 0xFFFFFFFFFFFFFFFF is stored), maxValue: u64 (its value)} in linear memory.
 */
export type Table = usize;

// @ts-ignore: decorator
@inline function slotsOf(t: Table): usize { return load<usize>(t); }
// @ts-ignore: decorator
@inline function maskOf(t: Table): u32 { return load<u32>(t, 4); }
// @ts-ignore: decorator
@inline function countOf(t: Table): u32 { return load<u32>(t, 8); }

// @ts-ignore: decorator
@inline function hash64(k: u64): u32 {
  // Fibonacci hashing of a mixed key: cheap and spreads sequential ids (correlation ids are sequential).
  k ^= k >>> 33;
  k *= 0xff51afd7ed558ccd;
  k ^= k >>> 33;
  return <u32>k;
}

/** Creates a table with room for at least `capacity` keys before it grows. */
export function tableNew(capacity: u32 = 16): Table {
  let cap: u32 = 16;
  while (cap < capacity * 2) cap <<= 1;
  const t = heap.alloc(24);
  const slots = heap.alloc(<usize>cap << 4);
  memory.fill(slots, 0, <usize>cap << 4);
  store<usize>(t, slots);
  store<u32>(t, cap - 1, 4);
  store<u32>(t, 0, 8);
  store<u32>(t, 0, 12);
  store<u64>(t, 0, 16);
  return t;
}

/** Number of keys stored. */
export function tableCount(t: Table): u32 {
  return countOf(t);
}

/** Number of slots (for iteration with {@link tableKeyAt}). */
export function tableSlots(t: Table): u32 {
  return maskOf(t) + 1;
}

/** Key stored in slot `i`, or -1 (as u64 max) when the slot is empty (the key -1 itself is never in a slot). */
export function tableKeyAt(t: Table, i: u32): u64 {
  return load<u64>(slotsOf(t) + (<usize>i << 4)) - 1;
}

/** Value stored in slot `i`. */
export function tableValueAt(t: Table, i: u32): u64 {
  return load<u64>(slotsOf(t) + (<usize>i << 4), 8);
}

function grow(t: Table): void {
  const oldSlots = slotsOf(t);
  const oldCap = maskOf(t) + 1;
  const cap = oldCap << 1;
  const mask = cap - 1;
  const slots = heap.alloc(<usize>cap << 4);
  memory.fill(slots, 0, <usize>cap << 4);
  for (let i: u32 = 0; i < oldCap; i++) {
    const s = oldSlots + (<usize>i << 4);
    const k1 = load<u64>(s);
    if (k1 == 0) continue;
    let j = hash64(k1 - 1) & mask;
    while (load<u64>(slots + (<usize>j << 4)) != 0) j = (j + 1) & mask;
    store<u64>(slots + (<usize>j << 4), k1);
    store<u64>(slots + (<usize>j << 4), load<u64>(s, 8), 8);
  }
  heap.free(oldSlots);
  store<usize>(t, slots);
  store<u32>(t, mask, 4);
}

/** Address of the value slot of `key`, inserting it with value 0 when absent. `inserted` tells which happened. */
export let inserted = false;
export function tableUpsert(t: Table, key: u64): usize {
  if (key == 0xffffffffffffffff) {
    inserted = load<u32>(t, 12) == 0;
    if (inserted) {
      store<u32>(t, 1, 12);
      store<u32>(t, countOf(t) + 1, 8);
    }
    return t + 16;
  }
  if ((countOf(t) + 1) << 1 > maskOf(t) + 1) grow(t);
  const slots = slotsOf(t);
  const mask = maskOf(t);
  const k1 = key + 1;
  let j = hash64(key) & mask;
  while (true) {
    const s = slots + (<usize>j << 4);
    const cur = load<u64>(s);
    if (cur == k1) {
      inserted = false;
      return s + 8;
    }
    if (cur == 0) {
      store<u64>(s, k1);
      store<u64>(s, 0, 8);
      store<u32>(t, countOf(t) + 1, 8);
      inserted = true;
      return s + 8;
    }
    j = (j + 1) & mask;
  }
}

/** Address of the value of `key`, or 0 when absent. */
export function tableFind(t: Table, key: u64): usize {
  if (key == 0xffffffffffffffff) return load<u32>(t, 12) != 0 ? t + 16 : 0;
  const slots = slotsOf(t);
  const mask = maskOf(t);
  const k1 = key + 1;
  let j = hash64(key) & mask;
  while (true) {
    const s = slots + (<usize>j << 4);
    const cur = load<u64>(s);
    if (cur == k1) return s + 8;
    if (cur == 0) return 0;
    j = (j + 1) & mask;
  }
}

/** Forgets every key, keeping the table's memory (its capacity stays as it grew). */
export function tableClear(t: Table): void {
  memory.fill(slotsOf(t), 0, (<usize>maskOf(t) + 1) << 4);
  store<u32>(t, 0, 8);
  store<u32>(t, 0, 12);
  store<u64>(t, 0, 16);
}

/** Sets `key` to `value`. */
export function tableSet(t: Table, key: u64, value: u64): void {
  store<u64>(tableUpsert(t, key), value);
}

/** Value of `key`, or `dflt` when absent. */
export function tableGet(t: Table, key: u64, dflt: u64): u64 {
  const p = tableFind(t, key);
  return p == 0 ? dflt : load<u64>(p);
}
