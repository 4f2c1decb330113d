/**
 * The pointers of a synProfilerGetTrace buffer that point outside it, resolved inside the profiled process into
 * STRINGS entries (docs/format.md, "Habana HPU"): every `extraArgs.args` array that lies outside the buffer (its
 * `count` × 24 bytes verbatim), every `key` and CHAR_PTR `str` of every such array (inside or outside), and every other
 * `char*` field of an entry that lies outside (name, category; dataType, operation, recipeName of 'B'/'E'/'X' entries;
 * metadata name and group of 'M' entries). Pointers inside [base, base + size) are left for the decoder to relocate.
 *
 * Memory is read through process_vm_readv on the process itself (a pipe write when the kernel refuses that), so a
 * stale or wild pointer yields no entry instead of a crash.
 *
 * Threads: one caller at a time (the collector's thread).
 */
#ifndef RAWTRACE_HPU_STRINGS_H
#define RAWTRACE_HPU_STRINGS_H

#include <stddef.h>
#include <stdint.h>

#include "rawtrace_ptrset.h"
#include "rawtrace_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes read at most per string (longer ones are cut). */
#define RT_HPU_MAX_STRING (64u << 10)

/** The STRINGS entries of one buffer. Zero-initialize; reusable (rt_hpu_strings_collect resets it). */
typedef struct rt_hpu_strings {
  rt_string* v;     /**< `n` entries; their `bytes` point into `bytes` (valid until the next collect or free) */
  size_t n, cap;
  uint8_t* bytes;   /**< copies of the pointed-to bytes */
  size_t blen, bcap;
  rt_ptrset set;    /**< pointers already taken */
  uint64_t unreadable; /**< outside pointers whose memory could not be read */
  int oom;
} rt_hpu_strings;

/**
 * Walks the first `entries` 208-byte entries of `buf` (`size` bytes; its address in the process is `base`, normally
 * `buf` itself) and fills `s`. Entries past `size` − 16 bytes are not read. Returns 0, or -1 when memory ran out
 * (`s` then holds the entries found before).
 */
int rt_hpu_strings_collect(rt_hpu_strings* s, const uint8_t* buf, uint64_t base, size_t size, uint64_t entries);

/** Frees what `s` holds. */
void rt_hpu_strings_free(rt_hpu_strings* s);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_HPU_STRINGS_H */
