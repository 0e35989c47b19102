// tests/engine/ops/masked_select_test.cpp — masked_select: values in row-major order, broadcasting of input and
// mask, dtypes, empty selections, gradients (gradcheck, gradgradcheck, summed over broadcast dims), errors.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("masked_select: row-major order, broadcasting") {
  auto x = gb::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  check_values(x.masked_select(x > 2.5), {3, 4, 5, 6});
  check_values(gb::masked_select(x, gb::tensor(std::vector<bool>{true, false, true})), {1, 3, 4, 6});  // mask (3)
  auto col = gb::tensor({10.0, 20.0}).view({2, 1});
  check_values(col.masked_select(x > 2.5), {10, 20, 20, 20});  // input broadcast to the mask's shape
  CHECK(x.masked_select(x > 100).sizes() == gb::IntArrayRef({0}));
  CHECK(x.t().masked_select(x.t() > 4).sizes() == gb::IntArrayRef({2}));
  check_values(x.t().masked_select(x.t() > 4), {5, 6});
  auto i = gb::tensor({7, 8, 9}, gb::kInt64);
  auto s = i.masked_select(i != 8);
  CHECK(s.scalar_type() == gb::kInt64);
  check_values(s, {7, 9});
}

TEST_CASE("masked_select gradients and errors") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gbtest::f64_grad());
  auto m = gb::tensor(std::vector<bool>{true, false, true, false, false, true}).view({2, 3});
  auto y = x.masked_select(m);  // x broadcast to (2, 3): picks x0, x2, x2
  CHECK(y.grad_fn()->name() == "MaskedSelectBackward0");
  (y * gb::tensor({1.0, 10.0, 100.0}, gb::kFloat64)).sum().backward();
  check_values(x.grad(), {1, 0, 110});
  gb::manual_seed(44);
  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto mask = gb::rand({3, 4}) > 0.4;
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& in) { return in[0].masked_select(mask); }, {a}));
  CHECK(gb::autograd::gradgradcheck(
      [&](const gb::variable_list& in) { return gb::variable_list{in[0].masked_select(mask).square()}; }, {a}));
  CHECK_THROWS_WITH_AS(a.masked_select(gb::ones({3, 4})),
                       "masked_select: expected BoolTensor for mask, but got Float. Make the mask with a comparison "
                       "(x > 0) or .to(gb::kBool).",
                       gb::TypeError);
  CHECK_THROWS_WITH_AS(a.masked_select(gb::ones({2, 4}) > 0), doctest::Contains("The size of tensor a (3)"), gb::Error);
  auto meta = gb::empty({3}, gb::TensorOptions().device(gb::kMeta));
  CHECK_THROWS_WITH_AS(meta.masked_select(meta > 0), doctest::Contains("masked_select: Cannot read the values of a meta tensor"), gb::Error);
}

TEST_CASE("nonzero: coordinates in row-major order, any dtype") {
  auto m = gb::tensor({{0.0, 1.5, 0.0}, {-2.0, 0.0, 3.0}});
  auto nz = m.nonzero();
  CHECK(nz.scalar_type() == gb::kInt64);
  CHECK(nz.sizes() == gb::IntArrayRef({3, 2}));
  check_values(nz, {0, 1, 1, 0, 1, 2});
  check_values(gb::nonzero(gb::tensor({0, 7, 0, 9}).to(gb::kUInt8)), {1, 3});
  CHECK(gb::nonzero(gb::zeros({2, 2})).sizes() == gb::IntArrayRef({0, 2}));
  CHECK(gb::nonzero(gb::scalar_tensor(3.0)).sizes() == gb::IntArrayRef({1, 0}));  // a 0-dim nonzero: one empty row
  CHECK_THROWS_WITH_AS(gb::nonzero(gb::zeros({2}, gb::kMeta)), doctest::Contains("nonzero"), gb::Error);
}
