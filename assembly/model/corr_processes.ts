/**
 * Which process made each correlation id's API calls (pass 1), and which processes have a host event the output
 * shows (end of pass 1). Re-exported by model/session.ts: decoders and emitters read them as S.*.
 *
 * Memory: a bit per correlation id while the dump has shown one process, a byte per id after (paged, 64 KiB pages,
 * 2048 at most each); two lists of up to 254 pids.
 */
import { Paged, pagedNew, pagedSlot, pagedEpoch } from "../util/paged";
import { bitsExpand, BITS_PAGE_BITS } from "../util/paged_bits";
import { apiPidsNoted } from "./session";

// Which process made each correlation id's API calls, to find ids that API calls of two processes share: CUPTI's
// device records carry no process, so such an id cannot be joined to the right launch and its flows are left out
// (warning CORRELATION_PROCESSES) instead of drawn twice.
//
// While the dump has shown one process, a bit per id says that process used it (`corrBits`): CUPTI numbers every
// API call, traced or not, so a real dump's ids are several times sparser than its records (torch.rawtrace: ids
// 11 … 44,199 for 7,900 events) and a byte per id spilled 36 MB on that trace tiled a thousand times, which a browser
// holds in JavaScript memory through a load. The second process turns the bits into the byte table below
// ({@link corrExpand}), once.
//
// corr → index + 1 of the process whose API call made it (`corrPid`, u8 per id: 64 Ki ids per 64 KiB page, 2048
// pages at most; processes are numbered in order of appearance, the 254th and later share the last number);
// AMBIGUOUS when API calls of two processes carry the same id.
let corrBits: Paged = 0; // bit (corr & 7) of byte corr >> 3: 512 Ki ids per 64 KiB page, 2048 pages at most
let corrPid: Paged = 0;
const AMBIGUOUS: u8 = 0xff;
const MAX_PIDS: u32 = 254;
const pidList = memory.data(<i32>MAX_PIDS * 4);
let pidCount: u32 = 0;
let lastPid: u32 = 0;
let lastPidIndex: u8 = 0;
/** Correlation ids used by API calls of more than one process (pass 1). */
export let ambiguousCorrs: u32 = 0;
// Page of the last id noted (ids arrive nearly in order: most lookups skip the page directory): in `corrBits`
// (corr >> 19) while pidCount is 1, in `corrPid` (corr >> 16) after.
let lastCorrPage: u32 = 0xffffffff;
let lastCorrBase: usize = 0;
let lastCorrEpoch: u32 = 0; // pagedEpoch of that array when lastCorrBase was taken (from a `create` slot)

function pidIndex(pid: u32): u8 {
  if (pidCount != 0 && pid == lastPid) return lastPidIndex;
  let i: u32 = 0;
  while (i < pidCount && load<u32>(pidList + (<usize>i << 2)) != pid) i++;
  if (i == pidCount) {
    if (pidCount < MAX_PIDS) {
      store<u32>(pidList + (<usize>i << 2), pid);
      pidCount++;
      if (pidCount == 2) corrExpand();
    } else i = MAX_PIDS - 1;
  }
  lastPid = pid;
  lastPidIndex = <u8>(i + 1);
  return lastPidIndex;
}

// Processes with a host event the output shows (for the Chrome lead; set at the end of pass 1 by
// model/shown_hosts.ts, in file order): a call hidden by default (cudaGetDevice, untracked driver calls) or outside
// the run's window makes no event, so a process of only those has none.
const shownList = memory.data(<i32>MAX_PIDS * 4);
let shownCount: u32 = 0;
/** Decoders whose host events take the HEADER's pid ({@link apiPidsNoted} false): pass 1 saw one the output shows. */
let hostShown = false;

/**
 * End of pass 1 (model/shown_hosts.ts, in file order): process `pid` made an API call the output shows (kept, not
 * hidden by default, or --all-api).
 */
export function noteShownApi(pid: u32): void {
  for (let i: u32 = 0; i < shownCount; i++) if (load<u32>(shownList + (<usize>i << 2)) == pid) return;
  if (shownCount < MAX_PIDS) store<u32>(shownList + (<usize>(shownCount++) << 2), pid);
}

/** End of pass 1 (model/shown_hosts.ts), decoders whose host events take the HEADER's pid: a host event the output shows. */
export function noteHostShown(): void {
  hostShown = true;
}

/**
 * Whether pass 1 saw a host event the output shows of process `pid` (an API call not hidden by default), or, for a
 * decoder that notes no API call's process (its host events take the HEADER's pid: {@link apiPidsNoted} false), of
 * any process. The Chrome writer names the HEADER's process first only then (emit/chrome_meta.ts chromeLead), never a
 * process no event uses: a dump without shown host events (kernels only, hidden calls only) has no lead (and no link
 * for HTA to lose).
 */
export function apiProcessSeen(pid: u32): bool {
  if (!apiPidsNoted) return hostShown;
  for (let i: u32 = 0; i < shownCount; i++) if (load<u32>(shownList + (<usize>i << 2)) == pid) return true;
  return false;
}

/**
 * The first process pass 1 saw a shown API call of (its OS pid), or 0 when there is none or the decoder notes no API
 * call's process (ROCm, Gaudi).
 */
export function firstApiPid(): u32 {
  return shownCount != 0 ? load<u32>(shownList) : 0;
}

/** The second process: every id of the first one's bits becomes byte 1 (its index) in `corrPid`, used from here on. */
function corrExpand(): void {
  lastCorrPage = 0xffffffff;
  const bits = corrBits;
  corrBits = 0;
  if (bits != 0) bitsExpand(bits, corrPid, 0, 1); // later ids past corrPid's page cap are not tracked (as before)
}

/** Pass 1: API call `corr` made by process `pid`. Returns false when this makes `corr` ambiguous (first time). */
// @ts-ignore: decorator
@inline export function noteApiProcess(corr: u32, pid: u32): bool {
  // The common cases inline (no call per API record): the id on the last page noted, the last process, and either
  // one process so far (set its bit) or the id new or already this process's.
  if (corr != 0 && pid == lastPid && pidCount != 0) {
    if (pidCount == 1) {
      if (corr >>> 19 == lastCorrPage && pagedEpoch(corrBits) == lastCorrEpoch) {
        const s = lastCorrBase + <usize>((corr & 0x7ffff) >>> 3);
        store<u8>(s, load<u8>(s) | (<u8>1 << <u8>(corr & 7)));
        return true;
      }
    } else if (corr >>> 16 == lastCorrPage && pagedEpoch(corrPid) == lastCorrEpoch) {
      const s = lastCorrBase + <usize>(corr & 0xffff);
      const cur = load<u8>(s);
      if (cur == 0) {
        store<u8>(s, lastPidIndex);
        return true;
      }
      if (cur == lastPidIndex) return true;
    }
  }
  return noteApiProcessAny(corr, pid);
}

/** {@link noteApiProcess} for any id. */
function noteApiProcessAny(corr: u32, pid: u32): bool {
  if (corr == 0) return true;
  const me = pidIndex(pid); // the second process turns the bits into bytes here
  if (pidCount == 1) {
    if (corrBits == 0) corrBits = pagedNew(0, BITS_PAGE_BITS, 2048);
    const at = <usize>((corr & 0x7ffff) >>> 3);
    const s = pagedSlot(corrBits, <u64>(corr >>> 3), true);
    if (s == 0) return true; // beyond the page cap (crafted ids): not tracked
    lastCorrPage = corr >>> 19;
    lastCorrBase = s - at;
    lastCorrEpoch = pagedEpoch(corrBits);
    store<u8>(s, load<u8>(s) | (<u8>1 << <u8>(corr & 7)));
    return true;
  }
  const page = corr >>> 16;
  const at = <usize>(corr & 0xffff);
  let s: usize;
  if (page == lastCorrPage && pagedEpoch(corrPid) == lastCorrEpoch) s = lastCorrBase + at;
  else {
    s = pagedSlot(corrPid, <u64>corr, true);
    if (s == 0) return true; // beyond the page cap (crafted ids): not tracked
    lastCorrPage = page;
    lastCorrBase = s - at;
    lastCorrEpoch = pagedEpoch(corrPid);
  }
  const cur = load<u8>(s);
  if (cur == 0) {
    store<u8>(s, me);
    return true;
  }
  if (cur == me || cur == AMBIGUOUS) return true;
  store<u8>(s, AMBIGUOUS);
  ambiguousCorrs++;
  return false;
}

/** True when correlation id `corr` is used by API calls of two processes (no flows may be drawn for it). */
export function corrAmbiguous(corr: u64): bool {
  if (ambiguousCorrs == 0 || corr == 0) return false;
  const s = pagedSlot(corrPid, corr, false);
  return s != 0 && load<u8>(s) == AMBIGUOUS;
}

/** Resets the tables; model/session.ts sessionReset calls it for every file (after heap.reset()). */
export function corrProcessesReset(): void {
  corrPid = pagedNew(0, 16, 2048);
  corrBits = 0;
  ambiguousCorrs = 0;
  lastCorrPage = 0xffffffff;
  pidCount = 0;
  shownCount = 0;
  hostShown = false;
}
