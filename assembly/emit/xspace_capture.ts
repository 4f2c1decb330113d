/**
 * The encoded events of every XLine, kept from sizing to writing: each line's events are encoded once, when the
 * planes are sized ({@link capPos} is where the next event goes), and their length is what the line's size needs;
 * the write copies those bytes into the output window ({@link captureCopy}) instead of encoding them again.
 *
 * Memory stays flat: the bytes go into a buffer of {@link CAPTURE_BYTES} (less under a test's small spill
 * threshold) and, when it is full, to the host's spill storage (util/spill.ts) as one piece; the pieces are kept in
 * a list {spill offset u64, bytes u32, 0} because other spills (paged tables) may come between them. Lines are
 * written in the order they were sized, so the bytes are read back in order: the pieces one after the other, then
 * what is still in the buffer.
 */
import * as O from "./out";
import { spillAppend, spillLoad } from "../util/spill";
import { regrow } from "../util/regrow";
import { RUN_BYTES, spillAt } from "./xspace_spill";

/** Buffer size (bytes): the encoded events of a 100k-record dump (≈ 3 MB) stay in memory. */
const CAPTURE_BYTES: u32 = 4 << 20;
/** Room one event needs (tag, length, body: < 512 bytes) plus the 16 bytes a SIMD copy may write past it. */
export const EVENT_ROOM: usize = 512;

let capBuf: usize = 0;
/** End of the buffer minus {@link EVENT_ROOM}: an event may start below it. */
export let capLimit: usize = 0;
/** Where the next encoded byte goes. */
export let capPos: usize = 0;
let capBytes: u32 = 0;
/** Stream bytes handed to the spill storage (the pieces). */
let capSpilled: u64 = 0;
let pieces: usize = 0;
let pieceCount: u32 = 0;
let pieceCap: u32 = 0;
// Reading back: the next piece, bytes of it already read, and bytes of the buffer already read.
let rdPiece: u32 = 0;
let rdIn: u32 = 0;
let rdBuf: usize = 0;

/** Starts a file (the heap was rewound): the buffer is made anew when first used. */
export function captureBegin(): void {
  capBuf = 0;
  pieces = 0;
  pieceCap = 0;
}

/** Starts capturing (before the first plane is sized): an empty stream. */
export function captureStart(): void {
  // A test's small spill threshold makes the buffer small too, so the pieces are exercised on small inputs.
  const want = spillAt < RUN_BYTES ? spillAt + <u32>EVENT_ROOM * 2 : CAPTURE_BYTES;
  if (capBuf == 0 || capBytes != want) {
    capBytes = want;
    capBuf = heap.alloc(<usize>want);
  }
  capLimit = capBuf + <usize>capBytes - EVENT_ROOM;
  capPos = capBuf;
  capSpilled = 0;
  pieceCount = 0;
  rdPiece = 0;
  rdIn = 0;
  rdBuf = 0;
}

/** Bytes captured so far (the stream offset of {@link capPos}). */
// @ts-ignore: decorator
@inline export function captured(): u64 {
  return capSpilled + <u64>(capPos - capBuf);
}

/** Hands the buffer's bytes to the spill storage as one piece; returns the buffer start (the new {@link capPos}). */
export function captureSpill(): usize {
  const n = <u32>(capPos - capBuf);
  if (n != 0) {
    const off = spillAppend(capBuf, n);
    if (pieceCount == pieceCap) {
      const cap = pieceCap == 0 ? 16 : pieceCap << 1;
      pieces = regrow(pieces, <usize>pieceCount << 4, <usize>cap << 4);
      pieceCap = cap;
    }
    const e = pieces + (<usize>pieceCount << 4);
    store<u64>(e, off);
    store<u32>(e, n, 8);
    store<u32>(e, 0, 12);
    pieceCount++;
    capSpilled += n;
  }
  capPos = capBuf;
  return capBuf;
}

/** Sets {@link capPos} (after an event was written at it). */
// @ts-ignore: decorator
@inline export function setCapPos(p: usize): void {
  capPos = p;
}

/** Writes the next `n` captured bytes (in the order they were captured) into the output window. */
export function captureCopy(n: u64): void {
  while (n != 0 && rdPiece < pieceCount) {
    const e = pieces + (<usize>rdPiece << 4);
    const left = load<u32>(e, 8) - rdIn;
    let k = n < <u64>left ? <u32>n : left;
    if (k > 65536) k = 65536;
    O.need(<usize>k);
    spillLoad(load<u64>(e) + <u64>rdIn, O.pos, k);
    O.pos += k;
    n -= k;
    rdIn += k;
    if (rdIn == load<u32>(e, 8)) {
      rdPiece++;
      rdIn = 0;
    }
  }
  if (n == 0) return;
  // The rest is still in the buffer: the stream's last bytes.
  if (<u64>rdBuf + n > <u64>(capPos - capBuf)) unreachable();
  O.raw(capBuf + rdBuf, <usize>n);
  rdBuf += <usize>n;
}
