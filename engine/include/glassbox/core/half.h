// glassbox/core/half.h — the 16-bit float storage types: Half (IEEE binary16) and BFloat16.
//
// Both are storage formats only: arithmetic converts to float ("opmath", as PyTorch's CPU kernels do), and
// conversion back rounds to nearest even. NaN and Inf survive both ways.
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>

namespace gb {

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace detail

struct Half {
  uint16_t x = 0;

  Half() = default;
  Half(float f) : x(from_float(f)) {}  // NOLINT: implicit, like c10::Half
  operator float() const { return to_float(x); }  // NOLINT

  static uint16_t from_float(float f) {
    uint32_t u = detail::float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));  // Inf/NaN
    if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: overflow to Inf
    if (abs < 0x38800000u) {  // subnormal half (or zero): add magic to round at the right bit
      float a = detail::bits_float(abs) + 0.5f;
      return uint16_t(sign | (detail::float_bits(a) - 0x3f000000u));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return uint16_t(sign | (abs >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
      float f = float(mant) * 5.9604644775390625e-08f;  // 2^-24
      return sign ? -f : f;
    }
    if (exp == 31) return detail::bits_float(sign | 0x7f800000u | (mant << 13));
    return detail::bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

struct BFloat16 {
  uint16_t x = 0;

  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}  // NOLINT
  operator float() const { return detail::bits_float(uint32_t(x) << 16); }  // NOLINT

  static uint16_t from_float(float f) {
    uint32_t u = detail::float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return uint16_t(u >> 16);
  }
};

inline std::ostream& operator<<(std::ostream& os, Half h) { return os << float(h); }
inline std::ostream& operator<<(std::ostream& os, BFloat16 h) { return os << float(h); }

}  // namespace gb
