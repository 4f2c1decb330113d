/**
 * The container reader's account of chunk sequence numbers (format/container.ts, docs/format.md): which numbers were
 * seen (a bitset, at most 2^27 numbers, 16 MiB), the content fingerprint of the first chunk with each (a repeated
 * number is a duplicate only with the same content), the gaps met in pass 1 (said at its end for the chunks that never
 * came: SEQ_GAP) and the numbers whose payload failed its checksum in pass 1 (checked again in later passes).
 */
import { CHUNK_HEADER, FLAG_CRC32, FLAG_XXH32, FLAG_XXH64 } from "./container";
import { crc32 } from "../util/crc32";
import { xxh32 } from "../util/xxh32";
import { xxh64Low } from "../util/xxh64";
import { Warn } from "../util/error";
import { warn } from "../util/diag";

let seenBits: usize = 0;
let seenCap: u32 = 0; // bits
/**
 * Content fingerprint of the first chunk seen with each sequence number (u64 per seq: payload checksum, length, type),
 * so a repeated number is dropped as a duplicate only when the content is the same. Tracked for seq < 2^21 (16 MiB
 * at most); beyond that a repeated number is taken for a duplicate as before.
 */
let seenFp: usize = 0;
let seenFpCap: u32 = 0;
const FP_LIMIT: u32 = 1 << 21;

/** Sequence numbers of chunks that failed their payload checksum in pass 1 (rare: a short list). */
let badSeqs: usize = 0;
let badSeqCount: u32 = 0;
const MAX_BAD_SEQS: u32 = 4096;

/**
 * Sequence gaps seen in pass 1, said at its end (finish): file offset u64, first missing seq u32, end seq u32 (16 B
 * each). A chunk of the gap that comes later in the file (two chunks swapped, a buffer written out of order) is not
 * missing: before, the gap was said as it was met, and a reordered file reported a loss ("DATA LOST", --strict exit 6)
 * where nothing was lost.
 */
let gaps: usize = 0;
let gapCount: u32 = 0;
const MAX_GAPS: u32 = 4096;
/**
 * Longest gap whose chunks are looked for at the end (a reordered file's gaps are a few chunks long); a longer one (a
 * damaged sequence counter) is said whole. Gaps lie above every number seen before them, so together they cover the
 * bitset (at most 2^27 numbers, 16 MiB) once, but for a crafted counter wrapping at 2^32 (then at most 4,096 × 2^20
 * numbers): the recount reads it 64 numbers at a time.
 */
const MAX_GAP_RECOUNT: u32 = 1 << 20;
// Gaps past the first MAX_GAPS: summed, said after the listed ones (they were met after them).
let gapOverflow: u64 = 0;
let gapOverflowAt: u64 = 0;
let gapOverflowDetail: u32 = 0;

/** A gap [from, to) met at file offset `off` (pass 1): said at the end, in file order, for what of it never came. */
export function noteGap(off: u64, from: u32, to: u32): void {
  if (gaps == 0) gaps = heap.alloc(<usize>MAX_GAPS << 4);
  if (gapCount >= MAX_GAPS) {
    if (gapOverflow == 0) {
      gapOverflowAt = off;
      gapOverflowDetail = to - from;
    }
    gapOverflow += <u64>(to - from);
    return;
  }
  const g = gaps + (<usize>gapCount << 4);
  store<u64>(g, off);
  store<u32>(g, from, 8);
  store<u32>(g, to, 12);
  gapCount++;
}

/** Chunks of [from, to) never seen ({@link markSeen}): 64 bits of the bitset counted at once. */
function unseenIn(from: u32, to: u32): u32 {
  if (to - from > MAX_GAP_RECOUNT) return to - from;
  const end = to < seenCap ? to : seenCap; // numbers past the bitset were never tracked: unseen
  let seen: u32 = 0;
  let q = from;
  while (q < end && (q & 63) != 0) {
    seen += (load<u8>(seenBits + (q >> 3)) >> (q & 7)) & 1;
    q++;
  }
  // The bitset's bytes are little-endian bit order (number q: byte q >> 3, bit q & 7): a u64 holds numbers q..q+63.
  while (q + 64 <= end) {
    seen += <u32>popcnt<u64>(load<u64>(seenBits + (q >> 3)));
    q += 64;
  }
  while (q < end) {
    seen += (load<u8>(seenBits + (q >> 3)) >> (q & 7)) & 1;
    q++;
  }
  return to - from - seen;
}

/** End of pass 1: each gap's chunks that never came, said where the gap was met, in file order. */
export function sayGaps(): void {
  for (let i: u32 = 0; i < gapCount; i++) {
    const g = gaps + (<usize>i << 4);
    const missing = unseenIn(load<u32>(g, 8), load<u32>(g, 12));
    if (missing > 0) warn(Warn.SEQ_GAP, load<u64>(g), missing, <u64>missing);
  }
  if (gapOverflow != 0) warn(Warn.SEQ_GAP, gapOverflowAt, gapOverflowDetail, gapOverflow);
  gapCount = 0;
  gapOverflow = 0;
}

/** Pass 1: chunk `seq` failed its payload checksum (listed up to MAX_BAD_SEQS, counted beyond). */
export function badSeq(seq: u32): void {
  if (badSeqs == 0) badSeqs = heap.alloc(<usize>MAX_BAD_SEQS << 2);
  if (badSeqCount < MAX_BAD_SEQS) store<u32>(badSeqs + (<usize>badSeqCount << 2), seq);
  badSeqCount++;
}

/** Whether chunk `seq` is listed as failed in pass 1 (a later pass checks its payload again). */
export function isBadSeq(seq: u32): bool {
  const n = min(badSeqCount, MAX_BAD_SEQS);
  for (let i: u32 = 0; i < n; i++) if (load<u32>(badSeqs + (<usize>i << 2)) == seq) return true;
  return false;
}

/** Marks chunk `seq` as seen; returns true when it was seen before. */
export function markSeen(seq: u32): bool {
  if (seq >= seenCap) {
    // Sequence numbers are untrusted: grow the bitset only up to 2^27 chunks (16 MiB), beyond that don't track.
    if (seq >= 1 << 27) return false;
    let cap = seenCap;
    while (cap <= seq) cap <<= 1;
    const bits = heap.alloc(<usize>cap >> 3);
    memory.fill(bits, 0, <usize>cap >> 3);
    memory.copy(bits, seenBits, <usize>seenCap >> 3);
    seenBits = bits;
    seenCap = cap;
  }
  const a = seenBits + (seq >> 3);
  const m = <u8>(<u32>1 << (seq & 7));
  const b = load<u8>(a);
  store<u8>(a, b | m);
  return (b & m) != 0;
}

/**
 * Content fingerprint of a chunk: its payload checksum (the header's, else the low 32 bits of the payload's XXH64,
 * as new writers store it), length and type. `sums` is the header's checksum bit, one at most. Two copies of a chunk
 * that carry different checksums (or one none) fingerprint differently here; {@link sameAsFirstAnyKind} settles
 * those.
 */
export function fingerprint(c: usize, type: u32, sums: u32, len: u32): u64 {
  const sum = sums != 0 ? load<u32>(c, 16) : xxh64Low(c + CHUNK_HEADER, len);
  return (<u64>sum) | (<u64>(len ^ (type << 28)) << 32);
}

/**
 * For a chunk whose sequence number was seen before: true when its content is that of the first chunk with `seq`,
 * whichever payload checksum either copy carries. Its fingerprint `fp` ({@link fingerprint} with the header's
 * checksum bit `sums`) is compared first; when that differs, the payload's other two checksums, since the first copy
 * was fingerprinted by the checksum it carried, or by XXH64 when it carried none (a chunk written with its checksum
 * and again without, as `rt_writer_chunk_opt` can, or by writers of two format versions). Only repeated numbers pay
 * for these (duplicates and reuses are rare).
 */
export function sameAsFirstAnyKind(seq: u32, c: usize, type: u32, sums: u32, len: u32, fp: u64): bool {
  if (sameAsFirst(seq, fp, false)) return true;
  const used = sums != 0 ? sums : FLAG_XXH64; // the kind `fp` holds (verified in pass 1)
  const p = c + CHUNK_HEADER;
  const tail = <u64>(len ^ (type << 28)) << 32;
  return (
    (used != FLAG_XXH64 && sameAsFirst(seq, tail | <u64>xxh64Low(p, len), false)) ||
    (used != FLAG_XXH32 && sameAsFirst(seq, tail | <u64>xxh32(p, len), false)) ||
    (used != FLAG_CRC32 && sameAsFirst(seq, tail | <u64>crc32(p, len), false))
  );
}

/**
 * Stores the fingerprint of the first chunk with `seq`, or compares with it: returns true when `seq` was seen with
 * the same content (or is beyond the tracked range), false when the content differs.
 */
export function sameAsFirst(seq: u32, fp: u64, first: bool): bool {
  if (seq >= FP_LIMIT) return true;
  if (seq >= seenFpCap) {
    if (!first) return true; // first copy was not tracked (cannot happen: tracked when first seen)
    let cap = seenFpCap == 0 ? <u32>1 << 12 : seenFpCap;
    while (cap <= seq) cap <<= 1;
    const t = heap.alloc(<usize>cap << 3);
    memory.fill(t, 0, <usize>cap << 3);
    if (seenFp != 0) memory.copy(t, seenFp, <usize>seenFpCap << 3);
    seenFp = t;
    seenFpCap = cap;
  }
  const a = seenFp + (<usize>seq << 3);
  if (first) {
    store<u64>(a, fp);
    return true;
  }
  return load<u64>(a) == fp;
}

/** A new pass over a file: no number seen, no gap (the numbers that failed in pass 1 are kept for the later passes). */
export function seqReset(): void {
  gapCount = 0;
  gapOverflow = 0;
  if (seenBits == 0) {
    seenCap = 1 << 16;
    seenBits = heap.alloc(<usize>seenCap >> 3);
  }
  memory.fill(seenBits, 0, <usize>seenCap >> 3);
  if (seenFp != 0) memory.fill(seenFp, 0, <usize>seenFpCap << 3);
}

/** Forgets the tables (after heap.reset()). */
export function seqForget(): void {
  seenBits = 0;
  seenCap = 0;
  seenFp = 0;
  seenFpCap = 0;
  badSeqs = 0;
  badSeqCount = 0;
  gaps = 0;
  gapCount = 0;
}

/** More numbers failed in pass 1 than are listed: every later pass verifies every payload. */
export function badSeqsOverflow(): bool {
  return badSeqCount > MAX_BAD_SEQS;
}
