/*
 * rawtrace ROCm collector: the queue to the writer thread and the thread itself: kernel symbols and ROCTx
 * messages before the ACTIVITY chunk that needs them, DROPPED counts after it, the exit flush.
 */
#include "rocm_internal.h"
#include "rawtrace_heap.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Queue and writer thread                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

void rt_rocm_enqueue(rt_item* it) { rt_queue_push(&G.q, it); }

int rt_rocm_small_reserve(size_t n) {
  uint64_t cap = G.cfg.max_memory / 4 > (1u << 20) ? G.cfg.max_memory / 4 : (1u << 20);
  if (atomic_fetch_add(&G.small_bytes, n) + n <= cap) return 1;
  atomic_fetch_sub(&G.small_bytes, n);
  atomic_fetch_add(&G.n_capped, 1);
  return 0;
}

void rt_rocm_free_small(rt_item* it) {
  if (!it) return;
  size_t n = it->type == IT_KSYM ? sizeof(struct ksym_item) + ((struct ksym_item*)it)->len + 1
                                 : sizeof(struct marker_item) + ((struct marker_item*)it)->len + 1;
  atomic_fetch_sub(&G.small_bytes, n);
  rt_free(it);
}

void rt_rocm_lost_small(uint64_t n) {
  if (n) atomic_fetch_add(&G.n_capped, n);
}

void rt_rocm_read_anchor(uint32_t which, rt_clock_anchor_t* a) {
  uint64_t v = 0;
  if (!S.get_timestamp || S.get_timestamp(&v) != RT_ROCP_STATUS_SUCCESS) v = rt_clock_ns(CLOCK_BOOTTIME);
  rt_clock_anchor(which, v, a);
}

void rt_rocm_enqueue_clock(uint32_t which) {
  rt_clock_anchor_t a;
  rt_rocm_read_anchor(which, &a);
  rt_queue_push_clock(&G.q, &a);
}

static void on_write_error(int rc) {
  if (atomic_exchange(&G.write_failed, 1)) return;
  atomic_store(&G.sink_closed, 1);
  atomic_store(&G.error, rc);
  atomic_store(&G.state, ST_DISABLED);
  rt_rocm_logmsg(RT_V_ERROR, "writing %s failed: %s; collection stopped (the file keeps every chunk written before)",
                 G.path, strerror(-rc));
}

/* Checks a writer result and counts the chunk. Returns 0 when the chunk was written. */
int rt_rocm_wrote(int rc) {
  if (rc == 0) {
    atomic_fetch_add(&G.n_chunks, 1);
    return 0;
  }
  if (rt_writer_error(G.w)) on_write_error(rt_writer_error(G.w));
  else rt_rocm_logmsg(RT_V_WARN, "chunk not written: %s", strerror(-rc));
  return rc;
}

static void write_pending(void);

/*
 * Appends `it` to the pending list `*v` (`*n` of `*cap`); 0, or -1 when it could not be kept. When the list cannot
 * grow (memory ran out), what is pending is written now, which empties the list; an item a list never had room for
 * is freed and counted as lost (DROPPED, memory cap).
 */
static int pend(void*** v, size_t* n, size_t* cap, void* it) {
  if (*n == *cap) {
    size_t ncap = *cap ? *cap * 2 : 64;
    /* "pend-more": only a list that already has room fails to grow (the write-early path keeps every item). */
    int fault = rt_rocm_fault("pend") || (*cap && rt_rocm_fault("pend-more"));
    void** more = fault ? NULL : (void**)rt_realloc(*v, ncap * sizeof *more);
    if (more) {
      *v = more;
      *cap = ncap;
    } else {
      write_pending();
      if (*n == *cap) {
        rt_rocm_free_small((rt_item*)it);
        rt_rocm_lost_small(1);
        return -1;
      }
    }
  }
  (*v)[(*n)++] = it;
  return 0;
}

#define KSYM_FIXED 48u

/*
 * KERNEL_SYMBOLS (§13) and STRINGS (ROCTx messages keyed by correlation id) for everything pending. Items a chunk
 * could not be made for (memory ran out) are counted as lost (DROPPED, memory cap); after a write error nothing is
 * written or counted any more.
 */
static void write_pending(void) {
  if (G.pend_ksym_n && !G.write_failed) {
    int written = 0;
    rt_buf b;
    rt_buf_init(&b);
    rt_buf_u32(&b, (uint32_t)G.pend_ksym_n);
    rt_buf_u32(&b, KSYM_FIXED);
    for (size_t i = 0; i < G.pend_ksym_n; i++) {
      const struct ksym_item* k = G.pend_ksym[i];
      rt_buf_u64(&b, k->kernel_id);
      rt_buf_u64(&b, k->code_object_id);
      rt_buf_u64(&b, k->kernel_object);
      rt_buf_u32(&b, k->kernarg);
      rt_buf_u32(&b, k->lds);
      rt_buf_u32(&b, k->scratch);
      rt_buf_u32(&b, k->sgpr);
      rt_buf_u32(&b, k->arch_vgpr);
      rt_buf_u32(&b, k->accum_vgpr);
      rt_buf_str(&b, k->name, k->len);
    }
    if (rt_rocm_fault("ksyms")) b.oom = 1;
    if (!b.oom && b.len <= RT_MAX_CHUNK_PAYLOAD)
      written = rt_rocm_wrote(rt_writer_chunk(G.w, RT_CHUNK_KERNEL_SYMBOLS, b.data, (uint32_t)b.len)) == 0;
    rt_buf_free(&b);
    if (!written && !G.write_failed) rt_rocm_lost_small(G.pend_ksym_n);
  }
  for (size_t i = 0; i < G.pend_ksym_n; i++) rt_rocm_free_small(&G.pend_ksym[i]->it);
  G.pend_ksym_n = 0;
  if (G.pend_msg_n && !G.write_failed) {
    int written = 0;
    rt_string* s = rt_rocm_fault("strings") ? NULL : (rt_string*)rt_malloc(G.pend_msg_n * sizeof *s);
    if (s) {
      for (size_t i = 0; i < G.pend_msg_n; i++) {
        s[i].ptr = G.pend_msg[i]->corr;
        s[i].bytes = G.pend_msg[i]->msg;
        s[i].len = G.pend_msg[i]->len;
      }
      written = rt_rocm_wrote(rt_writer_strings(G.w, s, (uint32_t)G.pend_msg_n)) == 0;
      rt_free(s);
    }
    if (!written && !G.write_failed) rt_rocm_lost_small(G.pend_msg_n);
  }
  for (size_t i = 0; i < G.pend_msg_n; i++) rt_rocm_free_small(&G.pend_msg[i]->it);
  G.pend_msg_n = 0;
}

/* DROPPED chunks for what the SDK reported and what the memory cap cost since the last ones. */
static void check_dropped(void) {
  uint64_t v = atomic_load(&G.n_vendor_dropped);
  if (v > G.vendor_drops_written && !G.write_failed) {
    uint64_t d = v - G.vendor_drops_written;
    G.vendor_drops_written = v;
    rt_rocm_logrec(RT_V_WARN, "rocprofiler-sdk dropped %llu records (buffer full)", (unsigned long long)d);
    rt_rocm_wrote(rt_writer_dropped(G.w, d, RT_DROP_VENDOR));
  }
  uint64_t c = atomic_load(&G.n_capped);
  if (c > G.cap_drops_written && !G.write_failed) {
    uint64_t d = c - G.cap_drops_written;
    G.cap_drops_written = c;
    rt_rocm_wrote(rt_writer_dropped(G.w, d, RT_DROP_MEMORY_CAP));
  }
}

/*
 * Names the threads of API records in `b` (THREAD_NAMES, before the ACTIVITY chunk): the one field read in process,
 * thread_id of the API record layout (rocprofiler_abi.h: @56 in 1.0, @48 in 0.5), only within the record's size.
 */
static void note_threads(const struct cbuf* b) {
  const uint8_t* p = (const uint8_t*)b + CBUF_HDR;
  size_t off = G.v1 ? offsetof(rt_rocp_api_record_v1, thread_id) : offsetof(rt_rocp_api_record_v0, thread_id);
  for (size_t o = 0; o + RECORD_HDR <= b->used;) {
    uint32_t kind;
    uint64_t size, tid;
    memcpy(&kind, p + o + 4, 4);
    memcpy(&size, p + o + 8, 8);
    if (kind < MAX_KINDS && G.api_kind[kind] && size >= off + 8) {
      memcpy(&tid, p + o + RECORD_HDR + off, 8);
      rt_threads_note(&G.threads, (uint32_t)G.owner_pid, (uint32_t)tid);
    }
    o += RECORD_HDR + ((size_t)size + 7u) / 8u * 8u;
  }
}

static void handle_item(rt_item* it) {
  if (rt_item_is_common(it)) {
    if (!G.write_failed) rt_rocm_wrote(rt_item_write(G.w, it));
    rt_free(it);
    return;
  }
  switch (it->type) {
    case IT_BUFFER: {
      struct cbuf* b = (struct cbuf*)it;
      /* The exit flush's time up: left, counted, said before END (rt_queue_exit_skip). */
      if (!G.write_failed && !rt_queue_exit_skip(&G.q, b->used)) {
        uint64_t t0 = rt_clock_ns(CLOCK_MONOTONIC);
        note_threads(b);
        rt_threads_write(&G.threads, G.w, rt_rocm_wrote);
        write_pending();
        if (rt_rocm_wrote(rt_writer_activity(G.w, cbuf_data(b), (uint32_t)b->used)) == 0)
          atomic_fetch_add(&G.n_activity_bytes, b->used);
        check_dropped();
        rt_queue_note_write(&G.q, b->used, rt_clock_ns(CLOCK_MONOTONIC) - t0);
      }
      rt_rocm_recycle(b);
      return;
    }
    case IT_KSYM:
      if (pend((void***)&G.pend_ksym, &G.pend_ksym_n, &G.pend_ksym_cap, it) == 0 && G.pend_ksym_n >= MAX_PENDING)
        write_pending();
      return;
    case IT_MARKER:
      if (pend((void***)&G.pend_msg, &G.pend_msg_n, &G.pend_msg_cap, it) == 0 && G.pend_msg_n >= MAX_PENDING)
        write_pending();
      return;
    default:
      break;
  }
  rt_free(it);
}

static void drain(void) { rt_queue_drain(&G.q, handle_item); }

/* Stops the context and flushes the SDK buffer into our queue (ctl_mu held). */
void rt_rocm_stop_locked(void) {
  if (!G.running) return;
  S.stop_context(G.ctx);
  G.running = 0;
  S.flush_buffer(G.buf);
  if (atomic_load(&G.state) == ST_RUNNING) atomic_store(&G.state, ST_STOPPED);
}

/* 1 when stop_sdk took the control lock and stopped and flushed the SDK (read after rt_exit_call_bounded returned 1). */
static atomic_int g_sdk_stopped;

/* Stops and flushes the SDK under the control lock, if it can be had within 2 s. On a thread of its own (finalize). */
static void stop_sdk(void) {
  struct timespec dl = rt_deadline_ms(2000);
  if (pthread_mutex_timedlock(&G.ctl_mu, &dl) != 0) return;
  rt_rocm_stop_locked();
  pthread_mutex_unlock(&G.ctl_mu);
  atomic_store(&g_sdk_stopped, 1);
}

/* Exit flush on the writer thread: stop and flush the SDK, drain, tail chunks, END, close. */
static void finalize(void) {
  rt_queue_begin_exit_flush(&G.q); /* batches no longer stop at the exit: this is the flush */
  /* Bounded: a termination signal handled on a program thread that holds one of the SDK's locks (inside a traced
   * call, or a flush delivering into our callback) waits in its handler for this flush, so an SDK call needing that
   * lock would never return and the file would end without END (rt_exit_call_bounded). */
  long bound;
  int returned = rt_exit_call_bounded(&G.q, stop_sdk, G.cfg.exit_timeout, &bound);
  int stopped = returned && atomic_load(&g_sdk_stopped);
  if (!returned) {
    rt_rocm_logrec(RT_V_WARN, "exit flush: the SDK's stop and flush did not return within %.1f s (a thread holding "
                   "its lock was stopped, e.g. by the signal being handled); its last records are not in the file",
                   (double)bound / 1000.0);
  } else if (!stopped) {
    rt_rocm_logrec(RT_V_WARN, "exit flush: control lock busy; the SDK's last records are not flushed");
  }
  /* Not waited for once a signal asked for the flush (rt_queue_lock): a buffer callback stopped by it while it copies
   * holds fill_mu. A normal exit waits for the callback. */
  if (rt_queue_lock(&G.q, &G.fill_mu)) {
    rt_rocm_ship_fill_locked();
    pthread_mutex_unlock(&G.fill_mu);
  } else {
    rt_rocm_logrec(RT_V_WARN, "exit flush: a buffer callback was stopped while copying; its records are not in the file");
  }
  /* The SDK stopped: until the queue is empty; else it may still deliver: what is queued now. */
  if (stopped) drain();
  else rt_queue_drain_to(&G.q, handle_item, rt_queue_last(&G.q));
  atomic_store(&G.sink_closed, 1);
  drain(); /* what callbacks queued before they saw sink_closed */
  uint64_t left = 0;
  if (!G.write_failed) {
    write_pending();
    check_dropped();
    left = rt_queue_write_exit_left(&G.q, G.w, G.verbosity, "record buffers", "", rt_rocm_wrote);
    rt_clock_anchor_t a;
    rt_rocm_read_anchor(RT_CLOCK_END, &a);
    rt_rocm_wrote(rt_writer_clock(G.w, &a));
    rt_rocm_wrote(rt_writer_end(G.w));
  }
  /* Unset before it is freed: a fork handler (rt_rocm_on_fork_child) must never see a freed writer. */
  rt_writer* w = G.w;
  G.w = NULL;
  int rc = rt_writer_close(w);
  if (rc && !G.write_failed) rt_rocm_logmsg(RT_V_ERROR, "closing %s: %s", G.path, strerror(-rc));
  if (!G.write_failed && atomic_load(&G.state) != ST_DISABLED) atomic_store(&G.state, ST_FINISHED);
  rt_rocm_logmsg(RT_V_INFO, "wrote %s: %llu records, %llu dropped by the SDK, %llu over the memory cap, %llu "
                 "buffers left at exit", G.path, (unsigned long long)atomic_load(&G.n_records),
                 (unsigned long long)atomic_load(&G.n_vendor_dropped), (unsigned long long)atomic_load(&G.n_capped),
                 (unsigned long long)left);
}

void* rt_rocm_writer_main(void* arg) {
  (void)arg;
  rt_thread_enter("rawtrace-writer");
  int stopped_after_error = 0;
  while (!atomic_load(&G.finalize_req)) {
    rt_queue_sleep(&G.q, -1);
    rt_queue_drain_once(&G.q, handle_item); /* one batch per round: the exit request is seen under load too */
    if (G.write_failed && !stopped_after_error) {
      /* Nothing more can be written: stop the SDK's tracing too (it intercepts every HIP call and dispatch), as
       * "collection stopped" says; rawtrace_rocm_start refuses from now on. Under the control lock, if it can be had
       * within 2 s (the writer never holds it otherwise). */
      stopped_after_error = 1;
      struct timespec dl = rt_deadline_ms(2000);
      if (pthread_mutex_timedlock(&G.ctl_mu, &dl) == 0) {
        if (G.running) {
          S.stop_context(G.ctx);
          G.running = 0;
        }
        pthread_mutex_unlock(&G.ctl_mu);
      }
    }
  }
  finalize();
  rt_queue_finish(&G.q);
  return NULL;
}
