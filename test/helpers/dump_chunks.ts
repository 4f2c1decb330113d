/**
 * Reading a collector's `.rawtrace` straight from the container (docs/format.md), independently of the engine:
 * used by the collector tests (test/collectors/*_collector.test.ts) to see exactly what a collector wrote, and by the
 * decoder tests to find where records sit in a dump.
 */
import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import * as assert from "uvu/assert";
import { ChunkType, CHUNK_HEADER_SIZE, DropReason, PREAMBLE_SIZE } from "../../src/format/container.js";
import { CHUNK_FLAG_SUMS, payloadChecksum } from "../../src/format/checksum.js";

/** One chunk: type, sequence number, file offset of its header, payload (a view of the file's bytes). */
export interface DumpChunk {
  type: number;
  seq: number;
  off: number;
  p: Buffer;
}

/**
 * Every chunk of the file at `path` (or of the bytes given), in file order, after asserting the preamble magic and
 * each chunk's sync word, header CRC and payload checksum (CRC-32, XXH32 or XXH64, as its flags say; a collector's
 * chunks all carry one). A chunk running past the end fails the test, unless
 * `allowCut` (a dump cut short by a killed process): then reading stops there.
 */
export function readDumpChunks(path: string | Buffer, allowCut = false): DumpChunk[] {
  const b = typeof path === "string" ? readFileSync(path) : path;
  assert.is(b.toString("latin1", 0, 8), "RAWTRACE");
  const out: DumpChunk[] = [];
  for (let o = 16; o + 24 <= b.length;) {
    assert.is(b.readUInt32LE(o), 0x4b435452, `sync word at ${o}`);
    assert.is(b.readUInt32LE(o + 20), crc32(b.subarray(o, o + 20)), `header CRC at ${o}`);
    const len = b.readUInt32LE(o + 12);
    if (allowCut && o + 24 + len > b.length) break;
    assert.ok(o + 24 + len <= b.length, `chunk at ${o} complete`);
    const p = b.subarray(o + 24, o + 24 + len);
    const flags = b.readUInt16LE(o + 6);
    assert.ok((flags & CHUNK_FLAG_SUMS) !== 0, `chunk at ${o} has a payload checksum`);
    assert.is(b.readUInt32LE(o + 16), payloadChecksum(flags, p), `payload checksum at ${o}`);
    out.push({ type: b.readUInt16LE(o + 4), seq: b.readUInt32LE(o + 8), off: o, p });
    o += 24 + len + ((8 - (len % 8)) % 8);
  }
  return out;
}

/** Where one chunk of a well-formed dump sits: header offset, type, seq, payload length and padded end. */
export interface ChunkSpan {
  off: number;
  type: number;
  seq: number;
  len: number;
  end: number;
}

/** Every chunk of the well-formed dump `b`, in file order, by its headers' lengths alone (nothing checked). */
export function chunkSpans(b: Uint8Array): ChunkSpan[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out = [];
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= b.length;) {
    const len = dv.getUint32(p + 12, true);
    const end = p + CHUNK_HEADER_SIZE + ((len + 7) & ~7);
    out.push({ off: p, type: dv.getUint16(p + 4, true), seq: dv.getUint32(p + 8, true), len, end });
    p = end;
  }
  return out;
}

/** File offset of the first ACTIVITY chunk's payload in the dump `b` (throws when it has none). */
export function firstActivityOffset(b: Uint8Array): number {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= b.length;) {
    if (dv.getUint16(p + 4, true) === ChunkType.ACTIVITY) return p + CHUNK_HEADER_SIZE;
    p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7);
  }
  throw new Error("no activity");
}

/**
 * What an exit flush out of time left (collectors/common `rt_queue_exit_skip`): the count of the one DROPPED chunk of
 * reason EXIT_TIME among `chunks` (buffers; Gaudi: device traces), asserted to be there once, above 0, and said on
 * `stderr` as "exit flush: <count> <what> (<bytes> bytes…) left unwritten".
 */
export function exitLeft(chunks: Array<{ type: number; p: Buffer }>, stderr: string, what: string): number {
  const left = chunks.filter((c) => c.type === ChunkType.DROPPED && c.p.readUInt32LE(8) === DropReason.EXIT_TIME);
  assert.is(left.length, 1, `one DROPPED chunk of reason 4: ${stderr}`);
  const n = Number(left[0].p.readBigUInt64LE(0));
  assert.ok(n > 0, stderr);
  assert.match(stderr, new RegExp(`exit flush: ${n} ${what} \\(\\d+ bytes[^)]*\\) left unwritten`));
  return n;
}
