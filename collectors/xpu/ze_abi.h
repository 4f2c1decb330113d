/*
 * The Level Zero subset the XPU collector uses (github.com/oneapi-src/level-zero, include/ze_api.h, checked at
 * v1.32.0-era HEAD d3b3efb, "Level Zero Spec v1.17.24"; these entry points and the struct layout are unchanged
 * since spec 1.0). Declared from the spec; no text copied. Resolved with dlsym from libze_loader.so.1.
 */
#ifndef RAWTRACE_ZE_ABI_H
#define RAWTRACE_ZE_ABI_H

#include <stddef.h>
#include <stdint.h>

/* include/ze_api.h: ze_result_t (0 = ZE_RESULT_SUCCESS), ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x3. */
#define RT_ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES 0x3u
#define RT_ZE_MAX_DEVICE_NAME 256

/* include/ze_api.h: struct _ze_device_properties_t (ze_device_uuid_t = 16 bytes). */
typedef struct rt_ze_device_properties {
  uint32_t stype;
  void* pNext;
  uint32_t type; /* ze_device_type_t: 1 GPU */
  uint32_t vendorId;
  uint32_t deviceId;
  uint32_t flags; /* ze_device_property_flags_t: bit 1 = sub-device */
  uint32_t subdeviceId;
  uint32_t coreClockRate; /* MHz */
  uint64_t maxMemAllocSize;
  uint32_t maxHardwareContexts;
  uint32_t maxCommandQueuePriority;
  uint32_t numThreadsPerEU;
  uint32_t physicalEUSimdWidth;
  uint32_t numEUsPerSubslice;
  uint32_t numSubslicesPerSlice;
  uint32_t numSlices;
  uint64_t timerResolution;
  uint32_t timestampValidBits;
  uint32_t kernelTimestampValidBits;
  uint8_t uuid[16];
  char name[RT_ZE_MAX_DEVICE_NAME];
} rt_ze_device_properties;
_Static_assert(offsetof(rt_ze_device_properties, coreClockRate) == 36, "coreClockRate");
_Static_assert(offsetof(rt_ze_device_properties, timerResolution) == 80, "timerResolution");
_Static_assert(offsetof(rt_ze_device_properties, uuid) == 96, "uuid");
_Static_assert(sizeof(rt_ze_device_properties) == 368, "ze_device_properties_t");

/* include/ze_api.h: zeInit, zeDriverGet, zeDeviceGet, zeDeviceGetProperties (handles are pointers). */
typedef int (*rt_ze_init_fn)(uint32_t flags);
typedef int (*rt_ze_driver_get_fn)(uint32_t* count, void** drivers);
typedef int (*rt_ze_device_get_fn)(void* driver, uint32_t* count, void** devices);
typedef int (*rt_ze_device_get_properties_fn)(void* device, rt_ze_device_properties* props);
/* include/ze_api.h: zeDeviceGetSubDevices (count query with NULL handles, as zeDeviceGet); a device with no
 * sub-devices answers count 0. ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE = ZE_BIT(1) in ze_device_property_flags_t. */
typedef int (*rt_ze_device_get_sub_devices_fn)(void* device, uint32_t* count, void** sub_devices);
#define RT_ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE 0x2u

#endif
