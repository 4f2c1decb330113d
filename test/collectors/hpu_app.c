/*
 * Test program for test/collectors/hpu_collector.test.ts: a Synapse program linked against libSynapse.so (the test
 * double, test/collectors/fake_synapse.c), run with LD_PRELOAD=librawtrace_hpu.so. It initializes Synapse, acquires
 * devices, "runs" RT_APP_STEPS steps on each (fake_synapse_run, retried while the profiler is between a stop and its
 * restart), releases them and destroys Synapse. Prints JSON lines: {"collector":0|1}, then {"events":N,"pulls":N,
 * "env":"...","allocs":N} at the end.
 *
 *   hpu_app run       device 0 (synDeviceAcquire)
 *   hpu_app multi     devices 0, 1, 2 by synDeviceAcquire, ...ByDeviceType(Gaudi), ...ByModuleId(0); released 1, 0, 2
 *   hpu_app periodic  device 0, RT_APP_PULLS batches of steps, each waiting until the collector pulled once more
 *   hpu_app kill      as periodic, then more steps and SIGKILL (never released)
 *   hpu_app exit      device 0, steps, exit(0) without release or synDestroy
 *   hpu_app multi-exit devices 0, 1, 2 as in multi, steps on each, exit(0) without release or synDestroy
 *   hpu_app flush     device 0, steps, rawtrace_hpu_flush (prints {"flushed":rc}), steps, release. With
 *                     RT_APP_RAISE_IN_WAIT=1 the flush's wait raises SIGTERM with the collector's done lock held (below),
 *                     having created the file RT_APP_GO (the output's reader starts)
 *   hpu_app stall     device 0, steps, release, creates the file RT_APP_GO (the output's reader starts), then lives on
 *                     RT_APP_STALL_MS
 *   hpu_app term      device 0, steps, SIGTERM to itself (default disposition)
 *   hpu_app write-error device 0 with periodic pulls into a file too small for the first trace: whether the profiler
 *                     still records after that write error (prints {"recording_after":0|1,"recorded_after":N})
 *   hpu_app stall-pull device 0 with periodic pulls into an output that stops taking bytes: steps until the double
 *                     handed out more than RT_APP_PIPE_BYTES (the collector's thread is then stuck writing), then
 *                     RT_APP_STEPS steps tried once each (prints {"restarted":0|1,"stalled_steps":N,"refused":N}),
 *                     then creates the file RT_APP_GO (the output's reader starts), release
 *
 * Built twice more as a framework would load it (-DRT_APP_LAUNCHER): libhpu_app.so is this program as a library
 * linked to libSynapse.so, and hpu_launch dlopens it with RTLD_LOCAL and calls its main, as Python loads the PyTorch
 * bridge: libSynapse then lives outside the global symbol scope.
 */
#define _GNU_SOURCE
#include "synapse_abi.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(RT_APP_LAUNCHER)
int main(int argc, char** argv) {
  char path[PATH_MAX];
  const char* slash = strrchr(argv[0], '/');
  snprintf(path, sizeof path, "%.*slibhpu_app.so", slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  int (*app)(int, char**) = h ? (int (*)(int, char**))(uintptr_t)dlsym(h, "rt_app_main") : NULL;
  if (!app) {
    fprintf(stderr, "hpu_launch: %s: %s\n", path, dlerror());
    return 5;
  }
  return app(argc, argv);
}
#else
rt_syn_status synInitialize(void);
rt_syn_status synDestroy(void);
rt_syn_status synDeviceAcquire(rt_syn_device_id* id, const char* bus);
rt_syn_status synDeviceAcquireByDeviceType(rt_syn_device_id* id, int32_t type);
rt_syn_status synDeviceAcquireByModuleId(rt_syn_device_id* id, rt_syn_module_id module);
rt_syn_status synDeviceRelease(rt_syn_device_id id);
int fake_synapse_run(uint32_t dev, uint32_t step);
uint64_t fake_synapse_pulls(void);
uint64_t fake_synapse_bytes(void);
int fake_synapse_recording(uint32_t dev);
uint64_t fake_synapse_events(void);
const char* fake_synapse_profile_env(void);
int fake_synapse_device_allocs(void);
int fake_synapse_misuse(void);

/* Armed just before rawtrace_hpu_flush: the first pthread_cond_timedwait of the main thread after it is the collector's
 * wait for that flush (rt_queue_wait), made with the queue's done lock held. This program's definition comes first in
 * the symbol lookup, so the collector's call lands here: it raises SIGTERM (default disposition) before waiting, and
 * the collector's handler then waits for the exit flush on a thread that holds that lock, as when the signal lands
 * between the lock and the wait. */
static volatile int g_raise_in_wait;

/* Creates the file RT_APP_GO when it is set: a test's FIFO reader (test/helpers/fifo_reader.ts goFile) starts then. */
static void go(void) {
  const char* path = getenv("RT_APP_GO");
  FILE* f = path ? fopen(path, "w") : NULL;
  if (f) fclose(f);
}

int pthread_cond_timedwait(pthread_cond_t* restrict cv, pthread_mutex_t* restrict mu, const struct timespec* restrict at) {
  static int (*real)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
  if (!real) *(void**)(&real) = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
  if (g_raise_in_wait && gettid() == getpid()) {
    g_raise_in_wait = 0;
    printf("{\"raised_in_wait\":1}\n");
    fflush(stdout);
    go(); /* the collector's thread, stuck writing the flush's trace until now, can finish it: it needs this lock next */
    raise(SIGTERM);
  }
  return real(cv, mu, at);
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* One step; while the profiler is between a pull's stop and restart the double refuses it: run it again later. */
static void step(uint32_t dev, uint32_t i) {
  for (int tries = 0; tries < 20000; tries++) {
    int rc = fake_synapse_run(dev, i);
    if (rc >= 0) return;
    if (rc == -2) break;
    nap_ms(1);
  }
  fprintf(stderr, "hpu_app: device %u: step %u not run\n", dev, i);
  exit(3);
}

static void steps(uint32_t dev, uint32_t from, uint32_t n) {
  for (uint32_t i = from; i < from + n; i++) step(dev, i);
}

/* Waits until the double handed out more than `pulls` buffers (the collector's thread pulled). */
static void wait_pulls(uint64_t pulls) {
  for (int i = 0; i < 30000 && fake_synapse_pulls() <= pulls; i++) nap_ms(1);
  if (fake_synapse_pulls() <= pulls) {
    fprintf(stderr, "hpu_app: no pull after %llu\n", (unsigned long long)pulls);
    exit(4);
  }
}

static void report(void) {
  printf("{\"events\":%llu,\"pulls\":%llu,\"env\":\"%s\",\"allocs\":%d,\"misuse\":%d}\n",
         (unsigned long long)fake_synapse_events(), (unsigned long long)fake_synapse_pulls(), fake_synapse_profile_env(),
         fake_synapse_device_allocs(), fake_synapse_misuse());
  fflush(stdout);
}

static void check(rt_syn_status s, const char* what) {
  if (s == RT_SYN_SUCCESS) return;
  fprintf(stderr, "hpu_app: %s answered %d\n", what, s);
  exit(2);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "run";
  int (*flush)(void) = (int (*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "rawtrace_hpu_flush");
  printf("{\"pid\":%d,\"collector\":%d}\n", (int)getpid(), flush != NULL);
  fflush(stdout);
  uint32_t n = (uint32_t)atoi(getenv("RT_APP_STEPS") ? getenv("RT_APP_STEPS") : "10");
  uint32_t batches = (uint32_t)atoi(getenv("RT_APP_PULLS") ? getenv("RT_APP_PULLS") : "3");
  check(synInitialize(), "synInitialize");
  rt_syn_device_id dev = 99;
  check(synDeviceAcquire(&dev, NULL), "synDeviceAcquire");

  if (!strcmp(mode, "multi") || !strcmp(mode, "multi-exit")) {
    rt_syn_device_id d1 = 99, d2 = 99;
    check(synDeviceAcquireByDeviceType(&d1, RT_SYN_DEVICE_GAUDI), "synDeviceAcquireByDeviceType");
    check(synDeviceAcquireByModuleId(&d2, 0), "synDeviceAcquireByModuleId");
    for (uint32_t i = 0; i < n; i++) {
      step(dev, i);
      step(d1, i);
      step(d2, i);
    }
    if (!strcmp(mode, "multi-exit")) {
      report();
      exit(0);
    }
    check(synDeviceRelease(d1), "synDeviceRelease");
    check(synDeviceRelease(dev), "synDeviceRelease");
    check(synDeviceRelease(d2), "synDeviceRelease");
  } else if (!strcmp(mode, "periodic") || !strcmp(mode, "kill")) {
    for (uint32_t b = 0; b < batches; b++) {
      uint64_t before = fake_synapse_pulls();
      steps(dev, b * n, n);
      wait_pulls(before);
    }
    if (!strcmp(mode, "kill")) {
      steps(dev, batches * n, n); /* recorded by the double, never pulled: lost with the process */
      report();
      raise(SIGKILL);
    }
    steps(dev, batches * n, n);
    check(synDeviceRelease(dev), "synDeviceRelease");
  } else if (!strcmp(mode, "exit")) {
    steps(dev, 0, n);
    report();
    exit(0);
  } else if (!strcmp(mode, "flush")) {
    steps(dev, 0, n);
    g_raise_in_wait = getenv("RT_APP_RAISE_IN_WAIT") != NULL;
    printf("{\"flushed\":%d}\n", flush ? flush() : -2);
    steps(dev, n, n);
    check(synDeviceRelease(dev), "synDeviceRelease");
  } else if (!strcmp(mode, "stall")) {
    /* The release goes ahead while the collector's thread is stuck on its output (a FIFO read late); the program
     * lives on long enough (RT_APP_STALL_MS) for that thread to get unstuck and reach the release. */
    steps(dev, 0, n);
    check(synDeviceRelease(dev), "synDeviceRelease");
    go(); /* released while the thread was stuck: now it may get going */
    nap_ms(atoi(getenv("RT_APP_STALL_MS") ? getenv("RT_APP_STALL_MS") : "3000"));
  } else if (!strcmp(mode, "stall-pull")) {
    /* The output is a FIFO of RT_APP_PIPE_BYTES that nobody reads until RT_APP_GO exists. Once the double handed out
     * more trace bytes than that, the collector's thread cannot finish writing its last pull (nothing was read): no
     * pull can come until RT_APP_GO. Steps tried now are recorded only if that pull restarted the profiler before
     * its writes. */
    steps(dev, 0, n);
    uint64_t cap = strtoull(getenv("RT_APP_PIPE_BYTES") ? getenv("RT_APP_PIPE_BYTES") : "16384", NULL, 10);
    for (int i = 0; i < 30000 && fake_synapse_bytes() <= cap; i++) nap_ms(1);
    if (fake_synapse_bytes() <= cap) {
      fprintf(stderr, "hpu_app: %llu trace bytes handed out, not more than %llu\n",
              (unsigned long long)fake_synapse_bytes(), (unsigned long long)cap);
      exit(4);
    }
    /* the double counts a buffer when it fills it, just before the collector restarts the profiler */
    for (int i = 0; i < 30000 && !fake_synapse_recording(dev); i++) nap_ms(1);
    int restarted = fake_synapse_recording(dev);
    uint32_t recorded = 0, refused = 0;
    for (uint32_t i = n; i < 2 * n; i++) {
      if (fake_synapse_run(dev, i) > 0) recorded++;
      else refused++;
    }
    printf("{\"restarted\":%d,\"stalled_steps\":%u,\"refused\":%u}\n", restarted, recorded, refused);
    fflush(stdout);
    go();
    check(synDeviceRelease(dev), "synDeviceRelease");
  } else if (!strcmp(mode, "write-error")) {
    /* Periodic pulls into a file whose size limit the first trace exceeds (EFBIG): once that write failed, the
     * profiler should not record on (prints {"recording_after":0|1,"recorded_after":N,"waited_ms":N}: whether it still
     * records up to 5 s after the first pull, and how many of RT_APP_STEPS steps tried once each it recorded). */
    steps(dev, 0, n);
    wait_pulls(0);
    int on = 1, waited = 0;
    for (; waited < 5000 && (on = fake_synapse_recording(dev)) != 0; waited++) nap_ms(1);
    uint32_t recorded = 0;
    for (uint32_t i = n; i < 2 * n; i++)
      if (fake_synapse_run(dev, i) > 0) recorded++;
    printf("{\"recording_after\":%d,\"recorded_after\":%u,\"waited_ms\":%d}\n", on, recorded, waited);
    fflush(stdout);
    check(synDeviceRelease(dev), "synDeviceRelease");
  } else if (!strcmp(mode, "term")) {
    steps(dev, 0, n);
    report();
    raise(SIGTERM);
  } else {
    steps(dev, 0, n);
    check(synDeviceRelease(dev), "synDeviceRelease");
  }
  check(synDestroy(), "synDestroy");
  report();
  return 0;
}
#endif
