// bench/bench_meta_plan.cpp — the meta device plans one training step of a 100M-parameter model in under a second
// (issue [Memory], "How fast"). The model: 12 transformer-shaped MLP blocks (D=1024, h += fc2(gelu(fc1(ln(h))))) and
// a 1000-way head, 101.8M parameters; the step: forward over (8, 512) tokens, cross-entropy, backward, SGD with
// momentum. Target: value <= 1000 ms.
//
// Peers, in the same process: glassbox's same step on the cpu at a batch of (1, 16) tokens (real compute, the
// thing a plan saves you from running; its weight-gradient GEMMs and the 100M-element updates dominate), and the
// same step with libtorch on its meta device (no allocator behind it: shapes only), in libtorch_meta_ms.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include "bench_common.h"

namespace {

constexpr int64_t kD = 1024, kLayers = 12, kClasses = 1000;

// One training step on `device` at (n, l) tokens; returns the peak allocated bytes of the device.
int64_t gb_step(gb::Device device, int64_t n, int64_t l) {
  const auto o = gb::TensorOptions().device(device);
  namespace mem = gb::memory;
  mem::reset_peak_stats(device);
  std::vector<gb::Tensor> params;
  auto param = [&](std::vector<int64_t> s) { params.push_back((gb::randn(s, o) * 0.02).requires_grad_()); };
  for (int64_t i = 0; i < kLayers; ++i) {
    param({kD}), param({kD}), param({4 * kD, kD}), param({4 * kD}), param({kD, 4 * kD}), param({kD});
  }
  param({kClasses, kD}), param({kClasses});
  std::vector<gb::Tensor> velocity;
  {
    mem::CategoryGuard cat(mem::Category::optimizer_state);
    for (auto& p : params) velocity.push_back(gb::zeros_like(p));
  }
  auto h = gb::randn({n, l, kD}, o);
  auto y = gb::randint(0, kClasses, {n * l}, o.dtype(gb::kInt64));
  for (int64_t i = 0; i < kLayers; ++i) {
    const gb::Tensor* p = &params[size_t(i) * 6];
    auto x = gb::layer_norm(h, {kD}, p[0], p[1]);
    h = h + gb::linear(gb::gelu(gb::linear(x, p[2], p[3])), p[4], p[5]);
  }
  auto loss = gb::cross_entropy(gb::linear(h, params[params.size() - 2], params.back()).view({n * l, kClasses}), y);
  loss.backward();
  {
    gb::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      velocity[i].mul_(0.9).add_(params[i].grad());
      params[i].sub_(velocity[i], 0.01);
    }
  }
  return mem::memory_stats(device).allocated_bytes[mem::kAll].peak;
}

void torch_meta_step(int64_t n, int64_t l) {
  const auto o = torch::TensorOptions().device(torch::kMeta);
  std::vector<torch::Tensor> params;
  auto param = [&](std::vector<int64_t> s) { params.push_back((torch::randn(s, o) * 0.02).requires_grad_()); };
  for (int64_t i = 0; i < kLayers; ++i) {
    param({kD}), param({kD}), param({4 * kD, kD}), param({4 * kD}), param({kD, 4 * kD}), param({kD});
  }
  param({kClasses, kD}), param({kClasses});
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.01).momentum(0.9));
  auto h = torch::randn({n, l, kD}, o);
  auto y = torch::randint(0, kClasses, {n * l}, o.dtype(torch::kLong));
  for (int64_t i = 0; i < kLayers; ++i) {
    const torch::Tensor* p = &params[size_t(i) * 6];
    auto x = torch::layer_norm(h, {kD}, p[0], p[1]);
    h = h + torch::linear(torch::gelu(torch::linear(x, p[2], p[3])), p[4], p[5]);
  }
  auto loss = torch::nn::functional::cross_entropy(
      torch::linear(h, params[params.size() - 2], params.back()).view({n * l, kClasses}), y);
  loss.backward();
  opt.step();
}

}  // namespace

int main() {
  const int64_t n = 8, l = 512;
  int64_t numel = kLayers * (2 * kD + 8 * kD * kD + 4 * kD + kD) + kClasses * kD + kClasses;
  int64_t planned_peak = 0;
  double meta_s = bench::time_per_call([&] { planned_peak = gb_step(gb::Device(gb::kMeta), n, l); }, 1, 3.0);
  gb::memory::empty_cache(gb::Device(gb::kMeta));
  double cpu_s = bench::time_per_call([&] { gb_step(gb::Device(gb::kCPU), 1, 16); }, 1, 3.0);
  gb::memory::empty_cache(gb::Device(gb::kCPU));
  std::string torch_meta = "null", torch_note;
  try {
    torch_meta = std::to_string(1e3 * bench::time_per_call([&] { torch_meta_step(n, l); }, 1, 2.0));
  } catch (const std::exception& e) {  // Debian's libtorch 1.13 lacks meta kernels for some ops (layer_norm)
    std::string what = e.what();
    what = what.substr(0, std::min(what.find('.'), what.find('\n')));
    for (char& c : what)
      if (c == '"' || c == '\\') c = '\'';
    torch_note = ", \"libtorch_meta_note\": \"" + what + "\"";
  }
  bench::emit_vs("meta_plan", "plan_step_ms_102M_params_8x512_tokens", meta_s * 1e3, "ms",
                 "glassbox cpu step at 1x16 tokens", cpu_s * 1e3,
                 "\"target_ms\": 1000, \"params\": " + std::to_string(numel) +
                     ", \"planned_peak_allocated_bytes\": " + std::to_string(planned_peak) +
                     ", \"libtorch_meta_ms\": " + torch_meta + torch_note + ", \"threads\": " + std::to_string(gb::get_num_threads()));
  return 0;
}
