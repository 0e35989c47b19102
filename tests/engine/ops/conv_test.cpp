// tests/engine/ops/conv_test.cpp — conv2d: hand-computed values, stride/padding/dilation/groups against a naive
// direct convolution, unbatched input, 16-bit dtypes, gradients (hand-computed and gradcheck), and every error.
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;

namespace {

// Direct convolution straight from the definition, in double: the oracle for the im2col + GEMM kernel.
gb::Tensor naive_conv(const gb::Tensor& x, const gb::Tensor& w, const gb::Tensor& b, int64_t sh, int64_t sw, int64_t ph,
                      int64_t pw, int64_t dh, int64_t dw, int64_t groups) {
  auto X = gbtest::values(x), Wv = gbtest::values(w);
  int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  int64_t O = w.size(0), Cg = w.size(1), kH = w.size(2), kW = w.size(3), Og = O / groups;
  int64_t Ho = (H + 2 * ph - dh * (kH - 1) - 1) / sh + 1, Wo = (W + 2 * pw - dw * (kW - 1) - 1) / sw + 1;
  std::vector<double> out(size_t(N * O * Ho * Wo), 0.0);
  std::vector<double> B = b.defined() ? gbtest::values(b) : std::vector<double>(size_t(O), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          double acc = B[size_t(o)];
          int64_t gr = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < kH; ++i)
              for (int64_t j = 0; j < kW; ++j) {
                int64_t ih = oh * sh - ph + i * dh, iw = ow * sw - pw + j * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc +=
                    X[size_t(((n * C + gr * Cg + c) * H + ih) * W + iw)] * Wv[size_t(((o * Cg + c) * kH + i) * kW + j)];
              }
          out[size_t(((n * O + o) * Ho + oh) * Wo + ow)] = acc;
        }
  return gb::tensor(gb::ArrayRef<double>(out), gb::kFloat64).view({N, O, Ho, Wo});
}

}  // namespace

TEST_CASE("conv2d computes hand-checked windows") {
  auto x = gb::arange(1, 10, gb::kFloat).view({1, 1, 3, 3});
  auto w = gb::ones({1, 1, 2, 2});
  auto y = gb::conv2d(x, w, gb::tensor({0.5}));
  CHECK(y.sizes() == gb::IntArrayRef({1, 1, 2, 2}));
  check_values(y, {12.5, 16.5, 24.5, 28.5});
  // padding 1, stride 2: the corner window reads one real pixel
  check_values(gb::conv2d(x, w, {}, 2, 1), {1, 5, 11, 28});
  // dilation 2: the four corners
  check_values(gb::conv2d(x, w, {}, 1, 0, 2), {20});
  // groups 2: each output channel sees its own input channel
  auto xg = gb::tensor({1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0}).view({1, 2, 2, 2});
  auto wg = gb::tensor({3.0, 5.0}).view({2, 1, 1, 1});
  check_values(gb::conv2d(xg, wg, {}, 1, 0, 1, 2), {3, 3, 3, 3, 10, 10, 10, 10});
  // padding wider than the input: only the kernel's centre touches the single pixel
  auto w7 = gb::arange(49, gb::kFloat).view({1, 1, 7, 7});
  check_values(gb::conv2d(gb::full({1, 1, 1, 1}, 2.0), w7, {}, 1, 3), {48});
}

TEST_CASE("conv2d matches a direct convolution for every option") {
  gb::manual_seed(1);
  struct Case {
    int64_t N, C, H, W, O, kH, kW, sh, sw, ph, pw, dh, dw, groups;
    bool bias;
  };
  const Case cases[] = {
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1, true},  {3, 4, 9, 8, 6, 3, 2, 2, 1, 1, 2, 1, 1, 2, false},
      {1, 2, 8, 8, 2, 3, 3, 2, 3, 2, 1, 2, 2, 2, true},  {4, 6, 5, 5, 3, 1, 1, 1, 1, 0, 0, 1, 1, 3, true},
      {2, 4, 5, 7, 8, 1, 1, 2, 2, 1, 0, 1, 1, 4, false}, {5, 1, 4, 4, 2, 4, 4, 1, 1, 0, 0, 1, 1, 1, true},
      {2, 2, 2, 1, 3, 5, 7, 1, 2, 2, 3, 1, 1, 1, true},  // padding larger than the input
  };
  for (const auto& k : cases) {
    CAPTURE(k.N);
    CAPTURE(k.groups);
    auto x = gb::randn({k.N, k.C, k.H, k.W}, gb::kFloat64);
    auto w = gb::randn({k.O, k.C / k.groups, k.kH, k.kW}, gb::kFloat64);
    auto b = k.bias ? gb::randn({k.O}, gb::kFloat64) : gb::Tensor();
    auto want = naive_conv(x, w, b, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, k.groups);
    auto got = gb::conv2d(x, w, b, {k.sh, k.sw}, {k.ph, k.pw}, {k.dh, k.dw}, k.groups);
    check_close(got, want, 1e-10, 1e-10);
    auto got32 = gb::conv2d(x.to(gb::kFloat), w.to(gb::kFloat), k.bias ? b.to(gb::kFloat) : gb::Tensor(), {k.sh, k.sw},
                            {k.ph, k.pw}, {k.dh, k.dw}, k.groups);
    CHECK(got32.scalar_type() == gb::kFloat);
    check_close(got32, want, 1e-4, 1e-4);
  }
}

TEST_CASE("conv2d takes unbatched input, 16-bit dtypes and non-contiguous input") {
  gb::manual_seed(2);
  auto x = gb::randn({3, 6, 5});
  auto w = gb::randn({4, 3, 3, 3});
  auto y = gb::conv2d(x, w, {}, 1, 1);
  CHECK(y.sizes() == gb::IntArrayRef({4, 6, 5}));
  check_close(y, gb::conv2d(x.unsqueeze(0), w, {}, 1, 1).squeeze(0));
  auto yh = gb::conv2d(x.to(gb::kHalf), w.to(gb::kHalf), {}, 1, 1);
  CHECK(yh.scalar_type() == gb::kHalf);
  check_close(yh, y, 2e-2, 2e-2);
  auto yb = gb::conv2d(x.to(gb::kBFloat16), w.to(gb::kBFloat16), {}, 1, 1);
  CHECK(yb.scalar_type() == gb::kBFloat16);
  check_close(yb, y, 5e-2, 1e-1);
  auto xt = gb::randn({1, 3, 5, 6}).transpose(2, 3);  // (1,3,6,5), not contiguous
  check_close(gb::conv2d(xt, w), gb::conv2d(xt.contiguous(), w));
}

TEST_CASE("conv2d gradients: hand-checked and against finite differences") {
  auto x = gb::arange(1, 10, gb::kFloat64).view({1, 1, 3, 3}).requires_grad_();
  auto w = gb::ones({1, 1, 2, 2}, gbtest::f64_grad());
  auto b = gb::zeros({1}, gbtest::f64_grad());
  auto y = gb::conv2d(x, w, b);
  CHECK(y.grad_fn()->name() == "ConvolutionBackward0");
  y.sum().backward();
  check_values(x.grad(), {1, 2, 1, 2, 4, 2, 1, 2, 1});
  check_values(w.grad(), {12, 16, 24, 28});
  check_values(b.grad(), {4});

  gb::manual_seed(3);
  auto xi = gb::randn({2, 4, 6, 5}, gbtest::f64_grad());
  auto wi = gb::randn({6, 2, 3, 2}, gbtest::f64_grad());  // groups 2
  auto bi = gb::randn({6}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::conv2d(v[0], v[1], v[2], 1, 0, 1, 2); },
                           {xi, wi, bi}));
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) {
        return gb::conv2d(v[0], v[1], v[2], {2, 1}, {1, 2}, {2, 1}, 2);
      },
      {xi, wi, bi}));
  auto w1 = gb::randn({4, 1, 1, 1}, gbtest::f64_grad());  // depthwise 1x1: the pointwise path
  CHECK(
      gbtest::gradcheck1([](const gb::variable_list& v) { return gb::conv2d(v[0], v[1], {}, 1, 0, 1, 4); }, {xi, w1}));
  auto wu = gb::randn({3, 4, 2, 2}, gbtest::f64_grad());
  auto xu = gb::randn({4, 5, 5}, gbtest::f64_grad());  // unbatched, stride 2 with padding
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::conv2d(v[0], v[1], {}, 2, 1); }, {xu, wu}));
  // only the weight requires grad
  auto xc = gb::randn({2, 4, 6, 5}, gb::kFloat64);
  CHECK(gbtest::gradcheck1([xc](const gb::variable_list& v) { return gb::conv2d(xc, v[0], {}, 1, 1); }, {wu}));
}

TEST_CASE("conv2d double backward is refused with a clear message") {
  auto x = gb::randn({1, 2, 4, 4}, gbtest::f64_grad());
  auto w = gb::randn({2, 2, 3, 3}, gbtest::f64_grad());
  auto y = gb::conv2d(x, w).sum();
  CHECK_THROWS_WITH_AS(gb::autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true),
                       doctest::Contains("double backward through conv2d is not supported yet"), gb::Error);
}

TEST_CASE("conv2d errors use PyTorch's wording") {
  auto x = gb::ones({2, 4, 8, 8});
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 3, 3, 3})),
                       "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 4, 8, 8] to have 3 channels, "
                       "but got 4 channels instead",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({3, 2, 3, 3}), {}, 1, 0, 1, 2),
                       "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
                       "[3, 2, 3, 3] instead",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3, 3}), gb::ones({4})),
                       "Given weight of size [8, 4, 3, 3], expected bias to be 1-dimensional with 8 elements, but "
                       "got bias of size [4] instead",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(gb::ones({4, 8}), gb::ones({8, 4, 3, 3})),
                       "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [4, 8]",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3})), doctest::Contains("expected weight of 4 dims"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 9, 9})),
                       doctest::Contains("Calculated padded input size per channel: (8 x 8). Kernel size: (9 x 9). "
                                         "Kernel size can't be greater than actual input size"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3, 3}, gb::kFloat64)),
                       "conv2d: Input type (Float) and weight type (Double) should be the same", gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3, 3}), {}, 0), doctest::Contains("non-positive stride"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3, 3}), {}, 1, -1), doctest::Contains("negative padding"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3, 3}), {}, 1, 0, 0),
                       doctest::Contains("dilation should be greater than zero"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3, 3}), {}, 1, 0, 1, 0),
                       doctest::Contains("non-positive groups is not supported"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::conv2d(x, gb::ones({8, 4, 3, 3}), {}, {1, 1, 1}),
                       doctest::Contains("stride must either be a single int, or a tuple of two ints"), gb::Error);
}

TEST_CASE("conv_transpose2d is conv2d's adjoint: <conv2d(z, w), x> = <z, conv_transpose2d(x, w)>, for every option") {
  gb::manual_seed(8);
  struct Case {
    std::vector<int64_t> s, p, op, d;
    int64_t groups;
  };
  for (const Case& c : {Case{{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}, Case{{2, 1}, {1, 1}, {1, 0}, {1, 1}, 1},
                        Case{{2, 2}, {1, 0}, {0, 1}, {2, 1}, 2}, Case{{3, 2}, {0, 1}, {2, 1}, {1, 2}, 2}}) {
    CAPTURE(c.groups);
    auto x = gb::randn({2, 4, 4, 3}, gb::kFloat64);  // conv_transpose2d's input: conv2d's output shape
    auto w = gb::randn({4, 3, 3, 2}, gb::kFloat64);  // (C_in, C_out / groups, kH, kW)
    auto y = gb::conv_transpose2d(x, w, {}, c.s, c.p, c.op, c.groups, c.d);
    const int64_t H = (4 - 1) * c.s[0] - 2 * c.p[0] + c.d[0] * (3 - 1) + c.op[0] + 1;
    const int64_t W = (3 - 1) * c.s[1] - 2 * c.p[1] + c.d[1] * (2 - 1) + c.op[1] + 1;
    CHECK(y.sizes() == gb::IntArrayRef({2, 3 * c.groups, H, W}));
    auto z = gb::randn({2, 3 * c.groups, H, W}, gb::kFloat64);
    auto conv = naive_conv(z, w, {}, c.s[0], c.s[1], c.p[0], c.p[1], c.d[0], c.d[1], c.groups);
    REQUIRE(conv.sizes() == x.sizes());
    CHECK((conv * x).sum().item<double>() == doctest::Approx((z * y).sum().item<double>()).epsilon(1e-10));
  }
  // a bias adds per output channel; float32 agrees with float64; unbatched input
  auto x = gb::randn({1, 2, 3, 3}, gb::kFloat64), w = gb::randn({2, 1, 2, 2}, gb::kFloat64);
  auto b = gb::tensor({0.5, -1.0}, gb::kFloat64);
  auto y = gb::conv_transpose2d(x, w, b, 2, 0, 0, 2);
  check_close(y - gb::conv_transpose2d(x, w, {}, 2, 0, 0, 2), b.view({1, 2, 1, 1}).expand(y.sizes()), 1e-12, 1e-12);
  check_close(gb::conv_transpose2d(x.to(gb::kFloat), w.to(gb::kFloat), b.to(gb::kFloat), 2, 0, 0, 2).to(gb::kFloat64),
              y, 1e-5, 1e-5);
  check_close(gb::conv_transpose2d(x[0], w, b, 2, 0, 0, 2), y[0], 1e-12, 1e-12);
}

TEST_CASE("conv_transpose2d gradients against finite differences; errors say what to change") {
  gb::manual_seed(9);
  auto x = gb::randn({2, 4, 3, 4}, gbtest::f64_grad());
  auto w = gb::randn({4, 2, 3, 2}, gbtest::f64_grad());
  auto b = gb::randn({4}, gbtest::f64_grad());
  auto y = gb::conv_transpose2d(x, w, b, 2, 1, 1, 2);
  CHECK(y.grad_fn()->name() == "ConvolutionBackward0");
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) { return gb::conv_transpose2d(v[0], v[1], v[2], {2, 1}, {1, 0}, {1, 0}, 2); },
      {x, w, b}));
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) { return gb::conv_transpose2d(v[0], v[1], {}, 1, 0, 0, 1, {2, 1}); },
      {x, gb::randn({4, 3, 2, 2}, gbtest::f64_grad())}));
  CHECK_THROWS_WITH(gb::conv_transpose2d(x, w, {}, 2, 0, 2), doctest::Contains("output padding must be smaller than "
                                                                              "either stride or dilation"));
  CHECK_THROWS_WITH(gb::conv_transpose2d(x, gb::randn({3, 2, 2, 2}, gb::kFloat64)),
                    doctest::Contains("expected input[2, 4, 3, 4] to have 3 channels, but got 4 channels instead"));
  CHECK_THROWS_WITH(gb::conv_transpose2d(x, w, gb::zeros({3}, gb::kFloat64)),
                    doctest::Contains("expected bias to be 1-dimensional with 2 elements"));
}
