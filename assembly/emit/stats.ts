/**
 * Summary statistics of a trace, aggregated from the normalized events in pass 2 (no JSON on the way): the numbers
 * of `rawtrace stats` and of the viewer's summary panel. Decoded by src/core/stats.ts (host-neutral).
 *
 * - per device: busy time = the length of the union of its kernel, memcpy and memset intervals; count, time and
 *   bytes of kernels, memcpys and memsets; first start and last end of that device work;
 * - per (kind, name): count, total, min and max duration — kernels by name, API calls by name, memcpy/memset
 *   names, syncs, NVTX ranges, overhead;
 * - per memcpy direction (CUPTI copy kind, peer or not): count, bytes, time;
 * - the trace span: first start and last end over every event.
 * Incomplete events (EvFlag.INCOMPLETE: no end in the vendor record) are left out of everything.
 *
 * Memory: the tables grow with distinct names and devices; busy time needs the device intervals, kept after
 * coalescing each one with the previous interval of its device when they overlap or touch (back-to-back work on a
 * busy device collapses to a few intervals) as two u32 each — the start's difference from the previous start and
 * the length, 8 bytes where (start, end) pairs took 16 (3.57M intervals on a 1.05 GiB dump: 54 → 27 MiB); an
 * interval out of order, after a gap or as long as 4.3 s keeps its u64 start and end — in chunks of 16 KiB per
 * device, then swept at the end (decoded into pairs and sorted first only when they are out of start order).
 *
 * Result (little-endian, every section 8-byte aligned), written through the output window at the end of the pass:
 *   header 64 B: u32 magic "RTST", u32 version, u32 devices, u32 names, u32 copy rows, u32 nameBytes (padded),
 *     u64 events, u64 span start (Unix ns; 0 = no event), u64 span end, u64 intervals kept, u64 0
 *   devices 96 B each, by id: u32 id, u32 0, u64 busy ns, u64 kernels, u64 kernel ns, u64 memcpys, u64 memcpy ns,
 *     u64 memcpy bytes, u64 memsets, u64 memset ns, u64 memset bytes, u64 first start, u64 last end
 *   copy rows 40 B each: u32 copy kind (CUPTI numbering: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP…), u32 flags (1 = peer
 *     copy), u64 count, u64 bytes, u64 ns, u64 max ns
 *   names 48 B each: u32 kind (EvKind), u32 offset in the name bytes, u32 length, u32 0, u64 count, u64 total ns,
 *     u64 min ns, u64 max ns
 *   name bytes (UTF-8)
 */
import { Ev, EvKind, EvFlag, ApiCat } from "../model/event";
import * as S from "../model/session";
import { Recent, recentNew, recentGet, recentPut } from "../util/recent";
import * as O from "./out";
import { Table, tableNew, tableUpsert, inserted } from "../util/hash_table";
import { regrowZeroed } from "../util/regrow";
import { swap16 } from "../util/swap16";

const MAGIC: u32 = 0x54535452; // "RTST"
const VERSION: u32 = 2;
const HEADER: usize = 64;
const DEV_OUT: usize = 96;
const COPY_OUT: usize = 40;
const NAME_OUT: usize = 48;
const NONE: u32 = 0xffffffff;

/**
 * Device entry (in linear memory, 152 B): the 96 output bytes, then the interval list {chunk list u32 @96, count u32
 * @100, chunk list capacity u32 @104, open u32 @108}, the open interval start u64 @112 and end u64 @120, the last
 * chunk u32 @128, the bytes used in it u32 @132, the last start listed u64 @136, chunks listed u32 @144, out of
 * start order u32 @148.
 *
 * The intervals go to chunks of {@link CHUNK_BYTES} (a u32 of bytes used, then the encoded intervals) listed in
 * the chunk list (a u32 address per chunk), not one array doubled when full: the stub runtime frees nothing, so
 * each doubling left the old copy behind (with millions of intervals, as many bytes again as the list), and the
 * pages the copies touched stayed resident in a browser. Only a list found out of start order at the end is
 * decoded into one array to be sorted.
 */
const DEV_ENTRY: usize = 152;
const CHUNK_BYTES: u32 = 16384;
/** Most bytes one interval takes (see {@link pushInterval}). */
const MAX_INTERVAL: u32 = 24;
/** Both words of an interval kept as u64 start and end (see {@link pushInterval}). */
const LONG: u32 = 0xffffffff;
const MAX_DEVICES: u32 = 1024;

/** Name entry (48 B): u32 kind, u32 name ptr, u32 name len, u32 0, u64 count, u64 total, u64 min, u64 max. */
const NAME_ENTRY: usize = 48;

/**
 * Copy table: 16 copy kinds × {plain, peer} × {bytes known, bytes unknown} × {count, bytes, ns, max} u64; the row
 * of kind k is (k << 2) | (bytes unknown << 1) | peer.
 */
const COPY_KINDS: u32 = 16;

let devTable: Table = 0;
let devList: usize = 0;
let devCount: u32 = 0;
let lastDevId: u32 = 0xffffffff;
let lastDev: usize = 0;
let nameTable: Table = 0;
let nameList: usize = 0;
let nameCap: u32 = 0;
let nameCount: u32 = 0;
let lastNameKey: u64 = 0xffffffffffffffff;
let lastName: usize = 0;
let recentNames: Recent = 0; // (kind << 32 | name pointer) → entry
// Timeline name id → entry (u32 each, 0: none; see statsEventNamed): the timeline pass has each event's name id
// already, and a direct index is cheaper than the name caches.
let byId: usize = 0;
let byIdCap: u32 = 0;
let copyTable: usize = 0;
let spanStart: u64 = 0;
let spanEnd: u64 = 0;
let spanAny = false;
let events: u64 = 0;
let intervals: u64 = 0;

/** Last event end seen (Unix ns), for closing ranges left open. */
export function statsLastTs(): u64 {
  return spanEnd;
}

/** Starts a stats pass (after heap.reset(): everything is allocated anew). */
export function statsBegin(): void {
  devTable = tableNew(16);
  devList = heap.alloc(<usize>MAX_DEVICES << 2);
  devCount = 0;
  lastDevId = 0xffffffff;
  lastDev = 0;
  nameTable = tableNew(256);
  nameCap = 256;
  nameList = heap.alloc(<usize>nameCap << 2);
  nameCount = 0;
  lastNameKey = 0xffffffffffffffff;
  lastName = 0;
  recentNames = recentNew(8);
  byId = 0;
  byIdCap = 0;
  const copyBytes = <usize>COPY_KINDS * 4 * 32;
  copyTable = heap.alloc(copyBytes);
  memory.fill(copyTable, 0, copyBytes);
  spanStart = 0;
  spanEnd = 0;
  spanAny = false;
  events = 0;
  intervals = 0;
}

/** Entry of device `id` (created when new); the last device's test inline. */
// @ts-ignore: decorator
@inline function device(id: u32): usize {
  // lastDev 0: nothing cached yet (the id 0xFFFFFFFF is a valid, if crafted, device id).
  return id == lastDevId && lastDev != 0 ? lastDev : deviceSlow(id);
}

/** {@link device} past the last device: the device table, a new entry when the id is new. */
function deviceSlow(id: u32): usize {
  const slot = tableUpsert(devTable, id);
  let d = <usize>load<u64>(slot);
  if (inserted) {
    if (devCount >= MAX_DEVICES) {
      // Crafted input with thousands of device ids: the extra ones share the last entry.
      d = load<usize>(devList + (<usize>(devCount - 1) << 2));
    } else {
      d = heap.alloc(DEV_ENTRY);
      memory.fill(d, 0, DEV_ENTRY);
      store<u32>(d, id);
      store<usize>(devList + (<usize>devCount << 2), d);
      devCount++;
    }
    store<u64>(slot, d);
  }
  lastDevId = id;
  lastDev = d;
  return d;
}

/** Appends (s, e) to device d's interval list (a new chunk when the last one is full: {@link chunkOpen}). */
// @ts-ignore: decorator
@inline function pushInterval(d: usize, s: u64, e: u64): void {
  let q = <usize>load<u32>(d, 128);
  let used = load<u32>(d, 132);
  if (q == 0 || used + MAX_INTERVAL > CHUNK_BYTES) {
    q = chunkOpen(d);
    used = 4;
  }
  const prev = load<u64>(d, 136);
  let p = q + <usize>used;
  // 8 bytes: u32 start - previous start, u32 length; either out of u32 range (a start before the previous one, a
  // gap or an interval of 4.3 s or more): the length word LONG, then the start and end as u64.
  const gap = s - prev;
  const len = e - s;
  if (s < prev) store<u32>(d, 1, 148);
  if (s >= prev && gap < 0xffffffff && len < 0xffffffff) {
    store<u32>(p, <u32>gap);
    store<u32>(p, <u32>len, 4);
    p += 8;
  } else {
    store<u32>(p, LONG);
    store<u32>(p, LONG, 4);
    store<u64>(p, s, 8);
    store<u64>(p, e, 16);
    p += 24;
  }
  used = <u32>(p - q);
  store<u32>(q, used);
  store<u32>(d, used, 132);
  store<u64>(d, s, 136);
  store<u32>(d, load<u32>(d, 100) + 1, 100);
}

/** Allocates device d's next interval chunk and lists it (doubling the chunk list when full); returns it. */
function chunkOpen(d: usize): usize {
  const chunks = load<u32>(d, 144);
  const cap = load<u32>(d, 104);
  if (chunks == cap) {
    const ncap: u32 = cap == 0 ? 16 : cap << 1;
    store<u32>(d, <u32>regrowZeroed(<usize>load<u32>(d, 96), <usize>cap << 2, <usize>ncap << 2), 96);
    store<u32>(d, ncap, 104);
  }
  const c = heap.alloc(CHUNK_BYTES);
  store<u32>(<usize>load<u32>(d, 96) + (<usize>chunks << 2), <u32>c);
  store<u32>(d, chunks + 1, 144);
  store<u32>(d, <u32>c, 128);
  return c;
}

/** Device work [s, e) on d: merged into the open interval when they overlap or touch, else the open one is kept. */
// @ts-ignore: decorator
@inline function busy(d: usize, s: u64, e: u64): void {
  if (load<u32>(d, 108) == 0) {
    store<u32>(d, 1, 108);
    store<u64>(d, s, 112);
    store<u64>(d, e, 120);
    return;
  }
  const cs = load<u64>(d, 112);
  const ce = load<u64>(d, 120);
  if (s <= ce && e >= cs) {
    if (s < cs) store<u64>(d, s, 112);
    if (e > ce) store<u64>(d, e, 120);
    return;
  }
  pushInterval(d, cs, ce);
  store<u64>(d, s, 112);
  store<u64>(d, e, 120);
}

/** Adds v to the u64 at p + off, saturating at 2^64 - 1 (sums of crafted byte counts or durations never wrap). */
// @ts-ignore: decorator
@inline function add(p: usize, off: usize, v: u64): void {
  const s = load<u64>(p + off) + v;
  store<u64>(p + off, s < v ? 0xffffffffffffffff : s);
}

function nameEntry(kind: u32, p: usize, n: u32): usize {
  const key = (<u64>kind << 32) | <u64>p;
  if (key == lastNameKey) return lastName;
  // Alternating kernel and API names missed the last-name test on most events: recent keys before the table.
  let e = <usize>recentGet(recentNames, key);
  if (e == 0) {
    e = nameSlow(kind, p, n, key);
    recentPut(recentNames, key, <u64>e);
  }
  lastNameKey = key;
  lastName = e;
  return e;
}

/** {@link nameEntry} past its caches: the name table, a new entry when the key is new. */
function nameSlow(kind: u32, p: usize, n: u32, key: u64): usize {
  const slot = tableUpsert(nameTable, key);
  let e = <usize>load<u64>(slot);
  if (inserted) {
    e = heap.alloc(NAME_ENTRY);
    memory.fill(e, 0, NAME_ENTRY);
    store<u32>(e, kind);
    store<u32>(e, <u32>p, 4);
    store<u32>(e, n, 8);
    store<u64>(e, 0xffffffffffffffff, 32);
    store<u64>(slot, e);
    if (nameCount == nameCap) {
      const ncap = nameCap << 1;
      const nl = heap.alloc(<usize>ncap << 2);
      memory.copy(nl, nameList, <usize>nameCount << 2);
      nameList = nl;
      nameCap = ncap;
    }
    store<usize>(nameList + (<usize>nameCount << 2), e);
    nameCount++;
  }
  return e;
}

/**
 * Entry of (kind, name) for an event whose timeline name id is `id` (NONE: none that names its text alone): the
 * entry cached for `id` when it has this kind, else {@link nameEntry} (cached for `id` when the id had none).
 * The entries stay those of (kind, name pointer); an id's text is that of the first pointer it was cached from, so
 * events of other pointers with the same text add to the entry foldNames would fold theirs into anyway (the first
 * of that kind and text), and the result is the same.
 */
// @ts-ignore: decorator
@inline function entryOf(kind: u32, e: Ev, id: u32): usize {
  if (id < byIdCap) {
    const n = <usize>load<u32>(byId + (<usize>id << 2));
    if (n != 0 && load<u32>(n) == kind) return n;
  }
  return entryMiss(kind, e, id);
}

/** {@link entryOf} past the id index. */
function entryMiss(kind: u32, e: Ev, id: u32): usize {
  const n = nameEntry(kind, e.namePtr, e.nameLen);
  if (id == NONE) return n;
  if (id >= byIdCap) {
    let cap = byIdCap == 0 ? <u32>1024 : byIdCap;
    while (cap <= id) cap <<= 1;
    byId = regrowZeroed(byId, <usize>byIdCap << 2, <usize>cap << 2);
    byIdCap = cap;
  }
  const at = byId + (<usize>id << 2);
  if (load<u32>(at) == 0) store<u32>(at, <u32>n);
  return n;
}

/**
 * Aggregates one event (see {@link statsEventNamed} for `id`); returns whether it counted (the statistics leave
 * out derived GPU ranges, counters and incomplete events).
 */
// @ts-ignore: decorator
@inline function aggregate(e: Ev, id: u32): bool {
  // PTI's synchronization view (xpu_sync) records the same wait its Level Zero API record does: counted as a sync, as
  // CUDA's synchronizations are, so the driver API's total is not twice the time spent in it.
  const kind = e.apiCat == ApiCat.XPU_SYNC && e.kind == EvKind.API_DRIVER ? <u8>EvKind.SYNC : e.kind;
  if (kind == EvKind.GPU_RANGE) return false; // a projection of host ranges, not work of its own
  if (kind == EvKind.COUNTER) return false; // a sampled value, not work
  // No end in the vendor record (model/timing.ts): no duration to add, and a 0 would only distort the minimum.
  if ((e.flags & EvFlag.INCOMPLETE) != 0) return false;
  S.addEvent();
  events++;
  const s = e.start;
  const t = e.end;
  // Every event counts, a start of 0 (a damaged timestamp) too: the span then covers every device interval, so
  // busy time never exceeds it.
  if (!spanAny || s < spanStart) spanStart = s;
  spanAny = true;
  if (t > spanEnd) spanEnd = t;
  const dur = t > s ? t - s : 0;
  if (kind == EvKind.KERNEL || kind == EvKind.MEMCPY || kind == EvKind.MEMSET) {
    const d = device(e.device);
    const off: usize = kind == EvKind.KERNEL ? 16 : kind == EvKind.MEMCPY ? 32 : 56;
    add(d, off, 1);
    add(d, off + 8, dur);
    if (kind != EvKind.KERNEL) {
      add(d, off + 16, e.bytes);
      // Bytes not in the record (EvFlag.BYTES_UNKNOWN): the device's sum is not the whole (u32 @4: bit 0 copies, 1 fills).
      if ((e.flags & EvFlag.BYTES_UNKNOWN) != 0) store<u32>(d, load<u32>(d, 4) | (kind == EvKind.MEMCPY ? 1 : 2), 4);
    }
    // Open-interval flag 0: this is the device's first work (a start of 0 is kept like any other).
    if (load<u32>(d, 108) == 0 || s < load<u64>(d, 80)) store<u64>(d, s, 80);
    if (t > load<u64>(d, 88)) store<u64>(d, t, 88);
    // Busy time ⊆ the trace span (busy % ≤ 100): events without a start time are not in the span, so not busy either.
    if (s != 0) busy(d, s, t > s ? t : s);
    if (kind == EvKind.MEMCPY) {
      const ck = e.copyKind < COPY_KINDS ? e.copyKind : 0;
      const peer: u32 = (e.flags & EvFlag.PEER) != 0 ? 1 : 0;
      const unknown: u32 = (e.flags & EvFlag.BYTES_UNKNOWN) != 0 ? 2 : 0;
      const c = copyTable + ((<usize>ck * 4 + peer + unknown) << 5);
      add(c, 0, 1);
      add(c, 8, e.bytes);
      add(c, 16, dur);
      if (dur > load<u64>(c, 24)) store<u64>(c, dur, 24);
    }
  }
  const n = id == NONE ? nameEntry(kind, e.namePtr, e.nameLen) : entryOf(kind, e, id);
  add(n, 16, 1);
  add(n, 24, dur);
  if (dur < load<u64>(n, 32)) store<u64>(n, dur, 32);
  if (dur > load<u64>(n, 40)) store<u64>(n, dur, 40);
  return true;
}

/** Aggregates one event. */
export function statsEvent(e: Ev): void {
  aggregate(e, NONE);
}

/**
 * {@link statsEvent} from the timeline pass, which knows the event's name id in its name table (emit/timeline_names.ts):
 * `id` names the event's text alone (a kept name, EvFlag.NAME_KEPT, and not the shared overflow name), else
 * NONE. Returns whether the event counted.
 */
// @ts-ignore: decorator
@inline export function statsEventNamed(e: Ev, id: u32): bool {
  return aggregate(e, id);
}

// ---- End of pass ---------------------------------------------------------------------------------------------------

/** Sorts n (start, end) u64 pairs at a by start (quicksort, median of three, insertion sort below 16). */
function sortPairs(a: usize, n: usize): void {
  while (n > 16) {
    const m = n >> 1;
    const pa = a;
    const pm = a + (m << 4);
    const pz = a + ((n - 1) << 4);
    if (load<u64>(pm) < load<u64>(pa)) swap16(pm, pa);
    if (load<u64>(pz) < load<u64>(pm)) {
      swap16(pz, pm);
      if (load<u64>(pm) < load<u64>(pa)) swap16(pm, pa);
    }
    const pivot = load<u64>(pm);
    let i: isize = -1;
    let j: isize = <isize>n;
    while (true) {
      do i++; while (load<u64>(a + (<usize>i << 4)) < pivot);
      do j--; while (load<u64>(a + (<usize>j << 4)) > pivot);
      if (i >= j) break;
      swap16(a + (<usize>i << 4), a + (<usize>j << 4));
    }
    const left = <usize>j + 1;
    const right = n - left;
    // Recurse into the smaller side, loop on the larger: stack depth stays logarithmic.
    if (left < right) {
      sortPairs(a, left);
      a += left << 4;
      n = right;
    } else {
      sortPairs(a + (left << 4), right);
      n = left;
    }
  }
  for (let i: usize = 1; i < n; i++) {
    const s = load<u64>(a + (i << 4));
    const e = load<u64>(a + (i << 4), 8);
    let j = i;
    while (j > 0 && load<u64>(a + ((j - 1) << 4)) > s) {
      store<u64>(a + (j << 4), load<u64>(a + ((j - 1) << 4)));
      store<u64>(a + (j << 4), load<u64>(a + ((j - 1) << 4), 8), 8);
      j--;
    }
    store<u64>(a + (j << 4), s);
    store<u64>(a + (j << 4), e, 8);
  }
}

// The union's sweep over intervals in start order, clamped to the trace span (the union can never exceed it;
// clamping keeps the start order): the interval being merged [sweepS, sweepE) and the total so far.
let sweepS: u64 = 0;
let sweepE: u64 = 0;
let sweepTotal: u64 = 0;
let sweepFirst = true;

/** Adds [s, e) (in start order) to the sweep. */
// @ts-ignore: decorator
@inline function sweep(s: u64, e: u64): void {
  if (s < spanStart) s = spanStart;
  if (e > spanEnd) e = spanEnd;
  if (e < s) e = s;
  if (sweepFirst) {
    sweepFirst = false;
    sweepS = s;
    sweepE = e;
  } else if (s <= sweepE) {
    if (e > sweepE) sweepE = e;
  } else {
    sweepTotal += sweepE - sweepS;
    sweepS = s;
    sweepE = e;
  }
}

/** Busy time of device d: closes its open interval, sorts the list when out of order and sums the union. */
function unionOf(d: usize): u64 {
  if (load<u32>(d, 108) != 0) {
    pushInterval(d, load<u64>(d, 112), load<u64>(d, 120));
    store<u32>(d, 0, 108);
  }
  const list = <usize>load<u32>(d, 96);
  const n = load<u32>(d, 100);
  intervals += n;
  if (n == 0) return 0;
  const chunks = load<u32>(d, 144);
  sweepTotal = 0;
  sweepFirst = true;
  // Kernels and copies usually arrive in start order per device (noted as they were listed): decoded and swept as
  // they are; else, when they arrive in a few ascending stretches (a stream's records in blocks out of order),
  // the stretches are merged as they are decoded; otherwise decoded into (start, end) pairs and sorted first.
  const sorted = load<u32>(d, 148) == 0;
  if (!sorted && mergeStretches(list, chunks, n)) return sweepTotal + (sweepE - sweepS);
  const pairs: usize = sorted ? 0 : heap.alloc(<usize>n << 4);
  let w = pairs;
  // One cursor over the whole list (no stop entry).
  const x = WALK;
  store<u32>(x, <u32>(<usize>load<u32>(list) + 4));
  store<u32>(x, 0, 4);
  store<u32>(x, 0, 8);
  store<u64>(x, 0, 16);
  while (cursorNext(x, list, chunks, false)) {
    const s = load<u64>(x, 16);
    const e = load<u64>(x, 24);
    if (sorted) sweep(s, e);
    else {
      store<u64>(w, s);
      store<u64>(w, e, 8);
      w += 16;
    }
  }
  if (!sorted) {
    sortPairs(pairs, <usize>n);
    for (let a = pairs; a < w; a += 16) sweep(load<u64>(a), load<u64>(a, 8));
  }
  return sweepTotal + (sweepE - sweepS);
}

// ---- A device's intervals as ascending stretches, merged ---------------------------------------------------------

/**
 * Stretches at most one per this many intervals for {@link mergeStretches} (its cursors take 32 bytes per stretch,
 * the sorted pairs 16 per interval).
 */
const STRETCH_SHARE: u32 = 8;
/** A stretch's cursor: u32 next entry, u32 chunk index, u32 stop entry (the next stretch's first), u32 0, u64 start, u64 end. */
const CURSOR: usize = 32;
/** The cursor of a walk over a whole list ({@link unionOf}). */
const WALK = memory.data(32);

/**
 * Sweeps a device's interval list (`chunks` chunks of `n` encoded intervals at `list`, {@link pushInterval}) in start
 * order without materializing it, when it is made of at most n / {@link STRETCH_SHARE} ascending stretches: one
 * cursor per stretch (each starts with an absolute entry, as an interval that starts before the previous one is
 * stored whole), a heap of cursors by their interval's start. Returns false, sweeping nothing, when there are more
 * stretches. The union does not depend on the order of intervals with the same start, so this sums what sorting
 * would.
 */
function mergeStretches(list: usize, chunks: u32, n: u32): bool {
  const most = n / STRETCH_SHARE;
  const runs = stretches(list, chunks, most, 0);
  if (runs > most) return false;
  const cur = heap.alloc(<usize>runs * CURSOR);
  const hp = heap.alloc(<usize>runs << 2);
  stretches(list, chunks, runs, cur);
  // Each cursor's first interval (absolute), then the heap.
  let live: u32 = 0;
  for (let i: u32 = 0; i < runs; i++) {
    const x = cur + <usize>i * CURSOR;
    if (cursorNext(x, list, chunks, true)) {
      store<u32>(hp + (<usize>live << 2), i);
      heapUp(hp, cur, live);
      live++;
    }
  }
  while (live > 0) {
    const x = cur + <usize>load<u32>(hp) * CURSOR;
    sweep(load<u64>(x, 16), load<u64>(x, 24));
    if (!cursorNext(x, list, chunks, false)) {
      live--;
      store<u32>(hp, load<u32>(hp + (<usize>live << 2)));
    }
    heapDown(hp, cur, live);
  }
  return true;
}

/**
 * Walks a device's interval list and returns how many ascending stretches it holds (the first interval starts one,
 * and so does every interval that starts before the one before it), stopping at `most` + 1. With `cur` set, each
 * stretch's cursor there gets its first entry, and the one before it that entry as its stop.
 */
function stretches(list: usize, chunks: u32, most: u32, cur: usize): u32 {
  let runs: u32 = 0;
  let prev: u64 = 0;
  for (let c: u32 = 0; c < chunks; c++) {
    const q = <usize>load<u32>(list + (<usize>c << 2));
    const end = q + <usize>load<u32>(q);
    let r = q + 4;
    while (r < end) {
      const len = load<u32>(r, 4);
      const st = len != LONG ? prev + <u64>load<u32>(r) : load<u64>(r, 8);
      if (runs == 0 || st < prev) {
        if (cur != 0) {
          const x = cur + <usize>runs * CURSOR;
          store<u32>(x, <u32>r);
          store<u32>(x, c, 4);
          store<u32>(x, 0, 8); // set by the next stretch (0: the list's end)
          store<u64>(x, 0, 16); // the start a first relative entry counts from (only the list's first can be one)
          if (runs > 0) store<u32>(x - CURSOR, <u32>r, 8);
        }
        runs++;
        if (runs > most) return runs;
      }
      prev = st;
      r += len != LONG ? 8 : 24;
    }
  }
  return runs;
}

/**
 * Decodes the next interval of cursor `x` into its start and end (`first`: the stretch's first, an absolute entry);
 * false at the stretch's end (its stop entry, or the list's end).
 */
// @ts-ignore: decorator
@inline function cursorNext(x: usize, list: usize, chunks: u32, first: bool): bool {
  let r = <usize>load<u32>(x);
  let c = load<u32>(x, 4);
  const q = <usize>load<u32>(list + (<usize>c << 2));
  if (r >= q + <usize>load<u32>(q)) {
    c++;
    if (c >= chunks) return false;
    r = <usize>load<u32>(list + (<usize>c << 2)) + 4;
  }
  if (!first && r == <usize>load<u32>(x, 8)) return false;
  const len = load<u32>(r, 4);
  let st: u64;
  let en: u64;
  if (len != LONG) {
    st = load<u64>(x, 16) + <u64>load<u32>(r);
    en = st + <u64>len;
    r += 8;
  } else {
    st = load<u64>(r, 8);
    en = load<u64>(r, 16);
    r += 24;
  }
  store<u32>(x, <u32>r);
  store<u32>(x, c, 4);
  store<u64>(x, st, 16);
  store<u64>(x, en, 24);
  return true;
}

/** Start of the interval of the cursor at heap position i. */
// @ts-ignore: decorator
@inline function hpStart(hp: usize, cur: usize, i: u32): u64 {
  return load<u64>(cur + <usize>load<u32>(hp + (<usize>i << 2)) * CURSOR, 16);
}

/** Moves heap entry i up to its place (a min-heap of cursors by start). */
function heapUp(hp: usize, cur: usize, i: u32): void {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (hpStart(hp, cur, p) <= hpStart(hp, cur, i)) return;
    const a = load<u32>(hp + (<usize>p << 2));
    store<u32>(hp + (<usize>p << 2), load<u32>(hp + (<usize>i << 2)));
    store<u32>(hp + (<usize>i << 2), a);
    i = p;
  }
}

/** Moves the root of the heap of `n` entries down to its place. */
function heapDown(hp: usize, cur: usize, n: u32): void {
  let i: u32 = 0;
  while (true) {
    const l: u32 = 2 * i + 1;
    if (l >= n) return;
    let m = l;
    if (l + 1 < n && hpStart(hp, cur, l + 1) < hpStart(hp, cur, l)) m = l + 1;
    if (hpStart(hp, cur, i) <= hpStart(hp, cur, m)) return;
    const a = load<u32>(hp + (<usize>m << 2));
    store<u32>(hp + (<usize>m << 2), load<u32>(hp + (<usize>i << 2)));
    store<u32>(hp + (<usize>i << 2), a);
    i = m;
  }
}

/** FNV-1a of [p, p+n). */
function fnv(p: usize, n: u32): u64 {
  let h: u64 = 0xcbf29ce484222325;
  for (let i: u32 = 0; i < n; i++) {
    h ^= <u64>load<u8>(p + i);
    h *= 0x100000001b3;
  }
  return h;
}

/**
 * Folds name entries of the same kind and text (one text can reach the emitter through several string-table
 * entries) into the first one; returns how many entries remain (folded ones get count 0 and are skipped).
 */
function foldNames(): u32 {
  const byText = tableNew(nameCount);
  let kept: u32 = 0;
  for (let i: u32 = 0; i < nameCount; i++) {
    const e = load<usize>(nameList + (<usize>i << 2));
    const p = <usize>load<u32>(e, 4);
    const n = load<u32>(e, 8);
    const key = fnv(p, n) ^ (<u64>load<u32>(e) << 56);
    const slot = tableUpsert(byText, key == 0xffffffffffffffff ? 0 : key);
    if (!inserted) {
      const f = <usize>load<u64>(slot);
      if (load<u32>(f) == load<u32>(e) && load<u32>(f, 8) == n && memory.compare(<usize>load<u32>(f, 4), p, n) == 0) {
        add(f, 16, load<u64>(e, 16));
        add(f, 24, load<u64>(e, 24));
        if (load<u64>(e, 32) < load<u64>(f, 32)) store<u64>(f, load<u64>(e, 32), 32);
        if (load<u64>(e, 40) > load<u64>(f, 40)) store<u64>(f, load<u64>(e, 40), 40);
        store<u64>(e, 0, 16);
        continue;
      }
      // Hash collision between different texts: both stay.
    } else store<u64>(slot, e);
    kept++;
  }
  return kept;
}

// @ts-ignore: decorator
@inline function pad8(n: usize): usize {
  return (n + 7) & ~(<usize>7);
}

/** Ends the pass: computes busy times and writes the result through the output window. */
export function statsEnd(): void {
  // Devices in id order (insertion sort: a handful).
  for (let i: u32 = 1; i < devCount; i++) {
    const d = load<usize>(devList + (<usize>i << 2));
    let j = i;
    while (j > 0 && load<u32>(load<usize>(devList + (<usize>(j - 1) << 2))) > load<u32>(d)) {
      store<usize>(devList + (<usize>j << 2), load<usize>(devList + (<usize>(j - 1) << 2)));
      j--;
    }
    store<usize>(devList + (<usize>j << 2), d);
  }
  for (let i: u32 = 0; i < devCount; i++) {
    const d = load<usize>(devList + (<usize>i << 2));
    store<u64>(d, unionOf(d), 8);
  }
  const names = foldNames();
  let nameBytes: usize = 0;
  for (let i: u32 = 0; i < nameCount; i++) {
    const e = load<usize>(nameList + (<usize>i << 2));
    if (load<u64>(e, 16) != 0) nameBytes += <usize>load<u32>(e, 8);
  }
  nameBytes = pad8(nameBytes);
  let copies: u32 = 0;
  for (let i: u32 = 0; i < COPY_KINDS * 4; i++) {
    if (load<u64>(copyTable + (<usize>i << 5)) != 0) copies++;
  }

  // Header.
  const h = heap.alloc(HEADER);
  memory.fill(h, 0, HEADER);
  store<u32>(h, MAGIC);
  store<u32>(h, VERSION, 4);
  store<u32>(h, devCount, 8);
  store<u32>(h, names, 12);
  store<u32>(h, copies, 16);
  store<u32>(h, <u32>nameBytes, 20);
  store<u64>(h, events, 24);
  store<u64>(h, spanStart, 32);
  store<u64>(h, spanEnd, 40);
  store<u64>(h, intervals, 48);
  O.raw(h, HEADER);
  for (let i: u32 = 0; i < devCount; i++) O.raw(load<usize>(devList + (<usize>i << 2)), DEV_OUT);
  const row = heap.alloc(NAME_OUT);
  for (let i: u32 = 0; i < COPY_KINDS * 4; i++) {
    const c = copyTable + (<usize>i << 5);
    if (load<u64>(c) == 0) continue;
    store<u32>(row, i >> 2);
    store<u32>(row, i & 3, 4); // bit 0 peer, bit 1 bytes unknown
    memory.copy(row + 8, c, 32);
    O.raw(row, COPY_OUT);
  }
  let off: u32 = 0;
  for (let i: u32 = 0; i < nameCount; i++) {
    const e = load<usize>(nameList + (<usize>i << 2));
    if (load<u64>(e, 16) == 0) continue;
    memory.copy(row, e, NAME_OUT);
    store<u32>(row, off, 4);
    store<u32>(row, 0, 12);
    O.raw(row, NAME_OUT);
    off += load<u32>(e, 8);
  }
  for (let i: u32 = 0; i < nameCount; i++) {
    const e = load<usize>(nameList + (<usize>i << 2));
    if (load<u64>(e, 16) == 0) continue;
    O.raw(<usize>load<u32>(e, 4), <usize>load<u32>(e, 8));
  }
  const padding = nameBytes - <usize>off;
  if (padding != 0) {
    memory.fill(row, 0, 8);
    O.raw(row, padding);
  }
  O.flush();
}
