// tests/engine/cuda/conv_cudnn_gpu_test.cpp — GPU tier: conv2d and conv_transpose2d on cuda through cuDNN
// (engine/cuda/conv_cudnn.cpp) against the cpu's, forward and all three gradients, over strides, padding,
// dilation, groups, 1x1 and an empty batch, in float32 (TF32 off: exact up to summation order), float64, float16 and
// bfloat16; the algorithm cache and benchmark mode; deterministic mode's repeatable gradients; TF32 reaching cuDNN.
#include "cuda/conv_cudnn.h"
#include "engine/cuda/cudnn_test_util.h"
#include "support/check.h"

using gbtest::kGpu;

namespace {

struct Geometry {
  std::vector<int64_t> x, w;
  int64_t stride, padding, dilation, groups;
  bool bias;
};

const Geometry kGeometries[] = {
    {{2, 3, 9, 9}, {4, 3, 3, 3}, 1, 1, 1, 1, true},     // same padding
    {{2, 4, 10, 11}, {6, 4, 3, 3}, 2, 1, 1, 1, false},  // strided, odd width
    {{1, 4, 12, 12}, {4, 2, 3, 3}, 1, 2, 2, 2, true},   // dilated, two groups
    {{3, 8, 5, 5}, {8, 1, 3, 3}, 1, 1, 1, 8, true},     // depthwise
    {{2, 5, 6, 6}, {7, 5, 1, 1}, 1, 0, 1, 1, true},     // 1x1
    {{2, 3, 8, 8}, {4, 3, 5, 5}, 3, 0, 1, 1, true},     // a 5x5 window at stride 3, no padding
};

double conv_tolerance(gb::ScalarType t) {
  return t == gb::kDouble ? 1e-10 : t == gb::kFloat ? 2e-4 : t == gb::kHalf ? 1e-2 : 5e-2;
}

// conv2d forward and backward on cuda against the cpu's, in dtype t.
void check_geometry(const Geometry& k, gb::ScalarType t) {
  gb::manual_seed(41);
  gb::Tensor x = gb::randn(k.x).to(t), w = (gb::randn(k.w) * 0.3).to(t), b = gb::randn({k.w[0]}).to(t);
  gb::Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_(), bc = b.clone().requires_grad_();
  gb::Tensor xg = x.to(kGpu).requires_grad_(), wg = w.to(kGpu).requires_grad_(), bg = b.to(kGpu).requires_grad_();
  gb::Tensor yc = gb::conv2d(xc, wc, k.bias ? bc : gb::Tensor(), k.stride, k.padding, k.dilation, k.groups);
  gb::Tensor yg = gb::conv2d(xg, wg, k.bias ? bg : gb::Tensor(), k.stride, k.padding, k.dilation, k.groups);
  REQUIRE(yg.device() == kGpu);
  CHECK(yg.scalar_type() == t);
  const double tol = conv_tolerance(t);
  gbtest::check_close(yg, yc, tol, tol);
  gb::Tensor gy = gb::randn(yc.sizes()).to(t);
  yc.backward(gy);
  yg.backward(gy.to(kGpu));
  gbtest::check_close(xg.grad(), xc.grad(), tol, tol);
  gbtest::check_close(wg.grad(), wc.grad(), tol * 4, tol * 4);  // sums over the batch and every position
  if (k.bias) gbtest::check_close(bg.grad(), bc.grad(), tol * 4, tol * 4);
  CHECK(yg.grad_fn()->name() == "ConvolutionBackward0");
}

}  // namespace

TEST_CASE("conv2d on cuda equals the cpu's, forward and backward, in every floating dtype") {
  if (gbtest::skip_without_cudnn()) return;
  gb::backends::cudnn::allow_tf32 = false;
  const int64_t cached_before = gb::detail::cudnn_cache_stats().cached;
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16})
    for (const Geometry& k : kGeometries) {
      CAPTURE(gb::to_string(t));
      CAPTURE(k.x);
      CAPTURE(k.w);
      check_geometry(k, t);
    }
  gb::backends::cudnn::allow_tf32 = true;
  // each (geometry, dtype, direction) was chosen once and kept
  CHECK(gb::detail::cudnn_cache_stats().cached - cached_before == int64_t(std::size(kGeometries)) * 4 * 3);
}

TEST_CASE("an empty batch gives empty outputs and zero weight gradients") {
  if (gbtest::skip_without_cudnn()) return;
  gb::Tensor x = gb::randn({0, 3, 5, 5}).to(kGpu).requires_grad_(),
             w = gb::randn({4, 3, 3, 3}).to(kGpu).requires_grad_();
  gb::Tensor y = gb::conv2d(x, w, gb::Tensor(), 1, 1);
  CHECK(y.sizes() == std::vector<int64_t>{0, 4, 5, 5});
  y.sum().backward();
  CHECK(w.grad().abs().sum().item().to_double() == 0.0);
  CHECK(x.grad().sizes() == x.sizes());
}

TEST_CASE("benchmark mode times the candidates once per geometry and computes the same convolution") {
  if (gbtest::skip_without_cudnn()) return;
  gb::backends::cudnn::allow_tf32 = false;
  const Geometry k{{4, 16, 20, 20}, {32, 16, 3, 3}, 1, 1, 1, 1, true};
  const int64_t timed_before = gb::detail::cudnn_cache_stats().timed;
  gb::backends::cudnn::benchmark = true;
  check_geometry(k, gb::kFloat);
  check_geometry(k, gb::kFloat);  // cached: not timed again
  gb::backends::cudnn::benchmark = false;
  CHECK(gb::detail::cudnn_cache_stats().timed == timed_before + 3);  // forward, data, filter
  gb::backends::cudnn::allow_tf32 = true;
}

TEST_CASE("deterministic mode gives bit-identical gradients run to run") {
  if (gbtest::skip_without_cudnn()) return;
  gb::backends::cudnn::deterministic = true;
  gb::manual_seed(43);
  gb::Tensor x = gb::randn({8, 16, 24, 24}).to(kGpu), w = gb::randn({16, 16, 3, 3}).to(kGpu);
  auto grads = [&] {
    gb::Tensor xr = x.detach().requires_grad_(), wr = w.detach().requires_grad_();
    gb::conv2d(xr, wr, gb::Tensor(), 1, 1).square().sum().backward();
    return std::pair{xr.grad().cpu(), wr.grad().cpu()};
  };
  auto [gx1, gw1] = grads();
  auto [gx2, gw2] = grads();
  gb::backends::cudnn::deterministic = false;
  CHECK(gb::equal(gx1, gx2));
  CHECK(gb::equal(gw1, gw2));
}

TEST_CASE("TF32 reaches cuDNN only when allowed") {
  if (gbtest::skip_without_cudnn()) return;
  gb::manual_seed(44);
  gb::Tensor x = gb::randn({4, 64, 32, 32}), w = gb::randn({64, 64, 3, 3});
  gb::Tensor exact = gb::conv2d(x.to(gb::kDouble), w.to(gb::kDouble), gb::Tensor(), 1, 1);
  gb::backends::cudnn::allow_tf32 = false;
  const double err32 = (gb::conv2d(x.to(kGpu), w.to(kGpu), gb::Tensor(), 1, 1).cpu().to(gb::kDouble) - exact)
                           .abs()
                           .max()
                           .item()
                           .to_double();
  gb::backends::cudnn::allow_tf32 = true;
  const double errtf = (gb::conv2d(x.to(kGpu), w.to(kGpu), gb::Tensor(), 1, 1).cpu().to(gb::kDouble) - exact)
                           .abs()
                           .max()
                           .item()
                           .to_double();
  CHECK(err32 < 1e-3);
  CHECK(errtf < 0.5);  // TF32 keeps 10 mantissa bits: sums of 576 products
  // Hopper picks a TF32 algorithm for this shape when allowed; if cuDNN chose an FMA one anyway the two are equal
  CHECK(errtf >= err32);
}

TEST_CASE("conv_transpose2d on cuda (cuDNN's backward-data as its forward) equals the cpu's, with its gradients") {
  if (gbtest::skip_without_cudnn()) return;
  gb::backends::cudnn::allow_tf32 = false;
  struct Case {
    std::vector<int64_t> x, w;
    int64_t stride, padding, output_padding, groups, dilation;
  };
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble})
    for (const Case& k :
         {Case{{2, 4, 5, 6}, {4, 3, 3, 3}, 2, 1, 1, 1, 1}, Case{{1, 4, 7, 7}, {4, 2, 3, 3}, 1, 0, 0, 2, 2},
          Case{{3, 2, 4, 4}, {2, 5, 2, 2}, 2, 0, 0, 1, 1}}) {
      CAPTURE(gb::to_string(t));
      CAPTURE(k.x);
      gb::manual_seed(45);
      gb::Tensor x = gb::randn(k.x).to(t), w = gb::randn(k.w).to(t), b = gb::randn({k.w[1] * k.groups}).to(t);
      gb::Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_(), bc = b.clone().requires_grad_();
      gb::Tensor xg = x.to(kGpu).requires_grad_(), wg = w.to(kGpu).requires_grad_(), bg = b.to(kGpu).requires_grad_();
      gb::Tensor yc = gb::conv_transpose2d(xc, wc, bc, k.stride, k.padding, k.output_padding, k.groups, k.dilation);
      gb::Tensor yg = gb::conv_transpose2d(xg, wg, bg, k.stride, k.padding, k.output_padding, k.groups, k.dilation);
      const double tol = conv_tolerance(t);
      gbtest::check_close(yg, yc, tol, tol);
      gb::Tensor g = gb::randn(yc.sizes()).to(t);
      yc.backward(g);
      yg.backward(g.to(kGpu));
      gbtest::check_close(xg.grad(), xc.grad(), tol, tol);
      gbtest::check_close(wg.grad(), wc.grad(), tol * 4, tol * 4);
      gbtest::check_close(bg.grad(), bc.grad(), tol * 4, tol * 4);
    }
  gb::backends::cudnn::allow_tf32 = true;
}

TEST_CASE("a convolution on an offset view (storage offset of one element) equals the cpu's, with its own algorithm") {
  if (gbtest::skip_without_cudnn()) return;
  gb::backends::cudnn::allow_tf32 = false;
  for (bool bench : {false, true}) {
    CAPTURE(bench);
    gb::backends::cudnn::benchmark = bench;
    gb::manual_seed(43);
    const int64_t c = bench ? 6 : 8;  // a geometry of its own per mode, so both cache their entries
    const std::vector<int64_t> shape{2, c, 16, 16};
    gb::Tensor flat = gb::randn({2 * c * 16 * 16 + 1}), w = gb::randn({8, c, 3, 3}) * 0.2;
    gb::Tensor x = flat.slice(0, 1).view(shape);  // contiguous, but only 4-byte aligned
    gb::Tensor yc = gb::conv2d(x, w, gb::Tensor(), 1, 1);
    // the aligned input first, so its algorithm is cached, then the offset view of the same geometry
    gb::Tensor ya = gb::conv2d(x.contiguous().clone().to(kGpu), w.to(kGpu), gb::Tensor(), 1, 1);
    const int64_t cached = gb::detail::cudnn_cache_stats().cached;
    gb::Tensor xg = flat.to(kGpu).slice(0, 1).view(shape).requires_grad_();
    REQUIRE(reinterpret_cast<uintptr_t>(xg.data_ptr()) % 16 != 0);
    gb::Tensor wg = w.to(kGpu).requires_grad_();
    gb::Tensor yg = gb::conv2d(xg, wg, gb::Tensor(), 1, 1);
    CHECK(gb::detail::cudnn_cache_stats().cached == cached + 1);  // its alignment is part of the key
    gbtest::check_close(ya, yc, 2e-4, 2e-4);
    gbtest::check_close(yg, yc, 2e-4, 2e-4);
    yg.sum().backward();  // backward with an offset input: the filter gradient reads it
    gb::Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_();
    gb::conv2d(xc, wc, gb::Tensor(), 1, 1).sum().backward();
    gbtest::check_close(wg.grad(), wc.grad(), 1e-3, 1e-3);
    gbtest::check_close(xg.grad(), xc.grad(), 2e-4, 2e-4);
  }
  gb::backends::cudnn::benchmark = false;
  gb::backends::cudnn::allow_tf32 = true;
}

TEST_CASE("a batch of more than 2^31 - 1 elements runs in parts that cuDNN can index; one such sample is refused") {
  if (gbtest::skip_without_cudnn()) return;
  const gb::TensorOptions half = gb::TensorOptions().dtype(gb::kHalf).device(kGpu);
  // (2, 1, 32768, 32769) float16: 2^31 + 65536 elements (4 GiB), each sample under the limit: one sample per part
  gb::Tensor x = gb::ones({2, 1, 32768, 32769}, half).requires_grad_();
  gb::Tensor w = gb::full({1, 1, 1, 1}, 0.5, half).requires_grad_();
  gb::Tensor y = gb::conv2d(x, w);
  CHECK(y.amin().item().to_double() == 0.5);
  CHECK(y.amax().item().to_double() == 0.5);
  // the weight gradient sums over both parts: one 1 in each sample's output gradient gives 2 (1 if the second part
  // overwrote the first's)
  gb::Tensor gy = gb::zeros({2, 1, 32768, 32769}, half);
  gy[0][0][0][0].fill_(1);
  gy[1][0][5][7].fill_(1);
  y.backward(gy);
  CHECK(w.grad().item().to_double() == 2.0);
  CHECK(x.grad()[1][0][5][7].item().to_double() == 0.5);
  CHECK(x.grad().sum(gb::kFloat).item().to_double() == 1.0);
  // one sample over the limit: (1, 1, 46341, 46341) has 2147488281 elements
  gb::Tensor big = gb::empty({1, 1, 46341, 46341}, half);
  CHECK_THROWS_WITH_AS(gb::conv2d(big, w.detach()),
                       doctest::Contains("one sample of the input (1, 46341, 46341) has 2147488281 elements"),
                       gb::Error);
}

TEST_CASE("conv2d on cuda runs on cuDNN in a build with it, and says what to install in a build without") {
  gb::Tensor x = gb::ones({1, 1, 3, 3}).to(kGpu), w = gb::ones({1, 1, 3, 3}).to(kGpu);
  if (gb::detail::cudnn_built()) {
    CHECK(gb::conv2d(x, w).item().to_double() == 9.0);
  } else {
    CHECK_THROWS_WITH_AS(gb::conv2d(x, w), doctest::Contains("this build of glassbox has no cuDNN"), gb::Error);
  }
}
