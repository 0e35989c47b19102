// bench/bench_bandwidth.cpp — the memory-bound row ops, forward and backward, against libtorch and against the
// machine's memory bandwidth measured in the same run (a STREAM triad):
//   softmax, log_softmax over the last dim and layer_norm over it (with weight and bias), float32, 8192 x 1024
//   (32 MiB per tensor: past the caches), forward then backward through autograd, as a training step runs them.
// Bytes counted as the least traffic each needs: forward reads x and writes y (2 tensors), backward reads the
// incoming gradient and the saved tensor and writes the input's gradient (3 tensors). One JSON line per op: value =
// glassbox ms, peer_value = libtorch ms, and glassbox's GB/s with its fraction of the triad's (target >= 0.7).
// Then cross_entropy (log_softmax + nll_loss, as PyTorch composes it) forward and backward at a classifier's shape
// and a language model's head (512 x 32000): ms, against libtorch; and glassbox's own nll_loss(log_softmax(x)), the
// same two nodes handing over the dense gradient instead of cross_entropy's compact one (ops/log_softmax_onehot.h):
// dense_ms, and the compact path's time as a fraction of it.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <string>
#include <utility>

#include "bench_common.h"

int main() {
  const int threads = gb::get_num_threads();
  gb::set_num_threads(threads);
  torch::set_num_threads(threads);
  gb::set_num_threads(threads);
  const double triad = bench::triad_gbs(threads);
  const int64_t rows = 8192, cols = 1024;
  const double bytes = 5.0 * double(rows * cols) * sizeof(float);

  gb::manual_seed(0);
  gb::Tensor x = gb::randn({rows, cols}).requires_grad_();
  gb::Tensor g = gb::randn({rows, cols});
  gb::nn::LayerNorm ln(gb::nn::LayerNormOptions({cols}));
  torch::Tensor tx = torch::from_blob(x.detach().data_ptr<float>(), {rows, cols}, torch::kFloat).clone().requires_grad_();
  torch::Tensor tg = torch::from_blob(g.data_ptr<float>(), {rows, cols}, torch::kFloat).clone();
  torch::nn::LayerNorm tln(torch::nn::LayerNormOptions({cols}));

  struct Op {
    const char* name;
    std::function<gb::Tensor()> ours;
    std::function<torch::Tensor()> theirs;
  };
  const Op ops[] = {
      {"softmax", [&] { return x.softmax(1); }, [&] { return tx.softmax(1); }},
      {"log_softmax", [&] { return x.log_softmax(1); }, [&] { return tx.log_softmax(1); }},
      {"layer_norm", [&] { return ln(x); }, [&] { return tln(tx); }},
  };
  for (const Op& op : ops) {
    auto ours = [&] {
      x.mutable_grad() = gb::Tensor();
      op.ours().backward(g);
    };
    auto theirs = [&] {
      tx.mutable_grad() = torch::Tensor();
      op.theirs().backward(tg);
    };
    auto [s, peer] = bench::compare(ours, theirs, 2, 0.6);
    const double gbs = bytes / s / 1e9;
    bench::emit("bandwidth", std::string(op.name) + "_fwd_bwd_ms_8192x1024", s * 1e3, "ms", peer * 1e3,
                "\"threads\": " + std::to_string(threads) + ", \"gbs\": " + std::to_string(gbs) +
                    ", \"libtorch_gbs\": " + std::to_string(bytes / peer / 1e9) + ", \"triad_gbs\": " +
                    std::to_string(triad) + ", \"fraction_of_triad\": " + std::to_string(gbs / triad) +
                    ", \"isa\": \"" + (std::getenv("GLASSBOX_CPU_CAPABILITY") ? std::getenv("GLASSBOX_CPU_CAPABILITY")
                                                                                : "widest") + "\"");
  }
  for (auto [n, c] : {std::pair<int64_t, int64_t>{256, 10}, std::pair<int64_t, int64_t>{512, 32000}}) {
    gb::Tensor logits = gb::randn({n, c}).requires_grad_();
    gb::Tensor target = gb::randint(0, c, {n});
    torch::Tensor tlogits =
        torch::from_blob(logits.detach().data_ptr<float>(), {n, c}, torch::kFloat).clone().requires_grad_();
    torch::Tensor ttarget = torch::from_blob(target.data_ptr<int64_t>(), {n}, torch::kLong).clone();
    auto ours = [&] {
      logits.mutable_grad() = gb::Tensor();
      gb::nn::functional::cross_entropy(logits, target).backward();
    };
    auto theirs = [&] {
      tlogits.mutable_grad() = torch::Tensor();
      torch::nn::functional::cross_entropy(tlogits, ttarget).backward();
    };
    auto dense = [&] {
      logits.mutable_grad() = gb::Tensor();
      gb::nll_loss(gb::log_softmax(logits, 1), target).backward();
    };
    auto [s, peer] = bench::compare(ours, theirs, c > 1000 ? 2 : 50, 0.6);
    auto [s_again, dense_s] = bench::compare(ours, dense, c > 1000 ? 2 : 50, 0.6);
    bench::emit("bandwidth", "cross_entropy_fwd_bwd_ms_" + std::to_string(n) + "x" + std::to_string(c), s * 1e3, "ms",
                peer * 1e3,
                "\"threads\": " + std::to_string(threads) + ", \"dense_ms\": " + std::to_string(dense_s * 1e3) +
                    ", \"compact_of_dense\": " + std::to_string(s_again / dense_s));
  }
  return 0;
}
