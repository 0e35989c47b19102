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

TEST_CASE("normal, bernoulli and multinomial: shapes, dtypes, the seed, and their statistics") {
  gb::manual_seed(21);
  auto n = gb::normal(2.0, 0.5, {20000});
  CHECK(n.scalar_type() == gb::kFloat);
  CHECK(n.mean().item<double>() == doctest::Approx(2.0).epsilon(0.01));
  CHECK(n.std().item<double>() == doctest::Approx(0.5).epsilon(0.02));
  auto p = gb::full({4, 5000}, 0.3, gb::kDouble);
  auto b = gb::bernoulli(p);
  CHECK(b.scalar_type() == gb::kDouble);
  CHECK(b.sizes() == p.sizes());
  CHECK(b.mean().item<double>() == doctest::Approx(0.3).epsilon(0.03));
  CHECK(gb::equal(b * b, b));  // zeros and ones only
  CHECK(gb::bernoulli(gb::zeros({3}), 1.0).sum().item<float>() == 3.0f);
  CHECK_THROWS_WITH_AS(gb::bernoulli(gb::full({2}, 1.5)), doctest::Contains("probabilities in [0, 1]"), gb::Error);

  auto w = gb::tensor({0.0, 1.0, 3.0});  // category 2 three times as likely as 1, category 0 never
  auto s = w.multinomial(30000, /*replacement=*/true);
  CHECK(s.scalar_type() == gb::kInt64);
  CHECK(s.sizes() == gb::IntArrayRef({30000}));
  CHECK((s == 0).sum().item<int64_t>() == 0);
  double ratio = double((s == 2).sum().item<int64_t>()) / double((s == 1).sum().item<int64_t>());
  CHECK(ratio == doctest::Approx(3.0).epsilon(0.05));
  auto rows = gb::tensor({{1.0, 1.0, 1.0, 1.0}, {0.0, 0.0, 5.0, 1.0}});
  auto perm = rows.multinomial(2);  // without replacement: distinct categories, never a zero weight
  CHECK(perm.sizes() == gb::IntArrayRef({2, 2}));
  CHECK(perm[0][0].item<int64_t>() != perm[0][1].item<int64_t>());
  CHECK((perm[1] >= 2).all().item<bool>());
  gb::manual_seed(5);
  auto again1 = w.multinomial(10, true);
  gb::manual_seed(5);
  CHECK(gb::equal(w.multinomial(10, true), again1));  // the seed fixes the draws
  CHECK_THROWS_WITH_AS(rows.multinomial(3), doctest::Contains("not enough non-negative category"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::tensor({1.0, -1.0}).multinomial(1), doctest::Contains("element < 0"), gb::Error);
  CHECK_THROWS_WITH_AS(w.multinomial(4), doctest::Contains("cannot sample n_sample > prob_dist.size(-1)"), gb::Error);
}
