/*
 * Thread names for THREAD_NAMES; see rawtrace_threads.h.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_threads.h"
#include "rawtrace_heap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rt_threads_init(rt_threads* t, uint32_t pid) {
  rt_threads_free(t);
  t->pid = pid;
}

/* Adds `tid` to the set. Returns 1 when it was there already (or memory ran out: then it is never named). */
static int seen_before(rt_threads* t, uint32_t tid) {
  if ((t->count + 1) * 2 > t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 256;
    uint32_t* nt = (uint32_t*)rt_calloc(ncap, sizeof *nt);
    if (!nt) return 1;
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->seen[i]) continue;
      size_t j = (t->seen[i] * 2654435761u) & (ncap - 1);
      while (nt[j]) j = (j + 1) & (ncap - 1);
      nt[j] = t->seen[i];
    }
    rt_free(t->seen);
    t->seen = nt;
    t->cap = ncap;
  }
  size_t j = (tid * 2654435761u) & (t->cap - 1);
  while (t->seen[j]) {
    if (t->seen[j] == tid) return 1;
    j = (j + 1) & (t->cap - 1);
  }
  t->seen[j] = tid;
  t->count++;
  return 0;
}

void rt_threads_note(rt_threads* t, uint32_t pid, uint32_t tid) {
  if (!tid || pid != t->pid || seen_before(t, tid)) return;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return; /* the thread is gone */
  char name[32];
  ssize_t n = read(fd, name, sizeof name - 1);
  close(fd);
  if (n <= 0) return;
  while (n > 0 && (name[n - 1] == '\n' || name[n - 1] == 0)) n--;
  name[n] = 0;
  if (t->pend_n == t->pend_cap) {
    size_t ncap = t->pend_cap ? t->pend_cap * 2 : 16;
    rt_thread_entry* more = (rt_thread_entry*)rt_realloc(t->pend, ncap * sizeof *more);
    if (!more) return;
    t->pend = more;
    t->pend_cap = ncap;
  }
  rt_thread_entry* e = &t->pend[t->pend_n++];
  e->pid = pid;
  e->tid = tid;
  memcpy(e->name, name, (size_t)n + 1);
}

int rt_threads_write(rt_threads* t, rt_writer* w, int (*check)(int rc)) {
  int first = 0;
  rt_thread_name names[64];
  for (size_t i = 0; i < t->pend_n; i += 64) {
    uint32_t m = 0;
    for (size_t j = i; j < t->pend_n && m < 64; j++, m++) {
      names[m].pid = t->pend[j].pid;
      names[m].tid = t->pend[j].tid;
      names[m].name = t->pend[j].name;
    }
    int rc = check(rt_writer_thread_names(w, names, m));
    if (rc && !first) first = rc;
    if (rc && rt_writer_error(w)) break;
  }
  t->pend_n = 0;
  return first;
}

void rt_threads_free(rt_threads* t) {
  rt_free(t->seen);
  rt_free(t->pend);
  t->seen = NULL;
  t->pend = NULL;
  t->cap = t->count = t->pend_n = t->pend_cap = 0;
}
