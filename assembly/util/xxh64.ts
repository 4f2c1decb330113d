/**
 * XXH64 (xxHash, 64-bit variant) over linear memory, written from the public specification (Cyan4973/xxHash,
 * doc/xxhash_spec.md, "XXH64 Algorithm Description"). The `.rawtrace` container stores the low 32 bits of its
 * seed-0 digest as the payload checksum of chunks whose header flag bit 2 is set (format 1.2, docs/format.md).
 *
 * Why it replaced XXH32 as the writers' default: XXH32's stripe loop is one chain of dependent 32-bit multiplies per
 * lane (7 GB/s here even with its four lanes in one v128), while XXH64 takes 32 bytes per round in four independent
 * scalar 64-bit chains — ≈ 22 GB/s in WebAssembly on the same machine (docs/performance/core.md, "Session 19").
 * The index pass checksums every payload, so this is a tenth of a conversion's CPU time.
 */

const Q1: u64 = 0x9e3779b185ebca87;
const Q2: u64 = 0xc2b2ae3d27d4eb4f;
const Q3: u64 = 0x165667b19e3779f9;
const Q4: u64 = 0x85ebca77c2b2ae63;
const Q5: u64 = 0x27d4eb2f165667c5;

/** One stripe round of the specification: (acc + lane × Q2) <<< 31, × Q1 (all mod 2^64). */
// @ts-ignore: decorator
@inline function round(acc: u64, lane: u64): u64 {
  return rotl<u64>(acc + lane * Q2, 31) * Q1;
}

/** Folds accumulator `v` into `acc` (step 3 of the specification). */
// @ts-ignore: decorator
@inline function merge(acc: u64, v: u64): u64 {
  return (acc ^ round(0, v)) * Q1 + Q4;
}

/**
 * XXH64 of the `n` bytes at [p, p+n) with seed 0. The caller has proven that the range lies inside linear memory it
 * owns: the loads below are raw (little-endian, unaligned) and read no byte outside [p, p+n).
 */
export function xxh64(p: usize, n: usize): u64 {
  const end = p + n;
  let h: u64;
  if (n >= 32) {
    // Step 1 with seed 0, then step 2 over whole 32-byte stripes: four independent chains, so the multiplies of
    // one round overlap (XXH32's single v128 chain waits on each multiply in turn).
    let v1: u64 = Q1 + Q2;
    let v2: u64 = Q2;
    let v3: u64 = 0;
    let v4: u64 = 0 - Q1;
    const last = end - 32; // ≥ p: no wrap
    while (p <= last) {
      v1 = round(v1, load<u64>(p));
      v2 = round(v2, load<u64>(p, 8));
      v3 = round(v3, load<u64>(p, 16));
      v4 = round(v4, load<u64>(p, 24));
      p += 32;
    }
    // Step 3: convergence.
    h = rotl<u64>(v1, 1) + rotl<u64>(v2, 7) + rotl<u64>(v3, 12) + rotl<u64>(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = Q5;
  }
  // Step 4: the length, then what is left (< 32 bytes): 8-byte lanes, one 4-byte lane, single bytes.
  h += <u64>n;
  while (p + 8 <= end) {
    h = rotl<u64>(h ^ round(0, load<u64>(p)), 27) * Q1 + Q4;
    p += 8;
  }
  if (p + 4 <= end) {
    h = rotl<u64>(h ^ (<u64>load<u32>(p) * Q1), 23) * Q2 + Q3;
    p += 4;
  }
  while (p < end) {
    h = rotl<u64>(h ^ (<u64>load<u8>(p) * Q5), 11) * Q1;
    p++;
  }
  // Step 5: avalanche.
  h ^= h >> 33;
  h *= Q2;
  h ^= h >> 29;
  h *= Q3;
  h ^= h >> 32;
  return h;
}

/** The container's payload checksum for flag bit 2: the low 32 bits of {@link xxh64}. */
// @ts-ignore: decorator
@inline export function xxh64Low(p: usize, n: usize): u32 {
  return <u32>xxh64(p, n);
}
