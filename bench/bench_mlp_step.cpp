// bench/bench_mlp_step.cpp — one training step of an MLP 784-1024-1024-10, batch 256, cross-entropy, SGD with
// momentum 0.9: forward, backward, update. glassbox vs libtorch (torch::nn::Linear + torch::optim::SGD) in the same
// process with the same thread count for GEMM. Target: at most 1.0x libtorch's time.
//
// Both share one OpenBLAS in this process, told to use `threads` threads. libtorch is measured with its intra-op
// pool at 1 thread (its fastest setting here: a second OpenMP pool oversubscribes the cores while OpenBLAS spins)
// and at `threads`; the ratio is against its faster setting.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include "bench_common.h"

namespace F = gb::nn::functional;

namespace {

struct TorchNet : torch::nn::Module {
  TorchNet() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 1024));
    fc2 = register_module("fc2", torch::nn::Linear(1024, 1024));
    fc3 = register_module("fc3", torch::nn::Linear(1024, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

}  // namespace

int main() {
  const int threads = gb::get_num_threads();
  gb::set_num_threads(threads);
  const int64_t batch = 256;

  // glassbox: parameters as plain tensors, SGD with momentum written out (nn/optim modules are a later issue).
  gb::manual_seed(0);
  std::vector<gb::Tensor> params;
  auto layer = [&](int64_t in, int64_t out) {
    double bound = 1.0 / std::sqrt(double(in));
    params.push_back((gb::rand({out, in}) * (2 * bound) - bound).requires_grad_());
    params.push_back((gb::rand({out}) * (2 * bound) - bound).requires_grad_());
  };
  layer(784, 1024);
  layer(1024, 1024);
  layer(1024, 10);
  std::vector<gb::Tensor> velocity;
  for (auto& p : params) velocity.push_back(gb::zeros_like(p));
  auto x = gb::randn({batch, 784});
  auto y = gb::randint(0, 10, {batch});
  auto gb_step = [&] {
    auto h = F::relu(F::linear(x, params[0], params[1]));
    h = F::relu(F::linear(h, params[2], params[3]));
    auto loss = F::cross_entropy(F::linear(h, params[4], params[5]), y);
    for (auto& p : params) p.mutable_grad() = gb::Tensor();
    loss.backward();
    gb::NoGradGuard ng;
    for (size_t i = 0; i < params.size(); ++i) {
      velocity[i].mul_(0.9).add_(params[i].grad());
      params[i].sub_(velocity[i], 0.01);
    }
  };

  torch::manual_seed(0);
  auto net = std::make_shared<TorchNet>();
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto tx = torch::randn({batch, 784});
  auto ty = torch::randint(0, 10, {batch});
  auto torch_step = [&] {
    auto loss = torch::nn::functional::cross_entropy(net->forward(tx), ty);
    opt.zero_grad();
    loss.backward();
    opt.step();
  };

  torch::set_num_threads(1);
  auto [ours, peer1] = bench::compare(gb_step, torch_step, 3, 1.5);
  torch::set_num_threads(threads);
  gb::set_num_threads(threads);  // OpenBLAS count again (shared library)
  double peerN = bench::time_per_call(torch_step, 3, 1.5);
  double peer = std::min(peer1, peerN);
  bench::emit("mlp_step", "step_ms_784_1024_1024_10_b256", ours * 1e3, "ms", peer * 1e3,
              "\"threads\": " + std::to_string(threads) + ", \"libtorch_intraop1_ms\": " + std::to_string(peer1 * 1e3) +
                  ", \"libtorch_intraopN_ms\": " + std::to_string(peerN * 1e3));
  return 0;
}
