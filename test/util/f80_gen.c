/*
 * Expected values for assembly/util/f80.ts, computed by the C compiler's own x87 `long double` arithmetic on
 * x86-64 (test/util/f80.test.ts compiles and runs this at test time).
 *
 * Usage: f80_gen SEED COUNT OUT
 * Writes COUNT records of 19 bytes: the 10-byte long double (µs), the expected ns (u64 little-endian) and the
 * expected status byte (0 ok, 1 negative, 2 infinity, 3 NaN, 4 invalid encoding, 5 ≥ 2^64 ns).
 *
 * The rule: ns = (uint64_t)roundl(x * 1000.0L), the product in long double (64-bit significand, nearest-even),
 * roundl halves away from zero; −0 → 0; negative non-zero → status 1; the result ≥ 2^64 → status 5.
 * Invalid encodings (unnormal, pseudo-denormal, pseudo-infinity/NaN) are classified from their bits (the x87
 * treats pseudo-denormals as valid, the rule rejects them); the generator checks that the x87 itself sees every
 * unnormal and pseudo-infinity/NaN as a NaN.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__x86_64__) && !defined(__i386__)
#error "f80_gen needs x87 long double (x86 / x86-64)"
#endif

static uint64_t rng_state;

/* splitmix64: a fixed, portable sequence for a given seed. */
static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) { return next_u64() % n; }

static void pack(unsigned char out[10], uint64_t m, unsigned se) {
  memcpy(out, &m, 8);
  out[8] = (unsigned char)(se & 0xff);
  out[9] = (unsigned char)(se >> 8);
}

static long double from_bits(const unsigned char b[10]) {
  long double x = 0;
  memcpy(&x, b, 10);
  return x;
}

static void to_bits(long double x, unsigned char out[10]) {
  unsigned char tmp[sizeof(long double)];
  memcpy(tmp, &x, sizeof tmp);
  memcpy(out, tmp, 10);
}

static FILE *out_file;
static long written;

static void emit(const unsigned char b[10]) {
  uint64_t m;
  memcpy(&m, b, 8);
  unsigned se = (unsigned)b[8] | ((unsigned)b[9] << 8);
  unsigned e = se & 0x7fff;
  int int_bit = (int)(m >> 63);
  volatile long double x = from_bits(b);
  uint64_t ns = 0;
  unsigned char status;
  if ((e == 0 && int_bit) || (e != 0 && !int_bit)) {
    if (e != 0 && !isnan(x)) {
      fprintf(stderr, "f80_gen: the x87 does not see unnormal %04x:%016llx as NaN\n", se, (unsigned long long)m);
      exit(1);
    }
    status = 4;
  } else if (isinf(x)) {
    status = 2;
  } else if (isnan(x)) {
    status = 3;
  } else if (signbit(x) && x != 0) {
    status = 1;
  } else {
    volatile long double y = x * 1000.0L;
    long double r = roundl(y);
    if (r >= 0x1p64L) {
      status = 5;
    } else {
      status = 0;
      ns = (uint64_t)r;
    }
  }
  unsigned char rec[19];
  memcpy(rec, b, 10);
  memcpy(rec + 10, &ns, 8);
  rec[18] = status;
  if (fwrite(rec, 1, 19, out_file) != 19) {
    perror("f80_gen: write");
    exit(1);
  }
  written++;
}

static void emit_ld(long double x) {
  unsigned char b[10];
  to_bits(x, b);
  emit(b);
}

/* x and its neighbours up to `ulps` steps away on both sides. */
static void emit_around(long double x, int ulps) {
  emit_ld(x);
  long double up = x, down = x;
  for (int i = 0; i < ulps; i++) {
    up = nextafterl(up, INFINITY);
    down = nextafterl(down, -INFINITY);
    emit_ld(up);
    emit_ld(down);
  }
}

static void edges(void) {
  unsigned char b[10];
  pack(b, 0, 0); emit(b);                                /* +0 */
  pack(b, 0, 0x8000); emit(b);                           /* -0 */
  pack(b, 1, 0); emit(b);                                /* smallest denormal */
  pack(b, 1, 0x8000); emit(b);                           /* negative smallest denormal */
  pack(b, 0x7fffffffffffffffULL, 0); emit(b);            /* largest denormal */
  pack(b, 0x8000000000000000ULL, 1); emit(b);            /* smallest normal */
  pack(b, 0x8000000000000000ULL, 0); emit(b);            /* pseudo-denormal */
  pack(b, 0xffffffffffffffffULL, 0); emit(b);            /* pseudo-denormal */
  pack(b, 0xffffffffffffffffULL, 0x7ffe); emit(b);       /* largest finite */
  pack(b, 0xffffffffffffffffULL, 0xfffe); emit(b);       /* most negative finite */
  pack(b, 0x8000000000000000ULL, 0x7fff); emit(b);       /* +inf */
  pack(b, 0x8000000000000000ULL, 0xffff); emit(b);       /* -inf */
  pack(b, 0xc000000000000000ULL, 0x7fff); emit(b);       /* quiet NaN */
  pack(b, 0xc000000000000000ULL, 0xffff); emit(b);       /* real indefinite */
  pack(b, 0x8000000000000001ULL, 0x7fff); emit(b);       /* signalling NaN */
  pack(b, 0, 0x7fff); emit(b);                           /* pseudo-infinity */
  pack(b, 0x4000000000000000ULL, 0x7fff); emit(b);       /* pseudo-NaN */
  pack(b, 0, 0x3fff); emit(b);                           /* unnormal zero significand */
  pack(b, 0x7fffffffffffffffULL, 0x3fff); emit(b);       /* unnormal */
  pack(b, 0x4000000000000000ULL, 0x4000); emit(b);       /* unnormal */
  for (int i = 0; i < 64; i++) emit_around(ldexpl(1.0L, i), 3);     /* powers of two µs */
  for (int i = -80; i < 0; i++) emit_around(ldexpl(1.0L, i), 3);
  emit_around(0x1p63L, 8);                               /* 2^63 µs */
  emit_around(0x1p63L / 1000.0L, 64);                    /* 2^63 ns */
  emit_around(0x1p64L / 1000.0L, 64);                    /* 2^64 ns boundary */
  emit_around(18446744073709551615.5L / 1000.0L, 64);
  emit_around(0x1p54L, 8);
  emit_around(0x1p55L, 8);
  emit_around(0.0005L, 16);                              /* 0.5 ns */
  emit_around(0.0015L, 16);
  emit_around(0.001L, 16);                               /* 1 ns */
  emit_around(1.0L / 2048.0L, 16);
  for (int i = 1; i < 200; i++) emit_around((long double)i / 1000.0L, 2);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: f80_gen SEED COUNT OUT\n");
    return 2;
  }
  rng_state = strtoull(argv[1], NULL, 0);
  long count = strtol(argv[2], NULL, 0);
  out_file = fopen(argv[3], "wb");
  if (!out_file) {
    perror(argv[3]);
    return 1;
  }
  edges();
  unsigned char b[10];
  while (written < count) {
    uint64_t kind = below(100);
    if (kind < 20) {
      /* Any 80-bit pattern; 1 in 4 with the all-ones or all-zero exponent (NaN, infinity, denormal classes). */
      unsigned se = (unsigned)next_u64() & 0xffff;
      uint64_t special = below(8);
      if (special == 0) se |= 0x7fff;
      else if (special == 1) se &= 0x8000;
      uint64_t m = next_u64();
      if (special == 0 && below(4) == 0) m = 0x8000000000000000ULL; /* ±infinity */
      pack(b, m, se);
      emit(b);
    } else if (kind < 50) {
      /* Random finite value from 2^-80 µs to 2^64 µs, 1 in 16 negative. */
      unsigned e = 16383 - 80 + (unsigned)below(145);
      unsigned sign = below(16) == 0 ? 0x8000 : 0;
      pack(b, next_u64() | 0x8000000000000000ULL, e | sign);
      emit(b);
    } else if (kind < 60) {
      /* Realistic: up to ~10^10 s of µs, integer + fraction. */
      long double x = (long double)below(1ULL << 44) + (long double)next_u64() / 0x1p64L;
      emit_ld(x);
    } else if (kind < 75) {
      /* Exact ties: odd/16 µs × 1000 = odd × 62.5 ns, a half-integer; odd/8 → an integer. */
      uint64_t odd = (next_u64() >> (11 + below(50))) | 1;
      emit_ld((long double)odd / (below(2) ? 16.0L : 8.0L));
      emit_ld((long double)odd / 16.0L * 0x1p-3L);
    } else if (kind < 90) {
      /* Just below / above an integer or half ns. */
      uint64_t n = next_u64() >> below(64);
      long double x = ((long double)n + (below(2) ? 0.5L : 0.0L)) / 1000.0L;
      int steps = (int)below(4);
      for (int i = 0; i < steps; i++) x = below(2) ? nextafterl(x, INFINITY) : nextafterl(x, -INFINITY);
      emit_ld(x);
    } else {
      /* Near the 2^63 and 2^64 ns boundaries. */
      long double base = below(2) ? 0x1p64L / 1000.0L : 0x1p63L / 1000.0L;
      long double x = base;
      int steps = (int)below(300);
      int up = (int)below(2);
      for (int i = 0; i < steps; i++) x = up ? nextafterl(x, INFINITY) : nextafterl(x, -INFINITY);
      emit_ld(x);
    }
  }
  if (fclose(out_file) != 0) {
    perror("f80_gen: close");
    return 1;
  }
  return 0;
}
