/*
 * Cases of the collectors' heap use (collectors/common/rawtrace_heap.c) for test/collectors/heap.test.ts: one line
 * "ok <case>" per case passed, "FAIL <case>: <why>" and exit 1 otherwise.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rawtrace_heap.h"
#include "rawtrace_queue.h"

static int failed;

static void check(int ok, const char* name, const char* why) {
  if (ok) {
    printf("ok %s\n", name);
  } else {
    printf("FAIL %s: %s\n", name, why);
    failed = 1;
  }
}

static int aligned16(const void* p) { return ((uintptr_t)p & 15) == 0; }

static void fill(uint8_t* p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(seed + i * 7);
}
static int same(const uint8_t* p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (uint8_t)(seed + i * 7)) return 0;
  return 1;
}

#define THREADS 4
#define PER_THREAD 5000

static void* worker(void* arg) {
  uint8_t id = (uint8_t)(uintptr_t)arg;
  uint8_t** v = malloc(PER_THREAD * sizeof *v);
  if (!v) return (void*)1;
  for (int i = 0; i < PER_THREAD; i++) {
    v[i] = rt_malloc(40 + (size_t)(i % 200));
    if (!v[i] || !aligned16(v[i])) return (void*)1;
    memset(v[i], id, 40 + (size_t)(i % 200));
  }
  for (int i = 0; i < PER_THREAD; i++)
    for (size_t k = 0; k < 40 + (size_t)(i % 200); k++)
      if (v[i][k] != id) return (void*)1; /* another thread's block overlapped this one */
  free(v);
  return NULL;
}

/* A signal handler that allocates, as a collector's termination handler does (its exit flush) on whatever thread the
 * signal lands: were a signal taken while its thread held the frozen heap's lock, the handler would spin on that lock
 * for ever. */
static atomic_int handled;
static void allocating_handler(int sig) {
  (void)sig;
  if (rt_malloc(64)) atomic_fetch_add(&handled, 1);
}

/* Allocates without pause until every signal was sent, or MAX_SIGNALLED_ALLOCS blocks (≈ 64 MiB: nothing is freed
 * once frozen): the signals land while it allocates on a faster machine too (before: a fixed 300,000, which this
 * machine finished after ~750 signals, so a 7× faster one would have sent fewer than 100). */
#define MAX_SIGNALLED_ALLOCS 2000000
static atomic_int allocator_done;
static atomic_int signals_done;
static void* allocator(void* arg) {
  (void)arg;
  for (int i = 0; i < MAX_SIGNALLED_ALLOCS && !atomic_load(&signals_done); i++)
    if (!rt_malloc(24)) return (void*)1;
  atomic_store(&allocator_done, 1);
  return NULL;
}

/* SIGNALS signals into a thread that allocates from the frozen heap without pause: handled, none stuck. */
#define SIGNALS 2000
static void signals_while_allocating(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = allocating_handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t t;
  pthread_create(&t, NULL, allocator, NULL);
  int sent = 0;
  for (; sent < SIGNALS && !atomic_load(&allocator_done); sent++) {
    pthread_kill(t, SIGUSR1);
    struct timespec pause = {0, 20000};
    nanosleep(&pause, NULL);
  }
  atomic_store(&signals_done, 1);
  /* Done or stuck: a handler spinning on the lock its own thread holds never returns. */
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 20;
  void* r = NULL;
  int joined = pthread_timedjoin_np(t, &r, &deadline) == 0;
  char why[96];
  snprintf(why, sizeof why, "%s after %d signals (%d handled)", joined ? "allocation failed" : "stuck", sent, atomic_load(&handled));
  /* Signals sent while one is pending merge into it (blocked in the lock, or not yet taken): fewer handled than sent. */
  check(joined && !r && sent > 100 && atomic_load(&handled) > sent / 10, "signals while allocating", why);
  if (!joined) {
    printf("%s\n", "(the allocating thread never returned)");
    fflush(stdout);
    _exit(1);
  }
}

/* `heap_app note-signal`: what a termination signal's note does to the heap in this process: "pid P frozen F". In
 * the init of a PID namespace (pid 1) the kernel drops the default action the handler re-raises, the process goes on,
 * and a frozen heap would leak every later block: it must stay unfrozen there. */
static int note_signal(void) {
  static rt_queue q;
  rt_queue_note_signal(&q);
  printf("pid %d frozen %d\n", (int)getpid(), rt_heap_frozen());
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "note-signal") == 0) return note_signal();
  /* Before the freeze: the heap's own. */
  uint8_t* h = rt_malloc(1000);
  check(h && malloc_usable_size(h) >= 1000 && !rt_heap_frozen(), "heap before the freeze", "not a heap block");
  fill(h, 1000, 3);
  uint8_t* h2 = rt_realloc(h, 3000);
  check(h2 && malloc_usable_size(h2) >= 3000 && same(h2, 1000, 3), "realloc before the freeze", "content or size");
  uint8_t* keep = malloc(5000);
  fill(keep, 5000, 9);

  rt_heap_freeze();
  check(rt_heap_frozen(), "frozen", "rt_heap_frozen() is 0");

  /* A heap block grown after the freeze: copied into mapped memory, the old one untouched. */
  uint8_t* g = rt_realloc(keep, 20000);
  check(g && g != keep && aligned16(g) && same(g, 5000, 9) && same(keep, 5000, 9), "heap block grown", "copy");
  struct mallinfo2 before = mallinfo2();
  rt_free(h2);
  struct mallinfo2 after = mallinfo2();
  check(before.uordblks == after.uordblks && same(h2, 1000, 3), "nothing freed", "rt_free freed a heap block");

  uint64_t* z = rt_calloc(1000, 8);
  int zero = z != NULL;
  for (int i = 0; zero && i < 1000; i++) zero = z[i] == 0;
  check(zero && aligned16(z), "calloc zeroed", "not zero or not aligned");
  check(rt_calloc(SIZE_MAX / 2, 4) == NULL, "calloc overflow", "no NULL");

  /* Many small blocks over several slabs; a mapped block grown; big blocks. */
  uint8_t* small[3000];
  int ok = 1;
  for (int i = 0; i < 3000; i++) {
    small[i] = rt_malloc(700);
    if (!small[i] || !aligned16(small[i])) ok = 0;
    else fill(small[i], 700, (uint8_t)i);
  }
  for (int i = 0; ok && i < 3000; i++) ok = same(small[i], 700, (uint8_t)i);
  check(ok, "small blocks over several slabs", "overlap or misalignment");
  uint8_t* m = rt_realloc(small[10], 900000);
  check(m && same(m, 700, 10), "mapped block grown", "content");
  uint8_t* big = rt_malloc(3u << 20);
  if (big) fill(big, 3u << 20, 5);
  uint8_t* big2 = big ? rt_realloc(big, 5u << 20) : NULL;
  check(big2 && same(big2, 3u << 20, 5) && aligned16(big2), "big block grown", "content");
  uint8_t* shrunk = rt_realloc(big2, 100);
  check(shrunk && same(shrunk, 100, 5), "block shrunk", "content");

  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void*)(uintptr_t)(i + 1));
  int threads_ok = 1;
  for (int i = 0; i < THREADS; i++) {
    void* r;
    pthread_join(t[i], &r);
    if (r) threads_ok = 0;
  }
  check(threads_ok, "four threads at once", "a block overlapped or failed");
  signals_while_allocating();
  return failed;
}
