// samples/lessons/gradient_flow_depth.cpp — gradient flow through depth: 16 sigmoid layers against 16 residual blocks.
//
// The claim (the "vanishing gradients" sections of deep-learning tutorials, and the plot_grad_flow recipe that draws
// each layer's gradient): in a deep stack of sigmoid layers the gradient vanishes toward the input, each sigmoid
// multiplying it by at most 0.25 (its largest derivative, at 0); ReLU with residual connections and normalization
// keeps it flowing. glassbox's training monitor, on whenever a trace records, raises one depth_gradient anomaly
// when a layer's gradient relative to its weight falls 100x below the last layer's (engine/monitor/depth.cpp).
//
// The lesson trains two nets of the same depth on the same batches (three clusters in 8 dimensions, SGD lr 0.05,
// momentum 0.9), each under its own gb::trace::Session: in (8-32), 16 x [Linear 32-32, sigmoid], out (32-3); and in,
// 16 x [x + relu(Linear(LayerNorm(x)))], out. From each trace's grad_stats it takes every layer's |grad| / |weight|
// (norm / param_norm of its weight), the median over the steps, and prints the profile from the input to the output
// (what plot_grad_flow draws), the first layer's over the last layer's, and, for the sigmoid stack, the factor by which
// it falls per layer. That factor is the sigmoid's derivative times what the weight matrix does to the gradient it
// passes back (W^T g: about |W|_F / sqrt(32) for a random g), both measured after training. Then the anomalies.
// The traces go to the folder argv[1] (kept) or a temporary folder (removed).
//
//   ./build/samples/lessons/lesson_gradient_flow_depth [trace-folder]
//
// The verdict holds when the sigmoid stack's first layer is 100x or more below its last, the residual net's within 10x,
// the sigmoid's derivative is at most 0.25 and the measured fall per layer within 2x of the derivative times the
// weight's gain; and the sigmoid run's trace holds exactly one depth_gradient row, naming a layer and the sigmoid,
// the residual run's none.
#include <glassbox/glassbox.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "lesson.h"
#include "traces/reader.h"

namespace nn = gb::nn;
namespace F = gb::nn::functional;

namespace {

constexpr int kDepth = 16, kWidth = 32, kSteps = 30;

// The 16-layer net, either plain Linear + sigmoid or residual blocks x + relu(Linear(LayerNorm(x))).
struct DeepImpl : nn::Module {
  explicit DeepImpl(bool residual) : residual_(residual) {
    in = register_module("in", nn::Linear(8, kWidth));
    for (int i = 0; i < kDepth; ++i) {
      layers->push_back(nn::Linear(kWidth, kWidth));
      if (residual) norms->push_back(nn::LayerNorm(nn::LayerNormOptions({kWidth})));
    }
    register_module("layers", layers);
    if (residual) register_module("norms", norms);
    out = register_module("out", nn::Linear(kWidth, 3));
  }
  gb::Tensor forward(gb::Tensor x) {  // x: (N, 8) -> (N, 3)
    x = in(x);
    for (size_t i = 0; i < layers->size(); ++i) {
      auto& fc = layers->at<nn::LinearImpl>(i);
      x = residual_ ? x + gb::relu(fc.forward(norms->at<nn::LayerNormImpl>(i).forward(x))) : gb::sigmoid(fc.forward(x));
    }
    return out(x);
  }
  nn::Linear in{nullptr}, out{nullptr};
  nn::ModuleList layers, norms;
  bool residual_ = false;
};
GB_MODULE(Deep);

// Three noisy clusters in 8 dimensions, the same batch for both nets at each step.
struct Batch {
  gb::Tensor x, y;  // (N, 8), (N)
};
Batch batch(uint64_t seed) {
  gb::manual_seed(seed);
  gb::Tensor y = gb::randint(0, 3, {64});
  gb::Tensor centers = gb::tensor(std::vector<float>{2, 0, 0, 1, 0, 0, 0, 0,  //
                                                     0, 2, 0, 0, 1, 0, 0, 0,  //
                                                     0, 0, 2, 0, 0, 1, 0, 0})
                           .view({3, 8});
  return {centers.index_select(0, y) + 0.5 * gb::randn({64, 8}), y};
}

struct Run {
  std::vector<std::string> names;               // the layers' weights in forward order: in, layers.0 .. layers.15, out
  std::vector<double> ratio;                    // each one's median |grad| / |weight| over the steps
  std::vector<gb::trace::AnomalyRecord> depth;  // depth_gradient rows
  size_t all_anomalies = 0;
  std::string depth_param;   // the parameter the depth_gradient row names ("" without one)
  double sigmoid_slope = 0;  // sigmoid stack: RMS of sigmoid'(h) = s(1 - s) over its 16 sigmoids, after training
  double weight_gain = 0;    // sigmoid stack: median |W|_F / sqrt(32) of its 16 weights, after training
  double first_over_last() const { return ratio.front() / ratio.back(); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Run train(bool residual, const std::string& trace_path) {
  gb::manual_seed(0);
  Deep net(residual);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  {
    gb::trace::Session session(trace_path);  // the monitor watches while a trace records
    for (int step = 0; step < kSteps; ++step) {
      Batch b = batch(100 + step);
      opt.zero_grad();
      F::cross_entropy(net(b.x), b.y).backward();
      opt.step();
    }
  }  // the trace is complete here

  Run run;
  run.names.push_back("in");
  for (int i = 0; i < kDepth; ++i) run.names.push_back("layers." + std::to_string(i));
  run.names.push_back("out");
  gb::trace::Reader reader(trace_path);
  std::map<int64_t, std::string> module_path;  // module id -> "layers.3"
  for (const auto& m : reader.all<gb::trace::ModuleRecord>()) module_path[m.id] = m.path;
  std::map<int64_t, std::string> param_label;  // param id -> "layers.3.weight"
  std::map<std::string, int64_t> weight_id;    // "layers.3" -> its weight's param id
  for (const auto& p : reader.all<gb::trace::ParamRecord>()) {
    param_label[p.id] = module_path[p.module_id] + "." + p.name;
    if (p.name == "weight") weight_id[module_path[p.module_id]] = p.id;
  }
  std::map<int64_t, std::vector<double>> per_param;  // param id -> norm / param_norm at each step
  for (const auto& g : reader.grad_stats())
    if (g.param_norm > 0) per_param[g.param_id].push_back(g.norm / g.param_norm);
  for (const auto& name : run.names) run.ratio.push_back(median(per_param[weight_id[name]]));
  for (const auto& a : reader.anomalies()) {
    ++run.all_anomalies;
    if (a.kind != gb::trace::AnomalyKind::depth_gradient) continue;
    run.depth.push_back(a);
    if (a.param_id) run.depth_param = param_label[*a.param_id];
  }

  if (!residual) {  // what each layer of the sigmoid stack does to the gradient it passes back
    gb::NoGradGuard no_grad;
    gb::Tensor x = net->in(batch(1).x);
    double sq = 0;
    int64_t n = 0;
    std::vector<double> gains;
    for (int i = 0; i < kDepth; ++i) {
      auto& fc = net->layers->at<nn::LinearImpl>(static_cast<size_t>(i));
      x = gb::sigmoid(fc.forward(x));
      sq += (x * (1 - x)).pow(2).sum().item<double>();  // sigmoid'(h) = s(1 - s)
      n += x.numel();
      gains.push_back(fc.weight.pow(2).sum().item<double>() / kWidth);
    }
    run.sigmoid_slope = std::sqrt(sq / static_cast<double>(n));
    run.weight_gain = std::sqrt(median(gains));
  }
  return run;
}

std::string profile(const std::vector<double>& v) {
  std::string s;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%s%.2g", s.empty() ? "" : ", ", x);
    s += buf;
  }
  return s;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  lesson::Lesson lesson("gradient_flow_depth",
                        "in a deep stack of sigmoid layers the gradient vanishes toward the input, each sigmoid "
                        "multiplying it by at most 0.25; ReLU with residual connections and normalization keeps it "
                        "flowing (and the monitor flags the first, not the second)");
  namespace fs = std::filesystem;
  const bool keep = argc > 1;
  const fs::path dir = keep ? fs::path(argv[1])
                            : fs::temp_directory_path() / ("lesson_gradient_flow_depth_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const Run sig = train(false, (dir / "sigmoid.db").string());
  const Run res = train(true, (dir / "residual.db").string());
  if (!keep) fs::remove_all(dir);

  const std::string steps = std::to_string(kSteps);
  lesson.measured("sigmoid stack: |grad|/|weight| per layer, in .. layers.0-15 .. out, median of " + steps + " steps",
                  profile(sig.ratio));
  lesson.measured("residual net: |grad|/|weight| per layer, same order", profile(res.ratio));
  lesson.measured("sigmoid stack: first layer (in) over last (out)", sig.first_over_last());
  lesson.measured("residual net: first layer (in) over last (out)", res.first_over_last());
  // the fall per layer through the stack: layers.15 back to layers.0 passes 15 sigmoids and 15 weight matrices
  const double fall = std::pow(sig.ratio[1] / sig.ratio[kDepth], 1.0 / (kDepth - 1));
  const double predicted = sig.sigmoid_slope * sig.weight_gain;
  lesson.measured("sigmoid stack: fall per layer, (layers.0 / layers.15)^(1/15)", fall);
  lesson.measured("sigmoid stack: RMS of sigmoid'(h) over its 16 sigmoids (at most 0.25)", sig.sigmoid_slope);
  lesson.measured("sigmoid stack: the weights' gain on the gradient, |W|_F / sqrt(32) (median)", sig.weight_gain);
  lesson.measured("sigmoid stack: sigmoid' x weight gain", predicted);
  lesson.measured("sigmoid run: depth_gradient rows in its trace", static_cast<double>(sig.depth.size()));
  if (!sig.depth.empty()) {
    lesson.measured("sigmoid run: the row's step and parameter",
                    std::to_string(sig.depth.front().step.value_or(-1)) + ", " + sig.depth_param);
    lesson.measured("sigmoid run: the row's message", sig.depth.front().message);
  }
  lesson.measured("residual run: depth_gradient rows in its trace", static_cast<double>(res.depth.size()));
  lesson.measured("residual run: anomaly rows of any kind", static_cast<double>(res.all_anomalies));
  if (keep) lesson.measured("traces", (dir / "sigmoid.db").string() + ", " + (dir / "residual.db").string());

  const bool vanishes = sig.first_over_last() <= 1e-2;
  const bool flows = res.first_over_last() >= 0.1 && res.first_over_last() <= 10;
  const bool bounded = sig.sigmoid_slope <= 0.25 && fall <= 0.25 && fall > predicted / 2 && fall < predicted * 2;
  const bool alarm = sig.depth.size() == 1 && !sig.depth_param.empty() &&
                     sig.depth.front().message.find("sigmoid") != std::string::npos;
  const bool quiet = res.depth.empty();
  return lesson.verdict(vanishes && flows && bounded && alarm && quiet,
                        "the sigmoid stack's first layer gets " + num(sig.first_over_last()) +
                            "x its last layer's relative gradient, falling x" + num(fall) + " per layer (sigmoid' " +
                            num(sig.sigmoid_slope) + " x weight gain " + num(sig.weight_gain) + " = " + num(predicted) +
                            "); the residual net's gets " + num(res.first_over_last()) + "x; " +
                            std::to_string(sig.depth.size()) + " depth_gradient row for the sigmoid run" +
                            (sig.depth_param.empty() ? "" : " (at " + sig.depth_param + ")") + ", " +
                            std::to_string(res.depth.size()) + " for the residual run");
}
