/*
 * ABI truth against a real Intel PTI library (test/collectors/pti_abi.test.ts): loads the libpti_view.so named by
 * argv[1], then has the library's own ptiViewGetNextRecord walk buffers written from collectors/xpu/pti_abi.h.
 *
 *   pti_abi <libpti_view.so> <core libpti.so>
 *
 * Prints JSON lines on stdout:
 *   {"version":"1.2.0","gen":2,"core":"ok"|"<dlerror of the core>"}
 *   {"kind":K,"declared":N,"rc1":r,"rc2":r,"measured":M}   per kind 0..15: one record of kind K (our declared size;
 *        256 zero bytes where we declare none, N = 0) followed by an external-correlation record; M = the library's offset of the second
 *        record (-1 when it did not step), rc1/rc2 = the two calls' results
 *   {"names":group,"count":n,"max_id":m}   per API group 1 (Level Zero) and 3 (SYCL / UR): ids 0..4095 that
 *        ptiViewGetApiIdName names (the range the collector asks), and the highest
 *   {"group":g,"id":i,"rc":r,"name":"..."} the names of the ids Kineto-like traces use
 *   {"walk":n,"bytes":b,"ok":true|false,"detail":"..."}  one buffer holding one record of every declared kind,
 *        back to back with distinct correlation ids: every step must land on our next offset and the kind we wrote,
 *        and the call after the last record must say END_OF_BUFFER
 * Exit status 0 when the program ran (the test judges the numbers), 2 when the library cannot be used at all.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pti_abi.h"

static _Alignas(8) uint8_t buf[8192];

/* Bytes written for a kind we declare no record for: larger than any PTI record, so that if the library knows the
 * kind its stride shows (and the test fails: a kind the library emits that we do not declare). */
#define UNDECLARED_PROBE 256

/* Our declared record size for kind `k` in generation `gen` (1 = v1 records, PTI < 0.18; 2 = _v2, 0.18+), `comms` =
 * the communication record size of this version (0 where the version has no such view). 0 = no record declared. */
static size_t declared(uint32_t k, int gen, size_t comms) {
  switch (k) {
    case PTI_VIEW_DEVICE_GPU_KERNEL: return gen == 2 ? sizeof(pti_view_record_kernel_v2) : sizeof(pti_view_record_kernel);
    case PTI_VIEW_DRIVER_API:
    case PTI_VIEW_RUNTIME_API: return sizeof(pti_view_record_api);
    case PTI_VIEW_COLLECTION_OVERHEAD: return sizeof(pti_view_record_overhead);
    case PTI_VIEW_EXTERNAL_CORRELATION: return sizeof(pti_view_record_external_correlation);
    case PTI_VIEW_DEVICE_GPU_MEM_COPY:
      return gen == 2 ? sizeof(pti_view_record_memory_copy_v2) : sizeof(pti_view_record_memory_copy);
    case PTI_VIEW_DEVICE_GPU_MEM_FILL:
      return gen == 2 ? sizeof(pti_view_record_memory_fill_v2) : sizeof(pti_view_record_memory_fill);
    case PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P:
      return gen == 2 ? sizeof(pti_view_record_memory_copy_p2p_v2) : sizeof(pti_view_record_memory_copy_p2p);
    case PTI_VIEW_DEVICE_SYNCHRONIZATION: return sizeof(pti_view_record_synchronization);
    case PTI_VIEW_COMMUNICATION: return comms;
    default: return 0;
  }
}

/* Writes one record of kind `k` at `at` through our struct, with `corr` in its correlation field where it has one;
 * returns the bytes written. */
static size_t write_record(uint8_t* at, uint32_t k, int gen, size_t comms, uint32_t corr) {
  static const char name[] = "rawtrace_probe";
  size_t n = declared(k, gen, comms);
  union {
    pti_view_record_kernel_v2 kernel;
    pti_view_record_memory_copy_v2 copy;
    pti_view_record_memory_fill_v2 fill;
    pti_view_record_memory_copy_p2p_v2 p2p;
    pti_view_record_api api;
    pti_view_record_overhead overhead;
    pti_view_record_external_correlation ext;
    pti_view_record_synchronization sync;
    pti_view_record_comms comms;
    pti_view_record_comms_v017 comms017;
  } r;
  memset(&r, 0, sizeof r);
  switch (k) {
    case PTI_VIEW_DEVICE_GPU_KERNEL: r.kernel._name = name; r.kernel._correlation_id = corr; break;
    case PTI_VIEW_DRIVER_API:
    case PTI_VIEW_RUNTIME_API: r.api._correlation_id = corr; r.api._api_id = 17; break;
    case PTI_VIEW_COLLECTION_OVERHEAD: r.overhead._overhead_count = corr; break;
    case PTI_VIEW_EXTERNAL_CORRELATION: r.ext._correlation_id = corr; r.ext._external_id = corr; break;
    case PTI_VIEW_DEVICE_GPU_MEM_COPY: r.copy._name = name; r.copy._correlation_id = corr; break;
    case PTI_VIEW_DEVICE_GPU_MEM_FILL: r.fill._name = name; r.fill._correlation_id = corr; break;
    case PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P: r.p2p._name = name; r.p2p._correlation_id = corr; break;
    case PTI_VIEW_DEVICE_SYNCHRONIZATION: r.sync._correlation_id = corr; break;
    case PTI_VIEW_COMMUNICATION:
      if (comms == sizeof(pti_view_record_comms_v017)) r.comms017._name = name; else r.comms._name = name;
      break;
    default: n = UNDECLARED_PROBE; break; /* zeros after the kind: a library that knows the kind steps its size */
  }
  r.api._view_kind._view_kind = k; /* the base is the first member of every record */
  memcpy(at, &r, n);
  return n;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: pti_abi <libpti_view.so> <core libpti.so>\n");
    return 2;
  }
  void* view = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!view) {
    printf("{\"error\":\"dlopen(%s) failed\"}\n", argv[1]);
    fprintf(stderr, "pti_abi: dlopen %s: %s\n", argv[1], dlerror());
    return 2;
  }
  pti_version_fn version = (pti_version_fn)dlsym(view, "ptiVersion");
  pti_view_get_next_record_fn next = (pti_view_get_next_record_fn)dlsym(view, "ptiViewGetNextRecord");
  if (!version || !next) {
    printf("{\"error\":\"%s missing from %s\"}\n", version ? "ptiViewGetNextRecord" : "ptiVersion", argv[1]);
    return 2;
  }
  pti_version v = version();
  int gen = (v._major >= 1 || v._minor >= 18) ? 2 : 1;
  size_t comms = v._major >= 1 || v._minor >= 18 ? sizeof(pti_view_record_comms)
                 : v._minor == 17                ? sizeof(pti_view_record_comms_v017)
                                                 : 0;
  /* libpti_view dlopens the core itself; when that fails every view call answers NOT_IMPLEMENTED. Load it here too,
   * to say why. */
  void* core = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  const char* core_err = core ? NULL : dlerror();
  printf("{\"version\":\"%u.%u.%u\",\"gen\":%d,\"core\":\"", v._major, v._minor, v._patch, gen);
  if (core_err) {
    for (const char* p = core_err; *p; p++) putchar(*p == '"' || *p == '\\' ? '\'' : *p);
  } else {
    fputs("ok", stdout);
  }
  printf("\"}\n");

  for (uint32_t k = 0; k < 16; k++) {
    memset(buf, 0, sizeof buf);
    size_t first = write_record(buf, k, gen, comms, 1);
    size_t total = first + write_record(buf + first, PTI_VIEW_EXTERNAL_CORRELATION, gen, comms, 2);
    pti_view_record_base* rec = NULL;
    pti_result rc1 = next(buf, total, &rec);
    pti_result rc2 = rc1 == PTI_SUCCESS ? next(buf, total, &rec) : rc1;
    long measured = rc1 == PTI_SUCCESS && rc2 == PTI_SUCCESS && rec ? (long)((uint8_t*)rec - buf) : -1;
    printf("{\"kind\":%u,\"declared\":%zu,\"rc1\":%d,\"rc2\":%d,\"measured\":%ld}\n", k, declared(k, gen, comms),
           (int)rc1, (int)rc2, measured);
  }

  /* One buffer with every declared kind, back to back. */
  memset(buf, 0, sizeof buf);
  size_t offs[16], at = 0;
  uint32_t kinds[16], n = 0;
  for (uint32_t k = 1; k < 16; k++) {
    if (!declared(k, gen, comms)) continue;
    offs[n] = at;
    kinds[n] = k;
    at += write_record(buf + at, k, gen, comms, 100 + k);
    n++;
  }
  char detail[256] = "";
  int ok = 1;
  pti_view_record_base* rec = NULL;
  uint32_t i = 0;
  for (;; i++) {
    pti_result rc = next(buf, at, &rec);
    if (rc == PTI_STATUS_END_OF_BUFFER) {
      if (i != n) {
        ok = 0;
        snprintf(detail, sizeof detail, "END_OF_BUFFER after %u of %u records", i, n);
      }
      break;
    }
    if (rc != PTI_SUCCESS || i >= n) {
      ok = 0;
      snprintf(detail, sizeof detail, "step %u: result %d (expected %s)", i, (int)rc,
               i >= n ? "END_OF_BUFFER" : "SUCCESS");
      break;
    }
    size_t off = (size_t)((uint8_t*)rec - buf);
    if (off != offs[i] || rec->_view_kind != kinds[i]) {
      ok = 0;
      snprintf(detail, sizeof detail, "step %u: offset %zu kind %u, expected offset %zu kind %u", i, off,
               rec->_view_kind, offs[i], kinds[i]);
      break;
    }
  }
  pti_view_get_api_id_name_fn api_name = (pti_view_get_api_id_name_fn)dlsym(view, "ptiViewGetApiIdName");
  if (api_name) {
    static const uint32_t groups[] = {PTI_API_GROUP_LEVELZERO, PTI_API_GROUP_SYCL};
    for (size_t g = 0; g < 2; g++) {
      uint32_t count = 0, max_id = 0;
      for (uint32_t id = 0; id < 4096; id++) {
        const char* nm = NULL;
        if (api_name((pti_api_group_id)groups[g], id, &nm) == PTI_SUCCESS && nm && *nm) {
          count++;
          max_id = id;
        }
      }
      printf("{\"names\":%u,\"count\":%u,\"max_id\":%u}\n", groups[g], count, max_id);
    }
    static const uint32_t known[][2] = {{3, 17}, {3, 32}, {3, 33}, {3, 42}, {3, 97}, {1, 41}, {1, 42}, {1, 55}, {1, 84}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
      const char* nm = NULL;
      pti_result rc = api_name((pti_api_group_id)known[i][0], known[i][1], &nm);
      printf("{\"group\":%u,\"id\":%u,\"rc\":%d,\"name\":\"%s\"}\n", known[i][0], known[i][1], (int)rc,
             nm ? nm : "");
    }
  }
  printf("{\"walk\":%u,\"bytes\":%zu,\"ok\":%s,\"detail\":\"%s\"}\n", i, at, ok ? "true" : "false", detail);
  return 0;
}
