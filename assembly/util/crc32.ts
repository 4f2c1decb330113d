/**
 * CRC-32 (IEEE 802.3 polynomial, reflected, as zlib's crc32) over linear memory, slice-by-8. Used to verify chunk
 * headers and payloads of the `.rawtrace` container.
 */

let table: usize = 0; // 8 tables × 256 u32, built on first use

function buildTable(): void {
  table = heap.alloc(8 * 256 * 4);
  for (let n: u32 = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    store<u32>(table + (n << 2), c);
  }
  for (let n: u32 = 0; n < 256; n++) {
    let c = load<u32>(table + (n << 2));
    for (let t: u32 = 1; t < 8; t++) {
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
export function crc32(p: usize, n: usize): u32 {
  if (table == 0) buildTable();
  const t = table;
  let c: u32 = 0xffffffff;
  const end = p + n;
  // Eight bytes per step through eight tables: ~4-6× the byte-at-a-time loop.
  while (p + 8 <= end) {
    const a = load<u32>(p) ^ c;
    const b = load<u32>(p, 4);
    c =
      load<u32>(t + (7 << 10) + ((a & 0xff) << 2)) ^
      load<u32>(t + (6 << 10) + (((a >>> 8) & 0xff) << 2)) ^
      load<u32>(t + (5 << 10) + (((a >>> 16) & 0xff) << 2)) ^
      load<u32>(t + (4 << 10) + ((a >>> 24) << 2)) ^
      load<u32>(t + (3 << 10) + ((b & 0xff) << 2)) ^
      load<u32>(t + (2 << 10) + (((b >>> 8) & 0xff) << 2)) ^
      load<u32>(t + (1 << 10) + (((b >>> 16) & 0xff) << 2)) ^
      load<u32>(t + ((b >>> 24) << 2));
    p += 8;
  }
  while (p < end) {
    c = load<u32>(t + (((c ^ load<u8>(p)) & 0xff) << 2)) ^ (c >>> 8);
    p++;
  }
  return c ^ 0xffffffff;
}
