/**
 * rawtrace's kept-bytes codec (build/keep.wasm, its own small module so that a host thread that only reads files
 * can pack what it read without the conversion core): {@link pack} and {@link unpack} of lz.ts over one input and
 * one output area in this module's memory.
 *
 * Use: prepare(capacity) once (or again for a larger capacity); to pack, copy up to capacity bytes to inputPtr(),
 * call pack(n) and read the returned number of bytes at outputPtr(); to unpack, copy a packed block of m bytes to
 * outputPtr(), call unpack(m, n) and read the n bytes at inputPtr().
 */
import { HASH_BITS, SLACK, pack as packBlock, packBound, unpack as unpackBlock } from "./lz";
import { inputPtr, outputPtr, preparedCapacity, setAreas } from "../util/io_areas";

/**
 * inputPtr(): where the unpacked bytes are (the prepared capacity): pack's input, unpack's output; outputPtr():
 * where the packed bytes are (packBound(capacity)): pack's output, unpack's input.
 */
export { inputPtr, outputPtr };

/** Largest capacity prepare accepts (bytes per block). */
export const MAX_CAPACITY: u32 = 1 << 28;

let table: usize = 0;

/** Makes room for blocks of up to `cap` unpacked bytes; returns 1, or 0 when `cap` is above MAX_CAPACITY. */
export function prepare(cap: u32): u32 {
  if (cap > MAX_CAPACITY) return 0;
  if (<usize>cap <= preparedCapacity()) return 1;
  heap.reset();
  table = heap.alloc(<usize>4 << HASH_BITS);
  const input = heap.alloc(<usize>cap + SLACK);
  setAreas(cap, input, heap.alloc(<usize>packBound(cap) + SLACK));
  return 1;
}

/** Most bytes a block of `n` bytes packs to. */
export function bound(n: u32): u32 {
  return packBound(n);
}

/** Packs the first `n` bytes at inputPtr() to outputPtr(); returns the packed length, 0 when n > capacity. */
export function pack(n: u32): u32 {
  const capacity = preparedCapacity();
  if (<usize>n > capacity || capacity == 0) return 0;
  return <u32>packBlock(inputPtr(), n, outputPtr(), table);
}

/**
 * Unpacks the `m` bytes at outputPtr() into exactly `n` bytes at inputPtr(); returns 1, or 0 when the block is
 * malformed or either length is above what prepare made room for.
 */
export function unpack(m: u32, n: u32): u32 {
  const capacity = preparedCapacity();
  if (<usize>n > capacity || <usize>m > <usize>packBound(<u32>capacity) || capacity == 0) return 0;
  return unpackBlock(outputPtr(), m, inputPtr(), n) == <isize>n ? 1 : 0;
}
