/*
 * Test program for test/collectors/xpu_collector.test.ts, run with LD_PRELOAD=librawtrace_xpu.so and
 * RAWTRACE_PTI_LIB=<the fake libpti_view.so>. It reaches the fake (fake_pti_emit) and the collector's public API
 * through dlopen/dlsym only.
 *
 *   xpu_app run    RT_APP_STEPS rounds of records, each round inside a pushed external id (1000 + round); exits
 *   xpu_app kill   as run, then rawtrace_xpu_flush, prints {"flushed":rc}, more rounds, and SIGKILLs itself
 *   xpu_app term   as run, then SIGTERM to itself (default disposition: the collector's handler flushes first)
 * Each first prints whether SIGINT and SIGTERM were still at their defaults when main began (after the collector's
 * constructor, before any GPU work); `term` waits until the collector's handler is in place (at most 5 s) before it
 * raises, and says how long that took.
 *   xpu_app churn  as run, then records and churns malloc/free on the main thread until killed; prints {"armed":1}
 *                  once the collector's SIGTERM handler is in place
 *   xpu_app views  as run, then waits (at most 5 s) until no PTI view is enabled and prints {"enabled_after":mask}
 *   xpu_app fork   as run, then forks a child (no exec) that prints {"child_dumps":n}, the .rawtrace files it holds
 * A mode that returns from main (run, views, fork) first creates the file RT_APP_GO when it is set: a test's FIFO
 * reader (test/helpers/fifo_reader.ts goFile) starts then, once every record of the rounds was handed out.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "open_dumps.h"

typedef void (*emit_fn)(unsigned);
typedef int (*push_fn)(uint64_t);
typedef int (*pop_fn)(void);
typedef int (*flush_fn)(void);

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "run";
  const char* lib = getenv("RAWTRACE_PTI_LIB");
  void* pti = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!pti) pti = lib ? dlopen(lib, RTLD_NOW) : NULL;
  emit_fn emit = pti ? (emit_fn)(uintptr_t)dlsym(pti, "fake_pti_emit") : NULL;
  push_fn push = (push_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "rawtrace_xpu_push_external_id");
  pop_fn pop = (pop_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "rawtrace_xpu_pop_external_id");
  flush_fn flush = (flush_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "rawtrace_xpu_flush");
  /* What a runtime starting now sees (CPython installs its SIGINT handler only over the default): the collector's
   * constructor has run, the program has done no GPU work yet. */
  struct sigaction si, st;
  sigaction(SIGINT, NULL, &si);
  sigaction(SIGTERM, NULL, &st);
  int sigint_dfl = !(si.sa_flags & SA_SIGINFO) && si.sa_handler == SIG_DFL;
  int sigterm_dfl = !(st.sa_flags & SA_SIGINFO) && st.sa_handler == SIG_DFL;
  /* What the collector left in the environment and asked Level Zero (the loader double counts zeInit calls; it is not
   * loaded at all when the collector gave up before Level Zero). */
  const char* tracing = getenv("ZE_ENABLE_TRACING_LAYER");
  int (*ze_inits)(void) = (int (*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "fake_ze_init_calls");
  printf("{\"pid\":%d,\"collector\":%d,\"start_sigint_default\":%d,\"start_sigterm_default\":%d,"
         "\"ze_tracing\":%s%s%s,\"ze_inits\":%d}\n",
         (int)getpid(), push && pop && flush, sigint_dfl, sigterm_dfl, tracing ? "\"" : "", tracing ? tracing : "null",
         tracing ? "\"" : "", ze_inits ? ze_inits() : 0);
  fflush(stdout);
  if (!emit) {
    fprintf(stderr, "xpu_app: no fake_pti_emit in %s\n", lib ? lib : "(RAWTRACE_PTI_LIB unset)");
    return 2;
  }
  unsigned steps = (unsigned)atoi(getenv("RT_APP_STEPS") ? getenv("RT_APP_STEPS") : "10");
  for (unsigned i = 0; i < steps; i++) {
    int pushed = push ? push(1000 + i) : -1;
    emit(1);
    int popped = pop ? pop() : -1;
    if (pushed || popped) printf("{\"push\":%d,\"pop\":%d}\n", pushed, popped);
  }
  if (!strcmp(mode, "kill")) {
    int rc = flush ? flush() : -2;
    printf("{\"flushed\":%d}\n", rc);
    fflush(stdout);
    emit(steps); /* records never delivered: lost with the process */
    raise(SIGKILL);
  }
  if (!strcmp(mode, "term")) {
    /* The collector's handler goes in about a second after its constructor (a program that is not Python): wait for
     * it, at most 5 s, saying how long it took. */
    int waited = 0;
    for (; waited < 5000; waited += 10) {
      sigaction(SIGTERM, NULL, &st);
      if (st.sa_flags & SA_SIGINFO) break;
      usleep(10000);
    }
    printf("{\"term_handler\":%d,\"waited_ms\":%d}\n", (st.sa_flags & SA_SIGINFO) != 0, waited);
    fflush(stdout);
    raise(SIGTERM);
  }
  if (!strcmp(mode, "churn")) {
    /* Until killed: records, and the main thread inside malloc and free nearly all the time (as a Python program's
     * is), holding the main arena's lock when a signal lands. Prints {"armed":1} once the collector's SIGTERM
     * handler is in place. */
    void* keep[64] = {0};
    unsigned seed = 1;
    for (int said = 0;;) {
      emit(1);
      for (int k = 0; k < 20000; k++) { /* most of the time in malloc/free, little in PTI (its lock) */
        seed = seed * 1103515245u + 12345u;
        unsigned j = (seed >> 16) & 63;
        free(keep[j]);
        keep[j] = malloc(2048 + ((seed >> 4) & 65535));
      }
      if (!said) {
        sigaction(SIGTERM, NULL, &st);
        if (st.sa_flags & SA_SIGINFO) {
          printf("{\"armed\":1}\n");
          fflush(stdout);
          said = 1;
        }
      }
    }
  }
  if (!strcmp(mode, "views")) {
    /* Whether the collector turned PTI's views off (a write error stops the tracing): wait at most 5 s for it. */
    typedef unsigned (*enabled_fn)(void);
    enabled_fn enabled = (enabled_fn)(uintptr_t)dlsym(pti, "fake_pti_enabled");
    int waited = 0;
    for (; enabled && enabled() && waited < 5000; waited += 10) usleep(10000);
    printf("{\"enabled_after\":%u,\"waited_ms\":%d}\n", enabled ? enabled() : 0xffffffffu, waited);
  }
  if (!strcmp(mode, "fork")) {
    printf("{\"parent_dumps\":%d}\n", open_dumps());
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
      printf("{\"child_dumps\":%d}\n", open_dumps());
      fflush(stdout);
      _exit(0);
    }
    int st;
    if (c < 0 || waitpid(c, &st, 0) != c) return 3;
  }
  const char* go = getenv("RT_APP_GO");
  FILE* f = go ? fopen(go, "w") : NULL;
  if (f) fclose(f);
  return 0;
}
