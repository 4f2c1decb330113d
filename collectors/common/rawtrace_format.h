/**
 * Constants of the `.rawtrace` container, format 1.2, for the C collectors.
 *
 * Mirrors src/format/container.ts; the byte tables live in docs/format.md. All three must agree: a change here is a
 * change of the file format.
 */
#ifndef RAWTRACE_FORMAT_H
#define RAWTRACE_FORMAT_H

/** ASCII `RAWTRACE`, the first 8 bytes of every file (no terminator is written). */
#define RT_MAGIC "RAWTRACE"
/** Bytes of RT_MAGIC in the file. */
#define RT_MAGIC_SIZE 8u
/** Format major version written by this writer; readers refuse a larger one, but for the values one bit away from it
 * (3, 5, 9, …: a damaged preamble when a valid chunk header follows), which later majors will skip (docs/format.md). */
#define RT_FORMAT_MAJOR 1u
/** Format minor version written by this writer: 2 since payload checksums may be XXH64 (flag bit 2). */
#define RT_FORMAT_MINOR 2u
/** Bytes in the file preamble (magic, u16 major, u16 minor, u32 flags). */
#define RT_PREAMBLE_SIZE 16u
/** Bytes in a chunk header. */
#define RT_CHUNK_HEADER_SIZE 24u
/** Sync word at the start of every chunk header (bytes `R T C K` in file order). */
#define RT_CHUNK_SYNC 0x4B435452u
/** Largest payload a chunk may declare (256 MiB). */
#define RT_MAX_CHUNK_PAYLOAD 0x10000000u
/** Chunk payloads are followed by zero bytes up to this alignment (not counted in the length). */
#define RT_CHUNK_ALIGN 8u
/** Chunk flag bit 0: the payload checksum field holds the payload's CRC-32 (format 1.0's only checksum). */
#define RT_CHUNK_FLAG_CRC 1u
/** Chunk flag bit 1: the payload checksum field holds the payload's XXH32, seed 0 (format 1.1). */
#define RT_CHUNK_FLAG_XXH32 2u
/**
 * Chunk flag bit 2: the payload checksum field holds the low 32 bits of the payload's XXH64, seed 0 (format 1.2; the
 * default).
 */
#define RT_CHUNK_FLAG_XXH64 4u

/** Chunk types (docs/format.md, "Chunk types"). */
enum rt_chunk_type {
  RT_CHUNK_HEADER = 1,
  RT_CHUNK_CLOCK = 2,
  RT_CHUNK_KIND_SIZES = 3,
  RT_CHUNK_API_NAMES = 4,
  RT_CHUNK_ACTIVITY = 5,
  RT_CHUNK_STRINGS = 6,
  RT_CHUNK_DEVICES = 7,
  RT_CHUNK_DROPPED = 8,
  RT_CHUNK_THREAD_NAMES = 9,
  RT_CHUNK_END = 10,
  RT_CHUNK_LOG = 11,
  RT_CHUNK_AGENTS = 12,        /**< ROCm agent table (docs/format.md §12) */
  RT_CHUNK_KERNEL_SYMBOLS = 13, /**< ROCm kernel symbols: kernel_id → name, registers, LDS, scratch (§13) */
  RT_CHUNK_HPU_TRACE = 14,      /**< one synProfilerGetTrace buffer verbatim, with its base address (Habana HPU) */
  RT_CHUNK_HPU_DEVICE = 15      /**< one acquired Gaudi device: id, type, HBM bytes, name (Habana HPU) */
};

/** Vendor codes of the HEADER chunk. */
enum rt_vendor {
  RT_VENDOR_CUDA = 1,           /**< CUDA (CUPTI) */
  RT_VENDOR_ROCM_SDK = 2,       /**< ROCm (rocprofiler-sdk) */
  RT_VENDOR_ROCM_ROCTRACER = 3, /**< ROCm (roctracer) */
  RT_VENDOR_INTEL_PTI = 4,      /**< Intel XPU (PTI) */
  RT_VENDOR_HABANA = 5          /**< Habana HPU (Synapse) */
};

/** Which moment a CLOCK anchor was taken. */
enum rt_clock_which {
  RT_CLOCK_START = 0,
  RT_CLOCK_END = 1,
  RT_CLOCK_PERIODIC = 2
};

/** Reasons in a DROPPED chunk. */
enum rt_drop_reason {
  RT_DROP_VENDOR = 1,      /**< records the vendor library reported lost */
  RT_DROP_MEMORY_CAP = 2,  /**< buffers refused by the collector's memory cap */
  RT_DROP_WRITE_ERROR = 3, /**< buffers lost to a write error */
  RT_DROP_EXIT_TIME = 4    /**< buffers the exit flush left unwritten: the exit timeout would have ended it first */
};

/** Levels of a LOG chunk. */
enum rt_log_level {
  RT_LOG_INFO = 0,
  RT_LOG_WARNING = 1,
  RT_LOG_ERROR = 2
};

/** CUPTI API domains used as the `domain` of API_NAMES entries. */
enum rt_cupti_domain {
  RT_CUPTI_DOMAIN_DRIVER = 1,
  RT_CUPTI_DOMAIN_RUNTIME = 2
};

/** rocprofiler-sdk (vendor 2) API_NAMES domains: buffer-tracing kind names (id = kind), and the operation names of
 * buffer-tracing kind k in domain RT_ROCP_DOMAIN_OPS | k (id = operation). */
enum rt_rocp_domain {
  RT_ROCP_DOMAIN_KINDS = 0,
  RT_ROCP_DOMAIN_OPS = 0x10000
};

#endif /* RAWTRACE_FORMAT_H */
