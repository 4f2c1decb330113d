/**
 * A large dump of real shape from a small real one: the CUDA dump's ACTIVITY chunks written `copies` times, copy k
 * with every timestamp moved later by k × (the dump's span + 1 ms) and every correlation id, external id and NVTX
 * range id moved up by k × (the largest one + 1), so the copies follow each other as one long run and no id repeats.
 * Everything else (HEADER, the start CLOCK, KIND_SIZES, API_NAMES, STRINGS, DEVICES, THREAD_NAMES …) is written
 * once, the end CLOCK moved with the last copy. Record order inside each buffer is kept, so a real dump's quirks —
 * device work before its launch call, streams whose records come in blocks out of order, nested NVTX ranges — are
 * what the large dump has too. The benches use it to measure the converters on real record mixes at scale.
 *
 *   tsx bench/tile_dump.ts <in.rawtrace> <copies> <out.rawtrace>
 *
 * CUDA dumps only (vendor 1), record fields at the offsets shared by the CUPTI layouts rawtrace reads (11.8 … 13.5:
 * vendor-record-layouts.md §1.3/§1.5); a kind this tool does not know is copied unchanged.
 */
import { ChunkType, Vendor } from "../src/format/container.js";
import { RawtraceWriter } from "../src/format/writer.js";
import { CK } from "../src/tools/cupti_records.js";
import { readDumpChunks } from "../test/helpers/dump_chunks.js";

/** INTERNAL_LAUNCH_API (CUPTI kind 48): a launch call's record, laid out as RUNTIME's. */
const INTERNAL_LAUNCH_API = 48;

/** Where a kind keeps the fields that move: u64 times (moved when not 0), u32 correlation ids, u64 external id, u32 range id. */
interface Fields {
  times: number[];
  corrs: number[];
  ext?: number;
  rangeId?: number;
}

const FIELDS: Record<number, Fields> = {
  [CK.KERNEL]: { times: [16, 24, 32, 120], corrs: [92] },
  [CK.CONCURRENT_KERNEL]: { times: [16, 24, 32, 120], corrs: [92] },
  [CK.MEMCPY]: { times: [16, 24], corrs: [44, 48] },
  [CK.MEMCPY2]: { times: [16, 24], corrs: [60] },
  [CK.MEMSET]: { times: [16, 24], corrs: [44] },
  [CK.RUNTIME]: { times: [8, 16], corrs: [32] },
  [CK.DRIVER]: { times: [8, 16], corrs: [32] },
  [INTERNAL_LAUNCH_API]: { times: [8, 16], corrs: [32] },
  [CK.SYNCHRONIZATION]: { times: [8, 16], corrs: [24] },
  [CK.OVERHEAD]: { times: [24, 32], corrs: [40] },
  [CK.GRAPH_TRACE]: { times: [8, 16], corrs: [4] },
  [CK.CUDA_EVENT]: { times: [40], corrs: [4] },
  [CK.EXTERNAL_CORRELATION]: { times: [], corrs: [16], ext: 8 },
  [CK.MARKER]: { times: [8], corrs: [], rangeId: 16 },
  [CK.MARKER_DATA]: { times: [], corrs: [], rangeId: 8 },
};

/** Calls `visit(view, offset, kind, size)` for every record of a CUPTI buffer, strides from `sizes`. */
function eachRecord(buf: Uint8Array, sizes: Map<number, number>, visit: (dv: DataView, off: number, kind: number, size: number) => void): void {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let off = 0;
  while (off + 4 <= buf.length) {
    const kind = dv.getUint32(off, true);
    const size = sizes.get(kind);
    if (!size || off + size > buf.length) return; // the converter reports such a buffer; the copy keeps it as is
    visit(dv, off, kind, size);
    off += size;
  }
}

/** Writes `copies` copies of the CUDA dump `input` as one dump at `output`; returns the records written. */
export function tileDump(input: string, copies: number, output: string): { records: number; spanNs: bigint } {
  // Every chunk checked whole (sync word, header CRC, payload checksum): a damaged dump is not copied.
  const chunks = readDumpChunks(input).map((c) => ({ type: c.type, payload: c.p }));
  const header = chunks.find((c) => c.type === ChunkType.HEADER);
  if (!header || new DataView(header.payload.buffer, header.payload.byteOffset).getUint32(0, true) !== Vendor.CUDA) {
    throw new Error(`${input}: not a CUDA dump`);
  }
  const sizes = new Map<number, number>();
  for (const c of chunks.filter((x) => x.type === ChunkType.KIND_SIZES)) {
    const dv = new DataView(c.payload.buffer, c.payload.byteOffset, c.payload.byteLength);
    for (let i = 0, n = dv.getUint32(0, true); i < n; i++) sizes.set(dv.getUint32(4 + i * 8, true), dv.getUint32(8 + i * 8, true));
  }
  // The span and the largest ids over every copy-able record.
  let minT = (1n << 64n) - 1n;
  let maxT = 0n;
  let maxCorr = 0;
  let maxExt = 0n;
  let maxRange = 0;
  let records = 0;
  const acts = chunks.filter((c) => c.type === ChunkType.ACTIVITY);
  for (const c of acts) {
    eachRecord(c.payload, sizes, (dv, off, kind, size) => {
      records++;
      const f = FIELDS[kind];
      if (!f) return;
      for (const t of f.times) {
        if (t + 8 > size) continue;
        const v = dv.getBigUint64(off + t, true);
        if (v === 0n) continue;
        if (v < minT) minT = v;
        if (v > maxT) maxT = v;
      }
      for (const k of f.corrs) if (k + 4 <= size) maxCorr = Math.max(maxCorr, dv.getUint32(off + k, true));
      if (f.ext !== undefined && f.ext + 8 <= size) {
        const x = dv.getBigUint64(off + f.ext, true);
        if (x > maxExt) maxExt = x;
      }
      if (f.rangeId !== undefined && f.rangeId + 4 <= size) maxRange = Math.max(maxRange, dv.getUint32(off + f.rangeId, true));
    });
  }
  if (maxT < minT) throw new Error(`${input}: no timestamped records to copy`);
  const span = maxT - minT + 1_000_000n;
  if ((maxCorr + 1) * copies > 0xffffffff || (maxRange + 1) * copies > 0xffffffff) {
    throw new Error(`${input}: ${copies} copies would overflow 32-bit correlation or range ids`);
  }
  const w = RawtraceWriter.toFile(output);
  const firstAct = chunks.findIndex((c) => c.type === ChunkType.ACTIVITY);
  for (const c of chunks.slice(0, firstAct)) w.chunk(c.type, c.payload);
  for (let k = 0; k < copies; k++) {
    const dt = span * BigInt(k);
    const dc = (maxCorr + 1) * k;
    const dx = (maxExt + 1n) * BigInt(k);
    const dr = (maxRange + 1) * k;
    for (const c of acts) {
      const b = new Uint8Array(c.payload); // a copy (a Buffer's slice() would be a view)
      if (k > 0) {
        eachRecord(b, sizes, (dv, off, kind, size) => {
          const f = FIELDS[kind];
          if (!f) return;
          for (const t of f.times) {
            if (t + 8 <= size && dv.getBigUint64(off + t, true) !== 0n) dv.setBigUint64(off + t, dv.getBigUint64(off + t, true) + dt, true);
          }
          for (const q of f.corrs) {
            if (q + 4 <= size && dv.getUint32(off + q, true) !== 0) dv.setUint32(off + q, dv.getUint32(off + q, true) + dc, true);
          }
          if (f.ext !== undefined && f.ext + 8 <= size) dv.setBigUint64(off + f.ext, dv.getBigUint64(off + f.ext, true) + dx, true);
          if (f.rangeId !== undefined && f.rangeId + 4 <= size && dv.getUint32(off + f.rangeId, true) !== 0) {
            dv.setUint32(off + f.rangeId, dv.getUint32(off + f.rangeId, true) + dr, true);
          }
        });
      }
      w.activity(b);
    }
  }
  const last = span * BigInt(copies - 1);
  for (const c of chunks.slice(firstAct)) {
    if (c.type === ChunkType.ACTIVITY || c.type === ChunkType.END) continue;
    if (c.type === ChunkType.CLOCK) {
      const dv = new DataView(c.payload.buffer, c.payload.byteOffset, c.payload.byteLength);
      const which = dv.getUint32(0, true);
      if (which === 2) continue; // periodic anchors: not used by the converter, and they would sit inside copy 0
      if (which === 1) {
        const p = new Uint8Array(c.payload);
        const pv = new DataView(p.buffer);
        pv.setBigUint64(8, pv.getBigUint64(8, true) + last, true);
        pv.setBigUint64(16, pv.getBigUint64(16, true) + last, true);
        w.chunk(c.type, p);
        continue;
      }
    }
    w.chunk(c.type, c.payload);
  }
  w.end();
  w.close();
  return { records: records * copies, spanNs: span };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!);
if (isMain) {
  const [input, copies, output] = process.argv.slice(2);
  if (!input || !output || !(Number(copies) >= 1)) {
    console.error("usage: tsx bench/tile_dump.ts <in.rawtrace> <copies> <out.rawtrace>");
    process.exit(2);
  }
  const t0 = performance.now();
  const r = tileDump(input, Number(copies), output);
  console.log(`${output}: ${r.records} records (${copies} copies of ${input}, ${Number(r.spanNs) / 1e6} ms apart) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
