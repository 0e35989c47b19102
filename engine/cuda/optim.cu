// engine/cuda/optim.cu — the optimizers' fused updates on cuda (cuda/optim_kernels.h): Adam's, RMSprop's and
// Adagrad's one launch for up to 24-32 parameters (PyTorch's multi-tensor apply), blockIdx.y the parameter, a
// grid-stride loop over its elements; SGD's one launch per parameter. The arithmetic is written with the
// round-to-nearest intrinsics (__fmul_rn, __fadd_rn, __fdiv_rn, __fsqrt_rn), which nvcc never contracts into
// multiply-adds, so every element is the CPU pass's bits.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/multi_tensor.h"
#include "cuda/optim_kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

template <bool kAms, bool kL2>
__global__ void adam_kernel(AdamLaunch l) {
  const int t = blockIdx.y;
  float* __restrict p = l.p[t];
  const float* __restrict g = l.g[t];
  float* __restrict m = l.m[t];
  float* __restrict v = l.v[t];
  float* __restrict vm = l.vm[t];
  const AdamCoefsF k = l.k[t];
  const int64_t n = l.n[t];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float gi = __fmul_rn(k.sign, g[i]);
    const float pi = __fmul_rn(p[i], k.decay);  // AdamW's decay; 1 (exact) for Adam
    if (kL2) gi = __fadd_rn(gi, __fmul_rn(k.wd, pi));
    const float mi = __fadd_rn(__fmul_rn(m[i], k.b1), __fmul_rn(k.a1, gi));
    const float vi = __fadd_rn(__fmul_rn(v[i], k.b2), __fmul_rn(k.a2, __fmul_rn(gi, gi)));
    m[i] = mi;
    v[i] = vi;
    float vd = vi;
    if (kAms) {
      const float o = vm[i];
      vd = (o != o || o > vi) ? o : vi;  // gb::maximum: a NaN on either side wins
      vm[i] = vd;
    }
    const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vd), k.bc2s), k.eps);
    p[i] = __fadd_rn(pi, __fmul_rn(k.neg_step, __fdiv_rn(mi, denom)));
  }
}

__global__ void sgd_kernel(SgdLaunch l) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < l.n; i += int64_t(gridDim.x) * blockDim.x) {
    const float d = __fadd_rn(__fmul_rn(l.sign, l.g[i]), __fmul_rn(l.wd, l.p[i]));
    if (l.buf) {
      const float b = __fadd_rn(__fmul_rn(l.momentum, l.buf[i]), __fmul_rn(l.damp1, d));
      l.buf[i] = b;
      l.p[i] = __fsub_rn(l.p[i], __fmul_rn(l.lr, __fadd_rn(__fmul_rn(l.nest_d, d), __fmul_rn(l.nest_buf, b))));
    } else {
      l.p[i] = __fsub_rn(l.p[i], __fmul_rn(l.lr, d));
    }
  }
}

template <bool kWd, bool kCentered, bool kMomentum>
__global__ void rmsprop_kernel(RmspropLaunch l) {
  const int t = blockIdx.y;
  float* __restrict p = l.p[t];
  const float* __restrict g = l.g[t];
  float* __restrict sq = l.sq[t];
  float* __restrict ga = l.ga[t];
  float* __restrict buf = l.buf[t];
  const RmspropCoefsF k = l.k[t];
  const int64_t n = l.n[t];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float gi = __fmul_rn(k.sign, g[i]);
    if (kWd) gi = __fadd_rn(gi, __fmul_rn(k.wd, p[i]));
    const float si = __fadd_rn(__fmul_rn(sq[i], k.alpha), __fmul_rn(k.a1, __fmul_rn(gi, gi)));
    sq[i] = si;
    float avg;
    if (kCentered) {
      const float gai = __fadd_rn(__fmul_rn(ga[i], k.alpha), __fmul_rn(k.a1, gi));
      ga[i] = gai;
      avg = __fsqrt_rn(__fadd_rn(si, __fmul_rn(-1.f, __fmul_rn(gai, gai))));
    } else {
      avg = __fsqrt_rn(si);
    }
    avg = __fadd_rn(avg, k.eps);
    if (kMomentum) {
      const float b = __fadd_rn(__fmul_rn(buf[i], k.momentum), __fdiv_rn(gi, avg));
      buf[i] = b;
      p[i] = __fadd_rn(p[i], __fmul_rn(k.neg_lr, b));
    } else {
      p[i] = __fadd_rn(p[i], __fmul_rn(k.neg_lr, __fdiv_rn(gi, avg)));
    }
  }
}

template <bool kWd>
__global__ void adagrad_kernel(AdagradLaunch l) {
  const int t = blockIdx.y;
  float* __restrict p = l.p[t];
  const float* __restrict g = l.g[t];
  float* __restrict sum = l.sum[t];
  const AdagradCoefsF k = l.k[t];
  const int64_t n = l.n[t];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float gi = __fmul_rn(k.sign, g[i]);
    if (kWd) gi = __fadd_rn(gi, __fmul_rn(k.wd, p[i]));
    const float s = __fadd_rn(sum[i], __fmul_rn(gi, gi));
    sum[i] = s;
    p[i] = __fadd_rn(p[i], __fmul_rn(k.neg_clr, __fdiv_rn(gi, __fadd_rn(__fsqrt_rn(s), k.eps))));
  }
}

template <bool kWd, bool kCentered>
void rmsprop_launch(const RmspropLaunch& l, dim3 grid, cudaStream_t s) {
  if (l.momentum)
    rmsprop_kernel<kWd, kCentered, true><<<grid, kThreads, 0, s>>>(l);
  else
    rmsprop_kernel<kWd, kCentered, false><<<grid, kThreads, 0, s>>>(l);
}

}  // namespace

void rmsprop_update(const RmspropLaunch& l) {
  if (l.count == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  const dim3 grid = multi_tensor_grid(l.n, l.count, kThreads);
  if (l.wd)
    l.centered ? rmsprop_launch<true, true>(l, grid, s) : rmsprop_launch<true, false>(l, grid, s);
  else
    l.centered ? rmsprop_launch<false, true>(l, grid, s) : rmsprop_launch<false, false>(l, grid, s);
  GB_CUDA_CHECK(cudaGetLastError());
}

void adagrad_update(const AdagradLaunch& l) {
  if (l.count == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  const dim3 grid = multi_tensor_grid(l.n, l.count, kThreads);
  if (l.wd)
    adagrad_kernel<true><<<grid, kThreads, 0, s>>>(l);
  else
    adagrad_kernel<false><<<grid, kThreads, 0, s>>>(l);
  GB_CUDA_CHECK(cudaGetLastError());
}

void sgd_update(const SgdLaunch& l) {
  if (l.n == 0) return;
  DeviceGuard guard(l.device);
  const int64_t want = (l.n + kThreads - 1) / kThreads;
  sgd_kernel<<<unsigned(want > 4096 ? 4096 : want), kThreads, 0, current_stream(l.device)>>>(l);
  GB_CUDA_CHECK(cudaGetLastError());
}

void adam_update(const AdamLaunch& l) {
  if (l.count == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  const dim3 grid = multi_tensor_grid(l.n, l.count, kThreads);
  if (l.amsgrad && l.l2)
    adam_kernel<true, true><<<grid, kThreads, 0, s>>>(l);
  else if (l.amsgrad)
    adam_kernel<true, false><<<grid, kThreads, 0, s>>>(l);
  else if (l.l2)
    adam_kernel<false, true><<<grid, kThreads, 0, s>>>(l);
  else
    adam_kernel<false, false><<<grid, kThreads, 0, s>>>(l);
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
