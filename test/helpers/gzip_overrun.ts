/**
 * A gzip member whose damaged data decodes on as garbage past the member's length before a block fails, made on
 * purpose instead of found by trying damage at random (where that happens depends on zlib's output): the first
 * `keep` bytes of `part` as DEFLATE blocks, then blocks that decode to `garbage` bytes of 0x41 that are not the part's,
 * then a block of the invalid type 3, then the trailer of the whole `part` (its CRC-32 and length, as the member
 * before the damage had it). src/core/gunzip.ts reads the member's bytes up to the bad block and finds the next member
 * by its magic; with `keep + garbage > part.length` the member gave more bytes than its trailer's length.
 */
import { constants, crc32, deflateRawSync } from "node:zlib";

/** The damaged member (header, data, trailer) standing for gzip(part); see the module's comment. */
export function overrunMember(part: Uint8Array, keep: number, garbage: number): Buffer {
  const flush = { finishFlush: constants.Z_SYNC_FLUSH }; // non-final blocks ending on a byte: streams that concatenate
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
  const good = deflateRawSync(part.subarray(0, keep), flush);
  const bad = deflateRawSync(Buffer.alloc(garbage, 0x41), flush);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(part), 0);
  trailer.writeUInt32LE(part.length % 2 ** 32, 4);
  // 0x07: BFINAL 1, BTYPE 3 (reserved): "invalid block type".
  return Buffer.concat([header, good, bad, Buffer.from([0x07]), trailer]);
}
