/**
 * The `nvtx_range` stat of device work, as XLA attaches it ({@link nvtxSweep}).
 */
import { tableFind } from "../util/hash_table";
import { regrow } from "../util/regrow";
import { corrGet, nvtxSet } from "./xspace_corr";
import { lineIter, lineNext } from "./xspace_lines";
import { recSize, runBytes, runLoad } from "./xspace_spill";
import { metaAt } from "./xspace_meta";
import { CHUNK_HEAD, Line, Plane, hostPlane, planeList, runsOf, stIntern } from "./xspace_plane";
import { LINE_NVTX, LINE_OVERHEAD, META_MASK, R, WK } from "./xspace_schema";

/**
 * nvtx_range, as XLA attaches it: each kernel, memcpy, memset or graph launch gets the innermost NVTX range that was
 * open on the launching thread when the launch call started (a ref to the range's name). Per thread, the API calls
 * and the ranges are walked together in start order with a stack of open ranges; the result is kept per correlation
 * id ({@link nvtxSet}) and each device plane interns the range names its events use.
 */
export function nvtxSweep(): void {
  const hp = hostPlane;
  for (let i: u32 = 0; i < hp.lineCount; i++) {
    const nl = changetype<Line>(load<usize>(hp.lineList + (<usize>i << 2)));
    if (nl.key < LINE_NVTX || nl.key >= LINE_OVERHEAD) continue;
    const slot = tableFind(hp.lines, nl.key & 0xffffffff);
    if (slot == 0) continue;
    const al = changetype<Line>(<usize>load<u64>(slot));
    // The thread's ranges (slot 1) and API calls, both in start order; instants never contain anything.
    lineIter(1, nl);
    nextRr = nextRange();
    if (nextRr == 0) continue;
    sp = 0;
    lastMeta = 0;
    lastPlane = 0;
    if (al.runCount == 0 && al.unsorted == 0) {
      // In memory and in order (the common case): its chunks walked with locals, not through a lineIter slot.
      let c = al.head;
      while (c != 0) {
        let r = c + CHUNK_HEAD;
        const end = r + <usize>load<u32>(c, 4);
        while (r < end) {
          sweepCall(r);
          r += recSize(r);
        }
        c = <usize>load<u32>(c);
      }
    } else if (al.unsorted == 0) {
      // Spilled in order (arrival order is start order): each run read whole and walked with locals, not record by
      // record through a lineIter slot.
      const runs = runsOf(al);
      for (let k: u32 = 0; k < runs.count; k++) {
        let r = runLoad(runs, k);
        const end = r + <usize>runBytes(runs, k);
        while (r < end) {
          sweepCall(r);
          r += recSize(r);
        }
      }
    } else {
      lineIter(0, al);
      for (;;) {
        const rec = lineNext(0);
        if (rec == 0) break;
        sweepCall(rec);
      }
    }
  }
}

/** Next NVTX range of the thread being swept (start order), or 0. */
let nextRr: usize = 0;
/** Open ranges on the stack. */
let sp: u32 = 0;
/** The (range metadata, device plane index + 1) pair noted last: its plane needs no second look. */
let lastMeta: u32 = 0;
let lastPlane: u32 = 0;

/** One API call `rec` of the thread being swept: the ranges open at its start, and its launch's nvtx_range. */
// @ts-ignore: decorator
@inline function sweepCall(rec: usize): void {
  const st = load<u64>(rec);
  let rr = nextRr;
  while (rr != 0 && load<u64>(rr) <= st) {
    // Open ranges: {start u64, end u64 (start + duration, wrapping as before), meta u32, 0}.
    if (sp == stackCap) {
      stackCap = stackCap == 0 ? 64 : stackCap << 1;
      rangeStack = regrow(rangeStack, <usize>sp * 24, <usize>stackCap * 24);
    }
    const e = rangeStack + <usize>sp * 24;
    store<u64>(e, load<u64>(rr));
    store<u64>(e, load<u64>(rr) + load<u64>(rr, 8), 8);
    store<u32>(e, load<u32>(rr, 16) & META_MASK, 16);
    sp++;
    rr = nextRange();
  }
  nextRr = rr;
  let n = sp;
  while (n > 0) {
    if (load<u64>(rangeStack + <usize>(n - 1) * 24, 8) > st) break;
    n--;
  }
  sp = n;
  if (n == 0) return;
  const corr = load<u32>(rec, 20);
  const d = corrGet(corr);
  if (d == 0) return;
  const meta = load<u32>(rangeStack + <usize>(n - 1) * 24, 16);
  nvtxSet(corr, meta);
  if (meta == lastMeta && d == lastPlane) return;
  lastMeta = meta;
  lastPlane = d;
  const hp = hostPlane;
  const dp = changetype<Plane>(load<usize>(planeList + (<usize>(d - 1) << 2)));
  if (dp.nvtxMap == 0) {
    dp.nvtxMap = heap.alloc((<usize>hp.ev.count + 1) << 2);
    memory.fill(dp.nvtxMap, 0, (<usize>hp.ev.count + 1) << 2);
  }
  const at = dp.nvtxMap + (<usize>meta << 2);
  if (load<u32>(at) == 0) {
    // The range name without domain, as XLA's NVTXRangeTracker reports it (the metadata's display name).
    const e = metaAt(hp.ev, meta);
    store<u32>(at, stIntern(dp, <usize>load<u32>(e, 8), load<u32>(e, 12)));
    dp.used |= 1 << WK.NVTX_RANGE;
  }
}

/** Open NVTX ranges of {@link nvtxSweep} (24 bytes each), grown as needed. */
let rangeStack: usize = 0;
let stackCap: u32 = 0;

/** Starts a file: no range stack (the heap was rewound). */
export function nvtxBegin(): void {
  rangeStack = 0;
  stackCap = 0;
}

/** Next NVTX range record of {@link lineIter} slot 1 (marks skipped), or 0. */
function nextRange(): usize {
  let r = lineNext(1);
  while (r != 0 && ((load<u32>(r, 16) >> 24) & 15) != R.RANGE) r = lineNext(1);
  return r;
}
