// tests/engine/ops/dropout_gpu_test.cpp — GPU tier: dropout on cuda (engine/cuda/dropout.cu, the device's Philox
// generator): the kept fraction, the scaling, the mask's dependence on the seed, the call and the element index only,
// its gradient, the in-place and feature variants, and every floating dtype.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("dropout on cuda keeps 1 - p of the elements, scaled by 1 / (1 - p)") {
  gb::manual_seed(91);
  gb::Tensor x = gb::rand({1 << 20}).to(kGpu) + 1;  // every element nonzero
  for (double p : {0.1, 0.5, 0.9}) {
    CAPTURE(p);
    gb::Tensor y = gb::dropout(x, p, true).cpu(), xc = x.cpu();
    gb::Tensor kept = y != 0;
    const double fraction = kept.to(gb::kDouble).mean().item().to_double();
    CHECK(fraction == doctest::Approx(1 - p).epsilon(0.01));
    gbtest::check_close(y.masked_select(kept), (xc / (1 - p)).masked_select(kept), 1e-6, 1e-6);
  }
  CHECK(gb::equal(gb::dropout(x, 0.3, false).cpu(), x.cpu()));  // eval: the input
  CHECK(gb::dropout(x, 1.0, true).cpu().abs().sum().item().to_double() == 0.0);
}

TEST_CASE("the mask is a function of the seed, the call and the element index") {
  gb::Tensor x = gb::ones({1000}).to(kGpu), big = gb::ones({5000}).to(kGpu);
  gb::manual_seed(92);
  gb::Tensor a1 = gb::dropout(x, 0.5, true).cpu(), a2 = gb::dropout(x, 0.5, true).cpu();
  CHECK_FALSE(gb::equal(a1, a2));  // each call draws new numbers
  gb::manual_seed(92);
  CHECK(gb::equal(gb::dropout(x, 0.5, true).cpu(), a1));  // the seed resets the device's generator too
  gb::manual_seed(92);
  CHECK(gb::equal(gb::dropout(big, 0.5, true).cpu().narrow(0, 0, 1000), a1));  // element i: the same number
  gb::cuda::manual_seed_all(92);
  CHECK(gb::equal(gb::dropout(x, 0.5, true).cpu(), a1));
}

TEST_CASE("dropout on cuda: gradient, in place, feature dropout, every floating dtype") {
  gb::manual_seed(93);
  gb::Tensor x = gb::randn({64, 33}).to(kGpu).requires_grad_();
  gb::Tensor y = gb::dropout(x, 0.25, true);
  gb::Tensor g = gb::randn({64, 33}).to(kGpu);
  y.backward(g);
  gb::Tensor kept = (y.detach() != 0).to(gb::kFloat);
  gbtest::check_close(x.grad(), g * kept / 0.75, 1e-6, 1e-6);
  CHECK(y.grad_fn()->name() == "NativeDropoutBackward0");
  gb::Tensor z = gb::randn({8, 9}).to(kGpu).t();  // not contiguous
  gb::Tensor before = z.clone();
  gb::dropout_(z, 0.5, true);
  gb::Tensor zc = z.cpu(), bc = before.cpu();
  CHECK(gb::equal(zc.masked_select(zc != 0), (bc * 2).masked_select(zc != 0)));
  gb::Tensor f = gb::feature_dropout(gb::ones({4, 6, 5, 5}).to(kGpu), 0.5, true).cpu();
  CHECK(gb::equal(f.amax({2, 3}), f.amin({2, 3})));  // whole channels kept or dropped
  for (gb::ScalarType t : {gb::kDouble, gb::kHalf, gb::kBFloat16}) {
    CAPTURE(gb::to_string(t));
    gb::Tensor v = gb::dropout(gb::ones({4096}, t).to(kGpu), 0.5, true).cpu();
    CHECK(v.scalar_type() == t);
    CHECK(gb::equal(v.masked_select(v != 0), gb::full({v.ne(0).sum().item().toLong()}, 2.0, t)));
  }
}
