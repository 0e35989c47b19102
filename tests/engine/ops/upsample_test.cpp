// tests/engine/ops/upsample_test.cpp — gb::upsample: nearest picks floor(dst * in / out), linear blends the two
// neighbours (align_corners both ways), the requested scale is used for the source coordinate, gradients by
// gradcheck. (Every mode against libtorch: tests/oracle/ops_oracle_test.cpp.)
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("nearest and linear along one dim, with and without align_corners and a requested scale") {
  auto x = gb::tensor({0.0, 10.0, 20.0}).view({1, 1, 3});
  check_values(gb::upsample(x, {6}, "nearest"), {0, 0, 10, 10, 20, 20});
  check_values(gb::upsample(x, {2}, "nearest"), {0, 10});                     // floor(i * 1.5)
  check_values(gb::upsample(x, {5}, "linear", /*align_corners=*/true), {0, 5, 10, 15, 20});
  check_values(gb::upsample(x, {6}, "linear"), {0, 2.5, 7.5, 12.5, 17.5, 20});  // (i + 0.5) / 2 - 0.5, clamped
  // scale_factor 2.5 asked for 7 outputs from 3: the source uses 1 / 2.5, not 3 / 7
  check_values(gb::upsample(x, {7}, "nearest", false, {2.5}), {0, 0, 0, 10, 10, 20, 20});
}

TEST_CASE("upsample is differentiable (gradcheck), bilinear and nearest") {
  gb::manual_seed(3);
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::upsample(v[0], {5, 3}, "bilinear"); },
                           {gb::randn({1, 2, 3, 2}, gbtest::f64_grad())}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::upsample(v[0], {4, 4}, "nearest"); },
                           {gb::randn({1, 1, 2, 3}, gbtest::f64_grad())}));
}
