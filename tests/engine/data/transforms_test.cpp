// tests/engine/data/transforms_test.cpp — engine/data/transforms.cpp: values, shapes, and seeded randomness.
#include <doctest/doctest.h>

#include <set>

#include "data_test_util.h"

namespace T = gb::data::transforms;

TEST_CASE("ToTensor makes (C,H,W) floats in [0,1]; Normalize per channel") {
  gb::data::Image img{.height = 1, .width = 2, .channels = 2, .pixels = {0, 255, 51, 102}};
  gb::Tensor x = T::ToTensor()(img);
  CHECK(x.sizes() == gb::IntArrayRef({2, 1, 2}));
  CHECK(x.sub(gb::tensor({0.0f, 0.2f, 1.0f, 0.4f}).view({2, 1, 2})).abs().max().item<float>() < 1e-7f);
  gb::Tensor n = T::Normalize({0.5, 0.0}, {0.5, 2.0})(x);
  CHECK(n[0][0][0].item<float>() == -1.0f);
  CHECK(n[1][0][1].item<float>() == doctest::Approx(0.2f));
  CHECK_THROWS_WITH(T::Normalize({0.5}, {0.0}), "Normalize: std evaluated to zero, leading to division by zero.");
  CHECK_THROWS_WITH(T::Normalize({1, 2, 3}, {1, 2, 3})(x), gbtest::contains("3 means for 2 channels"));
}

TEST_CASE("RandomCrop with padding and RandomHorizontalFlip draw from the sample generator") {
  gb::Tensor x = gb::arange(16, gb::TensorOptions().dtype(gb::kFloat)).view({1, 4, 4});
  gb::Tensor same = T::RandomCrop(4)(x);
  CHECK(gbtest::bytes(same) == gbtest::bytes(x));  // no padding, same size: the only window
  T::Compose aug({T::RandomCrop(4, 2), T::RandomHorizontalFlip(0.5)});
  std::set<std::vector<unsigned char>> outcomes;
  for (int64_t pos = 0; pos < 40; ++pos) {
    gb::data::detail::SampleScope scope(99, pos);
    gb::Tensor a = aug(x);
    CHECK(a.sizes() == gb::IntArrayRef({1, 4, 4}));
    outcomes.insert(gbtest::bytes(a));
    gb::data::detail::SampleScope again(99, pos);  // the same (seed, position): the same augmentation
    CHECK(gbtest::bytes(aug(x)) == gbtest::bytes(a));
  }
  CHECK(outcomes.size() > 20);  // 25 windows x 2 flips
  gb::Tensor flipped = T::RandomHorizontalFlip(1.0)(x);
  CHECK(flipped[0][0][0].item<float>() == 3.0f);
  CHECK(gbtest::bytes(T::RandomHorizontalFlip(0.0)(x)) == gbtest::bytes(x));
  CHECK_THROWS_WITH(T::RandomCrop(9, 2)(x), gbtest::contains("required crop size (9, 9) is larger than the padded "
                                                             "input image size (8, 8)"));
  CHECK_THROWS_WITH(T::RandomCrop(2)(gb::zeros({4, 4})), gbtest::contains("expected a (C,H,W) float32 tensor"));
}
