/*
 * Test program for the CUDA collector: plays a CUDA application against the CUPTI test double (fake_cupti.c).
 *
 *   cuda_app <scenario>
 *
 * Loading (RT_APP_LOAD): "inject" (default) dlopens RT_APP_COLLECTOR and calls InitializeInjection as the CUDA driver
 * does; "preload" expects the collector in LD_PRELOAD (its constructor starts it); "both" is preload plus a call of
 * InitializeInjection (must start once); "api" dlopens it and calls rawtrace_start(). RAWTRACE_CUPTI_LIB names the
 * fake, which the app reaches with dlopen(RTLD_NOLOAD) after the collector loaded it.
 *
 * Everything the test needs to check is printed on stdout as one JSON object per line; timestamps are strings
 * (vendor ns do not fit a double).
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace.h"
#include "open_dumps.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* CUPTI values the scenarios use (the app is built without CUDA headers). */
enum {
  K_KERNEL = 3, K_RUNTIME = 5, K_CONCURRENT_KERNEL = 10, K_MARKER = 12,
  CB_LAUNCH = 211, CB_MEMCPY = 31, CB_MEMSET = 49, CB_DEVSYNC = 165, CB_GETDEVICE = 17,
  CB_CU_LAUNCH = 307, CB_CU_MEMALLOC = 0, /* filled from the fake's names table at run time: unused */
  MARKER_START = 2, MARKER_END = 4, SYNC_CONTEXT = 4,
};

static struct {
  uint64_t (*now)(void);
  uint32_t (*next_corr)(void);
  uint32_t (*api)(int, uint32_t, uint64_t, uint64_t);
  void (*kernel)(uint32_t, const char*, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t);
  void (*memcpy_)(uint32_t, uint32_t, uint32_t, uint32_t, uint64_t, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t);
  void (*memset_)(uint32_t, uint32_t, uint64_t, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t);
  void (*sync)(uint32_t, uint32_t, uint64_t, uint64_t, uint32_t, uint32_t);
  void (*marker)(uint32_t, uint32_t, uint64_t, const char*, const char*);
  void (*stream_name)(uint32_t, uint32_t, uint32_t, const char*);
  void (*device)(uint32_t, const char*);
  void (*complete)(void);
  void (*set_dropped)(uint64_t);
  void (*hold)(int);
  int (*enabled)(uint32_t);
  uint64_t (*stat)(const char*);
  uint32_t (*record_size)(uint32_t);
  void (*kernel_running)(uint32_t, const char*, uint64_t, uint32_t, uint32_t, uint32_t);
} F;

static struct {
  int (*inject)(void);
  int (*start)(void);
  int (*stop)(void);
  int (*flush)(void);
  int (*push)(uint64_t);
  int (*pop)(void);
  int (*stats)(rawtrace_stats*, size_t);
} R;

/* The collector reads the runtime version through this symbol (exported with -rdynamic), as from libcudart. */
int cudaRuntimeGetVersion(int* v) {
  *v = 12090;
  return 0;
}

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 1, 2))) static void out(const char* fmt, ...) {
  pthread_mutex_lock(&out_mu);
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
  pthread_mutex_unlock(&out_mu);
}

static void die(const char* what) {
  fprintf(stderr, "cuda_app: %s\n", what);
  exit(70);
}

static uint32_t gettid_(void) { return (uint32_t)syscall(SYS_gettid); }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define BIND(h, field, name)                                   \
  do {                                                         \
    *(void**)(&field) = dlsym(h, name);                        \
    if (!field) die("missing symbol " name);                   \
  } while (0)

static void load(void) {
  const char* mode = getenv("RT_APP_LOAD");
  if (!mode) mode = "inject";
  void* h = RTLD_DEFAULT;
  if (!strcmp(mode, "inject") || !strcmp(mode, "api")) {
    const char* path = getenv("RT_APP_COLLECTOR");
    if (!path) die("RT_APP_COLLECTOR not set");
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) die(dlerror());
  }
  BIND(h, R.inject, "InitializeInjection");
  BIND(h, R.start, "rawtrace_start");
  BIND(h, R.stop, "rawtrace_stop");
  BIND(h, R.flush, "rawtrace_flush");
  BIND(h, R.push, "rawtrace_push_external_id");
  BIND(h, R.pop, "rawtrace_pop_external_id");
  BIND(h, R.stats, "rawtrace_get_stats");
  int rc = 0;
  if (!strcmp(mode, "inject") || !strcmp(mode, "both")) rc = R.inject();
  if (!strcmp(mode, "api")) rc = R.start();
  out("{\"ev\":\"loaded\",\"mode\":\"%s\",\"rc\":%d,\"pid\":%d,\"tid\":%u}", mode, rc, (int)getpid(), gettid_());
  int nvtx_rc = -1;
  if (getenv("RT_APP_NVTX")) { /* what NVTX does with NVTX_INJECTION64_PATH = the collector */
    int (*nvtx_inject)(const void*) = NULL;
    BIND(h, nvtx_inject, "InitializeInjectionNvtx2");
    nvtx_rc = nvtx_inject((const void*)(uintptr_t)0x5eed);
  }

  const char* fake = getenv("RAWTRACE_CUPTI_LIB");
  if (!fake) die("RAWTRACE_CUPTI_LIB not set");
  void* f = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
  out("{\"ev\":\"fake\",\"loaded_by_collector\":%s}", f ? "true" : "false");
  if (!f) f = dlopen(fake, RTLD_NOW | RTLD_LOCAL);
  if (!f) die(dlerror());
  BIND(f, F.now, "fake_cupti_now");
  BIND(f, F.next_corr, "fake_cupti_next_correlation");
  BIND(f, F.api, "fake_cupti_api");
  BIND(f, F.kernel, "fake_cupti_kernel");
  BIND(f, F.memcpy_, "fake_cupti_memcpy");
  BIND(f, F.memset_, "fake_cupti_memset");
  BIND(f, F.sync, "fake_cupti_sync");
  BIND(f, F.marker, "fake_cupti_marker");
  BIND(f, F.stream_name, "fake_cupti_stream_name");
  BIND(f, F.device, "fake_cupti_device");
  BIND(f, F.complete, "fake_cupti_complete_buffers");
  BIND(f, F.set_dropped, "fake_cupti_set_dropped");
  BIND(f, F.hold, "fake_cupti_hold");
  BIND(f, F.enabled, "fake_cupti_enabled");
  BIND(f, F.stat, "fake_cupti_stat");
  if (nvtx_rc != -1)
    out("{\"ev\":\"nvtx\",\"rc\":%d,\"cupti_calls\":%llu,\"cupti_arg\":%llu}", nvtx_rc,
        (unsigned long long)F.stat("nvtx_inject"), (unsigned long long)F.stat("nvtx_arg"));
  BIND(f, F.record_size, "fake_cupti_record_size");
  BIND(f, F.kernel_running, "fake_cupti_kernel_running");
}

static void print_stats(const char* ev) {
  rawtrace_stats s;
  memset(&s, 0, sizeof s);
  R.stats(&s, sizeof s);
  out("{\"ev\":\"%s\",\"requested\":%llu,\"refused\":%llu,\"completed\":%llu,\"written\":%llu,\"discarded\":%llu,"
      "\"activity_bytes\":%llu,\"strings\":%llu,\"dropped\":%llu,\"callback_ns\":%llu,\"writer_ns\":%llu,"
      "\"chunks\":%llu,\"state\":%d,\"error\":%d,\"fake_requests\":%llu,\"fake_refusals\":%llu,"
      "\"fake_dropped\":%llu,\"fake_records\":%llu,\"kernel_enabled\":%d}",
      ev, (unsigned long long)s.buffers_requested, (unsigned long long)s.buffers_refused,
      (unsigned long long)s.buffers_completed, (unsigned long long)s.buffers_written,
      (unsigned long long)s.buffers_discarded, (unsigned long long)s.activity_bytes,
      (unsigned long long)s.strings_written, (unsigned long long)s.records_dropped,
      (unsigned long long)s.callback_ns, (unsigned long long)s.writer_ns, (unsigned long long)s.chunks_written,
      s.state, s.error, (unsigned long long)F.stat("requests"), (unsigned long long)F.stat("refusals"),
      (unsigned long long)F.stat("dropped_total"), (unsigned long long)F.stat("records"),
      F.enabled(K_CONCURRENT_KERNEL));
}

/* The end of most scenarios: the statistics, then "done". Returns the exit status (0). */
static int finish(void) {
  print_stats("stats");
  out("{\"ev\":\"done\"}");
  return 0;
}

static void flush_or_die(void) {
  if (R.flush() != 0) die("rawtrace_flush failed");
}

/* Waits (at most 10 s) until the kernel kind is enabled (want=1) or disabled (want=0) in the fake. */
static int wait_enabled(int want) {
  for (int i = 0; i < 10000; i++) {
    if (!!F.enabled(K_CONCURRENT_KERNEL) == want) return 1;
    sleep_ms(1);
  }
  return 0;
}

/* One cudaLaunchKernel: runtime record [t, t+5 µs], kernel [t+10 µs, t+10 µs+dur]. Prints both when `show`. */
static uint32_t launch(const char* name, uint64_t t, uint64_t dur, uint32_t stream, int show) {
  uint32_t c = F.api(2, CB_LAUNCH, t, t + 5000);
  F.kernel(c, name, t + 10000, t + 10000 + dur, 0, 1, stream);
  if (show) {
    out("{\"ev\":\"runtime\",\"name\":\"cudaLaunchKernel\",\"corr\":%u,\"start\":\"%llu\",\"end\":\"%llu\",\"tid\":%u}",
        c, (unsigned long long)t, (unsigned long long)(t + 5000), gettid_());
    out("{\"ev\":\"kernel\",\"name\":\"%s\",\"corr\":%u,\"start\":\"%llu\",\"end\":\"%llu\",\"stream\":%u}", name, c,
        (unsigned long long)(t + 10000), (unsigned long long)(t + 10000 + dur), stream);
  }
  return c;
}

/* ------------------------------------------------------------------------------------------------------------------ */

/* exit_busy: threads that launch without end, and exit() from another thread while they do. */
static void* busy_launcher(void* arg) {
  uint64_t base = F.now() + (uint64_t)(uintptr_t)arg * 1000000000000ull;
  for (uint64_t n = 0;; n++) launch("busy_kernel", base + n * 10000, 2000, 3 + (uint32_t)(uintptr_t)arg, 0);
  return NULL;
}
static void* exit_from_thread(void* arg) {
  (void)arg;
  sleep_ms(300);
  print_stats("exiting");
  exit(0);
}
static int scenario_exit_busy(void) {
  pthread_t th[4], ex;
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, busy_launcher, (void*)(intptr_t)i);
  pthread_create(&ex, NULL, exit_from_thread, NULL);
  for (;;) pause();
  return 0;
}

static char g_mutable[64] = "mutable_kernel_v1";

static int scenario_basic(void) {
  static const char* names[3] = {"kernelA", "kernelB",
                                 "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"};
  uint64_t base = F.now();
  out("{\"ev\":\"base\",\"ts\":\"%llu\"}", (unsigned long long)base);
  uint64_t t = base + 1000000;
  for (int i = 0; i < 6; i++, t += 100000) launch(names[i % 3], t, 20000 + (uint64_t)i * 1000, 7, 1);

  /* external correlation (PyTorch op id) */
  if (R.push(4242) != 0) die("rawtrace_push_external_id failed");
  uint32_t c = launch("kernel_with_external_id", t, 3000, 7, 1);
  R.pop();
  out("{\"ev\":\"external\",\"corr\":%u,\"id\":4242}", c);
  t += 100000;

  /* driver-API launch (Triton) */
  c = F.api(1, CB_CU_LAUNCH, t, t + 4000);
  F.kernel(c, "triton_poi_fused_add_0", t + 6000, t + 9000, 0, 1, 9);
  out("{\"ev\":\"driver\",\"name\":\"cuLaunchKernel\",\"corr\":%u,\"start\":\"%llu\",\"end\":\"%llu\"}", c,
      (unsigned long long)t, (unsigned long long)(t + 4000));
  out("{\"ev\":\"kernel\",\"name\":\"triton_poi_fused_add_0\",\"corr\":%u,\"start\":\"%llu\",\"end\":\"%llu\","
      "\"stream\":9}", c, (unsigned long long)(t + 6000), (unsigned long long)(t + 9000));
  t += 100000;

  /* memcpy HtoD 1 MiB pageable → device, memset, device sync, a hidden cudaGetDevice */
  c = F.api(2, CB_MEMCPY, t, t + 50000);
  F.memcpy_(c, 1, 1, 3, 1 << 20, t + 2000, t + 42000, 0, 1, 7);
  out("{\"ev\":\"memcpy\",\"corr\":%u,\"start\":\"%llu\",\"end\":\"%llu\",\"bytes\":%d}", c,
      (unsigned long long)(t + 2000), (unsigned long long)(t + 42000), 1 << 20);
  t += 100000;
  c = F.api(2, CB_MEMSET, t, t + 3000);
  F.memset_(c, 0, 4096, t + 1000, t + 2500, 0, 1, 7);
  out("{\"ev\":\"memset\",\"corr\":%u,\"start\":\"%llu\",\"end\":\"%llu\"}", c, (unsigned long long)(t + 1000),
      (unsigned long long)(t + 2500));
  t += 100000;
  c = F.api(2, CB_DEVSYNC, t, t + 30000);
  F.sync(c, SYNC_CONTEXT, t + 100, t + 29000, 1, 0xffffffffu);
  out("{\"ev\":\"sync\",\"corr\":%u,\"start\":\"%llu\",\"end\":\"%llu\"}", c, (unsigned long long)(t + 100),
      (unsigned long long)(t + 29000));
  t += 100000;
  F.api(2, CB_GETDEVICE, t, t + 100); /* the collector turns this call's records off, as Kineto does */
  t += 1000;

  /* NVTX range and a stream name (recorded when RAWTRACE_ACTIVITIES includes nvtx) */
  F.stream_name(0, 1, 7, "compute-stream");
  F.marker(MARKER_START, 1, t, "step 1", "train");
  F.marker(MARKER_END, 1, t + 500000, NULL, NULL);
  out("{\"ev\":\"range\",\"name\":\"step 1\",\"start\":\"%llu\",\"end\":\"%llu\"}", (unsigned long long)t,
      (unsigned long long)(t + 500000));
  t += 600000;

  /* the same name pointer with other bytes later: both names must come out */
  launch(g_mutable, t, 1000, 7, 1);
  t += 100000;
  flush_or_die();
  snprintf(g_mutable, sizeof g_mutable, "mutable_kernel_v2");
  launch(g_mutable, t, 1000, 7, 1);
  t += 100000;

  /* a forked child exits through exit(): it must leave the parent's file alone */
  pid_t child = fork();
  if (child == 0) exit(0);
  if (child > 0) waitpid(child, NULL, 0);
  launch(names[0], t, 2000, 7, 1);
  t += 100000;

  F.set_dropped(5); /* CUPTI reports 5 lost records */
  flush_or_die();
  print_stats("stats");
  out("{\"ev\":\"done\",\"tid\":%u}", gettid_());
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------------ */

#define THREADS 8
#define LAUNCHES 10000

static const char* thread_kernel_names[4] = {"gemm_f16", "softmax", "layernorm", "relu"};
static uint64_t g_base;
static pthread_barrier_t g_flushed;

static void* launcher(void* arg) {
  int i = (int)(intptr_t)arg;
  char tname[16];
  snprintf(tname, sizeof tname, "launcher-%d", i);
  pthread_setname_np(pthread_self(), tname);
  out("{\"ev\":\"thread\",\"index\":%d,\"tid\":%u,\"name\":\"%s\"}", i, gettid_(), tname);
  for (int j = 0; j < LAUNCHES; j++) {
    uint64_t t = g_base + ((uint64_t)i * LAUNCHES + (uint64_t)j) * 20000;
    launch(thread_kernel_names[(i + j) % 4], t, 1000, 100 + (uint32_t)i, 0);
  }
  /* framework threads live long; the collector reads thread names from /proc while they exist */
  pthread_barrier_wait(&g_flushed);
  return NULL;
}

static int scenario_threads(void) {
  g_base = F.now();
  pthread_t th[THREADS];
  pthread_barrier_init(&g_flushed, NULL, THREADS + 1);
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, launcher, (void*)(intptr_t)i);
  /* wait until every launch is recorded, then flush while the threads are alive */
  while (F.stat("records") < 2 * THREADS * LAUNCHES) sleep_ms(1);
  flush_or_die();
  pthread_barrier_wait(&g_flushed);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  print_stats("stats");
  out("{\"ev\":\"done\",\"launches\":%d}", THREADS * LAUNCHES);
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------------ */

static int scenario_exhaust(void) {
  /* CUPTI keeps the full buffers (hold) while records keep coming: 10 buffers' worth against a cap of 4 */
  uint32_t rs = F.record_size(K_CONCURRENT_KERNEL);
  const char* bs = getenv("RAWTRACE_BUFFER_SIZE");
  uint64_t buf = bs ? strtoull(bs, NULL, 10) * (strchr(bs, 'K') || strchr(bs, 'k') ? 1024 : 1) : 65536;
  uint64_t per = buf / rs;
  uint64_t base = F.now();
  F.hold(1);
  for (uint64_t i = 0; i < 10 * per; i++) {
    uint32_t c = F.next_corr();
    F.kernel(c, "filler", base + i * 1000, base + i * 1000 + 500, 0, 1, 7);
  }
  out("{\"ev\":\"emitted\",\"records\":%llu,\"per_buffer\":%llu,\"record_size\":%u}",
      (unsigned long long)(10 * per), (unsigned long long)per, rs);
  F.hold(0);
  F.complete();
  flush_or_die();
  return finish();
}

/* ------------------------------------------------------------------------------------------------------------------ */

static void emit_group(const char* prefix, int n, uint64_t* t) {
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "%s_%d", prefix, i);
    /* names must stay valid until the collector copies them: keep them in a static pool */
    static char pool[64][32];
    static int used;
    char* p = pool[used++ % 64];
    memcpy(p, name, sizeof name);
    launch(p, *t, 1000, 7, 0);
    *t += 50000;
  }
}

static int scenario_signal(void) {
  /* the toggle signal: SIGUSR2, or SIGHUP (CUDA_APP_TOGGLE_HUP), which the collector also finishes its file on */
  int sig = getenv("CUDA_APP_TOGGLE_HUP") ? SIGHUP : SIGUSR2;
  uint64_t t = F.now();
  emit_group("before", 3, &t);
  out("{\"ev\":\"enabled_at_start\",\"on\":%d}", F.enabled(K_CONCURRENT_KERNEL));
  raise(sig);
  if (!wait_enabled(1)) die("SIGUSR2 did not start collection");
  emit_group("between", 3, &t);
  raise(sig);
  if (!wait_enabled(0)) die("second SIGUSR2 did not stop collection");
  emit_group("after", 3, &t);
  /* a second period: the per-call trims (cudaGetDevice off) must hold again after the kinds are re-enabled */
  raise(sig);
  if (!wait_enabled(1)) die("third SIGUSR2 did not start collection");
  F.api(2, CB_GETDEVICE, t, t + 100);
  emit_group("again", 1, &t);
  return finish();
}

/* The program's own SIGUSR2 handler (installed before the collector loads) counts what reaches it. */
static volatile sig_atomic_t g_usr2_seen;
static void on_usr2(int sig) {
  (void)sig;
  g_usr2_seen++;
}

/* RAWTRACE_SIGNAL=USR2 in a program that handles USR2 itself: each signal toggles collection and still reaches it. */
static int scenario_signal_chain(void) {
  uint64_t t = F.now();
  raise(SIGUSR2);
  if (!wait_enabled(1)) die("SIGUSR2 did not start collection");
  emit_group("between", 2, &t);
  raise(SIGUSR2);
  if (!wait_enabled(0)) die("second SIGUSR2 did not stop collection");
  out("{\"ev\":\"usr2_seen\",\"n\":%d}", (int)g_usr2_seen);
  return finish();
}

static int scenario_window(double t_load) {
  uint64_t t = F.now();
  emit_group("before", 3, &t);
  if (!wait_enabled(1)) die("collection never started");
  double t_on = now_s();
  emit_group("during", 3, &t);
  if (!wait_enabled(0)) die("collection never stopped");
  double t_off = now_s();
  emit_group("after", 3, &t);
  out("{\"ev\":\"window\",\"start_after_s\":%.3f,\"duration_s\":%.3f}", t_on - t_load, t_off - t_on);
  return finish();
}

/* ------------------------------------------------------------------------------------------------------------------ */

static volatile sig_atomic_t g_term;
static void on_term(int sig) {
  (void)sig;
  g_term = 1;
}

static int scenario_batches(const char* sc) {
  uint64_t base = F.now();
  uint64_t n = 0;
  int busy = !strcmp(sc, "kill9");
  if (!strcmp(sc, "sigterm_chain")) signal(SIGTERM, on_term);
  for (int b = 0; busy || b < 3; b++) {
    for (int i = 0; i < 1000; i++, n++) launch("batch_kernel", base + n * 10000, 2000, 7, 0);
    if (busy) flush_or_die();
    out("{\"ev\":\"batch\",\"batch\":%d,\"kernels\":%llu}", b, (unsigned long long)n);
    if (busy && b > 1000) break;
  }
  out("{\"ev\":\"ready\",\"kernels\":%llu}", (unsigned long long)n);
  if (!strcmp(sc, "sigterm_chain")) {
    while (!g_term) sleep_ms(5);
    for (int i = 0; i < 10; i++, n++) launch("batch_kernel", base + n * 10000, 2000, 7, 0);
    out("{\"ev\":\"after_term\",\"kernels\":%llu}", (unsigned long long)n);
    return 0; /* normal exit: atexit writes END */
  }
  for (;;) pause();
}

/* The program handles SIGINT itself (installed before the collector): each SIGINT asks the collector for a flush and
 * waits for it. With the output stalled, a wait that found the writer stuck is not repeated in full by the next. */
static int scenario_sigint_stalled(void) {
  uint64_t t = F.now();
  for (int i = 0; i < 20000; i++) launch("stalled_kernel", t + (uint64_t)i * 10000, 1000, 7, 0);
  for (int k = 0; k < 3; k++) {
    double t0 = now_s();
    g_term = 0; /* "handled" says whether the program's handler ran for this signal, not for an earlier one */
    raise(SIGINT);
    out("{\"ev\":\"sigint\",\"i\":%d,\"ms\":%.0f,\"handled\":%d}", k, (now_s() - t0) * 1000, (int)g_term);
  }
  return finish();
}

static int scenario_write_limit(void) {
  uint64_t base = F.now();
  uint64_t n = 0;
  for (int b = 0; b < 20; b++) {
    for (int i = 0; i < 1000; i++, n++) launch("limit_kernel", base + n * 10000, 2000, 7, 0);
    R.flush();
  }
  out("{\"ev\":\"emitted\",\"kernels\":%llu}", (unsigned long long)n);
  return finish();
}

static int scenario_bench(void) {
  /* 24 full buffers of kernel records (64 distinct names); CUPTI keeps them until all exist, then its worker
   * hands them over back to back, so the writer's time per buffer is measured without the emitting thread
   * competing for the CPU */
  static char names[64][48];
  for (int i = 0; i < 64; i++) snprintf(names[i], sizeof names[i], "_ZN5bench6kernelILi%dEEEvPfS1_i", i);
  uint32_t rs = F.record_size(K_CONCURRENT_KERNEL);
  uint64_t per = (8u << 20) / rs;
  uint64_t total = 24 * per;
  uint64_t base = F.now();
  double t0 = now_s();
  F.hold(1);
  for (uint64_t i = 0; i < total; i++) {
    uint32_t c = F.next_corr();
    F.kernel(c, names[i % 64], base + i * 100, base + i * 100 + 50, 0, 1, 7);
  }
  F.hold(0);
  double t1 = now_s();
  flush_or_die();
  double t2 = now_s();
  out("{\"ev\":\"bench\",\"records\":%llu,\"record_size\":%u,\"emit_s\":%.3f,\"drain_s\":%.3f}",
      (unsigned long long)total, rs, t1 - t0, t2 - t1);
  return finish();
}

/* Exits while a kernel still runs: the collector's exit flush is forced, so CUPTI hands the kernel over with end 0
 * (CUPTI_TIMESTAMP_UNKNOWN). A plain rawtrace_flush before the exit must not deliver it. */
static int scenario_unfinished(void) {
  uint64_t base = F.now();
  out("{\"ev\":\"base\",\"ts\":\"%llu\"}", (unsigned long long)base);
  uint64_t t = base + 1000000;
  for (int i = 0; i < 3; i++, t += 100000) launch("finished_kernel", t, 20000, 7, 1);
  uint32_t c = F.api(2, CB_LAUNCH, t, t + 5000);
  F.kernel_running(c, "unfinished_kernel", t + 10000, 0, 1, 7);
  out("{\"ev\":\"running\",\"name\":\"unfinished_kernel\",\"corr\":%u,\"start\":\"%llu\",\"stream\":7}", c,
      (unsigned long long)(t + 10000));
  flush_or_die();
  return finish();
}

/*
 * A sandbox that refuses process_vm_readv (gVisor answers ENOSYS, a seccomp profile EPERM): a seccomp filter makes
 * it fail with EPERM for the rest of the process, installed before the collector loads.
 */
static void deny_vm_readv(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) die("seccomp");
}

/*
 * Names whose memory is gone by the time the buffer is written (a module unloaded after its launch): one kernel
 * named from a page unmapped before the flush, one from a string that runs into an unmapped page, then a kernel
 * with an ordinary name. The collector must not fault; the ordinary name is recorded.
 */
static int scenario_stale_name(void) {
  uint64_t t = F.now();
  char* pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) die("mmap");
  strcpy(pages, "kernel_from_unloaded_module");
  memset(pages + 4096, 'x', 4096); /* no NUL on this page: the string runs to its end */
  launch(pages, t, 1000, 7, 0);
  launch(pages + 4096 + 4000, t + 10000, 1000, 7, 0);
  munmap(pages, 4096);               /* the first name's page is gone */
  munmap(pages + 4096, 4096);        /* and the second's */
  launch("kernel_still_named", t + 20000, 1000, 7, 0);
  flush_or_die();
  return finish();
}

/* A child forked without exec (a DataLoader worker): it must not hold the parent's dump open. */
static int scenario_fork_child(void) {
  uint64_t t = F.now();
  for (int i = 0; i < 10; i++) launch("before_fork", t + (uint64_t)i * 10000, 1000, 7, 0);
  out("{\"ev\":\"parent_dumps\",\"n\":%d}", open_dumps());
  pid_t c = fork();
  if (c < 0) die("fork");
  if (c == 0) {
    out("{\"ev\":\"child_dumps\",\"n\":%d}", open_dumps());
    _exit(0);
  }
  int st;
  if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) die("child");
  for (int i = 0; i < 10; i++) launch("after_fork", t + (uint64_t)(i + 10) * 10000, 1000, 7, 0);
  flush_or_die();
  return finish();
}

static int run_scenario(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: cuda_app <basic|threads|exhaust|signal|window|kill9|sigterm|sigterm_chain|"
                    "write_limit|write_limit_start|bench|unfinished|plain>\n");
    return 64;
  }
  const char* sc = argv[1];
  if (!strcmp(sc, "write_limit")) {
    /* the output may not grow past 256 KiB: writes beyond fail with EFBIG (SIGXFSZ ignored, as a daemon would) */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {256 * 1024, 256 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) die("setrlimit");
  }
  if (!strcmp(sc, "write_limit_start")) {
    /* no byte of a file may be written and SIGXFSZ keeps its default action (it would end the process): the
     * collector writes its first chunks on this thread, inside cuInit */
    struct rlimit rl = {0, 0};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) die("setrlimit");
  }
  /* before the collector: it chains to this (sigint_term: the program handles SIGINT, as Python does; SIGTERM keeps its
   * default action) */
  if (!strcmp(sc, "sigint_stalled") || !strcmp(sc, "sigint_term")) signal(SIGINT, on_term);
  if (getenv("CUDA_APP_DENY_VM_READV")) deny_vm_readv();
  if (!strcmp(sc, "signal_chain")) signal(SIGUSR2, on_usr2); /* before the collector: it must chain to this */
  double t_load = now_s();
  load();
  if (!strcmp(sc, "stale_name")) return scenario_stale_name();
  if (!strcmp(sc, "basic")) return scenario_basic();
  if (!strcmp(sc, "threads")) return scenario_threads();
  if (!strcmp(sc, "exhaust")) return scenario_exhaust();
  if (!strcmp(sc, "signal")) return scenario_signal();
  if (!strcmp(sc, "fork_child")) return scenario_fork_child();
  if (!strcmp(sc, "signal_chain")) return scenario_signal_chain();
  if (!strcmp(sc, "window")) return scenario_window(t_load);
  if (!strcmp(sc, "kill9") || !strcmp(sc, "sigterm") || !strcmp(sc, "sigterm_chain")) return scenario_batches(sc);
  if (!strcmp(sc, "sigint_term")) return scenario_batches("sigterm");
  if (!strcmp(sc, "write_limit")) return scenario_write_limit();
  if (!strcmp(sc, "bench")) return scenario_bench();
  if (!strcmp(sc, "unfinished")) return scenario_unfinished();
  if (!strcmp(sc, "exit_busy")) return scenario_exit_busy();
  if (!strcmp(sc, "sigint_stalled")) return scenario_sigint_stalled();
  if (!strcmp(sc, "drops")) {
    /* 50 buffers, CUPTI losing 3 records at each */
    uint64_t t = F.now();
    for (int b = 0; b < 50; b++) {
      for (int i = 0; i < 10; i++) launch("drop_kernel", t + (uint64_t)(b * 10 + i) * 10000, 1000, 7, 0);
      F.set_dropped(3);
      flush_or_die();
    }
    return finish();
  }
  if (!strcmp(sc, "many")) {
    /* 20000 launches (megabytes of records: more than a pipe holds), no flush, a normal exit */
    uint64_t t = F.now();
    for (int i = 0; i < 20000; i++) launch("many_kernel", t + (uint64_t)i * 10000, 1000, 7, 0);
    return finish();
  }
  if (!strcmp(sc, "plain") || !strcmp(sc, "write_limit_start")) {
    /* a short run whatever the collector's state (write errors, CUPTI errors): must exit 0 */
    uint64_t t = F.now();
    for (int i = 0; i < 100; i++) launch("plain_kernel", t + (uint64_t)i * 10000, 1000, 7, 0);
    return finish();
  }
  fprintf(stderr, "cuda_app: unknown scenario %s\n", sc);
  return 64;
}

/*
 * main returns here: `main_end` says when (CLOCK_REALTIME ms, the clock a test's Date.now() reads), so a test times
 * the exit handlers alone, not the program's start and run as well.
 */
int main(int argc, char** argv) {
  int rc = run_scenario(argc, argv);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  out("{\"ev\":\"main_end\",\"wall_ms\":%lld}", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
  return rc;
}
