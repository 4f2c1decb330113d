/**
 * What a file that is not a dump looks like, from its first bytes: the hint BAD_MAGIC's message ends with, so that
 * a user who gave rawtrace a converted trace, a compressed archive, a library or a dump whose first bytes are damaged
 * learns what to do instead of only "not a .rawtrace file". Browser-safe (the viewer's worker says the same).
 */

import { MAGIC } from "../format/container.js";

/** Bytes of the file's start {@link describeStart} looks at (the preamble and the first chunk header). */
export const SNIFF_BYTES = 40;

const hex = (b: Uint8Array, n: number): string => Array.from(b.subarray(0, n), (v) => v.toString(16).padStart(2, "0")).join(" ");

/** True when `b` starts with the bytes of `sig`. */
function startsWith(b: Uint8Array, sig: readonly number[]): boolean {
  if (b.length < sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[i] !== sig[i]) return false;
  return true;
}

/**
 * A clause naming what the bytes `head` (a file's first bytes, up to {@link SNIFF_BYTES}; fewer when the file is
 * shorter) look like and what to do with it, starting with "; ", or "" when they look like nothing in particular.
 * Only called for a file whose first 8 bytes are not a dump's magic; `head` is only read.
 */
export function describeStart(head: Uint8Array): string {
  const b = head;
  if (b.length === 0) return "";
  // gzip: 1f 8b, method 08, no reserved flag bit. One of the two magic bytes damaged (the other two checks holding)
  // is a gzipped dump whose first byte or two changed. The hosts read one whose XFL and OS bytes are a gzip writer's
  // as gzip, repaired (src/core/gzip_magic.ts); one that reaches here has another byte of its header changed too (or
  // came to the engine without a host), which gzip's own readers ignore once the magic is repaired.
  if (b.length >= 4 && b[2] === 8 && (b[3] & 0xe0) === 0 && (b[0] === 0x1f) !== (b[1] === 0x8b)) {
    return `; its first bytes (${hex(b, 3)}) look like a gzip header whose magic is damaged (gzip's is 1f 8b 08): if it is a gzipped dump, repair its first two bytes to 1f 8b and convert it again`;
  }
  if (startsWith(b, [0x28, 0xb5, 0x2f, 0xfd])) return "; it is zstd-compressed: decompress it first (zstd -d)";
  if (startsWith(b, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return "; it is xz-compressed: decompress it first (xz -d)";
  if (startsWith(b, [0x42, 0x5a, 0x68])) return "; it is bzip2-compressed: decompress it first (bzip2 -d)";
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return "; it is a zip archive: extract the .rawtrace files from it first";
  if (startsWith(b, Array.from("SQLite format 3\0", (c) => c.charCodeAt(0)))) {
    return "; it is an SQLite database (an Nsight Systems or rocprof export?): rawtrace reads the .rawtrace dumps its collectors write (rawtrace record)";
  }
  if (startsWith(b, [0x7f, 0x45, 0x4c, 0x46])) return "; it is an ELF executable or library (a collector's .so?): give the .rawtrace file the collector wrote";
  let i = 0;
  if (startsWith(b, [0xef, 0xbb, 0xbf])) i = 3; // UTF-8 byte order mark
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++;
  if (i < b.length && (b[i] === 0x7b || b[i] === 0x5b)) {
    return "; it looks like JSON text (a trace already converted?): rawtrace reads the .rawtrace dumps its collectors write; Chrome trace JSON opens in Perfetto UI or chrome://tracing as it is";
  }
  const n = Math.min(b.length, 8);
  let same = 0;
  for (let k = 0; k < n; k++) if (b[k] === MAGIC[k]) same++;
  if (n === 8 && same >= 5) {
    return `; its first 8 bytes (${hex(b, 8)}) are the magic with ${8 - same} byte(s) changed, and no chunk header of a format 1 dump follows at offset 16 to prove the rest a dump: its start is damaged beyond what rawtrace reads past`;
  }
  if (b.every((v) => v === 0)) return `; its first ${b.length} bytes are all zero (a file preallocated or never written?)`;
  return "";
}
