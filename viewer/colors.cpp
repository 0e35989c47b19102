// viewer/colors.cpp — the viridis map (colors.h): matplotlib's viridis at 9 stops, linearly interpolated.
#include "viewer/colors.h"

#include <algorithm>
#include <cmath>

namespace gb::viewer::color {

Rgb viridis(double t) {
  static constexpr Rgb kStops[] = {0x440154, 0x472D7B, 0x3B528B, 0x2C728E, 0x21918C,
                                   0x28AE80, 0x5EC962, 0xADDC30, 0xFDE725};
  if (!(t >= 0)) t = 0;  // NaN too
  t = std::min(t, 1.0) * 8.0;
  const int i = std::min(7, static_cast<int>(t));
  const double f = t - i;
  auto mix = [&](int shift) {
    const double a = (kStops[i] >> shift) & 0xFF, b = (kStops[i + 1] >> shift) & 0xFF;
    return static_cast<Rgb>(std::lround(a + (b - a) * f)) << shift;
  };
  return mix(16) | mix(8) | mix(0);
}

}  // namespace gb::viewer::color
