/*
 * Test double of libSynapse.so for test/collectors/hpu_collector.test.ts: the subset of Synapse the HPU collector
 * calls (collectors/hpu/synapse_abi.h), with a profiler that hands out realistic synProfilerGetTrace buffers:
 * [208-byte synTraceEvent entries][string pool][size_t num][size_t version], timestamps and durations as the
 * compiler's own x87 long double microseconds on a profiler clock of its own (CLOCK_MONOTONIC + 7 s).
 *
 * Each buffer starts with 'M' metadata naming the host engine type ("***Host") and every device engine type of the
 * device's generation at engineIndex 0 (Gaudi: "**TPC ", "**MME ", "**DMA "; Gaudi2/3: "*TPC ", "*MME ", "*PDMA",
 * "*EDMA ", "*KDMA") and their engines at indices 1…, then the events recorded since synProfilerStart:
 * fake_synapse_run(dev, step) records one step: host 'X' enqueueWithExternalEvents and 'B'/'E' synLaunch API events,
 * TPC 'B'/'E' kernels, MME 'X', PDMA 'X' memcpy, EDMA 'B'/'E' memcpy, KDMA 'X' memset and a 'C' counter. Every
 * non-metadata event carries a unique sequence number (eventHandle; the counter's average) so a test can prove none
 * was lost or repeated. Extra args: the enqueue event's array lies OUTSIDE the buffer (heap, with the static key
 * "API_ID" and a heap CHAR_PTR value), the launch event's array lies in the pool with a pool key and an outside
 * CHAR_PTR value; outside memory stays valid until the next synProfilerStart of that device.
 *
 * The profiler is on only when HABANA_PROFILE was set and not "0" at synInitialize (FAKE_SYNAPSE_INIT_AT_LOAD=1:
 * read in this library's constructor instead, as if Synapse initialized before the collector could set it).
 * synProfilerStart needs the device buffer synProfilerQueryRequiredMemory asks for (FAKE_SYNAPSE_NEED bytes, default
 * 1 MiB; 0 = none) to be set with an address synDeviceMalloc returned.
 *
 * FAKE_SYNAPSE_WILD=1: step 0's enqueue event gets a CHAR_PTR value pointing to an unmapped page (a stale pointer);
 * it is not reported in the dump.
 *
 * FAKE_SYNAPSE_DUMP names a file that gets, for every buffer handed out: u64 base, u64 size, u64 numEntries, u32
 * device, u32 count of outside pointers, the buffer bytes, then per outside pointer (u64 ptr, u32 len, bytes).
 */
#define _GNU_SOURCE
#include "synapse_abi.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))
#define NDEV 4
#define VERSION 2u /* trailing "Synprof parser version" of these buffers (the real value is not public) */
#define MAX_ARGS 4

enum { ENGINE_HOST = 10 }; /* engine type id of the host; device engine types are 1..5 */

struct arg_set {           /* an extraArgs array and the strings it points to */
  rt_syn_trace_event_arg args[MAX_ARGS];
  uint8_t count;
  int in_pool;             /* 1: copied into the pool; 0: `outside` is the array's address */
  rt_syn_trace_event_arg* outside;
};

struct event {             /* one recorded event before it is laid out */
  rt_syn_trace_event e;    /* char* fields point to fake-owned strings; laid out into the pool at GetTrace */
  struct arg_set a;
};

struct device {
  int acquired, type;
  uint64_t user_buffer;
  int started, ever_started; /* stopped after a start: between a pull's stop and restart */
  struct event* ev;
  size_t n, cap;
  char** outside;          /* heap memory outside any buffer, freed at the next start */
  size_t n_out, cap_out;
  uint64_t last_ns;        /* latest event time recorded (device events lie a few µs past their launch) */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_initialized, g_profiler, g_init_at_load;
static char g_profile_env[64] = "(not read)";
static struct device g_dev[NDEV];
static uint64_t g_seq, g_pulls, g_bytes, g_next_addr = 0x7f0000000000ull;
static int g_allocs;
static int g_misuse; /* calls for a released device (fake_synapse_misuse) */
static const char* g_wild; /* FAKE_SYNAPSE_WILD: an address with no mapping */

static const char* wild_pointer(void) {
  if (!g_wild) {
    void* p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(p, 4096);
    g_wild = (const char*)p + 16;
  }
  return g_wild;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Clock and generations                                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

static uint64_t profiler_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 7000000000ull;
}

struct engine_type {
  uint32_t id;
  const char* gaudi1;      /* type name on Gaudi (NULL: none) */
  const char* gaudi2;      /* type name on Gaudi2 / Gaudi3 (NULL: none) */
  const char* engine;      /* engine name prefix */
  uint32_t engines;
};
static const struct engine_type kTypes[] = {
    {1, "**TPC ", "*TPC ", "TPC", 4}, {2, "**MME ", "*MME ", "MME", 2}, {3, "**DMA ", "*PDMA", "PDMA", 2},
    {4, NULL, "*EDMA ", "EDMA", 2},   {5, NULL, "*KDMA", "KDMA", 1},
};

static const char* type_name(int gen, const struct engine_type* t) {
  return gen == RT_SYN_DEVICE_GAUDI ? t->gaudi1 : t->gaudi2;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Recording                                                                                                          */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Heap memory outside any trace buffer, kept until the device's next synProfilerStart. */
static void* keep_outside_bytes(struct device* d, size_t n) {
  if (d->n_out == d->cap_out) {
    d->cap_out = d->cap_out ? d->cap_out * 2 : 64;
    d->outside = (char**)realloc(d->outside, d->cap_out * sizeof *d->outside);
  }
  char* p = (char*)calloc(1, n);
  d->outside[d->n_out++] = p;
  return p;
}

static char* keep_outside(struct device* d, const char* text) {
  char* s = (char*)keep_outside_bytes(d, strlen(text) + 1);
  memcpy(s, text, strlen(text) + 1);
  return s;
}

static struct event* add(struct device* d, char ph, const char* name, uint32_t type, uint32_t index, uint64_t ns) {
  if (d->n == d->cap) {
    d->cap = d->cap ? d->cap * 2 : 256;
    d->ev = (struct event*)realloc(d->ev, d->cap * sizeof *d->ev);
  }
  struct event* x = &d->ev[d->n++];
  memset(x, 0, sizeof *x);
  x->e.name = name;
  x->e.category = type == ENGINE_HOST ? "host" : "device";
  x->e.type = ph;
  x->e.timestamp = (long double)ns / 1000.0L;
  if (ns > d->last_ns) d->last_ns = ns;
  x->e.engine_type = type;
  x->e.engine_index = index;
  return x;
}

static void event_args(struct event* x, const char* dtype, const char* op, uint16_t recipe, const char* recipe_name) {
  x->e.arguments.event.data_type = dtype;
  x->e.arguments.event.operation = op;
  x->e.arguments.event.recipe_id = recipe;
  x->e.arguments.event.recipe_name = recipe_name;
  x->e.arguments.event.stream_handle = 0x5000 + recipe % 3;
  x->e.arguments.event.event_handle = g_seq++;
}

static const char* const kRecipes[] = {"recipe_fwd_0", "recipe_bwd_1", "recipe_opt_2"};
static const char* const kTpc[] = {"gemm_bf16", "add_fwd_bf16", "relu_bwd_f32", "softmax_fwd_bf16"};

/*
 * One step of work on device `id`: host API events, device events on every engine type, a counter. Returns the events
 * recorded: 0 when the profiler never started on the device (the work runs unprofiled), -1 when it is stopped after a
 * start (a pull's stop → get → start: the caller runs the step again later), -2 for a device not acquired.
 */
EXPORT int fake_synapse_run(uint32_t id, uint32_t step) {
  pthread_mutex_lock(&g_mu);
  int refuse = id >= NDEV || !g_dev[id].acquired ? -2 : g_dev[id].started ? 1 : g_dev[id].ever_started ? -1 : 0;
  if (refuse <= 0) {
    pthread_mutex_unlock(&g_mu);
    return refuse;
  }
  /* FAKE_SYNAPSE_RUN_RAISE=N: step N raises SIGTERM while it holds the library's lock (a signal landing on a thread
   * inside a launch): the collector's handler then runs with the lock held. */
  const char* raise_at = getenv("FAKE_SYNAPSE_RUN_RAISE");
  if (raise_at && (uint32_t)atoi(raise_at) == step) raise(SIGTERM);
  struct device* d = &g_dev[id];
  size_t before = d->n;
  uint64_t t = profiler_now();
  uint16_t recipe = (uint16_t)(step % 3 + 1);
  const char* rname = kRecipes[step % 3];
  char text[64];

  struct event* x = add(d, 'X', "enqueueWithExternalEvents", ENGINE_HOST, 1, t);
  x->e.duration = 3.25L + (long double)(step % 7) / 3.0L;
  event_args(x, "", "", recipe, rname);
  x->a.count = 2;
  x->a.args[0] = (rt_syn_trace_event_arg){"API_ID", RT_SYN_ARG_UINT64, {.u64 = 42}};
  snprintf(text, sizeof text, "stream_%u", step % 2);
  x->a.args[1] = (rt_syn_trace_event_arg){"stream", RT_SYN_ARG_CHAR_PTR, {.str = keep_outside(d, text)}};
  const char* wild = getenv("FAKE_SYNAPSE_WILD");
  if (step == 0 && wild && !strcmp(wild, "1")) x->a.args[1].value.str = wild_pointer();
  x->a.outside = (rt_syn_trace_event_arg*)keep_outside_bytes(d, sizeof x->a.args); /* the array, outside */

  x = add(d, 'B', "synLaunchWithExternalEvents", ENGINE_HOST, 1, t + 100);
  event_args(x, "", "", recipe, rname);
  x->a.count = 2;
  x->a.in_pool = 1;
  x->a.args[0] = (rt_syn_trace_event_arg){"workspace", RT_SYN_ARG_UINT64, {.u64 = 0x10000ull * (step + 1)}};
  snprintf(text, sizeof text, "graph_%u.recipe", step % 3);
  x->a.args[1] = (rt_syn_trace_event_arg){"file", RT_SYN_ARG_CHAR_PTR, {.str = keep_outside(d, text)}};
  x = add(d, 'E', "synLaunchWithExternalEvents", ENGINE_HOST, 1, t + 900);
  event_args(x, "", "", recipe, rname);

  int gen = d->type;
  uint32_t tpc = 1 + step % 4;
  x = add(d, 'B', "tpc_kernel", 1, tpc, t + 2000);
  event_args(x, "bf16", kTpc[step % 4], recipe, rname);
  x->e.context_id = step;
  x = add(d, 'E', "tpc_kernel", 1, tpc, t + 2000 + 1500 + step % 11);
  event_args(x, "bf16", kTpc[step % 4], recipe, rname);
  x->e.context_id = step;

  x = add(d, 'X', "mme_kernel", 2, 1 + step % 2, t + 2100);
  x->e.duration = 17.125L;
  event_args(x, "bf16", "batch_gemm", recipe, rname);

  x = add(d, 'X', gen == RT_SYN_DEVICE_GAUDI ? "dma" : "memcpy_h2d", 3, 1 + step % 2, t + 1000);
  x->e.duration = 0.875L;
  event_args(x, "", "memcpy_h2d", recipe, rname);
  if (gen != RT_SYN_DEVICE_GAUDI) {
    x = add(d, 'B', "memcpy_d2d", 4, 1, t + 4000);
    event_args(x, "", "memcpy_d2d", recipe, rname);
    x->e.context_id = 1000 + step;
    x = add(d, 'E', "memcpy_d2d", 4, 1, t + 4400);
    event_args(x, "", "memcpy_d2d", recipe, rname);
    x->e.context_id = 1000 + step;
    x = add(d, 'X', "memset", 5, 1, t + 4500);
    x->e.duration = 0.5L;
    event_args(x, "", "memset", recipe, rname);
  }

  x = add(d, 'C', "tpc_utilization", 1, 0, t + 5000);
  x->e.arguments.counter.minimum = 0.25;
  x->e.arguments.counter.maximum = 0.75 + (double)(step % 4) / 16.0;
  x->e.arguments.counter.average = (double)g_seq++;
  x->e.arguments.counter.matches = (uint16_t)step;

  int n = (int)(d->n - before);
  pthread_mutex_unlock(&g_mu);
  return n;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Laying a buffer out                                                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

struct layout {
  uint8_t* pool;     /* NULL: size only */
  uint64_t base;     /* address of the buffer */
  size_t at;         /* pool bytes used (offset from the pool start) */
  size_t pool_off;   /* the pool's offset in the buffer */
  FILE* out;         /* outside pointers to report (NULL: none) */
  uint32_t n_out;
  uint8_t* outrec;   /* (ptr, len, bytes) records of outside pointers */
  size_t outlen, outcap;
};

/* A string into the pool; returns its address in the buffer (computed even when only sizing). */
static const char* pool_str(struct layout* L, const char* s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  const char* p = (const char*)(uintptr_t)(L->base + L->pool_off + L->at);
  if (L->pool) memcpy(L->pool + L->at, s, n);
  L->at += n;
  return p;
}

static void report_outside(struct layout* L, const void* ptr, const void* bytes, uint32_t len) {
  if (!L->pool) return;
  if (L->outlen + 12 + len > L->outcap) {
    L->outcap = (L->outcap + 12 + len) * 2;
    L->outrec = (uint8_t*)realloc(L->outrec, L->outcap);
  }
  uint64_t p = (uint64_t)(uintptr_t)ptr;
  memcpy(L->outrec + L->outlen, &p, 8);
  memcpy(L->outrec + L->outlen + 8, &len, 4);
  memcpy(L->outrec + L->outlen + 12, bytes, len);
  L->outlen += 12 + len;
  L->n_out++;
}

static void report_str(struct layout* L, const char* s) {
  if (s != g_wild) report_outside(L, s, s, (uint32_t)strlen(s));
}

static void meta(struct layout* L, rt_syn_trace_event* out, size_t* k, uint32_t type, uint32_t index,
                 const char* name) {
  if (!out) {
    pool_str(L, "metadata");
    pool_str(L, name);
    pool_str(L, index ? "engine" : "engine type");
    (*k)++;
    return;
  }
  rt_syn_trace_event* e = &out[(*k)++];
  memset(e, 0, sizeof *e);
  e->name = pool_str(L, "metadata");
  e->category = NULL;
  e->type = 'M';
  e->engine_type = type;
  e->engine_index = index;
  e->arguments.meta.name = pool_str(L, name);
  e->arguments.meta.group = pool_str(L, index ? "engine" : "engine type");
}

/* Entries of device `d`'s buffer into `out` (NULL: count only); returns the entry count. */
static size_t lay_out(struct device* d, struct layout* L, rt_syn_trace_event* out) {
  size_t k = 0;
  char text[32];
#define META(t, i, n) meta(L, out, &k, t, i, n)
  META(ENGINE_HOST, 0, "***Host");
  META(ENGINE_HOST, 1, "Host thread 1");
  for (size_t t = 0; t < sizeof kTypes / sizeof kTypes[0]; t++) {
    const char* tn = type_name(d->type, &kTypes[t]);
    if (!tn) continue;
    META(kTypes[t].id, 0, tn);
    for (uint32_t i = 1; i <= kTypes[t].engines; i++) {
      snprintf(text, sizeof text, "%s %u", kTypes[t].engine, i - 1);
      META(kTypes[t].id, i, text);
    }
  }
#undef META
  for (size_t i = 0; i < d->n; i++, k++) {
    const struct event* x = &d->ev[i];
    rt_syn_trace_event e = x->e;
    e.name = pool_str(L, x->e.name);
    e.category = pool_str(L, x->e.category);
    if (e.type != 'C') {
      e.arguments.event.data_type = pool_str(L, x->e.arguments.event.data_type);
      e.arguments.event.operation = pool_str(L, x->e.arguments.event.operation);
      e.arguments.event.recipe_name = pool_str(L, x->e.arguments.event.recipe_name);
      if (x->a.count) {
        rt_syn_trace_event_arg args[MAX_ARGS];
        memcpy(args, x->a.args, sizeof args);
        const rt_syn_trace_event_arg* where;
        if (x->a.in_pool) {
          L->at = (L->at + 7) & ~(size_t)7;
          where = (const rt_syn_trace_event_arg*)(uintptr_t)(L->base + L->pool_off + L->at);
          size_t at = L->at;
          L->at += x->a.count * sizeof args[0];
          for (uint8_t j = 0; j < x->a.count; j++) {
            args[j].key = pool_str(L, args[j].key); /* the key in the pool, the CHAR_PTR value stays outside */
            if (args[j].type == RT_SYN_ARG_CHAR_PTR)
              report_str(L, args[j].value.str);
          }
          if (L->pool) memcpy(L->pool + at, args, x->a.count * sizeof args[0]);
        } else {
          where = x->a.outside;
          memcpy(x->a.outside, args, x->a.count * sizeof args[0]);
          report_outside(L, where, where, (uint32_t)(x->a.count * sizeof args[0]));
          for (uint8_t j = 0; j < x->a.count; j++) {
            report_str(L, args[j].key);
            if (args[j].type == RT_SYN_ARG_CHAR_PTR)
              report_str(L, args[j].value.str);
          }
        }
        e.arguments.event.extra_args.count = x->a.count;
        e.arguments.event.extra_args.args = where;
      }
    }
    if (out) memcpy(&out[k], &e, sizeof e);
  }
  return k;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* The Synapse API subset                                                                                             */
/* ------------------------------------------------------------------------------------------------------------------ */

static void read_profile_env(void) {
  const char* v = getenv("HABANA_PROFILE");
  snprintf(g_profile_env, sizeof g_profile_env, "%s", v ? v : "(unset)");
  g_profiler = v && strcmp(v, "0") != 0;
}

__attribute__((constructor)) static void fake_load(void) {
  const char* v = getenv("FAKE_SYNAPSE_INIT_AT_LOAD");
  if (v && !strcmp(v, "1")) {
    g_init_at_load = 1;
    read_profile_env();
  }
}

EXPORT rt_syn_status synInitialize(void) {
  pthread_mutex_lock(&g_mu);
  if (!g_initialized && !g_init_at_load) read_profile_env();
  g_initialized = 1;
  pthread_mutex_unlock(&g_mu);
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synDestroy(void) {
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < NDEV; i++) g_dev[i].acquired = g_dev[i].started = g_dev[i].ever_started = 0;
  g_initialized = 0;
  pthread_mutex_unlock(&g_mu);
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synDriverGetVersion(char* out, int len) {
  if (!out || len <= 0) return RT_SYN_INVALID_ARGUMENT;
  snprintf(out, (size_t)len, "1.19.0.561");
  return RT_SYN_SUCCESS;
}

static rt_syn_status acquire(rt_syn_device_id* id, int index, int type) {
  if (!id) return RT_SYN_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  rt_syn_status s = RT_SYN_UNINITIALIZED;
  if (g_initialized) {
    s = RT_SYN_NO_DEVICE_FOUND;
    if (index >= 0 && index < NDEV && !g_dev[index].acquired) {
      g_dev[index].acquired = 1;
      g_dev[index].type = type;
      *id = (rt_syn_device_id)index;
      s = RT_SYN_SUCCESS;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return s;
}

/* Device 0 is a Gaudi2 (by PCI bus), device 1 a Gaudi (by type), device 2 + module a Gaudi3 (by module id). */
EXPORT rt_syn_status synDeviceAcquire(rt_syn_device_id* id, const char* bus) {
  (void)bus;
  return acquire(id, 0, RT_SYN_DEVICE_GAUDI2);
}
EXPORT rt_syn_status synDeviceAcquireByDeviceType(rt_syn_device_id* id, int32_t type) {
  return acquire(id, type == RT_SYN_DEVICE_GAUDI ? 1 : 0, type == RT_SYN_DEVICE_GAUDI ? type : RT_SYN_DEVICE_GAUDI2);
}
EXPORT rt_syn_status synDeviceAcquireByModuleId(rt_syn_device_id* id, rt_syn_module_id module) {
  return acquire(id, 2 + (int)module, RT_SYN_DEVICE_GAUDI3);
}

static void clear_session(struct device* d) {
  for (size_t i = 0; i < d->n_out; i++) free(d->outside[i]);
  d->n_out = 0;
  d->n = 0;
}

EXPORT rt_syn_status synDeviceRelease(rt_syn_device_id id) {
  pthread_mutex_lock(&g_mu);
  rt_syn_status s = id < NDEV && g_dev[id].acquired ? RT_SYN_SUCCESS : RT_SYN_INVALID_ARGUMENT;
  if (s == RT_SYN_SUCCESS) {
    g_dev[id].acquired = g_dev[id].started = g_dev[id].ever_started = 0;
    clear_session(&g_dev[id]);
  }
  pthread_mutex_unlock(&g_mu);
  return s;
}

static const char* gen_name(int type) {
  return type == RT_SYN_DEVICE_GAUDI ? "GAUDI" : type == RT_SYN_DEVICE_GAUDI3 ? "GAUDI3" : "GAUDI2";
}
static uint64_t hbm(int type) {
  return (type == RT_SYN_DEVICE_GAUDI ? 32ull : type == RT_SYN_DEVICE_GAUDI3 ? 128ull : 96ull) << 30;
}

EXPORT rt_syn_status synDeviceGetName(char* out, int len, rt_syn_device_id id) {
  if (!out || len <= 0 || id >= NDEV || !g_dev[id].acquired) return RT_SYN_INVALID_ARGUMENT;
  snprintf(out, (size_t)len, "%s", gen_name(g_dev[id].type));
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synDeviceGetInfo(rt_syn_device_id id, rt_syn_device_info* out) {
  if (!out || id >= NDEV || !g_dev[id].acquired) return RT_SYN_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->dram_size = hbm(g_dev[id].type);
  out->dram_enabled = 1;
  out->device_id = id;
  out->device_type = g_dev[id].type;
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synDeviceGetMemoryInfo(rt_syn_device_id id, uint64_t* free_bytes, uint64_t* total) {
  if (!free_bytes || !total || id >= NDEV || !g_dev[id].acquired) return RT_SYN_INVALID_ARGUMENT;
  *total = hbm(g_dev[id].type);
  *free_bytes = *total / 2;
  return RT_SYN_SUCCESS;
}

static uint32_t need_bytes(void) {
  const char* v = getenv("FAKE_SYNAPSE_NEED");
  return v && *v ? (uint32_t)strtoul(v, NULL, 10) : 1u << 20;
}

/* Counts a call for a released device (under g_mu: the test reads the count from its own thread). */
static void misuse(void) {
  pthread_mutex_lock(&g_mu);
  g_misuse++;
  pthread_mutex_unlock(&g_mu);
}

EXPORT rt_syn_status synDeviceMalloc(rt_syn_device_id id, uint64_t size, uint64_t req, uint32_t flags, uint64_t* buf) {
  (void)req;
  if (!buf || flags || id >= NDEV || !g_dev[id].acquired || size == 0) return RT_SYN_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  *buf = g_next_addr;
  g_next_addr += (size + 0xfff) & ~0xfffull;
  g_allocs++;
  pthread_mutex_unlock(&g_mu);
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synDeviceFree(rt_syn_device_id id, uint64_t buf, uint32_t flags) {
  if (!buf || flags || id >= NDEV) return RT_SYN_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  if (!g_dev[id].acquired) { /* released: its memory went with it (real Synapse may crash here) */
    g_misuse++;
    pthread_mutex_unlock(&g_mu);
    return RT_SYN_INVALID_ARGUMENT;
  }
  g_allocs--;
  if (g_dev[id].user_buffer == buf) g_dev[id].user_buffer = 0;
  pthread_mutex_unlock(&g_mu);
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synProfilerQueryRequiredMemory(rt_syn_device_id id, uint32_t* bytes) {
  if (id < NDEV && !g_dev[id].acquired) misuse();
  if (!bytes || id >= NDEV || !g_dev[id].acquired) return RT_SYN_INVALID_ARGUMENT;
  *bytes = need_bytes();
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synProfilerSetUserBuffer(rt_syn_device_id id, void* buffer) {
  uint64_t a = (uint64_t)(uintptr_t)buffer;
  if (id >= NDEV || !g_dev[id].acquired || a < 0x7f0000000000ull || a >= g_next_addr) return RT_SYN_INVALID_ARGUMENT;
  g_dev[id].user_buffer = a;
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synProfilerStart(int32_t type, rt_syn_device_id id) {
  if (type != RT_SYN_TRACE_ALL || id >= NDEV) return RT_SYN_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  rt_syn_status s = RT_SYN_SUCCESS;
  struct device* d = &g_dev[id];
  if (!g_profiler) s = RT_SYN_FAIL;                                  /* profiler not enabled at initialization */
  else if (!d->acquired) s = RT_SYN_INVALID_ARGUMENT;
  else if (need_bytes() && !d->user_buffer) s = RT_SYN_FAIL;         /* the device buffer was not given */
  if (s == RT_SYN_SUCCESS) {
    clear_session(d);
    d->started = d->ever_started = 1;
  }
  pthread_mutex_unlock(&g_mu);
  return s;
}

EXPORT rt_syn_status synProfilerStop(int32_t type, rt_syn_device_id id) {
  if (id < NDEV && !g_dev[id].acquired) misuse();
  if (type != RT_SYN_TRACE_ALL || id >= NDEV || !g_dev[id].acquired) return RT_SYN_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_mu);
  g_dev[id].started = 0;
  uint64_t last = g_dev[id].last_ns;
  pthread_mutex_unlock(&g_mu);
  /* As a device's profiler, stop once the work it recorded is done: the fake places device events up to 5 µs past
   * their launch, and a fast machine reaches the stop (and the collector's END anchor) sooner than that. */
  while (profiler_now() <= last) {
  }
  return RT_SYN_SUCCESS;
}

EXPORT rt_syn_status synProfilerGetCurrentTimeNS(uint64_t* ns) {
  if (!ns) return RT_SYN_INVALID_ARGUMENT;
  *ns = profiler_now();
  return RT_SYN_SUCCESS;
}

static void dump(const uint8_t* buf, size_t size, size_t n, uint32_t id, const struct layout* L) {
  const char* path = getenv("FAKE_SYNAPSE_DUMP");
  if (!path || !*path) return;
  FILE* f = fopen(path, "ab");
  if (!f) return;
  uint64_t head[3] = {(uint64_t)(uintptr_t)buf, size, n};
  fwrite(head, sizeof head, 1, f);
  fwrite(&id, 4, 1, f);
  fwrite(&L->n_out, 4, 1, f);
  fwrite(buf, 1, size, f);
  fwrite(L->outrec, 1, L->outlen, f);
  fclose(f);
}

EXPORT rt_syn_status synProfilerGetTrace(int32_t type, rt_syn_device_id id, int32_t format, void* buffer, size_t* size,
                                         size_t* num) {
  if (type != RT_SYN_TRACE_ALL || format != RT_SYN_TRACE_FORMAT_TEF || id >= NDEV || !num)
    return RT_SYN_INVALID_ARGUMENT;
  if (!size) return RT_SYN_UNSUPPORTED; /* "written to the file system": not in this double */
  if (!buffer && getenv("FAKE_SYNAPSE_PRINT_FETCH")) {
    /* FAKE_SYNAPSE_PRINT_FETCH: when each fetch starts, on CLOCK_MONOTONIC (anchors must be read before it), and the
     * size then of the file FAKE_SYNAPSE_WATCH names (-1: none; what the collector had written before this fetch) */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const char* watch = getenv("FAKE_SYNAPSE_WATCH");
    struct stat st;
    long long watched = watch && stat(watch, &st) == 0 ? (long long)st.st_size : -1;
    printf("{\"fetch_mono\":\"%llu\",\"dev\":%u,\"watched\":%lld}\n",
           (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec, id, watched);
    fflush(stdout);
  }
  pthread_mutex_lock(&g_mu);
  struct device* d = &g_dev[id];
  rt_syn_status s = RT_SYN_SUCCESS;
  if (!d->acquired || d->started) s = RT_SYN_INVALID_ARGUMENT; /* only after a stop */
  struct layout L;
  memset(&L, 0, sizeof L);
  size_t entries = s == RT_SYN_SUCCESS ? lay_out(d, &L, NULL) : 0;
  /* the size query answers 64 bytes more than the buffer will hold: the second call says the bytes written */
  size_t need = entries * sizeof(rt_syn_trace_event) + ((L.at + 7) & ~(size_t)7) + RT_SYN_TRACE_TRAILER + 64;
  if (s == RT_SYN_SUCCESS && !buffer) {
    *size = need;
    *num = entries;
  } else if (s == RT_SYN_SUCCESS) {
    if (*size < need) {
      s = RT_SYN_INVALID_ARGUMENT;
    } else {
      uint8_t* b = (uint8_t*)buffer;
      L.base = (uint64_t)(uintptr_t)b;
      L.pool_off = entries * sizeof(rt_syn_trace_event);
      L.pool = b + L.pool_off;
      L.at = 0;
      lay_out(d, &L, (rt_syn_trace_event*)b);
      size_t used = (L.pool_off + L.at + 7) & ~(size_t)7;
      memset(b + L.pool_off + L.at, 0, used - L.pool_off - L.at);
      uint64_t trailer[2] = {entries, VERSION};
      memcpy(b + used, trailer, sizeof trailer);
      *size = used + sizeof trailer;
      /* FAKE_SYNAPSE_OVERSIZE: the second call reports more bytes than the buffer it was given (a library at odds
       * with its own size query) */
      if (getenv("FAKE_SYNAPSE_OVERSIZE")) *size = need + 8;
      *num = entries;
      g_pulls++;
      g_bytes += *size;
      dump(b, *size, entries, id, &L);
      free(L.outrec);
    }
  }
  pthread_mutex_unlock(&g_mu);
  return s;
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* What the test program asks the double                                                                              */
/* ------------------------------------------------------------------------------------------------------------------ */

/* A counter the collector's thread writes under g_mu, read under it from the test program's. */
static uint64_t read_u64(const uint64_t* p) {
  pthread_mutex_lock(&g_mu);
  uint64_t v = *p;
  pthread_mutex_unlock(&g_mu);
  return v;
}
static int read_int(const int* p) {
  pthread_mutex_lock(&g_mu);
  int v = *p;
  pthread_mutex_unlock(&g_mu);
  return v;
}

/** Buffers handed out so far. */
EXPORT uint64_t fake_synapse_pulls(void) { return read_u64(&g_pulls); }

/** Bytes of the buffers handed out so far. */
EXPORT uint64_t fake_synapse_bytes(void) { return read_u64(&g_bytes); }

/** Whether device `id`'s profiler records now (started, no stop since). */
EXPORT int fake_synapse_recording(uint32_t id) {
  pthread_mutex_lock(&g_mu);
  int on = id < NDEV && g_dev[id].acquired && g_dev[id].started;
  pthread_mutex_unlock(&g_mu);
  return on;
}

/** Sequence numbers given so far (non-metadata events recorded). */
EXPORT uint64_t fake_synapse_events(void) { return read_u64(&g_seq); }

/** HABANA_PROFILE as Synapse read it at initialization. */
EXPORT const char* fake_synapse_profile_env(void) { return g_profile_env; }

/** Device allocations not freed. */
EXPORT int fake_synapse_device_allocs(void) { return read_int(&g_allocs); }

/** Calls for a device not acquired (released): a stop, a memory query, a free of its memory. */
EXPORT int fake_synapse_misuse(void) { return read_int(&g_misuse); }
