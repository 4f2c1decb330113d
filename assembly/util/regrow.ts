/**
 * Growing a block of linear memory: the core's growable arrays (spill run lists, the XSpace text pool's block table,
 * paged-array directories, metadata page lists) move to a larger block when full.
 */

/**
 * A new block of `bytes` holding the first `used` bytes of `old` (the rest as heap.alloc leaves it); the stub
 * runtime does not free `old`.
 */
export function regrow(old: usize, used: usize, bytes: usize): usize {
  const p = heap.alloc(bytes);
  if (used != 0) memory.copy(p, old, used);
  return p;
}

/** {@link regrow} with the bytes past `used` zeroed. */
export function regrowZeroed(old: usize, used: usize, bytes: usize): usize {
  const p = regrow(old, used, bytes);
  memory.fill(p + used, 0, bytes - used);
  return p;
}
