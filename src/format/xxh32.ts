/**
 * XXH32 (xxHash, 32-bit variant), written from the public specification (Cyan4973/xxHash, doc/xxhash_spec.md,
 * "XXH32 Algorithm Description"). The `.rawtrace` container stores it, seed 0, as the payload checksum of chunks
 * whose header flag bit 1 is set (docs/format.md). Same algorithm as assembly/util/xxh32.ts (the reader) and
 * `rt_xxh32` in collectors/common/rawtrace_checksum.c; test/format/xxh32.test.ts checks that all three agree.
 */

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

/** 32-bit rotate left of `x` by `r` bits (0 < r < 32); the result is a signed 32-bit number. */
function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** One stripe round of the specification: (acc + lane × P2) <<< 13, × P1 (all mod 2^32). */
function round(acc: number, lane: number): number {
  return Math.imul(rotl((acc + Math.imul(lane, P2)) | 0, 13), P1);
}

/**
 * XXH32 of `data` with `seed` (an unsigned 32-bit number; the container uses 0). Returns the digest as an unsigned
 * 32-bit number, the value the container stores little-endian.
 */
export function xxh32(data: Uint8Array, seed = 0): number {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = data.length;
  let p = 0;
  let acc: number;
  if (n >= 16) {
    let a1 = (seed + P1 + P2) | 0;
    let a2 = (seed + P2) | 0;
    let a3 = seed | 0;
    let a4 = (seed - P1) | 0;
    for (const last = n - 16; p <= last; p += 16) {
      a1 = round(a1, dv.getUint32(p, true));
      a2 = round(a2, dv.getUint32(p + 4, true));
      a3 = round(a3, dv.getUint32(p + 8, true));
      a4 = round(a4, dv.getUint32(p + 12, true));
    }
    acc = (rotl(a1, 1) + rotl(a2, 7) + rotl(a3, 12) + rotl(a4, 18)) | 0;
  } else {
    acc = (seed + P5) | 0;
  }
  acc = (acc + n) | 0; // the length's low 32 bits (a Uint8Array is shorter than 2^32 here anyway)
  for (; p + 4 <= n; p += 4) acc = Math.imul(rotl((acc + Math.imul(dv.getUint32(p, true), P3)) | 0, 17), P4);
  for (; p < n; p++) acc = Math.imul(rotl((acc + Math.imul(data[p], P5)) | 0, 11), P1);
  acc ^= acc >>> 15;
  acc = Math.imul(acc, P2);
  acc ^= acc >>> 13;
  acc = Math.imul(acc, P3);
  acc ^= acc >>> 16;
  return acc >>> 0;
}
