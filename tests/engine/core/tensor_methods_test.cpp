// tests/engine/core/tensor_methods_test.cpp — Tensor methods and operators forward to the free functions: same
// values, same autograd nodes.
#include "support/check.h"

TEST_CASE("methods equal their free functions") {
  gb::manual_seed(2);
  auto x = gb::randn({3, 4});
  auto y = gb::randn({3, 4});
  CHECK(gb::equal(x.add(y, 2), gb::add(x, y, 2)));
  CHECK(gb::equal(x.sum({1}, true), gb::sum(x, {1}, true)));
  CHECK(gb::equal(x.mean({0}), gb::mean(x, {0})));
  CHECK(gb::equal(x.softmax(1), gb::softmax(x, 1)));
  CHECK(gb::equal(x.matmul(y.t()), gb::matmul(x, y.t())));
  CHECK(gb::equal(std::get<1>(x.max(1)), std::get<1>(gb::max(x, 1))));
  CHECK(gb::equal(x.clamp(-0.1, 0.1), gb::clamp(x, -0.1, 0.1)));
  CHECK(gb::equal(x.where(x > 0, y), gb::where(x > 0, x, y)));
  CHECK(gb::equal(x.max(y), gb::maximum(x, y)));
  CHECK(x.chunk(2, 1).size() == 2);
}

TEST_CASE("operators are the arithmetic and comparison ops") {
  auto a = gb::tensor({1.0, 2.0});
  auto b = gb::tensor({3.0, 2.0});
  gbtest::check_values(a + b, {4, 4});
  gbtest::check_values(a - 1, {0, 1});
  gbtest::check_values(2 * a, {2, 4});
  gbtest::check_values(a / b, {1.0 / 3, 1});
  gbtest::check_values(-a, {-1, -2});
  gbtest::check_values(a == b, {0, 1});
  gbtest::check_values(a < b, {1, 0});
  gbtest::check_values(a >= 2.0, {0, 1});
  auto c = a.clone();
  c += b;
  c -= 1.0;
  c *= 2.0;
  c /= b;
  gbtest::check_values(c, {2, 3});
  auto r = gb::ones({2}, gb::requires_grad());
  CHECK((r * 2).grad_fn()->name() == (gb::mul(r, 2)).grad_fn()->name());
}
