/**
 * XSpace planes and lines as buffered during pass 2 (emit/xspace.ts): the host plane, device planes created on
 * first use, lines looked up by key, and a line's record chunks (spilled to emit/xspace_spill.ts once a line holds
 * {@link RUN_BYTES} of them). Also the per-plane metadata lookups by name ({@link evIntern}, {@link stIntern},
 * {@link wkId}).
 */
import * as S from "../model/session";
import { Table, tableNew, tableUpsert, inserted } from "../util/hash_table";
import { REC_BASE, RUN_BYTES, RunList, keepBudget, spillRun, spillAt } from "./xspace_spill";
import { hostRanks, deviceOrdinal } from "./options";

import { MetaList, metaIntern, newMetaList } from "./xspace_meta";

import { WK, lineIdFor, wkName } from "./xspace_schema";
import { asciiCopy, bAscii, bKeep, bN, bStart, bU64 } from "./xspace_text";

/** An XPlane being buffered: its lines, metadata, plane stats and size (heap, never freed within a pass). */
@unmanaged
export class Plane {
  id: u64;
  /** 0 host threads, 1 device, 2 stats-only (metadata, task environment). */
  kind: u32;
  /** Session device entry (DEV_ENTRY), or 0. */
  dev: usize;
  /** Device id in the dump (device planes; XPlane.id is the host ordinal when merging). */
  local: u32;
  nameP: usize;
  nameN: u32;
  lines: Table;
  lineList: usize;
  lineCount: u32;
  lineCap: u32;
  /** Fast event-metadata lookup by source key (name pointer, API id, memcpy type…) → id. */
  evCache: Table;
  /** Recent {@link evCache} hits (emit/xspace_names.ts), made on first use, or 0. */
  evRecent: usize;
  /** Event metadata: {nameP u32, nameN u32, dispP u32, dispN u32}. */
  ev: MetaList;
  /** Stat metadata: {name u32, nameN u32, aux u32 (kernel occupancy entry), 0 or pooled}. */
  st: MetaList;
  /** Well-known stat ids (WK.COUNT u32, 0 = not created). */
  wk: usize;
  /** Bit i: well-known stat i is used by some event. */
  used: u32;
  /** Plane stats: {statId u32, type u32 (0 str, 1 int64, 2 uint64), value u64 or ptr, len u32, 0}. */
  pstats: usize;
  pstatCount: u32;
  /** Position in planeList (device planes). */
  index: u32;
  /** nvtx_range stat id by host-plane event metadata id of the range (u32 each), or 0 when no launch had one. */
  nvtxMap: usize;
  size: u64;
  /** Bytes of its body other than the lines (id, name, metadata maps, plane stats): emit/xspace_write.ts planeBound. */
  fixed: u64;
  /**
   * Recent lines ({@link getLine}), from here: the keys of {@link RECENT_LINES} entries (u64 each), then their
   * lines (u64 each, a u32 pointer in the low half, 0 = none).
   */
  recentLines: u64;
  private recentKey1: u64;
  private recentKey2: u64;
  private recentKey3: u64;
  // One u64 per line pointer: entry i's line is 8 × RECENT_LINES bytes after its key (getLine).
  private recentLine0: u64;
  private recentLine1: u64;
  private recentLine2: u64;
  private recentLine3: u64;
}
/** Lines kept per plane by {@link getLine} ({@link recentEntry} picks the entry). */
const RECENT_LINES: u32 = 4;
/** Bytes of a plane stat entry ({@link Plane.pstats}) and the most a plane holds. */
export const PSTAT: usize = 24;
export const MAX_PSTATS: u32 = 16;

/** An XLine being buffered: its records (chunks in memory, runs spilled), names and size. */
@unmanaged
export class Line {
  /** Lookup key: class (LINE_*) << 32 | tid or stream. */
  key: u64;
  /** XLine.id. */
  id: u64;
  head: usize;
  tail: usize;
  count: u32;
  kinds: u32;
  pid: u32;
  unsorted: u32;
  lastStart: u64;
  lastDur: u64;
  minStart: u64;
  bytes: u64;
  nameP: usize;
  nameN: u32;
  dispP: usize;
  dispN: u32;
  size: u64;
  /** Spilled runs (emit/xspace_spill.ts RunList: list, count, capacity; in this order). */
  runList: usize;
  runCount: u32;
  runCap: u32;
  /** The records in memory (since the last spill) arrived out of start order. */
  chunkUnsorted: u32;
  /**
   * Its first events in start order captured when sized (emit/xspace_capture.ts): their offset in the buffer, their
   * bytes and their count.
   */
  capAt: u32;
  capN: u32;
  capK: u32;
  /** Bytes of its chunks held past a full largest chunk under the shared budget ({@link keepBudget}). */
  kept: u32;
  /** A 48-byte record (CUDA graph ids) was appended: {@link lineSettle} cannot step back over records. */
  longRecs: u32;
  /** Host API line of a thread without step markers holding a call linked to a step (emit/xspace_steps.ts). */
  links: u32;
}

/** The spilled runs of `ln`. */
// @ts-ignore: decorator
@inline export function runsOf(ln: Line): RunList {
  return changetype<RunList>(changetype<usize>(ln) + offsetof<Line>("runList"));
}

/** Chunk of a line's records: {next u32, used u32, cap u32, 0} then `cap` bytes. */
export const CHUNK_HEAD: usize = 16;
const CHUNK_FIRST: u32 = 1024;
const CHUNK_MAX: u32 = RUN_BYTES;

/** Bytes of the lines' chunks held under {@link keepBudget} now. */
let keptBytes: u32 = 0;
/** Largest chunks given back by spilled lines (a list through their first word), reused before the heap grows. */
let freeChunks: usize = 0;

/** The `/host:CPU` plane. */
export let hostPlane: Plane = changetype<Plane>(0);
let devPlanes: Table = 0; // device id → Plane
/** Device planes in creation order (u32 pointers; index + 1 is what the correlation map stores). */
export let planeList: usize = 0; // device planes in creation order
/** Device planes created. */
export let planeCount: u32 = 0;
const MAX_PLANES: u32 = 256;
let lastDev: u32 = 0xffffffff;
let lastDevPlane: Plane = changetype<Plane>(0);

/** Starts a file: the host plane, no device planes yet (each is created by the first event of its device). */
export function planesBegin(): void {
  keptBytes = 0;
  freeChunks = 0; // the heap was rewound
  hostPlane = newPlane(0, 0);
  setPlaneName(hostPlane, "/host:CPU");
  devPlanes = tableNew(16);
  planeList = heap.alloc(<usize>MAX_PLANES << 2);
  planeCount = 0;
  lastDev = 0xffffffff;
  lastDevPlane = changetype<Plane>(0);
}

// ---- Planes ------------------------------------------------------------------------------------------------------

/** A new plane of `kind` (0 host threads, 1 device, 2 stats only) and XPlane.id `id`. */
export function newPlane(kind: u32, id: u64): Plane {
  const pl = changetype<Plane>(heap.alloc(offsetof<Plane>()));
  memory.fill(changetype<usize>(pl), 0, offsetof<Plane>());
  pl.kind = kind;
  pl.id = id;
  pl.lines = tableNew(16);
  pl.lineCap = 16;
  pl.lineList = heap.alloc(<usize>pl.lineCap << 2);
  pl.evCache = tableNew(64);
  pl.ev = newMetaList(0x51, 0);
  pl.st = newMetaList(0x57, 1);
  pl.wk = heap.alloc(<usize>WK.COUNT << 2);
  memory.fill(pl.wk, 0, <usize>WK.COUNT << 2);
  pl.pstats = heap.alloc(<usize>MAX_PSTATS * PSTAT);
  // A part of a host merge: the well-known stats first, at ids 1..WK.COUNT in every rank's plane.
  if (hostRanks > 1 && kind != 2) for (let w = 0; w < WK.COUNT; w++) wkId(pl, w);
  return pl;
}

/** Sets the name of `pl` to the ASCII string `s`. */
export function setPlaneName(pl: Plane, s: string): void {
  pl.nameP = asciiCopy(s);
  pl.nameN = s.length;
}

/** The plane of device `dev`, created on first use. */
// @ts-ignore: decorator
@inline export function devPlane(dev: u32): Plane {
  // lastDevPlane 0: nothing cached yet (the id 0xFFFFFFFF is a valid, if crafted, device id).
  return dev == lastDev && changetype<usize>(lastDevPlane) != 0 ? lastDevPlane : findPlane(dev);
}

/** {@link devPlane} past its last-device test. */
function findPlane(dev: u32): Plane {
  const slot = tableUpsert(devPlanes, dev);
  let pl: Plane;
  if (inserted) {
    if (planeCount >= MAX_PLANES) {
      // Beyond 256 devices everything shares the last plane (the session keeps at most 256 devices too).
      pl = changetype<Plane>(load<usize>(planeList + ((<usize>MAX_PLANES - 1) << 2)));
    } else {
      pl = newPlane(1, deviceOrdinal(dev));
      pl.dev = S.findDevice(dev);
      pl.local = dev;
      bStart();
      bAscii("/device:GPU:");
      bU64(pl.id);
      pl.nameP = bKeep();
      pl.nameN = bN;
      pl.index = planeCount;
      store<usize>(planeList + (<usize>planeCount << 2), changetype<usize>(pl));
      planeCount++;
    }
    store<u64>(slot, changetype<usize>(pl));
  } else pl = changetype<Plane>(<usize>load<u64>(slot));
  lastDev = dev;
  lastDevPlane = pl;
  return pl;
}

/**
 * The line of `pl` with lookup key `key` (class << 32 | tid or stream), created on first use. Device work
 * alternates between a few streams: the last line of each of {@link RECENT_LINES} key classes ({@link recentEntry})
 * is kept in the plane.
 */
// @ts-ignore: decorator
@inline export function getLine(pl: Plane, key: u64): Line {
  const e = recentEntry(pl, key);
  return key == load<u64>(e) && load<u32>(e, 8 * RECENT_LINES) != 0
    ? changetype<Line>(<usize>load<u32>(e, 8 * RECENT_LINES))
    : findLine(pl, key);
}

/** The recent-line entry of `key` in `pl` (by the low bits of tid or stream and of the line class). */
// @ts-ignore: decorator
@inline function recentEntry(pl: Plane, key: u64): usize {
  return changetype<usize>(pl) + offsetof<Plane>("recentLines") + ((<usize>(key ^ (key >> 32)) & (RECENT_LINES - 1)) << 3);
}

/** {@link getLine} past its recent-line test. */
function findLine(pl: Plane, key: u64): Line {
  const slot = tableUpsert(pl.lines, key);
  let ln: Line;
  if (inserted) {
    ln = changetype<Line>(heap.alloc(offsetof<Line>()));
    memory.fill(changetype<usize>(ln), 0, offsetof<Line>());
    ln.key = key;
    ln.id = lineIdFor(pl.kind != 0, key);
    ln.minStart = 0xffffffffffffffff;
    store<u64>(slot, changetype<usize>(ln));
    if (pl.lineCount == pl.lineCap) {
      const list = heap.alloc(<usize>pl.lineCap << 3);
      memory.copy(list, pl.lineList, <usize>pl.lineCap << 2);
      pl.lineList = list;
      pl.lineCap <<= 1;
    }
    store<usize>(pl.lineList + (<usize>pl.lineCount << 2), changetype<usize>(ln));
    pl.lineCount++;
  } else ln = changetype<Line>(<usize>load<u64>(slot));
  const e = recentEntry(pl, key);
  store<u64>(e, key);
  store<u32>(e, <u32>changetype<usize>(ln), 8 * RECENT_LINES);
  return ln;
}

/**
 * Hands the records of `ln` held in memory to the spill storage (emit/xspace_spill.ts), one run per chunk, and
 * keeps its last chunk as its only one, emptied but for the line's last `keep` records (its last records stay in
 * memory so that a late one can still be put among them, {@link lineSettle}; 0 at the end of the pass); the other
 * largest chunks go to the free list, and what the line held under {@link keepBudget} is given back. The output does
 * not depend on where runs are cut.
 */
export function spillLine(ln: Line, keep: u32): void {
  const sorted = ln.chunkUnsorted == 0;
  const t = ln.tail;
  const tailUsed = load<u32>(t, 4);
  const held = keep * REC_BASE <= tailUsed ? keep * REC_BASE : 0;
  let c = ln.head;
  while (c != 0) {
    spillRun(runsOf(ln), c + CHUNK_HEAD, c == t ? tailUsed - held : load<u32>(c, 4), sorted);
    const next = <usize>load<u32>(c);
    if (c != t && load<u32>(c, 8) == CHUNK_MAX) {
      store<u32>(c, <u32>freeChunks);
      freeChunks = c;
    }
    c = next;
  }
  if (held != 0) memory.copy(t + CHUNK_HEAD, t + CHUNK_HEAD + tailUsed - held, held);
  store<u32>(t, 0);
  store<u32>(t, held, 4);
  ln.head = t;
  ln.chunkUnsorted = 0;
  keptBytes -= ln.kept;
  ln.kept = 0;
}

/** Most records {@link lineSettle} moves a late record back over (and {@link lineGrow} keeps when it spills). */
export const SETTLE_MAX: u32 = 8;
/** {@link SETTLE_MAX}, or 0 while a test turns settling off (its sort-at-the-end oracle). */
let settleMax: u32 = SETTLE_MAX;

/** Test-only: late records settle among the last ones of their line (true, the default) or mark it out of order. */
export function setSettle(on: bool): void {
  settleMax = on ? SETTLE_MAX : 0;
}

/** Whether the 32-byte record at `q` sorts before a record (start, dur) that arrived after it, or with it. */
// @ts-ignore: decorator
@inline function sortsFirst(q: usize, start: u64, dur: u64): bool {
  const qs = load<u64>(q);
  return qs < start || (qs == start && load<u64>(q, 8) >= dur);
}

/**
 * Puts the 32-byte record just appended at `r` (the last of `ln`; it sorts before the record that arrived before
 * it) in its place among the line's last {@link SETTLE_MAX} records, in its chunk or the one before, and returns
 * true; returns false, moving nothing, when its place is further back, or the line is out of order already or has
 * 48-byte records. Its place is after every record that sorts before it or with it (start, then longer first;
 * equal ones keep their arrival order), where the sort of an out-of-order line would put it: the line stays in start
 * order and is kept or spilled as one that arrived so, instead of being sorted in runs, spilled and merged at the
 * end. What arrives a few places late: nested NVTX ranges (each recorded when it ends, so the outer one after what
 * it holds), nested calls recorded on return.
 */
export function lineSettle(ln: Line, r: usize, start: u64, dur: u64): bool {
  if (ln.longRecs != 0 || ln.unsorted != 0) return false;
  const t = ln.tail;
  const base = t + CHUNK_HEAD;
  let p = r;
  let k: u32 = 0;
  while (p > base) {
    if (sortsFirst(p - REC_BASE, start, dur)) break;
    if (k == settleMax) return false;
    p -= REC_BASE;
    k++;
  }
  if (p > base || ln.head == t) {
    // In its chunk: after the record at p - 32, or first in a line whose records are all in this chunk.
    if (p == base && ln.runCount != 0) return false; // what precedes it was spilled
    moveInto(p, r);
    return true;
  }
  // Every record of its chunk before it sorts after it: its place is in the chunk before (found from the head: the
  // chunks are linked forward only; a line has a few dozen at most).
  let pc = ln.head;
  while (<usize>load<u32>(pc) != t) pc = <usize>load<u32>(pc);
  const pbase = pc + CHUNK_HEAD;
  const pend = pbase + <usize>load<u32>(pc, 4);
  let pp = pend;
  while (pp > pbase) {
    if (sortsFirst(pp - REC_BASE, start, dur)) break;
    if (k == settleMax) return false;
    pp -= REC_BASE;
    k++;
  }
  if (pp == pend) {
    // After the last record of the chunk before: first in its own chunk.
    moveInto(base, r);
    return true;
  }
  if (pp == pbase) return false; // before the whole chunk before: further back than this looks
  // The chunk before keeps its size: its last record moves to the front of this chunk, the new one goes to pp.
  memory.copy(SETTLE_TMP, r, REC_BASE);
  memory.copy(base + REC_BASE, base, r - base);
  memory.copy(base, pend - REC_BASE, REC_BASE);
  memory.copy(pp + REC_BASE, pp, pend - REC_BASE - pp);
  memory.copy(pp, SETTLE_TMP, REC_BASE);
  return true;
}

/** Room for the record being moved by {@link lineSettle}. */
const SETTLE_TMP = memory.data(32);

/** Moves the 32-byte record at `r` to `p` (≤ r), the records in [p, r) up by one. */
function moveInto(p: usize, r: usize): void {
  if (p == r) return;
  memory.copy(SETTLE_TMP, r, REC_BASE);
  memory.copy(p + REC_BASE, p, r - p);
  memory.copy(p, SETTLE_TMP, REC_BASE);
}

/** Reserves `n` record bytes at the end of line `ln`; returns their address. */
// @ts-ignore: decorator
@inline export function lineAppend(ln: Line, n: u32): usize {
  const t = ln.tail;
  if (t != 0) {
    const used = load<u32>(t, 4);
    if (used + n <= load<u32>(t, 8)) {
      store<u32>(t, used + n, 4);
      ln.bytes += n;
      ln.count++;
      return t + CHUNK_HEAD + used;
    }
  }
  return lineGrow(ln, n);
}

/**
 * {@link lineAppend} when the last chunk of `ln` is full (or there is none): a new chunk, or the records spilled —
 * when the full chunk is a largest one and the line is out of order or the lines' budget ({@link keepBudget}) is
 * spent.
 */
function lineGrow(ln: Line, n: u32): usize {
  let t = ln.tail;
  const full = t != 0 && load<u32>(t, 8) >= spillAt;
  let cap = t == 0 ? CHUNK_FIRST : load<u32>(t, 8) << 1;
  if (cap > CHUNK_MAX) cap = CHUNK_MAX;
  if (cap < n) cap = n;
  if (full && (ln.unsorted != 0 || keptBytes + cap > keepBudget)) {
    // The line's records go to the spill storage, so memory stays flat; an in-order line of 32-byte records keeps
    // its last few in memory, for a late record to settle among (lineSettle).
    spillLine(ln, ln.unsorted == 0 && ln.longRecs == 0 ? settleMax : 0);
  } else {
    let c: usize;
    if (cap == CHUNK_MAX && freeChunks != 0) {
      c = freeChunks;
      freeChunks = <usize>load<u32>(c);
    } else {
      c = heap.alloc(CHUNK_HEAD + <usize>cap);
    }
    if (full) {
      // Held past the line's full largest chunk: counted against the shared budget.
      keptBytes += cap;
      ln.kept += cap;
    }
    store<u32>(c, 0);
    store<u32>(c, 0, 4);
    store<u32>(c, cap, 8);
    if (t == 0) ln.head = c;
    else store<u32>(t, <u32>c);
    ln.tail = c;
    t = c;
  }
  const used = load<u32>(t, 4);
  store<u32>(t, used + n, 4);
  ln.bytes += n;
  ln.count++;
  return t + CHUNK_HEAD + used;
}

/** Event metadata id of (name, display) in `pl`, created on first use. */
// @ts-ignore: decorator
@inline export function evIntern(pl: Plane, p: usize, n: u32, dp: usize, dn: u32): u32 {
  return metaIntern(pl.ev, p, n, dp, dn);
}

/** Stat metadata id whose name is [p, p+n) in `pl`, created on first use. */
// @ts-ignore: decorator
@inline export function stIntern(pl: Plane, p: usize, n: u32): u32 {
  return metaIntern(pl.st, p, n, 0, 0);
}

/** Id of well-known stat `w` in `pl` (created on first use). */
export function wkId(pl: Plane, w: i32): u32 {
  const a = pl.wk + (<usize>w << 2);
  let id = load<u32>(a);
  if (id == 0) {
    const s = wkName(w);
    id = stIntern(pl, asciiCopy(s), s.length);
    store<u32>(a, id);
  }
  return id;
}
