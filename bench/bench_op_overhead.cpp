// bench/bench_op_overhead.cpp — the fixed cost of an op: a multiply of two 1-element tensors, forward only and
// forward + backward, in ns per op, glassbox vs libtorch. Target: at most half of libtorch's.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include "bench_common.h"

int main() {
  gb::set_num_threads(1);
  torch::set_num_threads(1);
  const int inner = 2000;
  const double seconds = 0.3;

  {  // forward, no autograd
    auto a = gb::ones({1}), b = gb::ones({1});
    auto ta = torch::ones({1}), tb = torch::ones({1});
    auto [ours, peer] = bench::compare([&] { auto c = a * b; }, [&] { auto c = ta * tb; }, inner, seconds);
    bench::emit("op_overhead", "mul_forward_ns", ours * 1e9, "ns", peer * 1e9);
  }
  {  // forward with a graph, then backward into a leaf
    auto a = gb::ones({1}, gb::requires_grad()), b = gb::ones({1});
    auto ta = torch::ones({1}, torch::requires_grad()), tb = torch::ones({1});
    auto [ours, peer] = bench::compare(
        [&] {
          auto c = a * b;
          c.backward();
        },
        [&] {
          auto c = ta * tb;
          c.backward();
        },
        inner, seconds);
    bench::emit("op_overhead", "mul_forward_backward_ns", ours * 1e9, "ns", peer * 1e9);
  }
  {  // a chain of 10 tiny ops with autograd: per-op cost inside a graph
    auto a = gb::ones({1}, gb::requires_grad());
    auto ta = torch::ones({1}, torch::requires_grad());
    auto [ours, peer] = bench::compare(
        [&] {
          auto c = a;
          for (int i = 0; i < 10; ++i) c = c * 1.0001;
          c.backward();
        },
        [&] {
          auto c = ta;
          for (int i = 0; i < 10; ++i) c = c * 1.0001;
          c.backward();
        },
        inner / 10, seconds);
    bench::emit("op_overhead", "chain10_per_op_forward_backward_ns", ours * 1e9 / 10, "ns", peer * 1e9 / 10);
  }
  return 0;
}
