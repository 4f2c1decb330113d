/**
 * DEFLATE block writer (RFC 1951 §3.2.3–3.2.7): one block of LZ77 symbols is written as whichever of a dynamic
 * Huffman block, a fixed Huffman block or stored blocks (the block's raw bytes, 65,535 at most per stored block)
 * takes the fewest bits. Bits go out least significant first through a 64-bit buffer that is stored 8 bytes at a
 * time and advanced by whole bytes, so the output needs 8 bytes of slack past the end.
 *
 * Symbols (u32 each), made by {@link literalSymbol} and {@link matchSymbol}: a row of SYM_PUT (the literal byte, or
 * 256 + match length - 3), a distance slot (NO_DIST for a literal) and distance - 1 (0 for a literal), so that the
 * writer puts any symbol with the same two lookups and no branch.
 */
import { buildLengths } from "./huffman";
import {
  assignCodes, LEN_SLOT, LEN_EXTRA, LEN_BASE, DIST_EXTRA, DIST_BASE,
  FIXED_LIT, FIXED_LIT_LEN, FIXED_DIST, FIXED_DIST_LEN,
} from "./tables";

/** u32[288]: literal/length symbol counts of the block being gathered (the matcher counts, the writer clears). */
export const LIT_FREQ: usize = memory.data(288 * 4);
/** u32[32]: distance slot counts of the block being gathered. */
export const DIST_FREQ: usize = memory.data(32 * 4);

const LIT_LEN: usize = memory.data(288);
const DIST_LEN: usize = memory.data(32);
const LIT_CODE: usize = memory.data(288 * 4);
const DIST_CODE: usize = memory.data(32 * 4);
const CL_FREQ: usize = memory.data(19 * 4);
const CL_LEN: usize = memory.data(19);
const CL_CODE: usize = memory.data(19 * 4);
const ALL_LEN: usize = memory.data(288 + 32); // literal/length then distance lengths, as the header sends them
const RLE: usize = memory.data((288 + 32) * 2); // code-length symbols: symbol | extra value << 5
/** Order the code-length code's lengths are sent in (RFC 1951 §3.2.7). */
const CL_ORDER: usize = memory.data<u8>([16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]);

/** The distance slot of a literal's symbol: its DIST_PUT row is all zero (no code, no bits). */
const NO_DIST: u32 = 31;

/** A literal's symbol (`b` < 256). */
// @ts-ignore: decorator
@inline export function literalSymbol(b: u32): u32 {
  return (b << 20) | (NO_DIST << 15);
}

/** A match's symbol: length - 3 (`l`), the distance slot (`ds`, tables.ts) of distance - 1 (`d`). */
// @ts-ignore: decorator
@inline export function matchSymbol(l: u32, ds: u32, d: u32): u32 {
  return ((256 + l) << 20) | (ds << 15) | d;
}

/**
 * u32[512] per block: the bits a symbol's SYM_PUT row puts (at most 15 + 5) | their count << 24: rows 0–255 the
 * literals' codes, rows 256–511 each match length's code (from the literal/length code) and extra bits.
 */
const SYM_PUT: usize = memory.data(512 * 4);
/**
 * u64[32] per block: each distance slot's code | code length << 16 | code length + extra bits << 24 | base << 32;
 * rows 30 and 31 (NO_DIST) are zero.
 */
const DIST_PUT: usize = memory.data(32 * 8);

/** Next output byte. */
let out: usize = 0;
/** Bits not yet stored, least significant first, and how many (0–7 between writes). */
let bitBuf: u64 = 0;
let bitCount: u32 = 0;

/** Starts writing at `p` (byte aligned). */
export function bitsBegin(p: usize): void {
  out = p;
  bitBuf = 0;
  bitCount = 0;
}

/** Pads the last byte with zero bits; returns the end of the output. */
export function bitsEnd(): usize {
  store<u64>(out, bitBuf);
  out += (bitCount + 7) >> 3;
  bitBuf = 0;
  bitCount = 0;
  return out;
}

// @ts-ignore: decorator
@inline function put(bits: u64, n: u32): void {
  bitBuf |= bits << bitCount;
  bitCount += n;
  store<u64>(out, bitBuf);
  out += bitCount >> 3;
  bitBuf >>= <u64>(bitCount & ~7);
  bitCount &= 7;
}

/** Makes sure at least two symbols of `freq` (u32[n]) are counted: a code of one symbol is not complete. */
function atLeastTwo(freq: usize, n: i32): void {
  let used = 0;
  for (let s = 0; s < n; s++) if (load<u32>(freq + (<usize>s << 2)) != 0) used++;
  for (let s = 0; used < 2; s++) {
    if (load<u32>(freq + (<usize>s << 2)) == 0) {
      store<u32>(freq + (<usize>s << 2), 1);
      used++;
    }
  }
}

/** Bits of the counted symbols' codes and extra bits under the code lengths `litLen` and `distLen`. */
function dataBits(litLen: usize, distLen: usize): u64 {
  let bits: u64 = 0;
  for (let s = 0; s < 286; s++) {
    const f = <u64>load<u32>(LIT_FREQ + (<usize>s << 2));
    let l = <u64>load<u8>(litLen + s);
    if (s >= 257) l += <u64>load<u8>(LEN_EXTRA + (s - 257));
    bits += f * l;
  }
  for (let s = 0; s < 30; s++) {
    bits += <u64>load<u32>(DIST_FREQ + (<usize>s << 2)) * (<u64>load<u8>(distLen + s) + <u64>load<u8>(DIST_EXTRA + s));
  }
  return bits;
}

/** Run-length codes the n code lengths of ALL_LEN (RFC 1951 §3.2.7: 16 repeats, 17 and 18 zero runs); returns the count. */
function runLengths(n: i32): i32 {
  memory.fill(CL_FREQ, 0, 19 * 4);
  let k = 0;
  let i = 0;
  while (i < n) {
    const v = <u32>load<u8>(ALL_LEN + i);
    let r = 1;
    while (i + r < n && <u32>load<u8>(ALL_LEN + i + r) == v) r++;
    i += r;
    if (v == 0) {
      while (r >= 11) {
        const t = min(r, 138);
        store<u16>(RLE + (<usize>(k++) << 1), <u16>(18 | ((t - 11) << 5)));
        r -= t;
      }
      if (r >= 3) {
        store<u16>(RLE + (<usize>(k++) << 1), <u16>(17 | ((r - 3) << 5)));
        r = 0;
      }
    } else {
      store<u16>(RLE + (<usize>(k++) << 1), <u16>v);
      r--;
      while (r >= 3) {
        const t = min(r, 6);
        store<u16>(RLE + (<usize>(k++) << 1), <u16>(16 | ((t - 3) << 5)));
        r -= t;
      }
    }
    while (r > 0) {
      store<u16>(RLE + (<usize>(k++) << 1), <u16>v);
      r--;
    }
  }
  for (let j = 0; j < k; j++) {
    const s = <usize>(load<u16>(RLE + (<usize>j << 1)) & 31);
    store<u32>(CL_FREQ + (s << 2), load<u32>(CL_FREQ + (s << 2)) + 1);
  }
  return k;
}

/** Extra bits after code-length symbol s (16: 2, 17: 3, 18: 7). */
// @ts-ignore: decorator
@inline function clExtra(s: u32): u32 {
  return s == 16 ? 2 : s == 17 ? 3 : s == 18 ? 7 : 0;
}

/** Fills SYM_PUT and DIST_PUT from the codes `lit` and `dist` (u32: reversed code | length << 16). */
function putTables(lit: usize, dist: usize): void {
  for (let b: usize = 0; b < 256; b++) {
    const e = load<u32>(lit + (b << 2));
    store<u32>(SYM_PUT + (b << 2), (e & 0xffff) | ((e >> 16) << 24));
  }
  for (let l: u32 = 0; l < 256; l++) {
    const ls = <usize>load<u8>(LEN_SLOT + l);
    const e = load<u32>(lit + ((257 + ls) << 2));
    const ln = e >> 16;
    const bits = (e & 0xffff) | ((l - <u32>load<u16>(LEN_BASE + (ls << 1))) << ln);
    store<u32>(SYM_PUT + (<usize>(256 + l) << 2), bits | ((ln + <u32>load<u8>(LEN_EXTRA + ls)) << 24));
  }
  for (let ds: usize = 0; ds < 30; ds++) {
    const f = load<u32>(dist + (ds << 2));
    const dn = <u64>(f >> 16);
    store<u64>(DIST_PUT + (ds << 3), <u64>(f & 0xffff) | (dn << 16) | ((dn + <u64>load<u8>(DIST_EXTRA + ds)) << 24) |
      (<u64>load<u16>(DIST_BASE + (ds << 1)) << 32));
  }
  store<u64>(DIST_PUT + (30 << 3), 0);
  store<u64>(DIST_PUT + (31 << 3), 0);
}

/** Writes the symbols [syms, syms + 4n) with the codes `lit` and `dist` (u32: reversed code | length << 16). */
function writeSymbols(syms: usize, n: i32, lit: usize, dist: usize): void {
  putTables(lit, dist);
  let o = out;
  let b = bitBuf;
  let c = <u64>bitCount;
  const end = syms + (<usize>n << 2);
  for (let p = syms; p < end; p += 4) {
    // No branch on the kind of symbol (literals and matches alternate unpredictably): a literal's distance row is
    // zero and adds nothing. At most 20 + 28 bits, which fit above the buffer's 0–7 pending bits.
    const s = load<u32>(p);
    const a = load<u32>(SYM_PUT + (<usize>(s >> 20) << 2));
    const dp = load<u64>(DIST_PUT + (<usize>((s >> 15) & 31) << 3));
    const dbits = (dp & 0xffff) | (<u64>((s & 0x7fff) - <u32>(dp >> 32)) << ((dp >> 16) & 0xff));
    const an = <u64>(a >> 24);
    b |= (<u64>(a & 0xffffff) | (dbits << an)) << c;
    c += an + ((dp >> 24) & 0xff);
    store<u64>(o, b);
    o += <usize>(c >> 3);
    b >>= c & ~7;
    c &= 7;
  }
  out = o;
  bitBuf = b;
  bitCount = <u32>c;
}

/** Writes `len` raw bytes from `raw` as stored blocks, the last one final when `last`. */
function writeStored(raw: usize, len: usize, last: bool): void {
  do {
    const t = min<usize>(len, 65535);
    put(last && t == len ? 1 : 0, 3);
    out += (bitCount + 7) >> 3; // the byte holding the header bits (already stored by put) plus zero padding
    bitBuf = 0;
    bitCount = 0;
    store<u16>(out, <u16>t);
    store<u16>(out, <u16>~t, 2);
    memory.copy(out + 4, raw, t);
    out += 4 + t;
    raw += t;
    len -= t;
  } while (len > 0);
}

/**
 * Writes one block: the `n` symbols at `syms` (counted in LIT_FREQ and DIST_FREQ, which it then clears) that
 * stand for the `rawLen` input bytes at `raw`; `last` sets BFINAL.
 */
export function writeBlock(syms: usize, n: i32, raw: usize, rawLen: usize, last: bool): void {
  store<u32>(LIT_FREQ + (256 << 2), 1); // end of block
  atLeastTwo(LIT_FREQ, 286);
  atLeastTwo(DIST_FREQ, 30);
  buildLengths(LIT_FREQ, 286, LIT_LEN, 15);
  buildLengths(DIST_FREQ, 30, DIST_LEN, 15);
  let hlit = 286;
  while (load<u8>(LIT_LEN + hlit - 1) == 0) hlit--;
  let hdist = 30;
  while (load<u8>(DIST_LEN + hdist - 1) == 0) hdist--;
  memory.copy(ALL_LEN, LIT_LEN, hlit);
  memory.copy(ALL_LEN + hlit, DIST_LEN, hdist);
  const nrle = runLengths(hlit + hdist);
  atLeastTwo(CL_FREQ, 19);
  buildLengths(CL_FREQ, 19, CL_LEN, 7);
  let hclen = 19;
  while (hclen > 4 && load<u8>(CL_LEN + load<u8>(CL_ORDER + hclen - 1)) == 0) hclen--;
  let header: u64 = 14 + 3 * <u64>hclen;
  for (let j = 0; j < nrle; j++) {
    const s = <u32>(load<u16>(RLE + (<usize>j << 1)) & 31);
    header += <u64>load<u8>(CL_LEN + s) + <u64>clExtra(s);
  }
  const dynBits = 3 + header + dataBits(LIT_LEN, DIST_LEN);
  const fixedBits = 3 + dataBits(FIXED_LIT_LEN, FIXED_DIST_LEN);
  const storedBits = (<u64>rawLen + 5 * (<u64>rawLen / 65535 + 1)) * 8 + 7;
  const fin: u64 = last ? 1 : 0;
  if (storedBits < dynBits && storedBits < fixedBits) {
    writeStored(raw, rawLen, last);
  } else if (fixedBits <= dynBits) {
    put(fin | (1 << 1), 3);
    writeSymbols(syms, n, FIXED_LIT, FIXED_DIST);
    put(<u64>(load<u32>(FIXED_LIT + (256 << 2)) & 0xffff), load<u32>(FIXED_LIT + (256 << 2)) >> 16);
  } else {
    put(fin | (2 << 1), 3);
    put(<u64>(hlit - 257) | (<u64>(hdist - 1) << 5) | (<u64>(hclen - 4) << 10), 14);
    for (let j = 0; j < hclen; j++) put(<u64>load<u8>(CL_LEN + load<u8>(CL_ORDER + j)), 3);
    assignCodes(CL_LEN, 19, CL_CODE);
    for (let j = 0; j < nrle; j++) {
      const r = <u32>load<u16>(RLE + (<usize>j << 1));
      const s = r & 31;
      const e = load<u32>(CL_CODE + (<usize>s << 2));
      put(<u64>(e & 0xffff) | (<u64>(r >> 5) << (e >> 16)), (e >> 16) + clExtra(s));
    }
    assignCodes(LIT_LEN, 286, LIT_CODE);
    assignCodes(DIST_LEN, 30, DIST_CODE);
    writeSymbols(syms, n, LIT_CODE, DIST_CODE);
    put(<u64>(load<u32>(LIT_CODE + (256 << 2)) & 0xffff), load<u32>(LIT_CODE + (256 << 2)) >> 16);
  }
  memory.fill(LIT_FREQ, 0, 288 * 4);
  memory.fill(DIST_FREQ, 0, 32 * 4);
}
