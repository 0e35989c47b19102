// engine/monitor/lanes.h — internal: the bit tests every float32 statistics pass shares (monitor/scan.cpp, the fused
// optimizer pass optim/sgd_update.cpp), so they count NaN, Inf and zeros alike. 8-lane GCC/Clang vector extensions
// (two SSE registers by default, one AVX2 register in a target_clones("avx2") caller, which inlines these): counts
// as uint32 lanes over at most one block (a comparison is -1 where true), the largest finite |x| as the integer
// order of its bits (the float order for non-negative finite values).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gb::monitor::detail {

typedef float vf8 __attribute__((vector_size(32)));
typedef uint32_t vu8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));

// The counts of one block of elements; add() per 8 floats, add_one() per tail element, then drain(). With the sign
// bit cleared a float's bits are a non-negative int32, so the tests are signed compares (one instruction each on
// AVX2, which has no unsigned compare).
struct LaneCounts {
  vi8 nonfinite = {}, nan = {}, zeros = {}, mx = {};
  int64_t tail_nan = 0, tail_inf = 0, tail_zeros = 0;
  uint32_t tail_top = 0;

  __attribute__((always_inline)) void add(const vf8& v) {  // by reference: no vector ABI in a non-AVX caller
    vi8 a;
    std::memcpy(&a, &v, sizeof a);
    a &= 0x7fffffff;
    const vi8 bad = a > 0x7f7fffff;  // exponent all ones: Inf or NaN
    nonfinite -= bad;
    nan -= a > 0x7f800000;
    zeros -= a == 0;
    const vi8 f = a & ~bad;
    mx = f > mx ? f : mx;
  }
  __attribute__((always_inline)) void add_one(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    const uint32_t a = u & 0x7fffffffu;
    tail_nan += a > 0x7f800000u;
    tail_inf += a == 0x7f800000u;
    tail_zeros += a == 0;
    if (a < 0x7f800000u) tail_top = std::max(tail_top, a);
  }
  // Adds the block's counts; top becomes the largest finite |x| seen (as bits).
  __attribute__((always_inline)) void drain(int64_t& n_nan, int64_t& n_inf, int64_t& n_zeros, uint32_t& top) const {
    n_nan += tail_nan;
    n_inf += tail_inf;
    n_zeros += tail_zeros;
    top = std::max(top, tail_top);
    for (int j = 0; j < 8; ++j) {
      n_nan += nan[j];
      n_inf += nonfinite[j] - nan[j];
      n_zeros += zeros[j];
      top = std::max(top, static_cast<uint32_t>(mx[j]));
    }
  }
};

}  // namespace gb::monitor::detail
