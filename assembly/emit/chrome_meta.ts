/**
 * The end of a Chrome JSON trace (emit/chrome_json.ts writes the events): Kineto's process and thread metadata for
 * every row the events used (names, labels, sort indices; the namespace labels of a merge slot), the closing
 * "Record Window End" instant, the trace name and the `rawtrace` object with what the conversion saw (counts,
 * warnings, the byte ranges damage made it skip).
 */
import * as S from "../model/session";
import * as O from "./out";
import * as X from "./options";
import { tableNew, tableUpsert, tableSlots, tableKeyAt, tableValueAt } from "../util/hash_table";
import { WARN_COUNT, Warn } from "../util/error";
import { warningCount, warningOffset, warningDetail, lossTotal, lossRange, NO_SEQ } from "../util/diag";
import { warnName } from "../util/error_names";
import {
  SYNC_TID_OFFSET, lastTs, hostRows, gpuRows, syncRows, overheadSeen, traceNamePtr, traceNameLen, rel, sep,
} from "./chrome_json";
import { GPU_SORT_OFFSET, nsOn, nsBase, gpid, hpid } from "./chrome_pids";
import { keyU } from "./chrome_header";

function meta(name: string, pid: u64, tid: u64): void {
  O.need(O.EVENT_RESERVE);
  sep();
  O.ascii('{"name":"');
  O.ascii(name);
  O.ascii('","ph":"M","ts":0.000');
  keyU(',"pid":', pid);
  keyU(',"tid":', tid);
  O.ascii(',"args":{');
}

/** Basename of argv[0] from the HEADER command line (NUL-separated), or 0 length. */
let procNamePtr: usize = 0;
let procNameLen: u32 = 0;
function processName(): void {
  procNamePtr = 0;
  procNameLen = 0;
  const p = S.cmdlinePtr;
  let n = S.cmdlineLen;
  let end: u32 = 0;
  while (end < n && load<u8>(p + end) != 0) end++;
  let start = end;
  while (start > 0 && load<u8>(p + start - 1) != 47) start--;
  procNamePtr = p + start;
  procNameLen = end - start;
}

function writeProcessName(pid: u64): void {
  O.ascii('"name":');
  if (procNameLen != 0) O.jsonString(procNamePtr, procNameLen);
  else {
    O.ascii('"process ');
    O.u64dec(pid);
    O.byte(34);
  }
  O.need(256);
}

/** Namespace mode: opens `"name":"<label> ` (the caller writes the rest of the string and its closing quote). */
function nsNameOpen(): void {
  O.ascii('"name":"');
  if (X.labelLen != 0) {
    O.jsonChars(X.labelPtr, X.labelLen);
    O.need(256);
    O.byte(32);
  }
}

/** Namespace mode: the process_name of host process `pid`, `<label> <program> (pid <OS pid>)`. */
function nsHostName(pid: u64): void {
  nsNameOpen();
  if (procNameLen != 0) {
    O.jsonChars(procNamePtr, procNameLen);
    O.need(256);
    O.ascii(" (pid ");
    O.u64dec(pid);
    O.ascii(')"');
  } else {
    O.ascii("process ");
    O.u64dec(pid);
    O.byte(34);
  }
}

/**
 * The host process whose process_name opens the trace's array ({@link chromeLead}), or 0 for none: the dump's own
 * (the HEADER's pid) when the HEADER is intact and pass 1 saw API calls of it that the output shows or, for decoders
 * that note no API process (ROCm, Gaudi: their host events take the HEADER's pid), any shown host event; otherwise the
 * first process pass 1 saw a shown API call of (a HEADER that failed its checksum, API calls only from another
 * process), or, for ROCm and Gaudi, the pid their host events take (S.hostPid: a lost or damaged HEADER's, or its
 * THREAD_NAMES' process) when a shown host event has it. The end then writes no second process_name for that pid.
 */
function leadPid(): u64 {
  // Not from a HEADER that failed its checksum (its pid may be the damaged byte), nor for a pid no shown event has.
  if (S.haveHeader && S.processId != 0 && warningCount(Warn.HEADER_DAMAGED) == 0 && S.apiProcessSeen(S.processId)) {
    return <u64>S.processId;
  }
  const api = S.firstApiPid();
  if (api != 0) return <u64>api;
  // ROCm, Gaudi (no API call's process noted): their host events take S.hostPid, whatever the HEADER's state.
  const host = S.hostPid();
  return host != 0 && !S.apiPidsNoted && S.apiProcessSeen(host) ? <u64>host : 0;
}

/**
 * Writes the first element of the traceEvents array: the process_name of the dump's own process (the HEADER's pid),
 * or of the first process with API calls ({@link leadPid}), when there is one. HTA numbers events by their place in traceEvents and reads a link to index 0 as "no link"
 * (hta/common/trace.py, index_correlation): when a launch call or a kernel came first, HTA lost that pair and put
 * the kernel in iteration −1. Kineto's files start with a CPU op that has no link; a metadata event has no `dur`,
 * so HTA drops it and no event of ours takes index 0. Each rank of a merge opens its part with one too.
 */
export function chromeLead(): void {
  const pid = leadPid();
  if (pid == 0) return;
  processName();
  meta("process_name", hpid(pid), 0);
  if (nsOn) nsHostName(pid);
  else writeProcessName(pid);
  O.ascii("}}");
}

/**
 * The overhead process's name (JSON string chars, no quotes): Kineto's "CUPTI Overhead" for CUDA, and for the other
 * vendors their profiler's name the same way ("PTI Overhead", "rocprofiler-sdk Overhead", "Synapse profiler
 * Overhead": S.overheadName with its last word capitalised).
 */
function overheadProcessName(): void {
  const n = S.overheadName;
  // Every decoder's name ends in " overhead" (decode/registry.ts).
  const cut = n.endsWith(" overhead") ? n.length - 8 : n.length;
  O.ascii(n.substring(0, cut));
  if (cut != n.length) O.ascii("Overhead");
}

/** The thread_sort_index metadata of row (pid, tid): sorted by `index` (default: the tid). */
function threadSortIndex(pid: u64, tid: u64, index: u64 = tid): void {
  meta("thread_sort_index", pid, tid);
  keyU('"sort_index":', index);
  O.ascii("}}");
}

/** ` (<name>)` of a thread or stream name entry {ptr u32, len u32}; nothing when `entry` is 0. */
function nameSuffix(entry: usize): void {
  if (entry == 0) return;
  O.ascii(" (");
  O.jsonChars(<usize>load<u32>(entry), load<u32>(entry, 4));
  O.need(256);
  O.byte(41);
}

/** Writes the process/thread metadata, the closing instant, and the trailer (events-only: the metadata alone). */
export function chromeEnd(): void {
  processName();
  const lead = leadPid();
  // Host processes and threads.
  let n = tableSlots(hostRows);
  let lastPid: u64 = 0xffffffffffffffff;
  for (let i: u32 = 0; i < n; i++) {
    const k = tableKeyAt(hostRows, i);
    if (k == 0xffffffffffffffff) continue;
    const pid = k >> 32;
    const tid = k & 0xffffffff;
    const opid = hpid(pid);
    if (pid != lastPid) {
      lastPid = pid;
      // Named first (chromeLead).
      if (lead == 0 || pid != lead) {
        meta("process_name", opid, 0);
        if (nsOn) nsHostName(pid);
        else writeProcessName(pid);
        O.ascii("}}");
      }
      meta("process_labels", opid, 0);
      O.ascii('"labels":"CPU"}}');
      meta("process_sort_index", opid, 0);
      keyU('"sort_index":', opid);
      O.ascii("}}");
    }
    meta("thread_name", opid, tid);
    O.ascii('"name":"thread ');
    O.u64dec(tid);
    nameSuffix(S.threadName(<u32>pid, <u32>tid));
    O.ascii('"}}');
    threadSortIndex(opid, tid);
  }
  // GPU processes (one per device) and stream rows.
  const devSeen = tableNew(16);
  n = tableSlots(gpuRows);
  for (let i: u32 = 0; i < n; i++) {
    const k = tableKeyAt(gpuRows, i);
    if (k == 0xffffffffffffffff) continue;
    const dev = k >> 32;
    const tid = k & 0xffffffff;
    const kind = tableValueAt(gpuRows, i);
    tableUpsert(devSeen, dev);
    meta("thread_name", gpid(dev), tid);
    if (kind == 3) O.ascii('"name":"context sync"}}');
    else {
      keyU('"name":"stream ', tid);
      nameSuffix(S.streamName(<u32>dev, <u32>tid));
      O.ascii('"}}');
    }
    threadSortIndex(gpid(dev), tid);
  }
  n = tableSlots(syncRows);
  for (let i: u32 = 0; i < n; i++) {
    const k = tableKeyAt(syncRows, i);
    if (k == 0xffffffffffffffff) continue;
    const dev = k >> 32;
    const stream = k & 0xffffffff;
    tableUpsert(devSeen, dev);
    meta("thread_name", gpid(dev), stream + SYNC_TID_OFFSET);
    keyU('"name":"stream ', stream);
    O.ascii(' (sync)"}}');
    // Sorted with its stream, as Kineto sorts its sync rows (sort_index = the stream id; output_json.cpp): before
    // 2026-12-03 every sync row sorted after every stream row.
    threadSortIndex(gpid(dev), stream + SYNC_TID_OFFSET, stream);
  }
  n = tableSlots(devSeen);
  for (let i: u32 = 0; i < n; i++) {
    const dev = tableKeyAt(devSeen, i);
    if (dev == 0xffffffffffffffff) continue;
    meta("process_name", gpid(dev), 0);
    if (nsOn) {
      nsNameOpen();
      keyU("GPU ", dev);
      O.byte(34);
    } else writeProcessName(dev);
    O.ascii("}}");
    meta("process_labels", gpid(dev), 0);
    keyU('"labels":"GPU ', dev);
    O.ascii('"}}');
    meta("process_sort_index", gpid(dev), 0);
    keyU('"sort_index":', nsOn ? gpid(dev) : dev + GPU_SORT_OFFSET);
    O.ascii("}}");
  }
  if (overheadSeen && nsOn) {
    meta("process_name", nsBase + X.NS_OVERHEAD, 0);
    nsNameOpen();
    overheadProcessName();
    O.ascii('"}}');
    meta("process_sort_index", nsBase + X.NS_OVERHEAD, 0);
    keyU('"sort_index":', nsBase + X.NS_OVERHEAD);
    O.ascii("}}");
  } else if (overheadSeen) {
    O.need(O.EVENT_RESERVE);
    sep();
    // Kineto puts overhead on pid -1, which Perfetto reads as pid 0 (it keeps pids as uint32, anything else 0): GPU 0's
    // process then took this name and sort index. 2^31 - 1 is no Linux pid (at most 2^22) and no device ordinal.
    O.ascii('{"name":"process_name","ph":"M","ts":0.000,"pid":2147483647,"tid":0,"args":{"name":"');
    overheadProcessName();
    O.ascii('"}}');
    sep();
    O.ascii('{"name":"process_sort_index","ph":"M","ts":0.000,"pid":2147483647,"tid":0,"args":{"sort_index":16777226}}');
  }
  if (X.eventsOnly) {
    O.flush();
    return;
  }
  O.need(O.EVENT_RESERVE);
  sep();
  O.ascii('{"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":');
  O.micros(rel(lastTs));
  O.ascii("}\n]");
  if (traceNameLen != 0) {
    O.ascii(',"traceName":');
    O.jsonString(traceNamePtr, traceNameLen);
  }
  O.need(O.EVENT_RESERVE);
  trailer();
  O.need(4);
  O.ascii("}\n");
  O.flush();
}

/** The `rawtrace` object: conversion facts a user should see next to the trace. */
function trailer(): void {
  O.ascii(',"rawtrace":{"format":1');
  keyU(',"events":', S.eventsEmitted);
  keyU(',"activity_chunks":', S.activityChunks);
  keyU(',"dropped_records":', S.droppedRecords);
  // The total saturates instead of wrapping: say that it is a lower bound.
  if (S.droppedRecords == 0xffffffffffffffff) O.ascii(',"dropped_records_saturated":true');
  // Whole buffers whose records were never counted (docs/format.md §8): only when some were lost.
  if (S.droppedBuffers > 0) keyU(',"dropped_buffers":', S.droppedBuffers);
  keyU(',"api_calls_hidden":', S.apiFiltered);
  keyU(',"out_of_order_buffers":', S.outOfOrderBuffers);
  O.ascii(',"complete":');
  O.ascii(S.haveEnd ? "true" : "false");
  O.ascii(',"warnings":[');
  let comma = false;
  for (let c = 0; c < WARN_COUNT; c++) {
    const cnt = warningCount(c);
    if (cnt == 0) continue;
    O.need(512);
    if (comma) O.byte(44);
    comma = true;
    O.ascii('{"code":"');
    O.ascii(warnName(c));
    keyU('","count":', cnt);
    keyU(',"offset":', warningOffset(c));
    keyU(',"detail":', warningDetail(c));
    O.byte(125);
  }
  O.need(8);
  O.byte(93);
  if (lossTotal(0) != 0) lost();
  O.byte(125);
}

/**
 * `"lost"`, only when input bytes were skipped: totals and the first kept byte ranges [from, to) with the warning
 * that skipped them and the chunk seq when known (docs/errors.md, "Damage").
 */
function lost(): void {
  O.need(256);
  keyU(',"lost":{"bytes":', lossTotal(4));
  keyU(',"activity_chunks":', lossTotal(2));
  keyU(',"activity_bytes":', lossTotal(3));
  keyU(',"ranges_total":', lossTotal(0));
  O.ascii(',"ranges":[');
  const kept = <i32>lossTotal(1);
  for (let i = 0; i < kept; i++) {
    O.need(256);
    if (i > 0) O.byte(44);
    keyU('{"from":', lossRange(i, 0));
    keyU(',"to":', lossRange(i, 1));
    O.ascii(',"code":"');
    O.ascii(warnName(<i32>lossRange(i, 2)));
    O.byte(34);
    if (<u32>lossRange(i, 3) != NO_SEQ) keyU(',"seq":', lossRange(i, 3));
    O.byte(125);
  }
  O.need(8);
  O.ascii("]}");
}
