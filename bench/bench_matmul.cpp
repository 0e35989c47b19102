// bench/bench_matmul.cpp — GEMM throughput: 1024x1024 @ 1024x1024 float32, GFLOP/s, glassbox vs libtorch, with the
// same number of threads. Target: within 10% of libtorch.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include "bench_common.h"

int main() {
  const int threads = gb::get_num_threads();
  gb::set_num_threads(threads);
  torch::set_num_threads(threads);
  const int64_t n = 1024;
  auto a = gb::randn({n, n}), b = gb::randn({n, n});
  auto ta = torch::randn({n, n}), tb = torch::randn({n, n});
  auto [ours, peer] = bench::compare([&] { auto c = gb::matmul(a, b); }, [&] { auto c = torch::matmul(ta, tb); }, 3, 1.0);
  double flops = 2.0 * n * n * n;
  // GFLOP/s: higher is better, so report ratio as ours/peer throughput
  bench::emit("matmul", "gflops_1024_f32", flops / ours / 1e9, "GFLOP/s", flops / peer / 1e9,
              "\"threads\": " + std::to_string(threads));
  auto at = a.t();
  auto tat = ta.t();
  auto [ours_t, peer_t] =
      bench::compare([&] { auto c = gb::matmul(at, b); }, [&] { auto c = torch::matmul(tat, tb); }, 3, 1.0);
  bench::emit("matmul", "gflops_1024_f32_transposed_lhs", flops / ours_t / 1e9, "GFLOP/s", flops / peer_t / 1e9,
              "\"threads\": " + std::to_string(threads));
  return 0;
}
