/**
 * Pass 1 and the projection pass of the CUPTI decoder (NVIDIA CUDA): {@link cuptiScan} counts records and fills the
 * session's join tables (external correlation, devices, contexts, names, API processes), the timestamp rule's
 * notes and the NVTX ranges; {@link cuptiProject} maps launch calls to their innermost range when the file order
 * needs a pass of its own (model/ranges.ts). Pass 2 is decode/cupti.ts.
 */
import * as S from "../model/session";
import * as R from "../model/ranges";
import { timingNote } from "../model/timing";
import { Warn } from "../util/error";
import { warn, lose } from "../util/diag";
import { K } from "./cupti_kinds";
import { markerData, MARKER_START, MARKER_END } from "./cupti_nvtx";
import { cudaEventWaitScan, cudaEventRecordScan } from "./cupti_events";
import { cuptiApiFlags } from "./cupti_api";
import { showAllApi } from "./decoder";
import { noteShownHost, shownHostNoted } from "../model/shown_hosts";

// ---- Pass 1 ------------------------------------------------------------------------------------------------------

/**
 * The Chrome lead's process: one whose calls the output shows — a call pass 2 keeps (its times usable: the caller's
 * timingNote, and inside the run's window: model/shown_hosts.ts) and does not hide by default (the same cbid test as
 * pass 2's; `--all-api` shows them all).
 */
// @ts-ignore: decorator
@inline function noteShown(kind: u32, r: usize, at: u64): void {
  const pid = load<u32>(r, 24);
  const start = load<u64>(r, 8);
  const end = load<u64>(r, 16);
  if (!shownHostNoted(pid, start, end) && (showAllApi || (cuptiApiFlags(kind == K.DRIVER ? 1 : 2, load<u32>(r, 4)) & S.API_HIDDEN) == 0)) {
    noteShownHost(pid, start, end, at);
  }
}

/** Pass 1 over one ACTIVITY payload [p, p+n) at file offset `off`: counts, join tables, time span. */
export function cuptiScan(p: usize, n: u32, off: u64): void {
  const end = p + n;
  let r = p;
  while (r + 4 <= end) {
    const kind = load<u32>(r);
    const size = S.kindSize(kind);
    if (size == 0) {
      warn(Warn.UNKNOWN_KIND_UNSIZED, off + <u64>(r - p) + 24, kind);
      lose(Warn.UNKNOWN_KIND_UNSIZED, off + <u64>(r - p) + 24, off + <u64>n + 24);
      return;
    }
    if (r + size > end) {
      warn(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, <u64>(end - r));
      lose(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, off + <u64>n + 24);
      return;
    }
    S.countRecord(kind);
    const at = off + <u64>(r - p) + 24;
    // Every kind pass 2 turns into an event hands its times to the timestamp rule (model/timing.ts) first, with pass 2's
    // minimum sizes, so that both passes judge the same records.
    switch (kind) {
      case K.CONCURRENT_KERNEL:
      case K.KERNEL:
        if (size >= 104) timingNote(load<u64>(r, 16), load<u64>(r, 24), kind, at);
        if (size >= 52) S.setContextDevice(load<u32>(r, 44), load<u32>(r, 40));
        if (size >= 96) R.rangesNoteDeviceCorr(load<u32>(r, 92));
        break;
      case K.MEMCPY:
      case K.MEMSET:
        if (size >= 48) timingNote(load<u64>(r, 16), load<u64>(r, 24), kind, at);
        if (size >= 44) S.setContextDevice(load<u32>(r, 36), load<u32>(r, 32));
        if (size >= 48) R.rangesNoteDeviceCorr(load<u32>(r, 44));
        break;
      case K.MEMCPY2:
        if (size >= 64) timingNote(load<u64>(r, 16), load<u64>(r, 24), kind, at);
        if (size >= 44) S.setContextDevice(load<u32>(r, 36), load<u32>(r, 32));
        if (size >= 64) R.rangesNoteDeviceCorr(load<u32>(r, 60));
        break;
      case K.RUNTIME:
      case K.DRIVER: {
        const timed = size >= 36 && timingNote(load<u64>(r, 8), load<u64>(r, 16), kind, at);
        if (size >= 24) R.rangesNoteApi();
        if (size >= 36) {
          R.rangesNoteCallCorr(load<u32>(r, 32));
          if (!S.noteApiProcess(load<u32>(r, 32), load<u32>(r, 24))) {
            warn(Warn.CORRELATION_PROCESSES, at, load<u32>(r, 32));
          }
          if (timed) noteShown(kind, r, at);
        }
        break;
      }
      case K.INTERNAL_LAUNCH_API:
        if (size >= 36) {
          if (timingNote(load<u64>(r, 8), load<u64>(r, 16), kind, at)) noteShown(kind, r, at);
          R.rangesNoteCallCorr(load<u32>(r, 32));
        }
        break;
      case K.SYNCHRONIZATION:
        if (size >= 40) {
          timingNote(load<u64>(r, 8), load<u64>(r, 16), kind, at);
          // An event sync (1) or stream wait (2): recordings of its event after it in the file are late (cupti_events.ts).
          const st = load<u32>(r, 4);
          if (st == 1 || st == 2) cudaEventWaitScan(load<u32>(r, 28), load<u32>(r, 36), load<u32>(r, 24));
        }
        break;
      case K.GRAPH_TRACE:
        if (size >= 40) timingNote(load<u64>(r, 8), load<u64>(r, 16), kind, at);
        break;
      case K.OVERHEAD:
        if (size >= 40) timingNote(load<u64>(r, 24), load<u64>(r, 32), kind, at);
        break;
      case K.CUDA_EVENT:
        if (size >= 20) cudaEventRecordScan(load<u32>(r, 8), load<u32>(r, 16), load<u32>(r, 4), load<u32>(r, 12));
        // 0 = device timestamps not enabled (a setting, not damage): skipped without a warning in pass 2.
        if (size >= 48 && load<u64>(r, 40) != 0) timingNote(load<u64>(r, 40), load<u64>(r, 40), kind, at);
        break;
      case K.MARKER:
        if (size >= 36) timingNote(load<u64>(r, 8), load<u64>(r, 8), kind, at);
        // Ranges for the GPU projection, in vendor time (compared with API records' vendor time).
        if (size >= 36 && load<u32>(r, 20) == 2 && load<u64>(r, 8) != 0) {
          const flags = load<u32>(r, 4);
          if ((flags & MARKER_START) != 0) {
            R.rangeOpen(load<u32>(r, 16), load<u32>(r, 24), load<u32>(r, 28), load<u64>(r, 8), size >= 48 ? load<u64>(r, 40) : 0);
          } else if ((flags & MARKER_END) != 0) R.rangeClose(load<u32>(r, 16), load<u64>(r, 8));
        }
        break;
      case K.EXTERNAL_CORRELATION:
        if (size >= 20) {
          if (!S.setExternal(<u64>load<u32>(r, 16), load<u32>(r, 4), load<u64>(r, 8))) {
            warn(Warn.DUPLICATE_CORRELATION, at, load<u32>(r, 16));
          }
        }
        break;
      case K.CONTEXT:
        if (size >= 12) S.setContextDevice(load<u32>(r, 4), load<u32>(r, 8));
        break;
      case K.DEVICE:
        scanDevice(r, size);
        break;
      case K.NAME:
        scanName(r, size);
        break;
      case K.MARKER_DATA:
        // Pass 1, because the data record may come after its range's END marker.
        if (size >= 28) markerData(load<u32>(r, 8), load<u32>(r, 4), load<u32>(r, 24));
        break;
    }
    r += size;
  }
  if (r < end) {
    warn(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, <u64>(end - r));
    lose(Warn.RECORD_TRUNCATED, off + <u64>(r - p) + 24, off + <u64>n + 24);
  }
}

function scanDevice(r: usize, size: u32): void {
  if (size < 116) return;
  const e = S.deviceEntry(load<u32>(r, 112));
  if (e == 0) return;
  // Bandwidth in the record is KB/s; the session keeps bytes/s.
  store<u32>(e, load<u32>(r, 44), 4); // multiprocessors
  store<u64>(e, load<u64>(r, 16), 8); // global memory
  const kbps = load<u64>(r, 8);
  store<u64>(e, kbps > 18446744073709551 ? 0xffffffffffffffff : kbps * 1000, 16); // bandwidth (saturating)
  store<u32>(e, load<u32>(r, 36), 24); // clock kHz
  store<u32>(e, load<u32>(r, 104), 28);
  store<u32>(e, load<u32>(r, 108), 32);
  store<u32>(e, load<u32>(r, 76), 36); // max threads per block
  const threadsSM = <u64>load<u32>(r, 52) * <u64>load<u32>(r, 32); // warps/SM × warp size (saturating)
  store<u32>(e, threadsSM > 0xffffffff ? 0xffffffff : <u32>threadsSM, 40);
  store<u32>(e, load<u32>(r, 68), 44);
  store<u32>(e, load<u32>(r, 64), 48);
  store<u32>(e, load<u32>(r, 32), 52);
  store<u32>(e, load<u32>(r, 72), 56);
  store<u32>(e, load<u32>(r, 60), 60);
  if (load<u32>(e, 64) == 0) store<u32>(e, load<u32>(r, 72), 64);
  store<u32>(e, load<u32>(r, 56), 68);
  if (size >= 136) memory.copy(e + 72, r + 120, 16);
  if (size >= 144 && load<u32>(e, 92) == 0) {
    const np = S.stringDisplay(load<u64>(r, 136), false);
    if (np != 0) S.setDeviceName(e, np, S.displayLen);
  }
}

function scanName(r: usize, size: u32): void {
  if (size < 32) return;
  const objKind = load<u32>(r, 4);
  const np = S.stringDisplay(load<u64>(r, 24), false);
  if (np == 0) return;
  if (objKind == 2) S.setThreadName(load<u32>(r, 8), load<u32>(r, 12), np, S.displayLen);
  else if (objKind == 5) S.setStreamName(load<u32>(r, 8), load<u32>(r, 16), np, S.displayLen);
  else if (objKind == 3) {
    const e = S.deviceEntry(load<u32>(r, 8));
    if (e != 0) S.setDeviceName(e, np, S.displayLen);
  }
}

// ---- Projection pass ---------------------------------------------------------------------------------------------

/** Bit k set for the record kinds of launch calls (RUNTIME, DRIVER, INTERNAL_LAUNCH_API). */
const LAUNCH_CALL_KINDS: u64 = (<u64>1 << K.RUNTIME) | (<u64>1 << K.DRIVER) | (<u64>1 << K.INTERNAL_LAUNCH_API);

/**
 * Between passes 1 and 2, only when the dump has NVTX ranges and a launch call follows a device op of its id in the
 * file (else pass 2 does this as it decodes): maps launch calls to their innermost range.
 */
export function cuptiProject(p: usize, n: u32): void {
  const end = p + n;
  let r = p;
  while (r + 4 <= end) {
    const kind = load<u32>(r);
    const size = S.kindSize(kind);
    if (size == 0 || r + size > end) return;
    // One test for the three launch-call kinds (all < 64; a kind ≥ 64 shifts to a bit outside the mask).
    if (((LAUNCH_CALL_KINDS >> (<u64>kind & 63)) & (kind < 64 ? 1 : 0)) != 0 && size >= 36) {
      R.rangesMapCall(<u64>load<u32>(r, 32), load<u32>(r, 28), load<u64>(r, 8));
    }
    r += size;
  }
}
