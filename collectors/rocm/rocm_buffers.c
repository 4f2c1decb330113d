/*
 * rawtrace ROCm collector: the copy-buffer pool bounded by RAWTRACE_MAX_MEMORY and the SDK's buffer callback,
 * which copies each tracing record into it (memcpy only, no I/O).
 */
#include "rocm_internal.h"
#include "rawtrace_heap.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Copy-buffer pool and the buffer callback                                                                           */
/* ------------------------------------------------------------------------------------------------------------------ */

static struct cbuf* g_fill; /* the copy buffer being filled (fill_mu) */

/* A buffer from the pool, a new one under the cap, or NULL (cap reached or out of memory). */
static struct cbuf* take_buffer(void) {
  size_t sz = G.cfg.buffer_size;
  struct cbuf* b = NULL;
  int alloc = 0;
  pthread_mutex_lock(&G.pool_mu);
  if (G.free_list) {
    b = G.free_list;
    G.free_list = b->next_free;
    G.free_count--;
  } else if (G.bytes_alloc + sz + CBUF_HDR <= G.cfg.max_memory) {
    G.bytes_alloc += sz + CBUF_HDR;
    alloc = 1;
  }
  pthread_mutex_unlock(&G.pool_mu);
  if (alloc) {
    void* p = NULL;
    if (posix_memalign(&p, 64, CBUF_HDR + sz) != 0) p = NULL;
    if (!p) {
      pthread_mutex_lock(&G.pool_mu);
      G.bytes_alloc -= sz + CBUF_HDR;
      pthread_mutex_unlock(&G.pool_mu);
      return NULL;
    }
    b = (struct cbuf*)p;
    b->size = sz;
  }
  if (b) {
    b->used = 0;
    b->records = 0;
    b->next_free = NULL;
  }
  return b;
}

void rt_rocm_recycle(struct cbuf* b) {
  /* The pool's lock held by a thread a termination signal stopped: freed, uncounted (the process is ending). */
  if (!rt_queue_lock(&G.q, &G.pool_mu)) {
    rt_free(b);
    return;
  }
  if (G.free_count < POOL_KEEP) {
    b->next_free = G.free_list;
    G.free_list = b;
    G.free_count++;
    b = NULL;
  } else {
    G.bytes_alloc -= b->size + CBUF_HDR;
  }
  pthread_mutex_unlock(&G.pool_mu);
  rt_free(b);
}

/* Queues the buffer being filled (fill_mu held). */
void rt_rocm_ship_fill_locked(void) {
  struct cbuf* b = g_fill;
  g_fill = NULL;
  if (!b) return;
  if (!b->used) {
    rt_rocm_recycle(b);
    return;
  }
  b->it.type = IT_BUFFER;
  rt_rocm_enqueue(&b->it);
}

/* rocprofiler_buffer_tracing_cb_t: copies each tracing record, then queues what it filled. */
void rt_rocm_on_buffer(rt_rocp_context_id ctx, rt_rocp_buffer_id bid, rt_rocp_record_header** headers, size_t n,
                       void* data, uint64_t drop_count) {
  (void)ctx;
  (void)bid;
  (void)data;
  uint64_t t0 = mono_ns();
  atomic_fetch_add(&G.n_callbacks, 1);
  if (drop_count) atomic_fetch_add(&G.n_vendor_dropped, drop_count);
  if (atomic_load(&G.sink_closed)) return; /* after the exit flush, a write error, or in a forked child */
  uint64_t copied = 0, capped = 0, skipped = 0;
  pthread_mutex_lock(&G.fill_mu);
  for (size_t i = 0; i < n; i++) {
    const rt_rocp_record_header* h = headers ? headers[i] : NULL;
    uint64_t size = 0;
    if (h && h->payload && h->category == RT_ROCP_BUFFER_CATEGORY_TRACING) memcpy(&size, h->payload, sizeof size);
    if (size < 8 || size > MAX_RECORD) {
      skipped++; /* not a tracing record (only those start with their size), or an implausible size */
      continue;
    }
    size_t need = RECORD_HDR + ((size_t)size + 7u) / 8u * 8u;
    if (!g_fill || g_fill->used + need > g_fill->size) {
      rt_rocm_ship_fill_locked();
      g_fill = take_buffer();
      if (!g_fill) {
        capped++;
        continue;
      }
    }
    uint8_t* p = cbuf_data(g_fill) + g_fill->used;
    memcpy(p, &h->category, 4);
    memcpy(p + 4, &h->kind, 4);
    memcpy(p + 8, &size, 8);
    memcpy(p + RECORD_HDR, h->payload, (size_t)size);
    memset(p + RECORD_HDR + size, 0, need - RECORD_HDR - (size_t)size);
    g_fill->used += need;
    g_fill->records++;
    copied++;
  }
  rt_rocm_ship_fill_locked();
  pthread_mutex_unlock(&G.fill_mu);
  atomic_fetch_add(&G.n_records, copied);
  if (capped) atomic_fetch_add(&G.n_capped, capped);
  if (skipped) atomic_fetch_add(&G.n_skipped, skipped);
  atomic_fetch_add(&G.t_callback_ns, mono_ns() - t0);
}
