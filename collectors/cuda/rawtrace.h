/**
 * rawtrace CUDA collector: public C API of librawtrace_cuda.so.
 *
 * The collector records the CUPTI activity buffers of a CUDA program into a `.rawtrace` file (docs/format.md)
 * without any change to the program: load it with CUDA_INJECTION64_PATH or LD_PRELOAD and configure it with
 * RAWTRACE_* environment variables (docs/collectors/cuda.md). This header is only needed by programs that want to
 * drive it explicitly (link with -lrawtrace_cuda, or dlopen the library and dlsym these names).
 *
 * Every function is safe to call from any thread, never raises a signal or aborts, and returns quickly when the
 * collector is disabled. None of them may be called from a signal handler.
 */
#ifndef RAWTRACE_CUDA_H
#define RAWTRACE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RAWTRACE_API __attribute__((visibility("default")))
#else
#define RAWTRACE_API
#endif

/**
 * Entry point the CUDA driver calls when CUDA_INJECTION64_PATH names this library (during cuInit). Starts the
 * collector as rawtrace_start() does (at most once per process, also when the library is preloaded as well).
 * Always returns 1, so the driver never fails because of the collector.
 */
RAWTRACE_API int InitializeInjection(void);

/** NVTX's injection entry (NVTX_INJECTION64_PATH = this library): forwards to the libcupti the collector uses. */
RAWTRACE_API int InitializeInjectionNvtx2(const void* get_export_table);

/**
 * Starts collecting: on the first call loads libcupti, creates the output file (RAWTRACE_OUTPUT) and writes its
 * header, then enables the configured activity kinds. A later call after rawtrace_stop() enables them again.
 * Returns 0 when collection is running on return, -1 when the collector is disabled (no libcupti, the output could
 * not be created, a CUPTI error, a write error, or after the process's exit flush).
 */
RAWTRACE_API int rawtrace_start(void);

/**
 * Stops collecting: disables the activity kinds and flushes CUPTI's buffers to the writer thread. The file stays
 * open; rawtrace_start() resumes. Returns 0, or -1 when the collector is not initialized or disabled.
 */
RAWTRACE_API int rawtrace_stop(void);

/**
 * Asks CUPTI for every buffer whose records are complete (cuptiActivityFlushAll(0)) and waits (at most 10 s) until
 * the writer thread has written everything handed over so far. Returns 0, or -1 (not initialized, disabled, or the
 * wait timed out).
 */
RAWTRACE_API int rawtrace_flush(void);

/**
 * Pushes an external correlation id (kind CUSTOM0, as PyTorch uses for its ops) on the calling thread: CUDA calls
 * made until the matching pop get an EXTERNAL_CORRELATION record, which the converter shows as "External id".
 * Returns 0, or -1 when the collector is not initialized or the CUPTI call failed.
 */
RAWTRACE_API int rawtrace_push_external_id(uint64_t id);

/** Pops the id pushed last by rawtrace_push_external_id on this thread. Returns 0 or -1. */
RAWTRACE_API int rawtrace_pop_external_id(void);

/** Collector states reported by rawtrace_get_stats. */
enum rawtrace_state {
  RAWTRACE_STATE_IDLE = 0,      /**< not initialized yet */
  RAWTRACE_STATE_RUNNING = 1,   /**< activity kinds enabled */
  RAWTRACE_STATE_STOPPED = 2,   /**< initialized, kinds disabled (rawtrace_stop, signal toggle, window) */
  RAWTRACE_STATE_DISABLED = 3,  /**< gave up after an error (see `error`); the file keeps what was written */
  RAWTRACE_STATE_FINISHED = 4   /**< the exit flush wrote END and closed the file */
};

/** Counters of the collector (all totals since start; times in nanoseconds of CLOCK_MONOTONIC). */
typedef struct rawtrace_stats {
  uint64_t buffers_requested;  /**< bufferRequested calls answered with a buffer */
  uint64_t buffers_refused;    /**< requests answered with no buffer (memory cap reached) */
  uint64_t buffers_completed;  /**< bufferCompleted calls with records */
  uint64_t buffers_written;    /**< ACTIVITY chunks written */
  uint64_t buffers_discarded;  /**< completed buffers not written (emergency reserve, write error, after exit) */
  uint64_t activity_bytes;     /**< ACTIVITY payload bytes written */
  uint64_t strings_written;    /**< STRINGS entries written */
  uint64_t records_dropped;    /**< records CUPTI reported lost (cuptiActivityGetNumDroppedRecords) */
  uint64_t callback_ns;        /**< time spent inside bufferCompleted, all calls */
  uint64_t writer_ns;          /**< writer-thread time spent on buffers: record walk, strings, chunk writes */
  uint64_t chunks_written;     /**< chunks in the file so far */
  int32_t state;               /**< enum rawtrace_state */
  int32_t error;               /**< 0, -errno of the write error, or the CUPTI result that disabled collection */
} rawtrace_stats;

/**
 * Copies the counters into `*out`; `size` is sizeof(rawtrace_stats) as the caller was compiled (fields past it are
 * not written, so older callers keep working). Returns 0, or -1 for a NULL `out`.
 */
RAWTRACE_API int rawtrace_get_stats(rawtrace_stats* out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_CUDA_H */
