/**
 * The viewer's timeline tables (assembly/emit/timeline.ts): parses the byte stream the core writes with
 * `convert(src, sink, { format: "timeline" })` into fixed-size binary tables, host-neutral (the browser worker,
 * Node tests). The records arrive in arrival order while the core's pass runs and leave the parser at once in
 * parts of {@link TL_CHUNK} records, each its own ArrayBuffer, so a worker can transfer them to the page as they
 * fill, the core keeps only their sort keys, and no table ever needs one allocation the size of the whole trace.
 * At the end the core sends the order the viewer reads them in (a permutation) and each event's partner;
 * {@link TimelineEvents} reads event i (in output order: rows, then lanes, then start) through it.
 */
import type { Sink } from "./engine.js";

/** Bytes per event record. */
export const TL_REC = 48;
/** Bytes per extension entry (x3..x6: words 12..15 of the event whose record names the entry). */
export const TL_EXT = 16;
/** Records per records part (arrival index a lives in part a >> TL_CHUNK_SHIFT at record a & (TL_CHUNK - 1)). */
export const TL_CHUNK_SHIFT = 17;
export const TL_CHUNK = 1 << TL_CHUNK_SHIFT;
/** Extension entries per extension part. */
const EXT_SHIFT = 16;
const EXT_PART = 1 << EXT_SHIFT;
/** "No value" in u32 fields (name id, partner, stream). */
export const TL_NONE = 0xffffffff;
const MAGIC = 0x4c545452;
const HEADER = 64;
const ROW = 32;
const LANE = 24;
/** u32 words per record. */
const REC_WORDS = TL_REC / 4;

/**
 * What a part (an ArrayBuffer the parser hands to `onChunk`) holds: its first 8 bytes are u32 type, u32 count,
 * then `count` items: RECORDS, records in arrival order ({@link TL_REC} bytes); EXT, extension entries in arrival
 * order ({@link TL_EXT} bytes); ORDER, per event in output order its arrival index (u32); PARTNERS, per event in
 * output order its partner's output index (u32, TL_NONE: none); ROWS, per arrival row its output row (u32);
 * LANES, per event in output order its lane within its row (u8).
 */
export const Part = { RECORDS: 1, EXT: 2, ORDER: 3, PARTNERS: 4, ROWS: 5, LANES: 6 } as const;
const PART_HEAD = 8;

/** Event kinds (assembly/model/event.ts EvKind). */
export const Kind = {
  KERNEL: 1, MEMCPY: 2, MEMSET: 3, API_RUNTIME: 4, API_DRIVER: 5, SYNC: 6, EVENT_RECORD: 7, OVERHEAD: 8,
  RANGE: 9, INSTANT: 10, GRAPH: 11, GPU_RANGE: 12,
} as const;

/**
 * Event flag bits (record byte 25). INCOMPLETE: no end in the vendor record, drawn with duration 0 at its start.
 * STEP: a host range recognised as a training step (its step number in word 11). EXT: words 12..15 are in the
 * event's extension entry (else 0).
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
  /** Extension entries (events with words 12..15). */
  extEntries: number;
}

/** Everything but the event parts: small, cloned to the page in one message. */
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

/** Block tags (assembly/emit/timeline.ts). */
const T_EVENTS = 1;
const T_ORDER = 2;
const T_TABLES = 3;
const T_PARTNERS = 4;
/** Records per EVENTS block at most (the core writes 4096). */
const MAX_BLOCK_RECORDS = 1 << 16;
/** Rows at most (assembly/emit/timeline_rows.ts MAX_ROWS). */
const MAX_ROWS = 16384;

/** Parser phases: what {@link TimelineParser}'s target holds when it is full. */
const enum Phase {
  BLOCK_HEAD, RECORDS, EXT, HEADER, ROWS, ROW_SOURCE, LANES, NAME_INDEX, NAME_BYTES, ORDER, PARTNERS, TRAILER,
}

/** A part of `count` items of `size` bytes, its head filled in. */
function newPart(type: number, count: number, size: number): ArrayBuffer {
  const b = new ArrayBuffer(PART_HEAD + ((count * size + 7) & ~7));
  const h = new Uint32Array(b, 0, 2);
  h[0] = type;
  h[1] = count;
  return b;
}

/**
 * Incremental parser of the timeline stream: feed it the sink's bytes (use {@link TimelineParser.sink}). Parts
 * (records, extension entries, then the order and the partners) are handed to `onChunk` as soon as they are
 * complete (`first` = arrival index of a records or extension part's first item, else 0); {@link finish} hands
 * over the rows and lanes parts and returns the tables.
 */
export class TimelineParser {
  private phase = Phase.BLOCK_HEAD;
  private target = new Uint8Array(16);
  private filled = 0;
  private blockRecords = 0;
  private blockExt = 0;
  private header: TimelineHeader | null = null;
  private rows = new Uint32Array(0);
  private rowSource = new Uint32Array(0);
  private lanes = new ArrayBuffer(0);
  private nameIndex = new Uint32Array(0);
  private nameBytes = new Uint8Array(0);
  /** The records part being filled, the arrival index of its first record, the bytes it holds. */
  private recPart: Uint8Array | null = null;
  private recFirst = 0;
  private recBytes = 0;
  private extPart: Uint8Array | null = null;
  private extFirst = 0;
  private extBytes = 0;
  private trailer: Uint8Array[] = [];

  constructor(private readonly onChunk: (chunk: ArrayBuffer, first: number) => void) {}

  /** A Sink for Engine.convert. */
  readonly sink: Sink = (b) => this.push(b);

  /** Consumes bytes (copied; the view may be reused after the call). */
  push(b: Uint8Array): void {
    let off = 0;
    while (off < b.length) {
      if (this.phase === Phase.TRAILER) {
        this.trailer.push(b.slice(off));
        return;
      }
      if (this.phase === Phase.RECORDS || this.phase === Phase.EXT) {
        off = this.items(b, off);
        continue;
      }
      const n = Math.min(b.length - off, this.target.length - this.filled);
      this.target.set(b.subarray(off, off + n), this.filled);
      this.filled += n;
      off += n;
      if (this.filled === this.target.length) this.advance();
    }
  }

  /**
   * Copies the records (or extension entries) of an EVENTS block at `b[off..]` straight into the part being
   * filled (an item may be split between pushes), handing full parts over; returns the new offset.
   */
  private items(b: Uint8Array, off: number): number {
    const rec = this.phase === Phase.RECORDS;
    const size = rec ? TL_REC : TL_EXT;
    const capBytes = (rec ? TL_CHUNK : EXT_PART) * size;
    let part = rec ? this.recPart : this.extPart;
    if (!part) {
      part = new Uint8Array(newPart(rec ? Part.RECORDS : Part.EXT, rec ? TL_CHUNK : EXT_PART, size));
      if (rec) this.recPart = part;
      else this.extPart = part;
    }
    const have = rec ? this.recBytes : this.extBytes;
    const blockBytes = (rec ? this.blockRecords : this.blockExt) * size;
    const n = Math.min(b.length - off, blockBytes - this.filled, capBytes - have);
    part.set(b.subarray(off, off + n), PART_HEAD + have);
    this.filled += n;
    if (rec) this.recBytes = have + n;
    else this.extBytes = have + n;
    if (have + n === capBytes) this.flushPart(rec);
    if (this.filled === blockBytes) {
      this.filled = 0;
      if (rec && this.blockExt > 0) this.phase = Phase.EXT;
      else this.next(Phase.BLOCK_HEAD, 16);
    }
    return off + n;
  }

  /** Hands the records (or extension) part over, trimmed to what it holds (nothing when empty). */
  private flushPart(rec: boolean): void {
    const part = rec ? this.recPart : this.extPart;
    const bytes = rec ? this.recBytes : this.extBytes;
    const size = rec ? TL_REC : TL_EXT;
    if (!part || bytes === 0) return;
    if (bytes % size !== 0) throw new Error(`timeline stream: ${bytes} bytes of ${rec ? "records" : "extension entries"} cut`);
    const count = bytes / size;
    let buf = part.buffer as ArrayBuffer;
    if (count < (rec ? TL_CHUNK : EXT_PART)) {
      buf = buf.slice(0, PART_HEAD + ((bytes + 7) & ~7));
      new Uint32Array(buf, 0, 2)[1] = count;
    }
    if (rec) {
      const first = this.recFirst;
      this.recFirst += count;
      this.recPart = null;
      this.recBytes = 0;
      this.onChunk(buf, first);
    } else {
      const first = this.extFirst;
      this.extFirst += count;
      this.extPart = null;
      this.extBytes = 0;
      this.onChunk(buf, first);
    }
  }

  private next(phase: Phase, bytes: number, into?: Uint8Array): void {
    this.phase = phase;
    this.target = into ?? new Uint8Array(bytes);
    this.filled = 0;
  }

  /** u32 words padded to a multiple of 2 (8-byte alignment), in bytes. */
  private static words(n: number): number {
    return (n + (n & 1)) * 4;
  }

  /** Moves past a filled section to the next non-empty one. */
  private advance(): void {
    for (;;) {
      const h = this.header;
      const t = this.target;
      switch (this.phase) {
        case Phase.BLOCK_HEAD: {
          const dv = new DataView(t.buffer, t.byteOffset, 16);
          const tag = dv.getUint32(0, true);
          const n = dv.getUint32(4, true);
          const m = dv.getUint32(8, true);
          if (tag === T_EVENTS) {
            if (this.header || n > MAX_BLOCK_RECORDS || m > n) {
              throw new Error(`timeline stream: block of ${n} records, ${m} extension entries`);
            }
            this.blockRecords = n;
            this.blockExt = m;
            this.filled = 0;
            this.phase = n > 0 ? Phase.RECORDS : Phase.BLOCK_HEAD;
            return;
          }
          if (tag === T_TABLES) {
            this.flushPart(true);
            this.flushPart(false);
            this.next(Phase.HEADER, HEADER);
          } else if (tag === T_ORDER || tag === T_PARTNERS) {
            if (!h || n !== h.events) throw new Error(`timeline stream: block ${tag} of ${n} events`);
            if (n === 0) {
              this.next(tag === T_ORDER ? Phase.BLOCK_HEAD : Phase.TRAILER, 16);
              if (tag === T_PARTNERS) return;
              break;
            }
            const part = newPart(tag === T_ORDER ? Part.ORDER : Part.PARTNERS, n, 4);
            this.next(tag === T_ORDER ? Phase.ORDER : Phase.PARTNERS, 0, new Uint8Array(part, PART_HEAD, TimelineParser.words(n)));
          } else throw new Error(`timeline stream: unknown block ${tag}`);
          break;
        }
        case Phase.HEADER: {
          const dv = new DataView(t.buffer);
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
          const hd = this.header;
          if (hd.events !== this.recFirst || hd.extEntries !== this.extFirst || hd.rows > MAX_ROWS) {
            throw new Error(
              `timeline stream: header says ${hd.events} events, ${hd.extEntries} extension entries, ${hd.rows} rows; ` +
                `${this.recFirst} records and ${this.extFirst} entries came`,
            );
          }
          this.next(Phase.ROWS, hd.rows * ROW);
          break;
        }
        case Phase.ROWS:
          this.rows = new Uint32Array(t.buffer);
          this.next(Phase.ROW_SOURCE, TimelineParser.words(h!.rows));
          break;
        case Phase.ROW_SOURCE:
          this.rowSource = new Uint32Array(t.buffer, 0, h!.rows);
          this.next(Phase.LANES, h!.lanes * LANE);
          break;
        case Phase.LANES:
          this.lanes = t.buffer as ArrayBuffer;
          this.next(Phase.NAME_INDEX, h!.names * 8);
          break;
        case Phase.NAME_INDEX:
          this.nameIndex = new Uint32Array(t.buffer);
          this.next(Phase.NAME_BYTES, h!.nameBytes);
          break;
        case Phase.NAME_BYTES:
          this.nameBytes = t;
          this.next(Phase.BLOCK_HEAD, 16);
          break;
        case Phase.ORDER:
        case Phase.PARTNERS: {
          const part = t.buffer as ArrayBuffer;
          const last = this.phase === Phase.PARTNERS;
          checkIndices(new Uint32Array(part, PART_HEAD, h!.events), h!.events, !last);
          this.onChunk(part, 0);
          if (last) {
            this.phase = Phase.TRAILER;
            return;
          }
          this.next(Phase.BLOCK_HEAD, 16);
          break;
        }
        default:
          return;
      }
      if (this.target.length > 0) return;
    }
  }

  /**
   * Hands over the rows and lanes parts and returns the tables; throws when the stream was cut short or its
   * tables do not add up.
   */
  finish(): TimelineMeta {
    if (this.phase !== Phase.TRAILER || !this.header) throw new Error(`timeline stream: incomplete (section ${this.phase})`);
    const size = this.trailer.reduce((n, p) => n + p.length, 0);
    const trailer = new Uint8Array(size);
    let o = 0;
    for (const p of this.trailer) {
      trailer.set(p, o);
      o += p.length;
    }
    const h = this.header;
    const meta: TimelineMeta = {
      header: h, rows: this.rows, lanes: this.lanes, nameIndex: this.nameIndex, nameBytes: this.nameBytes, trailer,
    };
    if (h.rows > 0) this.onChunk(rowsPart(meta, this.rowSource), 0);
    if (h.events > 0) this.onChunk(lanesPart(meta), 0);
    return meta;
  }
}

/**
 * Checks that every u32 of an ORDER part is an index below `n` used once (`perm`), or of a PARTNERS part below
 * `n` or TL_NONE, so a damaged stream is an error here, not a wrong timeline later.
 */
function checkIndices(a: Uint32Array, n: number, perm: boolean): void {
  const seen = perm ? new Uint8Array(n) : null;
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (v >= n && (perm || v !== TL_NONE)) throw new Error(`timeline stream: event ${i}: ${perm ? "arrival index" : "partner"} ${v} of ${n} events`);
    if (seen) {
      if (seen[v]) throw new Error(`timeline stream: event ${i}: arrival index ${v} used twice`);
      seen[v] = 1;
    }
  }
}

/** The ROWS part: per arrival row its output row (each output row names its arrival row once). */
function rowsPart(meta: TimelineMeta, rowSource: Uint32Array): ArrayBuffer {
  const n = meta.header.rows;
  const part = newPart(Part.ROWS, n, 4);
  const out = new Uint32Array(part, PART_HEAD, n).fill(TL_NONE);
  for (let k = 0; k < n; k++) {
    const src = rowSource[k];
    if (src >= n || out[src] !== TL_NONE) throw new Error(`timeline stream: row ${k}: arrival row ${src}`);
    out[src] = k;
  }
  return part;
}

/** The LANES part: per event in output order its lane within its row (from the lane table, checked to tile). */
function lanesPart(meta: TimelineMeta): ArrayBuffer {
  const h = meta.header;
  const part = newPart(Part.LANES, h.events, 1);
  const out = new Uint8Array(part, PART_HEAD, h.events);
  const lanes = new Uint32Array(meta.lanes);
  let pos = 0;
  for (let k = 0; k < h.rows; k++) {
    const firstLane = meta.rows[k * 8 + 4];
    const nLanes = meta.rows[k * 8 + 5];
    const end = meta.rows[k * 8 + 6] + meta.rows[k * 8 + 7];
    if (meta.rows[k * 8 + 6] !== pos || nLanes > h.laneCap || firstLane + nLanes > h.lanes) throw new Error(`timeline stream: row ${k} does not follow its previous one`);
    for (let l = 0; l < nLanes; l++) {
      const lf = lanes[(firstLane + l) * 6];
      const lc = lanes[(firstLane + l) * 6 + 1];
      if (lf !== pos || pos + lc > end) throw new Error(`timeline stream: row ${k}: lane ${l} does not continue its row at event ${pos}`);
      out.fill(l, pos, pos + lc);
      pos += lc;
    }
    if (pos !== end) throw new Error(`timeline stream: row ${k}: its lanes hold ${pos - meta.rows[k * 8 + 6]} of its ${meta.rows[k * 8 + 7]} events`);
  }
  if (pos !== h.events) throw new Error(`timeline stream: rows hold ${pos} of ${h.events} events`);
  return part;
}

/**
 * Read access to the events without per-event objects, in output order (grouped by row, then lane, sorted by
 * start within a lane): event i is record ORDER[i] of the records parts (arrival order), its row mapped to the
 * output row, its lane and partner from the LANES and PARTNERS parts; words 12..15 (x3..x6) of an event with
 * {@link Flag}.EXT are in the extension entry its record names. Feed it every part the parser hands over.
 */
export class TimelineEvents {
  private readonly f64: Float64Array[] = [];
  private readonly u32: Uint32Array[] = [];
  private readonly ext: Uint32Array[] = [];
  private order = new Uint32Array(0);
  private partners = new Uint32Array(0);
  private lanes = new Uint8Array(0);
  private rowOf = new Uint32Array(0);
  /** Events (once the ORDER part is in). */
  length = 0;

  /** Adds a part as the parser hands it over (records and extension parts in arrival order). */
  add(part: ArrayBuffer): void {
    const [type, count] = new Uint32Array(part, 0, 2);
    switch (type) {
      case Part.RECORDS:
        this.f64.push(new Float64Array(part, PART_HEAD, count * (TL_REC / 8)));
        this.u32.push(new Uint32Array(part, PART_HEAD, count * REC_WORDS));
        break;
      case Part.EXT:
        this.ext.push(new Uint32Array(part, PART_HEAD, count * (TL_EXT / 4)));
        break;
      case Part.ORDER:
        this.order = new Uint32Array(part, PART_HEAD, count);
        this.length = count;
        break;
      case Part.PARTNERS:
        this.partners = new Uint32Array(part, PART_HEAD, count);
        break;
      case Part.ROWS:
        this.rowOf = new Uint32Array(part, PART_HEAD, count);
        break;
      case Part.LANES:
        this.lanes = new Uint8Array(part, PART_HEAD, count);
        break;
      default:
        throw new Error(`timeline: unknown part ${type}`);
    }
  }

  /** ns since baseNs. */
  start(i: number): number {
    const a = this.order[i];
    return this.f64[a >>> TL_CHUNK_SHIFT][(a & (TL_CHUNK - 1)) * 6];
  }
  dur(i: number): number {
    const a = this.order[i];
    return this.f64[a >>> TL_CHUNK_SHIFT][(a & (TL_CHUNK - 1)) * 6 + 1];
  }
  end(i: number): number {
    const a = this.order[i];
    const f = this.f64[a >>> TL_CHUNK_SHIFT];
    const o = (a & (TL_CHUNK - 1)) * 6;
    return f[o] + f[o + 1];
  }
  /** u32 word k of record i (4 row, 5 name, 6 kind|flags|lane, 7 correlation, 8 partner, 9..15 x0..x6). */
  word(i: number, k: number): number {
    const a = this.order[i];
    const u = this.u32[a >>> TL_CHUNK_SHIFT];
    const j = (a & (TL_CHUNK - 1)) * REC_WORDS;
    switch (k) {
      case 4:
        return this.rowOf[u[j + 4]];
      case 6:
        return (u[j + 6] & 0xffff) | (this.lanes[i] << 16);
      case 8:
        return this.partners[i];
    }
    if (k < 12) return u[j + k];
    if ((u[j + 6] & (Flag.EXT << 8)) === 0) return 0;
    const x = u[j + 8];
    return this.ext[x >>> EXT_SHIFT][(x & (EXT_PART - 1)) * 4 + k - 12];
  }
  row(i: number): number {
    const a = this.order[i];
    return this.rowOf[this.u32[a >>> TL_CHUNK_SHIFT][(a & (TL_CHUNK - 1)) * REC_WORDS + 4]];
  }
  name(i: number): number {
    const a = this.order[i];
    return this.u32[a >>> TL_CHUNK_SHIFT][(a & (TL_CHUNK - 1)) * REC_WORDS + 5];
  }
  kind(i: number): number {
    const a = this.order[i];
    return this.u32[a >>> TL_CHUNK_SHIFT][(a & (TL_CHUNK - 1)) * REC_WORDS + 6] & 0xff;
  }
  flags(i: number): number {
    const a = this.order[i];
    return (this.u32[a >>> TL_CHUNK_SHIFT][(a & (TL_CHUNK - 1)) * REC_WORDS + 6] >>> 8) & 0xff;
  }
  lane(i: number): number {
    return this.lanes[i];
  }
  correlation(i: number): number {
    const a = this.order[i];
    return this.u32[a >>> TL_CHUNK_SHIFT][(a & (TL_CHUNK - 1)) * REC_WORDS + 7];
  }
  partner(i: number): number {
    return this.partners[i];
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
