/*
 * rawtrace HPU collector: a library loaded with LD_PRELOAD that records the Synapse profiler's trace buffers of a
 * Habana Gaudi program into a `.rawtrace` file (docs/format.md, vendor 5) with no code change. Loading,
 * configuration and chunk layouts: docs/collectors/hpu.md. Public API: rawtrace_hpu.h. ABI subset: synapse_abi.h.
 *
 * Synapse has no tool-injection hook and hands traces over by pull after stop, so the library defines the device
 * acquire / release entry points itself (the program's calls land here first, LD_PRELOAD) and forwards each to the
 * next definition, libSynapse's:
 *   - Constructor: sets HABANA_PROFILE=1 unless the user set it (Synapse reads it once, in synInitialize, which is
 *     interposed too), opens RAWTRACE_SYNAPSE_LIB when named, or checks that a libSynapse.so is loaded or on the
 *     loader's search path; with none it says once why and only forwards. Nothing else runs in a process that never
 *     acquires a device: no thread, no file.
 *   - synDeviceAcquire / ...ByDeviceType / ...ByModuleId: after a successful acquire, the collector's thread opens the
 *     dump (HEADER, first time), writes HPU_DEVICE, gives the profiler the device buffer it asks for
 *     (synProfilerQueryRequiredMemory → synDeviceMalloc → synProfilerSetUserBuffer) and calls synProfilerStart
 *     (synTraceAll), with a CLOCK anchor. The program's call returns once that is done.
 *   - Pull (release, synDestroy, exit or SIGTERM/SIGINT/SIGHUP, rawtrace_hpu_flush, every RAWTRACE_HPU_PERIOD_MS):
 *     synProfilerStop, a CLOCK anchor, synProfilerGetTrace twice (size, then into our buffer), the pointers outside
 *     the buffer read (hpu_strings.c), synProfilerStart again unless the device goes away, and only then the writes:
 *     the stop's anchor, STRINGS, the buffer verbatim in an HPU_TRACE chunk, the restart's anchor.
 *   - Every Synapse profiler call and every write happens on the collector's one thread (rt_queue), but for the exit
 *     flush's Synapse calls, which run on a thread of their own, one device at a time (finalize); the program's
 *     threads only queue a request and wait for it. One trace is held in memory at a time. Chunks are written whole,
 *     so a process killed at any point leaves a valid prefix; periodic pulls bound what a kill loses and what the
 *     profiler holds.
 *   - Errors never reach the program: a failing profiler call is logged once per kind and that device is left alone;
 *     a write error stops writing.
 */
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

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The program's Synapse functions (what our interposers forward to) and the profiler's. */
static struct {
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
} S;

/* One device the program acquired (collector thread only).                                                           */
struct device {
  int used;     /* slot taken */
  int running;  /* synProfilerStart succeeded and no stop since */
  uint32_t id;
  uint64_t hbm; /* the profiler's device buffer we allocated (0: none) */
  uint32_t pulls;
};

static struct {
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
} G = {.verbosity = RT_V_WARN, .bind_once = PTHREAD_ONCE_INIT, .start_once = PTHREAD_ONCE_INIT};

/* ------------------------------------------------------------------------------------------------------------------ */
/* Logging                                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

static int wrote(int rc) { return rt_check_write(rc, &G.write_failed, G.path, G.verbosity); }

/* A line on stderr (per RAWTRACE_LOG) and, when `to_file` and the dump is open, a LOG chunk (collector thread only). */
__attribute__((format(printf, 3, 4))) static void logmsg(int level, int to_file, const char* fmt, ...) {
  char msg[480];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rt_log_line(G.verbosity, level, msg);
  if (to_file && G.w && !atomic_load(&G.write_failed)) wrote(rt_writer_log(G.w, rt_log_chunk_level(level), msg));
}

static uint64_t mono_ms(void) { return rt_clock_ns(CLOCK_MONOTONIC) / 1000000u; }

/* ------------------------------------------------------------------------------------------------------------------ */
/* Finding libSynapse                                                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

static const char kLibName[] = "libSynapse.so";
static const char* const kLibDirs[] = {"/usr/lib/habanalabs", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                                       "/lib/x86_64-linux-gnu", "/lib64", "/lib"};

#define NEXT(field, name)                                             \
  do {                                                                \
    if (!S.field) *(void**)(&S.field) = dlsym(RTLD_NEXT, name);       \
    if (!S.field && fwd) *(void**)(&S.field) = dlsym(fwd, name);      \
  } while (0)

/*
 * Resolves the forwarded functions (the definition after ours, i.e. the program's libSynapse, or the library we
 * opened when the program's copy is not in the global scope) and, unless inactive, the profiler functions from the
 * library we opened. Runs once, at the first interposed call.
 */
static void bind_synapse(void) {
  if (!G.lib && !G.inactive[0]) {
    G.lib = dlopen(kLibName, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!G.lib) {
      /* the program reached us, so a Synapse is loaded: find the object that defines the next synDeviceAcquire */
      void* next = dlsym(RTLD_NEXT, "synDeviceAcquire");
      Dl_info info;
      if (next && dladdr(next, &info) && info.dli_fname) G.lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    }
    if (!G.lib) G.lib = dlopen(kLibName, RTLD_NOW | RTLD_LOCAL);
    if (!G.lib) snprintf(G.inactive, sizeof G.inactive, "no %s could be opened (%.300s)", kLibName, dlerror());
  }
  /* forwarding works inactive too: a Synapse the program loaded privately (RTLD_LOCAL) is found by its soname */
  void* fwd = G.lib ? G.lib : dlopen(kLibName, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  NEXT(initialize, "synInitialize");
  NEXT(destroy, "synDestroy");
  NEXT(acquire, "synDeviceAcquire");
  NEXT(acquire_by_type, "synDeviceAcquireByDeviceType");
  NEXT(acquire_by_module, "synDeviceAcquireByModuleId");
  NEXT(release, "synDeviceRelease");
  if (G.inactive[0]) return;
  void* ours = dlsym(G.lib, "synDeviceAcquire");
  Dl_info a, b;
  if (ours && S.acquire && (void*)S.acquire != ours && dladdr(ours, &a) && dladdr(*(void**)&S.acquire, &b) &&
      a.dli_fbase != b.dli_fbase) {
    snprintf(G.inactive, sizeof G.inactive, "the program's Synapse (%.150s) is not the one opened (%.150s)",
             b.dli_fname ? b.dli_fname : "?", a.dli_fname ? a.dli_fname : "?");
    return;
  }
#define REQ(field, name)                                                                                  \
  do {                                                                                                    \
    *(void**)(&S.field) = dlsym(G.lib, name);                                                             \
    if (!S.field) {                                                                                       \
      snprintf(G.inactive, sizeof G.inactive, "the Synapse library lacks %s", name);                      \
      return;                                                                                             \
    }                                                                                                     \
  } while (0)
  REQ(start, "synProfilerStart");
  REQ(stop, "synProfilerStop");
  REQ(get_trace, "synProfilerGetTrace");
  REQ(now, "synProfilerGetCurrentTimeNS");
#undef REQ
  *(void**)(&S.query_memory) = dlsym(G.lib, "synProfilerQueryRequiredMemory");
  *(void**)(&S.set_user_buffer) = dlsym(G.lib, "synProfilerSetUserBuffer");
  *(void**)(&S.dev_malloc) = dlsym(G.lib, "synDeviceMalloc");
  *(void**)(&S.dev_free) = dlsym(G.lib, "synDeviceFree");
  *(void**)(&S.driver_version) = dlsym(G.lib, "synDriverGetVersion");
  *(void**)(&S.device_name) = dlsym(G.lib, "synDeviceGetName");
  *(void**)(&S.device_info) = dlsym(G.lib, "synDeviceGetInfo");
  *(void**)(&S.memory_info) = dlsym(G.lib, "synDeviceGetMemoryInfo");
  Dl_info info;
  if (dladdr(*(void**)&S.start, &info) && info.dli_fname) snprintf(G.lib_path, sizeof G.lib_path, "%s", info.dli_fname);
  G.bound = 1;
}

static void bind(void) {
  pthread_once(&G.bind_once, bind_synapse);
  if (G.inactive[0] && !atomic_exchange(&G.said_inactive, 1))
    logmsg(RT_V_WARN, 0, "HPU collector inactive: %s", G.inactive);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Output (collector thread)                                                                                          */
/* ------------------------------------------------------------------------------------------------------------------ */

static uint64_t profiler_ns(void) {
  uint64_t ns = 0;
  if (S.now(&ns) != RT_SYN_SUCCESS) ns = 0;
  return ns;
}

static void write_anchor(const rt_clock_anchor_t* a) {
  if (G.w && !atomic_load(&G.write_failed)) wrote(rt_writer_clock(G.w, a));
}

/* Synapse's "x.y.z.w" driver version → 10000 × x + 100 × y + z, and the text. */
static uint32_t synapse_version(char* text, size_t cap) {
  text[0] = 0;
  if (!S.driver_version || S.driver_version(text, (int)cap) != RT_SYN_SUCCESS) {
    text[0] = 0;
    return 0;
  }
  text[cap - 1] = 0;
  unsigned v[3] = {0, 0, 0};
  sscanf(text, "%u.%u.%u", &v[0], &v[1], &v[2]);
  return 10000u * v[0] + 100u * v[1] + v[2];
}

/* A forked child (a worker that never execs) writes nothing (its pid is not the owner's) and lets go of the parent's
 * descriptor: a FIFO's reader must see its end when the parent closes it, not when the child exits. */
static void on_fork_child(void) { rt_writer_forget_fd(G.w); }

static int open_output(void) {
  uint64_t start = rt_clock_ns(CLOCK_REALTIME);
  char pattern[PATH_MAX];
  int expanded = rt_expand_output(G.output, DEFAULT_NAME, pattern, sizeof pattern, start);
  G.w = expanded == 0 ? rt_writer_create(pattern, G.path, sizeof G.path) : NULL; /* a cut name: ENAMETOOLONG */
  if (!G.w) {
    logmsg(RT_V_ERROR, 0, "HPU collector inactive: cannot create %.300s: %s", pattern, rt_writer_strerror(errno));
    atomic_store(&G.write_failed, 1);
    return -1;
  }
  rt_env_checksum(G.w, G.verbosity);
  rt_dump_created(G.verbosity, G.output, DEFAULT_NAME, pattern, G.path);
  static int fork_hook;
  if (!fork_hook++) pthread_atfork(NULL, NULL, on_fork_child);
  rt_header_info hi;
  rt_header_info_init(&hi);
  static char host[256], cmdline[4096], vtext[128];
  rt_header_process(&hi, start, host, cmdline, sizeof cmdline);
  hi.vendor = RT_VENDOR_HABANA;
  hi.vendor_version = synapse_version(vtext, sizeof vtext);
  hi.vendor_version_text = vtext;
  hi.collector_version = RT_COLLECTOR_VERSION;
  wrote(rt_writer_header(G.w, &hi));
  logmsg(RT_V_INFO, 1, "recording Synapse %s (%.200s) into %.200s", vtext[0] ? vtext : "(version unknown)", G.lib_path,
         G.path);
  return 0;
}

/* HPU_DEVICE: id, synDeviceType, HBM bytes, name (synDeviceGetName, else from the type). */
static void write_device(uint32_t id) {
  rt_syn_device_info info;
  memset(&info, 0, sizeof info);
  uint32_t type = 0;
  if (S.device_info && S.device_info(id, &info) == RT_SYN_SUCCESS) type = (uint32_t)info.device_type;
  uint64_t free_b = 0, total = 0;
  if (!S.memory_info || S.memory_info(id, &free_b, &total) != RT_SYN_SUCCESS) total = info.dram_size;
  char name[256] = "";
  if (!S.device_name || S.device_name(name, (int)sizeof name, id) != RT_SYN_SUCCESS) name[0] = 0;
  name[sizeof name - 1] = 0;
  if (!name[0]) {
    const char* t = type == RT_SYN_DEVICE_GAUDI ? "GAUDI" : type == RT_SYN_DEVICE_GAUDI2 ? "GAUDI2"
                    : type == RT_SYN_DEVICE_GAUDI3 ? "GAUDI3" : "";
    snprintf(name, sizeof name, "%s", t);
  }
  uint32_t len = (uint32_t)strlen(name);
  uint8_t p[20 + sizeof name];
  memcpy(p, &id, 4);
  memcpy(p + 4, &type, 4);
  memcpy(p + 8, &total, 8);
  memcpy(p + 16, &len, 4);
  memcpy(p + 20, name, len);
  wrote(rt_writer_chunk(G.w, RT_CHUNK_HPU_DEVICE, p, 20 + len));
}

/*
 * Devices the program went on to release (or a Synapse it destroyed) while the collector thread had not handled that
 * release yet: request() gave up waiting (the thread was stuck on its output). From then on the thread must not call
 * Synapse for them — the device, or all of Synapse, may be gone — and forgets them instead: set by the program's
 * thread, read by the collector's; a device's flag is cleared when the thread reaches that release in its queue (a
 * later acquire of the same id is a new device).
 */
static atomic_int g_abandoned[MAX_DEVICES];
static atomic_int g_abandoned_all;

static int device_gone(uint32_t id) {
  return atomic_load(&g_abandoned_all) || atomic_load(&g_abandoned[id % MAX_DEVICES]);
}

static struct device* find_device(uint32_t id) {
  for (int i = 0; i < MAX_DEVICES; i++)
    if (G.dev[i].used && G.dev[i].id == id) return &G.dev[i];
  return NULL;
}

/*
 * synProfilerStart on `d`; `*a` gets its CLOCK anchor (START the first time in the file), read with the profiler's
 * clock right after the start, for the caller to write. Returns 1 when there is an anchor to write.
 */
static int start_device(struct device* d, rt_clock_anchor_t* a) {
  rt_syn_status s = S.start(RT_SYN_TRACE_ALL, d->id);
  uint64_t ns = profiler_ns();
  if (s != RT_SYN_SUCCESS) {
    d->running = 0;
    if (!atomic_exchange(&G.said_start, 1)) {
      const char* why = G.profile_env == 2 ? "HABANA_PROFILE=0 keeps Synapse's profiler off"
                        : G.profile_env == 1 ? "Synapse was initialized before HABANA_PROFILE could be set: set "
                                               "HABANA_PROFILE=1 before the program starts"
                                             : "is HABANA_PROFILE set, and the device buffer given?";
      logmsg(RT_V_WARN, 1, "synProfilerStart(device %u) answered %d; device %u is not recorded (%s)", d->id, s, d->id,
             why);
    }
    return 0;
  }
  d->running = 1;
  int anchored = rt_clock_anchor(G.started_once ? RT_CLOCK_PERIODIC : RT_CLOCK_START, ns, a) == 0;
  G.started_once = 1;
  return anchored;
}

static void on_acquired(uint32_t id) {
  if (device_gone(id)) return; /* acquired, then released before this thread got here: nothing to set up */
  if (!G.w && !atomic_load(&G.write_failed) && open_output() != 0) return;
  if (atomic_load(&G.write_failed) || find_device(id)) return;
  struct device* d = NULL;
  for (int i = 0; i < MAX_DEVICES && !d; i++)
    if (!G.dev[i].used) d = &G.dev[i];
  if (!d) {
    logmsg(RT_V_WARN, 1, "more than %d devices acquired; device %u is not recorded", MAX_DEVICES, id);
    return;
  }
  memset(d, 0, sizeof *d);
  d->used = 1;
  d->id = id;
  write_device(id);
  uint32_t need = 0;
  if (S.query_memory && S.query_memory(id, &need) == RT_SYN_SUCCESS && need > 0) {
    uint64_t addr = 0;
    rt_syn_status s = S.dev_malloc && S.set_user_buffer ? S.dev_malloc(id, need, 0, 0, &addr) : RT_SYN_UNSUPPORTED;
    if (s == RT_SYN_SUCCESS) {
      d->hbm = addr;
      s = S.set_user_buffer(id, (void*)(uintptr_t)addr);
    }
    if (s != RT_SYN_SUCCESS)
      logmsg(RT_V_WARN, 1, "the profiler of device %u asks for %u bytes of device memory; giving them failed (%d)", id,
             need, s);
  }
  rt_clock_anchor_t a;
  if (start_device(d, &a)) write_anchor(&a);
}

/* The HPU_TRACE payload head (docs/format.md): base, size, entries, device, trace type, reason, pull, profiler ns. */
static void fill_head(uint8_t* p, uint64_t base, uint64_t size, uint64_t n, uint32_t dev, uint32_t reason,
                      uint32_t pull, uint64_t ns) {
  uint32_t type = RT_SYN_TRACE_ALL;
  memcpy(p, &base, 8);
  memcpy(p + 8, &size, 8);
  memcpy(p + 16, &n, 8);
  memcpy(p + 24, &dev, 4);
  memcpy(p + 28, &type, 4);
  memcpy(p + 32, &reason, 4);
  memcpy(p + 36, &pull, 4);
  memcpy(p + 40, &ns, 8);
}

/*
 * A pull: syn_take (Synapse: stop, the anchor, the trace into a buffer of ours), take_strings (the pointers outside the
 * buffer, read before a restart can free them), pull_write (the file: the anchor, STRINGS, HPU_TRACE; frees the
 * buffer). `final` marks the stop's anchor END (release, synDestroy, exit) instead of PERIODIC.
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
  int strings_oom;      /* take_strings ran out of memory: some STRINGS entries are missing */
};

/*
 * Trace buffers held (allocated, not yet freed), now and at most at once, in number and bytes: what the pulls cost in
 * memory, said in the summary line (RAWTRACE_LOG=info). Atomic: a late exit pull frees its buffer on its own thread.
 */
static atomic_uint_fast64_t g_held, g_held_bytes, g_held_peak, g_held_peak_bytes;

static void raise_to(atomic_uint_fast64_t* peak, uint64_t v) {
  uint_fast64_t cur = atomic_load(peak);
  while (cur < v && !atomic_compare_exchange_weak(peak, &cur, v)) {
  }
}

/* A buffer for `p`'s trace (TRACE_HEAD + p->size bytes, 64-byte aligned) into p->mem; 0, or -1 without memory. */
static int trace_alloc(struct syn_pull* p) {
  size_t bytes = TRACE_HEAD + p->size;
  if (posix_memalign((void**)&p->mem, 64, bytes) != 0) {
    p->mem = NULL;
    return -1;
  }
  raise_to(&g_held_peak, atomic_fetch_add(&g_held, 1) + 1);
  raise_to(&g_held_peak_bytes, atomic_fetch_add(&g_held_bytes, bytes) + bytes);
  return 0;
}

static void trace_free(struct syn_pull* p) {
  if (!p->mem) return;
  atomic_fetch_sub(&g_held, 1);
  atomic_fetch_sub(&g_held_bytes, TRACE_HEAD + p->size);
  free(p->mem);
  p->mem = NULL;
}

/* The Synapse side of a pull: stop, the trace's size, then the trace into a buffer of ours. Touches neither the
 * file nor the device table (at exit it runs on a thread of its own: rt_exit_call_owned). */
static void syn_take(struct syn_pull* p) {
  p->s = S.stop(RT_SYN_TRACE_ALL, p->dev);
  p->ns = profiler_ns();
  // The host clocks with it, at once: read after the trace is fetched, they would lag the profiler's clock by the
  // fetch (169 ms for a 20,000-step exit pull) and stretch the device timeline between the anchors.
  p->anchored = rt_clock_anchor(p->final ? RT_CLOCK_END : RT_CLOCK_PERIODIC, p->ns, &p->anchor) == 0;
  if (p->s == RT_SYN_SUCCESS) p->s = S.get_trace(RT_SYN_TRACE_ALL, p->dev, RT_SYN_TRACE_FORMAT_TEF, NULL, &p->size, &p->n);
  if (p->s != RT_SYN_SUCCESS || p->size == 0) return;
  if (p->size > RT_MAX_CHUNK_PAYLOAD - TRACE_HEAD || p->size > G.max_memory) {
    p->too_big = 1;
  } else if (trace_alloc(p) != 0) {
    p->no_mem = 1;
  } else {
    p->got = p->size;
    p->s = S.get_trace(RT_SYN_TRACE_ALL, p->dev, RT_SYN_TRACE_FORMAT_TEF, p->mem + TRACE_HEAD, &p->got, &p->entries);
  }
}

/* Whether `p` holds a trace to write. */
static int has_trace(const struct syn_pull* p) { return p->mem && p->s == RT_SYN_SUCCESS && p->got <= p->size; }

/* The pointers outside the trace's buffer into G.strings (collector thread): read before the profiler restarts, as
 * Synapse may free what they point to then (the test double does). */
static void take_strings(struct syn_pull* p) {
  if (!has_trace(p)) return;
  const uint8_t* buf = p->mem + TRACE_HEAD; /* 16-byte aligned like synTraceEvent */
  uint64_t num = p->entries;
  if (p->got >= RT_SYN_TRACE_TRAILER) memcpy(&num, buf + p->got - RT_SYN_TRACE_TRAILER, sizeof num);
  if (num > p->entries) num = p->entries;
  p->strings_oom = rt_hpu_strings_collect(&G.strings, buf, (uint64_t)(uintptr_t)buf, p->got, num) != 0;
}

/* The file side of a pull (after take_strings): the CLOCK anchor, STRINGS, the HPU_TRACE chunk; frees the buffer. */
static void pull_write(struct syn_pull* p, struct device* d, uint32_t reason) {
  if (p->anchored) write_anchor(&p->anchor);
  if (p->too_big) {
    logmsg(RT_V_WARN, 1, "device %u: a trace of %zu bytes exceeds %s; its %zu entries are dropped (pull more often: "
           "RAWTRACE_HPU_PERIOD_MS)", d->id, p->size, p->size > G.max_memory ? "RAWTRACE_MAX_MEMORY" : "a chunk", p->n);
    wrote(rt_writer_dropped(G.w, p->n, RT_DROP_MEMORY_CAP));
  } else if (p->no_mem) {
    logmsg(RT_V_WARN, 1, "device %u: no memory for a trace of %zu bytes; %zu entries dropped", d->id, p->size, p->n);
    wrote(rt_writer_dropped(G.w, p->n, RT_DROP_MEMORY_CAP));
  } else if (has_trace(p) && !rt_queue_exit_skip(&G.q, TRACE_HEAD + p->got)) { /* else the exit's time is up */
    uint64_t t0 = rt_clock_ns(CLOCK_MONOTONIC);
    if (p->strings_oom)
      logmsg(RT_V_WARN, 1, "device %u: out of memory while resolving strings; some are missing", d->id);
    if (G.strings.n && wrote(rt_writer_strings(G.w, G.strings.v, (uint32_t)G.strings.n)) == 0)
      G.n_strings += G.strings.n;
    G.n_unreadable += G.strings.unreadable;
    fill_head(p->mem, (uint64_t)(uintptr_t)(p->mem + TRACE_HEAD), p->got, p->entries, d->id, reason, d->pulls, p->ns);
    if (wrote(rt_writer_chunk(G.w, RT_CHUNK_HPU_TRACE, p->mem, (uint32_t)(TRACE_HEAD + p->got))) == 0) {
      G.n_traces++;
      G.n_bytes += p->got;
    }
    rt_queue_note_write(&G.q, TRACE_HEAD + p->got, rt_clock_ns(CLOCK_MONOTONIC) - t0);
  }
  if (p->s != RT_SYN_SUCCESS && !atomic_exchange(&G.said_get, 1))
    logmsg(RT_V_WARN, 1, "device %u: synProfilerStop / synProfilerGetTrace answered %d; that trace is lost", d->id,
           p->s);
  trace_free(p);
  d->pulls++;
}

static void pull(struct device* d, uint32_t reason, int restart, int final) {
  if (!d->running) return;
  if (device_gone(d->id)) {
    d->running = 0;
    logmsg(RT_V_WARN, 1, "device %u was released before its trace could be pulled (the output was stalled); its "
           "last trace is lost", d->id);
    return;
  }
  struct syn_pull p = {.dev = d->id, .final = final};
  syn_take(&p);
  d->running = 0;
  take_strings(&p);
  // Restarted before the writes: an output that stalls (a FIFO read late, a slow disk) must not keep the profiler
  // stopped, or the device's work meanwhile is not recorded. Its anchor goes after the stop's, as both were read.
  rt_clock_anchor_t a;
  int anchored = restart && start_device(d, &a);
  pull_write(&p, d, reason);
  if (anchored) write_anchor(&a);
}

/* The device goes away (release, synDestroy): final pull, then the profiler's device buffer is freed. */
static void drop_device(struct device* d) {
  pull(d, REASON_RELEASE, 0, 1);
  if (d->hbm && S.dev_free && !device_gone(d->id)) S.dev_free(d->id, d->hbm, 0);
  memset(d, 0, sizeof *d);
}

static void handle(rt_item* it) {
  struct dev_item* di = (struct dev_item*)it;
  if (!atomic_load(&G.write_failed) || it->type == IT_RELEASE || it->type == IT_DESTROY) {
    switch (it->type) {
      case IT_ACQUIRED: on_acquired(di->dev); break;
      case IT_RELEASE: {
        struct device* d = find_device(di->dev);
        if (d) drop_device(d);
        atomic_store(&g_abandoned[di->dev % MAX_DEVICES], 0); /* that release is behind us: the id is free again */
        break;
      }
      case IT_DESTROY:
        for (int i = 0; i < MAX_DEVICES; i++)
          if (G.dev[i].used) drop_device(&G.dev[i]);
        break;
      case IT_FLUSH:
        for (int i = 0; i < MAX_DEVICES; i++)
          if (G.dev[i].running) pull(&G.dev[i], REASON_EXPLICIT, 1, 0);
        break;
      default: break;
    }
  }
  free(it);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Collector thread, exit, signals                                                                                    */
/* ------------------------------------------------------------------------------------------------------------------ */

/* An exit pull's Synapse side, on a thread of its own (rt_exit_call_owned). */
static void take_exit_pull(void* arg) { syn_take((struct syn_pull*)arg); }

/* An exit pull that returned after the flush went on without it: its thread frees what it took. */
static void drop_late_pull(void* arg) {
  trace_free((struct syn_pull*)arg);
  free(arg);
}

static void finalize(void) {
  rt_queue_begin_exit_flush(&G.q); /* batches no longer stop at the exit: this is the flush */
  rt_queue_drain_to(&G.q, handle, rt_queue_last(&G.q));
  atomic_store(&G.state, ST_FINISHED);
  /* One device at a time: its trace taken, written and freed before the next device's is taken, so the flush holds
   * one trace, as every other pull. The Synapse side runs on a thread of its own (rt_exit_call_owned), bounded when a
   * termination signal asked for this flush (half the exit timeout for all devices together): a program thread
   * stopped in its handler while it held Synapse's lock (inside a launch) would keep synProfilerStop from returning,
   * and the file would end without END. A pull given up on is that thread's: it frees the trace if it returns. */
  long spent = 0, bound = 0;
  int lost = 0, skipped = 0;
  for (int i = 0; i < MAX_DEVICES; i++) {
    struct device* d = &G.dev[i];
    if (!d->used || !d->running) continue;
    if (device_gone(d->id)) {
      pull(d, REASON_EXIT, 0, 1); /* says the trace is lost */
      continue;
    }
    if (lost) { // Not again after a call that did not return: it would wait on the same lock.
      d->running = 0;
      lost++;
      continue;
    }
    if (rt_queue_exit_skip(&G.q, 0)) { /* the flush's time is up: not even fetched (counted, said below) */
      d->running = 0;
      continue;
    }
    struct syn_pull* p = (struct syn_pull*)calloc(1, sizeof *p);
    if (!p) {
      pull(d, REASON_EXIT, 0, 1); /* no memory to hand a pull over: here, unbounded */
      continue;
    }
    p->dev = d->id;
    p->final = 1;
    d->running = 0; /* also when the call does not return: a release still queued must not pull and wait on it */
    int r = rt_exit_call_owned(&G.q, take_exit_pull, p, drop_late_pull, G.exit_timeout, &spent, &bound);
    if (r == 0) {
      lost = 1; /* p is the late call's now */
      continue;
    }
    if (r < 0) { /* the time the calls may take after the signal is spent: not started, p still ours */
      free(p);
      skipped++;
      continue;
    }
    take_strings(p);
    pull_write(p, d, REASON_EXIT);
    free(p);
  }
  if (lost)
    logmsg(RT_V_WARN, 1, "exit flush: synProfilerStop / synProfilerGetTrace did not return within %.1f s (a thread "
           "holding Synapse's lock was stopped, e.g. by the signal being handled); the last traces of %d device(s) "
           "are not in the file", (double)bound / 1000.0, lost);
  if (skipped)
    logmsg(RT_V_WARN, 1, "exit flush: the %.1f s Synapse's calls may take after the termination signal were spent by "
           "the devices before; the last traces of %d device(s) were not taken", (double)bound / 1000.0, skipped);
  rt_queue_drain(&G.q, handle);
  if (G.w && !atomic_load(&G.write_failed))
    rt_queue_write_exit_left(&G.q, G.w, G.verbosity, "device traces", " of them fetched", wrote);
  if (G.w) {
    if (G.n_unreadable)
      logmsg(RT_V_WARN, 1, "%llu pointer(s) outside the trace buffers could not be read",
             (unsigned long long)G.n_unreadable);
    if (!atomic_load(&G.write_failed)) wrote(rt_writer_end(G.w));
    rt_writer* w = G.w; /* unset before it is freed: the fork handler must never see a freed writer */
    G.w = NULL;
    rt_writer_close(w);
    logmsg(RT_V_INFO, 0, "wrote %.300s: %llu traces, %llu trace bytes, %llu strings; at most %llu trace buffer(s), "
           "%llu bytes, held at once", G.path, (unsigned long long)G.n_traces, (unsigned long long)G.n_bytes,
           (unsigned long long)G.n_strings, (unsigned long long)atomic_load(&g_held_peak),
           (unsigned long long)atomic_load(&g_held_peak_bytes));
  }
  rt_hpu_strings_free(&G.strings);
}

static void* thread_main(void* arg) {
  (void)arg;
  rt_thread_enter("rawtrace-hpu");
  G.next_pull_ms = mono_ms() + (uint64_t)G.period_ms;
  while (!atomic_load(&G.finalize_req)) {
    long wait = -1;
    if (G.period_ms > 0) {
      uint64_t now = mono_ms();
      wait = G.next_pull_ms > now ? (long)(G.next_pull_ms - now) : 0;
    }
    rt_queue_sleep(&G.q, wait);
    rt_queue_drain_once(&G.q, handle); /* one batch per round: the exit request is seen under load too */
    if (G.period_ms > 0 && mono_ms() >= G.next_pull_ms && !atomic_load(&G.finalize_req)) {
      if (!atomic_load(&G.write_failed))
        for (int i = 0; i < MAX_DEVICES; i++)
          if (G.dev[i].running) pull(&G.dev[i], REASON_PERIODIC, 1, 0);
      G.next_pull_ms = mono_ms() + (uint64_t)G.period_ms;
    }
  }
  finalize();
  rt_queue_finish(&G.q);
  return NULL;
}

static struct sigaction g_old_sig[RT_TERM_SIGNALS]; /* SIGTERM, SIGINT, SIGHUP */

static void finish(void) {
  if (!atomic_load(&G.thread_started) || getpid() != G.owner_pid) return;
  if (rt_queue_shutdown(&G.q, &G.finalize_req, &G.joined, G.thread, (long)(G.exit_timeout * 1000)) == 0)
    logmsg(RT_V_WARN, 0, "exit pull did not finish within %.1f s", G.exit_timeout);
}

static void on_term_signal(int sig, siginfo_t* si, void* uc) {
  int armed = atomic_load(&G.thread_started) && getpid() == G.owner_pid;
  rt_queue_on_term_signal(&G.q, &G.finalize_req, armed, (int)(G.exit_timeout * 1000), sig, si, uc,
                          &g_old_sig[rt_term_index(sig)]);
}

/* First acquire in this process: the thread, the exit hook (registered now, after Synapse's own), the handlers. */
static void start_collector(void) {
  rt_queue_set_exit_timeout(&G.q, G.exit_timeout); /* before the thread reads it */
  if (rt_queue_init(&G.q) != 0 || rt_thread_start(&G.thread, thread_main) != 0) {
    logmsg(RT_V_ERROR, 0, "HPU collector inactive: cannot start its thread");
    return;
  }
  G.owner_pid = getpid();
  atomic_store(&G.thread_started, 1);
  atomic_store(&G.state, ST_RUNNING);
  atexit(finish);
  if (G.handle_signals) rt_install_term_handlers(on_term_signal, g_old_sig);
}

static int recording(void) {
  return G.bound && !G.inactive[0] && atomic_load(&G.state) == ST_RUNNING && getpid() == G.owner_pid;
}

/* Queues `type` for device `dev` and waits until the collector thread handled it. */
static int request(uint32_t type, uint32_t dev) {
  struct dev_item* it = (struct dev_item*)calloc(1, sizeof *it);
  if (!it) return -1;
  it->it.type = type;
  it->dev = dev;
  rt_queue_push(&G.q, &it->it);
  /* Bounded by RAWTRACE_EXIT_TIMEOUT (1 s for a thread found stuck: rt_queue_wait). A release or destroy the thread
   * has not reached goes ahead anyway: the thread is told not to touch that device, or Synapse, again. */
  int rc = rt_queue_wait(&G.q, rt_queue_last(&G.q), (long)(G.exit_timeout * 1000));
  if (rc != 0 && type == IT_RELEASE) atomic_store(&g_abandoned[dev % MAX_DEVICES], 1);
  if (rc != 0 && type == IT_DESTROY) atomic_store(&g_abandoned_all, 1);
  return rc;
}

static void acquired(rt_syn_device_id* id) {
  if (!id || !G.bound || G.inactive[0]) return;
  pthread_once(&G.start_once, start_collector);
  if (recording()) request(IT_ACQUIRED, *id);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* HABANA_PROFILE and the constructor                                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Synapse enables its profiler in synInitialize when HABANA_PROFILE is set and not "0" (or ENABLE_DEBUG_INFO=1). */
static void ensure_profile_env(void) {
  const char* v = getenv("HABANA_PROFILE");
  if (!v || !*v) {
    setenv("HABANA_PROFILE", "1", 1);
    G.profile_env = 1;
  } else if (!strcmp(v, "0")) {
    G.profile_env = 2;
  }
}

__attribute__((constructor)) static void rawtrace_hpu_init(void) {
  G.verbosity = rt_parse_log_level(getenv("RAWTRACE_LOG"));
  if (!rt_env_flag("RAWTRACE_ENABLE", 1) || !rt_process_selected()) {
    snprintf(G.inactive, sizeof G.inactive, "RAWTRACE_ENABLE=0 or RAWTRACE_PROCESS");
    atomic_store(&G.said_inactive, 1);
    return;
  }
  G.enabled = 1;
  const char* out = getenv("RAWTRACE_OUTPUT");
  snprintf(G.output, sizeof G.output, "%s", out && *out ? out : DEFAULT_NAME);
  G.period_ms = rt_env_int_warn("RAWTRACE_HPU_PERIOD_MS", 0, 0, G.verbosity);
  if (G.period_ms > 0 && G.period_ms < MIN_PERIOD_MS) G.period_ms = MIN_PERIOD_MS;
  G.max_memory = rt_env_size("RAWTRACE_MAX_MEMORY", 256u << 20, G.verbosity);
  G.exit_timeout = rt_env_timeout("RAWTRACE_EXIT_TIMEOUT", 10, G.verbosity);
  G.handle_signals = rt_env_flag("RAWTRACE_HANDLE_SIGNALS", 1);

  const char* env = getenv("RAWTRACE_SYNAPSE_LIB");
  if (env && *env) {
    G.lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!G.lib) snprintf(G.inactive, sizeof G.inactive, "RAWTRACE_SYNAPSE_LIB=%.120s cannot be loaded: %.200s", env,
                         dlerror());
  } else if (!(G.lib = dlopen(kLibName, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) && !rt_lib_on_search_path(kLibName, kLibDirs, sizeof kLibDirs / sizeof kLibDirs[0])) {
    snprintf(G.inactive, sizeof G.inactive, "no %s on the loader's search path (LD_LIBRARY_PATH, /etc/ld.so.cache, "
             "/usr/lib/habanalabs, ...); set RAWTRACE_SYNAPSE_LIB", kLibName);
  }
  if (G.inactive[0]) {
    atomic_store(&G.said_inactive, 1);
    logmsg(RT_V_WARN, 0, "HPU collector inactive: %s", G.inactive);
    return;
  }
  ensure_profile_env();
  if (G.profile_env == 2)
    logmsg(RT_V_WARN, 0, "HABANA_PROFILE=0 is kept: Synapse's profiler stays off (nothing is recorded unless "
           "ENABLE_DEBUG_INFO=1)");
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Interposed Synapse entry points and the public API                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

SYN_EXPORT rt_syn_status synInitialize(void) {
  bind();
  if (G.enabled && !G.inactive[0]) ensure_profile_env(); /* in case the program changed it since the constructor */
  return S.initialize ? S.initialize() : RT_SYN_UNINITIALIZED;
}

SYN_EXPORT rt_syn_status synDestroy(void) {
  bind();
  if (recording()) request(IT_DESTROY, 0);
  return S.destroy ? S.destroy() : RT_SYN_UNINITIALIZED;
}

SYN_EXPORT rt_syn_status synDeviceAcquire(rt_syn_device_id* id, const char* pci_bus) {
  bind();
  rt_syn_status s = S.acquire ? S.acquire(id, pci_bus) : RT_SYN_NO_DEVICE_FOUND;
  if (s == RT_SYN_SUCCESS) acquired(id);
  return s;
}

SYN_EXPORT rt_syn_status synDeviceAcquireByDeviceType(rt_syn_device_id* id, int32_t device_type) {
  bind();
  rt_syn_status s = S.acquire_by_type ? S.acquire_by_type(id, device_type) : RT_SYN_NO_DEVICE_FOUND;
  if (s == RT_SYN_SUCCESS) acquired(id);
  return s;
}

SYN_EXPORT rt_syn_status synDeviceAcquireByModuleId(rt_syn_device_id* id, rt_syn_module_id module) {
  bind();
  rt_syn_status s = S.acquire_by_module ? S.acquire_by_module(id, module) : RT_SYN_NO_DEVICE_FOUND;
  if (s == RT_SYN_SUCCESS) acquired(id);
  return s;
}

SYN_EXPORT rt_syn_status synDeviceRelease(rt_syn_device_id id) {
  bind();
  if (recording()) request(IT_RELEASE, id);
  return S.release ? S.release(id) : RT_SYN_UNINITIALIZED;
}

int rawtrace_hpu_flush(void) {
  if (!recording()) return -1;
  return request(IT_FLUSH, 0);
}
