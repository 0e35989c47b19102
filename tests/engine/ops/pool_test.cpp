// tests/engine/ops/pool_test.cpp — max_pool2d (+ indices), avg_pool2d, adaptive_avg_pool2d: hand-computed values
// for every option, gradients (hand-checked, gradcheck and gradgradcheck in f64), dtypes, and every error.
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::gradgradcheck1;

TEST_CASE("max_pool2d: values and indices for kernel, stride, padding, dilation and ceil_mode") {
  auto x = gb::arange(16, gb::kFloat).view({1, 1, 4, 4});
  auto [y, idx] = gb::max_pool2d_with_indices(x, 2);
  check_values(y, {5, 7, 13, 15});
  CHECK(idx.scalar_type() == gb::kInt64);
  check_values(idx, {5, 7, 13, 15});
  check_values(gb::max_pool2d(x, 3, 1, 1), {5, 6, 7, 7, 9, 10, 11, 11, 13, 14, 15, 15, 13, 14, 15, 15});
  check_values(gb::max_pool2d(x, 2, 1, 0, 2), {10, 11, 14, 15});
  auto x5 = gb::arange(25, gb::kFloat).view({1, 5, 5});  // unbatched
  CHECK(gb::max_pool2d(x5, 2).sizes() == gb::IntArrayRef({1, 2, 2}));
  check_values(gb::max_pool2d(x5, 2, 2, 0, 1, /*ceil_mode=*/true), {6, 8, 9, 16, 18, 19, 21, 23, 24});
  check_values(gb::max_pool2d(x5, {2, 3}, {2, 1}), {7, 8, 9, 17, 18, 19});
  // NaN propagates
  auto xn = gb::tensor({1.0, NAN, 3.0, 4.0}).view({1, 1, 2, 2});
  CHECK(std::isnan(gb::max_pool2d(xn, 2).item<double>()));
}

TEST_CASE("max_pool2d: every kernel (2x2, 3x3, any window; with and without NaN) matches a direct loop") {
  // The direct loop is PyTorch's rule: each window's elements row by row, the first maximum, the last NaN.
  auto direct = [](const gb::Tensor& x, int64_t k0, int64_t k1, int64_t s0, int64_t s1, int64_t p0, int64_t p1,
                   int64_t d0, int64_t d1, bool ceil) {
    auto X = gbtest::values(x);
    const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
    auto out_size = [&](int64_t in, int64_t k, int64_t p, int64_t s, int64_t d) {
      int64_t n = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
      int64_t o = n / s + 1;
      if (ceil && (o - 1) * s >= in + p) --o;
      return o;
    };
    const int64_t Ho = out_size(H, k0, p0, s0, d0), Wo = out_size(W, k1, p1, s1, d1);
    std::vector<double> v, idx;
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          double best = -INFINITY;
          int64_t at = -1;
          for (int64_t i = 0; i < k0; ++i)
            for (int64_t j = 0; j < k1; ++j) {
              const int64_t ih = oh * s0 - p0 + i * d0, iw = ow * s1 - p1 + j * d1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const double e = X[size_t((p * H + ih) * W + iw)];
              if (at < 0) at = ih * W + iw;
              if (e > best || std::isnan(e)) best = e, at = ih * W + iw;
            }
          v.push_back(best);
          idx.push_back(double(at));
        }
    return std::pair{v, idx};
  };
  gb::manual_seed(11);
  // rounded to halves: many ties; a few NaN and -inf planted in some planes only
  auto x = (gb::randn({3, 5, 13, 12}) * 2).round() / 2;
  x.view({-1}).index_put_({gb::tensor({7L, 300L, 301L, 1200L})}, NAN);
  x.view({-1}).index_put_({gb::tensor({40L, 41L, 52L, 53L, 900L})}, -INFINITY);
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble}) {
    auto xt = x.to(t);
    int nans = 0;
    struct Opt {
      int64_t k0, k1, s0, s1, p0, p1, d0, d1;
      bool ceil;
    };
    for (const Opt& o : {Opt{2, 2, 2, 2, 0, 0, 1, 1, false}, Opt{2, 2, 1, 1, 1, 1, 1, 1, false},
                         Opt{3, 3, 2, 2, 1, 1, 1, 1, true}, Opt{3, 3, 1, 1, 0, 0, 1, 1, false},
                         Opt{2, 3, 2, 1, 1, 0, 1, 1, false}, Opt{3, 3, 2, 2, 1, 1, 2, 2, false},
                         Opt{4, 4, 3, 3, 2, 2, 1, 1, true}}) {
      CAPTURE(o.k0);
      CAPTURE(o.k1);
      CAPTURE(o.s0);
      CAPTURE(o.p0);
      CAPTURE(o.d0);
      auto [y, idx] = gb::max_pool2d_with_indices(xt, {o.k0, o.k1}, {o.s0, o.s1}, {o.p0, o.p1}, {o.d0, o.d1}, o.ceil);
      auto [want, want_idx] = direct(x.to(gb::kDouble), o.k0, o.k1, o.s0, o.s1, o.p0, o.p1, o.d0, o.d1, o.ceil);
      auto got = gbtest::values(y), got_idx = gbtest::values(idx);
      REQUIRE(got.size() == want.size());
      int mismatches = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        nans += std::isnan(want[i]);
        const bool same = std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i];
        mismatches += !same || got_idx[i] != want_idx[i];
      }
      CHECK(mismatches == 0);
    }
    CHECK(nans > 0);  // the NaN path ran
  }
}

TEST_CASE("max_pool2d: the gradient goes to the first max on ties") {
  auto x = gb::ones({1, 1, 2, 2}, gbtest::f64_grad());
  auto y = gb::max_pool2d(x, 2);
  CHECK(y.grad_fn()->name() == "MaxPool2DWithIndicesBackward0");
  y.sum().backward();
  check_values(x.grad(), {1, 0, 0, 0});
  auto x2 = gb::arange(16, gb::kFloat64).view({1, 1, 4, 4}).requires_grad_();
  gb::max_pool2d(x2, 3, 1, 1).sum().backward();  // overlapping windows accumulate
  check_values(x2.grad(), {0, 0, 0, 0, 0, 1, 1, 2, 0, 1, 1, 2, 0, 2, 2, 4});
}

TEST_CASE("max_pool2d: gradcheck and gradgradcheck") {
  gb::manual_seed(4);
  auto x = gb::randn({2, 3, 7, 6}, gbtest::f64_grad());  // random: no ties
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::max_pool2d(v[0], 3, 2, 1); }, {x}));
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) {
        return gb::max_pool2d(v[0], {2, 3}, {1, 2}, {1, 0}, 2, true);
      },
      {x}));
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::max_pool2d(v[0], 2, 1); }, {x}));
}

TEST_CASE("avg_pool2d: padding, count_include_pad, divisor_override and ceil_mode") {
  auto x = gb::arange(16, gb::kFloat).view({1, 1, 4, 4});
  check_values(gb::avg_pool2d(x, 2), {2.5, 4.5, 10.5, 12.5});
  auto x1 = gb::arange(1, 17, gb::kFloat).view({1, 1, 4, 4});
  auto inc = gb::avg_pool2d(x1, 2, 2, 1);
  CHECK(inc.sizes() == gb::IntArrayRef({1, 1, 3, 3}));
  check_values(inc, {0.25, 1.25, 1, 3.5, 8.5, 5, 3.25, 7.25, 4});
  check_values(gb::avg_pool2d(x1, 2, 2, 1, false, /*count_include_pad=*/false), {1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16});
  check_values(gb::avg_pool2d(x1, 2, 2, 1, false, true, /*divisor_override=*/1), {1, 5, 4, 14, 34, 20, 13, 29, 16});
  auto x5 = gb::arange(25, gb::kFloat).view({1, 1, 5, 5});
  // ceil_mode: the last window hangs over the edge and divides by the part inside
  check_values(gb::avg_pool2d(x5, 2, 2, 0, /*ceil_mode=*/true), {3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24});
}

TEST_CASE("avg_pool2d: gradients") {
  auto x = gb::arange(1, 17, gb::kFloat64).view({1, 1, 4, 4}).requires_grad_();
  auto y = gb::avg_pool2d(x, 2);
  CHECK(y.grad_fn()->name() == "AvgPool2DBackward0");
  y.sum().backward();
  check_values(x.grad(), std::vector<double>(16, 0.25));
  gb::manual_seed(5);
  auto xr = gb::randn({2, 2, 7, 6}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::avg_pool2d(v[0], 3, 2, 1); }, {xr}));
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) {
        return gb::avg_pool2d(v[0], {3, 2}, {2, 1}, {1, 1}, true, false);
      },
      {xr}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::avg_pool2d(v[0], 2, 2, 1, true, true, 3); },
                           {xr}));
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::avg_pool2d(v[0], 3, 2, 1); }, {xr}));
}

TEST_CASE("adaptive_avg_pool2d: PyTorch's start/end windows") {
  auto x = gb::arange(5, gb::kFloat).view({1, 1, 1, 5});
  // 5 -> 3: windows [0,2), [1,4), [3,5)
  check_values(gb::adaptive_avg_pool2d(x, {1, 3}), {0.5, 2, 3.5});
  auto x2 = gb::arange(16, gb::kFloat64).view({1, 4, 4});
  check_values(gb::adaptive_avg_pool2d(x2, 1), {7.5});
  check_values(gb::adaptive_avg_pool2d(x2, 2), {2.5, 4.5, 10.5, 12.5});
  check_close(gb::adaptive_avg_pool2d(x2, 4), x2);  // identity
  auto xr = gb::randn({2, 3, 7, 5}, gbtest::f64_grad());
  auto y = gb::adaptive_avg_pool2d(xr, {3, 4});
  CHECK(y.sizes() == gb::IntArrayRef({2, 3, 3, 4}));
  CHECK(y.grad_fn()->name() == "AdaptiveAvgPool2DBackward0");
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::adaptive_avg_pool2d(v[0], {3, 4}); }, {xr}));
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::adaptive_avg_pool2d(v[0], {4, 2}); }, {xr}));
}

TEST_CASE("pooling keeps 16-bit dtypes and reads non-contiguous input") {
  gb::manual_seed(6);
  auto x = gb::randn({2, 3, 6, 6});
  for (auto dt : {gb::kHalf, gb::kBFloat16}) {
    auto xh = x.to(dt);
    CHECK(gb::max_pool2d(xh, 2).scalar_type() == dt);
    check_close(gb::max_pool2d(xh, 2), gb::max_pool2d(xh.to(gb::kFloat), 2));
    check_close(gb::avg_pool2d(xh, 2), gb::avg_pool2d(xh.to(gb::kFloat), 2), 1e-2, 1e-2);
    check_close(gb::adaptive_avg_pool2d(xh, 3), gb::adaptive_avg_pool2d(xh.to(gb::kFloat), 3), 1e-2, 1e-2);
  }
  auto xt = x.transpose(2, 3);
  check_close(gb::max_pool2d(xt, 3, 2, 1), gb::max_pool2d(xt.contiguous(), 3, 2, 1));
  check_close(gb::avg_pool2d(xt, 3, 2, 1), gb::avg_pool2d(xt.contiguous(), 3, 2, 1));
}

TEST_CASE("pooling errors") {
  auto x = gb::ones({1, 2, 4, 4});
  CHECK_THROWS_WITH_AS(gb::max_pool2d(x, 3, 1, 2),
                       "max_pool2d: pad should be smaller than or equal to half of kernel size, but got padW = 2, "
                       "padH = 2, kW = 3, kH = 3",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::avg_pool2d(x, 2, 1, 2), doctest::Contains("pad should be smaller than or equal to half"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(
      gb::max_pool2d(gb::ones({2, 2, 2}), 3),
      "max_pool2d: Given input size: (2x2x2). Calculated output size: (2x0x0). Output size is too small", gb::Error);
  CHECK_THROWS_WITH_AS(gb::max_pool2d(gb::ones({4, 4}), 2),
                       "max_pool2d: Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                       "but got:[4, 4]",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::max_pool2d(x, 2, 0), "max_pool2d: stride should be greater than zero, but got dH: 0 dW: 0",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::max_pool2d(x, 0), doctest::Contains("kernel size should be greater than zero"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::max_pool2d(x, 2, 2, 0, 0), doctest::Contains("dilation should be greater than zero"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::max_pool2d(x, {2, 2, 2}),
                       doctest::Contains("kernel_size must either be a single int, or a tuple of two ints"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::avg_pool2d(x, 2, 2, 0, false, true, 0), "avg_pool2d: divisor must be not zero", gb::Error);
  CHECK_THROWS_WITH_AS(gb::max_pool2d(gb::ones({1, 2, 4, 4}, gb::kInt64), 2),
                       doctest::Contains("expected a floating-point input"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::adaptive_avg_pool2d(gb::ones({4}), 2),
                       "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [4]", gb::Error);
  CHECK_THROWS_WITH_AS(gb::adaptive_avg_pool2d(x, {1, 2, 3}), doctest::Contains("output_size must be 2"), gb::Error);
}
