// tests/instrument/cupti_test.cpp — instrument/cupti.h: CUPTI records decoded field by field (records built by hand,
// as CUPTI lays them out), API records carrying the system thread id on their thread's named track, and what a
// session says about GPU activity on a machine without a driver.
#include "instrument/cupti.h"

#include <doctest/doctest.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "instrument/session.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

#if GLASSBOX_WITH_CUPTI
#include <cupti.h>
#endif

using namespace gb::trace;
using detail::Decoded;
using detail::decode_activity;

#if GLASSBOX_WITH_CUPTI
TEST_CASE("decode_activity: kernels, copies, memsets, API calls, syncs and external correlations") {
  GpuActivity a;
  std::int64_t corr = 0;
  Id span = 0;
  const std::int64_t offset = 1'000'000;

  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z5scaleIfEvPT_i";
  k.start = 1'000'500;
  k.end = 1'002'500;
  k.deviceId = 1;
  k.streamId = 13;
  k.correlationId = 77;
  k.gridX = 256, k.gridY = 2, k.gridZ = 1;
  k.blockX = 128, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  REQUIRE(decode_activity(&k, offset, a, corr, span) == Decoded::activity);
  CHECK(a.kind == GpuActivityKind::kernel);
  CHECK(a.name == "void scale<float>(float*, int)");
  CHECK(a.start_ns == 500);
  CHECK(a.end_ns == 2500);
  CHECK(a.device == 1);
  CHECK(a.stream == 13);
  CHECK(a.correlation == 77);
  CHECK(a.grid == std::array<std::int64_t, 3>{256, 2, 1});
  CHECK(a.block == std::array<std::int64_t, 3>{128, 1, 1});
  CHECK(a.registers == 40);
  CHECK(a.shared_mem == 3072);

  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.bytes = 1 << 20;
  m.start = 1'010'000;
  m.end = 1'020'000;
  m.streamId = 7;
  m.correlationId = 78;
  a = {};
  REQUIRE(decode_activity(&m, offset, a, corr, span) == Decoded::activity);
  CHECK(a.kind == GpuActivityKind::memcpy);
  CHECK(a.name == "Memcpy DtoH");
  CHECK(a.bytes == 1 << 20);
  CHECK(a.start_ns == 10'000);
  CHECK(a.stream == 7);

  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 512;
  s.start = 1'000'000;
  s.end = 1'000'100;
  a = {};
  REQUIRE(decode_activity(&s, offset, a, corr, span) == Decoded::activity);
  CHECK(a.kind == GpuActivityKind::memset);
  CHECK(a.bytes == 512);
  CHECK(a.end_ns == 100);

  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  api.start = 1'000'200;
  api.end = 1'000'300;
  api.threadId = 4242;
  api.correlationId = 77;
  a = {};
  REQUIRE(decode_activity(&api, offset, a, corr, span) == Decoded::activity);
  CHECK(a.kind == GpuActivityKind::api);
  CHECK(a.name == "cudaLaunchKernel");  // the "_v7000" suffix dropped
  CHECK(a.host_tid == 4242);
  CHECK(a.correlation == 77);
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020;  // a question, not work: no span
  CHECK(decode_activity(&api, offset, a, corr, span) == Decoded::skip);
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  a = {};
  REQUIRE(decode_activity(&api, offset, a, corr, span) == Decoded::activity);
  CHECK(a.name == "cuLaunchKernel");
  api.cbid = CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent;  // driver calls other than launches only feed the joins
  CHECK(decode_activity(&api, offset, a, corr, span) == Decoded::skip);

  CUpti_ActivitySynchronization2 y{};
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  y.correlationId = 90;
  y.start = 1'000'000;
  y.end = 1'500'000;
  a = {};
  REQUIRE(decode_activity(&y, offset, a, corr, span) == Decoded::activity);
  CHECK(a.kind == GpuActivityKind::sync);
  CHECK(a.name == "Context synchronize");
  CHECK(a.stream == 0);
  CHECK(a.correlation == 90);

  CUpti_ActivityExternalCorrelation e{};
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  e.externalId = static_cast<std::uint64_t>(span_id(3, 41));
  e.correlationId = 77;
  REQUIRE(decode_activity(&e, offset, a, corr, span) == Decoded::correlation);
  CHECK(corr == 77);
  CHECK(span == span_id(3, 41));
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;  // someone else's ids (another tool): not ours
  CHECK(decode_activity(&e, offset, a, corr, span) == Decoded::skip);

  CUpti_Activity other{};
  other.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  CHECK(decode_activity(&other, offset, a, corr, span) == Decoded::skip);
}

namespace {
// A runtime API record as CUPTI writes it under CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM: threadId is the caller's gettid.
CUpti_ActivityAPI launch_record(std::uint32_t thread, std::uint32_t correlation, std::uint64_t start) {
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  api.start = start;
  api.end = start + 100;
  api.threadId = thread;
  api.correlationId = correlation;
  return api;
}
}  // namespace

TEST_CASE("API records carrying the system thread id land on the calling thread's named CUDA API track") {
  TempDir tmp;
  const std::string path = tmp.file("api.db");
  const auto main_tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  {
    Session s(path, SessionOptions{.on_full = OnFull::block});
    REQUIRE(s.active());
    (void)thread_id();  // the main thread is known to the trace as "main"
    std::uint32_t loader_tid = 0;
    std::uint64_t loader_pthread = 0;
    std::atomic<int> phase{0};  // 1: the loader is named; 2: its records are written, it may end
    std::thread loader([&] {
      set_thread_name("loader");
      loader_tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
      loader_pthread = static_cast<std::uint64_t>(pthread_self());
      phase.store(1);
      while (phase.load() != 2) std::this_thread::yield();
    });
    while (phase.load() != 1) std::this_thread::yield();

    std::vector<GpuActivity> batch;
    std::int64_t corr = 0;
    Id span = 0;
    for (const CUpti_ActivityAPI& api :
         {launch_record(main_tid, 1, 1'000'100), launch_record(loader_tid, 2, 1'000'200),
          // what the default thread id type (pthread_self(), cut to 32 bits) would have written: no trace thread
          launch_record(static_cast<std::uint32_t>(loader_pthread), 3, 1'000'300)}) {
      GpuActivity a;
      REQUIRE(decode_activity(&api, 1'000'000, a, corr, span) == Decoded::activity);
      batch.push_back(std::move(a));
    }
    GpuActivityWriter w;
    w.write(std::move(batch));
    w.finish();
    phase.store(2);
    loader.join();
  }
  Reader r(path);
  std::map<Id, std::string> track_of;
  for (const auto& t : r.all<ThreadRecord>()) track_of[t.id] = t.name;
  std::map<std::int64_t, std::string> by_correlation;
  for (const auto& s : r.all<SpanRecord>())
    if (s.kind == SpanKind::cuda_api) {
      CHECK(r.string(s.name_id) == "cudaLaunchKernel");
      REQUIRE(s.seq.has_value());
      by_correlation[*s.seq] = track_of[s.thread_id];
    }
  REQUIRE(by_correlation.size() == 3);
  CHECK(by_correlation[1] == "CUDA API: main");
  CHECK(by_correlation[2] == "CUDA API: loader");
  CHECK(by_correlation[3].rfind("CUDA API: thread ", 0) == 0);
}
#endif

TEST_CASE("without a CUDA driver (or CUPTI) a session records as before and meta cupti says why GPU activity is off") {
  TempDir tmp;
  const std::string path = tmp.file("t.db");
  {
    Session s(path, SessionOptions{.on_full = OnFull::block});
    REQUIRE(s.active());
    CHECK((detail::g_span_sinks.load() & detail::kGpuSpans) == 0);  // no correlation pushes without collection
    GB_TRACE_SPAN(SpanKind::op, "still_recorded");
  }
  Reader r(path);
  const auto cupti = r.meta("cupti");
  REQUIRE(cupti.has_value());
  CAPTURE(*cupti);
#if GLASSBOX_WITH_CUPTI
  // The system thread id type is asked for before any kind is enabled: here it is the first call needing a driver.
  CHECK(cupti->rfind("off: cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM): ", 0) == 0);
  CHECK(cupti->find("glassbox env") != std::string::npos);
#else
  CHECK(*cupti == "off: this glassbox was built without the CUDA toolkit (CUPTI)");
#endif
  CHECK_FALSE(r.meta("cupti_kernels").has_value());  // written only by a collection that ran
  CHECK(r.all<SpanRecord>().size() == 1);
}

TEST_CASE("GLASSBOX_CUPTI=0 and SessionOptions::gpu_activity = false turn collection off, saying so") {
  TempDir tmp;
  for (int way = 0; way < 2; ++way) {
    const std::string path = tmp.file("t" + std::to_string(way) + ".db");
    if (way == 0) setenv("GLASSBOX_CUPTI", "0", 1);
    {
      SessionOptions o;
      o.gpu_activity = way == 0;
      Session s(path, o);
      REQUIRE(s.active());
    }
    unsetenv("GLASSBOX_CUPTI");
    CHECK(Reader(path).meta("cupti") == "off: turned off (GLASSBOX_CUPTI=0 or SessionOptions::gpu_activity)");
  }
}
