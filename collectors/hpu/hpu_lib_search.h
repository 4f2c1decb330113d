/**
 * Whether dlopen(name) would find a file, without loading it: the collector stays inactive (forwarding only) instead
 * of dlopen'ing a library the program never loads, and says why.
 */
#ifndef RAWTRACE_HPU_LIB_SEARCH_H
#define RAWTRACE_HPU_LIB_SEARCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * 1 when a readable file `name` (a bare soname such as "libSynapse.so") is in a folder of LD_LIBRARY_PATH, is named
 * in the loader's cache (/etc/ld.so.cache), or is in one of the `ndirs` folders `dirs` (the usual system ones); else 0.
 */
int rt_lib_on_search_path(const char* name, const char* const* dirs, size_t ndirs);

#ifdef __cplusplus
}
#endif

#endif
