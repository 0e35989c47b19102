// instrument/cupti.cpp — CUPTI's activity buffers into the trace (contract in cupti.h). Built without CUPTI
// (GLASSBOX_WITH_CUPTI unset: no CUDA toolkit, or -DGLASSBOX_CUDA=OFF), collection is "off" and says so.
#include "instrument/cupti.h"

#include <cstdlib>
#include <cstring>

#include "instrument/probe.h"

#if GLASSBOX_WITH_CUPTI
#include <cupti.h>
#include <cxxabi.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#endif

namespace gb::trace::detail {

namespace {
constexpr const char* kTurnedOff = "off: turned off (GLASSBOX_CUPTI=0 or SessionOptions::gpu_activity)";

bool env_off() {
  const char* v = std::getenv("GLASSBOX_CUPTI");
  return v && std::strcmp(v, "0") == 0;
}
}  // namespace

#if GLASSBOX_WITH_CUPTI

namespace {

constexpr std::int64_t kClockBase = std::int64_t(1) << 50;  // keeps CUPTI's unsigned timestamps positive
constexpr std::size_t kBufferBytes = std::size_t(8) << 20;

// CUPTI's clock (the timestamp callback): ns from kClockBase, continuous and increasing over the whole process.
// CUPTI converts GPU timestamps by interpolating between its calls of the callback, so the callback must never jump
// back, as it would if a second session started it over at 0: each session's map continues the last one's value
// from the instant it is published, and the session's offset (kClockBase + base_ns) maps it back onto its own clock.
struct ClockMap {
  std::int64_t tick0 = 0;   // the session's start (its TickClock)
  double ns_per_tick = 1.0;
  std::int64_t base_ns = 0;  // the callback's value at tick0, less kClockBase
  std::int64_t at(std::int64_t t) const {
    return base_ns + static_cast<std::int64_t>(static_cast<double>(t - tick0) * ns_per_tick);
  }
};
std::atomic<const ClockMap*> g_clock{nullptr};  // never freed: CUPTI may call the callback at any time

std::uint64_t CUPTIAPI trace_clock() {
  const ClockMap* c = g_clock.load(std::memory_order_acquire);
  return static_cast<std::uint64_t>(kClockBase + (c ? c->at(ticks()) : 0));
}

// Publishes the map of the session starting with `clock`, continuing the previous one at this instant; returns the
// session's offset (trace ns = callback value - offset).
std::int64_t continue_clock(const TickClock& clock) {
  const ClockMap* prev = g_clock.load(std::memory_order_acquire);
  const std::int64_t now = ticks();
  auto* next = new ClockMap{clock.start_ticks(), clock.ns_per_tick(), 0};
  if (prev) next->base_ns = prev->at(now) - next->at(now);  // next->at(now) == prev->at(now): no step, no way back
  g_clock.store(next, std::memory_order_release);
  return kClockBase + next->base_ns;
}

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "CUPTI error " + std::to_string(static_cast<int>(r));
  return s;
}

struct State {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<std::uint8_t*, std::size_t>> full;  // completed buffers, oldest first
  bool stopping = false;
  std::thread consumer;
  GpuActivityWriter writer;
  std::int64_t offset = 0;  // trace ns = CUPTI timestamp - offset
  std::atomic<std::uint64_t> dropped{0};
};
// The collection of the session that records (session.cpp: one at a time). CUPTI delivers buffers from its own
// worker thread as well as inside cuptiActivityFlushAll, so a callback may be running while the session stops: it
// holds g_state_mu for as long as it uses the state, and stop_gpu_activity() clears g_state under it before
// deleting, so no callback ever reaches freed state (a late one frees its buffer instead).
std::mutex g_state_mu;
State* g_state = nullptr;  // guarded by g_state_mu

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;  // no buffer: CUPTI drops and counts the records
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  std::lock_guard state_lock(g_state_mu);
  State* s = g_state;
  if (!s || !buffer || valid == 0) {
    std::free(buffer);
    return;
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
    s->dropped.fetch_add(dropped, std::memory_order_relaxed);
  {
    std::lock_guard lock(s->mu);
    s->full.emplace_back(buffer, valid);
  }
  s->cv.notify_one();
}

// The background thread: decodes each completed buffer and hands its rows to the writer.
void consume(State& s) {
  for (;;) {
    std::pair<std::uint8_t*, std::size_t> b;
    {
      std::unique_lock lock(s.mu);
      s.cv.wait(lock, [&] { return !s.full.empty() || s.stopping; });
      if (s.full.empty()) return;
      b = s.full.front();
      s.full.pop_front();
    }
    std::vector<GpuActivity> batch;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(b.first, b.second, &record) == CUPTI_SUCCESS) {
      GpuActivity a;
      std::int64_t correlation = 0;
      Id span = 0;
      switch (decode_activity(record, s.offset, a, correlation, span)) {
        case Decoded::activity: batch.push_back(std::move(a)); break;
        case Decoded::correlation: s.writer.correlate(correlation, span); break;
        case Decoded::skip: break;
      }
    }
    std::free(b.first);
    s.writer.write(std::move(batch));
  }
}

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};

const char* kind_name(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    default: return "?";
  }
}

std::string demangle(const char* name) {
  if (!name) return "(unnamed kernel)";
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = status == 0 && out ? out : name;
  std::free(out);
  return s;
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; cached per (domain, cbid).
const std::string& api_name(CUpti_CallbackDomain domain, std::uint32_t cbid) {
  static std::mutex mu;
  static auto* names = new std::unordered_map<std::uint64_t, std::string>;
  std::lock_guard lock(mu);
  auto [it, fresh] = names->try_emplace((std::uint64_t(domain) << 32) | cbid);
  if (fresh) {
    const char* n = nullptr;
    std::string s = cuptiGetCallbackName(domain, cbid, &n) == CUPTI_SUCCESS && n ? n : "cuda api " + std::to_string(cbid);
    if (auto v = s.rfind("_v"); v != std::string::npos && v + 2 < s.size() &&
                                s.find_first_not_of("0123456789", v + 2) == std::string::npos)
      s.resize(v);
    it->second = std::move(s);
  }
  return it->second;
}

// Runtime calls that only ask a question: not written as spans (they would outnumber the launches).
bool trivial(const std::string& n) {
  static const char* const kQuestions[] = {
      "cudaGetDevice",          "cudaSetDevice",          "cudaGetLastError",     "cudaPeekAtLastError",
      "cudaGetDeviceCount",     "cudaDeviceGetAttribute", "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo",
      "cudaPointerGetAttributes", "cudaFuncGetAttributes", "cudaGetDeviceProperties", "cudaDriverGetVersion",
      "cudaRuntimeGetVersion"};
  for (const char* q : kQuestions)
    if (n == q) return true;
  return false;
}

const char* memcpy_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy (array)";
  }
}

const char* sync_name(CUpti_ActivitySynchronizationType t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context synchronize";
    default: return "Synchronize";
  }
}

std::int64_t ns(std::uint64_t ts, std::int64_t offset) { return static_cast<std::int64_t>(ts) - offset; }

// What kernel, copy and memset records share: their time on the GPU, device, stream and correlation id.
template <class R>
void device_work(const R* r, std::int64_t offset, GpuActivityKind kind, GpuActivity& a) {
  a.kind = kind;
  a.start_ns = ns(r->start, offset);
  a.end_ns = ns(r->end, offset);
  a.device = static_cast<int>(r->deviceId);
  a.stream = r->streamId;
  a.correlation = r->correlationId;
}

}  // namespace

Decoded decode_activity(const void* record, std::int64_t offset, GpuActivity& a, std::int64_t& correlation,
                        Id& span) {
  switch (static_cast<const CUpti_Activity*>(record)->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = static_cast<const CUpti_ActivityKernel10*>(record);
      device_work(k, offset, GpuActivityKind::kernel, a);
      a.name = demangle(k->name);
      a.grid = {k->gridX, k->gridY, k->gridZ};
      a.block = {k->blockX, k->blockY, k->blockZ};
      a.registers = k->registersPerThread;
      a.shared_mem = std::int64_t(k->staticSharedMemory) + k->dynamicSharedMemory;
      return Decoded::activity;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = static_cast<const CUpti_ActivityMemcpy6*>(record);
      device_work(m, offset, GpuActivityKind::memcpy, a);
      a.name = memcpy_name(m->copyKind);
      a.bytes = static_cast<std::int64_t>(m->bytes);
      return Decoded::activity;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = static_cast<const CUpti_ActivityMemset4*>(record);
      device_work(m, offset, GpuActivityKind::memset, a);
      a.name = "Memset";
      a.bytes = static_cast<std::int64_t>(m->bytes);
      return Decoded::activity;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* r = static_cast<const CUpti_ActivityAPI*>(record);
      const bool runtime = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      const std::string& name = api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, r->cbid);
      if (runtime ? trivial(name) : name.rfind("cuLaunch", 0) != 0) return Decoded::skip;
      a.kind = GpuActivityKind::api;
      a.name = name;
      a.start_ns = ns(r->start, offset);
      a.end_ns = ns(r->end, offset);
      a.correlation = r->correlationId;
      a.host_tid = r->threadId;
      return Decoded::activity;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* y = static_cast<const CUpti_ActivitySynchronization2*>(record);
      a.kind = GpuActivityKind::sync;
      a.name = sync_name(y->type);
      a.start_ns = ns(y->start, offset);
      a.end_ns = ns(y->end, offset);
      a.correlation = y->correlationId;
      a.stream = y->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : y->streamId;
      return Decoded::activity;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = static_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) return Decoded::skip;
      correlation = e->correlationId;
      span = static_cast<Id>(e->externalId);
      return Decoded::correlation;
    }
    default: return Decoded::skip;
  }
}

void gpu_push(Id span) noexcept {  // a failure only leaves the kernel unjoined (cupti_unlinked_kernels counts it)
  (void)cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, static_cast<std::uint64_t>(span));
}
void gpu_pop() noexcept {
  std::uint64_t last = 0;
  (void)cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

std::string start_gpu_activity(const TickClock& clock, bool wanted) {
  std::string status;
  if (!wanted || env_off()) {
    status = kTurnedOff;
    set_meta("cupti", status);
    return status;
  }
  static const bool registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS;
  static const bool own_clock = cuptiActivityRegisterTimestampCallback(trace_clock) == CUPTI_SUCCESS;
  auto s = std::make_unique<State>();
  std::string failed;
  if (!registered) failed = "cuptiActivityRegisterCallbacks failed";
  if (failed.empty() && own_clock) {
    s->offset = continue_clock(clock);
  } else if (failed.empty()) {  // CUPTI's clock: shifted onto the trace's at this instant
    std::uint64_t now = 0;
    if (CUptiResult r = cuptiGetTimestamp(&now); r != CUPTI_SUCCESS)
      failed = "cuptiGetTimestamp: " + result_text(r);
    s->offset = static_cast<std::int64_t>(now) - clock.ns(ticks());
  }
  // CUPTI's default thread id is pthread_self(); the trace's threads carry the kernel's id (gettid, probe.h
  // ThreadBuffer::os_tid): the system id puts each API call on its thread's "CUDA API: <name>" track. Set before
  // any kind is enabled (CUPTI: "must not be changed during the profiling session").
  if (failed.empty())
    if (CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); r != CUPTI_SUCCESS)
      failed = "cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM): " + result_text(r);
  std::size_t enabled = 0;
  for (CUpti_ActivityKind k : kKinds) {
    if (!failed.empty()) break;
    if (CUptiResult r = cuptiActivityEnable(k); r != CUPTI_SUCCESS)
      failed = std::string("cuptiActivityEnable(") + kind_name(k) + "): " + result_text(r);
    else
      ++enabled;
  }
  if (!failed.empty()) {
    for (std::size_t i = 0; i < enabled; ++i) (void)cuptiActivityDisable(kKinds[i]);
    status = "off: " + failed +
             " (no usable CUDA driver or GPU here? `glassbox env` says which piece is missing; a profiler such as "
             "Nsight Systems may hold CUPTI)";
    set_meta("cupti", status);
    return status;
  }
  State* raw = s.release();
  raw->consumer = std::thread(consume, std::ref(*raw));
  {
    std::lock_guard lock(g_state_mu);
    g_state = raw;
  }
  g_span_sinks.fetch_or(kGpuSpans, std::memory_order_release);
  status = own_clock ? "on" : "on (CUPTI's clock, shifted onto the trace's)";
  set_meta("cupti", status);
  return status;
}

void stop_gpu_activity() {
  State* s = nullptr;
  {
    std::lock_guard lock(g_state_mu);
    s = g_state;
  }
  if (!s) return;
  g_span_sinks.fetch_and(static_cast<std::uint8_t>(~kGpuSpans), std::memory_order_release);
  // Forced: buffers with records still incomplete come back too (the engine's hook has waited for the devices).
  // Flushed again after disabling, for the records written in between. A failure here can only lose records.
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind k : kKinds) (void)cuptiActivityDisable(k);
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard lock(g_state_mu);  // waits for a callback still using the state; later ones free their buffer
    g_state = nullptr;
  }
  {
    std::lock_guard lock(s->mu);
    s->stopping = true;
  }
  s->cv.notify_all();
  s->consumer.join();
  s->writer.finish();
  set_meta("cupti_dropped_records", std::to_string(s->dropped.load()));
  set_meta("cupti_kernels", std::to_string(s->writer.kernels_written()));
  set_meta("cupti_unlinked_kernels", std::to_string(s->writer.unlinked_kernels()));
  delete s;
}

#else  // no CUPTI in this build

Decoded decode_activity(const void*, std::int64_t, GpuActivity&, std::int64_t&, Id&) { return Decoded::skip; }
void gpu_push(Id) noexcept {}
void gpu_pop() noexcept {}

std::string start_gpu_activity(const TickClock&, bool wanted) {
  const std::string status =
      !wanted || env_off() ? kTurnedOff : "off: this glassbox was built without the CUDA toolkit (CUPTI)";
  set_meta("cupti", status);
  return status;
}
void stop_gpu_activity() {}

#endif

}  // namespace gb::trace::detail
