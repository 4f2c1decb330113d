/**
 * The viewer's timeline tables (assembly/emit/timeline.ts): parses the byte stream the core writes with
 * `convert(src, sink, { format: "timeline" })` into fixed-size binary tables, host-neutral (the browser worker,
 * Node tests). Events arrive in chunks of {@link TL_CHUNK} records, each its own ArrayBuffer, so a worker can
 * transfer them to the page as they fill and no table ever needs one allocation the size of the whole trace.
 */
import type { Sink } from "./engine.js";

/** Bytes per event record. */
export const TL_REC = 48;
/** Bytes per extension entry (u32 event index within its chunk, then x3..x6: words 12..15 of that event). */
export const TL_EXT = 20;
/** Records per event chunk (event i lives in chunk i >> TL_CHUNK_SHIFT at record i & (TL_CHUNK - 1)). */
export const TL_CHUNK_SHIFT = 17;
export const TL_CHUNK = 1 << TL_CHUNK_SHIFT;
/** "No value" in u32 fields (name id, partner, stream). */
export const TL_NONE = 0xffffffff;
const MAGIC = 0x4c545452;
const HEADER = 64;
const ROW = 32;
const LANE = 24;

/** Event kinds (assembly/model/event.ts EvKind). */
export const Kind = {
  KERNEL: 1, MEMCPY: 2, MEMSET: 3, API_RUNTIME: 4, API_DRIVER: 5, SYNC: 6, EVENT_RECORD: 7, OVERHEAD: 8,
  RANGE: 9, INSTANT: 10, GRAPH: 11, GPU_RANGE: 12,
} as const;

/**
 * Event flag bits (record byte 25). INCOMPLETE: no end in the vendor record, drawn with duration 0 at its start.
 * STEP: a host range recognised as a training step (its step number in word 11). EXT: words 12..15 are in the
 * chunk's extension entries (else 0).
 */
export const Flag = {
  EXTERNAL: 1, FLOW_START: 2, FLOW_END: 4, ASYNC: 8, PEER: 16, INCOMPLETE: 32, STEP: 64, EXT: 128,
} as const;

/** Row classes (assembly/emit/timeline.ts RowClass). */
export const RowClass = {
  HOST_RANGES: 1, HOST_API: 2, HOST_OVERHEAD: 3,
  GPU_ANNOTATIONS: 8, GPU_STREAM: 9, GPU_SYNC: 10, GPU_CONTEXT_SYNC: 11, GPU_OVERHEAD: 12,
} as const;

/** Table sizes and time range. Times are ns since `baseNs` (Unix ns). */
export interface TimelineHeader {
  events: number;
  rows: number;
  lanes: number;
  names: number;
  nameBytes: number;
  /** 1: rows were capped (the last row holds the rest); 2: names were capped. */
  flags: number;
  baseNs: bigint;
  minStart: number;
  maxEnd: number;
  laneCap: number;
  /** Extension entries in all chunks (events with words 12..15). */
  extEntries: number;
}

/** Everything but the event chunks: small, cloned to the page in one message. */
export interface TimelineMeta {
  header: TimelineHeader;
  /** 8 u32 per row: class, a (pid/device), b (tid/stream), name id, first lane, lanes, first event, events. */
  rows: Uint32Array;
  /** 24 bytes per lane: u32 first event, u32 events, u32 row, u32 flags (1 = may overlap), f64 max duration. */
  lanes: ArrayBuffer;
  /** Per name: u32 offset, u32 length into `nameBytes`. */
  nameIndex: Uint32Array;
  nameBytes: Uint8Array;
  /** What follows the tables: the summary statistics of the same events (src/core/stats.ts decodeStats). */
  trailer: Uint8Array;
}

/**
 * Incremental parser of the timeline stream: feed it the sink's bytes (use {@link TimelineParser.sink}); event
 * chunks are handed to `onChunk` as soon as they are full (`first` = index of their first event).
 */
export class TimelineParser {
  private phase = 0;
  private target = new Uint8Array(HEADER);
  private filled = 0;
  private header: TimelineHeader | null = null;
  private rows = new Uint32Array(0);
  private lanes = new ArrayBuffer(0);
  private nameIndex = new Uint32Array(0);
  private nameBytes = new Uint8Array(0);
  private nextEvent = 0;
  private trailer: Uint8Array[] = [];

  constructor(private readonly onChunk: (chunk: ArrayBuffer, first: number) => void) {}

  /** A Sink for Engine.convert. */
  readonly sink: Sink = (b) => this.push(b);

  /** Consumes bytes (copied; the view may be reused after the call). */
  push(b: Uint8Array): void {
    let off = 0;
    while (off < b.length) {
      if (this.phase === 6) {
        this.trailer.push(b.slice(off));
        return;
      }
      const n = Math.min(b.length - off, this.target.length - this.filled);
      this.target.set(b.subarray(off, off + n), this.filled);
      this.filled += n;
      off += n;
      if (this.filled === this.target.length) this.advance();
    }
  }

  private next(bytes: number): void {
    this.target = new Uint8Array(bytes);
    this.filled = 0;
  }

  /** Moves past a filled section to the next non-empty one. */
  private advance(): void {
    for (;;) {
      const h = this.header;
      switch (this.phase) {
        case 0: {
          const dv = new DataView(this.target.buffer);
          if (dv.getUint32(0, true) !== MAGIC) throw new Error("timeline stream: bad magic");
          this.header = {
            events: dv.getUint32(8, true),
            rows: dv.getUint32(12, true),
            lanes: dv.getUint32(16, true),
            names: dv.getUint32(20, true),
            nameBytes: dv.getUint32(24, true),
            flags: dv.getUint32(28, true),
            baseNs: dv.getBigUint64(32, true),
            minStart: dv.getFloat64(40, true),
            maxEnd: dv.getFloat64(48, true),
            laneCap: dv.getUint32(56, true),
            extEntries: dv.getUint32(60, true),
          };
          this.phase = 1;
          this.next(this.header.rows * ROW);
          break;
        }
        case 1:
          this.rows = new Uint32Array(this.target.buffer);
          this.phase = 2;
          this.next(h!.lanes * LANE);
          break;
        case 2:
          this.lanes = this.target.buffer as ArrayBuffer;
          this.phase = 3;
          this.next(h!.names * 8);
          break;
        case 3:
          this.nameIndex = new Uint32Array(this.target.buffer);
          this.phase = 4;
          this.next(h!.nameBytes);
          break;
        case 4:
          this.nameBytes = this.target;
          if (h!.events === 0) {
            this.phase = 6;
            this.next(0);
            return;
          }
          this.phase = 5;
          this.next(8);
          break;
        case 5: {
          // A chunk's head: its extension entry count. The chunk becomes one buffer: head, entries, records.
          const count = new DataView(this.target.buffer).getUint32(0, true);
          const n = Math.min(TL_CHUNK, h!.events - this.nextEvent);
          if (count > n) throw new Error(`timeline stream: chunk at event ${this.nextEvent}: ${count} extension entries for ${n} events`);
          const head = this.target;
          this.target = new Uint8Array(chunkRecordsAt(count) + n * TL_REC);
          this.target.set(head);
          this.filled = 8;
          this.phase = 7;
          return;
        }
        case 7: {
          // The receiver may transfer (detach) the buffer: nothing of it is read after this call.
          const buf = this.target.buffer as ArrayBuffer;
          const first = this.nextEvent;
          this.nextEvent += chunkEvents(buf);
          this.onChunk(buf, first);
          if (this.nextEvent === h!.events) {
            this.phase = 6;
            this.next(0);
            return;
          }
          this.phase = 5;
          this.next(8);
          return;
        }
        default:
          return;
      }
      if (this.target.length > 0) return;
    }
  }

  /** The tables once the stream is complete (throws when it was cut short). */
  finish(): TimelineMeta {
    if (this.phase !== 6 || !this.header) throw new Error(`timeline stream: incomplete (section ${this.phase})`);
    const size = this.trailer.reduce((n, p) => n + p.length, 0);
    const trailer = new Uint8Array(size);
    let o = 0;
    for (const p of this.trailer) {
      trailer.set(p, o);
      o += p.length;
    }
    return {
      header: this.header, rows: this.rows, lanes: this.lanes, nameIndex: this.nameIndex, nameBytes: this.nameBytes,
      trailer,
    };
  }
}

/** Byte offset of the records in a chunk buffer with `count` extension entries (8-byte aligned). */
function chunkRecordsAt(count: number): number {
  return (8 + count * TL_EXT + 7) & ~7;
}

/** Events in a chunk buffer (head u32 extension count, u32 0; entries; records). */
function chunkEvents(chunk: ArrayBuffer): number {
  return (chunk.byteLength - chunkRecordsAt(new Uint32Array(chunk, 0, 1)[0])) / TL_REC;
}

/**
 * Read access to the event chunks without per-event objects: `TimelineEvents.start(i)` etc. read the typed views
 * of chunk i >> TL_CHUNK_SHIFT. Words 12..15 (x3..x6) of an event with {@link Flag}.EXT are found by binary search
 * in its chunk's extension entries (only the details panel reads them).
 */
export class TimelineEvents {
  private readonly f64: Float64Array[] = [];
  private readonly u32: Uint32Array[] = [];
  /** Per chunk: its extension entries, 5 u32 each (event index within the chunk, x3..x6). */
  private readonly ext: Uint32Array[] = [];
  length = 0;

  /** Adds a chunk as the parser hands it over (chunks must arrive in order). */
  add(chunk: ArrayBuffer): void {
    const count = new Uint32Array(chunk, 0, 1)[0];
    const at = chunkRecordsAt(count);
    this.ext.push(new Uint32Array(chunk, 8, count * (TL_EXT / 4)));
    this.f64.push(new Float64Array(chunk, at));
    this.u32.push(new Uint32Array(chunk, at));
    this.length += (chunk.byteLength - at) / TL_REC;
  }

  /** ns since baseNs. */
  start(i: number): number {
    return this.f64[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * 6];
  }
  dur(i: number): number {
    return this.f64[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * 6 + 1];
  }
  end(i: number): number {
    const a = this.f64[i >>> TL_CHUNK_SHIFT];
    const o = (i & (TL_CHUNK - 1)) * 6;
    return a[o] + a[o + 1];
  }
  /** u32 word k of record i (4 row, 5 name, 6 kind|flags|lane, 7 correlation, 8 partner, 9..15 x0..x6). */
  word(i: number, k: number): number {
    const c = i >>> TL_CHUNK_SHIFT;
    const j = i & (TL_CHUNK - 1);
    const u = this.u32[c];
    if (k < 12) return u[j * 12 + k];
    if ((u[j * 12 + 6] & (Flag.EXT << 8)) === 0) return 0;
    const x = this.ext[c];
    let lo = 0;
    let hi = x.length / 5;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (x[m * 5] < j) lo = m + 1;
      else hi = m;
    }
    return x[lo * 5 + k - 11];
  }
  row(i: number): number {
    return this.word(i, 4);
  }
  name(i: number): number {
    return this.word(i, 5);
  }
  kind(i: number): number {
    return this.word(i, 6) & 0xff;
  }
  flags(i: number): number {
    return (this.word(i, 6) >>> 8) & 0xff;
  }
  lane(i: number): number {
    return this.word(i, 6) >>> 16;
  }
  correlation(i: number): number {
    return this.word(i, 7);
  }
  partner(i: number): number {
    return this.word(i, 8);
  }
}

/** Lane table accessor. */
export class TimelineLanes {
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  readonly length: number;
  constructor(buf: ArrayBuffer) {
    this.u32 = new Uint32Array(buf);
    this.f64 = new Float64Array(buf);
    this.length = buf.byteLength / LANE;
  }
  first(l: number): number {
    return this.u32[l * 6];
  }
  count(l: number): number {
    return this.u32[l * 6 + 1];
  }
  row(l: number): number {
    return this.u32[l * 6 + 2];
  }
  overlapping(l: number): boolean {
    return (this.u32[l * 6 + 3] & 1) !== 0;
  }
  maxDur(l: number): number {
    return this.f64[l * 3 + 2];
  }
}

const utf8 = new TextDecoder();

/** Decodes every name once (one string per distinct name, not per event). */
export function decodeNames(meta: TimelineMeta): string[] {
  const out: string[] = new Array(meta.header.names);
  for (let i = 0; i < out.length; i++) {
    const o = meta.nameIndex[i * 2];
    out[i] = utf8.decode(meta.nameBytes.subarray(o, o + meta.nameIndex[i * 2 + 1]));
  }
  return out;
}
