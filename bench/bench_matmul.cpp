// bench/bench_matmul.cpp — GEMM throughput: 1024x1024 @ 1024x1024 float32, GFLOP/s, glassbox vs libtorch, with the
// same number of threads. Target: within 10% of libtorch.
// Then small products, where glassbox runs libxsmm's generated kernels (engine/ops/small_gemm.h) and libtorch
// OpenBLAS: a linear layer's three products (forward x W^T, input gradient g W, weight gradient g^T x) at the tiny
// MLP's shapes, and square products up to and past glassbox's bound for them (4M multiply-adds; 192^3 is past it);
// and the MLP's (784-1024-1024-10, b256) five large products, which glassbox runs blocked on libxsmm's kernels on
// AVX-512 CPUs (engine/ops/blocked_gemm.h), on OpenBLAS elsewhere: us per product.
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

  struct Small {
    const char* name;
    int64_t n, m, k;
    bool ta, tb;  // A given as the transpose of a (k x n) matrix, B of an (m x k) one
  };
  const Small smalls[] = {
      {"linear_fwd_32x64x64", 32, 64, 64, false, true},  {"linear_dx_32x64x64", 32, 64, 64, false, false},
      {"linear_dw_64x64x32", 64, 64, 32, true, false},   {"linear_fwd_32x64x32", 32, 64, 32, false, true},
      {"linear_fwd_32x4x64", 32, 4, 64, false, true},    {"square_48", 48, 48, 48, false, false},
      {"square_64", 64, 64, 64, false, false},           {"square_64_bt", 64, 64, 64, false, true},
      {"square_96", 96, 96, 96, false, false},           {"square_128", 128, 128, 128, false, false},
      {"square_160", 160, 160, 160, false, false},       {"square_192", 192, 192, 192, false, false},
      {"mlp_fwd1_256x1024x784", 256, 1024, 784, false, true},
      {"mlp_fwd2_256x1024x1024", 256, 1024, 1024, false, true},
      {"mlp_dx2_256x1024x1024", 256, 1024, 1024, false, false},
      {"mlp_dw1_1024x784x256", 1024, 784, 256, true, false},
      {"mlp_dw2_1024x1024x256", 1024, 1024, 256, true, false},
  };
  for (const Small& s : smalls) {
    auto ga = s.ta ? gb::randn({s.k, s.n}).t() : gb::randn({s.n, s.k});
    auto gbm = s.tb ? gb::randn({s.m, s.k}).t() : gb::randn({s.k, s.m});
    auto tA = s.ta ? torch::randn({s.k, s.n}).t() : torch::randn({s.n, s.k});
    auto tB = s.tb ? torch::randn({s.m, s.k}).t() : torch::randn({s.k, s.m});
    gb::NoGradGuard g_no_grad;
    torch::NoGradGuard t_no_grad;
    const bool large = double(s.n * s.m * s.k) > 4.0 * 1024 * 1024;
    auto [o, p] = bench::compare([&] { auto c = gb::mm(ga, gbm); }, [&] { auto c = torch::mm(tA, tB); },
                                 large ? 20 : 200, 0.3);
    bench::emit("matmul", std::string(large ? "" : "small_") + s.name + "_us", o * 1e6, "us", p * 1e6,
                "\"gflops\": " + std::to_string(2.0 * double(s.n * s.m * s.k) / o / 1e9) +
                    ", \"peer_gflops\": " + std::to_string(2.0 * double(s.n * s.m * s.k) / p / 1e9));
  }
  return 0;
}
