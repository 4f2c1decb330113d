/*
 * Test double of the Level Zero loader (libze_loader.so.1) for test/collectors/xpu_collector.test.ts: the collector
 * asks zeInit and zeDriverGet whether a driver exists before it touches PTI. FAKE_ZE_DRIVERS (default 1) is the
 * driver count; FAKE_ZE_INIT (default 0) the zeInit result.
 */
#include <stdint.h>
#include <stdlib.h>

int zeInit(uint32_t flags);
int zeDriverGet(uint32_t* count, void** drivers);

int zeInit(uint32_t flags) {
  (void)flags;
  const char* r = getenv("FAKE_ZE_INIT");
  return r ? (int)strtoul(r, NULL, 0) : 0;
}

int zeDriverGet(uint32_t* count, void** drivers) {
  (void)drivers;
  const char* n = getenv("FAKE_ZE_DRIVERS");
  *count = n ? (uint32_t)atoi(n) : 1u;
  return 0;
}
