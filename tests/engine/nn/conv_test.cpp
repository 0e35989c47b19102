// tests/engine/nn/conv_test.cpp — Conv2d: shapes, default init, options, errors, values by hand, repr.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/repr.h"
#include "support/module_scope.h"

using gbtest::repr;

TEST_CASE("Conv2d: weight shape, default init bound 1/sqrt(C/groups*kH*kW), output shapes") {
  gb::manual_seed(5);
  gb::nn::Conv2d conv(gb::nn::Conv2dOptions(16, 64, 3).stride(2).padding(1));
  CHECK(conv->weight.sizes() == gb::IntArrayRef({64, 16, 3, 3}));
  const double bound = 1.0 / std::sqrt(16.0 * 9);
  auto w = gbtest::values(conv->weight);
  double s2 = 0, hi = 0;
  for (double x : w) s2 += x * x, hi = std::max(hi, std::fabs(x));
  CHECK(hi <= bound);
  CHECK(std::sqrt(s2 / double(w.size())) == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.03));
  for (double x : gbtest::values(conv->bias)) CHECK(std::fabs(x) <= bound);
  CHECK(conv(gb::randn({2, 16, 9, 9})).sizes() == gb::IntArrayRef({2, 64, 5, 5}));
  CHECK(conv(gb::randn({16, 8, 8})).sizes() == gb::IntArrayRef({64, 4, 4}));  // unbatched

  gb::nn::Conv2d grouped(gb::nn::Conv2dOptions(4, 6, {3, 1}).groups(2).dilation({2, 1}).bias(false));
  CHECK(grouped->weight.sizes() == gb::IntArrayRef({6, 2, 3, 1}));
  CHECK(grouped->named_parameters().keys() == std::vector<std::string>{"weight"});
  CHECK(grouped(gb::randn({1, 4, 7, 5})).sizes() == gb::IntArrayRef({1, 6, 3, 5}));
}

TEST_CASE("Conv2d computes a cross-correlation (values by hand)") {
  gb::nn::Conv2d conv(gb::nn::Conv2dOptions(1, 1, 2));
  {
    gb::NoGradGuard g;
    conv->weight.copy_(gb::tensor({1.0, 0.0, 0.0, -1.0}).view({1, 1, 2, 2}));
    conv->bias.fill_(10);
  }
  gb::Tensor x = gb::arange(9, gb::kFloat).view({1, 1, 3, 3});  // 0..8
  // each output = x[i][j] - x[i+1][j+1] + 10 = -4 + 10
  gbtest::expect(conv(x), {6, 6, 6, 6});
}

TEST_CASE("Conv2d errors: groups must divide channels, zeros padding only, 3D/4D input") {
  CHECK_THROWS_WITH_AS(gb::nn::Conv2d(gb::nn::Conv2dOptions(3, 6, 3).groups(2)),
                       doctest::Contains("in_channels must be divisible by groups"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::nn::Conv2d(gb::nn::Conv2dOptions(4, 5, 3).groups(2)),
                       doctest::Contains("out_channels must be divisible by groups"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::nn::Conv2d(gb::nn::Conv2dOptions(3, 6, 3).padding_mode(gb::kReflect)),
                       doctest::Contains("padding_mode 'reflect' is not supported"), gb::Error);
  gb::nn::Conv2d conv(3, 4, 3);
  CHECK_THROWS_WITH_AS(
      conv(gb::randn({2, 3})),
      doctest::Contains("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]"),
      gb::Error);
}

TEST_CASE("Conv2d prints libtorch's repr") {
  CHECK(repr(*gb::nn::Conv2d(gb::nn::Conv2dOptions(3, 16, 3).stride(2))) ==
        "Conv2d(3, 16, kernel_size=[3, 3], stride=[2, 2])");
  CHECK(repr(*gb::nn::Conv2d(gb::nn::Conv2dOptions(4, 8, {3, 5}).padding(1).dilation(2).groups(4).bias(false))) ==
        "Conv2d(4, 8, kernel_size=[3, 5], stride=[1, 1], padding=[1, 1], dilation=[2, 2], groups=4, bias=false)");
}

TEST_CASE("Conv2d's raw forward attributes its allocations to the module") {
  gb::nn::Conv2d conv(2, 3, 3);
  gb::Tensor x = gb::randn({1, 2, 5, 5});
  CHECK(gbtest::allocation_modules([&] { conv->forward(x); }) == std::set<std::string>{"Conv2d"});
}

TEST_CASE("ConvTranspose2d: weight (C_in, C_out/groups, kH, kW), doubling upsampler, output_size, repr, errors") {
  gb::manual_seed(1);
  gb::nn::ConvTranspose2d up(gb::nn::ConvTranspose2dOptions(8, 4, 4).stride(2).padding(1));
  CHECK(up->weight.sizes() == gb::IntArrayRef({8, 4, 4, 4}));
  CHECK(up->bias.sizes() == gb::IntArrayRef({4}));
  const double bound = 1.0 / std::sqrt(4.0 * 16);  // fan_in = weight.size(1) * kH * kW, as PyTorch computes it
  CHECK(up->bias.abs().max().item<double>() <= bound);
  gb::Tensor x = gb::randn({2, 8, 5, 7});
  CHECK(up(x).sizes() == gb::IntArrayRef({2, 4, 10, 14}));
  gb::nn::ConvTranspose2d odd(gb::nn::ConvTranspose2dOptions(8, 4, 3).stride(2).padding(1));
  CHECK(odd(x).sizes() == gb::IntArrayRef({2, 4, 9, 13}));
  CHECK(odd->forward(x, gb::IntArrayRef({10, 14})).sizes() == gb::IntArrayRef({2, 4, 10, 14}));
  CHECK_THROWS_WITH(odd->forward(x, gb::IntArrayRef({12, 14})),
                    doctest::Contains("requested an output size of [12, 14], but valid sizes range from 9 to 10"));
  CHECK(up(x[0]).sizes() == gb::IntArrayRef({4, 10, 14}));  // unbatched
  std::ostringstream os;
  os << *odd;
  CHECK(os.str() == "ConvTranspose2d(8, 4, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])");
  CHECK_THROWS_WITH(gb::nn::ConvTranspose2d(gb::nn::ConvTranspose2dOptions(3, 4, 3).groups(2)),
                    doctest::Contains("in_channels must be divisible by groups"));
}

TEST_CASE("Conv1d: weight (C_out, C_in/groups, k), values by hand, unbatched, output lengths") {
  gb::nn::Conv1d conv(gb::nn::Conv1dOptions(1, 1, 2).bias(false));
  CHECK(conv->weight.sizes() == gb::IntArrayRef({1, 1, 2}));
  {
    gb::NoGradGuard ng;
    conv->weight.copy_(gb::tensor({1.0f, -1.0f}).view({1, 1, 2}));
  }
  gbtest::check_values(conv(gb::tensor({1.0f, 4.0f, 9.0f, 16.0f}).view({1, 1, 4})), {-3, -5, -7});
  gbtest::check_values(conv(gb::tensor({1.0f, 4.0f, 9.0f}).view({1, 3})), {-3, -5});  // unbatched
  gb::nn::Conv1d strided(gb::nn::Conv1dOptions(4, 6, 3).stride(2).padding(1).groups(2));
  CHECK(strided(gb::randn({2, 4, 11})).sizes() == gb::IntArrayRef({2, 6, 6}));
  std::ostringstream os;
  os << *strided;
  CHECK(os.str() == "Conv1d(4, 6, kernel_size=[3], stride=[2], padding=[1], groups=2)");
  CHECK_THROWS_WITH(strided(gb::randn({2, 4, 1, 11})), doctest::Contains("Expected 2D (unbatched) or 3D (batched) input to conv1d"));
}
