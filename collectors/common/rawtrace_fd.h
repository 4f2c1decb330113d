/*
 * rawtrace collectors: the descriptors a collector keeps for the program's life (the dump, its wake-up pipes), moved
 * out of the program's way. Header-only: every collector and the small test programs that build one common file
 * alone include it. Include it after defining _GNU_SOURCE (F_DUPFD_CLOEXEC).
 */
#ifndef RAWTRACE_FD_H
#define RAWTRACE_FD_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/** The lowest descriptor number {@link rt_fd_aside} moves the collectors' own descriptors to. */
#define RT_FD_FLOOR 100

/**
 * Moves `fd`, a descriptor a collector keeps for the program's life (the dump, a pipe), out of the program's way: to
 * the lowest free number >= RT_FD_FLOOR (close-on-exec), else >= 3, and closes `fd`. A program started with standard
 * input, output or error closed would otherwise see the dump or a pipe take that number and write into it; a low
 * number is also the one a program's next open gets after it closed ours by mistake. Returns the new descriptor;
 * `fd` itself when it is already >= RT_FD_FLOOR or >= 3 with no higher number free; or -1 with errno set, `fd`
 * closed, when it is 0, 1 or 2 and cannot move. A negative `fd` is returned as is.
 */
static inline int rt_fd_aside(int fd) {
  if (fd < 0 || fd >= RT_FD_FLOOR) return fd;
  int to = fcntl(fd, F_DUPFD_CLOEXEC, RT_FD_FLOOR);
  /* A descriptor limit under the floor, or every number above it taken: anywhere past standard error. */
  if (to < 0 && fd < 3) to = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (to < 0) {
    if (fd >= 3) return fd; /* stays where it is: no worse than before */
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  close(fd);
  return to;
}

#endif /* RAWTRACE_FD_H */
