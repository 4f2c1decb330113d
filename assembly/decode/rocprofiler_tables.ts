/**
 * The rocprofiler-sdk decoder's vendor tables (docs/format.md §12, §13): AGENTS (agent handle → CPU or GPU index;
 * GPU agents become the session's device entries with their AMD fields) and KERNEL_SYMBOLS (kernel id → LDS,
 * scratch, SGPR, VGPR, AGPR counts; the name goes into the session string table under {@link KERNEL_KEY} | id, so
 * it is demangled once). Payload lengths are checked: a malformed table is a BAD_PAYLOAD warning at its chunk.
 */
import * as S from "../model/session";
import { Warn } from "../util/error";
import { warn } from "../util/diag";
import { arenaAlloc } from "../util/arena";
import { Table, tableNew, tableUpsert, tableFind } from "../util/hash_table";
import { regrow } from "../util/regrow";
import { Chunk } from "../format/container";

/** Marks a kernel-name key in the session string table (ROCm STRINGS keys are correlation ids, below 2^63). */
export const KERNEL_KEY: u64 = 0x8000000000000000;

let agents: Table = 0; // agent handle → (type << 32 | GPU index) + 1
let symbols: Table = 0; // kernel id → symbol entry {lds u32, scratch u32, sgpr u32, vgpr u32, agpr u32}
// GPU agent handles the device records name, in order of first appearance (pass 1): handle → first file offset + 1,
// and the handles in that order ({@link resolveAgents}).
let named: Table = 0;
let namedList: usize = 0;
let namedCount: u32 = 0;
let namedCap: u32 = 0;
let resolvedDone = false; // resolveAgents ran: `named` holds GPU index + 1 of the unlisted agents

/** Forgets the tables (after heap.reset()). */
export function rocpTablesReset(): void {
  agents = 0;
  symbols = 0;
  named = 0;
  namedList = 0;
  namedCount = 0;
  namedCap = 0;
  resolvedDone = false;
}
/** Creates empty tables (when the decoder is installed for a file). */
export function rocpTablesInit(): void {
  agents = tableNew(16);
  symbols = tableNew(256);
  named = tableNew(16);
}

/** Pass 1: a device record at file offset `at` runs on GPU agent `handle` (a kernel's, a copy's device side). */
export function noteGpuAgent(handle: u64, at: u64): void {
  const slot = tableUpsert(named, handle);
  if (load<u64>(slot) != 0) return;
  store<u64>(slot, at + 1);
  if (namedCount == namedCap) {
    const cap = namedCap == 0 ? 16 : namedCap << 1;
    namedList = regrow(namedList, <usize>namedCount << 3, <usize>cap << 3);
    namedCap = cap;
  }
  store<u64>(namedList + (<usize>(namedCount++) << 3), handle);
}

/**
 * End of pass 1: GPU agents the device records name that AGENTS does not describe (a dump whose AGENTS chunk was lost
 * or damaged, or lacks a handle) are numbered after the listed GPUs in order of first appearance, each with a device
 * entry so that every output lists it, and counted by UNKNOWN_DEVICE (offset: the first record naming one). Before,
 * every such agent was GPU 0: the work of several GPUs drawn as one's, on a GPU index the dump never gave it.
 */
export function resolveAgents(): void {
  resolvedDone = true;
  let next = S.nextDeviceId();
  let unknown: u32 = 0;
  let firstAt: u64 = 0xffffffffffffffff;
  for (let i: u32 = 0; i < namedCount; i++) {
    const h = load<u64>(namedList + (<usize>i << 3));
    if (tableFind(agents, h) != 0) continue;
    const at = load<u64>(tableFind(named, h)) - 1;
    if (at < firstAt) firstAt = at;
    store<u64>(tableUpsert(named, h), <u64>next + 1); // its GPU index now (gpuOf); still unlisted (knownAgent)
    S.deviceEntry(next++);
    unknown++;
  }
  if (unknown != 0) warn(Warn.UNKNOWN_DEVICE, firstAt, unknown);
}

/** Symbol entry of kernel `id` ({lds u32, scratch u32, sgpr u32, vgpr u32, agpr u32}), or 0. */
export function kernelSymbol(id: u64): usize {
  const s = tableFind(symbols, id);
  return s == 0 ? 0 : <usize>load<u64>(s);
}

/** Reads the `u32 length + bytes` string at q (bounded by end); sets strP/strN and returns the next position or 0. */
let strP: usize = 0;
let strN: u32 = 0;
function str(q: usize, end: usize): usize {
  if (q + 4 > end) return 0;
  const n = load<u32>(q);
  if (<usize>n > end - q - 4) return 0;
  strP = q + 4;
  strN = n;
  return q + 4 + n;
}

/** One AGENTS or KERNEL_SYMBOLS chunk, payload [p, p+n), chunk header at file offset `off`. */
export function rocpTable(type: u32, p: usize, n: u32, off: u64): void {
  const end = p + n;
  if (n < 8) {
    warn(Warn.BAD_PAYLOAD, off, type);
    return;
  }
  const count = load<u32>(p);
  const fixed = load<u32>(p, 4);
  let q = p + 8;
  if (type == Chunk.AGENTS) {
    if (fixed < 120) {
      warn(Warn.BAD_PAYLOAD, off, type);
      return;
    }
    for (let i: u32 = 0; i < count; i++) {
      if (<usize>fixed > end - q) { // not q + fixed > end: a fixed size near 2^32 wraps the sum
        warn(Warn.BAD_PAYLOAD, off, type);
        return;
      }
      const a = q;
      q += fixed;
      // name, product name, vendor name, model name
      q = str(q, end);
      if (q == 0) break;
      const np = strP, nn = strN;
      q = str(q, end);
      if (q == 0) break;
      const pp = strP, pn = strN;
      q = str(q, end);
      if (q == 0) break;
      q = str(q, end);
      if (q == 0) break;
      agent(a, np, nn, pp, pn);
    }
    if (q == 0) warn(Warn.BAD_PAYLOAD, off, type);
  } else if (type == Chunk.KERNEL_SYMBOLS) {
    if (fixed < 48) {
      warn(Warn.BAD_PAYLOAD, off, type);
      return;
    }
    for (let i: u32 = 0; i < count; i++) {
      if (<usize>fixed > end - q) { // not q + fixed > end: a fixed size near 2^32 wraps the sum
        warn(Warn.BAD_PAYLOAD, off, type);
        return;
      }
      const k = q;
      q = str(q + fixed, end);
      if (q == 0) {
        warn(Warn.BAD_PAYLOAD, off, type);
        return;
      }
      const id = load<u64>(k);
      const slot = tableUpsert(symbols, id);
      let e = <usize>load<u64>(slot);
      if (e == 0) {
        e = arenaAlloc(20);
        store<u64>(slot, e);
      }
      store<u32>(e, load<u32>(k, 28)); // group segment (static LDS) bytes
      store<u32>(e, load<u32>(k, 32), 4); // private segment (scratch) bytes per work-item
      store<u32>(e, load<u32>(k, 36), 8); // SGPRs
      store<u32>(e, load<u32>(k, 40), 12); // arch VGPRs
      store<u32>(e, load<u32>(k, 44), 16); // accumulation VGPRs
      S.setString(id | KERNEL_KEY, strP, strN, true);
    }
  }
}

/** One AGENTS entry at `a` (fixed part) with its name (gfx target) and product name. */
function agent(a: usize, np: usize, nn: u32, pp: usize, pn: u32): void {
  const type = load<u32>(a, 8);
  const gpu = <u32>load<i32>(a, 20);
  store<u64>(tableUpsert(agents, load<u64>(a)), ((<u64>type << 32) | <u64>gpu) + 1);
  if (type != 2) return;
  const e = S.deviceEntry(gpu);
  if (e == 0) return;
  const cus = load<u32>(a, 24);
  const wave = load<u32>(a, 44);
  const lds = load<u32>(a, 48) * 1024;
  const gfx = load<u32>(a, 60);
  store<u32>(e, cus, 4);
  store<u64>(e, load<u64>(a, 96), 8); // local memory bytes
  store<u32>(e, load<u32>(a, 56) * 1000, 24); // MHz → kHz
  store<u32>(e, gfx / 10000 % 100, 28); // gfx major, Kineto's computeMajor on ROCm
  store<u32>(e, gfx / 100 % 100, 32); // gfx minor
  store<u32>(e, load<u32>(a, 52), 36); // max work-group size
  store<u32>(e, load<u32>(a, 40) * wave, 40); // waves per CU × wavefront size
  store<u32>(e, wave, 52);
  store<u32>(e, lds, 56);
  store<u32>(e, lds, 60);
  store<u32>(e, lds, 64);
  memory.copy(e + 72, a + 104, 16);
  S.setDeviceName(e, pn != 0 ? pp : np, pn != 0 ? pn : nn);
  S.setDeviceAmd(e, gfx, load<u32>(a, 32), load<u32>(a, 40), load<u32>(a, 64), np, nn);
}

/**
 * GPU index of agent `handle`: AGENTS', else the one {@link resolveAgents} gave it, else 0 (named by no device record
 * in pass 1).
 */
export function gpuOf(handle: u64): u32 {
  const s = tableFind(agents, handle);
  if (s != 0) return <u32>(load<u64>(s) - 1);
  const r = resolvedDone ? tableFind(named, handle) : 0;
  return r == 0 ? 0 : <u32>(load<u64>(r) - 1);
}
/** True when the dump's AGENTS describe agent `handle`. */
export function knownAgent(handle: u64): bool {
  return tableFind(agents, handle) != 0;
}
/** True when `handle` is a GPU agent. */
export function isGpu(handle: u64): bool {
  const s = tableFind(agents, handle);
  return s != 0 && ((load<u64>(s) - 1) >> 32) == 2;
}

