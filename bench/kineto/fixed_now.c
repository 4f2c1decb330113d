/* LD_PRELOAD shim for kineto_writer (bench/kineto/golden.sh): std::chrono::system_clock::now() returns KDIFF_NOW_NS
   (+ the time elapsed since its first call), so that Kineto's ChromeTraceBaseTime (now, floored to its 3-month grid)
   is the one of the recording's date and its timestamps are those rawtrace writes for the same records. */
#include <stdlib.h>
#include <time.h>
long long _ZNSt6chrono3_V212system_clock3nowEv(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  long long real = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
  const char* s = getenv("KDIFF_NOW_NS");
  if (!s) return real;
  static long long first = 0;
  if (!first) first = real;
  return atoll(s) + (real - first);
}
