/*
 * rawtrace collectors: reads of this process's memory that cannot fault; see rawtrace_safe_read.h.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_safe_read.h"
#include "rawtrace_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096u
/* A pipe's capacity is at least a page (pipe(7)); pieces stay well under it, so a write is never partial by room. */
#define PIECE 256u

/* process_vm_readv answered ENOSYS or EPERM once (or a test asked): the pipe from then on, for every thread. */
static atomic_int g_vm_refused;
/* The pipe of the calling thread (the bytes of one thread's pieces never mix with another's). */
static __thread int t_pipe[2] = {-1, -1};

void rt_safe_read_force_pipe(int on) {
  atomic_store(&g_vm_refused, on ? 1 : 0);
}

/* One piece that does not cross a page boundary: all of it (0) or nothing (-1). */
static int read_piece(void* dst, uint64_t src, size_t n) {
  if (!atomic_load(&g_vm_refused)) {
    struct iovec local = {dst, n};
    struct iovec remote = {(void*)(uintptr_t)src, n};
    ssize_t k = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (k == (ssize_t)n) return 0;
    if (k >= 0 || errno == EFAULT || (errno != ENOSYS && errno != EPERM)) return -1;
    atomic_store(&g_vm_refused, 1);
  }
  /* write(2) from an unmapped address fails with EFAULT instead of raising SIGSEGV. The system call itself, not
   * libc's write: a program built with AddressSanitizer intercepts write() and aborts on the bytes of a piece past a
   * string's end (same page, so readable, but not the string's), where the kernel only copies them. */
  if (t_pipe[0] < 0) {
    if (pipe2(t_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    /* Kept for the thread's life: out of the program's way (standard streams closed at start, numbers reused). */
    t_pipe[0] = rt_fd_aside(t_pipe[0]);
    t_pipe[1] = rt_fd_aside(t_pipe[1]);
    if (t_pipe[0] < 0 || t_pipe[1] < 0) {
      if (t_pipe[0] >= 0) close(t_pipe[0]);
      if (t_pipe[1] >= 0) close(t_pipe[1]);
      t_pipe[0] = t_pipe[1] = -1;
      return -1;
    }
  }
  ssize_t w = syscall(SYS_write, t_pipe[1], (const void*)(uintptr_t)src, n);
  if (w != (ssize_t)n) {
    if (w > 0) {
      char sink[PIECE];
      ssize_t ignored = read(t_pipe[0], sink, (size_t)w); /* leave the pipe empty for the next piece */
      (void)ignored;
    }
    return -1;
  }
  return read(t_pipe[0], dst, n) == (ssize_t)n ? 0 : -1;
}

size_t rt_safe_read(void* dst, uint64_t src, size_t n) {
  size_t done = 0;
  while (done < n) {
    uint64_t at = src + done;
    size_t k = PAGE - (size_t)(at % PAGE);
    if (k > PIECE) k = PIECE;
    if (k > n - done) k = n - done;
    if (read_piece((uint8_t*)dst + done, at, k) != 0) break;
    done += k;
  }
  return done;
}

long rt_safe_cstr(char* dst, uint64_t src, size_t cap) {
  size_t len = 0;
  while (len < cap) {
    size_t want = cap - len < PIECE ? cap - len : PIECE;
    size_t got = rt_safe_read(dst + len, src + len, want);
    const char* nul = (const char*)memchr(dst + len, 0, got);
    if (nul) return (long)(len + (size_t)(nul - (dst + len)));
    len += got;
    if (got < want) return len > 0 ? (long)len : -1; /* the string runs into memory that cannot be read */
  }
  return (long)len;
}
