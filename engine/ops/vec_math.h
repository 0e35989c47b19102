// engine/ops/vec_math.h — loops the compiler vectorizes: exp and max/min of a run (internal; softmax, reductions).
//
// std::exp is a library call, so a loop over it stays scalar. exp_vec is branch-free float arithmetic (Cephes'
// expf: round x / ln 2 to n, a degree-6 polynomial on the remainder, 2^n through the exponent bits), within
// 2 ulp of std::exp where the result is a normal float (subnormal results are rounded products, 0 below -104),
// +inf above 88.72 and NaN for NaN. Doubles keep std::exp. GCC vectorizes loops over it only under
// -fno-trapping-math, which softmax.cpp and reduce.cpp switch on for themselves.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace gb::detail {

__attribute__((always_inline)) inline float exp_vec(float x) {
  const float lo = -104.0f, hi = 88.72283f;
  // NaN compares false both ways: it takes the lo branch (a NaN n would make the int conversion below undefined)
  // and is returned as itself at the end
  float xc = x >= lo ? (x > hi ? hi : x) : lo;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  float n = (xc * 1.44269504088896341f + shifter) - shifter;
  float r = xc - n * 0.693359375f - n * -2.12194440e-4f;
  float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  // 2^n in two halves, so that n from -150 to 128 never leaves the normal exponent range
  int32_t n1 = int32_t(n) >> 1, n2 = int32_t(n) - n1;
  int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  float y = p * s1 * s2;
  y = x < lo ? 0.0f : y;
  y = x > hi ? INFINITY : y;
  return x != x ? x : y;  // NaN in, NaN out
}

__attribute__((always_inline)) inline double exp_vec(double x) { return std::exp(x); }

// The max (kMax) or min of p[0..n) for float or double, NaN propagating. GCC does not vectorize a select-based
// max over lanes by itself, so this spells out two 16-byte vectors (GCC/clang vector extensions).
template <typename T, bool kMax>
__attribute__((always_inline)) inline T extreme_vec(const T* p, int64_t n) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr int W = 16 / sizeof(T);
  typedef T V __attribute__((vector_size(16)));
  const T init = kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  V a0, a1;
  for (int k = 0; k < W; ++k) a0[k] = a1[k] = init;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    V x0, x1;
    std::memcpy(&x0, p + i, sizeof x0);
    std::memcpy(&x1, p + i + W, sizeof x1);
    a0 = ((x0 != x0) | (kMax ? x0 > a0 : x0 < a0)) ? x0 : a0;
    a1 = ((x1 != x1) | (kMax ? x1 > a1 : x1 < a1)) ? x1 : a1;
  }
  T a = init;
  auto step = [&a](T x) { a = ((x != x) | (kMax ? x > a : x < a)) ? x : a; };
  for (int k = 0; k < W; ++k) step(a0[k]), step(a1[k]);
  for (; i < n; ++i) step(p[i]);
  return a;
}

}  // namespace gb::detail
