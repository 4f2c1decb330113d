/*
 * The payload checksums of the `.rawtrace` container (docs/format.md): CRC-32, XXH32 and XXH64, declared in
 * rawtrace_writer.h. Each gives the same value as the TypeScript writer's (src/format/) and the core's reader
 * (assembly/util/), whatever the host's byte order; test/format/xxh32.test.ts and xxh64.test.ts check all three agree.
 */
#include "rawtrace_writer.h"

#include <pthread.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------------------------------------------ */
/* CRC-32, slice-by-8                                                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

/* crc_table[0] is the classic byte-at-a-time table of the reflected polynomial; crc_table[k][i] is the CRC of byte i
 * followed by k zero bytes, so eight table look-ups consume eight input bytes at once. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = crc_table[0][i];
    for (int t = 1; t < 8; t++) {
      c = crc_table[0][c & 0xFFu] ^ (c >> 8);
      crc_table[t][i] = c;
    }
  }
}

uint32_t rt_crc32(uint32_t crc, const void* p, size_t n) {
  pthread_once(&crc_once, crc_init);
  const uint8_t* s = (const uint8_t*)p;
  uint32_t c = ~crc;
  while (n >= 8) {
    /* little-endian assembly of the first word, so the result does not depend on the host byte order */
    uint32_t lo = c ^ ((uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24);
    c = crc_table[7][lo & 0xFFu] ^ crc_table[6][(lo >> 8) & 0xFFu] ^ crc_table[5][(lo >> 16) & 0xFFu] ^
        crc_table[4][lo >> 24] ^ crc_table[3][s[4]] ^ crc_table[2][s[5]] ^ crc_table[1][s[6]] ^
        crc_table[0][s[7]];
    s += 8;
    n -= 8;
  }
  while (n--) c = crc_table[0][(c ^ *s++) & 0xFFu] ^ (c >> 8);
  return ~c;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* XXH32 (doc/xxhash_spec.md of xxHash: four lanes of 4 bytes per 16-byte stripe, then the tail, then avalanche)       */
/* ------------------------------------------------------------------------------------------------------------------ */

#define XXH_P1 0x9E3779B1u
#define XXH_P2 0x85EBCA77u
#define XXH_P3 0xC2B2AE3Du
#define XXH_P4 0x27D4EB2Fu
#define XXH_P5 0x165667B1u

static inline uint32_t rotl32(uint32_t x, unsigned r) { return (x << r) | (x >> (32u - r)); }

/* Little-endian u32 at s, any alignment, any host byte order (compilers make this one load on little-endian). */
static inline uint32_t ld32le(const uint8_t* s) {
  return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

uint32_t rt_xxh32(const void* p, size_t n, uint32_t seed) {
  const uint8_t* s = (const uint8_t*)p;
  const uint8_t* end = n ? s + n : s; /* no offset applied to a NULL p */
  uint32_t acc;
  if (n >= 16) {
    uint32_t a1 = seed + XXH_P1 + XXH_P2, a2 = seed + XXH_P2, a3 = seed, a4 = seed - XXH_P1;
    const uint8_t* last = end - 16;
    while (s <= last) {
      a1 = rotl32(a1 + ld32le(s) * XXH_P2, 13) * XXH_P1;
      a2 = rotl32(a2 + ld32le(s + 4) * XXH_P2, 13) * XXH_P1;
      a3 = rotl32(a3 + ld32le(s + 8) * XXH_P2, 13) * XXH_P1;
      a4 = rotl32(a4 + ld32le(s + 12) * XXH_P2, 13) * XXH_P1;
      s += 16;
    }
    acc = rotl32(a1, 1) + rotl32(a2, 7) + rotl32(a3, 12) + rotl32(a4, 18);
  } else {
    acc = seed + XXH_P5;
  }
  acc += (uint32_t)n;
  for (; end - s >= 4; s += 4) acc = rotl32(acc + ld32le(s) * XXH_P3, 17) * XXH_P4;
  for (; s < end; s++) acc = rotl32(acc + (uint32_t)*s * XXH_P5, 11) * XXH_P1;
  acc ^= acc >> 15;
  acc *= XXH_P2;
  acc ^= acc >> 13;
  acc *= XXH_P3;
  acc ^= acc >> 16;
  return acc;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* XXH64 (doc/xxhash_spec.md of xxHash: four lanes of 8 bytes per 32-byte stripe, convergence, the tail, avalanche)   */
/* ------------------------------------------------------------------------------------------------------------------ */

#define XXH_Q1 0x9E3779B185EBCA87ull
#define XXH_Q2 0xC2B2AE3D27D4EB4Full
#define XXH_Q3 0x165667B19E3779F9ull
#define XXH_Q4 0x85EBCA77C2B2AE63ull
#define XXH_Q5 0x27D4EB2F165667C5ull

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64u - r)); }

/* Little-endian u64 at s, any alignment, any host byte order (one load on little-endian). */
static inline uint64_t ld64le(const uint8_t* s) { return (uint64_t)ld32le(s) | (uint64_t)ld32le(s + 4) << 32; }

static inline uint64_t xxh64_round(uint64_t acc, uint64_t lane) { return rotl64(acc + lane * XXH_Q2, 31) * XXH_Q1; }

static inline uint64_t xxh64_merge(uint64_t acc, uint64_t v) { return (acc ^ xxh64_round(0, v)) * XXH_Q1 + XXH_Q4; }

uint64_t rt_xxh64(const void* p, size_t n) {
  const uint8_t* s = (const uint8_t*)p;
  const uint8_t* end = n ? s + n : s; /* no offset applied to a NULL p */
  uint64_t h;
  if (n >= 32) {
    uint64_t v1 = XXH_Q1 + XXH_Q2, v2 = XXH_Q2, v3 = 0, v4 = 0 - XXH_Q1;
    const uint8_t* last = end - 32;
    while (s <= last) {
      v1 = xxh64_round(v1, ld64le(s));
      v2 = xxh64_round(v2, ld64le(s + 8));
      v3 = xxh64_round(v3, ld64le(s + 16));
      v4 = xxh64_round(v4, ld64le(s + 24));
      s += 32;
    }
    h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = xxh64_merge(h, v1);
    h = xxh64_merge(h, v2);
    h = xxh64_merge(h, v3);
    h = xxh64_merge(h, v4);
  } else {
    h = XXH_Q5;
  }
  h += (uint64_t)n;
  for (; end - s >= 8; s += 8) h = rotl64(h ^ xxh64_round(0, ld64le(s)), 27) * XXH_Q1 + XXH_Q4;
  if (end - s >= 4) {
    h = rotl64(h ^ (uint64_t)ld32le(s) * XXH_Q1, 23) * XXH_Q2 + XXH_Q3;
    s += 4;
  }
  for (; s < end; s++) h = rotl64(h ^ (uint64_t)*s * XXH_Q5, 11) * XXH_Q1;
  h ^= h >> 33;
  h *= XXH_Q2;
  h ^= h >> 29;
  h *= XXH_Q3;
  h ^= h >> 32;
  return h;
}
