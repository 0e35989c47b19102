// engine/ops/pool_geom.h — the plane geometry of one pooling op (internal), shared by its cpu kernels (ops/pool.cpp)
// and its CUDA half (cuda/pool_ops.cpp): planes of H x W in, Ho x Wo out, and the window that maps them.
#pragma once

#include <array>
#include <cstdint>

namespace gb::detail {

struct PlaneDims {
  int64_t H, W, Ho, Wo;
  std::array<int64_t, 2> k{1, 1}, s{1, 1}, p{0, 0}, dil{1, 1};  // the window: kernel, stride, padding, dilation
};

// Which rule makes a window mean's windows and divisors: avg_pool2d's (k, s, p; count_include_pad;
// divisor_override, 0: none) or adaptive_avg_pool2d's (start floor(o * in / out), end ceil((o + 1) * in / out)).
struct MeanRule {
  bool adaptive = false;
  bool count_include_pad = true;
  int64_t divisor_override = 0;
};

}  // namespace gb::detail
