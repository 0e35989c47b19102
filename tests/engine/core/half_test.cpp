// tests/engine/core/half_test.cpp — float16 and bfloat16 conversions (glassbox/core/half.h): rounding, subnormals,
// overflow, NaN.
#include <cmath>
#include <limits>

#include "support/check.h"

TEST_CASE("Half rounds to nearest even and handles the edges") {
  CHECK(float(gb::Half(1.0f)) == 1.0f);
  CHECK(float(gb::Half(0.1f)) == doctest::Approx(0.0999755859375));
  CHECK(gb::Half(1.0f).x == 0x3c00);
  CHECK(gb::Half(-2.0f).x == 0xc000);
  CHECK(gb::Half(65504.0f).x == 0x7bff);               // max finite
  CHECK(std::isinf(float(gb::Half(65520.0f))));          // rounds up to inf
  CHECK(gb::Half(5.960464477539063e-08f).x == 0x0001);   // smallest subnormal
  CHECK(float(gb::Half(gb::Half::to_float(0x0001))) == 5.960464477539063e-08f);
  CHECK(std::isnan(float(gb::Half(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(gb::Half(1.0f + 1.0f / 2048).x == 0x3c00);  // halfway between 1 and next: ties to even
  CHECK(gb::Half(1.0f + 3.0f / 2048).x == 0x3c02);
  for (int bits = 0; bits < 0x7c00; bits += 37) {  // every finite half round-trips
    float f = gb::Half::to_float(uint16_t(bits));
    CHECK(gb::Half(f).x == bits);
  }
}

TEST_CASE("BFloat16 keeps float's range with 8 bits of mantissa") {
  CHECK(float(gb::BFloat16(1.0f)) == 1.0f);
  CHECK(gb::BFloat16(1.0f).x == 0x3f80);
  CHECK(float(gb::BFloat16(3.0e38f)) == doctest::Approx(3.0e38).epsilon(0.01));
  CHECK(float(gb::BFloat16(1.00390625f)) == 1.0f);  // tie rounds to even
  CHECK(std::isnan(float(gb::BFloat16(std::numeric_limits<float>::quiet_NaN()))));
}
