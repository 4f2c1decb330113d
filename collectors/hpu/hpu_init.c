/*
 * rawtrace HPU collector: the constructor (configuration from the environment, is a libSynapse there to record with)
 * and binding to libSynapse at the first interposed call (the functions forwarded to, the profiler's). Overview:
 * rawtrace_hpu.c.
 */
#include "hpu_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_hpu_syn S;

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

void rt_hpu_bind(void) {
  pthread_once(&G.bind_once, bind_synapse);
  if (G.inactive[0] && !atomic_exchange(&G.said_inactive, 1))
    rt_hpu_log(RT_V_WARN, 0, "HPU collector inactive: %s", G.inactive);
}


/* ------------------------------------------------------------------------------------------------------------------ */
/* HABANA_PROFILE and the constructor                                                                                 */
/* ------------------------------------------------------------------------------------------------------------------ */

/* Synapse enables its profiler in synInitialize when HABANA_PROFILE is set and not "0" (or ENABLE_DEBUG_INFO=1). */
void rt_hpu_ensure_profile_env(void) {
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
    rt_hpu_log(RT_V_WARN, 0, "HPU collector inactive: %s", G.inactive);
    return;
  }
  rt_hpu_ensure_profile_env();
  if (G.profile_env == 2)
    rt_hpu_log(RT_V_WARN, 0, "HABANA_PROFILE=0 is kept: Synapse's profiler stays off (nothing is recorded unless "
               "ENABLE_DEBUG_INFO=1)");
}
