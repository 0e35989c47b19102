// bench/gpu/bench_gpu_models.cpp — training steps on cuda:0, glassbox against PyTorch eager (libtorch, the C++ API
// of the PyTorch installed on the GPU machine) in the same run: issue 14's "How fast" targets.
//   mlp           784-1024-1024-10, batch 256, SGD momentum
//   small_cnn     two conv-bn-relu-pool blocks + linear on 1x28x28, batch 64, SGD momentum
//   resnet_stack  stem + four 32-channel basic blocks on 3x16x16, batch 32, SGD momentum
//   transformer   2 encoder layers, d_model 256, 4 heads, ff 1024, L 128, batch 16, AdamW
// The models are bench/models.inc, the CPU benchmark's source, compiled once against each library; glassbox's initial
// weights are copied into PyTorch's and the first losses compared (initial_loss_rel_diff). A step's time is wall
// time over `inner` steps ending in a device synchronization (both libraries launch asynchronously), the median of
// rounds alternated between the two. Then glassbox again inside a trace session (CUPTI's kernels, copies and API
// calls, and the training monitor's detectors: what GLASSBOX_TRACE turns on): traced_ms and traced_over_untraced.
// TF32: both libraries' defaults (off for matmul, on for cuDNN's convolutions). One JSON line per model:
//   value = glassbox ms, peer_value = PyTorch ms (ratio below 1: glassbox faster; target <= 1.0),
//   traced_over_untraced (target <= 1.10).
#include <glassbox/glassbox.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "model_weights.h"
#include "models.h"

namespace {

struct Setting {
  const char* name;
  std::vector<int64_t> input;  // with the batch first (the transformer's is (L, N, E))
  int64_t batch;
  bool adamw;
  int inner;  // steps per timing sample, ending in a synchronization
};

const Setting kSettings[] = {
    {"mlp", {256, 784}, 256, false, 20},
    {"small_cnn", {64, 1, 28, 28}, 64, false, 20},
    {"resnet_stack", {32, 3, 16, 16}, 32, false, 10},
    {"transformer", {128, 16, 256}, 16, true, 10},
};

template <class G, class T>
void bench_model(const Setting& s, G g, T t) {
  g->to(gb::kCUDA);
  t->to(torch::kCUDA);
  bench::copy_weights(g, t);
  gb::Tensor x = gb::randn(s.input).to(gb::kCUDA);
  gb::Tensor y = gb::randint(0, 10, {s.batch}).to(gb::kCUDA);
  torch::Tensor tx = bench::to_torch(x, torch::kCUDA), ty = bench::to_torch(y, torch::kCUDA);
  std::shared_ptr<gb::optim::Optimizer> gopt;
  std::shared_ptr<torch::optim::Optimizer> topt;
  if (s.adamw) {
    gopt = std::make_shared<gb::optim::AdamW>(g->parameters(), gb::optim::AdamWOptions(1e-4));
    topt = std::make_shared<torch::optim::AdamW>(t->parameters(), torch::optim::AdamWOptions(1e-4));
  } else {
    gopt = std::make_shared<gb::optim::SGD>(g->parameters(), gb::optim::SGDOptions(0.01).momentum(0.9));
    topt = std::make_shared<torch::optim::SGD>(t->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  }
  const double g_loss = gb::nn::functional::cross_entropy(g->forward(x), y).template item<double>();
  const double t_loss = torch::nn::functional::cross_entropy(t->forward(tx), ty).template item<double>();
  const double loss_diff = std::abs(g_loss - t_loss) / std::max(std::abs(t_loss), 1e-12);

  auto g_step = [&] {
    gb::Tensor loss = gb::nn::functional::cross_entropy(g->forward(x), y);
    gopt->zero_grad();
    loss.backward();
    gopt->step();
  };
  auto t_step = [&] {
    torch::Tensor loss = torch::nn::functional::cross_entropy(t->forward(tx), ty);
    topt->zero_grad();
    loss.backward();
    topt->step();
  };
  // inner steps, then the device drained: the time the steps took on the GPU and the host together
  auto g_steps = [&] {
    for (int i = 0; i < s.inner; ++i) g_step();
    gb::cuda::synchronize();
  };
  auto t_steps = [&] {
    for (int i = 0; i < s.inner; ++i) t_step();
    torch::cuda::synchronize();
  };
  const double seconds = 1.0;
  auto [g_s, t_s] = bench::compare(g_steps, t_steps, 1, seconds);
  // the same glassbox steps recorded: CUPTI activity and the monitor's detectors
  const std::string path = "/tmp/bench_gpu_models_" + std::string(s.name) + ".db";
  std::remove(path.c_str());
  double traced_s = 0;
  {
    gb::trace::Session session(path);
    traced_s = bench::time_per_call(g_steps, 1, seconds);
  }
  std::remove(path.c_str());
  const double untraced_again = bench::time_per_call(g_steps, 1, seconds);
  const double untraced = std::min(g_s, untraced_again);
  bench::emit_vs("gpu_models", std::string(s.name) + "_train_step_ms", g_s / s.inner * 1e3, "ms", "pytorch",
                 t_s / s.inner * 1e3,
                 "\"traced_ms\": " + std::to_string(traced_s / s.inner * 1e3) +
                     ", \"traced_over_untraced\": " + std::to_string(traced_s / untraced) +
                     ", \"initial_loss_rel_diff\": " + std::to_string(loss_diff) + ", \"batch\": " +
                     std::to_string(s.batch));
}

}  // namespace

int main(int argc, char** argv) {
  if (!gb::cuda::is_available() || !torch::cuda::is_available()) {
    std::fprintf(stderr, "bench_gpu_models: needs a GPU both libraries can use (glassbox: %s; PyTorch: %s)\n",
                 gb::cuda::is_available() ? "yes" : "no", torch::cuda::is_available() ? "yes" : "no");
    return 2;
  }
  gb::backends::cuda::matmul::allow_tf32 = false;  // PyTorch's default too (and TF32 on for cuDNN in both)
  const std::string only = argc > 1 ? argv[1] : "";
  for (const Setting& s : kSettings) {
    if (!only.empty() && only != s.name) continue;
    gb::manual_seed(0);
    const std::string n = s.name;
    if (n == "mlp") bench_model(s, ours::mlp(), peer::mlp());
    if (n == "small_cnn") bench_model(s, ours::small_cnn(), peer::small_cnn());
    if (n == "resnet_stack") bench_model(s, ours::resnet_stack(), peer::resnet_stack());
    if (n == "transformer") bench_model(s, ours::EncoderClassifier(), peer::EncoderClassifier());
  }
  return 0;
}
