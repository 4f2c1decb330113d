/**
 * rawtrace's gzip encoder (build/deflate.wasm, its own module so that compression runs in worker threads without
 * the conversion core): one call turns up to the prepared capacity of input bytes into one gzip member (RFC 1952:
 * a 10-byte header, DEFLATE data from lz77.ts and block.ts, the CRC-32 of the input and its length mod 2^32).
 *
 * Use: prepare(capacity) once (or again for a larger capacity), copy the input to inputPtr(), call gzip(n), read
 * the returned number of bytes at outputPtr().
 */
import { crc32, crcReset } from "../util/crc32";
import { inputPtr, outputPtr, preparedCapacity, setAreas } from "../util/io_areas";

/** Where the input goes (the prepared capacity) and where gzip writes the member. */
export { inputPtr, outputPtr };
import { bitsBegin, bitsEnd } from "./block";
import { deflate, HASH_BITS, BLOCK_SYMBOLS, MAX_STEP } from "./lz77";
import { buildTables } from "./tables";
import { buildLengths } from "./huffman";

/** Largest capacity prepare accepts (bytes of input per member). */
export const MAX_CAPACITY: u32 = 1 << 28;

let table: usize = 0;
let syms: usize = 0;

/** Most bytes a member of n input bytes can take (stored blocks in the worst case, plus header and trailer). */
export function gzipBound(n: u32): u32 {
  return n + (n >> 12) * 5 + ((n / <u32>BLOCK_SYMBOLS) + 1) * 6 + 64;
}

/** Makes room for members of up to `cap` input bytes; returns 1, or 0 when `cap` is above MAX_CAPACITY. */
export function prepare(cap: u32): u32 {
  if (cap > MAX_CAPACITY) return 0;
  buildTables();
  if (<usize>cap <= preparedCapacity()) return 1;
  heap.reset();
  crcReset();
  table = heap.alloc(<usize>4 << HASH_BITS);
  syms = heap.alloc(<usize>(BLOCK_SYMBOLS + MAX_STEP + 8) << 2);
  const input = heap.alloc(<usize>cap + 16);
  setAreas(cap, input, heap.alloc(<usize>gzipBound(cap) + 16));
  return 1;
}

/** Compresses the first `n` input bytes into one gzip member at outputPtr(); returns its length, 0 if n > capacity. */
export function gzip(n: u32): u32 {
  if (<usize>n > preparedCapacity() || preparedCapacity() == 0) return 0;
  return gzipWithCrc(n, crc32(inputPtr(), n));
}

/**
 * {@link gzip} with the input's CRC-32 computed by the caller (Node's zlib.crc32 is faster than the core's
 * table-driven one); the trailer holds `crc` as given.
 */
export function gzipWithCrc(n: u32, crc: u32): u32 {
  if (<usize>n > preparedCapacity() || preparedCapacity() == 0) return 0;
  const inBuf = inputPtr();
  const outBuf = outputPtr();
  // Header: ID1 ID2, CM 8 (deflate), no flags, MTIME 0, XFL 4 (fastest), OS 255 (unknown).
  store<u64>(outBuf, 0x00000000_00088b1f);
  store<u16>(outBuf + 8, 0xff04);
  store<u64>(inBuf + n, 0); // the matcher may read 8 bytes past the end
  bitsBegin(outBuf + 10);
  deflate(inBuf, n, table, syms);
  const end = bitsEnd();
  store<u32>(end, crc);
  store<u32>(end + 4, n);
  return <u32>(end + 8 - outBuf);
}

const TEST_FREQ: usize = memory.data(288 * 4);
const TEST_LENS: usize = memory.data(288);

/** For tests: u32[288] of counts that {@link huffmanLengths} reads. */
export function huffmanFreqPtr(): usize {
  return TEST_FREQ;
}

/**
 * For tests: the code lengths (u8[n] at the returned address) the block writer would give the first `n` (2–288)
 * counts at huffmanFreqPtr() with no length above `limit`; 0 when n is out of range or fewer than two counts are
 * non-zero, or a count is 2^23 or more.
 */
export function huffmanLengths(n: i32, limit: u32): usize {
  if (n < 2 || n > 288 || limit < 1 || limit > 15) return 0;
  let used = 0;
  for (let s = 0; s < n; s++) {
    const f = load<u32>(TEST_FREQ + (<usize>s << 2));
    if (f >= 1 << 23) return 0;
    if (f != 0) used++;
  }
  if (used < 2 || (<u32>1 << limit) < <u32>used) return 0;
  buildLengths(TEST_FREQ, n, TEST_LENS, limit);
  return TEST_LENS;
}
