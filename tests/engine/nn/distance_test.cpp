// tests/engine/nn/distance_test.cpp — CosineSimilarity: values by hand along a dim, broadcasting, the eps floor,
// the functional form, repr, its gradient against finite differences.
#include <doctest/doctest.h>

#include <cmath>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/repr.h"

TEST_CASE("CosineSimilarity: by hand along a dim, broadcast, eps, functional, repr, gradient") {
  gb::Tensor a = gb::tensor({1.0, 0.0, 3.0, 4.0}).view({2, 2});
  gb::Tensor b = gb::tensor({1.0, 1.0}).view({1, 2});
  gb::nn::CosineSimilarity cos;
  gbtest::check_values(cos(a, b), {1 / std::sqrt(2.0), 7 / (5 * std::sqrt(2.0))});
  gbtest::check_values(gb::nn::CosineSimilarity(gb::nn::CosineSimilarityOptions().dim(0))(a, a), {1.0, 1.0});
  namespace F = gb::nn::functional;
  gbtest::check_values(F::cosine_similarity(a, b, F::CosineSimilarityFuncOptions().dim(-1)),
                       {1 / std::sqrt(2.0), 7 / (5 * std::sqrt(2.0))});
  // a zero vector: the product of norms is floored at eps^2, so the similarity is 0, not NaN
  gbtest::check_values(gb::cosine_similarity(gb::zeros({1, 2}), b), {0.0});
  CHECK(gbtest::repr(*cos) == "CosineSimilarity(dim=1, eps=1e-08)");
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::cosine_similarity(v[0], v[1], 1); },
                           {gb::randn({3, 4}, gbtest::f64_grad()), gb::randn({3, 4}, gbtest::f64_grad())}));
}
