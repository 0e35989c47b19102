// tests/engine/ops/activation_test.cpp — relu (+ relu_), leaky_relu, gelu (exact and tanh), silu, softplus: values
// (edge cases, f16/bf16, integers for relu), node names, PyTorch's gradient conventions, gradcheck in f64 over several
// shapes and a non-contiguous view, double backward, and errors.
#include <cmath>
#include <limits>

#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::expect;
using gbtest::kInf;
using gbtest::kNaN;

namespace {

// Reference formulas, written out independently of the kernels.
double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu_ref(double x) { return x / (1 + std::exp(-x)); }
std::vector<double> map(const std::vector<double>& xs, double (*f)(double)) {
  std::vector<double> out;
  for (double x : xs) out.push_back(f(x));
  return out;
}
}  // namespace

TEST_CASE("relu: zero for negatives, identity otherwise; NaN propagates; integers keep their dtype") {
  auto x = gb::tensor({-kInf, -2.0, -0.5, 0.0, 1.0, 4.0, kInf, kNaN});
  expect(gb::relu(x), {0, 0, 0, 0, 1, 4, kInf, kNaN});
  expect(x.relu(), {0, 0, 0, 0, 1, 4, kInf, kNaN});
  auto i = gb::arange(-2, 3);
  CHECK(gb::relu(i).scalar_type() == gb::kInt64);
  check_values(gb::relu(i), {0, 0, 0, 1, 2});
  check_values(gb::relu(i.to(gb::kInt32)), {0, 0, 0, 1, 2});
  for (auto dt : {gb::kHalf, gb::kBFloat16}) {
    auto h = gb::relu(gb::tensor({-1.5, 0.0, 2.5}).to(dt));
    CHECK(h.scalar_type() == dt);
    check_values(h, {0, 0, 2.5});
  }
}

TEST_CASE("leaky_relu scales negatives by the slope") {
  auto x = gb::tensor({-kInf, -2.0, -0.5, 0.0, 1.0, kNaN});
  expect(gb::leaky_relu(x), {-kInf, -0.02, -0.005, 0, 1, kNaN});
  expect(gb::leaky_relu(x, 0.2), {-kInf, -0.4, -0.1, 0, 1, kNaN});
  expect(gb::leaky_relu(gb::tensor({-4.0, 3.0}).to(gb::kHalf), 0.5), {-2, 3});
}

TEST_CASE("gelu: exact (erf) and tanh forms") {
  std::vector<double> xs{-3.0, -1.0, -0.1, 0.0, 0.5, 1.0, 2.0};
  auto x = gb::tensor(gb::ArrayRef<double>(xs), gb::kFloat64);
  expect(gb::gelu(x), map(xs, gelu_ref), 1e-14, 1e-15);
  expect(gb::gelu(x, "tanh"), map(xs, gelu_tanh_ref), 1e-14, 1e-15);
  // hand values: gelu(1) = Phi(1), gelu(-1) = -Phi(-1)
  expect(gb::gelu(gb::tensor({1.0, -1.0}, gb::kFloat64)), {0.8413447460685429, -0.15865525393145707}, 1e-14);
  expect(gb::gelu(gb::tensor({kInf, kNaN, 10.0, -10.0})), {kInf, kNaN, 10, 0}, 1e-6, 1e-6);
  expect(gb::gelu(gb::tensor({kInf, kNaN, 10.0, -10.0}), "tanh"), {kInf, kNaN, 10, 0}, 1e-6, 1e-6);
  auto f = gb::gelu(gb::tensor(gb::ArrayRef<double>(xs)));
  CHECK(f.scalar_type() == gb::kFloat);
  expect(f, map(xs, gelu_ref), 1e-6, 1e-7);
  for (auto dt : {gb::kHalf, gb::kBFloat16}) {
    CAPTURE(gb::to_string(dt));
    double tol = dt == gb::kHalf ? 2e-3 : 1e-2;
    auto h = gb::gelu(x.to(dt));
    CHECK(h.scalar_type() == dt);
    expect(h, map(xs, gelu_ref), tol, 1e-3);
    expect(gb::gelu(x.to(dt), "tanh"), map(xs, gelu_tanh_ref), tol, 1e-3);
  }
}

TEST_CASE("silu and softplus") {
  std::vector<double> xs{-5.0, -1.0, 0.0, 0.5, 3.0};
  auto x = gb::tensor(gb::ArrayRef<double>(xs), gb::kFloat64);
  expect(gb::silu(x), map(xs, silu_ref), 1e-14, 1e-15);
  expect(gb::silu(gb::tensor({1.0})), {0.7310585786300049});
  expect(gb::silu(gb::tensor({kInf, kNaN, 0.0})), {kInf, kNaN, 0});
  expect(gb::silu(x.to(gb::kHalf)), map(xs, silu_ref), 2e-3, 1e-3);
  expect(gb::silu(x.to(gb::kBFloat16)), map(xs, silu_ref), 1e-2, 1e-3);

  expect(gb::softplus(gb::tensor({0.0, 1.0, -30.0, 30.0, kNaN}, gb::kFloat64)),
         {std::log(2.0), std::log1p(std::exp(1.0)), std::log1p(std::exp(-30.0)), 30, kNaN}, 1e-14, 0);
  // beta scales inside and out; beta * x above the threshold is linear
  expect(gb::softplus(gb::tensor({1.0, 11.0, 9.0}, gb::kFloat64), 2, 20),
         {std::log1p(std::exp(2.0)) / 2, 11, std::log1p(std::exp(18.0)) / 2}, 1e-14, 0);
  expect(gb::softplus(gb::tensor({0.5, 2.0}, gb::kFloat64), 1, 1), {std::log1p(std::exp(0.5)), 2}, 1e-14, 0);
  expect(gb::softplus(gb::tensor({1000.0, -1000.0})), {1000, 0});  // no overflow either way
  expect(gb::softplus(gb::tensor({0.0, 2.0}).to(gb::kHalf)), {std::log(2.0), std::log1p(std::exp(2.0))}, 2e-3, 0);
}

TEST_CASE("activations on non-contiguous and large inputs") {
  auto x = gb::randn({4, 6}, gb::kFloat64);
  auto xt = x.t();
  check_close(gb::gelu(xt), gb::gelu(x).t(), 1e-15, 0);
  check_close(gb::silu(xt), gb::silu(x).t(), 1e-15, 0);
  check_close(gb::relu(xt), gb::relu(x).t(), 0, 0);
  auto big = gb::linspace(-4, 4, 100001, gb::kFloat64);
  auto v = gbtest::values(gb::gelu(big, "tanh"));
  for (size_t i = 0; i < v.size(); i += 9999) CHECK(v[i] == doctest::Approx(gelu_tanh_ref(-4 + 8.0 * i / 100000)));
}

TEST_CASE("node names are PyTorch's") {
  auto x = gb::randn({3}, gbtest::f64_grad());
  CHECK(gb::relu(x).grad_fn()->name() == "ReluBackward0");
  CHECK(gb::leaky_relu(x).grad_fn()->name() == "LeakyReluBackward0");
  CHECK(gb::gelu(x).grad_fn()->name() == "GeluBackward0");
  CHECK(gb::gelu(x, "tanh").grad_fn()->name() == "GeluBackward0");
  CHECK(gb::silu(x).grad_fn()->name() == "SiluBackward0");
  CHECK(gb::softplus(x).grad_fn()->name() == "SoftplusBackward0");
  auto g = gb::autograd::grad({gb::gelu(x).sum()}, {x}, {}, true, true)[0];
  CHECK(g.grad_fn()->name() == "GeluBackwardBackward0");
}

TEST_CASE("gradient conventions: relu'(0) = 0, leaky slope, softplus linear past the threshold") {
  auto x = gb::tensor({-1.0, 0.0, 2.0}, gbtest::f64_grad());
  gb::relu(x).sum().backward();
  check_values(x.grad(), {0, 0, 1});
  auto y = gb::tensor({-1.0, 0.0, 2.0}, gbtest::f64_grad());
  gb::leaky_relu(y, 0.1).sum().backward();
  check_values(y.grad(), {0.1, 0.1, 1});  // x > 0 takes the identity branch, so 0 gets the slope (as PyTorch)
  auto z = gb::tensor({0.0, 30.0}, gbtest::f64_grad());
  gb::softplus(z).sum().backward();
  check_values(z.grad(), {0.5, 1});
  auto w = gb::tensor({0.0, 1.0}, gbtest::f64_grad());
  gb::gelu(w).sum().backward();
  // gelu'(x) = Phi(x) + x phi(x): 0.5 at 0, Phi(1) + phi(1) at 1
  expect(w.grad(), {0.5, 0.8413447460685429 + std::exp(-0.5) / std::sqrt(2 * M_PI)}, 1e-14);
  auto s = gb::tensor({0.0}, gbtest::f64_grad());
  gb::silu(s).sum().backward();
  check_values(s.grad(), {0.5});
}

TEST_CASE("gradients match finite differences over several shapes and a non-contiguous view") {
  using gb::variable_list;
  std::vector<std::vector<int64_t>> shapes{{}, {7}, {3, 4}, {2, 2, 3}};
  for (const auto& shape : shapes) {
    CAPTURE(shape.size());
    auto x = gb::randn(shape, gbtest::f64_grad());
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::relu(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::leaky_relu(v[0], 0.2); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::gelu(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::gelu(v[0], "tanh"); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::silu(v[0]); }, {x}));
    CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::softplus(v[0]); }, {x}));
  }
  // beta and threshold, with points on both sides of the (discontinuous) switch, away from it
  auto s = gb::tensor({-1.0, 0.2, 0.3, 1.5, 3.0}, gbtest::f64_grad());  // beta x = -2, 0.4, 0.6, 3, 6 vs 4
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::softplus(v[0], 2, 4); }, {s}));
  auto m = gb::randn({4, 3}, gbtest::f64_grad());
  auto b = gb::randn({3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::gelu(v[0].t()); }, {m}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::silu(v[0].t() * 2); }, {m}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::gelu(v[0] + v[1], "tanh"); }, {m, b}));
}

TEST_CASE("second derivatives (create_graph) match finite differences") {
  using gb::variable_list;
  auto x = gb::randn({2, 3}, gbtest::f64_grad());
  auto gg = [](auto f, const gb::Tensor& in) {
    return gb::autograd::gradgradcheck([&](const variable_list& v) { return variable_list{f(v[0])}; }, {in});
  };
  CHECK(gg([](const gb::Tensor& t) { return gb::gelu(t); }, x));
  CHECK(gg([](const gb::Tensor& t) { return gb::gelu(t, "tanh"); }, x));
  CHECK(gg([](const gb::Tensor& t) { return gb::silu(t); }, x));
  CHECK(gg([](const gb::Tensor& t) { return gb::softplus(t, 1.5, 20); }, x));
  CHECK(gg([](const gb::Tensor& t) { return gb::relu(t) * t; }, x));
  CHECK(gg([](const gb::Tensor& t) { return gb::leaky_relu(t, 0.3) * t; }, x));
  // gelu''(x) = phi(x) (2 - x^2), by hand at x = 0.7
  auto a = gb::tensor({0.7}, gbtest::f64_grad());
  auto g = gb::autograd::grad({gb::gelu(a)}, {a}, {}, true, true)[0];
  auto g2 = gb::autograd::grad({g}, {a})[0];
  expect(g2, {std::exp(-0.245) / std::sqrt(2 * M_PI) * (2 - 0.49)}, 1e-12);
}

TEST_CASE("relu_ in place: values, version bump, autograd, leaf error") {
  auto x = gb::tensor({-1.0, 0.0, 3.0});
  auto v0 = x._version();
  x.relu_();
  CHECK(x._version() == v0 + 1);
  check_values(x, {0, 0, 3});
  auto i = gb::arange(-2, 2);
  i.relu_();
  check_values(i, {0, 0, 0, 1});
  auto leaf = gb::tensor({-1.0, 2.0}, gbtest::f64_grad());
  CHECK_THROWS_WITH_AS(leaf.relu_(), doctest::Contains("a leaf Variable that requires grad"), gb::Error);
  auto y = leaf * 3;
  y.relu_();
  CHECK(y.grad_fn()->name() == "ReluBackward0");
  y.sum().backward();
  check_values(leaf.grad(), {0, 3});
  auto b = gb::tensor(std::vector<bool>{true});
  CHECK_THROWS_WITH_AS(b.relu_(), doctest::Contains("relu_: bool tensors are not supported"), gb::Error);
}

TEST_CASE("errors name the op and what to do") {
  auto x = gb::randn({2, 3});
  CHECK_THROWS_WITH_AS(gb::gelu(x, "fast"), doctest::Contains("gelu: approximate must be \"none\""), gb::Error);
  CHECK_THROWS_WITH_AS(gb::gelu(x, "fast"), doctest::Contains("but got \"fast\""), gb::Error);
  auto i = gb::arange(3);
  CHECK_THROWS_WITH_AS(gb::gelu(i), doctest::Contains("gelu: expected a floating tensor but got Long"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::silu(i), doctest::Contains("x.to(gb::kFloat)"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::leaky_relu(i), doctest::Contains("leaky_relu: expected a floating tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::softplus(i), doctest::Contains("softplus: expected a floating tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::relu(gb::tensor(std::vector<bool>{true})), doctest::Contains("relu: bool tensors"),
                       gb::Error);
}
