// tests/engine/nn/pooling_test.cpp — the pooling layers: values by hand, 1-D as the 2-D op on a (1, L) image, shapes,
// gradients, printing and errors.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"

namespace nn = gb::nn;

TEST_CASE("MaxPool2d, AvgPool2d, AdaptiveAvgPool2d: values by hand and shapes") {
  gb::Tensor x = gb::arange(16, gb::kDouble).view({1, 1, 4, 4});
  nn::MaxPool2d max(nn::MaxPool2dOptions(2));
  gbtest::check_values(max(x), {5, 7, 13, 15});
  nn::AvgPool2d avg(nn::AvgPool2dOptions(2).stride(1));
  CHECK(avg(x).sizes() == gb::IntArrayRef({1, 1, 3, 3}));
  CHECK(avg(x)[0][0][0][0].item<double>() == doctest::Approx((0 + 1 + 4 + 5) / 4.0));
  nn::AdaptiveAvgPool2d gap(1);
  gbtest::check_values(gap(x), {7.5});
  CHECK(gap(gb::randn({2, 3, 5, 7})).sizes() == gb::IntArrayRef({2, 3, 1, 1}));
  std::ostringstream os;
  os << *max;
  CHECK(os.str() == "MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=false)");
}

TEST_CASE("MaxPool1d, AvgPool1d, AdaptiveAvgPool1d on (N, C, L) and (C, L), with gradients") {
  gb::Tensor x = gb::tensor({1.0, 5.0, 2.0, 8.0, 3.0, 4.0, 0.0}, gb::kDouble).view({1, 1, 7});
  nn::MaxPool1d max(nn::MaxPool1dOptions(3).stride(2));
  gbtest::check_values(max(x), {5, 8, 4});
  gbtest::check_values(max(x[0]), {5, 8, 4});  // unbatched (C, L)
  nn::AvgPool1d avg(nn::AvgPool1dOptions(2));
  gbtest::check_values(avg(x), {3, 5, 3.5});
  nn::AdaptiveAvgPool1d ada(nn::AdaptiveAvgPool1dOptions(2));
  CHECK(ada(gb::randn({2, 3, 9})).sizes() == gb::IntArrayRef({2, 3, 2}));
  gb::Tensor xg = x.clone().requires_grad_();
  max(xg).sum().backward();
  gbtest::check_values(xg.grad(), {0, 1, 0, 1, 0, 1, 0});
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return avg(v[0]); },
                           {gb::randn({2, 3, 6}, gbtest::f64_grad())}));
  CHECK_THROWS_WITH(max(gb::randn({7})), doctest::Contains("MaxPool1d: Expected 2D (C, L) or 3D (N, C, L) input"));
}
