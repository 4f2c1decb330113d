/*
 * The subset of Intel PTI's ABI (the PTI-SDK, github.com/intel/pti-gpu, folder sdk/include/pti/) that rawtrace uses,
 * declared from the layouts in ../shared/reference/vendor-record-layouts.md §3 and the public headers at the tags
 * cited beside each declaration. No text is copied; names follow PTI's so the citations can be checked. Every record
 * struct is checked by size here and, against the real libraries (0.12.4, 0.17.0, 1.2.0 wheels), by
 * test/collectors/pti_abi.test.ts: their own ptiViewGetNextRecord must step exactly these sizes.
 *
 * Two record generations: PTI 0.11-0.17 emit the v1 structs; 0.18+/1.x emit the `_v2` structs for kernels and memory
 * operations, each extending v1 by device handle(s) and engine ordinal/index (v1 is a byte-identical prefix). The
 * communication record differs between 0.17 (56 bytes) and 1.x (64 bytes); 0.12 has no communication view.
 */
#ifndef RAWTRACE_PTI_ABI_H
#define RAWTRACE_PTI_ABI_H

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* sdk/include/pti/pti.h (pti-0.12.4 .. pti-1.0.0-rc2): pti_result, 4-byte enum. */
typedef enum {
  PTI_SUCCESS = 0,
  PTI_STATUS_END_OF_BUFFER = 1,
  PTI_ERROR_NOT_IMPLEMENTED = 2,
  PTI_ERROR_BAD_ARGUMENT = 3,
  PTI_ERROR_NO_CALLBACKS_SET = 4,
  PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY = 5,
  PTI_ERROR_BAD_TIMESTAMP = 6,
  PTI_ERROR_BAD_API_ID = 7,
  PTI_ERROR_NO_GPU_VIEWS_ENABLED = 8,
  PTI_ERROR_DRIVER = 50,
  PTI_ERROR_TRACING_NOT_INITIALIZED = 51,
  PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED = 52,
  PTI_ERROR_INTERNAL = 200
} pti_result;

/* sdk/include/pti/pti_version.h.in (pti-0.12.4 .. pti-1.0.0-rc2): struct pti_version, ptiVersion(). */
typedef struct pti_version {
  uint32_t _major;
  uint32_t _minor;
  uint32_t _patch;
} pti_version;

/* sdk/include/pti/pti_view.h (pti-0.12.4; 12 from pti-0.17.0): pti_view_kind, 4-byte enum. */
typedef enum {
  PTI_VIEW_INVALID = 0,
  PTI_VIEW_DEVICE_GPU_KERNEL = 1,
  PTI_VIEW_DEVICE_CPU_KERNEL = 2,
  PTI_VIEW_DRIVER_API = 3,
  PTI_VIEW_RESERVED = 4,
  PTI_VIEW_COLLECTION_OVERHEAD = 5,
  PTI_VIEW_RUNTIME_API = 6,
  PTI_VIEW_EXTERNAL_CORRELATION = 7,
  PTI_VIEW_DEVICE_GPU_MEM_COPY = 8,
  PTI_VIEW_DEVICE_GPU_MEM_FILL = 9,
  PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P = 10,
  PTI_VIEW_DEVICE_SYNCHRONIZATION = 11,
  PTI_VIEW_COMMUNICATION = 12
} pti_view_kind;

/* sdk/include/pti/pti_view.h (pti-0.12.4): pti_view_external_kind (CUSTOM_0..3 = 2..5). */
typedef enum { PTI_VIEW_EXTERNAL_KIND_INVALID = 0, PTI_VIEW_EXTERNAL_KIND_UNKNOWN = 1,
               PTI_VIEW_EXTERNAL_KIND_CUSTOM_0 = 2, PTI_VIEW_EXTERNAL_KIND_CUSTOM_1 = 3,
               PTI_VIEW_EXTERNAL_KIND_CUSTOM_2 = 4, PTI_VIEW_EXTERNAL_KIND_CUSTOM_3 = 5 } pti_view_external_kind;

/* sdk/include/pti/pti_view.h (pti-0.12.4): pti_api_group_id (1 LEVELZERO, 2 OPENCL, 3 SYCL, 4/5 hybrids). */
typedef enum { PTI_API_GROUP_RESERVED = 0, PTI_API_GROUP_LEVELZERO = 1, PTI_API_GROUP_OPENCL = 2,
               PTI_API_GROUP_SYCL = 3, PTI_API_GROUP_HYBRID_SYCL_LEVELZERO = 4,
               PTI_API_GROUP_HYBRID_SYCL_OPENCL = 5 } pti_api_group_id;

/* Enums stored in records; all 4 bytes (sdk/include/pti/pti_view.h, pti-0.12.4): memory type, memcpy type (src*4+dst),
 * overhead kind, synchronization type. Kept as plain uint32_t fields below. */

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-1.0.0-rc2): opaque handles, pointer sized. */
typedef void* pti_backend_queue_t;
typedef void* pti_backend_ctx_t;
typedef void* pti_backend_evt_t;
typedef void* pti_device_handle_t; /* _v2 records only (pti-1.0.0-rc2) */

/* sdk/include/pti/pti_view.h: pti_view_record_base, the leading kind of every record. */
typedef struct pti_view_record_base {
  uint32_t _view_kind; /* pti_view_kind */
} pti_view_record_base;

#define RT_PTI_PCI_ADDRESS_SIZE 16
#define RT_PTI_UUID_SIZE 16

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-0.17.0): pti_view_record_kernel, 168 bytes. */
#define RT_PTI_KERNEL_V1_FIELDS                                                                                     \
  pti_view_record_base _view_kind;                                                                                  \
  pti_backend_queue_t _queue_handle;                                                                                \
  pti_backend_ctx_t _context_handle;                                                                                \
  const char* _name;                                                                                                \
  const char* _source_file_name;                                                                                    \
  uint64_t _source_line_number;                                                                                     \
  uint64_t _kernel_id;                                                                                              \
  uint32_t _correlation_id;                                                                                         \
  uint32_t _thread_id;                                                                                              \
  char _pci_address[RT_PTI_PCI_ADDRESS_SIZE];                                                                       \
  uint8_t _device_uuid[RT_PTI_UUID_SIZE];                                                                           \
  uint64_t _append_timestamp;                                                                                       \
  uint64_t _start_timestamp;                                                                                        \
  uint64_t _end_timestamp;                                                                                          \
  uint64_t _submit_timestamp;                                                                                       \
  uint64_t _sycl_task_begin_timestamp;                                                                              \
  uint64_t _sycl_enqk_begin_timestamp;                                                                              \
  uint64_t _sycl_node_id;                                                                                           \
  uint64_t _sycl_queue_id;                                                                                          \
  uint32_t _sycl_invocation_id;
typedef struct pti_view_record_kernel { RT_PTI_KERNEL_V1_FIELDS } pti_view_record_kernel;
/* sdk/include/pti/pti_view.h (pti-1.0.0-rc2): pti_view_record_kernel_v2 = v1 + device handle + engine, 184 bytes. */
typedef struct pti_view_record_kernel_v2 {
  RT_PTI_KERNEL_V1_FIELDS
  pti_device_handle_t _device_handle;
  uint32_t _engine_ordinal;
  uint32_t _engine_index;
} pti_view_record_kernel_v2;

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-0.17.0): pti_view_record_memory_copy, 136 bytes. */
#define RT_PTI_MEMCPY_V1_FIELDS                                                                                     \
  pti_view_record_base _view_kind;                                                                                  \
  uint32_t _memcpy_type;                                                                                            \
  uint32_t _mem_src;                                                                                                \
  uint32_t _mem_dst;                                                                                                \
  pti_backend_queue_t _queue_handle;                                                                                \
  pti_backend_ctx_t _context_handle;                                                                                \
  const char* _name;                                                                                                \
  char _pci_address[RT_PTI_PCI_ADDRESS_SIZE];                                                                       \
  uint8_t _device_uuid[RT_PTI_UUID_SIZE];                                                                           \
  uint64_t _mem_op_id;                                                                                              \
  uint32_t _correlation_id;                                                                                         \
  uint32_t _thread_id;                                                                                              \
  uint64_t _append_timestamp;                                                                                       \
  uint64_t _start_timestamp;                                                                                        \
  uint64_t _end_timestamp;                                                                                          \
  uint64_t _submit_timestamp;                                                                                       \
  uint64_t _bytes;                                                                                                  \
  uint64_t _sycl_queue_id;
typedef struct pti_view_record_memory_copy { RT_PTI_MEMCPY_V1_FIELDS } pti_view_record_memory_copy;
/* sdk/include/pti/pti_view.h (pti-1.0.0-rc2): pti_view_record_memory_copy_v2, 152 bytes. */
typedef struct pti_view_record_memory_copy_v2 {
  RT_PTI_MEMCPY_V1_FIELDS
  pti_device_handle_t _device_handle;
  uint32_t _engine_ordinal;
  uint32_t _engine_index;
} pti_view_record_memory_copy_v2;

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-0.17.0): pti_view_record_memory_fill, 136 bytes. */
#define RT_PTI_MEMFILL_V1_FIELDS                                                                                    \
  pti_view_record_base _view_kind;                                                                                  \
  uint32_t _mem_type;                                                                                               \
  pti_backend_queue_t _queue_handle;                                                                                \
  pti_backend_ctx_t _context_handle;                                                                                \
  const char* _name;                                                                                                \
  char _pci_address[RT_PTI_PCI_ADDRESS_SIZE];                                                                       \
  uint8_t _device_uuid[RT_PTI_UUID_SIZE];                                                                           \
  uint64_t _mem_op_id;                                                                                              \
  uint32_t _correlation_id;                                                                                         \
  uint32_t _thread_id;                                                                                              \
  uint64_t _append_timestamp;                                                                                       \
  uint64_t _start_timestamp;                                                                                        \
  uint64_t _end_timestamp;                                                                                          \
  uint64_t _submit_timestamp;                                                                                       \
  uint64_t _bytes;                                                                                                  \
  uint64_t _value_for_set;                                                                                          \
  uint64_t _sycl_queue_id;
typedef struct pti_view_record_memory_fill { RT_PTI_MEMFILL_V1_FIELDS } pti_view_record_memory_fill;
/* sdk/include/pti/pti_view.h (pti-1.0.0-rc2): pti_view_record_memory_fill_v2, 152 bytes. */
typedef struct pti_view_record_memory_fill_v2 {
  RT_PTI_MEMFILL_V1_FIELDS
  pti_device_handle_t _device_handle;
  uint32_t _engine_ordinal;
  uint32_t _engine_index;
} pti_view_record_memory_fill_v2;

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-0.17.0): pti_view_record_memory_copy_p2p, 168 bytes. */
#define RT_PTI_P2P_V1_FIELDS                                                                                        \
  pti_view_record_base _view_kind;                                                                                  \
  uint32_t _memcpy_type;                                                                                            \
  uint32_t _mem_src;                                                                                                \
  uint32_t _mem_dst;                                                                                                \
  pti_backend_queue_t _queue_handle;                                                                                \
  pti_backend_ctx_t _context_handle;                                                                                \
  const char* _name;                                                                                                \
  char _src_pci_address[RT_PTI_PCI_ADDRESS_SIZE];                                                                   \
  char _dst_pci_address[RT_PTI_PCI_ADDRESS_SIZE];                                                                   \
  uint8_t _src_uuid[RT_PTI_UUID_SIZE];                                                                              \
  uint8_t _dst_uuid[RT_PTI_UUID_SIZE];                                                                              \
  uint64_t _mem_op_id;                                                                                              \
  uint32_t _correlation_id;                                                                                         \
  uint32_t _thread_id;                                                                                              \
  uint64_t _append_timestamp;                                                                                       \
  uint64_t _start_timestamp;                                                                                        \
  uint64_t _end_timestamp;                                                                                          \
  uint64_t _submit_timestamp;                                                                                       \
  uint64_t _bytes;                                                                                                  \
  uint64_t _sycl_queue_id;
typedef struct pti_view_record_memory_copy_p2p { RT_PTI_P2P_V1_FIELDS } pti_view_record_memory_copy_p2p;
/* sdk/include/pti/pti_view.h (pti-1.0.0-rc2): pti_view_record_memory_copy_p2p_v2, 192 bytes. */
typedef struct pti_view_record_memory_copy_p2p_v2 {
  RT_PTI_P2P_V1_FIELDS
  pti_device_handle_t _src_device_handle;
  pti_device_handle_t _dst_device_handle;
  uint32_t _engine_ordinal;
  uint32_t _engine_index;
} pti_view_record_memory_copy_p2p_v2;

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-1.0.0-rc2): pti_view_record_api (runtime and driver API), 48 bytes. */
typedef struct pti_view_record_api {
  pti_view_record_base _view_kind;
  uint64_t _start_timestamp;
  uint64_t _end_timestamp;
  uint32_t _api_group; /* pti_api_group_id */
  uint32_t _api_id;
  uint32_t _process_id;
  uint32_t _thread_id;
  uint32_t _correlation_id;
  uint32_t _return_code;
} pti_view_record_api;

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-1.0.0-rc2): pti_view_record_overhead, 56 bytes. */
typedef struct pti_view_record_overhead {
  pti_view_record_base _view_kind;
  uint64_t _overhead_start_timestamp_ns;
  uint64_t _overhead_end_timestamp_ns;
  uint32_t _overhead_thread_id;
  uint32_t _api_id;
  uint64_t _overhead_count;
  uint64_t _overhead_duration_ns;
  uint32_t _overhead_kind;
} pti_view_record_overhead;

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-1.0.0-rc2): pti_view_record_external_correlation, 24 bytes. */
typedef struct pti_view_record_external_correlation {
  pti_view_record_base _view_kind;
  uint32_t _correlation_id;
  uint64_t _external_id;
  uint32_t _external_kind; /* pti_view_external_kind */
} pti_view_record_external_correlation;

/* sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-1.0.0-rc2): pti_view_record_synchronization, 72 bytes. */
typedef struct pti_view_record_synchronization {
  pti_view_record_base _view_kind;
  uint32_t _synch_type;
  pti_backend_ctx_t _context_handle;
  pti_backend_queue_t _queue_handle;
  pti_backend_evt_t _event_handle;
  uint64_t _start_timestamp;
  uint64_t _end_timestamp;
  uint32_t _thread_id;
  uint32_t _correlation_id;
  uint32_t _number_wait_events;
  uint32_t _return_code;
  uint32_t _api_id;
  uint32_t _api_group; /* pti_api_group_id */
} pti_view_record_synchronization;

/* sdk/include/pti/pti_view.h (pti-0.17.0): pti_view_record_comms as 0.17 emits it (metadata size), 56 bytes. */
typedef struct pti_view_record_comms_v017 {
  pti_view_record_base _view_kind;
  uint64_t _start_timestamp;
  uint64_t _end_timestamp;
  uint32_t _process_id;
  uint32_t _thread_id;
  uint64_t _metadata_size;
  uint64_t _communicator_id;
  const char* _name;
} pti_view_record_comms_v017;
/* sdk/include/pti/pti_view.h (pti-1.0.0-rc2): pti_view_record_comms as 1.x emits it (send/recv sizes), 64 bytes. */
typedef struct pti_view_record_comms {
  pti_view_record_base _view_kind;
  uint64_t _start_timestamp;
  uint64_t _end_timestamp;
  uint32_t _process_id;
  uint32_t _thread_id;
  uint64_t _send_size;
  uint64_t _recv_size;
  uint64_t _communicator_id;
  const char* _name;
} pti_view_record_comms;

/* The record sizes checked at compile time (LP64); the real libraries check them at run time (pti_abi.test.ts). */
_Static_assert(sizeof(pti_view_record_kernel) == 168, "kernel v1");
_Static_assert(sizeof(pti_view_record_kernel_v2) == 184, "kernel v2");
_Static_assert(offsetof(pti_view_record_kernel_v2, _device_handle) == sizeof(pti_view_record_kernel), "v2 extends v1");
_Static_assert(sizeof(pti_view_record_memory_copy) == 136, "memcpy v1");
_Static_assert(sizeof(pti_view_record_memory_copy_v2) == 152, "memcpy v2");
_Static_assert(sizeof(pti_view_record_memory_fill) == 136, "memfill v1");
_Static_assert(sizeof(pti_view_record_memory_fill_v2) == 152, "memfill v2");
_Static_assert(sizeof(pti_view_record_memory_copy_p2p) == 168, "p2p v1");
_Static_assert(sizeof(pti_view_record_memory_copy_p2p_v2) == 192, "p2p v2");
_Static_assert(sizeof(pti_view_record_api) == 48, "api");
_Static_assert(sizeof(pti_view_record_overhead) == 56, "overhead");
_Static_assert(sizeof(pti_view_record_external_correlation) == 24, "external correlation");
_Static_assert(sizeof(pti_view_record_synchronization) == 72, "synchronization");
_Static_assert(sizeof(pti_view_record_comms_v017) == 56, "comms 0.17");
_Static_assert(sizeof(pti_view_record_comms) == 64, "comms 1.x");
_Static_assert(offsetof(pti_view_record_kernel, _start_timestamp) == 104, "kernel start");
_Static_assert(offsetof(pti_view_record_memory_copy_v2, _bytes) == 120, "memcpy bytes");
_Static_assert(offsetof(pti_view_record_memory_fill_v2, _value_for_set) == 120, "memfill value");
_Static_assert(offsetof(pti_view_record_memory_copy_p2p_v2, _dst_device_handle) == 176, "p2p dst device");

/* Callbacks and entry points, sdk/include/pti/pti_view.h (pti-0.12.4 .. pti-1.0.0-rc2); resolved with dlsym. */
typedef void (*pti_fptr_buffer_requested)(unsigned char** buffer, size_t* buffer_size_in_bytes);
typedef void (*pti_fptr_buffer_completed)(unsigned char* buffer, size_t buffer_size_in_bytes, size_t used_bytes);
typedef pti_version (*pti_version_fn)(void);
typedef pti_result (*pti_view_set_callbacks_fn)(pti_fptr_buffer_requested, pti_fptr_buffer_completed);
typedef pti_result (*pti_view_enable_fn)(pti_view_kind);
typedef pti_result (*pti_flush_all_views_fn)(void);
typedef pti_result (*pti_view_get_next_record_fn)(uint8_t* buffer, size_t valid_bytes, pti_view_record_base** record);
typedef pti_result (*pti_view_push_external_correlation_id_fn)(pti_view_external_kind, uint64_t);
typedef pti_result (*pti_view_pop_external_correlation_id_fn)(pti_view_external_kind, uint64_t*);
typedef uint64_t (*pti_view_get_timestamp_fn)(void);
/* pti_view.h (pti-0.12.4 .. pti-1.0.0-rc2): ptiViewGetApiIdName(group, id, const char** name). */
typedef pti_result (*pti_view_get_api_id_name_fn)(pti_api_group_id, uint32_t, const char**);

#if defined(__cplusplus)
}
#endif
#endif
