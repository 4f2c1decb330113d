/*
 * Test program for the ROCm collector (test/collectors/rocm_collector.test.ts). It plays a HIP program on top of the
 * rocprofiler-sdk test double: loads the fake SDK the way rocprofiler-register does (RTLD_GLOBAL), lets it register
 * the tool named by ROCP_TOOL_LIBRARIES, then runs RT_APP_STEPS (default 12) steps, each inside a framework op whose
 * external id (1000 + step) it pushes through the collector's API. JSON lines on stdout say what happened; the fake
 * adds one line per record it delivered.
 *
 * Scenarios (argv[1]):
 *   basic  run the steps and return from main (the exit flush writes END)
 *   kill   run the steps, flush, print "flushed", then wait to be killed (SIGKILL: the file must be a valid prefix)
 *   term   as kill, but the test sends SIGTERM (the collector's handler must still write END)
 *   wait   run the steps, print "waiting" and wait for the test's signals without flushing (the exit flush does it)
 *   pause  as basic, with rawtrace_rocm_stop() before step 4 and rawtrace_rocm_start() after step 5
 *   stopped  run the steps, flush, then wait (at most 5 s) until the SDK's context is stopped and say so
 *
 * Environment: RT_APP_SDK (path of the fake librocprofiler-sdk.so), RT_APP_SDK_LOCAL (open it RTLD_LOCAL),
 * RT_APP_COLLECTOR (path of librawtrace_rocm.so, for its API), RT_APP_STEPS, RT_APP_RENAME (a name the main thread
 * takes after the tool's initialization and before its first HIP call, as PyTorch's `pt_main_thread`).
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_rocm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* need(void* h, const char* name) {
  void* p = h ? dlsym(h, name) : NULL;
  if (!p) {
    fprintf(stderr, "rocm_app: missing %s\n", name);
    exit(2);
  }
  return p;
}

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "basic";
  printf("{\"ev\":\"loaded\",\"pid\":%d}\n", (int)getpid());
  fflush(stdout);
  const char* sdk_path = getenv("RT_APP_SDK");
  /* rocprofiler-register opens the SDK RTLD_GLOBAL; RT_APP_SDK_LOCAL=1 opens it RTLD_LOCAL instead */
  int local = getenv("RT_APP_SDK_LOCAL") != NULL;
  void* sdk = sdk_path ? dlopen(sdk_path, RTLD_NOW | (local ? RTLD_LOCAL : RTLD_GLOBAL)) : NULL;
  if (!sdk) {
    fprintf(stderr, "rocm_app: cannot load the SDK (%s): %s\n", sdk_path ? sdk_path : "RT_APP_SDK unset", dlerror());
    return 2;
  }
  int (*reg)(void);
  void (*code_objects)(void);
  void (*step)(int);
  *(void**)(&reg) = need(sdk, "fake_rocp_register");
  *(void**)(&code_objects) = need(sdk, "fake_rocp_code_objects");
  *(void**)(&step) = need(sdk, "fake_rocp_step");

  int tools = reg();
  const char* rename = getenv("RT_APP_RENAME");
  if (rename && *rename) pthread_setname_np(pthread_self(), rename);
  const char* coll_path = getenv("RT_APP_COLLECTOR");
  void* coll = coll_path && tools ? dlopen(coll_path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  int (*push)(uint64_t) = NULL;
  int (*pop)(void) = NULL;
  int (*flush)(void) = NULL;
  int (*stats)(rawtrace_rocm_stats*, size_t) = NULL;
  int (*stop)(void) = NULL;
  int (*start)(void) = NULL;
  if (coll) {
    *(void**)(&push) = need(coll, "rawtrace_rocm_push_external_id");
    *(void**)(&pop) = need(coll, "rawtrace_rocm_pop_external_id");
    *(void**)(&flush) = need(coll, "rawtrace_rocm_flush");
    *(void**)(&stats) = need(coll, "rawtrace_rocm_get_stats");
    *(void**)(&stop) = need(coll, "rawtrace_rocm_stop");
    *(void**)(&start) = need(coll, "rawtrace_rocm_start");
  }

  code_objects();
  const char* s = getenv("RT_APP_STEPS");
  int steps = s && atoi(s) > 0 ? atoi(s) : 12;
  int pause = !strcmp(scenario, "pause");
  for (int i = 0; i < steps; i++) {
    if (pause && i == 4) printf("{\"ev\":\"stop\",\"rc\":%d}\n", stop ? stop() : -1);
    if (pause && i == 6) printf("{\"ev\":\"start\",\"rc\":%d}\n", start ? start() : -1);
    int pushed = push ? push(1000u + (uint64_t)i) : -1;
    step(i);
    int popped = pop ? pop() : -1;
    printf("{\"ev\":\"step\",\"i\":%d,\"external\":%d,\"push\":%d,\"pop\":%d}\n", i, 1000 + i, pushed, popped);
  }
  fflush(stdout);

  if (!strcmp(scenario, "stopped")) {
    /* After a flush (the writer has met every buffer): wait at most 5 s for the SDK's context to be stopped. */
    int (*started)(void);
    *(void**)(&started) = need(sdk, "fake_rocp_started");
    int rc = flush ? flush() : -1;
    int waited = 0;
    for (; started() && waited < 5000; waited += 10) usleep(10000);
    printf("{\"ev\":\"sdk\",\"flushed\":%d,\"started\":%d,\"waited_ms\":%d}\n", rc, started(), waited);
    fflush(stdout);
    return 0;
  }
  if (!strcmp(scenario, "wait")) {
    printf("{\"ev\":\"waiting\"}\n"); /* no flush: only the exit flush writes what is still in the SDK */
    fflush(stdout);
    for (int i = 0; i < 600; i++) sleep(1); /* until the test's signals */
    return 3;
  }
  if (!strcmp(scenario, "kill") || !strcmp(scenario, "term")) {
    int rc = flush ? flush() : -1;
    printf("{\"ev\":\"flushed\",\"rc\":%d}\n", rc);
    fflush(stdout);
    for (int i = 0; i < 600; i++) sleep(1); /* until the test's signal */
    return 3;
  }
  if (stats) {
    rawtrace_rocm_stats st;
    stats(&st, sizeof st);
    printf("{\"ev\":\"stats\",\"records\":%llu,\"dropped\":%llu,\"skipped\":%llu,\"ksyms\":%llu,\"messages\":%llu,"
           "\"callbacks\":%llu,\"callback_ns\":%llu}\n",
           (unsigned long long)st.records, (unsigned long long)st.records_dropped,
           (unsigned long long)st.records_skipped, (unsigned long long)st.kernel_symbols,
           (unsigned long long)st.marker_messages, (unsigned long long)st.callbacks,
           (unsigned long long)st.callback_ns);
  }
  printf("{\"ev\":\"done\"}\n");
  fflush(stdout);
  return 0;
}
