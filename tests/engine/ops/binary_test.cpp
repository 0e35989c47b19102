// tests/engine/ops/binary_test.cpp — add, sub, mul, div, pow, maximum, minimum: values, broadcasting, promotion,
// in-place forms, errors, and gradients (gradcheck in f64 over broadcast and non-contiguous inputs).
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;

TEST_CASE("add broadcasts and promotes like PyTorch") {
  auto a = gb::tensor({1.0, 2.0, 3.0}).view({3, 1});
  auto b = gb::tensor({10.0, 20.0});
  auto c = a + b;
  CHECK(c.sizes() == gb::IntArrayRef({3, 2}));
  check_values(c, {11, 21, 12, 22, 13, 23});
  CHECK(c.scalar_type() == gb::kFloat);
  auto i = gb::arange(3);
  CHECK(i.scalar_type() == gb::kInt64);
  CHECK((i + 1).scalar_type() == gb::kInt64);
  CHECK((i + 1.5).scalar_type() == gb::kFloat);
  CHECK((i / 2).scalar_type() == gb::kFloat);
  CHECK((gb::ones({2}, gb::kHalf) + gb::ones({}, gb::kFloat64)).scalar_type() == gb::kHalf);
  CHECK((gb::ones({2}, gb::kHalf) + gb::ones({2}, gb::kBFloat16)).scalar_type() == gb::kFloat);
  check_values(gb::add(a, b, 2).view({-1}), {21, 41, 22, 42, 23, 43});
}

TEST_CASE("broadcast mismatch names the op and both shapes") {
  auto a = gb::ones({2, 3});
  auto b = gb::ones({4});
  CHECK_THROWS_WITH_AS(a * b, doctest::Contains("mul: The size of tensor a (3) must match the size of tensor b (4)"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("[2, 3] and [4]"), gb::Error);
}

TEST_CASE("scalar forms and reverse operators") {
  auto x = gb::tensor({1.0, 2.0, 4.0});
  check_values(2.0 - x, {1, 0, -2});
  check_values(8.0 / x, {8, 4, 2});
  check_values(x * 3, {3, 6, 12});
  check_values(x.pow(2), {1, 4, 16});
  check_values(gb::pow(2.0, x), {2, 4, 16});
  check_values(gb::maximum(x, gb::tensor({3.0, 1.0, 4.0})), {3, 2, 4});
  check_values(gb::minimum(x, gb::tensor({3.0, 1.0, 4.0})), {1, 1, 4});
}

TEST_CASE("in-place arithmetic bumps the version and respects broadcasting rules") {
  auto x = gb::ones({2, 2});
  auto v0 = x._version();
  x.add_(gb::tensor({1.0, 2.0}));
  x.mul_(2);
  CHECK(x._version() == v0 + 2);
  check_values(x, {4, 6, 4, 6});
  auto small = gb::ones({2});
  CHECK_THROWS_WITH_AS(small.add_(gb::ones({2, 2})), doctest::Contains("doesn't match the broadcast shape"), gb::Error);
  auto ints = gb::arange(3);
  CHECK_THROWS_WITH_AS(ints.add_(0.5), doctest::Contains("can't be cast"), gb::Error);
}

TEST_CASE("gradients of the binary ops match finite differences") {
  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto b = gb::randn({4}, gbtest::f64_grad());
  auto pos = (gb::rand({3, 1}, gb::kFloat64) + 0.5).requires_grad_();
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0] + v[1] * 2; }, {a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::sub(v[0], v[1], 3); }, {a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0] * v[1]; }, {a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0] / v[1]; }, {a, pos}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0].pow(3); }, {a}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[1].pow(v[0]); }, {a, pos}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::maximum(v[0], v[1]); }, {a, b}));
  // a non-contiguous view as input
  auto at = gb::randn({4, 3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0].t() * v[1]; }, {at, b}));
}

TEST_CASE("mixed-dtype gradients come back in each input's dtype") {
  auto a = gb::ones({2}, gb::TensorOptions().dtype(gb::kFloat).requires_grad(true));
  auto b = gb::ones({2}, gb::TensorOptions().dtype(gb::kFloat64).requires_grad(true));
  (a * b).sum().backward();
  CHECK(a.grad().scalar_type() == gb::kFloat);
  CHECK(b.grad().scalar_type() == gb::kFloat64);
}
