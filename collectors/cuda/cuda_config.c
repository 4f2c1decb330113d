/*
 * rawtrace CUDA collector: configuration from the environment (RAWTRACE_OUTPUT, RAWTRACE_ACTIVITIES,
 * RAWTRACE_SIGNAL, ...; docs/collectors/cuda.md).
 */
#include "cuda_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Configuration (environment)                                                                                        */
/* ------------------------------------------------------------------------------------------------------------------ */

static const struct {
  const char* name;
  uint32_t kind;
} kKindNames[] = {
    {"memcpy", 1},          {"memset", 2},
    {"kernel", 3},          {"driver", 4},
    {"runtime", 5},         {"device", 8},
    {"context", 9},         {"concurrent_kernel", 10},
    {"name", 11},           {"marker", 12},
    {"marker_data", 13},    {"overhead", 17},
    {"cdp_kernel", 18},     {"preemption", 19},
    {"environment", 20},    {"memcpy2", 22},
    {"unified_memory_counter", 25}, {"function", 26},
    {"module", 27},         {"device_attribute", 28},
    {"openacc_data", 33},   {"openacc_launch", 34},
    {"openacc_other", 35},  {"cuda_event", 36},
    {"stream", 37},         {"synchronization", 38},
    {"external_correlation", 39}, {"nvlink", 40},
    {"memory", 45},         {"pcie", 46},
    {"openmp", 47},         {"internal_launch_api", 48},
    {"memory2", 49},        {"memory_pool", 50},
    {"graph_trace", 51},    {"jit", 52},
    {"device_graph_trace", 53}, {"mem_decompress", 54},
    {"confidential_compute_rotation", 55},
};

/* Kineto's set (MEMCPY, MEMSET, CONCURRENT_KERNEL, EXTERNAL_CORRELATION, SYNCHRONIZATION, RUNTIME, DRIVER,
 * OVERHEAD) plus CUDA_EVENT and MEMCPY2. */
static const uint32_t kDefaultKinds[] = {1, 2, 10, 39, 38, 5, 4, 17, 36, 22};

static void kinds_add(struct config* c, uint32_t k) {
  for (uint32_t i = 0; i < c->nkinds; i++)
    if (c->kinds[i] == k) return;
  if (c->nkinds < sizeof c->kinds / sizeof c->kinds[0]) c->kinds[c->nkinds++] = k;
}

static void kinds_remove(struct config* c, uint32_t k) {
  for (uint32_t i = 0; i < c->nkinds; i++)
    if (c->kinds[i] == k) {
      memmove(&c->kinds[i], &c->kinds[i + 1], (c->nkinds - i - 1) * sizeof c->kinds[0]);
      c->nkinds--;
      return;
    }
}

static void parse_kinds(struct config* c, const char* s) {
  c->nkinds = 0;
  if (!s || !*s) s = "default";
  char tok[64];
  while (*s) {
    while (*s == ',' || *s == ' ' || *s == ';') s++;
    size_t n = 0;
    while (s[n] && s[n] != ',' && s[n] != ' ' && s[n] != ';') n++;
    if (!n) break;
    int remove = 0;
    const char* t = s;
    size_t tn = n;
    if (*t == '-' || *t == '!') {
      remove = 1;
      t++;
      tn--;
    } else if (*t == '+') {
      t++;
      tn--;
    }
    if (tn >= sizeof tok) tn = sizeof tok - 1;
    for (size_t i = 0; i < tn; i++) tok[i] = (char)tolower((unsigned char)t[i]);
    tok[tn] = 0;
    s += n;
    uint32_t list[16];
    uint32_t m = 0;
    if (!strcmp(tok, "default")) {
      for (size_t i = 0; i < sizeof kDefaultKinds / sizeof kDefaultKinds[0]; i++) list[m++] = kDefaultKinds[i];
    } else if (!strcmp(tok, "nvtx")) {
      list[m++] = 12;
      list[m++] = 13;
      list[m++] = 11;
    } else if (!strcmp(tok, "kernels")) {
      list[m++] = 10;
    } else if (!strcmp(tok, "sync")) {
      list[m++] = 38;
    } else if (isdigit((unsigned char)tok[0])) {
      char* end;
      unsigned long k = strtoul(tok, &end, 10);
      if (*end == 0 && k > 0 && k < MAX_KIND) list[m++] = (uint32_t)k; /* "10abc" is no kind, not kind 10 */
    } else {
      for (size_t i = 0; i < sizeof kKindNames / sizeof kKindNames[0]; i++)
        if (!strcmp(tok, kKindNames[i].name)) list[m++] = kKindNames[i].kind;
    }
    if (!m) rt_cuda_logmsg(LOG_WARN, "RAWTRACE_ACTIVITIES: unknown activity '%s' ignored", tok);
    for (uint32_t i = 0; i < m; i++) remove ? kinds_remove(c, list[i]) : kinds_add(c, list[i]);
  }
}

/*
 * RAWTRACE_SIGNAL: only signals whose default action a program does not rely on to end or to be debugged. SIGTERM,
 * SIGINT, SIGSEGV and the like are refused: taking one for the toggle would make the program unkillable by it, or
 * loop on a fault. Returns the number, 0 when unset, -1 when refused.
 */
static int toggle_signal_ok(int n) {
  return n == SIGUSR1 || n == SIGUSR2 || n == SIGHUP || n == SIGURG || n == SIGWINCH || (n >= SIGRTMIN && n <= SIGRTMAX);
}

static int parse_signal(const char* s) {
  if (!s || !*s) return 0;
  const char* t = s;
  if (!strncasecmp(t, "SIG", 3)) t += 3;
  int n = -1;
  if (isdigit((unsigned char)*t)) {
    char* end;
    long v = strtol(t, &end, 10);
    if (*end == 0 && v > 0 && v < NSIG) n = (int)v;
  } else if (!strcasecmp(t, "USR1")) n = SIGUSR1;
  else if (!strcasecmp(t, "USR2")) n = SIGUSR2;
  else if (!strcasecmp(t, "HUP")) n = SIGHUP;
  else if (!strcasecmp(t, "URG")) n = SIGURG;
  else if (!strcasecmp(t, "WINCH")) n = SIGWINCH;
  else if (!strncasecmp(t, "RTMIN", 5)) {
    if (t[5] == 0) n = SIGRTMIN;
    else if (t[5] == '+' && isdigit((unsigned char)t[6])) {
      char* end;
      long off = strtol(t + 6, &end, 10);
      if (*end == 0 && off >= 0 && off <= SIGRTMAX - SIGRTMIN) n = SIGRTMIN + (int)off;
    }
  }
  return n > 0 && toggle_signal_ok(n) ? n : -1;
}

void rt_cuda_load_config(struct config* c) {
  memset(c, 0, sizeof *c);
  const char* out = getenv("RAWTRACE_OUTPUT");
  snprintf(c->output, sizeof c->output, "%s", out && *out ? out : "rawtrace-%h-%p.rawtrace");
  parse_kinds(c, getenv("RAWTRACE_ACTIVITIES"));
  c->buffer_size = rt_env_size("RAWTRACE_BUFFER_SIZE", 8u << 20, rt_cuda_log_level);
  if (c->buffer_size < 4096) c->buffer_size = 4096;
  if (c->buffer_size > (64u << 20)) c->buffer_size = 64u << 20;
  c->buffer_size &= ~(size_t)7;
  c->max_memory = rt_env_size("RAWTRACE_MAX_MEMORY", 256u << 20, rt_cuda_log_level);
  if (c->max_memory < c->buffer_size + CBUF_HDR) c->max_memory = c->buffer_size + CBUF_HDR;
  c->start_delay = rt_env_seconds("RAWTRACE_START_DELAY", rt_cuda_log_level);
  c->duration = rt_env_seconds("RAWTRACE_DURATION", rt_cuda_log_level);
  c->signal_no = parse_signal(getenv("RAWTRACE_SIGNAL"));
  if (c->signal_no < 0) {
    rt_cuda_logmsg(LOG_WARN, "RAWTRACE_SIGNAL=%s ignored: give USR1, USR2, HUP, URG, WINCH or RTMIN+n (a signal the program "
                   "does not need to end it)", getenv("RAWTRACE_SIGNAL"));
    c->signal_no = 0;
  }
  c->handle_signals = rt_env_flag("RAWTRACE_HANDLE_SIGNALS", 1);
  c->all_api = rt_env_flag("RAWTRACE_ALL_API", 0);
  const char* pm = getenv("RAWTRACE_PRELOAD");
  c->preload_mode = pm && !strcasecmp(pm, "lazy") ? 1 : pm && !strcasecmp(pm, "off") ? 2 : 0;
  c->exit_timeout = rt_env_timeout("RAWTRACE_EXIT_TIMEOUT", 10, rt_cuda_log_level);
}
