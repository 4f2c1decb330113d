/*
 * C writer of the `.rawtrace` container; see rawtrace_writer.h and docs/format.md.
 * Byte-for-byte the same output as src/format/writer.ts for the same calls.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1 /* CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME, O_CLOEXEC with -std=c11 */
#endif

#include "rawtrace_writer.h"
#include "rawtrace_heap.h"
#include "rawtrace_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------------------------ */
/* Little-endian stores (independent of the host's byte order)                                                        */
/* ------------------------------------------------------------------------------------------------------------------ */

static void st16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void st32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static void st64(uint8_t* p, uint64_t v) {
  st32(p, (uint32_t)v);
  st32(p + 4, (uint32_t)(v >> 32));
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* rt_buf                                                                                                             */
/* ------------------------------------------------------------------------------------------------------------------ */

void rt_buf_init(rt_buf* b) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
  b->oom = 0;
}

void rt_buf_free(rt_buf* b) {
  rt_free(b->data);
  rt_buf_init(b);
}

void rt_buf_reset(rt_buf* b) {
  b->len = 0;
  b->oom = 0;
}

int rt_buf_reserve(rt_buf* b, size_t n) {
  if (b->oom) return -1;
  if (n <= b->cap - b->len) return 0;
  if (n > SIZE_MAX / 2 - b->len) {
    b->oom = 1;
    return -1;
  }
  size_t need = b->len + n;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap *= 2;
  uint8_t* next = (uint8_t*)rt_realloc(b->data, cap);
  if (!next) {
    b->oom = 1;
    return -1;
  }
  b->data = next;
  b->cap = cap;
  return 0;
}

/* Makes room for `n` more bytes and counts them as written. Returns where they start, or NULL when the builder is (or
 * now becomes) out of memory. */
static uint8_t* append(rt_buf* b, size_t n) {
  if (rt_buf_reserve(b, n)) return NULL;
  uint8_t* p = b->data + b->len;
  b->len += n;
  return p;
}

void rt_buf_u16(rt_buf* b, uint16_t v) {
  uint8_t* p = append(b, 2);
  if (p) st16(p, v);
}

void rt_buf_u32(rt_buf* b, uint32_t v) {
  uint8_t* p = append(b, 4);
  if (p) st32(p, v);
}

void rt_buf_i32(rt_buf* b, int32_t v) { rt_buf_u32(b, (uint32_t)v); }

void rt_buf_u64(rt_buf* b, uint64_t v) {
  uint8_t* p = append(b, 8);
  if (p) st64(p, v);
}

void rt_buf_bytes(rt_buf* b, const void* p, size_t n) {
  uint8_t* d = n ? append(b, n) : NULL;
  if (d) memcpy(d, p, n);
}

void rt_buf_str(rt_buf* b, const void* p, uint32_t len) {
  rt_buf_u32(b, len);
  rt_buf_bytes(b, p, len);
}

void rt_buf_cstr(rt_buf* b, const char* s) {
  size_t n = s ? strlen(s) : 0;
  if (n > UINT32_MAX) {
    b->oom = 1;
    return;
  }
  rt_buf_str(b, s, (uint32_t)n);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Clocks                                                                                                             */
/* ------------------------------------------------------------------------------------------------------------------ */

static int read_clock(clockid_t id, uint64_t* out) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0) {
    *out = 0;
    return -errno;
  }
  *out = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return 0;
}

int rt_clock_anchor(uint32_t which, uint64_t vendor_ns, rt_clock_anchor_t* out) {
  if (!out) return -EINVAL;
  out->which = which;
  out->vendor_ns = vendor_ns;
  int rc = read_clock(CLOCK_REALTIME, &out->realtime_ns);
  int rc2 = read_clock(CLOCK_MONOTONIC, &out->monotonic_ns);
#ifdef CLOCK_MONOTONIC_RAW
  (void)read_clock(CLOCK_MONOTONIC_RAW, &out->monotonic_raw_ns);
#else
  out->monotonic_raw_ns = 0;
#endif
#ifdef CLOCK_BOOTTIME
  (void)read_clock(CLOCK_BOOTTIME, &out->boottime_ns);
#else
  out->boottime_ns = 0;
#endif
  return rc ? rc : rc2;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Writer                                                                                                             */
/* ------------------------------------------------------------------------------------------------------------------ */

struct rt_writer {
  int fd;
  int same_check;         /* 1: fd's device and inode are known; each chunk checks the number still names that file */
  dev_t dev;
  ino_t ino;
  int error;              /* 0, or the sticky -errno of a failed write */
  uint32_t seq;           /* chunks written successfully */
  uint16_t sum_flag;      /* payload checksum: RT_CHUNK_FLAG_XXH64 (default), RT_CHUNK_FLAG_XXH32 or RT_CHUNK_FLAG_CRC */
  uint64_t activity_bytes; /* ACTIVITY payload bytes written successfully */
  uint64_t dropped_total; /* sum of DROPPED counts */
  rt_buf scratch;         /* payload of the typed helpers, reused */
};

/* Writes all of iov[0..cnt) with writev, continuing after EINTR and short writes. Returns 0 or -errno. */
static int write_iov(int fd, struct iovec* iov, int cnt) {
  while (cnt > 0) {
    ssize_t n = writev(fd, iov, cnt);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) return -EIO;
    size_t left = (size_t)n;
    while (cnt > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      iov++;
      cnt--;
    }
    if (cnt > 0) {
      iov->iov_base = (uint8_t*)iov->iov_base + left;
      iov->iov_len -= left;
    }
  }
  return 0;
}

/* Takes back a SIGPIPE or SIGXFSZ that our write raised (pending now, not in `before`): a signal pending from before
 * is the program's and stays. */
static void take_back(const sigset_t* before) {
  sigset_t now;
  if (sigpending(&now) != 0) return;
  static const int sigs[2] = {SIGPIPE, SIGXFSZ};
  for (int i = 0; i < 2; i++) {
    if (!sigismember(&now, sigs[i]) || sigismember(before, sigs[i])) continue;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sigs[i]);
    const struct timespec zero = {0, 0};
    while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR) {
    }
  }
}

/* write_iov with SIGPIPE and SIGXFSZ blocked in this thread: a reader gone or a file size limit is the error the
 * writer returns (-EPIPE, -EFBIG), never a signal that ends the program — collectors write their first chunks on the
 * program's own thread (docs/collectors: errors never reach the program). Dispositions are left alone; the mask is
 * restored. */
static int write_all(int fd, struct iovec* iov, int cnt) {
  sigset_t quiet, old, before;
  sigemptyset(&quiet);
  sigaddset(&quiet, SIGPIPE);
  sigaddset(&quiet, SIGXFSZ);
  if (pthread_sigmask(SIG_BLOCK, &quiet, &old) != 0) return write_iov(fd, iov, cnt);
  if (sigpending(&before) != 0) sigemptyset(&before);
  int rc = write_iov(fd, iov, cnt);
  if (rc == -EPIPE || rc == -EFBIG) take_back(&before);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

int rt_write_quiet(int fd, const void* p, size_t n) {
  struct iovec iov = {(void*)p, n};
  return write_all(fd, &iov, 1);
}

/* Whether w->fd still names the file the writer opened. A program may close a descriptor it did not open (a library
 * tidying up, a dup2 over it) and open its own file, which gets the freed number: the writer's chunks would land in
 * the program's file, corrupting it. fstat is async-signal-safe (the END chunk may be written in a handler). */
static int still_ours(const rt_writer* w) {
  if (!w->same_check) return 1;
  struct stat st;
  return fstat(w->fd, &st) == 0 && st.st_dev == w->dev && st.st_ino == w->ino;
}

void rt_header_info_init(rt_header_info* h) {
  memset(h, 0, sizeof *h);
  h->pointer_size = (uint32_t)sizeof(void*);
  h->rank = -1;
  h->local_rank = -1;
  h->world_size = -1;
  h->collector_version = 0x000100u;
}

rt_writer* rt_writer_fdopen(int fd) {
  if (fd < 0) {
    errno = EBADF;
    return NULL;
  }
  rt_writer* w = (rt_writer*)rt_calloc(1, sizeof *w);
  if (!w) {
    errno = ENOMEM;
    return NULL;
  }
  uint8_t pre[RT_PREAMBLE_SIZE];
  memcpy(pre, RT_MAGIC, RT_MAGIC_SIZE);
  st16(pre + 8, RT_FORMAT_MAJOR);
  st16(pre + 10, RT_FORMAT_MINOR);
  st32(pre + 12, 0);
  struct iovec iov = {pre, sizeof pre};
  int rc = write_all(fd, &iov, 1);
  if (rc) {
    rt_free(w);
    errno = -rc;
    return NULL;
  }
  w->fd = fd;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    w->same_check = 1;
    w->dev = st.st_dev;
    w->ino = st.st_ino;
  }
  w->sum_flag = RT_CHUNK_FLAG_XXH64;
  rt_buf_init(&w->scratch);
  return w;
}

rt_writer* rt_writer_open(const char* path) {
  if (!path) {
    errno = EINVAL;
    return NULL;
  }
  int fd;
  do fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  while (fd < 0 && errno == EINTR);
  fd = rt_fd_aside(fd);
  if (fd < 0) return NULL;
  rt_writer* w = rt_writer_fdopen(fd);
  if (!w) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return w;
}

/* How long rt_writer_create waits for a FIFO's reader to open it (ms): the program's thread waits meanwhile. */
#define FIFO_READER_WAIT_MS 2000
/* The last rt_writer_create gave up on a FIFO without reader (ENXIO means that, not a device's own ENXIO). */
static int g_fifo_unread;
/* The last rt_writer_create found the FIFO locked by another writer (EBUSY means that). */
static int g_fifo_busy;

/*
 * Opens an existing FIFO or device for writing. A plain open of a FIFO blocks until a reader opens it — forever when
 * none does, inside the program's first CUDA call. So a FIFO is opened non-blocking, which fails with ENXIO while
 * there is no reader: retried for FIFO_READER_WAIT_MS (a reader started alongside the program), then given up
 * (errno ENXIO, rt_writer_strerror). The descriptor is made blocking again: the writer thread's writes wait for a slow
 * reader, as for a file.
 */
static int open_special(const char* path, int fifo) {
  int fd;
  if (!fifo) {
    do fd = open(path, O_WRONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd;
  }
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 || (errno != ENXIO && errno != EINTR)) break;
    if (errno == EINTR) continue;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long waited = (long)(now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
    if (waited >= FIFO_READER_WAIT_MS) {
      g_fifo_unread = 1;
      errno = ENXIO;
      break;
    }
    struct timespec ts = {0, 10 * 1000000L}; /* a signal that cuts it short only makes the next try sooner */
    nanosleep(&ts, NULL);
  }
  if (fd < 0) return -1;
  /* One writer per FIFO: a second process (a child that inherited LD_PRELOAD and RAWTRACE_OUTPUT) would interleave
   * its chunks with ours in the reader's stream. The lock goes with the descriptor: released at exit. */
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    close(fd);
    g_fifo_busy = 1;
    errno = EBUSY;
    return -1;
  }
  /* Another flock error (ENOLCK, a sandbox's EPERM): the lock is a safeguard, not a condition: write without it. */
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

const char* rt_writer_strerror(int e) {
  if (e == ENXIO && g_fifo_unread) return "no process is reading that FIFO (start its reader first)";
  if (e == EBUSY && g_fifo_busy) return "another process writes that FIFO (one writer per FIFO: give each its own)";
  return strerror(e);
}

rt_writer* rt_writer_create(const char* path, char* chosen, size_t chosen_cap) {
  g_fifo_unread = 0;
  g_fifo_busy = 0;
  if (!path || !chosen || chosen_cap == 0) {
    errno = EINVAL;
    return NULL;
  }
  size_t n = strlen(path);
  if (n + 1 > chosen_cap) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  /* "<stem>.N.rawtrace" when the name ends in .rawtrace, else "<path>.N". */
  static const char ext[] = ".rawtrace";
  size_t elen = sizeof ext - 1;
  size_t stem = n >= elen && strcmp(path + n - elen, ext) == 0 ? n - elen : n;
  for (unsigned i = 0; i <= 9999; i++) {
    if (i == 0) {
      memcpy(chosen, path, n + 1);
    } else {
      int k = snprintf(chosen, chosen_cap, "%.*s.%u%s", (int)stem, path, i, path + stem);
      if (k < 0 || (size_t)k >= chosen_cap) {
        errno = ENAMETOOLONG;
        return NULL;
      }
    }
    int fd;
    do fd = open(chosen, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
    int created = 1;
    if (fd < 0 && errno == EEXIST && i == 0) {
      /* A FIFO or a device (/dev/null, /dev/full, a named pipe) is written directly, never replaced. */
      struct stat st;
      if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        fd = open_special(path, S_ISFIFO(st.st_mode));
        if (fd < 0) return NULL;
        created = 0;
      } else {
        errno = EEXIST;
      }
    }
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return NULL;
    }
    /* Out of the program's way: a program started with standard output closed would else write into the dump. */
    fd = rt_fd_aside(fd);
    if (fd < 0) {
      int e = errno;
      if (created) unlink(chosen);
      errno = e;
      return NULL;
    }
    rt_writer* w = rt_writer_fdopen(fd);
    if (!w) {
      int e = errno;
      close(fd);
      if (created) unlink(chosen);
      errno = e;
    }
    return w;
  }
  errno = EEXIST;
  return NULL;
}

int rt_writer_set_checksum(rt_writer* w, unsigned flag) {
  if (!w || (flag != RT_CHUNK_FLAG_XXH64 && flag != RT_CHUNK_FLAG_XXH32 && flag != RT_CHUNK_FLAG_CRC)) return -EINVAL;
  w->sum_flag = (uint16_t)flag;
  return 0;
}

int rt_writer_chunk_opt(rt_writer* w, uint16_t type, const void* payload, uint32_t len, int with_sum) {
  if (!w || (!payload && len > 0)) return -EINVAL;
  if (w->error) return w->error;
  if (len > RT_MAX_CHUNK_PAYLOAD) return -EMSGSIZE;

  static const uint8_t zeros[RT_CHUNK_ALIGN] = {0};
  uint8_t hdr[RT_CHUNK_HEADER_SIZE];
  st32(hdr + 0, RT_CHUNK_SYNC);
  st16(hdr + 4, type);
  st16(hdr + 6, with_sum ? w->sum_flag : 0);
  st32(hdr + 8, w->seq);
  st32(hdr + 12, len);
  uint32_t sum = 0;
  if (with_sum) {
    sum = w->sum_flag == RT_CHUNK_FLAG_CRC     ? rt_crc32(0, payload, len)
          : w->sum_flag == RT_CHUNK_FLAG_XXH32 ? rt_xxh32(payload, len, 0)
                                               : (uint32_t)rt_xxh64(payload, len);
  }
  st32(hdr + 16, sum);
  st32(hdr + 20, rt_crc32(0, hdr, 20));

  uint32_t pad = (RT_CHUNK_ALIGN - (len % RT_CHUNK_ALIGN)) % RT_CHUNK_ALIGN;
  struct iovec iov[3];
  int cnt = 0;
  iov[cnt].iov_base = hdr;
  iov[cnt++].iov_len = sizeof hdr;
  if (len) {
    iov[cnt].iov_base = (void*)(uintptr_t)payload; /* writev does not modify it */
    iov[cnt++].iov_len = len;
  }
  if (pad) {
    iov[cnt].iov_base = (void*)(uintptr_t)zeros;
    iov[cnt++].iov_len = pad;
  }
  int rc;
  if (still_ours(w)) {
    rc = write_all(w->fd, iov, cnt);
  } else {
    /* The number is the program's now: given up without closing it (closing would close the program's file). */
    w->fd = -1;
    rc = -EBADF;
  }
  if (rc) {
    w->error = rc;
    return rc;
  }
  if (type == RT_CHUNK_ACTIVITY) w->activity_bytes += len;
  w->seq++;
  return 0;
}

int rt_writer_chunk(rt_writer* w, uint16_t type, const void* payload, uint32_t len) {
  return rt_writer_chunk_opt(w, type, payload, len, 1);
}

/* Writes the scratch payload as a chunk of `type`, or -ENOMEM / -EMSGSIZE if building it failed. */
static int flush_scratch(rt_writer* w, uint16_t type) {
  if (w->scratch.oom) return -ENOMEM;
  if (w->scratch.len > RT_MAX_CHUNK_PAYLOAD) return -EMSGSIZE;
  return rt_writer_chunk(w, type, w->scratch.data, (uint32_t)w->scratch.len);
}

/* Starts a typed helper: validates the writer and empties the scratch payload. */
static int begin(rt_writer* w) {
  if (!w) return -EINVAL;
  if (w->error) return w->error;
  rt_buf_reset(&w->scratch);
  return 0;
}

/* Appends entry `i` of the caller's array `items` to `b`. Returns 0, or -EINVAL for an entry that cannot be written. */
typedef int (*put_entry_fn)(rt_buf* b, const void* items, uint32_t i);

/* Writes a list chunk (KIND_SIZES, API_NAMES, STRINGS, DEVICES, THREAD_NAMES): `u32 n`, then the `n` entries of
 * `items`, each appended by `put`. Returns as rt_writer_chunk, -EINVAL (NULL `items` with n > 0, or an entry `put`
 * refused) or -ENOMEM. Inline, so that each helper gets its own loop calling its `put` directly. */
static inline int write_list(rt_writer* w, uint16_t type, const void* items, uint32_t n, put_entry_fn put) {
  int rc = begin(w);
  if (rc) return rc;
  if (!items && n) return -EINVAL;
  rt_buf_u32(&w->scratch, n);
  for (uint32_t i = 0; i < n; i++) {
    rc = put(&w->scratch, items, i);
    if (rc) return rc;
  }
  return flush_scratch(w, type);
}

/* The (u32, u32, string) entry of API_NAMES (domain, id, name) and THREAD_NAMES (pid, tid, name). */
static int put_ids_name(rt_buf* b, uint32_t id1, uint32_t id2, const char* name) {
  rt_buf_u32(b, id1);
  rt_buf_u32(b, id2);
  rt_buf_cstr(b, name);
  return 0;
}

int rt_writer_header(rt_writer* w, const rt_header_info* h) {
  int rc = begin(w);
  if (rc) return rc;
  if (!h || (!h->cmdline && h->cmdline_len)) return -EINVAL;
  rt_buf* b = &w->scratch;
  rt_buf_u32(b, h->vendor);
  rt_buf_u32(b, h->pointer_size);
  rt_buf_u32(b, h->vendor_version);
  rt_buf_u32(b, h->runtime_version);
  rt_buf_u32(b, h->driver_version);
  rt_buf_u32(b, h->pid);
  rt_buf_i32(b, h->rank);
  rt_buf_i32(b, h->local_rank);
  rt_buf_i32(b, h->world_size);
  rt_buf_u32(b, h->collector_version);
  rt_buf_u64(b, h->start_ns);
  rt_buf_cstr(b, h->hostname);
  rt_buf_str(b, h->cmdline, h->cmdline_len);
  rt_buf_cstr(b, h->vendor_version_text);
  return flush_scratch(w, RT_CHUNK_HEADER);
}

int rt_writer_clock(rt_writer* w, const rt_clock_anchor_t* a) {
  if (!w || !a) return -EINVAL;
  uint8_t p[48];
  st32(p + 0, a->which);
  st32(p + 4, 0);
  st64(p + 8, a->vendor_ns);
  st64(p + 16, a->realtime_ns);
  st64(p + 24, a->monotonic_ns);
  st64(p + 32, a->monotonic_raw_ns);
  st64(p + 40, a->boottime_ns);
  return rt_writer_chunk(w, RT_CHUNK_CLOCK, p, sizeof p);
}

static int put_kind_size(rt_buf* b, const void* items, uint32_t i) {
  const rt_kind_size* e = (const rt_kind_size*)items + i;
  rt_buf_u32(b, e->kind);
  rt_buf_u32(b, e->size);
  return 0;
}

int rt_writer_kind_sizes(rt_writer* w, const rt_kind_size* pairs, uint32_t n) {
  return write_list(w, RT_CHUNK_KIND_SIZES, pairs, n, put_kind_size);
}

static int put_api_name(rt_buf* b, const void* items, uint32_t i) {
  const rt_api_name* e = (const rt_api_name*)items + i;
  return put_ids_name(b, e->domain, e->id, e->name);
}

int rt_writer_api_names(rt_writer* w, const rt_api_name* names, uint32_t n) {
  return write_list(w, RT_CHUNK_API_NAMES, names, n, put_api_name);
}

int rt_writer_activity(rt_writer* w, const void* buffer, uint32_t len) {
  return rt_writer_chunk(w, RT_CHUNK_ACTIVITY, buffer, len);
}

static int put_string(rt_buf* b, const void* items, uint32_t i) {
  const rt_string* e = (const rt_string*)items + i;
  if (!e->bytes && e->len) return -EINVAL;
  rt_buf_u64(b, e->ptr);
  rt_buf_str(b, e->bytes, e->len);
  return 0;
}

int rt_writer_strings(rt_writer* w, const rt_string* strings, uint32_t n) {
  return write_list(w, RT_CHUNK_STRINGS, strings, n, put_string);
}

static int put_device(rt_buf* b, const void* items, uint32_t i) {
  const rt_device_info* d = (const rt_device_info*)items + i;
  rt_buf_u32(b, d->id);
  rt_buf_u32(b, d->multiprocessors);
  rt_buf_u64(b, d->global_memory_bytes);
  rt_buf_u64(b, d->memory_bandwidth);
  rt_buf_u32(b, d->core_clock_khz);
  rt_buf_u32(b, d->cc_major);
  rt_buf_u32(b, d->cc_minor);
  rt_buf_u32(b, d->max_threads_per_block);
  rt_buf_u32(b, d->max_threads_per_multiprocessor);
  rt_buf_u32(b, d->regs_per_block);
  rt_buf_u32(b, d->regs_per_multiprocessor);
  rt_buf_u32(b, d->warp_size);
  rt_buf_u32(b, d->shared_mem_per_block);
  rt_buf_u32(b, d->shared_mem_per_multiprocessor);
  rt_buf_u32(b, d->shared_mem_per_block_optin);
  rt_buf_u32(b, d->max_blocks_per_multiprocessor);
  rt_buf_bytes(b, d->uuid, sizeof d->uuid);
  rt_buf_cstr(b, d->name);
  return 0;
}

int rt_writer_devices(rt_writer* w, const rt_device_info* devices, uint32_t n) {
  return write_list(w, RT_CHUNK_DEVICES, devices, n, put_device);
}

int rt_writer_devices_handles(rt_writer* w, const rt_device_info* devices, uint32_t n, const rt_device_handle* handles,
                              uint32_t nh) {
  if (!nh) return rt_writer_devices(w, devices, n);
  int rc = begin(w);
  if (rc) return rc;
  if ((!devices && n) || !handles) return -EINVAL;
  rt_buf_u32(&w->scratch, n);
  for (uint32_t i = 0; i < n; i++) {
    rc = put_device(&w->scratch, devices, i);
    if (rc) return rc;
  }
  rt_buf_u32(&w->scratch, nh);
  for (uint32_t i = 0; i < nh; i++) {
    rt_buf_u64(&w->scratch, handles[i].handle);
    rt_buf_bytes(&w->scratch, handles[i].uuid, 16);
    rt_buf_u32(&w->scratch, handles[i].device);
    rt_buf_u32(&w->scratch, handles[i].tile);
  }
  return flush_scratch(w, RT_CHUNK_DEVICES);
}

int rt_writer_dropped(rt_writer* w, uint64_t count, uint32_t reason) {
  if (!w) return -EINVAL;
  w->dropped_total += count;
  uint8_t p[16];
  st64(p + 0, count);
  st32(p + 8, reason);
  st32(p + 12, 0);
  return rt_writer_chunk(w, RT_CHUNK_DROPPED, p, sizeof p);
}

static int put_thread_name(rt_buf* b, const void* items, uint32_t i) {
  const rt_thread_name* e = (const rt_thread_name*)items + i;
  return put_ids_name(b, e->pid, e->tid, e->name);
}

int rt_writer_thread_names(rt_writer* w, const rt_thread_name* names, uint32_t n) {
  return write_list(w, RT_CHUNK_THREAD_NAMES, names, n, put_thread_name);
}

int rt_writer_log_n(rt_writer* w, uint32_t level, const char* message, uint32_t len) {
  int rc = begin(w);
  if (rc) return rc;
  if (!message && len) return -EINVAL;
  rt_buf_u32(&w->scratch, level);
  rt_buf_str(&w->scratch, message, len);
  return flush_scratch(w, RT_CHUNK_LOG);
}

int rt_writer_log(rt_writer* w, uint32_t level, const char* message) {
  size_t n = message ? strlen(message) : 0;
  if (n > RT_MAX_CHUNK_PAYLOAD) return -EMSGSIZE;
  return rt_writer_log_n(w, level, message, (uint32_t)n);
}

int rt_writer_end(rt_writer* w) {
  if (!w) return -EINVAL;
  uint8_t p[24];
  st64(p + 0, w->seq);
  st64(p + 8, w->activity_bytes);
  st64(p + 16, w->dropped_total);
  return rt_writer_chunk(w, RT_CHUNK_END, p, sizeof p);
}

uint32_t rt_writer_seq(const rt_writer* w) { return w ? w->seq : 0; }

int rt_writer_error(const rt_writer* w) { return w ? w->error : -EINVAL; }

void rt_writer_forget_fd(rt_writer* w) {
  if (!w || w->fd < 0) return;
  int saved = errno;
  if (still_ours(w)) close(w->fd); /* else the number names a file of the program's: not ours to close */
  w->fd = -1;
  w->error = -EBADF; /* sticky: nothing more is written through this writer */
  errno = saved;
}

int rt_writer_close(rt_writer* w) {
  if (!w) return 0;
  int rc = w->error;
  /* close(2) is not retried on EINTR: on Linux the descriptor is released either way */
  if (w->fd >= 0 && !still_ours(w)) {
    rc = rc ? rc : -EBADF; /* the program closed our number and opened its own file there: left open */
  } else if (w->fd >= 0 && close(w->fd) != 0 && !rc) {
    rc = -errno;
  }
  rt_buf_free(&w->scratch);
  rt_free(w);
  return rc;
}
