// tests/engine/ops/rearrange_test.cpp — flip and repeat: values over any dims and dtypes, copies not views,
// gradients (gradcheck, gradgradcheck), meta, errors.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("flip: one dim, several dims, negative dims, any dtype") {
  auto x = gb::arange(6, gb::kFloat64).view({2, 3});
  check_values(x.flip({1}), {2, 1, 0, 5, 4, 3});
  check_values(gb::flip(x, {0}), {3, 4, 5, 0, 1, 2});
  check_values(x.flip({0, -1}), {5, 4, 3, 2, 1, 0});
  check_values(x.flip({}), {0, 1, 2, 3, 4, 5});
  check_values(x.t().flip({0}), {2, 5, 1, 4, 0, 3});  // non-contiguous input
  auto i = gb::arange(24, gb::kInt64).view({2, 3, 4});
  auto f = i.flip({1});
  CHECK(f.scalar_type() == gb::kInt64);
  CHECK(f.index({1, 0, 3}).item<int64_t>() == 23);
  CHECK(gb::tensor(std::vector<bool>{true, false}).flip({0}).index({0}).item<bool>() == false);
  CHECK(gb::tensor({1.5}).reshape({}).flip({0}).item<double>() == 1.5);
  CHECK(gb::zeros({0, 2}).flip({0}).sizes() == gb::IntArrayRef({0, 2}));
  // a copy: writing to it leaves the input alone
  auto y = x.flip({1});
  y.fill_(7);
  CHECK(x.index({0, 0}).item<double>() == 0);
  CHECK_THROWS_WITH_AS(x.flip({1, -1}), doctest::Contains("dim 1 appears multiple times in the list of dims"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(x.flip({2}), doctest::Contains("flip: Dimension out of range"), gb::IndexError);
}

TEST_CASE("repeat: tiles along each dim, extra leading dims") {
  auto x = gb::tensor({{1.0, 2.0}, {3.0, 4.0}});
  check_values(x.repeat({1, 2}), {1, 2, 1, 2, 3, 4, 3, 4});
  check_values(x.repeat({2, 1}), {1, 2, 3, 4, 1, 2, 3, 4});
  auto r = gb::repeat(x, {2, 1, 2});
  CHECK(r.sizes() == gb::IntArrayRef({2, 2, 4}));
  check_values(r.index({1}), {1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(x.repeat({0, 3}).sizes() == gb::IntArrayRef({0, 6}));
  CHECK(gb::tensor({5.0}).reshape({}).repeat({3}).sizes() == gb::IntArrayRef({3}));
  CHECK(gb::tensor({5, 6}, gb::kInt64).repeat({2}).scalar_type() == gb::kInt64);
  auto same = x.repeat({1, 1});
  same.fill_(0);
  CHECK(x.index({0, 0}).item<double>() == 1);  // a copy even when nothing repeats
  CHECK_THROWS_WITH_AS(x.repeat({2}),
                       doctest::Contains("Number of dimensions of repeat dims can not be smaller than "
                                         "number of dimensions of tensor"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(x.repeat({1, -1}), doctest::Contains("Trying to create tensor with negative dimension -1"),
                       gb::Error);
}

TEST_CASE("flip and repeat gradients, meta") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gbtest::f64_grad());
  auto y = x.repeat({2, 2});
  CHECK(y.grad_fn()->name() == "RepeatBackward0");
  (y * gb::arange(12, gb::kFloat64).view({2, 6})).sum().backward();
  // x[j] appears at columns j and j+3 of both rows: (j + j+3) + (6+j + 9+j)
  check_values(x.grad(), {18, 22, 26});
  x.mutable_grad() = gb::Tensor();
  auto f = x.flip({0});
  CHECK(f.grad_fn()->name() == "FlipBackward0");
  (f * gb::tensor({1.0, 10.0, 100.0}, gb::kFloat64)).sum().backward();
  check_values(x.grad(), {100, 10, 1});
  gb::manual_seed(43);
  auto a = gb::randn({2, 3, 2}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& in) { return in[0].flip({0, 2}); }, {a}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& in) { return in[0].repeat({2, 1, 3, 1}); }, {a}));
  CHECK(gb::autograd::gradgradcheck(
      [](const gb::variable_list& in) {
        return gb::variable_list{(in[0].repeat({1, 2, 1}) * in[0].flip({1}).repeat({1, 2, 1})).sum()};
      },
      {a}));
  auto m = gb::empty({2, 3}, gb::TensorOptions().device(gb::kMeta));
  CHECK(m.flip({1}).is_meta());
  CHECK(m.repeat({2, 2}).sizes() == gb::IntArrayRef({4, 6}));
}
