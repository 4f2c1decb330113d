/**
 * Synapse engines (Habana, vendor 5): what the 'M' metadata entries of a trace buffer say about its engine types and
 * engines, and the HPU_DEVICE table. As the Gaudi PyTorch bridge reads them (docs/decoders/hpu.md "Engines"):
 *  - an 'M' entry with engineIndex 0 whose `arguments.name` starts with one of the bridge's engine-type prefixes
 *    (`**DMA `, `**MME `, `**TPC ` on Gaudi1; `*PDMA`, `*EDMA `, `*KDMA`, `*MME `, `*TPC `, `*PSOC`, `*SM`, `*PMMU`,
 *    `*ROTATOR`, `*ARC_FARM`, `*VIDEO_DECODER`, `*NIC `, `*NIC External `, `*NIC Internal `, `**NIC `) or equals
 *    `***Host` names engine type `engineType` of its device;
 *  - any other 'M' entry of a named engine type names engine (engineType, engineIndex).
 * Device engines become device lanes: lane = prefix index × 1000 + engineIndex (the bridge's line numbers), named
 * after the engine; host engines become host threads (tid = engineIndex) named `Synapse/<engine>`.
 * Events of an engine type no metadata named are skipped (as the bridge does) and counted (UNKNOWN_KIND).
 */
import { Table, tableNew, tableUpsert, tableFind, inserted } from "../util/hash_table";
import { arenaAlloc } from "../util/arena";
import * as S from "../model/session";

/** Engine class: the engine type was not named by metadata (yet). */
export const ENG_UNKNOWN: u32 = 0;
/** Engine class: `***Host` (host threads). */
export const ENG_HOST: u32 = 1;
/** Engine class: TPC (tensor processor cores). */
export const ENG_TPC: u32 = 2;
/** Engine class: MME (matrix engines). */
export const ENG_MME: u32 = 3;
/** Engine class: DMA engines (PDMA, EDMA, KDMA; Gaudi1 DMA). */
export const ENG_DMA: u32 = 4;
/** Other device engines (NIC, rotator, PSOC, SM, PMMU, ARC farm, video decoder). */
export const ENG_OTHER: u32 = 5;

let types: Table = 0; // (device << 32 | engineType) → class | prefix index << 8 | 1 << 31 (present) | first buffer << 32
const PRESENT: u64 = 0x80000000;

/** Forgets per-file state (after heap.reset()). */
export function enginesReset(): void {
  types = 0;
  bufNums = 0;
  bufCount = 0;
  deviceTypes = 0;
}

/** Creates the tables (decoder install). */
export function enginesInit(): void {
  if (types == 0) {
    types = tableNew(64);
    bufNums = tableNew(64);
  }
}

/** True when [p, p+n) starts with ASCII `s`. */
function startsWith(p: usize, n: u32, s: string): bool {
  if (n < <u32>s.length) return false;
  for (let i = 0; i < s.length; i++) if (<i32>load<u8>(p + i) != s.charCodeAt(i)) return false;
  return true;
}

/** The bridge's engine-type prefixes, in its order (the index is the lane's thousands). */
function prefixIndex(p: usize, n: u32): i32 {
  if (startsWith(p, n, "**DMA ")) return 0;
  if (startsWith(p, n, "**MME ")) return 1;
  if (startsWith(p, n, "**TPC ")) return 2;
  if (startsWith(p, n, "*PDMA")) return 3;
  if (startsWith(p, n, "*EDMA ")) return 4;
  if (startsWith(p, n, "*KDMA")) return 5;
  if (startsWith(p, n, "*MME ")) return 6;
  if (startsWith(p, n, "*TPC ")) return 7;
  if (startsWith(p, n, "*PSOC")) return 8;
  if (startsWith(p, n, "*SM")) return 9;
  if (startsWith(p, n, "*PMMU")) return 10;
  if (startsWith(p, n, "*ROTATOR")) return 11;
  if (startsWith(p, n, "*ARC_FARM")) return 12;
  if (startsWith(p, n, "*VIDEO_DECODER")) return 13;
  if (startsWith(p, n, "*NIC ")) return 14;
  if (startsWith(p, n, "*NIC External ")) return 15;
  if (startsWith(p, n, "*NIC Internal ")) return 16;
  if (startsWith(p, n, "**NIC ")) return 17;
  return -1;
}

function classOf(idx: i32): u32 {
  if (idx == 2 || idx == 7) return ENG_TPC;
  if (idx == 1 || idx == 6) return ENG_MME;
  if (idx == 0 || (idx >= 3 && idx <= 5)) return ENG_DMA;
  return ENG_OTHER;
}

const HOST_TYPE = "***Host";

/**
 * One 'M' entry of `device` in the buffer at file offset `at`: engine (engineType, engineIndex) with metadata name
 * [p, p+n) (valid UTF-8). Host engine names become thread names of process `pid`. A type keeps the class and the
 * buffer of its first naming.
 */
export function engineMeta(device: u32, engineType: u32, engineIndex: u32, p: usize, n: u32, pid: u32, at: u64): void {
  const key = (<u64>device << 32) | engineType;
  if (engineIndex == 0) {
    const isHost = n == <u32>HOST_TYPE.length && startsWith(p, n, HOST_TYPE);
    const idx = isHost ? -1 : prefixIndex(p, n);
    if (isHost || idx >= 0) {
      const v = isHost ? ENG_HOST : classOf(idx) | (<u32>idx << 8);
      const slot = tableUpsert(types, key);
      if (inserted) store<u64>(slot, PRESENT | <u64>v | (<u64>bufferNumber(at) << 32));
      return;
    }
  }
  const cls = engineClass(device, engineType, 0xffffffffffffffff);
  if (cls == ENG_UNKNOWN) return;
  if (cls == ENG_HOST) {
    // "Synapse/<engine>", as the bridge names its host lanes.
    const q = arenaAlloc(8 + <usize>n);
    memory.copy(q, changetype<usize>(SYNAPSE_SLASH), 8);
    memory.copy(q + 8, p, n);
    S.setThreadName(pid, engineIndex, q, 8 + n);
  } else S.setStreamName(device, engineLane(device, engineType, engineIndex), p, n);
}

const SYNAPSE_SLASH = memory.data<u8>([83, 121, 110, 97, 112, 115, 101, 47]); // "Synapse/"

/**
 * Class (ENG_*) of `engineType` on `device` for an entry of the buffer at file offset `at` (ENG_UNKNOWN when no
 * metadata of that buffer or an earlier one named it: pass 2 knows the whole file, pass 1 only what it has read).
 */
export function engineClass(device: u32, engineType: u32, at: u64): u32 {
  const s = tableFind(types, (<u64>device << 32) | engineType);
  if (s == 0) return ENG_UNKNOWN;
  const v = load<u64>(s);
  if (at != 0xffffffffffffffff && <u32>(v >> 32) > bufferNumber(at)) return ENG_UNKNOWN;
  return <u32>(v & 0xff);
}

// Buffers are numbered by their file offset, in order of first sight (pass 1 reads them in file order).
let bufNums: Table = 0;
let bufCount: u32 = 0;

/**
 * Numbers the buffer at file offset `at` when it is first seen: called as each buffer is opened, so that the numbers
 * follow the file's order in pass 1 whatever the buffer's entries name. (Numbered only when a lookup needed one, a
 * buffer whose metadata named no engine got its number in pass 2, after later buffers: pass 2 then accepted entries
 * that pass 1 had skipped, outside the time span pass 1 had measured.)
 */
export function bufferSeen(at: u64): void {
  bufferNumber(at);
}

function bufferNumber(at: u64): u32 {
  const s = tableUpsert(bufNums, at);
  if (inserted) store<u64>(s, <u64>(++bufCount));
  return <u32>load<u64>(s);
}

/** Device lane (stream id) of engine (engineType, engineIndex) on `device`: prefix index × 1000 + engineIndex. */
export function engineLane(device: u32, engineType: u32, engineIndex: u32): u32 {
  const s = tableFind(types, (<u64>device << 32) | engineType);
  const idx = s == 0 ? <u32>0 : <u32>((load<u64>(s) >> 8) & 0xff);
  return idx * 1000 + engineIndex;
}

/**
 * HPU_DEVICE chunk [p, p+n): u32 device id, u32 synDeviceType, u64 HBM bytes, u32 name length, name. Returns false
 * when it is shorter than its fields (the engine warns BAD_PAYLOAD).
 */
export function hpuDevice(p: usize, n: u32): bool {
  if (n < 20) return false;
  const id = load<u32>(p);
  const nl = load<u32>(p, 16);
  if (<u64>nl > <u64>(n - 20)) return false;
  const e = S.deviceEntry(id);
  if (e == 0) return true;
  store<u64>(e, load<u64>(p, 8), 8); // totalGlobalMem
  S.setDeviceName(e, p + 20, nl);
  deviceTypes = load<u32>(p, 4);
  return true;
}

/** synDeviceType of the last HPU_DEVICE chunk (0 when none), for `rawtrace info`. */
export let deviceTypes: u32 = 0;
