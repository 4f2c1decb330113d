/*
 * A set of process addresses; see rawtrace_ptrset.h.
 */
#include "rawtrace_ptrset.h"
#include "rawtrace_heap.h"

#include <string.h>

/* Slot of `ptr` in a table of `cap` slots: pointers are 8-aligned, so their low 3 bits are dropped before hashing. */
static size_t slot_of(uint64_t ptr, size_t cap) { return (size_t)((ptr >> 3) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

int rt_ptrset_add(rt_ptrset* s, uint64_t ptr) {
  if ((s->n + 1) * 2 > s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 256;
    uint64_t* nv = (uint64_t*)rt_calloc(ncap, sizeof *nv);
    if (!nv) return -1;
    for (size_t i = 0; i < s->cap; i++) {
      uint64_t p = s->slots[i];
      if (!p) continue;
      size_t j = slot_of(p, ncap);
      while (nv[j]) j = (j + 1) & (ncap - 1);
      nv[j] = p;
    }
    rt_free(s->slots);
    s->slots = nv;
    s->cap = ncap;
  }
  size_t j = slot_of(ptr, s->cap);
  while (s->slots[j]) {
    if (s->slots[j] == ptr) return 0;
    j = (j + 1) & (s->cap - 1);
  }
  s->slots[j] = ptr;
  s->n++;
  return 1;
}

void rt_ptrset_clear(rt_ptrset* s) {
  if (s->slots) memset(s->slots, 0, s->cap * sizeof *s->slots);
  s->n = 0;
}

void rt_ptrset_free(rt_ptrset* s) {
  rt_free(s->slots);
  memset(s, 0, sizeof *s);
}
