/**
 * The payload checksum a chunk header stores (docs/format.md, "Chunk header"), by its flag bits: bit 0 CRC-32 (the
 * only checksum of format 1.0), bit 1 XXH32 with seed 0 (format 1.1), bit 2 the low 32 bits of XXH64 with seed 0
 * (format 1.2, what the writers store by default), none: no checksum (the field is 0), more than one: an invalid
 * header. Used by the TypeScript writer and by tests and tools that check or repair chunks outside the engine.
 */
import { crc32 } from "node:zlib";
import { CHUNK_FLAG_CRC, CHUNK_FLAG_XXH32, CHUNK_FLAG_XXH64 } from "./container.js";
import { xxh32 } from "./xxh32.js";
import { xxh64Low } from "./xxh64.js";

/** The three checksum bits of a chunk header's u16 flags. */
export const CHUNK_FLAG_SUMS = CHUNK_FLAG_CRC | CHUNK_FLAG_XXH32 | CHUNK_FLAG_XXH64;

/** True when the header flags `flags` set more than one checksum bit (an invalid header: readers skip the chunk). */
export function checksumBitsInvalid(flags: number): boolean {
  const sums = flags & CHUNK_FLAG_SUMS;
  return (sums & (sums - 1)) !== 0;
}

/**
 * The value the payload checksum field must hold for a chunk with header `flags` and this payload: its CRC-32, XXH32
 * or XXH64's low 32 bits (unsigned 32-bit), or 0 when no checksum bit is set. Throws a RangeError when more than one
 * is set.
 */
export function payloadChecksum(flags: number, payload: Uint8Array): number {
  const sums = flags & CHUNK_FLAG_SUMS;
  if (checksumBitsInvalid(flags)) throw new RangeError(`chunk flags set more than one checksum bit (${sums}: an invalid header)`);
  if (sums === CHUNK_FLAG_XXH64) return xxh64Low(payload);
  if (sums === CHUNK_FLAG_XXH32) return xxh32(payload);
  if (sums === CHUNK_FLAG_CRC) return crc32(payload) >>> 0;
  return 0;
}
