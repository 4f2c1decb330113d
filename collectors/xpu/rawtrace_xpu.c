/*
 * rawtrace XPU collector: a library loaded with LD_PRELOAD that records Intel PTI's view buffers into a `.rawtrace`
 * file (docs/format.md, vendor 4) with no code change. Loading, configuration and chunk layouts:
 * docs/collectors/xpu.md. Public API: rawtrace_xpu.h. ABI subset: pti_abi.h (checked against the real libraries by
 * test/collectors/pti_abi.test.ts).
 *
 * What happens in the profiled process, and only this:
 *   - The constructor dlopens libpti_view.so (RAWTRACE_PTI_LIB, else the loader's search path); with none it logs
 *     once why and does nothing else. It measures the library's record size per kind (a probe buffer walked by the
 *     library's own ptiViewGetNextRecord), reads the API-id names, writes HEADER, CLOCK, KIND_SIZES and API_NAMES,
 *     then sets the buffer callbacks and enables the views.
 *   - PTI's buffer-completed callback queues the buffer itself (ours: we allocated it) for the writer thread: no I/O
 *     and no copy on PTI's thread.
 *   - ONE writer thread writes the queue in order: for each buffer, a STRINGS chunk with the text of every
 *     `_name` / `_source_file_name` pointer not written before (PTI keeps those strings alive until it unloads), then
 *     the buffer verbatim as an ACTIVITY chunk, then frees it. Nothing is decoded in the process.
 *   - At exit (or on SIGTERM / SIGINT / SIGHUP with the default disposition) the writer calls ptiFlushAllViews, writes what
 *     that delivered, an END clock anchor and the END chunk. Every chunk is written whole, so a process killed at
 *     any point leaves a valid prefix.
 *   - Errors never reach the program: a PTI error disables that view (one log line, one LOG chunk), a write error
 *     stops writing.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_xpu.h"
#include "rawtrace_heap.h"
#include "rawtrace_safe_read.h"
#include "pti_abi.h"
#include "ze_abi.h"
#include "rawtrace_collector.h"
#include "rawtrace_ptrset.h"
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
#include <sys/stat.h>
#include <unistd.h>

#define RT_COLLECTOR_VERSION 0x000100u /* 0.1.0 */
#define MAX_KIND 16u                   /* kinds probed: 0..15 */
#define PROBE_BYTES 1024u              /* larger than any PTI record (192 B in 1.x) */
#define MAX_API_ID 4096u               /* API ids asked per group */
#define MAX_STRING (64u << 10)         /* strings are cut here */
#define FLUSH_WAIT_MS 10000
#define DEFAULT_NAME "rawtrace-%h-%p.rawtrace"

enum { IT_BUFFER = 1 };
enum { ST_OFF = 0, ST_RUNNING = 1, ST_FINISHED = 2 };

/** The views enabled, as Kineto's XPU plugin enables them (communication only where the library has it). */
static const uint32_t kViews[] = {
    PTI_VIEW_DEVICE_GPU_KERNEL,      PTI_VIEW_DEVICE_GPU_MEM_COPY,    PTI_VIEW_DEVICE_GPU_MEM_FILL,
    PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P, PTI_VIEW_RUNTIME_API,           PTI_VIEW_DRIVER_API,
    PTI_VIEW_EXTERNAL_CORRELATION,   PTI_VIEW_DEVICE_SYNCHRONIZATION, PTI_VIEW_COLLECTION_OVERHEAD,
    PTI_VIEW_COMMUNICATION,
};
/** API groups whose names are written: Level Zero (driver view) and SYCL / Unified Runtime (runtime view). */
static const uint32_t kGroups[] = {PTI_API_GROUP_LEVELZERO, PTI_API_GROUP_SYCL};

struct buf_item {
  rt_item it;
  uint8_t* data;
  size_t used;
};

/* PTI entry points (pti_abi.h), resolved with dlsym from the library we opened. */
static struct {
  pti_version_fn version;
  pti_view_set_callbacks_fn set_callbacks;
  pti_view_enable_fn enable, disable;
  pti_flush_all_views_fn flush_all;
  pti_view_get_next_record_fn next_record;
  pti_view_push_external_correlation_id_fn push_external;
  pti_view_pop_external_correlation_id_fn pop_external;
  pti_view_get_timestamp_fn timestamp;
  pti_view_get_api_id_name_fn api_id_name;
} P;

static struct {
  int verbosity;
  char output[PATH_MAX];
  size_t buffer_size;
  size_t max_memory; /* bytes of delivered buffers waiting for the writer */
  double exit_timeout;
  int handle_signals;

  pti_version ver;
  char lib_path[PATH_MAX];
  uint32_t stride[MAX_KIND]; /* measured record size per kind; 0 = unknown to the library */

  rt_writer* w;
  char path[PATH_MAX];
  pid_t owner_pid;
  atomic_int state;
  atomic_int write_failed;

  rt_queue q;
  pthread_t writer;
  atomic_int writer_started, finalize_req, joined;

  rt_ptrset seen; /* writer-thread-only: pointers whose text was written */
  rt_threads threads;

  atomic_size_t queued_bytes;
  atomic_uint_fast64_t n_capped;         /* records in buffers dropped by the memory cap, not yet in a DROPPED chunk */
  atomic_uint_fast64_t n_buffers, n_bytes, n_strings;
} G = {.verbosity = RT_V_WARN};

/* ------------------------------------------------------------------------------------------------------------------ */
/* Logging                                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

static int wrote(int rc) { return rt_check_write(rc, &G.write_failed, G.path, G.verbosity); }

/* A log line on stderr (per RAWTRACE_LOG) and, when `to_file`, a LOG chunk (writer thread or before it starts). */
__attribute__((format(printf, 3, 4))) static void logmsg(int level, int to_file, const char* fmt, ...) {
  char msg[480];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rt_log_line(G.verbosity, level, msg);
  if (!to_file || !G.w || atomic_load(&G.write_failed)) return;
  uint32_t lvl = rt_log_chunk_level(level);
  if (atomic_load(&G.writer_started))
    rt_queue_push_log(&G.q, lvl, msg);
  else
    wrote(rt_writer_log(G.w, lvl, msg));
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Loading PTI                                                                                                        */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Opens the PTI view library; on failure writes why into `why`. */
static void* open_pti(char* why, size_t cap) {
  const char* env = getenv("RAWTRACE_PTI_LIB");
  if (env && *env) {
    void* h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!h) snprintf(why, cap, "RAWTRACE_PTI_LIB=%.120s cannot be loaded: %.200s", env, dlerror());
    return h;
  }
  static const char* const names[] = {"libpti_view.so", "libpti_view.so.1", "libpti_view.so.0"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void* h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    if (i == 0) snprintf(why, cap, "no PTI library on the loader's search path (%.300s)", dlerror());
  }
  return NULL;
}

static int bind_pti(void* h, char* why, size_t cap) {
#define REQ(field, name)                                                     \
  do {                                                                       \
    *(void**)(&P.field) = dlsym(h, name);                                    \
    if (!P.field) {                                                          \
      snprintf(why, cap, "the PTI library lacks %s", name);                  \
      return -1;                                                             \
    }                                                                        \
  } while (0)
  REQ(version, "ptiVersion");
  REQ(set_callbacks, "ptiViewSetCallbacks");
  REQ(enable, "ptiViewEnable");
  REQ(disable, "ptiViewDisable");
  REQ(flush_all, "ptiFlushAllViews");
  REQ(next_record, "ptiViewGetNextRecord");
  REQ(timestamp, "ptiViewGetTimestamp");
#undef REQ
  *(void**)(&P.push_external) = dlsym(h, "ptiViewPushExternalCorrelationId");
  *(void**)(&P.pop_external) = dlsym(h, "ptiViewPopExternalCorrelationId");
  *(void**)(&P.api_id_name) = dlsym(h, "ptiViewGetApiIdName");
  Dl_info info;
  if (dladdr(*(void**)(&P.version), &info) && info.dli_fname)
    snprintf(G.lib_path, sizeof G.lib_path, "%s", info.dli_fname);
  return 0;
}

/*
 * Whether Level Zero has a driver. PTI's first call that builds its collector (ptiViewSetCallbacks, ptiViewEnable,
 * ptiViewGetTimestamp, ...) ABORTS the process when zeInit fails or finds no driver (seen with PTI 1.2.0:
 * ZeDriverInit::CollectLegacyDrivers -> abort), so we ask the loader first. ZE_ENABLE_TRACING_LAYER=1 is set unless
 * the user set it, as PTI needs it on older drivers and the loader reads it in zeInit. Returns 0 when usable; else
 * writes why into `why`.
 */
static struct {
  rt_ze_driver_get_fn driver_get;
  rt_ze_device_get_fn device_get;
  rt_ze_device_get_properties_fn device_props;
  rt_ze_device_get_sub_devices_fn sub_devices; /* optional */
} Z;

static int level_zero_ready(char* why, size_t cap) {
  void* ze = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!ze) {
    snprintf(why, cap, "no Level Zero loader (%.300s)", dlerror());
    return -1;
  }
  rt_ze_init_fn init;
  *(void**)(&init) = dlsym(ze, "zeInit");
  *(void**)(&Z.driver_get) = dlsym(ze, "zeDriverGet");
  *(void**)(&Z.device_get) = dlsym(ze, "zeDeviceGet");
  *(void**)(&Z.device_props) = dlsym(ze, "zeDeviceGetProperties");
  *(void**)(&Z.sub_devices) = dlsym(ze, "zeDeviceGetSubDevices");
  if (!init || !Z.driver_get) {
    snprintf(why, cap, "the Level Zero loader lacks zeInit or zeDriverGet");
    return -1;
  }
  /* Set for this process's zeInit only when the collector goes on: an inactive collector leaves the environment (and
   * so the program's children) as it found it. */
  int set_tracing = getenv("ZE_ENABLE_TRACING_LAYER") == NULL;
  if (set_tracing) setenv("ZE_ENABLE_TRACING_LAYER", "1", 1);
  int rc = init(0);
  if (rc != 0) {
    snprintf(why, cap, "zeInit answered 0x%x (no Level Zero driver); PTI would abort the process", (unsigned)rc);
    if (set_tracing) unsetenv("ZE_ENABLE_TRACING_LAYER");
    return -1;
  }
  uint32_t count = 0;
  rc = Z.driver_get(&count, NULL);
  if (rc != 0 || count == 0) {
    snprintf(why, cap, "zeDriverGet found no driver (0x%x, %u); PTI would abort the process", (unsigned)rc, count);
    if (set_tracing) unsetenv("ZE_ENABLE_TRACING_LAYER");
    return -1;
  }
  return 0;
}

/*
 * DEVICES: every Level Zero device of every driver, in zeDriverGet x zeDeviceGet order (id = that ordinal). PTI
 * records name their device by `_device_uuid` (and, in `_v2`, by handle), so the uuid is the key a decoder uses.
 * Fields: Xe cores / subslices (numSlices x numSubslicesPerSlice) as multiprocessors, coreClockRate (MHz) as kHz,
 * EUs x threads per EU per subslice as max threads per multiprocessor, the EU SIMD width as warp size.
 * The handle table after the entries: each device's handle and uuid, then (ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE, where
 * zeDeviceGet lists whole cards and their tiles are sub-devices) each zeDeviceGetSubDevices handle with its own uuid,
 * its root device's id and its index: PTI names a tile's work by the tile's uuid / handle.
 */
#define MAX_ZE_DEVICES 64u
#define MAX_ZE_HANDLES 256u
static void write_devices(void) {
  if (!Z.device_get || !Z.device_props) return;
  void* drivers[8];
  uint32_t nd = 8;
  if (Z.driver_get(&nd, drivers) != 0) return;
  if (nd > 8) nd = 8;
  rt_device_info devs[MAX_ZE_DEVICES];
  static rt_ze_device_properties props[MAX_ZE_DEVICES], sub;
  static rt_device_handle handles[MAX_ZE_HANDLES];
  uint32_t n = 0, nh = 0;
  for (uint32_t d = 0; d < nd && n < MAX_ZE_DEVICES; d++) {
    void* roots[MAX_ZE_DEVICES];
    uint32_t m = MAX_ZE_DEVICES - n;
    if (Z.device_get(drivers[d], &m, roots) != 0) continue;
    if (m > MAX_ZE_DEVICES - n) m = MAX_ZE_DEVICES - n;
    for (uint32_t i = 0; i < m; i++) {
      rt_ze_device_properties* p = &props[n];
      memset(p, 0, sizeof *p);
      p->stype = RT_ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      if (Z.device_props(roots[i], p) != 0) continue;
      p->name[sizeof p->name - 1] = 0;
      rt_device_info* o = &devs[n];
      memset(o, 0, sizeof *o);
      o->id = n;
      o->multiprocessors = p->numSlices * p->numSubslicesPerSlice;
      o->core_clock_khz = p->coreClockRate * 1000u;
      o->max_threads_per_multiprocessor = p->numEUsPerSubslice * p->numThreadsPerEU;
      o->warp_size = p->physicalEUSimdWidth;
      memcpy(o->uuid, p->uuid, sizeof o->uuid);
      o->name = p->name;
      if (nh < MAX_ZE_HANDLES) {
        handles[nh] = (rt_device_handle){(uint64_t)(uintptr_t)roots[i], {0}, n, RT_TILE_NONE};
        memcpy(handles[nh++].uuid, p->uuid, 16);
      }
      void* tiles[16];
      uint32_t nt = 16;
      if (Z.sub_devices && Z.sub_devices(roots[i], &nt, tiles) == 0) {
        if (nt > 16) nt = 16;
        for (uint32_t t = 0; t < nt && nh < MAX_ZE_HANDLES; t++) {
          memset(&sub, 0, sizeof sub);
          sub.stype = RT_ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
          if (Z.device_props(tiles[t], &sub) != 0) continue;
          uint32_t index = (sub.flags & RT_ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE) ? sub.subdeviceId : t;
          handles[nh] = (rt_device_handle){(uint64_t)(uintptr_t)tiles[t], {0}, n, index};
          memcpy(handles[nh].uuid, sub.uuid, 16);
          nh++;
        }
      }
      n++;
    }
  }
  if (n) wrote(rt_writer_devices_handles(G.w, devs, n, handles, nh));
}

/*
 * The library's record size for every kind, measured with its own walker: a record of kind K at offset 0 of a zeroed
 * probe buffer; the first ptiViewGetNextRecord returns it (the first call never checks the kind), the second steps
 * past it. The second record's offset is the stride; an error (unknown kind) or END_OF_BUFFER leaves 0.
 * Returns the number of kinds the library knows; 0 with PTI_ERROR_NOT_IMPLEMENTED in `*err` when the core libpti.so
 * did not load.
 */
static uint32_t probe_strides(pti_result* err) {
  static _Alignas(8) uint8_t probe[PROBE_BYTES];
  uint32_t known = 0;
  *err = PTI_SUCCESS;
  for (uint32_t k = 1; k < MAX_KIND; k++) {
    memset(probe, 0, sizeof probe);
    memcpy(probe, &k, sizeof k);
    pti_view_record_base* rec = NULL;
    pti_result rc = P.next_record(probe, sizeof probe, &rec);
    if (rc != PTI_SUCCESS) {
      *err = rc;
      return 0;
    }
    rc = P.next_record(probe, sizeof probe, &rec);
    if (rc == PTI_SUCCESS && rec && (uint8_t*)rec > probe && (uint8_t*)rec < probe + sizeof probe) {
      G.stride[k] = (uint32_t)((uint8_t*)rec - probe);
      known++;
    }
  }
  return known;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Once-per-run tables                                                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

static void write_kind_sizes(void) {
  rt_kind_size pairs[MAX_KIND];
  uint32_t n = 0;
  for (uint32_t k = 0; k < MAX_KIND; k++)
    if (G.stride[k]) pairs[n++] = (rt_kind_size){k, G.stride[k]};
  wrote(rt_writer_kind_sizes(G.w, pairs, n));
}

/* API_NAMES: domain = pti_api_group_id, id = API id, for every id the library names (ptiViewGetApiIdName). */
static void write_api_names(void) {
  if (!P.api_id_name) return;
  size_t cap = 1024, n = 0;
  rt_api_name* v = (rt_api_name*)rt_malloc(cap * sizeof *v);
  if (!v) return;
  for (size_t g = 0; g < sizeof kGroups / sizeof kGroups[0]; g++) {
    for (uint32_t id = 0; id < MAX_API_ID; id++) {
      const char* name = NULL;
      if (P.api_id_name((pti_api_group_id)kGroups[g], id, &name) != PTI_SUCCESS || !name || !*name) continue;
      if (n == cap) {
        rt_api_name* more = (rt_api_name*)rt_realloc(v, cap * 2 * sizeof *v);
        if (!more) break;
        v = more;
        cap *= 2;
      }
      v[n++] = (rt_api_name){kGroups[g], id, name};
    }
  }
  if (n) wrote(rt_writer_api_names(G.w, v, (uint32_t)n));
  rt_free(v);
}

static void push_clock(uint32_t which, int direct) {
  rt_clock_anchor_t a;
  uint64_t vendor = P.timestamp();
  if (rt_clock_anchor(which, vendor, &a) != 0) return;
  if (direct)
    wrote(rt_writer_clock(G.w, &a));
  else
    rt_queue_push_clock(&G.q, &a);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Buffers                                                                                                            */
/* ------------------------------------------------------------------------------------------------------------------ */

static void signals_now(void);
static long signals_poll(void);
static atomic_int g_signals_in; /* the termination handlers installed (or not wanted): signals_poll */

static void on_request(unsigned char** buffer, size_t* size) {
  void* p = NULL;
  if (posix_memalign(&p, 64, G.buffer_size) != 0) p = NULL;
  *buffer = (unsigned char*)p;
  *size = p ? G.buffer_size : 0;
}

/* Records in `used` bytes of a buffer, stepped by the measured strides (up to a kind the library does not know). */
static uint64_t count_records(const uint8_t* b, size_t used) {
  uint64_t n = 0;
  for (size_t off = 0; off + sizeof(uint32_t) <= used; n++) {
    uint32_t k;
    memcpy(&k, b + off, sizeof k);
    uint32_t size = k < MAX_KIND ? G.stride[k] : 0;
    if (!size) return n + 1;
    off += size;
  }
  return n;
}

static void on_complete(unsigned char* buffer, size_t size, size_t used) {
  (void)size;
  if (!buffer) return;
  struct buf_item* it = NULL;
  if (used && atomic_load(&G.state) == ST_RUNNING && getpid() == G.owner_pid &&
      atomic_fetch_add(&G.queued_bytes, used) + used > G.max_memory) {
    /* the writer is this far behind: drop the buffer rather than grow without bound (counted, DROPPED reason 2) */
    atomic_fetch_sub(&G.queued_bytes, used);
    atomic_fetch_add(&G.n_capped, count_records(buffer, used));
    rt_free(buffer);
    rt_queue_wake(&G.q);
    return;
  }
  if (used && !atomic_load(&g_signals_in) && atomic_load(&G.state) == ST_RUNNING) signals_now(); /* GPU work: started */
  if (used && atomic_load(&G.state) == ST_RUNNING && getpid() == G.owner_pid &&
      (it = (struct buf_item*)rt_calloc(1, sizeof *it)) != NULL) {
    it->it.type = IT_BUFFER;
    it->data = buffer;
    it->used = used;
    rt_queue_push(&G.q, &it->it);
    return;
  }
  if (used && atomic_load(&G.state) == ST_RUNNING && getpid() == G.owner_pid) {
    /* No memory for its queue item: the buffer is lost, counted as the cap's are (DROPPED reason 2). */
    atomic_fetch_sub(&G.queued_bytes, used);
    atomic_fetch_add(&G.n_capped, count_records(buffer, used));
  }
  rt_free(buffer);
}

/* Writer: a DROPPED chunk for the records the memory cap dropped since the last one. */
static void write_capped(void) {
  uint64_t n = atomic_exchange(&G.n_capped, 0);
  if (n && !atomic_load(&G.write_failed)) wrote(rt_writer_dropped(G.w, n, RT_DROP_MEMORY_CAP));
}

/* Byte offsets of the string pointers in a record of kind `k` whose stride is `size` (0 ends the list). */
static void string_fields(uint32_t k, uint32_t size, uint32_t out[3]) {
  out[0] = out[1] = out[2] = 0;
  switch (k) {
    case PTI_VIEW_DEVICE_GPU_KERNEL:
      out[0] = offsetof(pti_view_record_kernel, _name);
      out[1] = offsetof(pti_view_record_kernel, _source_file_name);
      break;
    case PTI_VIEW_DEVICE_GPU_MEM_COPY: out[0] = offsetof(pti_view_record_memory_copy, _name); break;
    case PTI_VIEW_DEVICE_GPU_MEM_FILL: out[0] = offsetof(pti_view_record_memory_fill, _name); break;
    case PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P: out[0] = offsetof(pti_view_record_memory_copy_p2p, _name); break;
    case PTI_VIEW_COMMUNICATION:
      if (size == sizeof(pti_view_record_comms)) out[0] = offsetof(pti_view_record_comms, _name);
      if (size == sizeof(pti_view_record_comms_v017)) out[0] = offsetof(pti_view_record_comms_v017, _name);
      break;
    default: break;
  }
  for (int i = 0; i < 3; i++)
    if (out[i] && out[i] + 8 > size) out[i] = 0;
}

/* Writer: STRINGS for the buffer's new name pointers, then the buffer verbatim. Records are walked by the measured
 * strides (the same steps PTI's own walker takes); the walk stops at a kind the library does not know. */
static void write_buffer(struct buf_item* b) {
  rt_string* strs = NULL;
  size_t n = 0, cap = 0;
  char* arena = NULL; /* the strings' bytes */
  size_t alen = 0, acap = 0;
  size_t off = 0;
  while (off + sizeof(uint32_t) <= b->used) {
    uint32_t k;
    memcpy(&k, b->data + off, sizeof k);
    uint32_t size = k < MAX_KIND ? G.stride[k] : 0;
    if (!size || off + size > b->used) break;
    const uint8_t* rec = b->data + off;
    if (k == PTI_VIEW_DRIVER_API || k == PTI_VIEW_RUNTIME_API) {
      pti_view_record_api api;
      memcpy(&api, rec, sizeof api);
      rt_threads_note(&G.threads, api._process_id, api._thread_id);
    }
    uint32_t fields[3];
    string_fields(k, size, fields);
    for (int i = 0; i < 3 && fields[i]; i++) {
      uint64_t ptr;
      memcpy(&ptr, rec + fields[i], sizeof ptr);
      if (!ptr || rt_ptrset_add(&G.seen, ptr) != 1) continue; /* written before, or no memory to note it */
      if (n == cap) {
        size_t ncap = cap ? cap * 2 : 64;
        rt_string* more = (rt_string*)rt_realloc(strs, ncap * sizeof *more);
        if (!more) break;
        strs = more;
        cap = ncap;
      }
      /* Copied without trusting the pointer (rt_safe_cstr): a name PTI has freed must not fault the program. The
       * copies go into one arena; `bytes` holds the offset until the arena stops moving. */
      if (acap - alen < MAX_STRING) {
        size_t ncap = acap * 2 > alen + MAX_STRING ? acap * 2 : alen + MAX_STRING;
        char* more = (char*)rt_realloc(arena, ncap);
        if (!more) break;
        arena = more;
        acap = ncap;
      }
      long len = rt_safe_cstr(arena + alen, ptr, MAX_STRING);
      if (len < 0) continue; /* unreadable: no entry (the decoder reports the name as missing) */
      strs[n++] = (rt_string){ptr, (const char*)(uintptr_t)alen, (uint32_t)len};
      alen += (size_t)len;
    }
    off += size;
  }
  for (size_t i = 0; i < n; i++) strs[i].bytes = arena + (uintptr_t)strs[i].bytes;
  if (n) {
    if (wrote(rt_writer_strings(G.w, strs, (uint32_t)n)) == 0) atomic_fetch_add(&G.n_strings, n);
  }
  rt_free(strs);
  rt_free(arena);
  rt_threads_write(&G.threads, G.w, wrote);
  if (wrote(rt_writer_activity(G.w, b->data, (uint32_t)b->used)) == 0) {
    atomic_fetch_add(&G.n_buffers, 1);
    atomic_fetch_add(&G.n_bytes, b->used);
  }
}

static void handle(rt_item* it) {
  if (it->type == IT_BUFFER) {
    struct buf_item* b = (struct buf_item*)it;
    /* The exit flush's time up: left, counted, said before END (rt_queue_exit_skip). */
    if (!atomic_load(&G.write_failed) && !rt_queue_exit_skip(&G.q, b->used)) {
      uint64_t t0 = rt_clock_ns(CLOCK_MONOTONIC);
      write_buffer(b);
      rt_queue_note_write(&G.q, b->used, rt_clock_ns(CLOCK_MONOTONIC) - t0);
    }
    atomic_fetch_sub(&G.queued_bytes, b->used);
    rt_free(b->data);
  } else if (rt_item_is_common(it) && !atomic_load(&G.write_failed)) {
    wrote(rt_item_write(G.w, it));
  }
  rt_free(it);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Writer thread, exit, signals                                                                                        */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Disables every view the collector enables (the exit flush, a write error). */
static void disable_views(void) {
  for (size_t i = 0; i < sizeof kViews / sizeof kViews[0]; i++)
    if (G.stride[kViews[i]]) P.disable((pti_view_kind)kViews[i]);
}

/* ptiFlushAllViews, on a thread of its own (finalize). */
static void flush_pti(void) {
  P.flush_all(); /* delivers on this or PTI's thread; both queue */
}

static void finalize(void) {
  rt_queue_begin_exit_flush(&G.q); /* batches no longer stop at the exit: this is the flush */
  /* Bounded (rt_exit_call_bounded): a termination signal handled on a program thread that holds PTI's lock (inside its
   * flush, or a traced call) waits in its handler for this flush, so a PTI call needing that lock would never return
   * and the file would end without END. */
  long bound;
  int flushed = rt_exit_call_bounded(&G.q, flush_pti, G.exit_timeout, &bound);
  if (!flushed) {
    logmsg(RT_V_WARN, 1, "exit flush: ptiFlushAllViews did not return within %.1f s (a thread holding its lock was "
           "stopped, e.g. by the signal being handled); PTI's last records are not in the file", (double)bound / 1000.0);
  }
  rt_queue_drain_to(&G.q, handle, rt_queue_last(&G.q)); /* PTI still records: not until the queue is empty */
  atomic_store(&G.state, ST_FINISHED);
  if (flushed) disable_views();
  rt_queue_drain(&G.q, handle);
  write_capped();
  if (!atomic_load(&G.write_failed)) {
    rt_queue_write_exit_left(&G.q, G.w, G.verbosity, "view buffers", "", wrote);
    rt_clock_anchor_t a;
    if (rt_clock_anchor(RT_CLOCK_END, P.timestamp(), &a) == 0) wrote(rt_writer_clock(G.w, &a));
    wrote(rt_writer_end(G.w));
  }
  rt_writer* w = G.w; /* unset before it is freed: the fork handler must never see a freed writer */
  G.w = NULL;
  rt_writer_close(w);
  logmsg(RT_V_INFO, 0, "wrote %.300s: %llu buffers, %llu activity bytes, %llu strings", G.path,
         (unsigned long long)atomic_load(&G.n_buffers), (unsigned long long)atomic_load(&G.n_bytes),
         (unsigned long long)atomic_load(&G.n_strings));
}

static void* writer_main(void* arg) {
  (void)arg;
  rt_thread_enter("rawtrace-xpu");
  int views_off = 0;
  while (!atomic_load(&G.finalize_req)) {
    rt_queue_sleep(&G.q, signals_poll());
    rt_queue_drain_once(&G.q, handle); /* one batch per round: the exit request is seen under load too */
    write_capped();
    if (atomic_load(&G.write_failed) && !views_off) {
      /* Nothing more can be written: stop PTI's tracing too (Level Zero's tracing layer costs the program on every
       * call and kernel), as "recording stops" says. What it still delivers is freed unwritten. */
      views_off = 1;
      disable_views();
    }
  }
  finalize();
  rt_queue_finish(&G.q);
  return NULL;
}

static struct sigaction g_old_sig[RT_TERM_SIGNALS]; /* SIGTERM, SIGINT, SIGHUP */

static void finish(void) {
  if (!atomic_load(&G.writer_started) || getpid() != G.owner_pid) return;
  if (rt_queue_shutdown(&G.q, &G.finalize_req, &G.joined, G.writer, (long)(G.exit_timeout * 1000)) == 0)
    logmsg(RT_V_WARN, 0, "exit flush did not finish within %.1f s", G.exit_timeout);
}

static void on_term_signal(int sig, siginfo_t* si, void* uc) {
  int armed = atomic_load(&G.writer_started) && getpid() == G.owner_pid;
  rt_queue_on_term_signal(&G.q, &G.finalize_req, armed, (int)(G.exit_timeout * 1000), sig, si, uc,
                          &g_old_sig[rt_term_index(sig)]);
}

/*
 * The termination handlers are installed by the writer once the program's runtime has started, not by the
 * constructor: that runs (LD_PRELOAD) before the runtime, and CPython installs its SIGINT handler (Ctrl-C as
 * KeyboardInterrupt) only where SIGINT is still at its default when it starts, and reports a handler it did not
 * install as None (signal.getsignal), which code that saves and restores handlers cannot restore. So: once CPython says
 * it is initialised (Py_IsInitialized, where the program carries CPython; at most SIGNALS_PY_MAX_MS), else
 * SIGNALS_DELAY_MS after the constructor; and
 * at the latest with the first buffer PTI completes (the program is doing GPU work). Ours then chain to the runtime's.
 * (The CUDA, ROCm and HPU collectors install theirs at the vendor's initialisation, which comes as late.) A program
 * killed by a signal before then loses what PTI still holds, as without the handlers.
 */
#define SIGNALS_DELAY_MS 1000
#define SIGNALS_PY_MAX_MS 10000
static uint64_t g_signals_from_ns;       /* CLOCK_MONOTONIC ns of the constructor */
static pthread_once_t g_signals_once = PTHREAD_ONCE_INIT;

static void install_signal_handlers(void) {
  if (G.handle_signals) rt_install_term_handlers(on_term_signal, g_old_sig);
  atomic_store(&g_signals_in, 1);
}

/* Installs the handlers now (once; the writer, or a completed buffer). */
static void signals_now(void) {
  if (getpid() == G.owner_pid) pthread_once(&g_signals_once, install_signal_handlers);
}

/* Writer: ms to wait before looking again whether the runtime has started (-1: the handlers are in). */
static long signals_poll(void) {
  if (atomic_load(&g_signals_in)) return -1;
  static int (*py_ready)(void);
  if (!py_ready) py_ready = (int (*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "Py_IsInitialized");
  uint64_t waited_ms = (rt_clock_ns(CLOCK_MONOTONIC) - g_signals_from_ns) / 1000000u;
  /* A program that carries libpython but does not start it (or not yet) gets them after SIGNALS_PY_MAX_MS. */
  if (py_ready ? py_ready() || waited_ms >= SIGNALS_PY_MAX_MS : waited_ms >= SIGNALS_DELAY_MS) {
    signals_now();
    return -1;
  }
  return py_ready ? 20 : (long)(SIGNALS_DELAY_MS - waited_ms);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Start                                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

/* A forked child (a DataLoader worker that never execs) writes nothing (its pid is not the owner's) and lets go of the
 * parent's descriptor: a FIFO's reader must see its end when the parent closes it, not when the child exits. */
static void on_fork_child(void) { rt_writer_forget_fd(G.w); }

__attribute__((constructor)) static void rawtrace_xpu_init(void) {
  G.verbosity = rt_parse_log_level(getenv("RAWTRACE_LOG"));
  if (!rt_env_flag("RAWTRACE_ENABLE", 1)) return;
  if (!rt_process_selected()) return; /* RAWTRACE_PROCESS names other programs: PTI is not even loaded */
  char why[400] = "";
  void* h = open_pti(why, sizeof why);
  if (!h || bind_pti(h, why, sizeof why) != 0) {
    logmsg(RT_V_WARN, 0, "XPU collector inactive: %s", why);
    return;
  }
  G.ver = P.version();
  pti_result err;
  uint32_t known = probe_strides(&err);
  if (!known) {
    logmsg(RT_V_WARN, 0,
           "XPU collector inactive: PTI %u.%u.%u (%.200s) answers ptiViewGetNextRecord with %d%s", G.ver._major,
           G.ver._minor, G.ver._patch, G.lib_path, (int)err,
           err == PTI_ERROR_NOT_IMPLEMENTED ? " (its core libpti.so did not load: Level Zero loader missing?)" : "");
    return;
  }
  const char* out = getenv("RAWTRACE_OUTPUT");
  snprintf(G.output, sizeof G.output, "%s", out && *out ? out : DEFAULT_NAME);
  G.buffer_size = rt_env_size("RAWTRACE_BUFFER_SIZE", 4u << 20, G.verbosity);
  if (G.buffer_size < (64u << 10)) G.buffer_size = 64u << 10;
  if (G.buffer_size > (64u << 20)) G.buffer_size = 64u << 20;
  G.buffer_size &= ~(size_t)63;
  G.max_memory = rt_env_size("RAWTRACE_MAX_MEMORY", 256u << 20, G.verbosity);
  /* At least one buffer, as the CUDA and ROCm collectors: a smaller cap would drop every buffer, saying nothing. */
  if (G.max_memory < G.buffer_size) {
    logmsg(RT_V_WARN, 0, "RAWTRACE_MAX_MEMORY=%zu is below one buffer (RAWTRACE_BUFFER_SIZE=%zu); using %zu",
           G.max_memory, G.buffer_size, G.buffer_size);
    G.max_memory = G.buffer_size;
  }
  G.exit_timeout = rt_env_timeout("RAWTRACE_EXIT_TIMEOUT", 10, G.verbosity);
  G.handle_signals = rt_env_flag("RAWTRACE_HANDLE_SIGNALS", 1);

  uint64_t start = rt_clock_ns(CLOCK_REALTIME);
  char pattern[PATH_MAX];
  int expanded = rt_expand_output(G.output, DEFAULT_NAME, pattern, sizeof pattern, start);
  G.w = expanded == 0 ? rt_writer_create(pattern, G.path, sizeof G.path) : NULL; /* a cut name: ENAMETOOLONG */
  if (!G.w) {
    logmsg(RT_V_ERROR, 0, "XPU collector inactive: cannot create %.300s: %s", pattern, rt_writer_strerror(errno));
    return;
  }
  /* Level Zero after the output: zeInit (with its tracing layer on) only for a collector that will record. */
  if (level_zero_ready(why, sizeof why) != 0) {
    logmsg(RT_V_WARN, 0, "XPU collector inactive: PTI %u.%u.%u: %s", G.ver._major, G.ver._minor, G.ver._patch, why);
    (void)rt_writer_close(G.w);
    G.w = NULL;
    /* A regular file there is the one rt_writer_create made (O_EXCL), holding only the preamble: no dump is left. A
     * FIFO or a device given as the output stays. */
    struct stat st;
    if (lstat(G.path, &st) == 0 && S_ISREG(st.st_mode)) unlink(G.path);
    return;
  }
  rt_env_checksum(G.w, G.verbosity);
  rt_dump_created(G.verbosity, G.output, DEFAULT_NAME, pattern, G.path);
  G.owner_pid = getpid();
  pthread_atfork(NULL, NULL, on_fork_child);
  rt_header_info hi;
  rt_header_info_init(&hi);
  static char host[256], cmdline[4096];
  rt_header_process(&hi, start, host, cmdline, sizeof cmdline);
  char vtext[64];
  snprintf(vtext, sizeof vtext, "%u.%u.%u", G.ver._major, G.ver._minor, G.ver._patch);
  hi.vendor = RT_VENDOR_INTEL_PTI;
  hi.vendor_version = 10000u * G.ver._major + 100u * G.ver._minor + G.ver._patch;
  hi.vendor_version_text = vtext;
  hi.collector_version = RT_COLLECTOR_VERSION;
  wrote(rt_writer_header(G.w, &hi));
  push_clock(RT_CLOCK_START, 1);
  write_kind_sizes();
  write_api_names();
  write_devices();
  rt_threads_init(&G.threads, (uint32_t)G.owner_pid);

  rt_queue_set_exit_timeout(&G.q, G.exit_timeout); /* before the writer reads it */
  g_signals_from_ns = rt_clock_ns(CLOCK_MONOTONIC); /* and this (signals_poll) */
  if (rt_queue_init(&G.q) != 0 || rt_thread_start(&G.writer, writer_main) != 0) {
    logmsg(RT_V_ERROR, 1, "XPU collector inactive: cannot start the writer thread");
    wrote(rt_writer_end(G.w));
    rt_writer_close(G.w);
    G.w = NULL;
    return;
  }
  atomic_store(&G.writer_started, 1);
  atomic_store(&G.state, ST_RUNNING);
  pti_result rc = P.set_callbacks(on_request, on_complete);
  if (rc != PTI_SUCCESS) {
    logmsg(RT_V_ERROR, 1, "ptiViewSetCallbacks failed (%d); nothing is recorded", (int)rc);
  } else {
    for (size_t i = 0; i < sizeof kViews / sizeof kViews[0] && !atomic_load(&G.write_failed); i++) {
      uint32_t v = kViews[i];
      if (!G.stride[v]) continue; /* e.g. COMMUNICATION before 0.17 */
      rc = P.enable((pti_view_kind)v);
      if (rc != PTI_SUCCESS) logmsg(RT_V_WARN, 1, "ptiViewEnable(%u) failed (%d); that view is not recorded", v, (int)rc);
    }
    /* A write error meanwhile (the header's, or the writer's first chunks): the writer's one pass disabling the views
     * may have run before some of these were enabled. */
    if (atomic_load(&G.write_failed)) disable_views();
  }
  atexit(finish); /* the signal handlers: by the writer, once the program's runtime has started (signals_poll) */
  logmsg(RT_V_INFO, 1, "recording PTI %s (%.200s) into %.200s", vtext, G.lib_path, G.path);
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Public API                                                                                                         */
/* ------------------------------------------------------------------------------------------------------------------ */

int rawtrace_xpu_push_external_id(uint64_t id) {
  if (atomic_load(&G.state) != ST_RUNNING || !P.push_external) return -1;
  return P.push_external(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, id) == PTI_SUCCESS ? 0 : -1;
}

int rawtrace_xpu_pop_external_id(void) {
  if (atomic_load(&G.state) != ST_RUNNING || !P.pop_external) return -1;
  uint64_t id = 0;
  return P.pop_external(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, &id) == PTI_SUCCESS ? 0 : -1;
}

int rawtrace_xpu_flush(void) {
  if (atomic_load(&G.state) != ST_RUNNING || getpid() != G.owner_pid) return -1;
  P.flush_all();
  return rt_queue_wait(&G.q, rt_queue_last(&G.q), FLUSH_WAIT_MS);
}
