// engine/optim/sgd_update.cpp — SGD's fused update (sgd_update.h): one pass, split across the pool; with the
// statistics, 8-lane vectors per block of 256 elements (float partial sums, double across blocks) and the monitor's
// bit tests (monitor/lanes.h), so both count NaN, Inf and zeros alike.
#include "optim/sgd_update.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "core/make.h"
#include "core/multiversion.h"
#include "cuda/optim_kernels.h"
#include "glassbox/core/parallel.h"
#include "monitor/lanes.h"
#include "monitor/monitor.h"
#include "optim/step_sums.h"

namespace gb::optim::detail {

namespace {

constexpr int64_t kBlock = 256;
constexpr int64_t kGrain = 32768;  // elements below which the update stays on one thread

struct Coefs {
  float lr, momentum, damp1, wd, sign, nest_d, nest_buf;  // dp = nest_d * d + nest_buf * buf
  bool has_buf;
};

using Partial = StepPartial;

using monitor::detail::LaneCounts;
using monitor::detail::vf8;

// The update alone: a plain loop the compiler vectorizes (restrict pointers, the coefficients in locals).
GB_AVX2_CLONES void update_plain(float* __restrict p, const float* __restrict g,
                                                                    float* __restrict buf, int64_t n, Coefs c) {
  const float lr = c.lr, sign = c.sign, wd = c.wd, momentum = c.momentum, damp1 = c.damp1, nest_d = c.nest_d,
              nest_buf = c.nest_buf;
  if (c.has_buf) {
    for (int64_t i = 0; i < n; ++i) {
      const float d = sign * g[i] + wd * p[i];
      const float b = momentum * buf[i] + damp1 * d;
      buf[i] = b;
      p[i] -= lr * (nest_d * d + nest_buf * b);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * (sign * g[i] + wd * p[i]);
  }
}

// The update and its statistics over [0, n), in blocks. kBuf: a momentum buffer; kPlain: no weight decay, no
// dampening, not maximizing, not Nesterov (SGD's usual settings: d = g, buf = momentum * buf + g, step = lr * buf),
// which skips the multiplications by 1 and 0 (and a 0 * Inf that would make a NaN the plain formula has not).
// The coefficients are broadcast once into vector registers.
template <bool kBuf, bool kPlain>
__attribute__((always_inline)) inline void update_stats_impl(float* __restrict p, const float* __restrict g,
                                                             float* __restrict buf, int64_t n, const Coefs& c,
                                                             Partial& out) {
  const float momentum = kBuf ? c.momentum : 0.f, damp1 = kBuf ? c.damp1 : 1.f;
  const float nest_d = kBuf ? c.nest_d : 1.f, nest_buf = kBuf ? c.nest_buf : 0.f;
  const float lr = c.lr, sign = c.sign, wd = c.wd;
  const vf8 v_lr = vf8{} + lr, v_sign = vf8{} + sign, v_wd = vf8{} + wd, v_mom = vf8{} + momentum,
            v_damp1 = vf8{} + damp1, v_nest_d = vf8{} + nest_d, v_nest_buf = vf8{} + nest_buf;
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    LaneCounts lanes;
    vf8 gg = {}, uu = {}, pp = {};
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      const int64_t k = s + i;
      vf8 vg, vp, vb = {};
      std::memcpy(&vg, g + k, sizeof vg);
      std::memcpy(&vp, p + k, sizeof vp);
      if constexpr (kBuf) std::memcpy(&vb, buf + k, sizeof vb);
      lanes.add(vg);
      gg += vg * vg;
      pp += vp * vp;  // the parameter before its update
      vf8 step;
      if constexpr (kPlain) {
        if constexpr (kBuf) vb = v_mom * vb + vg;
        step = v_lr * (kBuf ? vb : vg);
      } else {
        const vf8 d = v_sign * vg + v_wd * vp;
        if constexpr (kBuf) vb = v_mom * vb + v_damp1 * d;
        step = kBuf ? v_lr * (v_nest_d * d + v_nest_buf * vb) : v_lr * d;
      }
      vp -= step;
      uu += step * step;
      std::memcpy(p + k, &vp, sizeof vp);
      if constexpr (kBuf) std::memcpy(buf + k, &vb, sizeof vb);
    }
    double sgg = 0, suu = 0, spp = 0;
    for (; i < m; ++i) {
      const int64_t k = s + i;
      const float v = g[k];
      lanes.add_one(v);
      sgg += double(v) * v;
      float b = 0, step;
      if constexpr (kPlain) {
        if constexpr (kBuf) b = momentum * buf[k] + v;
        step = lr * (kBuf ? b : v);
      } else {
        const float d = sign * v + wd * p[k];
        if constexpr (kBuf) b = momentum * buf[k] + damp1 * d;
        step = kBuf ? lr * (nest_d * d + nest_buf * b) : lr * d;
      }
      if constexpr (kBuf) buf[k] = b;
      spp += double(p[k]) * p[k];
      p[k] -= step;
      suu += double(step) * step;
    }
    out.close_block(lanes, gg, uu, pp, sgg, suu, spp);
  }
}

GB_AVX2_CLONES void update_stats(float* p, const float* g, float* buf, int64_t n,
                                                                    const Coefs& c, Partial& out) {
  const bool plain = c.sign == 1.f && c.wd == 0.f && (!c.has_buf || (c.damp1 == 1.f && c.nest_d == 0.f));
  if (c.has_buf)
    plain ? update_stats_impl<true, true>(p, g, buf, n, c, out) : update_stats_impl<true, false>(p, g, buf, n, c, out);
  else
    plain ? update_stats_impl<false, true>(p, g, buf, n, c, out)
          : update_stats_impl<false, false>(p, g, buf, n, c, out);
}

}  // namespace

bool sgd_fusable(const Tensor& p, const Tensor& g, const Tensor& buf) {
  auto ok = [&](const Tensor& x) { return fusable_operand(x, p); };
  if (ok(p) && ok(g) && (!buf.defined() || ok(buf)) && p.numel() > 0) return true;
  // cuda: while no training monitor wants the step's statistics (the device pass does not measure them)
  auto on_cuda = [&](const Tensor& x) {
    return x.is_cuda() && x.scalar_type() == kFloat && x.is_contiguous() && x.device() == p.device() &&
           x.sizes() == p.sizes();
  };
  return on_cuda(p) && on_cuda(g) && (!buf.defined() || on_cuda(buf)) && p.numel() > 0 &&
         !monitor::detail::active();
}

void sgd_update(const Tensor& p, const Tensor& g, const Tensor& buf, const SgdCoefs& c, SgdStepSums* sums) {
  Coefs k;
  k.lr = static_cast<float>(c.lr);
  k.momentum = static_cast<float>(c.momentum);
  k.damp1 = static_cast<float>(1 - c.dampening);
  k.wd = static_cast<float>(c.weight_decay);
  k.sign = c.maximize ? -1.f : 1.f;
  k.nest_d = c.nesterov ? 1.f : 0.f;
  k.nest_buf = c.nesterov ? k.momentum : 1.f;
  k.has_buf = buf.defined();
  float* pd = static_cast<float*>(p.data_ptr());
  const float* gd = static_cast<const float*>(g.data_ptr());
  float* bd = k.has_buf ? static_cast<float*>(buf.data_ptr()) : nullptr;
  const int64_t n = p.numel();
  if (p.is_cuda()) {  // one kernel, the plain loop's bits (cuda/optim.cu)
    cuda_kernels::SgdLaunch l;
    l.device = int(p.device().index());
    l.n = n;
    l.lr = k.lr, l.momentum = k.momentum, l.damp1 = k.damp1, l.wd = k.wd, l.sign = k.sign, l.nest_d = k.nest_d,
    l.nest_buf = k.nest_buf;
    l.p = pd, l.g = gd, l.buf = bd;
    cuda_kernels::sgd_update(l);
    if (sums) *sums = {};
  } else if (gb::detail::skip_kernel(p)) {  // meta: nothing to compute or measure
    if (sums) *sums = {};
  } else if (!sums) {
    parallel_for(0, n, kGrain,
                 [&](int64_t b, int64_t e) { update_plain(pd + b, gd + b, bd ? bd + b : nullptr, e - b, k); });
  } else {
    Partial total;
    std::mutex mu;
    // Chunks start on block boundaries so that the float partial sums cover the same elements however the pool
    // splits the range.
    parallel_for(0, (n + kBlock - 1) / kBlock, std::max<int64_t>(1, kGrain / kBlock), [&](int64_t b, int64_t e) {
      const int64_t lo = b * kBlock, hi = std::min(n, e * kBlock);
      Partial part;
      update_stats(pd + lo, gd + lo, bd ? bd + lo : nullptr, hi - lo, k, part);
      std::lock_guard lock(mu);
      total.add(part);
    });
    sums->grad = total.grad_scan(n);
    sums->update_sumsq = total.uu;
    sums->param_sumsq = total.pp;
  }
  gb::detail::bump_version(p);
  if (k.has_buf) gb::detail::bump_version(buf);
}

}  // namespace gb::optim::detail
