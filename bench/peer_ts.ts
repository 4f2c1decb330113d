/**
 * The peer a JavaScript developer would write: a plain TypeScript CUPTI → Chrome JSON converter (DataView reads,
 * template strings, Map joins), reading the same container. It handles the same record kinds the benchmark dumps
 * hold (kernels, runtime/driver calls, memcpy, memset, syncs, external correlation, NVTX markers) and writes
 * comparable events, so the ratio against the core is like for like. Kept deliberately idiomatic, not tuned.
 */
import { closeSync, openSync, readSync } from "node:fs";

const td = new TextDecoder();

/** Converts `path`, handing output strings to `sink`; returns the number of events written. */
export function peerConvert(path: string, sink: (s: string) => void): number {
  const fd = openSync(path, "r");
  const pre = Buffer.alloc(16);
  readSync(fd, pre, 0, 16, null);
  const sizes = new Map<number, number>();
  const strings = new Map<bigint, string>();
  const api = new Map<string, string>();
  const ext = new Map<number, bigint>();
  const chunks: Buffer[] = [];
  const hdr = Buffer.alloc(24);
  // Read every chunk (a JS developer would keep them; the dump must be read before it is joined).
  for (;;) {
    if (readSync(fd, hdr, 0, 24, null) < 24) break;
    const type = hdr.readUInt16LE(4);
    const len = hdr.readUInt32LE(12);
    const body = Buffer.alloc((len + 7) & ~7);
    readSync(fd, body, 0, body.length, null);
    const p = body.subarray(0, len);
    const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
    if (type === 3) {
      const n = dv.getUint32(0, true);
      for (let i = 0; i < n; i++) sizes.set(dv.getUint32(4 + i * 8, true), dv.getUint32(8 + i * 8, true));
    } else if (type === 4) {
      let o = 4;
      const n = dv.getUint32(0, true);
      for (let i = 0; i < n; i++) {
        const d = dv.getUint32(o, true), id = dv.getUint32(o + 4, true), l = dv.getUint32(o + 8, true);
        api.set(`${d}:${id}`, td.decode(p.subarray(o + 12, o + 12 + l)).replace(/_v\d+$/, ""));
        o += 12 + l;
      }
    } else if (type === 6) {
      let o = 4;
      const n = dv.getUint32(0, true);
      for (let i = 0; i < n; i++) {
        const ptr = dv.getBigUint64(o, true), l = dv.getUint32(o + 8, true);
        strings.set(ptr, td.decode(p.subarray(o + 12, o + 12 + l)));
        o += 12 + l;
      }
    } else if (type === 5) {
      chunks.push(p);
      for (let o = 0; o + 4 <= p.length;) {
        const kind = dv.getUint32(o, true);
        const size = sizes.get(kind) ?? 0;
        if (!size) break;
        if (kind === 39) ext.set(dv.getUint32(o + 16, true), dv.getBigUint64(o + 8, true));
        o += size;
      }
    }
  }
  closeSync(fd);
  let base = -1n;
  const us = (ns: bigint) => {
    if (base < 0n) base = ns - (ns % 3944619000000000n); // the core's time base (assembly/emit/chrome_json.ts chromeBaseFor)
    const r = ns - base;
    return `${r / 1000n}.${(r % 1000n).toString().padStart(3, "0")}`;
  };
  sink('{"schemaVersion":1,"traceEvents":[\n');
  let events = 0;
  let first = true;
  const out = (s: string) => {
    sink(first ? s : ",\n" + s);
    first = false;
    events++;
  };
  const openMarkers = new Map<number, { name: string; ts: bigint; pid: number; tid: number }>();
  for (const p of chunks) {
    const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
    for (let o = 0; o + 4 <= p.length;) {
      const kind = dv.getUint32(o, true);
      const size = sizes.get(kind) ?? 0;
      if (!size) break;
      if (kind === 10) {
        const start = dv.getBigUint64(o + 16, true), end = dv.getBigUint64(o + 24, true);
        const corr = dv.getUint32(o + 92, true);
        const e = ext.get(corr);
        const name = JSON.stringify(strings.get(dv.getBigUint64(o + 104, true)) ?? "unknown");
        const dev = dv.getUint32(o + 40, true), stream = dv.getUint32(o + 48, true);
        const args = {
          ...(e !== undefined ? { "External id": Number(e) } : {}),
          device: dev, context: dv.getUint32(o + 44, true), stream, correlation: corr,
          "registers per thread": dv.getUint16(o + 6, true),
          "shared memory": dv.getInt32(o + 76, true) + dv.getInt32(o + 80, true),
          grid: [dv.getInt32(o + 52, true), dv.getInt32(o + 56, true), dv.getInt32(o + 60, true)],
          block: [dv.getInt32(o + 64, true), dv.getInt32(o + 68, true), dv.getInt32(o + 72, true)],
        };
        out(`{"ph":"X","cat":"kernel","name":${name},"pid":${dev},"tid":${stream},"ts":${us(start)},"dur":${us(base + end - start)},"args":${JSON.stringify(args)}}`);
        out(`{"ph":"f","id":${corr},"pid":${dev},"tid":${stream},"ts":${us(start)},"cat":"ac2g","name":"ac2g","bp":"e"}`);
      } else if (kind === 5 || kind === 4) {
        const cbid = dv.getUint32(o + 4, true);
        const name = api.get(`${kind === 4 ? 1 : 2}:${cbid}`) ?? `cbid ${cbid}`;
        if (kind === 4 && name !== "cuLaunchKernel") {
          o += size;
          continue;
        }
        const start = dv.getBigUint64(o + 8, true), end = dv.getBigUint64(o + 16, true);
        const pid = dv.getUint32(o + 24, true), tid = dv.getUint32(o + 28, true), corr = dv.getUint32(o + 32, true);
        const e = ext.get(corr);
        const args = { ...(e !== undefined ? { "External id": Number(e) } : {}), cbid, correlation: corr };
        out(`{"ph":"X","cat":"${kind === 5 ? "cuda_runtime" : "cuda_driver"}","name":${JSON.stringify(name)},"pid":${pid},"tid":${tid},"ts":${us(start)},"dur":${us(base + end - start)},"args":${JSON.stringify(args)}}`);
        if (name.startsWith("cudaLaunch") || name.startsWith("cudaMem") || name === "cuLaunchKernel") {
          out(`{"ph":"s","id":${corr},"pid":${pid},"tid":${tid},"ts":${us(start)},"cat":"ac2g","name":"ac2g"}`);
        }
      } else if (kind === 1 || kind === 2) {
        const start = dv.getBigUint64(o + 16, true), end = dv.getBigUint64(o + 24, true);
        const bytes = dv.getBigUint64(o + 8, true);
        const dev = dv.getUint32(o + 32, true), stream = dv.getUint32(o + 40, true), corr = dv.getUint32(o + 44, true);
        const kinds = ["Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"];
        const mem = ["Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static"];
        const name = kind === 1
          ? `Memcpy ${kinds[dv.getUint8(o + 4)] ?? "Unknown"} (${mem[dv.getUint8(o + 5)] ?? "Unknown"} -> ${mem[dv.getUint8(o + 6)] ?? "Unknown"})`
          : `Memset (${mem[dv.getUint16(o + 50, true)] ?? "Unknown"})`;
        const dur = end - start;
        const args = {
          device: dev, context: dv.getUint32(o + 36, true), stream, correlation: corr, bytes: Number(bytes),
          ...(dur > 0n ? { "memory bandwidth (GB/s)": Number(bytes) / Number(dur) } : {}),
        };
        out(`{"ph":"X","cat":"${kind === 1 ? "gpu_memcpy" : "gpu_memset"}","name":${JSON.stringify(name)},"pid":${dev},"tid":${stream},"ts":${us(start)},"dur":${us(base + dur)},"args":${JSON.stringify(args)}}`);
        out(`{"ph":"f","id":${corr},"pid":${dev},"tid":${stream},"ts":${us(start)},"cat":"ac2g","name":"ac2g","bp":"e"}`);
      } else if (kind === 38) {
        const start = dv.getBigUint64(o + 8, true), end = dv.getBigUint64(o + 16, true);
        const stream = dv.getUint32(o + 32, true), corr = dv.getUint32(o + 24, true);
        out(`{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":${stream + 1000000},"ts":${us(start)},"dur":${us(base + end - start)},"args":${JSON.stringify({ stream, correlation: corr })}}`);
      } else if (kind === 12) {
        const flags = dv.getUint32(o + 4, true), id = dv.getUint32(o + 16, true), ts = dv.getBigUint64(o + 8, true);
        if (flags & 2) {
          openMarkers.set(id, { name: strings.get(dv.getBigUint64(o + 40, true)) ?? "", ts, pid: dv.getUint32(o + 24, true), tid: dv.getUint32(o + 28, true) });
        } else if (flags & 4) {
          const m = openMarkers.get(id);
          if (m) {
            out(`{"ph":"X","cat":"user_annotation","name":${JSON.stringify(m.name)},"pid":${m.pid},"tid":${m.tid},"ts":${us(m.ts)},"dur":${us(base + ts - m.ts)}}`);
            openMarkers.delete(id);
          }
        }
      }
      o += size;
    }
  }
  sink("\n]}\n");
  return events;
}
