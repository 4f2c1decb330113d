/*
 * rawtrace CUDA collector, private to collectors/cuda/: the constants, the collector's state (G) and the CUPTI
 * entry points (C) its files share, and the functions one file calls in another, listed by the file that defines
 * them. Not installed and not for programs: rawtrace.h is the public API.
 *
 * Visibility: the library is built with -fvisibility=hidden and every declaration after the includes is marked
 * hidden too, so the library still exports only the entry points of rawtrace.h. Shared names carry rt_cuda_ so that
 * they cannot clash with the profiled program's symbols (nor with the common code's rt_). The state G and the entry
 * points C keep the one-letter names the code reads best with: they are hidden like every name here, so nothing
 * outside the library can see or clash with them.
 */
#ifndef RAWTRACE_CUDA_INTERNAL_H
#define RAWTRACE_CUDA_INTERNAL_H

#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace.h"
#include "rawtrace_heap.h"
#include "rawtrace_collector.h"
#include "rawtrace_queue.h"
#include "rawtrace_threads.h"
#include "rawtrace_writer.h"

#include <cupti.h>

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------------------------------------------------------ */
/* Constants                                                                                                          */
/* ------------------------------------------------------------------------------------------------------------------ */

#define RT_COLLECTOR_VERSION 0x000100u /* 0.1.0 */
#define MAX_KIND 128u                  /* kinds probed: 1 .. MAX_KIND-1 */
#define CBUF_HDR 64u                   /* bytes before each buffer handed to CUPTI (our bookkeeping) */
#define CBUF_MAGIC 0x52544246u         /* "FBTR" */
#define CBUF_RESERVE 1u                /* emergency-reserve buffer: contents are discarded */
#define POOL_KEEP 4u                   /* free buffers kept for reuse; more are freed */
#define RESERVE_BUFFERS 2u             /* emergency reserve for CUPTI versions that cannot take a NULL buffer */
#define RESERVE_MAX_SIZE (1u << 20)
#define CUPTI_REJECT_MIN_VERSION 27u   /* CUPTI API 27 (CUDA 12.9): a NULL buffer makes CUPTI drop records */
#define MAX_STRING_BYTES (1u << 20)
#define FLUSH_WAIT_MS 10000
#define SIGNAL_WAIT_MS 3000

enum { LOG_OFF = 0, LOG_ERROR = 1, LOG_WARN = 2, LOG_INFO = 3, LOG_DEBUG = 4 };
_Static_assert((int)LOG_ERROR == (int)RT_V_ERROR && (int)LOG_WARN == (int)RT_V_WARN && (int)LOG_INFO == (int)RT_V_INFO,
               "LOG_* are RT_V_*");
enum { FROM_API = 0, FROM_PRELOAD = 1, FROM_INJECTION = 2 };
enum { INIT_NONE = 0, INIT_OK = 1, INIT_FAILED = -1 };
enum { INIT_DEFER = 1 }; /* init_collector: libcupti not found yet, try again at InitializeInjection */
enum { IT_BUFFER = 1 }; /* besides the queue's own RT_ITEM_CLOCK and RT_ITEM_LOG */

/* CUDA driver API: our own function types (cuda.h renames some entry points with macros). */
typedef CUresult (*fn_cu_int)(int*);
typedef CUresult (*fn_cu_get)(CUdevice*, int);
typedef CUresult (*fn_cu_attr)(int*, CUdevice_attribute, CUdevice);
typedef CUresult (*fn_cu_name)(char*, int, CUdevice);
typedef CUresult (*fn_cu_mem)(size_t*, CUdevice);
typedef CUresult (*fn_cu_uuid)(CUuuid*, CUdevice);
typedef int (*fn_cudart_version)(int*);
/* Optional CUPTI entry points that older headers lack. */
typedef CUptiResult (*fn_cupti_u8)(uint8_t);

/* ------------------------------------------------------------------------------------------------------------------ */
/* State                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Bookkeeping in the CBUF_HDR bytes before each buffer handed to CUPTI. */
struct cbuf {
  rt_item it;
  uint32_t magic;
  uint32_t flags;
  size_t size;
  size_t valid;
  struct cbuf* next_free;
};
_Static_assert(sizeof(struct cbuf) <= CBUF_HDR, "cbuf header must fit in CBUF_HDR");

static inline uint8_t* cbuf_data(struct cbuf* b) { return (uint8_t*)b + CBUF_HDR; }

/* STRINGS table entry: pointer value → the bytes last written for it. */
struct sentry {
  uint64_t ptr; /* 0 = empty slot */
  char* copy;   /* NULL: unreadable so far */
  uint32_t len;
  uint32_t epoch; /* buffer in which the content was last checked */
};

struct config {
  char output[PATH_MAX];
  uint32_t kinds[64];
  uint32_t nkinds;
  size_t buffer_size;
  size_t max_memory;
  double start_delay;
  double duration;
  int signal_no;
  int handle_signals;
  int all_api;
  int preload_mode; /* 0 eager, 1 lazy, 2 off */
  double exit_timeout;
};

/* The collector's state: one per process (G, defined in rawtrace_cuda.c). */
struct rt_cuda_state {
  struct config cfg;

  /* CUPTI */
  void* cupti;
  char cupti_path[PATH_MAX];
  uint32_t cupti_version;
  int can_reject;
  uint32_t kind_size[MAX_KIND];

  /* CUDA driver (optional) */
  void* cuda;
  fn_cu_int cuDeviceGetCount;
  fn_cu_get cuDeviceGet;
  fn_cu_attr cuDeviceGetAttribute;
  fn_cu_name cuDeviceGetName;
  fn_cu_mem cuDeviceTotalMem;
  fn_cu_uuid cuDeviceGetUuid;

  /* output */
  rt_writer* w;
  char path[PATH_MAX];

  /* lifecycle */
  pthread_mutex_t init_mu;
  atomic_int init_state;
  int auto_started;
  pid_t owner_pid;
  atomic_int state; /* enum rawtrace_state */
  atomic_int error;

  /* control (ctl_mu) */
  pthread_mutex_t ctl_mu;
  int collecting;
  atomic_int disabled;
  int started_once;
  uint8_t enabled[MAX_KIND];
  uint8_t enable_warned[MAX_KIND];
  uint64_t start_at; /* CLOCK_MONOTONIC ns of a scheduled start, 0 = none */
  uint64_t stop_at;  /* CLOCK_MONOTONIC ns of a scheduled stop, 0 = none */

  /* buffer pool (pool_mu) */
  pthread_mutex_t pool_mu;
  struct cbuf* free_list;
  uint32_t free_count;
  size_t bytes_alloc;
  struct cbuf* reserve;

  /* queue to the writer thread and its progress */
  rt_queue q;
  pthread_t writer;
  atomic_int writer_started;
  atomic_int joined;

  /* requests to the writer thread (signal handlers and other threads) */
  atomic_uint toggle_req;
  atomic_int finalize_req;
  atomic_int sig_flush_req;
  atomic_int sink_closed; /* callbacks discard buffers: write error or file closed */
  atomic_int atexit_again;

  /* writer-thread-only state */
  unsigned toggles_seen;
  atomic_int write_failed;
  int devices_done;
  int walk_warned;
  uint32_t epoch;
  struct sentry* st;
  size_t st_cap, st_count;
  rt_string* pend_str;
  size_t pend_str_n, pend_str_cap;
  rt_threads threads;
  rt_buf scratch;
  int no_vm_readv;
  uint64_t cap_drops_written;

  /* statistics */
  atomic_uint_fast64_t n_requested, n_refused, n_completed, n_written, n_discarded, n_activity_bytes, n_strings,
      n_vendor_dropped, n_cap_drops, t_callback_ns, t_writer_ns, n_chunks;
  /* Records CUPTI lost that no DROPPED chunk said yet (rt_cuda_note_vendor_drops adds, the writer takes). */
  atomic_uint_fast64_t vendor_drops_pending;
};
extern struct rt_cuda_state G; /* rawtrace_cuda.c */

/* CUPTI entry points, typed from the real prototypes. */
struct rt_cuda_cupti {
  __typeof__(&cuptiGetVersion) GetVersion;
  __typeof__(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
  __typeof__(&cuptiActivityEnable) Enable;
  __typeof__(&cuptiActivityDisable) Disable;
  __typeof__(&cuptiActivityFlushAll) FlushAll;
  __typeof__(&cuptiActivityGetNextRecord) GetNextRecord;
  __typeof__(&cuptiGetTimestamp) GetTimestamp;
  __typeof__(&cuptiGetCallbackName) GetCallbackName;
  __typeof__(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords;
  /* optional */
  __typeof__(&cuptiSetThreadIdType) SetThreadIdType;
  __typeof__(&cuptiGetResultString) GetResultString;
  __typeof__(&cuptiActivityPushExternalCorrelationId) PushExternalCorrelationId;
  __typeof__(&cuptiActivityPopExternalCorrelationId) PopExternalCorrelationId;
  CUptiResult (*EnableRuntimeApi)(CUpti_CallbackId, uint8_t);
  CUptiResult (*EnableDriverApi)(CUpti_CallbackId, uint8_t);
  fn_cupti_u8 EnableCudaEventDeviceTimestamps;
};
extern struct rt_cuda_cupti C; /* cuda_load.c */

/* ------------------------------------------------------------------------------------------------------------------ */
/* Small helpers                                                                                                      */
/* ------------------------------------------------------------------------------------------------------------------ */

static inline uint64_t mono_ns(void) { return rt_clock_ns(CLOCK_MONOTONIC); }

/* Reallocates the array `p` of `*cap` elements of `elem` bytes to twice the capacity (`first` when empty). Returns
 * the new array and updates `*cap`, or returns NULL (`p` still valid) when memory runs out. */
static inline void* grow_array(void* p, size_t* cap, size_t elem, size_t first) {
  size_t ncap = *cap ? *cap * 2 : first;
  void* more = rt_realloc(p, ncap * elem);
  if (more) *cap = ncap;
  return more;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Functions and variables shared between the files                                                                   */
/* ------------------------------------------------------------------------------------------------------------------ */

/* cuda_log.c: logging (one write(2) per line on stderr; warnings and errors also become LOG chunks) */
extern int rt_cuda_log_level;
__attribute__((format(printf, 2, 3))) void rt_cuda_logmsg(int level, const char* fmt, ...);
__attribute__((format(printf, 2, 3))) void rt_cuda_logrec(int level, const char* fmt, ...);
const char* rt_cuda_cupti_error_text(CUptiResult rc);

/* cuda_config.c: configuration (environment) */
void rt_cuda_load_config(struct config* c);

/* cuda_load.c: loading CUPTI and the CUDA driver */
extern char rt_cuda_cupti_problem[512];
int rt_cuda_load_cupti(void);
void rt_cuda_load_driver(void);
uint32_t rt_cuda_driver_version(void);
uint32_t rt_cuda_runtime_version(void);

/* cuda_tables.c: KIND_SIZES and API_NAMES measured at start, DEVICES from the driver */
void rt_cuda_probe_kind_sizes(void);
int rt_cuda_write_kind_sizes(void);
int rt_cuda_write_api_names(void);
void rt_cuda_maybe_write_devices(void);

/* cuda_buffers.c: buffer pool and CUPTI callbacks */
struct cbuf* rt_cuda_reserve_alloc(void);
void rt_cuda_recycle(struct cbuf* b);
/** Adds what CUPTI says it lost since the last call to the count the writer's next DROPPED chunk says (no I/O). */
void rt_cuda_note_vendor_drops(void);
void CUPTIAPI rt_cuda_on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI rt_cuda_on_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size,
                                          size_t valid);

/* cuda_session.c: collection control (ctl_mu held) */
void rt_cuda_disable_kinds_locked(void);
void rt_cuda_fail_cupti_locked(const char* what, CUptiResult rc);
int rt_cuda_start_locked(void);
int rt_cuda_stop_locked(void);

/* cuda_strings.c: the strings and threads a buffer names (writer thread) */
void rt_cuda_walk_buffer(const uint8_t* p, size_t n);

/* cuda_writer.c: queue to the writer thread, and the writer thread */
void rt_cuda_enqueue(rt_item* it);
void rt_cuda_read_anchor(uint32_t which, rt_clock_anchor_t* a);
void rt_cuda_enqueue_clock(uint32_t which);
int rt_cuda_wrote(int rc);
void* rt_cuda_writer_main(void* arg);

/* cuda_exit.c: exit, signals, fork */
void rt_cuda_at_exit(void);
void rt_cuda_register_atexit_again(void);
void rt_cuda_install_signal_handlers(void);
void rt_cuda_on_fork_child(void);

/* cuda_init.c: initialization */
extern _Thread_local int rt_cuda_in_init;
int rt_cuda_ensure_init(int from);

#pragma GCC visibility pop

#endif /* RAWTRACE_CUDA_INTERNAL_H */
