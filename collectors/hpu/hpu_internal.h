/*
 * rawtrace HPU collector, private to collectors/hpu/: the constants, the collector's state (G) and the Synapse entry
 * points (S) its files share, and the functions one file calls in another, listed by the file that defines them. Not
 * installed and not for programs: rawtrace_hpu.h is the public API, synapse_abi.h Synapse's ABI subset.
 *
 * Visibility: the library is built with -fvisibility=hidden and every declaration after the includes is marked hidden
 * too, so the library still exports only the interposed Synapse entry points and rawtrace_hpu.h. Shared names carry
 * rt_hpu_ so that they cannot clash with the profiled program's symbols (nor with the common code's rt_ or the ABI's
 * rt_syn_). G and S keep the one-letter names the code reads best with: hidden like every name here.
 */
#ifndef RAWTRACE_HPU_INTERNAL_H
#define RAWTRACE_HPU_INTERNAL_H

#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_hpu.h"
#include "hpu_strings.h"
#include "hpu_lib_search.h"
#include "synapse_abi.h"
#include "rawtrace_collector.h"
#include "rawtrace_queue.h"
#include "rawtrace_writer.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#define RT_COLLECTOR_VERSION 0x000100u /* 0.1.0 */
#define DEFAULT_NAME "rawtrace-%h-%p.rawtrace"
#define MAX_DEVICES 64
#define TRACE_HEAD 48u     /* HPU_TRACE fields before the buffer (docs/format.md) */
#define MIN_PERIOD_MS 10

#define SYN_EXPORT __attribute__((visibility("default")))

enum { IT_ACQUIRED = 1, IT_RELEASE = 2, IT_DESTROY = 3, IT_FLUSH = 4 };
enum { REASON_RELEASE = 0, REASON_EXIT = 1, REASON_PERIODIC = 2, REASON_EXPLICIT = 3 };
enum { ST_OFF = 0, ST_RUNNING = 1, ST_FINISHED = 2 };

struct dev_item {
  rt_item it;
  uint32_t dev;
};

/* The program's Synapse functions (what our interposers forward to) and the profiler's (hpu_init.c binds them). */
struct rt_hpu_syn {
  rt_syn_initialize_fn initialize;
  rt_syn_destroy_fn destroy;
  rt_syn_device_acquire_fn acquire;
  rt_syn_device_acquire_by_type_fn acquire_by_type;
  rt_syn_device_acquire_by_module_fn acquire_by_module;
  rt_syn_device_release_fn release;
  rt_syn_driver_get_version_fn driver_version;
  rt_syn_device_get_name_fn device_name;
  rt_syn_device_get_info_fn device_info;
  rt_syn_device_get_memory_info_fn memory_info;
  rt_syn_device_malloc_fn dev_malloc;
  rt_syn_device_free_fn dev_free;
  rt_syn_profiler_query_required_memory_fn query_memory;
  rt_syn_profiler_set_user_buffer_fn set_user_buffer;
  rt_syn_profiler_start_fn start;
  rt_syn_profiler_stop_fn stop;
  rt_syn_profiler_get_trace_fn get_trace;
  rt_syn_profiler_get_current_time_ns_fn now;
};
extern struct rt_hpu_syn S; /* hpu_init.c */

/* One device the program acquired (collector thread only). */
struct device {
  int used;     /* slot taken */
  int running;  /* synProfilerStart succeeded and no stop since */
  uint32_t id;
  uint64_t hbm; /* the profiler's device buffer we allocated (0: none) */
  uint32_t pulls;
};

/* The collector's state. */
struct rt_hpu_state {
  int verbosity;
  int handle_signals;
  long period_ms;
  size_t max_memory;
  double exit_timeout;
  char output[PATH_MAX];

  void* lib;            /* our handle on libSynapse */
  char lib_path[PATH_MAX];
  char inactive[400];   /* why the collector only forwards; empty = may record */
  int enabled;          /* RAWTRACE_ENABLE is not 0 */
  int profile_env;      /* 0 the user set HABANA_PROFILE, 1 we set it, 2 the user set "0" */
  pthread_once_t bind_once, start_once;
  int bound;            /* the profiler functions are resolved */

  rt_writer* w;
  char path[PATH_MAX];
  pid_t owner_pid;
  atomic_int state;
  atomic_int write_failed;
  atomic_int said_start, said_get, said_inactive;
  int started_once;     /* a START anchor was written */

  rt_queue q;
  pthread_t thread;
  atomic_int thread_started, finalize_req, joined;
  struct device dev[MAX_DEVICES];
  rt_hpu_strings strings;
  uint64_t next_pull_ms;
  uint64_t n_traces, n_bytes, n_strings, n_unreadable;
};
extern struct rt_hpu_state G; /* rawtrace_hpu.c */

/*
 * A pull (hpu_pull.c): syn_take (Synapse: stop, the anchor, the trace into a buffer of ours), rt_hpu_take_strings (the
 * pointers outside the buffer, read before a restart can free them), rt_hpu_pull_write (the file: the anchor, STRINGS,
 * HPU_TRACE; frees the buffer). `final` marks the stop's anchor END (release, synDestroy, exit) instead of PERIODIC.
 */
struct syn_pull {
  uint32_t dev;
  int final;            /* the device's last pull: an END anchor, else PERIODIC */
  rt_syn_status s;
  uint64_t ns;          /* profiler clock right after the stop */
  rt_clock_anchor_t anchor; /* the host clocks read with it (anchored: 1) */
  int anchored;
  size_t size, n;       /* the trace's size and entries, as the first synProfilerGetTrace answered */
  size_t got, entries;  /* what the second one filled in `mem` + TRACE_HEAD */
  uint8_t* mem;         /* NULL when there is no trace to write */
  int too_big, no_mem;  /* the trace was dropped for RAWTRACE_MAX_MEMORY / the chunk limit, or for lack of memory */
  int strings_oom;      /* rt_hpu_take_strings ran out of memory: some STRINGS entries missing */
};

/* ------------------------------------------------------------------------------------------------------------------ */
/* Functions shared between the files                                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

/* rawtrace_hpu.c: logging, the output, devices, the queue's handler */

/* `rc` of a write: 0, or the write failed (said once, G.write_failed set, writing stops). Returns rc. */
int rt_hpu_wrote(int rc);
/* A line on stderr (per RAWTRACE_LOG) and, when `to_file` and the dump is open, a LOG chunk (collector thread only). */
__attribute__((format(printf, 3, 4))) void rt_hpu_log(int level, int to_file, const char* fmt, ...);
/* The profiler's clock now (ns; 0 when Synapse does not answer). */
uint64_t rt_hpu_profiler_ns(void);
/* A CLOCK chunk with anchor `a`, unless writing stopped. */
void rt_hpu_write_anchor(const rt_clock_anchor_t* a);
/* Whether the program released device `id` (or destroyed Synapse) while the thread had not handled it yet. */
int rt_hpu_device_gone(uint32_t id);
/* synProfilerStart on `d`; 1 when `*a` holds its CLOCK anchor for the caller to write. */
int rt_hpu_start_device(struct device* d, rt_clock_anchor_t* a);
/* The collector thread's handler of one queued item (a struct dev_item); frees it. */
void rt_hpu_handle(rt_item* it);

/* hpu_init.c: the constructor, libSynapse */

/* Resolves the forwarded and the profiler functions once (at the first interposed call); says once why inactive. */
void rt_hpu_bind(void);
/* Sets HABANA_PROFILE=1 unless the user set it (G.profile_env says which). */
void rt_hpu_ensure_profile_env(void);

/* hpu_pull.c: pulls (a device's trace into the file) */

/* A pull of device `d`: stop, trace, strings, restart when `restart`, then the writes. `final`: an END anchor. After a
 * write error only the stop: the profiler stays off, nothing is fetched. */
void rt_hpu_pull(struct device* d, uint32_t reason, int restart, int final);
/* The pointers outside `p`'s trace buffer into G.strings (before any restart). */
void rt_hpu_take_strings(struct syn_pull* p);
/* The file side of a pull (after rt_hpu_take_strings): the anchor, STRINGS, HPU_TRACE; frees the trace. */
void rt_hpu_pull_write(struct syn_pull* p, struct device* d, uint32_t reason);
/* An exit pull's Synapse side (`arg`: a struct syn_pull), for rt_exit_call_owned. */
void rt_hpu_take_exit_pull(void* arg);
/* An exit pull that returned after the flush went on without it: frees its trace and `arg`. */
void rt_hpu_drop_late_pull(void* arg);
/* Trace buffers held at most at once, in number and bytes (the summary line). */
void rt_hpu_held_peak(uint64_t* n, uint64_t* bytes);

/* hpu_thread.c: the collector thread, the exit flush, termination signals */

/* First acquire in this process: the thread, the exit hook, the signal handlers (pthread_once). */
void rt_hpu_start_collector(void);

#pragma GCC visibility pop

#endif /* RAWTRACE_HPU_INTERNAL_H */
