/**
 * The collectors' own heap use, safe during a termination signal's exit flush.
 *
 * A SIGTERM / SIGINT / SIGHUP whose default action would end the process runs the collector's handler on whichever
 * program thread it lands on, and that thread may be inside malloc or free, holding its arena's lock; the handler
 * then waits for the writer's exit flush. A writer that frees a block of that arena (a vendor buffer or a queue item
 * the program's thread allocated) or grows one (its scratch buffer, allocated by the constructor on the main thread)
 * would wait for that lock for ever: the handler's wait runs out and the process dies without its last buffers or
 * END (a Python main thread is in malloc much of the time).
 *
 * So the collectors allocate and free through these. Until a signal asks for the exit flush they are malloc, calloc,
 * realloc and free. From then on (rt_heap_freeze, called by the signal handler before it wakes the writer; the process
 * is ending) nothing is freed — it is left to the process's end — and new blocks come from memory mapped for the
 * purpose (mmap takes no user-space lock), carved 16-byte aligned out of 1 MiB mappings, larger ones mapped whole;
 * a block that grows is copied into a new one (the size of a heap block read with malloc_usable_size, which takes no
 * lock). Threads: any; rt_heap_freeze is async-signal-safe.
 *
 * Not frozen in a PID namespace's init (pid 1): there the default action re-raised after the flush does not end the
 * process (rt_queue_note_signal).
 *
 * What this does not cover: the vendor library's own allocations during the flush (its calls there are bounded:
 * rt_exit_call_owned), the vendor buffers (posix_memalign) a vendor asks for during the flush, on that bounded
 * call's thread; the thread that bounded call starts, whose creation allocates its TLS from the writer's own arena (a
 * thread of its own has one; only a program with more threads than glibc has arenas shares it); and a writer
 * already inside free or realloc, waiting for the arena's lock, when the signal lands on the thread holding it (the
 * check comes before the call; a window of the call's length, not seen in 40 stress runs).
 */
#ifndef RAWTRACE_HEAP_H
#define RAWTRACE_HEAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** From now on nothing is freed and blocks come from mapped memory (the process is ending). Async-signal-safe. */
void rt_heap_freeze(void);

/** Whether rt_heap_freeze was called. */
int rt_heap_frozen(void);

/** malloc, or a block of mapped memory once frozen. NULL when there is none. */
void* rt_malloc(size_t n);

/** calloc (zeroed), or a block of mapped memory once frozen (zeroed too). NULL when there is none or n × size overflows. */
void* rt_calloc(size_t n, size_t size);

/**
 * realloc, or once frozen a new block of mapped memory holding the first min(old size, n) bytes of `p` (p itself left
 * as it is). NULL when there is none (p then unchanged and still valid, as with realloc).
 */
void* rt_realloc(void* p, size_t n);

/** free, or nothing once frozen (the block, heap or mapped, is left to the process's end). NULL is ignored. */
void rt_free(void* p);

#ifdef __cplusplus
}
#endif

#endif
