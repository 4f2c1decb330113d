/*
 * The subset of Habana's Synapse ABI (libSynapse.so) that rawtrace uses, declared from the public headers of
 * github.com/HabanaAI/Intel_Gaudi3_Software at revision e6cef1c: synapse/include/synapse_api.h (function signatures,
 * profiler buffer format, lines ~800-900 and ~1700-2045) and synapse/include/synapse_common_types.h (synStatus,
 * synDeviceType, synTraceType, synTraceFormat, synTraceEventArg, synTraceEventExtraArgs, synTraceEvent,
 * synDeviceInfo), plus synapse/include/synapse_api_types.h (synDeviceId, synModuleId). Layout facts also in
 * ../shared/reference/vendor-record-layouts.md §4. No text is copied; names follow Synapse's (prefixed rt_) so the
 * citations can be checked. Nothing from Habana is needed to build: every function is resolved with dlsym.
 *
 * x86-64 only: synTraceEvent holds `long double` (x87 80-bit extended in a 16-byte, 16-aligned slot), which makes
 * the struct 208 bytes with alignment 16. The static asserts below pin every offset the collector and the test double
 * rely on.
 */
#ifndef RAWTRACE_SYNAPSE_ABI_H
#define RAWTRACE_SYNAPSE_ABI_H

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* synapse_api_types.h: both are uint32_t. */
typedef uint32_t rt_syn_device_id;
typedef uint32_t rt_syn_module_id;

/* synapse_common_types.h: synStatus, a 4-byte enum; the values rawtrace names. */
typedef int rt_syn_status;
enum {
  RT_SYN_SUCCESS = 0,              /* synSuccess */
  RT_SYN_INVALID_ARGUMENT = 1,     /* synInvalidArgument */
  RT_SYN_OBJECT_NOT_INITIALIZED = 6, /* synObjectNotInitialized */
  RT_SYN_NO_DEVICE_FOUND = 8,      /* synNoDeviceFound */
  RT_SYN_UNSUPPORTED = 18,         /* synUnsupported */
  RT_SYN_FAIL = 26,                /* synFail */
  RT_SYN_UNINITIALIZED = 28        /* synUninitialized */
};

/* synapse_common_types.h: synDeviceType (Goya2/Greco 1, Gaudi 2, Gaudi2 4, Gaudi3 5, Emulator 6, Invalid 7). */
enum {
  RT_SYN_DEVICE_GAUDI = 2,
  RT_SYN_DEVICE_GAUDI2 = 4,
  RT_SYN_DEVICE_GAUDI3 = 5,
  RT_SYN_DEVICE_TYPE_INVALID = 7
};

/* synapse_common_types.h: synTraceType and synTraceFormat. */
enum { RT_SYN_TRACE_ALL = 1, RT_SYN_TRACE_HOST = 2, RT_SYN_TRACE_DEVICE = 3 };
enum { RT_SYN_TRACE_FORMAT_TEF = 1 };

/* synapse_common_types.h: synTraceEventArg (24 bytes): key, value type (0 u64, 1 char*, 2 double), value. */
typedef struct rt_syn_trace_event_arg {
  const char* key;
  int32_t type;
  union {
    const char* str;
    uint64_t u64;
    double d;
  } value;
} rt_syn_trace_event_arg;
enum { RT_SYN_ARG_UINT64 = 0, RT_SYN_ARG_CHAR_PTR = 1, RT_SYN_ARG_DOUBLE = 2 };

/* synapse_common_types.h: synTraceEventExtraArgs (16 bytes): uint8 count, then the array pointer. */
typedef struct rt_syn_trace_event_extra_args {
  uint8_t count;
  const rt_syn_trace_event_arg* args;
} rt_syn_trace_event_extra_args;

/*
 * synapse_common_types.h: synTraceEvent, the entries of a synProfilerGetTrace buffer (TEF names in comments):
 * name, category ("cat"), type ("ph": 'B' 'E' 'X' 'M', counters), timestamp ("ts") and duration ("dur") as long double
 * microseconds, engineType ("pid"), engineIndex ("tid"), contextId ("id"), and a 128-byte argument union: event args,
 * counter args, metadata args (the names of engine types and engines on 'M' entries), or an SPMU value.
 */
typedef struct rt_syn_trace_event {
  const char* name;
  const char* category;
  char type;
  long double timestamp;
  long double duration;
  uint32_t engine_type;
  uint32_t engine_index;
  uint64_t context_id;
  union {
    struct {
      const char* data_type;
      const char* operation;
      uint16_t recipe_id;
      const char* recipe_name;
      uint64_t stream_handle;
      uint64_t event_handle;
      rt_syn_trace_event_extra_args extra_args;
    } event;
    struct {
      double minimum;
      double maximum;
      double average;
      uint16_t matches;
    } counter;
    struct {
      const char* name;
      const char* group;
    } meta;
    char reserved[128];
    uint64_t value;
  } arguments;
} rt_syn_trace_event;

/* synapse_common_types.h: struct synDeviceInfo (the deprecated synDeviceGetInfo's output, 56 bytes). */
typedef struct rt_syn_device_info {
  uint64_t sram_base_address;
  uint64_t dram_base_address;
  uint32_t sram_size;
  uint64_t dram_size;
  uint64_t tpc_enabled_mask;
  uint8_t dram_enabled;
  uint32_t device_id;
  uint32_t fd;
  int32_t device_type;
} rt_syn_device_info;

#if defined(__x86_64__)
_Static_assert(sizeof(long double) == 16 && _Alignof(long double) == 16, "x87 long double in 16 bytes");
_Static_assert(sizeof(rt_syn_trace_event_arg) == 24, "synTraceEventArg");
_Static_assert(offsetof(rt_syn_trace_event_arg, value) == 16, "synTraceEventArg.value");
_Static_assert(sizeof(rt_syn_trace_event_extra_args) == 16, "synTraceEventExtraArgs");
_Static_assert(sizeof(rt_syn_trace_event) == 208 && _Alignof(rt_syn_trace_event) == 16, "synTraceEvent");
_Static_assert(offsetof(rt_syn_trace_event, type) == 16, "type");
_Static_assert(offsetof(rt_syn_trace_event, timestamp) == 32, "timestamp");
_Static_assert(offsetof(rt_syn_trace_event, duration) == 48, "duration");
_Static_assert(offsetof(rt_syn_trace_event, engine_type) == 64, "engineType");
_Static_assert(offsetof(rt_syn_trace_event, engine_index) == 68, "engineIndex");
_Static_assert(offsetof(rt_syn_trace_event, context_id) == 72, "contextId");
_Static_assert(offsetof(rt_syn_trace_event, arguments) == 80, "arguments");
_Static_assert(offsetof(rt_syn_trace_event, arguments.event.recipe_id) == 96, "recipeId");
_Static_assert(offsetof(rt_syn_trace_event, arguments.event.recipe_name) == 104, "recipeName");
_Static_assert(offsetof(rt_syn_trace_event, arguments.event.event_handle) == 120, "eventHandle");
_Static_assert(offsetof(rt_syn_trace_event, arguments.event.extra_args) == 128, "extraArgs");
_Static_assert(offsetof(rt_syn_trace_event, arguments.counter.matches) == 104, "matches");
_Static_assert(offsetof(rt_syn_trace_event, arguments.meta.group) == 88, "group");
_Static_assert(sizeof(rt_syn_device_info) == 56 && offsetof(rt_syn_device_info, device_type) == 52, "synDeviceInfo");
#endif

/* Bytes after the entries and the string pool of a synProfilerGetTrace buffer: size_t num, size_t version. */
#define RT_SYN_TRACE_TRAILER 16u

/* synapse_api.h signatures (SYN_API_CALL is empty on Linux). */
typedef rt_syn_status (*rt_syn_initialize_fn)(void);
typedef rt_syn_status (*rt_syn_destroy_fn)(void);
typedef rt_syn_status (*rt_syn_device_acquire_fn)(rt_syn_device_id* id, const char* pci_bus);
typedef rt_syn_status (*rt_syn_device_acquire_by_type_fn)(rt_syn_device_id* id, int32_t device_type);
typedef rt_syn_status (*rt_syn_device_acquire_by_module_fn)(rt_syn_device_id* id, rt_syn_module_id module);
typedef rt_syn_status (*rt_syn_device_release_fn)(rt_syn_device_id id);
typedef rt_syn_status (*rt_syn_driver_get_version_fn)(char* out, int len);
typedef rt_syn_status (*rt_syn_device_get_name_fn)(char* out, int len, rt_syn_device_id id);
typedef rt_syn_status (*rt_syn_device_get_info_fn)(rt_syn_device_id id, rt_syn_device_info* out);
typedef rt_syn_status (*rt_syn_device_get_memory_info_fn)(rt_syn_device_id id, uint64_t* free_bytes, uint64_t* total);
typedef rt_syn_status (*rt_syn_device_malloc_fn)(rt_syn_device_id id, uint64_t size, uint64_t req_addr, uint32_t flags,
                                                 uint64_t* buffer);
typedef rt_syn_status (*rt_syn_device_free_fn)(rt_syn_device_id id, uint64_t buffer, uint32_t flags);
typedef rt_syn_status (*rt_syn_profiler_query_required_memory_fn)(rt_syn_device_id id, uint32_t* bytes);
typedef rt_syn_status (*rt_syn_profiler_set_user_buffer_fn)(rt_syn_device_id id, void* buffer);
typedef rt_syn_status (*rt_syn_profiler_start_fn)(int32_t type, rt_syn_device_id id);
typedef rt_syn_status (*rt_syn_profiler_stop_fn)(int32_t type, rt_syn_device_id id);
typedef rt_syn_status (*rt_syn_profiler_get_trace_fn)(int32_t type, rt_syn_device_id id, int32_t format, void* buffer,
                                                      size_t* size, size_t* num_entries);
typedef rt_syn_status (*rt_syn_profiler_get_current_time_ns_fn)(uint64_t* ns);

#if defined(__cplusplus)
}
#endif

#endif /* RAWTRACE_SYNAPSE_ABI_H */
