/**
 * A resumable DEFLATE decoder (RFC 1951): raw DEFLATE data in, bytes out, through two buffers the host fills and
 * drains between calls, so that it never holds more than its window of input and of output whatever the stream's
 * size. It stops at the end of the final block and says where in the input that was (the gzip framing around it —
 * headers, trailers, the next member — is the host's: web/gunzip.ts), and on an error it says which and where, after
 * giving every byte decoded before it (zlib's streams drop the output of the call that meets an error).
 *
 * Resumable at symbol boundaries only: a call returns NEED_INPUT when fewer than {@link LOOKAHEAD} input bytes are
 * left and more may come (a symbol takes at most 48 bits, a block header at most ~290 bytes, so nothing is ever cut),
 * and OUTPUT_FULL when a longest match might not fit. Huffman codes are decoded through a 2^{@link FAST_BITS}-entry
 * table, longer codes one bit at a time by the canonical counts (they are the rare symbols).
 *
 * Buffer ownership: the decoder allocates both buffers at {@link inflateInit} and owns them; the host writes input at
 * [{@link inBuf} + kept, {@link inBuf} + {@link IN_CAP}) after {@link inflateCompact} and reads output at
 * [{@link outStart}, {@link outEnd}) after each call, before the next.
 */

/** Input buffer capacity, bytes. */
export const IN_CAP: u32 = 1 << 20;
/** Output produced per call at most, bytes (after the 32 KiB of history kept for matches). */
export const OUT_CHUNK: u32 = 1 << 20;
/** DEFLATE's window: the farthest a match reaches back. */
const WINDOW: u32 = 32768;
/** Input bytes a call wants ahead of the decoding point while more input may come (a dynamic header is < 300). */
const LOOKAHEAD: u32 = 512;
/** Bits of a code the table decodes in one look-up. */
const FAST_BITS: u32 = 10;

/** {@link inflateRun} results. */
export const NEED_INPUT: i32 = 0;
export const OUTPUT_FULL: i32 = 1;
export const STREAM_END: i32 = 2;
/** Errors (negative): the data is not valid DEFLATE at {@link errorAt}. */
export const ERR_BLOCK_TYPE: i32 = -1;
export const ERR_STORED_LENGTH: i32 = -2;
export const ERR_CODE_LENGTHS: i32 = -3;
export const ERR_CODE: i32 = -4;
export const ERR_DISTANCE: i32 = -5;
export const ERR_TRUNCATED: i32 = -6;

// Modes between calls.
const M_HEADER: i32 = 0;
const M_STORED: i32 = 1;
const M_CODES: i32 = 2;
const M_DONE: i32 = 3;

/** The input buffer (IN_CAP + 8 bytes: the bit reader loads 8 at a time). */
export let inBuf: usize = 0;
/** The output buffer: WINDOW bytes of history, then up to OUT_CHUNK new bytes, then room for one match. */
export let outBuf: usize = 0;
/** New output of the last call: [outStart, outEnd) in outBuf. */
export let outStart: u32 = 0;
export let outEnd: u32 = 0;
/** Input position of the error of the last call (bytes into the input buffer). */
export let errorAt: u32 = 0;

let inLen: u32 = 0; // valid input bytes
let inPos: u32 = 0; // next byte the bit reader loads
// A run that stops at its input's end without an error ({@link inflateRun}'s `stop`): the bit reader's state before
// the unit (a block header, a symbol) being decoded, given back when the unit does not fit.
let stopping = false;
let savedBuf: u64 = 0;
let savedCnt: u32 = 0;
let savedPos: u32 = 0;
let bitbuf: u64 = 0; // bits not yet used, the next one lowest (bits above bitcnt: the next bytes, or zeros)
let bitcnt: u32 = 0;
let mode: i32 = M_HEADER;
let lastBlock = false;
let storedLeft: u32 = 0;
let total: u64 = 0; // bytes output since inflateReset (a match may not reach before them)

// Code tables: per code, a FAST_BITS table of (symbol << 4 | length) (0: a longer code), and the canonical counts
// per length and symbols by code for the longer ones.
let litFast: usize = 0;
let litCount: usize = 0;
let litSym: usize = 0;
let distFast: usize = 0;
let distCount: usize = 0;
let distSym: usize = 0;
let lens: usize = 0; // code lengths being read (320 bytes)
/** The block holding every code table above ({@link TABLES} bytes). */
let tables: usize = 0;
/** Bytes of the code tables: both fast tables, both counts, both symbol lists. */
const TABLES: usize = 2 * (2 << FAST_BITS) + 2 * 32 + 2 * 320 + 2 * 32;
let offs: usize = 0; // scratch: 16 × u16

const LEN_BASE: usize = memory.data<u16>([3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]);
const LEN_EXTRA: usize = memory.data<u8>([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]);
const DIST_BASE: usize = memory.data<u16>([1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]);
const DIST_EXTRA: usize = memory.data<u8>([0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]);
/** The order code-length code lengths come in (RFC 1951 §3.2.7). */
const CL_ORDER: usize = memory.data<u8>([16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]);

/** Allocates the buffers and tables (once) and starts a stream. */
export function inflateInit(): void {
  if (inBuf == 0) {
    inBuf = heap.alloc(<usize>IN_CAP + 8);
    outBuf = heap.alloc(<usize>(WINDOW + OUT_CHUNK + 512));
    // The code tables in one block, so that a snapshot copies them at once (inflateSnapshot).
    tables = heap.alloc(TABLES);
    litFast = tables;
    distFast = litFast + (2 << FAST_BITS);
    litCount = distFast + (2 << FAST_BITS);
    distCount = litCount + 32;
    litSym = distCount + 32;
    distSym = litSym + 2 * 320;
    lens = heap.alloc(320);
    offs = heap.alloc(32);
  }
  inLen = 0;
  inflateReset();
}

/** Starts a new DEFLATE stream (the next gzip member) at the current input position: no history, no bits. */
export function inflateReset(): void {
  // Whole bytes the bit reader loaded but the stream did not use go back to the input.
  inPos -= bitcnt >> 3;
  bitbuf = 0;
  bitcnt = 0;
  mode = M_HEADER;
  lastBlock = false;
  storedLeft = 0;
  total = 0;
  outStart = outEnd = 0;
}

/**
 * Moves the input not yet used to the start of the input buffer — the bytes the bit reader has not loaded and the
 * whole bytes it holds unused (a stream may end inside them: what follows it, a gzip trailer, must still be in the
 * buffer) — and returns its length: the host appends new bytes after it (at most IN_CAP minus that) and passes the
 * new length to {@link inflateRun}.
 */
export function inflateCompact(): u32 {
  const held = bitcnt >> 3;
  const from = inPos - held;
  const keep = inLen - from;
  if (from != 0 && keep != 0) memory.copy(inBuf, inBuf + from, keep);
  inLen = keep;
  inPos = held;
  return keep;
}

/**
 * Moves the input [`from`, `len`) to the start of the input buffer, the decoding state unchanged, and returns its length
 * (new bytes go after it): {@link inflateCompact} for a host that added bytes since the last run (`len`: the input's
 * length now) or keeps bytes it has read (`from` at most {@link inflateInputPos}: src/core/gunzip.ts may go back to a
 * gzip member header inside a member's data).
 */
export function inflateCompactFrom(from: u32, len: u32): u32 {
  const keep = len - from;
  if (from != 0 && keep != 0) memory.copy(inBuf, inBuf + from, keep);
  inLen = keep;
  inPos -= from;
  return keep;
}

// A copy of the decoding state ({@link inflateSnapshot}): the last WINDOW bytes of output, the code tables, the bits.
let snap: usize = 0;
let snapHistory: u32 = 0;
let snapInPos: u32 = 0;
let snapBuf: u64 = 0;
let snapCnt: u32 = 0;
let snapMode: i32 = M_HEADER;
let snapLast = false;
let snapStored: u32 = 0;
let snapTotal: u64 = 0;

/**
 * Copies the decoding state, to decode the same input again from here after {@link inflateRestore} (src/core/gunzip.ts:
 * a member read on past a member header inside its data without holding what it gives, to learn whether it was cut
 * there).
 */
export function inflateSnapshot(): void {
  if (snap == 0) snap = heap.alloc(<usize>WINDOW + TABLES);
  const w = outEnd < WINDOW ? outEnd : WINDOW;
  memory.copy(snap, outBuf + <usize>(outEnd - w), w);
  memory.copy(snap + <usize>WINDOW, tables, TABLES);
  snapHistory = w;
  snapInPos = inPos;
  snapBuf = bitbuf;
  snapCnt = bitcnt;
  snapMode = mode;
  snapLast = lastBlock;
  snapStored = storedLeft;
  snapTotal = total;
}

/**
 * Goes back to the state {@link inflateSnapshot} copied; `shift`: input bytes the host dropped from the buffer's front
 * since (it keeps every byte from the snapshot's loaded position on).
 */
export function inflateRestore(shift: u32): void {
  memory.copy(outBuf, snap, snapHistory);
  memory.copy(tables, snap + <usize>WINDOW, TABLES);
  outStart = outEnd = snapHistory;
  inPos = snapInPos - shift;
  bitbuf = snapBuf;
  bitcnt = snapCnt;
  mode = snapMode;
  lastBlock = snapLast;
  storedLeft = snapStored;
  total = snapTotal;
}

/** How far the bit reader has loaded the input: a stopping {@link inflateRun} needs its `len` at least this. */
export function inflateLoadedTo(): u32 {
  return inPos;
}

/** Input bytes not yet read: where the data after the end of the stream (a gzip trailer) starts, after STREAM_END. */
export function inflateInputPos(): u32 {
  return inPos - (bitcnt >> 3);
}

/** Moves the input position to `pos` (≤ the input's length) after {@link inflateReset}: past a gzip header. */
export function inflateSeek(pos: u32): void {
  inPos = pos;
}

/** Valid input bytes (what the last {@link inflateRun} was given, or {@link inflateCompact} kept). */
export function inflateInputLen(): u32 {
  return inLen;
}

// ---- Bits ------------------------------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function refill(): void {
  if (inPos + 8 <= inLen) {
    // Eight bytes at once: the bits past the whole bytes taken are the next bytes' (taken again next time).
    bitbuf |= load<u64>(inBuf + inPos) << bitcnt;
    inPos += (63 - bitcnt) >> 3;
    bitcnt |= 56;
  } else {
    while (bitcnt <= 56 && inPos < inLen) {
      bitbuf |= <u64>load<u8>(inBuf + inPos) << bitcnt;
      inPos++;
      bitcnt += 8;
    }
  }
}

// @ts-ignore: decorator
@inline function bits(n: u32): u32 {
  return <u32>(bitbuf & ((<u64>1 << n) - 1));
}

// @ts-ignore: decorator
@inline function drop(n: u32): void {
  bitbuf >>= n;
  bitcnt -= n;
}

// ---- Codes -----------------------------------------------------------------------------------------------------

/**
 * Builds the tables of a code from `n` lengths at `lens`: the fast table, counts per length, symbols in code order.
 * False when the lengths over-subscribe the code space (an incomplete code is allowed: its unused codes fail when
 * met, as they never are in valid data).
 */
function build(fast: usize, count: usize, sym: usize, n: u32): bool {
  memory.fill(count, 0, 32);
  for (let s: u32 = 0; s < n; s++) {
    const l = <usize>load<u8>(lens + s);
    store<u16>(count + (l << 1), load<u16>(count + (l << 1)) + 1);
  }
  store<u16>(count, 0);
  let left: i32 = 1;
  for (let l: usize = 1; l <= 15; l++) {
    left = (left << 1) - <i32>load<u16>(count + (l << 1));
    if (left < 0) return false;
  }
  // Offsets of each length's first symbol in code order.
  store<u16>(offs + 2, 0);
  for (let l: usize = 1; l < 15; l++) store<u16>(offs + ((l + 1) << 1), load<u16>(offs + (l << 1)) + load<u16>(count + (l << 1)));
  memory.fill(fast, 0, 2 << FAST_BITS);
  // Canonical codes: per length, consecutive values from the first code of that length.
  let code: u32 = 0;
  let next: StaticArray<u32> = NEXT;
  for (let l: u32 = 1; l <= 15; l++) {
    code = (code + <u32>load<u16>(count + (<usize>(l - 1) << 1))) << 1;
    unchecked((next[l] = code));
  }
  store<u16>(count, 0);
  for (let s: u32 = 0; s < n; s++) {
    const l = <u32>load<u8>(lens + s);
    if (l == 0) continue;
    const at = offs + (<usize>l << 1);
    const o = load<u16>(at);
    store<u16>(sym + (<usize>o << 1), <u16>s);
    store<u16>(at, o + 1);
    const c = unchecked(next[l]);
    unchecked((next[l] = c + 1));
    if (l <= FAST_BITS) {
      // The table is indexed by the next FAST_BITS input bits, first bit lowest: the code's bits reversed.
      let r: u32 = 0;
      for (let k: u32 = 0; k < l; k++) r |= ((c >> k) & 1) << (l - 1 - k);
      const e = <u16>((s << 4) | l);
      for (let i = r; i < (<u32>1 << FAST_BITS); i += <u32>1 << l) store<u16>(fast + (<usize>i << 1), e);
    }
  }
  return true;
}
const NEXT = new StaticArray<u32>(16);

/**
 * The next symbol of the code at (fast, count, sym), or -1 for a code the tables do not hold. The caller has made
 * sure of 15 bits, or of every bit left in the stream.
 */
// @ts-ignore: decorator
@inline function decode(fast: usize, count: usize, sym: usize): i32 {
  const e = <u32>load<u16>(fast + (<usize>(<u32>bitbuf & ((1 << FAST_BITS) - 1)) << 1));
  if (e != 0 && (e & 15) <= bitcnt) {
    drop(e & 15);
    return <i32>(e >> 4);
  }
  return decodeSlow(count, sym);
}

/** A code longer than FAST_BITS, one bit at a time through the canonical counts (puff's method). */
function decodeSlow(count: usize, sym: usize): i32 {
  let code: i32 = 0;
  let first: i32 = 0;
  let index: i32 = 0;
  for (let l: u32 = 1; l <= 15; l++) {
    if (l > bitcnt) return -1;
    code |= <i32>((bitbuf >> (l - 1)) & 1);
    const c = <i32>load<u16>(count + (<usize>l << 1));
    if (code - c < first) {
      drop(l);
      return <i32>load<u16>(sym + (<usize>(index + code - first) << 1));
    }
    index += c;
    first = (first + c) << 1;
    code <<= 1;
  }
  return -1;
}

/** The fixed codes of block type 1. */
function fixedCodes(): void {
  for (let s: usize = 0; s < 288; s++) store<u8>(lens + s, s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8);
  build(litFast, litCount, litSym, 288);
  for (let s: usize = 0; s < 30; s++) store<u8>(lens + s, 5);
  build(distFast, distCount, distSym, 30);
}

/** Reads a dynamic block's code definitions (RFC 1951 §3.2.7); 0, or an error code. */
function dynamicCodes(): i32 {
  refill();
  if (bitcnt < 14) return ERR_TRUNCATED;
  const nlen = bits(5) + 257;
  drop(5);
  const ndist = bits(5) + 1;
  drop(5);
  const ncode = bits(4) + 4;
  drop(4);
  if (nlen > 286 || ndist > 30) return ERR_CODE_LENGTHS;
  memory.fill(lens, 0, 19);
  for (let i: u32 = 0; i < ncode; i++) {
    refill();
    if (bitcnt < 3) return ERR_TRUNCATED;
    store<u8>(lens + <usize>load<u8>(CL_ORDER + i), <u8>bits(3));
    drop(3);
  }
  if (!build(litFast, litCount, litSym, 19)) return ERR_CODE_LENGTHS;
  // The lengths of both codes, in one sequence (a repeat may run from the first into the second).
  let i: u32 = 0;
  const n = nlen + ndist;
  while (i < n) {
    refill();
    const s = decode(litFast, litCount, litSym);
    if (s < 0) return bitcnt < 15 && inPos >= inLen ? ERR_TRUNCATED : ERR_CODE_LENGTHS;
    if (s < 16) {
      store<u8>(lens + i, <u8>s);
      i++;
      continue;
    }
    let rep: u32;
    let v: u8 = 0;
    if (s == 16) {
      if (i == 0) return ERR_CODE_LENGTHS;
      if (bitcnt < 2) return ERR_TRUNCATED;
      v = load<u8>(lens + i - 1);
      rep = 3 + bits(2);
      drop(2);
    } else if (s == 17) {
      if (bitcnt < 3) return ERR_TRUNCATED;
      rep = 3 + bits(3);
      drop(3);
    } else {
      if (bitcnt < 7) return ERR_TRUNCATED;
      rep = 11 + bits(7);
      drop(7);
    }
    if (i + rep > n) return ERR_CODE_LENGTHS;
    memory.fill(lens + i, v, rep);
    i += rep;
  }
  // No end-of-block code: the block could never end.
  if (load<u8>(lens + 256) == 0) return ERR_CODE_LENGTHS;
  if (!build(litFast, litCount, litSym, nlen)) return ERR_CODE_LENGTHS;
  memory.copy(lens, lens + nlen, ndist);
  if (!build(distFast, distCount, distSym, ndist)) return ERR_CODE_LENGTHS;
  return 0;
}

// ---- Decoding --------------------------------------------------------------------------------------------------

/** Ends a call with an error at the current input position. */
function fail(code: i32): i32 {
  errorAt = inflateInputPos();
  return code;
}

/** The input ran out inside a unit: ERR_TRUNCATED, or in a stopping run the state before the unit and NEED_INPUT. */
function short(): i32 {
  if (!stopping) return fail(ERR_TRUNCATED);
  bitbuf = savedBuf;
  bitcnt = savedCnt;
  inPos = savedPos;
  return NEED_INPUT;
}

/**
 * Decodes from the input ([0, `len`) of the input buffer; `final`: no byte will follow them) until the input runs
 * short, the output chunk is full, the final block ends or the data is invalid. Returns NEED_INPUT, OUTPUT_FULL,
 * STREAM_END or an error (ERR_*); the new output is [outStart, outEnd) either way.
 * `stop`: decode every whole unit (block header, symbol, stored byte) before `len` and return NEED_INPUT at the first
 * that does not fit, its bits left unread — never ERR_TRUNCATED, and no look-ahead kept — so that a later call with
 * more input goes on exactly there (src/core/gunzip.ts: the output of a member's bytes up to a later member's header
 * inside them). `len` must be at least the position the bit reader has loaded to.
 */
export function inflateRun(len: u32, final: bool, stop: bool = false): i32 {
  inLen = len < IN_CAP ? len : IN_CAP;
  stopping = stop;
  const wait = !final && !stop;
  // Keep the last WINDOW bytes of output as history; new output follows them.
  if (outEnd > WINDOW) {
    memory.copy(outBuf, outBuf + outEnd - WINDOW, WINDOW);
    outEnd = WINDOW;
  }
  outStart = outEnd;
  const limit = WINDOW + OUT_CHUNK;
  while (mode != M_DONE) {
    if (wait && inLen - inPos < LOOKAHEAD) return NEED_INPUT;
    if (mode == M_HEADER) {
      savedBuf = bitbuf;
      savedCnt = bitcnt;
      savedPos = inPos;
      refill();
      if (bitcnt < 3) return short();
      lastBlock = (bitbuf & 1) != 0;
      const type = bits(3) >> 1;
      drop(3);
      if (type == 0) {
        drop(bitcnt & 7);
        refill();
        if (bitcnt < 32) return short();
        const n = bits(16);
        const check = <u32>(bitbuf >> 16) & 0xffff;
        if ((n ^ 0xffff) != check) return fail(ERR_STORED_LENGTH);
        drop(32);
        storedLeft = n;
        mode = M_STORED;
      } else if (type == 1) {
        fixedCodes();
        mode = M_CODES;
      } else if (type == 2) {
        const r = dynamicCodes();
        if (r == ERR_TRUNCATED) return short();
        if (r != 0) return fail(r);
        mode = M_CODES;
      } else return fail(ERR_BLOCK_TYPE);
      continue;
    }
    if (mode == M_STORED) {
      // First the whole bytes the bit reader holds, then straight from the input.
      while (storedLeft != 0 && bitcnt >= 8 && outEnd < limit) {
        store<u8>(outBuf + outEnd, <u8>bitbuf);
        outEnd++;
        drop(8);
        storedLeft--;
        total++;
      }
      if (storedLeft != 0 && outEnd < limit) {
        bitbuf = 0; // bitcnt is 0: no bits of the bytes copied below may stay behind
        // While more input may come its last 16 bytes stay unread, as in a coded block: a host looking ahead for a
        // gzip member header inside the data (src/core/gunzip.ts) sees them before they are decoded.
        const end = wait ? (inLen > inPos + 16 ? inLen - 16 : inPos) : inLen;
        let k = storedLeft;
        if (k > end - inPos) k = end - inPos;
        if (k > limit - outEnd) k = limit - outEnd;
        memory.copy(outBuf + outEnd, inBuf + inPos, k);
        outEnd += k;
        inPos += k;
        storedLeft -= k;
        total += k;
        if (storedLeft != 0 && inPos == end) return final ? fail(ERR_TRUNCATED) : NEED_INPUT;
      }
      if (storedLeft != 0) return OUTPUT_FULL;
      mode = lastBlock ? M_DONE : M_HEADER;
      continue;
    }
    // M_CODES: literal/length then distance symbols until end of block.
    for (;;) {
      if (wait && inLen - inPos < 16) return NEED_INPUT;
      if (outEnd + 258 > limit) return OUTPUT_FULL;
      if (stop) {
        savedBuf = bitbuf;
        savedCnt = bitcnt;
        savedPos = inPos;
      }
      refill();
      const s = decode(litFast, litCount, litSym);
      if (s < 0) return bitcnt < 15 && inPos >= inLen ? short() : fail(ERR_CODE);
      if (s < 256) {
        store<u8>(outBuf + outEnd, <u8>s);
        outEnd++;
        total++;
        continue;
      }
      if (s == 256) {
        mode = lastBlock ? M_DONE : M_HEADER;
        break;
      }
      const li = <usize>(s - 257);
      if (li >= 29) return fail(ERR_CODE);
      const le = <u32>load<u8>(LEN_EXTRA + li);
      if (bitcnt < le) return short();
      const length = <u32>load<u16>(LEN_BASE + (li << 1)) + bits(le);
      drop(le);
      refill();
      const d = decode(distFast, distCount, distSym);
      if (d < 0 || d >= 30) return d < 0 && bitcnt < 15 && inPos >= inLen ? short() : fail(ERR_CODE);
      const de = <u32>load<u8>(DIST_EXTRA + <usize>d);
      if (bitcnt < de) return short();
      const dist = <u32>load<u16>(DIST_BASE + (<usize>d << 1)) + bits(de);
      drop(de);
      if (<u64>dist > total || dist > outEnd) return fail(ERR_DISTANCE);
      let to = outBuf + outEnd;
      let from = to - dist;
      const end = to + length;
      if (dist >= 8) {
        // Eight bytes at a time: a copy that overruns by up to 7 bytes writes into room the next symbol overwrites.
        while (to < end) {
          store<u64>(to, load<u64>(from));
          to += 8;
          from += 8;
        }
      } else {
        while (to < end) {
          store<u8>(to, load<u8>(from));
          to++;
          from++;
        }
      }
      outEnd += length;
      total += length;
    }
  }
  return STREAM_END;
}
