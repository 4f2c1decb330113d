/**
 * C writer of the `.rawtrace` container (docs/format.md), used by the native collectors.
 *
 * For the same calls it writes the same bytes as the TypeScript writer in src/format/writer.ts;
 * test/format/c_writer.test.ts proves it. C11, libc and POSIX only.
 *
 * Threads: an `rt_writer` (and an `rt_buf`) is used by one thread at a time. The writer takes no locks; a collector
 * that writes from several threads serializes the calls itself. Only `rt_crc32`, `rt_xxh32`, `rt_xxh64` and
 * `rt_clock_anchor` may be called from any thread at any time.
 *
 * Errors: functions that write return 0 or a negative errno value. A failed write (full disk, closed pipe, I/O error)
 * is remembered: every later chunk is refused with the same value, so a collector stops writing cleanly and the file
 * stays a valid prefix up to the last complete chunk. Caller mistakes (payload too large, out of memory while building
 * a payload) are reported without poisoning the writer. A pipe whose reader is gone and a file size limit are the
 * errors -EPIPE and -EFBIG, never a SIGPIPE or SIGXFSZ that would end the program: those two are blocked in the
 * writing thread for the duration of each write (one the write raised is taken back); signal dispositions are not
 * touched.
 *
 * Units: times are nanoseconds, sizes are bytes, unless a comment says otherwise.
 */
#ifndef RAWTRACE_WRITER_H
#define RAWTRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "rawtrace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------------------------ */
/* Payload builder                                                                                                    */
/* ------------------------------------------------------------------------------------------------------------------ */

/**
 * Growable little-endian byte builder for chunk payloads. The builder owns `data` (malloc'ed); `len` bytes of it are
 * valid. When an allocation fails the builder sets `oom`, ignores every later append and keeps what it had, so a
 * caller checks `oom` once after building instead of after each append.
 */
typedef struct rt_buf {
  uint8_t* data; /**< owned by the builder; NULL until the first append */
  size_t len;    /**< bytes written so far */
  size_t cap;    /**< bytes allocated */
  int oom;       /**< non-zero after an allocation failed (sticky until rt_buf_reset) */
} rt_buf;

/** Initializes an empty builder; allocates nothing. */
void rt_buf_init(rt_buf* b);
/** Frees the builder's memory and leaves it empty (as after rt_buf_init). */
void rt_buf_free(rt_buf* b);
/** Forgets the bytes written and clears `oom`; keeps the allocation for reuse. */
void rt_buf_reset(rt_buf* b);
/** Makes room for `n` more bytes. Returns 0, or -1 and sets `oom` when memory runs out. */
int rt_buf_reserve(rt_buf* b, size_t n);
/** Appends a u16, little-endian. */
void rt_buf_u16(rt_buf* b, uint16_t v);
/** Appends a u32, little-endian. */
void rt_buf_u32(rt_buf* b, uint32_t v);
/** Appends an i32, little-endian two's complement. */
void rt_buf_i32(rt_buf* b, int32_t v);
/** Appends a u64, little-endian. */
void rt_buf_u64(rt_buf* b, uint64_t v);
/** Appends `n` bytes copied from `p` (`p` may be NULL when `n` is 0). */
void rt_buf_bytes(rt_buf* b, const void* p, size_t n);
/** Appends a format string: `u32 len` then `len` bytes copied from `p` (any bytes, NUL included; NULL when len 0). */
void rt_buf_str(rt_buf* b, const void* p, uint32_t len);
/** Appends a NUL-terminated C string as a format string (without the NUL); NULL is written as the empty string. */
void rt_buf_cstr(rt_buf* b, const char* s);

/* ------------------------------------------------------------------------------------------------------------------ */
/* Checksums (rawtrace_checksum.c) and clocks                                                                         */
/* ------------------------------------------------------------------------------------------------------------------ */

/**
 * CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), the value zlib's crc32() and node:zlib crc32 compute.
 * Start with `crc` = 0 and pass the previous result to continue over more bytes. `p` is only read.
 */
uint32_t rt_crc32(uint32_t crc, const void* p, size_t n);

/**
 * XXH32 of the `n` bytes at `p` with `seed` (xxHash's 32-bit digest, from its specification, doc/xxhash_spec.md):
 * with seed 0 the payload checksum of chunks with flag bit 1 (RT_CHUNK_FLAG_XXH32). `p` is only read; it may be NULL
 * when `n` is 0. One shot (no continuation).
 */
uint32_t rt_xxh32(const void* p, size_t n, uint32_t seed);

/**
 * XXH64 of the `n` bytes at `p` with seed 0 (xxHash's 64-bit digest, from its specification, doc/xxhash_spec.md):
 * its low 32 bits are the payload checksum of chunks with flag bit 2 (RT_CHUNK_FLAG_XXH64), the writer's default.
 * `p` is only read; it may be NULL when `n` is 0. One shot (no continuation).
 */
uint64_t rt_xxh64(const void* p, size_t n);

/** One CLOCK anchor (docs/format.md §2): every value in nanoseconds of its clock. */
typedef struct rt_clock_anchor_t {
  uint32_t which;            /**< RT_CLOCK_START, RT_CLOCK_END or RT_CLOCK_PERIODIC */
  uint64_t vendor_ns;        /**< the vendor timestamp (e.g. cuptiGetTimestamp), read just before the others */
  uint64_t realtime_ns;      /**< CLOCK_REALTIME */
  uint64_t monotonic_ns;     /**< CLOCK_MONOTONIC */
  uint64_t monotonic_raw_ns; /**< CLOCK_MONOTONIC_RAW (0 where the system lacks it) */
  uint64_t boottime_ns;      /**< CLOCK_BOOTTIME (0 where the system lacks it) */
} rt_clock_anchor_t;

/**
 * Fills `*out` with `which`, `vendor_ns` (read by the caller right before this call) and the system clocks, read back
 * to back in the order REALTIME, MONOTONIC, MONOTONIC_RAW, BOOTTIME. Returns 0, or -errno when REALTIME or MONOTONIC
 * cannot be read. Safe from any thread.
 */
int rt_clock_anchor(uint32_t which, uint64_t vendor_ns, rt_clock_anchor_t* out);

/* ------------------------------------------------------------------------------------------------------------------ */
/* Chunk inputs                                                                                                       */
/* ------------------------------------------------------------------------------------------------------------------ */

/**
 * Fields of the HEADER chunk (docs/format.md §1). The writer only reads the pointed-to strings during the call.
 * rt_header_info_init sets the defaults the TypeScript writer uses for fields left out.
 */
typedef struct rt_header_info {
  uint32_t vendor;            /**< RT_VENDOR_* */
  uint32_t pointer_size;      /**< pointer size in the profiled process, bytes (default sizeof(void*)) */
  uint32_t vendor_version;    /**< e.g. cuptiGetVersion(): 130001 */
  uint32_t runtime_version;   /**< e.g. cudaRuntimeGetVersion(): 12080; 0 = unknown */
  uint32_t driver_version;    /**< e.g. cuDriverGetVersion(); 0 = unknown */
  uint32_t pid;
  int32_t rank;               /**< RANK; -1 = unknown (default) */
  int32_t local_rank;         /**< LOCAL_RANK; -1 = unknown (default) */
  int32_t world_size;         /**< WORLD_SIZE; -1 = unknown (default) */
  uint32_t collector_version; /**< major << 16 | minor << 8 | patch (default 0x000100) */
  uint64_t start_ns;          /**< collector start, CLOCK_REALTIME ns */
  const char* hostname;       /**< NUL-terminated; NULL = empty */
  const char* cmdline;        /**< /proc/self/cmdline bytes: arguments separated by NUL; `cmdline_len` bytes */
  uint32_t cmdline_len;       /**< bytes of `cmdline` (NUL separators included) */
  const char* vendor_version_text; /**< NUL-terminated; NULL = empty */
} rt_header_info;

/** Sets every field of `h` to its default: zeros, NULL strings, pointer size sizeof(void*), ranks -1, version 0.1.0. */
void rt_header_info_init(rt_header_info* h);

/** One KIND_SIZES pair: vendor record kind and its record size in bytes. */
typedef struct rt_kind_size {
  uint32_t kind;
  uint32_t size;
} rt_kind_size;

/** One API_NAMES entry: (domain, id) → name (NUL-terminated; NULL = empty). */
typedef struct rt_api_name {
  uint32_t domain; /**< RT_CUPTI_DOMAIN_* for CUPTI */
  uint32_t id;     /**< callback id */
  const char* name;
} rt_api_name;

/** One STRINGS entry: pointer value as it appears in ACTIVITY records → `len` bytes at `bytes` (any bytes). */
typedef struct rt_string {
  uint64_t ptr;
  const char* bytes; /**< may be NULL when len is 0 */
  uint32_t len;
} rt_string;

/** One DEVICES entry (docs/format.md §7). Memory in bytes, bandwidth in bytes/s, clock in kHz. */
typedef struct rt_device_info {
  uint32_t id; /**< the vendor's device ordinal, as in activity records */
  uint32_t multiprocessors;
  uint64_t global_memory_bytes;
  uint64_t memory_bandwidth; /**< bytes/s */
  uint32_t core_clock_khz;
  uint32_t cc_major;
  uint32_t cc_minor;
  uint32_t max_threads_per_block;
  uint32_t max_threads_per_multiprocessor;
  uint32_t regs_per_block;
  uint32_t regs_per_multiprocessor;
  uint32_t warp_size;
  uint32_t shared_mem_per_block;
  uint32_t shared_mem_per_multiprocessor;
  uint32_t shared_mem_per_block_optin;
  uint32_t max_blocks_per_multiprocessor;
  uint8_t uuid[16];
  const char* name; /**< NUL-terminated; NULL = empty */
} rt_device_info;

/** One THREAD_NAMES entry: (pid, tid) → name (NUL-terminated; NULL = empty). */
typedef struct rt_thread_name {
  uint32_t pid;
  uint32_t tid;
  const char* name;
} rt_thread_name;

/* ------------------------------------------------------------------------------------------------------------------ */
/* Writer                                                                                                             */
/* ------------------------------------------------------------------------------------------------------------------ */

/** An open `.rawtrace` output. Opaque; one thread at a time. */
typedef struct rt_writer rt_writer;

/**
 * Creates (or truncates) the file at `path` (O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, mode 0644 before umask) and writes
 * the 16-byte preamble. Returns the writer, owned by the caller until rt_writer_close, or NULL with errno set.
 */
rt_writer* rt_writer_open(const char* path);

/**
 * Creates a new dump exclusively (O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0644 before umask): never
 * truncates or follows a link to an existing file. When `path` exists, tries `<stem>.1.rawtrace`, `<stem>.2.rawtrace`…
 * (`<path>.N` when the name does not end in .rawtrace) up to 9999. An existing FIFO or character device at `path`
 * (/dev/null, a named pipe) is opened for writing instead, never replaced; a FIFO that no process opens for reading
 * within 2 s fails with ENXIO instead of blocking the caller. The name created is copied to `chosen` (capacity
 * `chosen_cap` bytes, NUL included); compare it with `path` to tell the user. Returns the writer, or NULL with errno
 * set (EEXIST when every name is taken, ENAMETOOLONG when `chosen` is too small, ENXIO for a FIFO without reader).
 */
rt_writer* rt_writer_create(const char* path, char* chosen, size_t chosen_cap);

/** strerror for rt_writer_create's errno, with ENXIO said as what it means there (a FIFO without reader). */
const char* rt_writer_strerror(int e);

/**
 * Writes all `n` bytes at `p` to `fd` with SIGPIPE and SIGXFSZ blocked in this thread (as the writer's own writes):
 * a reader gone or a file size limit is an error returned (-EPIPE, -EFBIG), never a signal that ends the program.
 * For the collectors' log lines on stderr, written on the program's threads. Returns 0 or -errno.
 */
int rt_write_quiet(int fd, const void* p, size_t n);

/**
 * Writes the preamble to `fd` (at its current offset) and returns a writer that owns `fd` from then on:
 * rt_writer_close closes it. On failure returns NULL with errno set, and `fd` stays the caller's.
 */
rt_writer* rt_writer_fdopen(int fd);

/**
 * Writes one chunk: 24-byte header, `len` payload bytes from `payload` (read during the call only, never kept), zero
 * padding to 8 bytes, with one writev (retried on EINTR and short writes). The payload checksum is filled: the low
 * 32 bits of XXH64 (flag bit 2) unless rt_writer_set_checksum chose XXH32 or CRC-32.
 * Returns 0; -EMSGSIZE when `len` exceeds RT_MAX_CHUNK_PAYLOAD; -EINVAL for a NULL writer or a NULL payload with
 * len > 0; or the -errno of the failed write, which the writer then keeps returning for every later chunk. -EBADF
 * also when the descriptor no longer names the file the writer opened (fstat's device and inode before each chunk):
 * the program closed it and its number now names one of the program's files, which is never written.
 */
int rt_writer_chunk(rt_writer* w, uint16_t type, const void* payload, uint32_t len);

/**
 * As rt_writer_chunk; `with_sum` = 0 leaves the payload checksum field and its flag bits clear (the header CRC is
 * still written).
 */
int rt_writer_chunk_opt(rt_writer* w, uint16_t type, const void* payload, uint32_t len, int with_sum);

/**
 * Chooses the payload checksum of the chunks written from now on: RT_CHUNK_FLAG_XXH64 (what a new writer uses),
 * RT_CHUNK_FLAG_XXH32 (which format 1.1 readers verify; they read XXH64 payloads unverified) or RT_CHUNK_FLAG_CRC
 * (CRC-32, which format 1.0 readers verify too). Returns 0, or -EINVAL for a NULL writer or another value (the
 * writer's choice is then unchanged).
 */
int rt_writer_set_checksum(rt_writer* w, unsigned flag);

/** HEADER chunk (§1) from `h` (read during the call only). Returns as rt_writer_chunk, or -ENOMEM. */
int rt_writer_header(rt_writer* w, const rt_header_info* h);

/** CLOCK chunk (§2) from `a` (e.g. filled by rt_clock_anchor). Returns as rt_writer_chunk. */
int rt_writer_clock(rt_writer* w, const rt_clock_anchor_t* a);

/** KIND_SIZES chunk (§3): `n` (kind, record size in bytes) pairs. Returns as rt_writer_chunk, or -ENOMEM. */
int rt_writer_kind_sizes(rt_writer* w, const rt_kind_size* pairs, uint32_t n);

/** API_NAMES chunk (§4): `n` (domain, id, name) entries. Returns as rt_writer_chunk, or -ENOMEM. */
int rt_writer_api_names(rt_writer* w, const rt_api_name* names, uint32_t n);

/**
 * ACTIVITY chunk (§5): `len` bytes of one vendor buffer exactly as delivered (CUPTI: `buffer[0, validSize)`). The
 * bytes are written straight from `buffer`, not copied; the caller keeps ownership and may reuse it on return.
 * Returns as rt_writer_chunk; on success adds `len` to the END total of activity bytes.
 */
int rt_writer_activity(rt_writer* w, const void* buffer, uint32_t len);

/** STRINGS chunk (§6): `n` (pointer value, bytes) entries. Returns as rt_writer_chunk, or -ENOMEM. */
int rt_writer_strings(rt_writer* w, const rt_string* strings, uint32_t n);

/** DEVICES chunk (§7): `n` device entries. Returns as rt_writer_chunk, or -ENOMEM. */
int rt_writer_devices(rt_writer* w, const rt_device_info* devices, uint32_t n);

/** One entry of the DEVICES chunk's handle table (docs/format.md §7, Intel XPU): a Level Zero device or sub-device
 * handle with its UUID, the DEVICES id of its root device and its sub-device (tile) index. */
typedef struct rt_device_handle {
  uint64_t handle;
  uint8_t uuid[16];
  uint32_t device; /**< DEVICES id of the root device */
  uint32_t tile;   /**< sub-device index (zeDeviceGetSubDevices order); RT_TILE_NONE for the root device itself */
} rt_device_handle;
#define RT_TILE_NONE 0xffffffffu

/** DEVICES chunk followed by its handle table (`u32 count`, count x 32-byte entries); nh = 0 writes none. */
int rt_writer_devices_handles(rt_writer* w, const rt_device_info* devices, uint32_t n, const rt_device_handle* handles,
                              uint32_t nh);

/**
 * DROPPED chunk (§8): `count` records (or buffers, per `reason`, RT_DROP_*) lost since the previous DROPPED chunk.
 * `count` is added to the END total of dropped before writing (as the TypeScript writer does). Returns as
 * rt_writer_chunk.
 */
int rt_writer_dropped(rt_writer* w, uint64_t count, uint32_t reason);

/** THREAD_NAMES chunk (§9): `n` (pid, tid, name) entries. Returns as rt_writer_chunk, or -ENOMEM. */
int rt_writer_thread_names(rt_writer* w, const rt_thread_name* names, uint32_t n);

/** LOG chunk (§11): `level` (RT_LOG_*), NUL-terminated `message` (NULL = empty). Returns as rt_writer_chunk. */
int rt_writer_log(rt_writer* w, uint32_t level, const char* message);

/** LOG chunk (§11) with a message of `len` bytes (any bytes). Returns as rt_writer_chunk, or -ENOMEM. */
int rt_writer_log_n(rt_writer* w, uint32_t level, const char* message, uint32_t len);

/**
 * END chunk (§10): chunks written before it, ACTIVITY payload bytes and dropped total, counted over the chunks this
 * writer wrote successfully. Does not close the writer. Returns as rt_writer_chunk.
 */
int rt_writer_end(rt_writer* w);

/** Chunks written successfully so far (the sequence number the next chunk gets). */
uint32_t rt_writer_seq(const rt_writer* w);

/** 0, or the -errno of the write error that stopped the writer. */
int rt_writer_error(const rt_writer* w);

/**
 * For a pthread_atfork child handler: closes the writer's descriptor in the forked child without writing or freeing
 * anything (async-signal-safe). The dump is the parent's; a child that kept it open (a DataLoader worker, a
 * multiprocessing fork that never execs) would keep a FIFO's reader from seeing its end, and the file's lock held,
 * until it exits. Every later write through `w` fails with EBADF. NULL is accepted.
 */
void rt_writer_forget_fd(rt_writer* w);

/**
 * Closes the file descriptor and frees the writer (does not write END: call rt_writer_end first for a complete file).
 * Returns 0, the -errno of close(2), or the writer's earlier write error. NULL is accepted and returns 0.
 */
int rt_writer_close(rt_writer* w);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_WRITER_H */
