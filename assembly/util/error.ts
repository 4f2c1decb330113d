/**
 * Error and warning codes of the core. Codes are stable numbers; their names and messages live on the host side
 * (src/core/codes.ts) so that no string handling happens in the hot path. A fatal error stops the file; a warning
 * is counted (with the file offset and a detail number of its first occurrence) and surfaced in every output.
 */

/** Fatal error codes (0 = none). Keep in sync with src/core/codes.ts. */
export const enum Fatal {
  NONE = 0,
  /** The first 8 bytes are not `RAWTRACE`. detail: 0. */
  BAD_MAGIC = 1,
  /** The preamble's major version is newer than this reader. detail: the major version. */
  FUTURE_FORMAT = 2,
  /** The input ended before the 16-byte preamble. detail: bytes seen. */
  EMPTY = 3,
  /** An allocation request exceeded the engine's memory budget. detail: bytes requested. */
  OUT_OF_MEMORY = 4,
  /** The file's vendor has no decoder in this build. detail: vendor code. */
  UNSUPPORTED_VENDOR = 5,
  /** The engine was used out of order (host bug). detail: 0. */
  API_MISUSE = 6,
  /**
   * The XSpace would exceed protobuf's 2 GiB message limit (emit/xspace_limit.ts); nothing was written. detail: its
   * size in bytes (exact for the planes, an upper bound for the diagnostics).
   */
  XSPACE_TOO_LARGE = 7,
}

/** Warning codes. Keep in sync with src/core/codes.ts. */
export const enum Warn {
  /** Bytes after the last complete chunk (the file was cut). detail: bytes left over. */
  TRUNCATED = 0,
  /** A chunk header failed its sync word or CRC; the reader scanned to the next chunk. detail: bytes skipped. */
  BAD_CHUNK_HEADER = 1,
  /** A chunk payload failed its CRC and was skipped. detail: chunk seq. */
  BAD_PAYLOAD_CRC = 2,
  /** A chunk declared a payload longer than 256 MiB. detail: declared length. */
  CHUNK_TOO_LARGE = 3,
  /** Chunk sequence numbers jumped (chunks missing). detail: number missing. */
  SEQ_GAP = 4,
  /** A chunk with an already seen sequence number was skipped. detail: chunk seq. */
  DUPLICATE_CHUNK = 5,
  /** A chunk type this reader does not know was skipped. detail: type. */
  UNKNOWN_CHUNK = 6,
  /** No END chunk: the collector did not close the file cleanly. detail: 0. */
  NO_END = 7,
  /** A metadata chunk payload was shorter than its fields. detail: chunk type. */
  BAD_PAYLOAD = 8,
  /** An activity record kind with no known size: the rest of its buffer was skipped. detail: kind. */
  UNKNOWN_KIND_UNSIZED = 9,
  /** Records of a kind the decoder does not turn into events (skipped by stride). detail: kind. */
  UNKNOWN_KIND = 10,
  /** An activity buffer ended in the middle of a record. detail: bytes left over. */
  RECORD_TRUNCATED = 11,
  /** A pointer field had no entry in the string table. detail: low 32 bits of the pointer. */
  MISSING_STRING = 12,
  /** The vendor library version is newer than the layouts this build knows. detail: version. */
  UNKNOWN_VENDOR_VERSION = 13,
  /** A record ends before it starts; it was dropped (model/timing.ts). detail: record kind of the first. */
  NEGATIVE_DURATION = 14,
  /** A correlation id was mapped to two external ids; the first was kept. detail: correlation id. */
  DUPLICATE_CORRELATION = 15,
  /** The collector reported lost records (DROPPED chunks). detail: records lost. */
  DROPPED_RECORDS = 16,
  /** An NVTX range was started but never ended; it was closed at the last timestamp. detail: range id. */
  UNCLOSED_RANGE = 17,
  /** An NVTX range end had no start. detail: range id. */
  UNMATCHED_RANGE_END = 18,
  /**
   * A record size in KIND_SIZES was implausible (0, > 64 KiB or not a multiple of 8; the built-in size is used), or
   * came after the first ACTIVITY chunk and differs from the size in use (kept). detail: kind.
   */
  BAD_KIND_SIZE = 19,
  /**
   * No HEADER chunk before the first activity chunk; the vendor was read from the chunks before it (engine.ts
   * beginWithoutHeader). detail: the vendor used.
   */
  NO_HEADER = 20,
  /** A record size is smaller than the fields the decoder needs; the record was skipped. detail: kind. */
  RECORD_TOO_SMALL = 21,
  /** The collector logged an error (LOG chunk, level error). detail: 0. */
  COLLECTOR_ERROR = 22,
  /** A chunk sequence number was seen again with different content; both chunks were kept. detail: seq. */
  SEQ_REUSED = 23,
  /** API calls of two processes carry the same correlation id; its flows were left out. detail: correlation id. */
  CORRELATION_PROCESSES = 24,
  /**
   * A record's start is unknown (0) or one of its times is far outside the run (model/timing.ts); it was dropped.
   * detail: record kind of the first.
   */
  BAD_TIMESTAMP = 25,
  /**
   * A record has a start but no end (work unfinished at the final, forced flush); kept as a zero-length event marked
   * incomplete. detail: record kind of the first.
   */
  INCOMPLETE_RECORD = 26,
  /**
   * PTI: a record's device UUID is not in the DEVICES table; such devices are numbered after the listed ones, in
   * order of first appearance. detail: the unknown devices' count.
   */
  UNKNOWN_DEVICE = 27,
  /** PTI: a memory or memcpy type outside the enum (named `INVALID`, copy kind unknown). detail: the value. */
  BAD_ENUM_VALUE = 28,
  /**
   * An HPU_TRACE chunk failed validation and its buffer was skipped (decode/synapse_buffer.ts). detail: reason
   * (1 header, 2 size, 3 trailer num/version, 4 no entry layout fits, 5 cut by the file's end with a header
   * numEntries its size cannot hold).
   */
  HPU_BAD_TRACE = 29,
  /**
   * A Synapse long double time is negative, infinite, NaN, denormal, an invalid x87 encoding or ≥ 2^64 ns; the entry
   * was dropped. detail: util/f80.ts status of the first (6 = denormal).
   */
  HPU_BAD_TIME = 30,
  /**
   * A char* of a Synapse entry points into the buffer but not at a NUL-terminated string of its pool, or outside
   * the buffer with no STRINGS entry; the name or argument is left empty. detail: entry index in its buffer.
   */
  HPU_BAD_STRING = 31,
  /** A Synapse 'E' event had no open 'B' on its (engine, context); ignored. detail: engine type << 16 | index. */
  HPU_UNMATCHED_END = 32,
  /**
   * The HEADER failed its payload checksum (also reported as BAD_PAYLOAD_CRC) and no other HEADER came first: its
   * fields were used, since its layout holds (a known vendor, a pointer size of 4 or 8, its strings inside the
   * payload), but any of them may be the damaged byte (process id, rank, versions, host name). detail: the vendor id.
   */
  HEADER_DAMAGED = 33,
  /**
   * rocprofiler-sdk: records of a buffer-tracing kind the dump never names (its API_NAMES chunk damaged or missing:
   * the decoder knows kinds only by name), skipped. A loss, unlike UNKNOWN_KIND (a named kind not decoded). detail:
   * the kind of the first.
   */
  UNNAMED_KIND = 34,
  /**
   * The collector reported whole buffers of records lost (DROPPED chunks that count buffers: reason 3, a write error;
   * reason 4, left by an exit flush out of time; reason 2 of the CUDA collector, over its memory cap). detail:
   * buffers lost.
   */
  DROPPED_BUFFERS = 35,
  /**
   * A char* (or extraArgs array) of a Synapse entry points into the part of its buffer's string pool that the file's
   * end cut off (decode/synapse_buffer.ts, a cut HPU_TRACE chunk): the name or argument is left empty, the entry kept.
   * detail: entry index in its buffer.
   */
  HPU_CUT_STRING = 36,
  /**
   * Host-detected (the core cannot see it; rt_host_warn): the input changed size during the conversion and the dump
   * has no END chunk, a collector still writing it. offset: the first size seen (bytes); detail: the last.
   */
  STILL_WRITING = 37,
  /**
   * Host-detected (rt_host_warn): the gzip stream around the dump is damaged after its start, or cut inside a
   * member's trailer. offset: the compressed byte where; detail: the bytes of dump it still held (converted).
   */
  GZIP_DAMAGED = 38,
  /**
   * Host-detected (rt_host_warn): a complete dump (END chunk) changed size after its index pass: cut, replaced or
   * appended to while a later pass read it, so that pass read other bytes than the index pass did. offset: the size
   * the index pass ended with (bytes); detail: the first other size a later pass saw.
   */
  FILE_CHANGED = 39,
  /**
   * rocprofiler-sdk: a record header in an activity buffer does not frame a record (not a tracing record, a size
   * under 16 bytes, or one the record's own first field does not repeat: a damaged byte in a buffer read unverified,
   * cut by the file's end): the bytes up to the next header that frames one were skipped (decode/rocprofiler.ts
   * walk). detail: the size the damaged header gave.
   */
  BAD_RECORD_HEADER = 40,
  /**
   * An activity chunk of the kind another vendor writes (ACTIVITY in a Synapse dump, HPU_TRACE in a CUPTI one): the
   * HEADER's vendor or the chunk's type is damaged (their checksums intact) and nothing of it is decoded. A loss.
   * detail: the chunk type.
   */
  FOREIGN_CHUNK = 41,
  /**
   * A CLOCK anchor was set aside as implausible (model/clock.ts): times were aligned by the other anchor, or, with
   * none left, the vendor clock was taken as CLOCK_REALTIME. offset: its CLOCK chunk. detail: the reason of the
   * first ({@link AnchorFault}: 1 vendor time 0, 2 vendor time ≥ 2^63 ns, 3 CLOCK_REALTIME 0 or ≥ 2^63 ns, 4 the
   * start and end anchors disagree and this one lies over 1 h from every record, 5 they disagree and this start
   * anchor's CLOCK_REALTIME lies over 1 h from the HEADER's collector start, 6 they disagree and this end anchor was
   * set aside, the start anchor kept, 7 the only anchor left lies over 1 h from every record).
   */
  BAD_CLOCK_ANCHOR = 42,
  /**
   * The clock alignment maps kept record times before the Unix epoch or past 2^64 − 1 ns, where they are clamped
   * (model/clock.ts toUnix): their times are lost. offset: the CLOCK chunk of the anchor that aligns them. detail:
   * 1 before 1970 (clamped to 1 ns), 2 past 2^64 − 1 ns, 3 both.
   */
  CLOCK_CLAMPED = 43,
  /**
   * The file's magic "RAWTRACE" or its format major is not a format 1 dump's (a major one bit away from 1: 3, 5, 9, …,
   * which newer formats do not use), but a chunk header whose sync word and header CRC hold follows the 16-byte
   * preamble: the preamble is damaged, the dump read as format 1. Nothing is lost by it. offset: 0. detail: how many
   * of the 10 bytes of magic and major differ from a format 1 dump's.
   */
  PREAMBLE_DAMAGED = 44,
  /**
   * Host-detected (rt_host_warn): one of a gzip input's first three bytes (its magic 1f 8b and method 08) is damaged
   * but the rest of its header is a gzip writer's, so it was read as gzip with them repaired (src/core/gzip_magic.ts).
   * Nothing is lost by it. offset: 0. detail: how many of the three changed (1).
   */
  GZIP_MAGIC_DAMAGED = 45,
}

/** Number of warning codes (size of the per-code tables). */
export const WARN_COUNT: i32 = 46;
/**
 * The first of the warning codes only a host can detect (rt_host_warn accepts these, up to WARN_HOST_LAST, and
 * GZIP_MAGIC_DAMAGED, added after them).
 */
export const WARN_HOST_FIRST: i32 = 37;
/** The last of the warning codes only a host can detect. */
export const WARN_HOST_LAST: i32 = 39;
