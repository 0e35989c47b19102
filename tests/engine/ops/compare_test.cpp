// tests/engine/ops/compare_test.cpp — comparisons (broadcasting, promotion, IEEE NaN), logical ops, isnan/isinf/
// isfinite, equal, allclose, where, masked_fill(_), clamp(_) in both forms, lerp(_), addcmul(_)/addcdiv(_): values,
// in-place forms, errors, gradcheck over broadcast and non-contiguous inputs, and double backward.
#include <cmath>
#include <limits>

#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::expect;
using gbtest::kInf;
using gbtest::kNaN;

namespace {
gb::Tensor bools(const std::vector<bool>& v) { return gb::tensor(v); }
}  // namespace

// ---- comparisons ----

TEST_CASE("comparisons broadcast, return bool and record no gradient") {
  auto a = gb::tensor({1.0, 2.0, 3.0}).view({3, 1});
  auto b = gb::tensor({1.0, 2.5});
  auto e = gb::eq(a, b);
  CHECK(e.scalar_type() == gb::kBool);
  CHECK(e.sizes() == gb::IntArrayRef({3, 2}));
  check_values(e, {1, 0, 0, 0, 0, 0});
  check_values(a != b, {0, 1, 1, 1, 1, 1});
  check_values(a < b, {0, 1, 0, 1, 0, 0});
  check_values(a <= b, {1, 1, 0, 1, 0, 0});
  check_values(a > b, {0, 0, 1, 0, 1, 1});
  check_values(a >= b, {1, 0, 1, 0, 1, 1});
  check_values(a.ge(b), {1, 0, 1, 0, 1, 1});
  auto x = gb::randn({3}, gbtest::f64_grad());
  CHECK_FALSE((x > 0).requires_grad());
  CHECK_FALSE(x.grad_fn());
  CHECK_THROWS_WITH_AS(gb::lt(gb::ones({2, 3}), gb::ones({4})),
                       doctest::Contains("lt: The size of tensor a (3) must match the size of tensor b (4)"),
                       gb::Error);
}

TEST_CASE("comparisons promote the compared values like PyTorch") {
  auto i = gb::arange(5);                  // int64
  check_values(i < 2.5, {1, 1, 1, 0, 0});  // compared as floats, not truncated to 2
  check_values(i == 2.0, {0, 0, 1, 0, 0});
  check_values(i >= 3, {0, 0, 0, 1, 1});
  check_values(gb::eq(gb::arange(3), gb::tensor({0.0, 1.5, 2.0})), {1, 0, 1});
  check_values(gb::lt(gb::arange(3).to(gb::kInt32), gb::arange(3)), {0, 0, 0});
  // a float32 0.1 equals the literal 0.1 (the number is rounded to the tensor's dtype), but not a float64 0.1
  CHECK(gbtest::values(gb::tensor({0.1}) == 0.1)[0] == 1);
  CHECK(gbtest::values(gb::tensor({0.1}).to(gb::kHalf) == 0.1)[0] == 1);
  CHECK(gbtest::values(gb::eq(gb::tensor({0.1}), gb::tensor({0.1}, gb::kFloat64)))[0] == 0);
  // a 0-dim float64 tensor does not lift a float32 tensor to float64
  CHECK(gbtest::values(gb::eq(gb::tensor({0.1}), gb::tensor(0.1, gb::kFloat64)))[0] == 1);
  auto b = bools({true, false});
  check_values(b == bools({true, true}), {1, 0});
  check_values(b > bools({false, false}), {1, 0});
  check_values(b == 1, {1, 0});
  for (auto dt : {gb::kHalf, gb::kBFloat16}) check_values(gb::tensor({-1.0, 0.0, 2.0}).to(dt) > 0, {0, 0, 1});
}

TEST_CASE("comparisons follow IEEE for NaN, infinities and signed zero") {
  auto x = gb::tensor({kNaN, 1.0, kInf, -0.0});
  check_values(x == x, {0, 1, 1, 1});
  check_values(x != x, {1, 0, 0, 0});
  check_values(x < kNaN, {0, 0, 0, 0});
  check_values(x >= kNaN, {0, 0, 0, 0});
  check_values(x != kNaN, {1, 1, 1, 1});
  check_values(x == 0.0, {0, 0, 0, 1});
  check_values(x > 1e38, {0, 0, 1, 0});
  check_values(x.t() <= x, {0, 1, 1, 1});  // 1-d .t() is itself; a strided case follows
  auto m = gb::tensor({{1.0, 2.0}, {3.0, 4.0}});
  check_values(m.t() > m, {0, 1, 0, 0});  // [[1, 3], [2, 4]] > [[1, 2], [3, 4]]
}

TEST_CASE("logical ops treat nonzero (and NaN) as true, any dtype") {
  check_values(gb::logical_not(gb::tensor({0.0, 2.0, kNaN, -0.0})), {1, 0, 0, 1});
  check_values(gb::tensor({0, 3}).logical_not(), {1, 0});
  auto r = gb::logical_and(gb::arange(3).view({3, 1}), bools({true, false}));
  CHECK(r.scalar_type() == gb::kBool);
  CHECK(r.sizes() == gb::IntArrayRef({3, 2}));
  check_values(r, {0, 0, 1, 0, 1, 0});
  check_values(gb::logical_or(gb::tensor({0.0, 0.0, 1.5}), gb::tensor({0, 2, 0})), {0, 1, 1});
}

TEST_CASE("isnan, isinf, isfinite") {
  auto x = gb::tensor({1.0, kInf, -kInf, kNaN, 0.0});
  check_values(gb::isnan(x), {0, 0, 0, 1, 0});
  check_values(x.isinf(), {0, 1, 1, 0, 0});
  check_values(x.isfinite(), {1, 0, 0, 0, 1});
  for (auto dt : {gb::kHalf, gb::kBFloat16, gb::kFloat64}) {
    check_values(gb::isnan(x.to(dt)), {0, 0, 0, 1, 0});
    check_values(gb::isinf(x.to(dt)), {0, 1, 1, 0, 0});
  }
  check_values(gb::isfinite(gb::tensor({65504.0, 70000.0}).to(gb::kHalf)), {1, 0});  // half overflows to inf
  auto i = gb::arange(3);
  CHECK(gb::isnan(i).scalar_type() == gb::kBool);
  check_values(gb::isnan(i), {0, 0, 0});
  check_values(gb::isinf(i), {0, 0, 0});
  check_values(gb::isfinite(i), {1, 1, 1});
}

TEST_CASE("equal and allclose") {
  auto a = gb::tensor({{1.0, 2.0}, {3.0, 4.0}});
  CHECK(gb::equal(a, a.clone()));
  CHECK(gb::equal(a.t(), a.t().contiguous()));
  CHECK_FALSE(gb::equal(a, a.t()));
  CHECK_FALSE(gb::equal(a, a.view({4})));  // same elements, different sizes
  CHECK_FALSE(gb::equal(gb::tensor({kNaN}), gb::tensor({kNaN})));
  CHECK(gb::equal(gb::arange(3), gb::arange(3)));
  CHECK(gb::equal(a, a.to(gb::kFloat64)));  // compared after promotion, as libtorch does
  CHECK_FALSE(gb::equal(gb::tensor({0.1}), gb::tensor({0.1}, gb::kFloat64)));
  CHECK_THROWS_AS(gb::equal(a, gb::Tensor()), gb::Error);

  auto x = gb::tensor({1.0, 100.0, kInf}, gb::kFloat64);
  CHECK(gb::allclose(x, gb::tensor({1.0 + 1e-9, 100.0 + 5e-4, kInf}, gb::kFloat64)));  // rtol 1e-5 of 100 is 1e-3
  CHECK_FALSE(gb::allclose(x, gb::tensor({1.0, 100.002, kInf}, gb::kFloat64)));
  CHECK_FALSE(gb::allclose(x, gb::tensor({1.0, 100.0, -kInf}, gb::kFloat64)));
  CHECK(gb::allclose(x, gb::tensor({1.1, 100.0, kInf}, gb::kFloat64), 0, 0.2));
  auto n = gb::tensor({kNaN, 1.0});
  CHECK_FALSE(gb::allclose(n, n));
  CHECK(gb::allclose(n, n, 1e-5, 1e-8, /*equal_nan=*/true));
  CHECK(gb::allclose(gb::ones({2, 3}), gb::ones({3})));  // broadcasts, like torch.allclose
  CHECK(gb::allclose(gb::arange(3), gb::arange(3)));
  CHECK_THROWS_WITH_AS(gb::allclose(gb::ones({2}), gb::ones({2}, gb::kFloat64)),
                       doctest::Contains("allclose: Float did not match Double"), gb::Error);
}

// ---- where / masked_fill ----

TEST_CASE("where selects, broadcasts all three operands and promotes a and b") {
  auto c = bools({true, false, true});
  auto a = gb::tensor({1.0, 2.0, 3.0});
  auto b = gb::tensor({-1.0, -2.0, -3.0});
  check_values(gb::where(c, a, b), {1, -2, 3});
  check_values(a.where(c, b), {1, -2, 3});
  auto col = gb::tensor({10.0, 20.0}).view({2, 1});
  auto r = gb::where(c, col, gb::tensor(0.0));
  CHECK(r.sizes() == gb::IntArrayRef({2, 3}));
  check_values(r, {10, 0, 10, 20, 0, 20});
  auto ri = gb::where(c, gb::arange(3), b);
  CHECK(ri.scalar_type() == gb::kFloat);
  check_values(ri, {0, -2, 2});
  CHECK(gb::where(c, gb::arange(3), gb::arange(3).to(gb::kInt32)).scalar_type() == gb::kInt64);
  // scalar operands
  check_values(gb::where(c, a, 0), {1, 0, 3});
  check_values(gb::where(c, 7, b), {7, -2, 7});
  CHECK(gb::where(c, gb::arange(3), 0.5).scalar_type() == gb::kFloat);
  check_values(gb::where(c, gb::arange(3), 0.5), {0, 0.5, 2});
  CHECK(gb::where(c, gb::arange(3), -1).scalar_type() == gb::kInt64);
  expect(gb::where(c, a, kNaN), {1, kNaN, 3});
  // f16 and a non-contiguous condition
  check_values(gb::where(c, a.to(gb::kHalf), b.to(gb::kHalf)), {1, -2, 3});
  auto m = gb::tensor({{1.0, -2.0}, {-3.0, 4.0}});
  check_values(gb::where((m > 0).t(), m, 0), {1, 0, 0, 4});
  CHECK_THROWS_WITH_AS(gb::where(gb::ones({3}), a, b),
                       doctest::Contains("where expected condition to be a boolean tensor, but got a tensor with dtype "
                                         "Float"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::where(c, a, gb::ones({2})), doctest::Contains("where: The size of tensor"), gb::Error);
}

TEST_CASE("where: gradient flows only to the selected side") {
  auto a = gb::tensor({1.0, 2.0, 3.0}, gbtest::f64_grad());
  auto b = gb::tensor({4.0}, gbtest::f64_grad());
  auto out = gb::where(bools({true, false, false}), a, b);
  CHECK(out.grad_fn()->name() == "WhereBackward0");
  out.sum().backward();
  check_values(a.grad(), {1, 0, 0});
  check_values(b.grad(), {2});  // broadcast b collects both unselected positions
  auto x = gb::randn({3, 4}, gbtest::f64_grad());
  auto y = gb::randn({4}, gbtest::f64_grad());
  auto xt = gb::randn({4, 3}, gbtest::f64_grad());
  auto cond = gb::randn({3, 4}) > 0;
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::where(cond, v[0], v[1]); }, {x, y}));
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::where(cond, v[0].t(), v[1]); }, {xt, y}));
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::where(cond, v[0], 2.0); }, {x}));
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::where(cond.t(), -1, v[0]); }, {xt}));
  CHECK(gb::autograd::gradgradcheck(
      [&](const gb::variable_list& v) { return gb::variable_list{gb::where(cond, v[0] * v[0], v[1] * v[0])}; },
      {x, y}));
}

TEST_CASE("masked_fill: values, broadcasting, gradient and the in-place form") {
  auto x = gb::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  auto mask = bools({true, false, true});
  check_values(gb::masked_fill(x, mask, -1), {-1, 2, -1, -1, 5, -1});
  expect(x.masked_fill(mask, -kInf), {-kInf, 2, -kInf, -kInf, 5, -kInf});
  expect(x.masked_fill(mask, kNaN), {kNaN, 2, kNaN, kNaN, 5, kNaN});
  auto i = gb::arange(3).masked_fill(mask, 7);
  CHECK(i.scalar_type() == gb::kInt64);
  check_values(i, {7, 1, 7});
  check_values(gb::tensor({1.0, 2.0}).to(gb::kBFloat16).masked_fill(bools({false, true}), 0.5), {1, 0.5});
  // out of place, the tensor broadcasts to the mask too
  auto grown = gb::masked_fill(gb::tensor({5.0}), mask, 0);
  CHECK(grown.sizes() == gb::IntArrayRef({3}));
  check_values(grown, {0, 5, 0});
  CHECK_THROWS_WITH_AS(x.masked_fill(gb::ones({3}), 0),
                       doctest::Contains("masked_fill only supports boolean masks, but got mask with dtype Float"),
                       gb::Error);

  auto a = gb::randn({2, 3}, gbtest::f64_grad());
  auto out = gb::masked_fill(a, mask, 0);
  CHECK(out.grad_fn()->name() == "MaskedFillBackward0");
  out.sum().backward();
  check_values(a.grad(), {0, 1, 0, 0, 1, 0});
  auto at = gb::randn({3, 2}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::masked_fill(v[0].t(), mask, 3.0); }, {at}));

  auto y = x.clone();
  auto v0 = y._version();
  y.masked_fill_(mask, 0);
  CHECK(y._version() == v0 + 1);
  check_values(y, {0, 2, 0, 0, 5, 0});
  CHECK_THROWS_WITH_AS(
      gb::zeros({3}).masked_fill_(bools({true, false, true, false, true, false}).view({2, 3}), 1),
      doctest::Contains("masked_fill_: the mask of shape [2, 3] must broadcast to the tensor's shape [3]"), gb::Error);
  auto leaf = gb::randn({3}, gbtest::f64_grad());
  CHECK_THROWS_WITH_AS(leaf.masked_fill_(mask, 0), doctest::Contains("a leaf Variable that requires grad"), gb::Error);
  auto nl = leaf * 2;
  nl.masked_fill_(mask, 0);
  nl.sum().backward();
  check_values(leaf.grad(), {0, 2, 0});
}

// ---- clamp ----

TEST_CASE("clamp with number bounds: NaN propagates, min > max gives max, dtypes promote") {
  auto x = gb::tensor({-kInf, -2.0, 0.5, 3.0, kInf, kNaN});
  expect(gb::clamp(x, -1, 1), {-1, -1, 0.5, 1, 1, kNaN});
  expect(x.clamp(0), {0, 0, 0.5, 3, kInf, kNaN});
  expect(x.clamp(std::nullopt, 0), {-kInf, -2, 0, 0, 0, kNaN});
  expect(x.clamp_min(0.5), {0.5, 0.5, 0.5, 3, kInf, kNaN});
  expect(x.clamp_max(-2), {-kInf, -2, -2, -2, -2, kNaN});
  expect(gb::clamp(x, 2, 1), {1, 1, 1, 1, 1, kNaN});
  auto i = gb::arange(-2, 3);
  CHECK(gb::clamp(i, -1, 1).scalar_type() == gb::kInt64);
  check_values(gb::clamp(i, -1, 1), {-1, -1, 0, 1, 1});
  auto f = gb::clamp(i, -0.5, 0.5);
  CHECK(f.scalar_type() == gb::kFloat);  // int64 clamped by floats is float, like PyTorch
  check_values(f, {-0.5, -0.5, 0, 0.5, 0.5});
  check_values(gb::clamp(i.to(gb::kInt32), 0, 1), {0, 0, 0, 1, 1});
  auto h = gb::clamp(gb::tensor({-3.0, 0.25, 3.0}).to(gb::kHalf), -1, 1);
  CHECK(h.scalar_type() == gb::kHalf);
  check_values(h, {-1, 0.25, 1});
  check_close(gb::clamp(gb::tensor({{1.0, 5.0}, {-5.0, 0.0}}).t(), -2, 2), gb::tensor({{1.0, -2.0}, {2.0, 0.0}}));
  CHECK_THROWS_WITH_AS(x.clamp(std::nullopt, std::nullopt),
                       doctest::Contains("clamp: At least one of 'min' or 'max' must not be None"), gb::Error);
}

TEST_CASE("clamp's gradient passes where min <= x <= max, bounds included") {
  auto x = gb::tensor({-2.0, -1.0, 0.0, 1.0, 2.0}, gbtest::f64_grad());
  auto y = gb::clamp(x, -1, 1);
  CHECK(y.grad_fn()->name() == "ClampBackward1");
  y.sum().backward();
  check_values(x.grad(), {0, 1, 1, 1, 0});
  auto z = gb::tensor({-2.0, -1.0, 0.0}, gbtest::f64_grad());
  z.clamp_min(-1).sum().backward();
  check_values(z.grad(), {0, 1, 1});
  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto at = gb::randn({4, 3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::clamp(v[0], -0.5, 0.7); }, {a}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::clamp(v[0].t(), 0.1); }, {at}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::clamp(v[0], std::nullopt, 0.2); }, {a}));
  CHECK(gb::autograd::gradgradcheck(
      [](const gb::variable_list& v) { return gb::variable_list{gb::clamp(v[0] * v[0], 0.1, 1.0)}; }, {a}));
}

TEST_CASE("clamp with tensor bounds: broadcasting, promotion and gradients for all three") {
  auto x = gb::tensor({0.0, 5.0, 10.0, kNaN});
  auto lo = gb::tensor({2.0});
  auto hi = gb::tensor({8.0, 8.0, 8.0, 8.0});
  expect(gb::clamp(x, lo, hi), {2, 5, 8, kNaN});
  expect(gb::clamp(x, lo, std::nullopt), {2, 5, 10, kNaN});
  expect(gb::clamp(x, std::nullopt, hi), {0, 5, 8, kNaN});
  expect(gb::clamp(gb::tensor({1.0, 1.0}), gb::tensor({kNaN, 0.0}), std::nullopt), {kNaN, 1});  // a NaN bound wins
  auto grid = gb::clamp(gb::arange(3).view({3, 1}), gb::tensor({0.5, 1.5}), std::nullopt);
  CHECK(grid.scalar_type() == gb::kFloat);
  CHECK(grid.sizes() == gb::IntArrayRef({3, 2}));
  check_values(grid, {0.5, 1.5, 1, 1.5, 2, 2});
  CHECK_THROWS_WITH_AS(gb::clamp(x, std::optional<gb::Tensor>(), std::optional<gb::Tensor>()),
                       doctest::Contains("At least one of 'min' or 'max'"), gb::Error);

  auto xv = gb::tensor({0.0, 5.0, 10.0}, gbtest::f64_grad());
  auto lv = gb::tensor({2.0, 2.0, 2.0}, gbtest::f64_grad());
  auto hv = gb::tensor({8.0}, gbtest::f64_grad());
  auto y = gb::clamp(xv, lv, hv);
  CHECK(y.grad_fn()->name() == "ClampBackward0");
  y.sum().backward();
  check_values(xv.grad(), {0, 1, 0});
  check_values(lv.grad(), {1, 0, 0});
  check_values(hv.grad(), {1});  // summed over the broadcast
  // min > max: max wins the value and the gradient
  auto x2 = gb::tensor({0.0, 5.0}, gbtest::f64_grad());
  auto l2 = gb::tensor({3.0, 3.0}, gbtest::f64_grad());
  auto h2 = gb::tensor({1.0, 1.0}, gbtest::f64_grad());
  auto y2 = gb::clamp(x2, l2, h2);
  check_values(y2, {1, 1});
  y2.sum().backward();
  check_values(l2.grad(), {0, 0});
  check_values(h2.grad(), {1, 1});
  check_values(x2.grad(), {0, 0});

  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto l = (gb::randn({4}, gb::kFloat64) - 0.5).requires_grad_();
  auto h = (gb::randn({3, 1}, gb::kFloat64) + 1.5).requires_grad_();
  auto at = gb::randn({4, 3}, gbtest::f64_grad());
  using gb::variable_list;
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::clamp(v[0], v[1], v[2]); }, {a, l, h}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::clamp(v[0].t(), v[1], std::nullopt); }, {at, l}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::clamp(v[0], std::nullopt, v[1]); }, {a, h}));
}

TEST_CASE("clamp_ in place") {
  auto x = gb::tensor({-2.0, 0.5, 2.0});
  auto v0 = x._version();
  x.clamp_(-1, 1);
  CHECK(x._version() == v0 + 1);
  check_values(x, {-1, 0.5, 1});
  auto i = gb::arange(-2, 3);
  i.clamp_(0);
  check_values(i, {0, 0, 0, 1, 2});
  CHECK_THROWS_WITH_AS(i.clamp_(0.5),
                       doctest::Contains("clamp_: result type Float can't be cast to the desired output type Long"),
                       gb::Error);
  auto leaf = gb::tensor({-2.0, 0.5}, gbtest::f64_grad());
  CHECK_THROWS_WITH_AS(leaf.clamp_(0, 1), doctest::Contains("a leaf Variable that requires grad"), gb::Error);
  auto y = leaf * 1;
  y.clamp_(0, 1);
  CHECK(y.grad_fn()->name() == "ClampBackward1");
  y.sum().backward();
  check_values(leaf.grad(), {0, 1});
}

// ---- lerp / addcmul / addcdiv ----

TEST_CASE("lerp: values, exact ends, broadcasting, gradients and lerp_") {
  auto s = gb::tensor({0.0, 10.0});
  auto e = gb::tensor({10.0, 20.0});
  check_values(gb::lerp(s, e, 0.25), {2.5, 12.5});
  check_values(gb::lerp(s, e, 0.75), {7.5, 17.5});
  check_values(gb::lerp(s, e, 1), {10, 20});
  check_values(gb::lerp(s, e, 0), {0, 10});
  check_values(gb::lerp(s, e, 2), {20, 30});  // extrapolates
  auto big = gb::tensor({1e30, 1.0}, gb::kFloat64);
  CHECK(gbtest::values(gb::lerp(big, gb::tensor({3.0, 1e-30}, gb::kFloat64), 1.0)) == std::vector<double>{3.0, 1e-30});
  auto grid = gb::lerp(gb::zeros({2, 1}), gb::tensor({4.0, 8.0}), 0.5);
  CHECK(grid.sizes() == gb::IntArrayRef({2, 2}));
  check_values(grid, {2, 4, 2, 4});
  check_values(gb::lerp(s.to(gb::kHalf), e.to(gb::kHalf), 0.5), {5, 15});
  CHECK_THROWS_WITH_AS(gb::lerp(s, e.to(gb::kFloat64), 0.5),
                       doctest::Contains("lerp: expected dtype Float for `end` but got dtype Double"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::lerp(gb::arange(2), gb::arange(2), 0.5),
                       doctest::Contains("lerp: expected a floating tensor"), gb::Error);

  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto b = gb::randn({4}, gbtest::f64_grad());
  auto out = gb::lerp(a, b, 0.3);
  CHECK(out.grad_fn()->name() == "LerpBackward0");
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::lerp(v[0], v[1], 0.3); }, {a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::lerp(v[1], v[0], 0.8); }, {a, b}));
  auto at = gb::randn({4, 3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::lerp(v[0].t(), v[1], 0.6); }, {at, b}));

  auto m = gb::tensor({0.0, 4.0});
  auto v0 = m._version();
  m.lerp_(gb::tensor({2.0, 0.0}), 0.5);  // the optimizer idiom: running averages
  CHECK(m._version() == v0 + 1);
  check_values(m, {1, 2});
  CHECK_THROWS_WITH_AS(gb::zeros({2}).lerp_(gb::zeros({3, 2}), 0.5),
                       doctest::Contains("doesn't match the broadcast shape"), gb::Error);
  auto end = gb::tensor({2.0, 6.0}, gbtest::f64_grad());
  auto acc = gb::zeros({2}, gb::kFloat64);
  acc.lerp_(end, 0.25);  // acc does not require grad but end does: acc joins the graph
  CHECK(acc.grad_fn()->name() == "LerpBackward0");
  acc.sum().backward();
  check_values(end.grad(), {0.25, 0.25});
  check_values(acc, {0.5, 1.5});
}

TEST_CASE("addcmul and addcdiv: values, promotion, gradients, in-place forms") {
  auto s = gb::tensor({1.0, 2.0});
  auto t1 = gb::tensor({3.0, 4.0});
  auto t2 = gb::tensor({2.0, 8.0});
  check_values(gb::addcmul(s, t1, t2), {7, 34});
  check_values(gb::addcmul(s, t1, t2, 0.5), {4, 18});
  check_values(gb::addcdiv(s, t1, t2), {2.5, 2.5});
  check_values(gb::addcdiv(s, t1, t2, -2), {-2, 1});
  expect(gb::addcdiv(s, t1, gb::tensor({0.0, -0.0})), {kInf, -kInf});
  auto g = gb::addcmul(gb::zeros({2, 1}), t1, t2);
  CHECK(g.sizes() == gb::IntArrayRef({2, 2}));
  check_values(g, {6, 32, 6, 32});
  auto i = gb::addcmul(gb::arange(2), gb::arange(2), gb::arange(2), 3);
  CHECK(i.scalar_type() == gb::kInt64);
  check_values(i, {0, 4});
  CHECK(gb::addcmul(gb::arange(2), t1, t2).scalar_type() == gb::kFloat);
  check_values(gb::addcdiv(s.to(gb::kBFloat16), t1.to(gb::kBFloat16), t2.to(gb::kBFloat16)), {2.5, 2.5});
  CHECK_THROWS_WITH_AS(gb::addcdiv(s, gb::arange(2), gb::arange(2)),
                       doctest::Contains("addcdiv: integer division with addcdiv is not supported"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::addcmul(gb::arange(2), gb::arange(2), gb::arange(2), 0.5),
                       doctest::Contains("argument value must not be a floating point number"), gb::Error);

  using gb::variable_list;
  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto b = gb::randn({4}, gbtest::f64_grad());
  auto pos = (gb::rand({3, 1}, gb::kFloat64) + 0.5).requires_grad_();
  auto at = gb::randn({4, 3}, gbtest::f64_grad());
  CHECK(gb::addcmul(a, b, pos).grad_fn()->name() == "AddcmulBackward0");
  CHECK(gb::addcdiv(a, b, pos).grad_fn()->name() == "AddcdivBackward0");
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::addcmul(v[0], v[1], v[2], 0.7); }, {a, b, pos}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::addcdiv(v[0], v[1], v[2], -1.3); }, {a, b, pos}));
  CHECK(gbtest::gradcheck1([](const variable_list& v) { return gb::addcmul(v[1], v[0].t(), v[0].t()); }, {at, b}));
  CHECK(gb::autograd::gradgradcheck(
      [](const variable_list& v) { return variable_list{gb::addcdiv(v[0], v[1], v[2], 0.5)}; }, {a, b, pos}));

  // in place, as Adam uses them under no_grad
  auto p = gb::tensor({1.0, 2.0});
  auto v0 = p._version();
  p.addcmul_(t1, t2, 2);
  check_values(p, {13, 66});
  p.addcdiv_(t1, t2);
  check_values(p, {14.5, 66.5});
  CHECK(p._version() == v0 + 2);
  auto ints = gb::arange(2);
  CHECK_THROWS_WITH_AS(ints.addcmul_(t1, t2), doctest::Contains("addcmul_: result type Float can't be cast"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(p.addcmul_(gb::ones({3}), gb::ones({3})), doctest::Contains("addcmul_: The size of tensor"),
                       gb::Error);
  auto leaf = gb::tensor({1.0, 2.0}, gbtest::f64_grad());
  CHECK_THROWS_WITH_AS(leaf.addcdiv_(t1, t2), doctest::Contains("a leaf Variable that requires grad"), gb::Error);
  {
    gb::NoGradGuard ng;
    leaf.addcdiv_(t1.to(gb::kFloat64), t2.to(gb::kFloat64), -1);
  }
  check_values(leaf, {-0.5, 1.5});
  auto q = gb::tensor({1.0, 1.0}, gbtest::f64_grad());
  auto r = q * 1;
  r.addcmul_(q, q);  // r = q + q * q
  r.sum().backward();
  check_values(q.grad(), {3, 3});
}
