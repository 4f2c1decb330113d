/*
 * rawtrace collectors: reading this process's memory at an address a vendor record names (a kernel name, a marker
 * message) without trusting the address: an unmapped or freed page makes the read come up short instead of
 * raising SIGSEGV in the profiled program.
 */
#ifndef RAWTRACE_SAFE_READ_H
#define RAWTRACE_SAFE_READ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Copies up to `n` bytes at address `src` of this process into `dst`, page piece by page piece, and stops at the
 * first piece that cannot be read; returns the bytes copied (a prefix of the `n`). Reads go through
 * process_vm_readv; where the kernel or a sandbox refuses it (ENOSYS: gVisor; EPERM: a seccomp profile) through
 * write(2) into a pipe of the calling thread's own, which fails with EFAULT on an unmapped address. Never
 * dereferences `src` itself. Any thread may call it.
 */
size_t rt_safe_read(void* dst, uint64_t src, size_t n);

/**
 * Copies the NUL-terminated string at address `src` into `dst` (room for `cap` bytes), without trusting `src`
 * ({@link rt_safe_read}); returns its length without the NUL (the string is cut at `cap`: `cap` is returned and
 * `dst` holds no NUL), or -1 when not even its first byte can be read.
 */
long rt_safe_cstr(char* dst, uint64_t src, size_t cap);

/** Test hook: 1 makes every later read take the pipe path, as where process_vm_readv is refused; 0 restores. */
void rt_safe_read_force_pipe(int on);

#ifdef __cplusplus
}
#endif

#endif
