/*
 * Drives the C container writer (collectors/common/rawtrace_writer.c) for test/format/c_writer.test.ts, which makes
 * the same calls through src/format/writer.ts and compares the bytes. Keep the two call sequences in step.
 *
 *   writer_equiv write OUT [MAX_CHUNKS]   every chunk helper with fixed inputs, the writer's default checksum (XXH64);
 *                                         stops after MAX_CHUNKS chunks
 *   writer_equiv write-crc OUT            the same sequence with CRC-32 payload checksums (rt_writer_set_checksum)
 *   writer_equiv write-xxh32 OUT          the same sequence with XXH32 payload checksums (rt_writer_set_checksum)
 *   writer_equiv interrupted OUT          the same file written through a pipe drained slowly by a child process,
 *                                         while a 200 us SIGALRM (no SA_RESTART) interrupts the writes: exercises
 *                                         the EINTR and short-write paths; prints "signals N"
 *   writer_equiv crc                      prints "off len crc" lines of rt_crc32 over a pattern, for zlib comparison
 *   writer_equiv xxh SEED                 prints "off len xxh32" lines of rt_xxh32 (seed 0) over xorshift32(SEED)
 *                                         bytes: every length 0..300 at offsets 0..7, and long ones at odd offsets
 *   writer_equiv xxh64 SEED               the same lines with rt_xxh64's digest in 16 hex digits instead
 *   writer_equiv selftest                 error-path checks; prints "ok NAME" lines, exits 1 on the first failure
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawtrace_writer.h"
#include "rawtrace_fd.h"

#define ACT_BIG (1u << 20)

/* Byte i of the activity pattern; the test computes the same in TypeScript. */
static uint8_t pattern(uint32_t i) { return (uint8_t)((i * 131u + (i >> 9)) & 0xFFu); }

static uint8_t* big_buffer(void) {
  uint8_t* p = (uint8_t*)malloc(ACT_BIG);
  if (!p) {
    perror("malloc");
    exit(2);
  }
  for (uint32_t i = 0; i < ACT_BIG; i++) p[i] = pattern(i);
  return p;
}

/* Runs `call` unless `max` chunks are already written; returns its error from the enclosing function. */
#define STEP(call)                                                                        \
  do {                                                                                    \
    if (rt_writer_seq(w) >= max) return 0;                                                \
    int rc_ = (call);                                                                     \
    if (rc_) {                                                                            \
      fprintf(stderr, "%s failed: %s\n", #call, strerror(-rc_));                          \
      return rc_;                                                                         \
    }                                                                                     \
  } while (0)

static int write_sequence(rt_writer* w, uint32_t max, const uint8_t* big) {
  /* 1. HEADER with every field set; hostname non-ASCII, command line with NUL separators. */
  static const char cmdline[] = "python3\0train.py\0--lr=0.1\0";
  rt_header_info h;
  rt_header_info_init(&h);
  h.vendor = RT_VENDOR_CUDA;
  h.pointer_size = 8;
  h.vendor_version = 130001;
  h.runtime_version = 12080;
  h.driver_version = 13000;
  h.pid = 4242;
  h.rank = 3;
  h.local_rank = 1;
  h.world_size = 8;
  h.collector_version = 0x010203;
  h.start_ns = UINT64_C(1780000000123456789);
  h.hostname = "h\xc3\xb6st-\xe8\x8a\x82\xe7\x82\xb9"; /* "höst-节点" */
  h.cmdline = cmdline;
  h.cmdline_len = sizeof cmdline - 1; /* the literal's own terminator is not part of it */
  h.vendor_version_text = "CUPTI 13.0.85";
  STEP(rt_writer_header(w, &h));

  /* 2. HEADER with the defaults only (TS: optional fields left out). */
  rt_header_info d;
  rt_header_info_init(&d);
  d.vendor = RT_VENDOR_ROCM_SDK;
  d.vendor_version = 7;
  d.pid = 1;
  d.start_ns = 0;
  STEP(rt_writer_header(w, &d));

  /* 3-5. CLOCK anchors, including the extremes of u64. */
  rt_clock_anchor_t a = {RT_CLOCK_START, UINT64_C(1780000000000000000) - 1000, UINT64_C(1780000000000000000),
                         UINT64_C(123456789012), UINT64_C(123456789000), UINT64_C(223456789012)};
  STEP(rt_writer_clock(w, &a));
  rt_clock_anchor_t b = {RT_CLOCK_END, UINT64_MAX, UINT64_C(9007199254740993), 0, 1, UINT64_C(0x8000000000000000)};
  STEP(rt_writer_clock(w, &b));
  rt_clock_anchor_t c = {RT_CLOCK_PERIODIC, 1, 2, 3, 4, 5};
  STEP(rt_writer_clock(w, &c));

  /* 6-7. KIND_SIZES, then an empty one. */
  static const rt_kind_size ks[] = {{1, 96}, {2, 88}, {3, 216}, {4, 40}, {5, 40}, {10, 216}, {0xFFFFFFFFu, 0}};
  STEP(rt_writer_kind_sizes(w, ks, (uint32_t)(sizeof ks / sizeof ks[0])));
  STEP(rt_writer_kind_sizes(w, NULL, 0));

  /* 8. API_NAMES, with an empty and a non-ASCII name. */
  static const rt_api_name api[] = {
      {RT_CUPTI_DOMAIN_RUNTIME, 211, "cudaLaunchKernel_v7000"},
      {RT_CUPTI_DOMAIN_DRIVER, 307, "cuLaunchKernel"},
      {RT_CUPTI_DOMAIN_RUNTIME, 0, ""},
      {RT_CUPTI_DOMAIN_DRIVER, 0xFFFFFFFFu, "\xce\xbb-api"}, /* "λ-api" */
  };
  STEP(rt_writer_api_names(w, api, 4));

  /* 9-12. ACTIVITY: empty, 1 MiB pattern, 13 bytes (padding), 8 bytes (no padding). */
  STEP(rt_writer_activity(w, NULL, 0));
  STEP(rt_writer_activity(w, big, ACT_BIG));
  STEP(rt_writer_activity(w, big + 7, 13));
  STEP(rt_writer_activity(w, big + 100, 8));

  /* 13. STRINGS: NUL bytes inside, invalid UTF-8, empty, non-ASCII, extreme pointers. */
  static const char with_nul[] = "a\0b\0";
  static const char invalid[] = {'k', (char)0xFF, (char)0xC3, '(', '\\', '"', '\n', '\t'};
  static const char kernel_cjk[] = "\xe6\xa0\xb8\xe5\x87\xbd\xe6\x95\xb0 \xf0\x9f\x9a\x80"; /* "核函数 🚀" */
  static const char mangled[] =
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_";
  const rt_string strs[] = {
      {UINT64_C(0x00007F0012345678), with_nul, 4},
      {UINT64_C(0xFFFFFFFFFFFFFFFF), invalid, (uint32_t)sizeof invalid},
      {0, "", 0},
      {1, NULL, 0},
      {UINT64_C(0x00007F00DEADBEEF), kernel_cjk, (uint32_t)(sizeof kernel_cjk - 1)},
      {UINT64_C(0x0000555500000001), mangled, (uint32_t)(sizeof mangled - 1)},
  };
  STEP(rt_writer_strings(w, strs, (uint32_t)(sizeof strs / sizeof strs[0])));

  /* 14. DEVICES: three, one without a uuid and one with an empty name. */
  rt_device_info dev[3];
  memset(dev, 0, sizeof dev);
  for (uint32_t i = 0; i < 3; i++) {
    dev[i].id = i;
    dev[i].multiprocessors = 132 + i;
    dev[i].global_memory_bytes = UINT64_C(85899345920) + i;
    dev[i].memory_bandwidth = UINT64_C(3352320000000) + i;
    dev[i].core_clock_khz = 1980000 + i;
    dev[i].cc_major = 9;
    dev[i].cc_minor = i;
    dev[i].max_threads_per_block = 1024;
    dev[i].max_threads_per_multiprocessor = 2048;
    dev[i].regs_per_block = 65536;
    dev[i].regs_per_multiprocessor = 65536 + i;
    dev[i].warp_size = 32;
    dev[i].shared_mem_per_block = 49152;
    dev[i].shared_mem_per_multiprocessor = 233472;
    dev[i].shared_mem_per_block_optin = 232448;
    dev[i].max_blocks_per_multiprocessor = 32;
    if (i != 1)
      for (uint32_t k = 0; k < 16; k++) dev[i].uuid[k] = (uint8_t)(0xA0 + 16 * i + k);
  }
  dev[0].name = "NVIDIA H100 80GB HBM3";
  dev[1].name = "";
  dev[2].name = "G\xc3\xa9" "Force \xe2\x84\xa2"; /* "GéForce ™" */
  STEP(rt_writer_devices(w, dev, 3));

  /* 15-16. DROPPED, one beyond 2^32. */
  STEP(rt_writer_dropped(w, 7, RT_DROP_VENDOR));
  STEP(rt_writer_dropped(w, (UINT64_C(1) << 40) + 5, RT_DROP_MEMORY_CAP));

  /* 17. THREAD_NAMES. */
  static const rt_thread_name tn[] = {
      {4242, 4242, "python3"}, {4242, 4250, ""}, {4242, 0xFFFFFFFFu, "pt_autograd_0 \xe2\x9c\x93"}, /* ✓ */
  };
  STEP(rt_writer_thread_names(w, tn, 3));

  /* 18-20. LOG: plain, with a NUL and non-ASCII, empty. */
  STEP(rt_writer_log(w, RT_LOG_INFO, "collector started"));
  static const char msg[] = "disk full: \xc3\xbc\0tail";
  STEP(rt_writer_log_n(w, RT_LOG_ERROR, msg, (uint32_t)(sizeof msg - 1)));
  STEP(rt_writer_log(w, RT_LOG_WARNING, NULL));

  /* 21-22. Raw chunks of an unknown type, without and with CRC. */
  static const uint8_t raw[5] = {1, 2, 3, 4, 5};
  STEP(rt_writer_chunk_opt(w, 200, raw, 5, 0));
  STEP(rt_writer_chunk(w, 0xFFFF, raw, 3));

  /* 23. END. */
  STEP(rt_writer_end(w));
  return 0;
}

static int cmd_write(const char* out, uint32_t max, unsigned sum_flag) {
  uint8_t* big = big_buffer();
  rt_writer* w = rt_writer_open(out);
  if (!w) {
    fprintf(stderr, "rt_writer_open(%s): %s\n", out, strerror(errno));
    return 1;
  }
  if (sum_flag != 0 && rt_writer_set_checksum(w, sum_flag)) return 1; /* 0: the writer's default */
  int rc = write_sequence(w, max, big);
  int rc2 = rt_writer_close(w);
  free(big);
  if (rc || rc2) return 1;
  return 0;
}

static volatile sig_atomic_t signals;
static void on_alarm(int sig) {
  (void)sig;
  signals++;
}

static int cmd_interrupted(const char* out) {
  int fds[2];
  if (pipe(fds)) return perror("pipe"), 1;
  pid_t child = fork();
  if (child < 0) return perror("fork"), 1;
  if (child == 0) {
    /* Reader: drains the pipe in small slices with pauses, so the writer blocks and gets interrupted. */
    close(fds[1]);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) _exit(3);
    char buf[4096];
    for (;;) {
      ssize_t n = read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (write(fd, buf, (size_t)n) != n) _exit(4);
      usleep(50);
    }
    close(fd);
    _exit(0);
  }
  close(fds[0]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: blocked writes return EINTR or short counts */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &it, NULL);

  uint8_t* big = big_buffer();
  rt_writer* w = rt_writer_fdopen(fds[1]);
  int rc = w ? write_sequence(w, UINT32_MAX, big) : -errno;
  int rc2 = rt_writer_close(w);

  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  free(big);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  printf("signals %d\n", (int)signals);
  if (rc || rc2 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "interrupted: rc %d close %d child status %d\n", rc, rc2, status);
    return 1;
  }
  return 0;
}

static int cmd_crc(void) {
  uint8_t* big = big_buffer();
  static const size_t lens[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 4097};
  for (size_t off = 0; off < 8; off++)
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
      printf("%zu %zu %" PRIu32 "\n", off, lens[i], rt_crc32(0, big + off, lens[i]));
  /* continuation: the CRC of the whole buffer in two calls equals the CRC in one */
  uint32_t part = rt_crc32(rt_crc32(0, big, 12345), big + 12345, ACT_BIG - 12345);
  printf("0 %u %" PRIu32 "\n", ACT_BIG, rt_crc32(0, big, ACT_BIG));
  printf("split %u %" PRIu32 "\n", ACT_BIG, part);
  free(big);
  return 0;
}

/* Bytes of xorshift32 from `seed` (each step's low byte), the generator test/format/xxh32.test.ts repeats. */
static void xorshift_fill(uint8_t* p, size_t n, uint32_t seed) {
  uint32_t x = seed ? seed : 1u;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (uint8_t)x;
  }
}

#define XXH_BUF ((1u << 20) + 64u)

/* One line of `cmd_xxh`: the XXH32 (wide = 0) or XXH64 (wide = 1) of [off, off + len). */
static void xxh_line(const uint8_t* buf, size_t off, size_t len, int wide) {
  if (wide) printf("%zu %zu %016" PRIx64 "\n", off, len, rt_xxh64(buf + off, len));
  else printf("%zu %zu %" PRIu32 "\n", off, len, rt_xxh32(buf + off, len, 0));
}

static int cmd_xxh(uint32_t seed, int wide) {
  uint8_t* buf = (uint8_t*)malloc(XXH_BUF);
  if (!buf) return perror("malloc"), 2;
  xorshift_fill(buf, XXH_BUF, seed);
  for (size_t off = 0; off < 8; off++)
    for (size_t len = 0; len <= 300; len++) xxh_line(buf, off, len, wide);
  static const size_t longs[][2] = {{1, 4096 + 13}, {3, 65536 + 7}, {5, (1u << 20) - 3}, {7, 1u << 20}, {0, 1u << 20}};
  for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) xxh_line(buf, longs[i][0], longs[i][1], wide);
  free(buf);
  return 0;
}

#define CHECK(name, cond)                                           \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "FAIL %s (%s:%d)\n", name, __FILE__, __LINE__); \
      return 1;                                                     \
    }                                                               \
    printf("ok %s\n", name);                                        \
  } while (0)

static off_t file_size(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_size : -1;
}

static int cmd_selftest(const char* dir) {
  char path[4096];
  uint8_t small[64];
  memset(small, 0xAB, sizeof small);

  CHECK("crc32 check value", rt_crc32(0, "123456789", 9) == 0xCBF43926u);
  CHECK("crc32 empty", rt_crc32(0, NULL, 0) == 0);
  /* XXH32 known answers (seed 0): the specification's empty-input value, and "abc" as libxxhash 0.8.1 gives it. */
  CHECK("xxh32 empty", rt_xxh32(NULL, 0, 0) == 0x02CC5D05u);
  CHECK("xxh32 abc", rt_xxh32("abc", 3, 0) == 0x32D153FFu);
  CHECK("xxh32 seed", rt_xxh32("", 0, 1) == 0x0B2CB792u);
  /* XXH64 known answers (seed 0) as libxxhash 0.8.1 gives them. */
  CHECK("xxh64 empty", rt_xxh64(NULL, 0) == UINT64_C(0xEF46DB3751D8E999));
  CHECK("xxh64 abc", rt_xxh64("abc", 3) == UINT64_C(0x44BC2CF5AD770999));

  /* A full device refuses the preamble: open fails with ENOSPC. */
  errno = 0;
  rt_writer* full = rt_writer_open("/dev/full");
  CHECK("open /dev/full fails with ENOSPC", full == NULL && errno == ENOSPC);
  CHECK("open missing dir fails", rt_writer_open("/nonexistent-dir/x.rawtrace") == NULL && errno == ENOENT);
  CHECK("fdopen bad fd fails", rt_writer_fdopen(-1) == NULL && errno == EBADF);

  /* Caller mistakes do not poison the writer. */
  snprintf(path, sizeof path, "%s/selftest-args.rawtrace", dir);
  rt_writer* w = rt_writer_open(path);
  CHECK("open", w != NULL);
  CHECK("oversized payload -EMSGSIZE", rt_writer_chunk(w, 5, small, RT_MAX_CHUNK_PAYLOAD + 1u) == -EMSGSIZE);
  CHECK("NULL payload with length -EINVAL", rt_writer_chunk(w, 5, NULL, 4) == -EINVAL);
  CHECK("unknown checksum -EINVAL", rt_writer_set_checksum(w, 3) == -EINVAL && rt_writer_set_checksum(w, 0) == -EINVAL &&
                                        rt_writer_set_checksum(w, 6) == -EINVAL && rt_writer_set_checksum(w, 8) == -EINVAL &&
                                        rt_writer_set_checksum(NULL, RT_CHUNK_FLAG_CRC) == -EINVAL);
  CHECK("writer still usable", rt_writer_error(w) == 0 && rt_writer_chunk(w, 11, small, 9) == 0);
  CHECK("seq counts written chunks", rt_writer_seq(w) == 1);
  CHECK("end", rt_writer_end(w) == 0 && rt_writer_seq(w) == 2);
  CHECK("close", rt_writer_close(w) == 0);
  CHECK("file size", file_size(path) == 16 + (24 + 16) + (24 + 24));
  CHECK("close NULL", rt_writer_close(NULL) == 0);

  /* A pipe whose reader is gone: the first failing chunk returns -EPIPE, later ones are refused the same way. */
  signal(SIGPIPE, SIG_IGN);
  int fds[2];
  CHECK("pipe", pipe(fds) == 0);
  w = rt_writer_fdopen(fds[1]);
  CHECK("fdopen pipe", w != NULL);
  uint8_t pre[16];
  CHECK("preamble readable", read(fds[0], pre, 16) == 16 && memcmp(pre, "RAWTRACE\x01\x00\x02\x00\x00\x00\x00\x00", 16) == 0);
  close(fds[0]);
  CHECK("write to closed pipe -EPIPE", rt_writer_chunk(w, 11, small, 10) == -EPIPE);
  CHECK("error is sticky", rt_writer_error(w) == -EPIPE && rt_writer_log(w, 0, "x") == -EPIPE &&
                               rt_writer_activity(w, small, 8) == -EPIPE && rt_writer_end(w) == -EPIPE);
  CHECK("seq unchanged after error", rt_writer_seq(w) == 0);
  CHECK("close reports the write error", rt_writer_close(w) == -EPIPE);

  /* A file size limit stands in for a full disk: the chunk is cut short (short write, then EFBIG), the file keeps
   * every complete chunk before it, and nothing is written after. */
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old, lim;
  CHECK("getrlimit", getrlimit(RLIMIT_FSIZE, &old) == 0);
  snprintf(path, sizeof path, "%s/selftest-full.rawtrace", dir);
  w = rt_writer_open(path);
  CHECK("open limited", w != NULL);
  CHECK("first chunk", rt_writer_chunk(w, 11, small, 16) == 0); /* 16 + 40 = 56 bytes */
  lim = old;
  lim.rlim_cur = 56 + 30; /* room for the next header and 6 payload bytes */
  CHECK("setrlimit", setrlimit(RLIMIT_FSIZE, &lim) == 0);
  CHECK("chunk past the limit -EFBIG", rt_writer_chunk(w, 11, small, 64) == -EFBIG);
  CHECK("later chunks refused", rt_writer_chunk(w, 11, small, 1) == -EFBIG && rt_writer_end(w) == -EFBIG);
  CHECK("restore rlimit", setrlimit(RLIMIT_FSIZE, &old) == 0);
  CHECK("close limited", rt_writer_close(w) == -EFBIG);
  CHECK("file stops at the limit", file_size(path) == 86);

  /* The dump's descriptor is kept out of the program's way: >= RT_FD_FLOOR, also when standard output is closed (a
   * child: the dump took number 1 before, and the program's printf went into it). */
  pid_t kid = fork();
  if (kid == 0) {
    close(STDIN_FILENO);
    close(STDOUT_FILENO);
    char p2[4096];
    snprintf(p2, sizeof p2, "%s/selftest-nostdout.rawtrace", dir);
    char chosen[4096];
    rt_writer* k = rt_writer_create(p2, chosen, sizeof chosen);
    int fds_ok = k != NULL && fcntl(STDIN_FILENO, F_GETFD) < 0 && fcntl(STDOUT_FILENO, F_GETFD) < 0 &&
                 fcntl(RT_FD_FLOOR, F_GETFD) == FD_CLOEXEC;
    _exit(fds_ok && rt_writer_end(k) == 0 && rt_writer_close(k) == 0 ? 0 : 1);
  }
  int kst = 0;
  CHECK("fork", kid > 0 && waitpid(kid, &kst, 0) == kid);
  CHECK("with stdin and stdout closed the dump is at RT_FD_FLOOR, close-on-exec, 0 and 1 stay closed",
        WIFEXITED(kst) && WEXITSTATUS(kst) == 0);

  /* A program that closes the dump's descriptor and gets its number for its own file: the writer sees another file
   * behind the number and never writes into it (before: every later chunk went into the program's file). */
  snprintf(path, sizeof path, "%s/selftest-reused.rawtrace", dir);
  w = rt_writer_open(path);
  CHECK("open reused", w != NULL && fcntl(RT_FD_FLOOR, F_GETFD) == FD_CLOEXEC);
  CHECK("chunk before", rt_writer_chunk(w, 11, small, 16) == 0);
  char mine[4096];
  snprintf(mine, sizeof mine, "%s/selftest-programs.db", dir);
  int pf = open(mine, O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK("the program's file takes the number", pf >= 0 && close(RT_FD_FLOOR) == 0 && dup2(pf, RT_FD_FLOOR) == RT_FD_FLOOR);
  CHECK("chunk into another file -EBADF", rt_writer_chunk(w, 11, small, 16) == -EBADF);
  CHECK("refused after", rt_writer_end(w) == -EBADF && rt_writer_error(w) == -EBADF);
  CHECK("the program's file untouched", file_size(mine) == 0);
  CHECK("the dump keeps its chunk", file_size(path) == 16 + 40);
  CHECK("close reused leaves the program's file open", rt_writer_close(w) == -EBADF && fcntl(RT_FD_FLOOR, F_GETFD) >= 0);
  CHECK("the program closes its files", close(RT_FD_FLOOR) == 0 && close(pf) == 0);

  /* The same found only at the end (no chunk written since), and in a forked child's rt_writer_forget_fd. */
  for (int forget = 0; forget < 2; forget++) {
    w = rt_writer_open(path);
    CHECK("open again", w != NULL && fcntl(RT_FD_FLOOR, F_GETFD) == FD_CLOEXEC);
    pf = open(mine, O_RDWR | O_TRUNC);
    CHECK("the program's file takes the number again", pf >= 0 && close(RT_FD_FLOOR) == 0 && dup2(pf, RT_FD_FLOOR) == RT_FD_FLOOR);
    if (forget) {
      rt_writer_forget_fd(w);
      CHECK("forget_fd leaves the program's file open", fcntl(RT_FD_FLOOR, F_GETFD) >= 0);
      CHECK("close after forget", rt_writer_close(w) == -EBADF);
    } else {
      CHECK("close at the end leaves the program's file open", rt_writer_close(w) == -EBADF && fcntl(RT_FD_FLOOR, F_GETFD) >= 0);
    }
    CHECK("the program's file untouched again", file_size(mine) == 0 && close(RT_FD_FLOOR) == 0 && close(pf) == 0);
  }

  /* Clock anchor. */
  rt_clock_anchor_t a;
  memset(&a, 0xFF, sizeof a);
  CHECK("clock anchor", rt_clock_anchor(RT_CLOCK_END, 42, &a) == 0);
  CHECK("clock anchor which/vendor", a.which == RT_CLOCK_END && a.vendor_ns == 42);
  CHECK("clock anchor realtime is epoch ns", a.realtime_ns > UINT64_C(1500000000000000000));
  CHECK("clock anchor monotonic", a.monotonic_ns > 0 && a.monotonic_raw_ns > 0 && a.boottime_ns >= a.monotonic_ns);
  CHECK("clock anchor NULL", rt_clock_anchor(0, 0, NULL) == -EINVAL);

  /* rt_buf basics. */
  rt_buf b;
  rt_buf_init(&b);
  rt_buf_u16(&b, 0x0102);
  rt_buf_i32(&b, -2);
  rt_buf_u64(&b, UINT64_C(0x0102030405060708));
  rt_buf_cstr(&b, NULL);
  rt_buf_str(&b, "x\0y", 3);
  static const uint8_t want[] = {2, 1, 0xFE, 0xFF, 0xFF, 0xFF, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 3, 0, 0, 0, 'x', 0, 'y'};
  CHECK("rt_buf little-endian bytes", b.len == sizeof want && memcmp(b.data, want, sizeof want) == 0 && !b.oom);
  for (int i = 0; i < 100000; i++) rt_buf_u32(&b, (uint32_t)i);
  CHECK("rt_buf grows", b.len == sizeof want + 400000 && b.cap >= b.len && !b.oom);
  rt_buf_reset(&b);
  CHECK("rt_buf reset keeps capacity", b.len == 0 && b.cap >= 400000);
  rt_buf_reserve(&b, SIZE_MAX - 8);
  CHECK("rt_buf oom flag on impossible size", b.oom == 1);
  rt_buf_u32(&b, 1);
  CHECK("rt_buf ignores appends after oom", b.len == 0);
  rt_buf_free(&b);
  CHECK("rt_buf free", b.data == NULL && b.cap == 0 && b.len == 0);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "write") == 0)
    return cmd_write(argv[2], argc >= 4 ? (uint32_t)strtoul(argv[3], NULL, 10) : UINT32_MAX, 0);
  if (argc >= 3 && strcmp(argv[1], "write-crc") == 0) return cmd_write(argv[2], UINT32_MAX, RT_CHUNK_FLAG_CRC);
  if (argc >= 3 && strcmp(argv[1], "write-xxh32") == 0) return cmd_write(argv[2], UINT32_MAX, RT_CHUNK_FLAG_XXH32);
  if (argc >= 3 && strcmp(argv[1], "xxh") == 0) return cmd_xxh((uint32_t)strtoul(argv[2], NULL, 0), 0);
  if (argc >= 3 && strcmp(argv[1], "xxh64") == 0) return cmd_xxh((uint32_t)strtoul(argv[2], NULL, 0), 1);
  if (argc >= 3 && strcmp(argv[1], "interrupted") == 0) return cmd_interrupted(argv[2]);
  if (argc >= 2 && strcmp(argv[1], "crc") == 0) return cmd_crc();
  if (argc >= 3 && strcmp(argv[1], "selftest") == 0) return cmd_selftest(argv[2]);
  fprintf(stderr, "usage: %s write OUT [MAX_CHUNKS] | write-crc OUT | write-xxh32 OUT | interrupted OUT | crc | xxh SEED | xxh64 SEED | selftest DIR\n",
          argv[0]);
  return 2;
}
