/*
 * ABI truth test of collectors/rocm/rocprofiler_abi.h: every size and offset the collector, the test double and the
 * decoder rely on must equal the table measured against the real rocprofiler-sdk headers
 * (../shared/reference/vendor-record-layouts.md §2.3: SDK 1.0.0 program output, and its "SDK 0.5.0 differences").
 * Values not in that table (agent struct, 0.5 scratch record, callback payload prefixes) come from the same headers
 * (agent.h compiled against libhsakmt's hsakmttypes.h; field lists of buffer_tracing.h / callback_tracing.h).
 *
 * Prints one line per failed check and "ok <n> checks" at the end; exit status 0 only when all hold.
 * Run by test/collectors/rocm_collector.test.ts.
 */
#include "rocprofiler_abi.h"

#include <stddef.h>
#include <stdio.h>

static int checks, failures;

static void eq(const char* what, size_t got, size_t want) {
  checks++;
  if (got != want) {
    failures++;
    printf("FAIL %s: %zu, reference %zu\n", what, got, want);
  }
}

#define SZ(T, n) eq("sizeof " #T, sizeof(T), n)
#define OFF(T, f, n) eq(#T "." #f, offsetof(T, f), n)

int main(void) {
  /* fwd.h */
  SZ(rt_rocp_record_header, 16);
  OFF(rt_rocp_record_header, category, 0);
  OFF(rt_rocp_record_header, kind, 4);
  OFF(rt_rocp_record_header, payload, 8);
  SZ(rt_rocp_correlation_id_v1, 24);
  OFF(rt_rocp_correlation_id_v1, internal, 0);
  OFF(rt_rocp_correlation_id_v1, external, 8);
  OFF(rt_rocp_correlation_id_v1, ancestor, 16);
  SZ(rt_rocp_correlation_id_v0, 16);
  SZ(rt_rocp_async_correlation_id, 16);
  OFF(rt_rocp_async_correlation_id, external, 8);
  SZ(rt_rocp_user_data, 8);
  SZ(rt_rocp_dim3, 12);

  /* kernel dispatch (1.0 and 0.5: 184 B, identical offsets) */
  SZ(rt_rocp_kernel_dispatch_info, 128);
  OFF(rt_rocp_kernel_dispatch_info, agent_id, 8);
  OFF(rt_rocp_kernel_dispatch_info, queue_id, 16);
  OFF(rt_rocp_kernel_dispatch_info, kernel_id, 24);
  OFF(rt_rocp_kernel_dispatch_info, dispatch_id, 32);
  OFF(rt_rocp_kernel_dispatch_info, private_segment_size, 40);
  OFF(rt_rocp_kernel_dispatch_info, group_segment_size, 44);
  OFF(rt_rocp_kernel_dispatch_info, workgroup_size, 48);
  OFF(rt_rocp_kernel_dispatch_info, grid_size, 60);
  OFF(rt_rocp_kernel_dispatch_info, reserved_padding, 72);
  SZ(rt_rocp_kernel_dispatch_record, 184);
  OFF(rt_rocp_kernel_dispatch_record, kind, 8);
  OFF(rt_rocp_kernel_dispatch_record, operation, 12);
  OFF(rt_rocp_kernel_dispatch_record, correlation_id, 16);
  OFF(rt_rocp_kernel_dispatch_record, thread_id, 32);
  OFF(rt_rocp_kernel_dispatch_record, start_timestamp, 40);
  OFF(rt_rocp_kernel_dispatch_record, end_timestamp, 48);
  OFF(rt_rocp_kernel_dispatch_record, dispatch_info, 56);

  /* API records: HIP / HSA / marker / RCCL — 1.0: 64 B; 0.5: 56 B */
  SZ(rt_rocp_api_record_v1, 64);
  OFF(rt_rocp_api_record_v1, kind, 8);
  OFF(rt_rocp_api_record_v1, operation, 12);
  OFF(rt_rocp_api_record_v1, correlation_id, 16);
  OFF(rt_rocp_api_record_v1, start_timestamp, 40);
  OFF(rt_rocp_api_record_v1, end_timestamp, 48);
  OFF(rt_rocp_api_record_v1, thread_id, 56);
  SZ(rt_rocp_api_record_v0, 56);
  OFF(rt_rocp_api_record_v0, correlation_id, 16);
  OFF(rt_rocp_api_record_v0, start_timestamp, 32);
  OFF(rt_rocp_api_record_v0, end_timestamp, 40);
  OFF(rt_rocp_api_record_v0, thread_id, 48);

  /* memory copy — 1.0: 96 B; 0.5: 80 B (no addresses) */
  SZ(rt_rocp_memory_copy_record_v1, 96);
  OFF(rt_rocp_memory_copy_record_v1, operation, 12);
  OFF(rt_rocp_memory_copy_record_v1, correlation_id, 16);
  OFF(rt_rocp_memory_copy_record_v1, thread_id, 32);
  OFF(rt_rocp_memory_copy_record_v1, start_timestamp, 40);
  OFF(rt_rocp_memory_copy_record_v1, end_timestamp, 48);
  OFF(rt_rocp_memory_copy_record_v1, dst_agent_id, 56);
  OFF(rt_rocp_memory_copy_record_v1, src_agent_id, 64);
  OFF(rt_rocp_memory_copy_record_v1, bytes, 72);
  OFF(rt_rocp_memory_copy_record_v1, dst_address, 80);
  OFF(rt_rocp_memory_copy_record_v1, src_address, 88);
  SZ(rt_rocp_memory_copy_record_v0, 80);
  OFF(rt_rocp_memory_copy_record_v0, bytes, 72);

  /* memory allocation (1.0 only): 88 B */
  SZ(rt_rocp_memory_allocation_record, 88);
  OFF(rt_rocp_memory_allocation_record, correlation_id, 16);
  OFF(rt_rocp_memory_allocation_record, thread_id, 40);
  OFF(rt_rocp_memory_allocation_record, start_timestamp, 48);
  OFF(rt_rocp_memory_allocation_record, end_timestamp, 56);
  OFF(rt_rocp_memory_allocation_record, agent_id, 64);
  OFF(rt_rocp_memory_allocation_record, address, 72);
  OFF(rt_rocp_memory_allocation_record, allocation_size, 80);

  /* correlation-id retirement: 32 B in both */
  SZ(rt_rocp_correlation_retirement_record, 32);
  OFF(rt_rocp_correlation_retirement_record, timestamp, 16);
  OFF(rt_rocp_correlation_retirement_record, internal_correlation_id, 24);

  /* scratch memory: 0.5 correlation after the times (80 B), 1.0 correlation first + allocation size (96 B) */
  SZ(rt_rocp_scratch_memory_record_v0, 80);
  OFF(rt_rocp_scratch_memory_record_v0, agent_id, 16);
  OFF(rt_rocp_scratch_memory_record_v0, queue_id, 24);
  OFF(rt_rocp_scratch_memory_record_v0, thread_id, 32);
  OFF(rt_rocp_scratch_memory_record_v0, start_timestamp, 40);
  OFF(rt_rocp_scratch_memory_record_v0, end_timestamp, 48);
  OFF(rt_rocp_scratch_memory_record_v0, correlation_id, 56);
  OFF(rt_rocp_scratch_memory_record_v0, flags, 72);
  SZ(rt_rocp_scratch_memory_record_v1, 96);
  OFF(rt_rocp_scratch_memory_record_v1, correlation_id, 16);
  OFF(rt_rocp_scratch_memory_record_v1, agent_id, 40);
  OFF(rt_rocp_scratch_memory_record_v1, queue_id, 48);
  OFF(rt_rocp_scratch_memory_record_v1, thread_id, 56);
  OFF(rt_rocp_scratch_memory_record_v1, start_timestamp, 64);
  OFF(rt_rocp_scratch_memory_record_v1, end_timestamp, 72);
  OFF(rt_rocp_scratch_memory_record_v1, flags, 80);
  OFF(rt_rocp_scratch_memory_record_v1, allocation_size, 88);

  /* callback tracing: record 1.0 64 B, 0.5 56 B; kernel symbol prefix; marker message */
  SZ(rt_rocp_callback_record_v1, 64);
  OFF(rt_rocp_callback_record_v1, thread_id, 8);
  OFF(rt_rocp_callback_record_v1, correlation_id, 16);
  OFF(rt_rocp_callback_record_v1, kind, 40);
  OFF(rt_rocp_callback_record_v1, operation, 44);
  OFF(rt_rocp_callback_record_v1, phase, 48);
  OFF(rt_rocp_callback_record_v1, payload, 56);
  SZ(rt_rocp_callback_record_v0, 56);
  OFF(rt_rocp_callback_record_v0, kind, 32);
  OFF(rt_rocp_callback_record_v0, operation, 36);
  OFF(rt_rocp_callback_record_v0, phase, 40);
  OFF(rt_rocp_callback_record_v0, payload, 48);
  SZ(rt_rocp_kernel_symbol_data, 72); /* = the 0.5 struct; 1.0 appends 16 B (88) */
  OFF(rt_rocp_kernel_symbol_data, kernel_id, 8);
  OFF(rt_rocp_kernel_symbol_data, code_object_id, 16);
  OFF(rt_rocp_kernel_symbol_data, kernel_name, 24);
  OFF(rt_rocp_kernel_symbol_data, kernel_object, 32);
  OFF(rt_rocp_kernel_symbol_data, kernarg_segment_size, 40);
  OFF(rt_rocp_kernel_symbol_data, group_segment_size, 48);
  OFF(rt_rocp_kernel_symbol_data, private_segment_size, 52);
  OFF(rt_rocp_kernel_symbol_data, sgpr_count, 56);
  OFF(rt_rocp_kernel_symbol_data, arch_vgpr_count, 60);
  OFF(rt_rocp_kernel_symbol_data, accum_vgpr_count, 64);
  OFF(rt_rocp_marker_api_data, message, 8);

  /* registration.h */
  SZ(rt_rocp_client_id, 24);
  OFF(rt_rocp_client_id, name, 8);
  OFF(rt_rocp_client_id, handle, 16);
  SZ(rt_rocp_configure_result, 32);
  OFF(rt_rocp_configure_result, initialize, 8);
  OFF(rt_rocp_configure_result, finalize, 16);
  OFF(rt_rocp_configure_result, tool_data, 24);

  /* agent.h (rocprofiler_agent_v0_t): 1.0 312 B, 0.5 296 B */
  SZ(rt_rocp_agent, 312);
  eq("RT_ROCP_AGENT_SIZE_V0", RT_ROCP_AGENT_SIZE_V0, 296);
  OFF(rt_rocp_agent, id, 8);
  OFF(rt_rocp_agent, type, 16);
  OFF(rt_rocp_agent, simd_count, 24);
  OFF(rt_rocp_agent, max_waves_per_simd, 48);
  OFF(rt_rocp_agent, lds_size_in_kb, 52);
  OFF(rt_rocp_agent, wave_front_size, 64);
  OFF(rt_rocp_agent, cu_count, 72);
  OFF(rt_rocp_agent, simd_per_cu, 92);
  OFF(rt_rocp_agent, gfx_target_version, 100);
  OFF(rt_rocp_agent, vendor_id, 104);
  OFF(rt_rocp_agent, device_id, 106);
  OFF(rt_rocp_agent, location_id, 108);
  OFF(rt_rocp_agent, max_engine_clk_fcompute, 140);
  OFF(rt_rocp_agent, max_waves_per_cu, 160);
  OFF(rt_rocp_agent, family_id, 164);
  OFF(rt_rocp_agent, workgroup_max_size, 168);
  OFF(rt_rocp_agent, local_mem_size, 176);
  OFF(rt_rocp_agent, gpu_id, 192);
  OFF(rt_rocp_agent, name, 248);
  OFF(rt_rocp_agent, vendor_name, 256);
  OFF(rt_rocp_agent, product_name, 264);
  OFF(rt_rocp_agent, model_name, 272);
  OFF(rt_rocp_agent, node_id, 280);
  OFF(rt_rocp_agent, logical_node_id, 284);
  OFF(rt_rocp_agent, logical_node_type_id, 288);
  OFF(rt_rocp_agent, uuid, 296);

  printf("%s %d checks\n", failures ? "FAILED" : "ok", checks);
  return failures ? 1 : 0;
}
