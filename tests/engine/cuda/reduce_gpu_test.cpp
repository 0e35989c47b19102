// tests/engine/cuda/reduce_gpu_test.cpp — GPU tier: the row reductions of engine/cuda/reduce.cu through sum, mean,
// amax/amin, max/min against the CPU: any set of dims, keepdim, every dtype, empty dims, long rows (the two-pass
// path), and the gradients that flow back through them.
#include <cmath>

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

TEST_CASE("reductions over leading dims run by columns, every float dtype, against the cpu") {
  // (4096, 1000) over dim 0: 32 column blocks, so the rows are split in chunks (the two-pass path); (64, 100000)
  // over dim 0: enough column blocks for one pass; (8, 300, 70) over dim 1: an outer dim; a Linear's bias gradient.
  gb::manual_seed(13);
  struct Case {
    std::vector<int64_t> shape, dims;
  };
  const Case cases[] = {{{4096, 1000}, {0}}, {{64, 100000}, {0}}, {{8, 300, 70}, {1}}, {{5, 6, 7, 33}, {1, 2}}};
  for (const Case& k : cases) {
    const gb::Tensor x = gb::randn(k.shape);
    for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16}) {
      CAPTURE(k.shape);
      CAPTURE(gb::to_string(t));
      const gb::Tensor c = x.to(t), g = c.to(kGpu);
      const double tol = t == gb::kDouble ? 1e-12 : t == gb::kFloat ? 1e-5 : t == gb::kHalf ? 2e-3 : 1.6e-2;
      gbtest::check_close(g.sum(k.dims), c.sum(k.dims), tol, tol * 10);
      gbtest::check_close(g.mean(k.dims, true), c.mean(k.dims, true), tol, tol);
      gbtest::check_close(g.amax(k.dims), c.amax(k.dims), 0, 0);
      gbtest::check_close(g.amin(k.dims), c.amin(k.dims), 0, 0);
    }
  }
  // integers and bool sum exactly; prod over a short leading dim; NaN wins a column's max
  const gb::Tensor i = gb::randint(-50, 50, {300, 40});
  CHECK(gb::equal(i.to(kGpu).sum({0}).cpu(), i.sum({0})));
  CHECK(gb::equal((i > 0).to(kGpu).sum({0}).cpu(), (i > 0).sum({0})));
  const gb::Tensor p = gb::rand({6, 50}) + 0.5;
  gbtest::check_close(p.to(kGpu).prod(0), p.prod(0), 1e-5, 1e-6);
  gb::Tensor n = gb::randn({200, 40});
  n[150][3].fill_(NAN);
  gb::Tensor m = n.to(kGpu).amax({0}).cpu();
  CHECK(std::isnan(m[3].item().to_double()));
  gbtest::check_close(m.slice(0, 4), n.amax({0}).slice(0, 4), 0, 0);
  // a Linear's bias gradient: the output gradient summed over the batch
  gb::nn::Linear lin(1000, 300);
  gb::Tensor xin = gb::randn({4096, 1000});
  lin(xin).sum().backward();
  gb::Tensor bias_cpu = lin->bias.grad().clone();
  lin->zero_grad();
  lin->to(kGpu);
  lin(xin.to(kGpu)).sum().backward();
  gbtest::check_close(lin->bias.grad(), bias_cpu, 1e-6, 1e-6);  // 4096 ones per column
}
