// engine/optim/step_sums.h — internal: the statistics a fused optimizer pass (sgd_update.cpp, adam_update.cpp,
// rmsprop_update.cpp) gathers for the training monitor while it updates a parameter: the gradient's NaN/Inf/zero
// counts, its sum of squares and largest finite |g|, the update's and the parameter's (before it) sums of squares. Per block of
// elements: 8-lane float sums and the monitor's bit tests (monitor/lanes.h), closed into doubles by close_block (or
// block_stats, from the block's values before and after); blocks and threads merged with add; grad_scan gives the
// gradient's part as the monitor's scan would have.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "glassbox/core/tensor.h"
#include "monitor/lanes.h"
#include "monitor/scan.h"

namespace gb::optim::detail {

// Whether x can be an operand of a fused pass over parameter p: defined, float32, on the cpu (or meta: the same
// state, nothing computed) as p, contiguous, of p's shape.
inline bool fusable_operand(const Tensor& x, const Tensor& p) {
  return x.defined() && x.scalar_type() == kFloat && (x.device().is_cpu() || x.device().is_meta()) &&
         x.device() == p.device() && x.is_contiguous() && x.sizes() == p.sizes();
}

struct StepPartial {
  int64_t nan = 0, inf = 0, zeros = 0;
  double gg = 0, uu = 0, pp = 0;  // sums of g^2, of the update^2, of p^2 before the update
  uint32_t max_bits = 0;          // the largest finite |g| as its bits

  // Adds one block: its lane counts and 8-lane sums, plus the tail's sums (in double).
  __attribute__((always_inline)) void close_block(const monitor::detail::LaneCounts& lanes,
                                                  const monitor::detail::vf8& lane_gg,
                                                  const monitor::detail::vf8& lane_uu,
                                                  const monitor::detail::vf8& lane_pp, double tail_gg, double tail_uu,
                                                  double tail_pp) {
    for (int j = 0; j < 8; ++j) {
      tail_gg += lane_gg[j];
      tail_uu += lane_uu[j];
      tail_pp += lane_pp[j];
    }
    lanes.drain(nan, inf, zeros, max_bits);
    gg += tail_gg;
    uu += tail_uu;
    pp += tail_pp;
  }

  void add(const StepPartial& o) {
    nan += o.nan;
    inf += o.inf;
    zeros += o.zeros;
    gg += o.gg;
    uu += o.uu;
    pp += o.pp;
    max_bits = std::max(max_bits, o.max_bits);
  }

  // The gradient's statistics over its n elements.
  monitor::detail::ScanResult grad_scan(int64_t n) const {
    monitor::detail::ScanResult r;
    r.scanned = true;
    r.n = n;
    r.nan = nan;
    r.inf = inf;
    r.zeros = zeros;
    r.sumsq = gg;
    float top;
    std::memcpy(&top, &max_bits, sizeof top);
    r.max_abs = inf ? INFINITY : top;
    return r;
  }
};

// The statistics of one block of m elements after its update: the gradient's counts and squares, (p - before)^2 and
// before^2 (the parameter before its update), in 8-lane float sums (double for the tail and across blocks). Inlined into each instruction set's kernel.
__attribute__((always_inline)) inline void block_stats(const float* g, const float* before, const float* p, int64_t m,
                                                       StepPartial& out) {
  monitor::detail::LaneCounts lanes;
  monitor::detail::vf8 gg = {}, uu = {}, pp = {};
  int64_t i = 0;
  for (; i + 8 <= m; i += 8) {
    monitor::detail::vf8 vg, vb, vp;
    std::memcpy(&vg, g + i, sizeof vg);
    std::memcpy(&vb, before + i, sizeof vb);
    std::memcpy(&vp, p + i, sizeof vp);
    lanes.add(vg);
    gg += vg * vg;
    const monitor::detail::vf8 u = vp - vb;
    uu += u * u;
    pp += vb * vb;
  }
  double sgg = 0, suu = 0, spp = 0;
  for (; i < m; ++i) {
    lanes.add_one(g[i]);
    sgg += double(g[i]) * g[i];
    const float u = p[i] - before[i];
    suu += double(u) * u;
    spp += double(before[i]) * before[i];
  }
  out.close_block(lanes, gg, uu, pp, sgg, suu, spp);
}

}  // namespace gb::optim::detail
