// engine/cuda/loss.cu — nll_loss forward and backward on cuda (cuda/loss_kernels.h): one thread per (b, s)
// position, grid-strided. Forward picks -w_t * x[b, t, s] and w_t; backward writes -w_t * g into the zeroed
// gradient at the same place (one writer per position: no atomics). Targets are checked on the device.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/device_error.h"
#include "cuda/loss_kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b > 65535 ? 65535 : b < 1 ? 1 : b);
}

// The class of position i, or -1 when it is ignored or out of range (recorded for the host).
__device__ int64_t class_of(const NllLaunch& l, int64_t i, DeviceError* err) {
  const int64_t t = l.target[i];
  if (t == l.ignore_index) return -1;
  if (t >= 0 && t < l.C) return t;
  record_device_error(err, l.op, 1, t, l.C);
  return -1;
}

template <typename T>
__global__ void nll_forward_kernel(NllLaunch l, DeviceError* err) {
  const T* x = static_cast<const T*>(l.x);
  const T* w = static_cast<const T*>(l.weight);
  T* loss = static_cast<T*>(l.loss);
  T* w_out = static_cast<T*>(l.w_out);
  const int64_t n = l.B * l.S;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = class_of(l, i, err);
    if (t < 0) {
      loss[i] = T(0);
      w_out[i] = T(0);
      continue;
    }
    const int64_t b = i / l.S, s = i % l.S;
    const T wt = w ? w[t] : T(1);
    loss[i] = -wt * x[(b * l.C + t) * l.S + s];
    w_out[i] = wt;
  }
}

template <typename T>
__global__ void nll_backward_kernel(NllLaunch l, DeviceError* err) {
  const T* g = static_cast<const T*>(l.g);
  const T* w = static_cast<const T*>(l.weight);
  const T* div = static_cast<const T*>(l.divisor);
  T* gx = static_cast<T*>(l.gx);
  const int64_t n = l.B * l.S;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = class_of(l, i, err);
    if (t < 0) continue;
    const int64_t b = i / l.S, s = i % l.S;
    T gi = l.g_scalar ? g[0] : g[i];
    if (div) gi = gi / div[0];
    gx[l.compact ? i : (b * l.C + t) * l.S + s] = -(w ? w[t] : T(1)) * gi;
  }
}

void launch(const NllLaunch& l, bool forward, const char* what) {
  const int64_t n = l.B * l.S;
  if (n == 0) return;
  raise_device_errors();  // an earlier launch's bad index or target, if its kernel has run by now
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  DeviceError* err = device_error(l.device);
  const unsigned blocks = blocks_for(n);
  if (l.dtype == ScalarType::Float) {
    if (forward)
      nll_forward_kernel<float><<<blocks, kThreads, 0, s>>>(l, err);
    else
      nll_backward_kernel<float><<<blocks, kThreads, 0, s>>>(l, err);
  } else if (l.dtype == ScalarType::Double) {
    if (forward)
      nll_forward_kernel<double><<<blocks, kThreads, 0, s>>>(l, err);
    else
      nll_backward_kernel<double><<<blocks, kThreads, 0, s>>>(l, err);
  } else {
    throw Error(detail::str_cat(what, " on cuda: computes in float32 or float64, not ", to_string(l.dtype)));
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void nll_forward(const NllLaunch& l) { launch(l, true, "nll_loss"); }
void nll_backward(const NllLaunch& l) { launch(l, false, "nll_loss_backward"); }

}  // namespace gb::cuda_kernels
