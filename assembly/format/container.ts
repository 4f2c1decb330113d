/**
 * Streaming reader of the `.rawtrace` container (docs/format.md). The host writes file bytes into the input
 * window ({@link inputWritePtr}, {@link inputFree}) and calls {@link feed}; the reader validates and dispatches
 * every complete chunk, keeps the partial tail for the next call, and grows the window only to fit one declared
 * chunk (≤ 256 MiB, checked before any allocation). Damage is reported with file offsets; the reader resynchronizes
 * on the next valid chunk header so nothing after a damaged chunk is lost.
 */
import { crc32 } from "../util/crc32";
import { xxh32 } from "../util/xxh32";
import { xxh64Low } from "../util/xxh64";
import { Fatal, Warn } from "../util/error";
import { fail, failed, warn, lose, recordContainerWarnings } from "../util/diag";
import { seqReset, seqForget, markSeen, fingerprint, sameAsFirst, sameAsFirstAnyKind, noteGap, sayGaps, badSeq, isBadSeq, badSeqsOverflow } from "./chunk_seq";

export const PREAMBLE: usize = 16;
export const CHUNK_HEADER: usize = 24;
export const CHUNK_SYNC: u32 = 0x4b435452;
export const MAX_PAYLOAD: u32 = 0x10000000;
/** Format major version this reader knows; a larger one is refused but for the values one bit away from it (feed). */
export const FORMAT_MAJOR: u32 = 1;
/** Chunk flag bit 0: the payload checksum field holds the payload's CRC-32 (format 1.0). */
export const FLAG_CRC32: u32 = 1;
/** Chunk flag bit 1: the payload checksum field holds the payload's XXH32, seed 0 (format 1.1). */
export const FLAG_XXH32: u32 = 2;
/** Chunk flag bit 2: the payload checksum field holds the low 32 bits of the payload's XXH64, seed 0 (format 1.2). */
export const FLAG_XXH64: u32 = 4;
/**
 * The three checksum bits. A header that sets more than one of them is invalid (reported as BAD_CHUNK_HEADER, the
 * chunk skipped).
 */
const FLAG_SUMS: u32 = FLAG_CRC32 | FLAG_XXH32 | FLAG_XXH64;

/** Chunk types (docs/format.md). */
export const enum Chunk {
  HEADER = 1,
  CLOCK = 2,
  KIND_SIZES = 3,
  API_NAMES = 4,
  ACTIVITY = 5,
  STRINGS = 6,
  DEVICES = 7,
  DROPPED = 8,
  THREAD_NAMES = 9,
  END = 10,
  LOG = 11,
  /** ROCm agent table (docs/format.md §12). */
  AGENTS = 12,
  /** ROCm kernel symbols (docs/format.md §13). */
  KERNEL_SYMBOLS = 13,
  /** Habana: one synProfilerGetTrace buffer verbatim with its base address (docs/decoders/hpu.md). */
  HPU_TRACE = 14,
  /** Habana: one acquired device (id, type, HBM bytes, name). */
  HPU_DEVICE = 15,
  /** First vendor table chunk type: types from here on are handed to the vendor's decoder. */
  FIRST_VENDOR_TABLE = 12,
}
export const LAST_CHUNK_TYPE: u32 = 15;

/** Receives each valid chunk: type, payload address and length, file offset of the chunk header, seq. */
export type ChunkHandler = (type: u32, p: usize, n: u32, fileOffset: u64, seq: u32) => void;

const INITIAL_WINDOW: usize = 4 << 20;
/** The largest window: the largest chunk (its header, payload and 16 bytes after it), and INITIAL_WINDOW of room. */
const MAX_WINDOW: usize = CHUNK_HEADER + <usize>MAX_PAYLOAD + 16 + INITIAL_WINDOW;
/**
 * Zero bytes at the end of a cut buffer that cannot be a record's own fields: more than the largest record of any
 * vendor (CUPTI's ≈ 300, rocprofiler-sdk's 208 with our framing, PTI's ≈ 200, a Synapse entry's 208), so a record
 * starts in them.
 */
const ZERO_TAIL: u32 = 512;
/** The preamble's first 8 bytes. */
const MAGIC_TEXT = memory.data<u8>([82, 65, 87, 84, 82, 65, 67, 69]); // "RAWTRACE"

let win: usize = 0;
let winCap: usize = 0;
let winLen: usize = 0;
/** File offset of win[0]. */
let winBase: u64 = 0;
let preambleDone = false;
let resyncing = false;
let resyncFrom: u64 = 0;
let nextSeq: u32 = 0;
let handler: ChunkHandler | null = null;
/** Pass-1 hook for chunks whose payload failed its checksum ({@link setDamagedHandler}); null = none. */
let damagedHandler: ChunkHandler | null = null;
let verifyPayloads = true;
/** Size of the incomplete chunk at the window start (0 = none). */
let pendingTotal: usize = 0;
/**
 * A buffer chunk that failed its payload checksum while its payload ends in ZERO_TAIL or more zeros (more than a
 * record) and every byte after it so far is zero ({@link zeroTailed}): held at the window start, its size here (0 = none),
 * until the input ends (then it was cut: {@link settleHeld}) or a byte that is not zero arrives (then it is damaged:
 * {@link releaseHeld}).
 */
let holdTotal: usize = 0;
/** Zero bytes after the held chunk dropped from the window (a multiple of 8): they stand between it and the rest. */
let holdDropped: u64 = 0;
/** Free window bytes kept while a chunk is held, so the host goes on reading the zeros after it in large reads. */
const HOLD_ROOM: usize = 1 << 20;
const U64_MAX: u64 = 0xffffffffffffffff;
let eofScan = false;
let truncAt: u64 = U64_MAX;
let truncLen: u64 = 0;
let afterTrunc: u32 = 0;
/** File offset of the first complete chunk found after `truncAt` (the end of the bytes lost there). */
let afterTruncAt: u64 = 0;
/**
 * Window offset of the chunk cut at `truncAt` during the end-of-input scan, and whether it holds one vendor buffer
 * (ACTIVITY or HPU_TRACE: {@link isBufferChunk}).
 */
let truncP: usize = 0;
let truncBuffer = false;
/** Payload bytes of that cut chunk handed to the handler (cutBuffer), 0 when none or when the handler read none. */
let truncKept: u32 = 0;
/**
 * While the handler is given the held part of a chunk the file's end cut ({@link cutBuffer}): the payload length its
 * chunk header declares (bytes), of which only the `n` handed over are in the file. 0 during every other call, so a
 * decoder tells a cut buffer from a whole one (a Synapse buffer's trailer, its entry count, is in the missing part).
 */
export let cutDeclared: u32 = 0;
/**
 * File offset just past the declared span of the last chunk that failed its payload checksum: a chunk whose header
 * starts before it was found inside that span ({@link damagedSpan}), and its payload is hashed within a budget
 * ({@link nestedUnhashed}). Set at the same decisions in every pass.
 */
let failedEnd: u64 = 0;

/**
 * Input offset from which the host's bytes may not be the file's own (U64_MAX: none): a damaged gzip stream's bytes
 * after its first damage — garbage decoded from a damaged member, members placed after it at offsets its lost bytes
 * shifted. Every chunk there still checks its own payload; only the part of a buffer chunk cut by the input's end,
 * whose checksum cannot be verified ({@link cutBuffer}), is read no further than this. Set by the host before each
 * pass's end (rt_set_unverified_from), reset per pass.
 */
let unverifiedFrom: u64 = U64_MAX;
/** Sets {@link unverifiedFrom} for this pass. */
export function setUnverifiedFrom(off: u64): void {
  unverifiedFrom = off;
}

/**
 * The buffer chunk that failed its payload checksum across {@link unverifiedFrom} in pass 1 (file offset; U64_MAX:
 * none) and its payload bytes before it, read as a cut buffer's ({@link keptBefore}); the later passes read the same.
 */
let acrossAt: u64 = U64_MAX;
let acrossKept: u32 = 0;
/** File offset of the chunk {@link cutAcross} read up to {@link unverifiedFrom} in pass 1 (U64_MAX: none). */
let cutAcrossAt: u64 = U64_MAX;

/**
 * Payload bytes of the buffer chunk at `off` (which failed its payload checksum, `held` bytes of payload here) that
 * come before {@link unverifiedFrom}: a gzip stream damaged inside the chunk — a member cut short where another starts,
 * a damaged member — gives the chunk's first bytes as the file's own and the rest from elsewhere (zeros, the next
 * members), so the checksum fails on the whole; its records before that point are read as those of a buffer the
 * file's end cut there ({@link cutBuffer}) instead of lost with the rest. Decided in pass 1 with what the host says by
 * then (it learns of the damage before it gives a byte past it, or after the damaged member's bytes: then the chunk
 * may be lost whole), and kept for the later passes, which read the same. 0: none.
 */
function keptBefore(off: u64, held: u32): u32 {
  if (verifyPayloads) {
    const payloadAt = off + CHUNK_HEADER;
    if (unverifiedFrom == U64_MAX || unverifiedFrom <= payloadAt || unverifiedFrom >= payloadAt + <u64>held) return 0;
    acrossAt = off;
    acrossKept = <u32>(unverifiedFrom - payloadAt);
  }
  return acrossAt == off ? acrossKept : 0;
}

/** Resets the reader for a new pass over a file (allocates the window; call after heap.reset() or per pass). */
export function readerReset(h: ChunkHandler, verify: bool): void {
  verifyPayloads = verify;
  unverifiedFrom = U64_MAX;
  if (verify) acrossAt = cutAcrossAt = U64_MAX;
  if (win == 0) {
    win = heap.alloc(INITIAL_WINDOW);
    winCap = INITIAL_WINDOW;
  }
  winLen = 0;
  winBase = 0;
  preambleDone = false;
  resyncing = false;
  nextSeq = 0;
  seqReset();
  handler = h;
  eofScan = false;
  truncAt = U64_MAX;
  truncLen = 0;
  afterTrunc = 0;
  afterTruncAt = 0;
  truncP = 0;
  truncBuffer = false;
  truncKept = 0;
  cutDeclared = 0;
  pendingTotal = 0;
  holdTotal = 0;
  holdDropped = 0;
  failedEnd = 0;
  nestedHashed = 0;
}

/**
 * Sets the hook told of each chunk whose payload fails its checksum while payloads are verified (pass 1), after the
 * chunk is reported and before it is skipped: the payload bytes [p, p+n) are only valid during the call. The engine
 * uses it to read a damaged HEADER rather than assume a vendor (engine.ts `salvageHeader`). null = no hook.
 */
export function setDamagedHandler(h: ChunkHandler | null): void {
  damagedHandler = h;
}

/** Forgets buffers (after heap.reset()). */
export function readerForget(): void {
  win = 0;
  winCap = 0;
  seqForget();
}

/** Where the host writes the next input bytes. Valid until the next feed(). */
export function inputWritePtr(): usize {
  return win + winLen;
}
/** How many bytes the host may write at {@link inputWritePtr}. */
export function inputFree(): usize {
  return winCap - winLen;
}

/**
 * True when the payload of the complete chunk at `c` (`len` bytes, inside the window) matches the checksum its
 * header stores, computed as `sums` says: FLAG_XXH64, FLAG_XXH32 or FLAG_CRC32.
 */
// @ts-ignore: decorator
@inline function payloadMatches(c: usize, len: u32, sums: u32): bool {
  const p = c + CHUNK_HEADER;
  const sum = sums == FLAG_XXH64 ? xxh64Low(p, len) : sums == FLAG_XXH32 ? xxh32(p, len) : crc32(p, len);
  return sum == load<u32>(c, 16);
}

/** True when a valid chunk header starts at p (sync word and header CRC). */
// @ts-ignore: decorator
@inline function headerValid(p: usize): bool {
  return load<u32>(p) == CHUNK_SYNC && crc32(p, 20) == load<u32>(p, 20);
}

/**
 * Bytes of the damaged chunk at `c` (declaring `total` bytes with its header) up to the first valid chunk header
 * that starts inside that span (a multiple of 8; read as far as the window holds), or `total` when there is none. A chunk that lost bytes (a dropped block of
 * the file) or whose length field grew fails its payload checksum and declares bytes that belong to the chunks
 * after it: skipping the whole span would lose the next intact chunk too.
 */
function damagedSpan(c: usize, total: usize): usize {
  // A header that starts inside the span may end up to 16 bytes past it: feed() holds those bytes (or the input's
  // end) before it asks.
  const avail = win + winLen - c;
  for (let q: usize = CHUNK_HEADER; q < total && q + CHUNK_HEADER <= avail; q += 8) if (headerValid(c + q)) return q;
  return total;
}

/**
 * Payload bytes of chunks found inside a damaged one's span ({@link failedEnd}) that the reader may hash, per byte of
 * the file up to each one's end: past that budget such a chunk whose own span holds a valid chunk header is taken as
 * damaged without its payload hashed ({@link nestedUnhashed}).
 */
const NESTED_HASHING: u64 = 2;
/** Payload bytes charged to that budget so far in this pass. */
let nestedHashed: u64 = 0;

/**
 * Whether the chunk at `c` (file offset `off`, `total` bytes, `len` of payload, a checksum in its header), whose
 * header starts inside the span of a chunk that failed its checksum ({@link failedEnd}), is taken as damaged without
 * its payload hashed: when the bytes of such chunks hashed so far, this one's with them, would pass
 * {@link NESTED_HASHING} times the file's bytes up to its end, and a valid chunk header starts inside its span (then
 * skipped up to that header). Hostile chunk headers 24 bytes apart, each declaring megabytes, had every declared
 * payload hashed: quadratic (40,000 declaring 16 MiB, a 17 MB file: 251 s). An honest file spends little of the
 * budget (those chunks are few, mostly intact and read past), and its intact chunks are hashed whatever their payload
 * holds: a payload may hold a valid chunk header (a user's string such as an NVTX range name: "RTCK" and 16 letters
 * have a printable CRC one time in fifty), and such a chunk after one that lost bytes was dropped as damaged.
 * Called for each such chunk in every pass, hashed there or not (pass 2 hashes only the chunks pass 1 found damaged),
 * so the budget, and each decision, is the same in every pass; `check`: the payload is verified in this pass.
 */
function nestedUnhashed(c: usize, off: u64, total: usize, len: u32, check: bool): bool {
  if (nestedHashed + <u64>len <= NESTED_HASHING * (off + <u64>total)) {
    nestedHashed += <u64>len;
    return false;
  }
  return check && damagedSpan(c, total) < total;
}

/**
 * True for the chunk types that hold one vendor buffer of records: ACTIVITY (5) and Habana's HPU_TRACE (14). The
 * held part of one the file's end cut is handed to the decoder ({@link cutBuffer}); any other cut chunk is lost.
 */
// @ts-ignore: decorator
@inline function isBufferChunk(type: u32): bool {
  return type == Chunk.ACTIVITY || type == Chunk.HPU_TRACE;
}

/**
 * The file ends inside a buffer chunk ({@link isBufferChunk}) whose header is intact (its CRC vouches for type,
 * length and seq) and no complete chunk follows (so it was cut, not damaged): its bytes that are here go to the
 * handler as a shorter payload of its type, {@link cutDeclared} set to the length the header declares, so that every
 * whole record in them is decoded (the vendor decoders report the record the cut went through as RECORD_TRUNCATED;
 * a decoder that can read nothing of it says so with {@link cutUnread}, and the cut tail is lost whole as before).
 * Its payload checksum cannot be verified: it covers the missing bytes. A collector killed while it wrote a buffer
 * (8 MiB with CUPTI) lost all of it before. Both passes hand over the same bytes. Also the chunk {@link settleHeld}
 * hands over (`toEnd`): whole by its length, but its tail and the rest of the file never written. Returns false after
 * a fatal error in the handler.
 */
function cutBuffer(h: ChunkHandler, toEnd: bool): bool {
  const c = win + truncP;
  const len = load<u32>(c, 12);
  // All of the payload when only its padding is cut.
  const held = <u32>min<usize>(winLen - truncP - CHUNK_HEADER, <usize>len);
  // Without the zeros it ends in (rounded up to 8 bytes) when they are more than a record (ZERO_TAIL): a crash can
  // leave a file whose last blocks were never written read as zeros, and the record they start in would be decoded
  // with zero fields (an event of pid 0, an API call 0); cut there, that record is the one the decoder reports
  // RECORD_TRUNCATED. A shorter run is a record's own zero fields (a cut right after a record ending in them).
  const nz = <u32>(pastLastNonZero(c + CHUNK_HEADER, c + CHUNK_HEADER + held) - (c + CHUNK_HEADER));
  let data = held - nz < ZERO_TAIL ? held : min<u32>((nz + 7) & ~7, held);
  // Unverified bytes past where the host's input stopped being the file's own (a damaged gzip stream): not records.
  const payloadAt = truncAt + CHUNK_HEADER;
  if (unverifiedFrom != U64_MAX) data = unverifiedFrom <= payloadAt ? 0 : <u32>min<u64>(<u64>data, unverifiedFrom - payloadAt);
  const seq = load<u32>(c, 8);
  if (data < 4 || markSeen(seq)) return true; // nothing to read, or a copy of a chunk read before
  truncKept = data;
  cutDeclared = len;
  h(<u32>load<u16>(c, 4), c + CHUNK_HEADER, data, truncAt, seq);
  cutDeclared = 0;
  // The lost part runs to the held bytes' end, or (`toEnd`: a zero-tailed chunk, settleHeld) to the file's end.
  const lostEnd = toEnd ? truncAt + truncLen : afterTrunc > 0 ? afterTruncAt : truncAt + CHUNK_HEADER + held;
  if (truncKept != 0 && data < held && recordContainerWarnings) lose(afterTrunc > 0 ? Warn.BAD_CHUNK_HEADER : Warn.TRUNCATED, truncAt + CHUNK_HEADER + data, lostEnd);
  return !failed();
}

/**
 * Whether the chunk at `c` (at file offset `truncAt`), which runs past the input's end with complete chunks after it,
 * declares a payload that runs past {@link unverifiedFrom}: its bytes end there, the next members' follow (a gzip
 * member cut short), so it is read up to there as a cut buffer ({@link cutBuffer}) instead of lost whole. Decided in
 * pass 1 and kept for the later passes, as {@link keptBefore}.
 */
function cutAcross(c: usize): bool {
  if (verifyPayloads) {
    const payloadAt = truncAt + CHUNK_HEADER;
    const across = unverifiedFrom != U64_MAX && unverifiedFrom > payloadAt && unverifiedFrom < payloadAt + <u64>load<u32>(c, 12);
    cutAcrossAt = across ? truncAt : U64_MAX;
  }
  return cutAcrossAt == truncAt;
}

/** Address just past the last byte of [from, to) that is not zero; `from` when they all are. */
function pastLastNonZero(from: usize, to: usize): usize {
  let e = to;
  while (e - from >= 8 && load<u64>(e - 8) == 0) e -= 8;
  while (e > from && load<u8>(e - 1) == 0) e--;
  return e;
}

/** How many of the `n` bytes at `p` are zeros before the first that is not. */
function zeroPrefix(p: usize, n: usize): usize {
  let i: usize = 0;
  while (n - i >= 8 && load<u64>(p + i) == 0) i += 8;
  while (i < n && load<u8>(p + i) == 0) i++;
  return i;
}

/**
 * Whether the complete chunk at `c` (`total` bytes), which failed its payload checksum, may be a buffer whose tail
 * was never written: a buffer chunk ({@link isBufferChunk}) whose payload ends in ZERO_TAIL or more zeros (more
 * than a record), its padding and every byte after it up to the window's end zero too, and no valid chunk header in its
 * span. A crash can leave the file's last blocks unwritten, read as zeros up to the file's size: such a chunk is
 * held ({@link holdTotal}) until the input ends or a byte that is not zero comes. A chunk damaged otherwise is
 * skipped as before.
 */
function zeroTailed(c: usize, total: usize): bool {
  if (!isBufferChunk(<u32>load<u16>(c, 4)) || (eofScan && truncAt != U64_MAX)) return false;
  const len = <usize>load<u32>(c, 12);
  if (len < <usize>ZERO_TAIL) return false;
  // Forward from the payload's last ZERO_TAIL bytes to the window's end: it stops at the first byte that is not zero
  // (the next chunk's header, for a chunk damaged otherwise). Scanning back from the window's end instead cost every
  // damaged chunk the whole run of zeros the window ends in: quadratic in a hostile file (60,000 damaged 32-byte
  // chunks before 3 MiB of zeros: 36.6 s against 0.05 s).
  // The header scan first: it stops at the first chunk header inside the span, which chunks found inside a damaged
  // one's span all have but the last; the zeros, scanned first, cost each of them the run to the window's end
  // (100,000 headers 24 bytes apart declaring 8 MiB, then zeros: 23 s).
  if (damagedSpan(c, total) != total) return false;
  const from = c + CHUNK_HEADER + len - <usize>ZERO_TAIL;
  const n = win + winLen - from;
  return zeroPrefix(from, n) == n;
}

/**
 * Keeps the held chunk at the window start: drops the zeros read after it (whole 8-byte groups, so the next chunk
 * could still start on its 8-byte file offset), and keeps room in the window for the next read.
 */
function holdKeep(): void {
  const z = (winLen - holdTotal) & ~7;
  winLen -= z;
  holdDropped += <u64>z;
  // 8 more: the bytes kept after the chunk (fewer than 8) grow from read to read, and must not bring this back.
  if (winCap - winLen < HOLD_ROOM) growWindow(winLen + HOLD_ROOM + 8);
}

/**
 * Grows the window to `want` bytes (more than it has), but to twice its size at most and one and a half times at
 * least, and {@link MAX_WINDOW} at most, keeping its bytes. At most twice: the window is full when it grows, so memory
 * follows the bytes present. At least one and a half times: that bounds the growths (about eleven from
 * INITIAL_WINDOW) and the memory they leave behind (the core's allocator frees only its last block: a window not last
 * in the heap stays allocated) to about twice the last window. Grown to each chunk's size and room after it, hostile
 * chunk headers each declaring 4 MiB more than the one before grew it by 4 MiB each time: 40 of them (a 160 MB
 * file) took 4 GiB of memory, and the host failed reading past 2 GiB; now 1 GiB at most (64 of them, to 256 MiB). Not
 * twice always: a window of 16 MiB for chunks of 8 MiB and 24 bytes (12 MiB before) moves twice the bytes from read
 * to read.
 */
function growWindow(want: usize): void {
  let cap = min<usize>(winCap << 1, want);
  cap = min<usize>(max<usize>(cap, winCap + (winCap >> 1)), MAX_WINDOW);
  if (cap <= winCap) return;
  const nw = heap.alloc(cap);
  memory.copy(nw, win, winLen);
  heap.free(win);
  win = nw;
  winCap = cap;
}

/**
 * The held chunk turned out damaged (a byte that is not zero came after the first `z` zeros after it): reported
 * and skipped as any chunk that fails its checksum, and the zeros before that byte scanned as damaged bytes where a
 * chunk header was expected, as they were before chunks were held. Returns the window offset to go on from (its
 * file offset is winBase + it).
 */
function releaseHeld(z: usize): usize {
  const total = holdTotal;
  const off = winBase;
  const len = load<u32>(win, 12);
  const type = <u32>load<u16>(win, 4);
  const seq = load<u32>(win, 8);
  if (recordContainerWarnings) {
    warn(Warn.BAD_PAYLOAD_CRC, off, seq);
    lose(Warn.BAD_PAYLOAD_CRC, off, off + <u64>total, seq, isBufferChunk(type) ? <u64>len : 0);
  }
  const dh = damagedHandler;
  if (verifyPayloads && dh != null) dh(type, win + CHUNK_HEADER, len, off, seq);
  // Whole 8-byte groups of zeros go; the group of the byte that is not zero is scanned as any other.
  const drop = z & ~7;
  memory.copy(win + total, win + total + drop, winLen - total - drop);
  winLen -= drop;
  holdDropped += <u64>drop;
  if (holdDropped != 0 && !resyncing) {
    resyncing = true;
    resyncFrom = off + <u64>total;
  }
  winBase += holdDropped;
  holdDropped = 0;
  holdTotal = 0;
  return total;
}

/**
 * The input ended with nothing but zeros after the held chunk: it is a buffer cut by the crash, read as one the
 * file's end cut ({@link cutBuffer}): every whole record before its zeros, TRUNCATED from the chunk to the file's end.
 */
function settleHeld(): void {
  truncAt = winBase;
  truncLen = <u64>winLen + holdDropped;
  truncP = 0;
  truncBuffer = true;
  holdTotal = 0;
  cutBuffer(handler!, true);
}

/**
 * Called by the handler of a cut buffer ({@link cutDeclared} ≠ 0) that could read nothing of it (a Synapse buffer cut
 * inside its own 48-byte header, or holding no entry): the cut tail counts as lost (TRUNCATED), as any other cut
 * chunk's. Does nothing during other calls.
 */
export function cutUnread(): void {
  if (cutDeclared != 0) truncKept = 0;
}

/**
 * Consumes `n` new bytes written at inputWritePtr(). Dispatches every complete valid chunk. Returns false after a
 * fatal error (wrong magic, future major version).
 */
export function feed(n: usize): bool {
  if (failed()) return false;
  if (n > winCap - winLen) {
    fail(Fatal.API_MISUSE, winBase + winLen, n);
    return false;
  }
  winLen += n;
  const full = winLen == winCap;
  let p: usize = 0;
  if (holdTotal != 0) {
    // A held chunk (zeroTailed): zeros only after it so far, or a byte that is not zero that makes it damaged.
    const z = zeroPrefix(win + holdTotal, winLen - holdTotal);
    if (z == winLen - holdTotal) {
      holdKeep();
      return true;
    }
    p = releaseHeld(z);
    if (failed()) return false;
  }
  if (!preambleDone) {
    if (winLen < PREAMBLE) return true;
    const major = <u32>load<u16>(win, 8);
    // "RAWTRACE" read as a little-endian u64.
    const magicOk = load<u64>(win) == 0x4543415254574152;
    // A major one bit away from 1 (3, 5, 9, … 32769) is what one changed bit makes of a format 1 dump's: newer formats
    // do not use those values (docs/format.md, "File preamble"). 0 is read as 1, as always.
    const flipped = major > FORMAT_MAJOR && popcnt<u32>(major ^ FORMAT_MAJOR) == 1;
    if (!magicOk || flipped) {
      // A damaged magic or major would lose the whole dump: a chunk header whose sync word and CRC-32 hold right after
      // the preamble proves a format 1 dump (a chance match needs 64 fixed bits: the 32-bit sync word and the 32-bit
      // header CRC), so it is read, PREAMBLE_DAMAGED said.
      if (winLen < PREAMBLE + CHUNK_HEADER) return true; // finish() decides a shorter file
      if ((major > FORMAT_MAJOR && !flipped) || !headerValid(win + PREAMBLE)) {
        if (magicOk) fail(Fatal.FUTURE_FORMAT, 8, major);
        else fail(Fatal.BAD_MAGIC, 0, 0);
        return false;
      }
      if (recordContainerWarnings) warn(Warn.PREAMBLE_DAMAGED, 0, preambleBytesChanged());
    } else if (major > FORMAT_MAJOR) {
      fail(Fatal.FUTURE_FORMAT, 8, major);
      return false;
    }
    preambleDone = true;
    p = PREAMBLE;
  }
  const h = handler!;
  while (true) {
    if (winLen - p < CHUNK_HEADER) break;
    const c = win + p;
    const off = winBase + <u64>p;
    if (!headerValid(c)) {
      if (eofScan) {
        p += 8;
        continue;
      }
      if (!resyncing) {
        resyncing = true;
        resyncFrom = off;
      }
      // Chunks start on 8-byte file offsets: scan those only.
      p += 8;
      continue;
    }
    const len = load<u32>(c, 12);
    if (len > MAX_PAYLOAD) {
      if (recordContainerWarnings) {
        warn(Warn.CHUNK_TOO_LARGE, off, len);
        lose(Warn.CHUNK_TOO_LARGE, off, off + 8);
      }
      p += 8;
      continue;
    }
    if (resyncing) {
      resyncing = false;
      if (recordContainerWarnings) {
        warn(Warn.BAD_CHUNK_HEADER, resyncFrom, off - resyncFrom);
        lose(Warn.BAD_CHUNK_HEADER, resyncFrom, off);
      }
    }
    const total = CHUNK_HEADER + ((<usize>len + 7) & ~7);
    if (winLen - p < total) {
      if (!eofScan) {
        pendingTotal = total;
        break;
      }
      // At the end of the input a chunk runs past the last byte: the file was cut inside it, or its length field
      // is damaged. Keep scanning after it for complete chunks before deciding which.
      if (truncAt == U64_MAX) {
        truncAt = off;
        truncLen = winLen - p;
        truncP = p;
        truncBuffer = isBufferChunk(<u32>load<u16>(c, 4));
      }
      p += 8;
      continue;
    }
    const type = <u32>load<u16>(c, 4);
    const sums = <u32>load<u16>(c, 6) & FLAG_SUMS;
    const seq = load<u32>(c, 8);
    p += total;
    if ((sums & (sums - 1)) != 0) {
      // A header (its CRC intact, so written this way) that claims two checksums or more: no writer does that. The
      // length is trusted as far as the header CRC vouches for it: the chunk is skipped whole, in both passes.
      if (recordContainerWarnings) {
        warn(Warn.BAD_CHUNK_HEADER, off, <u64>total);
        lose(Warn.BAD_CHUNK_HEADER, off, off + <u64>total, seq, isBufferChunk(type) ? <u64>len : 0);
      }
      continue;
    }
    // Payload checksums are verified in pass 1; pass 2 re-reads the same bytes and skips the same chunks by
    // sequence number, so it does not pay for the checksum again (unless pass 1 saw too many bad chunks to list).
    const verify = verifyPayloads || badSeqsOverflow();
    // Pass 2 skips what pass 1 found damaged, to the same next chunk (decided on the same bytes): it checks again
    // only the chunks whose seq is on the list, since a seq pass 1 saw damaged may also be an intact copy's (a
    // duplicate, a reused seq), read when intact, as pass 1 read it. A copy without a payload checksum is intact to
    // both passes (pass 2 skipped it: its records indexed in pass 1 were missing from the output).
    const check = sums != 0 && (verify || isBadSeq(seq));
    // Where the next chunk starts (damagedSpan) is decided on the same bytes in both passes: a header may start in
    // the span's last 8 bytes and end 16 past it, so those must be here too (or the input be at its end): before a
    // chunk inside a damaged one's span is looked into (nestedUnhashed), or a damaged one is skipped.
    const short = !eofScan && winLen - (p - total) < total + 16;
    if (check && short && off < failedEnd) {
      p -= total;
      pendingTotal = total + 16;
      break;
    }
    const unhashed = sums != 0 && off < failedEnd && nestedUnhashed(c, off, total, len, check);
    if (check && (unhashed || !payloadMatches(c, len, sums))) {
      if (short) {
        p -= total;
        pendingTotal = total + 16;
        break;
      }
      failedEnd = off + <u64>total;
      // Listed even when held: pass 2 must take this branch for it, and hold it as well.
      if (verifyPayloads) badSeq(seq);
      if (zeroTailed(c, total)) {
        p -= total;
        holdTotal = total;
        break;
      }
      const span = damagedSpan(c, total);
      p += span - total;
      const held = <u32>min<usize>(len, span - CHUNK_HEADER);
      const kept = isBufferChunk(type) ? keptBefore(off, held) : 0;
      if (kept >= 4) {
        // Its records before the host's damaged bytes, as a cut buffer's; the rest lost.
        truncKept = kept;
        cutDeclared = len;
        h(type, c + CHUNK_HEADER, kept, off, seq);
        cutDeclared = 0;
        // Whether the decoder read any of it (cutUnread); truncKept is the end's cut buffer's again (finish reads it).
        const read = truncKept != 0;
        truncKept = 0;
        if (failed()) return false;
        if (recordContainerWarnings) {
          warn(Warn.BAD_PAYLOAD_CRC, off, seq);
          if (read) lose(Warn.BAD_PAYLOAD_CRC, off + CHUNK_HEADER + <u64>kept, off + <u64>span, seq);
          else lose(Warn.BAD_PAYLOAD_CRC, off, off + <u64>span, seq, <u64>held);
        }
        continue;
      }
      if (recordContainerWarnings) {
        warn(Warn.BAD_PAYLOAD_CRC, off, seq);
        lose(Warn.BAD_PAYLOAD_CRC, off, off + <u64>span, seq, isBufferChunk(type) ? <u64>held : 0);
      }
      const dh = damagedHandler;
      if (verifyPayloads && dh != null) {
        dh(type, c + CHUNK_HEADER, held, off, seq);
        if (failed()) return false;
      }
      continue;
    }
    const fp = fingerprint(c, type, sums, len);
    if (markSeen(seq)) {
      if (sameAsFirstAnyKind(seq, c, type, sums, len, fp)) {
        if (recordContainerWarnings) warn(Warn.DUPLICATE_CHUNK, off, seq);
        continue;
      }
      // The number is reused by different content (two writers, a damaged counter): keep it, and say so.
      if (recordContainerWarnings) warn(Warn.SEQ_REUSED, off, seq);
    } else sameAsFirst(seq, fp, true);
    if (seq > nextSeq) {
      if (recordContainerWarnings) noteGap(off, nextSeq, seq);
    }
    if (seq >= nextSeq) nextSeq = seq + 1;
    if (type == 0 || type > LAST_CHUNK_TYPE) {
      if (recordContainerWarnings) warn(Warn.UNKNOWN_CHUNK, off, type);
      continue;
    }
    if (eofScan) {
      if (afterTrunc == 0) afterTruncAt = off;
      afterTrunc++;
    }
    h(type, c + CHUNK_HEADER, len, off, seq);
    if (failed()) return false;
  }
  // A buffer chunk cut by the end, or one whose length runs into complete chunks after it across the host's damaged
  // bytes (a gzip member cut short, another appended: its bytes end there, the next members' follow).
  if (eofScan && truncAt != U64_MAX && (afterTrunc == 0 || cutAcross(win + truncP)) && truncBuffer && !cutBuffer(h, false)) return false;
  // Keep the unconsumed tail at the start of the window.
  if (p > 0) {
    if (p < winLen) memory.copy(win, win + p, winLen - p);
    winLen -= p;
    winBase += p;
  }
  if (holdTotal != 0) {
    holdKeep();
    return true;
  }
  // Grow only when the window was full of bytes this call, so memory follows the bytes actually present and never a
  // length field alone (a 1 KiB file that declares a 256 MiB chunk allocates nothing), and a chunk is pending that
  // left less than a quarter of it free for the next read: the bytes kept are moved from read to read, a window's
  // worth each time a few bytes are read. Up to the chunk's size and INITIAL_WINDOW more (twice the window at most):
  // chunk headers found 8 to 24 bytes apart inside a damaged chunk's span, each declaring about the window's size
  // (40,000 declaring 16 MiB, a 17 MB file: 155 s; 10,000 declaring 4 MiB - 48, 10,003 reads) moved the whole window
  // and read a few bytes for each one. Only when this read was small too (or the chunk is larger than the window): a
  // window that holds a chunk of about its size from large reads (8 MiB CUPTI buffers in 8 MiB) keeps its size — grown
  // to 12 MiB it moved more bytes from read to read, and the bench's conversions took 3–5% longer.
  if (full && pendingTotal != 0 && winCap - winLen < winCap >> 2 && (pendingTotal > winCap || n < winCap >> 2)) {
    growWindow(pendingTotal + INITIAL_WINDOW);
  }
  pendingTotal = 0;
  return true;
}

/**
 * How many of the window's first 10 bytes differ from a format 1 dump's: the magic "RAWTRACE" and the major version
 * 1 as a little-endian u16 (the window holds the preamble).
 */
function preambleBytesChanged(): u32 {
  let n: u32 = 0;
  for (let i: usize = 0; i < 8; i++) if (load<u8>(win + i) != load<u8>(MAGIC_TEXT + i)) n++;
  if (<u32>load<u8>(win, 8) != (FORMAT_MAJOR & 0xff)) n++;
  if (<u32>load<u8>(win, 9) != FORMAT_MAJOR >> 8) n++;
  return n;
}

/** Ends the input: settles a chunk that runs past the end (truncation or damaged length) and reports leftovers. */
export function finish(): void {
  if (failed()) return;
  if (!preambleDone) {
    // Short of the preamble: EMPTY when every byte there is the magic's ("RAWTRACE"), a dump cut that early; else
    // BAD_MAGIC (a 10-byte "RAWTRAC-12" is not one). A whole preamble that waited for the chunk header after it (its
    // magic or major not a format 1 dump's) and the file ended first: nothing proves it damaged, so as it reads.
    let magic = true;
    for (let i: usize = 0; i < winLen && i < 8; i++) magic = magic && load<u8>(win + i) == load<u8>(MAGIC_TEXT + i);
    if (magic && winLen >= PREAMBLE) fail(Fatal.FUTURE_FORMAT, 8, <u32>load<u16>(win, 8));
    else if (magic) fail(Fatal.EMPTY, 0, winLen);
    else fail(Fatal.BAD_MAGIC, 0, 0);
    return;
  }
  const wasResyncing = resyncing;
  const from = resyncFrom;
  if (winLen >= CHUNK_HEADER && !wasResyncing) {
    eofScan = true;
    feed(0);
    eofScan = false;
  }
  if (holdTotal != 0 && !failed()) settleHeld();
  if (!recordContainerWarnings) return;
  sayGaps();
  if (wasResyncing) {
    warn(Warn.BAD_CHUNK_HEADER, from, winBase + winLen - from);
    lose(Warn.BAD_CHUNK_HEADER, from, winBase + winLen);
  } else if (truncAt != U64_MAX) {
    // Complete chunks after it: the length field was damaged, the file was not cut.
    if (afterTrunc > 0) {
      warn(Warn.BAD_CHUNK_HEADER, truncAt, afterTruncAt - truncAt);
      // Read up to the host's damaged bytes (cutAcross): the rest of it lost (cutBuffer said it).
      if (truncKept == 0) lose(Warn.BAD_CHUNK_HEADER, truncAt, afterTruncAt);
    } else {
      warn(Warn.TRUNCATED, truncAt, truncLen);
      // A cut buffer handed over whole-record by whole-record: its decoder reports the record the cut went through
      // (RECORD_TRUNCATED); nothing else of these bytes is lost, unless the decoder read none of them (cutUnread).
      if (truncKept == 0) lose(Warn.TRUNCATED, truncAt, truncAt + truncLen);
    }
  } else if (winLen > 0) {
    warn(Warn.TRUNCATED, winBase, winLen);
    lose(Warn.TRUNCATED, winBase, winBase + winLen);
  }
}

/** File offset just past the bytes fed so far. */
export function fedBytes(): u64 {
  return winBase + winLen + holdDropped;
}
