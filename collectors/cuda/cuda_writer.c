/*
 * rawtrace CUDA collector: the queue to the writer thread and the thread itself: chunks in order, DROPPED
 * counts, the scheduled start/stop and the signal toggle, the exit flush.
 */
#include "cuda_internal.h"
#include "rawtrace_heap.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Queue to the writer thread                                                                                         */
/* ------------------------------------------------------------------------------------------------------------------ */

void rt_cuda_enqueue(rt_item* it) { rt_queue_push(&G.q, it); }

/* A CLOCK anchor of `which`: cuptiGetTimestamp, then the system clocks right after it. */
void rt_cuda_read_anchor(uint32_t which, rt_clock_anchor_t* a) {
  uint64_t v = 0;
  if (C.GetTimestamp) C.GetTimestamp(&v);
  rt_clock_anchor(which, v, a);
}

void rt_cuda_enqueue_clock(uint32_t which) {
  rt_clock_anchor_t a;
  rt_cuda_read_anchor(which, &a);
  rt_queue_push_clock(&G.q, &a);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Writer thread: chunks, drops, control, the exit flush                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

static void on_write_error(int rc) {
  if (G.write_failed) return;
  G.write_failed = 1;
  atomic_store(&G.sink_closed, 1);
  atomic_store(&G.error, rc);
  atomic_store(&G.state, RAWTRACE_STATE_DISABLED);
  rt_cuda_logmsg(LOG_ERROR, "writing %s failed: %s; collection stopped (the file keeps every chunk written before)",
                 G.path, strerror(-rc));
  struct timespec dl = rt_deadline_ms(2000);
  if (pthread_mutex_timedlock(&G.ctl_mu, &dl) == 0) {
    if (G.collecting) {
      rt_cuda_disable_kinds_locked();
      G.collecting = 0;
    }
    G.start_at = G.stop_at = 0;
    pthread_mutex_unlock(&G.ctl_mu);
  }
}

/* Checks a writer result; counts the chunk. Returns 0 when the chunk was written. */
int rt_cuda_wrote(int rc) {
  if (rc == 0) {
    atomic_fetch_add(&G.n_chunks, 1);
    return 0;
  }
  if (rt_writer_error(G.w)) on_write_error(rt_writer_error(G.w));
  else rt_cuda_logmsg(LOG_WARN, "chunk not written: %s", strerror(-rc));
  return rc;
}
/* DROPPED chunks: CUPTI's count (reset on read) and buffers the memory cap cost since the last chunk. */
/* CUPTI's lost records not said yet, and when they were last said (mono ns; 0 = never). */
static uint64_t g_drops_unsaid, g_drops_said_ns;
#define DROPS_SAY_EVERY_NS 10000000000ull

/* Records CUPTI lost: a DROPPED chunk each time (the data), but a line (stderr and a LOG chunk) at most every 10 s,
 * summed, and at the end for what is left (`final`): under overload CUPTI loses records at every buffer. */
static void check_dropped_at(int final) {
  if (G.write_failed) return;
  /* Read by bufferCompleted and the exit flush's stop (rt_cuda_note_vendor_drops), not here: no CUPTI call here. */
  uint64_t dropped = atomic_exchange(&G.vendor_drops_pending, 0);
  if (dropped > 0) {
    atomic_fetch_add(&G.n_vendor_dropped, dropped);
    g_drops_unsaid += dropped;
    rt_cuda_wrote(rt_writer_dropped(G.w, dropped, RT_DROP_VENDOR));
  }
  uint64_t now = mono_ns();
  if (g_drops_unsaid && (final || !g_drops_said_ns || now - g_drops_said_ns >= DROPS_SAY_EVERY_NS)) {
    if (!g_drops_said_ns)
      rt_cuda_logrec(LOG_WARN, "CUPTI dropped %llu activity records (buffers not available in time)",
                     (unsigned long long)g_drops_unsaid);
    else
      rt_cuda_logrec(LOG_WARN, "CUPTI dropped %llu more activity records (%llu in all; said at most every 10 s)",
                     (unsigned long long)g_drops_unsaid, (unsigned long long)atomic_load(&G.n_vendor_dropped));
    g_drops_unsaid = 0;
    g_drops_said_ns = now;
  }
  uint64_t cap = atomic_load(&G.n_cap_drops);
  if (cap > G.cap_drops_written && !G.write_failed) {
    uint64_t delta = cap - G.cap_drops_written;
    G.cap_drops_written = cap;
    rt_cuda_wrote(rt_writer_dropped(G.w, delta, RT_DROP_MEMORY_CAP));
  }
}

static void check_dropped(void) { check_dropped_at(0); }

static void process_buffer(struct cbuf* b) {
  uint64_t t0 = mono_ns();
  if (G.write_failed) {
    atomic_fetch_add(&G.n_discarded, 1);
    return;
  }
  const uint8_t* data = cbuf_data(b);
  size_t n = b->valid;
  if (rt_queue_exit_skip(&G.q, n)) return; /* the exit flush's time is up: counted, said before END */
  G.pend_str_n = 0;
  rt_cuda_walk_buffer(data, n);
  rt_cuda_maybe_write_devices();
  if (!G.write_failed) rt_threads_write(&G.threads, G.w, rt_cuda_wrote);
  if (G.pend_str_n && !G.write_failed) {
    if (rt_cuda_wrote(rt_writer_strings(G.w, G.pend_str, (uint32_t)G.pend_str_n)) == 0)
      atomic_fetch_add(&G.n_strings, G.pend_str_n);
  }
  if (!G.write_failed && rt_cuda_wrote(rt_writer_activity(G.w, data, (uint32_t)n)) == 0) {
    atomic_fetch_add(&G.n_written, 1);
    atomic_fetch_add(&G.n_activity_bytes, n);
  } else {
    atomic_fetch_add(&G.n_discarded, 1);
  }
  check_dropped();
  uint64_t took = mono_ns() - t0;
  rt_queue_note_write(&G.q, n, took);
  atomic_fetch_add(&G.t_writer_ns, took);
}

static void handle_item(rt_item* it) {
  if (rt_item_is_common(it)) {
    if (!G.write_failed) rt_cuda_wrote(rt_item_write(G.w, it));
    rt_free(it);
    return;
  }
  switch (it->type) {
    case IT_BUFFER: {
      struct cbuf* b = (struct cbuf*)it;
      process_buffer(b);
      rt_cuda_recycle(b);
      break;
    }
    default:
      break;
  }
}

static void drain(void) { rt_queue_drain(&G.q, handle_item); }

/* 1 when stop_cupti took the control lock and stopped CUPTI (read after rt_exit_call_bounded returned 1). */
static atomic_int g_cupti_stopped;

/* Disables the kinds and flushes CUPTI under the control lock, if it can be had within 2 s (finalize's thread). */
static void stop_cupti(void) {
  struct timespec dl = rt_deadline_ms(2000);
  if (pthread_mutex_timedlock(&G.ctl_mu, &dl) != 0) return;
  if (G.collecting) rt_cuda_stop_locked();
  pthread_mutex_unlock(&G.ctl_mu);
  rt_cuda_note_vendor_drops(); /* what CUPTI lost since its last buffer */
  atomic_store(&g_cupti_stopped, 1);
}

/* Buffers the exit flush left unwritten (rt_queue_exit_skip), for the last line. */
static uint64_t g_left_at_exit;

/* Exit flush on the writer thread: stop CUPTI, drain, tail chunks, END, close. */
static void finalize(void) {
  rt_queue_begin_exit_flush(&G.q); /* batches no longer stop at the exit: this is the flush */
  /* Bounded (rt_exit_call_bounded): a termination signal handled on a program thread that holds CUPTI's lock (inside a
   * flush or a traced call) waits in its handler for this flush, so a CUPTI call needing that lock would never return
   * and the file would end without END. */
  long bound;
  int returned = rt_exit_call_bounded(&G.q, stop_cupti, G.cfg.exit_timeout, &bound);
  int stopped = returned && atomic_load(&g_cupti_stopped);
  if (!returned) {
    rt_cuda_logrec(LOG_WARN, "exit flush: CUPTI's stop and flush did not return within %.1f s (a thread holding its "
                   "lock was stopped, e.g. by the signal being handled); its last buffers are not in the file",
                   (double)bound / 1000.0);
  } else if (!stopped) {
    rt_cuda_logmsg(LOG_WARN, "exit flush: control lock busy; CUPTI's last buffers are not flushed");
  }
  /* CUPTI stopped: until the queue is empty; else it may still deliver: what is queued now. */
  if (stopped) drain();
  else rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
  if (!G.write_failed) {
    rt_cuda_maybe_write_devices();
    check_dropped_at(1);
    /* The LOG items the lines above queued (this thread's own), before END. */
    rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
    /* After the last drain (a CUPTI not stopped may still deliver: every buffer that drain left is in the count). */
    g_left_at_exit = rt_queue_write_exit_left(&G.q, G.w, rt_cuda_log_level, "activity buffers", "", rt_cuda_wrote);
    rt_clock_anchor_t a;
    rt_cuda_read_anchor(RT_CLOCK_END, &a);
    rt_cuda_wrote(rt_writer_clock(G.w, &a));
    rt_cuda_wrote(rt_writer_end(G.w));
  }
  atomic_store(&G.sink_closed, 1);
  /* Unset before it is freed: a fork handler (rt_cuda_on_fork_child) must never see a freed writer. */
  rt_writer* w = G.w;
  G.w = NULL;
  int rc = rt_writer_close(w);
  if (rc && !G.write_failed) rt_cuda_logmsg(LOG_ERROR, "closing %s: %s", G.path, strerror(-rc));
  if (!G.write_failed && !G.disabled) atomic_store(&G.state, RAWTRACE_STATE_FINISHED);
  rt_cuda_logmsg(LOG_INFO, "wrote %s: %llu buffers, %llu activity bytes, %llu records dropped by CUPTI, %llu "
                 "buffers over the memory cap, %llu left at exit", G.path, (unsigned long long)atomic_load(&G.n_written),
                 (unsigned long long)atomic_load(&G.n_activity_bytes),
                 (unsigned long long)atomic_load(&G.n_vendor_dropped), (unsigned long long)atomic_load(&G.n_cap_drops),
                 (unsigned long long)g_left_at_exit);
}

/*
 * The control lock, on the writer (rt_queue_lock): not waited for once a signal asked for the exit flush.
 * rawtrace_start / _stop hold it across CUPTI's enable, disable and flush; a program thread the signal stopped in there
 * holds it for ever while the handler waits for the flush.
 */
static int lock_ctl(void) { return rt_queue_lock(&G.q, &G.ctl_mu); }

static void writer_control(void) {
  unsigned t = atomic_load(&G.toggle_req);
  while (G.toggles_seen != t) {
    G.toggles_seen++;
    if (!lock_ctl()) return;
    if (G.collecting) rt_cuda_stop_locked();
    else rt_cuda_start_locked();
    pthread_mutex_unlock(&G.ctl_mu);
  }
  if (!lock_ctl()) return;
  uint64_t now = mono_ns();
  if (G.start_at && now >= G.start_at) {
    G.start_at = 0;
    rt_cuda_start_locked();
  }
  if (G.stop_at && now >= G.stop_at) {
    G.stop_at = 0;
    rt_cuda_stop_locked();
  }
  pthread_mutex_unlock(&G.ctl_mu);
  if (atomic_exchange(&G.sig_flush_req, 0)) {
    C.FlushAll(0);
    /* What the flush queued, not until the queue is empty: the program's threads may keep it full. */
    rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
    rt_queue_notify(&G.q);
  }
}

/* Milliseconds until the next scheduled start/stop, or -1 when none. */
static long next_wait_ms(void) {
  if (!lock_ctl()) return 0;
  uint64_t next = 0;
  if (G.start_at) next = G.start_at;
  if (G.stop_at && (!next || G.stop_at < next)) next = G.stop_at;
  pthread_mutex_unlock(&G.ctl_mu);
  if (!next) return -1;
  uint64_t now = mono_ns();
  if (next <= now) return 0;
  uint64_t ms = (next - now + 999999) / 1000000;
  return ms > 500 ? 500 : (long)ms; /* re-checked against CLOCK_MONOTONIC at least twice a second */
}

void* rt_cuda_writer_main(void* arg) {
  (void)arg;
  rt_thread_enter("rawtrace-writer");
  for (;;) {
    long ms = next_wait_ms();
    rt_queue_sleep(&G.q, ms);
    if (atomic_load(&G.finalize_req)) break;
    writer_control();
    /* One batch per round: an exit request, a signal's flush or a scheduled stop is seen between batches even
     * while buffers arrive as fast as they are written (each push posts the semaphore: no wake-up is lost). */
    rt_queue_drain_once(&G.q, handle_item);
    if (atomic_load(&G.finalize_req)) break;
  }
  finalize();
  rt_queue_finish(&G.q);
  return NULL;
}
