/**
 * Name interning for the timeline tables (emit/timeline.ts): every distinct UTF-8 name gets one id, whatever
 * pointer carries it, and the names are written once at the end of the pass (the page decodes each name once).
 */
import * as O from "./out";
import { Table, tableNew, tableUpsert, inserted } from "../util/hash_table";
import { Recent, recentNew, recentGet, recentPut } from "../util/recent";
import { arenaCopy, arenaAscii, lastLen } from "../util/arena";

/** "No name" id. */
const NONE: u32 = 0xffffffff;
/** Distinct names beyond this are shown as the overflow name. */
const MAX_NAMES: u32 = 1 << 22;

let namePtrTable: Table = 0; // (ptr << 32 | len) → name id + 1
let nameHashTable: Table = 0; // content hash (probed) → name id + 1
let nameList: usize = 0; // {u32 ptr (our copy), u32 len} per name
let nameCap: u32 = 0;
/** Distinct names so far (the overflow name included). */
export let nameCount: u32 = 0;
/** UTF-8 bytes of all names so far. */
export let nameBytes: u64 = 0;
/** Set once a name was refused by the {@link MAX_NAMES} cap (header flag 2). */
export let namesCapped: bool = false;
// Recent (pointer << 32 | length) → id + 1: kernel names of interleaved streams and API names alternate, so a last
// name alone missed on most events and each miss probed the pointer table.
let recentNames: Recent = 0;
let overflowName: u32 = NONE;

/** Forgets every name (start of a timeline pass). */
export function namesReset(): void {
  namePtrTable = tableNew(1024);
  nameHashTable = tableNew(1024);
  nameCap = 1024;
  nameList = heap.alloc(<usize>nameCap << 3);
  nameCount = 0;
  nameBytes = 0;
  namesCapped = false;
  overflowName = NONE;
  recentNames = recentNew(8);
}

// @ts-ignore: decorator
@inline function fnv(p: usize, n: u32): u64 {
  let h: u64 = 0xcbf29ce484222325;
  for (let i: u32 = 0; i < n; i++) {
    h ^= <u64>load<u8>(p + i);
    h *= 0x100000001b3;
  }
  return h;
}

function addName(p: usize, n: u32): u32 {
  if (nameCount >= MAX_NAMES) {
    namesCapped = true;
    if (overflowName == NONE) {
      // One more slot past the cap for the shared overflow name.
      overflowName = nameCount;
      nameCount++;
      const q = arenaAscii("(more names)");
      store<u32>(nameList + (<usize>overflowName << 3), <u32>q);
      store<u32>(nameList + (<usize>overflowName << 3), lastLen, 4);
      nameBytes += lastLen;
    }
    return overflowName;
  }
  if (nameCount + 1 >= nameCap) {
    const cap = nameCap << 1;
    const list = heap.alloc(<usize>cap << 3);
    memory.copy(list, nameList, <usize>nameCount << 3);
    nameList = list;
    nameCap = cap;
  }
  const id = nameCount++;
  const q = arenaCopy(p, n);
  store<u32>(nameList + (<usize>id << 3), <u32>q);
  store<u32>(nameList + (<usize>id << 3), n, 4);
  nameBytes += n;
  return id;
}

/** Whether name `id` holds the bytes [p, p+n). */
// @ts-ignore: decorator
@inline function sameName(id: u32, p: usize, n: u32): bool {
  const e = nameList + (<usize>id << 3);
  return load<u32>(e, 4) == n && memory.compare(<usize>load<u32>(e), p, n) == 0;
}

/**
 * Name id of the UTF-8 bytes [p, p+n) (NONE when n is 0): the same text always gets the same id, whatever pointer
 * carries it. A pointer seen before is checked against its bytes (a decoder may reuse a scratch buffer), unless
 * `kept`: the event says the bytes at `p` never change during the conversion (EvFlag.NAME_KEPT).
 */
export function internName(p: usize, n: u32, kept: bool = false): u32 {
  return internNameInline(p, n, kept);
}

/**
 * {@link internName} inlined into the timeline's per-event path: a hit of the recent-names cache is a multiply and
 * three loads (a last-name test before it missed on nearly every event: kernel and launch names alternate).
 */
// @ts-ignore: decorator
@inline export function internNameInline(p: usize, n: u32, kept: bool): u32 {
  if (n == 0) return NONE;
  const pk = (<u64>p << 32) | <u64>n;
  const cached = <u32>recentGet(recentNames, pk);
  // A kept name never changes its bytes during the conversion: a cached id of its pointer is its id.
  if (cached != 0 && (kept || sameName(cached - 1, p, n))) return cached - 1;
  return internMiss(p, n, pk);
}

/** Whether name id `id` stands for more than one text (the shared overflow name past {@link MAX_NAMES}). */
// @ts-ignore: decorator
@inline export function nameShared(id: u32): bool {
  return id == overflowName;
}

/** {@link internName} past the recent-names cache: {@link internSlow}, then cached. */
function internMiss(p: usize, n: u32, pk: u64): u32 {
  const found = internSlow(p, n, pk);
  recentPut(recentNames, pk, <u64>found + 1);
  return found;
}

/** {@link internName} past its caches: the pointer table, then the content hash. */
function internSlow(p: usize, n: u32, pk: u64): u32 {
  const ps = tableUpsert(namePtrTable, pk);
  if (!inserted) {
    const id = <u32>(load<u64>(ps) - 1);
    if (sameName(id, p, n)) return id;
  }
  // By content: probe successive keys from the hash until the bytes match or a free key is found.
  let key = fnv(p, n) & 0x7fffffffffffffff;
  let id: u32 = NONE;
  while (true) {
    const hs = tableUpsert(nameHashTable, key);
    if (inserted) {
      id = addName(p, n);
      store<u64>(hs, <u64>id + 1);
      break;
    }
    const cand = <u32>(load<u64>(hs) - 1);
    if (sameName(cand, p, n)) {
      id = cand;
      break;
    }
    key = (key + 1) & 0x7fffffffffffffff;
  }
  store<u64>(ps, <u64>id + 1);
  return id;
}

/** Name id of a session string entry ({u32 ptr, u32 len}; 0: none). */
export function nameOfEntry(entry: usize): u32 {
  return entry == 0 ? NONE : internName(<usize>load<u32>(entry), load<u32>(entry, 4));
}

/** Bytes of the name section's text part: {@link nameBytes} padded to a multiple of 8. */
export function namesPadded(): u32 {
  return <u32>((nameBytes + 7) & ~7);
}

/**
 * Writes the name section: `nameCount` × {u32 offset, u32 length}, then the UTF-8 bytes padded with zeros to
 * {@link namesPadded}. `h` is 8 bytes of scratch.
 */
export function writeNames(h: usize): void {
  let off: u32 = 0;
  for (let i: u32 = 0; i < nameCount; i++) {
    store<u32>(h, off);
    store<u32>(h, load<u32>(nameList + (<usize>i << 3), 4), 4);
    O.raw(h, 8);
    off += load<u32>(nameList + (<usize>i << 3), 4);
  }
  for (let i: u32 = 0; i < nameCount; i++) {
    const e = nameList + (<usize>i << 3);
    O.raw(<usize>load<u32>(e), <usize>load<u32>(e, 4));
  }
  const nb = namesPadded();
  if (nb > off) {
    memory.fill(h, 0, 8);
    O.raw(h, <usize>(nb - off));
  }
}
