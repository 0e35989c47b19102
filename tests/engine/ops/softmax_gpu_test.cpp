// tests/engine/ops/softmax_gpu_test.cpp — GPU tier: softmax and log_softmax on cuda (the last dim: one kernel each
// way, engine/cuda/softmax.cu; other dims composed of the CUDA kernels) against the CPU, along every dim, in every
// floating dtype, with -inf and NaN rows and rows longer than a block, and their gradients.
#include <cmath>

#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("softmax and log_softmax along any dim equal the cpu") {
  gb::manual_seed(31);
  gb::Tensor x = gb::randn({3, 4, 5}) * 4;
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16})
    for (int64_t d : {0, 1, 2, -1}) {
      CAPTURE(gb::to_string(t));
      CAPTURE(d);
      const double tol = t == gb::kDouble ? 1e-12 : t == gb::kFloat ? 1e-6 : t == gb::kHalf ? 1e-3 : 8e-3;
      gb::Tensor xt = x.to(t);
      gbtest::check_close(gb::softmax(xt.to(kGpu), d), gb::softmax(xt, d), tol, tol);
      gbtest::check_close(gb::log_softmax(xt.to(kGpu), d), gb::log_softmax(xt, d), tol, tol);
    }
  // a row with -inf entries and a row with a NaN
  gb::Tensor y = gb::tensor({1.0, -INFINITY, 2.0, NAN, 0.0, 1.0}).reshape({2, 3});
  gbtest::check_close(gb::softmax(y.to(kGpu), 1), gb::softmax(y, 1), 1e-6, 1e-7);
  gbtest::check_close(gb::log_softmax(y.to(kGpu), 1), gb::log_softmax(y, 1), 1e-6, 1e-7);
  // a 0-dim input
  gbtest::check_values(gb::softmax(gb::tensor(3.0).to(kGpu), 0), {1.0});
}

TEST_CASE("their gradients on cuda equal the cpu") {
  gb::manual_seed(32);
  gb::Tensor x = gb::randn({6, 10}, gb::kDouble).requires_grad_(true);
  gb::Tensor xg = x.detach().to(kGpu).requires_grad_(true);
  gb::Tensor w = gb::randn({6, 10}, gb::kDouble);
  ((gb::softmax(x, 1) * w).sum() + (gb::log_softmax(x, 0) * w).sum()).backward();
  ((gb::softmax(xg, 1) * w.to(kGpu)).sum() + (gb::log_softmax(xg, 0) * w.to(kGpu)).sum()).backward();
  gbtest::check_close(xg.grad(), x.grad(), 1e-10, 1e-12);
}

TEST_CASE("rows longer than a block, and the fused backward in float32 and float16") {
  gb::manual_seed(33);
  for (gb::ScalarType t : {gb::kFloat, gb::kHalf}) {
    CAPTURE(gb::to_string(t));
    const double tol = t == gb::kFloat ? 1e-5 : 2e-3;
    gb::Tensor x = (gb::randn({5, 3000}) * 3).to(t);
    gbtest::check_close(gb::softmax(x.to(kGpu), -1), gb::softmax(x.to(gb::kFloat), -1).to(t), tol, tol);
    gbtest::check_close(gb::log_softmax(x.to(kGpu), -1), gb::log_softmax(x.to(gb::kFloat), -1).to(t), tol, tol);
    gb::Tensor xc = x.to(gb::kFloat).requires_grad_(), xg = x.to(kGpu).requires_grad_();
    gb::Tensor w = gb::randn({5, 3000});
    ((gb::softmax(xc, -1) * w).sum() + (gb::log_softmax(xc, -1) * w).sum()).backward();
    ((gb::softmax(xg, -1) * w.to(t).to(kGpu)).sum() + (gb::log_softmax(xg, -1) * w.to(t).to(kGpu)).sum()).backward();
    gbtest::check_close(xg.grad(), xc.grad().to(t), tol * 10, tol * 10);
  }
}
