/*
 * The collector-side cost of the payload checksum (bench/checksum.ts builds and runs this): CPU time of rt_crc32,
 * rt_xxh32 and rt_xxh64 over an 8 MiB buffer (a CUPTI activity buffer's size), and of whole rt_writer_chunk calls
 * writing such buffers to /dev/null with each checksum (header, checksum, writev), the three in turn round by round.
 *
 *   writer_sums ROUNDS      prints one JSON line: median MB/s of each (MB = 10^6 bytes, per CPU second)
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rawtrace_writer.h"

#define BUF (8u << 20)
#define CHUNKS 8

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

/* MB/s of CHUNKS chunks of `buf` written to /dev/null with checksum `flag`; -1 on error. */
static double writer_rate(const uint8_t* buf, unsigned flag) {
  rt_writer* w = rt_writer_open("/dev/null");
  if (!w || rt_writer_set_checksum(w, flag)) return -1;
  double t0 = cpu_now();
  for (int i = 0; i < CHUNKS; i++)
    if (rt_writer_activity(w, buf, BUF)) return -1;
  double t = cpu_now() - t0;
  rt_writer_close(w);
  return (double)BUF * CHUNKS / 1e6 / t;
}

/* The three checksums, in flag order: rates of the function alone and of whole writer calls, per round. */
static const unsigned FLAGS[3] = {RT_CHUNK_FLAG_CRC, RT_CHUNK_FLAG_XXH32, RT_CHUNK_FLAG_XXH64};

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 15;
  if (rounds < 1 || rounds > 1000) return fprintf(stderr, "usage: writer_sums ROUNDS (1..1000)\n"), 2;
  uint8_t* buf = malloc(BUF);
  double* alone[3];
  double* writer[3];
  for (int k = 0; k < 3; k++) {
    alone[k] = calloc((size_t)rounds, sizeof(double));
    writer[k] = calloc((size_t)rounds, sizeof(double));
    if (!alone[k] || !writer[k]) return perror("malloc"), 2;
  }
  if (!buf) return perror("malloc"), 2;
  uint32_t x = 0x5eed;
  for (uint32_t i = 0; i < BUF; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    buf[i] = (uint8_t)x;
  }
  volatile uint64_t sink = 0;
  rt_crc32(0, buf, 64); /* builds the tables outside the timing */
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 3; k++) {
      double t0 = cpu_now();
      sink ^= k == 0 ? rt_crc32(0, buf, BUF) : k == 1 ? rt_xxh32(buf, BUF, 0) : rt_xxh64(buf, BUF);
      alone[k][r] = BUF / 1e6 / (cpu_now() - t0);
    }
    for (int k = 0; k < 3; k++) {
      writer[k][r] = writer_rate(buf, FLAGS[k]);
      if (writer[k][r] < 0) return fprintf(stderr, "writing to /dev/null failed\n"), 1;
    }
  }
  printf("{\"crc32MBs\":%.0f,\"xxh32MBs\":%.0f,\"xxh64MBs\":%.0f,\"writerCrc32MBs\":%.0f,\"writerXxh32MBs\":%.0f,"
         "\"writerXxh64MBs\":%.0f,\"rounds\":%d,\"sink\":%u}\n",
         median(alone[0], rounds), median(alone[1], rounds), median(alone[2], rounds), median(writer[0], rounds),
         median(writer[1], rounds), median(writer[2], rounds), rounds, (unsigned)sink);
  return 0;
}
