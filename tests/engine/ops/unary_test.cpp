// tests/engine/ops/unary_test.cpp — neg, abs, sign, square, reciprocal, exp, log, log1p, sqrt, rsqrt, sin, cos, tanh,
// sigmoid: values (edge cases 0, negative, NaN, inf; f16/bf16; integer inputs), node names, in-place forms, errors,
// gradcheck in f64 over several shapes and a non-contiguous view, and double backward.
#include <cmath>
#include <limits>

#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::expect;
using gbtest::kInf;
using gbtest::kNaN;

namespace {

gb::Tensor special() { return gb::tensor({-kInf, -2.0, -0.5, 0.0, 1.0, 4.0, kInf, kNaN}); }
}  // namespace

TEST_CASE("sign-like ops on floats, including 0, inf and NaN") {
  auto x = special();
  expect(gb::neg(x), {kInf, 2, 0.5, 0, -1, -4, -kInf, kNaN});
  expect(-x, {kInf, 2, 0.5, 0, -1, -4, -kInf, kNaN});
  expect(gb::abs(x), {kInf, 2, 0.5, 0, 1, 4, kInf, kNaN});
  CHECK_FALSE(std::signbit(gbtest::values(gb::abs(gb::tensor({-0.0})))[0]));  // |-0| is +0
  expect(gb::sign(x), {-1, -1, -1, 0, 1, 1, 1, 0});  // sign(NaN) is 0, as in PyTorch's CPU kernel
  expect(gb::square(x), {kInf, 4, 0.25, 0, 1, 16, kInf, kNaN});
  CHECK(gb::neg(x).scalar_type() == gb::kFloat);
}

TEST_CASE("exp, log and friends on ordinary and edge values") {
  auto x = special();
  expect(gb::exp(x), {0, std::exp(-2.0), std::exp(-0.5), 1, std::exp(1.0), std::exp(4.0), kInf, kNaN}, 1e-6);
  expect(gb::log(x), {kNaN, kNaN, kNaN, -kInf, 0, std::log(4.0), kInf, kNaN});
  expect(gb::log1p(gb::tensor({-1.0, 0.0, 1e-8, 1.0, -2.0})), {-kInf, 0, 1e-8, std::log(2.0), kNaN}, 1e-6, 1e-12);
  expect(gb::sqrt(x), {kNaN, kNaN, kNaN, 0, 1, 2, kInf, kNaN});
  expect(gb::rsqrt(x), {kNaN, kNaN, kNaN, kInf, 1, 0.5, 0, kNaN});
  expect(gb::reciprocal(x), {-0.0, -0.5, -2, kInf, 1, 0.25, 0, kNaN});
  expect(gb::reciprocal(gb::tensor({-0.0})), {-kInf});
  expect(gb::sin(gb::tensor({0.0, M_PI / 2, -M_PI / 6})), {0, 1, -0.5});
  expect(gb::cos(gb::tensor({0.0, M_PI, M_PI / 3})), {1, -1, 0.5});
  expect(gb::sin(gb::tensor({kInf, kNaN})), {kNaN, kNaN});
  expect(gb::tanh(x), {-1, std::tanh(-2.0), std::tanh(-0.5), 0, std::tanh(1.0), std::tanh(4.0), 1, kNaN});
  expect(gb::sigmoid(x), {0, 1 / (1 + std::exp(2.0)), 1 / (1 + std::exp(0.5)), 0.5, 1 / (1 + std::exp(-1.0)),
                          1 / (1 + std::exp(-4.0)), 1, kNaN});
  // no overflow to NaN at the far ends
  expect(gb::sigmoid(gb::tensor({-1000.0, 1000.0})), {0, 1});
  expect(gb::tanh(gb::tensor({-1000.0, 1000.0})), {-1, 1});
}

TEST_CASE("float64 keeps full precision") {
  auto x = gb::tensor({1e-10, 0.3}, gb::kFloat64);
  CHECK(gb::exp(x).scalar_type() == gb::kFloat64);
  expect(gb::log1p(x), {std::log1p(1e-10), std::log1p(0.3)}, 1e-15, 0);
  expect(gb::sigmoid(x), {1 / (1 + std::exp(-1e-10)), 1 / (1 + std::exp(-0.3))}, 1e-15, 0);
}

TEST_CASE("integer inputs: sign-like ops keep the dtype, float ops give the default float dtype") {
  auto i = gb::tensor({-3, 0, 2}).to(gb::kInt32);
  auto l = gb::arange(-2, 3);  // int64: -2 -1 0 1 2
  CHECK(i.scalar_type() == gb::kInt32);
  CHECK(gb::neg(i).scalar_type() == gb::kInt32);
  check_values(gb::neg(i), {3, 0, -2});
  check_values(gb::abs(l), {2, 1, 0, 1, 2});
  CHECK(gb::abs(l).scalar_type() == gb::kInt64);
  check_values(gb::sign(l), {-1, -1, 0, 1, 1});
  check_values(gb::square(i), {9, 0, 4});
  CHECK(gb::square(i).scalar_type() == gb::kInt32);
  auto b = gb::tensor(std::vector<bool>{true, false});
  CHECK(gb::square(b).scalar_type() == gb::kInt64);  // PyTorch: pow(bool, 2) is int64
  CHECK(gb::sign(b).scalar_type() == gb::kBool);
  check_values(gb::sign(b), {1, 0});
  auto e = gb::exp(l);
  CHECK(e.scalar_type() == gb::kFloat);
  expect(e, {std::exp(-2.0), std::exp(-1.0), 1, std::exp(1.0), std::exp(2.0)}, 1e-6);
  CHECK(gb::sqrt(gb::tensor({4, 9})).scalar_type() == gb::kFloat);
  check_values(gb::sqrt(gb::tensor({4, 9})), {2, 3});
  check_values(gb::reciprocal(gb::tensor({2, 4})), {0.5, 0.25});
  CHECK(gb::sigmoid(b).scalar_type() == gb::kFloat);
  expect(gb::sigmoid(b), {1 / (1 + std::exp(-1.0)), 0.5});
  gb::set_default_dtype(gb::kFloat64);
  CHECK(gb::exp(l).scalar_type() == gb::kFloat64);
  gb::set_default_dtype(gb::kFloat);
}

TEST_CASE("float16 and bfloat16 compute in float and round once") {
  for (auto dt : {gb::kHalf, gb::kBFloat16}) {
    CAPTURE(gb::to_string(dt));
    double tol = dt == gb::kHalf ? 1e-3 : 8e-3;  // relative: 11 and 8 significand bits
    auto x = gb::tensor({-2.0, -0.5, 0.0, 1.0, 3.0}).to(dt);
    auto y = gb::exp(x);
    CHECK(y.scalar_type() == dt);
    expect(y, {std::exp(-2.0), std::exp(-0.5), 1, std::exp(1.0), std::exp(3.0)}, tol, 0);
    expect(gb::tanh(x), {std::tanh(-2.0), std::tanh(-0.5), 0, std::tanh(1.0), std::tanh(3.0)}, tol, 0);
    expect(gb::sigmoid(x),
           {1 / (1 + std::exp(2.0)), 1 / (1 + std::exp(0.5)), 0.5, 1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(-3.0))},
           tol, 0);
    expect(gb::abs(x), {2, 0.5, 0, 1, 3});
    expect(gb::neg(x), {2, 0.5, 0, -1, -3});
    expect(gb::sqrt(gb::tensor({4.0, 2.0, -1.0}).to(dt)), {2, std::sqrt(2.0), kNaN}, tol, 0);
    expect(gb::log(gb::tensor({0.0, 1.0, 10.0}).to(dt)), {-kInf, 0, std::log(10.0)}, tol, 0);
    expect(gb::reciprocal(gb::tensor({0.0, 4.0}).to(dt)), {kInf, 0.25});
  }
  // float16 overflows to inf where float32 would not
  expect(gb::exp(gb::tensor({12.0}).to(gb::kHalf)), {kInf});
}

TEST_CASE("non-contiguous, broadcast and large inputs go through the strided and parallel loops") {
  auto x = gb::randn({3, 5});
  auto xt = x.t();
  CHECK_FALSE(xt.is_contiguous());
  check_close(gb::exp(xt), gb::exp(x).t());
  check_close(gb::abs(xt), gb::abs(x).t());
  auto e = gb::tensor({0.5}).expand({4});
  check_values(gb::sqrt(e), {std::sqrt(0.5), std::sqrt(0.5), std::sqrt(0.5), std::sqrt(0.5)});
  // above the parallel grain: every element computed
  auto big = gb::arange(200000, gb::kFloat64) / 100000.0;  // [0, 2)
  auto t = gb::tanh(big);
  auto v = gbtest::values(t);
  for (int64_t i = 0; i < 200000; i += 12345)
    CHECK(v[size_t(i)] == doctest::Approx(std::tanh(i / 100000.0)).epsilon(1e-15));
  CHECK(v.back() == doctest::Approx(std::tanh(199999 / 100000.0)).epsilon(1e-15));
}

TEST_CASE("node names are PyTorch's") {
  auto x = gb::rand({3}, gbtest::f64_grad());
  CHECK(gb::neg(x).grad_fn()->name() == "NegBackward0");
  CHECK(gb::abs(x).grad_fn()->name() == "AbsBackward0");
  CHECK(gb::sign(x).grad_fn()->name() == "SignBackward0");
  CHECK(gb::square(x).grad_fn()->name() == "PowBackward0");
  CHECK(gb::reciprocal(x).grad_fn()->name() == "ReciprocalBackward0");
  CHECK(gb::exp(x).grad_fn()->name() == "ExpBackward0");
  CHECK(gb::log(x).grad_fn()->name() == "LogBackward0");
  CHECK(gb::log1p(x).grad_fn()->name() == "Log1PBackward0");
  CHECK(gb::sqrt(x).grad_fn()->name() == "SqrtBackward0");
  CHECK(gb::rsqrt(x).grad_fn()->name() == "RsqrtBackward0");
  CHECK(gb::sin(x).grad_fn()->name() == "SinBackward0");
  CHECK(gb::cos(x).grad_fn()->name() == "CosBackward0");
  CHECK(gb::tanh(x).grad_fn()->name() == "TanhBackward0");
  CHECK(gb::sigmoid(x).grad_fn()->name() == "SigmoidBackward0");
  {
    gb::NoGradGuard ng;
    CHECK_FALSE(gb::exp(x).requires_grad());
  }
}

TEST_CASE("gradients match finite differences over several shapes and a non-contiguous view") {
  using gb::variable_list;
  std::vector<std::vector<int64_t>> shapes{{}, {5}, {3, 4}, {2, 3, 2}};
  for (const auto& shape : shapes) {
    CAPTURE(shape.size());
    auto x = gb::randn(shape, gbtest::f64_grad());
    auto pos = (gb::rand(shape, gb::kFloat64) + 0.5).requires_grad_();  // (0.5, 1.5): log, sqrt, ... are smooth
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::neg(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::abs(v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::abs(-v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::sign(v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::square(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::reciprocal(v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::exp(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::log(v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::log1p(v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::sqrt(v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::rsqrt(v[0]); }, {pos}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::sin(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::cos(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::tanh(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::sigmoid(v[0]); }, {x}));
  }
  // a transposed (non-contiguous) input, and an op whose input is broadcast before it
  auto m = (gb::rand({4, 3}, gb::kFloat64) + 0.5).requires_grad_();
  auto row = gb::randn({3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::sqrt(v[0].t()); }, {m}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::tanh(v[0].t()) * gb::exp(v[0].t()); }, {m}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::sigmoid(v[0] * v[1]); }, {m, row}));
}

TEST_CASE("PyTorch's gradient conventions at the kinks") {
  auto x = gb::tensor({-2.0, 0.0, 3.0}, gbtest::f64_grad());
  gb::abs(x).sum().backward();
  check_values(x.grad(), {-1, 0, 1});  // abs'(0) = 0
  auto y = gb::tensor({-2.0, 0.0, 3.0}, gbtest::f64_grad());
  gb::sign(y).sum().backward();
  check_values(y.grad(), {0, 0, 0});
  auto z = gb::tensor({0.0, 4.0}, gbtest::f64_grad());
  gb::sqrt(z).sum().backward();
  expect(z.grad(), {kInf, 0.25});  // 1 / (2 sqrt(x)) from the saved result
}

TEST_CASE("second derivatives (create_graph) match finite differences") {
  using gb::variable_list;
  auto x = gb::randn({2, 3}, gbtest::f64_grad());
  auto pos = (gb::rand({2, 3}, gb::kFloat64) + 0.5).requires_grad_();
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::tanh(v[0])}; }, {x}));
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::sigmoid(v[0])}; }, {x}));
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::exp(v[0])}; }, {x}));
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::sin(v[0])}; }, {x}));
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::log(v[0])}; }, {pos}));
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::sqrt(v[0])}; }, {pos}));
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::rsqrt(v[0])}; }, {pos}));
  CHECK(gb::autograd::gradgradcheck([](const variable_list& v) { return variable_list{gb::reciprocal(v[0])}; }, {pos}));
  // d2/dx2 tanh = -2 y (1 - y^2), by hand
  auto a = gb::tensor({0.5}, gbtest::f64_grad());
  auto g = gb::autograd::grad({gb::tanh(a)}, {a}, {}, true, true)[0];
  auto gg = gb::autograd::grad({g}, {a})[0];
  double t = std::tanh(0.5);
  expect(gg, {-2 * t * (1 - t * t)}, 1e-12);
}

TEST_CASE("in-place forms: values, version bump, autograd and the leaf error") {
  auto x = gb::tensor({0.0, 1.0, 4.0});
  auto v0 = x._version();
  x.sqrt_();
  CHECK(x._version() == v0 + 1);
  check_values(x, {0, 1, 2});
  x.exp_();
  expect(x, {1, std::exp(1.0), std::exp(2.0)});
  x.log_();
  expect(x, {0, 1, 2});
  x.neg_();
  check_values(x, {0, -1, -2});
  x.tanh_();
  expect(x, {0, std::tanh(-1.0), std::tanh(-2.0)});
  x.sigmoid_();
  expect(x, {0.5, 1 / (1 + std::exp(-std::tanh(-1.0))), 1 / (1 + std::exp(-std::tanh(-2.0)))});
  CHECK(x._version() == v0 + 6);

  // in place on a non-contiguous view writes through to the base
  auto base = gb::zeros({2, 3});
  base.t().exp_();
  check_values(base, {1, 1, 1, 1, 1, 1});

  auto ints = gb::arange(3);
  ints.neg_();
  check_values(ints, {0, -1, -2});
  CHECK_THROWS_WITH_AS(ints.exp_(),
                       doctest::Contains("exp_: result type Float can't be cast to the desired output type Long"),
                       gb::Error);

  auto leaf = gb::tensor({1.0, 2.0}, gbtest::f64_grad());
  CHECK_THROWS_WITH_AS(leaf.exp_(),
                       doctest::Contains("a leaf Variable that requires grad is being used in an in-place"), gb::Error);
  {
    gb::NoGradGuard ng;
    leaf.exp_();  // an update under no_grad is fine
  }
  expect(leaf, {std::exp(1.0), std::exp(2.0)});

  // a non-leaf: the in-place op joins the graph; log_ saves its input, exp_ its output
  auto w = gb::tensor({0.5, 2.0}, gbtest::f64_grad());
  auto y = w * 2;
  y.log_();
  CHECK(y.grad_fn()->name() == "LogBackward0");
  y.exp_();
  CHECK(y.grad_fn()->name() == "ExpBackward0");
  y.sum().backward();
  check_values(w.grad(), {2, 2});  // exp(log(2w)) = 2w
  auto u = gb::tensor({0.3, -0.7}, gbtest::f64_grad());
  auto s = u * 1;
  s.tanh_().sigmoid_();
  s.sum().backward();
  double t0 = std::tanh(0.3), s0 = 1 / (1 + std::exp(-t0));
  expect(u.grad().slice(0, 0, 1), {s0 * (1 - s0) * (1 - t0 * t0)}, 1e-12);
}

TEST_CASE("errors name the op and what to do") {
  auto b = gb::tensor(std::vector<bool>{true, false});
  CHECK_THROWS_WITH_AS(gb::neg(b), doctest::Contains("use the `~` or `logical_not()` operator"), gb::Error);
  CHECK_THROWS_WITH_AS(b.neg_(), doctest::Contains("Negation, the `-` operator, on a bool tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::abs(b), doctest::Contains("abs: not implemented for dtype bool"), gb::Error);
  CHECK_THROWS_AS(gb::exp(gb::Tensor()), gb::Error);
}

TEST_CASE("round (halves to even), floor, ceil, trunc: values, integers pass through, gradient 0, bool refused") {
  auto x = gb::tensor({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.7, 1.2});
  expect(gb::round(x), {-2, -2, -0.0, 0, 2, 2, -2, 1});
  expect(x.floor(), {-3, -2, -1, 0, 1, 2, -2, 1});
  expect(x.ceil(), {-2, -1, -0.0, 1, 2, 3, -1, 2});
  expect(gb::trunc(x), {-2, -1, -0.0, 0, 1, 2, -1, 1});
  expect(gb::round(gb::tensor({kInf, -kInf, kNaN})), {kInf, -kInf, kNaN});
  CHECK(gb::floor(gb::tensor({1.5f}).to(gb::kHalf)).scalar_type() == gb::kHalf);
  auto l = gb::arange(-2, 3);
  CHECK(gb::round(l).scalar_type() == gb::kInt64);
  check_values(gb::ceil(l), {-2, -1, 0, 1, 2});
  CHECK_THROWS_WITH(gb::floor(gb::tensor(std::vector<bool>{true})),
                    "floor() does not take a bool tensor (PyTorch refuses it too); convert it first: "
                    "floor(x.to(gb::kFloat))");
  auto w = gb::tensor({0.3, 1.6, -2.2}, gb::requires_grad());
  (gb::round(w) * 2 + w.floor() + w.ceil() + w.trunc()).sum().backward();
  check_values(w.grad(), {0, 0, 0});  // piecewise constant: zero gradient, as PyTorch's RoundBackward0 and kin
  CHECK(gb::round(w).grad_fn()->name() == "RoundBackward0");
  CHECK(gb::trunc(w).grad_fn()->name() == "TruncBackward0");
}
