/**
 * Synapse recipe launches (Habana, vendor 5): the host → device join of docs/decoders/hpu.md "Host → device flows",
 * over the whole file whatever order its HPU_TRACE chunks come in.
 *
 * The rule is the bridge's: a host enqueue (`enqueueWithExternalEvents`, recipeId ≠ 0) is the launch of its recipe on
 * its device until the next one; device work of the recipe links to the latest launch before it. "Before" is in the
 * order the collector wrote the buffers — their chunk sequence numbers (decode/decoder.ts `chunkSeq`; a reused
 * number falls back to the file offset) — then entry order within a buffer: a file whose pulls were swapped or moved
 * converts as the file as written (before, the buffers were walked in file order, and work whose launch a later chunk
 * held lost its correlation). Launches are numbered 1, 2, … in that order (the correlation id).
 *
 * Both passes walk the file in file order, so the join is done in two steps. Within a buffer, work after a launch of
 * its recipe links to it at once. Work before the buffer's first launch of its recipe (the buffer's **head** for the
 * recipe, one record per buffer and recipe) links to the latest launch of the recipe in the buffers written before
 * it, which pass 1 may not have read yet: the end of pass 1 ({@link launchesResolve}) sorts the buffers by sequence
 * number, numbers the launches, and walks the buffers in that order, handing each head the latest launch of its
 * recipe so far. Pass 2 reads every link from pass 1's records.
 *
 * Arrows (Chrome ac2g): a launch starts one when some device work linked to it is kept (pass 1), and its first such
 * work in the same order (sequence number, file offset) ends it; should the window drop that work after all (times far
 * outside the run, known only at the end of pass 1), the first linked work pass 2 emits ends it instead (file order).
 *
 * Memory: per launch one {@link REC}-byte record, per buffer {@link BUF} bytes, per (buffer, recipe) with head work one
 * record and a table slot: flat arrays and open-addressing tables, nothing allocated per entry.
 */
import { Table, tableNew, tableUpsert, tableFind, tableCount, tableSlots, tableKeyAt, tableValueAt, inserted } from "../util/hash_table";
import { regrowZeroed } from "../util/regrow";
import { swap16 } from "../util/swap16";
import { timingCheck, timingAllOutside, Timing } from "../model/timing";
import { chunkSeq } from "./decoder";

/** A link to a head record (bit 31 set; the rest its index), else a launch serial (1, 2, … in file order); 0: none. */
export const HEAD: u32 = 0x80000000;

// Record flags (launch and head records).
/** Launch: its host enqueue is kept (pass 1; cleared in pass 2 when the run's window drops it: launchesWindow). */
const F_KEPT: u32 = 1;
/** Launch or head: some kept device work links to it (pass 1). */
const F_LINKED: u32 = 2;
/** Launch or head: its first kept linked work is noted (seq @8, file offset @16, times @24, @32). */
const F_FIRST: u32 = 4;
/** Launch: the window drops its first linked work: the arrow goes to the first linked work emitted (pass 2). */
const F_FALLBACK: u32 = 8;

// Launch and head records, REC bytes: flags u32 @0; u32 @4: a launch's number (correlation id), a head's launch
// serial (end of pass 1); first kept linked work: seq u32 @8, file offset u64 @16, vendor start u64 @24, end u64 @32
// (0: never closed); a head's buffer index u32 @12 and recipe key number u32 @40; a launch's kept host enqueue:
// vendor start u64 @48, end u64 @56 (0: never closed), for the run's window (launchesWindow); over all its kept
// linked work (set with F_LINKED): the latest start u64 @64 and the earliest end u64 @72 (a never closed one's: its
// start), which tell when the window drops all of it (launchesWindow).
const REC: usize = 80;
let launchRecs: usize = 0; // by serial (1-based)
let launchN: u32 = 0;
let launchCap: u32 = 0;
let headRecs: usize = 0; // by head index
let headN: u32 = 0;
let headCap: u32 = 0;

// Buffers in file order (index = order pass 1 opened them), BUF bytes: seq u32 @0, launches of the buffers before in
// file order u32 @4 (its launch serials follow), its launches u32 @8.
const BUF: usize = 12;
let bufs: usize = 0;
let bufN: u32 = 0;
let bufCap: u32 = 0;
let bufIndex: Table = 0; // buffer file offset → buffer index + 1

let recipeKeys: Table = 0; // (device << 16 | recipeId) → recipe key number + 1
let heads: Table = 0; // (buffer index << 32 | recipe key number) → head index + 1
let lastLaunch: Table = 0; // (buffer index << 32 | recipe key number) → serial of the buffer's last launch of it

// Per pass.
let launches: Table = 0; // (device << 16 | recipeId) → (buffer index << 32 | link) of the latest launch or head
let ended: Table = 0; // launch serial → 1: its arrow was drawn (F_FALLBACK launches, pass 2)
let windowChecked = false;

// The buffer being walked.
const NO_BUF: u32 = 0xffffffff;
let curBuf: u32 = NO_BUF;
let curBase: u32 = 0;
let curLocal: u32 = 0;
/** Sequence number of the buffer being walked (decode/decoder.ts chunkSeq). */
export let curSeq: u32 = 0;

/** Forgets per-file state (after heap.reset()). */
export function launchesReset(): void {
  launchRecs = headRecs = bufs = 0;
  launchN = launchCap = headN = headCap = bufN = bufCap = 0;
  bufIndex = recipeKeys = heads = lastLaunch = 0;
  launches = ended = 0;
  windowChecked = false;
  curBuf = NO_BUF;
}

/** Creates the tables (decoder install). */
export function launchesInit(): void {
  if (bufIndex != 0) return;
  bufIndex = tableNew(64);
  recipeKeys = tableNew(64);
  heads = tableNew(64);
  lastLaunch = tableNew(64);
  launchesPass();
}

/** Starts a pass: the per-pass state over (both passes walk the file the same way). */
export function launchesPass(): void {
  launches = tableNew(64);
  ended = tableNew(64);
  curBuf = NO_BUF;
}

// @ts-ignore: decorator
@inline function launchRec(serial: u32): usize {
  return launchRecs + <usize>serial * REC;
}
// @ts-ignore: decorator
@inline function headRec(i: u32): usize {
  return headRecs + <usize>i * REC;
}
// @ts-ignore: decorator
@inline function bufRec(i: u32): usize {
  return bufs + <usize>i * BUF;
}

/**
 * Opens the buffer at file offset `off` (the chunk being scanned or decoded: its seq is decode/decoder.ts chunkSeq).
 * Pass 1 (`report`) numbers it; pass 2 finds pass 1's number (a buffer pass 1 never walked links nothing).
 */
export function launchesBuffer(off: u64, report: bool): void {
  curSeq = chunkSeq;
  curLocal = 0;
  if (report) {
    const s = tableUpsert(bufIndex, off);
    if (inserted) {
      if (bufN == bufCap) {
        const cap = bufCap == 0 ? 16 : bufCap << 1;
        bufs = regrowZeroed(bufs, <usize>bufCap * BUF, <usize>cap * BUF);
        bufCap = cap;
      }
      const b = bufRec(bufN);
      store<u32>(b, curSeq);
      store<u32>(b, launchN, 4);
      store<u32>(b, 0, 8);
      store<u64>(s, <u64>(++bufN));
    }
    curBuf = <u32>load<u64>(s) - 1;
  } else {
    const s = tableFind(bufIndex, off);
    curBuf = s == 0 ? NO_BUF : <u32>load<u64>(s) - 1;
  }
  curBase = curBuf == NO_BUF ? 0 : load<u32>(bufRec(curBuf), 4);
}

/** The recipe key number of `lk` (device << 16 | recipeId). */
function recipeKey(lk: u64): u32 {
  const s = tableUpsert(recipeKeys, lk);
  if (inserted) store<u64>(s, <u64>tableCount(recipeKeys));
  return <u32>load<u64>(s) - 1;
}

/** A host enqueue of recipe key `lk` in the buffer walked: a new launch; returns its serial (0 outside any buffer). */
export function launchNew(lk: u64, report: bool): u32 {
  if (curBuf == NO_BUF) return 0;
  const serial = curBase + ++curLocal;
  if (report) {
    if (serial >= launchCap) {
      const cap = launchCap == 0 ? 64 : launchCap << 1;
      launchRecs = regrowZeroed(launchRecs, <usize>launchCap * REC, <usize>cap * REC);
      launchCap = cap;
    }
    launchN = serial;
    store<u32>(bufRec(curBuf), curLocal, 8);
    store<u64>(tableUpsert(lastLaunch, (<u64>curBuf << 32) | recipeKey(lk)), serial);
  } else if (serial > launchN) return 0; // not pass 1's buffer
  store<u64>(tableUpsert(launches, lk), (<u64>curBuf << 32) | serial);
  return serial;
}

/**
 * The link of device work of recipe key `lk` in the buffer walked: the buffer's latest launch of the recipe before
 * it, else the buffer's head for the recipe (resolved at the end of pass 1). 0 outside any buffer.
 */
export function launchLink(lk: u64, report: bool): u32 {
  if (curBuf == NO_BUF) return 0;
  const v = tableUpsert(launches, lk);
  if (!inserted && <u32>(load<u64>(v) >> 32) == curBuf) return <u32>load<u64>(v);
  // The buffer's first work of the recipe before any launch of it here: its head (then cached in `launches`).
  const key = (<u64>curBuf << 32) | recipeKey(lk);
  let link: u32 = 0;
  if (report) {
    const s = tableUpsert(heads, key);
    if (inserted) {
      if (headN == headCap) {
        const cap = headCap == 0 ? 64 : headCap << 1;
        headRecs = regrowZeroed(headRecs, <usize>headCap * REC, <usize>cap * REC);
        headCap = cap;
      }
      const h = headRec(headN);
      store<u32>(h, curBuf, 12);
      store<u32>(h, <u32>(key & 0xffffffff), 40);
      store<u64>(s, <u64>(++headN));
    }
    link = HEAD | (<u32>load<u64>(s) - 1);
  } else {
    const s = tableFind(heads, key);
    if (s != 0) link = HEAD | (<u32>load<u64>(s) - 1);
  }
  store<u64>(v, (<u64>curBuf << 32) | link); // `v` is still the slot: only other tables were written since
  return link;
}

/** True when (seq a, file offset aAt) comes before (b, bAt) in the order written. */
// @ts-ignore: decorator
@inline function before(a: u32, aAt: u64, b: u32, bAt: u64): bool {
  return a < b || (a == b && aAt < bAt);
}

/**
 * Notes kept linked work from `start` to `end` (0: never closed) in record `r`'s span: its latest start and earliest
 * end. Before {@link noteFirst} for the same work (F_LINKED not yet set: the first).
 */
function noteSpan(r: usize, start: u64, end: u64): void {
  const e = end == 0 ? start : end;
  const linked = (load<u32>(r) & F_LINKED) != 0;
  if (!linked || start > load<u64>(r, 64)) store<u64>(r, start, 64);
  if (!linked || e < load<u64>(r, 72)) store<u64>(r, e, 72);
}

/** Notes kept linked work (seq, at, vendor times) as record `r`'s first when it comes before the one noted. */
function noteFirst(r: usize, seq: u32, at: u64, start: u64, end: u64): void {
  const f = load<u32>(r);
  if ((f & F_FIRST) != 0 && !before(seq, at, load<u32>(r, 8), load<u64>(r, 16))) return;
  store<u32>(r, f | F_FIRST | F_LINKED);
  store<u32>(r, seq, 8);
  store<u64>(r, at, 16);
  store<u64>(r, start, 24);
  store<u64>(r, end, 32);
}

/**
 * Pass 1: an entry with link `link` is kept (its times usable): the host enqueue itself (`host`), or device work
 * linked to it, which begins at file offset `at` of the buffer with sequence number `seq`, from `start` to `end`
 * (vendor ns; 0: never closed). An arrow is drawn only where both ends are kept.
 */
export function launchKept(host: bool, link: u32, seq: u32, at: u64, start: u64, end: u64): void {
  if (link == 0) return;
  if (host) {
    if ((link & HEAD) != 0) return;
    const r = launchRec(link);
    store<u32>(r, load<u32>(r) | F_KEPT);
    store<u64>(r, start, 48);
    store<u64>(r, end, 56);
    return;
  }
  const r = (link & HEAD) != 0 ? headRec(link & ~HEAD) : launchRec(link);
  noteSpan(r, start, end);
  noteFirst(r, seq, at, start, end);
}

// ---- End of pass 1 ---------------------------------------------------------------------------------------------------

/** Sorts `n` 16-byte entries at `p` by their first u64 (heapsort: no allocation, n log n). */
function sort16(p: usize, n: u32): void {
  for (let i = n >> 1; i > 0; i--) sift(p, i - 1, n);
  for (let end = n; end > 1; end--) {
    swap16(p, p + (<usize>(end - 1) << 4));
    sift(p, 0, end - 1);
  }
}
function sift(p: usize, i: u32, n: u32): void {
  while (true) {
    let m = i;
    const l: u32 = (i << 1) + 1;
    const r: u32 = l + 1;
    if (l < n && load<u64>(p + (<usize>l << 4)) > load<u64>(p + (<usize>m << 4))) m = l;
    if (r < n && load<u64>(p + (<usize>r << 4)) > load<u64>(p + (<usize>m << 4))) m = r;
    if (m == i) return;
    swap16(p + (<usize>i << 4), p + (<usize>m << 4));
    i = m;
  }
}

/**
 * End of pass 1 (after the open pairs were noted): the buffers in the order written (seq, then file order), the
 * launches numbered in it, and each head linked to the latest launch of its recipe in the buffers before its own.
 */
export function launchesResolve(): void {
  if (bufN == 0) return;
  // Buffers by (seq, file order): rank, and launch numbers in that order.
  const order = heap.alloc(<usize>bufN << 4);
  for (let i: u32 = 0; i < bufN; i++) {
    store<u64>(order + (<usize>i << 4), (<u64>load<u32>(bufRec(i)) << 32) | i);
    store<u64>(order + (<usize>i << 4), 0, 8);
  }
  sort16(order, bufN);
  const rank = heap.alloc(<usize>bufN << 2);
  let number: u32 = 0;
  for (let k: u32 = 0; k < bufN; k++) {
    const i = <u32>(load<u64>(order + (<usize>k << 4)) & 0xffffffff);
    store<u32>(rank + (<usize>i << 2), k);
    const b = bufRec(i);
    const base = load<u32>(b, 4);
    const n = load<u32>(b, 8);
    for (let j: u32 = 1; j <= n; j++) store<u32>(launchRec(base + j), ++number, 4);
  }
  heap.free(order);
  if (headN == 0) {
    heap.free(rank);
    return; // no work waits for a launch of another buffer
  }
  // Heads (kind 0) and each buffer's last launch of a recipe (kind 1), by (rank, kind): {rank << 1 | kind, recipe key
  // number << 32 | head index or serial}.
  const items = heap.alloc(<usize>(headN + tableCount(lastLaunch)) << 4);
  let m: u32 = 0;
  for (let h: u32 = 0; h < headN; h++) {
    const r = headRec(h);
    const it = items + (<usize>(m++) << 4);
    store<u64>(it, <u64>load<u32>(rank + (<usize>load<u32>(r, 12) << 2)) << 1);
    store<u64>(it, (<u64>load<u32>(r, 40) << 32) | h, 8);
  }
  const slots = tableSlots(lastLaunch);
  for (let s: u32 = 0; s < slots; s++) {
    const k = tableKeyAt(lastLaunch, s);
    if (k == 0xffffffffffffffff) continue;
    const it = items + (<usize>(m++) << 4);
    store<u64>(it, (<u64>load<u32>(rank + (<usize>(k >> 32) << 2)) << 1) | 1);
    store<u64>(it, ((k & 0xffffffff) << 32) | (tableValueAt(lastLaunch, s) & 0xffffffff), 8);
  }
  sort16(items, m);
  const latest = tableNew(64); // recipe key number → serial of its latest launch so far
  for (let i: u32 = 0; i < m; i++) {
    const it = items + (<usize>i << 4);
    const rk = load<u64>(it, 8) >> 32;
    const v = <u32>load<u64>(it, 8);
    if ((load<u64>(it) & 1) != 0) {
      store<u64>(tableUpsert(latest, rk), <u64>v);
      continue;
    }
    const h = headRec(v);
    const s = tableFind(latest, rk);
    const serial = s == 0 ? <u32>0 : <u32>load<u64>(s);
    store<u32>(h, serial, 4);
    const f = load<u32>(h);
    if (serial != 0 && (f & F_FIRST) != 0) {
      const l = launchRec(serial);
      noteSpan(l, load<u64>(h, 64), load<u64>(h, 72));
      noteFirst(l, load<u32>(h, 8), load<u64>(h, 16), load<u64>(h, 24), load<u64>(h, 32));
    }
  }
  heap.free(items);
  heap.free(rank);
}

// ---- Pass 2 ----------------------------------------------------------------------------------------------------------

/**
 * Pass 2, before the first buffer: the window is known now (model/timing.ts), so a launch whose first linked work it
 * drops hands its arrow to the first linked work emitted ({@link F_FALLBACK}), a launch whose host enqueue it drops
 * is kept no more: it draws no arrow (its work would end one that starts nowhere: an 'f' with no 's'), and a launch
 * whose linked work it drops all of (every start before the window or every end after it) starts none (an 's' with
 * no 'f'). (Work dropped on both sides of the window and none inside it still leaves the launch its 's'.)
 */
export function launchesWindow(): void {
  if (windowChecked) return;
  windowChecked = true;
  for (let s: u32 = 1; s <= launchN; s++) {
    const r = launchRec(s);
    let f = load<u32>(r);
    if ((f & F_KEPT) != 0 && timingCheck(load<u64>(r, 48), load<u64>(r, 56)) == Timing.DROP) f &= ~F_KEPT;
    if ((f & F_FIRST) != 0 && timingCheck(load<u64>(r, 24), load<u64>(r, 32)) == Timing.DROP) {
      f |= F_FALLBACK;
      if (timingAllOutside(load<u64>(r, 64), load<u64>(r, 72))) f &= ~F_LINKED;
    }
    store<u32>(r, f);
  }
}

/** The launch serial `link` stands for (a head's: the one the end of pass 1 gave it), 0 when none. */
export function launchSerial(link: u32): u32 {
  if ((link & HEAD) == 0) return link <= launchN ? link : 0;
  const h = link & ~HEAD;
  return h < headN ? load<u32>(headRec(h), 4) : 0;
}

/** Correlation id of launch `serial` (its number in the order written), 0 for none. */
export function launchNumber(serial: u32): u32 {
  return serial == 0 ? 0 : load<u32>(launchRec(serial), 4);
}

/** True when launch `serial`'s enqueue starts an arrow: some kept device work links to it (pass 1). */
export function launchFlowStart(serial: u32): bool {
  return serial != 0 && (load<u32>(launchRec(serial)) & F_LINKED) != 0;
}

/**
 * True when the device work of launch `serial` beginning at file offset `at` of the buffer with sequence number
 * `seq`, emitted now, ends its launch's arrow: the launch's enqueue is kept and this is its first linked work in the
 * order written (or, when the window dropped that one, the first linked work emitted).
 */
export function launchFlowEnd(serial: u32, seq: u32, at: u64): bool {
  if (serial == 0) return false;
  const r = launchRec(serial);
  const f = load<u32>(r);
  if ((f & F_KEPT) == 0) return false;
  if ((f & F_FALLBACK) != 0) {
    tableUpsert(ended, serial);
    return inserted;
  }
  return (f & F_FIRST) != 0 && load<u32>(r, 8) == seq && load<u64>(r, 16) == at;
}
