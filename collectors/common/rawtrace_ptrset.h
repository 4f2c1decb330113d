/**
 * A set of process addresses (u64, 0 never stored), shared by the collectors that copy the strings a vendor buffer
 * points to (XPU, Gaudi): each pointer's text is written once. Open addressing, grown by doubling at half full.
 *
 * Threads: one thread at a time (the collector's writer thread). Memory (heap): 8-byte slots, 256 at first, a quarter
 * to half of them used, so 16 to 32 bytes per pointer (2 KiB at least); while it grows, the old and the doubled table
 * are held at once.
 */
#ifndef RAWTRACE_PTRSET_H
#define RAWTRACE_PTRSET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The set. Zero-initialize. */
typedef struct rt_ptrset {
  uint64_t* slots; /**< `cap` slots (a power of two), 0 = empty */
  size_t cap, n;
} rt_ptrset;

/** Adds `ptr` (not 0): 1 when it is new, 0 when it was there, -1 when memory ran out (then not added). */
int rt_ptrset_add(rt_ptrset* s, uint64_t ptr);

/** Empties the set, keeping its memory. */
void rt_ptrset_clear(rt_ptrset* s);

/** Frees the set's memory (it is empty and zeroed after). */
void rt_ptrset_free(rt_ptrset* s);

#ifdef __cplusplus
}
#endif

#endif
