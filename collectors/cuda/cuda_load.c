/*
 * rawtrace CUDA collector: finding and loading libcupti (dlopen, never linked) and binding its entry points;
 * the optional CUDA driver and the driver and runtime versions.
 */
#include "cuda_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Loading CUPTI and the CUDA driver                                                                                  */
/* ------------------------------------------------------------------------------------------------------------------ */

static void* sym(void* h, const char* name) { return h ? dlsym(h, name) : NULL; }

/* CUPTI entry points (bind_cupti fills them). */
struct rt_cuda_cupti C;

/* Why the last library tried was not a usable libcupti (for the error line when RAWTRACE_CUPTI_LIB names it). */
char rt_cuda_cupti_problem[512];

/* Resolves the CUPTI entry points from `h`. Returns 0 when every required one is there. */
static int bind_cupti(void* h) {
  memset(&C, 0, sizeof C);
#define REQ(field, name)                                                                  \
  do {                                                                                    \
    *(void**)(&C.field) = sym(h, name);                                                   \
    if (!C.field) {                                                                       \
      snprintf(rt_cuda_cupti_problem, sizeof rt_cuda_cupti_problem, "it has no %s (not a libcupti)", name); \
      rt_cuda_logmsg(LOG_DEBUG, "libcupti lacks %s", name);                               \
      return -1;                                                                          \
    }                                                                                     \
  } while (0)
#define OPT(field, name) (*(void**)(&C.field) = sym(h, name))
  REQ(GetVersion, "cuptiGetVersion");
  REQ(RegisterCallbacks, "cuptiActivityRegisterCallbacks");
  REQ(Enable, "cuptiActivityEnable");
  REQ(Disable, "cuptiActivityDisable");
  REQ(FlushAll, "cuptiActivityFlushAll");
  REQ(GetNextRecord, "cuptiActivityGetNextRecord");
  REQ(GetTimestamp, "cuptiGetTimestamp");
  REQ(GetCallbackName, "cuptiGetCallbackName");
  REQ(GetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
  OPT(SetThreadIdType, "cuptiSetThreadIdType");
  OPT(GetResultString, "cuptiGetResultString");
  OPT(PushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId");
  OPT(PopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId");
  OPT(EnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
  OPT(EnableDriverApi, "cuptiActivityEnableDriverApi");
  OPT(EnableCudaEventDeviceTimestamps, "cuptiActivityEnableCudaEventDeviceTimestamps");
#undef REQ
#undef OPT
  return 0;
}

static int try_cupti(const char* path, int flags) {
  void* h = dlopen(path, flags);
  if (!h) {
    const char* e = dlerror();
    snprintf(rt_cuda_cupti_problem, sizeof rt_cuda_cupti_problem, "cannot be loaded: %s", e ? e : "?");
    rt_cuda_logmsg(LOG_DEBUG, "dlopen(%s): %s", path, e ? e : "?");
    return -1;
  }
  if (bind_cupti(h) != 0) {
    rt_cuda_logmsg(LOG_DEBUG, "%s is not a usable libcupti", path);
    dlclose(h);
    return -1;
  }
  G.cupti = h;
  Dl_info info;
  if (dladdr(*(void**)(&C.GetVersion), &info) && info.dli_fname)
    snprintf(G.cupti_path, sizeof G.cupti_path, "%s", info.dli_fname);
  else
    snprintf(G.cupti_path, sizeof G.cupti_path, "%s", path);
  return 0;
}

static int find_cudart_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  const char* name = info->dlpi_name;
  if (!name || !*name) return 0;
  const char* base = strrchr(name, '/');
  if (base && !strncmp(base + 1, "libcudart.so", 12)) {
    snprintf((char*)data, PATH_MAX, "%s", name);
    return 1;
  }
  return 0;
}

/* Path of a loaded libcudart.so*, or "" when the program has none (static cudart, not loaded yet). */
static void loaded_cudart(char* out) {
  out[0] = 0;
  dl_iterate_phdr(find_cudart_cb, out);
}

static int try_glob(const char* pattern) {
  glob_t g;
  memset(&g, 0, sizeof g);
  int found = -1;
  if (glob(pattern, 0, NULL, &g) == 0) {
    /* newest name last in sorted order: try from the end */
    for (size_t i = g.gl_pathc; i-- > 0 && found != 0;) found = try_cupti(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
  }
  globfree(&g);
  return found;
}

/* try_glob on each of the `n` patterns in turn, with `dir` for their "%s". Returns 0 at the first usable libcupti. */
static int try_globs_in(const char* dir, const char* const* patterns, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char pat[PATH_MAX + 64];
    snprintf(pat, sizeof pat, patterns[i], dir);
    if (try_glob(pat) == 0) return 0;
  }
  return -1;
}

/* The libcupti sonames, newest first, opened with `flags`. Returns 0 at the first usable one. */
static int try_sonames(int flags) {
  static const char* const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so"};
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++)
    if (try_cupti(sonames[i], flags) == 0) return 0;
  return -1;
}

/* RAWTRACE_CUPTI_LIB; a libcupti the program already loaded; the libcupti NVTX is told to inject; one next to its
 * libcudart; the loader's search path. */
int rt_cuda_load_cupti(void) {
  if (G.cupti) return 0;
  const char* env = getenv("RAWTRACE_CUPTI_LIB");
  if (env && *env) return try_cupti(env, RTLD_NOW | RTLD_LOCAL);
  if (try_sonames(RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) == 0) return 0;
  /* NVTX delivers ranges to the libcupti named by NVTX_INJECTION64_PATH: record through that same library, or the
   * markers land in a second CUPTI instance nobody reads (seen on an H100: toolkit CUPTI vs the venv's). */
  const char* nvtx = getenv("NVTX_INJECTION64_PATH");
  if (nvtx && *nvtx && strstr(nvtx, "libcupti") && try_cupti(nvtx, RTLD_NOW | RTLD_LOCAL) == 0) return 0;
  char cudart[PATH_MAX];
  loaded_cudart(cudart);
  if (cudart[0]) {
    char* slash = strrchr(cudart, '/');
    if (slash) {
      *slash = 0;
      /* pip CUDA 13: nvidia/cu13/lib holds both; toolkit: lib64 and extras/CUPTI/lib64; pip CUDA 12:
       * nvidia/cuda_runtime/lib and nvidia/cuda_cupti/lib */
      static const char* const rel[] = {"%s/libcupti.so*", "%s/../extras/CUPTI/lib64/libcupti.so*",
                                        "%s/../../cuda_cupti/lib/libcupti.so*", "%s/../cuda_cupti/lib/libcupti.so*"};
      if (try_globs_in(cudart, rel, sizeof rel / sizeof rel[0]) == 0) return 0;
    }
  }
  if (try_sonames(RTLD_NOW | RTLD_LOCAL) == 0) return 0;
  /* a toolkit install (programs built by nvcc link cudart statically, so nothing above found it) */
  static const char* const in_home[] = {"%s/extras/CUPTI/lib64/libcupti.so*", "%s/lib64/libcupti.so*"};
  const char* homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++)
    if (homes[i] && *homes[i] && try_globs_in(homes[i], in_home, sizeof in_home / sizeof in_home[0]) == 0) return 0;
  return -1;
}

/* `name` from `h`, else the older `fallback`. */
static void* sym_v2(void* h, const char* name, const char* fallback) {
  void* p = dlsym(h, name);
  return p ? p : dlsym(h, fallback);
}

/* The CUDA driver for versions and the device table: RAWTRACE_CUDA_DRIVER_LIB, else libcuda.so.1. Never cuInit. */
void rt_cuda_load_driver(void) {
  if (G.cuda) return;
  const char* env = getenv("RAWTRACE_CUDA_DRIVER_LIB");
  void* h = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  G.cuda = h;
  *(void**)(&G.cuDeviceGetCount) = dlsym(h, "cuDeviceGetCount");
  *(void**)(&G.cuDeviceGet) = dlsym(h, "cuDeviceGet");
  *(void**)(&G.cuDeviceGetAttribute) = dlsym(h, "cuDeviceGetAttribute");
  *(void**)(&G.cuDeviceGetName) = dlsym(h, "cuDeviceGetName");
  *(void**)(&G.cuDeviceTotalMem) = sym_v2(h, "cuDeviceTotalMem_v2", "cuDeviceTotalMem");
  *(void**)(&G.cuDeviceGetUuid) = sym_v2(h, "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
}

uint32_t rt_cuda_driver_version(void) {
  fn_cu_int f = NULL;
  if (G.cuda) *(void**)(&f) = dlsym(G.cuda, "cuDriverGetVersion");
  int v = 0;
  if (f && f(&v) == CUDA_SUCCESS && v > 0) return (uint32_t)v;
  return 0;
}

uint32_t rt_cuda_runtime_version(void) {
  fn_cudart_version f = NULL;
  *(void**)(&f) = dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
  if (!f) {
    char cudart[PATH_MAX];
    loaded_cudart(cudart);
    if (cudart[0]) {
      void* h = dlopen(cudart, RTLD_NOW | RTLD_NOLOAD);
      if (h) *(void**)(&f) = dlsym(h, "cudaRuntimeGetVersion");
    }
  }
  int v = 0;
  if (f && f(&v) == 0 && v > 0) return (uint32_t)v;
  return 0;
}
