// tests/engine/cuda/reduce_gpu_test.cpp — GPU tier: the row reductions of engine/cuda/reduce.cu through sum, mean,
// amax/amin, max/min against the CPU: any set of dims, keepdim, every dtype, empty dims, long rows (the two-pass
// path), and the gradients that flow back through them.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("sum and mean over any dims equal the cpu") {
  gb::manual_seed(11);
  gb::Tensor x = gb::randn({4, 5, 6});
  gb::Tensor g = x.to(kGpu);
  const std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}, {-1}};
  for (const auto& dims : dim_sets)
    for (bool keep : {false, true}) {
      CAPTURE(dims.size());
      CAPTURE(keep);
      gbtest::check_close(g.sum(dims, keep), x.sum(dims, keep), 1e-5, 1e-5);
      gbtest::check_close(g.mean(dims, keep), x.mean(dims, keep), 1e-5, 1e-6);
    }
  gbtest::check_close(g.sum(), x.sum(), 1e-5, 1e-5);
  // a transposed input is reduced the same
  gbtest::check_close(g.transpose(0, 2).sum({1}), x.transpose(0, 2).sum({1}), 1e-5, 1e-5);
}

TEST_CASE("sums in every dtype accumulate as the cpu does") {
  gb::Tensor x = gb::arange(-50, 70).reshape({6, 20});
  for (gb::ScalarType t : {gb::kInt64, gb::kInt32, gb::kBool, gb::kDouble, gb::kHalf, gb::kBFloat16}) {
    CAPTURE(gb::to_string(t));
    gb::Tensor c = x.to(t);
    gb::Tensor s = c.to(kGpu).sum({1});
    CHECK(s.scalar_type() == c.sum({1}).scalar_type());
    gbtest::check_close(s, c.sum({1}), 1e-3, 0);
  }
  // an integer sum asked for as float
  gbtest::check_close(x.to(kGpu).sum({0}, false, gb::kFloat), x.sum({0}, false, gb::kFloat), 0, 0);
}

TEST_CASE("long rows take the two-pass path and stay accurate") {
  gb::manual_seed(12);
  gb::Tensor x = gb::rand({3, 1 << 20}, gb::kDouble);
  gb::Tensor g = x.to(kGpu);
  gbtest::check_close(g.sum({1}), x.sum({1}), 1e-12, 0);
  gbtest::check_close(g.to(gb::kFloat).sum(), x.to(gb::kFloat).sum(), 1e-5, 0);
  gbtest::check_close(g.amax({1}), x.amax({1}), 0, 0);
  gbtest::check_close(g.amin({1}), x.amin({1}), 0, 0);
  // many short rows (one block each)
  gb::Tensor y = gb::randn({5000, 3});
  gbtest::check_close(y.to(kGpu).sum({1}), y.sum({1}), 1e-5, 1e-6);
}

TEST_CASE("max and min propagate NaN and keep the dtype") {
  gb::Tensor x = gb::tensor({1.0, -2.0, 5.0, 3.0, NAN, 0.0}).reshape({2, 3});
  gb::Tensor g = x.to(kGpu);
  gbtest::check_close(g.amax({1}), x.amax({1}), 0, 0);
  gbtest::check_close(g.amin({1}), x.amin({1}), 0, 0);
  gbtest::check_values(gb::max(gb::tensor({4, -9, 7}).to(kGpu)), {7});
  CHECK(gb::max(gb::tensor({4, -9, 7}).to(kGpu)).scalar_type() == gb::kInt64);
  gbtest::check_close(gb::min(g.to(gb::kHalf)), gb::min(x.to(gb::kHalf)), 0, 0);
}

TEST_CASE("gradients through sum and mean on cuda") {
  gb::manual_seed(13);
  gb::Tensor x = gb::randn({3, 4}).requires_grad_(true);
  gb::Tensor xg = x.detach().to(kGpu).requires_grad_(true);
  (x.sum({1}) * gb::arange(3)).mean().backward();
  (xg.sum({1}) * gb::arange(3).to(kGpu)).mean().backward();
  CHECK(xg.grad().device() == kGpu);
  gbtest::check_close(xg.grad(), x.grad(), 1e-6, 1e-7);
}
