// Kineto's JSON writer fed with the CUPTI records of a .rawtrace CUDA dump, so that Kineto and `rawtrace convert`
// can be timed on the same records on one machine (bench/kineto/compare.ts; built by bench/kineto/build.sh against
// pytorch/kineto's own sources, no GPU and no libcupti needed).
//
//   kineto_writer dump.rawtrace out.json   → prints {"records", "activities", "process_*_s", "save_*_s"}
//
// Two timed steps, as a PyTorch profiling session runs them:
//   process  what libkineto/src/CuptiActivityProfiler.cpp (processGpuActivities, handleCuptiActivity) does with the
//            records when the session stops: pass 1 the context → device and CUDA event tables, pass 2 one Kineto
//            wrapper per kept record (RuntimeActivity, DriverActivity, GpuActivity<…>, CudaSyncActivity,
//            CudaEventActivity, OverheadActivity) with its filters (blocklisted runtime cbids, untracked driver
//            cbids, stream waits on streams without device work) and each kernel's demangled name registered.
//   save     ActivityTrace::save → MemoryTraceLogger::log into a ChromeTraceLogger (libkineto/src/output_json.cpp):
//            what torch.profiler's export_chrome_trace runs. The file is Kineto's, byte for byte as it writes it.
// The profile has no CPU ops (a CUDA-activities-only session), so no wrapper is linked to one. The dump's records
// are read into memory before either step (in a real session they are CUPTI's buffers, already there); each
// kernel's name pointer is pointed at its string from the dump's STRINGS chunks, as CUPTI's own record holds it.
// The function and field names here are Kineto's and CUPTI's (cupti_activity.h of CUDA 13.0); the code is ours.
#include <cupti.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "Config.h"
#include "CuptiActivity.h"
#include "CuptiCbidRegistry.h"
#include "Demangle.h"
#include "DeviceProperties.h"
#include "KernelRegistry.h"
#include "output_json.h"

using namespace KINETO_NAMESPACE;

static double cpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double wallSeconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// What libcupti would answer, from the dump's own tables (no GPU, no libcupti): cuptiGetCallbackName from the
// API_NAMES chunk (names exactly as the recording's cuptiGetCallbackName returned them).
static std::map<std::pair<uint32_t, uint32_t>, std::string> apiNames;
static std::unordered_map<uint32_t, uint32_t> ctxToDevice;
extern "C" CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  auto it = apiNames.find({domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1u : 2u, cbid});
  if (it == apiNames.end()) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = it->second.c_str();
  return CUPTI_SUCCESS;
}
extern "C" CUptiResult cuptiGetResultString(CUptiResult, const char** s) {
  *s = "CUPTI_ERROR";
  return CUPTI_SUCCESS;
}
extern "C" CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc) {
  return CUPTI_ERROR_NOT_INITIALIZED;
}
namespace libkineto {
uint32_t contextIdtoDeviceId(uint32_t contextId) {
  auto it = ctxToDevice.find(contextId);
  return it != ctxToDevice.end() ? it->second : 0;
}
}  // namespace libkineto

template <class T>
static T rd(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s dump.rawtrace out.json\n", argv[0]);
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  struct stat st;
  fstat(fd, &st);
  size_t size = st.st_size;
  auto* file = static_cast<uint8_t*>(mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0));
  if (file == MAP_FAILED || size < 16 || memcmp(file, "RAWTRACE", 8) != 0) {
    fprintf(stderr, "%s: not a .rawtrace file\n", argv[1]);
    return 1;
  }

  // The container (docs/format.md): 16-byte preamble, then 24-byte chunk headers, payloads padded to 8.
  std::unordered_map<uint32_t, uint32_t> stride;
  std::unordered_map<uint64_t, std::string> strings;
  std::vector<std::pair<const uint8_t*, uint32_t>> buffers;
  for (size_t off = 16; off + 24 <= size;) {
    uint16_t type = rd<uint16_t>(file + off + 4);
    uint32_t len = rd<uint32_t>(file + off + 12);
    const uint8_t* p = file + off + 24;
    if (rd<uint32_t>(file + off) != 0x4B435452 || off + 24 + len > size) break;
    if (type == 3) {  // KIND_SIZES
      uint32_t n = rd<uint32_t>(p);
      for (uint32_t i = 0; i < n; i++) stride[rd<uint32_t>(p + 4 + 8 * i)] = rd<uint32_t>(p + 8 + 8 * i);
    } else if (type == 6) {  // STRINGS
      uint32_t n = rd<uint32_t>(p);
      const uint8_t* q = p + 4;
      for (uint32_t i = 0; i < n; i++) {
        uint64_t ptr = rd<uint64_t>(q);
        uint32_t sl = rd<uint32_t>(q + 8);
        strings[ptr] = std::string(reinterpret_cast<const char*>(q + 12), sl);
        q += 12 + sl;
      }
    } else if (type == 4) {  // API_NAMES
      uint32_t n = rd<uint32_t>(p);
      const uint8_t* q = p + 4;
      for (uint32_t i = 0; i < n; i++) {
        uint32_t sl = rd<uint32_t>(q + 8);
        apiNames[{rd<uint32_t>(q), rd<uint32_t>(q + 4)}] = std::string(reinterpret_cast<const char*>(q + 12), sl);
        q += 12 + sl;
      }
    } else if (type == 5) {  // ACTIVITY: a CUPTI buffer as delivered
      buffers.emplace_back(p, len);
    }
    off += 24 + ((len + 7) & ~size_t(7));
  }
  fprintf(stderr, "buffers %zu, strings %zu, kernel stride %u (Kineto's struct %zu)\n", buffers.size(),
          strings.size(), stride[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], sizeof(CUpti_ActivityKernelType));

  // A private, writable copy of the records (CUPTI's buffers are Kineto's to read for the whole session), with each
  // kernel's name pointer pointing at its string: what CUPTI's own buffer would hold.
  size_t total = 0;
  for (auto& b : buffers) total += b.second;
  std::vector<uint8_t> records(total);
  std::vector<const CUpti_Activity*> order;
  {
    size_t at = 0;
    for (auto& b : buffers) {
      memcpy(records.data() + at, b.first, b.second);
      for (uint32_t o = 0; o + 4 <= b.second;) {
        auto* rec = reinterpret_cast<CUpti_Activity*>(records.data() + at + o);
        auto s = stride.find(rec->kind);
        if (s == stride.end() || s->second == 0 || o + s->second > b.second) break;
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
          auto* k = reinterpret_cast<CUpti_ActivityKernelType*>(rec);
          auto it = strings.find(reinterpret_cast<uint64_t>(k->name));
          k->name = it == strings.end() ? "" : it->second.c_str();
        }
        order.push_back(rec);
        o += s->second;
      }
      at += b.second;
    }
  }
  fprintf(stderr, "records %zu\n", order.size());

  // Kineto's processing at the end of a profiling session (CuptiActivityProfiler::processGpuActivities: pass 1 the
  // context → device map, pass 2 handleCuptiActivity for each record), into the list the in-memory logger keeps.
  double c0 = cpuSeconds(), w0 = wallSeconds();
  // CUDA event records by (context, event), sorted by correlation id: what a stream-wait or event sync waited for.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<uint32_t, uint32_t>>> waitEvents;  // → (corr, stream)
  for (auto* rec : order) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
      auto* e = reinterpret_cast<const CUpti_ActivityCudaEventType*>(rec);
      auto& v = waitEvents[{e->contextId, e->eventId}];
      v.insert(std::lower_bound(v.begin(), v.end(), std::make_pair(e->correlationId, 0u)),
               {e->correlationId, e->streamId});
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      auto* k = reinterpret_cast<const CUpti_ActivityKernelType*>(rec);
      ctxToDevice.emplace(k->contextId, k->deviceId);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      auto* m = reinterpret_cast<const CUpti_ActivityMemsetType*>(rec);
      ctxToDevice.emplace(m->contextId, m->deviceId);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpyType*>(rec);
      ctxToDevice.emplace(m->contextId, m->deviceId);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoPType*>(rec);
      ctxToDevice.emplace(m->srcContextId, m->srcDeviceId);
      ctxToDevice.emplace(m->dstContextId, m->dstDeviceId);
    }
  }
  std::deque<std::unique_ptr<ITraceActivity>> kept;
  std::set<std::pair<int64_t, int64_t>> streams;
  std::vector<std::function<void()>> deferredWaits;
  auto& cbids = CuptiCbidRegistry::instance();
  for (auto* rec : order) {
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
        if (cbids.isBlocklisted(CallbackDomain::RUNTIME, a->cbid)) break;
        kept.push_back(std::make_unique<RuntimeActivity>(a, nullptr, a->threadId));
        break;
      }
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
        if (!isTrackedDriverCbid(*a)) break;
        kept.push_back(std::make_unique<DriverActivity>(a, nullptr, a->threadId));
        break;
      }
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<const CUpti_ActivityKernelType*>(rec);
        KernelRegistry::singleton()->recordKernel(k->deviceId, demangle(k->name), k->correlationId);
        kept.push_back(std::make_unique<GpuActivity<CUpti_ActivityKernelType>>(k, nullptr));
        streams.insert({k->deviceId, k->streamId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemcpyType*>(rec);
        kept.push_back(std::make_unique<GpuActivity<CUpti_ActivityMemcpyType>>(m, nullptr));
        streams.insert({m->deviceId, m->streamId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemsetType*>(rec);
        kept.push_back(std::make_unique<GpuActivity<CUpti_ActivityMemsetType>>(m, nullptr));
        streams.insert({m->deviceId, m->streamId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoPType*>(rec);
        kept.push_back(std::make_unique<GpuActivity<CUpti_ActivityMemcpyPtoPType>>(m, nullptr));
        streams.insert({m->deviceId, m->streamId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
        auto* e = reinterpret_cast<const CUpti_ActivityCudaEventType*>(rec);
        kept.push_back(std::make_unique<CudaEventActivity>(e, nullptr));
        if (static_cast<int32_t>(e->streamId) != -1) streams.insert({contextIdtoDeviceId(e->contextId), e->streamId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        kept.push_back(
            std::make_unique<OverheadActivity>(reinterpret_cast<const CUpti_ActivityOverhead*>(rec), nullptr));
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        auto* s = reinterpret_cast<const CUpti_ActivitySynchronization*>(rec);
        auto dev = contextIdtoDeviceId(s->contextId);
        int32_t srcStream = -1, srcCorr = -1;
        if (isEventSync(s->type)) {  // the last CUDA event record on that event before this call
          auto it = waitEvents.find({s->contextId, s->cudaEventId});
          if (it != waitEvents.end()) {
            auto pos = std::upper_bound(it->second.begin(), it->second.end(),
                                        std::make_pair(s->correlationId, UINT32_MAX));
            if (pos != it->second.begin()) {
              srcCorr = std::prev(pos)->first;
              srcStream = std::prev(pos)->second;
            }
          }
        }
        auto add = [&kept, &streams, s, dev, srcStream, srcCorr]() {
          kept.push_back(std::make_unique<CudaSyncActivity>(s, nullptr, srcStream, srcCorr));
          if (static_cast<int32_t>(s->streamId) != -1) streams.insert({dev, s->streamId});
        };
        if (isWaitEventSync(s->type))
          deferredWaits.push_back([add, &streams, s, dev]() {
            if (streams.count({dev, s->streamId})) add();
          });
        else
          add();
        break;
      }
      default:
        break;
    }
  }
  for (auto& f : deferredWaits) f();
  double c1 = cpuSeconds(), w1 = wallSeconds();

  // Kineto's save (ActivityTrace::save → MemoryTraceLogger::log into a ChromeTraceLogger): what PyTorch's
  // export_chrome_trace runs.
  int64_t first = INT64_MAX, last = 0;
  for (auto& a : kept) {
    first = std::min(first, a->timestamp());
    last = std::max(last, a->timestamp() + a->duration());
  }
  {
    ChromeTraceLogger logger(argv[2]);
    logger.handleTraceStart({}, devicePropertiesJson());
    for (auto& s : streams) {
      logger.handleResourceInfo(
          ResourceInfo{s.second, s.second, s.first, fmt::format("stream {}", s.second)}, first);
    }
    for (auto& a : kept) a->log(logger);
    Config config;
    logger.finalizeTrace(config, nullptr, last);
  }
  double c2 = cpuSeconds(), w2 = wallSeconds();
  printf("{\"records\":%zu,\"activities\":%zu,\"process_cpu_s\":%.4f,\"process_wall_s\":%.4f,"
         "\"save_cpu_s\":%.4f,\"save_wall_s\":%.4f}\n",
         order.size(), kept.size(), c1 - c0, w1 - w0, c2 - c1, w2 - w1);
  return 0;
}
