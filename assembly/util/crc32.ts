/**
 * CRC-32 (IEEE 802.3 polynomial, reflected, as zlib's crc32) over linear memory, slice-by-8. Used to verify chunk
 * headers and payloads of the `.rawtrace` container.
 */

// 16 tables × 256 u32 (16 KiB), built on first use.
let table: usize = 0;

function buildTable(): void {
  table = heap.alloc(16 * 256 * 4);
  for (let n: u32 = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    store<u32>(table + (n << 2), c);
  }
  for (let n: u32 = 0; n < 256; n++) {
    let c = load<u32>(table + (n << 2));
    for (let t: u32 = 1; t < 16; t++) {
      c = load<u32>(table + ((c & 0xff) << 2)) ^ (c >>> 8);
      store<u32>(table + (t << 10) + (n << 2), c);
    }
  }
}

/** Forgets the table (called after heap.reset()). */
export function crcReset(): void {
  table = 0;
}

/** CRC-32 of [p, p+n). The caller has proven the range lies inside linear memory it owns. */
// @ts-ignore: decorator
@inline export function crc32(p: usize, n: usize): u32 {
  return crc32Update(0, p, n);
}

/**
 * The CRC-32 of some bytes followed by [p, p+n), given the CRC-32 `prev` of those bytes (0 for none): a checksum
 * taken piece by piece, as zlib's crc32(prev, …).
 */
export function crc32Update(prev: u32, p: usize, n: usize): u32 {
  if (table == 0) buildTable();
  const t = table;
  let c: u32 = ~prev;
  const end = p + n;
  // Sixteen bytes per step through sixteen tables (slice-by-16): about twice the speed of slice-by-8 here.
  while (p + 16 <= end) {
    const a = load<u32>(p) ^ c;
    const b = load<u32>(p, 4);
    const d = load<u32>(p, 8);
    const e = load<u32>(p, 12);
    c =
      load<u32>(t + (15 << 10) + ((a & 0xff) << 2)) ^
      load<u32>(t + (14 << 10) + (((a >>> 8) & 0xff) << 2)) ^
      load<u32>(t + (13 << 10) + (((a >>> 16) & 0xff) << 2)) ^
      load<u32>(t + (12 << 10) + ((a >>> 24) << 2)) ^
      load<u32>(t + (11 << 10) + ((b & 0xff) << 2)) ^
      load<u32>(t + (10 << 10) + (((b >>> 8) & 0xff) << 2)) ^
      load<u32>(t + (9 << 10) + (((b >>> 16) & 0xff) << 2)) ^
      load<u32>(t + (8 << 10) + ((b >>> 24) << 2)) ^
      load<u32>(t + (7 << 10) + ((d & 0xff) << 2)) ^
      load<u32>(t + (6 << 10) + (((d >>> 8) & 0xff) << 2)) ^
      load<u32>(t + (5 << 10) + (((d >>> 16) & 0xff) << 2)) ^
      load<u32>(t + (4 << 10) + ((d >>> 24) << 2)) ^
      load<u32>(t + (3 << 10) + ((e & 0xff) << 2)) ^
      load<u32>(t + (2 << 10) + (((e >>> 8) & 0xff) << 2)) ^
      load<u32>(t + (1 << 10) + (((e >>> 16) & 0xff) << 2)) ^
      load<u32>(t + ((e >>> 24) << 2));
    p += 16;
  }
  while (p < end) {
    c = load<u32>(t + (((c ^ load<u8>(p)) & 0xff) << 2)) ^ (c >>> 8);
    p++;
  }
  return c ^ 0xffffffff;
}
