/* The collectors' heap use, safe during a signal's exit flush: rawtrace_heap.h. */
#define _GNU_SOURCE
#include "rawtrace_heap.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static atomic_int g_frozen;

void rt_heap_freeze(void) { atomic_store(&g_frozen, 1); }

int rt_heap_frozen(void) { return atomic_load(&g_frozen); }

/* Once frozen: blocks carved out of mappings, each after a 16-byte header holding its size (16-byte alignment, as
 * malloc's). A mapping of SLAB bytes holds many small blocks; a block over BIG gets a mapping of its own. The
 * mappings are listed (at most MAX_MAPS), so that a block can be told from a heap block (rt_realloc's old size). */
enum { SLAB = 1 << 20, BIG = 256 << 10, HDR = 16, MAX_MAPS = 512 };

/* A spin lock, taken only once frozen, with every signal blocked while it is held: a program thread allocating in a
 * vendor callback that a second termination signal stopped while it held the lock would wait in its handler for the
 * flush, and the writer would spin for ever. */
static atomic_flag g_lock = ATOMIC_FLAG_INIT;
static struct {
  uintptr_t base, len;
} g_maps[MAX_MAPS];
static int g_nmaps;
static uint8_t* g_slab;  /* the current slab's free part */
static size_t g_slab_left;

static void lock(sigset_t* saved) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, saved);
  while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire)) {
  }
}
static void unlock(const sigset_t* saved) {
  atomic_flag_clear_explicit(&g_lock, memory_order_release);
  pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* A new mapping of `len` bytes, listed; NULL when mmap fails or the list is full (lock held). */
static uint8_t* map_locked(size_t len) {
  if (g_nmaps == MAX_MAPS) return NULL;
  void* m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  g_maps[g_nmaps].base = (uintptr_t)m;
  g_maps[g_nmaps].len = len;
  g_nmaps++;
  return (uint8_t*)m;
}

/* A zeroed block of n bytes from the mappings (mapped memory is zero until written; a slab's blocks are never reused). */
static void* mapped_alloc(size_t n) {
  if (n > SIZE_MAX - HDR - 15) return NULL;
  size_t need = (n + HDR + 15) & ~(size_t)15;
  uint8_t* b = NULL;
  sigset_t saved;
  lock(&saved);
  if (need > BIG) {
    b = map_locked(need);
  } else {
    if (need > g_slab_left) {
      g_slab = map_locked(SLAB);
      g_slab_left = g_slab ? SLAB : 0;
    }
    if (need <= g_slab_left) {
      b = g_slab;
      g_slab += need;
      g_slab_left -= need;
    }
  }
  unlock(&saved);
  if (!b) return NULL;
  memcpy(b, &n, sizeof n);
  return b + HDR;
}

/* The size of a block from the mappings, or (size_t)-1 when `p` is not in them. The list only grows and an entry is
 * written before the count that shows it, both under the lock: the entries below the count read are complete. */
static size_t mapped_size(const void* p) {
  sigset_t saved;
  lock(&saved);
  int n = g_nmaps;
  unlock(&saved);
  uintptr_t a = (uintptr_t)p;
  for (int i = 0; i < n; i++) {
    if (a >= g_maps[i].base + HDR && a < g_maps[i].base + g_maps[i].len) {
      size_t size;
      memcpy(&size, (const uint8_t*)p - HDR, sizeof size);
      return size;
    }
  }
  return (size_t)-1;
}

void* rt_malloc(size_t n) { return atomic_load(&g_frozen) ? mapped_alloc(n) : malloc(n); }

void* rt_calloc(size_t n, size_t size) {
  if (!atomic_load(&g_frozen)) return calloc(n, size);
  if (size && n > SIZE_MAX / size) return NULL;
  return mapped_alloc(n * size);
}

void* rt_realloc(void* p, size_t n) {
  if (!atomic_load(&g_frozen)) return realloc(p, n);
  if (!p) return mapped_alloc(n);
  /* A heap block's size from its chunk header: malloc_usable_size takes no lock (a block of the arena a stopped
   * thread holds is still read, never touched). */
  size_t old = mapped_size(p);
  if (old == (size_t)-1) old = malloc_usable_size(p);
  void* q = mapped_alloc(n);
  if (q) memcpy(q, p, old < n ? old : n);
  return q;
}

void rt_free(void* p) {
  if (!atomic_load(&g_frozen)) free(p);
}
