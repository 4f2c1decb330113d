/**
 * Mutators for fuzzing `.rawtrace` input: blind byte damage (which the container's checksums must catch) and
 * structure-aware damage (payload bytes, lengths, kinds and counts changed *with* the checksums recomputed, so the
 * decoders themselves see hostile records). Deterministic for a given seed.
 */
import { rng } from "../../src/tools/rng.js";

export { rng };
import { crc32 } from "node:zlib";
import { CHUNK_HEADER_SIZE, ChunkType, PREAMBLE_SIZE } from "../../src/format/container.js";
import { checksumBitsInvalid, payloadChecksum } from "../../src/format/checksum.js";
import { SIZES } from "../../src/tools/cupti_records.js";


interface ChunkRef { off: number; type: number; len: number }

/** Chunks of a (possibly damaged) dump, as far as they parse. */
export function chunks(b: Uint8Array): ChunkRef[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: ChunkRef[] = [];
  let p = PREAMBLE_SIZE;
  while (p + CHUNK_HEADER_SIZE <= b.length) {
    const len = dv.getUint32(p + 12, true);
    if (p + CHUNK_HEADER_SIZE + len > b.length) break;
    out.push({ off: p, type: dv.getUint16(p + 4, true), len });
    p += CHUNK_HEADER_SIZE + ((len + 7) & ~7);
  }
  return out;
}

/**
 * Recomputes both checksums of the chunk at `off` (after its header or payload was changed on purpose): the payload
 * checksum of the kind its flags name (CRC-32, XXH32 or XXH64; none stays none, several stay wrong) and the header
 * CRC.
 */
export function fixCrc(b: Uint8Array, off: number): void {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const len = Math.min(dv.getUint32(off + 12, true), b.length - off - CHUNK_HEADER_SIZE);
  const flags = dv.getUint16(off + 6, true);
  if (!checksumBitsInvalid(flags)) {
    const payload = b.subarray(off + CHUNK_HEADER_SIZE, off + CHUNK_HEADER_SIZE + len);
    dv.setUint32(off + 16, payloadChecksum(flags, payload), true);
  }
  dv.setUint32(off + 20, crc32(b.subarray(off, off + 20)) >>> 0, true);
}

/** The mutation strategies, by name (reported with each finding). */
export const STRATEGIES = [
  "bitflip", "bytes", "truncate", "insert", "delete", "duplicate-chunk", "swap-chunks", "payload+crc",
  "u32-field+crc", "huge-length+crc", "kind+crc", "count+crc", "timestamp+crc", "record-field+crc",
] as const;
export type Strategy = (typeof STRATEGIES)[number];

/**
 * Offsets of the start and end timestamps (u64, vendor ns) in the CUPTI records that carry them, by kind: kernel and
 * concurrent kernel, memcpy, memset (start 16, end 24), driver and runtime API, synchronization (8, 16); a marker
 * has one timestamp (8). Identical in the CUDA 11.8, 12 and 13 layouts.
 */
const TIME_FIELDS: Record<number, readonly number[]> = {
  3: [16, 24], 10: [16, 24], 1: [16, 24], 2: [16, 24], 4: [8, 16], 5: [8, 16], 38: [8, 16], 12: [8],
};

/** Record sizes of a dump: its KIND_SIZES chunk when it has a readable one, else the CUDA 13 sizes. */
function recordSizes(b: Uint8Array, cs: ChunkRef[]): Record<number, number> {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const ks = cs.find((c) => c.type === ChunkType.KIND_SIZES && c.len >= 4);
  if (!ks) return SIZES.cuda13;
  const p = ks.off + CHUNK_HEADER_SIZE;
  const n = dv.getUint32(p, true);
  if (n * 8 + 4 > ks.len) return SIZES.cuda13;
  const out: Record<number, number> = {};
  for (let i = 0; i < n; i++) out[dv.getUint32(p + 4 + i * 8, true)] = dv.getUint32(p + 8 + i * 8, true);
  return out;
}

interface RecordRef { chunk: ChunkRef; at: number; kind: number; size: number }

/** The records of the activity chunks, as far as their kinds have known sizes. */
function records(b: Uint8Array, cs: ChunkRef[]): RecordRef[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const sizes = recordSizes(b, cs);
  const out: RecordRef[] = [];
  for (const c of cs) {
    if (c.type !== ChunkType.ACTIVITY) continue;
    let o = c.off + CHUNK_HEADER_SIZE;
    const end = o + c.len;
    while (o + 4 <= end) {
      const kind = dv.getUint32(o, true);
      const size = sizes[kind];
      if (!size || size < 8 || o + size > end) break;
      out.push({ chunk: c, at: o, kind, size });
      o += size;
    }
  }
  return out;
}

/** Timestamped records of the activity chunks: chunk, record offset and its timestamp field offsets. */
function timedRecords(b: Uint8Array, cs: ChunkRef[]): Array<{ chunk: ChunkRef; at: number; fields: readonly number[] }> {
  return records(b, cs).flatMap((r) => {
    const fields = TIME_FIELDS[r.kind];
    return fields && fields.every((f) => f + 8 <= r.size) ? [{ chunk: r.chunk, at: r.at, fields }] : [];
  });
}

/** Edge values for a record's u32 fields (ids, counts, launch dimensions, sizes). */
const U32_EDGES = [0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0xffff, 0x10000];

/**
 * Sets one u32 field (4-byte aligned, past the kind) of one activity record to an edge value: device, context,
 * stream and correlation ids, grid and block sizes, byte counts, name pointers; the CRCs are recomputed.
 */
function mutateRecordField(b: Uint8Array, cs: ChunkRef[], r: () => number): void {
  const recs = records(b, cs);
  if (recs.length === 0) return;
  const pick = (n: number) => Math.floor(r() * n);
  const rec = recs[pick(recs.length)];
  const at = rec.at + 4 + (pick((rec.size - 4) >> 2) << 2);
  const v = r() < 0.8 ? U32_EDGES[pick(U32_EDGES.length)] : pick(0x100000000);
  new DataView(b.buffer, b.byteOffset, b.byteLength).setUint32(at, v, true);
  fixCrc(b, rec.chunk.off);
}

/** Far-future and edge timestamps (vendor ns): 2^64 - 1, 2^63, 2^53 + 1, and about 300 years after 1970. */
const FAR_TIMES = [0xffffffffffffffffn, 0x8000000000000000n, (1n << 53n) + 1n, 9_500_000_000_000_000_000n];

/**
 * Damages the timestamps of one record: start or end (or both) set to 0, start and end swapped, one or both set
 * to a far-future value, or the end put 1 ns before the start; the CRCs are recomputed.
 */
function mutateTimestamps(b: Uint8Array, cs: ChunkRef[], r: () => number): void {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const recs = timedRecords(b, cs);
  if (recs.length === 0) return;
  const pick = (n: number) => Math.floor(r() * n);
  const rec = recs[pick(recs.length)];
  const [s, e] = rec.fields.map((f) => rec.at + f);
  const get = (o: number) => dv.getBigUint64(o, true);
  const set = (o: number | undefined, v: bigint) => {
    if (o !== undefined) dv.setBigUint64(o, BigInt.asUintN(64, v), true);
  };
  const far = () => FAR_TIMES[pick(FAR_TIMES.length)];
  switch (pick(7)) {
    case 0: set(s, 0n); break;
    case 1: set(e ?? s, 0n); break;
    case 2: set(s, 0n); set(e, 0n); break;
    case 3: if (e !== undefined) { const t = get(s); set(s, get(e)); set(e, t); } break;
    case 4: set(s, far()); break;
    case 5: set(e ?? s, far()); break;
    case 6: if (e !== undefined) set(e, get(s) - 1n); else set(s, far()); break;
  }
  fixCrc(b, rec.chunk.off);
}

/** Applies one random strategy to a copy of `input`; returns the result and the strategy used. */
export function mutate(input: Uint8Array, r: () => number): { bytes: Uint8Array; strategy: Strategy } {
  const strategy = STRATEGIES[Math.floor(r() * STRATEGIES.length)];
  let b = new Uint8Array(input);
  const dv = () => new DataView(b.buffer, b.byteOffset, b.byteLength);
  const pick = (n: number) => Math.floor(r() * n);
  const cs = chunks(b);
  const anyChunk = () => cs[pick(cs.length)];
  const payloadChunk = () => {
    const withData = cs.filter((c) => c.len > 0);
    return withData[pick(withData.length)];
  };
  switch (strategy) {
    case "bitflip":
      for (let i = 0, n = 1 + pick(8); i < n; i++) b[pick(b.length)] ^= 1 << pick(8);
      break;
    case "bytes":
      for (let i = 0, n = 1 + pick(16); i < n; i++) b[pick(b.length)] = pick(256);
      break;
    case "truncate":
      b = b.slice(0, pick(b.length));
      break;
    case "insert": {
      const at = pick(b.length);
      const extra = new Uint8Array(1 + pick(64)).map(() => pick(256));
      b = new Uint8Array([...b.subarray(0, at), ...extra, ...b.subarray(at)]);
      break;
    }
    case "delete": {
      const at = pick(b.length);
      b = new Uint8Array([...b.subarray(0, at), ...b.subarray(at + 1 + pick(64))]);
      break;
    }
    case "duplicate-chunk": {
      const c = anyChunk();
      if (!c) break;
      const end = c.off + CHUNK_HEADER_SIZE + ((c.len + 7) & ~7);
      b = new Uint8Array([...b.subarray(0, end), ...b.subarray(c.off, end), ...b.subarray(end)]);
      break;
    }
    case "swap-chunks": {
      if (cs.length < 2) break;
      const i = pick(cs.length - 1);
      const a = cs[i], c = cs[i + 1];
      const aEnd = a.off + CHUNK_HEADER_SIZE + ((a.len + 7) & ~7);
      const cEnd = c.off + CHUNK_HEADER_SIZE + ((c.len + 7) & ~7);
      b = new Uint8Array([...b.subarray(0, a.off), ...b.subarray(aEnd, cEnd), ...b.subarray(a.off, aEnd), ...b.subarray(cEnd)]);
      break;
    }
    case "payload+crc": {
      const c = payloadChunk();
      if (!c) break;
      for (let i = 0, n = 1 + pick(8); i < n; i++) b[c.off + CHUNK_HEADER_SIZE + pick(c.len)] = pick(256);
      fixCrc(b, c.off);
      break;
    }
    case "u32-field+crc": {
      const c = payloadChunk();
      if (!c || c.len < 4) break;
      const o = c.off + CHUNK_HEADER_SIZE + (pick(c.len >> 2) << 2);
      const vals = [0, 1, 0xffffffff, 0x7fffffff, 0x80000000, pick(0x100000000)];
      dv().setUint32(o, vals[pick(vals.length)], true);
      fixCrc(b, c.off);
      break;
    }
    case "huge-length+crc": {
      const c = anyChunk();
      if (!c) break;
      const vals = [0x10000000, 0x0fffffff, 0xffffffff, c.len + 8, c.len + 1000];
      dv().setUint32(c.off + 12, vals[pick(vals.length)], true);
      dv().setUint32(c.off + 20, crc32(b.subarray(c.off, c.off + 20)) >>> 0, true);
      break;
    }
    case "kind+crc": {
      // Change a record kind inside an activity buffer (records start with their u32 kind).
      const acts = cs.filter((c) => c.type === 5 && c.len >= 8);
      const c = acts[pick(acts.length)];
      if (!c) break;
      const o = c.off + CHUNK_HEADER_SIZE + (pick(c.len >> 3) << 3);
      dv().setUint32(o, [0, 3, 10, 12, 39, 46, 200, 255, 256, 0xffffffff][pick(10)], true);
      fixCrc(b, c.off);
      break;
    }
    case "count+crc": {
      // The first u32 of list payloads (KIND_SIZES, API_NAMES, STRINGS, DEVICES, THREAD_NAMES) is a count.
      const lists = cs.filter((c) => [3, 4, 6, 7, 9].includes(c.type) && c.len >= 4);
      const c = lists[pick(lists.length)];
      if (!c) break;
      dv().setUint32(c.off + CHUNK_HEADER_SIZE, [0, 1, 1000, 0xffffffff, 0x10000000][pick(5)], true);
      fixCrc(b, c.off);
      break;
    }
    case "timestamp+crc":
      mutateTimestamps(b, cs, r);
      break;
    case "record-field+crc":
      mutateRecordField(b, cs, r);
      break;
  }
  return { bytes: b, strategy };
}
