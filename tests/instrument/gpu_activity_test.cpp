// tests/instrument/gpu_activity_test.cpp — instrument/gpu_activity.h: GPU activity (as cupti.cpp decodes it) into
// trace rows, read back from a real session: stream and API tracks, span ids in start order, kernels joined to the
// span that launched them (correlation before or after the kernel), copy bytes, sync calls on their thread.
#include "instrument/gpu_activity.h"

#include <doctest/doctest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "instrument/session.h"
#include "tools/check.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

using namespace gb::trace;

namespace {

GpuActivity kernel(std::int64_t corr, std::int64_t start, std::int64_t stream = 7) {
  GpuActivity a;
  a.kind = GpuActivityKind::kernel;
  a.name = "void gb::cuda::pointwise_kernel<float>(gb::cuda::PointwiseArgs)";
  a.start_ns = start;
  a.end_ns = start + 1000;
  a.device = 0;
  a.stream = stream;
  a.correlation = corr;
  a.grid = {4, 2, 1};
  a.block = {128, 1, 1};
  a.registers = 32;
  a.shared_mem = 1536;
  return a;
}

GpuActivity host(GpuActivityKind kind, const char* name, std::int64_t corr, std::int64_t start, std::int64_t tid) {
  GpuActivity a;
  a.kind = kind;
  a.name = name;
  a.start_ns = start;
  a.end_ns = start + 500;
  a.correlation = corr;
  a.host_tid = tid;
  return a;
}

const ThreadRecord* thread_named(const std::vector<ThreadRecord>& ts, const std::string& name) {
  for (const auto& t : ts)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

TEST_CASE("kernels, copies, memsets and API calls become spans on stream and API tracks, kernels joined to their op") {
  TempDir tmp;
  const std::string path = tmp.file("gpu.db");
  const std::int64_t tid = syscall(SYS_gettid);
  Id op = 0, main_thread = 0;
  GpuActivityWriter w;
  {
    Session s(path, SessionOptions{.on_full = OnFull::block});
    REQUIRE(s.active());
    main_thread = thread_id();
    {
      Span launch(location("linear", SpanKind::op));
      op = launch.id();
    }
    REQUIRE(op != 0);
    w.correlate(11, op);  // the usual order: the correlation arrives before the kernel
    GpuActivity copy;
    copy.kind = GpuActivityKind::memcpy;
    copy.name = "Memcpy HtoD";
    copy.start_ns = 1'000;
    copy.end_ns = 1'800;
    copy.stream = 7;
    copy.correlation = 13;
    copy.bytes = 4096;
    GpuActivity set = copy;
    set.kind = GpuActivityKind::memset;
    set.name = "Memset";
    set.start_ns = 1'900;
    set.end_ns = 1'950;
    set.bytes = 256;
    GpuActivity sync = host(GpuActivityKind::sync, "Stream synchronize", 14, 9'000, 0);
    sync.stream = 7;  // the stream waited for; its track is still its thread's (sorted there by start, not stream)
    sync.start_ns = 1'200;  // before the launch on the API track: its id comes first
    // Out of order on purpose: the writer sorts a track's spans by start before numbering them.
    w.write({kernel(15, 8'000), kernel(12, 5'000), kernel(11, 2'000), copy, set,
             host(GpuActivityKind::api, "cudaLaunchKernel", 11, 1'500, tid), sync,
             host(GpuActivityKind::api, "cudaStreamSynchronize", 14, 8'900, tid),
             kernel(16, 3'000, /*stream=*/9)});
    CHECK(w.pending() == 3);  // 12, 15 and 16 wait for their correlation
    w.correlate(12, op);      // after its kernel: the waiting row is written now
    CHECK(w.pending() == 2);
    w.finish();               // 15 and 16 never got one: written without launch_span_id
    CHECK(w.pending() == 0);
  }
  CHECK(w.kernels_written() == 4);
  CHECK(w.unlinked_kernels() == 2);

  Reader r(path);
  const auto threads = r.all<ThreadRecord>();
  const ThreadRecord* stream7 = thread_named(threads, "cuda:0 stream 7");
  const ThreadRecord* stream9 = thread_named(threads, "cuda:0 stream 9");
  const ThreadRecord* api = thread_named(threads, "CUDA API: main");
  REQUIRE(stream7);
  REQUIRE(stream9);
  REQUIRE(api);
  CHECK(stream7->role == ThreadRole::cuda_stream);
  CHECK(stream7->os_tid == 0);
  CHECK(api->role == ThreadRole::other);
  CHECK(api->os_tid == tid);
  CHECK(api->id != main_thread);

  std::vector<SpanRecord> on7, on_api;
  for (const auto& s : r.all<SpanRecord>()) {
    if (s.thread_id == stream7->id) on7.push_back(s);
    if (s.thread_id == api->id) on_api.push_back(s);
  }
  std::sort(on7.begin(), on7.end(), [](auto& a, auto& b) { return a.id < b.id; });
  REQUIRE(on7.size() == 5);  // copy, memset, kernels at 2000, 5000, 8000: ids in start order
  const std::vector<std::int64_t> starts = {1'000, 1'900, 2'000, 5'000, 8'000};
  const std::vector<SpanKind> kinds = {SpanKind::cuda_memcpy, SpanKind::cuda_memset, SpanKind::cuda_kernel,
                                       SpanKind::cuda_kernel, SpanKind::cuda_kernel};
  for (std::size_t i = 0; i < on7.size(); ++i) {
    CAPTURE(i);
    CHECK(on7[i].id == span_id(stream7->id, static_cast<std::int64_t>(i) + 1));
    CHECK(on7[i].start_ns == starts[i]);
    CHECK(on7[i].kind == kinds[i]);
    CHECK_FALSE(on7[i].step.has_value());
    CHECK_FALSE(on7[i].seq.has_value());
  }
  CHECK(on7[0].end_ns == 1'800);
  CHECK(r.string(on7[0].name_id) == "Memcpy HtoD");
  CHECK(r.string(on7[2].name_id) == "void gb::cuda::pointwise_kernel<float>(gb::cuda::PointwiseArgs)");

  // The launch, the synchronize call, and the sync record: it carries no thread, and found this one through the
  // API call with its correlation id.
  REQUIRE(on_api.size() == 3);
  std::sort(on_api.begin(), on_api.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
  CHECK(r.string(on_api[0].name_id) == "Stream synchronize");
  CHECK(on_api[0].kind == SpanKind::cuda_api);
  CHECK(on_api[0].seq == 14);
  CHECK(r.string(on_api[1].name_id) == "cudaLaunchKernel");
  CHECK(on_api[1].kind == SpanKind::cuda_api);
  CHECK(on_api[1].seq == 11);  // the CUPTI correlation id: kernels.correlation_id
  CHECK(r.string(on_api[2].name_id) == "cudaStreamSynchronize");
  for (std::size_t i = 0; i < on_api.size(); ++i) CHECK(on_api[i].id == span_id(api->id, std::int64_t(i) + 1));

  auto ks = r.all<KernelRecord>();
  REQUIRE(ks.size() == 4);
  std::sort(ks.begin(), ks.end(), [](auto& a, auto& b) { return a.correlation_id < b.correlation_id; });
  CHECK(ks[0].correlation_id == 11);
  CHECK(ks[0].span_id == on7[2].id);
  CHECK(ks[0].launch_span_id == op);
  CHECK(ks[1].launch_span_id == op);  // 12: joined when its correlation came after it
  CHECK_FALSE(ks[2].launch_span_id.has_value());
  CHECK_FALSE(ks[3].launch_span_id.has_value());
  CHECK(ks[0].grid == "4,2,1");
  CHECK(ks[0].block == "128,1,1");
  CHECK(ks[0].registers == 32);
  CHECK(ks[0].shared_mem == 1536);
  CHECK(ks[0].stream == 7);
  CHECK(ks[3].stream == 9);

  int copies = 0;
  for (const auto& d : r.all<OpDetailsRecord>())
    if (d.span_id == on7[0].id) {
      ++copies;
      CHECK(d.bytes == 4096);
      CHECK(d.device == 0);
    } else if (d.span_id == on7[1].id) {
      ++copies;
      CHECK(d.bytes == 256);
    }
  CHECK(copies == 2);

  // `glassbox check` accepts it, and the op table's join (kernels launched by an op) sees both linked kernels.
  gb::tools::CheckResult check = gb::tools::check_trace(gb::query::TraceDb(path));
  for (const auto& p : check.problems) FAIL_CHECK(p.what);
  CHECK(check.kernels == 4);
}

TEST_CASE("a second session reuses the tracks; nothing is queued while no session records") {
  TempDir tmp;
  GpuActivityWriter idle;
  idle.write({kernel(1, 100)});  // no session: dropped, no crash
  idle.finish();
  Id first = 0;
  for (int run = 0; run < 2; ++run) {
    const std::string path = tmp.file("run" + std::to_string(run) + ".db");
    {
      Session s(path, SessionOptions{.on_full = OnFull::block});
      GpuActivityWriter w;
      w.write({kernel(1, 100, 3)});
      w.finish();
    }
    Reader r(path);
    const ThreadRecord* t = thread_named(r.all<ThreadRecord>(), "cuda:0 stream 3");
    REQUIRE(t);
    if (run == 0) first = t->id;
    CHECK(t->id == first);
    const auto spans = r.all<SpanRecord>();
    CHECK(std::count_if(spans.begin(), spans.end(), [&](auto& s) { return s.thread_id == t->id; }) == 1);
    CHECK(r.all<KernelRecord>().size() == 1);  // the idle writer's kernel went nowhere
  }
}
