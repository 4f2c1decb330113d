/**
 * Static display names of CUPTI activities (NVIDIA CUDA), Kineto's wording: memcpy ("Memcpy HtoD (Pinned -> Device)"),
 * memset, synchronization and overhead names, and the fallback name of an API call without a name-table entry. Each
 * is built once per file in the arena and set on the event as (pointer, length): kept for the whole conversion
 * (EvFlag.NAME_KEPT), except unknownApiName's scratch text, which the next call overwrites.
 */
import { Ev } from "../model/event";
import { arenaAlloc } from "../util/arena";

let copyNames: usize = 0; // [11 copy kinds][8 src][8 dst] × {ptr u32, len u32}, built on demand
let memsetNames: usize = 0; // [8] × {ptr, len}
let syncNames: usize = 0; // [5] × {ptr, len}
let overheadNames: usize = 0; // [10] × {ptr, len}
let scratchName: usize = 0;

function copyKindStr(k: u32): string {
  switch (k) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoA";
    case 4: return "AtoH";
    case 5: return "AtoA";
    case 6: return "AtoD";
    case 7: return "DtoA";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
  }
  return "Unknown";
}
function memKindStr(k: u32): string {
  switch (k) {
    case 1: return "Pageable";
    case 2: return "Pinned";
    case 3: return "Device";
    case 4: return "Array";
    case 5: return "Managed";
    case 6: return "Device Static";
    case 7: return "Managed Static";
  }
  return "Unknown";
}
function syncStr(k: u32): string {
  switch (k) {
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
  }
  return "Unknown Sync";
}
function overheadStr(k: u32): string {
  switch (k) {
    case 1: return "Driver Compiler";
    case 0x10000: return "Buffer Flush";
    case 0x20000: return "Instrumentation";
    case 0x30000: return "Resource";
    case 0x40000: return "Runtime Triggered Module Loading";
    case 0x50000: return "Lazy Function Loading";
    case 0x60000: return "Command Buffer Full";
    case 0x70000: return "Activity Buffer Request";
    case 0x80000: return "UVM Activity Init";
  }
  return "Unknown Overhead";
}

/** Appends ASCII `s` at q; returns the new end. */
function put(q: usize, s: string): usize {
  for (let i = 0; i < s.length; i++) store<u8>(q + i, <u8>s.charCodeAt(i));
  return q + s.length;
}

/** Sets e's name to a static (arena) name built once: the (ptr, len) pair stored at slot. */
// @ts-ignore: decorator
@inline function nameFromSlot(e: Ev, slot: usize): void {
  e.namePtr = <usize>load<u32>(slot);
  e.nameLen = load<u32>(slot, 4);
}

/** Sets e's name to "Memcpy <kind> (<src> -> <dst>)" (out-of-range kinds read as Unknown). */
export function memcpyName(e: Ev, copyKind: u32, src: u32, dst: u32): void {
  if (copyKind > 10) copyKind = 0;
  if (src > 7) src = 0;
  if (dst > 7) dst = 0;
  if (copyNames == 0) {
    copyNames = arenaAlloc(11 * 8 * 8 * 8);
    memory.fill(copyNames, 0, 11 * 8 * 8 * 8);
  }
  const slot = copyNames + ((<usize>copyKind * 64 + <usize>src * 8 + <usize>dst) << 3);
  if (load<u32>(slot, 4) == 0) {
    // "Memcpy HtoD (Pinned -> Device)", Kineto's naming
    const p = arenaAlloc(64);
    let q = put(p, "Memcpy ");
    q = put(q, copyKindStr(copyKind));
    q = put(q, " (");
    q = put(q, memKindStr(src));
    q = put(q, " -> ");
    q = put(q, memKindStr(dst));
    q = put(q, ")");
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

/** Sets e's name to "Memset (<memory kind>)". */
export function memsetName(e: Ev, kind: u32): void {
  if (kind > 7) kind = 0;
  if (memsetNames == 0) {
    memsetNames = arenaAlloc(8 * 8);
    memory.fill(memsetNames, 0, 64);
  }
  const slot = memsetNames + (<usize>kind << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(32);
    let q = put(p, "Memset (");
    q = put(q, memKindStr(kind));
    q = put(q, ")");
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

/** Sets e's name to the synchronization type's ("Stream Sync", …). */
export function syncName(e: Ev, kind: u32): void {
  if (kind > 4) kind = 0;
  if (syncNames == 0) {
    syncNames = arenaAlloc(5 * 8);
    memory.fill(syncNames, 0, 40);
  }
  const slot = syncNames + (<usize>kind << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(24);
    const q = put(p, syncStr(kind));
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

/** Sets e's name to the overhead kind's ("Buffer Flush", …; "Unknown Overhead" otherwise). */
export function overheadName(e: Ev, kind: u32): void {
  let i: u32 = 9;
  if (kind == 1) i = 0;
  else if ((kind & 0xffff) == 0 && kind >> 16 >= 1 && kind >> 16 <= 8) i = kind >> 16;
  if (overheadNames == 0) {
    overheadNames = arenaAlloc(10 * 8);
    memory.fill(overheadNames, 0, 80);
  }
  const slot = overheadNames + (<usize>i << 3);
  if (load<u32>(slot, 4) == 0) {
    const p = arenaAlloc(40);
    const q = put(p, overheadStr(i == 9 ? 0xffffffff : i == 0 ? 1 : i << 16));
    store<u32>(slot, <u32>p);
    store<u32>(slot, <u32>(q - p), 4);
  }
  nameFromSlot(e, slot);
}

/** Name for an API record without a name-table entry: "cbid <n>" (runtime) / "driver cbid <n>". */
export function unknownApiName(e: Ev, domain: u32, cbid: u32): void {
  if (scratchName == 0) scratchName = arenaAlloc(64);
  let q = put(scratchName, domain == 1 ? "cuda_driver_cbid_" : "cuda_runtime_cbid_");
  // decimal cbid
  let tmp = cbid;
  let nd: u32 = 1;
  while (tmp >= 10) {
    tmp /= 10;
    nd++;
  }
  for (let i: u32 = 0; i < nd; i++) {
    store<u8>(q + nd - 1 - i, <u8>(48 + (cbid % 10)));
    cbid /= 10;
  }
  q += nd;
  e.namePtr = scratchName;
  e.nameLen = <u32>(q - scratchName);
}


/** Forgets the names built (after heap.reset(): the arena they lived in is gone). */
export function cuptiNamesReset(): void {
  copyNames = 0;
  memsetNames = 0;
  syncNames = 0;
  overheadNames = 0;
  scratchName = 0;
}
