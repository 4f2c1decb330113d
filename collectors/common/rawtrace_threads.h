/**
 * Thread names for the THREAD_NAMES chunk (docs/format.md §9), shared by the collectors: a set of the thread ids seen
 * in activity records, and the names of the new ones, read from /proc/self/task/<tid>/comm when first seen.
 *
 * Threads: one thread at a time (the collector's writer thread).
 */
#ifndef RAWTRACE_THREADS_H
#define RAWTRACE_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "rawtrace_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One named thread waiting to be written. */
typedef struct rt_thread_entry {
  uint32_t pid, tid;
  char name[32];
} rt_thread_entry;

/** Threads seen so far and the names not written yet. Zero-initialize, then rt_threads_init. */
typedef struct rt_threads {
  uint32_t pid;   /**< the profiled process: only its threads are named */
  uint32_t* seen; /**< open-addressing set of thread ids (0 = empty) */
  size_t cap, count;
  rt_thread_entry* pend;
  size_t pend_n, pend_cap;
} rt_threads;

/** Starts an empty set for process `pid`. */
void rt_threads_init(rt_threads* t, uint32_t pid);

/**
 * Notes thread `tid` of process `pid` seen in a record. The first time a thread of the profiled process is seen its
 * name is read (a thread already gone is skipped) and queued for rt_threads_write.
 */
void rt_threads_note(rt_threads* t, uint32_t pid, uint32_t tid);

/**
 * Writes the queued names as THREAD_NAMES chunks of at most 64 entries, passing each writer result through `check`
 * (the collector's bookkeeping; it returns the result). Clears the queue. Returns 0 or the first failure.
 */
int rt_threads_write(rt_threads* t, rt_writer* w, int (*check)(int rc));

/** Frees the set and the queue. */
void rt_threads_free(rt_threads* t);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_THREADS_H */
