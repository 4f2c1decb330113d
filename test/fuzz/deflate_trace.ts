/**
 * A small DEFLATE reader (RFC 1951) for the fuzz tests: it walks a gzip member's blocks and symbols to count what the
 * encoder used (block types, matches at the 32,768-byte distance limit, matches of the 258-byte and 4-byte length
 * limits), so the deflate fuzz target can show that its inputs reach those limits. Not a decoder for users: it
 * trusts its input (members our encoder just wrote) and checks the output against Node's gunzip elsewhere.
 */

/** What one member's deflate data holds. */
export interface DeflateUse {
  /** Blocks by BTYPE: stored, fixed Huffman, dynamic Huffman. */
  stored: number;
  fixed: number;
  dynamic: number;
  /** Matches by length 4 (the shortest our encoder writes: it compares 4 bytes), by length 258, at distance 32,768; all matches. */
  len4: number;
  len258: number;
  dist32768: number;
  matches: number;
  /** Bytes the data stands for (literals, match lengths, stored bytes): the input's length when read right. */
  bytes: number;
}

const LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
  4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** Canonical Huffman decoding table: code length → (first code, first index), symbols sorted by code. */
interface Huff {
  counts: number[];
  symbols: number[];
}

function huff(lengths: ArrayLike<number>): Huff {
  const counts = new Array<number>(16).fill(0);
  for (let i = 0; i < lengths.length; i++) counts[lengths[i]]++;
  counts[0] = 0;
  const offs = [0, 0];
  for (let l = 1; l < 16; l++) offs[l + 1] = offs[l] + counts[l];
  const symbols: number[] = [];
  for (let i = 0; i < lengths.length; i++) if (lengths[i]) symbols[offs[lengths[i]]++] = i;
  return { counts, symbols };
}

/** Walks the deflate data of gzip member `m` (a plain 10-byte header) and counts what it uses. */
export function deflateUse(m: Uint8Array): DeflateUse {
  const u: DeflateUse = { stored: 0, fixed: 0, dynamic: 0, len4: 0, len258: 0, dist32768: 0, matches: 0, bytes: 0 };
  let pos = 10;
  let bit = 0;
  const bits = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++) {
      v |= ((m[pos] >> bit) & 1) << i;
      if (++bit === 8) (bit = 0), pos++;
    }
    return v;
  };
  const decode = (h: Huff): number => {
    let code = 0, first = 0, index = 0;
    for (let l = 1; l < 16; l++) {
      code |= bits(1);
      const c = h.counts[l];
      if (code - first < c) return h.symbols[index + code - first];
      index += c;
      first = (first + c) << 1;
      code <<= 1;
    }
    throw new Error(`bad Huffman code at byte ${pos}`);
  };
  const fixedLit = huff(Array.from({ length: 288 }, (_, i) => (i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8)));
  const fixedDist = huff(new Array<number>(30).fill(5));
  let last = 0;
  while (!last) {
    last = bits(1);
    const type = bits(2);
    if (type === 0) {
      u.stored++;
      if (bit) (bit = 0), pos++;
      const len = m[pos] | (m[pos + 1] << 8);
      pos += 4 + len;
      u.bytes += len;
      continue;
    }
    let lit = fixedLit, dist = fixedDist;
    if (type === 1) u.fixed++;
    else if (type === 2) {
      u.dynamic++;
      const hlit = bits(5) + 257, hdist = bits(5) + 1, hclen = bits(4) + 4;
      const cl = new Array<number>(19).fill(0);
      for (let i = 0; i < hclen; i++) cl[CL_ORDER[i]] = bits(3);
      const clh = huff(cl);
      const lens: number[] = [];
      while (lens.length < hlit + hdist) {
        const s = decode(clh);
        if (s < 16) lens.push(s);
        else if (s === 16) lens.push(...new Array<number>(3 + bits(2)).fill(lens[lens.length - 1]));
        else lens.push(...new Array<number>(s === 17 ? 3 + bits(3) : 11 + bits(7)).fill(0));
      }
      lit = huff(lens.slice(0, hlit));
      dist = huff(lens.slice(hlit));
    } else throw new Error(`block type 3 at byte ${pos}`);
    for (;;) {
      const s = decode(lit);
      if (s < 256) {
        u.bytes++;
        continue;
      }
      if (s === 256) break;
      const len = LEN_BASE[s - 257] + bits(LEN_EXTRA[s - 257]);
      const ds = decode(dist);
      const d = DIST_BASE[ds] + bits(DIST_EXTRA[ds]);
      u.matches++;
      u.bytes += len;
      if (len === 4) u.len4++;
      if (len === 258) u.len258++;
      if (d === 32768) u.dist32768++;
    }
  }
  return u;
}
