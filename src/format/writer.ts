/**
 * TypeScript writer of the `.rawtrace` container (docs/format.md). Used by tests, fixture tools and the round-trip
 * tool; byte for byte equal to the C writer in collectors/common/rawtrace_writer.c for the same calls.
 */
import { crc32 } from "node:zlib";
import { closeSync, openSync, writeSync } from "node:fs";
import { payloadChecksum } from "./checksum.js";
import {
  CHUNK_FLAG_CRC,
  CHUNK_FLAG_XXH32,
  CHUNK_FLAG_XXH64,
  CHUNK_HEADER_SIZE,
  CHUNK_SYNC,
  ChunkType,
  FORMAT_MAJOR,
  FORMAT_MINOR,
  MAGIC,
  MAX_CHUNK_PAYLOAD,
  PREAMBLE_SIZE,
} from "./container.js";

/**
 * The payload checksum a writer stores in every chunk header (docs/format.md, "Chunk header"): `"xxh64"` (the
 * default, flag bit 2: the low 32 bits of XXH64), `"xxh32"` (flag bit 1, format 1.1's: dumps whose payloads a 1.1
 * reader verifies too) or `"crc32"` (flag bit 0, the only checksum of format 1.0: dumps a 1.0 reader verifies too,
 * and old-style dumps for tests).
 */
export type PayloadChecksum = "xxh64" | "xxh32" | "crc32";

/** Flag bit of each {@link PayloadChecksum} (its keys are the names a writer accepts). */
export const CHECKSUM_FLAGS: Readonly<Record<PayloadChecksum, number>> = { xxh64: CHUNK_FLAG_XXH64, xxh32: CHUNK_FLAG_XXH32, crc32: CHUNK_FLAG_CRC };

/** Options of a {@link RawtraceWriter}. */
export interface WriterOptions {
  /** Payload checksum of every chunk written with one (default `"xxh64"`). */
  checksum?: PayloadChecksum;
}

/** Fields of the HEADER chunk. Times are Unix-epoch ns; versions as the vendor reports them. */
export interface HeaderInfo {
  vendor: number;
  pointerSize?: number;
  vendorVersion: number;
  runtimeVersion?: number;
  driverVersion?: number;
  pid: number;
  rank?: number;
  localRank?: number;
  worldSize?: number;
  collectorVersion?: number;
  startNs: bigint;
  hostname: string;
  commandLine: string;
  vendorVersionText?: string;
}

/** One CLOCK anchor: every value in ns of its clock. */
export interface ClockAnchor {
  which: number;
  vendorNs: bigint;
  realtimeNs: bigint;
  monotonicNs: bigint;
  monotonicRawNs: bigint;
  boottimeNs: bigint;
}

/** One entry of the DEVICES handle table (Intel XPU, docs/format.md §7): tile undefined = the root device. */
export interface DeviceHandle {
  handle: bigint;
  uuid: Uint8Array;
  /** DEVICES id of the root device. */
  device: number;
  /** Sub-device (tile) index. */
  tile?: number;
}

/** One DEVICES entry. Memory in bytes, bandwidth in bytes/s, clock in kHz. */
export interface DeviceInfo {
  id: number;
  multiprocessors: number;
  globalMemoryBytes: bigint;
  memoryBandwidth: bigint;
  coreClockKhz: number;
  ccMajor: number;
  ccMinor: number;
  maxThreadsPerBlock: number;
  maxThreadsPerMultiprocessor: number;
  regsPerBlock: number;
  regsPerMultiprocessor: number;
  warpSize: number;
  sharedMemPerBlock: number;
  sharedMemPerMultiprocessor: number;
  sharedMemPerBlockOptin: number;
  maxBlocksPerMultiprocessor: number;
  uuid?: Uint8Array;
  name: string;
}

const enc = new TextEncoder();

/** Growable little-endian byte builder for chunk payloads. */
export class PayloadBuilder {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  /** Bytes written so far. */
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.length + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u16(v: number): this { this.room(2); this.view.setUint16(this.length, v, true); this.length += 2; return this; }
  u32(v: number): this { this.room(4); this.view.setUint32(this.length, v >>> 0, true); this.length += 4; return this; }
  i32(v: number): this { this.room(4); this.view.setInt32(this.length, v, true); this.length += 4; return this; }
  u64(v: bigint | number): this {
    this.room(8); this.view.setBigUint64(this.length, BigInt.asUintN(64, BigInt(v)), true); this.length += 8; return this;
  }
  bytes(b: Uint8Array): this { this.room(b.length); this.buf.set(b, this.length); this.length += b.length; return this; }
  /** A `u32 length` + bytes string; JS strings are written as UTF-8, byte arrays as they are. */
  str(s: string | Uint8Array): this { const b = typeof s === "string" ? enc.encode(s) : s; return this.u32(b.length).bytes(b); }
  /** The bytes written so far (a view, valid until the next write). */
  result(): Uint8Array { return this.buf.subarray(0, this.length); }
}

/**
 * Appends chunks to a sink. The sink receives each piece once and may keep it (the writer never reuses it).
 * Totals for the END chunk are counted as chunks are written.
 */
export class RawtraceWriter {
  private seq = 0;
  /**
   * Test hook: when set, every following chunk carries this sequence number instead of the running one (files that
   * reuse a number, like two collectors appending to one file). `undefined` restores normal numbering.
   */
  seqOverride: number | undefined = undefined;
  private activityBytes = 0n;
  private droppedTotal = 0n;
  /** Flag bit of the payload checksum written (CHUNK_FLAG_XXH64, CHUNK_FLAG_XXH32 or CHUNK_FLAG_CRC). */
  private readonly sumFlag: number;

  /**
   * @param sink receives the preamble, then every chunk (header + payload + padding) as one array.
   * @param opts the payload checksum (XXH64's low 32 bits unless `checksum` says `"xxh32"` or `"crc32"`).
   */
  constructor(private readonly sink: (bytes: Uint8Array) => void, opts: WriterOptions = {}) {
    const sum = opts.checksum ?? "xxh64";
    if (!Object.hasOwn(CHECKSUM_FLAGS, sum)) throw new RangeError(`unknown payload checksum ${JSON.stringify(sum)}`);
    this.sumFlag = CHECKSUM_FLAGS[sum];
    const pre = new Uint8Array(PREAMBLE_SIZE);
    pre.set(MAGIC, 0);
    const dv = new DataView(pre.buffer);
    dv.setUint16(8, FORMAT_MAJOR, true);
    dv.setUint16(10, FORMAT_MINOR, true);
    dv.setUint32(12, 0, true);
    sink(pre);
  }

  /** A writer that appends to a new file at `path`; call {@link RawtraceWriter.close} (or end()) when done. */
  static toFile(path: string, opts: WriterOptions = {}): RawtraceWriter & { close(): void } {
    const fd = openSync(path, "w");
    const w = new RawtraceWriter((b) => { writeSync(fd, b); }, opts) as RawtraceWriter & { close(): void };
    w.close = () => closeSync(fd);
    return w;
  }

  /** A writer that collects everything in memory; `bytes()` returns the file so far. */
  static inMemory(opts: WriterOptions = {}): RawtraceWriter & { bytes(): Uint8Array } {
    const parts: Uint8Array[] = [];
    const w = new RawtraceWriter((b) => { parts.push(b); }, opts) as RawtraceWriter & { bytes(): Uint8Array };
    w.bytes = () => new Uint8Array(Buffer.concat(parts));
    return w;
  }

  /**
   * Writes one chunk of `type` with `payload` (copied). `withChecksum` false leaves the payload checksum and its
   * flag bits clear (the header CRC is still written). Returns the chunk's sequence number.
   */
  chunk(type: number, payload: Uint8Array, withChecksum = true): number {
    if (payload.length > MAX_CHUNK_PAYLOAD) throw new RangeError(`chunk payload ${payload.length} B exceeds 256 MiB`);
    const padded = (payload.length + 7) & ~7;
    const out = new Uint8Array(CHUNK_HEADER_SIZE + padded);
    const dv = new DataView(out.buffer);
    dv.setUint32(0, CHUNK_SYNC, true);
    dv.setUint16(4, type, true);
    dv.setUint16(6, withChecksum ? this.sumFlag : 0, true);
    dv.setUint32(8, this.seqOverride ?? this.seq, true);
    dv.setUint32(12, payload.length, true);
    dv.setUint32(16, withChecksum ? payloadChecksum(this.sumFlag, payload) : 0, true);
    dv.setUint32(20, crc32(out.subarray(0, 20)) >>> 0, true);
    out.set(payload, CHUNK_HEADER_SIZE);
    this.sink(out);
    if (type === ChunkType.ACTIVITY) this.activityBytes += BigInt(payload.length);
    if (this.seqOverride !== undefined) return this.seqOverride;
    return this.seq++;
  }

  /** HEADER chunk (docs/format.md §1). */
  header(h: HeaderInfo): number {
    const p = new PayloadBuilder()
      .u32(h.vendor).u32(h.pointerSize ?? 8).u32(h.vendorVersion).u32(h.runtimeVersion ?? 0)
      .u32(h.driverVersion ?? 0).u32(h.pid).i32(h.rank ?? -1).i32(h.localRank ?? -1).i32(h.worldSize ?? -1)
      .u32(h.collectorVersion ?? 0x000100).u64(h.startNs)
      .str(h.hostname).str(h.commandLine).str(h.vendorVersionText ?? "");
    return this.chunk(ChunkType.HEADER, p.result());
  }

  /** CLOCK chunk (§2). */
  clock(a: ClockAnchor): number {
    const p = new PayloadBuilder().u32(a.which).u32(0).u64(a.vendorNs).u64(a.realtimeNs).u64(a.monotonicNs)
      .u64(a.monotonicRawNs).u64(a.boottimeNs);
    return this.chunk(ChunkType.CLOCK, p.result());
  }

  /** KIND_SIZES chunk (§3): pairs of (kind, record size in bytes). */
  kindSizes(pairs: ReadonlyArray<readonly [number, number]>): number {
    const p = new PayloadBuilder().u32(pairs.length);
    for (const [k, s] of pairs) p.u32(k).u32(s);
    return this.chunk(ChunkType.KIND_SIZES, p.result());
  }

  /** API_NAMES chunk (§4): (domain, id, name). */
  apiNames(entries: ReadonlyArray<readonly [number, number, string]>): number {
    const p = new PayloadBuilder().u32(entries.length);
    for (const [d, id, name] of entries) p.u32(d).u32(id).str(name);
    return this.chunk(ChunkType.API_NAMES, p.result());
  }

  /** ACTIVITY chunk (§5): one vendor buffer as delivered. */
  activity(buffer: Uint8Array): number {
    return this.chunk(ChunkType.ACTIVITY, buffer);
  }

  /** STRINGS chunk (§6): (pointer value, bytes or UTF-8 text). */
  strings(entries: ReadonlyArray<readonly [bigint, string | Uint8Array]>): number {
    const p = new PayloadBuilder().u32(entries.length);
    for (const [ptr, s] of entries) p.u64(ptr).str(s);
    return this.chunk(ChunkType.STRINGS, p.result());
  }

  /**
   * DEVICES chunk (§7); `handles` (Intel XPU) adds the handle table after the entries: Level Zero device and
   * sub-device handles with their UUID, root device id and tile index (0xffffffff = the root device itself).
   */
  devices(list: ReadonlyArray<DeviceInfo>, handles?: ReadonlyArray<DeviceHandle>): number {
    const p = new PayloadBuilder().u32(list.length);
    for (const d of list) {
      p.u32(d.id).u32(d.multiprocessors).u64(d.globalMemoryBytes).u64(d.memoryBandwidth).u32(d.coreClockKhz)
        .u32(d.ccMajor).u32(d.ccMinor).u32(d.maxThreadsPerBlock).u32(d.maxThreadsPerMultiprocessor)
        .u32(d.regsPerBlock).u32(d.regsPerMultiprocessor).u32(d.warpSize).u32(d.sharedMemPerBlock)
        .u32(d.sharedMemPerMultiprocessor).u32(d.sharedMemPerBlockOptin).u32(d.maxBlocksPerMultiprocessor);
      const uuid = new Uint8Array(16);
      if (d.uuid) uuid.set(d.uuid.subarray(0, 16));
      p.bytes(uuid).str(d.name);
    }
    if (handles && handles.length) {
      p.u32(handles.length);
      for (const h of handles) {
        const uuid = new Uint8Array(16);
        uuid.set(h.uuid.subarray(0, 16));
        p.u64(h.handle).bytes(uuid).u32(h.device).u32(h.tile ?? 0xffffffff);
      }
    }
    return this.chunk(ChunkType.DEVICES, p.result());
  }

  /** DROPPED chunk (§8). */
  dropped(count: bigint | number, reason: number): number {
    this.droppedTotal += BigInt(count);
    return this.chunk(ChunkType.DROPPED, new PayloadBuilder().u64(count).u32(reason).u32(0).result());
  }

  /** THREAD_NAMES chunk (§9): (pid, tid, name). */
  threadNames(entries: ReadonlyArray<readonly [number, number, string]>): number {
    const p = new PayloadBuilder().u32(entries.length);
    for (const [pid, tid, name] of entries) p.u32(pid).u32(tid).str(name);
    return this.chunk(ChunkType.THREAD_NAMES, p.result());
  }

  /** LOG chunk (§11). */
  log(level: number, message: string): number {
    return this.chunk(ChunkType.LOG, new PayloadBuilder().u32(level).str(message).result());
  }

  /** END chunk (§10): the clean-close marker with totals. */
  end(): number {
    const p = new PayloadBuilder().u64(this.seq).u64(this.activityBytes).u64(this.droppedTotal);
    return this.chunk(ChunkType.END, p.result());
  }
}
