// tests/engine/nn/clip_grad_test.cpp — clip_grad_norm_ (2, 1, inf norms by hand, no-op below max_norm, skipped
// parameters, PyTorch's non-finite error) and clip_grad_value_.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <glassbox/glassbox.h>

#include "support/check.h"

namespace U = gb::nn::utils;

namespace {
// Two parameters with gradients [3, 4] and [12] (2-norm 13, 1-norm 19, inf-norm 12) and one without a gradient.
std::vector<gb::Tensor> params() {
  auto a = gb::zeros({2}, gb::TensorOptions().dtype(gb::kFloat64)).requires_grad_();
  auto b = gb::zeros({1}, gb::TensorOptions().dtype(gb::kFloat64)).requires_grad_();
  auto c = gb::zeros({1}, gb::TensorOptions().dtype(gb::kFloat64)).requires_grad_();
  a.set_grad(gb::tensor(std::vector<double>{3, 4}).to(gb::kFloat64));
  b.set_grad(gb::tensor(std::vector<double>{12}).to(gb::kFloat64));
  return {a, b, c};
}
}  // namespace

TEST_CASE("clip_grad_norm_ scales by max_norm / (total + 1e-6) and returns the norm before clipping") {
  auto ps = params();
  gb::Tensor total = U::clip_grad_norm_(ps, 6.5);
  CHECK(total.item<double>() == 13);
  const double coef = 6.5 / (13 + 1e-6);
  gbtest::expect(ps[0].grad(), {3 * coef, 4 * coef}, 1e-15, 0);
  gbtest::expect(ps[1].grad(), {12 * coef}, 1e-15, 0);
  CHECK(!ps[2].grad().defined());

  auto big = params();
  CHECK(U::clip_grad_norm_(big, 100.0).item<double>() == 13);  // coefficient clamped to 1: unchanged
  gbtest::expect(big[0].grad(), {3, 4}, 0, 0);
}

TEST_CASE("1-norm and inf-norm") {
  auto ps = params();
  CHECK(U::clip_grad_norm_(ps, 1.0, 1.0).item<double>() == doctest::Approx(19).epsilon(1e-15));
  gbtest::expect(ps[1].grad(), {12 / (19 + 1e-6)}, 1e-14, 0);
  auto qs = params();
  CHECK(U::clip_grad_norm_(qs, 6.0, std::numeric_limits<double>::infinity()).item<double>() == 12);
  gbtest::expect(qs[0].grad(), {3 * 6 / (12 + 1e-6), 4 * 6 / (12 + 1e-6)}, 1e-14, 0);
  auto single = params()[1];
  CHECK(U::clip_grad_norm_(single, 1.0).item<double>() == 12);
  CHECK(U::clip_grad_norm_(std::vector<gb::Tensor>{}, 1.0).item<double>() == 0);
}

TEST_CASE("a non-finite norm: PyTorch's error with error_if_nonfinite, else the gradients are scaled by it") {
  auto ps = params();
  ps[1].mutable_grad().fill_(std::numeric_limits<double>::infinity());
  try {
    U::clip_grad_norm_(ps, 1.0, 2.0, /*error_if_nonfinite=*/true);
    FAIL("no error");
  } catch (const gb::Error& e) {
    CHECK(std::string(e.what()) ==
          "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To "
          "disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  }
  gbtest::expect(ps[0].grad(), {3, 4}, 0, 0);  // untouched by the failed call
  try {
    U::clip_grad_norm_(ps, 1.0, std::numeric_limits<double>::infinity(), true);
    FAIL("no error");
  } catch (const gb::Error& e) {
    CHECK(std::string(e.what()).find("The total norm of order inf for gradients") == 0);
  }
  CHECK(std::isinf(U::clip_grad_norm_(ps, 1.0).item<double>()));
  gbtest::expect(ps[0].grad(), {0, 0}, 0, 0);  // scaled by 1 / inf
}

TEST_CASE("clip_grad_value_ clamps each gradient element") {
  auto ps = params();
  U::clip_grad_value_(ps, 3.5);
  gbtest::expect(ps[0].grad(), {3, 3.5}, 0, 0);
  gbtest::expect(ps[1].grad(), {3.5}, 0, 0);
  auto single = params()[0];
  U::clip_grad_value_(single, 1);
  gbtest::expect(single.grad(), {1, 1}, 0, 0);
}
