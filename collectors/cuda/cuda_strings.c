/*
 * rawtrace CUDA collector: the walk of one buffer on the writer thread: the strings its pointer fields name
 * (STRINGS, read without trusting the pointer) and the threads of its API and marker records.
 */
#include "cuda_internal.h"
#include "rawtrace_heap.h"
#include "rawtrace_safe_read.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Writer thread: the strings and threads a buffer names                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

static uint32_t ld32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static uint64_t ld64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/*
 * Copies the NUL-terminated string at address `ptr` of this process into G.scratch without trusting it: reads go
 * through process_vm_readv one page at a time, so an address that is not mapped fails (-1) instead of faulting;
 * where that call is refused (a sandbox), through rt_safe_read's pipe, never by dereferencing the pointer. Returns
 * the length, or -1.
 */
static long read_cstr(uint64_t ptr) {
  rt_buf* b = &G.scratch;
  rt_buf_reset(b);
  if (G.no_vm_readv) {
    if (rt_buf_reserve(b, MAX_STRING_BYTES)) return -1;
    long n = rt_safe_cstr((char*)b->data, ptr, MAX_STRING_BYTES);
    if (n >= 0) b->len = (size_t)n;
    return n;
  }
  uint64_t p = ptr;
  for (;;) {
    size_t want = 4096 - (size_t)(p & 4095);
    if (rt_buf_reserve(b, want)) return -1;
    struct iovec l = {b->data + b->len, want};
    struct iovec r = {(void*)(uintptr_t)p, want};
    ssize_t n = process_vm_readv(G.owner_pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
        G.no_vm_readv = 1;
        rt_cuda_logmsg(LOG_DEBUG, "process_vm_readv unavailable (%s): reading strings through a pipe", strerror(errno));
        return read_cstr(ptr);
      }
      return -1;
    }
    uint8_t* z = (uint8_t*)memchr(b->data + b->len, 0, (size_t)n);
    if (z) {
      b->len = (size_t)(z - b->data);
      return (long)b->len;
    }
    b->len += (size_t)n;
    p += (uint64_t)n;
    if (b->len >= MAX_STRING_BYTES) return (long)b->len; /* longer strings are cut */
  }
}

static size_t st_slot(uint64_t ptr) {
  uint64_t h = ptr * 0x9E3779B97F4A7C15ull;
  size_t mask = G.st_cap - 1;
  size_t i = (size_t)(h >> 20) & mask;
  while (G.st[i].ptr && G.st[i].ptr != ptr) i = (i + 1) & mask;
  return i;
}

static int st_grow(void) {
  size_t ncap = G.st_cap ? G.st_cap * 2 : 1024;
  struct sentry* old = G.st;
  size_t ocap = G.st_cap;
  struct sentry* nt = (struct sentry*)rt_calloc(ncap, sizeof *nt);
  if (!nt) return -1;
  G.st = nt;
  G.st_cap = ncap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].ptr) G.st[st_slot(old[i].ptr)] = old[i];
  rt_free(old);
  return 0;
}

static void pend_string(struct sentry* e) {
  if (G.pend_str_n == G.pend_str_cap) {
    rt_string* more = (rt_string*)grow_array(G.pend_str, &G.pend_str_cap, sizeof *more, 64);
    if (!more) return;
    G.pend_str = more;
  }
  rt_string* s = &G.pend_str[G.pend_str_n++];
  s->ptr = e->ptr;
  s->bytes = e->copy;
  s->len = e->len;
}

/* A pointer field seen in the current buffer: queue its string when it is new or its bytes changed. */
static void note_string(uint64_t ptr) {
  if (!ptr) return;
  if ((G.st_count + 1) * 2 > G.st_cap && st_grow() != 0) return;
  size_t i = st_slot(ptr);
  struct sentry* e = &G.st[i];
  if (e->ptr == ptr && e->epoch == G.epoch) return; /* checked in this buffer already */
  long n = read_cstr(ptr);
  if (e->ptr != ptr) {
    e->ptr = ptr;
    e->copy = NULL;
    e->len = 0;
    G.st_count++;
  }
  e->epoch = G.epoch;
  if (n < 0) return; /* unreadable: the decoder reports the missing string */
  if (e->copy && e->len == (uint32_t)n && memcmp(e->copy, G.scratch.data, (size_t)n) == 0) return;
  char* copy = (char*)rt_malloc((size_t)n + 1);
  if (!copy) return;
  memcpy(copy, G.scratch.data, (size_t)n);
  copy[n] = 0;
  /* the old copy may still be referenced by a pending entry of this buffer only if it was queued in this buffer,
   * which the epoch check rules out */
  rt_free(e->copy);
  e->copy = copy;
  e->len = (uint32_t)n;
  pend_string(e);
}

static void note_thread(uint32_t pid, uint32_t tid) { rt_threads_note(&G.threads, pid, tid); }

/* Walks one buffer by the measured strides; notes pointer fields (read only when the record covers them) and the
 * threads of API and marker records. */
void rt_cuda_walk_buffer(const uint8_t* p, size_t n) {
  G.epoch++;
  size_t off = 0;
  while (off + 4 <= n) {
    const uint8_t* r = p + off;
    uint32_t kind = ld32(r);
    uint32_t size = kind < MAX_KIND ? G.kind_size[kind] : 0;
    if (!size || off + size > n) {
      if (!G.walk_warned) {
        G.walk_warned = 1;
        rt_cuda_logrec(LOG_WARN, "record of kind %u at offset %zu has no known size; strings after it in that "
                       "buffer are not captured", kind, off);
      }
      return;
    }
    switch (kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        if (size >= 112) note_string(ld64(r + 104));
        break;
      case CUPTI_ACTIVITY_KIND_MARKER:
        if (size >= 48) note_string(ld64(r + 40));
        if (size >= 56) note_string(ld64(r + 48));
        if (size >= 32 && ld32(r + 20) == CUPTI_ACTIVITY_OBJECT_THREAD) note_thread(ld32(r + 24), ld32(r + 28));
        break;
      case CUPTI_ACTIVITY_KIND_NAME:
        if (size >= 32) note_string(ld64(r + 24));
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        if (size >= 144) note_string(ld64(r + 136));
        break;
      case CUPTI_ACTIVITY_KIND_DRIVER:
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
        if (size >= 32) note_thread(ld32(r + 24), ld32(r + 28));
        break;
      default:
        break;
    }
    off += size;
  }
}
