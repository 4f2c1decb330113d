/**
 * XSpace/XPlane protobuf (proto/xplane.proto, package tensorflow.profiler), laid out the way XLA's GPU tracer and
 * session post-processing write it, so XProf and the TensorBoard profile plugin render it (trace viewer, kernel
 * stats, overview). Layout, names and stat types: docs/xspace.md (from ../shared/reference/xspace-xplane.md).
 *
 *  - `/host:CPU` (id 0): one line per OS thread (line id = tid) with the vendor API calls; NVTX ranges on a
 *    line of their own per thread (id = 2^30 + tid, so partially overlapping start/end ranges never break the
 *    API line's nesting); thread-level tracing overhead of every thread on one `CUPTI overhead` line (id 2^29).
 *  - `/device:GPU:<n>` (XPlane.id = n) per device that has events: one line per stream (line id = stream id) named
 *    `Stream #<id>(<types>)`; syncs and event records on `Synchronization` lines (id 2^30 + stream, 2^31 - 1 for
 *    context-wide); device-level overhead on `CUPTI overhead` (id 2^31 - 2). Device capabilities as plane stats.
 *  - `/host:metadata` (CUDA/CUPTI versions) and `Task Environment` (profile_start_time, profile_stop_time).
 *  - XSpace.hostnames, XSpace.warnings (dropped records, decode warnings), XSpace.errors (data-loss diagnostics).
 *
 * Protobuf needs every length before its content and XLines group events by row, so pass 2 only buffers: each
 * event becomes a compact record (32 bytes, 48 with CUDA-graph ids; no names, see {@link REC_BASE}) appended to its
 * line's chunk list, with event metadata (names) and ref-valued stat strings (kernel_details, memcpy_details,
 * Memset_details) de-duplicated per plane as they arrive. At the end ({@link xspaceEnd}) each line's events are
 * encoded and kept while a fixed buffer has room (emit/xspace_capture.ts), the rest only sized, which gives every
 * line's and plane's exact size; then the planes are written into the output window (emit/out.ts), the kept events
 * copied, the rest encoded: no object per event and no second copy of a large file. When an upper bound of the
 * whole (each event at its largest) is under the message limit, each plane is sized and written before the next is
 * sized, so the buffer serves one plane at a time.
 *
 * Time: the profile start is the earliest of the collector start (HEADER) and the first event; every line's
 * timestamp_ns is its first event's start relative to the profile start (ns), and offsets/durations are in ps.
 *
 * Host merging (emit/options.ts setXSpaceHost: rank k of R on one host): the file is one part of its host's XSpace,
 * written so that src/node/xspace_merge.ts can join the parts' planes field by field without decoding an event:
 * event metadata id i is written as (i - 1) × R + k + 1 and stat metadata beyond the well-known ones likewise
 * ({@link evOut}, {@link stOut}), the well-known stats sit at ids 1..WK.COUNT in every plane (so `correlation_id`
 * has one id per merged plane, which XProf's flow linking needs), correlation ids are k × 2^32 + id (XProf hashes
 * the 64-bit value into flow ids), device planes take the host's GPU ordinals, and row labels and diagnostics say
 * which rank they belong to.
 */
import * as S from "../model/session";
import * as O from "./out";

import { Ev, EvKind, EvFlag } from "../model/event";

import { WARN_COUNT, Fatal } from "../util/error";
import { fail, warningCount, lossTotal } from "../util/diag";
import { REC_BASE, REC_GRAPH_EXTRA, REC_GRAPH, spillReset, runIterReserve } from "./xspace_spill";
import { xspaceMaxBytes } from "./xspace_limit";
import { fedBytes } from "../format/container";
import { fixedBaseNs, NO_BASE, labelLen, hostRanks, hostStepProducer, deviceOrdinal } from "./options";
import { varintSize, putBytesField } from "./protobuf";
import { corrSet, corrBegin } from "./xspace_corr";
import { detailsBegin, kernelDetails, memcpyDetails, memsetDetails } from "./xspace_details";
import { isDataLoss, putDiag, putLoss } from "./xspace_diag";
import { addPlaneDecimal, addPlaneStat, addPlaneStr, bRankPrefix, decimalCopy, finishPlane } from "./xspace_finish";
import { sortReserve } from "./xspace_lines";
import { mergeIdsBegin } from "./xspace_meta";
import { poolBegin } from "./xspace_pool";
import { namesBegin } from "./xspace_meta_store";
import { NS_GRAPH, NS_MEMSET, NS_STEP, evByApi, evByMemcpy, evByName, evByNameCall, evByNumber, evByNvtx, memcpyType } from "./xspace_names";
import { nvtxSweep, nvtxBegin } from "./xspace_nvtx";
import { Line, Plane, devPlane, getLine, hostPlane, lineAppend, lineSettle, newPlane, planeCount, planeList, setPlaneName, spillLine, stIntern, planesBegin } from "./xspace_plane";
import { GRAPH_STATS, LINE_COUNTERS, LINE_NVTX, LINE_OVERHEAD, LINE_SYNC, META_MASK, R, T_COMPUTE, T_GRAPH, T_MEMSET, kindStats, stepStats } from "./xspace_schema";
import { asciiCopy, bAscii, bBytes, bN, bP, bStart, bU64, textBegin } from "./xspace_text";
import * as W from "./xspace_write";
import { planeBound, putPlane, sizePlane, setProfileStart } from "./xspace_write";
import { encodeBegin } from "./xspace_encode";
import { stepAdd, stepLinkSweep, stepsBegin } from "./xspace_steps";
import { captureBegin, captureStart } from "./xspace_capture";
/** Occupancy of a launch, shared with the timeline (emit/timeline.ts). */
export { activeBlocks, occPlausible } from "./xspace_occupancy";

let minStart: u64 = 0;
let maxEnd: u64 = 0;
let hostEvents: u64 = 0;
let deviceEvents: u64 = 0;

let profileStop: u64 = 0;

// ---- Pass 2: buffering ---------------------------------------------------------------------------------------------

/** Starts an XSpace emit pass (after heap.reset(): everything is allocated anew). */
export function xspaceBegin(): void {
  mergeIdsBegin();
  spillReset();
  // Before the planes: a host merge's planes intern their well-known stats when created.
  namesBegin();
  detailsBegin();
  planesBegin();
  minStart = 0xffffffffffffffff;
  maxEnd = 0;
  hostEvents = 0;
  deviceEvents = 0;
  setProfileStart(0);
  profileStop = 0;
  // Heap pointers of the previous file (rt_reset rewound the heap): an Engine converts file after file.
  corrBegin();
  nvtxBegin();
  textBegin();
  poolBegin();
  encodeBegin();
  captureBegin();
  stepsBegin();
  // Device planes are created by the first event of their device: a DEVICES entry without events gets none.
}

/** Last event end seen (Unix ns), for closing ranges left open. */
export function xspaceLastTs(): u64 {
  return maxEnd;
}

/** Profile start chosen at the end of the pass (Unix ns): Task Environment profile_start_time. */
export function xspaceProfileStart(): u64 {
  return W.profileStart;
}

// @ts-ignore: decorator
@inline function record(pl: Plane, ln: Line, e: Ev, kind: i32, meta: u32, ctx: u32, detail: u32, graph: bool): void {
  S.addEvent();
  const start = e.start;
  const dur = e.end - e.start;
  if (start < minStart) minStart = start;
  if (e.end > maxEnd) maxEnd = e.end;
  const late = start < ln.lastStart || (start == ln.lastStart && dur > ln.lastDur);
  if (start < ln.minStart) ln.minStart = start;
  const r = lineAppend(ln, graph ? REC_BASE + REC_GRAPH_EXTRA : REC_BASE);
  if (graph) ln.longRecs = 1;
  store<u64>(r, start);
  store<u64>(r, dur, 8);
  store<u32>(r, (meta & META_MASK) | (<u32>kind << 24) | (graph ? REC_GRAPH : 0), 16);
  // A correlation id two processes used links nothing (CORRELATION_PROCESSES). Syncs and CUDA event records carry
  // none: XProf groups a device event with a correlation id into its launch's step and counts every grouped device
  // event that is not a copy as device compute, so a sync's host-side wait would count as GPU work (XLA records no
  // syncs on its device planes).
  const linked = kind != R.SYNC && kind != R.EVENT_RECORD;
  store<u32>(r, !linked || (S.ambiguousCorrs != 0 && S.corrAmbiguous(<u64>e.correlation)) ? 0 : <u32>e.correlation, 20);
  store<u32>(r, ctx, 24);
  store<u32>(r, detail, 28);
  let used = kind == R.STEP && hostRanks > 1 ? stepStats(hostStepProducer) : kindStats(kind);
  if (graph) {
    store<u32>(r, e.graphId, 32);
    store<u32>(r, 0, 36);
    store<u64>(r, e.graphNodeId, 40);
    used |= GRAPH_STATS;
  }
  pl.used |= used;
  if (!late) {
    ln.lastStart = start;
    ln.lastDur = dur;
  } else if (!lineSettle(ln, r, start, dur)) {
    // Out of order beyond a local step back (emit/xspace_plane.ts lineSettle): sorted at the end.
    ln.unsorted = 1;
    ln.chunkUnsorted = 1;
    ln.lastStart = start;
    ln.lastDur = dur;
  } // else settled among the last records: the line's last record, and so lastStart / lastDur, are unchanged
}

/** Buffers an event of the host plane on its line `ln` (a line takes the pid of its first event). */
// @ts-ignore: decorator
@inline function hostRecord(ln: Line, e: Ev, kind: i32, meta: u32): void {
  if (ln.count == 0) ln.pid = e.pid;
  record(hostPlane, ln, e, kind, meta, 0, 0, false);
  hostEvents++;
}

/**
 * A training step (model/steps.ts) as XProf's step grouping wants it: `ProfilerStep#N` on the thread's API line
 * (not the NVTX line), so the launch calls inside it nest under it, with `_r` = 1 (a root: GroupTfEvents gives it
 * and everything it reaches — nested launches, their kernels through correlation_id — one group_id) and `step_num`;
 * the launches of threads without markers join it through context stats (emit/xspace_steps.ts).
 */
function stepMarker(e: Ev): void {
  const ln = getLine(hostPlane, e.tid);
  if (ln.count == 0) ln.pid = e.pid;
  stepAdd(e);
  record(hostPlane, ln, e, R.STEP, evByNumber(hostPlane, NS_STEP, "ProfilerStep#", <u32>e.stepNum), 0, <u32>e.stepNum, false);
  hostEvents++;
}

/** The stream line of device work `e` on `pl`, marked as carrying work of type `t` (T_*). */
// @ts-ignore: decorator
@inline function streamLine(pl: Plane, e: Ev, t: u32): Line {
  const ln = getLine(pl, e.stream);
  ln.kinds |= t;
  return ln;
}

/** Buffers device work `e` on line `ln` of `pl` and notes which plane its correlation id went to. */
// @ts-ignore: decorator
@inline function deviceRecord(pl: Plane, ln: Line, e: Ev, kind: i32, meta: u32, detail: u32, graph: bool): void {
  record(pl, ln, e, kind, meta, e.context, detail, graph);
  corrSet(e.correlation, pl.index);
  deviceEvents++;
}

/** Whether device work `e` carries CUDA graph ids (graph_id / graph node id stats). */
// @ts-ignore: decorator
@inline function hasGraphIds(e: Ev): bool {
  return (e.flags & EvFlag.HAS_GRAPH) != 0 && (e.graphId != 0 || e.graphNodeId != 0);
}

/**
 * Buffers one event. Kinds XLA has no counterpart for are not written (and not counted): GPU_RANGE, the Kineto-style
 * projection of NVTX ranges onto device streams — XProf gets that from the `nvtx_range` stat of the device events.
 */
export function xspaceEvent(e: Ev): void {
  switch (e.kind) {
    case EvKind.API_RUNTIME:
    case EvKind.API_DRIVER:
      hostRecord(getLine(hostPlane, e.tid), e, R.API, evByApi(hostPlane, e));
      break;
    case EvKind.RANGE:
    case EvKind.INSTANT: {
      const kind = e.kind == EvKind.RANGE ? R.RANGE : R.INSTANT;
      hostRecord(getLine(hostPlane, LINE_NVTX | e.tid), e, kind, evByNvtx(hostPlane, e));
      if ((e.flags & EvFlag.STEP) != 0) stepMarker(e);
      break;
    }
    case EvKind.OVERHEAD: {
      // Thread-level overhead on the host plane, device/context/stream-level on the device's plane (as XLA), each
      // on one `CUPTI overhead` line: one row per plane, not one identically named row per thread.
      const onHost = e.tid != 0;
      const pl = onHost ? hostPlane : devPlane(e.device);
      const ln = getLine(pl, LINE_OVERHEAD);
      if (onHost && ln.count == 0) ln.pid = e.pid;
      record(pl, ln, e, R.OVERHEAD, evByNameCall(pl, e.namePtr, e.nameLen), 0, 0, false);
      if (onHost) hostEvents++;
      else deviceEvents++;
      break;
    }
    case EvKind.COUNTER: {
      // XProf shows the `_counters_` line's events as counter tracks named by the event (trace_viewer@), value = stat.
      const pl = devPlane(e.device);
      record(pl, getLine(pl, LINE_COUNTERS), e, R.COUNTER, evByNameCall(pl, e.namePtr, e.nameLen), <u32>e.bytes,
        <u32>(e.bytes >> 32), false);
      deviceEvents++;
      break;
    }
    case EvKind.KERNEL: {
      const pl = devPlane(e.device);
      const ln = streamLine(pl, e, T_COMPUTE);
      deviceRecord(pl, ln, e, R.KERNEL, evByName(pl, e.namePtr, e.nameLen), kernelDetails(pl, e), hasGraphIds(e));
      break;
    }
    case EvKind.MEMCPY: {
      const pl = devPlane(e.device);
      const t = memcpyType(e);
      const ln = streamLine(pl, e, t);
      // XLA's `dest:` is a device ordinal: the host's when merging.
      const dest = deviceOrdinal((e.flags & EvFlag.PEER) != 0 ? e.dstDevice : e.device);
      const isAsync: u32 = (e.flags & EvFlag.ASYNC) != 0 ? 1 : 0;
      deviceRecord(pl, ln, e, R.MEMCPY, evByMemcpy(pl, t), memcpyDetails(pl, e, dest, isAsync), hasGraphIds(e));
      break;
    }
    case EvKind.MEMSET: {
      const pl = devPlane(e.device);
      const ln = streamLine(pl, e, T_MEMSET);
      const isAsync: u32 = (e.flags & EvFlag.ASYNC) != 0 ? 1 : 0;
      deviceRecord(pl, ln, e, R.MEMSET, evByNumber(pl, NS_MEMSET, "Memset ", e.dstKind),
        memsetDetails(pl, e, isAsync), hasGraphIds(e));
      break;
    }
    case EvKind.GRAPH: {
      const pl = devPlane(e.device);
      const ln = streamLine(pl, e, T_GRAPH);
      deviceRecord(pl, ln, e, R.GRAPH, evByNumber(pl, NS_GRAPH, "CudaGraphExec:", e.graphId), e.graphId, false);
      break;
    }
    case EvKind.SYNC:
    case EvKind.EVENT_RECORD: {
      const pl = devPlane(e.device);
      const stream = (e.flags & EvFlag.NO_STREAM) != 0 ? 0xffffffff : e.stream;
      const ln = getLine(pl, LINE_SYNC | stream);
      const kind = e.kind == EvKind.SYNC ? R.SYNC : R.EVENT_RECORD;
      deviceRecord(pl, ln, e, kind, evByNameCall(pl, e.namePtr, e.nameLen), 0, false);
      break;
    }
  }
}

/** Ends the pass: sizes and writes every plane, then hostnames, errors and warnings, and flushes. */
export function xspaceEnd(): void {
  // Profile span: from the collector start (when it precedes the first event) to the last event end.
  let profileStart = minStart;
  if (S.startNs != 0 && (S.startNs < profileStart || minStart == 0xffffffffffffffff)) profileStart = S.startNs;
  const timed = profileStart != 0xffffffffffffffff;
  if (!timed) profileStart = 0;
  // A merge puts every file on one profile start (emit/options.ts), when it is not after this file's own; a file
  // with no time at all (a dump cut in its HEADER) takes it as it is.
  if (fixedBaseNs != NO_BASE && (!timed || fixedBaseNs <= profileStart)) profileStart = fixedBaseNs;
  profileStop = maxEnd > profileStart ? maxEnd : profileStart;
  if (S.haveEndAnchor && S.anchorEndReal > profileStop && S.anchorEndReal - profileStop < 3600000000000) {
    profileStop = S.anchorEndReal;
  }
  setProfileStart(profileStart);

  // Lines that spilled go to the spill storage whole; scratch for sorting the largest unsorted line still in
  // memory, and read-back buffers for the line with the most runs.
  let need: u32 = 0;
  let maxRuns: u32 = 0;
  for (let i: u32 = 0; i <= planeCount; i++) {
    const pl = i == 0 ? hostPlane : changetype<Plane>(load<usize>(planeList + (<usize>(i - 1) << 2)));
    for (let j: u32 = 0; j < pl.lineCount; j++) {
      const ln = changetype<Line>(load<usize>(pl.lineList + (<usize>j << 2)));
      // A line kept past its largest chunk that turned out of order is spilled too: sorting it in memory would take
      // scratch in proportion to it.
      if (ln.runCount != 0 || (ln.kept != 0 && ln.unsorted != 0)) {
        spillLine(ln, 0);
        if (ln.runCount > maxRuns) maxRuns = ln.runCount;
      } else if (ln.unsorted != 0 && ln.count > need) need = ln.count;
    }
  }
  sortReserve(need);
  runIterReserve(0, maxRuns);
  runIterReserve(1, maxRuns);

  nvtxSweep();
  stepLinkSweep();

  // Metadata and names.
  finishPlane(hostPlane);
  for (let i: u32 = 0; i < planeCount; i++) finishPlane(changetype<Plane>(load<usize>(planeList + (<usize>i << 2))));
  const meta = newPlane(2, 0);
  setPlaneName(meta, "/host:metadata");
  if (S.haveHeader && S.cudaVersions) {
    if (S.runtimeVersion != 0) {
      const p = decimalCopy(S.runtimeVersion);
      const n = bN;
      addPlaneStr(meta, "cuda_version", p, n);
      addPlaneStr(meta, "cuda_runtime_version", p, n);
    }
    if (S.driverVersion != 0) addPlaneDecimal(meta, "cuda_driver_version", S.driverVersion);
    if (S.vendorVersion != 0) addPlaneDecimal(meta, "cupti_version", S.vendorVersion);
  }
  if (S.vendorTextLen != 0) addPlaneStr(meta, "vendor_library_version", S.vendorTextPtr, S.vendorTextLen);
  const task = newPlane(2, 0);
  setPlaneName(task, "Task Environment");
  addPlaneStat(task, stIntern(task, asciiCopy("profile_start_time"), 18), 2, profileStart, 0);
  addPlaneStat(task, stIntern(task, asciiCopy("profile_stop_time"), 17), 2, profileStop, 0);

  // Planes: host, devices by id, metadata, task environment; each sized before a byte of it is written.
  const order = heap.alloc((<usize>planeCount + 3) << 2);
  let np: u32 = 0;
  store<u32>(order, changetype<u32>(hostPlane));
  np++;
  let prev: i64 = -1;
  for (let k: u32 = 0; k < planeCount; k++) {
    // Next device plane by ascending id (few planes: selection is fine).
    let best: Plane = changetype<Plane>(0);
    for (let i: u32 = 0; i < planeCount; i++) {
      const pl = changetype<Plane>(load<usize>(planeList + (<usize>i << 2)));
      if (<i64>pl.id > prev && (changetype<usize>(best) == 0 || pl.id < best.id)) best = pl;
    }
    if (changetype<usize>(best) == 0) break;
    prev = <i64>best.id;
    store<u32>(order + (<usize>np << 2), changetype<u32>(best));
    np++;
  }
  if (meta.pstatCount != 0) {
    store<u32>(order + (<usize>np << 2), changetype<u32>(meta));
    np++;
  }
  store<u32>(order + (<usize>np << 2), changetype<u32>(task));
  np++;
  // Errors, warnings and the host name: at most one line per warning code and kept loss range, plus the drop line
  // and the loss totals' line; the host name (from the dump, of any length) twice: in XSpace.hostnames and in the
  // drop line, whose other text is under 320 bytes.
  const diag = (<u64>WARN_COUNT + lossTotal(1) + 2) * (320 + <u64>labelLen) + 2 * <u64>S.hostnameLen + 16;
  let bound = diag;
  for (let i: u32 = 0; i < np; i++) bound += planeBound(changetype<Plane>(<usize>load<u32>(order + (<usize>i << 2))));
  if (bound <= xspaceMaxBytes) {
    // Under the limit whatever the events encode to: each plane is sized and written in turn, so the capture buffer
    // serves each plane whole (not the first 16 MiB of the file) and fewer events are sized and encoded apart.
    for (let i: u32 = 0; i < np; i++) {
      const pl = changetype<Plane>(<usize>load<u32>(order + (<usize>i << 2)));
      captureStart(true);
      sizePlane(pl);
      putPlane(pl);
    }
  } else {
    let total = diag;
    captureStart(false);
    for (let i: u32 = 0; i < np; i++) {
      const pl = changetype<Plane>(<usize>load<u32>(order + (<usize>i << 2)));
      sizePlane(pl);
      total += 1 + <u64>varintSize(pl.size) + pl.size;
    }
    if (total > xspaceMaxBytes) {
      // Over protobuf's message limit: XProf could not open it, so write nothing (emit/xspace_limit.ts).
      fail(Fatal.XSPACE_TOO_LARGE, fedBytes(), total);
      return;
    }
    for (let i: u32 = 0; i < np; i++) putPlane(changetype<Plane>(<usize>load<u32>(order + (<usize>i << 2))));
  }

  // errors (2) and warnings (3).
  for (let c = 0; c < WARN_COUNT; c++) if (warningCount(c) != 0 && isDataLoss(c)) putDiag(2, c);
  putLoss();
  if (S.droppedRecords > 0) {
    // XLA's wording (CuptiTraceCollectorImpl::ReportNumEventsIfDropped), so tools that look for it find it.
    bStart();
    bRankPrefix();
    bAscii("Detected GPU events dropped on ");
    if (S.hostnameLen != 0) bBytes(S.hostnamePtr, S.hostnameLen);
    else bAscii("unknown host");
    bAscii(": Profiler has collected ");
    bU64(hostEvents);
    bAscii(" driver events and ");
    bU64(deviceEvents);
    bAscii(" device events. ");
    if (S.droppedRecords == 0xffffffffffffffff) bAscii("At least "); // saturated, never wrapped
    bU64(S.droppedRecords);
    bAscii(" events dropped because the collector reported lost records.");
    putBytesField(3, bP, bN);
  }
  for (let c = 0; c < WARN_COUNT; c++) if (warningCount(c) != 0 && !isDataLoss(c)) putDiag(3, c);
  // hostnames (4)
  if (S.hostnameLen != 0) putBytesField(4, S.hostnamePtr, S.hostnameLen);
  O.flush();
}
