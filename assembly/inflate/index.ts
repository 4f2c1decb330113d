/**
 * rawtrace's gzip reader for the browser (build/inflate.wasm, its own small module): the resumable DEFLATE decoder
 * of inflate.ts and the CRC-32 of its output, which web/gunzip.ts drives member by member (RFC 1952 framing,
 * trailers, damage) so that the viewer reads every `.gz` the CLI reads — several members, a bad trailer, bytes of a
 * member before a damaged block — where the browser's DecompressionStream stops at the first member and drops its
 * last output on any error.
 *
 * Use: init(); then per member: reset(), seek(past its header); run(len, final) after writing input at
 * inPtr() + compact(); read [outStart(), outEnd()) of outPtr() after each run; inputPos() after STREAM_END is where
 * the trailer starts.
 */
import {
  inflateInit, inflateReset, inflateSnapshot, inflateRestore, inflateCompact, inflateCompactFrom, inflateLoadedTo, inflateRun, inflateInputPos, inflateSeek, inflateInputLen,
  inBuf, outBuf, outStart as oStart, outEnd as oEnd, errorAt as eAt, IN_CAP,
} from "./inflate";
import { crc32Update } from "../util/crc32";

/** Allocates the buffers; the first member starts at input position 0. */
export function init(): void {
  inflateInit();
}

/** Starts a member's DEFLATE data (no history); unused whole bytes of the last one go back to the input. */
export function reset(): void {
  inflateReset();
}

/** Moves the unread input to the start of the input buffer; returns its length (new bytes go after it). */
export function compact(): u32 {
  return inflateCompact();
}

/**
 * Decodes [0, len) of the input buffer; `final` 1 when nothing follows, 2 to decode every whole unit before `len` and
 * stop there (NEED_INPUT, never a truncation error: a later run goes on exactly there). NEED_INPUT 0, OUTPUT_FULL 1,
 * STREAM_END 2, errors < 0.
 */
export function run(len: u32, final: u32): i32 {
  return inflateRun(len, final == 1, final == 2);
}

/** Moves the input [from, len) (`from` ≤ inputPos(), `len` the input's length now) to the buffer's start; returns its length. */
export function compactFrom(from: u32, len: u32): u32 {
  return inflateCompactFrom(from, len);
}

/** Copies the decoding state (the last 32 KiB of output, the codes, the bit reader's place in the input). */
export function snapshot(): void {
  inflateSnapshot();
}

/** Goes back to the state snapshot() copied; `shift`: input bytes compacted away from the buffer's front since. */
export function restore(shift: u32): void {
  inflateRestore(shift);
}

/** How far the bit reader has loaded the input (a run with `final` 2 needs `len` at least this). */
export function loadedTo(): u32 {
  return inflateLoadedTo();
}

/** Where the unread input starts (after STREAM_END: the member's trailer). */
export function inputPos(): u32 {
  return inflateInputPos();
}

/** Sets the input position (past a member header the host parsed). */
export function seek(pos: u32): void {
  inflateSeek(pos);
}

/** Valid bytes in the input buffer. */
export function inputLen(): u32 {
  return inflateInputLen();
}

/** Input buffer address and capacity. */
export function inPtr(): usize {
  return inBuf;
}
export function inCap(): u32 {
  return IN_CAP;
}

/** Output buffer address; the last run's new bytes are [outStart(), outEnd()) of it. */
export function outPtr(): usize {
  return outBuf;
}
export function outStart(): u32 {
  return oStart;
}
export function outEnd(): u32 {
  return oEnd;
}

/** Input position of the last run's error. */
export function errorAt(): u32 {
  return eAt;
}

/** The CRC-32 of the member's bytes so far (`prev`) followed by the last run's new bytes. */
export function crcOut(prev: u32): u32 {
  return crc32Update(prev, outBuf + <usize>oStart, <usize>(oEnd - oStart));
}
