/**
 * CUDA event records (CUPTI CUDA_EVENT: a cudaEventRecord on a stream) for the syncs that wait on them. For an event
 * sync or a stream wait, {@link cudaEventWaited} finds the last record of the same event (context, event id) whose
 * correlation id is below the sync's: the stream that recorded it and that record's correlation id — what Kineto
 * writes as `wait_on_stream` and `wait_on_cuda_event_record_corr_id`, and what HTA's critical-path analysis draws its
 * stream-to-stream edges from.
 *
 * Pass 2, in file order (CUPTI writes both record kinds when the API call returns, so a record nearly always comes
 * before the syncs that wait on it). Bounded memory: the last {@link RING} records of each event, in two generations
 * of at most {@link MAX_EVENTS} events each: when the current one is full the older is dropped and an event seen
 * again is carried into the new one, so only events not recorded for a whole generation are forgotten (a wait on one
 * is unknown, -1, as Kineto writes a wait it cannot resolve).
 *
 * Late recordings: each thread has its own activity buffer, so a recording on one thread can reach the file in a
 * buffer after the one holding another thread's wait on it. Pass 1 finds them: it keeps, per event, the largest
 * correlation id of a wait seen so far ({@link cudaEventWaitScan}); a recording below it ({@link cudaEventRecordScan})
 * came late and is kept aside, every one of them (at most {@link MAX_LATE} recordings in all, 16 bytes each, sorted
 * once by event and correlation id at the first wait of pass 2), where pass 2's waits look too: a wait takes the
 * nearest recording below it of both. The waits table is bounded by {@link MAX_WAITED} events (past it, it starts
 * over: a late recording of an event waited on only before that is missed, and the wait names the event's previous
 * recording or none); so is the list (late recordings past it are not kept).
 */
import { Table, tableClear, tableCount, tableFind, tableNew, tableUpsert } from "../util/hash_table";
import { regrow } from "../util/regrow";
import { swap16 } from "../util/swap16";

/** Records kept per event: a wait is on a recent record of its event. */
const RING: u32 = 8;
/** Bytes per event: u32 count, u32 0, then RING × (u32 correlation id, u32 stream), ascending by correlation id. */
const RING_BYTES: usize = 8 + <usize>RING * 8;
/** Events per generation (1.2 MB of records, at most 1 MB of table each). */
const MAX_EVENTS: u32 = 16384;

// Two generations (0 and 1; `cur` is the current one), each a table (key → ring address) and a pool of MAX_EVENTS
// rings. Plain globals, not arrays: nothing here is allocated before the file's heap exists.
let table0: Table = 0;
let table1: Table = 0;
let pool0: usize = 0;
let pool1: usize = 0;
let used: u32 = 0; // rings handed out in the current generation
let cur: i32 = 0;

// @ts-ignore: decorator
@inline function tableOf(g: i32): Table {
  return g == 0 ? table0 : table1;
}

/** What the last {@link cudaEventWaited} found: the recording stream and correlation id (u32 as the record has them). */
export let waitStream: u32 = 0;
export let waitCorr: u32 = 0;

// Pass 1's tables (kept through every pass 2 of the file): waits seen (key → largest correlation id), and the late
// recordings, {u64 key, u64 corr << 32 | stream} each, in file order until pass 2 sorts them.
let waitMax: Table = 0;
let late: usize = 0;
let lateN: u32 = 0;
let lateCap: u32 = 0;
let lateSorted = false;
/** Events whose waits pass 1 keeps before it starts over (a table of at most 2 MiB at its load of ½). */
const MAX_WAITED: u32 = 65536;
/** Late recordings kept (16 B each: 4 MiB at most, grown as they come). */
const MAX_LATE: u32 = 262144;

/** Forgets every record (the engine's heap was reset: a new file). */
export function cudaEventsReset(): void {
  table0 = table1 = 0;
  pool0 = pool1 = 0;
  used = 0;
  cur = 0;
  waitMax = 0;
  late = 0;
  lateN = lateCap = 0;
  lateSorted = false;
}

/** Forgets pass 2's records but keeps the memory and pass 1's late recordings (another pass 2 starts from the file's beginning). */
export function cudaEventsRestart(): void {
  if (table0 != 0) tableClear(table0);
  if (table1 != 0) tableClear(table1);
  used = 0;
  cur = 0;
}

/** The ring of `key` in generation `g`, or 0. */
function ringIn(g: i32, key: u64): usize {
  const t = tableOf(g);
  if (t == 0) return 0;
  const v = tableFind(t, key);
  return v == 0 ? 0 : <usize>load<u64>(v);
}

/** Notes a CUDA event record: event `eventId` of context `ctx` recorded on `stream` by the call `corr`. */
export function cudaEventNote(ctx: u32, eventId: u32, corr: u32, stream: u32): void {
  if (table0 == 0) {
    table0 = tableNew(1024);
    table1 = tableNew(1024);
    pool0 = heap.alloc(<usize>MAX_EVENTS * RING_BYTES);
    pool1 = heap.alloc(<usize>MAX_EVENTS * RING_BYTES);
    used = 0;
    cur = 0;
  }
  const key = (<u64>ctx << 32) | <u64>eventId;
  let ring = ringIn(cur, key);
  if (ring == 0) {
    if (used == MAX_EVENTS) {
      // The current generation is full: it becomes the older one, the older one's memory the new current.
      cur ^= 1;
      tableClear(tableOf(cur));
      used = 0;
    }
    ring = (cur == 0 ? pool0 : pool1) + <usize>used * RING_BYTES;
    used++;
    // An event the older generation knows keeps its recordings.
    const old = ringIn(cur ^ 1, key);
    if (old != 0) memory.copy(ring, old, RING_BYTES);
    else store<u64>(ring, 0);
    store<u64>(tableUpsert(tableOf(cur), key), <u64>ring);
  }
  ringInsert(ring, corr, stream);
}

/** Puts the recording (`corr`, `stream`) into `ring` in correlation order, dropping its oldest when full. */
function ringInsert(ring: usize, corr: u32, stream: u32): void {
  let n = load<u32>(ring);
  const at = ring + 8;
  if (n == RING) {
    // Full: the oldest goes, unless this record is older than all kept (then it could answer no later wait).
    if (corr <= load<u32>(at)) return;
    memory.copy(at, at + 8, <usize>(RING - 1) * 8);
    n = RING - 1;
  }
  // Insert in order; records come in correlation order, so this is nearly always the end.
  let i = n;
  while (i > 0 && load<u32>(at + <usize>(i - 1) * 8) > corr) {
    store<u64>(at + <usize>i * 8, load<u64>(at + <usize>(i - 1) * 8));
    i--;
  }
  store<u32>(at + <usize>i * 8, corr);
  store<u32>(at + <usize>i * 8, stream, 4);
  store<u32>(ring, n + 1);
}

/**
 * The last record of event `eventId` of context `ctx` before the call `corr` (the largest correlation id below it):
 * true with {@link waitStream} and {@link waitCorr} set, false when none is kept.
 */
export function cudaEventWaited(ctx: u32, eventId: u32, corr: u32): bool {
  const key = (<u64>ctx << 32) | <u64>eventId;
  let ring = ringIn(cur, key);
  if (ring == 0) ring = ringIn(cur ^ 1, key);
  let found = ring != 0 && ringBefore(ring, corr, 0);
  // A late recording answers when it is nearer the wait than what came in order (or nothing did).
  if (lateN != 0 && lateBefore(key, corr, found ? waitCorr : 0)) found = true;
  return found;
}

/**
 * Sets {@link waitCorr} and {@link waitStream} to the last recording in `ring` with a correlation id below `corr`
 * and above `above`; false (unchanged) when there is none.
 */
function ringBefore(ring: usize, corr: u32, above: u32): bool {
  const at = ring + 8;
  for (let i = <i32>load<u32>(ring) - 1; i >= 0; i--) {
    const c = load<u32>(at + <usize>i * 8);
    if (c < corr) {
      if (c <= above) return false;
      waitCorr = c;
      waitStream = load<u32>(at + <usize>i * 8, 4);
      return true;
    }
  }
  return false;
}

/** Pass 1: an event sync or stream wait on event `eventId` of context `ctx` by the call `corr`. */
export function cudaEventWaitScan(ctx: u32, eventId: u32, corr: u32): void {
  const key = (<u64>ctx << 32) | <u64>eventId;
  if (waitMax == 0) waitMax = tableNew(256);
  else if (tableCount(waitMax) >= MAX_WAITED && tableFind(waitMax, key) == 0) tableClear(waitMax);
  const v = tableUpsert(waitMax, key);
  if (<u64>corr > load<u64>(v)) store<u64>(v, <u64>corr);
}

/**
 * Pass 1: a recording of event `eventId` of context `ctx` on `stream` by the call `corr`. Kept aside when a wait on
 * the event with a larger correlation id came before it in the file (a late buffer); otherwise pass 2 sees it in
 * order.
 */
export function cudaEventRecordScan(ctx: u32, eventId: u32, corr: u32, stream: u32): void {
  if (waitMax == 0) return;
  const key = (<u64>ctx << 32) | <u64>eventId;
  const w = tableFind(waitMax, key);
  if (w == 0 || load<u64>(w) <= <u64>corr || lateN == MAX_LATE) return;
  if (lateN == lateCap) {
    const cap = lateCap == 0 ? <u32>256 : lateCap * 2;
    late = regrow(late, <usize>lateN << 4, <usize>cap << 4);
    lateCap = cap;
  }
  const p = late + (<usize>lateN << 4);
  store<u64>(p, key);
  store<u64>(p, (<u64>corr << 32) | <u64>stream, 8);
  lateN++;
}

/** Entry `i` of the late list is before entry `j` (by event, then correlation id). */
// @ts-ignore: decorator
@inline function lateLess(i: u32, j: u32): bool {
  const a = late + (<usize>i << 4);
  const b = late + (<usize>j << 4);
  const ka = load<u64>(a);
  const kb = load<u64>(b);
  return ka < kb || (ka == kb && load<u64>(a, 8) < load<u64>(b, 8));
}

/** Swaps late entries `i` and `j`. */
// @ts-ignore: decorator
@inline function lateSwap(i: u32, j: u32): void {
  swap16(late + (<usize>i << 4), late + (<usize>j << 4));
}

/** Sifts late entry `i` down the max-heap of the first `n` entries. */
function lateSift(i: u32, n: u32): void {
  for (;;) {
    let m = i;
    const l: u32 = 2 * i + 1;
    if (l < n && lateLess(m, l)) m = l;
    if (l + 1 < n && lateLess(m, l + 1)) m = l + 1;
    if (m == i) return;
    lateSwap(i, m);
    i = m;
  }
}

/** Sorts the late list by event, then correlation id (heapsort: in place, O(n log n) whatever the order). */
function lateSort(): void {
  const n = lateN;
  for (let i = n >> 1; i > 0; i--) lateSift(i - 1, n);
  for (let end = n; end > 1; end--) {
    lateSwap(0, end - 1);
    lateSift(0, end - 1);
  }
  lateSorted = true;
}

/**
 * Sets {@link waitCorr} and {@link waitStream} to the late recording of event `key` with the largest correlation id
 * below `corr`, when it is above `above`; false (unchanged) otherwise.
 */
function lateBefore(key: u64, corr: u32, above: u32): bool {
  if (!lateSorted) lateSort();
  // The first entry at or after (key, corr): the one before it is the candidate.
  const want = <u64>corr << 32;
  let lo: u32 = 0;
  let hi = lateN;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const p = late + (<usize>mid << 4);
    const k = load<u64>(p);
    if (k < key || (k == key && load<u64>(p, 8) < want)) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return false;
  const p = late + (<usize>(lo - 1) << 4);
  if (load<u64>(p) != key) return false;
  const c = <u32>(load<u64>(p, 8) >> 32);
  if (c <= above) return false;
  waitCorr = c;
  waitStream = <u32>load<u64>(p, 8);
  return true;
}
