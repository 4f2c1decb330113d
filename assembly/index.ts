/**
 * The WebAssembly core's exported surface. Only numbers and pointers cross the boundary (raw bindings); the host
 * reads/writes linear memory directly and must re-read `memory.buffer` after any call (memory may grow).
 *
 * Use per file: rt_reset → rt_begin_index → (write ≤ rt_input_free bytes at rt_input_ptr, rt_feed)* → rt_end_pass
 * → rt_begin_emit(sink) → feed the same bytes again → rt_end_pass. Output arrives through the imported
 * `env.rt_write(ptr, len)`; the host must consume those bytes before returning.
 */
import {
  diagReset, fatalErrorCode, fatalErrorOffset, fatalErrorDetail, warningCount, warningOffset, warningDetail, lossTotal,
  lossRange, warn,
} from "./util/diag";
import { WARN_HOST_FIRST, WARN_HOST_LAST, Warn } from "./util/error";
import { crcReset, crc32 } from "./util/crc32";
import { xxh32 } from "./util/xxh32";
import { xxh64 } from "./util/xxh64";
import { arenaReset, arenaAlloc } from "./util/arena";
import { readerForget, inputWritePtr, inputFree, fedBytes, setUnverifiedFrom } from "./format/container";
import * as S from "./model/session";
import { decodersReset } from "./decode/registry";
import { setShowAllApi } from "./decode/decoder";
import { outReset } from "./emit/out";
import { setXSpaceMaxBytes } from "./emit/xspace_limit";
import { setKeepBudget, setSpillAt } from "./emit/xspace_spill";
import { setSettle } from "./emit/xspace_plane";
import { setPartnerMode } from "./emit/timeline_order";
import { spillStoreReset } from "./util/spill";
import { setPagedBudget, pagedNew, pagedNewSized, pagedReserve, pagedSlot, pagedSpilledPages, pagedEpoch, pagedPoolReset } from "./util/paged";
import { chromeSetTraceName } from "./emit/chrome_json";
import { beginIndex, beginEmit, feedBytes, endPass, finishInput, outputBase, needsProjection, beginProject } from "./engine";
import { rangesReset } from "./model/ranges";
import { stepsReset, stepNamesCollect, stepNamePtr, stepMark, stepsFound } from "./model/steps";
import { demangleReset } from "./util/demangle";
import { toUnix } from "./model/clock";
import { f80ToNs, f80ToNsBatch, f80Status } from "./util/f80";
import { splitReset, splitSet, splitExport, splitRows, splitState, splitImport, splitBeforeEnd } from "./split";
import { metaStoreStat, setNameHashMask } from "./emit/xspace_meta_store";
import { detailsReset, detailsAll, detailsTarget } from "./emit/timeline_details";

/** Starts a new file: frees everything from the previous one (stub runtime: the whole heap is rewound). */
export function rt_reset(): void {
  heap.reset();
  pagedPoolReset();
  spillStoreReset();
  crcReset();
  arenaReset();
  readerForget();
  decodersReset();
  rangesReset();
  stepsReset();
  demangleReset();
  diagReset();
  S.sessionReset();
  outReset();
  splitReset();
  detailsReset();
}

/** Starts pass 1 (index). */
export function rt_begin_index(): void {
  beginIndex();
}

/** After pass 1: 1 when the dump has NVTX ranges and the host must run the projection pass before pass 2. */
export function rt_needs_projection(): i32 {
  return needsProjection() ? 1 : 0;
}

/**
 * Asks for the NVTX projection (after rt_needs_projection): 1 = the host runs the projection pass (feed the same
 * bytes again, then rt_end_pass), 0 = pass 2 projects as it decodes (no extra pass).
 */
export function rt_begin_project(): i32 {
  return beginProject() ? 1 : 0;
}

/** Starts pass 2 with emitter `sink`: 0 none, 1 Chrome JSON, 2 XSpace protobuf (emit/xspace.ts). */
export function rt_begin_emit(sink: i32): void {
  beginEmit(sink);
}

/** Where to write the next input bytes (valid until the next call). */
export function rt_input_ptr(): usize {
  return inputWritePtr();
}
/** How many bytes may be written at rt_input_ptr(). */
export function rt_input_free(): usize {
  return inputFree();
}
/** Consumes `n` bytes written at rt_input_ptr(). Returns 1, or 0 after a fatal error. */
export function rt_feed(n: usize): i32 {
  return feedBytes(n) ? 1 : 0;
}
/**
 * Input offset from which the host's bytes may not be the file's own (a damaged gzip stream's bytes after its first
 * damage): the part of a buffer chunk cut by the input's end, unverifiable by its checksum, is read no further.
 * Given before each pass's rt_end_pass (format/container.ts setUnverifiedFrom).
 */
export function rt_set_unverified_from(off: u64): void {
  setUnverifiedFrom(off);
}
/** Ends the current pass (flushes output). Returns 1, or 0 after a fatal error. */
export function rt_end_pass(): i32 {
  return endPass() ? 1 : 0;
}
/**
 * A warning only the host can see (util/error.ts codes from WARN_HOST_FIRST to WARN_HOST_LAST: STILL_WRITING,
 * GZIP_DAMAGED, FILE_CHANGED; and GZIP_MAGIC_DAMAGED), counted `count` times with its offset and detail; given before
 * the last pass's rt_end_pass, the output's end lists it with the core's own (Chrome JSON `rawtrace.warnings`,
 * XSpace warnings). Other codes are ignored. Returns 1 if recorded.
 */
export function rt_host_warn(code: i32, offset: u64, detail: u64, count: u64): i32 {
  if (((code < WARN_HOST_FIRST || code > WARN_HOST_LAST) && code != Warn.GZIP_MAGIC_DAMAGED) || count == 0) return 0;
  warn(code, offset, detail, count);
  return 1;
}

/**
 * After pass 1: collects the distinct host-range names and returns how many. For each index i < that count,
 * rt_step_name_ptr(i) then rt_step_name_len() give its display bytes (len 0: no string), and the host calls
 * rt_step_mark(i, n) for the names that mark training steps: n ≥ 0 the step number the name carries, -1 none
 * (numbered by start order). Then rt_begin_emit (model/steps.ts).
 */
export function rt_step_names(): u32 {
  return stepNamesCollect();
}
/** Display bytes of distinct range name `i` (0 when the dump has no string for it). */
export function rt_step_name_ptr(i: u32): usize {
  const p = stepNamePtr(i);
  if (p == 0) {
    S.displayLen = 0;
    return 0;
  }
  const d = S.stringDisplay(p, false);
  if (d == 0) S.displayLen = 0;
  return d;
}
/** Length of the bytes rt_step_name_ptr returned last. */
export function rt_step_name_len(): u32 {
  return S.displayLen;
}
/** Marks distinct range name `i` as a step name (`num` ≥ 0: the number it carries; -1: by start order). */
export function rt_step_mark(i: u32, num: i32): void {
  stepMark(i, <i64>num);
}
/** After rt_begin_emit: how many step ranges the dump has. */
export function rt_steps_found(): u32 {
  return stepsFound();
}

/**
 * Before rt_begin_emit(4) (the timeline): the pass writes the Chrome JSON of the events that start at `start` (ns
 * since the tables' base, as the record's f64) with kind `kind` on row (`cls`, `a`, `b`), instead of the tables
 * (emit/timeline_details.ts: the viewer's details, src/core/details.ts). May be called for several events.
 */
export function rt_details_target(start: f64, kind: u32, cls: u32, a: u32, b: u32): void {
  detailsTarget(start, kind, cls, a, b);
}
/** As {@link rt_details_target}, for every event (tests: the Chrome JSON of each timeline event). */
export function rt_details_all(): void {
  detailsAll();
}

/** Options: 1 = show all API calls (no Kineto blocklist). */
export function rt_set_option(opt: i32, value: i32): void {
  if (opt == 1) setShowAllApi(value != 0);
}

/** Allocates `n` bytes the host may fill (freed by the next rt_reset). */
export function rt_alloc(n: usize): usize {
  return arenaAlloc(n);
}
/** Sets the Chrome JSON traceName from bytes at [p, p+n) (allocated with rt_alloc). */
export function rt_set_trace_name(p: usize, n: u32): void {
  chromeSetTraceName(p, n);
}

/** CRC-32 of [p, p+n) (for host-side tools and tests). */
export function rt_crc32(p: usize, n: usize): u32 {
  return crc32(p, n);
}
/** XXH32 with seed 0 of [p, p+n) (for host-side tools, tests and bench/checksum.ts). */
export function rt_xxh32(p: usize, n: usize): u32 {
  return xxh32(p, n);
}
/** XXH64 with seed 0 of [p, p+n) (its low 32 bits are format 1.2's payload checksum; for tools and tests). */
export function rt_xxh64(p: usize, n: usize): u64 {
  return xxh64(p, n);
}

/** x87 80-bit long double microseconds at `p` (10 bytes) → ns; see assembly/util/f80.ts. Status: rt_f80_status. */
export function rt_f80_to_ns(p: usize): u64 {
  return f80ToNs(p);
}
/** Status of the last rt_f80_to_ns (0 ok, 1 negative, 2 infinity, 3 NaN, 4 invalid encoding, 5 ≥ 2^64 ns). */
export function rt_f80_status(): i32 {
  return f80Status;
}
/** `n` packed 10-byte long doubles at `src` → u64 ns at `dstNs`, status bytes at `dstStatus`; returns the non-OK count. */
export function rt_f80_to_ns_batch(src: usize, n: u32, dstNs: usize, dstStatus: usize): u32 {
  return f80ToNsBatch(src, n, dstNs, dstStatus);
}

/** Session facts by id (see src/core/engine.ts `InfoField`). */
export function rt_info(field: i32): u64 {
  switch (field) {
    case 0: return S.vendor;
    case 1: return S.vendorVersion;
    case 2: return S.runtimeVersion;
    case 3: return S.driverVersion;
    case 4: return S.processId;
    case 5: return <u64>S.rank;
    case 6: return <u64>S.worldSize;
    case 7: return S.startNs;
    case 8: return toUnix(S.minVendorTs);
    case 9: return toUnix(S.maxVendorTs);
    case 10: return S.chunksSeen;
    case 11: return S.activityChunks;
    case 12: return S.activityBytes;
    case 13: return S.droppedRecords;
    case 14: return S.haveEnd ? 1 : 0;
    case 15: return S.eventsEmitted;
    case 16: return S.apiFiltered;
    case 17: return S.deviceCount();
    case 18: return S.externalCount();
    case 19: return outputBase();
    case 20: return fedBytes();
    case 21: return <u64>S.localRank;
    case 22: return S.collectorVersion;
    case 23: return S.haveHeader ? 1 : 0;
    case 24: return S.outOfOrderBuffers;
    case 25: return S.droppedBuffers;
    case 26: return S.programPid();
  }
  return 0;
}

/** Records of vendor kind `k` seen in pass 1. */
export function rt_records_of_kind(k: u32): u64 {
  return S.recordsOfKind(k);
}

/** Text fields: 0 hostname, 1 command line, 2 vendor version text. Pointer, then length with rt_text_len. */
export function rt_text_ptr(which: i32): usize {
  return which == 0 ? S.hostnamePtr : which == 1 ? S.cmdlinePtr : S.vendorTextPtr;
}
export function rt_text_len(which: i32): u32 {
  return which == 0 ? S.hostnameLen : which == 1 ? S.cmdlineLen : S.vendorTextLen;
}

/** API_NAMES entry (domain, id): address of its display name (0 when none); length with rt_api_name_len. */
export function rt_api_name(domain: u32, id: u32): usize {
  const e = S.apiEntry(domain, id);
  return e == 0 ? 0 : <usize>load<u32>(e);
}
export function rt_api_name_len(domain: u32, id: u32): u32 {
  const e = S.apiEntry(domain, id);
  return e == 0 ? 0 : load<u32>(e, 4);
}

/** Address of device entry i (layout: assembly/model/session.ts DEV_ENTRY). */
export function rt_device(i: u32): usize {
  return i < S.deviceCount() ? S.deviceAt(i) : 0;
}

export function rt_fatal_code(): i32 { return fatalErrorCode(); }
export function rt_fatal_offset(): u64 { return fatalErrorOffset(); }
export function rt_fatal_detail(): u64 { return fatalErrorDetail(); }
export function rt_warning_count(code: i32): u64 { return warningCount(code); }
export function rt_warning_offset(code: i32): u64 { return warningOffset(code); }
export function rt_warning_detail(code: i32): u64 { return warningDetail(code); }
/** Damage totals (util/diag.ts lossTotal: 0 ranges, 1 ranges kept, 2 activity chunks lost, 3 their bytes, 4 bytes). */
export function rt_loss_total(field: i32): u64 { return lossTotal(field); }
/** Kept skipped range `i`: field 0 from, 1 to (file offsets), 2 warning code, 3 chunk seq (0xffffffff: none). */
export function rt_loss_range(i: i32, field: i32): u64 { return lossRange(i, field); }

// Multi-file work (merge, batch): output options and clock anchors.
export { rt_set_output, rt_set_xspace_host, rt_clock_anchor } from "./batch";

/**
 * Split conversion of one file over several workers (assembly/split.ts, src/node/split.ts): before rt_begin_emit,
 * this worker `w` of `n` (0: not split) and the number of segments the ACTIVITY chunks are cut into (rounded up to
 * a multiple of `n`; worker w emits segments w, w + n, …). Segment events arrive through `env.rt_split_segment`.
 */
export function rt_split_set(w: u32, n: u32, segments: u32): void {
  splitSet(w, n, segments);
}
/**
 * The end writer, after its last window and before it waits for the other workers' state: finishes the input (the
 * chunks an end-of-file scan still finds belong before the close), then closes every segment but the last (the
 * other workers may need those written before they can finish).
 */
export function rt_split_close(): void {
  finishInput();
  splitBeforeEnd();
}
/** After a part's pass 2: address of its rows {table u64, key u64, value u64} × rt_split_rows(). */
export function rt_split_export(): usize {
  return splitExport();
}
/** Rows the part logged. */
export function rt_split_rows(): u32 {
  return splitRows();
}
/** A part's state: 0 last event end (Unix ns), 1 CUPTI overhead seen, 2 events emitted. */
export function rt_split_state(field: i32): u64 {
  return splitState(field);
}
/** The end writer, before rt_end_pass: the other workers' rows (`n` at `p`, from rt_alloc), last end, overhead, events. */
export function rt_split_import(p: usize, n: u32, lastEnd: u64, overhead: i32, events: u64): void {
  splitImport(p, n, lastEnd, overhead, events);
}

/** Largest XSpace written, bytes (0: protobuf's 2^31 - 1, the default; tests lower it). emit/xspace_limit.ts. */
export function rt_set_xspace_limit(n: u64): void {
  setXSpaceMaxBytes(n);
}

/** Test-only: spill XSpace lines from `n`-byte chunks (0: 1 MiB, the default; 0xffffffff: never). */
export function rt_set_xspace_spill(n: u32): void {
  setSpillAt(n);
}

/**
 * Test-only, after rt_set_xspace_spill: bytes of in-order records the XSpace lines may keep in memory past their
 * largest chunk before they spill (default 32 MiB; 0 with a test's spill threshold). emit/xspace_spill.ts.
 */
export function rt_set_xspace_keep(n: u32): void {
  setKeepBudget(n);
}

/** Test-only: how the timeline resolves partners: 0 as the ids' spread says (the default), 1 by table, 2 by sorting. */
export function rt_set_partner_mode(mode: u32): void {
  setPartnerMode(mode);
}

/** Test-only: XSpace's late records settle among their line's last ones (1, the default) or leave it unsorted (0). */
export function rt_set_xspace_settle(on: u32): void {
  setSettle(on != 0);
}

/** Resident bytes of each paged array created after this (0: 8 MiB, the default; tests force eviction). util/paged.ts. */
export function rt_set_paged_budget(bytes: u32): void {
  setPagedBudget(bytes);
}

/** Test-only: a new paged array (util/paged.ts pagedNew); its handle. */
export function rt_paged_new(elemShift: u32, pageBits: u32, maxPages: u32): usize {
  return pagedNew(elemShift, pageBits, maxPages);
}

/** Test-only: a new paged array whose directories grow with rt_paged_reserve (util/paged.ts pagedNewSized); its handle. */
export function rt_paged_new_sized(elemShift: u32, pageBits: u32, maxPages: u32): usize {
  return pagedNewSized(elemShift, pageBits, maxPages);
}

/** Test-only: util/paged.ts pagedReserve (directories of a pagedNewSized array cover pages [0, n)). */
export function rt_paged_reserve(a: usize, n: u32): void {
  pagedReserve(a, n);
}

/** Test-only: util/paged.ts pagedSlot (`create` 0/1): the element's address, or 0. */
export function rt_paged_slot(a: usize, id: u64, create: i32): usize {
  return pagedSlot(a, id, create != 0);
}

/** Test-only: util/paged.ts pagedEpoch (evictions from `a` so far: cached page addresses are valid while unchanged). */
export function rt_paged_epoch(a: usize): u32 {
  return pagedEpoch(a);
}

/** Test-only: pages of paged array `a` written to the spill storage at least once. */
export function rt_paged_spilled(a: usize): u32 {
  return pagedSpilledPages(a);
}

/** Test-only: keep only the bits of `mask` of the XSpace name and detail-tuple hashes (0: all); forces collisions. */
export function rt_set_name_hash_mask(mask: u64): void {
  setNameHashMask(mask);
}

/** Test-only: emit/xspace_meta_store.ts metaStoreStat (spilled entry / bucket pages, overflowed names, buckets). */
export function rt_meta_store_stat(i: i32): u32 {
  return metaStoreStat(i);
}
