// tests/engine/ops/random_test.cpp — in-place random fills: determinism under manual_seed and statistics.
#include "support/check.h"

TEST_CASE("uniform_, normal_ and bernoulli_") {
  gb::manual_seed(1);
  auto a = gb::empty({5000}).uniform_(-2, 2);
  auto v = gbtest::values(a);
  double lo = 1e9, hi = -1e9;
  for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x);
  CHECK(lo >= -2);
  CHECK(hi < 2);
  auto n = gb::empty({5000}, gb::kFloat64).normal_(3, 0.5);
  CHECK(n.mean().item<double>() == doctest::Approx(3).epsilon(0.02));
  CHECK(n.std().item<double>() == doctest::Approx(0.5).epsilon(0.05));
  auto b = gb::empty({5000}).bernoulli_(0.3);
  CHECK(b.mean().item<double>() == doctest::Approx(0.3).epsilon(0.1));
  gb::manual_seed(9);
  auto x1 = gbtest::values(gb::empty({8}).normal_());
  gb::manual_seed(9);
  auto x2 = gbtest::values(gb::empty({8}).normal_());
  CHECK(x1 == x2);
  CHECK_THROWS_WITH_AS(gb::empty({2}).bernoulli_(1.5), doctest::Contains("expects p to be in [0, 1]"), gb::Error);
  auto w = gb::empty({2}, gb::requires_grad());
  CHECK_THROWS_WITH_AS(w.normal_(), doctest::Contains("a leaf Variable that requires grad"), gb::Error);
}
