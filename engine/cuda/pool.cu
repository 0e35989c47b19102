// engine/cuda/pool.cu — max and average pooling on cuda (cuda/kernels.h's max_pool2d_* and window_mean_*): one
// thread per output element forward, one per input element backward (a gather over the outputs whose window can
// reach it, in output order: deterministic, no atomics), each loop in the order the CPU's kernels (ops/pool.cpp) run
// theirs, so float results carry the CPU's bits.
#include <cmath>
#include <cstdint>

#include "cuda/check.h"
#include "cuda/kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

__device__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

template <typename T>
__device__ bool is_nan(T v) {
  return v != v;
}

template <typename T>
__global__ void max_pool_forward_kernel(MaxPoolLaunch l, const T* in, T* out, int64_t* idx, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t ow = i % l.Wo, oh = (i / l.Wo) % l.Ho, p = i / (l.Wo * l.Ho);
  const T* src = in + p * l.H * l.W;
  const int64_t h0 = oh * l.sH - l.pH, w0 = ow * l.sW - l.pW;
  int64_t hs = h0, ws = w0;
  const int64_t he = imin(h0 + (l.kH - 1) * l.dH + 1, l.H), we = imin(w0 + (l.kW - 1) * l.dW + 1, l.W);
  while (hs < 0) hs += l.dH;
  while (ws < 0) ws += l.dW;
  T best_v = -T(INFINITY);
  int64_t best = hs * l.W + ws;
  for (int64_t ih = hs; ih < he; ih += l.dH)
    for (int64_t iw = ws; iw < we; iw += l.dW) {
      const int64_t at = ih * l.W + iw;
      const T v = src[at];
      if (v > best_v || is_nan(v)) {
        best_v = v;
        best = at;
      }
    }
  out[i] = best_v;
  idx[i] = best;
}

// The output positions along one dim whose window (start o*s - p, taps every d, k of them) can hold position x:
// [lo, hi), a superset the caller narrows by the index test.
__device__ void reaching(int64_t x, int64_t k, int64_t s, int64_t p, int64_t d, int64_t out, int64_t& lo, int64_t& hi) {
  const int64_t first = x + p - (k - 1) * d;  // o*s >= first
  lo = first <= 0 ? 0 : first / s;
  hi = imin((x + p) / s + 1, out);
}

template <typename T>
__global__ void max_pool_backward_kernel(MaxPoolLaunch l, const T* g, const int64_t* idx, T* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t w = i % l.W, h = (i / l.W) % l.H, p = i / (l.W * l.H);
  const int64_t at = h * l.W + w;
  int64_t oh0, oh1, ow0, ow1;
  reaching(h, l.kH, l.sH, l.pH, l.dH, l.Ho, oh0, oh1);
  reaching(w, l.kW, l.sW, l.pW, l.dW, l.Wo, ow0, ow1);
  const int64_t base = p * l.Ho * l.Wo;
  T acc = T(0);
  for (int64_t oh = oh0; oh < oh1; ++oh)
    for (int64_t ow = ow0; ow < ow1; ++ow) {
      const int64_t o = base + oh * l.Wo + ow;
      if (idx[o] == at) acc += g[o];
    }
  out[i] = acc;
}

template <typename T>
__global__ void max_pool_gather_kernel(MaxPoolLaunch l, const T* in, const int64_t* idx, T* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t p = i / (l.Wo * l.Ho);
  out[i] = in[p * l.H * l.W + idx[i]];
}

// One window along one dim, as the CPU's Windows: [start, end) clipped to the input, and its padded extent.
__device__ void window(const WindowMeanLaunch& l, bool rows, int64_t o, int64_t& start, int64_t& end, int64_t& padded) {
  const int64_t in = rows ? l.H : l.W, out = rows ? l.Ho : l.Wo;
  if (l.adaptive) {
    start = o * in / out;
    end = ((o + 1) * in + out - 1) / out;
    padded = end - start;
    return;
  }
  const int64_t k = rows ? l.kH : l.kW, s = rows ? l.sH : l.sW, p = rows ? l.pH : l.pW;
  const int64_t st = o * s - p, en = imin(st + k, in + p);
  padded = en - st;
  start = imax(st, 0);
  end = imin(en, in);
}

__device__ double divisor(const WindowMeanLaunch& l, int64_t oh, int64_t ow) {
  int64_t hs, he, hp, ws, we, wp;
  window(l, true, oh, hs, he, hp);
  window(l, false, ow, ws, we, wp);
  const double div = l.divisor_override                     ? double(l.divisor_override)
                     : (!l.adaptive && l.count_include_pad) ? double(hp * wp)
                                                            : double((he - hs) * (we - ws));
  return div > 0 ? div : 1.0;  // an empty window sums to 0
}

template <typename T>
__global__ void window_mean_forward_kernel(WindowMeanLaunch l, const T* in, T* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t ow = i % l.Wo, oh = (i / l.Wo) % l.Ho, p = i / (l.Wo * l.Ho);
  const T* src = in + p * l.H * l.W;
  int64_t hs, he, hp, ws, we, wp;
  window(l, true, oh, hs, he, hp);
  window(l, false, ow, ws, we, wp);
  T acc = 0;
  for (int64_t ih = hs; ih < he; ++ih)
    for (int64_t iw = ws; iw < we; ++iw) acc += src[ih * l.W + iw];
  out[i] = T(acc / divisor(l, oh, ow));
}

// The outputs along one dim whose window can hold x: a superset (the caller tests each window).
__device__ void candidates(const WindowMeanLaunch& l, bool rows, int64_t x, int64_t& lo, int64_t& hi) {
  const int64_t in = rows ? l.H : l.W, out = rows ? l.Ho : l.Wo;
  if (l.adaptive) {
    lo = imax(x * out / in - 1, 0);
    hi = imin(((x + 1) * out + in - 1) / in + 1, out);
    return;
  }
  const int64_t k = rows ? l.kH : l.kW, s = rows ? l.sH : l.sW, p = rows ? l.pH : l.pW;
  lo = x + p - k < 0 ? 0 : (x + p - k) / s;
  hi = imin((x + p) / s + 1, out);
}

template <typename T>
__global__ void window_mean_backward_kernel(WindowMeanLaunch l, const T* g, T* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t w = i % l.W, h = (i / l.W) % l.H, p = i / (l.W * l.H);
  const T* src = g + p * l.Ho * l.Wo;
  int64_t oh0, oh1, ow0, ow1;
  candidates(l, true, h, oh0, oh1);
  candidates(l, false, w, ow0, ow1);
  T acc = T(0);
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    int64_t hs, he, hp;
    window(l, true, oh, hs, he, hp);
    if (h < hs || h >= he) continue;
    for (int64_t ow = ow0; ow < ow1; ++ow) {
      int64_t ws, we, wp;
      window(l, false, ow, ws, we, wp);
      if (w < ws || w >= we) continue;
      acc += T(src[oh * l.Wo + ow] / divisor(l, oh, ow));
    }
  }
  out[i] = acc;
}

// Runs kernel<float> or kernel<double> over n threads on the current stream of l.device.
template <class L, class Launch>
void run(const L& l, int64_t n, const char* op, Launch launch) {
  if (n == 0) return;
  DeviceGuard g(l.device);
  cudaStream_t s = current_stream(l.device);
  if (l.dtype == ScalarType::Float)
    launch(float{}, blocks_for(n), s);
  else if (l.dtype == ScalarType::Double)
    launch(double{}, blocks_for(n), s);
  else
    throw Error(detail::str_cat(op, " on cuda: the kernel computes in float32 or float64, not ", to_string(l.dtype)));
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void max_pool2d_forward(const MaxPoolLaunch& l) {
  const int64_t n = l.planes * l.Ho * l.Wo;
  run(l, n, "max_pool2d", [&](auto zero, unsigned blocks, cudaStream_t s) {
    using T = decltype(zero);
    max_pool_forward_kernel<T>
        <<<blocks, kThreads, 0, s>>>(l, reinterpret_cast<const T*>(l.in), reinterpret_cast<T*>(l.out), l.idx, n);
  });
}

void max_pool2d_backward(const MaxPoolLaunch& l) {
  const int64_t n = l.planes * l.H * l.W;
  run(l, n, "max_pool2d's backward", [&](auto zero, unsigned blocks, cudaStream_t s) {
    using T = decltype(zero);
    max_pool_backward_kernel<T>
        <<<blocks, kThreads, 0, s>>>(l, reinterpret_cast<const T*>(l.in), l.idx, reinterpret_cast<T*>(l.out), n);
  });
}

void max_pool2d_gather(const MaxPoolLaunch& l) {
  const int64_t n = l.planes * l.Ho * l.Wo;
  run(l, n, "max_pool2d's double backward", [&](auto zero, unsigned blocks, cudaStream_t s) {
    using T = decltype(zero);
    max_pool_gather_kernel<T>
        <<<blocks, kThreads, 0, s>>>(l, reinterpret_cast<const T*>(l.in), l.idx, reinterpret_cast<T*>(l.out), n);
  });
}

void window_mean_forward(const WindowMeanLaunch& l) {
  const int64_t n = l.planes * l.Ho * l.Wo;
  run(l, n, l.adaptive ? "adaptive_avg_pool2d" : "avg_pool2d", [&](auto zero, unsigned blocks, cudaStream_t s) {
    using T = decltype(zero);
    window_mean_forward_kernel<T>
        <<<blocks, kThreads, 0, s>>>(l, reinterpret_cast<const T*>(l.in), reinterpret_cast<T*>(l.out), n);
  });
}

void window_mean_backward(const WindowMeanLaunch& l) {
  const int64_t n = l.planes * l.H * l.W;
  run(l, n, l.adaptive ? "adaptive_avg_pool2d's backward" : "avg_pool2d's backward",
      [&](auto zero, unsigned blocks, cudaStream_t s) {
        using T = decltype(zero);
        window_mean_backward_kernel<T>
            <<<blocks, kThreads, 0, s>>>(l, reinterpret_cast<const T*>(l.in), reinterpret_cast<T*>(l.out), n);
      });
}

}  // namespace gb::cuda_kernels
