// tests/engine/nn/upsample_test.cpp — Upsample: F::interpolate as a module (values against hand-computed nearest
// and bilinear results), its printed form, its clone, and F::interpolate's refusals.
#include <sstream>

#include "support/check.h"

using gbtest::check_values;
namespace F = gb::nn::functional;

TEST_CASE("Upsample doubles an image by nearest and by bilinear, as PyTorch computes them") {
  auto x = gb::tensor({1.0, 2.0, 3.0, 4.0}).view({1, 1, 2, 2});
  gb::nn::Upsample nearest(gb::nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}));
  check_values(nearest(x), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  gb::nn::Upsample bilinear(
      gb::nn::UpsampleOptions().size(std::vector<int64_t>{3, 3}).mode(gb::kBilinear).align_corners(true));
  check_values(bilinear(x), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  std::ostringstream os;
  os << *nearest;
  CHECK(os.str() == "Upsample(scale_factor=(2, 2), mode='nearest')");
  auto copy = std::dynamic_pointer_cast<gb::nn::UpsampleImpl>(bilinear->clone());
  REQUIRE(copy != nullptr);
  check_values(copy->forward(x), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
}

TEST_CASE("interpolate refuses what it cannot do, by name") {
  auto x = gb::zeros({1, 1, 2, 2});
  CHECK_THROWS_WITH_AS(F::interpolate(x, F::InterpolateFuncOptions()), doctest::Contains("either size or scale_factor"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(
      F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 4}).align_corners(true)),
      doctest::Contains("align_corners option can only be set with the interpolating modes"), gb::Error);
  CHECK_THROWS_WITH_AS(
      F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 4}).mode(gb::kBicubic)),
      doctest::Contains("mode 'bicubic' is not supported by glassbox"), gb::Error);
  CHECK_THROWS_WITH_AS(
      F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{4}).mode(gb::kLinear)),
      doctest::Contains("mode 'linear' expects 3-D input"), gb::Error);
}
