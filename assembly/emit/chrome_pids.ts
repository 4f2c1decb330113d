/**
 * The pids of the Chrome JSON: Kineto's (a host process by its OS pid, a GPU by its ordinal), moved where Kineto's rule
 * would give two processes one pid, and the pid namespace of a merge slot (emit/options.ts), where each rank's host
 * processes, GPUs and flow ids are offset so that ranks never share one. Read by emit/chrome_json.ts and
 * emit/chrome_meta.ts; set per conversion by {@link chromePidsBegin}.
 */
import * as S from "../model/session";
import * as X from "./options";
import { Table, tableNew, tableUpsert, tableCount, inserted } from "../util/hash_table";

/** Kineto's sort-index offset of GPU processes (kExceedMaxPid). */
export const GPU_SORT_OFFSET: u64 = 5000000;
/** Pid namespace (emit/options.ts): on when a merge slot is set; pids and flow ids are offset from nsBase. */
export let nsOn = false;
export let nsBase: u64 = 0;
/** Offset of the flow ids (ac2g arrows) in the namespace: the slot << 32, else 0. */
export let flowBase: u64 = 0;
let hostLocal: Table = 0; // OS pid → local pid index (0..98) in namespace mode
let lastOsPid: u64 = 0xffffffffffffffff;
let lastHostPid: u64 = 0;

/**
 * Output pid of GPU `dev`: Kineto's (the device ordinal), or its place in the namespace slot; moved past every Linux
 * pid (GPU_SORT_OFFSET + ordinal) when the program's own pid is one of the ordinals (gpuPidBase, chromePidsBegin).
 */
// @ts-ignore: decorator
@inline export function gpid(dev: u64): u64 {
  return nsOn ? nsBase + X.NS_GPU + (dev < 900 ? dev : dev % 900) : dev + gpuPidBase;
}

/** 0, or GPU_SORT_OFFSET when GPU pids must move off the host's (see {@link gpid}). */
let gpuPidBase: u64 = 0;

/**
 * Whether the program's pid could be a GPU's pid: Kineto's rule (GPU pid = ordinal, host pid = OS pid) gives a
 * program running as pid 1 in a container with two GPUs one process for its threads and GPU 1's streams, which
 * Perfetto shows as one (with two names and sort indexes). True when the pid is at most the largest ordinal in the
 * device table, or below 64 when the dump has no table (ordinals unknown). The program's pid: S.programPid.
 */
function hostPidMayBeGpu(): bool {
  // With the HEADER lost (pid 0) or damaged, the process of the API calls pass 1 saw: GPUs moved off no event's pid.
  const pid = <u64>S.programPid();
  const n = S.deviceCount();
  if (n == 0) return pid < 64;
  let max: u64 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const id = <u64>load<u32>(S.deviceAt(i));
    if (id > max) max = id;
  }
  return pid <= max;
}

/** Output pid of host process `pid`: the OS pid, or its local index (order of first appearance) in the slot. */
// @ts-ignore: decorator
@inline export function hpid(pid: u64): u64 {
  return nsOn ? hpidNs(pid) : pid;
}

/** {@link hpid} in namespace mode. */
export function hpidNs(pid: u64): u64 {
  if (pid == lastOsPid) return lastHostPid;
  const slot = tableUpsert(hostLocal, pid);
  if (inserted) store<u64>(slot, <u64>tableCount(hostLocal) - 1);
  const local = load<u64>(slot);
  lastOsPid = pid;
  lastHostPid = nsBase + (local < X.NS_OVERHEAD ? local : X.NS_OVERHEAD - 1);
  return lastHostPid;
}

/** Sets the pids of a new conversion (its namespace from emit/options.ts, GPU pids off the host's when needed). */
export function chromePidsBegin(): void {
  nsOn = X.pidNamespace >= 0;
  nsBase = nsOn ? <u64>X.pidNamespace * X.NS_STRIDE : 0;
  gpuPidBase = !nsOn && S.haveHeader && hostPidMayBeGpu() ? GPU_SORT_OFFSET : 0;
  flowBase = nsOn ? <u64>X.pidNamespace << 32 : 0;
  hostLocal = tableNew(4);
  lastOsPid = 0xffffffffffffffff;
}
