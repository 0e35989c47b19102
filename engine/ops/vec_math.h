// engine/ops/vec_math.h — loops the compiler vectorizes: exp and max/min of a run (internal; softmax, reductions).
//
// std::exp is a library call, so a loop over it stays scalar. exp_vec is branch-free float arithmetic (Cephes'
// expf: round x / ln 2 to n, a degree-6 polynomial on the remainder, 2^n through the exponent bits), within
// 2 ulp of std::exp where the result is a normal float (subnormal results are rounded products, 0 below -104),
// +inf above 88.72 and NaN for NaN. Doubles keep std::exp. GCC vectorizes loops over it only under
// -fno-trapping-math, which softmax.cpp and reduce.cpp switch on for themselves.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/cpu_isa.h"

namespace gb::detail {

// The shared core of exp_vec: n = xc / ln 2 rounded to an integer and the degree-6 polynomial p of the remainder, so
// that exp(xc) = p * 2^n. One body for a float and for native vectors (exp_native below): the same operations in the
// same order, so the same bits.
template <typename V>
__attribute__((always_inline)) inline void exp_core(const V& xc, V& n, V& p) {
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  n = (xc * 1.44269504088896341f + shifter) - shifter;
  const V r = xc - n * 0.693359375f - n * -2.12194440e-4f;
  const V z = r * r;
  p = V{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
}

__attribute__((always_inline)) inline float exp_vec(float x) {
  const float lo = -104.0f, hi = 88.72283f;
  // NaN compares false both ways: it takes the lo branch (a NaN n would make the int conversion below undefined)
  // and is returned as itself at the end
  float xc = x >= lo ? (x > hi ? hi : x) : lo;
  float n, p;
  exp_core(xc, n, p);
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

// 16 floats in one 64-byte vector (GCC/clang vector extensions): one zmm register under AVX-512, two ymm under AVX2,
// four xmm on the baseline, the same operations on each lane, so the same bits on every instruction set. Kernels keep
// them in locals and pass them by reference (a 64-byte vector by value changes the ABI between instruction sets).
typedef float Float16v __attribute__((vector_size(64)));
typedef int32_t Int16v __attribute__((vector_size(64)));

// (-Wpsabi off here, and in each file that calls load16: GCC notes that a 64-byte vector returned by value has
// another ABI without AVX-512; load16 is always inlined, never called.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
__attribute__((always_inline)) inline Float16v load16(const float* p) {
  Float16v v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
__attribute__((always_inline)) inline void store16(float* p, const Float16v& v) { std::memcpy(p, &v, sizeof v); }

// Non-temporal stores: a kernel whose output is far bigger than the cache writes it with stream16, so each line goes
// to memory without being read first (a plain store reads the line before it writes it: a third more traffic for a
// row kernel that reads one tensor and writes one). p must be 16-byte aligned; SSE's stores, x86-64's baseline, so
// every instruction set runs the same code. A kernel that streamed calls stream_fence() before its threads finish.
__attribute__((always_inline)) inline void stream16(float* p, const Float16v& v) {
#if defined(__x86_64__)
  __m128 q[4];
  std::memcpy(q, &v, sizeof q);
  for (int k = 0; k < 4; ++k) _mm_stream_ps(p + 4 * k, q[k]);
#else
  store16(p, v);
#endif
}
__attribute__((always_inline)) inline void stream_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}
// Whether an output of `bytes` is worth streaming: more than stream_output_threshold(), by default half the
// last-level cache (core/cpu_isa.h), so that it could not stay in cache for the next op anyway. Tests set the
// threshold to 0 to run the streaming paths on small tensors.
inline int64_t& stream_output_threshold() {
  static int64_t threshold = last_level_cache_bytes() / 2;
  return threshold;
}
inline bool stream_output(int64_t bytes) { return bytes > stream_output_threshold(); }

// Writes y[c] for c in [0, C): f16(c, v) sets v to the 16 floats at c and f1(c) gives the one float at c, with the
// same bits. With
// `stream`, the 16-float blocks go through stream16 from the first 16-byte aligned element on; else plain stores.
template <typename F16, typename F1>
__attribute__((always_inline)) inline void write_row(float* y, int64_t C, bool stream, F16&& f16, F1&& f1) {
  int64_t c = 0;
  if (stream) {
    const int64_t head = std::min<int64_t>(C, int64_t((16 - reinterpret_cast<uintptr_t>(y) % 16) % 16) / 4);
    for (; c < head; ++c) y[c] = f1(c);
    if (reinterpret_cast<uintptr_t>(y + c) % 16 == 0)
      for (; c + 16 <= C; c += 16) {
        Float16v v;
        f16(c, v);
        stream16(y + c, v);
      }
  }
  for (; c + 16 <= C; c += 16) {
    Float16v v;
    f16(c, v);
    store16(y + c, v);
  }
  for (; c < C; ++c) y[c] = f1(c);
}

// exp_vec of each lane of one native vector, in place: the scalar exp_vec's operations in the same order, so the
// same bits.
template <typename N, typename NI>
__attribute__((always_inline)) inline void exp_native(N& x) {
  const N lo = N{} - 104.0f, hi = N{} + 88.72283f, zero = {};
  const N inf = zero + INFINITY;
  N xc = x >= lo ? (x > hi ? hi : x) : lo;
  N n, p;
  exp_core(xc, n, p);
  const NI ni = __builtin_convertvector(n, NI);
  const NI n1 = ni >> 1, n2 = ni - n1;
  const NI b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  N y = p * (N)b1 * (N)b2;  // a vector cast keeps the bits
  y = x < lo ? zero : y;
  y = x > hi ? inf : y;
  x = x != x ? x : y;
}

// exp_vec of each of 16 lanes, in place, computed on native vectors of W floats (W = 4 on the baseline, 8 under
// AVX2, 16 under AVX-512: GB_ISA_VARIANTS_W's kW). Arithmetic on a 64-byte vector lowers to native registers on
// every instruction set, but GCC lowers its comparisons and selects element by element without AVX-512 (exp was
// 10x slower under AVX2), so exp splits the vector into native ones. The same bits for every W.
template <int W>
struct NativeFloats;
template <>
struct NativeFloats<4> {
  typedef float type __attribute__((vector_size(16)));
  typedef int32_t int_type __attribute__((vector_size(16)));
};
template <>
struct NativeFloats<8> {
  typedef float type __attribute__((vector_size(32)));
  typedef int32_t int_type __attribute__((vector_size(32)));
};
template <int W>
__attribute__((always_inline)) inline void exp_vec_inplace(Float16v& x) {
  static_assert(W == 4 || W == 8 || W == 16);
  if constexpr (W == 16) {
    exp_native<Float16v, Int16v>(x);
  } else {
    using N = typename NativeFloats<W>::type;
    using NI = typename NativeFloats<W>::int_type;
    constexpr int kParts = 16 / W;
    char* bytes = reinterpret_cast<char*>(&x);
    N a, b;
    std::memcpy(&a, bytes, sizeof a);
    std::memcpy(&b, bytes + sizeof a, sizeof b);
    exp_native<N, NI>(a);
    exp_native<N, NI>(b);
    std::memcpy(bytes, &a, sizeof a);
    std::memcpy(bytes + sizeof a, &b, sizeof b);
    if constexpr (kParts == 4) {
      N c, d;
      std::memcpy(&c, bytes + 2 * sizeof a, sizeof c);
      std::memcpy(&d, bytes + 3 * sizeof a, sizeof d);
      exp_native<N, NI>(c);
      exp_native<N, NI>(d);
      std::memcpy(bytes + 2 * sizeof a, &c, sizeof c);
      std::memcpy(bytes + 3 * sizeof a, &d, sizeof d);
    }
  }
}

// GB_ISA_VARIANTS (core/cpu_isa.h) for kernels that call exp_vec_inplace: the body sees kW, the native width of its
// variant (4 baseline, 8 AVX2, 16 AVX-512).
#define GB_ISA_VARIANTS_W(NAME, PARAMS, ...)   \
  template <typename T, bool... F>             \
  void NAME##_baseline PARAMS {                \
    constexpr int kW = 4;                      \
    __VA_ARGS__;                               \
  }                                            \
  template <typename T, bool... F>             \
  GB_TARGET_AVX2 void NAME##_avx2 PARAMS {     \
    constexpr int kW = 8;                      \
    __VA_ARGS__;                               \
  }                                            \
  template <typename T, bool... F>             \
  GB_TARGET_AVX512 void NAME##_avx512 PARAMS { \
    constexpr int kW = 16;                     \
    __VA_ARGS__;                               \
  }

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

// extreme_vec for float on two accumulators of 8 floats (32-byte vectors) under AVX2 and AVX-512 (W,
// GB_ISA_VARIANTS_W's kW, 8 or 16), on extreme_vec's 16-byte ones on the baseline (W 4): a max or min is the same value
// whatever the lanes (NaN propagating), so every set gives extreme_vec's result. (extreme_vec's two 16-byte vectors
// left softmax's max pass at 4 lanes under AVX-512: 15% of log_softmax's forward.)
template <int W, bool kMax>
__attribute__((always_inline)) inline float extreme_native(const float* p, int64_t n) {
  static_assert(W == 4 || W == 8 || W == 16);
  if constexpr (W == 4) {
    return extreme_vec<float, kMax>(p, n);
  } else {
    // 32-byte vectors under AVX-512 too: GCC 12 turns this loop on 64-byte ones into scalar code. Four accumulators,
    // one compare-and-select each, and a flag for NaN: a run with a NaN is answered by extreme_vec (the NaN itself).
    using N = typename NativeFloats<8>::type;
    using NI = typename NativeFloats<8>::int_type;
    constexpr int V = 8;
    const float init = kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    N a0;
    for (int k = 0; k < V; ++k) a0[k] = init;
    N a1 = a0, a2 = a0, a3 = a0;
    NI nan = {};
    int64_t i = 0;
    for (; i + 4 * V <= n; i += 4 * V) {
      N x0, x1, x2, x3;
      std::memcpy(&x0, p + i, sizeof x0);
      std::memcpy(&x1, p + i + V, sizeof x1);
      std::memcpy(&x2, p + i + 2 * V, sizeof x2);
      std::memcpy(&x3, p + i + 3 * V, sizeof x3);
      if constexpr (kMax) {
        a0 = x0 > a0 ? x0 : a0;
        a1 = x1 > a1 ? x1 : a1;
        a2 = x2 > a2 ? x2 : a2;
        a3 = x3 > a3 ? x3 : a3;
      } else {
        a0 = x0 < a0 ? x0 : a0;
        a1 = x1 < a1 ? x1 : a1;
        a2 = x2 < a2 ? x2 : a2;
        a3 = x3 < a3 ? x3 : a3;
      }
      nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3);
    }
    int any_nan = 0;
    for (int k = 0; k < V; ++k) any_nan |= nan[k];
    if (any_nan) return extreme_vec<float, kMax>(p, n);
    float a = init;
    for (int k = 0; k < V; ++k) {
      a = (kMax ? a0[k] > a : a0[k] < a) ? a0[k] : a;
      a = (kMax ? a1[k] > a : a1[k] < a) ? a1[k] : a;
      a = (kMax ? a2[k] > a : a2[k] < a) ? a2[k] : a;
      a = (kMax ? a3[k] > a : a3[k] < a) ? a3[k] : a;
    }
    for (; i < n; ++i) a = ((p[i] != p[i]) | (kMax ? p[i] > a : p[i] < a)) ? p[i] : a;
    return a;
  }
}

}  // namespace gb::detail
