/**
 * Gunzip for a host without zlib (the viewer): every member of a gzip file (RFC 1952), through rawtrace's own
 * resumable DEFLATE decoder (assembly/inflate/, build/inflate.wasm). It reads what the CLI reads
 * (src/node/gzip_members.ts): files of several members (`cat a.gz b.gz`, bgzip, block-parallel gzip), a member whose
 * trailer checksum or length is wrong (its bytes kept, the walk goes on), and of a member whose data is damaged, every
 * byte decoded before the damage, and the members after it (found by their magic, as after garbage). Bytes between members that start no member (zero padding, garbage) are skipped up to
 * the next member's magic 1f 8b 08 and said (GZIP_DAMAGED at the first of them: gzip and zlib stop there, so every
 * later member would be lost to them); bytes after the last member that are only zeros (tar's or dd's padding: no byte
 * lost, gzip -t says "trailing garbage ignored") are not said. A member found by skipping whose header no gzip writer
 * writes gives its bytes once it proves one (64 KiB decoded without error, or its end with a matching trailer): a
 * chance 1f 8b 08 in the garbage or in a damaged member's data, whose data decodes as garbage for a while, is dropped
 * and the search goes on after it.
 * The browser's DecompressionStream reads only the first
 * member and drops the output of the step that meets an error. Host-neutral: the caller compiles the module and gives
 * the compressed bytes as an async iterable.
 */
import type { GunzipDamage } from "./gzip_damage.js";
import { plausibleHeader } from "./gzip_magic.js";
export { addGzipDamage, gzipDamageFor, gzipDamageWarning, type GunzipDamage } from "./gzip_damage.js";

/** The inflate module's exports (assembly/inflate/index.ts). */
interface InflateExports {
  memory: WebAssembly.Memory;
  init(): void;
  reset(): void;
  compact(): number;
  compactFrom(from: number, len: number): number;
  snapshot(): void;
  restore(shift: number): void;
  loadedTo(): number;
  run(len: number, final: number): number;
  inputPos(): number;
  seek(pos: number): void;
  inputLen(): number;
  inPtr(): number;
  inCap(): number;
  outPtr(): number;
  outStart(): number;
  outEnd(): number;
  errorAt(): number;
  crcOut(prev: number): number;
}

const NEED_INPUT = 0;
const OUTPUT_FULL = 1;
const STREAM_END = 2;
const ERR_TRUNCATED = -6;
/**
 * Decompressed bytes (64 KiB) that prove a member found by skipping is one, when it has not ended before: garbage
 * read as DEFLATE fails within a few hundred codes (a reserved code, a distance too far back, a bad block header), and
 * one stored block of chance lengths gives at most 65,535 bytes.
 */
const PROOF = 1 << 16;
/** Compressed bytes read again after false magics before the search stops re-reading them (see `retryAt`). */
const REDO_BUDGET = 8 << 20;
/**
 * Decompressed bytes held past a gzip member header inside a member's data while the member may have been cut short
 * there (1 MiB): what it decodes past such a header from the next members' bytes is garbage that fails within a few
 * hundred codes, or within one stored block of at most 65,535 bytes; a member that decodes this far past it is whole.
 */
const TEAR_HOLD = 1 << 20;

/** What each error of the decoder means (assembly/inflate/inflate.ts ERR_*). */
const ERRORS: Record<number, string> = {
  [-1]: "invalid block type",
  [-2]: "invalid stored block lengths",
  [-3]: "invalid code lengths",
  [-4]: "invalid code",
  [-5]: "invalid distance too far back",
  [-6]: "the file ends inside a gzip member",
};

/**
 * Length of the gzip member header at the start of `h` (RFC 1952 §2.3): -1 when `h` starts no member, 0 when `h`
 * may start one but ends before its header does.
 */
export function gzipHeaderLength(h: Uint8Array): number {
  const magic = [0x1f, 0x8b, 8];
  for (let i = 0; i < 3 && i < h.length; i++) if (h[i] !== magic[i]) return -1;
  if (h.length < 10) return 0;
  const flags = h[3];
  let p = 10;
  if (flags & 4) {
    if (p + 2 > h.length) return 0;
    p += 2 + (h[p] | (h[p + 1] << 8)); // FEXTRA
  }
  for (const bit of [8, 16]) {
    if (!(flags & bit)) continue; // FNAME, FCOMMENT: zero-terminated
    const z = h.indexOf(0, p);
    if (z < 0) return 0;
    p = z + 1;
  }
  if (flags & 2) p += 2; // FHCRC
  return p <= h.length ? p : 0;
}

/**
 * Gzip data that gives no byte at all: its first header is not a gzip header, the data ends inside it, or (thrown by
 * the hosts' readers from a {@link GunzipDamage} with nothing decompressed) its first member is damaged or cut before
 * its first byte. The message says at which compressed byte ("at compressed byte N, before any byte of the dump: …"),
 * the same in the CLI and the viewer; `code` is zlib's for data errors.
 */
export class GzipStartError extends Error {
  readonly code = "Z_DATA_ERROR";
  constructor(readonly compressedAt: number, reason: string) {
    super(`at compressed byte ${compressedAt}, before any byte of the dump: ${reason}`);
  }
}

/** Whether `h` starts with a gzip member header a writer writes: the magic, flags, XFL and OS ({@link plausibleHeader}). */
function writerHeader(h: Uint8Array): boolean {
  return h.length >= 10 && h[0] === 0x1f && h[1] === 0x8b && h[2] === 8 && (h[3] & 0xe0) === 0 && plausibleHeader(h) && gzipHeaderLength(h) !== -1;
}

/**
 * Where the first gzip member header a writer writes starts in the first `n` bytes of `b` (file offset `pos`), past the
 * file's first byte: its index in `b`, or -1. `peek(at)` gives up to 10 bytes at file offset `at`, for a header that
 * starts in the last 9 bytes. src/node/file_source.ts feeds zlib no further (zlib reads a member cut short there as
 * decoding on into the next members).
 */
export function nextMemberHeader(b: Uint8Array, n: number, pos: number, peek: (at: number) => Uint8Array): number {
  const v = b.subarray(0, n);
  for (let i = v.indexOf(0x1f, pos === 0 ? 1 : 0); i >= 0; i = v.indexOf(0x1f, i + 1)) {
    if (writerHeader(i + 10 <= n ? v.subarray(i, i + 10) : peek(pos + i))) return i;
  }
  return -1;
}

/**
 * Where the next gzip member's magic (1f 8b 08, then flags with the reserved bits clear: RFC 1952 §2.3.1) starts in
 * `b`, or -1.
 */
function memberMagicAt(b: Uint8Array): number {
  for (let i = b.indexOf(0x1f); i >= 0 && i + 3 < b.length; i = b.indexOf(0x1f, i + 1)) {
    if (b[i + 1] === 0x8b && b[i + 2] === 8 && (b[i + 3] & 0xe0) === 0) return i;
  }
  return -1;
}

/** Where a member header a gzip writer writes starts in the 8 bytes of trailer `t` (more bytes follow them), or -1. */
function trailerCut(t: Uint8Array): number {
  for (let k = 0; k < 8; k++) {
    if (t[k] === 0x1f && t[k + 1] === 0x8b && t[k + 2] === 8 && (t[k + 3] & 0xe0) === 0 && plausibleHeader(t.subarray(k))) return k;
  }
  return -1;
}

/**
 * The walk over the members, as a generator that yields an output chunk (a new array of its own) or `null` to ask for
 * more input, which the caller passes to `next` (a chunk, or null at the end of the input): the same walk serves an
 * async source ({@link gunzip}) and bytes at hand ({@link gunzipBytes}). `from` > 0: the input is the file from that
 * compressed byte on, where a member ended (what follows is read as after any member). `floor`: bytes the host gave
 * already from another reader ({@link gunzip}): the members after a member cut short start past them.
 */
function* walk(x: InflateExports, onDamage: (d: GunzipDamage) => void, from = 0, floor = 0): Generator<Uint8Array | null, void, Uint8Array | null | undefined> {
  x.init();
  const cap = x.inCap();
  let pending: Uint8Array | null = null; // input not yet copied in
  let ended = false; // the input is done
  let len = 0; // valid bytes in the input buffer
  let base = from; // compressed offset of the input buffer's first byte
  let given = 0; // decompressed bytes yielded
  let said: GunzipDamage | null = null; // the first damage, handed to onDamage (its `filler` grows after)
  // `verifiedTo`: the decompressed bytes before it are the file's own (GunzipDamage.verifiedTo); what was given by
  // default; null (every byte its own) for a stream only cut, or zeros skipped between members (padding).
  const damage = (compressedAt: number, message: string, truncated = false, verifiedTo: number | null = given) => {
    if (said) {
      // A first damage that vouched for every byte (zeros skipped between members): a later one still says where the
      // bytes stop being the file's own (handed over already, the object gets it, as its `filler`).
      if (said.verifiedTo === undefined && !truncated && verifiedTo !== null) said.verifiedTo = verifiedTo;
      return;
    }
    said = { compressedAt, decompressed: given, message, truncated, filler: 0 };
    if (!truncated && verifiedTo !== null) said.verifiedTo = verifiedTo;
    onDamage(said);
  };
  const final = () => ended && pending === null;

  /** Moves the unread input to the front and tops it up to `want` bytes (at most the buffer's), or to the end. */
  function* fill(want: number): Generator<null, void, Uint8Array | null | undefined> {
    // Enough unread already (a file of many small members): no move, no read.
    if (len - x.inputPos() >= Math.min(want, cap)) return;
    // The module is told the input's length here (bytes were added since its last run: a trailer that needed the next
    // read, bytes skipped), and while a member header inside a member's data is in doubt the bytes from it stay: the
    // walk may go back to it.
    const from = tear ? Math.min(tear.at - base, tear.loaded - base, x.inputPos()) : x.inputPos();
    const kept = x.compactFrom(from, len);
    base += len - kept;
    len = kept;
    while (len < Math.min(want, cap)) {
      if (pending === null) {
        if (ended) break;
        const c = yield null;
        if (!c) {
          ended = true;
          break;
        }
        pending = c;
      }
      const n = Math.min(pending.length, cap - len);
      new Uint8Array(x.memory.buffer, x.inPtr() + len, n).set(pending.subarray(0, n));
      len += n;
      pending = n === pending.length ? null : pending.subarray(n);
    }
  }
  /** The unread input as a view (valid until the next call into the module). */
  const unread = () => new Uint8Array(x.memory.buffer, x.inPtr() + x.inputPos(), len - x.inputPos());
  /**
   * Skips input up to the next member's magic, or to the end; returns whether one was found and whether every byte
   * skipped was zero.
   */
  function* skipToMember(): Generator<null, { found: boolean; zeros: boolean; isize: number }, Uint8Array | null | undefined> {
    let zeros = true;
    for (;;) {
      const u = unread();
      const i = memberMagicAt(u);
      // Without a magic, the last 3 bytes stay: a magic may start in them.
      const stop = i >= 0 ? i : final() ? u.length : Math.max(0, u.length - 3);
      for (let k = 0; k < stop && zeros; k++) zeros = u[k] === 0;
      x.seek(x.inputPos() + stop);
      if (i >= 0 || final()) {
        // The 4 bytes before the magic: the length field of the member before it, when that one ends right there.
        const q = x.inputPos();
        const isize = i >= 0 && q >= 4 ? new DataView(x.memory.buffer, x.inPtr() + q - 4, 4).getUint32(0, true) : -1;
        return { found: i >= 0, zeros, isize };
      }
      yield* fill(cap);
    }
  }

  /**
   * After a damaged block: where its member started (compressed) and how many bytes had been given then; `isize` and
   * `at`, the length field before the next member found and that member's start. The bytes the damaged member should
   * have given are its length field's: the walk gives zeros up to that many before the next member's bytes, so that
   * what follows stays at its offset in the dump (the dump's chunks start on 8-byte offsets, and its reader looks for
   * them there only: garbage decoded from the damage, or bytes missing, would leave every later chunk unfound). When
   * it gave more than that, zeros up to the next multiple of 8 over it do the same (offsets shifted by whole groups).
   */
  let realign: { start: number; from: number; isize: number; at: number } | null = null;
  /** Zeros that put the member starting at `start` where the damaged member's length field says it belongs. */
  function* realignTo(start: number): Generator<Uint8Array, void, Uint8Array | null | undefined> {
    const r = realign;
    realign = null;
    // A length field of 0 cannot be the damaged member's, which gave bytes (zeros between it and the next member:
    // padding); nor is one mod 2^32 a length once the member gave 4 GiB.
    if (!r || r.at !== start || r.isize <= 0 || given - r.from >= 2 ** 32) return;
    let want = r.from + r.isize - given;
    // No more than DEFLATE can make of the compressed bytes between (1032 : 1): a length field read from data is not
    // one, and no zeros are invented then.
    if (want > (start - r.start) * 1032) return;
    if (want < 0) {
      // Garbage decoded past the member's length (the damaged data decoding on, often into the next member's bytes)
      // cannot be taken back: up to 7 zeros put what follows back on an 8-byte offset of the dump, where its reader
      // looks for chunks (the chunk the members' edge cuts is lost either way; every later one is found).
      const over = -want;
      want = (8 - (over % 8)) % 8;
      if (said) said.overrun = (said.overrun ?? 0) + over;
    }
    yield* giveZeros(want);
  }

  // Compressed bytes read again after false magics and damaged members: the search goes on from just after such a
  // member's start, so members nested in each other's data (crafted: stored blocks holding the next one) were each
  // read again, quadratic in their depth (77 ms per 64 KiB). Past REDO_BUDGET plus twice the file so far, it goes on
  // from where the member's data stopped being read instead: every byte then read a bounded number of times.
  let redone = 0;
  const retryAt = (start: number, stopped: number): number => {
    redone += stopped - start;
    return redone <= REDO_BUDGET + 2 * start || stopped <= start + 1 ? start + 1 : stopped;
  };

  /**
   * A gzip member header a writer writes, inside the current member's compressed data past its own header, at
   * compressed byte `at`: the member may have been cut short there (see the member loop); `out`, its `bytes` decoded
   * since, held. The decoder's state there is copied (snapshot(): `loaded`, the compressed offset its bit reader had
   * loaded to, `base` then; the member's `crc` and `size` then): past TEAR_HOLD bytes the member reads on without
   * holding them (`dry`: garbage decoded from the next members' bytes can run to MiBs at DEFLATE's 1032 : 1 before a
   * code fails), and decodes them again from the copy should it prove whole.
   */
  let tear: {
    at: number; out: Uint8Array[]; bytes: number; loaded: number; base: number; crc: number; size: number; dry: boolean;
  } | null = null;
  /** Zero bytes given in place of lost ones (counted in the damage's `filler`). */
  function* giveZeros(n: number): Generator<Uint8Array, void, Uint8Array | null | undefined> {
    for (let left = n; left > 0;) {
      const k = Math.min(left, 1 << 20);
      left -= k;
      given += k;
      if (said) said.filler = (said.filler ?? 0) + k;
      yield new Uint8Array(k);
    }
  }

  // Bytes skipped before this member (they start none), said once the member proves one: it gives a byte or ends.
  let skipped: { at: number; zeros: boolean } | null = null;
  const saySkipped = (to: number) => {
    if (!skipped) return;
    damage(skipped.at, `${to - skipped.at} bytes after a gzip member are not a gzip member${skipped.zeros ? " (zeros)" : ""}: skipped up to the next member at compressed byte ${to}`, false, skipped.zeros ? null : given);
    skipped = null;
  };
  for (let member = from > 0 ? 1 : 0; ; member++) {
    // A header: its fixed part and optional fields are within the first 64 KiB in nearly every file (a longer one gets
    // the whole buffer below).
    yield* fill(64 << 10);
    if (member > 0 && len - x.inputPos() === 0 && final()) return;
    let hl = gzipHeaderLength(unread());
    if (hl === 0 && !final()) {
      // A header longer than that (a large FEXTRA and a comment; gzip allows up to 64 KiB of extra field alone): as
      // much as the buffer holds before it is judged, whatever the size of the reads.
      yield* fill(cap);
      hl = gzipHeaderLength(unread());
    }
    if (hl <= 0) {
      if (member === 0) {
        // Nothing of the file can be read: where and why, as for a member damaged before its first byte.
        if (hl === 0 && final()) throw new GzipStartError(base + len, "the file ends inside its gzip header");
        if (hl === 0) throw new GzipStartError(0, `its gzip header is longer than ${cap} bytes`);
        throw new GzipStartError(0, "incorrect header check");
      }
      if (hl === 0) {
        saySkipped(base + x.inputPos());
        if (final()) damage(base + x.inputPos(), "the file ends inside a gzip member's header", true);
        else damage(base + x.inputPos(), `a gzip member's header is longer than ${cap} bytes`);
        return;
      }
      // Bytes that start no member (zero padding, garbage): skipped up to the next member, whose bytes are read too.
      const at = skipped?.at ?? base + x.inputPos();
      const s = yield* skipToMember();
      const zeros = s.zeros && (skipped?.zeros ?? true);
      if (s.found) {
        skipped = { at, zeros };
        if (realign) {
          realign.isize = s.isize;
          realign.at = base + x.inputPos();
        }
        continue;
      }
      // Only zeros after the last member: padding (tar, dd conv=sync), no byte lost: not said.
      if (!zeros) damage(at, `${base + x.inputPos() - at} bytes after the last gzip member are not a gzip member`);
      return;
    }
    const start = base + x.inputPos();
    const writtenBy = plausibleHeader(unread());
    x.seek(x.inputPos() + hl);
    let crc = 0;
    let size = 0;
    let falseMagic = false;
    let resyncAt = -1; // after a damaged block: the input position where the search for the next member starts
    // A member found by skipping (after garbage, or after a damaged block: the search runs through the damaged data)
    // may be a chance 1f 8b 08 in those bytes, whose data decodes as garbage for a while before a code fails or a
    // trailer disagrees. One whose header a gzip writer could have written is read as any member (a real member after
    // the damage may be damaged too: its bytes up to there count); the bytes of one that no writer made are held until
    // it proves a member — PROOF bytes decoded without error, or its end with a matching trailer — and dropped as a
    // false magic otherwise (the search goes on after it).
    let held: Uint8Array[] | null = skipped && !writtenBy ? [] : null;
    let stoppedAt = start + 1; // a false magic: where its data stopped being read
    let heldBytes = 0;
    tear = null;
    let scanAt = start + hl; // compressed bytes before this were looked at for a member header inside this member
    let torn = false; // cut short at a member header inside its data: the walk goes on there
    /** Gives a chunk of this member's bytes: held while the member is unproven, else out. */
    function* give(c: Uint8Array): Generator<Uint8Array, void, Uint8Array | null | undefined> {
      if (held) {
        held.push(c);
        heldBytes += c.length;
        if (heldBytes >= PROOF) yield* release();
        return;
      }
      saySkipped(start);
      if (realign) yield* realignTo(start);
      given += c.length;
      yield c;
    }
    /** Gives the held bytes: the member proved one (or can no longer be read again). */
    function* release(): Generator<Uint8Array, void, Uint8Array | null | undefined> {
      const h = held;
      held = null;
      if (!h) return;
      saySkipped(start);
      if (realign) yield* realignTo(start);
      for (const c of h) {
        given += c.length;
        yield c;
      }
    }
    /** The last run's bytes: into the member's checksum, then held past a member header inside its data, or given. */
    function* take(): Generator<Uint8Array, void, Uint8Array | null | undefined> {
      const a = x.outStart();
      const b = x.outEnd();
      if (b <= a) return;
      crc = x.crcOut(crc);
      size += b - a;
      if (tear?.dry) return; // decoded again from the copy should the member prove whole
      const c = new Uint8Array(x.memory.buffer, x.outPtr() + a, b - a).slice();
      if (!tear) return yield* give(c);
      tear.out.push(c);
      tear.bytes += c.length;
      if (tear.bytes <= TEAR_HOLD) return;
      // Held as much as it may: read on without holding, to be decoded again from the copy should it prove whole —
      // within the re-reading budget (a member of members nested in its stored data is read again for each), and not
      // for a member found by skipping (read as a false magic when it fails).
      const again = base + x.inputPos() - tear.loaded;
      if (skipped === null && redone + again <= REDO_BUDGET + 2 * tear.at) {
        tear.dry = true;
        tear.out = [];
        return;
      }
      yield* keepTear();
    }
    /** A tear whose member proved whole after its bytes were read on without holding them: decoded again from the copy. */
    function replay(t: NonNullable<typeof tear>): void {
      redone += Math.max(0, base + x.inputPos() - t.loaded);
      x.restore(base - t.base);
      crc = t.crc;
      size = t.size;
    }
    /** The member read on past the header inside its data without failing: what it decoded there is its own. */
    function* keepTear(): Generator<Uint8Array, void, Uint8Array | null | undefined> {
      const t = tear!;
      tear = null;
      scanAt = t.at + 1;
      if (t.dry) return replay(t);
      for (const c of t.out) yield* give(c);
    }
    /**
     * The member failed, or ended with a trailer that disagrees or none, past a member header a writer writes inside
     * its data: it was cut short there and the next member appended (a crashed appender, `cat cut.gz more.gz`). Its
     * bytes before the header are given (GunzipDamage.verifiedTo at its start, as a damaged member's), those
     * it decoded past it from the next members' bytes are dropped, zeros put the next member's bytes on an 8-byte
     * offset from this member's first (dumps split into members at such offsets stay readable: the dump's reader
     * looks for chunks there) and past the bytes the host gave already (`floor`), and the walk goes on at the header.
     * `failed`: a code failed (not the input's end). False when the bytes before the header can be the member's length
     * field, or past the re-reading budget: the member is then read as damaged.
     */
    function* tornAt(failed: boolean): Generator<Uint8Array, boolean, Uint8Array | null | undefined> {
      const t = tear!;
      const stopped = base + x.inputPos();
      // A member damaged before the header, whose garbage decoded on past its own end into the next member before a
      // code failed, looks alike; the 4 bytes before the header are then its trailer's length field, which the walk's
      // realigning zeros use (realignTo): read so when they can be one. A member cut short has its DEFLATE data there,
      // which pass as a length (at most DEFLATE's 1032 : 1 of its compressed bytes) about 1 time in 4,000 per KiB of
      // them: a member cut short after MiBs of data and failing after the header is likely read as damaged.
      const q = t.at - base;
      const isize = q >= 4 ? new DataView(x.memory.buffer, x.inPtr() + q - 4, 4).getUint32(0, true) : 0;
      const lengthField = isize > 0 && isize <= (t.at - start) * 1032;
      // Read on past what it held (`dry`): its bytes there are gone, and it decoded MiBs from the bytes past the header
      // before it failed — cut short there (its bytes are given again only should it prove whole).
      if (!t.dry && ((failed && lengthField) || t.at < base || redone + (stopped - t.at) > REDO_BUDGET + 2 * t.at)) {
        yield* keepTear();
        return false;
      }
      redone += Math.max(0, stopped - t.at);
      tear = null;
      saySkipped(start);
      // Its bytes are vouched for no more than a damaged member's (verifiedTo at its start): data damaged before the
      // header, decoding on as garbage past it, fails alike (a damaged member, then junk holding a chance header).
      const own = t.size;
      damage(start, `the gzip member is cut short at compressed byte ${t.at}, where another member's header starts: its bytes up to there were converted, and the members from there on`, false, given - own);
      let pad = (8 - (own % 8)) % 8;
      if (given + pad < floor) pad += Math.ceil((floor - given - pad) / 8) * 8;
      yield* giveZeros(pad);
      x.reset();
      x.seek(t.at - base);
      return true;
    }
    /**
     * The first gzip member magic in the unread input past the bytes looked at before (`scanAt`) whose header a writer
     * writes (`sure`), or that ends the input before it can be judged: its input position; or null.
     */
    /** A tear at input position `at`: the decoder's state copied, to decode again from there. */
    const setTear = (at: number) => {
      x.snapshot();
      tear = { at: base + at, out: [], bytes: 0, loaded: base + x.loadedTo(), base, crc, size, dry: false };
    };
    const headerInside = (): { at: number; sure: boolean } | null => {
      let lo = Math.max(scanAt - base, x.inputPos());
      while (lo < len) {
        const v = new Uint8Array(x.memory.buffer, x.inPtr() + lo, len - lo);
        const i = memberMagicAt(v);
        if (i < 0) break;
        scanAt = base + lo + i;
        // Judged once its first 10 bytes are in.
        if (i + 10 > v.length && !final()) return { at: lo + i, sure: false };
        if (writerHeader(v.subarray(i))) return { at: lo + i, sure: true };
        lo += i + 1;
      }
      // A magic may start in the last 3 bytes.
      scanAt = base + Math.max(lo, len - 3);
      return null;
    };
    for (;;) {
      let r: number;
      // A member header a gzip writer writes inside this member's data: the member may have been cut short there
      // and another appended after it (a crashed appender, `cat cut.gz more.gz`): its data then decodes the next
      // members' bytes as its own — garbage, and every later member lost. Its bytes before that header are decoded
      // exactly up to it (a stopping run: never past it, so that a magic not yet judged can still be one), those
      // after it are held until the member proves itself or fails.
      const h = tear || held ? null : headerInside();
      if (h && h.at >= x.loadedTo()) {
        r = x.run(h.at, 2);
        yield* take();
        if (r === NEED_INPUT) {
          if (h.sure) setTear(h.at);
          else yield* fill(cap);
          continue;
        }
      } else if (h?.sure) {
        // The bit reader loaded bytes past it already (not met: it stays 9 bytes short of the input's end while more
        // may come): held from here.
        setTear(h.at);
        continue;
      } else {
        r = x.run(len, final() ? 1 : 0);
        yield* take();
      }
      if (r === STREAM_END) {
        if (tear?.dry) {
          // Its trailer (the bytes past the tear kept): matching, the member is whole and decoded again from the copy;
          // not, cut short at the tear (below).
          yield* fill(18);
          const u = unread();
          const dv = new DataView(u.buffer, u.byteOffset, u.length);
          if (u.length >= 8 && dv.getUint32(0, true) === crc >>> 0 && dv.getUint32(4, true) === size % 2 ** 32) {
            yield* keepTear();
            continue;
          }
        }
        if (!held) {
          saySkipped(start); // else said once its trailer matches
          // An empty member right after a damaged one (bgzip's end-of-file member): the zeros go where its bytes would.
          if (size === 0 && realign) yield* realignTo(start);
        }
        break;
      }
      if (r === OUTPUT_FULL) continue;
      if (r === NEED_INPUT) {
        // Past the header by more than half the input buffer without failing: its own (the buffer keeps the bytes
        // from the header on while it is in doubt).
        if (tear && base + x.inputPos() - tear.at > cap >> 1) yield* keepTear();
        yield* fill(cap);
        continue;
      }
      // Failed past a member header inside its data: cut short there (torn). Not a member found by skipping that
      // gave no byte before it: a false magic, as below (the search finds the header next).
      if (tear && skipped === null && (yield* tornAt(r !== ERR_TRUNCATED))) {
        torn = true;
        break;
      }
      // A magic found by skipping that starts no member after all (a chance 1f 8b 08 in garbage: its data fails
      // before its first byte), or a member after the first that fails before its first byte (the header a crashed
      // appender left, a first block damaged): skipping goes on after it, while its bytes are still at hand, so the
      // members after it are read too (before, one right after a member ended the walk, one after a junk byte not).
      // The file ends inside a member that decoded without error up to there: its bytes are given (a dump cut short).
      if (r === ERR_TRUNCATED && heldBytes > 0) yield* release();
      const broken = member > 0 && size === 0 && r !== ERR_TRUNCATED;
      falseMagic = (skipped !== null || broken) && start + 1 >= base;
      if (falseMagic) {
        held = null;
        tear = null;
        skipped ??= { at: start, zeros: false };
        stoppedAt = base + x.inputPos();
        break;
      }
      // Too far back to read it again (its data spanned the input buffer): given as decoded.
      yield* release();
      saySkipped(start);
      const errorAt = x.errorAt();
      // What the damaged member gave may be garbage from its start (damaged data decodes on before a code fails).
      damage(base + errorAt, ERRORS[r] ?? `inflate error ${r}`, r === ERR_TRUNCATED, given - size);
      // A damaged block loses the rest of its member (DEFLATE cannot find its way back in), not the members after it
      // (bgzip, block-parallel gzip, appended members): the walk looks for the next member's magic from just after
      // this member's start, since damaged data often decodes on as garbage past its member's end, into the next
      // member, before a code fails (a magic inside the damaged data is tried and skipped as any false magic). As far
      // back as the input buffer still holds. Not before the dump's first byte: the dump would start mid-file (the
      // hosts say the start error).
      if (r === ERR_TRUNCATED || given === 0) return;
      skipped = { at: base + errorAt, zeros: false };
      // Within the re-reading budget as after a false magic: members nested in each other's damaged data (crafted:
      // stored blocks holding the rest of a region) each gave the rest again, quadratic in their depth (2.3 GB out of
      // 336 KB in 1.8 s); past it, from where this member's data stopped being read.
      resyncAt = Math.max(0, retryAt(start, base + errorAt) - base);
      // Bytes given before this member's own: zeros given ahead of it (after a damaged member before it) included.
      realign ??= { start, from: given - size, isize: -1, at: -1 };
      break;
    }
    if (resyncAt >= 0) {
      x.reset();
      x.seek(resyncAt);
      continue;
    }
    if (falseMagic) {
      x.reset();
      x.seek(retryAt(start, stoppedAt) - base); // the next header check fails: skipping goes on
      continue;
    }
    if (torn) continue;
    // The trailer: CRC-32 and length mod 2^32 of the member's bytes (and 10 bytes more: a member header cutting it).
    x.reset();
    yield* fill(18);
    const t = unread();
    const tcrc = t.length < 8 ? -1 : (t[0] | (t[1] << 8) | (t[2] << 16) | (t[3] << 24)) >>> 0;
    const tlen = t.length < 8 ? -1 : (t[4] | (t[5] << 8) | (t[6] << 16) | (t[7] << 24)) >>> 0;
    const matches = tcrc === crc >>> 0 && tlen === size % 2 ** 32;
    // Ended past a member header inside its data, with a trailer that disagrees or none: cut short there (torn).
    if (tear && !matches && (yield* tornAt(false))) continue;
    if (tear) yield* keepTear();
    if (t.length < 8) {
      yield* release();
      saySkipped(start);
      damage(base + x.inputPos(), "the file ends inside a gzip member's 8-byte trailer: its data is whole, but its CRC-32 and length were not checked", true);
      return;
    }
    if (held && !matches && start + 1 >= base) {
      // A member found by skipping whose trailer disagrees with its data: a false magic (its bytes dropped).
      held = null;
      x.seek(retryAt(start, base + x.inputPos()) - base);
      continue;
    }
    yield* release();
    saySkipped(start);
    // A trailer cut short by a member header a writer writes (a member cut inside its trailer, another appended): the
    // member's data decoded to its end, only its checksum unchecked; the walk goes on at that header. Its bytes are
    // vouched for no more than a damaged member's: damaged data can decode as garbage to a final block, then a chance
    // header in junk after it looks alike.
    const cut = matches ? -1 : trailerCut(t);
    if (cut >= 0) {
      damage(base + x.inputPos(), "a gzip member's 8-byte trailer is cut short where another member's header starts: its data decoded to its end, but its CRC-32 and length were not checked", false, given - size);
      x.seek(x.inputPos() + cut);
      continue;
    }
    // A trailer that disagrees vouches for none of the member's bytes.
    if (!matches) damage(base + x.inputPos(), "a gzip member's checksum or length does not match its data", false, given - size);
    x.seek(x.inputPos() + 8);
  }
}

/** An instance of the inflate module (its own memory: about 2 MiB). */
function instance(module: WebAssembly.Module): InflateExports {
  return new WebAssembly.Instance(module, { env: { abort: () => { throw new Error("gunzip: abort"); } } }).exports as unknown as InflateExports;
}

/**
 * The decompressed bytes of the gzip data `input` yields, member after member; each chunk is a new array of its own.
 * `onDamage` is called once, at the first damage — a member whose data is invalid (its bytes up to there are given;
 * the walk goes on at the next member's magic after the damage, unless no byte was given yet), a bad trailer checksum or length (its bytes were given; the walk goes on), data that ends inside a
 * member (`truncated`), or bytes after a member that start no member and are not only zeros at the end (skipped up
 * to the next member, whose bytes are given; the first skipped byte is said) — with the compressed offset and the
 * decompressed bytes given before it. Data that does not start with a gzip member throws ("incorrect header check").
 * `from` > 0: `input` is the file from that compressed byte on, where a member ended (offsets are the file's).
 * A member cut short where another member's header starts (a crashed appender, `cat cut.gz more.gz`) gives its bytes
 * up to there, and the members from there on follow (the damage said there). `floor`: bytes of this walk's output the
 * caller has from another reader already (src/node/file_source.ts: zlib's, skipped): the members after a cut member
 * start past them, should that reader have decoded on past the cut (zlib decodes the next members' bytes as the cut
 * member's; it is fed no further than the first member header after the file's start, so it gives none today).
 */
export async function* gunzip(
  module: WebAssembly.Module, input: AsyncIterable<Uint8Array>, onDamage: (d: GunzipDamage) => void, from = 0, floor = 0,
): AsyncGenerator<Uint8Array> {
  const it = input[Symbol.asyncIterator]();
  const w = walk(instance(module), onDamage, from, floor);
  try {
    let r = w.next();
    while (!r.done) {
      if (r.value === null) {
        const c = await it.next();
        r = w.next(c.done ? null : c.value);
      } else {
        if (r.value) yield r.value;
        r = w.next();
      }
    }
  } finally {
    w.return();
    await it.return?.();
  }
}

/** {@link gunzip} of bytes at hand: the decompressed bytes, and the first damage or null. */
export function gunzipBytes(module: WebAssembly.Module, gz: Uint8Array): { out: Uint8Array; damage: GunzipDamage | null } {
  let damage: GunzipDamage | null = null;
  const w = walk(instance(module), (d) => (damage = d));
  const parts: Uint8Array[] = [];
  let fed = false;
  for (let r = w.next(); !r.done;) {
    if (r.value === null) {
      r = w.next(fed ? null : gz);
      fed = true;
    } else {
      if (r.value) parts.push(r.value);
      r = w.next();
    }
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return { out, damage };
}
