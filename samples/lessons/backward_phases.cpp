// samples/lessons/backward_phases.cpp — where backward's time goes: graph discovery, execution, release.
//
// The claim (met in walkthroughs of the autograd engine, quoted for a CNN): about 5-8% of backward is graph discovery
// (walking the graph and counting dependencies), 70-80% executing the nodes' backward formulas, and 10-15% releasing
// the graph (freeing saved tensors and buffers).
//
// glassbox's engine times its three phases on every backward (engine/autograd/engine.cpp; the same phases are the
// trace's backward_phase spans): discovery = the dependency count, execution = running the nodes minus the time
// spent freeing their saved tensors, release = that freeing plus dropping the gradient buffers at the end.
// gb::autograd::last_backward_stats() returns them. The lesson trains an MLP, a small CNN and one Transformer
// encoder layer for a few steps each, sums the phases over the measured backwards, and prints the shares next to
// the claimed ranges, the backward time the phases cover against the wall time of loss.backward(), and the time
// the graph's nodes take to be destroyed when the loss goes away after backward (outside the engine's phases).
// When the phases do not add up to backward's wall time the lesson prints no verdict (its test fails).
//
//   ./build/samples/lessons/lesson_backward_phases
#include <glassbox/glassbox.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "../small_cnn.h"
#include "lesson.h"

namespace F = gb::nn::functional;

namespace {

constexpr int kWarmup = 3, kMeasured = 15;

struct Shares {
  double discovery = 0, execution = 0, release = 0;  // of the phases' sum
  double phases_ms = 0, wall_ms = 0;                 // per backward
  double teardown_ms = 0;  // per step: destroying the graph's nodes when the loss goes away, after backward
  int64_t nodes = 0;       // nodes executed per backward
};

// Trains `model` for kWarmup + kMeasured steps on the batch `loss_of` builds, timing each backward.
Shares measure(gb::nn::Module& model, const std::function<gb::Tensor()>& loss_of) {
  gb::optim::SGD opt(model.parameters(), gb::optim::SGDOptions(0.01));
  int64_t d = 0, e = 0, r = 0;
  double wall = 0, teardown = 0;
  Shares s;
  for (int step = 0; step < kWarmup + kMeasured; ++step) {
    gb::Tensor loss = loss_of();
    opt.zero_grad();
    auto t0 = std::chrono::steady_clock::now();
    loss.backward();
    auto t1 = std::chrono::steady_clock::now();
    loss = gb::Tensor();  // the last reference to the graph: its nodes are destroyed here
    auto t2 = std::chrono::steady_clock::now();
    opt.step();
    if (step < kWarmup) continue;
    teardown += std::chrono::duration<double, std::milli>(t2 - t1).count();
    const gb::autograd::BackwardStats& st = gb::autograd::last_backward_stats();
    d += st.discovery_ns, e += st.execution_ns, r += st.release_ns;
    s.nodes = st.nodes_executed;
    wall += std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  double total = double(d + e + r);
  s.discovery = double(d) / total, s.execution = double(e) / total, s.release = double(r) / total;
  s.phases_ms = total / 1e6 / kMeasured, s.wall_ms = wall / kMeasured, s.teardown_ms = teardown / kMeasured;
  return s;
}

bool in(double v, double lo, double hi) { return v >= lo && v <= hi; }

}  // namespace

int main() {
  lesson::Lesson lesson("backward_phases",
                        "backward spends about 5-8% in graph discovery, 70-80% executing nodes and 10-15% releasing "
                        "the graph");
  gb::manual_seed(0);
  gb::nn::Sequential mlp(gb::nn::Linear(256, 256), gb::nn::ReLU(), gb::nn::Linear(256, 256), gb::nn::ReLU(),
                         gb::nn::Linear(256, 10));
  gb::Tensor mx = gb::randn({64, 256}), my = gb::randint(0, 10, {64});
  sample_models::SmallNet cnn(16, 4);  // train_images' CNN (samples/small_cnn.h)
  gb::Tensor cx = gb::randn({32, 1, 16, 16}), cy = gb::randint(0, 4, {32});
  gb::nn::TransformerEncoderLayer layer(
      gb::nn::TransformerEncoderLayerOptions(64, 4).dim_feedforward(128).batch_first(true));
  gb::Tensor tx = gb::randn({8, 32, 64});  // (N,L,D)

  struct Case {
    const char* name;
    Shares s;
  };
  Case cases[] = {
      {"MLP 256-256-256-10, batch 64", measure(*mlp, [&] { return F::cross_entropy(mlp(mx), my); })},
      {"CNN conv-bn-relu-pool x2 + linear, batch 32 of 16x16",
       measure(*cnn, [&] { return F::cross_entropy(cnn(cx), cy); })},
      {"Transformer encoder layer d=64 heads=4 ff=128, batch 8 x 32 tokens",
       measure(*layer, [&] { return layer(tx).pow(2).mean(); })},
  };

  bool holds = true, valid = true;
  for (const Case& c : cases) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "discovery %s, execution %s, release %s (%.3f ms of %.3f ms backward, %lld nodes; graph "
                  "teardown after it %.3f ms)",
                  lesson::percent(c.s.discovery).c_str(), lesson::percent(c.s.execution).c_str(),
                  lesson::percent(c.s.release).c_str(), c.s.phases_ms, c.s.wall_ms, (long long)c.s.nodes,
                  c.s.teardown_ms);
    lesson.measured(c.name, buf);
    holds = holds && in(c.s.discovery, 0.05, 0.08) && in(c.s.execution, 0.70, 0.80) && in(c.s.release, 0.10, 0.15);
    // The phases must cover most of backward's wall time and every phase must have been timed.
    valid = valid && c.s.nodes > 0 && c.s.phases_ms > 0.5 * c.s.wall_ms && c.s.phases_ms <= 1.01 * c.s.wall_ms &&
            c.s.discovery > 0 && c.s.release > 0;
  }
  if (!valid) {
    std::printf("measurement invalid: the engine's phase timings do not add up to backward's wall time\n");
    return 1;
  }
  char evidence[300];
  std::snprintf(evidence, sizeof evidence,
                "execution took %s (MLP), %s (CNN), %s (Transformer) of backward; discovery %s / %s / %s and "
                "release %s / %s / %s",
                lesson::percent(cases[0].s.execution).c_str(), lesson::percent(cases[1].s.execution).c_str(),
                lesson::percent(cases[2].s.execution).c_str(), lesson::percent(cases[0].s.discovery).c_str(),
                lesson::percent(cases[1].s.discovery).c_str(), lesson::percent(cases[2].s.discovery).c_str(),
                lesson::percent(cases[0].s.release).c_str(), lesson::percent(cases[1].s.release).c_str(),
                lesson::percent(cases[2].s.release).c_str());
  return lesson.verdict(holds, evidence);
}
