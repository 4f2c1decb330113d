/**
 * Step links: the launch calls of threads that carry no step marker, joined to the step their call started in, the
 * way XProf's event grouping (tsl group_events.cc) joins events across threads — context stats, not nesting
 * (docs/xspace.md, "Steps launched from other threads").
 *
 * XProf gives a `ProfilerStep#N` root its group and passes it on to what nests under it on its own line and, through
 * `correlation_id`, to the device work of those launches. A GPU with some of that grouped work also gets the rest of
 * its work grouped (each ungrouped event takes the latest group before it on its plane), but a GPU whose work in the
 * step is all launched from other threads (one host thread per GPU, as torch.nn.DataParallel runs them) was in no
 * step. XProf's other way across threads is the producer / consumer context: every event with `_ct` T, `_c` I becomes
 * a child of every event with `_pt` T, `_p` I (ConnectContextGroups), and so takes its group. So a launch call (one
 * with device work) on a thread without step markers of the marker's own process, starting in step N's span, onto a
 * GPU with no call of step N nested under the marker, gets `_ct` 0, `_c` N, and the marker of step N `_pt` 0, `_p` N
 * — only then, so a file without such calls is written as before. The ids are the step numbers and the type
 * kGeneric, as a joined host merge links its ranks' steps (emit/xspace_schema.ts stepStats): such a call of rank k
 * links to the host's step N. No event is added: the four stats are internal ones the trace viewer does not show;
 * but XProf keeps one flow per event, the context's, so a linked call loses its launch → kernel arrow (hence no links
 * where none are needed).
 *
 * A step takes links only when that cannot be wrong: its span overlaps no other step (nested or concurrent step
 * ranges, several marker threads at once) and no other marker in the file has its number (the ids are numbers). A
 * GPU takes none when links would move work that is in no step into one: once a GPU has grouped work, XProf gives its
 * ungrouped events the group before them, so a GPU without work grouped through a marker, with a launch outside the
 * links (in no linkable step, of another process, or not nested under its marker on a marker thread) after its first
 * linkable launch, stays in no step — its work in the steps missing rather than its work between them counted.
 *
 * Memory: 32 B per step marker (sized once from the count pass 1 found, model/steps.ts stepsFound), sorted in place
 * (heap sort: O(n log n) whatever order the markers end in); at the end 24 B per GPU plane, a table of the marker
 * threads and one of the (step, GPU) pairs beyond a step's first GPU driven under its marker, among the GPUs other
 * threads launch onto in a step.
 */
import { Ev } from "../model/event";
import { stepsFound } from "../model/steps";
import { Table, tableFind, tableNew, tableUpsert } from "../util/hash_table";
import { regrow } from "../util/regrow";
import { corrGet } from "./xspace_corr";
import { lineIter, lineNext } from "./xspace_lines";
import { hostRanks } from "./options";
import { Line, hostPlane, planeCount } from "./xspace_plane";
import { LINE_NVTX, R, WK } from "./xspace_schema";

/** A step marker: start u64, end u64 (Unix ns), number u32, tid u32, pid u32, flags u32 (below; bits 16–24 a GPU). */
const STEP_BYTES: usize = 32;
/** Overlaps no other step and no other marker has its number: may take links. */
const LINKABLE: u32 = 1;
/** Has linked calls: its marker produces the context. */
const USED: u32 = 2;
/** Has calls of other threads of its process onto a GPU not driven under it (linked unless the GPU is blocked). */
const CAND: u32 = 4;
/** Another marker has its number. */
const DUP: u32 = 8;
/** Drives more GPUs under its marker than the one in bits 16–24: the others are in {@link covered}. */
const COVER_MORE: u32 = 16;

/** Per GPU plane (index + 1): first linkable launch start u64, last launch outside the links u64, flags u32 (D_*). */
const DEV_BYTES: usize = 24;
/** Launched onto from a thread without markers in a linkable step of its process. */
const D_SIDE: u32 = 1;
/** Has work grouped through a marker (a call nested under a linkable step's marker). */
const D_COVERED: u32 = 2;
/** Has calls that would link. */
const D_CAND: u32 = 4;
/** Has calls outside the links. */
const D_OUTSIDE: u32 = 8;
/** Takes no links ({@link stepLinkSweep}). */
const D_BLOCKED: u32 = 16;

let steps: usize = 0; // in arrival order until stepLinkSweep sorts them by start
let count: u32 = 0;
let cap: u32 = 0;
let devs: usize = 0;
let covered: Table = 0; // (step, GPU) pairs beyond a step's first GPU driven under its marker

/** Starts a file (the heap was rewound). */
export function stepsBegin(): void {
  steps = 0;
  count = 0;
  cap = 0;
  devs = 0;
  covered = 0;
}

// @ts-ignore: decorator
@inline function stepAt(i: u32): usize {
  return steps + <usize>i * STEP_BYTES;
}
// @ts-ignore: decorator
@inline function flagsOf(i: u32): u32 {
  return load<u32>(stepAt(i), 28);
}
// @ts-ignore: decorator
@inline function flagSet(i: u32, f: u32): void {
  store<u32>(stepAt(i), flagsOf(i) | f, 28);
}
// @ts-ignore: decorator
@inline function devAt(d: u32): usize {
  return devs + <usize>d * DEV_BYTES;
}

/** Notes step marker `e` (pass 2, number `e.stepNum`) on thread `e.tid` of process `e.pid`. */
export function stepAdd(e: Ev): void {
  if (count == cap) {
    // Pass 1 counted the step ranges: one block of that size, grown only if more come (none should).
    const grown = cap == 0 ? max<u32>(stepsFound(), 16) : cap << 1;
    steps = regrow(steps, <usize>count * STEP_BYTES, <usize>grown * STEP_BYTES);
    cap = grown;
  }
  const s = stepAt(count);
  store<u64>(s, e.start);
  store<u64>(s, e.end, 8);
  store<u32>(s, <u32>e.stepNum, 16);
  store<u32>(s, e.tid, 20);
  store<u32>(s, e.pid, 24);
  store<u32>(s, 0, 28);
  count++;
}

/** Whether step at `a` sorts before step at `b`: by number (`byNum`), else by start, then end (a zero-length first). */
// @ts-ignore: decorator
@inline function before(a: usize, b: usize, byNum: bool): bool {
  if (byNum) return load<u32>(a, 16) < load<u32>(b, 16);
  const sa = load<u64>(a);
  const sb = load<u64>(b);
  return sa != sb ? sa < sb : load<u64>(a, 8) < load<u64>(b, 8);
}

function swapSteps(i: u32, j: u32): void {
  const a = stepAt(i);
  const b = stepAt(j);
  for (let o: usize = 0; o < STEP_BYTES; o += 8) {
    const x = load<u64>(a + o);
    store<u64>(a + o, load<u64>(b + o));
    store<u64>(b + o, x);
  }
}

function siftDown(root: u32, n: u32, byNum: bool): void {
  for (;;) {
    let c = (root << 1) + 1;
    if (c >= n) return;
    if (c + 1 < n && before(stepAt(c), stepAt(c + 1), byNum)) c++;
    if (!before(stepAt(root), stepAt(c), byNum)) return;
    swapSteps(root, c);
    root = c;
  }
}

/**
 * Sorts the markers in place (heap sort: O(n log n) in any arrival order — markers arrive when their range ends, in
 * dump order, the ones nvtxFinish closes in hash-table order — where insertion from the back was quadratic). Equal
 * keys may come in any order: markers with the same start and end overlap (a zero-length one can hold no call).
 */
function sortSteps(byNum: bool): void {
  for (let i = count >> 1; i > 0; i--) siftDown(i - 1, count, byNum);
  for (let n = count; n > 1; n--) {
    swapSteps(0, n - 1);
    siftDown(0, n - 1, byNum);
  }
}

/**
 * The step a call starting at `t` (Unix ns) links to: its index, or -1 when `t` is in no linkable step (after
 * {@link stepLinkSweep}).
 */
export function stepLinkOf(t: u64): i32 {
  // The last step starting at or before t; a linkable step overlaps no other, so it is that one if any.
  let lo: u32 = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (load<u64>(stepAt(mid)) <= t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  const s = stepAt(lo - 1);
  return (load<u32>(s, 28) & LINKABLE) != 0 && t < load<u64>(s, 8) ? <i32>(lo - 1) : -1;
}

/** Step number of step `i`. */
export function stepNumber(i: i32): u64 {
  return <u64>load<u32>(stepAt(<u32>i), 16);
}

/**
 * Whether the step marker starting at `start` (Unix ns) with number `num` has linked calls: it produces the context.
 * A step with links is linkable, so the only marker with its number.
 */
export function stepProduces(start: u64, num: u32): bool {
  const i = stepLinkOf(start);
  return i >= 0 && (flagsOf(<u32>i) & USED) != 0 && load<u32>(stepAt(<u32>i), 16) == num;
}

/** Key of (step `i`, device plane index + 1 `d`) in {@link covered}. */
// @ts-ignore: decorator
@inline function pairKey(i: u32, d: u32): u64 {
  return (<u64>i << 9) | <u64>d;
}

/** Whether step `i` has a call onto GPU plane `d` nested under its marker. */
function isCovered(i: u32, d: u32): bool {
  const f = flagsOf(i);
  if (((f >> 16) & 511) == d) return true;
  return (f & COVER_MORE) != 0 && tableFind(covered, pairKey(i, d)) != 0;
}

function cover(i: u32, d: u32): void {
  const f = flagsOf(i);
  if (((f >> 16) & 511) == 0) flagSet(i, d << 16);
  else if (((f >> 16) & 511) != d) {
    flagSet(i, COVER_MORE);
    tableUpsert(covered, pairKey(i, d));
  }
  store<u32>(devAt(d), load<u32>(devAt(d), 16) | D_COVERED, 16);
}

/** A call in linkable step `i` onto GPU plane `d` of a thread without markers of its process is linked. */
// @ts-ignore: decorator
@inline function linkedCall(i: u32, d: u32): bool {
  return (load<u32>(devAt(d), 16) & D_BLOCKED) == 0 && !isCovered(i, d);
}

/**
 * Whether API record `r` starting in step `i` ({@link stepLinkOf}), with work on device plane index + 1 `d` (0:
 * none), on a line of a thread without markers of process `pid`, is linked ({@link stepLinkSweep}).
 */
export function stepLinked(i: i32, d: u32, pid: u32): bool {
  if (i < 0 || d == 0 || (flagsOf(<u32>i) & USED) == 0) return false;
  return load<u32>(stepAt(<u32>i), 24) == pid && linkedCall(<u32>i, d);
}

/** {@link sweep} modes. */
const PROBE: i32 = 0;
const COVER: i32 = 1;
const SIDE: i32 = 2;
const MARK: i32 = 3;

/** Notes a call onto GPU plane `d` starting at `t` outside the links. */
function outside(d: u32, t: u64): void {
  const v = devAt(d);
  if (t > load<u64>(v, 8)) store<u64>(v, t, 8);
  store<u32>(v, load<u32>(v, 16) | D_OUTSIDE, 16);
}

/**
 * Walks the host API lines of the threads with markers (`mode` COVER) or without (the others), visiting each call with
 * device work. PROBE: notes the GPUs (D_SIDE) a thread without markers launches onto in a linkable step of its
 * process; returns whether any. COVER: notes the calls nested under their linkable step's marker onto those GPUs
 * ({@link cover}) and the others onto them ({@link outside}). SIDE: notes the calls that would link (CAND on the step,
 * D_CAND and the earliest start on the GPU, {@link Line.links} on the line) and the others ({@link outside}). MARK
 * (lines with links only): marks the steps that linked calls link to (USED).
 */
function sweep(tids: Table, mode: i32): bool {
  const hp = hostPlane;
  let found = false;
  for (let j: u32 = 0; j < hp.lineCount; j++) {
    const ln = changetype<Line>(load<usize>(hp.lineList + (<usize>j << 2)));
    if (ln.key >= LINE_NVTX || (tableFind(tids, ln.key) != 0) != (mode == COVER)) continue;
    if (mode == MARK && ln.links == 0) continue;
    lineIter(0, ln);
    for (;;) {
      const r = lineNext(0);
      if (r == 0) break;
      if (((load<u32>(r, 16) >> 24) & 15) != R.API) continue;
      const corr = load<u32>(r, 20);
      const d = corr != 0 ? corrGet(corr) : 0;
      if (d == 0) continue;
      const start = load<u64>(r);
      const i = stepLinkOf(start);
      if (mode == COVER) {
        if ((load<u32>(devAt(d), 16) & D_SIDE) == 0) continue;
        const s = i >= 0 ? stepAt(<u32>i) : 0;
        if (s != 0 && <u64>load<u32>(s, 20) == ln.key && start + load<u64>(r, 8) <= load<u64>(s, 8)) cover(<u32>i, d);
        else outside(d, start);
        continue;
      }
      const own = i >= 0 && load<u32>(stepAt(<u32>i), 24) == ln.pid;
      if (mode == PROBE) {
        if (own) {
          store<u32>(devAt(d), D_SIDE, 16);
          found = true;
        }
      } else if (mode == MARK) {
        if (own && linkedCall(<u32>i, d)) flagSet(<u32>i, USED);
      } else if (!own) {
        outside(d, start);
      } else if (!isCovered(<u32>i, d)) {
        const v = devAt(d);
        const f = load<u32>(v, 16);
        if ((f & D_CAND) == 0 || start < load<u64>(v)) store<u64>(v, start);
        store<u32>(v, f | D_CAND, 16);
        flagSet(<u32>i, CAND);
        ln.links = 1;
        found = true;
      }
    }
  }
  return found;
}

/**
 * End of the pass, before the stat metadata is made (after the NVTX sweep: the sort scratch is reserved). Sorts the
 * markers, decides which steps can take links, then which calls link: a call with device work, on a thread without
 * markers of the step's process, in a linkable step, whose GPU has no call of that step nested under the marker (a GPU
 * that has needs no link: XProf gives each of its ungrouped events the group of the latest grouped event on its plane
 * before it, ProcessUngroupedEvents, xprof/utils/derived_timeline.cc, and a link would cost the call its launch →
 * kernel arrow in the trace viewer, XProf keeping one flow per event) and that is not blocked: a GPU without any call
 * nested under a marker blocks when a call onto it outside the links starts at or after its first linkable call, as
 * that work would join the step before it. Marks the steps their calls link to ({@link stepProduces}) and the stats
 * the host plane then uses.
 */
export function stepLinkSweep(): void {
  if (count == 0) return;
  // Numbers: sorted by number, a run of equal ones takes no links.
  sortSteps(true);
  for (let k: u32 = 1; k < count; k++) {
    if (load<u32>(stepAt(k), 16) == load<u32>(stepAt(k - 1), 16)) {
      flagSet(k - 1, DUP);
      flagSet(k, DUP);
    }
  }
  sortSteps(false);
  const tids: Table = tableNew(16);
  let maxEnd: u64 = 0;
  for (let k: u32 = 0; k < count; k++) {
    const s = stepAt(k);
    tableUpsert(tids, load<u32>(s, 20));
    const start = load<u64>(s);
    const end = load<u64>(s, 8);
    const alone = start >= maxEnd && (k + 1 == count || end <= load<u64>(stepAt(k + 1)));
    if (alone && (flagsOf(k) & DUP) == 0) flagSet(k, LINKABLE);
    if (end > maxEnd) maxEnd = end;
  }
  devs = heap.alloc((<usize>planeCount + 1) * DEV_BYTES);
  memory.fill(devs, 0, (<usize>planeCount + 1) * DEV_BYTES);
  if (!sweep(tids, PROBE)) return;
  covered = tableNew(16);
  sweep(tids, COVER);
  if (!sweep(tids, SIDE)) return;
  let blocked = false;
  for (let d: u32 = 1; d <= planeCount; d++) {
    const v = devAt(d);
    const f = load<u32>(v, 16);
    if ((f & (D_CAND | D_COVERED | D_OUTSIDE)) != (D_CAND | D_OUTSIDE) || load<u64>(v, 8) < load<u64>(v)) continue;
    store<u32>(v, f | D_BLOCKED, 16);
    blocked = true;
  }
  let linked = false;
  if (blocked) sweep(tids, MARK);
  for (let k: u32 = 0; k < count; k++) {
    if (!blocked && (flagsOf(k) & CAND) != 0) flagSet(k, USED);
    if ((flagsOf(k) & USED) != 0) linked = true;
  }
  if (!linked) return;
  const hp = hostPlane;
  hp.used |= (1 << WK.CONSUMER_TYPE) | (1 << WK.CONSUMER_ID);
  if (hostRanks == 1) hp.used |= (1 << WK.PRODUCER_TYPE) | (1 << WK.PRODUCER_ID);
}
