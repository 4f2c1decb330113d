/**
 * Tables of the PTI decoder (decode/pti.ts): devices by UUID, SYCL / Level Zero queues → streams, and the display
 * names Kineto's XPU plugin gives copies, fills, overhead and communication records.
 *
 * Devices: a PTI record names its device by the 16-byte Level Zero UUID (`_device_uuid`); the DEVICES chunk
 * (collectors/xpu) lists every device with that UUID at entry offset 72 (docs/format.md §7). Pass 1 notes each distinct
 * UUID ({@link noteDevice}); the end of pass 1 ({@link resolveDevices}) matches them against the DEVICES entries and
 * numbers the ones the table lacks after the listed devices (UNKNOWN_DEVICE), creating an entry for each so that every
 * output lists it. A record whose UUID is all zero is keyed by its `_v2` device handle instead (0 in v1 records).
 */
import * as S from "../model/session";
import { Table, tableNew, tableUpsert, tableFind, inserted } from "../util/hash_table";
import { arenaAlloc } from "../util/arena";
import { Warn } from "../util/error";
import { warn } from "../util/diag";

// ---- Devices -------------------------------------------------------------------------------------------------------

// Key entry (32 B): uuid[16], device id u32 @16 (0xffffffff until resolved), tile + 1 u32 @20 (0 = the device
// itself), first file offset u64 @24.
const KEY_ENTRY: usize = 32;
const UNRESOLVED: u32 = 0xffffffff;
let keys: Table = 0; // hash of the 16 key bytes → key entry (linear probing on the hash for the rare collision)
let keyList: usize = 0; // key entries in order of first appearance
let keyCount: u32 = 0;
let keyCap: u32 = 0;
const scratch = memory.data(16);
let lastEntry: usize = 0;

/** Forgets per-file state (after heap.reset()). */
export function ptiTablesReset(): void {
  keys = 0;
  keyList = 0;
  keyCount = 0;
  keyCap = 0;
  lastEntry = 0;
  handleTable = 0;
  handleCount = 0;
  lastTile = 0;
  queues = 0;
  queueCount = 0;
  contexts = 0;
  contextCount = 0;
  commNames = 0;
  unknownApis = 0;
  fillScratch = 0;
  memory.fill(nameSlots, 0, NAME_SLOTS * 8);
}

/** Allocates the per-file tables (first install after a reset). */
export function ptiTablesInit(): void {
  if (keys != 0) return;
  keys = tableNew(16);
  queues = tableNew(16);
  contexts = tableNew(16);
  commNames = tableNew(16);
  unknownApis = tableNew(16);
}

/** The 16 key bytes of a record: its UUID at `uuid`, or (all zero) the device handle with a marker byte. */
function keyOf(uuid: usize, handle: u64): usize {
  if (load<u64>(uuid) != 0 || load<u64>(uuid, 8) != 0) return uuid;
  store<u64>(scratch, handle);
  store<u64>(scratch, handle == 0 ? 0 : 0x4c444e4148000000, 8); // "HANDL": never a UUID PTI reports with zeros
  return scratch;
}

function hashOf(k: usize): u64 {
  let h = load<u64>(k) * 0x9e3779b97f4a7c15 ^ load<u64>(k, 8);
  h ^= h >> 29;
  return h == 0xffffffffffffffff ? 0 : h; // the table reserves all-ones as its empty key
}

/** Entry of the key bytes at `k`, creating it when `create` (pass 1); 0 when absent. */
function entryOf(k: usize, create: bool, at: u64): usize {
  const last = lastEntry;
  if (last != 0 && load<u64>(last) == load<u64>(k) && load<u64>(last, 8) == load<u64>(k, 8)) return last;
  let h = hashOf(k);
  while (true) {
    const slot = create ? tableUpsert(keys, h) : tableFind(keys, h);
    if (slot == 0) return 0;
    let e = <usize>load<u64>(slot);
    if (create && inserted) {
      e = arenaAlloc(KEY_ENTRY);
      memory.copy(e, k, 16);
      store<u32>(e, UNRESOLVED, 16);
      store<u32>(e, 0, 20);
      store<u64>(e, at, 24);
      store<u64>(slot, e);
      if (keyCount == keyCap) {
        const cap = keyCap == 0 ? 16 : keyCap << 1;
        const l = arenaAlloc(<usize>cap << 2);
        if (keyList != 0) memory.copy(l, keyList, <usize>keyCount << 2);
        keyList = l;
        keyCap = cap;
      }
      store<u32>(keyList + (<usize>keyCount << 2), <u32>e);
      keyCount++;
    }
    if (load<u64>(e) == load<u64>(k) && load<u64>(e, 8) == load<u64>(k, 8)) {
      lastEntry = e;
      return e;
    }
    h = h == 0xfffffffffffffffe ? 0 : h + 1;
  }
}

/** Pass 1: a record names the device with UUID bytes at `uuid` (and, for `_v2` records, `handle`). */
export function noteDevice(uuid: usize, handle: u64, at: u64): void {
  entryOf(keyOf(uuid, handle), true, at);
}

// Handle table (docs/format.md §7, after the DEVICES entries): 32-byte entries u64 handle, uuid[16], u32 root device
// id, u32 tile (0xffffffff = the root device itself).
const HANDLE_ENTRY: u32 = 32;
const TILE_NONE: u32 = 0xffffffff;
let handleTable: usize = 0;
let handleCount: u32 = 0;

/**
 * The handle table after the DEVICES entries ([p, p+n) at file offset `off`): `u32 count`, then count × 32 bytes.
 * A count the bytes cannot hold is a BAD_PAYLOAD warning and the table is ignored.
 */
export function ptiHandleTable(p: usize, n: u32, off: u64): void {
  if (n < 4) {
    warn(Warn.BAD_PAYLOAD, off, 7);
    return;
  }
  const count = load<u32>(p);
  if (<u64>count * HANDLE_ENTRY > <u64>(n - 4)) {
    warn(Warn.BAD_PAYLOAD, off, 7);
    return;
  }
  const bytes = <usize>count * HANDLE_ENTRY;
  const t = arenaAlloc(bytes + <usize>handleCount * HANDLE_ENTRY);
  if (handleTable != 0) memory.copy(t, handleTable, <usize>handleCount * HANDLE_ENTRY);
  memory.copy(t + <usize>handleCount * HANDLE_ENTRY, p + 4, bytes);
  handleTable = t;
  handleCount += count;
}

/** The handle-table entry for key bytes `k` (a UUID, or a handle with the marker of {@link keyOf}); 0 when none. */
function handleEntryOf(k: usize): usize {
  const byHandle = load<u64>(k, 8) == 0x4c444e4148000000;
  for (let i: u32 = 0; i < handleCount; i++) {
    const h = handleTable + <usize>i * HANDLE_ENTRY;
    if (byHandle ? load<u64>(h) == load<u64>(k) : load<u64>(h, 8) == load<u64>(k) && load<u64>(h, 16) == load<u64>(k, 8)) {
      return h;
    }
  }
  return 0;
}

/**
 * End of pass 1: gives every noted device its id: the DEVICES entry with the same UUID; else a handle-table entry
 * with that UUID or handle (a tile: its root device, and the tile index kept for {@link deviceOf}); else the next id
 * after the listed devices (a new entry holding the UUID; UNKNOWN_DEVICE counts them, offset of the first record).
 */
export function resolveDevices(): void {
  const n = S.deviceCount();
  let next = S.nextDeviceId();
  let unknown: u32 = 0;
  let firstAt: u64 = 0;
  for (let i: u32 = 0; i < keyCount; i++) {
    const e = <usize>load<u32>(keyList + (<usize>i << 2));
    let id = UNRESOLVED;
    for (let j: u32 = 0; j < n && id == UNRESOLVED; j++) {
      const d = S.deviceAt(j);
      if (load<u64>(d, 72) == load<u64>(e) && load<u64>(d, 80) == load<u64>(e, 8)) id = load<u32>(d);
    }
    if (id == UNRESOLVED && handleCount != 0) {
      const h = handleEntryOf(e);
      if (h != 0 && S.findDevice(load<u32>(h, 24)) != 0) {
        id = load<u32>(h, 24);
        const tile = load<u32>(h, 28);
        if (tile != TILE_NONE) store<u32>(e, tile + 1, 20);
      }
    }
    if (id == UNRESOLVED) {
      id = next++;
      const d = S.deviceEntry(id);
      if (d != 0 && load<u64>(e, 8) != 0x4c444e4148000000) memory.copy(d + 72, e, 16);
      if (unknown == 0) firstAt = load<u64>(e, 24);
      unknown++;
    }
    store<u32>(e, id, 16);
  }
  if (unknown != 0) warn(Warn.UNKNOWN_DEVICE, firstAt, unknown);
}

/** Tile + 1 of the last {@link deviceOf} answer (0: the record names the device itself, not one of its tiles). */
export let lastTile: u32 = 0;

/** Pass 2: the device id of a record's UUID / handle (0 when pass 1 never saw it); sets {@link lastTile}. */
export function deviceOf(uuid: usize, handle: u64): u32 {
  const e = entryOf(keyOf(uuid, handle), false, 0);
  lastTile = 0;
  if (e == 0) return 0;
  const id = load<u32>(e, 16);
  if (id == UNRESOLVED) return 0;
  lastTile = load<u32>(e, 20);
  return id;
}

// ---- Queues → streams ----------------------------------------------------------------------------------------------

/** First stream id of queues known only by their Level Zero handle. */
export const HANDLE_STREAM_BASE: u32 = 0x40000000;
let queues: Table = 0; // Level Zero queue handle → ordinal + 1
let queueCount: u32 = 0;

/**
 * The stream (Chrome row, XSpace line) of device work: the SYCL queue id, as Kineto's XPU plugin; a record without
 * one (PTI_INVALID_QUEUE_ID, 2^64 − 2, in Level Zero programs; or any id ≥ 2^30) gets {@link HANDLE_STREAM_BASE} + the order of first appearance of its Level Zero queue
 * handle. `create` in pass 1.
 */
export function streamOf(syclQueue: u64, handle: u64, create: bool): u32 {
  if (syclQueue < <u64>HANDLE_STREAM_BASE) return <u32>syclQueue;
  if (create) {
    const slot = tableUpsert(queues, handle);
    if (inserted) store<u64>(slot, <u64>(++queueCount));
    return HANDLE_STREAM_BASE + <u32>load<u64>(slot) - 1;
  }
  const slot = tableFind(queues, handle);
  return slot == 0 ? HANDLE_STREAM_BASE : HANDLE_STREAM_BASE + <u32>load<u64>(slot) - 1;
}

let contexts: Table = 0; // Level Zero context handle → ordinal
let contextCount: u32 = 0;

/**
 * The context id of device work: 1, 2, … in order of first appearance of its Level Zero context handle in pass 2
 * (the file's order, the same for every emitter and every worker of a split conversion); 0 for a null handle. PTI
 * has no small context ids as CUPTI has: the Chrome JSON keeps the handle itself (emit/chrome_xpu.ts), XSpace's
 * `context_id` and the viewer show this number.
 */
export function contextOf(handle: u64): u32 {
  if (handle == 0) return 0;
  const slot = tableUpsert(contexts, handle);
  if (inserted) store<u64>(slot, <u64>(++contextCount));
  return <u32>load<u64>(slot);
}

// ---- Names ---------------------------------------------------------------------------------------------------------

// Cached names: [0, 256) copies by (type << 4 | src << 2 | dst) for in-range values, 256.. overhead kinds (8),
// 264 the invalid copy; {ptr u32, len u32} each.
const NAME_SLOTS: i32 = 272;
const nameSlots = memory.data(NAME_SLOTS * 8);
const SLOT_OVERHEAD: u32 = 256;
const SLOT_BAD_COPY: u32 = 264;
let commNames: Table = 0; // comms `_name` pointer → {ptr u32, len u32} of "xccl::<name>"
let unknownApis: Table = 0; // (group + 1) << 32 | id → {ptr u32, len u32} of "<unknown api G:ID>"

/** Display bytes of the last name call ({@link copyName}, {@link fillName}, {@link overheadName}, {@link commName}). */
export let namePtr: usize = 0;
/** Length in bytes of {@link namePtr}. */
export let nameLen: u32 = 0;

function put(q: usize, s: string): usize {
  for (let i = 0; i < s.length; i++) store<u8>(q + i, <u8>s.charCodeAt(i));
  return q + s.length;
}

/** ptiViewMemoryTypeToString: 0 MEMORY(Unknown), 1 HOST, 2 DEVICE, 3 SHARED, else INVALID. */
export function memoryTypeName(t: u32): string {
  switch (t) {
    case 0: return "MEMORY(Unknown)";
    case 1: return "HOST";
    case 2: return "DEVICE";
    case 3: return "SHARED";
  }
  return "INVALID";
}
/** One letter of a memcpy type (src×4+dst over M, H, D, S). */
function letter(t: u32): string {
  return t == 0 ? "M" : t == 1 ? "H" : t == 2 ? "D" : "S";
}

function setName(slot: usize, p: usize, q: usize): void {
  store<u32>(slot, <u32>p);
  store<u32>(slot, <u32>(q - p), 4);
}
function useSlot(slot: usize): void {
  namePtr = <usize>load<u32>(slot);
  nameLen = load<u32>(slot, 4);
}

/**
 * Kineto's copy name, `Memcpy <type> (<src> -> <dst>)` (e.g. `Memcpy H2D (HOST -> DEVICE)`), into
 * {@link namePtr}/{@link nameLen}. Returns false (name `Memcpy INVALID (…)`) when a value is outside its enum.
 */
export function copyName(type: u32, src: u32, dst: u32): bool {
  const ok = type < 16 && src < 4 && dst < 4;
  const slot = nameSlots + (<usize>(ok ? (type << 4) | (src << 2) | dst : SLOT_BAD_COPY) << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(64);
    let q = put(p, "Memcpy ");
    if (ok) {
      q = put(q, letter(type >> 2));
      q = put(q, "2");
      q = put(q, letter(type & 3));
    } else q = put(q, "INVALID");
    q = put(q, " (");
    q = put(q, ok ? memoryTypeName(src) : "INVALID");
    q = put(q, " -> ");
    q = put(q, ok ? memoryTypeName(dst) : "INVALID");
    q = put(q, ")");
    setName(slot, p, q);
  }
  useSlot(slot);
  return ok;
}

let fillScratch: usize = 0;
/**
 * Kineto's fill name, `Memset (<value> -> <memory type>)`, into {@link namePtr}/{@link nameLen}: one scratch buffer,
 * rewritten by the next call (emitters copy what they keep).
 */
export function fillName(value: u64, memType: u32): void {
  if (fillScratch == 0) fillScratch = arenaAlloc(64);
  const p = fillScratch;
  let q = put(p, "Memset (");
  let nd: u32 = 1;
  for (let t = value; t >= 10; t /= 10) nd++;
  let v = value;
  for (let i: u32 = 0; i < nd; i++) {
    store<u8>(q + nd - 1 - i, <u8>(48 + <u32>(v % 10)));
    v /= 10;
  }
  q = put(q + nd, " -> ");
  q = put(q, memoryTypeName(memType));
  q = put(q, ")");
  namePtr = p;
  nameLen = <u32>(q - p);
}

/** ptiViewOverheadKindToString (Kineto names overhead events by it), into {@link namePtr}/{@link nameLen}. */
export function overheadName(kind: u32): void {
  const k = kind < 6 ? kind : 0;
  const slot = nameSlots + (<usize>(SLOT_OVERHEAD + k) << 3);
  if (load<u32>(slot, 4) == 0) {
    const s = k == 1 ? "UNKNOWN" : k == 2 ? "RESOURCE" : k == 3 ? "BUFFER_FLUSH" : k == 4 ? "BUFFER_DRIVER"
      : k == 5 ? "BUFFER_TIME" : "INVALID";
    const p = arenaAlloc(<usize>s.length);
    setName(slot, p, put(p, s));
  }
  useSlot(slot);
}

/** Writes `v` in decimal at `q`; returns the end. */
function putDec(q: usize, v: u32): usize {
  let nd: u32 = 1;
  for (let t = v; t >= 10; t /= 10) nd++;
  for (let i: u32 = 0; i < nd; i++) {
    store<u8>(q + nd - 1 - i, <u8>(48 + v % 10));
    v /= 10;
  }
  return q + nd;
}

/**
 * The name of an API call (API group `group`, id `id`) the dump's API_NAMES do not name, `<unknown api G:ID>`, into
 * {@link namePtr}/{@link nameLen}: made once per (group, id), so that every name a PTI event carries stays where it is
 * (XSpace keys PTI's names by their bytes' place: emit/xspace_names.ts evByApi).
 */
export function unknownApiName(group: u32, id: u32): void {
  const slot = tableUpsert(unknownApis, ((<u64>group + 1) << 32) | <u64>id);
  if (inserted) {
    const e = arenaAlloc(8);
    const b = arenaAlloc(48);
    let q = put(b, "<unknown api ");
    q = putDec(q, group);
    q = put(q, ":");
    q = putDec(q, id);
    setName(e, b, put(q, ">"));
    store<u64>(slot, e);
  }
  useSlot(<usize>load<u64>(slot));
}

/**
 * Kineto's communication name, `xccl::<name>`, for the comms `_name` pointer `ptr` whose STRINGS text is
 * (`p`, `n`), into {@link namePtr}/{@link nameLen}; cached per pointer.
 */
export function commName(ptr: u64, p: usize, n: u32): void {
  const slot = tableUpsert(commNames, ptr);
  if (inserted) {
    const e = arenaAlloc(8);
    const b = arenaAlloc(6 + <usize>n);
    const q = put(b, "xccl::");
    memory.copy(q, p, n);
    setName(e, b, q + n);
    store<u64>(slot, e);
  }
  useSlot(<usize>load<u64>(slot));
}

/**
 * Kineto's `correlateRuntimeOps_`: the SYCL / Unified Runtime calls (and their older PI names) that start an ac2g
 * flow to the device work they enqueue.
 */
export function startsFlow(p: usize, n: u32): bool {
  return eq(p, n, "urEnqueueKernelLaunch") || eq(p, n, "urEnqueueUSMMemcpy") || eq(p, n, "urEnqueueUSMFill") ||
    eq(p, n, "urEnqueueUSMFill2D") || eq(p, n, "urEnqueueUSMMemcpy2D") || eq(p, n, "urEnqueueKernelLaunchCustomExp") ||
    eq(p, n, "urEnqueueCooperativeKernelLaunchExp") || eq(p, n, "piEnqueueKernelLaunch") ||
    eq(p, n, "piextUSMEnqueueMemcpy") || eq(p, n, "piextUSMEnqueueFill") || eq(p, n, "piextUSMEnqueueMemset") ||
    eq(p, n, "piextUSMEnqueueFill2D") || eq(p, n, "piextUSMEnqueueMemcpy2D") || eq(p, n, "piextUSMEnqueueMemset2D") ||
    eq(p, n, "piextEnqueueKernelLaunchCustom") || eq(p, n, "piextEnqueueCooperativeKernelLaunch");
}

/** True when [p, p+n) equals ASCII `s`. */
function eq(p: usize, n: u32, s: string): bool {
  if (<i32>n != s.length) return false;
  for (let i = 0; i < s.length; i++) if (<i32>load<u8>(p + i) != s.charCodeAt(i)) return false;
  return true;
}
