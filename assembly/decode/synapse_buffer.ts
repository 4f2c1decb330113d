/**
 * One HPU_TRACE chunk (Habana, vendor 5): its 48-byte header and the `synProfilerGetTrace` buffer it holds verbatim,
 * `[synTraceEvent × num][string pool][size_t num][size_t version]` (docs/decoders/hpu.md). {@link hpuOpen} validates
 * the chunk and picks the entry layout; {@link hpuStr} relocates a `char*` of an entry; {@link hpuTime} decodes a
 * `long double` µs field into ns. Nothing here traps on hostile bytes: every length is checked against the chunk.
 *
 * Chunk header: u64 base @0 (the buffer's address in the profiled process), u64 size @8 (bytes returned), u64
 * numEntries @16 (synProfilerGetTrace's out-parameter), u32 device @24, u32 trace type @28, u32 reason @32, u32 pull
 * index @36, u64 profiler ns @40; the buffer from @48.
 *
 * A chunk the file's end cut (format/container.ts `cutDeclared`) holds the buffer's first bytes only: no trailer, so
 * its entry count is the header's numEntries, and the entries and pool strings past the cut are missing (the entry
 * the cut went through is RECORD_TRUNCATED, a string past it HPU_CUT_STRING).
 *
 * Entry layouts (x86-64, ../shared/reference/vendor-record-layouts.md §4): 208 bytes (current synapse_common_types.h,
 * 16-byte aligned because of `long double`) and 112 bytes (SynapseAI_Core 2021: u32 contextId, 32-byte argument
 * union). Both share name @0, category @8, type @16, timestamp @32, duration @48, engineType @64, engineIndex @68.
 */
import { Warn } from "../util/error";
import { warn, lose, NO_SEQ } from "../util/diag";
import { cutDeclared, cutUnread } from "../format/container";
import { f80ToNs, f80Status, F80_OK } from "../util/f80";
import * as S from "../model/session";
import { repairUtf8, repairedLen } from "../model/utf8";
import { Table, tableNew, tableUpsert } from "../util/hash_table";
import { arenaAlloc, arenaCopy } from "../util/arena";
import { regrow } from "../util/regrow";

/** Chunk header bytes before the buffer. */
export const HPU_HEADER: u32 = 48;
/** Current synTraceEvent size. */
export const ENTRY_NEW: u32 = 208;
/** SynapseAI_Core (2021) synTraceEvent size. */
export const ENTRY_OLD: u32 = 112;
/** HPU_BAD_TRACE reason (warning detail): the payload is shorter than the 48-byte header. */
export const BAD_HEADER: u64 = 1;
/** HPU_BAD_TRACE reason: `size` is not the bytes after the header, or is below 16. */
export const BAD_SIZE: u64 = 2;
/** HPU_BAD_TRACE reason: the trailing `num` does not fit any layout. */
export const BAD_TRAILER: u64 = 3;
/** HPU_BAD_TRACE reason: neither layout gives most entries a known type byte. */
export const BAD_LAYOUT: u64 = 4;
/**
 * HPU_BAD_TRACE reason: the file's end cut the buffer (no trailer) and the header's numEntries is more than `size`
 * can hold in either layout, so the entries cannot be told from the pool.
 */
export const BAD_CUT_COUNT: u64 = 5;
/**
 * HPU_BAD_TRACE reason: the header's `base` does not relocate the entries' names into the string pool (the pool
 * holds strings, entries name some, and no name pointer, or under half of those inside the buffer, lands at the start
 * of a pool string): names would be empty or another string's, engine types unnamed and their entries skipped, so the
 * buffer is lost.
 */
export const BAD_BASE: u64 = 6;
/** HPU_BAD_TIME detail for a denormal (the util/f80.ts statuses are 1–5). */
export const TIME_DENORMAL: i32 = 6;

// The open buffer: entries at `buf`, `num` of `entrySize` bytes, the string pool at offsets [poolLo, poolHi).
/** Address of the open buffer's first byte (in the input window: valid while its chunk is being read). */
export let buf: usize = 0;
/** Bytes of the open buffer (the `size` synProfilerGetTrace returned). */
export let bufSize: u64 = 0;
/** Address of the buffer in the profiled process (for `char*` relocation: offset = pointer − base). */
export let base: u64 = 0;
/** Entries in the open buffer (the trailing `num`; of a cut buffer, the header's numEntries). */
export let num: u32 = 0;
/**
 * Entries of the open buffer that are wholly in the file: {@link num}, but of a cut buffer only those before the
 * cut. Entries 0 to held − 1 are read.
 */
export let held: u32 = 0;
/** Bytes per entry of the open buffer: {@link ENTRY_NEW} or {@link ENTRY_OLD}. */
export let entrySize: u32 = ENTRY_NEW;
/** The trailing `version` word (the profiler's parser version) of the last buffer opened. */
export let version: u64 = 0;
/** synDeviceId of the open buffer (its chunk header). */
export let device: u32 = 0;
/**
 * synProfilerGetTrace's numEntries out-parameter (the chunk header): informational in a whole buffer (the trailer
 * wins), the entry count of a cut one.
 */
export let numEntries: u64 = 0;
// The string pool at buffer offsets [poolLo, poolEnd); of a cut buffer only [poolLo, poolHi) is in the file
// (poolHi = poolEnd for a whole buffer).
let poolLo: u64 = 0;
let poolHi: u64 = 0;
let poolEnd: u64 = 0;
/** File offset of the first buffer byte (entry i is at bufOff + i × entrySize). */
export let bufOff: u64 = 0;

/** Forgets per-file state. */
export function bufferReset(): void {
  namesReset();
  buf = 0;
  num = 0;
  held = 0;
}

/** True when entry `i` of a `size`-byte layout at `b` has a known type byte (B, E, X, M, C, i, I). */
function knownType(b: usize, i: u32, size: u32): bool {
  const t = <u32>load<u8>(b + <usize>i * size, 16);
  return t == 66 || t == 69 || t == 88 || t == 77 || t == 67 || t == 105 || t == 73;
}

/** Entries of `cnt` at `b` read as `size`-byte entries whose type byte is known (0 when they do not fit). */
function typeScore(b: usize, cnt: u32, size: u32, tail: usize): u32 {
  if (<u64>cnt * size > <u64>tail) return 0;
  let n: u32 = 0;
  for (let i: u32 = 0; i < cnt; i++) if (knownType(b, i, size)) n++;
  return n;
}

/**
 * The entry layout of the `c` entries at `b`: the one under which more of them have a known type byte (a 112-byte
 * buffer read as 208-byte entries, or the reverse, puts the type byte in the middle of other fields); more than half
 * must, ties go to the current layout. A few damaged entries then stay single entries (UNKNOWN_KIND), not a lost
 * buffer. `roomNew` and `roomOld` are the bytes the entries may fill in each layout (0: that layout is out). Returns
 * {@link ENTRY_NEW}, {@link ENTRY_OLD}, or 0 when neither holds.
 */
function layoutOf(b: usize, c: u32, roomNew: usize, roomOld: usize): u32 {
  const sNew = typeScore(b, c, ENTRY_NEW, roomNew);
  const sOld = typeScore(b, c, ENTRY_OLD, roomOld);
  if (c == 0) return ENTRY_NEW;
  if (sNew >= sOld && sNew * 2 > c) return ENTRY_NEW;
  if (sOld > sNew && sOld * 2 > c) return ENTRY_OLD;
  return 0;
}

/**
 * Validates the HPU_TRACE payload [p, p+n) at file offset `off` (chunk header) and opens it. Returns false (warned
 * HPU_BAD_TRACE, the chunk's bytes counted as lost) when it cannot be read. `report` is false in pass 2 (pass 1
 * warned already). The held part of a chunk the file's end cut (format/container.ts `cutDeclared`) is opened by
 * {@link openCut}.
 */
export function hpuOpen(p: usize, n: u32, off: u64, report: bool): bool {
  buf = 0;
  num = 0;
  held = 0;
  // The held part of a chunk the file's end cut (only its padding cut: whole), and the buffer's length as the chunk
  // header declares it (of a cut chunk, more than is here).
  const cut = cutDeclared > n;
  const declared = cut ? cutDeclared : n;
  let reason: u64 = 0;
  if (n < HPU_HEADER) {
    if (cut && declared >= HPU_HEADER) {
      // Cut inside its own header: nothing to read, the cut tail is lost (TRUNCATED), as before.
      cutUnread();
      return false;
    }
    reason = BAD_HEADER;
  } else {
    base = load<u64>(p);
    bufSize = load<u64>(p, 8);
    numEntries = load<u64>(p, 16);
    device = load<u32>(p, 24);
    // The buffer is copied verbatim: its size must be what the chunk holds (or declares) after the header.
    if (bufSize != <u64>(declared - HPU_HEADER) || bufSize < 16) reason = BAD_SIZE;
  }
  if (reason == 0 && cut) {
    if (numEntries == 0) {
      // An empty pull's buffer (or a count lost): no entry to read, the cut tail is lost (TRUNCATED), as before.
      cutUnread();
      return false;
    }
    reason = openCut(p + HPU_HEADER, n - HPU_HEADER, off, report);
  } else if (reason == 0) {
    const b = p + HPU_HEADER;
    const tail = <usize>bufSize - 16;
    const cnt = load<u64>(b + tail);
    version = load<u64>(b + tail + 8);
    if (cnt > <u64>tail / ENTRY_OLD) reason = BAD_TRAILER;
    else {
      const size = layoutOf(b, <u32>cnt, tail, tail);
      if (size == 0) reason = BAD_LAYOUT;
      else {
        buf = b;
        num = <u32>cnt;
        held = num;
        entrySize = size;
        poolLo = cnt * <u64>size;
        poolHi = <u64>tail;
        poolEnd = poolHi;
        bufOff = off + 24 + HPU_HEADER;
        if (!baseFits()) reason = BAD_BASE;
      }
    }
  }
  if (reason != 0) {
    buf = 0;
    num = 0;
    held = 0;
    if (report) {
      warn(Warn.HPU_BAD_TRACE, off, reason);
      lose(Warn.HPU_BAD_TRACE, off, off + 24 + <u64>n, NO_SEQ, <u64>n);
    }
    return false;
  }
  return true;
}

/**
 * Opens the held part of a buffer the file's end cut: its first `h` bytes at `b` (the chunk header at file offset
 * `off`), {@link numEntries} ≥ 1 of them entries by the chunk's header, `size` checked. The trailer is missing, so
 * the header's numEntries is the count; it must fit `size − 16` in a layout, else BAD_CUT_COUNT. The layout is chosen
 * from the entries held by their type bytes, as for a whole buffer ({@link layoutOf}), but leaving entry 0 out of the
 * comparison: its type byte is at 16 in both layouts, so it tells nothing, and a buffer cut inside its first 208
 * bytes would always look like one whole 112-byte entry. The old layout needs most of its held entries after entry 0
 * known, at a higher share than the current layout's; else the current one (ties and too few entries to tell: as a
 * whole buffer's ties). Only the old layout fits when numEntries × 208 exceeds the room. The entries wholly held are
 * read ({@link held}); the one the cut
 * went through is RECORD_TRUNCATED (warned when `report`, with its held bytes lost); the pool is read up to the cut.
 * Returns the HPU_BAD_TRACE reason, 0 when opened.
 */
function openCut(b: usize, h: u32, off: u64, report: bool): u64 {
  const room = bufSize - 16;
  if (numEntries > room / <u64>ENTRY_OLD) return BAD_CUT_COUNT;
  const fitNew = numEntries * <u64>ENTRY_NEW <= room;
  const cnt = <u32>numEntries;
  // Entry 0's type byte is at 16 in both layouts and tells nothing: the old layout must show in a later entry
  // (scores without entry 0, compared as shares of the entries each layout holds after it).
  const cNew = fitNew ? min<u32>(cnt, h / ENTRY_NEW) : 0;
  const cOld = min<u32>(cnt, h / ENTRY_OLD);
  let size: u32;
  if (!fitNew) size = cOld == 0 ? ENTRY_OLD : layoutOf(b, cOld, 0, <usize>h);
  else if (cOld < 2) size = ENTRY_NEW;
  else {
    const k0: u32 = knownType(b, 0, ENTRY_OLD) ? 1 : 0;
    const sOld1 = typeScore(b, cOld, ENTRY_OLD, <usize>h) - k0;
    const sNewAll = typeScore(b, cNew, ENTRY_NEW, <usize>h);
    const sNew1 = cNew >= 2 ? sNewAll - k0 : 0;
    if (sOld1 * 2 > cOld - 1 && (cNew < 2 || <u64>sOld1 * (cNew - 1) > <u64>sNew1 * (cOld - 1))) size = ENTRY_OLD;
    else if (cNew == 0 || sNewAll * 2 > cNew) size = ENTRY_NEW;
    else size = 0;
  }
  if (size == 0) return BAD_LAYOUT;
  buf = b;
  num = cnt;
  entrySize = size;
  held = min<u32>(cnt, h / size);
  poolLo = <u64>cnt * <u64>size;
  poolEnd = room;
  poolHi = min<u64>(room, <u64>h);
  version = 0;
  bufOff = off + 24 + HPU_HEADER;
  if (!baseFits()) return BAD_BASE;
  const part = <u64>h - <u64>held * <u64>size; // bytes of entry `held` that are here, when it is cut
  if (report && held < cnt && part > 0) {
    warn(Warn.RECORD_TRUNCATED, entryOff(held), part);
    lose(Warn.RECORD_TRUNCATED, entryOff(held), bufOff + <u64>h);
  }
  return 0;
}

/**
 * Whether the open buffer's `base` can be its address: true when its pool holds no byte, when no held entry has a
 * name (char* @0), or when at least one name, and at least half of the names that point inside the buffer, relocate
 * to the start of a pool string (the pool's first byte, or one after a NUL) or into the part of the pool a cut took.
 * A `base` a few bytes off relocates most names into the middle of a string, some onto the wrong string; a `base` no
 * name fits (damaged: the chunk's checksum was computed over it) would leave every name and argument empty, its
 * metadata naming no engine type and the entries of those types skipped as UNKNOWN_KIND. Either way the buffer is
 * lost ({@link BAD_BASE}). Names kept in STRINGS (outside the buffer) do not count: the decision is the buffer's own,
 * the same in both passes.
 */
function baseFits(): bool {
  if (poolHi <= poolLo) return true;
  let named: u32 = 0;
  let inside: u32 = 0;
  let fits: u32 = 0;
  for (let i: u32 = 0; i < held; i++) {
    const ptr = load<u64>(entryAt(i));
    if (ptr == 0) continue;
    named++;
    if (ptr < base || ptr - base >= bufSize) continue;
    inside++;
    const o = ptr - base;
    if ((o >= poolHi && o < poolEnd) || (o >= poolLo && o < poolHi && (o == poolLo || load<u8>(buf + <usize>o - 1) == 0))) fits++;
  }
  return named == 0 || (fits > 0 && fits * 2 >= inside);
}

/** Address of entry `i` of the open buffer. */
// @ts-ignore: decorator
@inline export function entryAt(i: u32): usize {
  return buf + <usize>i * entrySize;
}

/** File offset of entry `i` of the open buffer. */
// @ts-ignore: decorator
@inline export function entryOff(i: u32): u64 {
  return bufOff + <u64>i * entrySize;
}

/** Length of the last {@link hpuStr} result. */
export let strLen: u32 = 0;
/** True when the last {@link hpuStr} pointer could not be resolved (warned). */
export let strBad = false;
/** True when the last {@link hpuStr} pointer leads into the part of the pool the file's end cut off (warned). */
export let strCut = false;

/**
 * The string of `char*` value `ptr` from entry `i`: inside the buffer it must be a NUL-terminated string of the pool
 * (relocated: offset = ptr − base); outside it comes from STRINGS (the collector resolved it in the process). Null is
 * the empty string. Returns the bytes (valid UTF-8) and sets {@link strLen}; an unresolvable pointer gives the empty
 * string, sets {@link strBad} and warns HPU_BAD_STRING when `report`. In a cut buffer a string that starts past the
 * cut, or runs into it before its NUL, is missing: the empty string, {@link strCut} set and HPU_CUT_STRING warned.
 */
export function hpuStr(ptr: u64, i: u32, report: bool): usize {
  strBad = false;
  strCut = false;
  strLen = 0;
  if (ptr == 0) return 0;
  if (ptr >= base && ptr - base < bufSize) {
    const o = ptr - base;
    if (o >= poolLo && o < poolEnd) {
      if (o < poolHi) {
        const s = buf + <usize>o;
        const lim = buf + <usize>poolHi;
        let q = s;
        while (q < lim && load<u8>(q) != 0) q++;
        if (q < lim) {
          const r = repairUtf8(s, q - s);
          strLen = repairedLen;
          return r;
        }
      }
      if (poolHi < poolEnd) {
        strCut = true;
        if (report) warn(Warn.HPU_CUT_STRING, entryOff(i), i);
        return 0;
      }
    }
  } else {
    const d = S.stringDisplay(ptr, false);
    if (d != 0) {
      strLen = S.displayLen;
      return d;
    }
  }
  strBad = true;
  if (report) warn(Warn.HPU_BAD_STRING, entryOff(i), i);
  return 0;
}

/** {@link poolSpan}: the bytes are in the pool and in the file. */
export const POOL_HELD: i32 = 1;
/** {@link poolSpan}: the bytes are in the pool, past the cut of a cut buffer. */
export const POOL_CUT: i32 = 2;
/** {@link poolSpan}: the bytes are not (all) in the pool. */
export const POOL_OUT: i32 = 0;

/**
 * Where the `need` bytes at buffer offset `o` lie (an extraArgs array inside the buffer): {@link POOL_HELD},
 * {@link POOL_CUT} or {@link POOL_OUT}.
 */
export function poolSpan(o: u64, need: u64): i32 {
  if (o < poolLo || o + need > poolEnd) return POOL_OUT;
  return o + need <= poolHi ? POOL_HELD : POOL_CUT;
}

/** Status of the last {@link hpuTime}: F80_OK or the HPU_BAD_TIME detail. */
export let timeStatus: i32 = 0;

/**
 * The `long double` µs at `p` as ns (util/f80.ts: roundl(x × 1000)). Denormals, negatives, infinities, NaNs, invalid
 * encodings and values ≥ 2^64 ns set {@link timeStatus} (non-zero) and return 0.
 */
export function hpuTime(p: usize): u64 {
  const se = load<u16>(p, 8);
  if ((se & 0x7fff) == 0 && load<u64>(p) != 0) {
    timeStatus = TIME_DENORMAL;
    return 0;
  }
  const ns = f80ToNs(p);
  timeStatus = f80Status == F80_OK ? 0 : f80Status;
  return ns;
}

// ---- Stable names ------------------------------------------------------------------------------------------------

// Emitters cache event names by (pointer, length) (emit/xspace.ts): a name must not live in the input window, which
// the next chunk overwrites. Names are interned by content: one arena copy per distinct name, with a dense number.
// Entry (32 B): next u32 @0, ptr u32 @4, len u32 @8, id u32 @12 (0: none yet), and for a host call's name (noted in
// pass 1): seq u32 @16 and file offset u64 @24 of its first entry in the order the buffers were written, flag u32 @20.
const NAME: usize = 32;
let names: Table = 0; // content hash → chain of entries
let nameCount: u32 = 0;
/** Dense number (1, 2, …) of the last {@link stableName}. */
export let nameId: u32 = 0;
// Host call names noted in pass 1 (entry addresses, u32 each), numbered at its end.
let hostNames: usize = 0;
let hostN: u32 = 0;
let hostCap: u32 = 0;

/** Forgets the interned names (per file). */
export function namesReset(): void {
  names = 0;
  nameCount = 0;
  hostNames = 0;
  hostN = hostCap = 0;
}

/** The entry of name [p, p+n), made (arena copy, no id yet) when new. */
function nameEntry(p: usize, n: u32): usize {
  if (names == 0) names = tableNew(256);
  let h: u64 = 0xcbf29ce484222325;
  for (let i: u32 = 0; i < n; i++) h = (h ^ <u64>load<u8>(p + i)) * 0x100000001b3;
  const slot = tableUpsert(names, h);
  let e = <usize>load<u64>(slot);
  while (e != 0) {
    if (load<u32>(e, 8) == n && memory.compare(<usize>load<u32>(e, 4), p, n) == 0) return e;
    e = <usize>load<u32>(e);
  }
  const ne = arenaAlloc(NAME);
  store<u32>(ne, <u32>load<u64>(slot));
  store<u32>(ne, <u32>arenaCopy(p, n), 4);
  store<u32>(ne, n, 8);
  store<u32>(ne, 0, 12);
  store<u32>(ne, 0, 20);
  store<u64>(slot, ne);
  return ne;
}

/**
 * A copy of name [p, p+n) that stays valid for the whole file (the same pointer for the same bytes); its number in
 * {@link nameId}: a host call's from pass 1 ({@link numberHostNames}), others numbered as pass 2 first meets them.
 */
export function stableName(p: usize, n: u32): usize {
  const e = nameEntry(p, n);
  let id = load<u32>(e, 12);
  if (id == 0) {
    id = ++nameCount;
    store<u32>(e, id, 12);
  }
  nameId = id;
  return <usize>load<u32>(e, 4);
}

/** True when name entry `a`'s first host entry comes before `b`'s (seq, then file offset). */
function nameBefore(a: usize, b: usize): bool {
  const sa = load<u32>(a, 16);
  const sb = load<u32>(b, 16);
  return sa < sb || (sa == sb && load<u64>(a, 24) < load<u64>(b, 24));
}

/**
 * Pass 1: [p, p+n) names a host call of the entry at file offset `at` in the buffer with sequence number `seq`. Host
 * calls are numbered by name (Chrome `cbid`, the emitters' API id) in the order of each name's first entry as the
 * buffers were written, whatever order the file holds them in ({@link numberHostNames}).
 */
export function noteHostName(p: usize, n: u32, seq: u32, at: u64): void {
  const e = nameEntry(p, n);
  if (load<u32>(e, 20) != 0) {
    const sa = load<u32>(e, 16);
    if (seq > sa || (seq == sa && at >= load<u64>(e, 24))) return;
  } else {
    if (hostN == hostCap) {
      const cap = hostCap == 0 ? 64 : hostCap << 1;
      hostNames = regrow(hostNames, <usize>hostCap << 2, <usize>cap << 2);
      hostCap = cap;
    }
    store<u32>(hostNames + (<usize>(hostN++) << 2), <u32>e);
    store<u32>(e, 1, 20);
  }
  store<u32>(e, seq, 16);
  store<u64>(e, at, 24);
}

/** End of pass 1: the host call names numbered 1, 2, … in the order of their first entries (heapsort, no allocation). */
export function numberHostNames(): void {
  const a = hostNames;
  const n = hostN;
  for (let i = n >> 1; i > 0; i--) siftNames(a, i - 1, n);
  for (let end = n; end > 1; end--) {
    const t = load<u32>(a);
    store<u32>(a, load<u32>(a + (<usize>(end - 1) << 2)));
    store<u32>(a + (<usize>(end - 1) << 2), t);
    siftNames(a, 0, end - 1);
  }
  for (let i: u32 = 0; i < n; i++) store<u32>(<usize>load<u32>(a + (<usize>i << 2)), i + 1, 12);
  nameCount = n;
}

function siftNames(a: usize, i: u32, n: u32): void {
  while (true) {
    let m = i;
    const l: u32 = (i << 1) + 1;
    const r: u32 = l + 1;
    if (l < n && nameBefore(<usize>load<u32>(a + (<usize>m << 2)), <usize>load<u32>(a + (<usize>l << 2)))) m = l;
    if (r < n && nameBefore(<usize>load<u32>(a + (<usize>m << 2)), <usize>load<u32>(a + (<usize>r << 2)))) m = r;
    if (m == i) return;
    const t = load<u32>(a + (<usize>i << 2));
    store<u32>(a + (<usize>i << 2), load<u32>(a + (<usize>m << 2)));
    store<u32>(a + (<usize>m << 2), t);
    i = m;
  }
}
