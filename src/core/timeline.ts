/**
 * The viewer's timeline tables (assembly/emit/timeline.ts): parses the byte stream the core writes with
 * `convert(src, sink, { format: "timeline" })` into fixed-size binary tables, host-neutral (the browser worker,
 * Node tests). The records arrive in arrival order while the core's pass runs (the core keeps only their sort
 * keys); at the end the core says where each goes, and {@link TimelineParser.finish} moves them there, freeing
 * each arrival part as soon as it is moved, so the records exist about once. The events leave in parts of
 * {@link TL_CHUNK} records, each its own ArrayBuffer, so a worker can transfer them to the page and no table ever
 * needs one allocation the size of the whole trace.
 */
import type { Sink } from "./engine.js";

/**
 * Bytes per event record (assembly/emit/timeline.ts): f64 start, u32 duration ({@link DUR_LONG}: in the long
 * durations part), u32 name, u8 kind, u8 flags, u16 lane, u32 correlation, u32 extension entry index, u32 x0..x2.
 * The row is not stored: in timeline order each row's events are contiguous (the row table gives its first).
 */
export const TL_REC = 40;
/** Duration word of an event whose duration (ns) does not fit a u32: the value is in the LONG_DURS part. */
const DUR_LONG = 0xffffffff;
/** Bytes per long-duration entry (u32 event index, u32 0, f64 duration in ns). */
const TL_LONG = 16;
/** The stream version this parser reads. */
const VERSION = 5;
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
 * then `count` items: RECORDS, records in timeline order ({@link TL_REC} bytes; their u32 word 6 — not
 * {@link TimelineEvents.word}'s numbering, which keeps the 48-byte records' — is the index of the
 * event's extension entry, TL_NONE if none); EXT, extension entries in arrival order ({@link TL_EXT} bytes);
 * PARTNERS, per event in timeline order its partner (u32, TL_NONE: none); ROW_STARTS, per row in output order
 * the timeline index of its first event (u32); LONG_DURS, the events whose duration word is {@link DUR_LONG}
 * ({@link TL_LONG} bytes: u32 timeline index, u32 0, f64 duration in ns).
 */
export const Part = { RECORDS: 1, EXT: 2, PARTNERS: 4, ROW_STARTS: 5, LONG_DURS: 6 } as const;
const PART_HEAD = 8;

/** Event kinds (assembly/model/event.ts EvKind). */
export const Kind = {
  KERNEL: 1, MEMCPY: 2, MEMSET: 3, API_RUNTIME: 4, API_DRIVER: 5, SYNC: 6, EVENT_RECORD: 7, OVERHEAD: 8,
  RANGE: 9, INSTANT: 10, GRAPH: 11, GPU_RANGE: 12, COUNTER: 13,
} as const;

/**
 * Event flag bits (record byte 17). INCOMPLETE: no end in the vendor record, drawn with duration 0 at its start.
 * STEP: a host range recognised as a training step (its step number in word 11). EXT: words 12..15 are in the
 * event's extension entry (else 0).
 */
export const Flag = {
  EXTERNAL: 1, FLOW_START: 2, FLOW_END: 4, ASYNC: 8, PEER: 16, INCOMPLETE: 32, STEP: 64, EXT: 128,
} as const;

/** Row classes (assembly/emit/timeline.ts RowClass). */
export const RowClass = {
  HOST_RANGES: 1, HOST_API: 2, HOST_OVERHEAD: 3,
  GPU_ANNOTATIONS: 8, GPU_STREAM: 9, GPU_SYNC: 10, GPU_CONTEXT_SYNC: 11, GPU_OVERHEAD: 12, GPU_COUNTER: 13,
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
  BLOCK_HEAD, RECORDS, EXT, LONG, HEADER, ROWS, LANES, NAME_INDEX, NAME_BYTES, PARTNERS, ORDER, TRAILER,
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
 * Incremental parser of the timeline stream: feed it the sink's bytes (use {@link TimelineParser.sink}).
 * Extension parts are handed to `onChunk` as they fill and the partners part when it is in (`first`: the index of
 * the part's first item); {@link finish} puts the records in timeline order, hands their parts over in order and
 * returns the tables.
 */
export class TimelineParser {
  private phase = Phase.BLOCK_HEAD;
  private target: Uint8Array<ArrayBuffer> = new Uint8Array(16);
  private filled = 0;
  private blockRecords = 0;
  private blockExt = 0;
  private blockLong = 0;
  /** Long durations so far: arrival index and duration (ns) of each event whose duration word is DUR_LONG. */
  private longAt: number[] = [];
  private longDur: number[] = [];
  private header: TimelineHeader | null = null;
  private rows = new Uint32Array(0);
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
  /** Records parts in arrival order, kept until {@link finish} moves them. */
  private arrival: ArrayBuffer[] = [];
  /** Per record in arrival order: its index in timeline order. */
  private order = new Uint32Array(0);
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
      else if (this.blockLong > 0) this.next(Phase.LONG, this.blockLong * TL_LONG);
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
      this.recFirst += count;
      this.recPart = null;
      this.recBytes = 0;
      this.arrival.push(buf);
    } else {
      const first = this.extFirst;
      this.extFirst += count;
      this.extPart = null;
      this.extBytes = 0;
      this.onChunk(buf, first);
    }
  }

  private next(phase: Phase, bytes: number, into?: Uint8Array<ArrayBuffer>): void {
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
          const l = dv.getUint32(12, true);
          if (tag === T_EVENTS) {
            if (this.header || n > MAX_BLOCK_RECORDS || m > n || l > n) {
              throw new Error(`timeline stream: block of ${n} records, ${m} extension entries, ${l} long durations`);
            }
            this.blockRecords = n;
            this.blockExt = m;
            this.blockLong = l;
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
            if (tag === T_PARTNERS) {
              const part = newPart(Part.PARTNERS, n, 4);
              this.next(Phase.PARTNERS, 0, new Uint8Array(part, PART_HEAD, TimelineParser.words(n)));
            } else this.next(Phase.ORDER, TimelineParser.words(n));
          } else throw new Error(`timeline stream: unknown block ${tag}`);
          break;
        }
        case Phase.LONG: {
          // Each names a record of this block (already counted in recFirst) whose duration word says DUR_LONG.
          const dv = new DataView(t.buffer);
          const first = this.recFirst + this.recBytes / TL_REC - this.blockRecords;
          for (let k = 0; k < this.blockLong; k++) {
            const at = dv.getUint32(k * TL_LONG, true);
            const dur = dv.getFloat64(k * TL_LONG + 8, true);
            const prev = this.longAt.length ? this.longAt[this.longAt.length - 1] : -1;
            if (at < first || at >= first + this.blockRecords || at <= prev || !(dur >= DUR_LONG && dur < Infinity)) {
              throw new Error(`timeline stream: long duration ${dur} of event ${at}, not one of the block's ${first}…${first + this.blockRecords - 1}`);
            }
            this.longAt.push(at);
            this.longDur.push(dur);
          }
          this.next(Phase.BLOCK_HEAD, 16);
          break;
        }
        case Phase.HEADER: {
          const dv = new DataView(t.buffer);
          if (dv.getUint32(0, true) !== MAGIC) throw new Error("timeline stream: bad magic");
          if (dv.getUint32(4, true) !== VERSION) throw new Error(`timeline stream: version ${dv.getUint32(4, true)}, this reader reads ${VERSION}`);
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
        case Phase.PARTNERS: {
          const part = t.buffer as ArrayBuffer;
          const a = new Uint32Array(part, PART_HEAD, h!.events);
          for (let i = 0; i < a.length; i++) {
            if (a[i] >= a.length && a[i] !== TL_NONE) throw new Error(`timeline stream: event ${i}: partner ${a[i]} of ${a.length} events`);
          }
          if (a.length > 0) this.onChunk(part, 0);
          this.next(Phase.BLOCK_HEAD, 16);
          break;
        }
        case Phase.ORDER:
          this.order = new Uint32Array(t.buffer, 0, h!.events);
          this.phase = Phase.TRAILER;
          return;
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
    const parts = this.arrival;
    this.arrival = [];
    // Each long duration names a record whose duration word says so (in arrival order, once each: checked as they
    // came), and the move counts those records: a bijection.
    for (const at of this.longAt) {
      const part = parts[at >>> TL_CHUNK_SHIFT];
      if (new Uint32Array(part, PART_HEAD + (at & (TL_CHUNK - 1)) * TL_REC, 3)[2] !== DUR_LONG) {
        throw new Error(`timeline stream: a long duration for record ${at}, whose duration is not long`);
      }
    }
    const longRecords = moveRecords(meta, parts, this.order, this.onChunk);
    if (longRecords !== this.longAt.length) {
      throw new Error(`timeline stream: ${longRecords} records with a long duration, ${this.longAt.length} long durations`);
    }
    // Where each row's events start (the records no longer carry their row), and the long durations by timeline index.
    if (h.rows > 0) {
      const starts = newPart(Part.ROW_STARTS, h.rows, 4);
      const sv = new Uint32Array(starts, PART_HEAD, h.rows);
      for (let k = 0; k < h.rows; k++) sv[k] = meta.rows[k * 8 + 6];
      this.onChunk(starts, 0);
    }
    if (this.longAt.length > 0) {
      const long = newPart(Part.LONG_DURS, this.longAt.length, TL_LONG);
      const lu = new Uint32Array(long, PART_HEAD, this.longAt.length * 4);
      const lf = new Float64Array(long, PART_HEAD, this.longAt.length * 2);
      for (let k = 0; k < this.longAt.length; k++) {
        lu[k * 4] = this.order[this.longAt[k]];
        lf[k * 2 + 1] = this.longDur[k];
      }
      this.longAt = [];
      this.longDur = [];
      this.onChunk(long, 0);
    }
    this.order = new Uint32Array(0);
    return meta;
  }
}

/** Frees an ArrayBuffer's memory now where the host can (ArrayBuffer.prototype.transfer), else leaves it to GC. */
function release(buf: ArrayBuffer): void {
  const t = (buf as ArrayBuffer & { transfer?: (n: number) => ArrayBuffer }).transfer;
  if (t) t.call(buf, 0);
}

/**
 * Moves every record of the arrival parts (in order) to its place in timeline order (`order`: arrival index →
 * timeline index, checked to be a permutation), setting its lane on the way; frees each arrival part as soon as it is moved and hands the timeline parts over in order. Records are
 * read in order and written to a few sequential streams (one per row and lane): ten times faster than following
 * the permutation's cycles in place, and the new parts' pages become resident only as records land in them while
 * the arrival parts go, so the records exist about once throughout. Returns how many records have a long duration.
 */
function moveRecords(
  meta: TimelineMeta, parts: ArrayBuffer[], order: Uint32Array, onChunk: (chunk: ArrayBuffer, first: number) => void,
): number {
  const n = meta.header.events;
  const lanes = lanesByEvent(meta);
  const out: Int32Array[] = [];
  const bufs: ArrayBuffer[] = [];
  for (let c = 0; c * TL_CHUNK < n; c++) {
    const cnt = Math.min(TL_CHUNK, n - c * TL_CHUNK);
    const b = newPart(Part.RECORDS, cnt, TL_REC);
    bufs.push(b);
    out.push(new Int32Array(b, PART_HEAD, cnt * REC_WORDS));
  }
  if (order.length !== n) throw new Error(`timeline stream: an order of ${order.length} for ${n} events`);
  const seen = new Uint8Array(n);
  let a = 0;
  let long = 0;
  for (const part of parts) {
    // Words as i32 (the same bits): the copies stay integer in the JIT.
    const src = new Int32Array(part, PART_HEAD, new Uint32Array(part, 0, 2)[1] * REC_WORDS);
    if (a + src.length / REC_WORDS > n) throw new Error(`timeline stream: more records than the ${n} events`);
    for (let s = 0; s < src.length; s += REC_WORDS, a++) {
      const p = order[a];
      if (p >= n || seen[p]) throw new Error(`timeline stream: record ${a}: timeline index ${p}${p < n ? " given twice" : ` of ${n}`}`);
      seen[p] = 1;
      const dst = out[p >>> TL_CHUNK_SHIFT];
      const d = (p & (TL_CHUNK - 1)) * REC_WORDS;
      dst[d] = src[s];
      dst[d + 1] = src[s + 1];
      dst[d + 2] = src[s + 2];
      if (src[s + 2] === -1) long++; // DUR_LONG as an i32
      dst[d + 3] = src[s + 3];
      dst[d + 4] = (src[s + 4] & 0xffff) | (lanes[p] << 16);
      dst[d + 5] = src[s + 5];
      dst[d + 6] = src[s + 6];
      dst[d + 7] = src[s + 7];
      dst[d + 8] = src[s + 8];
      dst[d + 9] = src[s + 9];
    }
    release(part);
  }
  if (a !== n) throw new Error(`timeline stream: ${a} records for ${n} events`);
  for (let c = 0; c < bufs.length; c++) onChunk(bufs[c], c * TL_CHUNK);
  return long;
}

/** Per event in timeline order, its lane within its row (from the lane table, checked to tile the rows). */
function lanesByEvent(meta: TimelineMeta): Uint8Array {
  const h = meta.header;
  const out = new Uint8Array(h.events);
  const lanes = new Uint32Array(meta.lanes);
  let pos = 0;
  for (let k = 0; k < h.rows; k++) {
    const firstLane = meta.rows[k * 8 + 4];
    const nLanes = meta.rows[k * 8 + 5];
    const end = meta.rows[k * 8 + 6] + meta.rows[k * 8 + 7];
    if (meta.rows[k * 8 + 6] !== pos || nLanes > h.laneCap || firstLane + nLanes > h.lanes) {
      throw new Error(`timeline stream: row ${k} does not follow its previous one`);
    }
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
  return out;
}

/**
 * Read access to the events without per-event objects: `TimelineEvents.start(i)` etc. read the typed views of
 * records part i >> TL_CHUNK_SHIFT (events in timeline order: grouped by row, then lane, sorted by start within a
 * lane); the row comes from the ROW_STARTS part (rows are contiguous), the partner from the PARTNERS part, a
 * duration of 2^32 - 1 ns or more from the LONG_DURS part, words 12..15 (x3..x6) of an event with {@link Flag}.EXT
 * from the extension entry its record names (only the details panel reads them). Feed it every part the parser
 * hands over.
 */
export class TimelineEvents {
  private readonly f64: Float64Array[] = [];
  private readonly u32: Uint32Array[] = [];
  private readonly ext: Uint32Array[] = [];
  private partners = new Uint32Array(0);
  private rowStarts = new Uint32Array(0);
  private longDurs = new Map<number, number>();
  /** The row {@link row} found last, for the next lookup nearby. */
  private lastRow = 0;
  /** Scratch for a duration's f64 words ({@link word} 2 and 3). */
  private readonly durF = new Float64Array(1);
  private readonly durW = new Uint32Array(this.durF.buffer);
  length = 0;

  /** Adds a part as the parser hands it over (records and extension parts in order). */
  add(part: ArrayBuffer): void {
    const [type, count] = new Uint32Array(part, 0, 2);
    switch (type) {
      case Part.RECORDS:
        this.f64.push(new Float64Array(part, PART_HEAD, count * (TL_REC / 8)));
        this.u32.push(new Uint32Array(part, PART_HEAD, count * REC_WORDS));
        this.length += count;
        break;
      case Part.EXT:
        this.ext.push(new Uint32Array(part, PART_HEAD, count * (TL_EXT / 4)));
        break;
      case Part.PARTNERS:
        this.partners = new Uint32Array(part, PART_HEAD, count);
        break;
      case Part.ROW_STARTS:
        this.rowStarts = new Uint32Array(part, PART_HEAD, count);
        this.lastRow = 0;
        break;
      case Part.LONG_DURS: {
        const u = new Uint32Array(part, PART_HEAD, count * 4);
        const f = new Float64Array(part, PART_HEAD, count * 2);
        for (let k = 0; k < count; k++) this.longDurs.set(u[k * 4], f[k * 2 + 1]);
        break;
      }
      default:
        throw new Error(`timeline: unknown part ${type}`);
    }
  }

  /** ns since baseNs. */
  start(i: number): number {
    return this.f64[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * (TL_REC / 8)];
  }
  /** Duration in ns. */
  dur(i: number): number {
    const d = this.u32[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * REC_WORDS + 2];
    return d !== DUR_LONG ? d : (this.longDurs.get(i) ?? d);
  }
  end(i: number): number {
    return this.start(i) + this.dur(i);
  }
  /**
   * u32 word k of event i, numbered as in the 48-byte records of stream version 4 (whatever the layout now): 0–1
   * start and 2–3 duration (f64 bits), 4 row, 5 name, 6 kind|flags|lane, 7 correlation, 8 partner, 9..15 x0..x6.
   */
  word(i: number, k: number): number {
    const u = this.u32[i >>> TL_CHUNK_SHIFT];
    const j = (i & (TL_CHUNK - 1)) * REC_WORDS;
    if (k < 2) return u[j + k];
    if (k < 4) {
      this.durF[0] = this.dur(i);
      return this.durW[k - 2];
    }
    if (k === 4) return this.row(i);
    if (k === 8) return this.partners[i];
    if (k < 12) return u[j + k - 2];
    if ((u[j + 4] & (Flag.EXT << 8)) === 0) return 0;
    const x = u[j + 6];
    return this.ext[x >>> EXT_SHIFT][(x & (EXT_PART - 1)) * 4 + k - 12];
  }
  /** The row (index into the row table) of event i: the last row whose events start at or before i. */
  row(i: number): number {
    const s = this.rowStarts;
    let r = this.lastRow;
    // Events are mostly read row by row: the row of the last lookup first.
    if (r < s.length && s[r] <= i && (r + 1 === s.length || s[r + 1] > i)) return r;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const m = (lo + hi + 1) >>> 1;
      if (s[m] <= i) lo = m;
      else hi = m - 1;
    }
    this.lastRow = lo;
    return lo;
  }
  name(i: number): number {
    return this.u32[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * REC_WORDS + 3];
  }
  kind(i: number): number {
    return this.u32[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * REC_WORDS + 4] & 0xff;
  }
  flags(i: number): number {
    return (this.u32[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * REC_WORDS + 4] >>> 8) & 0xff;
  }
  lane(i: number): number {
    return this.u32[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * REC_WORDS + 4] >>> 16;
  }
  correlation(i: number): number {
    return this.u32[i >>> TL_CHUNK_SHIFT][(i & (TL_CHUNK - 1)) * REC_WORDS + 5];
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
