/*
 * Outside pointers of a Synapse trace buffer → STRINGS entries; see hpu_strings.h.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "hpu_strings.h"
#include "rawtrace_heap.h"
#include "rawtrace_safe_read.h"
#include "synapse_abi.h"

#include <stdlib.h>
#include <string.h>

#define PIECE 256u
#define ENTRY ((size_t)sizeof(rt_syn_trace_event))

/* Makes room for `n` more bytes in the byte store. */
static int reserve_bytes(rt_hpu_strings* s, size_t n) {
  if (s->bcap - s->blen >= n) return 0;
  size_t ncap = s->bcap ? s->bcap : 4096;
  while (ncap - s->blen < n) ncap *= 2;
  uint8_t* nb = (uint8_t*)rt_realloc(s->bytes, ncap);
  if (!nb) return -1;
  s->bytes = nb;
  s->bcap = ncap;
  return 0;
}

/* Appends an entry whose bytes are the last `len` bytes of the store (from offset `at`); `bytes` is fixed up later. */
static int push_entry(rt_hpu_strings* s, uint64_t ptr, size_t at, size_t len) {
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 64;
    rt_string* nv = (rt_string*)rt_realloc(s->v, ncap * sizeof *nv);
    if (!nv) return -1;
    s->v = nv;
    s->cap = ncap;
  }
  s->v[s->n++] = (rt_string){ptr, (const char*)(uintptr_t)at, (uint32_t)len};
  return 0;
}

static int inside(uint64_t ptr, uint64_t base, size_t size) { return ptr >= base && ptr - base < size; }

/* A C string at `ptr` outside the buffer: its bytes without the NUL (cut at RT_HPU_MAX_STRING). */
static int take_string(rt_hpu_strings* s, uint64_t ptr, uint64_t base, size_t size) {
  if (!ptr || inside(ptr, base, size)) return 0;
  int fresh = rt_ptrset_add(&s->set, ptr);
  if (fresh <= 0) return fresh;
  size_t at = s->blen, len = 0;
  for (;;) {
    if (reserve_bytes(s, PIECE) != 0) return -1;
    size_t want = PIECE;
    if (want > RT_HPU_MAX_STRING - len) want = RT_HPU_MAX_STRING - len;
    size_t got = rt_safe_read(s->bytes + at + len, ptr + len, want);
    const uint8_t* nul = (const uint8_t*)memchr(s->bytes + at + len, 0, got);
    if (nul) {
      len += (size_t)(nul - (s->bytes + at + len));
      break;
    }
    len += got;
    s->blen = at + len;
    if (got < want || len >= RT_HPU_MAX_STRING) break;
  }
  if (len == 0 && rt_safe_read(s->bytes + at, ptr, 1) != 1) {
    s->unreadable++; /* not even one byte: no entry (an empty readable string gets one) */
    s->blen = at;
    return 0;
  }
  s->blen = at + len;
  return push_entry(s, ptr, at, len);
}

/* The extraArgs array of an event entry: the array itself when outside, then its keys and CHAR_PTR values. */
static int take_args(rt_hpu_strings* s, const uint8_t* buf, uint64_t base, size_t size, uint8_t count, uint64_t ptr) {
  if (!count || !ptr) return 0;
  size_t bytes = (size_t)count * sizeof(rt_syn_trace_event_arg);
  rt_syn_trace_event_arg args[255];
  if (inside(ptr, base, size)) {
    if (bytes > size - (size_t)(ptr - base)) return 0; /* runs past the buffer: the decoder reports it */
    memcpy(args, buf + (ptr - base), bytes);
  } else {
    int fresh = rt_ptrset_add(&s->set, ptr);
    if (fresh < 0) return -1;
    if (rt_safe_read(args, ptr, bytes) != bytes) {
      if (fresh) s->unreadable++;
      return 0;
    }
    if (fresh) {
      if (reserve_bytes(s, bytes) != 0) return -1;
      size_t at = s->blen;
      memcpy(s->bytes + at, args, bytes);
      s->blen += bytes;
      if (push_entry(s, ptr, at, bytes) != 0) return -1;
    }
  }
  for (uint32_t i = 0; i < count; i++) {
    if (take_string(s, (uint64_t)(uintptr_t)args[i].key, base, size) < 0) return -1;
    if (args[i].type == RT_SYN_ARG_CHAR_PTR &&
        take_string(s, (uint64_t)(uintptr_t)args[i].value.str, base, size) < 0)
      return -1;
  }
  return 0;
}

static uint64_t ld64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

int rt_hpu_strings_collect(rt_hpu_strings* s, const uint8_t* buf, uint64_t base, size_t size, uint64_t entries) {
  s->n = 0;
  s->blen = 0;
  s->unreadable = 0;
  s->oom = 0;
  rt_ptrset_clear(&s->set);
  uint64_t fit = size >= RT_SYN_TRACE_TRAILER ? (size - RT_SYN_TRACE_TRAILER) / ENTRY : 0;
  if (entries > fit) entries = fit;
  int rc = 0;
  for (uint64_t i = 0; i < entries && rc == 0; i++) {
    const uint8_t* e = buf + i * ENTRY;
    char type = (char)e[offsetof(rt_syn_trace_event, type)];
    rc |= take_string(s, ld64(e + offsetof(rt_syn_trace_event, name)), base, size);
    rc |= take_string(s, ld64(e + offsetof(rt_syn_trace_event, category)), base, size);
    if (type == 'M') {
      rc |= take_string(s, ld64(e + offsetof(rt_syn_trace_event, arguments.meta.name)), base, size);
      rc |= take_string(s, ld64(e + offsetof(rt_syn_trace_event, arguments.meta.group)), base, size);
    } else if (type == 'B' || type == 'E' || type == 'X') {
      rc |= take_string(s, ld64(e + offsetof(rt_syn_trace_event, arguments.event.data_type)), base, size);
      rc |= take_string(s, ld64(e + offsetof(rt_syn_trace_event, arguments.event.operation)), base, size);
      rc |= take_string(s, ld64(e + offsetof(rt_syn_trace_event, arguments.event.recipe_name)), base, size);
      const uint8_t* ea = e + offsetof(rt_syn_trace_event, arguments.event.extra_args);
      rc |= take_args(s, buf, base, size, ea[0], ld64(ea + offsetof(rt_syn_trace_event_extra_args, args)));
    }
  }
  for (size_t i = 0; i < s->n; i++) s->v[i].bytes = (const char*)(s->bytes + (size_t)(uintptr_t)s->v[i].bytes);
  if (rc) s->oom = 1;
  return rc ? -1 : 0;
}

void rt_hpu_strings_free(rt_hpu_strings* s) {
  rt_free(s->v);
  rt_free(s->bytes);
  rt_ptrset_free(&s->set);
  memset(s, 0, sizeof *s);
}
