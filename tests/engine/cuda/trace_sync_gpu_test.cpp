// tests/engine/cuda/trace_sync_gpu_test.cpp — GPU tier: a traced training step on cuda, read back. CUPTI was on and
// dropped nothing; the session's end waited for the GPU (trace_sync.cpp), so every kernel is in the trace; every
// kernel joins the span that launched it (an op or an autograd node), forward ops name their module; GPU time sits on
// the trace's clock (a kernel starts after its launching span began, and within the trace); a host-to-device copy
// has its bytes; the API calls sit on the main thread's CUDA API track; `glassbox check` passes. A second session in
// the process has its GPU rows inside its own time range. A bad index found by a trace's last kernels is the
// program's IndexError after the trace's end (the end's wait does not swallow it), and the device goes on.
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "instrument/session.h"
#include "support/check.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

using gbtest::kGpu;

namespace {
namespace tr = gb::trace;
}  // namespace

TEST_CASE("a traced MLP step on cuda: every kernel joins the op or node that launched it, on the trace's clock") {
  TempDir tmp;
  const std::string path = tmp.file("gpu_step.db");
  gb::manual_seed(5);
  gb::nn::Sequential model(gb::nn::Linear(64, 128), gb::nn::ReLU(), gb::nn::Linear(128, 10));
  model->to(kGpu);
  gb::optim::SGD opt(model->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9));
  gb::Tensor x_cpu = gb::randn({32, 64});
  gb::Tensor y = gb::randint(0, 10, {32}).to(kGpu);
  {
    tr::Session s(path, tr::SessionOptions{.on_full = tr::OnFull::block});
    REQUIRE(s.active());
    for (int step = 0; step < 3; ++step) {
      tr::StepScope scope(step);
      gb::Tensor x = x_cpu.to(kGpu);  // 32 x 64 float32: 8192 bytes host to device
      opt.zero_grad();
      gb::Tensor loss = gb::nn::functional::cross_entropy(model->forward(x), y);
      loss.backward();
      opt.step();
    }
  }  // no synchronize here: the session's end must wait for the GPU itself

  tr::Reader r(path);
  REQUIRE(r.meta("cupti") == "on");
  CHECK(r.meta("cupti_dropped_records") == "0");
  const auto spans = r.all<tr::SpanRecord>();
  std::map<tr::Id, tr::SpanRecord> by_id;
  for (const auto& s : spans) by_id[s.id] = s;
  std::int64_t trace_end = 0;
  for (const auto& s : spans) trace_end = std::max(trace_end, s.end_ns);

  const auto kernels = r.all<tr::KernelRecord>();
  REQUIRE(kernels.size() >= 3 * 10);  // each step: two GEMMs forward, four backward, relu, softmax, loss, updates
  CHECK(r.meta("cupti_kernels") == std::to_string(kernels.size()));
  CHECK(r.meta("cupti_unlinked_kernels") == "0");
  std::set<std::string> launchers;
  int with_module = 0;
  for (const auto& k : kernels) {
    CAPTURE(k.span_id);
    REQUIRE(by_id.contains(k.span_id));
    const tr::SpanRecord& ks = by_id[k.span_id];
    CHECK(ks.kind == tr::SpanKind::cuda_kernel);
    CHECK(k.device == 0);
    REQUIRE(k.launch_span_id.has_value());
    REQUIRE(by_id.contains(*k.launch_span_id));
    const tr::SpanRecord& launch = by_id[*k.launch_span_id];
    CHECK((launch.kind == tr::SpanKind::op || launch.kind == tr::SpanKind::backward_node ||
           launch.kind == tr::SpanKind::optimizer));
    launchers.insert(*r.string(launch.name_id));
    if (launch.module_id) ++with_module;
    CHECK(ks.start_ns >= launch.start_ns);  // one clock: the GPU ran it after the launch began
    CHECK(ks.end_ns >= ks.start_ns);
    CHECK(ks.start_ns >= 0);
    CHECK(ks.end_ns <= trace_end);
    CHECK(k.grid != "0,0,0");
    CHECK(k.registers > 0);
  }
  CHECK(launchers.contains("linear"));
  CHECK(with_module > 0);  // forward ops ran inside the Linear modules

  // The three host-to-device copies of x, with their bytes; the API calls on main's CUDA API track.
  int copies_8k = 0;
  for (const auto& d : r.all<tr::OpDetailsRecord>())
    if (by_id.contains(d.span_id) && by_id[d.span_id].kind == tr::SpanKind::cuda_memcpy && d.bytes == 32 * 64 * 4)
      ++copies_8k;
  CHECK(copies_8k == 3);
  tr::Id api_track = -1;
  for (const auto& t : r.all<tr::ThreadRecord>())
    if (t.name == "CUDA API: main") api_track = t.id;
  REQUIRE(api_track >= 0);
  int launches = 0;
  for (const auto& s : spans)
    if (s.thread_id == api_track && r.string(s.name_id) == "cudaLaunchKernel") ++launches;
  CHECK(launches > 0);
}

namespace {
// Kernels in one session, read back: every GPU span of the trace lies within the trace's host time range.
void check_gpu_rows_inside(const std::string& path, int session) {
  CAPTURE(session);
  tr::Reader r(path);
  REQUIRE(r.meta("cupti") == "on");
  CHECK(r.meta("cupti_dropped_records") == "0");
  std::int64_t host_end = 0;
  int gpu = 0, api_on_main = 0;
  tr::Id main_api = -1;
  for (const auto& t : r.all<tr::ThreadRecord>())
    if (t.name == "CUDA API: main") main_api = t.id;
  const auto spans = r.all<tr::SpanRecord>();
  for (const auto& s : spans)
    if (s.kind == tr::SpanKind::op) host_end = std::max(host_end, s.end_ns);
  REQUIRE(host_end > 0);
  for (const auto& s : spans) {
    if (s.thread_id == main_api) ++api_on_main;
    if (s.kind != tr::SpanKind::cuda_kernel && s.kind != tr::SpanKind::cuda_memcpy) continue;
    ++gpu;
    CAPTURE(s.start_ns);
    CAPTURE(s.end_ns);
    CHECK(s.start_ns >= 0);
    CHECK(s.end_ns <= host_end + 1'000'000'000);  // waited for at the end: within a second of the last op
    CHECK(s.end_ns >= s.start_ns);
  }
  CHECK(gpu >= 3);
  CHECK(api_on_main > 0);
  const auto kernels = r.all<tr::KernelRecord>();
  REQUIRE_FALSE(kernels.empty());
  for (const auto& k : kernels) CHECK(k.launch_span_id.has_value());
}
}  // namespace

TEST_CASE("gpu: a second trace session in the process has its GPU rows on its own clock") {
  TempDir tmp;
  gb::Tensor a = gb::randn({256, 256}).to(kGpu);
  for (int session = 0; session < 2; ++session) {
    const std::string path = tmp.file("session" + std::to_string(session) + ".db");
    {
      tr::Session s(path, tr::SessionOptions{.on_full = tr::OnFull::block});
      REQUIRE(s.active());
      gb::Tensor b = gb::mm(a, a).relu().sum();
      (void)b.cpu();
    }
    if (session == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the second clock starts later
    check_gpu_rows_inside(path, session);
  }
}

TEST_CASE("gpu: a bad index found by a trace's last kernels is the program's IndexError after the trace's end") {
  TempDir tmp;
  gb::Tensor a = gb::arange(10).to(gb::kFloat).to(kGpu);
  {
    tr::Session s(tmp.file("bad.db"), tr::SessionOptions{.on_full = tr::OnFull::block});
    REQUIRE(s.active());
    gb::index_select(a, 0, gb::tensor(std::vector<int64_t>{3, 10}).to(kGpu));  // no wait: found on the device
  }  // the end waits for the device, and must leave the error to the program
  CHECK_THROWS_WITH_AS(gb::cuda::synchronize(),
                       doctest::Contains("index_select() on cuda:0: index 10 is out of bounds for dimension 0 with "
                                         "size 10"),
                       gb::IndexError);
  CHECK(gb::mm(a.view({10, 1}), a.view({1, 10})).sum().item<float>() == 2025.0f);  // the device goes on
}
