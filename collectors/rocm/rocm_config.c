/*
 * rawtrace ROCm collector: configuration from the environment (RAWTRACE_OUTPUT, RAWTRACE_ROCM_KINDS, ...;
 * docs/collectors/rocm.md) and which SDK kinds it selects.
 */
#include "rocm_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Configuration                                                                                                      */
/* ------------------------------------------------------------------------------------------------------------------ */

/** Buffer-tracing kinds recorded by default, by SDK name (absent ones are skipped: e.g. 0.5 has no
 * MEMORY_ALLOCATION or MARKER_CORE_RANGE_API, and RCCL_API only matters where RCCL is used). */
static const char* const kDefaultKinds[] = {
    "HIP_RUNTIME_API",   "KERNEL_DISPATCH",       "MEMORY_COPY",     "MEMORY_ALLOCATION",
    "SCRATCH_MEMORY",    "MARKER_CORE_API",       "MARKER_CORE_RANGE_API", "CORRELATION_ID_RETIREMENT",
    "RCCL_API",
};

void rt_rocm_load_config(struct config* c) {
  memset(c, 0, sizeof *c);
  const char* out = getenv("RAWTRACE_OUTPUT");
  snprintf(c->output, sizeof c->output, "%s", out && *out ? out : DEFAULT_NAME);
  const char* kinds = getenv("RAWTRACE_ROCM_KINDS");
  snprintf(c->kinds, sizeof c->kinds, "%s", kinds && *kinds ? kinds : "default");
  c->buffer_size = rt_env_size("RAWTRACE_BUFFER_SIZE", 4u << 20, G.verbosity);
  if (c->buffer_size < 2 * MAX_RECORD) c->buffer_size = 2 * MAX_RECORD;
  if (c->buffer_size > (64u << 20)) c->buffer_size = 64u << 20;
  c->buffer_size &= ~(size_t)7;
  c->max_memory = rt_env_size("RAWTRACE_MAX_MEMORY", 256u << 20, G.verbosity);
  if (c->max_memory < c->buffer_size + CBUF_HDR) c->max_memory = c->buffer_size + CBUF_HDR;
  c->handle_signals = rt_env_flag("RAWTRACE_HANDLE_SIGNALS", 1);
  c->exit_timeout = rt_env_timeout("RAWTRACE_EXIT_TIMEOUT", 10, G.verbosity);
}

/* Whether SDK kind name `name` is selected by RAWTRACE_ROCM_KINDS (comma list of names, "default", "-NAME"):
 * 0 no, 1 through "default", 2 named explicitly. */
const char* rt_rocm_next_kind(const char* s, const char** name, size_t* len, int* neg) {
  while (*s == ',' || *s == ' ') s++;
  size_t n = 0;
  while (s[n] && s[n] != ',' && s[n] != ' ') n++;
  if (!n) return NULL;
  *neg = *s == '-';
  *name = s + *neg;
  *len = n - (size_t)*neg;
  return s + n;
}

int rt_rocm_kind_wanted(const char* name) {
  int want = 0;
  const char* t;
  size_t tn;
  int neg;
  for (const char* s = G.cfg.kinds; (s = rt_rocm_next_kind(s, &t, &tn, &neg)) != NULL;) {
    if (tn == 7 && !strncasecmp(t, "default", 7)) {
      for (size_t i = 0; i < sizeof kDefaultKinds / sizeof kDefaultKinds[0]; i++)
        if (!strcmp(name, kDefaultKinds[i])) want = neg ? 0 : 1;
    } else if (strlen(name) == tn && !strncasecmp(t, name, tn)) {
      want = neg ? 0 : 2;
    }
  }
  return want;
}

#ifdef RT_ROCM_FAULTS
int rt_rocm_fault(const char* site) {
  const char* t;
  size_t tn;
  int neg;
  const char* list = getenv("RAWTRACE_ROCM_FAULTS");
  for (const char* s = list ? list : ""; (s = rt_rocm_next_kind(s, &t, &tn, &neg)) != NULL;)
    if (strlen(site) == tn && !strncmp(t, site, tn)) return 1;
  return 0;
}
#endif
