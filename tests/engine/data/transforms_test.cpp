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

TEST_CASE("decode_image refuses 16-bit PGM/PPM, whose stb_image path overruns its buffer on a damaged file") {
  // found by fuzz/image_fuzz.cpp: a P5 header with maxval 325 and too few bytes (a heap overflow inside stb_image)
  const std::string crash =
      "P5\x0b"
      "45\x0b"
      "4 325\n255\n@@@@@@@@@@@@ 3\n255\n@@@@@@@@@@@@";
  const std::vector<uint8_t> bytes(crash.begin(), crash.end());
  CHECK_THROWS_WITH(gb::data::decode_image(bytes, "crash.pgm", 1),
                    doctest::Contains("crash.pgm: 16-bit PGM/PPM images are not supported"));
  // also found by it: a maximum value of 26 digits (an int overflow inside stb_image), a 8888888x4 header over 40
  // bytes (stb_image allocates what the header says)
  const std::string digits =
      "P5\x0b"
      "45\n\x0b"
      "3\t\t\t44444444444444444444444444\t\t";
  CHECK_THROWS_WITH(gb::data::decode_image(std::vector<uint8_t>(digits.begin(), digits.end()), "d.pgm", 1),
                    doctest::Contains("d.pgm: its PGM/PPM header is damaged (the maximum value is not a number"));
  const std::string big = std::string("P5 8888888 4 255\n") + std::string(22, '@');
  CHECK_THROWS_WITH(gb::data::decode_image(std::vector<uint8_t>(big.begin(), big.end()), "b.pgm", 1),
                    doctest::Contains("b.pgm: its PGM/PPM header declares 8888888x4 pixels (35555552 bytes) but the "
                                      "file holds 22 after it"));
  const std::string good8 = "P5\n2 1\n255\n\x10\x20";  // an 8-bit PGM still decodes
  const gb::data::Image img = gb::data::decode_image(std::vector<uint8_t>(good8.begin(), good8.end()), "ok.pgm", 1);
  CHECK(img.pixels == std::vector<uint8_t>{0x10, 0x20});
}
