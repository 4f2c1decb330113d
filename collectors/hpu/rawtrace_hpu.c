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
 *     flush's Synapse calls, which run on a thread of their own, one device at a time (hpu_thread.c, finalize); the
 *     program's threads only queue a request and wait for it. One trace is held in memory at a time. Chunks are
 *     written whole, so a process killed at any point leaves a valid prefix; periodic pulls bound what a kill loses
 *     and what the profiler holds.
 *   - Errors never reach the program: a failing profiler call is logged once per kind and that device is left alone;
 *     a write error stops writing and every device's profiler (no trace is fetched from then on).
 *
 * Files: this one (the state, logging, the output, devices, the queue's handler, the interposed entry points),
 * hpu_init.c (the constructor, binding to libSynapse), hpu_pull.c (pulls), hpu_thread.c (the collector thread, the exit
 * flush, signals), hpu_strings.c (pointers outside a trace buffer), hpu_lib_search.c; shared declarations:
 * hpu_internal.h.
 */
#include "hpu_internal.h"
#include "rawtrace_heap.h"
#include "rawtrace_threads.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rt_hpu_state G = {.verbosity = RT_V_WARN, .bind_once = PTHREAD_ONCE_INIT, .start_once = PTHREAD_ONCE_INIT};

/* ------------------------------------------------------------------------------------------------------------------ */
/* Logging                                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

int rt_hpu_wrote(int rc) { return rt_check_write(rc, &G.write_failed, G.path, G.verbosity); }

/* A line on stderr (per RAWTRACE_LOG) and, when `to_file` and the dump is open, a LOG chunk (collector thread only). */
__attribute__((format(printf, 3, 4))) void rt_hpu_log(int level, int to_file, const char* fmt, ...) {
  char msg[480];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rt_log_line(G.verbosity, level, msg);
  if (to_file && G.w && !atomic_load(&G.write_failed)) rt_hpu_wrote(rt_writer_log(G.w, rt_log_chunk_level(level), msg));
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Output (collector thread)                                                                                          */
/* ------------------------------------------------------------------------------------------------------------------ */

uint64_t rt_hpu_profiler_ns(void) {
  uint64_t ns = 0;
  if (S.now(&ns) != RT_SYN_SUCCESS) ns = 0;
  return ns;
}

void rt_hpu_write_anchor(const rt_clock_anchor_t* a) {
  if (G.w && !atomic_load(&G.write_failed)) rt_hpu_wrote(rt_writer_clock(G.w, a));
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
    rt_hpu_log(RT_V_ERROR, 0, "HPU collector inactive: cannot create %.300s: %s", pattern, rt_writer_strerror(errno));
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
  rt_hpu_wrote(rt_writer_header(G.w, &hi));
  /* THREAD_NAMES with the process's main thread (tid = pid). Synapse's host entries carry an engine index, not a thread
   * id, so the reader names no row by it (assembly/engine.ts, even where the pid equals a host engine's index: PID 1
   * in a container); it is the process id again in a checksummed chunk of its own, read when the HEADER
   * is lost or damaged (docs/errors.md NO_HEADER, HEADER_DAMAGED): the host rows keep their process. */
  rt_threads main_thread = {0};
  rt_threads_init(&main_thread, (uint32_t)getpid());
  rt_threads_note(&main_thread, (uint32_t)getpid(), (uint32_t)getpid());
  rt_threads_write(&main_thread, G.w, rt_hpu_wrote);
  rt_threads_free(&main_thread);
  rt_hpu_log(RT_V_INFO, 1, "recording Synapse %s (%.200s) into %.200s", vtext[0] ? vtext : "(version unknown)",
             G.lib_path, G.path);
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
  rt_hpu_wrote(rt_writer_chunk(G.w, RT_CHUNK_HPU_DEVICE, p, 20 + len));
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

int rt_hpu_device_gone(uint32_t id) {
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
int rt_hpu_start_device(struct device* d, rt_clock_anchor_t* a) {
  rt_syn_status s = S.start(RT_SYN_TRACE_ALL, d->id);
  uint64_t ns = rt_hpu_profiler_ns();
  if (s != RT_SYN_SUCCESS) {
    d->running = 0;
    if (!atomic_exchange(&G.said_start, 1)) {
      const char* why = G.profile_env == 2 ? "HABANA_PROFILE=0 keeps Synapse's profiler off"
                        : G.profile_env == 1 ? "Synapse was initialized before HABANA_PROFILE could be set: set "
                                               "HABANA_PROFILE=1 before the program starts"
                                             : "is HABANA_PROFILE set, and the device buffer given?";
      rt_hpu_log(RT_V_WARN, 1, "synProfilerStart(device %u) answered %d; device %u is not recorded (%s)", d->id, s,
                 d->id, why);
    }
    return 0;
  }
  d->running = 1;
  int anchored = rt_clock_anchor(G.started_once ? RT_CLOCK_PERIODIC : RT_CLOCK_START, ns, a) == 0;
  G.started_once = 1;
  return anchored;
}

static void on_acquired(uint32_t id) {
  if (rt_hpu_device_gone(id)) return; /* acquired, then released before this thread got here: nothing to set up */
  if (!G.w && !atomic_load(&G.write_failed) && open_output() != 0) return;
  if (atomic_load(&G.write_failed) || find_device(id)) return;
  struct device* d = NULL;
  for (int i = 0; i < MAX_DEVICES && !d; i++)
    if (!G.dev[i].used) d = &G.dev[i];
  if (!d) {
    rt_hpu_log(RT_V_WARN, 1, "more than %d devices acquired; device %u is not recorded", MAX_DEVICES, id);
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
      rt_hpu_log(RT_V_WARN, 1, "the profiler of device %u asks for %u bytes of device memory; giving them failed (%d)",
                 id, need, s);
  }
  rt_clock_anchor_t a;
  if (rt_hpu_start_device(d, &a)) rt_hpu_write_anchor(&a);
}


/* The device goes away (release, synDestroy): final pull, then the profiler's device buffer is freed. */
static void drop_device(struct device* d) {
  rt_hpu_pull(d, REASON_RELEASE, 0, 1);
  if (d->hbm && S.dev_free && !rt_hpu_device_gone(d->id)) S.dev_free(d->id, d->hbm, 0);
  memset(d, 0, sizeof *d);
}

void rt_hpu_handle(rt_item* it) {
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
          if (G.dev[i].running) rt_hpu_pull(&G.dev[i], REASON_EXPLICIT, 1, 0);
        break;
      default: break;
    }
  }
  rt_free(it);
}


static int recording(void) {
  return G.bound && !G.inactive[0] && atomic_load(&G.state) == ST_RUNNING && getpid() == G.owner_pid;
}

/* Queues `type` for device `dev` and waits until the collector thread handled it. */
static int request(uint32_t type, uint32_t dev) {
  struct dev_item* it = (struct dev_item*)rt_calloc(1, sizeof *it);
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
  pthread_once(&G.start_once, rt_hpu_start_collector);
  if (recording()) request(IT_ACQUIRED, *id);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Interposed Synapse entry points and the public API                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

SYN_EXPORT rt_syn_status synInitialize(void) {
  rt_hpu_bind();
  /* in case the program changed it since the constructor */
  if (G.enabled && !G.inactive[0]) rt_hpu_ensure_profile_env();
  return S.initialize ? S.initialize() : RT_SYN_UNINITIALIZED;
}

SYN_EXPORT rt_syn_status synDestroy(void) {
  rt_hpu_bind();
  if (recording()) request(IT_DESTROY, 0);
  return S.destroy ? S.destroy() : RT_SYN_UNINITIALIZED;
}

SYN_EXPORT rt_syn_status synDeviceAcquire(rt_syn_device_id* id, const char* pci_bus) {
  rt_hpu_bind();
  rt_syn_status s = S.acquire ? S.acquire(id, pci_bus) : RT_SYN_NO_DEVICE_FOUND;
  if (s == RT_SYN_SUCCESS) acquired(id);
  return s;
}

SYN_EXPORT rt_syn_status synDeviceAcquireByDeviceType(rt_syn_device_id* id, int32_t device_type) {
  rt_hpu_bind();
  rt_syn_status s = S.acquire_by_type ? S.acquire_by_type(id, device_type) : RT_SYN_NO_DEVICE_FOUND;
  if (s == RT_SYN_SUCCESS) acquired(id);
  return s;
}

SYN_EXPORT rt_syn_status synDeviceAcquireByModuleId(rt_syn_device_id* id, rt_syn_module_id module) {
  rt_hpu_bind();
  rt_syn_status s = S.acquire_by_module ? S.acquire_by_module(id, module) : RT_SYN_NO_DEVICE_FOUND;
  if (s == RT_SYN_SUCCESS) acquired(id);
  return s;
}

SYN_EXPORT rt_syn_status synDeviceRelease(rt_syn_device_id id) {
  rt_hpu_bind();
  if (recording()) request(IT_RELEASE, id);
  return S.release ? S.release(id) : RT_SYN_UNINITIALIZED;
}

int rawtrace_hpu_flush(void) {
  if (!recording()) return -1;
  return request(IT_FLUSH, 0);
}
