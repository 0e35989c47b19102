// tests/engine/ops/dropout_test.cpp — dropout / dropout_: statistics, scaling, p = 0 and 1, eval, determinism under
// gb::manual_seed, the in-place form, gradients, and the error for p outside [0, 1].
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;

namespace {
bool same(const gb::Tensor& a, const gb::Tensor& b) {
  return a.sizes() == b.sizes() && gbtest::values(a) == gbtest::values(b);
}
}  // namespace

TEST_CASE("dropout zeroes about p of the elements and scales the rest by 1/(1-p)") {
  gb::manual_seed(11);
  auto x = gb::ones({200000});
  auto y = gb::dropout(x, 0.3, true);
  auto v = gbtest::values(y);
  int64_t zeros = 0;
  bool scaled = true;
  for (double e : v) {
    if (e == 0)
      ++zeros;
    else
      scaled = scaled && std::fabs(e - 1 / 0.7) < 1e-6;
  }
  CHECK(scaled);
  CHECK(double(zeros) / double(v.size()) == doctest::Approx(0.3).epsilon(0.02));
  CHECK(y.mean().item<double>() == doctest::Approx(1.0).epsilon(0.01));
}

TEST_CASE("dropout edge cases: p = 0, p = 1, eval") {
  auto x = gb::tensor({1.0, -2.0, 3.0});
  check_values(gb::dropout(x, 0.0, true), {1, -2, 3});
  check_values(gb::dropout(x, 1.0, true), {0, 0, 0});
  CHECK(gb::dropout(x, 0.5, false).is_same(x));
  // p = 0 in training returns the input itself, as PyTorch's CPU dropout: no mask, no draw from the generator
  std::string before = gb::default_generator().get_state();
  CHECK(gb::dropout(x, 0.0, true).is_same(x));
  CHECK(gb::default_generator().get_state() == before);
  auto xg = gb::ones({4}, gbtest::f64_grad());
  gb::dropout(xg, 1.0, true).sum().backward();
  check_values(xg.grad(), {0, 0, 0, 0});
}

TEST_CASE("dropout is deterministic under manual_seed and independent of strides") {
  auto x = gb::randn({6, 7});
  gb::manual_seed(3);
  auto a = gb::dropout(x, 0.5, true);
  gb::manual_seed(3);
  auto b = gb::dropout(x, 0.5, true);
  CHECK(same(a, b));
  auto c = gb::dropout(x, 0.5, true);  // the generator moved on
  CHECK_FALSE(same(a, c));
  auto xt = gb::randn({7, 6}).t();
  gb::manual_seed(4);
  auto d = gb::dropout(xt, 0.5, true);
  gb::manual_seed(4);
  CHECK(same(d, gb::dropout(xt.contiguous(), 0.5, true)));
  auto xh = x.to(gb::kHalf);
  gb::manual_seed(3);
  auto h = gb::dropout(xh, 0.5, true);
  CHECK(h.scalar_type() == gb::kHalf);
  check_close(h, a, 1e-2, 1e-2);  // same mask in every dtype
}

TEST_CASE("dropout gradient is g * mask * scale") {
  gb::manual_seed(12);
  auto x = gb::ones({50}, gbtest::f64_grad());
  auto y = gb::dropout(x, 0.25, true);
  CHECK(y.grad_fn()->name() == "NativeDropoutBackward0");
  y.sum().backward();
  check_close(x.grad(), y.detach());  // x is all ones: y is exactly mask * scale
  auto xr = gb::randn({3, 5}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) {
        gb::manual_seed(0);  // the same mask on every evaluation
        return gb::dropout(v[0], 0.4, true);
      },
      {xr}));
}

TEST_CASE("dropout_ works in place with the same mask as dropout") {
  auto x = gb::randn({5, 4});
  gb::manual_seed(21);
  auto want = gb::dropout(x, 0.5, true);
  auto y = x.clone();
  auto v0 = y._version();
  gb::manual_seed(21);
  auto& r = gb::dropout_(y, 0.5, true);
  CHECK(&r == &y);
  CHECK(y._version() > v0);
  CHECK(same(y, want));
  auto z = x.clone();
  gb::dropout_(z, 0.5, false);  // eval: untouched
  CHECK(same(z, x));
  // on a non-leaf with history the gradient flows through the mask
  auto leaf = gb::ones({8}, gbtest::f64_grad());
  auto h = leaf * 2.0;
  gb::manual_seed(22);
  gb::dropout_(h, 0.5, true);
  CHECK(h.grad_fn()->name() == "NativeDropoutBackward0");
  h.sum().backward();
  check_close(leaf.grad(), h.detach());  // d(2 * leaf * mask * scale) = 2 * mask * scale = h
  auto leaf2 = gb::ones({3}, gbtest::f64_grad());
  CHECK_THROWS_AS(gb::dropout_(leaf2, 0.5, true), gb::Error);  // a leaf that requires grad
}

TEST_CASE("dropout rejects p outside [0, 1]") {
  auto x = gb::ones({3});
  CHECK_THROWS_WITH_AS(gb::dropout(x, 1.5, true), "dropout: dropout probability has to be between 0 and 1, but got 1.5",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::dropout(x, -0.1, false), doctest::Contains("has to be between 0 and 1, but got -0.1"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::dropout_(x, 2.0, true), doctest::Contains("has to be between 0 and 1"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::dropout(gb::ones({3}, gb::kInt64), 0.5, true), doctest::Contains("floating-point"),
                       gb::Error);
}

TEST_CASE("feature_dropout zeroes whole channels (about p of them), scales the rest, and its gradient is the mask") {
  gb::manual_seed(5);
  auto x = gb::randn({40, 50, 3, 2}, gbtest::f64_grad());
  auto y = gb::feature_dropout(x, 0.25, true);
  y.sum().backward();
  auto mask = x.grad();  // d(sum y)/dx: the scaled keep-mask, broadcast over each channel
  CHECK(gbtest::values(y) == gbtest::values(x.detach() * mask));
  int64_t dropped = 0;
  bool whole = true;
  for (int64_t n = 0; n < 40; ++n)
    for (int64_t c = 0; c < 50; ++c) {
      auto m = mask[n][c];
      double first = m[0][0].item<double>();
      whole = whole && m.max().item<double>() == first && m.min().item<double>() == first;
      if (first == 0)
        ++dropped;
      else
        whole = whole && first == 1 / 0.75;
    }
  CHECK(whole);
  CHECK(double(dropped) / 2000.0 == doctest::Approx(0.25).epsilon(0.1));
  CHECK(gb::feature_dropout(x, 0.5, false).is_same(x));
  CHECK(gb::feature_dropout(x, 0.0, true).is_same(x));
  check_values(gb::feature_dropout(gb::ones({1, 2, 2}), 1.0, true), {0, 0, 0, 0});
  CHECK_THROWS_WITH(gb::feature_dropout(gb::ones({3}), 0.5, true),
                    doctest::Contains("expected an input of at least 2 dims (N, C, ...), got a 1-D input"));
  CHECK_THROWS_WITH(gb::feature_dropout(gb::ones({3, 3}), 1.5, true),
                    doctest::Contains("dropout probability has to be between 0 and 1"));
}
