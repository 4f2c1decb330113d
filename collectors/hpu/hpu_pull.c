/*
 * rawtrace HPU collector: pulls, a device's trace from Synapse into the file (synProfilerStop, synProfilerGetTrace
 * into a buffer of ours, the strings it points to, the restart, then the writes), and what the trace buffers cost in
 * memory. Overview: rawtrace_hpu.c.
 */
#include "hpu_internal.h"
#include "rawtrace_heap.h"

#include <stdlib.h>
#include <string.h>

/* The HPU_TRACE payload head (docs/format.md): base, size, entries, device, trace type, reason, pull, profiler ns. */
static void fill_head(uint8_t* p, uint64_t base, uint64_t size, uint64_t n, uint32_t dev, uint32_t reason,
                      uint32_t pull, uint64_t ns) {
  uint32_t type = RT_SYN_TRACE_ALL;
  memcpy(p, &base, 8);
  memcpy(p + 8, &size, 8);
  memcpy(p + 16, &n, 8);
  memcpy(p + 24, &dev, 4);
  memcpy(p + 28, &type, 4);
  memcpy(p + 32, &reason, 4);
  memcpy(p + 36, &pull, 4);
  memcpy(p + 40, &ns, 8);
}

/*
 * Trace buffers held (allocated, not yet freed), now and at most at once, in number and bytes: what the pulls cost in
 * memory, said in the summary line (RAWTRACE_LOG=info). Atomic: a late exit pull frees its buffer on its own thread.
 */
static atomic_uint_fast64_t g_held, g_held_bytes, g_held_peak, g_held_peak_bytes;

void rt_hpu_held_peak(uint64_t* n, uint64_t* bytes) {
  *n = atomic_load(&g_held_peak);
  *bytes = atomic_load(&g_held_peak_bytes);
}

static void raise_to(atomic_uint_fast64_t* peak, uint64_t v) {
  uint_fast64_t cur = atomic_load(peak);
  while (cur < v && !atomic_compare_exchange_weak(peak, &cur, v)) {
  }
}

/* A buffer for `p`'s trace (TRACE_HEAD + p->size bytes, 64-byte aligned) into p->mem; 0, or -1 without memory. */
static int trace_alloc(struct syn_pull* p) {
  size_t bytes = TRACE_HEAD + p->size;
  if (posix_memalign((void**)&p->mem, 64, bytes) != 0) {
    p->mem = NULL;
    return -1;
  }
  raise_to(&g_held_peak, atomic_fetch_add(&g_held, 1) + 1);
  raise_to(&g_held_peak_bytes, atomic_fetch_add(&g_held_bytes, bytes) + bytes);
  return 0;
}

static void trace_free(struct syn_pull* p) {
  if (!p->mem) return;
  atomic_fetch_sub(&g_held, 1);
  atomic_fetch_sub(&g_held_bytes, TRACE_HEAD + p->size);
  rt_free(p->mem);
  p->mem = NULL;
}

/* The Synapse side of a pull: stop, the trace's size, then the trace into a buffer of ours. Touches neither the
 * file nor the device table (at exit it runs on a thread of its own: rt_exit_call_owned). */
static void syn_take(struct syn_pull* p) {
  p->s = S.stop(RT_SYN_TRACE_ALL, p->dev);
  p->ns = rt_hpu_profiler_ns();
  // The host clocks with it, at once: read after the trace is fetched, they would lag the profiler's clock by the
  // fetch (169 ms for a 20,000-step exit pull) and stretch the device timeline between the anchors.
  p->anchored = rt_clock_anchor(p->final ? RT_CLOCK_END : RT_CLOCK_PERIODIC, p->ns, &p->anchor) == 0;
  if (p->s == RT_SYN_SUCCESS) p->s = S.get_trace(RT_SYN_TRACE_ALL, p->dev, RT_SYN_TRACE_FORMAT_TEF, NULL, &p->size, &p->n);
  if (p->s != RT_SYN_SUCCESS || p->size == 0) return;
  if (p->size > RT_MAX_CHUNK_PAYLOAD - TRACE_HEAD || p->size > G.max_memory) {
    p->too_big = 1;
  } else if (trace_alloc(p) != 0) {
    p->no_mem = 1;
  } else {
    p->got = p->size;
    p->s = S.get_trace(RT_SYN_TRACE_ALL, p->dev, RT_SYN_TRACE_FORMAT_TEF, p->mem + TRACE_HEAD, &p->got, &p->entries);
  }
}

/* Whether `p` holds a trace to write. */
static int has_trace(const struct syn_pull* p) { return p->mem && p->s == RT_SYN_SUCCESS && p->got <= p->size; }

/* The pointers outside the trace's buffer into G.strings (collector thread): read before the profiler restarts, as
 * Synapse may free what they point to then (the test double does). */
void rt_hpu_take_strings(struct syn_pull* p) {
  if (!has_trace(p)) return;
  const uint8_t* buf = p->mem + TRACE_HEAD; /* 16-byte aligned like synTraceEvent */
  uint64_t num = p->entries;
  if (p->got >= RT_SYN_TRACE_TRAILER) memcpy(&num, buf + p->got - RT_SYN_TRACE_TRAILER, sizeof num);
  if (num > p->entries) num = p->entries;
  p->strings_oom = rt_hpu_strings_collect(&G.strings, buf, (uint64_t)(uintptr_t)buf, p->got, num) != 0;
}

/* The file side of a pull (after rt_hpu_take_strings): the CLOCK anchor, STRINGS, the HPU_TRACE chunk; frees the
 * buffer. */
void rt_hpu_pull_write(struct syn_pull* p, struct device* d, uint32_t reason) {
  if (p->anchored) rt_hpu_write_anchor(&p->anchor);
  if (p->too_big) {
    rt_hpu_log(RT_V_WARN, 1, "device %u: a trace of %zu bytes exceeds %s; its %zu entries are dropped (pull more "
               "often: RAWTRACE_HPU_PERIOD_MS)", d->id, p->size,
               p->size > G.max_memory ? "RAWTRACE_MAX_MEMORY" : "a chunk", p->n);
    rt_hpu_wrote(rt_writer_dropped(G.w, p->n, RT_DROP_MEMORY_CAP));
  } else if (p->no_mem) {
    rt_hpu_log(RT_V_WARN, 1, "device %u: no memory for a trace of %zu bytes; %zu entries dropped", d->id, p->size,
               p->n);
    rt_hpu_wrote(rt_writer_dropped(G.w, p->n, RT_DROP_MEMORY_CAP));
  } else if (p->mem && p->s == RT_SYN_SUCCESS && p->got > p->size) {
    /* Synapse says it wrote more than the buffer it sized itself: what it holds cannot be trusted, and is not written. */
    rt_hpu_log(RT_V_WARN, 1, "device %u: synProfilerGetTrace reported %zu bytes written into the %zu it asked for; that "
               "trace's %zu entries are dropped", d->id, p->got, p->size, p->n);
    rt_hpu_wrote(rt_writer_dropped(G.w, p->n, RT_DROP_VENDOR));
  } else if (has_trace(p) && !rt_queue_exit_skip(&G.q, TRACE_HEAD + p->got)) { /* else the exit's time is up */
    uint64_t t0 = rt_clock_ns(CLOCK_MONOTONIC);
    if (p->strings_oom)
      rt_hpu_log(RT_V_WARN, 1, "device %u: out of memory while resolving strings; some are missing", d->id);
    if (G.strings.n && rt_hpu_wrote(rt_writer_strings(G.w, G.strings.v, (uint32_t)G.strings.n)) == 0)
      G.n_strings += G.strings.n;
    G.n_unreadable += G.strings.unreadable;
    fill_head(p->mem, (uint64_t)(uintptr_t)(p->mem + TRACE_HEAD), p->got, p->entries, d->id, reason, d->pulls, p->ns);
    if (rt_hpu_wrote(rt_writer_chunk(G.w, RT_CHUNK_HPU_TRACE, p->mem, (uint32_t)(TRACE_HEAD + p->got))) == 0) {
      G.n_traces++;
      G.n_bytes += p->got;
    }
    rt_queue_note_write(&G.q, TRACE_HEAD + p->got, rt_clock_ns(CLOCK_MONOTONIC) - t0);
  }
  if (p->s != RT_SYN_SUCCESS && !atomic_exchange(&G.said_get, 1))
    rt_hpu_log(RT_V_WARN, 1, "device %u: synProfilerStop / synProfilerGetTrace answered %d; that trace is lost", d->id,
               p->s);
  trace_free(p);
  d->pulls++;
}

void rt_hpu_pull(struct device* d, uint32_t reason, int restart, int final) {
  if (!d->running) return;
  if (rt_hpu_device_gone(d->id)) {
    d->running = 0;
    rt_hpu_log(RT_V_WARN, 1, "device %u was released before its trace could be pulled (the output was stalled); its "
               "last trace is lost", d->id);
    return;
  }
  if (atomic_load(&G.write_failed)) {
    /* Nothing more can be written: the profiler is stopped and its trace not fetched (it could only be freed), so
     * Synapse neither records the rest of the run nor holds it in memory, as "recording stops" says. */
    S.stop(RT_SYN_TRACE_ALL, d->id);
    d->running = 0;
    return;
  }
  struct syn_pull p = {.dev = d->id, .final = final};
  syn_take(&p);
  d->running = 0;
  rt_hpu_take_strings(&p);
  // Restarted before the writes: an output that stalls (a FIFO read late, a slow disk) must not keep the profiler
  // stopped, or the device's work meanwhile is not recorded. Its anchor goes after the stop's, as both were read.
  rt_clock_anchor_t a;
  int anchored = restart && rt_hpu_start_device(d, &a);
  rt_hpu_pull_write(&p, d, reason);
  if (anchored) rt_hpu_write_anchor(&a);
}


/* An exit pull's Synapse side, on a thread of its own (rt_exit_call_owned). */
void rt_hpu_take_exit_pull(void* arg) { syn_take((struct syn_pull*)arg); }

/* An exit pull that returned after the flush went on without it: its thread frees what it took. */
void rt_hpu_drop_late_pull(void* arg) {
  trace_free((struct syn_pull*)arg);
  rt_free(arg);
}
