/**
 * Fuzz target for rawtrace's own gzip encoder (assembly/deflate, src/node/fast_gzip.ts): case `i` of seed `S` is a
 * structured input built from its own PRNG (so one case replays alone), made of segments that stress the LZ77
 * matcher, the Huffman builder and the block writer: JSON-like events (long repeats, near repeats), one chunk
 * repeated with small edits, copies at distances 32,767 / 32,768 / 32,769 (only the first two can match), copies of
 * 3–5 and 256–260 bytes (around the shortest and longest match), runs of one byte, random bytes, a skewed
 * alphabet with Fibonacci frequencies (deep Huffman trees that need the 15-bit limit), and mixtures switching
 * between compressible and incompressible every few KB. Sizes run from 0 to 4 MiB and are often put right at the
 * 32,768-symbol block and 65,535-byte stored-block boundaries. The oracle ({@link checkDeflate}): Node's
 * `zlib.gunzipSync` of the member gives the input back exactly, and the member is no larger than storing every
 * block ({@link deflateBound}), and rawtrace's own gzip reader (src/core/gunzip.ts) gives the input back from that member
 * and from zlib's (level and strategy by the input's length); now and then a fresh encoder must write the same bytes. Used by `npm run fuzz -- --target deflate` (run.ts) and fuzz_deflate.test.ts.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { constants, gunzipSync, gzipSync } from "node:zlib";
import { gunzipBytes } from "../../src/core/gunzip.js";
import { rng } from "./mutate.js";
import { FastGzip } from "../../src/node/fast_gzip.js";

/** The segment kinds a case is built from. */
export const DEFLATE_KINDS = ["json", "nearRepeat", "maxDistance", "matchLength", "run", "random", "fibonacci", "mixture"] as const;
/** One segment kind. */
export type DeflateKind = (typeof DEFLATE_KINDS)[number];

/** One generated input: `index` of the run, the kind of its first segment, the bytes. */
export interface DeflateCase {
  index: number;
  kind: DeflateKind;
  bytes: Uint8Array;
}

/** Lengths where the encoder changes behaviour: match and block limits, stored-block size, the 8-byte tail. */
const BOUNDARIES = [0, 1, 2, 3, 4, 7, 8, 9, 258, 259, 32767, 32768, 32769, 32776, 65535, 65536, 131070, 131071, 32768 * 258];

/** The PRNG of case `index` of `seed`: 32-bit unsigned integers from mutate.ts's mulberry32, seeded by a mix of both. */
function caseRng(seed: number, index: number): () => number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  const f = rng(h ^ (h >>> 15));
  return () => (f() * 4294967296) >>> 0;
}

/** A growable byte buffer the segment writers append to. */
class Buf {
  b = new Uint8Array(1 << 16);
  n = 0;
  ensure(extra: number): void {
    if (this.n + extra <= this.b.length) return;
    const nb = new Uint8Array(Math.max(this.b.length * 2, this.n + extra));
    nb.set(this.b.subarray(0, this.n));
    this.b = nb;
  }
  push(x: number): void {
    this.ensure(1);
    this.b[this.n++] = x;
  }
  text(s: string): void {
    this.ensure(s.length);
    for (let i = 0; i < s.length; i++) this.b[this.n++] = s.charCodeAt(i) & 255;
  }
  random(len: number, r: () => number): void {
    this.ensure(len);
    for (let i = 0; i < len; i++) this.b[this.n++] = r() & 255;
  }
  /** Appends `len` bytes copied from `dist` bytes back (overlapping like LZ77); random bytes where there is no history. */
  copy(dist: number, len: number, r: () => number): void {
    this.ensure(len);
    for (let i = 0; i < len; i++) {
      this.b[this.n] = this.n >= dist ? this.b[this.n - dist] : r() & 255;
      this.n++;
    }
  }
}

const NAMES = ["aten::mm", "cudaLaunchKernel", "ampere_sgemm_128x64_nn", "Memcpy HtoD", "nccl:all_reduce", "ProfilerStep#3"];

/** Appends one segment of `kind` of about `len` bytes. */
function segment(o: Buf, kind: DeflateKind, len: number, r: () => number): void {
  const end = o.n + len;
  switch (kind) {
    case "json": {
      let ts = r() % 1e9;
      while (o.n < end) {
        ts += r() % 5000;
        const name = NAMES[r() % NAMES.length];
        o.text(`{"ph":"X","cat":"kernel","name":"${name}","pid":${r() % 4},"tid":${r() % 16},"ts":${ts / 1000},` +
          `"dur":${(r() % 100000) / 1000},"args":{"correlation":${r() % 1e6},"stream":7}},\n`);
      }
      break;
    }
    case "nearRepeat": {
      const unit = 1 + (r() % 2000);
      o.random(Math.min(unit, end - o.n), r);
      while (o.n < end) {
        const k = Math.min(unit, end - o.n);
        o.copy(unit, k, r);
        if (r() % 3 === 0) o.b[o.n - 1 - (r() % k)] ^= 1 + (r() % 255); // a near repeat: one byte changed
      }
      break;
    }
    case "maxDistance": {
      // Random bytes, then copies from exactly 32,767, 32,768 or 32,769 bytes back (the last is out of reach).
      o.random(Math.min(32769, end - o.n), r);
      while (o.n < end) {
        const d = 32767 + (r() % 3);
        o.copy(d, Math.min(1 + (r() % 600), end - o.n), r);
        o.random(Math.min(r() % 8, end - o.n), r);
      }
      break;
    }
    case "matchLength": {
      // Copies of lengths around the shortest (3) and the longest (258) match, broken by one differing byte.
      const lens = [3, 4, 5, 256, 257, 258, 259, 260, 515, 516, 517];
      o.random(Math.min(600, end - o.n), r);
      while (o.n < end) {
        const d = 1 + (r() % Math.min(o.n, 32768));
        o.copy(d, Math.min(lens[r() % lens.length], end - o.n), r);
        if (o.n < end) o.push(o.b[o.n - d] ^ 0x55); // the byte that ends the match
      }
      break;
    }
    case "run": {
      const x = r() & 255;
      o.ensure(len);
      o.b.fill(x, o.n, end);
      o.n = end;
      break;
    }
    case "random":
      o.random(len, r);
      break;
    case "fibonacci": {
      // 24 symbols, symbol k about Fib(k) times as often: an unlimited Huffman tree would be 23 levels deep.
      const cum: number[] = [];
      let a = 1,
        b = 1,
        total = 0;
      for (let k = 0; k < 24; k++) {
        total += a;
        cum.push(total);
        [a, b] = [b, a + b];
      }
      const base = r() % 200;
      o.ensure(len);
      while (o.n < end) {
        const x = r() % total;
        let k = 0;
        while (cum[k] <= x) k++;
        o.b[o.n++] = base + k;
      }
      break;
    }
    case "mixture": {
      // Compressible and incompressible parts, switching every 1–8 KB.
      while (o.n < end) {
        const k = Math.min(1024 + (r() % 7168), end - o.n);
        if (r() & 1) o.random(k, r);
        else segment(o, (["json", "run", "nearRepeat", "matchLength"] as const)[r() % 4], k, r);
      }
      break;
    }
  }
  o.n = Math.min(o.n, end);
}

/** The total size of a case: often at a boundary (± a few bytes, or a multiple of it), else spread up to 4 MiB. */
function caseSize(r: () => number): number {
  const pick = r() % 100;
  if (pick < 35) {
    const b = BOUNDARIES[r() % BOUNDARIES.length] * (1 + (r() % 3));
    return Math.max(0, b + (r() % 9) - 4);
  }
  if (pick < 70) return r() % 70000;
  if (pick < 92) return r() % 400000;
  if (pick < 98) return r() % 1500000;
  return r() % (4 << 20);
}

/** Case `index` of `seed`: the same bytes on every run and machine. */
export function deflateCase(seed: number, index: number): DeflateCase {
  const r = caseRng(seed, index);
  const size = caseSize(r);
  const o = new Buf();
  o.ensure(size + 8);
  const kind = DEFLATE_KINDS[r() % DEFLATE_KINDS.length];
  let k: DeflateKind = kind;
  while (o.n < size) {
    // Mostly one segment; sometimes several kinds one after another.
    const len = r() % 4 === 0 ? Math.min(size - o.n, 1 + (r() % Math.max(1, size))) : size - o.n;
    segment(o, k, len, r);
    k = DEFLATE_KINDS[r() % DEFLATE_KINDS.length];
  }
  return { index, kind, bytes: o.b.slice(0, size) };
}

/**
 * Most bytes a member of `n` input bytes may take: the 18 bytes of gzip header and trailer plus the deflate data
 * when every block is stored. The encoder writes a block as stored when that is smallest (assembly/deflate/block.ts),
 * and a block holds 32,768 symbols, so at least 32,768 bytes, except the last: at most ⌊n / 32768⌋ + 1 blocks, each
 * costing 5 bytes per 65,535 it holds (3 header bits, padding, LEN and NLEN) and the padding before it.
 */
export function deflateBound(n: number): number {
  const blocks = Math.floor(n / 32768) + 1;
  return 18 + n + 5 * Math.floor(n / 65535) + 6 * blocks;
}

/**
 * Compresses `input` and checks the member: `problem` says what is wrong (the first differing byte, or the size
 * against {@link deflateBound}), null when right; `member` is the gzip member (empty when the encoder threw).
 */
export function checkDeflate(gz: FastGzip, input: Uint8Array): { member: Uint8Array; problem: string | null } {
  let member: Uint8Array;
  try {
    member = gz.gzip(input);
  } catch (e) {
    return { member: new Uint8Array(0), problem: `encoder threw: ${(e as Error).message}` };
  }
  // zlib's streams too (its block splits, code shapes and strategies differ from our encoder's), for the reader.
  const strategies = [constants.Z_DEFAULT_STRATEGY, constants.Z_FILTERED, constants.Z_HUFFMAN_ONLY, constants.Z_RLE, constants.Z_FIXED];
  const level = input.length % 10;
  const strategy = strategies[(input.length >>> 4) % strategies.length];
  return { member, problem: checkMember(member, input) ?? checkInflate(gzipSync(input, { level, strategy }), input, `zlib level ${level} strategy ${strategy}`) };
}

/** rawtrace's own gzip reader (build/inflate.wasm, the viewer's: src/core/gunzip.ts), checked on every member too. */
const INFLATE = new WebAssembly.Module(readFileSync(fileURLToPath(new URL("../../build/inflate.wasm", import.meta.url))));

/** What is wrong with rawtrace's gzip reader on `member`, the gzip of `input` by `who`; null when nothing. */
export function checkInflate(member: Uint8Array, input: Uint8Array, who: string): string | null {
  let r: ReturnType<typeof gunzipBytes>;
  try {
    r = gunzipBytes(INFLATE, member);
  } catch (e) {
    return `rawtrace's gzip reader threw on ${who}'s ${member.length}-byte member: ${(e as Error).message}`;
  }
  if (r.damage) return `rawtrace's gzip reader found damage in ${who}'s member: ${r.damage.message} at ${r.damage.compressedAt}`;
  if (!Buffer.from(r.out).equals(Buffer.from(input))) return `rawtrace's gzip reader gave ${r.out.length} bytes for ${input.length} (${who}'s member), or other bytes`;
  return null;
}

/** What is wrong with `member` as the gzip of `input`; null when nothing. */
export function checkMember(member: Uint8Array, input: Uint8Array): string | null {
  let back: Buffer;
  try {
    back = gunzipSync(member);
  } catch (e) {
    return `gunzip rejected the ${member.length}-byte member: ${(e as Error).message}`;
  }
  if (back.length !== input.length) return `gunzip gave ${back.length} bytes for ${input.length}`;
  const diff = Buffer.compare(back, input) === 0 ? -1 : back.findIndex((x, i) => x !== input[i]);
  if (diff >= 0) return `gunzip output differs from the input at byte ${diff}`;
  if (member.length > deflateBound(input.length)) {
    return `member of ${member.length} bytes for ${input.length} input bytes is above the bound ${deflateBound(input.length)}`;
  }
  return checkInflate(member, input, "rawtrace's encoder");
}

/** Totals of a deflate fuzz run. */
export interface DeflateStats {
  cases: number;
  inputBytes: number;
  memberBytes: number;
  /** Cases also compressed by a fresh encoder ({@link DeflateHooks.freshEvery}). */
  freshChecks: number;
  kinds: Record<string, number>;
  failures: { index: number; kind: DeflateKind; size: number; message: string }[];
}

/** Callbacks of {@link runDeflateCases}. */
export interface DeflateHooks {
  /** Each failing case and why (to save its input). */
  onFailure?: (c: DeflateCase, message: string) => void;
  /** The cases and input bytes done, every 1,000 cases. */
  onProgress?: (done: number, inputBytes: number) => void;
  /** Every this many cases (from the first), also compress with a fresh encoder: the bytes must be the same. */
  freshEvery?: number;
  /** Every case and its member (to look into what the encoder wrote). */
  onMember?: (c: DeflateCase, member: Uint8Array) => void;
}

/** Runs cases `from` .. `from + count - 1` of `seed` through {@link checkDeflate}. Returns the totals. */
export function runDeflateCases(gz: FastGzip, seed: number, from: number, count: number, hooks: DeflateHooks = {}): DeflateStats {
  const s: DeflateStats = { cases: 0, inputBytes: 0, memberBytes: 0, freshChecks: 0, kinds: {}, failures: [] };
  for (let i = from; i < from + count; i++) {
    const c = deflateCase(seed, i);
    const checked = checkDeflate(gz, c.bytes);
    const member = checked.member;
    let message = checked.problem;
    if (message === null && hooks.freshEvery && (i - from) % hooks.freshEvery === 0) {
      const again = new FastGzip().gzip(c.bytes);
      if (!Buffer.from(again).equals(Buffer.from(member))) {
        message = `a fresh encoder wrote ${again.length} bytes, this one (after ${i - from} cases) ${member.length}, or other bytes`;
      }
      s.freshChecks++;
    }
    s.cases++;
    s.inputBytes += c.bytes.length;
    s.memberBytes += member.length;
    hooks.onMember?.(c, member);
    s.kinds[c.kind] = (s.kinds[c.kind] ?? 0) + 1;
    if (message !== null) {
      s.failures.push({ index: i, kind: c.kind, size: c.bytes.length, message });
      hooks.onFailure?.(c, message);
    }
    if (s.cases % 1000 === 0) hooks.onProgress?.(s.cases, s.inputBytes);
  }
  return s;
}
