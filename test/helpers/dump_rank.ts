/**
 * A dump rewritten as another rank of a run: fixed-size HEADER and DEVICES fields changed in place, each changed
 * chunk's payload checksum and header CRC written again (docs/format.md: HEADER rank @24, local rank @28, world size
 * @32; DEVICES: u32 count, then entries whose uuid is at 72..88, each followed by its u32-length name). For tests that
 * need several ranks of one job out of one real dump.
 */
import { crc32 } from "node:zlib";
import { payloadChecksum } from "../../src/format/checksum.js";

/** What to change: rank (also the local rank), world size, and the last uuid byte of every GPU (a GPU of its own). */
export interface RankEdit {
  rank?: number;
  world?: number;
  uuidTail?: number;
}

/** A copy of dump `b` with `edit` applied (the input is not changed). */
export function asRank(b: Uint8Array, edit: RankEdit): Buffer {
  const out = Buffer.from(b);
  for (let o = 16; o + 24 <= out.length;) {
    const type = out.readUInt16LE(o + 4);
    const len = out.readUInt32LE(o + 12);
    const p = out.subarray(o + 24, o + 24 + len);
    let changed = false;
    if (type === 1 && (edit.rank !== undefined || edit.world !== undefined)) {
      if (edit.rank !== undefined) {
        p.writeInt32LE(edit.rank, 24);
        p.writeInt32LE(edit.rank, 28);
      }
      if (edit.world !== undefined) p.writeInt32LE(edit.world, 32);
      changed = true;
    } else if (type === 7 && edit.uuidTail !== undefined) {
      const n = p.readUInt32LE(0);
      let at = 4;
      for (let i = 0; i < n; i++) {
        p[at + 72 + 15] = edit.uuidTail;
        at += 88;
        at += 4 + p.readUInt32LE(at);
      }
      changed = n > 0;
    }
    if (changed) {
      out.writeUInt32LE(payloadChecksum(out.readUInt16LE(o + 6), p) >>> 0, o + 16);
      out.writeUInt32LE(crc32(out.subarray(o, o + 20)) >>> 0, o + 20);
    }
    o += 24 + ((len + 7) & ~7);
  }
  return out;
}
