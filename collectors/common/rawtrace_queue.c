/*
 * Callback → writer-thread hand-over and signal chaining shared by the collectors; see rawtrace_queue.h.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_queue.h"
#include "rawtrace_heap.h"
#include "rawtrace_fd.h"
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rawtrace_collector.h"

int rt_queue_init(rt_queue* q) {
  if (q->ready) return 0;
  pthread_mutex_init(&q->mu, NULL);
  pthread_mutex_init(&q->done_mu, NULL);
  pthread_cond_init(&q->done_cv, NULL);
  q->pipe[0] = q->pipe[1] = -1;
  if (sem_init(&q->wake, 0, 0) != 0) return -errno;
  if (pipe2(q->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    int e = errno;
    sem_destroy(&q->wake);
    q->pipe[0] = q->pipe[1] = -1;
    return -e;
  }
  /* Kept for the process's life: out of the program's way (standard streams closed at start, numbers reused). */
  q->pipe[0] = rt_fd_aside(q->pipe[0]);
  q->pipe[1] = rt_fd_aside(q->pipe[1]);
  struct stat st;
  if (q->pipe[0] < 0 || q->pipe[1] < 0 || fstat(q->pipe[1], &st) != 0) {
    int e = errno;
    if (q->pipe[0] >= 0) close(q->pipe[0]);
    if (q->pipe[1] >= 0) close(q->pipe[1]);
    sem_destroy(&q->wake);
    q->pipe[0] = q->pipe[1] = -1;
    return -e;
  }
  q->pipe_dev = st.st_dev;
  q->pipe_ino = st.st_ino;
  q->ready = 1;
  return 0;
}

/* How long the writer keeps trying for a lock once a termination signal asked for the exit flush (ms). */
#define SIGNAL_LOCK_MS 100

int rt_queue_lock(rt_queue* q, pthread_mutex_t* m) {
  if (pthread_mutex_trylock(m) == 0) return 1; /* the common case: no clock read */
  long waited = 0;
  for (;;) {
    /* Slices, not one blocking lock: the signal may come while this thread already waits for the lock. */
    struct timespec dl = rt_deadline_ms(20);
    if (pthread_mutex_timedlock(m, &dl) == 0) return 1;
    if (atomic_load(&q->in_signal) && (waited += 20) >= SIGNAL_LOCK_MS) return 0;
  }
}

/* rt_queue_lock for the queue's own locks: once it gave up on one after a signal (a thread the signal stopped holds it
 * for ever), later calls only try it, instead of 100 ms each. */
static int lock_own(rt_queue* q, pthread_mutex_t* m, atomic_int* lost) {
  if (atomic_load(lost)) return pthread_mutex_trylock(m) == 0;
  if (rt_queue_lock(q, m)) return 1;
  atomic_store(lost, 1);
  return 0;
}

/* Appends `it` (q->mu held by the caller, who releases it). */
static void append_locked(rt_queue* q, rt_item* it) {
  it->seq = ++q->seq;
  if (q->tail) q->tail->next = it;
  else q->head = it;
  q->tail = it;
}

void rt_queue_push(rt_queue* q, rt_item* it) {
  it->next = NULL;
  pthread_mutex_lock(&q->mu);
  append_locked(q, it);
  pthread_mutex_unlock(&q->mu);
  sem_post(&q->wake);
}

/* rt_queue_push of the queue's own small items (logs, clock anchors), which the writer itself pushes during the exit
 * flush (finalize's warnings): once a termination signal came, the lock may be held for ever by a thread the signal
 * stopped inside a push, so it is only tried as the writer's drain tries it, and the item dropped (freed) without
 * it. Returns 0 when queued. */
static int push_own(rt_queue* q, rt_item* it) {
  if (!atomic_load(&q->in_signal)) {
    rt_queue_push(q, it);
    return 0;
  }
  it->next = NULL;
  if (!lock_own(q, &q->mu, &q->mu_lost)) {
    rt_free(it);
    return -1;
  }
  append_locked(q, it);
  pthread_mutex_unlock(&q->mu);
  sem_post(&q->wake);
  return 0;
}

uint64_t rt_queue_last(rt_queue* q) {
  /* The lock held by a thread the signal stopped: the count as it reads now (only ever grows). */
  if (!lock_own(q, &q->mu, &q->mu_lost)) return __atomic_load_n(&q->seq, __ATOMIC_ACQUIRE);
  uint64_t s = q->seq;
  pthread_mutex_unlock(&q->mu);
  return s;
}

void rt_queue_wake(rt_queue* q) { sem_post(&q->wake); }

void rt_queue_sleep(rt_queue* q, long ms) {
  if (ms == 0) return;
  if (ms < 0) {
    while (sem_wait(&q->wake) != 0 && errno == EINTR) {
    }
    return;
  }
  struct timespec dl = rt_deadline_ms(ms);
  while (sem_timedwait(&q->wake, &dl) != 0 && errno == EINTR) {
  }
}

/* Puts `list` … `last` (items taken from the queue, in order) back before the items queued since. Returns 0 when the
 * queue's lock is held by a thread a signal stopped (the caller then goes on with the list). */
static int requeue_front(rt_queue* q, rt_item* list, rt_item* last) {
  if (!lock_own(q, &q->mu, &q->mu_lost)) return 0;
  last->next = q->head;
  q->head = list;
  if (!q->tail) q->tail = last;
  pthread_mutex_unlock(&q->mu);
  return 1;
}

size_t rt_queue_drain_once(rt_queue* q, void (*handle)(rt_item* it)) {
  /* A program thread the termination signal stopped inside rt_queue_push holds the list's lock for ever: the items
   * still queued are then left (the exit flush writes END without them) rather than waited for. */
  if (!lock_own(q, &q->mu, &q->mu_lost)) return 0;
  rt_item* list = q->head;
  rt_item* last = q->tail;
  q->head = q->tail = NULL;
  pthread_mutex_unlock(&q->mu);
  size_t n = 0;
  int keep = 0; /* the batch goes on to its end (its rest could not be put back) */
  while (list) {
    /* The exit began: the rest goes back to the queue's front, for the exit flush (see rawtrace_queue.h). */
    if (!keep && !q->exit_flushing && atomic_load(&q->exit_ns) && n > 0) {
      if (requeue_front(q, list, last)) break;
      keep = 1;
    }
    rt_item* next = list->next;
    uint64_t seq = list->seq;
    handle(list);
    n++;
    if (lock_own(q, &q->done_mu, &q->done_mu_lost)) {
      if (seq > q->done_seq) q->done_seq = seq;
      pthread_cond_broadcast(&q->done_cv);
      pthread_mutex_unlock(&q->done_mu);
    } else if (seq > q->done_seq) {
      q->done_seq = seq; /* held by a thread the signal stopped in its wait: no one else to wake */
    }
    list = next;
  }
  return n;
}

void rt_queue_drain(rt_queue* q, void (*handle)(rt_item* it)) {
  while (rt_queue_drain_once(q, handle) != 0) {
  }
}

void rt_queue_drain_to(rt_queue* q, void (*handle)(rt_item* it), uint64_t target) {
  for (;;) {
    int done = atomic_load(&q->done_seq) >= target; /* only this thread writes it */
    /* Every item up to target was queued before this call: the batches reach it (an empty one means a lost item). */
    if (done || rt_queue_drain_once(q, handle) == 0) return;
  }
}

/* How long a wait gives a writer found stuck (ms) before it gives up again, unless the writer handles an item. */
#define STUCK_GRACE_MS 1000

/* The signal handlers' wait reads and writes the 64-bit marks: only safe there when they are lock-free. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && sizeof(long long) == sizeof(uint64_t),
               "64-bit atomics must be lock-free for rt_queue_wait_pipe in signal handlers");

/* Whether an earlier wait gave up and the writer handled nothing since. Atomic loads only: async-signal-safe. */
static int stuck_now(rt_queue* q) { return q->stalled && q->done_seq == q->stall_seq && !q->finished; }

/* After a wait that timed out: the writer is stuck when it handled no item since `seq0`. Async-signal-safe. */
static void note_timeout(rt_queue* q, uint64_t seq0) {
  if (q->done_seq != seq0 || q->finished) return;
  q->stall_seq = seq0; /* before `stalled`: a reader that sees stalled sees this sequence */
  q->stalled = 1;
}

static int reached_target(rt_queue* q, uint64_t target) { return q->done_seq >= target || q->finished; }
static int reached_finish(rt_queue* q, uint64_t target) {
  (void)target;
  return q->finished;
}

/*
 * done_mu held: waits until `reached` holds, at most `ms`. A writer that handled no item during a whole wait that
 * timed out is marked stuck (a write that does not return: a FIFO nobody reads, a hung file system); a later wait
 * on a writer still stuck gives it STUCK_GRACE_MS only, and the full `ms` again as soon as it handles an item, so
 * a slow writer that makes progress is waited for as long as asked, and a dead one costs one timeout, not one per
 * caller. Returns `reached`.
 */
static int wait_locked(rt_queue* q, int (*reached)(rt_queue*, uint64_t), uint64_t target, long ms) {
  uint64_t seq0 = q->done_seq;
  int grace = stuck_now(q) && ms > STUCK_GRACE_MS;
  struct timespec full = rt_deadline_ms(ms);
  struct timespec dl = grace ? rt_deadline_ms(STUCK_GRACE_MS) : full;
  while (!reached(q, target)) {
    if (pthread_cond_timedwait(&q->done_cv, &q->done_mu, &dl) == ETIMEDOUT) break;
    if (grace && q->done_seq != seq0) {
      grace = 0;
      dl = full;
    }
  }
  int ok = reached(q, target);
  if (!ok) note_timeout(q, seq0);
  return ok;
}

int rt_queue_wait(rt_queue* q, uint64_t target, long ms) {
  pthread_mutex_lock(&q->done_mu);
  int ok = wait_locked(q, reached_target, target, ms);
  pthread_mutex_unlock(&q->done_mu);
  return ok ? 0 : -1;
}

void rt_queue_finish(rt_queue* q) {
  if (lock_own(q, &q->done_mu, &q->done_mu_lost)) {
    q->finished = 1;
    pthread_cond_broadcast(&q->done_cv);
    pthread_mutex_unlock(&q->done_mu);
  } else {
    q->finished = 1; /* the handler waits on the pipe below, not on done_cv */
  }
  rt_queue_notify(q);
}

int rt_queue_is_finished(rt_queue* q) {
  pthread_mutex_lock(&q->done_mu);
  int done = q->finished;
  pthread_mutex_unlock(&q->done_mu);
  return done;
}

int rt_queue_wait_finished(rt_queue* q, long ms) {
  pthread_mutex_lock(&q->done_mu);
  int done = wait_locked(q, reached_finish, 0, ms);
  pthread_mutex_unlock(&q->done_mu);
  return done;
}

typedef struct clock_item {
  rt_item it;
  rt_clock_anchor_t a;
} clock_item;

typedef struct log_item {
  rt_item it;
  uint32_t level;
  char msg[512];
} log_item;

int rt_queue_push_clock(rt_queue* q, const rt_clock_anchor_t* a) {
  clock_item* ci = (clock_item*)rt_calloc(1, sizeof *ci);
  if (!ci) return -1;
  ci->it.type = RT_ITEM_CLOCK;
  ci->a = *a;
  return push_own(q, &ci->it);
}

int rt_queue_push_log(rt_queue* q, uint32_t level, const char* msg) {
  log_item* li = (log_item*)rt_calloc(1, sizeof *li);
  if (!li) return -1;
  li->it.type = RT_ITEM_LOG;
  li->level = level;
  snprintf(li->msg, sizeof li->msg, "%s", msg ? msg : "");
  return push_own(q, &li->it);
}

int rt_item_is_common(const rt_item* it) { return it->type == RT_ITEM_CLOCK || it->type == RT_ITEM_LOG; }

int rt_item_write(rt_writer* w, const rt_item* it) {
  if (it->type == RT_ITEM_CLOCK) return rt_writer_clock(w, &((const clock_item*)it)->a);
  if (it->type == RT_ITEM_LOG) return rt_writer_log(w, ((const log_item*)it)->level, ((const log_item*)it)->msg);
  return -EINVAL;
}

int rt_thread_start(pthread_t* t, void* (*fn)(void*)) {
  sigset_t all, prev;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &prev);
  int rc = pthread_create(t, NULL, fn, NULL);
  pthread_sigmask(SIG_SETMASK, &prev, NULL);
  return rc;
}

static long ms_since(const struct timespec* t0);

/* Who owns a bounded call's argument: decided once, by whichever side moves `state` away from CALL_RUNNING. */
enum { CALL_RUNNING = 0, CALL_RETURNED = 1, CALL_ABANDONED = 2 };

typedef struct bounded_call {
  void (*fn)(void*);
  void* arg;
  void (*orphan)(void*);
  atomic_int state;  /* CALL_RETURNED: set by the call's thread (arg is the waiter's); CALL_ABANDONED: by the waiter */
  atomic_int refs;   /* the caller's and the thread's: the last to let go frees it */
} bounded_call;

static void* bounded_main(void* p) {
  bounded_call* b = (bounded_call*)p;
  b->fn(b->arg);
  int expected = CALL_RUNNING;
  /* The waiter gave up first: what fn made is this thread's to free, and nobody else touches it. */
  if (!atomic_compare_exchange_strong(&b->state, &expected, CALL_RETURNED) && b->orphan) b->orphan(b->arg);
  if (atomic_fetch_sub(&b->refs, 1) == 1) rt_free(b);
  return NULL;
}

void rt_queue_note_signal(rt_queue* q) {
  /* The process is ending and the thread this handler runs on may hold a malloc arena's lock: from now on the
   * collector frees nothing and allocates from mapped memory (rawtrace_heap.h), so the flush never waits for it.
   * Not in the init of a PID namespace (a container's pid 1 without an init): the kernel drops the default action
   * re-raised after the flush, the process goes on, and a frozen heap would leak every block from then on. */
  if (getpid() != 1) rt_heap_freeze();
  rt_queue_note_exit(q);
  atomic_store(&q->in_signal, 1);
}

void rt_queue_set_exit_timeout(rt_queue* q, double seconds) {
  q->exit_ms = seconds > 0 ? (long)(seconds * 1000.0) : 0;
}

void rt_queue_note_exit(rt_queue* q) {
  uint64_t expected = 0;
  uint64_t now = rt_clock_ns(CLOCK_MONOTONIC);
  atomic_compare_exchange_strong(&q->exit_ns, &expected, now ? now : 1);
}

/* What the file's last chunks (DROPPED, LOG, CLOCK, END) get of the exit timeout: a tenth, at least 200 ms, at most
 * half (a timeout of 0.2 s or less must not leave every buffer). */
static uint64_t exit_reserve_ns(long exit_ms) {
  uint64_t r = (uint64_t)exit_ms * 100000ull; /* a tenth, in ns */
  uint64_t half = (uint64_t)exit_ms * 500000ull;
  if (r < 200000000ull) r = 200000000ull;
  return r > half ? half : r;
}

void rt_queue_begin_exit_flush(rt_queue* q) { q->exit_flushing = 1; }

int rt_queue_exit_skip(rt_queue* q, uint64_t bytes) {
  uint64_t t0 = atomic_load(&q->exit_ns);
  if (!q->exit_skipping) {
    if (!t0 || q->exit_ms <= 0) return 0;
    uint64_t budget = (uint64_t)q->exit_ms * 1000000ull;
    uint64_t reserve = exit_reserve_ns(q->exit_ms);
    uint64_t end = t0 + budget - reserve;
    /* The speed of the writes before (a quarter more, for a reader that slows down); none measured: write it, and
     * measure. */
    uint64_t need = (uint64_t)((double)bytes * (double)q->ps_per_byte * 1.25 / 1000.0);
    if (rt_clock_ns(CLOCK_MONOTONIC) + need <= end) return 0;
    q->exit_skipping = 1;
  }
  q->exit_left++;
  q->exit_left_bytes += bytes;
  return 1;
}

void rt_queue_note_write(rt_queue* q, uint64_t bytes, uint64_t ns) {
  if (bytes < 4096) return; /* too small to say the output's speed: a write's fixed cost would dominate */
  uint64_t ps = (uint64_t)((double)ns * 1000.0 / (double)bytes);
  /* The slower of the last write and a running mean: a reader that slows down is believed at once. */
  uint64_t mean = q->ps_per_byte ? (q->ps_per_byte * 3 + ps) / 4 : ps;
  q->ps_per_byte = ps > mean ? ps : mean;
}

uint64_t rt_queue_write_exit_left(rt_queue* q, rt_writer* w, int verbosity, const char* what, const char* bytes_note,
                                  int (*wrote)(int rc)) {
  uint64_t n = q->exit_left - q->exit_left_said;
  uint64_t bytes = q->exit_left_bytes - q->exit_left_bytes_said;
  q->exit_left_said = q->exit_left;
  q->exit_left_bytes_said = q->exit_left_bytes;
  if (n == 0) return 0;
  wrote(rt_writer_dropped(w, n, RT_DROP_EXIT_TIME));
  char msg[320];
  snprintf(msg, sizeof msg, "exit flush: %llu %s (%llu bytes%s) left unwritten: at this output's speed they would have "
           "taken longer than RAWTRACE_EXIT_TIMEOUT (%.1f s) allows", (unsigned long long)n, what,
           (unsigned long long)bytes, bytes_note, (double)q->exit_ms / 1000.0);
  rt_log_line(verbosity, RT_V_WARN, msg);
  /* Written here, not queued: a queued line would need another drain, which could leave more buffers. */
  wrote(rt_writer_log(w, RT_LOG_WARNING, msg));
  return n;
}

/* Half of the exit timeout, at least 0.5 s: the part of the exit flush its vendor calls may take after a signal. */
static long exit_call_bound_ms(double exit_timeout_s) {
  double half = exit_timeout_s * 500.0;
  return half < 500.0 ? 500 : (long)half;
}

int rt_exit_call_owned(rt_queue* q, void (*fn)(void*), void* arg, void (*orphan)(void*), double exit_timeout_s,
                       long* spent_ms, long* bound_ms) {
  *bound_ms = exit_call_bound_ms(exit_timeout_s);
  /* The flush's time after the signal is spent: no call is started (it would be given up at once, left running in
   * the vendor library while the process ends, its result dropped). */
  if (atomic_load(&q->in_signal) && *spent_ms >= *bound_ms) return -1;
  bounded_call* b = (bounded_call*)rt_calloc(1, sizeof *b);
  pthread_t t;
  int rc = -1;
  if (b) {
    b->fn = fn;
    b->arg = arg;
    b->orphan = orphan;
    atomic_init(&b->state, CALL_RUNNING);
    atomic_init(&b->refs, 2);
    sigset_t all, prev;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &prev);
    rc = pthread_create(&t, NULL, bounded_main, b);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
  }
  if (rc != 0) {
    rt_free(b);
    fn(arg); /* no thread to spare: the call here, unbounded */
    return 1;
  }
  pthread_detach(t);
  /* Polled each ms (a vendor flush usually returns within a few): unbounded while no signal asked for the flush; a
   * signal may come while the call runs (a SIGTERM during a normal exit's flush), and its bound starts then. */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int state;
  while ((state = atomic_load(&b->state)) == CALL_RUNNING) {
    if (!atomic_load(&q->in_signal)) {
      clock_gettime(CLOCK_MONOTONIC, &t0);
    } else if (*spent_ms + ms_since(&t0) >= *bound_ms) {
      int expected = CALL_RUNNING;
      /* Fails only when fn returned meanwhile: then its result is ours after all. */
      state = atomic_compare_exchange_strong(&b->state, &expected, CALL_ABANDONED) ? CALL_ABANDONED : expected;
      break;
    }
    struct timespec step = {0, 1000000};
    nanosleep(&step, NULL);
  }
  if (atomic_load(&q->in_signal)) *spent_ms += ms_since(&t0);
  if (atomic_fetch_sub(&b->refs, 1) == 1) rt_free(b);
  return state == CALL_RETURNED;
}

/* rt_exit_call_bounded's fn, as rt_exit_call_owned's argument (a function pointer does not fit a void*). */
typedef struct plain_call {
  void (*fn)(void);
} plain_call;

static void run_plain(void* p) { ((plain_call*)p)->fn(); }

int rt_exit_call_bounded(rt_queue* q, void (*fn)(void), double exit_timeout_s, long* bound_ms) {
  plain_call* c = (plain_call*)rt_malloc(sizeof *c);
  if (!c) {
    *bound_ms = exit_call_bound_ms(exit_timeout_s);
    fn(); /* no memory to spare: the call here, unbounded */
    return 1;
  }
  c->fn = fn;
  long spent = 0;
  int r = rt_exit_call_owned(q, run_plain, c, rt_free, exit_timeout_s, &spent, bound_ms);
  if (r != 0) rt_free(c); /* returned, or never started (not with nothing spent): c is still ours */
  return r == 1;
}

void rt_thread_enter(const char* name) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  pthread_setname_np(pthread_self(), name);
}

/* Whether `fd`, one end of the queue's pipe, still names it (async-signal-safe: fstat). */
static int pipe_ours(const rt_queue* q, int fd) {
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_dev == q->pipe_dev && st.st_ino == q->pipe_ino;
}

void rt_queue_notify(rt_queue* q) {
  if (!pipe_ours(q, q->pipe[1])) return;
  char c = 1;
  ssize_t ignored = write(q->pipe[1], &c, 1);
  (void)ignored;
}

/* Milliseconds since `t0` on CLOCK_MONOTONIC (async-signal-safe). */
static long ms_since(const struct timespec* t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* rt_queue_wait_pipe; with `until_finished`, a byte that is not the writer's finish (a partial flush's: the CUDA
 * collector's, for a signal the program handles) is consumed and the wait goes on to the same deadline. */
static void wait_pipe(rt_queue* q, int ms, int until_finished) {
  if (!pipe_ours(q, q->pipe[0])) return;
  /* The same rule as wait_locked, with atomics instead of done_mu (a handler must not take a lock). */
  uint64_t seq0 = q->done_seq;
  int grace = stuck_now(q) && ms > STUCK_GRACE_MS;
  long limit = grace ? STUCK_GRACE_MS : ms;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    /* Another waiter (a second signal on another thread) may have taken the writer's byte: the flag says it too. */
    if (q->finished) return;
    long left = limit - ms_since(&t0);
    struct pollfd pfd = {q->pipe[0], POLLIN, 0};
    int r = poll(&pfd, 1, left > 20 ? 20 : left > 0 ? (int)left : 0);
    if (r == 0 && left > 20) continue;
    if (r > 0) {
      char c[16];
      ssize_t ignored = read(q->pipe[0], c, sizeof c);
      (void)ignored;
      if (!until_finished || q->finished) return;
      if (left > 0) continue;
      break;
    }
    if (r < 0 && errno == EINTR && left > 0) continue;
    if (r < 0) return;
    if (grace && q->done_seq != seq0) { /* the writer moved: the whole time again */
      grace = 0;
      limit = ms;
      continue;
    }
    break;
  }
  note_timeout(q, seq0);
}

void rt_queue_wait_pipe(rt_queue* q, int ms) { wait_pipe(q, ms, 0); }

void rt_queue_wait_pipe_finished(rt_queue* q, int ms) { wait_pipe(q, ms, 1); }

void rt_queue_drain_pipe(rt_queue* q) {
  if (!pipe_ours(q, q->pipe[0])) return;
  char c[64];
  while (read(q->pipe[0], c, sizeof c) > 0) {
  }
}

int rt_term_index(int sig) { return sig == SIGTERM ? 0 : sig == SIGINT ? 1 : 2; }

int rt_install_term_handlers(void (*handler)(int, siginfo_t*, void*), struct sigaction old[RT_TERM_SIGNALS]) {
  const int sigs[RT_TERM_SIGNALS] = {SIGTERM, SIGINT, SIGHUP};
  int mask = 0;
  for (int i = 0; i < RT_TERM_SIGNALS; i++) {
    if (sigaction(sigs[i], NULL, &old[i]) != 0) continue;
    if (!(old[i].sa_flags & SA_SIGINFO) && old[i].sa_handler == SIG_IGN) continue; /* nohup & co.: leave it */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | (old[i].sa_flags & (SA_RESTART | SA_ONSTACK));
    /* No other signal held during ours: a program's own handler we chain to may leave by longjmp (a REPL's SIGINT),
     * which would keep them blocked on that thread for good. A second one nested on this thread waits for the same
     * flush (rt_queue_on_term_signal). */
    sigemptyset(&sa.sa_mask);
    if (sigaction(sigs[i], &sa, NULL) == 0) mask |= 1 << i;
  }
  return mask;
}

int rt_sig_is_default(const struct sigaction* old) {
  return !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
}

void rt_chain_signal(int sig, siginfo_t* si, void* uc, const struct sigaction* old) {
  if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction) old->sa_sigaction(sig, si, uc);
  } else if (old->sa_handler == SIG_DFL) {
    struct sigaction d;
    memset(&d, 0, sizeof d);
    d.sa_handler = SIG_DFL;
    sigemptyset(&d.sa_mask);
    sigaction(sig, &d, NULL);
    raise(sig); /* delivered when the handler returns */
  } else if (old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
  }
}

int rt_queue_shutdown(rt_queue* q, atomic_int* finalize_req, atomic_int* joined, pthread_t writer, long ms) {
  rt_queue_note_exit(q); /* the wait below is this long from now: the flush's deadline (rt_queue_exit_skip) */
  atomic_store(finalize_req, 1);
  rt_queue_wake(q);
  int done = rt_queue_wait_finished(q, ms); /* STUCK_GRACE_MS when an earlier wait found the writer stuck */
  int expected = 0;
  if (done && atomic_compare_exchange_strong(joined, &expected, 1)) pthread_join(writer, NULL);
  if (done) return 1;
  pthread_mutex_lock(&q->done_mu);
  int again = q->shutdown_failed;
  q->shutdown_failed = 1;
  pthread_mutex_unlock(&q->done_mu);
  return again ? -1 : 0;
}

void rt_queue_on_term_signal(rt_queue* q, atomic_int* finalize_req, int armed, int ms, int sig, siginfo_t* si,
                             void* uc, const struct sigaction* old) {
  int saved = errno;
  if (armed && rt_sig_is_default(old)) {
    /* A second signal (on another thread, or another of the three) waits for the same exit flush instead of ending
     * the process in the middle of it: `rawtrace record` forwards Ctrl-C to a program the terminal signalled too. */
    rt_queue_note_signal(q);
    if (!atomic_exchange(finalize_req, 1)) rt_queue_wake(q);
    rt_queue_wait_pipe_finished(q, ms);
  }
  rt_chain_signal(sig, si, uc, old);
  errno = saved;
}
