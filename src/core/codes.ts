/**
 * Stable names and user-facing messages of the core's fatal errors and warnings (assembly/util/error.ts). Errors
 * cross worker boundaries as `{name, message}` (comlink keeps only those), so the name is the contract.
 */

/** Fatal error names by code (index = code). */
export const FATAL_NAMES = [
  "NONE",
  "BAD_MAGIC",
  "FUTURE_FORMAT",
  "EMPTY",
  "OUT_OF_MEMORY",
  "UNSUPPORTED_VENDOR",
  "API_MISUSE",
  "XSPACE_TOO_LARGE",
] as const;

/** What each fatal error means; `{detail}` is replaced by the detail number. */
export const FATAL_MESSAGES: Record<string, string> = {
  BAD_MAGIC: "not a .rawtrace file: expected the 8 bytes 'RAWTRACE' at offset 0",
  FUTURE_FORMAT: "written by a newer rawtrace (format major version {detail}); this reader knows version 1",
  EMPTY: "file ends before the 16-byte preamble ({detail} bytes)",
  OUT_OF_MEMORY: "the engine's memory budget was exceeded (request of {detail} bytes)",
  UNSUPPORTED_VENDOR: "vendor code {detail} has no decoder in this build (1 = CUDA, 2 = ROCm, 4 = Intel XPU and 5 = Habana HPU are supported)",
  API_MISUSE: "engine called out of order",
  XSPACE_TOO_LARGE: "the XSpace would be {detail} bytes, over protobuf's 2 GiB message limit (2147483647 bytes) that XProf and TensorBoard can read; nothing was written: convert to Chrome JSON (--format chrome) or capture fewer steps per file",
};

/** Warning names by code (index = code); same order as assembly/util/error_names.ts. */
export const WARN_NAMES = [
  "TRUNCATED",
  "BAD_CHUNK_HEADER",
  "BAD_PAYLOAD_CRC",
  "CHUNK_TOO_LARGE",
  "SEQ_GAP",
  "DUPLICATE_CHUNK",
  "UNKNOWN_CHUNK",
  "NO_END",
  "BAD_PAYLOAD",
  "UNKNOWN_KIND_UNSIZED",
  "UNKNOWN_KIND",
  "RECORD_TRUNCATED",
  "MISSING_STRING",
  "UNKNOWN_VENDOR_VERSION",
  "NEGATIVE_DURATION",
  "DUPLICATE_CORRELATION",
  "DROPPED_RECORDS",
  "UNCLOSED_RANGE",
  "UNMATCHED_RANGE_END",
  "BAD_KIND_SIZE",
  "NO_HEADER",
  "RECORD_TOO_SMALL",
  "COLLECTOR_ERROR",
  "SEQ_REUSED",
  "CORRELATION_PROCESSES",
  "BAD_TIMESTAMP",
  "INCOMPLETE_RECORD",
  "UNKNOWN_DEVICE",
  "BAD_ENUM_VALUE",
  "HPU_BAD_TRACE",
  "HPU_BAD_TIME",
  "HPU_BAD_STRING",
  "HPU_UNMATCHED_END",
  "HEADER_DAMAGED",
  "UNNAMED_KIND",
  "DROPPED_BUFFERS",
  "HPU_CUT_STRING",
  "STILL_WRITING",
  "GZIP_DAMAGED",
  "FILE_CHANGED",
  "BAD_RECORD_HEADER",
  "FOREIGN_CHUNK",
  "BAD_CLOCK_ANCHOR",
  "CLOCK_CLAMPED",
  "PREAMBLE_DAMAGED",
  "GZIP_MAGIC_DAMAGED",
] as const;
/**
 * Warnings only the host can detect: `STILL_WRITING`, an input without END chunk that changed size during the
 * conversion, `FILE_CHANGED`, a complete one (END chunk) that did, `GZIP_DAMAGED`, a gzip input whose stream
 * failed after its start, and `GZIP_MAGIC_DAMAGED`, one read with its damaged first bytes repaired (src/node/file_source.ts,
 * web/file_source.ts). The source says them (ByteSource.hostWarnings) before the output's end is written, and the core
 * lists them with its own (rt_host_warn: Chrome JSON `rawtrace.warnings`, XSpace warnings).
 */
export const HOST_WARN_NAMES = ["STILL_WRITING", "GZIP_DAMAGED", "FILE_CHANGED", "GZIP_MAGIC_DAMAGED"] as const;
export type WarningName = (typeof WARN_NAMES)[number];

/** What each warning means for the user; `{detail}` is replaced by the detail number. */
export const WARN_MESSAGES: Record<WarningName, string> = {
  TRUNCATED: "file ends inside a chunk ({detail} bytes after the last complete chunk); everything before was converted, and of a cut activity buffer or Synapse trace every whole record (unverified: its checksum covers the missing bytes)",
  BAD_CHUNK_HEADER: "damaged bytes where a chunk header was expected ({detail} bytes skipped to the next valid chunk)",
  BAD_PAYLOAD_CRC: "chunk seq {detail} failed its payload checksum and was skipped",
  CHUNK_TOO_LARGE: "a chunk header declares {detail} bytes (more than 256 MiB); skipped",
  SEQ_GAP: "{detail} chunk(s) missing from the sequence",
  DUPLICATE_CHUNK: "chunk seq {detail} appears twice; the copy was skipped",
  UNKNOWN_CHUNK: "chunk type {detail} is unknown to this reader; skipped",
  NO_END: "no END chunk: the collector did not close the file (crash, kill -9, full disk); converted what it holds",
  BAD_PAYLOAD: "a chunk of type {detail} is shorter than its fields; the readable part was used",
  UNKNOWN_KIND_UNSIZED: "activity record kind {detail} has no known size; the rest of its buffer was skipped",
  UNKNOWN_KIND: "activity record kind {detail} is not turned into events (skipped by its size)",
  RECORD_TRUNCATED: "an activity buffer or Synapse trace ends inside a record ({detail} bytes)",
  MISSING_STRING: "a name pointer (low bits {detail}) is not in the string table",
  UNKNOWN_VENDOR_VERSION: "vendor library version {detail} is newer than this build knows; known fields were read",
  NEGATIVE_DURATION: "records end before they start (first: record kind {detail}); dropped",
  DUPLICATE_CORRELATION: "correlation id {detail} maps to two external ids; the first was kept",
  DROPPED_RECORDS: "the collector lost {detail} records (buffers full or memory cap)",
  DROPPED_BUFFERS: "the collector lost {detail} whole buffers of records (over its memory cap, a write error, or left by an exit flush that ran out of RAWTRACE_EXIT_TIMEOUT)",
  UNCLOSED_RANGE: "NVTX range {detail} never ended; closed at the last timestamp",
  UNMATCHED_RANGE_END: "NVTX range end {detail} without a start; ignored",
  BAD_KIND_SIZE: "record size of kind {detail} in the dump is implausible (not a multiple of 8 from 8 to 65536, over 4× a known kind's built-in size, or listed twice in one KIND_SIZES chunk with two sizes: the built-in one is used), or comes after the first ACTIVITY chunk and differs; the size already in use was kept",
  NO_HEADER: "no HEADER chunk before the first activity (its chunk header damaged, or never written): the vendor was read from the other chunks (vendor {detail}); process id, rank, versions and host name are unknown",
  RECORD_TOO_SMALL: "records of kind {detail} are smaller than the decoder needs; skipped",
  COLLECTOR_ERROR: "the collector logged an error (chunk seq {detail})",
  SEQ_REUSED: "chunk seq {detail} appears again with different content; both copies were kept",
  CORRELATION_PROCESSES: "correlation id {detail} is used by API calls of two processes; device records carry no process, so its launch→kernel flows were left out",
  STILL_WRITING: "the file changed size during the conversion and has no END chunk: a collector is still writing it",
  FILE_CHANGED: "the file changed size after its index pass although it was complete (END chunk): cut, replaced or appended to while a later pass read it; the output holds what each pass read and may miss events or mix two versions",
  GZIP_DAMAGED: "the gzip stream is damaged after its start (a bad checksum, bytes that start no member — skipped up to the next member —, a damaged block) or cut inside a member's trailer; the {detail} bytes of dump it still holds were converted",
  BAD_TIMESTAMP:
    "records with an unknown start (0) or a time far outside the run (over 1 h past its clock anchors or records; first: record kind {detail}); dropped",
  INCOMPLETE_RECORD:
    "records without an end (work unfinished at the final flush; first: record kind {detail}); kept as zero-length events marked incomplete",
  UNKNOWN_DEVICE: "records name {detail} device(s) missing from the dump's device table (PTI DEVICES, ROCm AGENTS); numbered after the listed devices",
  BAD_ENUM_VALUE: "a PTI memory or memcpy type is outside its enum (first value {detail}); written as INVALID",
  HPU_BAD_TRACE:
    "an HPU_TRACE chunk failed validation (reason {detail}: 1 header, 2 size, 3 trailing num/version, 4 no entry layout fits, 5 cut by the file's end with an entry count its size cannot hold, 6 a base that relocates no entry's name, or fewer than half of those inside the buffer, to a pool string's start); its Synapse buffer was skipped",
  HPU_BAD_TIME:
    "Synapse entries with a long double time that is not a finite non-negative value (first: status {detail}: 1 negative, 2 infinite, 3 NaN, 4 invalid encoding, 5 too large, 6 denormal); dropped",
  HPU_BAD_STRING:
    "a Synapse char* (first: entry {detail} of its buffer) is not a NUL-terminated string of the buffer's pool nor in STRINGS; left empty",
  HPU_UNMATCHED_END: "a Synapse 'E' event without an open 'B' on its engine and context (first: engine {detail}); ignored",
  HPU_CUT_STRING:
    "a Synapse char* or extraArgs array (first: entry {detail} of its buffer) points into the part of the buffer's string pool that the file's end cut off; left empty, the entry kept",
  UNNAMED_KIND:
    "records of a kind the dump's rocprofiler-sdk kind names do not name (first: kind {detail}; its API_NAMES chunk damaged or missing) were skipped",
  BAD_RECORD_HEADER:
    "a record header in an activity buffer does not frame a record (it gave size {detail}: not a tracing record, under 16 bytes, or not the size the record itself repeats): the bytes up to the next record were skipped",
  FOREIGN_CHUNK:
    "an activity chunk of type {detail} is of the kind another vendor writes, not the HEADER's (one of them damaged, their checksums intact): not decoded",
  BAD_CLOCK_ANCHOR:
    "a CLOCK anchor is implausible (reason {detail}: 1 vendor time 0, 2 vendor time of 2^63 ns or more, 3 CLOCK_REALTIME 0 or 2^63 ns or more, no Unix time from 1970 to 2262, 4 it disagrees with the other anchor and lies over 1 h from every record, 5 a start anchor that disagrees with the end anchor and lies over 1 h from the HEADER's collector start, 6 an end anchor that disagrees with the start anchor, 7 the only anchor (and every periodic one), over 1 h from every record, none between them); set aside: times are aligned by the other anchor, or by none (the vendor clock taken as CLOCK_REALTIME), and keep their differences as recorded",
  CLOCK_CLAMPED:
    "the clock alignment maps recorded times outside the Unix times a u64 of ns holds (side {detail}: 1 before the epoch, 2 past 2^64 - 1 ns, 3 both); they were clamped there, so their times are lost: the CLOCK anchor at this offset is implausible",
  PREAMBLE_DAMAGED:
    "the file's first bytes are not a format 1 dump's ({detail} of the 10 bytes of the magic 'RAWTRACE' and major version 1 changed) but a valid chunk follows the 16-byte preamble: read as a format 1 dump whose preamble is damaged (nothing lost by it)",
  GZIP_MAGIC_DAMAGED:
    "{detail} of the gzip file's first 3 bytes (gzip's magic 1f 8b and method 08) changed, but the rest of a gzip writer's header follows: read as gzip with them repaired (nothing lost by it)",
  HEADER_DAMAGED:
    "the HEADER failed its checksum but its layout holds: it was used (vendor {detail}, checked against the chunks that follow; ranks only where plausible); its versions, process id, host name and rank (even a plausible one) may be wrong",
};

/** One warning as reported by the core: how often, and where it first happened. */
export interface Warning {
  code: WarningName;
  count: number;
  /** File offset (bytes) of the first occurrence. */
  offset: number;
  detail: number;
  message: string;
}

/**
 * Warnings that mean trace data was lost (the output misses events the collector recorded, or the collector itself
 * lost records): `--strict` turns any of them into exit code 6 (LOSS, docs/errors.md). The others (unknown kinds
 * skipped by design, missing names, unclosed ranges, …) leave every recorded event in the output.
 */
export const LOSS_WARNINGS: ReadonlySet<WarningName> = new Set<WarningName>([
  "TRUNCATED", "BAD_CHUNK_HEADER", "BAD_PAYLOAD_CRC", "CHUNK_TOO_LARGE", "SEQ_GAP", "NO_END", "BAD_PAYLOAD",
  "UNKNOWN_KIND_UNSIZED", "RECORD_TRUNCATED", "RECORD_TOO_SMALL", "DROPPED_RECORDS", "COLLECTOR_ERROR",
  "NEGATIVE_DURATION", "BAD_TIMESTAMP", "HPU_BAD_TRACE", "HPU_BAD_TIME", "UNNAMED_KIND", "DROPPED_BUFFERS",
  "FILE_CHANGED", "BAD_RECORD_HEADER", "FOREIGN_CHUNK", "CLOCK_CLAMPED",
]);

/** True when warning `code` means loss of input data ({@link LOSS_WARNINGS}). */
export function isLossWarning(code: string): boolean {
  return (LOSS_WARNINGS as ReadonlySet<string>).has(code);
}

/** A byte range [from, to) of the input that a conversion skipped, with the warning that skipped it. */
export interface LostRange {
  /** File offsets, bytes. */
  from: number;
  to: number;
  code: WarningName;
  /** Sequence number of the chunk skipped, when its header was readable. */
  seq?: number;
}

/**
 * What damage cost a conversion. Memory stays bounded: only the first 16 ranges are listed (`rangesTotal` counts
 * them all).
 */
export interface LossReport {
  /** Input bytes skipped in all. */
  bytes: number;
  /**
   * Event buffers (ACTIVITY and Synapse HPU_TRACE chunks) dropped whole — a bad payload checksum, a chunk header
   * that claims two checksums (BAD_CHUNK_HEADER), FOREIGN_CHUNK, HPU_BAD_TRACE — and their payload bytes.
   */
  activityChunks: number;
  activityBytes: number;
  /** Skipped ranges in all (≥ ranges.length). */
  rangesTotal: number;
  /** The first skipped ranges, in file order of discovery. */
  ranges: LostRange[];
}

/** An error with a stable `name` (the code) that survives structured cloning across workers. */
export class RawtraceError extends Error {
  constructor(
    /** Stable code, e.g. "BAD_MAGIC", "IO". */
    readonly code: string,
    message: string,
    /** File the error is about, when known. */
    readonly file?: string,
    /** Byte offset in that file, when known. */
    readonly offset?: number,
  ) {
    super(message);
    this.name = code;
  }
}

/**
 * True when `e` is a {@link RawtraceError}, and then `e.code` (docs/errors.md), `e.file` and `e.offset` are typed.
 * Also true for one from another copy of this module (two installs of rawtrace in one program), recognized by its
 * shape: an Error whose `code` is an upper-case code equal to its `name`. The Node API rebuilds errors that come back
 * from its workers as RawtraceErrors, so this holds for every error it throws.
 */
export function isRawtraceError(e: unknown): e is RawtraceError {
  if (e instanceof RawtraceError) return true;
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" && code === e.name && /^[A-Z][A-Z_]*$/.test(code);
}

/** Formats a message template. */
/**
 * An option's value as a USAGE message shows it: a number as written, anything else as JSON with its type ("5" (a
 * string)) — a string "5" would read as the number 5 in a template.
 */
export function shownValue(v: unknown): string {
  if (typeof v === "number") return String(v);
  let text: string | undefined;
  try {
    text = JSON.stringify(v); // a bigint, or an object with a cycle, throws
  } catch {
    text = undefined;
  }
  return `${text ?? String(v)} (a ${v === null ? "null" : typeof v})`;
}

export function fill(template: string, detail: number | bigint | string): string {
  return template.replace("{detail}", String(detail));
}
