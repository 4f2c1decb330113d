/**
 * The subset of the rocprofiler-sdk C ABI that the rawtrace ROCm collector, its test double and the decoder rely on,
 * declared here so that nothing from ROCm is needed at build time.
 *
 * These are our own declarations of the binary interface (sizes, offsets, enum values, function signatures), written
 * from the public headers and checked by test/collectors/rocm_abi.c against the table in
 * ../shared/reference/vendor-record-layouts.md §2.3. Two revisions were read:
 *   - "0.5": ROCm/rocprofiler-sdk at 8ab1ed7 (2024-10-10, VERSION 0.5.0), source/include/rocprofiler-sdk/...
 *   - "1.0": ROCm/rocm-systems at 1b1610f (2025-08-09, projects/rocprofiler-sdk/VERSION 1.0.0),
 *            projects/rocprofiler-sdk/source/include/rocprofiler-sdk/...
 * Each declaration names the header it mirrors (path below source/include/rocprofiler-sdk/) and the revisions it
 * holds for. Where the two differ, the 0.5 form is suffixed _v0 and the 1.0 form _v1. The 24-byte correlation id
 * (field `ancestor`) arrived in rocm-systems fbcb5025e (2025-03-20), released as SDK 1.0.0: a library reporting
 * `version` >= 10000 uses the _v1 layouts.
 *
 * The collector never interprets buffer records: it copies them as delivered. The record structs below are here for
 * the test double (which must produce both layouts) and for the ABI truth test (the offsets the decoder reads).
 *
 * LP64 little-endian Linux only.
 */
#ifndef RAWTRACE_ROCPROFILER_ABI_H
#define RAWTRACE_ROCPROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------------------------ */
/* Scalars, handles, enum values                                                                                      */
/* ------------------------------------------------------------------------------------------------------------------ */

/** rocprofiler_status_t (fwd.h, 0.5 and 1.0): a 4-byte enum; only 0 = success is relied on. */
typedef int32_t rt_rocp_status;
#define RT_ROCP_STATUS_SUCCESS 0

/** rocprofiler_buffer_category_t (fwd.h, 0.5 and 1.0): the `category` of a record header. */
#define RT_ROCP_BUFFER_CATEGORY_TRACING 1u

/** rocprofiler_buffer_policy_t (fwd.h, 0.5 and 1.0): 1 discard, 2 lossless. */
#define RT_ROCP_BUFFER_POLICY_DISCARD 1
#define RT_ROCP_BUFFER_POLICY_LOSSLESS 2

/** rocprofiler_callback_phase_t (fwd.h, 0.5 and 1.0): ENTER (= code-object LOAD) is 1, EXIT (= UNLOAD) is 2. */
#define RT_ROCP_PHASE_ENTER 1
#define RT_ROCP_PHASE_EXIT 2

/** rocprofiler_agent_type_t (fwd.h, 0.5 and 1.0). */
#define RT_ROCP_AGENT_TYPE_CPU 1u
#define RT_ROCP_AGENT_TYPE_GPU 2u

/** rocprofiler_agent_version_t (agent.h, 0.5 and 1.0): ROCPROFILER_AGENT_INFO_VERSION_0 = 1. */
#define RT_ROCP_AGENT_INFO_VERSION_0 1

/**
 * rocprofiler_code_object_operation_t (fwd.h, 0.5 and 1.0): DEVICE_KERNEL_SYMBOL_REGISTER = 2. The collector looks
 * the operation up by its name first and uses this value only when the library has no name for it.
 */
#define RT_ROCP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER 2

/** First SDK version (10000 × major + 100 × minor + patch) with the 24-byte correlation id: 1.0.0. */
#define RT_ROCP_VERSION_V1 10000u

/** rocprofiler_context_id_t (fwd.h, 0.5 and 1.0): an 8-byte handle. */
typedef struct rt_rocp_context_id {
  uint64_t handle;
} rt_rocp_context_id;

/** rocprofiler_buffer_id_t (fwd.h, 0.5 and 1.0): an 8-byte handle. */
typedef struct rt_rocp_buffer_id {
  uint64_t handle;
} rt_rocp_buffer_id;

/** rocprofiler_agent_id_t (fwd.h, 0.5 and 1.0): an 8-byte handle. */
typedef struct rt_rocp_agent_id {
  uint64_t handle;
} rt_rocp_agent_id;

/** rocprofiler_user_data_t (fwd.h, 0.5 and 1.0): 8-byte union of a value and a pointer. */
typedef union rt_rocp_user_data {
  uint64_t value;
  void* ptr;
} rt_rocp_user_data;

/** rocprofiler_dim3_t (fwd.h, 0.5 and 1.0): three u32, 12 bytes. */
typedef struct rt_rocp_dim3 {
  uint32_t x, y, z;
} rt_rocp_dim3;

/** rocprofiler_correlation_id_t as of 0.5 (fwd.h): internal id, external user data; 16 bytes. */
typedef struct rt_rocp_correlation_id_v0 {
  uint64_t internal;
  rt_rocp_user_data external;
} rt_rocp_correlation_id_v0;

/** rocprofiler_correlation_id_t as of 1.0 (fwd.h): internal, external, ancestor (internal id of the caller); 24 B. */
typedef struct rt_rocp_correlation_id_v1 {
  uint64_t internal;
  rt_rocp_user_data external;
  uint64_t ancestor;
} rt_rocp_correlation_id_v1;

/** rocprofiler_async_correlation_id_t (fwd.h, 1.0; the 0.5 correlation id had this same shape): 16 bytes. */
typedef struct rt_rocp_async_correlation_id {
  uint64_t internal;
  rt_rocp_user_data external;
} rt_rocp_async_correlation_id;

/**
 * rocprofiler_record_header_t (fwd.h, 0.5 and 1.0): 16 bytes; category and kind share their 8 bytes with a u64 hash
 * (category | kind << 32) in the original, which we do not use.
 */
typedef struct rt_rocp_record_header {
  uint32_t category;
  uint32_t kind;
  void* payload;
} rt_rocp_record_header;

/* ------------------------------------------------------------------------------------------------------------------ */
/* Registration (registration.h, 0.5 and 1.0)                                                                         */
/* ------------------------------------------------------------------------------------------------------------------ */

/** rocprofiler_client_id_t (registration.h): size of the struct, a name the tool sets, the SDK's handle; 24 B. */
typedef struct rt_rocp_client_id {
  size_t size;
  const char* name;
  uint32_t handle;
} rt_rocp_client_id;

/** rocprofiler_client_finalize_t (registration.h): the SDK function a tool may call to finalize itself early. */
typedef void (*rt_rocp_client_finalize_fn)(rt_rocp_client_id);

/** rocprofiler_tool_initialize_t (registration.h). Returns 0 on success. */
typedef int (*rt_rocp_tool_initialize_fn)(rt_rocp_client_finalize_fn finalize_func, void* tool_data);

/** rocprofiler_tool_finalize_t (registration.h). */
typedef void (*rt_rocp_tool_finalize_fn)(void* tool_data);

/** rocprofiler_tool_configure_result_t (registration.h): 32 bytes. */
typedef struct rt_rocp_configure_result {
  size_t size;
  rt_rocp_tool_initialize_fn initialize;
  rt_rocp_tool_finalize_fn finalize;
  void* tool_data;
} rt_rocp_configure_result;

/** Signature of rocprofiler_configure (registration.h): version = 10000 × major + 100 × minor + patch. */
typedef rt_rocp_configure_result* (*rt_rocp_configure_fn)(uint32_t version, const char* runtime_version,
                                                          uint32_t priority, rt_rocp_client_id* client_id);

/* ------------------------------------------------------------------------------------------------------------------ */
/* Callback tracing (fwd.h, callback_tracing.h, marker/api_args.h)                                                    */
/* ------------------------------------------------------------------------------------------------------------------ */

/** rocprofiler_callback_tracing_record_t as of 0.5 (fwd.h): 56 bytes, passed by value to callbacks. */
typedef struct rt_rocp_callback_record_v0 {
  rt_rocp_context_id context_id;
  uint64_t thread_id;
  rt_rocp_correlation_id_v0 correlation_id;
  uint32_t kind;      /* rocprofiler_callback_tracing_kind_t */
  int32_t operation;  /* rocprofiler_tracing_operation_t */
  uint32_t phase;     /* rocprofiler_callback_phase_t */
  void* payload;
} rt_rocp_callback_record_v0;

/** rocprofiler_callback_tracing_record_t as of 1.0 (fwd.h): 64 bytes (the correlation id grew by `ancestor`). */
typedef struct rt_rocp_callback_record_v1 {
  rt_rocp_context_id context_id;
  uint64_t thread_id;
  rt_rocp_correlation_id_v1 correlation_id;
  uint32_t kind;
  int32_t operation;
  uint32_t phase;
  void* payload;
} rt_rocp_callback_record_v1;

/** rocprofiler_callback_tracing_cb_t (callback_tracing.h, 0.5 layout of the record). */
typedef void (*rt_rocp_callback_fn_v0)(rt_rocp_callback_record_v0 record, rt_rocp_user_data* user_data, void* data);
/** rocprofiler_callback_tracing_cb_t (callback_tracing.h, 1.0 layout of the record). */
typedef void (*rt_rocp_callback_fn_v1)(rt_rocp_callback_record_v1 record, rt_rocp_user_data* user_data, void* data);

/**
 * rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t (callback_tracing.h): 72 bytes in 0.5;
 * 1.0 appends kernel_code_entry_byte_offset (i64 @72) and kernel_address (@80), 88 bytes. This is the common prefix.
 */
typedef struct rt_rocp_kernel_symbol_data {
  uint64_t size;
  uint64_t kernel_id;
  uint64_t code_object_id;
  const char* kernel_name;
  uint64_t kernel_object;
  uint32_t kernarg_segment_size;
  uint32_t kernarg_segment_alignment;
  uint32_t group_segment_size;   /* LDS bytes per work-group */
  uint32_t private_segment_size; /* scratch bytes per work-item */
  uint32_t sgpr_count;
  uint32_t arch_vgpr_count;
  uint32_t accum_vgpr_count;
} rt_rocp_kernel_symbol_data;

/**
 * rocprofiler_callback_tracing_marker_api_data_t (callback_tracing.h) with its args union
 * (marker/api_args.h, 0.5 and 1.0): for roctxMarkA, roctxRangePushA and roctxRangeStartA the first (only) argument
 * is `const char* message` at offset 8.
 */
typedef struct rt_rocp_marker_api_data {
  uint64_t size;
  const char* message;
} rt_rocp_marker_api_data;

/* ------------------------------------------------------------------------------------------------------------------ */
/* Agents (agent.h)                                                                                                   */
/* ------------------------------------------------------------------------------------------------------------------ */

/**
 * rocprofiler_agent_v0_t (agent.h): 296 bytes in 0.5, 312 in 1.0 (reserved_padding0 @292 became
 * runtime_visibility, uuid[16] @296 was added). The fields before are the same in both. The HSA_ENGINE_VERSION,
 * HSA_ENGINE_ID and HSA_CAPABILITY unions of libhsakmt (hsakmt/hsakmttypes.h) are 4 bytes each.
 */
typedef struct rt_rocp_agent {
  uint64_t size;
  rt_rocp_agent_id id;
  uint32_t type; /* RT_ROCP_AGENT_TYPE_* */
  uint32_t cpu_cores_count;
  uint32_t simd_count;
  uint32_t mem_banks_count;
  uint32_t caches_count;
  uint32_t io_links_count;
  uint32_t cpu_core_id_base;
  uint32_t simd_id_base;
  uint32_t max_waves_per_simd;
  uint32_t lds_size_in_kb;
  uint32_t gds_size_in_kb;
  uint32_t num_gws;
  uint32_t wave_front_size;
  uint32_t num_xcc;
  uint32_t cu_count;
  uint32_t array_count;
  uint32_t num_shader_banks;
  uint32_t simd_arrays_per_engine;
  uint32_t cu_per_simd_array;
  uint32_t simd_per_cu;
  uint32_t max_slots_scratch_cu;
  uint32_t gfx_target_version; /* major = v / 10000 % 100, minor = v / 100 % 100, stepping = v % 100 */
  uint16_t vendor_id;
  uint16_t device_id;
  uint32_t location_id;
  uint32_t domain;
  uint32_t drm_render_minor;
  uint32_t num_sdma_engines;
  uint32_t num_sdma_xgmi_engines;
  uint32_t num_sdma_queues_per_engine;
  uint32_t num_cp_queues;
  uint32_t max_engine_clk_ccompute; /* MHz */
  uint32_t max_engine_clk_fcompute; /* MHz */
  uint32_t sdma_fw_version;
  uint32_t fw_version;
  uint32_t capability;
  uint32_t cu_per_engine;
  uint32_t max_waves_per_cu;
  uint32_t family_id;
  uint32_t workgroup_max_size;
  uint32_t grid_max_size;
  uint64_t local_mem_size;
  uint64_t hive_id;
  uint64_t gpu_id;
  rt_rocp_dim3 workgroup_max_dim;
  rt_rocp_dim3 grid_max_dim;
  const void* mem_banks;
  const void* caches;
  const void* io_links;
  const char* name; /* e.g. gfx942 */
  const char* vendor_name;
  const char* product_name;
  const char* model_name;
  uint32_t node_id;
  int32_t logical_node_id;
  int32_t logical_node_type_id;
  uint32_t runtime_visibility; /* 0.5: reserved_padding0 */
  uint8_t uuid[16];            /* 1.0 only: read when size >= 312 */
} rt_rocp_agent;

/** Bytes of rocprofiler_agent_v0_t in 0.5 (everything before uuid). */
#define RT_ROCP_AGENT_SIZE_V0 296u

/** rocprofiler_query_available_agents_cb_t (agent.h): `agents` is an array of `num_agents` struct pointers. */
typedef rt_rocp_status (*rt_rocp_agents_cb)(int32_t version, const void** agents, size_t num_agents, void* data);

/* ------------------------------------------------------------------------------------------------------------------ */
/* Buffer tracing records (buffer_tracing.h, fwd.h) — copied verbatim by the collector, read by the decoder           */
/* ------------------------------------------------------------------------------------------------------------------ */

/** rocprofiler_buffer_tracing_{hip,hsa,marker,rccl}_api_record_t as of 0.5: 56 bytes. */
typedef struct rt_rocp_api_record_v0 {
  uint64_t size;
  uint32_t kind;
  int32_t operation;
  rt_rocp_correlation_id_v0 correlation_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  uint64_t thread_id;
} rt_rocp_api_record_v0;

/** rocprofiler_buffer_tracing_{hip,hsa,marker,rccl}_api_record_t as of 1.0: 64 bytes. */
typedef struct rt_rocp_api_record_v1 {
  uint64_t size;
  uint32_t kind;
  int32_t operation;
  rt_rocp_correlation_id_v1 correlation_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  uint64_t thread_id;
} rt_rocp_api_record_v1;

/** rocprofiler_buffer_tracing_memory_copy_record_t as of 0.5: 80 bytes (no addresses). */
typedef struct rt_rocp_memory_copy_record_v0 {
  uint64_t size;
  uint32_t kind;
  int32_t operation; /* rocprofiler_memory_copy_operation_t */
  rt_rocp_async_correlation_id correlation_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  rt_rocp_agent_id dst_agent_id;
  rt_rocp_agent_id src_agent_id;
  uint64_t bytes;
} rt_rocp_memory_copy_record_v0;

/** rocprofiler_buffer_tracing_memory_copy_record_t as of 1.0: 96 bytes. */
typedef struct rt_rocp_memory_copy_record_v1 {
  uint64_t size;
  uint32_t kind;
  int32_t operation;
  rt_rocp_async_correlation_id correlation_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  rt_rocp_agent_id dst_agent_id;
  rt_rocp_agent_id src_agent_id;
  uint64_t bytes;
  uint64_t dst_address;
  uint64_t src_address;
} rt_rocp_memory_copy_record_v1;

/** rocprofiler_kernel_dispatch_info_t (fwd.h, 0.5 and 1.0): 128 bytes including 56 reserved. */
typedef struct rt_rocp_kernel_dispatch_info {
  uint64_t size;
  rt_rocp_agent_id agent_id;
  uint64_t queue_id;
  uint64_t kernel_id;
  uint64_t dispatch_id;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  rt_rocp_dim3 workgroup_size;
  rt_rocp_dim3 grid_size;
  uint8_t reserved_padding[56];
} rt_rocp_kernel_dispatch_info;

/** rocprofiler_buffer_tracing_kernel_dispatch_record_t (buffer_tracing.h, 0.5 and 1.0): 184 bytes. */
typedef struct rt_rocp_kernel_dispatch_record {
  uint64_t size;
  uint32_t kind;
  int32_t operation; /* rocprofiler_kernel_dispatch_operation_t */
  rt_rocp_async_correlation_id correlation_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  rt_rocp_kernel_dispatch_info dispatch_info;
} rt_rocp_kernel_dispatch_record;

/** rocprofiler_buffer_tracing_memory_allocation_record_t (buffer_tracing.h, 1.0 only): 88 bytes. */
typedef struct rt_rocp_memory_allocation_record {
  uint64_t size;
  uint32_t kind;
  int32_t operation; /* rocprofiler_memory_allocation_operation_t */
  rt_rocp_correlation_id_v1 correlation_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  rt_rocp_agent_id agent_id;
  uint64_t address;
  uint64_t allocation_size;
} rt_rocp_memory_allocation_record;

/** rocprofiler_buffer_tracing_scratch_memory_record_t as of 0.5: correlation id after the times; 80 bytes. */
typedef struct rt_rocp_scratch_memory_record_v0 {
  uint64_t size;
  uint32_t kind;
  int32_t operation; /* rocprofiler_scratch_memory_operation_t */
  rt_rocp_agent_id agent_id;
  uint64_t queue_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  rt_rocp_correlation_id_v0 correlation_id;
  uint32_t flags; /* rocprofiler_scratch_alloc_flag_t */
} rt_rocp_scratch_memory_record_v0;

/** rocprofiler_buffer_tracing_scratch_memory_record_t as of 1.0: correlation id first, allocation size; 96 B. */
typedef struct rt_rocp_scratch_memory_record_v1 {
  uint64_t size;
  uint32_t kind;
  int32_t operation;
  rt_rocp_correlation_id_v1 correlation_id;
  rt_rocp_agent_id agent_id;
  uint64_t queue_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  uint32_t flags;
  uint64_t allocation_size;
} rt_rocp_scratch_memory_record_v1;

/** rocprofiler_buffer_tracing_correlation_id_retirement_record_t (buffer_tracing.h, 0.5 and 1.0): 32 bytes. */
typedef struct rt_rocp_correlation_retirement_record {
  uint64_t size;
  uint32_t kind;
  uint64_t timestamp;
  uint64_t internal_correlation_id;
} rt_rocp_correlation_retirement_record;

/* ------------------------------------------------------------------------------------------------------------------ */
/* Functions the collector resolves at run time (signatures only; names in the comments)                              */
/* ------------------------------------------------------------------------------------------------------------------ */

/** rocprofiler_buffer_tracing_cb_t (buffer.h, 0.5 and 1.0): headers valid only during the call. */
typedef void (*rt_rocp_buffer_cb)(rt_rocp_context_id context, rt_rocp_buffer_id buffer,
                                  rt_rocp_record_header** headers, size_t num_headers, void* data,
                                  uint64_t drop_count);
/** rocprofiler_buffer_tracing_kind_cb_t / rocprofiler_callback_tracing_kind_cb_t: return non-zero to stop. */
typedef int (*rt_rocp_kind_cb)(uint32_t kind, void* data);
/** rocprofiler_buffer_tracing_kind_operation_cb_t / the callback-tracing one: return non-zero to stop. */
typedef int (*rt_rocp_kind_op_cb)(uint32_t kind, int32_t operation, void* data);
/** rocprofiler_external_correlation_id_request_cb_t is not used: push/pop is. */

/** rocprofiler_create_context (context.h). */
typedef rt_rocp_status (*rt_rocp_create_context_fn)(rt_rocp_context_id* out);
/** rocprofiler_start_context / rocprofiler_stop_context (context.h). */
typedef rt_rocp_status (*rt_rocp_context_fn)(rt_rocp_context_id ctx);
/** rocprofiler_create_buffer (buffer.h): size and watermark in bytes; policy RT_ROCP_BUFFER_POLICY_*. */
typedef rt_rocp_status (*rt_rocp_create_buffer_fn)(rt_rocp_context_id ctx, size_t size, size_t watermark,
                                                   int32_t policy, rt_rocp_buffer_cb callback, void* data,
                                                   rt_rocp_buffer_id* out);
/** rocprofiler_flush_buffer (buffer.h). */
typedef rt_rocp_status (*rt_rocp_flush_buffer_fn)(rt_rocp_buffer_id buffer);
/** rocprofiler_configure_buffer_tracing_service (buffer_tracing.h): operations NULL with count 0 = all. */
typedef rt_rocp_status (*rt_rocp_configure_buffer_tracing_fn)(rt_rocp_context_id ctx, uint32_t kind,
                                                              const int32_t* operations, size_t count,
                                                              rt_rocp_buffer_id buffer);
/** rocprofiler_configure_callback_tracing_service (callback_tracing.h); `callback` is a rt_rocp_callback_fn_v*. */
typedef rt_rocp_status (*rt_rocp_configure_callback_tracing_fn)(rt_rocp_context_id ctx, uint32_t kind,
                                                                const int32_t* operations, size_t count,
                                                                void* callback, void* data);
/** rocprofiler_iterate_{buffer,callback}_tracing_kinds (buffer_tracing.h, callback_tracing.h). */
typedef rt_rocp_status (*rt_rocp_iterate_kinds_fn)(rt_rocp_kind_cb callback, void* data);
/** rocprofiler_iterate_{buffer,callback}_tracing_kind_operations. */
typedef rt_rocp_status (*rt_rocp_iterate_ops_fn)(uint32_t kind, rt_rocp_kind_op_cb callback, void* data);
/** rocprofiler_query_{buffer,callback}_tracing_kind_name: `name` is owned by the library, `len` excludes the NUL. */
typedef rt_rocp_status (*rt_rocp_kind_name_fn)(uint32_t kind, const char** name, uint64_t* len);
/** rocprofiler_query_{buffer,callback}_tracing_kind_operation_name. */
typedef rt_rocp_status (*rt_rocp_op_name_fn)(uint32_t kind, int32_t operation, const char** name, uint64_t* len);
/** rocprofiler_query_available_agents (agent.h): `agent_size` = sizeof the caller's agent struct. */
typedef rt_rocp_status (*rt_rocp_query_agents_fn)(int32_t version, rt_rocp_agents_cb callback, size_t agent_size,
                                                  void* data);
/** rocprofiler_get_timestamp (rocprofiler.h): ns of the SDK clock (CLOCK_BOOTTIME). */
typedef rt_rocp_status (*rt_rocp_get_timestamp_fn)(uint64_t* ts);
/** rocprofiler_get_thread_id (rocprofiler.h): the id the SDK puts in records (gettid). */
typedef rt_rocp_status (*rt_rocp_get_thread_id_fn)(uint64_t* tid);
/** rocprofiler_push_external_correlation_id (external_correlation.h). */
typedef rt_rocp_status (*rt_rocp_push_external_fn)(rt_rocp_context_id ctx, uint64_t tid, rt_rocp_user_data id);
/** rocprofiler_pop_external_correlation_id (external_correlation.h). */
typedef rt_rocp_status (*rt_rocp_pop_external_fn)(rt_rocp_context_id ctx, uint64_t tid, rt_rocp_user_data* id);
/** rocprofiler_get_status_string (rocprofiler.h); optional. */
typedef const char* (*rt_rocp_status_string_fn)(rt_rocp_status status);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_ROCPROFILER_ABI_H */
