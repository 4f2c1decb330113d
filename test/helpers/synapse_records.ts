/**
 * Hand-built Synapse trace buffers for the decoder tests: entries with every field under the test's control (raw
 * long double bytes, pointers anywhere), a string pool, the trailer, and whole dumps (HEADER vendor 5, HPU_DEVICE,
 * CLOCK anchors with the profiler clock = Unix ns − {@link PROF_OFFSET}, HPU_TRACE chunks, END).
 */
import { PayloadBuilder, RawtraceWriter } from "../../src/format/writer.js";
import { ChunkType, PREAMBLE_SIZE, CHUNK_HEADER_SIZE, Vendor } from "../../src/format/container.js";
import { f80FromNs, hpuDevicePayload, hpuTracePayload } from "../../src/tools/kineto_to_synapse.js";

/** Unix ns − profiler ns. */
export const PROF_OFFSET = 1_779_000_000_000_000_000n;
/** Profiler ns of the run's start anchor. */
export const T0 = 5_000_000_000n;
/** Buffer base address of the crafted buffers. */
export const BASE = 0x7f00_0000_0000n;

/** One entry; pointer fields are either strings (placed in the pool) or raw bigint pointer values. */
export interface SynEntry {
  type: string;
  /** Profiler ns (encoded exactly), or raw 10 bytes. */
  ts: bigint | Uint8Array;
  dur?: bigint | Uint8Array;
  engineType: number;
  engineIndex: number;
  context?: bigint;
  name?: string | bigint;
  operation?: string | bigint;
  dataType?: string | bigint;
  recipeId?: number;
  recipeName?: string | bigint;
  /** Metadata name ('M'). */
  meta?: string | bigint;
  /** Counter value ('C'). */
  value?: bigint;
  /** extraArgs: count and raw array pointer. */
  extraCount?: number;
  extraPtr?: bigint;
}

const enc = new TextEncoder();

/** Lays out a buffer of `layout`-byte entries at `base`; `num` overrides the trailer count. */
export function synBuffer(entries: SynEntry[], opts: { layout?: 208 | 112; base?: bigint; num?: bigint; version?: bigint; pad?: number } = {}): Uint8Array {
  const layout = opts.layout ?? 208;
  const base = opts.base ?? BASE;
  const pool: number[] = [];
  const offs = new Map<string, number>();
  const entriesLen = entries.length * layout;
  const ptr = (v: string | bigint | undefined): bigint => {
    if (v === undefined) return 0n;
    if (typeof v === "bigint") return v;
    let o = offs.get(v);
    if (o === undefined) {
      o = pool.length;
      pool.push(...enc.encode(v), 0);
      offs.set(v, o);
    }
    return base + BigInt(entriesLen + o);
  };
  const eb = new Uint8Array(entriesLen);
  const dv = new DataView(eb.buffer);
  entries.forEach((e, i) => {
    const o = i * layout;
    dv.setBigUint64(o, ptr(e.name), true);
    eb[o + 16] = e.type.charCodeAt(0);
    eb.set(typeof e.ts === "bigint" ? f80FromNs(e.ts) : e.ts, o + 32);
    eb.set(e.dur === undefined ? new Uint8Array(10) : typeof e.dur === "bigint" ? f80FromNs(e.dur) : e.dur, o + 48);
    dv.setUint32(o + 64, e.engineType, true);
    dv.setUint32(o + 68, e.engineIndex, true);
    if (layout === 208) dv.setBigUint64(o + 72, e.context ?? 0n, true);
    else dv.setUint32(o + 72, Number(e.context ?? 0n), true);
    if (e.type === "M") dv.setBigUint64(o + 80, ptr(e.meta), true);
    else if (e.type === "C") dv.setBigUint64(o + 80, e.value ?? 0n, true);
    else {
      dv.setBigUint64(o + 80, ptr(e.dataType), true);
      dv.setBigUint64(o + 88, ptr(e.operation), true);
      if (layout === 208) {
        dv.setUint16(o + 96, e.recipeId ?? 0, true);
        dv.setBigUint64(o + 104, ptr(e.recipeName), true);
        eb[o + 128] = e.extraCount ?? 0;
        dv.setBigUint64(o + 136, e.extraPtr ?? 0n, true);
      }
    }
  });
  const poolLen = (pool.length + 7 + (opts.pad ?? 0)) & ~7;
  const out = new Uint8Array(entriesLen + poolLen + 16);
  out.set(eb);
  out.set(pool, entriesLen);
  const ov = new DataView(out.buffer);
  ov.setBigUint64(out.length - 16, opts.num ?? BigInt(entries.length), true);
  ov.setBigUint64(out.length - 8, opts.version ?? 3n, true);
  return out;
}

/** Profiler ns → the Unix ns the decoder maps it to. */
export const unix = (prof: bigint): bigint => prof + PROF_OFFSET;

/** 'M' entries naming the host type (engineType 40, thread 1) and TPC (8), MME (7), PDMA (4), NIC (15) types. */
export function metadata(): SynEntry[] {
  const m = (engineType: number, engineIndex: number, meta: string): SynEntry => ({ type: "M", ts: 0n, engineType, engineIndex, meta, name: "meta" });
  return [
    m(40, 0, "***Host"), m(40, 1, "Thread 1"),
    m(8, 0, "*TPC "), m(8, 0, "TPC0"), m(8, 1, "TPC1"),
    m(7, 0, "*MME "), m(7, 1, "MME1"),
    m(4, 0, "*PDMA"), m(4, 2, "PDMA2"),
    m(15, 0, "*NIC "), m(15, 3, "NIC3"),
  ];
}

/** Options of {@link synDump}. */
export interface DumpOptions {
  device?: number;
  /** Extra chunks written before the traces: [type, payload]. */
  before?: Array<[number, Uint8Array]>;
  /** STRINGS entries written before the traces. */
  strings?: Array<[bigint, string | Uint8Array]>;
}

/** A dump with one HPU_TRACE chunk per payload in `traces` (use {@link tracePayload} or raw bytes). */
export function synDump(traces: Uint8Array[], opts: DumpOptions = {}): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: Vendor.HABANA, vendorVersion: 11900, pid: 777, startNs: unix(T0), hostname: "h", commandLine: "t", vendorVersionText: "1.19.0" });
  const anchor = (which: number, p: bigint) => ({ which, vendorNs: p, realtimeNs: unix(p), monotonicNs: p, monotonicRawNs: p, boottimeNs: p });
  w.clock(anchor(0, T0));
  w.chunk(ChunkType.HPU_DEVICE, hpuDevicePayload(opts.device ?? 0, 5, 96n << 30n, "GAUDI2"));
  for (const [t, p] of opts.before ?? []) w.chunk(t, p);
  if (opts.strings?.length) w.strings(opts.strings);
  for (const t of traces) w.chunk(ChunkType.HPU_TRACE, t);
  w.clock(anchor(1, T0 + 10_000_000_000n));
  w.end();
  return w.bytes();
}

/** An HPU_TRACE payload of `buffer` at BASE on `device`. */
export function tracePayload(buffer: Uint8Array, device = 0, base = BASE): Uint8Array {
  return hpuTracePayload(base, buffer, BigInt(new DataView(buffer.buffer, buffer.byteOffset).getBigUint64(buffer.length - 16, true)), device, 0, T0 + 1n);
}

/** File offsets of the payloads of every chunk of `type` in `b`. */
export function chunkPayloads(b: Uint8Array, type: number): number[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: number[] = [];
  for (let p = PREAMBLE_SIZE; p + CHUNK_HEADER_SIZE <= b.length;) {
    if (dv.getUint16(p + 4, true) === type) out.push(p + CHUNK_HEADER_SIZE);
    p += CHUNK_HEADER_SIZE + ((dv.getUint32(p + 12, true) + 7) & ~7);
  }
  return out;
}

/** A raw 10-byte long double from significand and sign/exponent word. */
export function f80Raw(mantissa: bigint, signExp: number): Uint8Array {
  const b = new Uint8Array(10);
  const dv = new DataView(b.buffer);
  dv.setBigUint64(0, mantissa, true);
  dv.setUint16(8, signExp, true);
  return b;
}

export { PayloadBuilder };
