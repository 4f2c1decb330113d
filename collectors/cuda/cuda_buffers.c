/*
 * rawtrace CUDA collector: the buffer pool bounded by RAWTRACE_MAX_MEMORY and CUPTI's bufferRequested and
 * bufferCompleted callbacks (no I/O, no allocation beyond the pool).
 */
#include "cuda_internal.h"
#include "rawtrace_heap.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Buffer pool and CUPTI callbacks                                                                                    */
/* ------------------------------------------------------------------------------------------------------------------ */

static struct cbuf* cbuf_alloc(size_t size, uint32_t flags) {
  void* p = NULL;
  if (posix_memalign(&p, 64, CBUF_HDR + size) != 0 || !p) return NULL;
  struct cbuf* b = (struct cbuf*)p;
  memset(b, 0, sizeof *b);
  b->magic = CBUF_MAGIC;
  b->flags = flags;
  b->size = size;
  return b;
}

/* An emergency-reserve buffer (at most RESERVE_MAX_SIZE), or NULL. */
struct cbuf* rt_cuda_reserve_alloc(void) {
  size_t sz = G.cfg.buffer_size;
  return cbuf_alloc(sz < RESERVE_MAX_SIZE ? sz : RESERVE_MAX_SIZE, CBUF_RESERVE);
}

/* Returns a buffer to the pool (or frees it). Any thread. */
void rt_cuda_recycle(struct cbuf* b) {
  /* The pool's lock held by a thread a termination signal stopped (inside bufferRequested): freed, uncounted. */
  if (!rt_queue_lock(&G.q, &G.pool_mu)) {
    rt_free(b);
    return;
  }
  if (b->flags & CBUF_RESERVE) {
    b->next_free = G.reserve;
    G.reserve = b;
    pthread_mutex_unlock(&G.pool_mu);
    return;
  }
  if (G.free_count < POOL_KEEP && b->size == G.cfg.buffer_size) {
    b->next_free = G.free_list;
    G.free_list = b;
    G.free_count++;
    pthread_mutex_unlock(&G.pool_mu);
    return;
  }
  G.bytes_alloc -= b->size + CBUF_HDR;
  pthread_mutex_unlock(&G.pool_mu);
  rt_free(b);
}

void CUPTIAPI rt_cuda_on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  size_t sz = G.cfg.buffer_size;
  struct cbuf* b = NULL;
  int alloc_normal = 0, alloc_reserve = 0, refuse = 0;
  pthread_mutex_lock(&G.pool_mu);
  if (G.free_list) {
    b = G.free_list;
    G.free_list = b->next_free;
    G.free_count--;
  } else if (G.bytes_alloc + sz + CBUF_HDR <= G.cfg.max_memory) {
    G.bytes_alloc += sz + CBUF_HDR;
    alloc_normal = 1;
  } else if (G.can_reject) {
    refuse = 1;
  } else if (G.reserve) {
    b = G.reserve;
    G.reserve = b->next_free;
  } else {
    alloc_reserve = 1;
  }
  pthread_mutex_unlock(&G.pool_mu);

  if (alloc_normal) {
    b = cbuf_alloc(sz, 0);
    if (!b) {
      pthread_mutex_lock(&G.pool_mu);
      G.bytes_alloc -= sz + CBUF_HDR;
      pthread_mutex_unlock(&G.pool_mu);
      if (G.can_reject) refuse = 1;
      else alloc_reserve = 1;
    }
  }
  if (alloc_reserve) b = rt_cuda_reserve_alloc();
  if (!b) refuse = 1; /* out of memory on a CUPTI that cannot take NULL: nothing else can be done */
  if (refuse) {
    atomic_fetch_add(&G.n_refused, 1);
    atomic_fetch_add(&G.n_cap_drops, 1);
    *buffer = NULL;
    *size = 0;
    return;
  }
  b->next_free = NULL;
  b->valid = 0;
  atomic_fetch_add(&G.n_requested, 1);
  *buffer = cbuf_data(b);
  *size = b->size;
  if (!atomic_load(&G.atexit_again)) rt_cuda_register_atexit_again();
}

void CUPTIAPI rt_cuda_on_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size,
                                          size_t valid) {
  (void)ctx;
  (void)stream_id;
  (void)size;
  if (!buffer) return;
  uint64_t t0 = mono_ns();
  struct cbuf* b = (struct cbuf*)(buffer - CBUF_HDR);
  if (b->magic != CBUF_MAGIC) return; /* not one of ours: leave it alone */
  /* Before the buffer is queued: the writer, which may take it at once, then finds what CUPTI lost with it (after,
   * the count waited for the next buffer and was said with that one's: "dropped 6" for two buffers of 3). */
  rt_cuda_note_vendor_drops();
  if (valid > b->size) valid = b->size;
  if (valid == 0) {
    rt_cuda_recycle(b);
  } else if (b->flags & CBUF_RESERVE) {
    /* handed out over the memory cap to a CUPTI that cannot take NULL: its records are dropped */
    atomic_fetch_add(&G.n_cap_drops, 1);
    atomic_fetch_add(&G.n_discarded, 1);
    rt_cuda_recycle(b);
  } else if (atomic_load(&G.sink_closed)) {
    atomic_fetch_add(&G.n_discarded, 1);
    rt_cuda_recycle(b);
  } else {
    b->valid = valid;
    b->it.type = IT_BUFFER;
    atomic_fetch_add(&G.n_completed, 1);
    rt_cuda_enqueue(&b->it);
  }
  atomic_fetch_add(&G.t_callback_ns, mono_ns() - t0);
}

/* CUPTI's count of records it lost (reset on read), read on the thread CUPTI calls back on (as Kineto reads it), for
 * the writer's next DROPPED chunk: the writer itself makes no CUPTI call, which would wait on CUPTI's lock — held for
 * ever by a program thread a termination signal stopped inside CUPTI while the handler waits for the exit flush. */
void rt_cuda_note_vendor_drops(void) {
  size_t dropped = 0;
  if (C.GetNumDroppedRecords && C.GetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped > 0)
    atomic_fetch_add(&G.vendor_drops_pending, dropped);
}
