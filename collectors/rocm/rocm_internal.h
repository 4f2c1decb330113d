/*
 * rawtrace ROCm collector, private to collectors/rocm/: the constants, the collector's state (G) and the SDK
 * entry points (S) its files share, and the functions one file calls in another, listed by the file that defines
 * them. Not installed and not for programs: rawtrace_rocm.h is the public API, rocprofiler_abi.h the SDK's ABI.
 *
 * Visibility: the library is built with -fvisibility=hidden and every declaration after the includes is marked
 * hidden too, so the library still exports only rocprofiler_configure and the entry points of rawtrace_rocm.h.
 * Shared names carry rt_rocm_ so that they cannot clash with the profiled program's symbols (nor with the common
 * code's rt_ or the ABI's rt_rocp_). The state G and the SDK's entry points S keep the one-letter names the code
 * reads best with: they are hidden like every name here, so nothing outside the library can see or clash with them.
 */
#ifndef RAWTRACE_ROCM_INTERNAL_H
#define RAWTRACE_ROCM_INTERNAL_H

#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_rocm.h"
#include "rocprofiler_abi.h"
#include "rawtrace_collector.h"
#include "rawtrace_queue.h"
#include "rawtrace_threads.h"
#include "rawtrace_writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)

#define RT_COLLECTOR_VERSION 0x000100u /* 0.1.0 */
#define CBUF_HDR 64u                   /* bytes before each copy buffer (our bookkeeping) */
#define POOL_KEEP 4u                   /* free copy buffers kept for reuse */
#define RECORD_HDR 16u                 /* u32 category, u32 kind, u64 size */
#define MAX_RECORD (64u << 10)         /* a payload `size` above this is implausible: skipped */
#define MAX_MESSAGE (64u << 10)        /* ROCTx messages and kernel names are cut here */
#define MAX_KINDS 256u
#define MAX_PENDING 1024u              /* kernel symbols / messages written early past this many */
#define FLUSH_WAIT_MS 10000
#define DEFAULT_NAME "rawtrace-%h-%p.rawtrace"

enum { IT_BUFFER = 1, IT_KSYM = 2, IT_MARKER = 3 }; /* besides the queue's RT_ITEM_CLOCK and RT_ITEM_LOG */
enum { ST_IDLE = 0, ST_RUNNING = 1, ST_STOPPED = 2, ST_DISABLED = 3, ST_FINISHED = 4 };

/* ------------------------------------------------------------------------------------------------------------------ */
/* State                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

/* A copy buffer: records as written into ACTIVITY, `used` bytes valid. Data starts CBUF_HDR bytes in. */
struct cbuf {
  rt_item it;
  size_t size, used;
  uint64_t records;
  struct cbuf* next_free;
};
_Static_assert(sizeof(struct cbuf) <= CBUF_HDR, "cbuf header must fit in CBUF_HDR");

static inline uint8_t* cbuf_data(struct cbuf* b) { return (uint8_t*)b + CBUF_HDR; }

struct ksym_item {
  rt_item it;
  uint64_t kernel_id, code_object_id, kernel_object;
  uint32_t kernarg, lds, scratch, sgpr, arch_vgpr, accum_vgpr;
  uint32_t len;
  char name[];
};

struct marker_item {
  rt_item it;
  uint64_t corr;
  uint32_t len;
  char msg[];
};

struct config {
  char output[PATH_MAX];
  char kinds[1024]; /* comma-separated SDK kind names, or "default" */
  size_t buffer_size;
  size_t max_memory;
  int handle_signals;
  double exit_timeout;
};

/* SDK entry points (rocprofiler_abi.h). */
struct rt_rocm_sdk {
  rt_rocp_create_context_fn create_context;
  rt_rocp_context_fn start_context, stop_context;
  rt_rocp_create_buffer_fn create_buffer;
  rt_rocp_flush_buffer_fn flush_buffer;
  rt_rocp_configure_buffer_tracing_fn configure_buffer;
  rt_rocp_configure_callback_tracing_fn configure_callback;
  rt_rocp_iterate_kinds_fn iterate_buffer_kinds, iterate_callback_kinds;
  rt_rocp_iterate_ops_fn iterate_buffer_ops, iterate_callback_ops;
  rt_rocp_kind_name_fn buffer_kind_name, callback_kind_name;
  rt_rocp_op_name_fn buffer_op_name, callback_op_name;
  rt_rocp_query_agents_fn query_agents;
  rt_rocp_get_timestamp_fn get_timestamp;
  rt_rocp_get_thread_id_fn get_thread_id;
  rt_rocp_push_external_fn push_external;
  rt_rocp_pop_external_fn pop_external;
  rt_rocp_status_string_fn status_string;
};
extern struct rt_rocm_sdk S; /* rocm_load.c */

/* The collector's state: one per process (G, defined in rawtrace_rocm.c). */
struct rt_rocm_state {
  struct config cfg;
  int verbosity;

  /* what rocprofiler_configure told us */
  uint32_t sdk_version;
  char sdk_version_text[256];
  uint32_t priority;
  int v1; /* 1.0 layouts (24-byte correlation id) */
  char sdk_path[PATH_MAX];

  /* SDK objects and the kinds found by name */
  rt_rocp_context_id ctx;
  rt_rocp_buffer_id buf;
  uint8_t enabled[MAX_KINDS];
  uint8_t api_kind[MAX_KINDS]; /* kinds whose records are API calls (name ends in _API): thread_id after the times */
  uint32_t cb_code_object, cb_marker[2]; /* callback kinds (kMessageKinds); UINT32_MAX = absent */
  int32_t op_ksym;
  int32_t msg_ops[2][3];

  /* output */
  rt_writer* w;
  char path[PATH_MAX];
  pid_t owner_pid;
  atomic_int state;
  atomic_int error;
  atomic_int configured, initialized;
  pthread_mutex_t ctl_mu; /* start/stop/finish */
  int running;

  /* copy-buffer pool (pool_mu) and the buffer being filled (fill_mu) */
  pthread_mutex_t pool_mu;
  struct cbuf* free_list;
  uint32_t free_count;
  size_t bytes_alloc;
  pthread_mutex_t fill_mu;

  /* queue to the writer and its progress */
  rt_queue q;
  pthread_t writer;
  atomic_int writer_started;
  atomic_int joined;

  atomic_int finalize_req;
  atomic_int sink_closed;
  atomic_int write_failed;

  /* writer-thread-only */
  rt_threads threads;
  struct ksym_item** pend_ksym;
  size_t pend_ksym_n, pend_ksym_cap;
  struct marker_item** pend_msg;
  size_t pend_msg_n, pend_msg_cap;
  uint64_t vendor_drops_written, cap_drops_written;

  /* Bytes of kernel-symbol and ROCTx message items queued or pending, not yet written: bounded by a quarter of
   * RAWTRACE_MAX_MEMORY (rt_rocm_small_reserve), so a stalled writer (a paused FIFO reader, a hung file system)
   * cannot make them grow without end. */
  atomic_uint_fast64_t small_bytes;

  /* statistics */
  atomic_uint_fast64_t n_callbacks, n_records, n_vendor_dropped, n_capped, n_skipped, n_activity_bytes, n_ksyms,
      n_messages, t_callback_ns, n_chunks;
};
extern struct rt_rocm_state G; /* rawtrace_rocm.c */

/* An API_NAMES table being built: every buffer kind, then the operations of the kinds we record (rocm_tables.c). */
struct names {
  rt_api_name* v;
  size_t n, cap;
  uint32_t domain;
  rt_rocp_op_name_fn op_name;
};

/* ------------------------------------------------------------------------------------------------------------------ */
/* Small helpers                                                                                                      */
/* ------------------------------------------------------------------------------------------------------------------ */

static inline uint64_t mono_ns(void) { return rt_clock_ns(CLOCK_MONOTONIC); }

/* ------------------------------------------------------------------------------------------------------------------ */
/* Functions and variables shared between the files                                                                   */
/* ------------------------------------------------------------------------------------------------------------------ */

/* rocm_log.c: logging (stderr; warnings and errors also become LOG chunks) */
__attribute__((format(printf, 2, 3))) void rt_rocm_logmsg(int level, const char* fmt, ...);
__attribute__((format(printf, 2, 3))) void rt_rocm_logrec(int level, const char* fmt, ...);
const char* rt_rocm_status_text(rt_rocp_status st);

/* rocm_config.c: configuration (environment) */
void rt_rocm_load_config(struct config* c);
#ifdef RT_ROCM_FAULTS
/* Fault-injection build only (make test-bins: build/c/rocm/faults/): 1 when RAWTRACE_ROCM_FAULTS (a comma list)
 * names `site`, making the allocation at that site fail as if memory had run out. Sites: "pend" (the pending list
 * of kernel symbols / messages grows), "pend-more" (that list grows past its first 64 entries), "ksyms" (the KERNEL_SYMBOLS payload), "strings" (the STRINGS list), "items"
 * (a kernel-symbol or message item in its callback). */
int rt_rocm_fault(const char* site);
#else
#define rt_rocm_fault(site) 0
#endif
int rt_rocm_kind_wanted(const char* name);
/* The next name of a RAWTRACE_ROCM_KINDS list at `s` (comma- or space-separated): `name`/`len` without its '-',
 * `neg` whether it had one; returns where the list goes on, or NULL at its end. */
const char* rt_rocm_next_kind(const char* s, const char** name, size_t* len, int* neg);

/* rocm_load.c: resolving the SDK */
int rt_rocm_load_sdk(rt_rocp_client_finalize_fn fini);

/* rocm_tables.c: API_NAMES and AGENTS */
int rt_rocm_on_kind(uint32_t kind, void* data);
int rt_rocm_write_names(struct names* t);
int rt_rocm_write_agents(void);

/* rocm_buffers.c: copy-buffer pool and the buffer callback */
void rt_rocm_recycle(struct cbuf* b);
void rt_rocm_ship_fill_locked(void);
void rt_rocm_on_buffer(rt_rocp_context_id ctx, rt_rocp_buffer_id bid, rt_rocp_record_header** headers, size_t n,
                       void* data, uint64_t drop_count);

/* rocm_callbacks.c: callback tracing (kernel symbols and ROCTx messages) */
void rt_rocm_configure_callbacks(void);

/* rocm_writer.c: queue and writer thread */
void rt_rocm_enqueue(rt_item* it);
/* Takes `n` bytes of the small items' budget for one new item; 0 when over it (the item is then not made, and
 * counted as dropped by the memory cap). */
int rt_rocm_small_reserve(size_t n);
/* Frees a kernel-symbol or ROCTx message item and gives its bytes back to the budget. */
void rt_rocm_free_small(rt_item* it);
/* Counts `n` kernel-symbol or message items lost to an allocation failure: DROPPED reason 2, as the memory cap. */
void rt_rocm_lost_small(uint64_t n);
void rt_rocm_read_anchor(uint32_t which, rt_clock_anchor_t* a);
void rt_rocm_enqueue_clock(uint32_t which);
int rt_rocm_wrote(int rc);
void rt_rocm_stop_locked(void);
void* rt_rocm_writer_main(void* arg);

/* rocm_exit.c: exit, signals, fork */
void rt_rocm_finish(void);
void rt_rocm_at_exit(void);
void rt_rocm_install_signal_handlers(void);
void rt_rocm_on_fork_child(void);

/* rocm_init.c: initialization (the SDK's initialize) */
int rt_rocm_init_collector(rt_rocp_client_finalize_fn fini);

#pragma GCC visibility pop

#endif /* RAWTRACE_ROCM_INTERNAL_H */
