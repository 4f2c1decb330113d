/**
 * The encoded events of the XLines, kept from sizing to writing: while the planes are sized, each line's events are
 * encoded (in start order) into one buffer of {@link CAPTURE_BYTES} and the bytes they take are the line's size; the
 * write copies them into the output window ({@link captureCopy}) instead of encoding them again. The buffer starts
 * empty for each plane when the planes are written one by one (emit/xspace.ts xspaceEnd), else once for all.
 *
 * Memory stays flat: when the buffer is full ({@link capFull}), the rest of the events — the rest of the line being
 * sized, then every later line — are only sized (emit/xspace_encode.ts eventSize) and encoded when written, as
 * before. So a line's captured events are a prefix of it in start order: {capAt, capN bytes, capK events} (Line).
 */
import * as O from "./out";
import { RUN_BYTES, spillAt } from "./xspace_spill";

/**
 * Buffer size (bytes): the encoded events of ≈ 350,000 events (≈ 45 bytes each), the whole output of a 500k-record
 * dump.
 */
const CAPTURE_BYTES: u32 = 16 << 20;
/**
 * Buffer size when the planes are written one by one (an XSpace under 2 GiB): a plane of ≈ 700,000 events (the
 * device plane of a 1.5M-record dump) fits. Its pages beyond what a file's largest plane uses are never touched, so
 * they take no memory; the largest files (over the bound) keep {@link CAPTURE_BYTES}.
 */
const CAPTURE_BYTES_BY_PLANE: u32 = 32 << 20;
/** Room one event needs (tag, length, body: < 512 bytes, with the 16 bytes a SIMD copy may write past it). */
export const EVENT_ROOM: usize = 512;

let capBuf: usize = 0;
let capBytes: u32 = 0;
/** Highest address an event may start at (the buffer's end minus {@link EVENT_ROOM}; 0 once {@link capFull}). */
export let capLimit: usize = 0;
/** Where the next captured event goes. */
export let capPos: usize = 0;
/** Whether the buffer filled up: from then on events are only sized. */
export let capFull = false;
/** Events captured so far. */
export let capEvents: u32 = 0;

/** Starts a file (the heap was rewound): the buffer is made anew when first used. */
export function captureBegin(): void {
  capBuf = 0;
}

/**
 * Starts capturing (before the first plane is sized, or before each when `byPlane`: the planes written one by one):
 * an empty buffer.
 */
export function captureStart(byPlane: bool): void {
  // A test's small spill threshold makes the buffer small too, so that filling it is exercised on small inputs.
  const want = spillAt < RUN_BYTES ? spillAt + <u32>EVENT_ROOM : byPlane ? CAPTURE_BYTES_BY_PLANE : CAPTURE_BYTES;
  if (capBuf == 0 || capBytes != want) {
    capBytes = want;
    capBuf = heap.alloc(<usize>want);
  }
  capLimit = capBuf + <usize>capBytes - EVENT_ROOM;
  capPos = capBuf;
  capFull = false;
  capEvents = 0;
}

/** Offset of {@link capPos} in the buffer (bytes captured so far). */
// @ts-ignore: decorator
@inline export function captured(): u32 {
  return <u32>(capPos - capBuf);
}

/** Records that event at `p` was captured, ending at `end`. */
// @ts-ignore: decorator
@inline export function captureEnd(end: usize): void {
  capPos = end;
  capEvents++;
}

/** Marks the buffer full: no more events are captured in this file. */
export function captureStop(): void {
  capFull = true;
  capLimit = 0; // no address is at or below it: one compare tells a full buffer too
}

/** Writes the `n` captured bytes at offset `at` into the output window. */
export function captureCopy(at: u32, n: u32): void {
  O.raw(capBuf + <usize>at, <usize>n);
}
