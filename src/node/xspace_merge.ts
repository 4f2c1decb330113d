/**
 * One XSpace per host out of the XSpace parts of the ranks that ran on it (`rawtrace merge --format xspace`).
 *
 * XProf reads one `<host>.xplane.pb` per host, and one XSpace has one `/host:CPU` plane and one `/device:GPU:<n>`
 * plane per GPU. The core writes each rank of a multi-rank host as a part made to be joined
 * (assembly/emit/options.ts, assembly/emit/xspace.ts): metadata ids interleaved by the rank's index on the host,
 * the well-known stats at the same ids in every part, correlation ids in per-rank ranges, device planes numbered
 * by the host's GPU ordinals. So planes of the same name join field by field, never event by event:
 *
 *  - lines (XPlane field 3) of every part are copied as they are; a line whose id another part already used (two
 *    processes' tids or stream ids colliding) is copied with a fresh id (id + j × 2^22, distinct in the low 32 bits
 *    that the trace viewer keys rows on), only its id field rewritten;
 *  - event and stat metadata map entries (fields 4, 5) are copied once per key (the well-known stats appear in
 *    every part with the same id and name);
 *  - plane stats (field 6) once per stat metadata id (device capabilities of a GPU two ranks share);
 *  - `Task Environment` and `/host:metadata`, a few stats each, are decoded and rebuilt: the profile runs from the
 *    earliest start to the latest stop of the parts.
 *  - XSpace.errors and warnings (already labelled with the rank by the core) are kept in part order, the hostnames
 *    once each.
 *
 * Bytes are copied with positioned reads in large windows: memory stays bounded by the buffers and one entry per
 * line and metadata record, whatever the size of the parts.
 */
import { writeAll } from "./output.js";
import { refreshHeldLocks } from "./output_lock.js";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { RawtraceError } from "../core/codes.js";
import { XPlaneSchema, XStatMetadataSchema, XStatSchema, type XStat } from "../gen/xplane_pb.js";

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

/** Line ids step by 2^22 on collision: above every Linux tid (< 2^22) and CUPTI stream id. */
const LINE_ID_STEP = 2 ** 22;
/** Planes decoded and rebuilt instead of joined field by field. */
const REBUILT = new Set(["Task Environment", "/host:metadata"]);

/** A field of a message: its number, wire type and where its tag, value and end are in the file. */
interface Field {
  no: number;
  wire: number;
  /** Offset of the tag. */
  at: number;
  /** Offset of the value (after the length for LEN fields). */
  value: number;
  /** Offset just past the field. */
  end: number;
  /** VARINT value (exact below 2^53) or LEN length. */
  n: number;
}

/**
 * The open descriptors of the parts being joined, at most {@link MAX_OPEN_PARTS}: a host with many ranks (1,000
 * parts) would otherwise hold one per part during the join, past `ulimit -n`. The least recently read is closed,
 * and reopened by its path when read again.
 */
const MAX_OPEN_PARTS = 16;

class PartFds {
  private readonly open = new Map<PartReader, number>(); // in order of last use

  fd(r: PartReader): number {
    let fd = this.open.get(r);
    if (fd !== undefined) {
      this.open.delete(r);
    } else {
      if (this.open.size >= MAX_OPEN_PARTS) {
        const [old, oldFd] = this.open.entries().next().value!;
        this.open.delete(old);
        closeSync(oldFd);
      }
      fd = openSync(r.file, "r");
    }
    this.open.set(r, fd);
    return fd;
  }

  closeAll(): void {
    for (const fd of this.open.values()) closeSync(fd);
    this.open.clear();
  }
}

/** Positioned reads of one part file through a window. */
class PartReader {
  private buf = Buffer.allocUnsafe(1 << 16);
  private start = 0;
  private len = 0;
  readonly size: number;

  constructor(readonly file: string, private readonly fds: PartFds) {
    this.size = fstatSync(this.fd).size;
  }

  /** A descriptor of the part (opened again if it was closed meanwhile). */
  get fd(): number {
    return this.fds.fd(this);
  }

  private byte(pos: number): number {
    if (pos < this.start || pos >= this.start + this.len) {
      if (pos >= this.size) this.bad(pos, "a field, found the end of the part");
      this.start = pos;
      this.len = readSync(this.fd, this.buf, 0, this.buf.length, pos);
    }
    return this.buf[pos - this.start];
  }

  bad(pos: number, what: string): never {
    throw new RawtraceError("INTERNAL", `${this.file}: offset ${pos}: XSpace part: expected ${what}`, this.file, pos);
  }

  /** The varint at `pos`: [value (exact below 2^53), offset after it]. */
  varint(pos: number): [number, number] {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte(pos + i);
      v += (b & 0x7f) * mul;
      mul *= 128;
      if (b < 0x80) return [v, pos + i + 1];
    }
    return this.bad(pos, "a varint of at most 10 bytes");
  }

  /** The field at `pos` (inside a message that ends at `limit`). */
  field(pos: number, limit: number): Field {
    const [tag, p] = this.varint(pos);
    const no = Math.floor(tag / 8);
    const wire = tag % 8;
    if (no === 0) this.bad(pos, "a field number ≥ 1");
    let value = p;
    let end: number;
    let n = 0;
    switch (wire) {
      case WIRE_VARINT:
        [n, end] = this.varint(p);
        break;
      case WIRE_I64:
        end = p + 8;
        break;
      case WIRE_I32:
        end = p + 4;
        break;
      case WIRE_LEN:
        [n, value] = this.varint(p);
        end = value + n;
        break;
      default:
        return this.bad(pos, `a known wire type (found ${wire})`);
    }
    if (end > limit) this.bad(pos, `a field that ends inside its message (at ${limit}), not at ${end}`);
    return { no, wire, at: pos, value, end, n };
  }

  /** Every field of the message [start, end). */
  *fields(start: number, end: number): Generator<Field> {
    for (let p = start; p < end;) {
      const f = this.field(p, end);
      yield f;
      p = f.end;
    }
  }

  bytes(start: number, end: number): Buffer {
    const b = Buffer.allocUnsafe(end - start);
    let off = 0;
    while (off < b.length) {
      const n = readSync(this.fd, b, off, b.length - off, start + off);
      if (n <= 0) this.bad(start + off, `${b.length - off} more bytes`);
      off += n;
    }
    return b;
  }
}

/** A plane of a part: where its entry is, its id and name. */
interface PlaneRef {
  part: number;
  field: Field;
  id: number;
  name: string;
}

/** A piece of the output: bytes, or a range of a part file. */
type Seg = Uint8Array | { part: number; start: number; end: number };

function varintBytes(v: number): number[] {
  const out: number[] = [];
  while (v >= 128) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}
const tagBytes = (no: number, wire: number) => varintBytes(no * 8 + wire);
const segLen = (s: Seg) => (s instanceof Uint8Array ? s.length : s.end - s.start);

/** Buffered output file with range copies from the parts. */
class Out {
  private buf = Buffer.allocUnsafe(4 << 20);
  private n = 0;
  bytes = 0;

  constructor(private readonly fd: number, private readonly parts: PartReader[], private readonly name = "output") {}

  private flush(): void {
    writeAll(this.fd, this.buf.subarray(0, this.n), this.name);
    this.n = 0;
    // The join runs on the main thread, whose timer cannot refresh the output's lock meanwhile (a big host on a slow
    // file system could otherwise look stale to a retry after two minutes).
    refreshHeldLocks();
  }

  write(s: Seg): void {
    if (s instanceof Uint8Array) {
      if (this.n + s.length > this.buf.length) this.flush();
      if (s.length > this.buf.length) {
        writeAll(this.fd, s, this.name);
      } else {
        this.buf.set(s, this.n);
        this.n += s.length;
      }
      this.bytes += s.length;
      return;
    }
    const r = this.parts[s.part];
    for (let p = s.start; p < s.end;) {
      if (this.n === this.buf.length) this.flush();
      const want = Math.min(s.end - p, this.buf.length - this.n);
      const got = readSync(r.fd, this.buf, this.n, want, p);
      if (got <= 0) r.bad(p, `${s.end - p} more bytes`);
      this.n += got;
      p += got;
    }
    this.bytes += s.end - s.start;
  }

  close(): void {
    this.flush();
  }
}

/** Appends a range to `segs`, extending the previous range when it continues it (adjacent metadata entries). */
function pushRange(segs: Seg[], part: number, start: number, end: number): void {
  const last = segs[segs.length - 1];
  if (last && !(last instanceof Uint8Array) && last.part === part && last.end === start) last.end = end;
  else segs.push({ part, start, end });
}

/** Reads the id (field 1) and name (field 2) at the start of a plane. */
function planeRef(r: PartReader, part: number, f: Field): PlaneRef {
  let id = 0;
  let name = "";
  for (const g of r.fields(f.value, f.end)) {
    if (g.no === 1 && g.wire === WIRE_VARINT) id = g.n;
    else if (g.no === 2 && g.wire === WIRE_LEN) {
      name = r.bytes(g.value, g.end).toString("utf8");
      break;
    } else if (g.no === 3) break; // lines: the writers put id and name first
  }
  return { part, field: f, id, name };
}

/** Segments of one plane joined from several parts' planes of the same name (see the module comment). */
function joinPlanes(readers: PartReader[], members: PlaneRef[]): Seg[] {
  const segs: Seg[] = [];
  const lineIds = new Set<number>();
  const evKeys = new Set<number>();
  const stKeys = new Set<number>();
  const planeStats = new Set<number>();
  const keyOf = (r: PartReader, f: Field) => {
    const g = r.field(f.value, f.end);
    return g.no === 1 && g.wire === WIRE_VARINT ? g.n : 0;
  };
  members.forEach((m, k) => {
    const r = readers[m.part];
    for (const f of r.fields(m.field.value, m.field.end)) {
      switch (f.no) {
        case 3: {
          const first = f.value < f.end ? r.field(f.value, f.end) : null;
          const hasId = first !== null && first.no === 1 && first.wire === WIRE_VARINT;
          const id = hasId ? first!.n : 0;
          if (!lineIds.has(id)) {
            lineIds.add(id);
            pushRange(segs, m.part, f.at, f.end);
            break;
          }
          let fresh = id + LINE_ID_STEP;
          while (lineIds.has(fresh)) fresh += LINE_ID_STEP;
          lineIds.add(fresh);
          const idField = [...tagBytes(1, WIRE_VARINT), ...varintBytes(fresh)];
          const rest = hasId ? first!.end : f.value;
          const body = idField.length + (f.end - rest);
          segs.push(Uint8Array.from([...tagBytes(3, WIRE_LEN), ...varintBytes(body), ...idField]));
          pushRange(segs, m.part, rest, f.end);
          break;
        }
        case 4:
        case 5:
        case 6: {
          const seen = f.no === 4 ? evKeys : f.no === 5 ? stKeys : planeStats;
          const key = keyOf(r, f);
          if (seen.has(key)) break;
          seen.add(key);
          pushRange(segs, m.part, f.at, f.end);
          break;
        }
        default:
          // id, name and anything else once: from the first part that has the plane.
          if (k === 0) pushRange(segs, m.part, f.at, f.end);
      }
    }
  });
  return segs;
}

/** `Task Environment` / `/host:metadata` rebuilt from every part's copy: stats by name, the profile span widened. */
function rebuildPlane(readers: PartReader[], members: PlaneRef[]): Uint8Array {
  const planes = members.map((m) => fromBinary(XPlaneSchema, readers[m.part].bytes(m.field.value, m.field.end)));
  const out = create(XPlaneSchema, { id: planes[0].id, name: planes[0].name });
  const byName = new Map<string, XStat>();
  const order: string[] = [];
  for (const p of planes) {
    for (const s of p.stats) {
      const name = p.statMetadata[String(s.metadataId)]?.name ?? "";
      const had = byName.get(name);
      if (!had) {
        byName.set(name, s);
        order.push(name);
        continue;
      }
      const v = s.value;
      const w = had.value;
      if (v.case === "uint64Value" && w.case === "uint64Value") {
        if ((name === "profile_start_time" && v.value < w.value) || (name === "profile_stop_time" && v.value > w.value)) {
          byName.set(name, s);
        }
      }
    }
  }
  order.forEach((name, i) => {
    const id = BigInt(i + 1);
    out.statMetadata[String(id)] = create(XStatMetadataSchema, { id, name });
    out.stats.push(create(XStatSchema, { metadataId: id, value: byName.get(name)!.value }));
  });
  return toBinary(XPlaneSchema, out);
}

/** Sort rank of a plane: the host plane, the devices by id, then the rest in first-seen order. */
function planeOrder(name: string): number {
  if (name === "/host:CPU") return 0;
  if (name.startsWith("/device:")) return 1;
  return 2;
}

/**
 * Joins the XSpace `parts` (the ranks of one host, written with `xspaceHost` slots, in rank-index order) into
 * `output` (a path, or an open descriptor, left open, that `name` names in messages). Returns the bytes written. The
 * parts are left in place (the caller removes them).
 */
export function joinXSpaceParts(parts: string[], output: string | number, name = String(output)): number {
  const fds = new PartFds();
  let outFd = -1;
  try {
    const readers = parts.map((f) => new PartReader(f, fds));
    const groups = new Map<string, PlaneRef[]>();
    const diags: Seg[] = [];
    const hostnames: string[] = [];
    readers.forEach((r, part) => {
      for (const f of r.fields(0, r.size)) {
        if (f.no === 1 && f.wire === WIRE_LEN) {
          const p = planeRef(r, part, f);
          const g = groups.get(p.name);
          if (g) g.push(p);
          else groups.set(p.name, [p]);
        } else if (f.no === 4 && f.wire === WIRE_LEN) {
          const h = r.bytes(f.value, f.end).toString("utf8");
          if (!hostnames.includes(h)) hostnames.push(h);
        } else {
          pushRange(diags, part, f.at, f.end); // errors (2), warnings (3)
        }
      }
    });
    const names = [...groups.keys()];
    const firstSeen = new Map(names.map((n, i) => [n, i]));
    names.sort((a, b) =>
      planeOrder(a) - planeOrder(b) ||
      (planeOrder(a) === 1 ? groups.get(a)![0].id - groups.get(b)![0].id : firstSeen.get(a)! - firstSeen.get(b)!));
    outFd = typeof output === "number" ? output : openSync(output, "w");
    const out = new Out(outFd, readers, name);
    for (const name of names) {
      const members = groups.get(name)!;
      if (members.length === 1 && !REBUILT.has(name)) {
        out.write({ part: members[0].part, start: members[0].field.at, end: members[0].field.end });
        continue;
      }
      if (REBUILT.has(name)) {
        const body = rebuildPlane(readers, members);
        out.write(Uint8Array.from([...tagBytes(1, WIRE_LEN), ...varintBytes(body.length)]));
        out.write(body);
        continue;
      }
      const segs = joinPlanes(readers, members);
      const len = segs.reduce((n, s) => n + segLen(s), 0);
      out.write(Uint8Array.from([...tagBytes(1, WIRE_LEN), ...varintBytes(len)]));
      for (const s of segs) out.write(s);
    }
    for (const s of diags) out.write(s);
    for (const h of hostnames) {
      const b = Buffer.from(h, "utf8");
      out.write(Uint8Array.from([...tagBytes(4, WIRE_LEN), ...varintBytes(b.length)]));
      out.write(b);
    }
    out.close();
    return out.bytes;
  } finally {
    fds.closeAll();
    if (outFd >= 0 && typeof output !== "number") closeSync(outFd);
  }
}
