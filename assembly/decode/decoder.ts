/**
 * The vendor-decoder interface. A decoder turns one vendor's raw records into normalized events
 * (model/event.ts) and session tables (model/session.ts); the engine calls the active one through the function
 * references below and never names a vendor module. A vendor module fills them with {@link install}; the registry
 * (decode/registry.ts) picks the module from the HEADER's vendor id and version.
 *
 * Calls, in order (see engine.ts for the passes):
 *   apiName   pass 1, each API_NAMES entry (domain, id, name bytes)
 *   table     pass 1, each vendor table chunk (types ≥ 12: ROCm AGENTS, KERNEL_SYMBOLS; payload bytes, file offset)
 *   prepare   pass 1, once, before the first ACTIVITY chunk (API_NAMES and KIND_SIZES seen so far are known)
 *   scan      pass 1, each ACTIVITY payload: counts, join tables, time span, host ranges
 *   indexed   end of pass 1, before model/ranges.ts sorts the host ranges (joins that need the whole file)
 *   project   projection pass (only when model/ranges.ts asks for it): launch calls → innermost range
 *   decode    pass 2, each ACTIVITY payload: events to the emitter
 *   finish    end of pass 2, with the emitter's last timestamp (Unix ns): ranges still open, projected spans
 * Function references are static (no closures), so they survive heap.reset() between files.
 */

/** Stores one API_NAMES entry: (domain, id) → name bytes [p, p+n). */
export type ApiNameFn = (domain: u32, id: u32, p: usize, n: u32) => void;
/** Called once before the first ACTIVITY chunk of pass 1. */
export type PrepareFn = () => void;
/**
 * One ACTIVITY payload [p, p+n); `off` is the file offset of its chunk header (payload at off + 24). The part of a
 * buffer the file's end cut comes as a shorter payload, with format/container.ts `cutDeclared` set to the length its
 * chunk header declares during the call (a decoder that can read nothing of it calls `cutUnread`).
 */
export type BufferFn = (p: usize, n: u32, off: u64) => void;
/** One ACTIVITY payload in the projection pass. */
export type ProjectFn = (p: usize, n: u32) => void;
/** End of pass 2; `lastTs` is the emitter's last timestamp (Unix ns). */
export type FinishFn = (lastTs: u64) => void;
/** End of pass 1. */
export type IndexedFn = () => void;
/** One vendor table chunk of `type` (≥ 12), payload [p, p+n), chunk header at file offset `off`. */
export type TableFn = (type: u32, p: usize, n: u32, off: u64) => void;

function noApiName(domain: u32, id: u32, p: usize, n: u32): void {}
function noPrepare(): void {}
function noBuffer(p: usize, n: u32, off: u64): void {}
function noProject(p: usize, n: u32): void {}
function noFinish(lastTs: u64): void {}
function noTable(type: u32, p: usize, n: u32, off: u64): void {}
/** An end-of-pass-1 hook that does nothing (for decoders that need none). */
export function noIndexed(): void {}

/** True when a decoder is installed for the current file. */
export let active = false;
/** Vendor id (HEADER) of the installed decoder; 0 when none. */
export let activeVendor: u32 = 0;
/** The installed decoder's API_NAMES handler. */
export let dApiName: ApiNameFn = noApiName;
/** The installed decoder's preparation (before the first ACTIVITY chunk). */
export let dPrepare: PrepareFn = noPrepare;
/** The installed decoder's pass-1 scan of one ACTIVITY payload. */
export let dScan: BufferFn = noBuffer;
/** The installed decoder's projection-pass walk of one ACTIVITY payload. */
export let dProject: ProjectFn = noProject;
/** The installed decoder's pass-2 decode of one ACTIVITY payload. */
export let dDecode: BufferFn = noBuffer;
/** The installed decoder's end of pass 2. */
export let dFinish: FinishFn = noFinish;
/** The installed decoder's vendor table chunk handler. */
export let dTable: TableFn = noTable;
/** The installed decoder's end of pass 1. */
export let dIndexed: IndexedFn = noIndexed;

/**
 * Chunk type that carries the installed decoder's activity buffers: ACTIVITY (5) for every vendor but Habana, whose
 * HPU_TRACE (14) chunks hold one synProfilerGetTrace buffer each with its own header (docs/decoders/hpu.md).
 */
export let activityChunk: u32 = 5;
/**
 * Sequence number (chunk header `seq`) of the activity chunk being scanned or decoded, set by the engine for the
 * duration of each `scan` and `decode` call: the order the collector wrote its buffers in, whatever order the file
 * holds them in now (a decoder whose joins follow the buffers' order — Synapse's recipe launches — uses it, with the
 * file offset to tell apart a reused number).
 */
export let chunkSeq: u32 = 0;
/** Sets {@link chunkSeq} (the engine, before each `scan` and `decode` call). */
export function setChunkSeq(seq: u32): void {
  chunkSeq = seq;
}

/** Sets {@link activityChunk} (a decoder's install function, after {@link install}). */
export function setActivityChunk(type: u32): void {
  activityChunk = type;
}

/** Installs a vendor decoder (called by the vendor module's install function, through the registry). */
export function install(
  vendor: u32, apiName: ApiNameFn, prepare: PrepareFn, scan: BufferFn, project: ProjectFn, decode: BufferFn,
  finish: FinishFn, table: TableFn, indexed: IndexedFn,
): void {
  active = true;
  activeVendor = vendor;
  dApiName = apiName;
  dPrepare = prepare;
  dScan = scan;
  dProject = project;
  dDecode = decode;
  dFinish = finish;
  dTable = table;
  dIndexed = indexed;
}

/** Removes the installed decoder (start of a file). */
export function uninstall(): void {
  active = false;
  activeVendor = 0;
  activityChunk = 5;
  dApiName = noApiName;
  dPrepare = noPrepare;
  dScan = noBuffer;
  dProject = noProject;
  dDecode = noBuffer;
  dFinish = noFinish;
  dTable = noTable;
  dIndexed = noIndexed;
}

/** A table chunk type no decoder wants (for decoders without vendor tables). */
export function ignoreTable(type: u32, p: usize, n: u32, off: u64): void {}

// ---- Options shared by every decoder (set by the host) ----------------------------------------------------------

/** Show every host API call (no Kineto-style blocklist). */
export let showAllApi = false;
/** Sets {@link showAllApi} (the host's `--all-api`). */
export function setShowAllApi(on: bool): void {
  showAllApi = on;
}
