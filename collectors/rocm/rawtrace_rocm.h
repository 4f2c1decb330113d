/**
 * rawtrace ROCm collector: public C API of librawtrace_rocm.so.
 *
 * The collector is a rocprofiler-sdk tool library: list it in ROCP_TOOL_LIBRARIES and the SDK calls its
 * rocprofiler_configure when the program's ROCm runtime starts; it then records the SDK's buffer-tracing records into
 * a `.rawtrace` file (docs/format.md, docs/collectors/rocm.md) with no change to the program. This header is only
 * for programs (or framework plugins) that want to flush, pause, or attach framework op ids; reach the functions
 * with dlopen(path, RTLD_NOLOAD) + dlsym, or by linking.
 *
 * Every function is safe to call from any thread and returns quickly; none may be called from a signal handler.
 * Names carry "rocm" so that the CUDA collector's API (rawtrace.h) can live in the same process.
 */
#ifndef RAWTRACE_ROCM_H
#define RAWTRACE_ROCM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RAWTRACE_ROCM_API __attribute__((visibility("default")))
#else
#define RAWTRACE_ROCM_API
#endif

/** Resumes collection after rawtrace_rocm_stop (rocprofiler_start_context). Returns 0, or -1 when not running. */
RAWTRACE_ROCM_API int rawtrace_rocm_start(void);

/** Pauses collection (rocprofiler_stop_context) and flushes the SDK buffer. Returns 0, or -1 when not running. */
RAWTRACE_ROCM_API int rawtrace_rocm_stop(void);

/**
 * Flushes the SDK buffer (rocprofiler_flush_buffer) and waits (at most 10 s) until the writer thread has written
 * everything handed over so far. Returns 0, or -1 (not initialized, finished, write error, or timeout).
 */
RAWTRACE_ROCM_API int rawtrace_rocm_flush(void);

/**
 * Pushes a framework op id on the calling thread (rocprofiler_push_external_correlation_id on the collector's
 * context): HIP calls made until the matching pop, and the GPU work they cause, carry it as
 * `correlation_id.external`, which the converter shows as "External id". Returns 0, or -1.
 */
RAWTRACE_ROCM_API int rawtrace_rocm_push_external_id(uint64_t id);

/** Pops the id pushed last on this thread. Returns 0, or -1. */
RAWTRACE_ROCM_API int rawtrace_rocm_pop_external_id(void);

/** Counters of the collector (totals since start). */
typedef struct rawtrace_rocm_stats {
  uint64_t callbacks;          /**< buffer callbacks from the SDK */
  uint64_t records;            /**< records copied into ACTIVITY chunks */
  uint64_t records_dropped;    /**< records the SDK reported lost (drop_count) */
  uint64_t records_capped;     /**< records not kept: the memory cap was reached */
  uint64_t records_skipped;    /**< headers not copied: not tracing records, or an implausible size */
  uint64_t activity_bytes;     /**< ACTIVITY payload bytes written */
  uint64_t kernel_symbols;     /**< kernel symbols recorded */
  uint64_t marker_messages;    /**< ROCTx messages recorded */
  uint64_t callback_ns;        /**< time spent in the buffer callback, all calls (CLOCK_MONOTONIC) */
  uint64_t chunks_written;     /**< chunks in the file so far */
  int32_t state;               /**< 0 idle, 1 running, 2 stopped, 3 disabled, 4 finished */
  int32_t error;               /**< 0, -errno of a write error, or the SDK status that disabled collection */
} rawtrace_rocm_stats;

/** Copies the counters into `*out` (at most `size` bytes). Returns 0, or -1 for a NULL `out`. */
RAWTRACE_ROCM_API int rawtrace_rocm_get_stats(rawtrace_rocm_stats* out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_ROCM_H */
