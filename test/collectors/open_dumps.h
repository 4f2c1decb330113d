/*
 * For the collectors' test programs: how many descriptors of this process are open on a .rawtrace file (read from
 * /proc/self/fd), to check that a forked child lets go of its parent's dump.
 */
#ifndef RAWTRACE_TEST_OPEN_DUMPS_H
#define RAWTRACE_TEST_OPEN_DUMPS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline int open_dumps(void) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d))) {
    char link[300], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t k = readlink(link, target, sizeof target - 1);
    if (k <= 0) continue;
    target[k] = 0;
    if (k > 9 && !strcmp(target + k - 9, ".rawtrace")) n++;
  }
  closedir(d);
  return n;
}

#endif
