// bench/bench_trace_overhead.cpp — what tracing costs a training step with everything on (op spans and op_details,
// backward nodes, memory events, module spans, grad_stats, the autograd graph of the first steps, every anomaly
// detector: full detail, GLASSBOX_DETAIL=full), with the detectors off (GLASSBOX_ANOMALY=off), and between a long
// run's detail windows (the summary of every step and the flight recorder's rings, every detector on:
// GLASSBOX_DETAIL=summary), against the same step untraced. Three models: the
// MLP 784-1024-1024-10 at batch 256, a small CNN (two conv blocks with batch norm, batch 64 of 16x16), and a tiny
// MLP 32-64-64-4 at batch 32 where per-op costs dominate. Targets: <= 1.05x, <= 1.05x, <= 1.25x.
//
// The peer is PyTorch's own instrumentation of the same step in the same process: the profiler with input shapes,
// memory and FLOPs (the legacy CPU profiler: Debian's libtorch has no Kineto), and anomaly mode
// (DetectAnomalyGuard: NaN checks after every backward node). Each line's value is glassbox's traced/untraced
// ratio; peer_value is libtorch's instrumented/plain ratio. An argument picks the models whose name contains it.
#include <glassbox/glassbox.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <vector>
#include <filesystem>

#include "bench_common.h"

namespace F = gb::nn::functional;

namespace {

struct Model {
  std::string name;
  std::function<void()> gb_step, torch_step;
  int inner;  // steps per timing sample
};

// One SGD-with-momentum training step of each side on its own copy of the data; `call` runs the net (`(*net)(x)`
// for glassbox's holders, so module calls are traced as a user's are).
template <class GbNet, class TorchNet>
Model make_model(std::string name, int inner, std::shared_ptr<GbNet> net, std::shared_ptr<TorchNet> tnet,
                 gb::Tensor x, gb::Tensor y, torch::Tensor tx, torch::Tensor ty) {
  auto opt = std::make_shared<gb::optim::SGD>((*net)->parameters(), gb::optim::SGDOptions(0.01).momentum(0.9));
  auto topt = std::make_shared<torch::optim::SGD>((*tnet)->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  Model m;
  m.name = std::move(name);
  m.inner = inner;
  m.gb_step = [=] {
    opt->zero_grad();
    F::cross_entropy((*net)(x), y).backward();
    opt->step();
  };
  m.torch_step = [=] {
    topt->zero_grad();
    torch::nn::functional::cross_entropy((*tnet)->forward(tx), ty).backward();
    topt->step();
  };
  return m;
}

Model mlp(const std::string& name, std::vector<int64_t> widths, int64_t batch, int inner) {
  gb::manual_seed(0);
  auto net = std::make_shared<gb::nn::Sequential>();
  auto tnet = std::make_shared<torch::nn::Sequential>();
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    (*net)->push_back(gb::nn::Linear(widths[i], widths[i + 1]));
    (*tnet)->push_back(torch::nn::Linear(widths[i], widths[i + 1]));
    if (i + 2 < widths.size()) {
      (*net)->push_back(gb::nn::ReLU());
      (*tnet)->push_back(torch::nn::ReLU());
    }
  }
  return make_model(name, inner, net, tnet, gb::randn({batch, widths.front()}), gb::randint(0, widths.back(), {batch}),
                    torch::randn({batch, widths.front()}), torch::randint(0, widths.back(), {batch}));
}

struct CnnImpl : gb::nn::Module {
  CnnImpl() {
    conv1 = register_module("conv1", gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 16, 3).padding(1)));
    bn1 = register_module("bn1", gb::nn::BatchNorm2d(16));
    conv2 = register_module("conv2", gb::nn::Conv2d(gb::nn::Conv2dOptions(16, 32, 3).padding(1)));
    bn2 = register_module("bn2", gb::nn::BatchNorm2d(32));
    fc = register_module("fc", gb::nn::Linear(32 * 4 * 4, 10));
  }
  gb::Tensor forward(gb::Tensor x) {  // x is (N,1,16,16)
    x = gb::max_pool2d(gb::relu(bn1(conv1(x))), {2, 2});
    x = gb::max_pool2d(gb::relu(bn2(conv2(x))), {2, 2});
    return fc(x.flatten(1));
  }
  gb::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  gb::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  gb::nn::Linear fc{nullptr};
};
GB_MODULE(Cnn);

Model cnn(int inner) {
  gb::manual_seed(0);
  const int64_t batch = 64;
  auto net = std::make_shared<Cnn>();
  auto tnet = std::make_shared<torch::nn::Sequential>(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1)), torch::nn::BatchNorm2d(16), torch::nn::ReLU(),
      torch::nn::MaxPool2d(2), torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)),
      torch::nn::BatchNorm2d(32), torch::nn::ReLU(), torch::nn::MaxPool2d(2), torch::nn::Flatten(),
      torch::nn::Linear(32 * 4 * 4, 10));
  return make_model("cnn_b64_16x16", inner, net, tnet, gb::randn({batch, 1, 16, 16}), gb::randint(0, 10, {batch}),
                    torch::randn({batch, 1, 16, 16}), torch::randint(0, 10, {batch}));
}

struct Times {
  double off = 0, on = 0, on_quiet = 0, between = 0;  // glassbox: medians of single samples
  double on_ratio = 0, quiet_ratio = 0, between_ratio = 0;  // medians of the paired ratios (traced / untraced next to it)
  double torch = 1e30, torch_prof = 1e30, torch_anomaly = 1e30;
  int64_t dropped = 0;
};

int64_t dropped_events(const std::string& path) {  // meta dropped_events of the finished file
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'dropped_events'", -1, &s, nullptr) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One timing sample: `inner` steps, per step.
double sample(const Model& m) {
  const double t0 = bench::now_s();
  for (int i = 0; i < m.inner; ++i) m.gb_step();
  return (bench::now_s() - t0) / m.inner;
}

// This machine's speed wanders by tens of percent from one second to the next, so glassbox's four modes are
// measured as groups of adjacent short samples (untraced, traced, traced between windows, traced with the detectors
// off; a fresh session per traced sample), in an order that rotates from one group to the next so that a drift
// favours no mode, and each ratio is the median over many groups of traced / untraced: the drift cancels within a
// group. The peers, whose
// costs are far larger, keep each mode's best median over three rounds.
Times measure(const Model& m, int groups) {
  Times t;
  const std::string path = (std::filesystem::temp_directory_path() / "glassbox-bench-trace.db").string();
  gb::monitor::Config quiet;
  quiet.mode = gb::monitor::Mode::off;
  std::vector<double> off, on, on_quiet, between, on_r, quiet_r, between_r;
  for (int i = 0; i < m.inner; ++i) m.gb_step();  // warm up (allocator caches, the pool)
  auto traced = [&](const gb::monitor::Config& config, std::vector<double>& out,
                    gb::trace::DetailPolicy detail = gb::trace::DetailPolicy::full()) {
    gb::monitor::set_config(config);
    {
      gb::trace::SessionOptions options;
      options.detail = detail;
      gb::trace::Session session(path, options);
      // the session's first steps (automatic step 0, the graphs of the first steps) are not the steady state
      for (int64_t i = 0; i < config.graph_first_steps; ++i) m.gb_step();
      out.push_back(sample(m));
      session.stop();
      t.dropped = std::max(t.dropped, dropped_events(path));  // any traced sample, either mode
    }
    gb::monitor::set_config(gb::monitor::Config{});
    std::filesystem::remove(path);
  };
  for (int k = 0; k < groups; ++k) {
    for (int j = 0; j < 4; ++j) {
      switch ((j + k) % 4) {
        case 0:
          off.push_back(sample(m));
          break;
        case 1:
          traced(gb::monitor::Config{}, on);
          break;
        case 2:
          traced(gb::monitor::Config{}, between, gb::trace::DetailPolicy::summary());
          break;
        default:
          traced(quiet, on_quiet);
      }
    }
    on_r.push_back(on.back() / off.back());
    quiet_r.push_back(on_quiet.back() / off.back());
    between_r.push_back(between.back() / off.back());
  }
  t.off = median(off);
  t.on = median(on);
  t.on_quiet = median(on_quiet);
  t.between = median(between);
  t.on_ratio = median(on_r);
  t.quiet_ratio = median(quiet_r);
  t.between_ratio = median(between_r);
  for (int round = 0; round < 3; ++round) {
    t.torch = std::min(t.torch, bench::time_per_call(m.torch_step, m.inner, 0.4));
    {
      torch::autograd::profiler::TLSLegacyProfilerGuard prof(torch::profiler::impl::ProfilerConfig(
          torch::profiler::impl::ProfilerState::CPU, /*report_input_shapes=*/true, /*profile_memory=*/true,
          /*with_stack=*/false, /*with_flops=*/true));
      t.torch_prof = std::min(t.torch_prof, bench::time_per_call(m.torch_step, m.inner, 0.4));
    }
    {
      torch::autograd::DetectAnomalyGuard anomaly;
      // hundreds of times slower on small steps: fewer steps per sample (the value is per step)
      t.torch_anomaly = std::min(t.torch_anomaly, bench::time_per_call(m.torch_step, std::max(1, m.inner / 50), 0.4));
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";  // e.g. `bench_trace_overhead tiny`: the models whose name has it
  const int threads = gb::get_num_threads();
  gb::set_num_threads(threads);
  torch::set_num_threads(1);  // libtorch's fastest setting here (bench_models): OpenBLAS owns the cores
  // steps per sample: about 0.1 s each, short enough that the machine's drift within a triple is small
  std::vector<Model> models = {mlp("mlp_784_1024_1024_10_b256", {784, 1024, 1024, 10}, 256, 2), cnn(8),
                               mlp("tiny_mlp_32_64_64_4_b32", {32, 64, 64, 4}, 32, 500)};
  for (const Model& m : models) {
    if (m.name.find(only) == std::string::npos) continue;
    Times t = measure(m, 41);
    char extra[256];
    std::snprintf(extra, sizeof extra, "\"step_untraced_s\": %.6g, \"step_traced_s\": %.6g, \"dropped_events\": %lld",
                  t.off, t.on, static_cast<long long>(t.dropped));
    bench::emit_vs("trace_overhead", m.name + ".all_on", t.on_ratio, "x", "libtorch profiler (shapes, memory, flops)",
                   t.torch_prof / t.torch, extra);
    bench::emit_vs("trace_overhead", m.name + ".detectors_off", t.quiet_ratio, "x",
                   "libtorch profiler (shapes, memory, flops)", t.torch_prof / t.torch);
    bench::emit_vs("trace_overhead", m.name + ".between_windows", t.between_ratio, "x",
                   "glassbox full detail (all_on)", t.on_ratio);
    bench::emit_vs("trace_overhead", m.name + ".all_on_vs_detect_anomaly", t.on_ratio, "x", "libtorch detect_anomaly",
                   t.torch_anomaly / t.torch);
    bench::emit("trace_overhead", m.name + ".step_untraced", t.off, "s", t.torch);
  }
  return 0;
}
