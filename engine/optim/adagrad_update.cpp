// engine/optim/adagrad_update.cpp — Adagrad's fused update (adagrad_update.h): the list walked as one range of blocks
// (optim/fused_list.h); each block updated by a plain loop the compiler vectorizes (sqrt included: this file compiles
// with -fno-math-errno; like the whole engine with -ffp-contract=off, so every instruction set rounds alike), then,
// when the statistics are due, read back with the monitor's bit tests.
#include "optim/adagrad_update.h"

#include <cmath>
#include <cstring>
#include <map>
#include <utility>

#include "core/cpu_isa.h"
#include "cuda/optim_kernels.h"

namespace gb::optim::detail {

namespace {

// The coefficients as the unfused ops use them: each Scalar converted to float on its own.
struct K {
  float sign, wd, eps, neg_clr;
};

// The update of n elements, each op rounded to float as the unfused op rounds it (gb::add with alpha is x + a * y,
// addcmul is x + v * (y * z), addcdiv x + v * (y / z)). kWd: weight decay (off at 0: 0 * Inf would make a NaN the
// ops do not).
template <bool kWd>
GB_ALWAYS_INLINE void adagrad_run(float* __restrict p, const float* __restrict g, float* __restrict sum, int64_t n,
                                  const K& k) {
  const float sign = k.sign, wd = k.wd, eps = k.eps, neg_clr = k.neg_clr;
  for (int64_t i = 0; i < n; ++i) {
    float gi = sign * g[i];  // maximize: neg(), exact
    if constexpr (kWd) gi = gi + wd * p[i];
    const float s = sum[i] + gi * gi;
    sum[i] = s;
    p[i] = p[i] + neg_clr * (gi / (std::sqrt(s) + eps));
  }
}

// Elements [0, n) of one parameter, block by block when the statistics are wanted.
template <bool kWd, bool kStats>
GB_ALWAYS_INLINE void adagrad_span(float* p, const float* g, float* sum, int64_t n, const K& k, StepPartial* out) {
  if constexpr (!kStats) {
    adagrad_run<kWd>(p, g, sum, n, k);
  } else {
    float before[kFusedBlock];
    for (int64_t s = 0; s < n; s += kFusedBlock) {
      const int64_t len = std::min(kFusedBlock, n - s);
      std::memcpy(before, p + s, size_t(len) * sizeof(float));
      adagrad_run<kWd>(p + s, g + s, sum + s, len, k);
      block_stats(g + s, before, p + s, len, *out);
    }
  }
}

GB_ISA_VARIANTS(adagrad_kernel, (float* p, const float* g, float* sum, int64_t n, const K& k, StepPartial* out),
                adagrad_span<F...>(p, g, sum, n, k, out))

using KernelFn = void (*)(float*, const float*, float*, int64_t, const K&, StepPartial*);

KernelFn pick_kernel(bool wd, bool stats) {
  if (wd)
    return stats ? GB_PICK_ISA(adagrad_kernel, float, true, true) : GB_PICK_ISA(adagrad_kernel, float, true, false);
  return stats ? GB_PICK_ISA(adagrad_kernel, float, false, true) : GB_PICK_ISA(adagrad_kernel, float, false, false);
}

K coefs_of(const AdagradCoefs& c) {
  K k;
  k.sign = c.maximize ? -1.f : 1.f;
  k.wd = static_cast<float>(c.weight_decay);
  k.eps = static_cast<float>(c.eps);
  k.neg_clr = static_cast<float>(-(c.lr / (1 + (c.step - 1) * c.lr_decay)));
  return k;
}

float* fp(const Tensor& t) { return static_cast<float*>(t.data_ptr()); }

}  // namespace

bool adagrad_fusable(const AdagradTensors& t) {
  auto fits = [&](auto ok) { return ok(t.p) && ok(t.grad) && ok(t.sum) && t.p.numel() > 0; };
  return fits([&](const Tensor& x) { return fusable_operand(x, t.p); }) ||
         fits([&](const Tensor& x) { return cuda_fusable_operand(x, t.p); });
}

namespace {

// The cuda items: grouped per device and weight decay, kMaxAdagradTensors to a launch (cuda/optim.cu).
void adagrad_cuda_update(const std::vector<const AdagradTensors*>& items) {
  std::map<std::pair<int, bool>, cuda_kernels::AdagradLaunch> launches;
  for (const AdagradTensors* t : items) {
    const int device = int(t->p.device().index());
    cuda_kernels::AdagradLaunch& l = launches[{device, t->c.weight_decay != 0}];
    if (l.count == cuda_kernels::kMaxAdagradTensors) {
      cuda_kernels::adagrad_update(l);
      l.count = 0;
    }
    l.device = device;
    l.wd = t->c.weight_decay != 0;
    const K k = coefs_of(t->c);
    l.k[l.count] = cuda_kernels::AdagradCoefsF{k.sign, k.wd, k.eps, k.neg_clr};
    l.p[l.count] = fp(t->p);
    l.g[l.count] = fp(t->grad);
    l.sum[l.count] = fp(t->sum);
    l.n[l.count] = t->p.numel();
    ++l.count;
  }
  for (auto& [key, l] : launches) cuda_kernels::adagrad_update(l);
}

void adagrad_cpu_update(const std::vector<AdagradTensors>& items, std::vector<FusedStepSums>* sums);

}  // namespace

void adagrad_fused_update(const std::vector<AdagradTensors>& items, std::vector<FusedStepSums>* sums) {
  fused_split(items, sums, adagrad_cuda_update, adagrad_cpu_update);
  for (const AdagradTensors& t : items) {
    gb::detail::bump_version(t.p);
    gb::detail::bump_version(t.sum);
  }
}

namespace {

// The cpu (and meta) items: one range of blocks across the pool.
void adagrad_cpu_update(const std::vector<AdagradTensors>& items, std::vector<FusedStepSums>* sums) {
  std::vector<K> coefs(items.size());
  std::vector<KernelFn> kernels(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    coefs[i] = coefs_of(items[i].c);
    kernels[i] = pick_kernel(items[i].c.weight_decay != 0, sums != nullptr);
  }
  fused_pass(items, sums, [&](size_t i, int64_t lo, int64_t hi, StepPartial& part) {
    const AdagradTensors& t = items[i];
    kernels[i](fp(t.p) + lo, fp(t.grad) + lo, fp(t.sum) + lo, hi - lo, coefs[i], &part);
  });
}

}  // namespace

void adagrad_fused_run(const std::vector<AdagradTensors>& items) {
  // an op span in the trace, as Adam's _fused_adam_; 8 float operations an element with weight decay
  fused_run("_fused_adagrad_", 8, items, adagrad_fused_update);
}

}  // namespace gb::optim::detail
