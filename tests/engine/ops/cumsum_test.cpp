// tests/engine/ops/cumsum_test.cpp — cumsum: values along each dim, dtypes (int and bool to int64, the dtype
// argument), 0-dim and empty inputs, gradients (gradcheck, gradgradcheck, through a dtype cast), meta, errors;
// cumprod: values, integers, its exact gradient where inputs are 0 (by hand and by finite differences), the double
// backward without zeros and its refusal with them, meta.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("cumsum along each dim") {
  auto x = gb::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  check_values(x.cumsum(1), {1, 3, 6, 4, 9, 15});
  check_values(gb::cumsum(x, 0), {1, 2, 3, 5, 7, 9});
  check_values(x.cumsum(-1), {1, 3, 6, 4, 9, 15});
  check_values(x.t().cumsum(1), {1, 5, 2, 7, 3, 9});  // non-contiguous input
  CHECK(x.cumsum(0).scalar_type() == gb::kFloat);
  auto s = gb::tensor({2.5}).reshape({});
  CHECK(s.cumsum(0).dim() == 0);
  CHECK(s.cumsum(-1).item<double>() == 2.5);
  CHECK(gb::zeros({0, 3}).cumsum(0).sizes() == gb::IntArrayRef({0, 3}));
  // float32 accumulates in double, as libtorch's CPU kernel: 1e8 + 1 + ... keeps the ones
  auto big = gb::tensor({1e8f, 1.0f, 1.0f, -1e8f});
  check_values(big.cumsum(0).narrow(0, 3, 1), {2});
}

TEST_CASE("cumsum dtypes: integers and bool sum to int64, dtype= picks the result's") {
  auto i = gb::tensor({1, 2, 3}, gb::kInt32);
  CHECK(i.cumsum(0).scalar_type() == gb::kInt64);
  check_values(i.cumsum(0), {1, 3, 6});
  auto b = gb::tensor(std::vector<bool>{true, false, true, true});
  CHECK(b.cumsum(0).scalar_type() == gb::kInt64);
  check_values(b.cumsum(0), {1, 1, 2, 3});
  auto d = i.cumsum(0, gb::kFloat64);
  CHECK(d.scalar_type() == gb::kFloat64);
  check_values(d, {1, 3, 6});
  CHECK(gb::tensor({1.0f, 2.0f}).cumsum(0, gb::kInt32).scalar_type() == gb::kInt32);
  CHECK_THROWS_WITH_AS(b.cumsum(0, gb::kBool), doctest::Contains("cumsum: a bool result is not supported"),
                       gb::TypeError);
  CHECK_THROWS_WITH_AS(i.cumsum(1), "cumsum: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
                       gb::IndexError);
}

TEST_CASE("cumsum gradients: the reversed running sum") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gbtest::f64_grad());
  auto y = x.cumsum(0);
  CHECK(y.grad_fn()->name() == "CumsumBackward0");
  (y * gb::tensor({1.0, 10.0, 100.0}, gb::kFloat64)).sum().backward();
  check_values(x.grad(), {111, 110, 100});
  gb::manual_seed(42);
  auto a = gb::randn({3, 4, 2}, gbtest::f64_grad());
  for (int64_t d : {0, 1, 2}) {
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& in) { return in[0].cumsum(d); }, {a}));
    CHECK(gb::autograd::gradgradcheck([&](const gb::variable_list& in) { return gb::variable_list{in[0].cumsum(d)}; },
                                      {a}));
  }
  auto f = gb::randn({4}, gb::TensorOptions().dtype(gb::kFloat).requires_grad(true));
  f.cumsum(0, gb::kFloat64).sum().backward();
  CHECK(f.grad().scalar_type() == gb::kFloat);  // back in the input's dtype
  check_values(f.grad(), {4, 3, 2, 1});
  auto m = gb::empty({3, 5}, gb::TensorOptions().device(gb::kMeta));
  CHECK(m.cumsum(1).is_meta());
  CHECK(m.cumsum(1).sizes() == gb::IntArrayRef({3, 5}));
}

TEST_CASE("cumprod: values, integers, the gradient with zeros by hand and by finite differences") {
  auto x = gb::tensor({{1.0, 2.0, 3.0}, {4.0, 0.5, 2.0}});
  check_values(x.cumprod(1), {1, 2, 6, 4, 2, 4});
  check_values(gb::cumprod(x, 0), {1, 2, 3, 4, 1, 6});
  CHECK(gb::tensor({2, 3, 4}).cumprod(0).scalar_type() == gb::kInt64);
  check_values(gb::tensor({2, 3, 4}).cumprod(0), {2, 6, 24});
  // x = (2, 0, 3, 0): y = (2, 0, 0, 0); dsum(y)/dx = (1, 2 + 2*3 + 0, 0, 0): at the first zero y_0 (1 + x_2 + x_2 x_3)
  auto z = gb::tensor({2.0, 0.0, 3.0, 0.0}).requires_grad_();
  z.cumprod(0).sum().backward();
  check_values(z.grad(), {1, 8, 0, 0});
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0].cumprod(1); },
                           {gb::tensor({{1.5, 0.0, -2.0, 0.0}, {0.0, 3.0, 0.5, 2.0}}, gbtest::f64_grad())}));
  CHECK(gbtest::gradgradcheck1([](const gb::variable_list& v) { return v[0].cumprod(0); },
                               {gb::tensor({1.5, -2.0, 0.5, 3.0}, gbtest::f64_grad())}));
  auto w = gb::tensor({1.0, 0.0, 2.0}, gbtest::f64_grad());
  CHECK_THROWS_WITH(gb::autograd::grad({w.cumprod(0).sum()}, {w}, {}, true, true),
                    doctest::Contains("double backward (create_graph) of an input with zeros"));
  auto m = gb::empty({3, 5}, gb::TensorOptions().device(gb::kMeta));
  CHECK(m.cumprod(1).is_meta());
}
