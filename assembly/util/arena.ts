/**
 * Append-only byte arena for strings (names, demangled names). Bytes never move once written, so pointers into
 * the arena stay valid until the next heap.reset() (between files).
 */

let blockPtr: usize = 0;
let blockEnd: usize = 0;
const BLOCK: usize = 1 << 20;

/** Forgets the current block (called after heap.reset()). */
export function arenaReset(): void {
  blockPtr = 0;
  blockEnd = 0;
}

/** Reserves `n` bytes and returns their address. */
export function arenaAlloc(n: usize): usize {
  if (blockPtr + n > blockEnd) {
    const size = n > BLOCK ? n : BLOCK;
    blockPtr = heap.alloc(size);
    blockEnd = blockPtr + size;
  }
  const p = blockPtr;
  blockPtr += (n + 7) & ~7;
  if (blockPtr > blockEnd) blockPtr = blockEnd;
  return p;
}

/** Copies [src, src+n) into the arena and returns the copy's address. */
export function arenaCopy(src: usize, n: usize): usize {
  const p = arenaAlloc(n);
  memory.copy(p, src, n);
  return p;
}

/** Copies the AS string `s` (ASCII only) into the arena; returns the address, length in {@link lastLen}. */
export let lastLen: u32 = 0;
export function arenaAscii(s: string): usize {
  const n = s.length;
  const p = arenaAlloc(<usize>n);
  for (let i = 0; i < n; i++) store<u8>(p + i, <u8>s.charCodeAt(i));
  lastLen = <u32>n;
  return p;
}
