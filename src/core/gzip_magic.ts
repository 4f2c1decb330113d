/**
 * Whether a file is gzip by its first bytes, for both hosts (src/node/file_source.ts, web/file_source.ts): gzip's
 * magic 1f 8b, or a gzip header one of whose first three bytes (ID1, ID2, CM: 1f 8b 08, RFC 1952 §2.3.1) is damaged
 * while the rest is what a gzip writer writes. Such a file is read with those three bytes repaired — the member's
 * CRC-32 covers the decompressed bytes, not its header, so nothing is lost by the damage — and said
 * (GZIP_MAGIC_DAMAGED). Browser-safe; no WebAssembly.
 */
import type { Warning } from "./codes.js";

/** gzip's first three bytes: the magic 1f 8b and the method 8 (deflate). */
const GZIP_ID = [0x1f, 0x8b, 8] as const;

/** Bytes of a file's start {@link gzipStart} needs to judge a damaged magic (a member header's fixed part). */
export const GZIP_HEAD_BYTES = 10;

/**
 * Whether the member header at the start of `h` has XFL and OS bytes that gzip writers write (RFC 1952 §2.3.1: XFL 0,
 * 2 or 4; OS 0 to 13, 19 — macOS, zlib 1.2.12 on — or 255 unknown): gzip, zlib, pigz, bgzip and Python all do. A chance
 * 1f 8b 08 in other bytes passes this 1 time in about 1,400.
 */
export function plausibleHeader(h: Uint8Array): boolean {
  return h.length >= 10 && (h[8] === 0 || h[8] === 2 || h[8] === 4) && (h[9] <= 13 || h[9] === 19 || h[9] === 255);
}

/** How many of the first three bytes of `head` differ from gzip's 1f 8b 08 (3 when `head` is shorter). */
function changedId(head: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < 3; i++) if (head[i] !== GZIP_ID[i]) n++;
  return n;
}

/**
 * How the file whose first bytes are `head` (at least {@link GZIP_HEAD_BYTES} when the file has them; only read)
 * starts as gzip: `"damaged"` when one of its first three bytes differs from gzip's 1f 8b 08 (the method byte
 * included) and the rest of the fixed header is a gzip writer's — the reserved flag bits clear, XFL and OS as writers
 * write them ({@link plausibleHeader}) —, which bytes that are not gzip match about 4 times in 10^9 (two of three
 * bytes fixed, three bits clear, XFL one of 3 values, OS one of 16); else `"gzip"` with gzip's magic 1f 8b (another
 * method, or a header no writer writes, is then the gzip reader's error to say); else null. A dump's own magic
 * "RAWTRACE" is checked by the caller before.
 */
export function gzipStart(head: Uint8Array): "gzip" | "damaged" | null {
  const changed = changedId(head);
  if (changed === 0) return "gzip";
  if (changed === 1 && head.length >= GZIP_HEAD_BYTES && (head[3] & 0xe0) === 0 && plausibleHeader(head)) return "damaged";
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b ? "gzip" : null;
}

/**
 * Writes gzip's 1f 8b 08 over the bytes of `chunk` (read at file offset `pos`) that are the file's first three, so
 * that a reader sees a file {@link gzipStart} calls `"damaged"` as the gzip file it was. Changes `chunk` in place
 * (the caller's own read buffer; repairing a chunk twice changes nothing).
 */
export function repairGzipMagic(chunk: Uint8Array, pos: number): void {
  for (let i = pos; i < 3 && i - pos < chunk.length; i++) chunk[i - pos] = GZIP_ID[i];
}

/** An async iterable of a file's bytes from its start, with its first three bytes repaired ({@link repairGzipMagic}). */
export async function* repairedGzip(input: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pos = 0;
  for await (const c of input) {
    if (pos < 3) repairGzipMagic(c, pos);
    pos += c.length;
    yield c;
  }
}

const hex = (b: Uint8Array): string => Array.from(b.subarray(0, 3), (v) => v.toString(16).padStart(2, "0")).join(" ");

/** The GZIP_MAGIC_DAMAGED warning of a file whose first bytes `head` {@link gzipStart} calls `"damaged"`. */
export function gzipMagicWarning(head: Uint8Array): Warning {
  const n = changedId(head);
  return {
    code: "GZIP_MAGIC_DAMAGED", count: 1, offset: 0, detail: n,
    message: `the file's first bytes (${hex(head)}) are not gzip's 1f 8b 08 (${n} of the 3 changed), but the rest of a gzip writer's header follows: read as gzip with them repaired (nothing lost by it: gzip's checksums cover the data, not these bytes)`,
  };
}

/**
 * What a start error of a file read as gzip with its first bytes repaired adds to its message: those bytes, and that
 * the file may not be gzip at all.
 */
export function repairedGzipNote(head: Uint8Array): string {
  return ` (its first bytes ${hex(head)} were read as gzip's 1f 8b 08, one of them taken as damaged: it may not be a gzip file)`;
}
