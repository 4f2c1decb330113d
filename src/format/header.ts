/**
 * The HEADER chunk read on its own (docs/format.md §1), without the core: what `rawtrace info` shows of a dump the
 * core cannot decode (a vendor code with no decoder in this build), so the user still learns which process, host and
 * vendor library wrote it.
 */
import { crc32 } from "node:zlib";
import { checksumBitsInvalid, payloadChecksum } from "./checksum.js";
import { CHUNK_HEADER_SIZE, CHUNK_SYNC, ChunkType, PREAMBLE_SIZE } from "./container.js";
import type { HeaderInfo } from "./writer.js";

/** A HEADER as read back: every field of {@link HeaderInfo}, the command line split at its NULs. */
export interface ReadHeader extends Required<Omit<HeaderInfo, "commandLine">> {
  commandLine: string[];
}

/**
 * The HEADER chunk at the start of `bytes` (the file's first bytes: the preamble, then the HEADER as the collectors
 * write it), or null when they do not start that way or the chunk fails its header or payload checksum. The magic is
 * not looked at: the chunk header's sync word and CRC prove the dump, as the core reads one whose magic is damaged
 * (PREAMBLE_DAMAGED). `bytes` is only read.
 */
export function readHeader(bytes: Uint8Array): ReadHeader | null {
  if (bytes.length < PREAMBLE_SIZE + CHUNK_HEADER_SIZE) return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const h = PREAMBLE_SIZE;
  if (dv.getUint32(h, true) !== CHUNK_SYNC || dv.getUint16(h + 4, true) !== ChunkType.HEADER) return null;
  if ((crc32(bytes.subarray(h, h + 20)) >>> 0) !== dv.getUint32(h + 20, true)) return null;
  const flags = dv.getUint16(h + 6, true);
  const len = dv.getUint32(h + 12, true);
  const p = h + CHUNK_HEADER_SIZE;
  if (checksumBitsInvalid(flags) || len < 48 || p + len > bytes.length) return null;
  const payload = bytes.subarray(p, p + len);
  if (payloadChecksum(flags, payload) !== dv.getUint32(h + 16, true)) return null;
  let at = p + 48;
  const text = (): string | null => {
    if (at + 4 > p + len) return null;
    const n = dv.getUint32(at, true);
    if (at + 4 + n > p + len) return null;
    const s = new TextDecoder().decode(bytes.subarray(at + 4, at + 4 + n));
    at += 4 + n;
    return s;
  };
  const hostname = text(), commandLine = text(), vendorVersionText = text();
  if (hostname === null || commandLine === null) return null;
  return {
    vendor: dv.getUint32(p, true),
    pointerSize: dv.getUint32(p + 4, true),
    vendorVersion: dv.getUint32(p + 8, true),
    runtimeVersion: dv.getUint32(p + 12, true),
    driverVersion: dv.getUint32(p + 16, true),
    pid: dv.getUint32(p + 20, true),
    rank: dv.getInt32(p + 24, true),
    localRank: dv.getInt32(p + 28, true),
    worldSize: dv.getInt32(p + 32, true),
    collectorVersion: dv.getUint32(p + 36, true),
    startNs: dv.getBigUint64(p + 40, true),
    hostname,
    commandLine: commandLine.split("\0").filter((a, i, all) => a !== "" || i < all.length - 1),
    vendorVersionText: vendorVersionText ?? "",
  };
}
