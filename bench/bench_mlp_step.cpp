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

  // glassbox: the same model with gb::nn modules and gb::optim::SGD (module calls, hooks check, module scopes and
  // the optimizer's state bookkeeping included).
  gb::manual_seed(0);
  gb::nn::Sequential net_gb(gb::nn::Linear(784, 1024), gb::nn::ReLU(), gb::nn::Linear(1024, 1024), gb::nn::ReLU(),
                            gb::nn::Linear(1024, 10));
  gb::optim::SGD opt_gb(net_gb->parameters(), gb::optim::SGDOptions(0.01).momentum(0.9));
  auto x = gb::randn({batch, 784});
  auto y = gb::randint(0, 10, {batch});
  auto gb_step = [&] {
    auto loss = F::cross_entropy(net_gb->forward(x), y);
    opt_gb.zero_grad();
    loss.backward();
    opt_gb.step();
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
