/**
 * Constants of the `.rawtrace` container, format 1.2. The byte tables live in docs/format.md; this file and
 * `assembly/format/container.ts` and `collectors/common/rawtrace_format.h` must agree with it.
 */

/** ASCII `RAWTRACE`, the first 8 bytes of every file. */
export const MAGIC = new Uint8Array([0x52, 0x41, 0x57, 0x54, 0x52, 0x41, 0x43, 0x45]);
/**
 * Format major version written by this writer; readers refuse a larger one, but for the values one bit away from it
 * (3, 5, 9, …: a damaged preamble when a valid chunk header follows), which later majors will skip (docs/format.md).
 */
export const FORMAT_MAJOR = 1;
/** Format minor version written by this writer: 2 since payload checksums may be XXH64 (flag bit 2). */
export const FORMAT_MINOR = 2;
/** Bytes in the file preamble. */
export const PREAMBLE_SIZE = 16;
/** Bytes in a chunk header. */
export const CHUNK_HEADER_SIZE = 24;
/** Sync word at the start of every chunk header (`R T C K` in file order). */
export const CHUNK_SYNC = 0x4b435452;
/** Largest payload a chunk may declare (256 MiB). */
export const MAX_CHUNK_PAYLOAD = 0x10000000;
/** Chunk flag bit 0: the payload checksum field holds the payload's CRC-32 (format 1.0's only checksum). */
export const CHUNK_FLAG_CRC = 1;
/** Chunk flag bit 1: the payload checksum field holds the payload's XXH32, seed 0 (format 1.1). */
export const CHUNK_FLAG_XXH32 = 2;
/**
 * Chunk flag bit 2: the payload checksum field holds the low 32 bits of the payload's XXH64, seed 0 (format 1.2; what
 * writers store by default).
 */
export const CHUNK_FLAG_XXH64 = 4;

/** Chunk types (docs/format.md, "Chunk types"). */
export const ChunkType = {
  HEADER: 1,
  CLOCK: 2,
  KIND_SIZES: 3,
  API_NAMES: 4,
  ACTIVITY: 5,
  STRINGS: 6,
  DEVICES: 7,
  DROPPED: 8,
  THREAD_NAMES: 9,
  END: 10,
  LOG: 11,
  /** ROCm agent table (docs/format.md §12). */
  AGENTS: 12,
  /** ROCm kernel symbols: kernel_id → name, registers, LDS, scratch (docs/format.md §13). */
  KERNEL_SYMBOLS: 13,
  /** Habana: one synProfilerGetTrace buffer verbatim with its header (docs/decoders/hpu.md). */
  HPU_TRACE: 14,
  /** Habana: one acquired device: id, synDeviceType, HBM bytes, name. */
  HPU_DEVICE: 15,
} as const;
export type ChunkType = (typeof ChunkType)[keyof typeof ChunkType];

/** Vendor codes of the HEADER chunk. */
export const Vendor = {
  CUDA: 1,
  ROCM_SDK: 2,
  ROCM_ROCTRACER: 3,
  INTEL_PTI: 4,
  HABANA: 5,
} as const;
export type Vendor = (typeof Vendor)[keyof typeof Vendor];

/** Which moment a CLOCK anchor was taken. */
export const ClockWhich = { START: 0, END: 1, PERIODIC: 2 } as const;

/** Reasons in a DROPPED chunk. */
export const DropReason = { VENDOR: 1, MEMORY_CAP: 2, WRITE_ERROR: 3, EXIT_TIME: 4 } as const;

/**
 * rocprofiler-sdk (vendor ROCM_SDK) API_NAMES domains: KINDS holds the buffer-tracing kind names (id = kind value);
 * `OPS | kind` holds the operation names of that kind (id = operation).
 */
export const RocpDomain = { KINDS: 0, OPS: 0x10000 } as const;

/** CUPTI API domains used as the `domain` of API_NAMES entries. */
export const CuptiDomain = { DRIVER: 1, RUNTIME: 2 } as const;
