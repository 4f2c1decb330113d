/*
 * Exercises collectors/common/rawtrace_safe_read.c on both of its paths (process_vm_readv and the pipe fallback a
 * seccomp profile or gVisor forces), built as is and with AddressSanitizer (test/collectors/safe_read.test.ts).
 * Prints one "ok <case>" line per passed case and exits 1 at the first failure, naming it.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rawtrace_safe_read.h"

static int failed;

static void check(int ok, const char* path, const char* what) {
  if (ok) {
    printf("ok %s %s\n", path, what);
  } else {
    printf("FAIL %s %s\n", path, what);
    failed = 1;
  }
}

static void* reader(void* arg) {
  /* Threads share the fallback flag but each reads through its own pipe: the bytes of two threads never mix. */
  const char* s = (const char*)arg;
  char dst[64];
  for (int i = 0; i < 2000; i++) {
    long n = rt_safe_cstr(dst, (uint64_t)(uintptr_t)s, sizeof dst);
    if (n != (long)strlen(s) || memcmp(dst, s, (size_t)n) != 0) return (void*)1;
  }
  return NULL;
}

static void run(const char* path) {
  long page = sysconf(_SC_PAGESIZE);
  char dst[600];

  /* A short string on the heap: every piece read past its NUL lies outside the allocation (AddressSanitizer's
   * redzone). Only the kernel may copy those bytes; an intercepted libc call would abort the program here. */
  char* heap = malloc(6);
  memcpy(heap, "sgemm", 6);
  long n = rt_safe_cstr(dst, (uint64_t)(uintptr_t)heap, sizeof dst);
  check(n == 5 && memcmp(dst, "sgemm", 6) == 0, path, "short heap string");
  free(heap);

  /* A string that ends right before an unmapped page: read up to the NUL, the page behind never touched. */
  char* two = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(two + page, (size_t)page);
  char* end = two + page - 8;
  memcpy(end, "kernel7", 8);
  n = rt_safe_cstr(dst, (uint64_t)(uintptr_t)end, sizeof dst);
  check(n == 7 && strcmp(dst, "kernel7") == 0, path, "string ending at an unmapped page");

  /* The same string without its NUL: cut where the memory ends, not a fault. */
  memcpy(end, "abcdefgh", 8);
  n = rt_safe_cstr(dst, (uint64_t)(uintptr_t)end, sizeof dst);
  check(n == 8 && memcmp(dst, "abcdefgh", 8) == 0, path, "string running into an unmapped page");

  /* An address that is not mapped at all: -1, and a plain read of it copies nothing. */
  n = rt_safe_cstr(dst, (uint64_t)(uintptr_t)(two + page), sizeof dst);
  check(n == -1, path, "unmapped address");
  check(rt_safe_read(dst, (uint64_t)(uintptr_t)(two + page), 100) == 0, path, "unmapped read");
  check(rt_safe_read(dst, 0, 16) == 0, path, "null address");

  /* A read across a page boundary within mapped memory, longer than one piece: all of it. */
  char* big = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (long i = 0; i < page * 2; i++) big[i] = (char)(i * 7 + 3);
  size_t got = rt_safe_read(dst, (uint64_t)(uintptr_t)(big + page - 300), 600);
  check(got == 600 && memcmp(dst, big + page - 300, 600) == 0, path, "read across a page boundary");

  /* A string longer than the room: cut at the room. */
  memset(big, 'x', 1000);
  big[1000] = 0;
  n = rt_safe_cstr(dst, (uint64_t)(uintptr_t)big, 300);
  check(n == 300, path, "string longer than the room");

  /* After a failed read the pipe holds nothing stale: the next string reads back exactly. */
  rt_safe_read(dst, (uint64_t)(uintptr_t)(two + page - 100), 300);
  memcpy(two, "after", 6);
  n = rt_safe_cstr(dst, (uint64_t)(uintptr_t)two, sizeof dst);
  check(n == 5 && strcmp(dst, "after") == 0, path, "read after a short read");

  pthread_t t[4];
  static const char* names[4] = {"first_kernel", "second one", "3", "a fourth, longer kernel name"};
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, reader, (void*)names[i]);
  int bad = 0;
  for (int i = 0; i < 4; i++) {
    void* r;
    pthread_join(t[i], &r);
    bad |= r != NULL;
  }
  check(!bad, path, "four threads at once");
  munmap(two, (size_t)page);
  munmap(big, (size_t)page * 2);
}

int main(void) {
  run("vm");
  rt_safe_read_force_pipe(1);
  run("pipe");
  return failed;
}
