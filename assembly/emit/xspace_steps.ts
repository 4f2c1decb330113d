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
 * with device work) on a thread without step markers, starting in step N's span, onto a GPU with no call of step N
 * nested under the marker, gets `_ct` 0, `_c` N, and the marker of step N `_pt` 0, `_p` N — only then, so a file
 * without such calls is written as before. The ids are the step numbers and the type kGeneric, as a joined host merge
 * links its ranks' steps (emit/xspace_schema.ts stepStats): such a call of rank k links to the host's step N. No
 * event is added: the four stats are internal ones the trace viewer does not show; but XProf keeps one flow per
 * event, the context's, so a linked call loses its launch → kernel arrow (hence no links where none are needed).
 *
 * A step takes links only when that cannot be wrong: its span overlaps no other step (nested or concurrent step
 * ranges, several marker threads at once) and no other marker in the file has its number (the ids are numbers).
 *
 * Memory: 32 B per step marker and 4 B for its place in start order; at the end tables of the distinct step numbers,
 * the marker threads and the (step, GPU) pairs of the calls of other threads.
 */
import { Ev } from "../model/event";
import { Table, tableCount, tableFind, tableKeyAt, tableNew, tableSlots, tableUpsert } from "../util/hash_table";
import { regrow } from "../util/regrow";
import { corrGet } from "./xspace_corr";
import { lineIter, lineNext } from "./xspace_lines";
import { hostRanks } from "./options";
import { Line, hostPlane } from "./xspace_plane";
import { LINE_NVTX, R, WK } from "./xspace_schema";

/** A step marker: start u64, end u64 (Unix ns), number u32, tid u32, flags u32 ({@link LINKABLE}, {@link USED}), 0. */
const STEP_BYTES: usize = 32;
const LINKABLE: u32 = 1;
const USED: u32 = 2;

let steps: usize = 0; // in arrival order
let order: usize = 0; // u32 indices into steps, by start (stable)
let count: u32 = 0;
let cap: u32 = 0;

/** Starts a file (the heap was rewound). */
export function stepsBegin(): void {
  steps = 0;
  order = 0;
  count = 0;
  cap = 0;
  candidates = 0;
  covered = 0;
}

// @ts-ignore: decorator
@inline function stepAt(i: u32): usize {
  return steps + <usize>i * STEP_BYTES;
}
// @ts-ignore: decorator
@inline function orderAt(k: u32): u32 {
  return load<u32>(order + (<usize>k << 2));
}

/**
 * Notes step marker `e` (pass 2, number `e.stepNum`) on thread `e.tid`; returns its index + 1, which its record keeps
 * for {@link stepProduces}.
 */
export function stepAdd(e: Ev): u32 {
  if (count == cap) {
    const grown = cap == 0 ? 64 : cap << 1;
    steps = regrow(steps, <usize>count * STEP_BYTES, <usize>grown * STEP_BYTES);
    order = regrow(order, <usize>count << 2, <usize>grown << 2);
    cap = grown;
  }
  const s = stepAt(count);
  store<u64>(s, e.start);
  store<u64>(s, e.end, 8);
  store<u32>(s, <u32>e.stepNum, 16);
  store<u32>(s, e.tid, 20);
  store<u64>(s, 0, 24);
  // Markers come in about start order (each when its range ends): insertion from the back.
  let k = count;
  while (k > 0 && load<u64>(stepAt(orderAt(k - 1))) > e.start) {
    store<u32>(order + (<usize>k << 2), orderAt(k - 1));
    k--;
  }
  store<u32>(order + (<usize>k << 2), count);
  count++;
  return count;
}

/**
 * The step a call starting at `t` (Unix ns) on a thread without markers links to: its index, or -1 when `t` is in no
 * linkable step (after {@link stepLinkSweep}).
 */
export function stepLinkOf(t: u64): i32 {
  // The last step starting at or before t; a linkable step overlaps no other, so it is that one if any.
  let lo: u32 = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (load<u64>(stepAt(orderAt(mid))) <= t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  const i = orderAt(lo - 1);
  const s = stepAt(i);
  return (load<u32>(s, 24) & LINKABLE) != 0 && t < load<u64>(s, 8) ? <i32>i : -1;
}

/** Step number of step `i`. */
export function stepNumber(i: i32): u64 {
  return <u64>load<u32>(stepAt(<u32>i), 16);
}

/** Whether the step whose record keeps `idx1` ({@link stepAdd}) has linked calls: its marker produces the context. */
export function stepProduces(idx1: u32): bool {
  return idx1 != 0 && idx1 <= count && (load<u32>(stepAt(idx1 - 1), 24) & USED) != 0;
}

/** Key of (step `i`, device plane index + 1 `d`) in {@link candidates} and {@link covered}. */
// @ts-ignore: decorator
@inline function pairKey(i: i32, d: u32): u64 {
  return (<u64>i << 9) | <u64>d;
}

/**
 * Whether API record `r` with work on device plane index + 1 `d` (0: none) in step `i` ({@link stepLinkOf} of its
 * start) is linked: a call of a thread without markers whose GPU has no work of the step grouped through the marker's
 * own thread ({@link stepLinkSweep}).
 */
export function stepLinked(i: i32, d: u32): bool {
  return i >= 0 && d != 0 && covered != 0 && tableFind(covered, pairKey(i, d)) == 0;
}

let candidates: Table = 0; // (step, device) pairs with calls of threads without markers
let covered: Table = 0; // (step, device) pairs with a call nested under the step's marker

/**
 * Walks the API lines of the threads without markers (`side`) or with them, noting each call with device work in a
 * linkable step: in {@link candidates} (and marking its line, {@link Line.links}), or in {@link covered} when it
 * nests under its step's marker on the marker's line.
 */
function sweep(tids: Table, side: bool): void {
  const hp = hostPlane;
  for (let j: u32 = 0; j < hp.lineCount; j++) {
    const ln = changetype<Line>(load<usize>(hp.lineList + (<usize>j << 2)));
    if (ln.key >= LINE_NVTX || (tableFind(tids, ln.key) == 0) != side) continue;
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
      if (i < 0) continue;
      if (side) {
        tableUpsert(candidates, pairKey(i, d));
        ln.links = 1;
        continue;
      }
      const s = stepAt(<u32>i);
      if (<u64>load<u32>(s, 20) == ln.key && start + load<u64>(r, 8) <= load<u64>(s, 8)) tableUpsert(covered, pairKey(i, d));
    }
  }
}

/**
 * End of the pass, before the stat metadata is made (after the NVTX sweep: the sort scratch is reserved). Decides
 * which steps can take links, then which calls link: a call with device work, on a thread without markers, in a
 * linkable step, whose GPU has no call of that step nested under the marker (whose GPU then has no grouped work in
 * the step). A GPU that has such work needs no link: XProf gives each of its ungrouped events the group of the
 * latest grouped event on its plane before it (ProcessUngroupedEvents, xprof/utils/derived_timeline.cc), and a link
 * would cost the call its launch → kernel arrow in the trace viewer (XProf keeps one flow per event, the context's).
 * Marks the steps their calls link to ({@link stepProduces}) and the stats the host plane then uses.
 */
export function stepLinkSweep(): void {
  candidates = 0;
  covered = 0;
  if (count == 0) return;
  const nums: Table = tableNew(count);
  const tids: Table = tableNew(16);
  for (let i: u32 = 0; i < count; i++) {
    const s = stepAt(i);
    const slot = tableUpsert(nums, load<u32>(s, 16));
    store<u64>(slot, load<u64>(slot) + 1);
    tableUpsert(tids, load<u32>(s, 20));
  }
  let maxEnd: u64 = 0;
  for (let k: u32 = 0; k < count; k++) {
    const s = stepAt(orderAt(k));
    const start = load<u64>(s);
    const end = load<u64>(s, 8);
    const alone = start >= maxEnd && (k + 1 == count || end <= load<u64>(stepAt(orderAt(k + 1))));
    if (alone && load<u64>(tableFind(nums, load<u32>(s, 16))) == 1) store<u32>(s, LINKABLE, 24);
    if (end > maxEnd) maxEnd = end;
  }
  candidates = tableNew(64);
  sweep(tids, true);
  if (tableCount(candidates) == 0) return;
  covered = tableNew(64);
  sweep(tids, false);
  let linked = false;
  for (let k: u32 = 0; k < tableSlots(candidates); k++) {
    const key = tableKeyAt(candidates, k);
    if (key == 0xffffffffffffffff || tableFind(covered, key) != 0) continue;
    const s = stepAt(<u32>(key >> 9));
    store<u32>(s, load<u32>(s, 24) | USED, 24);
    linked = true;
  }
  if (!linked) return;
  const hp = hostPlane;
  hp.used |= (1 << WK.CONSUMER_TYPE) | (1 << WK.CONSUMER_ID);
  if (hostRanks == 1) hp.used |= (1 << WK.PRODUCER_TYPE) | (1 << WK.PRODUCER_ID);
}
