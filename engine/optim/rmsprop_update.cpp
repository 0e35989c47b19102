// engine/optim/rmsprop_update.cpp — RMSprop's fused update (rmsprop_update.h): the parameter list as one range of
// 256-element blocks split across the pool (optim/fused_list.h); each block updated by a plain loop the compiler
// vectorizes (sqrt included: this file compiles with -fno-math-errno; like the whole engine with -ffp-contract=off, so
// every instruction set rounds alike), then, when the statistics are due, read back with the monitor's bit tests.
#include "optim/rmsprop_update.h"

#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#include "core/cpu_isa.h"
#include "cuda/optim_kernels.h"
#include "optim/fused_list.h"

namespace gb::optim::detail {

namespace {

// The coefficients as the unfused ops use them: each Scalar converted to float on its own.
struct K {
  float sign, wd, alpha, a1, eps, momentum, neg_lr;
};

// The update of n elements, each op rounded to float as the unfused op rounds it (gb::add with alpha is x + a * y,
// addcmul is x + v * (y * z), addcdiv x + v * (y / z)). kWd: weight decay (off at 0: 0 * Inf would make a NaN the
// ops do not); kCentered, kMomentum as the options.
template <bool kWd, bool kCentered, bool kMomentum>
GB_ALWAYS_INLINE void rmsprop_run(float* __restrict p, const float* __restrict g, float* __restrict sq,
                                  float* __restrict ga, float* __restrict buf, int64_t n, const K& k) {
  const float sign = k.sign, wd = k.wd, alpha = k.alpha, a1 = k.a1, eps = k.eps, momentum = k.momentum,
              neg_lr = k.neg_lr;
  for (int64_t i = 0; i < n; ++i) {
    float gi = sign * g[i];  // maximize: neg(), exact
    if constexpr (kWd) gi = gi + wd * p[i];
    const float si = sq[i] * alpha + a1 * (gi * gi);
    sq[i] = si;
    float avg;
    if constexpr (kCentered) {
      const float gai = ga[i] * alpha + a1 * gi;
      ga[i] = gai;
      avg = std::sqrt(si + -1.f * (gai * gai));
    } else {
      avg = std::sqrt(si);
    }
    avg = avg + eps;
    if constexpr (kMomentum) {
      const float b = buf[i] * momentum + gi / avg;
      buf[i] = b;
      p[i] = p[i] + neg_lr * b;
    } else {
      p[i] = p[i] + neg_lr * (gi / avg);
    }
  }
}

// Elements [0, n) of one parameter, block by block when the statistics are wanted.
template <bool kWd, bool kCentered, bool kMomentum, bool kStats>
GB_ALWAYS_INLINE void rmsprop_span(float* p, const float* g, float* sq, float* ga, float* buf, int64_t n, const K& k,
                                   StepPartial* out) {
  if constexpr (!kStats) {
    rmsprop_run<kWd, kCentered, kMomentum>(p, g, sq, ga, buf, n, k);
  } else {
    float before[kFusedBlock];
    for (int64_t s = 0; s < n; s += kFusedBlock) {
      const int64_t len = std::min(kFusedBlock, n - s);
      std::memcpy(before, p + s, size_t(len) * sizeof(float));
      rmsprop_run<kWd, kCentered, kMomentum>(p + s, g + s, sq + s, kCentered ? ga + s : nullptr,
                                             kMomentum ? buf + s : nullptr, len, k);
      block_stats(g + s, before, p + s, len, *out);
    }
  }
}

GB_ISA_VARIANTS(rmsprop_kernel,
                (float* p, const float* g, float* sq, float* ga, float* buf, int64_t n, const K& k, StepPartial* out),
                rmsprop_span<F...>(p, g, sq, ga, buf, n, k, out))

using KernelFn = void (*)(float*, const float*, float*, float*, float*, int64_t, const K&, StepPartial*);

template <bool kWd, bool kCentered, bool kMomentum>
KernelFn pick_kernel(bool stats) {
  return stats ? GB_PICK_ISA(rmsprop_kernel, float, kWd, kCentered, kMomentum, true)
               : GB_PICK_ISA(rmsprop_kernel, float, kWd, kCentered, kMomentum, false);
}

template <bool kWd>
KernelFn pick_kernel(bool centered, bool momentum, bool stats) {
  if (centered) return momentum ? pick_kernel<kWd, true, true>(stats) : pick_kernel<kWd, true, false>(stats);
  return momentum ? pick_kernel<kWd, false, true>(stats) : pick_kernel<kWd, false, false>(stats);
}

K coefs_of(const RmspropCoefs& c) {
  K k;
  k.sign = c.maximize ? -1.f : 1.f;
  k.wd = static_cast<float>(c.weight_decay);
  k.alpha = static_cast<float>(c.alpha);
  k.a1 = static_cast<float>(1 - c.alpha);
  k.eps = static_cast<float>(c.eps);
  k.momentum = static_cast<float>(c.momentum);
  k.neg_lr = static_cast<float>(-c.lr);
  return k;
}

float* fp(const Tensor& t) { return t.defined() ? static_cast<float*>(t.data_ptr()) : nullptr; }

}  // namespace

bool rmsprop_fusable(const RmspropTensors& t) {
  auto fits = [&](auto ok) {
    return ok(t.p) && ok(t.grad) && ok(t.square_avg) && (!t.c.centered || ok(t.grad_avg)) &&
           (t.c.momentum <= 0 || ok(t.momentum_buffer)) && t.p.numel() > 0;
  };
  return fits([&](const Tensor& x) { return fusable_operand(x, t.p); }) ||
         fits([&](const Tensor& x) { return cuda_fusable_operand(x, t.p); });
}

namespace {

// The cuda items: grouped per device and kernel variant, kMaxRmspropTensors to a launch (cuda/optim.cu).
void rmsprop_cuda_update(const std::vector<const RmspropTensors*>& items) {
  std::map<std::tuple<int, bool, bool, bool>, cuda_kernels::RmspropLaunch> launches;
  for (const RmspropTensors* t : items) {
    const RmspropCoefs& c = t->c;
    const int device = int(t->p.device().index());
    cuda_kernels::RmspropLaunch& l = launches[{device, c.weight_decay != 0, c.centered, c.momentum > 0}];
    if (l.count == cuda_kernels::kMaxRmspropTensors) {
      cuda_kernels::rmsprop_update(l);
      l.count = 0;
    }
    l.device = device;
    l.wd = c.weight_decay != 0;
    l.centered = c.centered;
    l.momentum = c.momentum > 0;
    const K k = coefs_of(c);
    l.k[l.count] = cuda_kernels::RmspropCoefsF{k.sign, k.wd, k.alpha, k.a1, k.eps, k.momentum, k.neg_lr};
    l.p[l.count] = fp(t->p);
    l.g[l.count] = fp(t->grad);
    l.sq[l.count] = fp(t->square_avg);
    l.ga[l.count] = c.centered ? fp(t->grad_avg) : nullptr;
    l.buf[l.count] = c.momentum > 0 ? fp(t->momentum_buffer) : nullptr;
    l.n[l.count] = t->p.numel();
    ++l.count;
  }
  for (auto& [key, l] : launches) cuda_kernels::rmsprop_update(l);
}

void rmsprop_cpu_update(const std::vector<RmspropTensors>& items, std::vector<RmspropStepSums>* sums);

}  // namespace

void rmsprop_fused_update(const std::vector<RmspropTensors>& items, std::vector<RmspropStepSums>* sums) {
  fused_split(items, sums, rmsprop_cuda_update, rmsprop_cpu_update);
  for (const RmspropTensors& t : items) {
    gb::detail::bump_version(t.p);
    gb::detail::bump_version(t.square_avg);
    if (t.c.centered) gb::detail::bump_version(t.grad_avg);
    if (t.c.momentum > 0) gb::detail::bump_version(t.momentum_buffer);
  }
}

namespace {

// The cpu (and meta) items: one range of blocks across the pool.
void rmsprop_cpu_update(const std::vector<RmspropTensors>& items, std::vector<RmspropStepSums>* sums) {
  std::vector<K> coefs(items.size());
  std::vector<KernelFn> kernels(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const RmspropCoefs& c = items[i].c;
    coefs[i] = coefs_of(c);
    kernels[i] = c.weight_decay != 0 ? pick_kernel<true>(c.centered, c.momentum > 0, sums != nullptr)
                                     : pick_kernel<false>(c.centered, c.momentum > 0, sums != nullptr);
  }
  fused_pass(items, sums, [&](size_t i, int64_t lo, int64_t hi, StepPartial& part) {
    const RmspropTensors& t = items[i];
    kernels[i](fp(t.p) + lo, fp(t.grad) + lo, fp(t.square_avg) + lo, t.c.centered ? fp(t.grad_avg) + lo : nullptr,
               t.c.momentum > 0 ? fp(t.momentum_buffer) + lo : nullptr, hi - lo, coefs[i], &part);
  });
}

}  // namespace

void rmsprop_fused_run(const std::vector<RmspropTensors>& items) {
  // an op span in the trace, as Adam's _fused_adam_; 12 float operations an element at most (centered, momentum)
  fused_run("_fused_rmsprop_", 12, items, rmsprop_fused_update);
}

}  // namespace gb::optim::detail
