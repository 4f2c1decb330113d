/**
 * The hand-over between a collector's callbacks and its one writer thread, shared by the collectors: a FIFO of items
 * under a mutex, a semaphore that wakes the writer, the writer's progress (so a caller can wait until what it queued
 * is written), and a pipe that signal handlers can wait on. Plus the SIGTERM / SIGINT chaining both collectors use.
 *
 * Threads: rt_queue_push from any thread (not from a signal handler); rt_queue_drain from the writer thread only;
 * rt_queue_wait / rt_queue_wait_finished from any other thread; rt_queue_wake, rt_queue_wait_pipe and
 * rt_queue_drain_pipe are async-signal-safe.
 */
#ifndef RAWTRACE_QUEUE_H
#define RAWTRACE_QUEUE_H

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "rawtrace_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Header of every queued item; the collector embeds it first in its own item structs. */
typedef struct rt_item {
  struct rt_item* next;
  uint64_t seq;  /**< set by rt_queue_push: 1, 2, … */
  uint32_t type; /**< the collector's item kind */
} rt_item;

/** Item types the queue itself defines (collectors number theirs below 0x100). */
enum { RT_ITEM_CLOCK = 0x100, RT_ITEM_LOG = 0x101 };

/** The queue and the writer's progress. Zero-initialize, then rt_queue_init. */
typedef struct rt_queue {
  pthread_mutex_t mu;
  rt_item *head, *tail;
  uint64_t seq; /* items pushed */
  sem_t wake;
  int ready;
  pthread_mutex_t done_mu;
  pthread_cond_t done_cv;
  /* Written under done_mu; atomic so that a signal handler's wait (rt_queue_wait_pipe) can read and mark them. */
  _Atomic uint64_t done_seq; /* highest item handled */
  atomic_int finished;       /* the writer exited */
  atomic_int stalled;        /* a bounded wait for the writer timed out, at done_seq == stall_seq */
  atomic_int in_signal;      /* a termination signal's handler asked for the exit flush (rt_queue_note_signal) */
  _Atomic uint64_t stall_seq;
  int shutdown_failed; /* an rt_queue_shutdown returned without the writer finished */
  /* rt_queue_lock gave up on mu / done_mu after a signal: held by a thread the signal stopped, so later tries of that
   * lock only try it (each full try would cost 100 ms again: per item of a batch, per batch). */
  atomic_int mu_lost, done_mu_lost;
  int pipe[2];       /* one byte per notification, for signal handlers */
  dev_t pipe_dev;    /* the pipe's device and inode: each use checks its numbers still name it (the program may have */
  ino_t pipe_ino;    /* closed them and opened its own files there; they are never read or written then) */
  /* The exit flush's deadline (rt_queue_exit_skip): when the exit began, and the writer's own measures. */
  long exit_ms;              /* the collector's exit timeout (ms); 0 = no deadline */
  _Atomic uint64_t exit_ns;  /* CLOCK_MONOTONIC ns when the exit began (a signal, an exit hook); 0 = not yet */
  uint64_t ps_per_byte;      /* writer: how long its recent buffer writes took per byte (ps; 0 = none measured) */
  int exit_flushing;         /* writer: its exit flush began (rt_queue_begin_exit_flush) */
  int exit_skipping;         /* writer: the deadline was reached; every later buffer is left unwritten */
  uint64_t exit_left, exit_left_bytes;           /* writer: buffers (and their bytes) left unwritten */
  uint64_t exit_left_said, exit_left_bytes_said; /* writer: how many of them were written out */
} rt_queue;

/** Sets up the locks, the semaphore and the pipe. Returns 0, or -errno (the queue is then unusable). */
int rt_queue_init(rt_queue* q);

/**
 * Writer side: locks `m`, a lock program threads hold briefly (the queue's, its done lock, a buffer pool's). Returns
 * 1 with it held, or 0 — only once a termination signal asked for the exit flush (rt_queue_note_signal) and `m`
 * stayed held for 100 ms more: a program thread the signal stopped while it held `m` waits in the handler for this
 * flush and never lets go, so the writer goes on without it (what `m` guards left as it is) instead of never writing
 * END.
 */
int rt_queue_lock(rt_queue* q, pthread_mutex_t* m);

/** Appends `it` (owned by the queue's consumer from now on) and wakes the writer. */
void rt_queue_push(rt_queue* q, rt_item* it);

/** Sequence number of the last item pushed (what a caller waits for). */
uint64_t rt_queue_last(rt_queue* q);

/** Wakes the writer without an item. Async-signal-safe. */
void rt_queue_wake(rt_queue* q);

/** Writer: waits for a wake-up (at most `ms` milliseconds; < 0 = no limit). */
void rt_queue_sleep(rt_queue* q, long ms);

/**
 * Writer: hands every queued item, in order, to `handle` (which owns it), until the queue is empty. Only for when the
 * producers have stopped (the exit flush, after the vendor was stopped): while they keep queuing at least as fast as
 * the items are written, the queue is never empty.
 */
void rt_queue_drain(rt_queue* q, void (*handle)(rt_item* it));

/**
 * Writer: hands the items queued now (one batch, in order) to `handle`; items queued meanwhile wait for the next
 * call. Returns how many. The writer loops use it, so that between batches they see an exit request, a signal's flush
 * or a scheduled stop even when the program's threads queue buffers as fast as they are written. Once the exit began
 * (rt_queue_note_exit) and until the writer's exit flush begins (rt_queue_begin_exit_flush), a batch stops after the
 * item in hand and the rest stays queued, in order: a batch can take longer than the exit timeout to write, and the
 * flush must first stop the vendor library, within its share of that time.
 */
size_t rt_queue_drain_once(rt_queue* q, void (*handle)(rt_item* it));

/** Writer: hands items to `handle`, batch by batch, until every item up to `target` (rt_queue_last) was handled. */
void rt_queue_drain_to(rt_queue* q, void (*handle)(rt_item* it), uint64_t target);

/**
 * Waits until the writer handled every item up to `target`, or exited. Returns 0, or -1 after `ms`. A writer that
 * handled no item during a whole wait that timed out is taken as stuck (a write that does not return: a FIFO nobody
 * reads, a hung file system): later waits give it 1 s, and `ms` again once it handles an item, so that the program
 * does not wait the whole time again and again for a dead output, and does for a slow one.
 */
int rt_queue_wait(rt_queue* q, uint64_t target, long ms);

/** Writer: marks it exited, wakes every waiter and the pipe. */
void rt_queue_finish(rt_queue* q);

/** Whether the writer exited (rt_queue_finish was called). */
int rt_queue_is_finished(rt_queue* q);

/** Waits (at most `ms`; 1 s for a stuck writer, see rt_queue_wait) until the writer exited. Returns 1 when it did. */
int rt_queue_wait_finished(rt_queue* q, long ms);

/**
 * Queues a CLOCK anchor (a copy of `a`). Returns 0, or -1 when out of memory or, after a termination signal
 * (rt_queue_note_signal), when the queue's lock is held by a thread the signal stopped: nothing queued then, no wait
 * past the writer's own one try of the lock (the writer logs during the exit flush).
 */
int rt_queue_push_clock(rt_queue* q, const rt_clock_anchor_t* a);

/** Queues a LOG message (`level` RT_LOG_*, cut to 511 bytes). Returns 0, or -1 as rt_queue_push_clock. */
int rt_queue_push_log(rt_queue* q, uint32_t level, const char* msg);

/** Whether `it` is one of the queue's own items (RT_ITEM_CLOCK, RT_ITEM_LOG). */
int rt_item_is_common(const rt_item* it);

/** Writes the CLOCK or LOG chunk of a common item. Returns as rt_writer_chunk (-EINVAL for another item). */
int rt_item_write(rt_writer* w, const rt_item* it);

/** Starts the writer thread `fn` with every signal blocked (it then never runs a handler). Returns 0 or an errno. */
int rt_thread_start(pthread_t* t, void* (*fn)(void*));

/**
 * An exit flush's call into the vendor library, fn() on a thread of its own (every signal blocked): a termination
 * signal handled on a program thread that holds one of the library's locks (inside a traced call, or a flush that
 * delivers into our callback) would otherwise block the flush, and so the handler, until the exit timeout, and the
 * process would end without END. Waited for as long as it takes while no termination signal asked for the flush (a
 * normal exit: no program thread is stopped in a handler, so a slow flush is a busy one), and from the moment one did
 * (rt_queue_note_signal, before the call or during it) at most half of `exit_timeout_s` (at least 0.5 s; stored in
 * `*bound_ms`), which leaves the other half to the rest of the flush. Returns 1 when fn returned, 0 when it did not:
 * its thread is left running (detached) and may still finish later, so what fn touches must stay valid for the
 * process's life (globals). rt_exit_call_owned for one call that makes nothing to free.
 */
int rt_exit_call_bounded(rt_queue* q, void (*fn)(void), double exit_timeout_s, long* bound_ms);

/**
 * rt_exit_call_bounded for a flush that calls the vendor library several times (once per device, writing each result
 * before the next call) and whose calls make something to free: fn(arg) runs on a thread of its own, waited for the
 * same way, but one bound serves every call of the flush — `*spent_ms` (0 before its first call) is how long its
 * earlier calls ran after a termination signal asked for the flush, and this call adds its own share.
 *
 * Who owns `arg` (and what fn leaves in it) is decided once, atomically, between the waiter and the call's thread:
 * when this returns 1, fn returned and `arg` is the caller's; when it returns 0 (the waiter gave up), `arg` belongs to
 * the call's thread from then on — the caller must not touch it again — and if fn returns later, that thread calls
 * orphan(arg) (NULL: nothing to free), which frees what fn made and `arg`. What fn touches besides `arg` must stay
 * valid for the process's life (globals). With no thread to spare, fn(arg) runs on the caller's, unbounded (1).
 * Returns -1, starting nothing, when a signal asked for the flush and `*spent_ms` already reaches the bound: fn never
 * ran and `arg` is still the caller's.
 */
int rt_exit_call_owned(rt_queue* q, void (*fn)(void* arg), void* arg, void (*orphan)(void* arg), double exit_timeout_s,
                       long* spent_ms, long* bound_ms);

/** Marks that a termination signal's handler asks for the exit flush (before it wakes the writer); the exit begins
 * now unless it began before (rt_queue_note_exit). Async-signal-safe. */
void rt_queue_note_signal(rt_queue* q);

/** The collector's RAWTRACE_EXIT_TIMEOUT (seconds), which bounds the exit flush (rt_queue_exit_skip). Before the writer
 * starts. */
void rt_queue_set_exit_timeout(rt_queue* q, double seconds);

/** Marks the moment the exit began — the first call only (a termination signal, an exit hook: rt_queue_shutdown and
 * rt_queue_note_signal call it). Async-signal-safe. */
void rt_queue_note_exit(rt_queue* q);

/**
 * Writer, before it writes a buffer of `bytes`: whether to leave it unwritten because the exit flush's time is up.
 * The process waits for the flush at most the exit timeout from the moment the exit began, then ends — a file
 * without END, cut in a chunk. So once the exit began, a buffer whose write would, at the speed of the writer's
 * recent writes (rt_queue_note_write), end later than the timeout less a reserve for the file's last chunks (a
 * tenth of the timeout, at least 200 ms) is left, and so is every buffer after it: returns 1 and counts it
 * (rt_queue_write_exit_left). Returns 0 (write it) before the exit, without a deadline, and while it fits.
 */
int rt_queue_exit_skip(rt_queue* q, uint64_t bytes);

/** Writer: its exit flush begins — batches no longer stop at the exit (rt_queue_drain_once). */
void rt_queue_begin_exit_flush(rt_queue* q);

/** Writer: a buffer of `bytes` took `ns` to write (the speed rt_queue_exit_skip predicts from). */
void rt_queue_note_write(rt_queue* q, uint64_t bytes, uint64_t ns);

/**
 * Writer, after its last drain and before END: what rt_queue_exit_skip left since the last call, written to `w` as one
 * DROPPED chunk (RT_DROP_EXIT_TIME) and a LOG warning, the same line on stderr (per `verbosity`): "exit flush: N
 * <what> (B bytes<bytes_note>) left unwritten: …". Each write's result goes through `wrote` (the collector's check).
 * Writes nothing when none was left. Returns how many.
 */
uint64_t rt_queue_write_exit_left(rt_queue* q, rt_writer* w, int verbosity, const char* what, const char* bytes_note,
                                  int (*wrote)(int rc));

/** First call of a collector thread: blocks every signal, names the thread `name` (at most 15 characters). */
void rt_thread_enter(const char* name);

/** Writes one notification byte to the pipe. Async-signal-safe. */
void rt_queue_notify(rt_queue* q);

/**
 * Waits up to `ms` for a notification and consumes it. As rt_queue_wait: a writer that handles no item during a
 * whole wait that times out is marked stuck, and a wait on a writer still stuck lasts STUCK_GRACE_MS (1 s) unless
 * it handles an item meanwhile — so a signal handler's wait and the exit hooks' share what an earlier one found.
 * Async-signal-safe.
 */
void rt_queue_wait_pipe(rt_queue* q, int ms);

/**
 * rt_queue_wait_pipe until the writer has finished (rt_queue_finish), within `ms` in all: the exit flush's wait of a
 * termination signal's handler. Other notifications (a partial flush's) are consumed on the way, not taken for the
 * finish. Async-signal-safe.
 */
void rt_queue_wait_pipe_finished(rt_queue* q, int ms);

/** Consumes pending notifications. Async-signal-safe. */
void rt_queue_drain_pipe(rt_queue* q);

/** The signals after which a collector finishes its file before the process dies: SIGTERM, SIGINT, SIGHUP. */
#define RT_TERM_SIGNALS 3

/** The index of `sig` among the {@link RT_TERM_SIGNALS} (0 SIGTERM, 1 SIGINT, 2 SIGHUP). */
int rt_term_index(int sig);

/**
 * Installs `handler` (SA_SIGINFO) for SIGTERM, SIGINT and SIGHUP (a closed terminal, an ssh session that drops),
 * saving the previous dispositions in `old[rt_term_index(sig)]`; a signal the process ignores (nohup) is left alone.
 * Returns a bit mask of the signals installed (1 << index).
 */
int rt_install_term_handlers(void (*handler)(int, siginfo_t*, void*), struct sigaction old[RT_TERM_SIGNALS]);

/** Whether `old` is the default disposition (the process dies of the signal). */
int rt_sig_is_default(const struct sigaction* old);

/**
 * The end of a chained handler: calls the previous handler `old`, or for the default disposition restores it and
 * raises the signal again (delivered when the handler returns). Async-signal-safe.
 */
void rt_chain_signal(int sig, siginfo_t* si, void* uc, const struct sigaction* old);

/**
 * A collector's exit hook: sets `*finalize_req`, wakes the writer thread `writer` and waits (at most `ms`) until it
 * finished, then joins it unless `*joined` says it was joined before. A writer found stuck by an earlier wait gets
 * 1 s (rt_queue_wait): a second exit hook, or an exit after a flush that timed out on a dead output, does not wait
 * the whole time again. Returns 1 when the writer finished, 0 when it did not (the first time: callers warn), -1 when
 * it did not and an earlier call already returned 0 (callers stay silent).
 */
int rt_queue_shutdown(rt_queue* q, atomic_int* finalize_req, atomic_int* joined, pthread_t writer, long ms);

/**
 * The body of a collector's SIGTERM / SIGINT / SIGHUP handler. When `armed` (the writer thread runs in this process) and
 * `old` (the disposition before ours) is the default one: sets `*finalize_req` (waking the writer the first time) and
 * waits up to `ms` on the pipe for it to finish the file — a second signal, or a signal during the exit hook's
 * flush, waits for the same flush rather than ending the process in the middle of it. Then chains to `old`
 * (rt_chain_signal). Keeps errno. Async-signal-safe.
 */
void rt_queue_on_term_signal(rt_queue* q, atomic_int* finalize_req, int armed, int ms, int sig, siginfo_t* si,
                             void* uc, const struct sigaction* old);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_QUEUE_H */
