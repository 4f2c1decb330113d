/*
 * Exercises the exit side of the writer's queue (collectors/common/rawtrace_queue.c), built as is and with
 * ThreadSanitizer (test/collectors/exit_queue.test.ts): a batch stops at the exit and the rest stays queued, in order;
 * the exit flush's deadline (rt_queue_exit_skip) and what it counts; and the queue's own locks held for ever by a
 * thread a termination signal stopped (a thread here that takes one and keeps it), which cost one 100 ms try, not one
 * per item. Prints one "ok <case>" line per passed check and exits 1 after a failed one, naming it.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rawtrace_collector.h"
#include "rawtrace_queue.h"
#include "rawtrace_fd.h"

#include <sys/stat.h>

static int failed;
static int writes, writes_ok; /* rt_queue_write_exit_left's writes, and those that succeeded */

static int count_write(int rc) {
  writes++;
  if (rc == 0) writes_ok++;
  return rc;
}

static void check(int ok, const char* what) {
  printf("%s %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) failed = 1;
}

struct item {
  rt_item it;
  int n;
};

static rt_queue q;
static int seen[256];
static int nseen;
static int exit_at = -1; /* the item whose handling marks the exit's start (a termination signal with `signal_at`) */
static int signal_at;
static pthread_mutex_t* hold_at_exit; /* a lock a thread takes and keeps from then on (the thread the signal stopped) */

/* A thread that takes a lock and keeps it until `release` is posted. */
static sem_t taken, release;
static pthread_t holder;

static void* hold(void* p) {
  pthread_mutex_t* m = (pthread_mutex_t*)p;
  pthread_mutex_lock(m);
  sem_post(&taken);
  while (sem_wait(&release) != 0) {
  }
  pthread_mutex_unlock(m);
  return NULL;
}

static void handle(rt_item* it) {
  struct item* i = (struct item*)it;
  if (nseen < 256) seen[nseen++] = i->n;
  if (i->n == exit_at) {
    if (hold_at_exit) {
      pthread_create(&holder, NULL, hold, hold_at_exit);
      while (sem_wait(&taken) != 0) {
      }
    }
    if (signal_at) rt_queue_note_signal(&q);
    else rt_queue_note_exit(&q);
  }
  free(i);
}

static void push(int n) {
  struct item* i = (struct item*)calloc(1, sizeof *i);
  if (!i) exit(2);
  i->n = n;
  rt_queue_push(&q, &i->it);
}

static int in_order(int from, int to) {
  if (nseen != to - from + 1) return 0;
  for (int k = 0; k < nseen; k++)
    if (seen[k] != from + k) return 0;
  return 1;
}

static double ms_since(const struct timespec* t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void fresh(void) {
  q = (rt_queue){0};
  if (rt_queue_init(&q) != 0) exit(2);
  nseen = 0;
  exit_at = -1;
  signal_at = 0;
  hold_at_exit = NULL;
}

/* Finishes the writer's work after 200 ms (test 7). */
static void* finish_later(void* p) {
  (void)p;
  usleep(200000);
  rt_queue_finish(&q);
  return NULL;
}

static void let_go(void) {
  sem_post(&release);
  pthread_join(holder, NULL);
}

int main(void) {
  /* 1. The exit begins while the writer handles item 3 of a batch of 10: the batch stops there, the rest stays queued
   *    in order before what is queued later, and the exit flush's drain writes all of it; done_seq follows. */
  fresh();
  rt_queue_set_exit_timeout(&q, 10);
  for (int n = 1; n <= 10; n++) push(n);
  exit_at = 3;
  size_t got = rt_queue_drain_once(&q, handle);
  check(got == 3 && in_order(1, 3), "a batch stops after the item in hand once the exit began");
  check(rt_queue_wait(&q, 3, 0) == 0 && rt_queue_wait(&q, 4, 0) != 0, "done up to the last item handled, not past it");
  push(11);
  push(12);
  got = rt_queue_drain_once(&q, handle); /* not the flush yet: one item, the rest put back again */
  check(got == 1 && in_order(1, 4), "before the flush begins, each batch stops after one item");
  rt_queue_begin_exit_flush(&q);
  rt_queue_drain(&q, handle);
  check(in_order(1, 12), "the flush writes the rest in order, then what was queued after");
  check(rt_queue_wait(&q, rt_queue_last(&q), 0) == 0, "every item done");

  /* 2. The deadline: 1 s timeout (200 ms reserve). The writer's speed is 100 ns per byte (a 1 MB write took 0.1 s). */
  fresh();
  rt_queue_set_exit_timeout(&q, 1);
  rt_queue_note_write(&q, 1000000, 100000000);
  check(rt_queue_exit_skip(&q, 10000000) == 0, "before the exit: never left");
  rt_queue_note_exit(&q);
  check(rt_queue_exit_skip(&q, 1000000) == 0, "a write that ends before the deadline (0.125 s of 0.8) is made");
  check(rt_queue_exit_skip(&q, 8000000) == 1, "a write that would end past it (1 s) is left");
  check(rt_queue_exit_skip(&q, 100) == 1, "and every one after it, however small");
  char path[] = "/tmp/rawtrace-exit-queue-XXXXXX";
  int fd = mkstemp(path);
  rt_writer* w = fd >= 0 ? rt_writer_fdopen(fd) : NULL;
  if (!w) exit(2);
  uint64_t left = rt_queue_write_exit_left(&q, w, 0, "test buffers", "", count_write);
  uint64_t again = rt_queue_write_exit_left(&q, w, 0, "test buffers", "", count_write);
  rt_writer_close(w);
  char text[4096] = {0};
  FILE* f = fopen(path, "rb");
  size_t got_bytes = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  unlink(path);
  static const char line[] = "exit flush: 2 test buffers (8000100 bytes) left unwritten";
  int said = memmem(text, got_bytes, line, sizeof line - 1) != NULL;
  check(left == 2 && again == 0 && writes == 2 && writes_ok == 2 && said,
        "counted once, written once: a DROPPED chunk and the line for 2 buffers, 8,000,100 bytes");

  /* 3. A timeout of 0.1 s: the reserve is at most half of it, so the flush still writes within the first 50 ms. */
  fresh();
  rt_queue_set_exit_timeout(&q, 0.1);
  rt_queue_note_exit(&q);
  check(rt_queue_exit_skip(&q, 1 << 20) == 0, "a short timeout still leaves the flush half of it");

  /* 4. A termination signal lands as the writer handles item 1 of a batch of 30, on a thread that holds the queue's
   *    lock for ever: the rest of the batch cannot go back, so the batch is written — one 100 ms try of the lock, not
   *    one per item (it took 2.9 s); the next batch only tries it. */
  sem_init(&taken, 0, 0);
  sem_init(&release, 0, 0);
  fresh();
  rt_queue_set_exit_timeout(&q, 10);
  for (int n = 1; n <= 30; n++) push(n);
  exit_at = 1;
  signal_at = 1;
  hold_at_exit = &q.mu;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  got = rt_queue_drain_once(&q, handle);
  double took = ms_since(&t0);
  check(got == 30 && in_order(1, 30), "the queue's lock held for ever: the batch in hand is written whole");
  check(took >= 90 && took < 1000, "one 100 ms try of the lock for the batch, not one per item");
  clock_gettime(CLOCK_MONOTONIC, &t0);
  got = rt_queue_drain_once(&q, handle);
  check(got == 0 && ms_since(&t0) < 50, "the next batch only tries the lock");
  let_go();

  /* 5. The same with the done lock (a program thread stopped while it waited for an item): each item's progress is
   *    still recorded, one 100 ms try in all (it was 100 ms per item). */
  fresh();
  rt_queue_set_exit_timeout(&q, 10);
  rt_queue_begin_exit_flush(&q); /* the flush: the batch does not stop at the exit */
  for (int n = 1; n <= 30; n++) push(n);
  exit_at = 1;
  signal_at = 1;
  hold_at_exit = &q.done_mu;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  got = rt_queue_drain_once(&q, handle);
  took = ms_since(&t0);
  check(got == 30 && in_order(1, 30), "the done lock held for ever: every item handled");
  check(took >= 90 && took < 1000, "one 100 ms try of the done lock, not one per item");
  let_go();
  check(rt_queue_wait(&q, 30, 0) == 0, "done up to the last item");

  /* 6. The program closes the wake-up pipe's numbers and opens its own file there (a library tidying descriptors):
   *    the queue neither writes its byte into that file nor reads from it (before: a byte written, its offset moved). */
  fresh();
  check(q.pipe[0] >= RT_FD_FLOOR && q.pipe[1] >= RT_FD_FLOOR, "the pipe kept at RT_FD_FLOOR and up");
  char mine[] = "/tmp/rawtrace-exit-queue-mine-XXXXXX";
  int pf = mkstemp(mine);
  if (pf < 0 || write(pf, "abc", 3) != 3 || lseek(pf, 0, SEEK_SET) != 0) exit(2);
  close(q.pipe[0]);
  close(q.pipe[1]);
  if (dup2(pf, q.pipe[0]) != q.pipe[0] || dup2(pf, q.pipe[1]) != q.pipe[1]) exit(2);
  rt_queue_notify(&q);
  rt_queue_drain_pipe(&q);
  rt_queue_wait_pipe(&q, 50);
  struct stat st;
  check(fstat(pf, &st) == 0 && st.st_size == 3 && lseek(pf, 0, SEEK_CUR) == 0,
        "the program's file behind the pipe's numbers: nothing written, nothing read");
  close(q.pipe[0]);
  close(q.pipe[1]);
  close(pf);
  unlink(mine);

  /* 7. A termination signal's wait for the exit flush (rt_queue_wait_pipe_finished) is not ended by another byte in
   *    the pipe — the CUDA collector's partial flush for a signal the program handles (Ctrl-C in Python) ends with
   *    one, and one outlasting its wait leaves it there: the handler then let the process die mid-flush, no END. */
  fresh();
  rt_queue_notify(&q); /* a partial flush's byte, left in the pipe */
  pthread_t finisher;
  pthread_create(&finisher, NULL, finish_later, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rt_queue_wait_pipe_finished(&q, 5000);
  took = ms_since(&t0);
  pthread_join(finisher, NULL);
  check(q.finished && took >= 150 && took < 2000, "the exit flush's wait ends at the finish, not at a partial flush's byte");
  fresh();
  rt_queue_notify(&q);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rt_queue_wait_pipe_finished(&q, 300);
  took = ms_since(&t0);
  check(!q.finished && took >= 250 && took < 2000, "and without a finish it lasts its whole time");
  fresh();
  rt_queue_notify(&q);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rt_queue_wait_pipe(&q, 5000);
  check(ms_since(&t0) < 100, "a partial flush's wait still ends at its byte");

  /* 8. After a termination signal the writer logs (finalize's warnings) while a thread the signal stopped holds the
   *    queue's lock for ever: the log is dropped after the writer's one try, not waited for (it hung, no END). */
  fresh();
  rt_queue_note_signal(&q);
  hold_at_exit = &q.mu;
  pthread_create(&holder, NULL, hold, hold_at_exit);
  while (sem_wait(&taken) != 0) {
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int first = rt_queue_push_log(&q, 1, "exit flush: a warning");
  took = ms_since(&t0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int second = rt_queue_push_log(&q, 1, "exit flush: another");
  double took2 = ms_since(&t0);
  check(first == -1 && took >= 90 && took < 1000, "the log after a signal, the lock held for ever: one 100 ms try, dropped");
  check(second == -1 && took2 < 50, "the next one only tries the lock");
  let_go();
  fresh();
  rt_queue_note_signal(&q);
  check(rt_queue_push_log(&q, 1, "free lock") == 0 && rt_queue_last(&q) == 1, "after a signal with the lock free: queued");
  return failed;
}
