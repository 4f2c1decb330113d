/*
 * rawtrace ROCm collector: resolving the rocprofiler-sdk functions at run time from the SDK library that
 * loaded the tool (nothing from ROCm at build time).
 */
#include "rocm_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Resolving the SDK                                                                                                  */
/* ------------------------------------------------------------------------------------------------------------------ */

/* SDK entry points (bind_sdk fills them). */
struct rt_rocm_sdk S;

/*
 * The SDK functions come from the SDK library that loaded us: rocprofiler-register dlopens librocprofiler-sdk.so
 * RTLD_GLOBAL, so dlsym(RTLD_DEFAULT) finds them (as it does when the program links the SDK). Where the SDK was
 * loaded RTLD_LOCAL, the library holding the `finalize` function the SDK passed to initialize is the SDK: we open
 * that one by its path (RTLD_NOLOAD). RAWTRACE_ROCPROFILER_LIB names the library explicitly.
 */
static int bind_sdk(void* h) {
  memset(&S, 0, sizeof S);
#define REQ(field, name)                                                  \
  do {                                                                    \
    *(void**)(&S.field) = dlsym(h, name);                                 \
    if (!S.field) {                                                       \
      rt_rocm_logmsg(RT_V_DEBUG, "rocprofiler-sdk library lacks %s", name);       \
      return -1;                                                          \
    }                                                                     \
  } while (0)
#define OPT(field, name) (*(void**)(&S.field) = dlsym(h, name))
  REQ(create_context, "rocprofiler_create_context");
  REQ(start_context, "rocprofiler_start_context");
  REQ(stop_context, "rocprofiler_stop_context");
  REQ(create_buffer, "rocprofiler_create_buffer");
  REQ(flush_buffer, "rocprofiler_flush_buffer");
  REQ(configure_buffer, "rocprofiler_configure_buffer_tracing_service");
  REQ(iterate_buffer_kinds, "rocprofiler_iterate_buffer_tracing_kinds");
  REQ(iterate_buffer_ops, "rocprofiler_iterate_buffer_tracing_kind_operations");
  REQ(buffer_kind_name, "rocprofiler_query_buffer_tracing_kind_name");
  REQ(buffer_op_name, "rocprofiler_query_buffer_tracing_kind_operation_name");
  OPT(configure_callback, "rocprofiler_configure_callback_tracing_service");
  OPT(iterate_callback_kinds, "rocprofiler_iterate_callback_tracing_kinds");
  OPT(iterate_callback_ops, "rocprofiler_iterate_callback_tracing_kind_operations");
  OPT(callback_kind_name, "rocprofiler_query_callback_tracing_kind_name");
  OPT(callback_op_name, "rocprofiler_query_callback_tracing_kind_operation_name");
  OPT(query_agents, "rocprofiler_query_available_agents");
  OPT(get_timestamp, "rocprofiler_get_timestamp");
  OPT(get_thread_id, "rocprofiler_get_thread_id");
  OPT(push_external, "rocprofiler_push_external_correlation_id");
  OPT(pop_external, "rocprofiler_pop_external_correlation_id");
  OPT(status_string, "rocprofiler_get_status_string");
#undef REQ
#undef OPT
  Dl_info info;
  if (dladdr(*(void**)(&S.create_context), &info) && info.dli_fname)
    snprintf(G.sdk_path, sizeof G.sdk_path, "%s", info.dli_fname);
  return 0;
}

int rt_rocm_load_sdk(rt_rocp_client_finalize_fn fini) {
  const char* env = getenv("RAWTRACE_ROCPROFILER_LIB");
  if (env && *env) {
    void* h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!h) rt_rocm_logmsg(RT_V_ERROR, "dlopen(%s): %s", env, dlerror());
    return h ? bind_sdk(h) : -1;
  }
  if (bind_sdk(RTLD_DEFAULT) == 0) return 0;
  Dl_info info;
  if (fini && dladdr(*(void**)(&fini), &info) && info.dli_fname) {
    void* h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (h && bind_sdk(h) == 0) return 0;
  }
  static const char* const sonames[] = {"librocprofiler-sdk.so.1", "librocprofiler-sdk.so.0", "librocprofiler-sdk.so"};
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
    void* h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
    if (h && bind_sdk(h) == 0) return 0;
  }
  return -1;
}
