/*
 * Test double of the Level Zero loader (libze_loader.so.1) for test/collectors/xpu_collector.test.ts: the collector
 * asks zeInit and zeDriverGet whether a driver exists before it touches PTI. FAKE_ZE_DRIVERS (default 1) is the
 * driver count; FAKE_ZE_INIT (default 0) the zeInit result. Each driver has two devices, whose properties
 * (zeDeviceGetProperties, the layout of collectors/xpu/ze_abi.h) are derived from the device number k = 0, 1, ...:
 * name "Fake Intel GPU k", uuid bytes k*16 .. k*16+15, 1600 + k MHz, 8 slices x 4 subslices, 8 EUs x 8 threads,
 * SIMD 16. FAKE_ZE_SUBDEVICES (default 0: the FLAT hierarchy, tiles are devices) gives each device that many
 * sub-devices (tiles, the COMPOSITE hierarchy): handles 0x2000 + 16k + t, properties those of device k with the
 * sub-device flag, subdeviceId t and uuid byte 15 = 0x80 + t.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_abi.h"

int zeInit(uint32_t flags);
int zeDriverGet(uint32_t* count, void** drivers);
int zeDeviceGet(void* driver, uint32_t* count, void** devices);
int zeDeviceGetProperties(void* device, rt_ze_device_properties* p);
int zeDeviceGetSubDevices(void* device, uint32_t* count, void** subs);

#define SUB_BASE 0x2000u

/* zeInit calls so far, for the test program (fake_ze_init_calls): an inactive collector must not make any. */
static int g_inits;
int fake_ze_init_calls(void);
int fake_ze_init_calls(void) { return g_inits; }

int zeInit(uint32_t flags) {
  (void)flags;
  g_inits++;
  const char* r = getenv("FAKE_ZE_INIT");
  return r ? (int)strtoul(r, NULL, 0) : 0;
}

int zeDriverGet(uint32_t* count, void** drivers) {
  const char* n = getenv("FAKE_ZE_DRIVERS");
  uint32_t have = n ? (uint32_t)atoi(n) : 1u;
  if (drivers) {
    if (*count > have) *count = have;
    for (uint32_t i = 0; i < *count; i++) drivers[i] = (void*)(uintptr_t)(0x100 + i);
  } else {
    *count = have;
  }
  return 0;
}

int zeDeviceGet(void* driver, uint32_t* count, void** devices) {
  uint32_t base = 2u * (uint32_t)((uintptr_t)driver - 0x100);
  if (devices) {
    if (*count > 2) *count = 2;
    for (uint32_t i = 0; i < *count; i++) devices[i] = (void*)(uintptr_t)(0x1000 + base + i);
  } else {
    *count = 2;
  }
  return 0;
}

int zeDeviceGetSubDevices(void* device, uint32_t* count, void** subs) {
  const char* s = getenv("FAKE_ZE_SUBDEVICES");
  uint32_t have = s ? (uint32_t)atoi(s) : 0u;
  uint32_t k = (uint32_t)((uintptr_t)device - 0x1000);
  if ((uintptr_t)device >= SUB_BASE) have = 0; /* tiles have no sub-devices */
  if (subs) {
    if (*count > have) *count = have;
    for (uint32_t t = 0; t < *count; t++) subs[t] = (void*)(uintptr_t)(SUB_BASE + 16 * k + t);
  } else {
    *count = have;
  }
  return 0;
}

int zeDeviceGetProperties(void* device, rt_ze_device_properties* p) {
  if (!p || p->stype != RT_ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES) return 0x78000004; /* INVALID_ARGUMENT */
  uintptr_t h = (uintptr_t)device;
  int tile = h >= SUB_BASE ? (int)((h - SUB_BASE) % 16) : -1;
  uint32_t k = tile >= 0 ? (uint32_t)((h - SUB_BASE) / 16) : (uint32_t)(h - 0x1000);
  p->type = 1;
  p->vendorId = 0x8086;
  p->coreClockRate = 1600 + k;
  p->numSlices = 8;
  p->numSubslicesPerSlice = 4;
  p->numEUsPerSubslice = 8;
  p->numThreadsPerEU = 8;
  p->physicalEUSimdWidth = 16;
  for (int i = 0; i < 16; i++) p->uuid[i] = (uint8_t)(k * 16 + (uint32_t)i);
  if (tile >= 0) {
    p->flags |= RT_ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
    p->subdeviceId = (uint32_t)tile;
    p->uuid[15] = (uint8_t)(0x80 + tile);
  }
  snprintf(p->name, sizeof p->name, "Fake Intel GPU %u", k);
  return 0;
}
