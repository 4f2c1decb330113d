/**
 * The payload checksum a chunk header stores (docs/format.md, "Chunk header"), by its flag bits: bit 0 CRC-32 (the
 * only checksum of format 1.0), bit 1 XXH32 with seed 0 (format 1.1, what the writers store), neither: none (the
 * field is 0), both: an invalid header. Used by the TypeScript writer and by tests and tools that check or repair
 * chunks outside the engine.
 */
import { crc32 } from "node:zlib";
import { CHUNK_FLAG_CRC, CHUNK_FLAG_XXH32 } from "./container.js";
import { xxh32 } from "./xxh32.js";

/** The two checksum bits of a chunk header's u16 flags. */
export const CHUNK_FLAG_SUMS = CHUNK_FLAG_CRC | CHUNK_FLAG_XXH32;

/**
 * The value the payload checksum field must hold for a chunk with header `flags` and this payload: its CRC-32 or
 * XXH32 (unsigned 32-bit), or 0 when neither bit is set. Throws a RangeError when both bits are set.
 */
export function payloadChecksum(flags: number, payload: Uint8Array): number {
  const sums = flags & CHUNK_FLAG_SUMS;
  if (sums === CHUNK_FLAG_SUMS) throw new RangeError("chunk flags set both CRC-32 and XXH32 (invalid header)");
  if (sums === CHUNK_FLAG_XXH32) return xxh32(payload);
  if (sums === CHUNK_FLAG_CRC) return crc32(payload) >>> 0;
  return 0;
}
