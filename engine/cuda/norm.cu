// engine/cuda/norm.cu — layer_norm's and group_norm's forward on cuda (cuda/kernels.h's row_norm_forward): one
// block per row (grid-strided over rows), the row's sum and then its squared deviations from the mean summed in
// double across the block (warp shuffles, one shared-memory step), as the CPU's two passes in double; then each
// element normalized and scaled. The backward of both runs the ops' formulas (ops/norm.cpp), on the same kernels
// as every other op.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

// The sum of v over the block, in every thread.
__device__ double block_sum(double v) {
  __shared__ double warp_sums[kThreads / 32];
  __shared__ double total;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x / 32) ? warp_sums[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) total = v;
  }
  __syncthreads();
  const double t = total;
  __syncthreads();  // total is read by all before the next call writes it
  return t;
}

template <typename T>
__global__ void row_norm_kernel(RowNormLaunch l) {
  const T* x = reinterpret_cast<const T*>(l.x);
  const T* w = reinterpret_cast<const T*>(l.w);
  const T* b = reinterpret_cast<const T*>(l.b);
  T* y = reinterpret_cast<T*>(l.y);
  const int64_t len = l.len;
  const int64_t per_channel = l.S > 0 ? l.S : 1;
  const int64_t channels_per_row = l.groups > 0 ? len / per_channel : 0;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    double s = 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) s += double(xr[i]);
    const double m = len ? block_sum(s) / double(len) : 0.0;
    double q = 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) {
      const double d = double(xr[i]) - m;
      q += d * d;
    }
    const double var = len ? block_sum(q) / double(len) : 0.0;
    const T mt = T(m), rt = T(1.0 / sqrt(var + l.eps));
    if (threadIdx.x == 0) {
      reinterpret_cast<T*>(l.mean)[r] = mt;
      reinterpret_cast<T*>(l.rstd)[r] = rt;
    }
    const int64_t first_channel = l.groups > 0 ? (r % l.groups) * channels_per_row : 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) {
      const int64_t k = l.groups > 0 ? first_channel + i / per_channel : i;
      T v = (xr[i] - mt) * rt;
      if (w) v = v * w[k];
      if (b) v = v + b[k];
      yr[i] = v;
    }
  }
}

}  // namespace

void row_norm_forward(const RowNormLaunch& l) {
  if (l.rows == 0) return;
  DeviceGuard g(l.device);
  cudaStream_t s = current_stream(l.device);
  const unsigned blocks = unsigned(l.rows < 65535 ? l.rows : 65535);
  if (l.dtype == ScalarType::Float)
    row_norm_kernel<float><<<blocks, kThreads, 0, s>>>(l);
  else if (l.dtype == ScalarType::Double)
    row_norm_kernel<double><<<blocks, kThreads, 0, s>>>(l);
  else
    throw Error(detail::str_cat("layer_norm/group_norm on cuda: the kernel computes in float32 or float64, not ",
                                to_string(l.dtype)));
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
