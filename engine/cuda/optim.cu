// engine/cuda/optim.cu — the optimizers' fused updates on cuda (cuda/optim_kernels.h): Adam's one launch for up to
// kMaxAdamTensors parameters (PyTorch's multi-tensor apply), blockIdx.y the parameter, a grid-stride loop over its
// elements; SGD's one launch per parameter. The arithmetic is written with the round-to-nearest intrinsics (__fmul_rn,
// __fadd_rn, __fdiv_rn,
// __fsqrt_rn), which nvcc never contracts into multiply-adds, so every element is the CPU pass's bits.
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

}  // namespace

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
