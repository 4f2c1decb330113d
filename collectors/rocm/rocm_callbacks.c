/*
 * rawtrace ROCm collector: callback tracing: kernel symbols (code-object callbacks) and ROCTx messages,
 * each copied into a small queued item; the callback kinds and operations found by name.
 */
#include "rocm_internal.h"
#include "rawtrace_heap.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Callback tracing: kernel symbols and ROCTx messages                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

/** Callback kinds carrying ROCTx messages, and their operations whose first argument is the message
 * (marker/api_args.h). MARKER_CORE_RANGE_API (1.0) gives its range records a correlation id of their own, so its
 * messages come from its own callbacks. */
static const struct {
  const char* kind;
  const char* ops[3];
} kMessageKinds[2] = {{"MARKER_CORE_API", {"roctxMarkA", "roctxRangePushA", "roctxRangeStartA"}},
                      {"MARKER_CORE_RANGE_API", {"roctxMarkA", "roctxThreadRangeA", "roctxProcessRangeA"}}};

static size_t bounded_len(const char* s) { return s ? strnlen(s, MAX_MESSAGE) : 0; }

static void on_kernel_symbol(const rt_rocp_kernel_symbol_data* d) {
  if (!d || d->size < sizeof *d) return;
  size_t len = bounded_len(d->kernel_name);
  if (!rt_rocm_small_reserve(sizeof(struct ksym_item) + len + 1)) return;
  struct ksym_item* k = rt_rocm_fault("items") ? NULL : (struct ksym_item*)rt_malloc(sizeof *k + len + 1);
  if (!k) {
    atomic_fetch_sub(&G.small_bytes, sizeof(struct ksym_item) + len + 1);
    rt_rocm_lost_small(1);
    return;
  }
  memset(k, 0, sizeof *k);
  k->it.type = IT_KSYM;
  k->kernel_id = d->kernel_id;
  k->code_object_id = d->code_object_id;
  k->kernel_object = d->kernel_object;
  k->kernarg = d->kernarg_segment_size;
  k->lds = d->group_segment_size;
  k->scratch = d->private_segment_size;
  k->sgpr = d->sgpr_count;
  k->arch_vgpr = d->arch_vgpr_count;
  k->accum_vgpr = d->accum_vgpr_count;
  k->len = (uint32_t)len;
  if (len) memcpy(k->name, d->kernel_name, len);
  k->name[len] = 0;
  atomic_fetch_add(&G.n_ksyms, 1);
  rt_rocm_enqueue(&k->it);
}

static void on_marker(uint64_t corr, const rt_rocp_marker_api_data* d) {
  if (!d || d->size < sizeof *d) return;
  size_t len = bounded_len(d->message);
  if (!rt_rocm_small_reserve(sizeof(struct marker_item) + len + 1)) return;
  struct marker_item* m = rt_rocm_fault("items") ? NULL : (struct marker_item*)rt_malloc(sizeof *m + len + 1);
  if (!m) {
    atomic_fetch_sub(&G.small_bytes, sizeof(struct marker_item) + len + 1);
    rt_rocm_lost_small(1);
    return;
  }
  m->it.type = IT_MARKER;
  m->corr = corr;
  m->len = (uint32_t)len;
  if (len) memcpy(m->msg, d->message, len);
  m->msg[len] = 0;
  atomic_fetch_add(&G.n_messages, 1);
  rt_rocm_enqueue(&m->it);
}

static void on_callback(uint32_t kind, int32_t op, uint32_t phase, uint64_t corr, void* payload) {
  if (atomic_load(&G.sink_closed) || phase != RT_ROCP_PHASE_ENTER) return;
  if (kind == G.cb_code_object && op == G.op_ksym) {
    on_kernel_symbol((const rt_rocp_kernel_symbol_data*)payload);
  } else {
    for (int m = 0; m < 2; m++)
      for (int i = 0; kind == G.cb_marker[m] && i < 3; i++)
        if (op == G.msg_ops[m][i]) on_marker(corr, (const rt_rocp_marker_api_data*)payload);
  }
}

/* The callback record is passed by value and its layout changed in 1.0: one entry point per layout. */
static void on_callback_v0(rt_rocp_callback_record_v0 r, rt_rocp_user_data* user, void* data) {
  (void)user;
  (void)data;
  on_callback(r.kind, r.operation, r.phase, r.correlation_id.internal, r.payload);
}

static void on_callback_v1(rt_rocp_callback_record_v1 r, rt_rocp_user_data* user, void* data) {
  (void)user;
  (void)data;
  on_callback(r.kind, r.operation, r.phase, r.correlation_id.internal, r.payload);
}

struct op_lookup {
  rt_rocp_op_name_fn name_fn;
  const char* want;
  int32_t found;
};

static int on_op_lookup(uint32_t kind, int32_t op, void* data) {
  struct op_lookup* l = (struct op_lookup*)data;
  const char* name = NULL;
  uint64_t len = 0;
  if (l->name_fn(kind, op, &name, &len) == RT_ROCP_STATUS_SUCCESS && name && !strcmp(name, l->want)) {
    l->found = op;
    return 1;
  }
  return 0;
}

/* Operation of callback kind `kind` named `want`, or -1. */
static int32_t callback_op(uint32_t kind, const char* want) {
  struct op_lookup l = {S.callback_op_name, want, -1};
  if (S.iterate_callback_ops && S.callback_op_name) S.iterate_callback_ops(kind, on_op_lookup, &l);
  return l.found;
}

static int on_cb_kind(uint32_t kind, void* data) {
  const char* name = NULL;
  uint64_t len = 0;
  (void)data;
  if (S.callback_kind_name(kind, &name, &len) != RT_ROCP_STATUS_SUCCESS || !name) return 0;
  if (!strcmp(name, "CODE_OBJECT")) G.cb_code_object = kind;
  for (int m = 0; m < 2; m++)
    if (!strcmp(name, kMessageKinds[m].kind)) G.cb_marker[m] = kind;
  return 0;
}

void rt_rocm_configure_callbacks(void) {
  if (!S.configure_callback || !S.iterate_callback_kinds || !S.callback_kind_name) {
    rt_rocm_logrec(RT_V_WARN, "rocprofiler-sdk has no callback tracing: no kernel names or ROCTx messages");
    return;
  }
  S.iterate_callback_kinds(on_cb_kind, NULL);
  void* fn = G.v1 ? (void*)on_callback_v1 : (void*)on_callback_v0;
  if (G.cb_code_object != UINT32_MAX) {
    int32_t op = callback_op(G.cb_code_object, "CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER");
    if (op < 0) op = callback_op(G.cb_code_object, "DEVICE_KERNEL_SYMBOL_REGISTER"); /* 0.5 name */
    if (op >= 0) G.op_ksym = op;
    rt_rocp_status st = S.configure_callback(G.ctx, G.cb_code_object, NULL, 0, fn, NULL);
    if (st != RT_ROCP_STATUS_SUCCESS)
      rt_rocm_logrec(RT_V_WARN, "code-object callback tracing refused: %s (%d); kernels will have no names",
                     rt_rocm_status_text(st), st);
  }
  for (int m = 0; m < 2; m++) {
    if (G.cb_marker[m] == UINT32_MAX) continue;
    int32_t ops[3];
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
      G.msg_ops[m][i] = callback_op(G.cb_marker[m], kMessageKinds[m].ops[i]);
      if (G.msg_ops[m][i] >= 0) ops[n++] = G.msg_ops[m][i];
    }
    rt_rocp_status st = n ? S.configure_callback(G.ctx, G.cb_marker[m], ops, n, fn, NULL) : RT_ROCP_STATUS_SUCCESS;
    if (st != RT_ROCP_STATUS_SUCCESS)
      rt_rocm_logrec(RT_V_WARN, "%s callback tracing refused: %s (%d); its ranges will have no messages",
                     kMessageKinds[m].kind, rt_rocm_status_text(st), st);
  }
}
