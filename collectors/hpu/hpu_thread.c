/*
 * rawtrace HPU collector: its thread (the queue of the program's requests, periodic pulls), the exit flush (one device
 * at a time, bounded after a termination signal) and the termination signals. Overview: rawtrace_hpu.c.
 */
#include "hpu_internal.h"
#include "rawtrace_heap.h"

#include <stdlib.h>
#include <unistd.h>

static uint64_t mono_ms(void) { return rt_clock_ns(CLOCK_MONOTONIC) / 1000000u; }

static void finalize(void) {
  rt_queue_begin_exit_flush(&G.q); /* batches no longer stop at the exit: this is the flush */
  rt_queue_drain_to(&G.q, rt_hpu_handle, rt_queue_last(&G.q));
  atomic_store(&G.state, ST_FINISHED);
  /* One device at a time: its trace taken, written and freed before the next device's is taken, so the flush holds
   * one trace, as every other pull. The Synapse side runs on a thread of its own (rt_exit_call_owned), bounded when a
   * termination signal asked for this flush (half the exit timeout for all devices together): a program thread
   * stopped in its handler while it held Synapse's lock (inside a launch) would keep synProfilerStop from returning,
   * and the file would end without END. A pull given up on is that thread's: it frees the trace if it returns. */
  long spent = 0, bound = 0;
  int lost = 0, skipped = 0;
  for (int i = 0; i < MAX_DEVICES; i++) {
    struct device* d = &G.dev[i];
    if (!d->used || !d->running) continue;
    if (rt_hpu_device_gone(d->id)) {
      rt_hpu_pull(d, REASON_EXIT, 0, 1); /* says the trace is lost */
      continue;
    }
    if (lost) { // Not again after a call that did not return: it would wait on the same lock.
      d->running = 0;
      lost++;
      continue;
    }
    if (atomic_load(&G.write_failed)) { /* a trace that could only be freed: not fetched (no unbounded Synapse call) */
      d->running = 0;
      continue;
    }
    if (rt_queue_exit_skip(&G.q, 0)) { /* the flush's time is up: not even fetched (counted, said below) */
      d->running = 0;
      continue;
    }
    struct syn_pull* p = (struct syn_pull*)rt_calloc(1, sizeof *p);
    if (!p) {
      rt_hpu_pull(d, REASON_EXIT, 0, 1); /* no memory to hand a pull over: here, unbounded */
      continue;
    }
    p->dev = d->id;
    p->final = 1;
    d->running = 0; /* also when the call does not return: a release still queued must not pull and wait on it */
    int r = rt_exit_call_owned(&G.q, rt_hpu_take_exit_pull, p, rt_hpu_drop_late_pull, G.exit_timeout, &spent, &bound);
    if (r == 0) {
      lost = 1; /* p is the late call's now */
      continue;
    }
    if (r < 0) { /* the time the calls may take after the signal is spent: not started, p still ours */
      rt_free(p);
      skipped++;
      continue;
    }
    rt_hpu_take_strings(p);
    rt_hpu_pull_write(p, d, REASON_EXIT);
    rt_free(p);
  }
  if (lost)
    rt_hpu_log(RT_V_WARN, 1, "exit flush: synProfilerStop / synProfilerGetTrace did not return within %.1f s (a thread "
               "holding Synapse's lock was stopped, e.g. by the signal being handled); the last traces of %d device(s) "
               "are not in the file", (double)bound / 1000.0, lost);
  if (skipped)
    rt_hpu_log(RT_V_WARN, 1, "exit flush: the %.1f s Synapse's calls may take after the termination signal were spent "
               "by the devices before; the last traces of %d device(s) were not taken", (double)bound / 1000.0,
               skipped);
  rt_queue_drain(&G.q, rt_hpu_handle);
  if (G.w && !atomic_load(&G.write_failed))
    rt_queue_write_exit_left(&G.q, G.w, G.verbosity, "device traces", " of them fetched", rt_hpu_wrote);
  if (G.w) {
    if (G.n_unreadable)
      rt_hpu_log(RT_V_WARN, 1, "%llu pointer(s) outside the trace buffers could not be read",
                 (unsigned long long)G.n_unreadable);
    if (!atomic_load(&G.write_failed)) rt_hpu_wrote(rt_writer_end(G.w));
    rt_writer* w = G.w; /* unset before it is freed: the fork handler must never see a freed writer */
    G.w = NULL;
    rt_writer_close(w);
    uint64_t held = 0, held_bytes = 0;
    rt_hpu_held_peak(&held, &held_bytes);
    rt_hpu_log(RT_V_INFO, 0, "wrote %.300s: %llu traces, %llu trace bytes, %llu strings; at most %llu trace buffer(s), "
               "%llu bytes, held at once", G.path, (unsigned long long)G.n_traces, (unsigned long long)G.n_bytes,
               (unsigned long long)G.n_strings, (unsigned long long)held, (unsigned long long)held_bytes);
  }
  rt_hpu_strings_free(&G.strings);
}

static void* thread_main(void* arg) {
  (void)arg;
  rt_thread_enter("rawtrace-hpu");
  G.next_pull_ms = mono_ms() + (uint64_t)G.period_ms;
  while (!atomic_load(&G.finalize_req)) {
    long wait = -1;
    if (G.period_ms > 0) {
      uint64_t now = mono_ms();
      wait = G.next_pull_ms > now ? (long)(G.next_pull_ms - now) : 0;
    }
    rt_queue_sleep(&G.q, wait);
    rt_queue_drain_once(&G.q, rt_hpu_handle); /* one batch per round: the exit request is seen under load too */
    if (G.period_ms > 0 && mono_ms() >= G.next_pull_ms && !atomic_load(&G.finalize_req)) {
      if (!atomic_load(&G.write_failed))
        for (int i = 0; i < MAX_DEVICES; i++)
          if (G.dev[i].running) rt_hpu_pull(&G.dev[i], REASON_PERIODIC, 1, 0);
      G.next_pull_ms = mono_ms() + (uint64_t)G.period_ms;
    }
    /* After a write error, a profiler still running (one a pull restarted before its writes failed, one an acquire
     * started) is stopped: Synapse would record the rest of the run for traces that can no longer be written. */
    if (atomic_load(&G.write_failed))
      for (int i = 0; i < MAX_DEVICES; i++)
        if (G.dev[i].running) rt_hpu_pull(&G.dev[i], REASON_PERIODIC, 0, 0);
  }
  finalize();
  rt_queue_finish(&G.q);
  return NULL;
}

static struct sigaction g_old_sig[RT_TERM_SIGNALS]; /* SIGTERM, SIGINT, SIGHUP */

static void finish(void) {
  if (!atomic_load(&G.thread_started) || getpid() != G.owner_pid) return;
  if (rt_queue_shutdown(&G.q, &G.finalize_req, &G.joined, G.thread, (long)(G.exit_timeout * 1000)) == 0)
    rt_hpu_log(RT_V_WARN, 0, "exit pull did not finish within %.1f s", G.exit_timeout);
}

static void on_term_signal(int sig, siginfo_t* si, void* uc) {
  int armed = atomic_load(&G.thread_started) && getpid() == G.owner_pid;
  rt_queue_on_term_signal(&G.q, &G.finalize_req, armed, (int)(G.exit_timeout * 1000), sig, si, uc,
                          &g_old_sig[rt_term_index(sig)]);
}

/* First acquire in this process: the thread, the exit hook (registered now, after Synapse's own), the handlers. */
void rt_hpu_start_collector(void) {
  rt_queue_set_exit_timeout(&G.q, G.exit_timeout); /* before the thread reads it */
  if (rt_queue_init(&G.q) != 0 || rt_thread_start(&G.thread, thread_main) != 0) {
    rt_hpu_log(RT_V_ERROR, 0, "HPU collector inactive: cannot start its thread");
    return;
  }
  G.owner_pid = getpid();
  atomic_store(&G.thread_started, 1);
  atomic_store(&G.state, ST_RUNNING);
  atexit(finish);
  if (G.handle_signals) rt_install_term_handlers(on_term_signal, g_old_sig);
}
