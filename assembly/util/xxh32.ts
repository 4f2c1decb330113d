/**
 * XXH32 (xxHash, 32-bit variant) over linear memory, written from the public specification (Cyan4973/xxHash,
 * doc/xxhash_spec.md, "XXH32 Algorithm Description"). The `.rawtrace` container uses it with seed 0 as the payload
 * checksum of chunks whose header flag bit 1 is set (docs/format.md): unlike table-driven CRC-32 it needs no memory
 * look-ups, only 32-bit multiplies, so it runs several times faster in WebAssembly.
 *
 * The four accumulators of the stripe loop live in the four lanes of one v128: a 16-byte stripe is one unaligned
 * v128 load (lane N = little-endian u32 N of the stripe, as the spec reads them), one `i32x4.mul` + `i32x4.add`,
 * a rotate made of two shifts, and another `i32x4.mul`. The tail (< 16 bytes) is scalar.
 */

/** The five primes of the specification. */
const P1: u32 = 0x9e3779b1;
const P2: u32 = 0x85ebca77;
const P3: u32 = 0xc2b2ae3d;
const P4: u32 = 0x27d4eb2f;
const P5: u32 = 0x165667b1;

/**
 * XXH32 of the `n` bytes at [p, p+n) with `seed` (the container uses 0). The caller has proven that the range lies
 * inside linear memory it owns: the loads below are raw, and read no byte outside [p, p+n).
 */
export function xxh32(p: usize, n: usize, seed: u32 = 0): u32 {
  const end = p + n;
  let acc: u32;
  if (n >= 16) {
    // Step 1: acc1 = seed + P1 + P2, acc2 = seed + P2, acc3 = seed, acc4 = seed - P1 (mod 2^32), one per lane.
    let v = i32x4.add(i32x4.splat(seed), i32x4(0x24234428, 0x85ebca77, 0, 0x61c8864f));
    const m1 = i32x4.splat(P1);
    const m2 = i32x4.splat(P2);
    // Step 2: whole stripes only, four per round while 64 bytes are left (the loop's own work — the bound test, the
    // engine's stack check, the pointer — paid once per 64 bytes), then one per round; p + 16 <= end holds on entry.
    if (n >= 64) {
      const last4 = end - 64; // ≥ p: no wrap
      while (p <= last4) {
        v = i32x4.add(v, i32x4.mul(v128.load(p), m2));
        v = v128.or(i32x4.shl(v, 13), i32x4.shr_u(v, 19));
        v = i32x4.mul(v, m1);
        v = i32x4.add(v, i32x4.mul(v128.load(p, 16), m2));
        v = v128.or(i32x4.shl(v, 13), i32x4.shr_u(v, 19));
        v = i32x4.mul(v, m1);
        v = i32x4.add(v, i32x4.mul(v128.load(p, 32), m2));
        v = v128.or(i32x4.shl(v, 13), i32x4.shr_u(v, 19));
        v = i32x4.mul(v, m1);
        v = i32x4.add(v, i32x4.mul(v128.load(p, 48), m2));
        v = v128.or(i32x4.shl(v, 13), i32x4.shr_u(v, 19));
        v = i32x4.mul(v, m1);
        p += 64;
      }
    }
    const last = end - 16;
    while (p <= last) {
      v = i32x4.add(v, i32x4.mul(v128.load(p), m2));
      v = v128.or(i32x4.shl(v, 13), i32x4.shr_u(v, 19));
      v = i32x4.mul(v, m1);
      p += 16;
    }
    // Step 3: convergence.
    acc =
      rotl<u32>(i32x4.extract_lane(v, 0), 1) +
      rotl<u32>(i32x4.extract_lane(v, 1), 7) +
      rotl<u32>(i32x4.extract_lane(v, 2), 12) +
      rotl<u32>(i32x4.extract_lane(v, 3), 18);
  } else {
    acc = seed + P5;
  }
  // Step 4: the length (its low 32 bits).
  acc += <u32>n;
  // Step 5: what is left (< 16 bytes): 4-byte lanes, then single bytes.
  while (p + 4 <= end) {
    acc = rotl<u32>(acc + load<u32>(p) * P3, 17) * P4;
    p += 4;
  }
  while (p < end) {
    acc = rotl<u32>(acc + <u32>load<u8>(p) * P5, 11) * P1;
    p++;
  }
  // Step 6: avalanche.
  acc ^= acc >>> 15;
  acc *= P2;
  acc ^= acc >>> 13;
  acc *= P3;
  acc ^= acc >>> 16;
  return acc;
}
