/**
 * CUDA event records (CUPTI CUDA_EVENT: a cudaEventRecord on a stream) for the syncs that wait on them. For an event
 * sync or a stream wait, {@link cudaEventWaited} finds the last record of the same event (context, event id) whose
 * correlation id is below the sync's: the stream that recorded it and that record's correlation id — what Kineto
 * writes as `wait_on_stream` and `wait_on_cuda_event_record_corr_id`, and what HTA's critical-path analysis draws its
 * stream-to-stream edges from.
 *
 * Pass 2, in file order (CUPTI writes both record kinds when the API call returns, so a record comes before the syncs
 * that wait on it). Bounded memory: the last {@link RING} records of each of at most {@link MAX_EVENTS} events; when
 * that many events have been seen the table starts over, and a wait on an event recorded before that is unknown (-1,
 * as Kineto writes a wait it cannot resolve).
 */
import { Table, tableClear, tableFind, tableNew, tableUpsert } from "../util/hash_table";

/** Records kept per event: a wait is on a recent record of its event. */
const RING: u32 = 8;
/** Bytes per event: u32 count, u32 0, then RING × (u32 correlation id, u32 stream), ascending by correlation id. */
const RING_BYTES: usize = 8 + <usize>RING * 8;
/** Events kept before the table starts over (1.2 MB of records, at most 1 MB of table). */
const MAX_EVENTS: u32 = 16384;

let table: Table = 0;
let pool: usize = 0; // MAX_EVENTS rings, handed out in order
let used: u32 = 0;

/** What the last {@link cudaEventWaited} found: the recording stream and correlation id (u32 as the record has them). */
export let waitStream: u32 = 0;
export let waitCorr: u32 = 0;

/** Forgets every record (the engine's heap was reset: a new file). */
export function cudaEventsReset(): void {
  table = 0;
  pool = 0;
  used = 0;
}

/** Forgets the records but keeps the memory (the end of a pass 2: another one starts from the file's beginning). */
export function cudaEventsRestart(): void {
  if (table != 0) tableClear(table);
  used = 0;
}

/** Notes a CUDA event record: event `eventId` of context `ctx` recorded on `stream` by the call `corr`. */
export function cudaEventNote(ctx: u32, eventId: u32, corr: u32, stream: u32): void {
  if (table == 0) {
    table = tableNew(1024);
    pool = heap.alloc(<usize>MAX_EVENTS * RING_BYTES);
    used = 0;
  }
  const key = (<u64>ctx << 32) | <u64>eventId;
  let v = tableFind(table, key);
  let ring: usize;
  if (v != 0) ring = <usize>load<u64>(v);
  else {
    if (used == MAX_EVENTS) {
      tableClear(table);
      used = 0;
    }
    ring = pool + <usize>used * RING_BYTES;
    used++;
    store<u64>(ring, 0);
    v = tableUpsert(table, key);
    store<u64>(v, <u64>ring);
  }
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
  if (table == 0) return false;
  const v = tableFind(table, (<u64>ctx << 32) | <u64>eventId);
  if (v == 0) return false;
  const ring = <usize>load<u64>(v);
  const at = ring + 8;
  for (let i = <i32>load<u32>(ring) - 1; i >= 0; i--) {
    const c = load<u32>(at + <usize>i * 8);
    if (c < corr) {
      waitCorr = c;
      waitStream = load<u32>(at + <usize>i * 8, 4);
      return true;
    }
  }
  return false;
}
