/*
 * Exercises rt_exit_call_owned (collectors/common/rawtrace_queue.c), the exit flush's bounded vendor call, built as is
 * and with AddressSanitizer + UBSan (test/collectors/exit_call.test.ts): who frees what the call made when the waiter
 * gave up before it returned. Each call's fn allocates a result into its job (counted in `live`), as a collector's
 * trace fetch does; the side that owns the job frees both. Calls are made to wait on semaphores the program posts, so
 * which side gives up first is fixed, except in the last case, which races them on purpose. Prints one "ok <case>"
 * line per passed check and exits 1 after a failed one, naming it.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rawtrace_queue.h"

static int failed;
static atomic_int live;      /* results allocated and not freed */
static atomic_int orphaned;  /* jobs the call's thread freed (orphan) */
static sem_t orphan_done;    /* posted by each orphan call */

static void check(int ok, const char* what) {
  printf("%s %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) failed = 1;
}

struct job {
  sem_t* go;      /* NULL: return at once; else wait for it before returning */
  long spin_us;   /* busy time before returning (the racing case) */
  int* result;    /* what fn made */
};

static void fn(void* arg) {
  struct job* j = (struct job*)arg;
  if (j->go)
    while (sem_wait(j->go) != 0 && errno == EINTR) {
    }
  if (j->spin_us) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < j->spin_us);
  }
  j->result = (int*)malloc(64 * sizeof(int));
  if (j->result) {
    memset(j->result, 0x5a, 64 * sizeof(int));
    atomic_fetch_add(&live, 1);
  }
}

static void free_job(struct job* j) {
  if (j->result) atomic_fetch_sub(&live, 1);
  free(j->result);
  free(j);
}

/* The call returned after the waiter gave up: the job is this thread's. */
static void orphan(void* arg) {
  free_job((struct job*)arg);
  atomic_fetch_add(&orphaned, 1);
  sem_post(&orphan_done);
}

static struct job* new_job(sem_t* go, long spin_us) {
  struct job* j = (struct job*)calloc(1, sizeof *j);
  if (!j) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  j->go = go;
  j->spin_us = spin_us;
  return j;
}

/* Waits (at most 10 s: only a broken hand-over gets there) until `n` orphan calls ran in all. */
static int wait_orphans(int n) {
  while (atomic_load(&orphaned) < n) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    if (sem_timedwait(&orphan_done, &dl) != 0 && errno != EINTR) return 0;
  }
  return 1;
}

int main(void) {
  rt_queue q;
  memset(&q, 0, sizeof q);
  if (rt_queue_init(&q) != 0 || sem_init(&orphan_done, 0, 0) != 0) return 2;
  long spent = 0, bound = 0;

  /* 1. No termination signal: the call is waited for however long it takes; its job is the caller's. */
  sem_t go;
  sem_init(&go, 0, 0);
  struct job* j = new_job(NULL, 600000); /* 0.6 s: longer than the least bound */
  int r = rt_exit_call_owned(&q, fn, j, orphan, 1.0, &spent, &bound);
  check(r == 1 && j->result && j->result[63] == 0x5a5a5a5a, "no signal: returned, the result is the caller's");
  check(spent == 0 && bound == 500, "no signal: no share of the bound spent (bound 0.5 s for a 1 s exit timeout)");
  if (r == 1) free_job(j);

  /* 2. A signal asked for the flush and the call does not return within the bound: the waiter gives up and must not
   * touch the job again; when the call returns, its own thread frees the job and what the call made. */
  atomic_store(&q.in_signal, 1);
  j = new_job(&go, 0);
  r = rt_exit_call_owned(&q, fn, j, orphan, 1.0, &spent, &bound);
  check(r == 0, "signal, call held: the waiter gave up");
  check(spent >= bound, "signal, call held: the whole bound spent");
  sem_post(&go);
  check(wait_orphans(1), "signal, call held: the late call's thread freed its job");

  /* 3. The bound is shared by the calls of one flush: with it spent by earlier calls, the next one is not started
   * (it would be given up at once, left running in the library): its job is still the caller's, untouched. */
  j = new_job(&go, 0);
  r = rt_exit_call_owned(&q, fn, j, orphan, 1.0, &spent, &bound);
  check(r == -1 && j->result == NULL, "bound spent by earlier calls: the next one is not started");
  check(atomic_load(&orphaned) == 1, "bound spent by earlier calls: nothing orphaned");
  free_job(j);

  /* 4. A call that returns within what is left of the bound is the caller's, and adds its share. */
  spent = 0;
  j = new_job(NULL, 0);
  r = rt_exit_call_owned(&q, fn, j, orphan, 20.0, &spent, &bound);
  check(r == 1 && j->result != NULL, "signal, quick call: returned, the result is the caller's");
  check(spent < bound, "signal, quick call: its share of the bound counted, not all of it");
  if (r == 1) free_job(j);

  /* 5. Both sides at once: 1 ms of bound left and calls that take 0 to 2 ms. Whichever side decides, exactly one
   * frees each job (AddressSanitizer sees a double free or a use after free; `live` a job nobody freed). */
  int mine = 0, theirs = 0;
  const int rounds = 400;
  for (int i = 0; i < rounds; i++) {
    spent = bound - 1;
    j = new_job(NULL, (long)(i % 21) * 100);
    if (rt_exit_call_owned(&q, fn, j, orphan, 20.0, &spent, &bound)) {
      free_job(j);
      mine++;
    } else {
      theirs++;
    }
  }
  check(wait_orphans(1 + theirs), "race: every job the waiter gave up was freed by its call's thread");
  printf("race: %d returned in time, %d given up\n", mine, theirs);
  check(atomic_load(&orphaned) == 1 + theirs, "race: no job freed by its thread that the waiter kept");
  check(atomic_load(&live) == 0, "every result freed once");
  return failed;
}
