// engine/optim/adam_update.cpp — Adam's fused update (adam_update.h): the parameter list as one range of 256-element
// blocks split across the pool; each block updated by a plain loop the compiler vectorizes (sqrt included: this file
// compiles with -fno-math-errno; like the whole engine, with -ffp-contract=off, so every ISA rounds alike), then, when
// the statistics are due, read back from L1 with the monitor's bit tests (monitor/lanes.h), so it counts NaN, Inf
// and zeros as the scans do. Parameters on cuda go to one kernel per device and up to 24 parameters
// (cuda/optim.cu), computing the same bits.
#include "optim/adam_update.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#include "core/cpu_isa.h"
#include "core/make.h"
#include "cuda/optim_kernels.h"
#include "optim/fused_list.h"

namespace gb::optim::detail {

namespace {

constexpr int64_t kBlock = kFusedBlock;

// One parameter's coefficients as the unfused ops use them: each Scalar converted to float on its own.
struct K {
  float sign, decay, wd, b1, a1, b2, a2, bc2s, eps, neg_step;
};

using Partial = StepPartial;

// The update of n elements, each op rounded to float as the unfused op rounds it (gb::add with alpha is x + a * y,
// addcmul is x + v * (y * z), addcdiv x + v * (y / z); -std=c++20 contracts nothing into a fused multiply-add).
// kL2: Adam's weight decay added to the gradient (off at 0: 0 * Inf would make a NaN the ops do not).
template <bool kAms, bool kL2>
GB_ALWAYS_INLINE void adam_run(float* __restrict p, const float* __restrict g, float* __restrict m,
                               float* __restrict v, float* __restrict vm, int64_t n, const K& k) {
  const float sign = k.sign, decay = k.decay, wd = k.wd, b1 = k.b1, a1 = k.a1, b2 = k.b2, a2 = k.a2, bc2s = k.bc2s,
              eps = k.eps, neg_step = k.neg_step;
  for (int64_t i = 0; i < n; ++i) {
    float gi = sign * g[i];
    float pi = p[i] * decay;  // AdamW's decay; 1 (exact) for Adam
    if constexpr (kL2) gi = gi + wd * pi;
    const float mi = m[i] * b1 + a1 * gi;
    const float vi = v[i] * b2 + a2 * (gi * gi);
    m[i] = mi;
    v[i] = vi;
    float vd = vi;
    if constexpr (kAms) {
      const float o = vm[i];
      vd = (o != o || o > vi) ? o : vi;  // gb::maximum: a NaN on either side wins
      vm[i] = vd;
    }
    const float denom = std::sqrt(vd) / bc2s + eps;
    p[i] = pi + neg_step * (mi / denom);
  }
}

// Elements [0, n) of one parameter, block by block; F: kAms, kL2, kStats.
template <bool kAms, bool kL2, bool kStats>
GB_ALWAYS_INLINE void adam_span(float* p, const float* g, float* m, float* v, float* vm, int64_t n, const K& k,
                                Partial* out) {
  if constexpr (!kStats) {
    adam_run<kAms, kL2>(p, g, m, v, vm, n, k);
  } else {
    float before[kBlock];
    for (int64_t s = 0; s < n; s += kBlock) {
      const int64_t len = std::min(kBlock, n - s);
      std::memcpy(before, p + s, size_t(len) * sizeof(float));
      adam_run<kAms, kL2>(p + s, g + s, m + s, v + s, kAms ? vm + s : nullptr, len, k);
      block_stats(g + s, before, p + s, len, *out);
    }
  }
}

GB_ISA_VARIANTS(adam_kernel,
                (float* p, const float* g, float* m, float* v, float* vm, int64_t n, const K& k, Partial* out),
                adam_span<F...>(p, g, m, v, vm, n, k, out))

using KernelFn = void (*)(float*, const float*, float*, float*, float*, int64_t, const K&, Partial*);

template <bool kAms, bool kL2>
KernelFn pick_kernel(bool stats) {
  return stats ? GB_PICK_ISA(adam_kernel, float, kAms, kL2, true) : GB_PICK_ISA(adam_kernel, float, kAms, kL2, false);
}

KernelFn pick_kernel(bool ams, bool l2, bool stats) {
  if (ams) return l2 ? pick_kernel<true, true>(stats) : pick_kernel<true, false>(stats);
  return l2 ? pick_kernel<false, true>(stats) : pick_kernel<false, false>(stats);
}

K coefs_of(const AdamCoefs& c) {
  K k;
  k.sign = c.maximize ? -1.f : 1.f;
  k.decay = c.decoupled && c.weight_decay != 0 ? static_cast<float>(1 - c.lr * c.weight_decay) : 1.f;
  k.wd = static_cast<float>(c.weight_decay);
  k.b1 = static_cast<float>(c.beta1);
  k.a1 = static_cast<float>(1 - c.beta1);
  k.b2 = static_cast<float>(c.beta2);
  k.a2 = static_cast<float>(1 - c.beta2);
  k.bc2s = static_cast<float>(std::sqrt(1 - std::pow(c.beta2, c.step)));
  k.eps = static_cast<float>(c.eps);
  k.neg_step = static_cast<float>(-(c.lr / (1 - std::pow(c.beta1, c.step))));
  return k;
}

float* fp(const Tensor& t) { return t.defined() ? static_cast<float*>(t.data_ptr()) : nullptr; }

void adam_cpu_update(const std::vector<AdamTensors>& items, std::vector<AdamStepSums>* sums);

// The cuda pass: items grouped per device and kernel variant, kMaxAdamTensors to a launch (cuda/optim.cu).
void adam_cuda_update(const std::vector<const AdamTensors*>& items) {
  std::map<std::tuple<int, bool, bool>, cuda_kernels::AdamLaunch> launches;
  for (const AdamTensors* t : items) {
    const bool l2 = !t->c.decoupled && t->c.weight_decay != 0;
    cuda_kernels::AdamLaunch& l = launches[{int(t->p.device().index()), t->c.amsgrad, l2}];
    if (l.count == cuda_kernels::kMaxAdamTensors) {
      cuda_kernels::adam_update(l);
      l.count = 0;
    }
    l.device = int(t->p.device().index());
    l.amsgrad = t->c.amsgrad;
    l.l2 = l2;
    const K k = coefs_of(t->c);
    l.k[l.count] = cuda_kernels::AdamCoefsF{k.sign, k.decay, k.wd, k.b1, k.a1, k.b2, k.a2, k.bc2s, k.eps, k.neg_step};
    l.p[l.count] = fp(t->p);
    l.g[l.count] = fp(t->grad);
    l.m[l.count] = fp(t->exp_avg);
    l.v[l.count] = fp(t->exp_avg_sq);
    l.vm[l.count] = t->c.amsgrad ? fp(t->max_exp_avg_sq) : nullptr;
    l.n[l.count] = t->p.numel();
    ++l.count;
  }
  for (auto& [key, l] : launches) cuda_kernels::adam_update(l);
}

}  // namespace

bool adam_fusable(const AdamTensors& t) {
  auto ok = [&](const Tensor& x) { return fusable_operand(x, t.p); };
  if (ok(t.p) && ok(t.grad) && ok(t.exp_avg) && ok(t.exp_avg_sq) && (!t.c.amsgrad || ok(t.max_exp_avg_sq)) &&
      t.p.numel() > 0)
    return true;
  // cuda: while no training monitor wants the step's statistics (the pass on the device does not measure them)
  auto on_cuda = [&](const Tensor& x) { return cuda_fusable_operand(x, t.p); };
  return on_cuda(t.p) && on_cuda(t.grad) && on_cuda(t.exp_avg) && on_cuda(t.exp_avg_sq) &&
         (!t.c.amsgrad || on_cuda(t.max_exp_avg_sq)) && t.p.numel() > 0;
}

void adam_fused_update(const std::vector<AdamTensors>& all, std::vector<AdamStepSums>* sums) {
  // the cuda items run on the device; the rest (cpu, meta) on the pool, their sums in their places
  fused_split(all, sums, [](const std::vector<const AdamTensors*>& on_cuda) {
    adam_cuda_update(on_cuda);
    for (const AdamTensors* t : on_cuda) {
      gb::detail::bump_version(t->p);
      gb::detail::bump_version(t->exp_avg);
      gb::detail::bump_version(t->exp_avg_sq);
      if (t->c.amsgrad) gb::detail::bump_version(t->max_exp_avg_sq);
    }
  }, adam_cpu_update);
}

namespace {

// The cpu pass (and meta: nothing computed) over items whose operands are all on the cpu.
void adam_cpu_update(const std::vector<AdamTensors>& items, std::vector<AdamStepSums>* sums) {
  std::vector<K> coefs(items.size());
  std::vector<KernelFn> kernels(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const AdamTensors& t = items[i];
    coefs[i] = coefs_of(t.c);
    kernels[i] = pick_kernel(t.c.amsgrad, !t.c.decoupled && t.c.weight_decay != 0, sums != nullptr);
  }
  fused_pass(items, sums, [&](size_t i, int64_t lo, int64_t hi, Partial& part) {
    const AdamTensors& t = items[i];
    float* vm = t.c.amsgrad ? fp(t.max_exp_avg_sq) + lo : nullptr;
    kernels[i](fp(t.p) + lo, fp(t.grad) + lo, fp(t.exp_avg) + lo, fp(t.exp_avg_sq) + lo, vm, hi - lo, coefs[i], &part);
  });
  for (const AdamTensors& t : items) {
    gb::detail::bump_version(t.p);
    gb::detail::bump_version(t.exp_avg);
    gb::detail::bump_version(t.exp_avg_sq);
    if (t.c.amsgrad) gb::detail::bump_version(t.max_exp_avg_sq);
  }
}

}  // namespace

}  // namespace gb::optim::detail
