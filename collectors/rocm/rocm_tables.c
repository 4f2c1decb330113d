/*
 * rawtrace ROCm collector: the tables a file gets at start: API_NAMES (every buffer kind, and the operations
 * of the kinds recorded) and AGENTS (docs/format.md §12).
 */
#include "rocm_internal.h"
#include "rawtrace_heap.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Name tables (API_NAMES): every buffer kind, and the operations of the kinds we record                              */
/* ------------------------------------------------------------------------------------------------------------------ */

static void names_add(struct names* t, uint32_t domain, uint32_t id, const char* name) {
  if (!name || !*name) return;
  if (t->n == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 256;
    rt_api_name* more = (rt_api_name*)rt_realloc(t->v, ncap * sizeof *more);
    if (!more) return;
    t->v = more;
    t->cap = ncap;
  }
  t->v[t->n].domain = domain;
  t->v[t->n].id = id;
  t->v[t->n].name = name;
  t->n++;
}

int rt_rocm_on_kind(uint32_t kind, void* data) {
  const char* name = NULL;
  uint64_t len = 0;
  if (S.buffer_kind_name(kind, &name, &len) == RT_ROCP_STATUS_SUCCESS && name)
    names_add((struct names*)data, RT_ROCP_DOMAIN_KINDS, kind, name);
  return 0;
}

static int on_op(uint32_t kind, int32_t op, void* data) {
  struct names* t = (struct names*)data;
  const char* name = NULL;
  uint64_t len = 0;
  if (t->op_name(kind, op, &name, &len) == RT_ROCP_STATUS_SUCCESS && name)
    names_add(t, t->domain | kind, (uint32_t)op, name);
  return 0;
}

/* API_NAMES: all buffer kinds (domain 0), then the operations of each kind we enabled (domain 0x10000 | kind). */
int rt_rocm_write_names(struct names* t) {
  t->op_name = S.buffer_op_name;
  t->domain = RT_ROCP_DOMAIN_OPS;
  size_t nkinds = t->n;
  for (size_t i = 0; i < nkinds; i++) {
    uint32_t k = t->v[i].id;
    if (k < MAX_KINDS && G.enabled[k]) S.iterate_buffer_ops(k, on_op, t);
  }
  return rt_rocm_wrote(rt_writer_api_names(G.w, t->v, (uint32_t)t->n));
}

/* ------------------------------------------------------------------------------------------------------------------ */
/* Agents (AGENTS chunk, docs/format.md §12)                                                                          */
/* ------------------------------------------------------------------------------------------------------------------ */

#define AGENT_FIXED 120u

static rt_rocp_status on_agents(int32_t version, const void** agents, size_t n, void* data) {
  (void)version;
  rt_buf* b = (rt_buf*)data;
  rt_buf_u32(b, (uint32_t)n);
  rt_buf_u32(b, AGENT_FIXED);
  for (size_t i = 0; i < n; i++) {
    const rt_rocp_agent* a = (const rt_rocp_agent*)agents[i];
    uint64_t size = a ? a->size : 0;
    if (size < RT_ROCP_AGENT_SIZE_V0) { /* not a layout we know: an empty entry keeps the count right */
      uint8_t zero[AGENT_FIXED] = {0};
      rt_buf_bytes(b, zero, sizeof zero);
      for (int s = 0; s < 4; s++) rt_buf_cstr(b, NULL);
      continue;
    }
    size_t start = b->len;
    rt_buf_u64(b, a->id.handle);
    rt_buf_u32(b, a->type);
    rt_buf_u32(b, a->node_id);
    rt_buf_i32(b, a->logical_node_id);
    rt_buf_i32(b, a->logical_node_type_id);
    rt_buf_u32(b, a->cu_count);
    rt_buf_u32(b, a->simd_count);
    rt_buf_u32(b, a->simd_per_cu);
    rt_buf_u32(b, a->max_waves_per_simd);
    rt_buf_u32(b, a->max_waves_per_cu);
    rt_buf_u32(b, a->wave_front_size);
    rt_buf_u32(b, a->lds_size_in_kb);
    rt_buf_u32(b, a->workgroup_max_size);
    rt_buf_u32(b, a->max_engine_clk_fcompute);
    rt_buf_u32(b, a->gfx_target_version);
    rt_buf_u32(b, a->num_xcc);
    rt_buf_u32(b, a->family_id);
    rt_buf_u16(b, a->vendor_id);
    rt_buf_u16(b, a->device_id);
    rt_buf_u32(b, a->location_id);
    rt_buf_u32(b, a->domain);
    rt_buf_u32(b, 0);
    rt_buf_u64(b, a->gpu_id);
    rt_buf_u64(b, a->local_mem_size);
    uint8_t uuid[16] = {0};
    if (size >= sizeof(rt_rocp_agent)) memcpy(uuid, a->uuid, sizeof uuid);
    rt_buf_bytes(b, uuid, sizeof uuid);
    if (!b->oom && b->len - start != AGENT_FIXED) b->oom = 1; /* layout slip: refuse the chunk */
    rt_buf_cstr(b, a->name);
    rt_buf_cstr(b, a->product_name);
    rt_buf_cstr(b, a->vendor_name);
    rt_buf_cstr(b, a->model_name);
  }
  return RT_ROCP_STATUS_SUCCESS;
}

int rt_rocm_write_agents(void) {
  if (!S.query_agents) return 0;
  rt_buf b;
  rt_buf_init(&b);
  /* the SDK refuses a struct size larger than its own (agent.cpp): 296 bytes before 1.0 */
  size_t agent_size = G.v1 ? sizeof(rt_rocp_agent) : RT_ROCP_AGENT_SIZE_V0;
  rt_rocp_status st = S.query_agents(RT_ROCP_AGENT_INFO_VERSION_0, on_agents, agent_size, &b);
  int rc = 0;
  if (st != RT_ROCP_STATUS_SUCCESS || b.len == 0) {
    rt_rocm_logrec(RT_V_WARN, "rocprofiler_query_available_agents failed: %s (%d); no AGENTS table",
                   rt_rocm_status_text(st), st);
  } else if (b.oom || b.len > RT_MAX_CHUNK_PAYLOAD) {
    rc = -ENOMEM;
  } else {
    rc = rt_rocm_wrote(rt_writer_chunk(G.w, RT_CHUNK_AGENTS, b.data, (uint32_t)b.len));
  }
  rt_buf_free(&b);
  return rc;
}
