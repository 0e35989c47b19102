// engine/cuda/softmax.cu — softmax and log_softmax over the last dim (cuda/softmax_kernels.h): one block per row
// (grid-strided), the row's max and its sum of exponentials reduced across the block (warp shuffles, one
// shared-memory step), then the row written: three reads and one write of the row, where the composed form made
// five passes. The backward is one reduction and one write per row.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/pointwise_ops.h"
#include "cuda/softmax_kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

template <typename M>
__device__ M nan_max(M a, M b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));  // NaN wins, as the CPU's max
}

// The reduction of v over the block (max or sum), in every thread.
template <bool kMax, typename M>
__device__ M block_reduce(M v) {
  __shared__ M partial[kThreads / 32];
  __shared__ M total;
  for (int o = 16; o > 0; o >>= 1) {
    const M other = __shfl_down_sync(0xffffffffu, v, o);
    v = kMax ? nan_max(v, other) : v + other;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x / 32) ? partial[lane] : (kMax ? M(-INFINITY) : M(0));
    for (int o = 16; o > 0; o >>= 1) {
      const M other = __shfl_down_sync(0xffffffffu, v, o);
      v = kMax ? nan_max(v, other) : v + other;
    }
    if (lane == 0) total = v;
  }
  __syncthreads();
  const M t = total;
  __syncthreads();
  return t;
}

template <typename T, bool kLog>
__global__ void forward_kernel(SoftmaxLaunch l) {
  using M = typename OpMath<T>::type;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const T* x = reinterpret_cast<const T*>(l.in) + r * l.len;
    T* y = reinterpret_cast<T*>(l.out) + r * l.len;
    M mx = M(-INFINITY);
    for (int64_t i = threadIdx.x; i < l.len; i += blockDim.x) mx = nan_max(mx, M(load(x + i)));
    mx = block_reduce<true>(mx);
    M s = 0;
    for (int64_t i = threadIdx.x; i < l.len; i += blockDim.x) s += ::exp(M(load(x + i)) - mx);
    s = block_reduce<false>(s);
    if (kLog) {
      const M ls = ::log(s);
      for (int64_t i = threadIdx.x; i < l.len; i += blockDim.x) store(y + i, M((M(load(x + i)) - mx) - ls));
    } else {
      const M inv = M(1) / s;
      for (int64_t i = threadIdx.x; i < l.len; i += blockDim.x) store(y + i, M(::exp(M(load(x + i)) - mx) * inv));
    }
  }
}

template <typename T, bool kLog>
__global__ void backward_kernel(SoftmaxLaunch l) {
  using M = typename OpMath<T>::type;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const bool onehot = l.onehot_target != nullptr;  // kLog only
    const T* g = reinterpret_cast<const T*>(l.in) + (onehot ? r : r * l.len);
    const int64_t t = onehot ? l.onehot_target[r] : -1;
    auto grad_at = [&](int64_t i) -> M { return onehot ? (i == t ? M(load(g)) : M(0)) : M(load(g + i)); };
    const T* y = reinterpret_cast<const T*>(l.out_fwd) + r * l.len;
    T* dx = reinterpret_cast<T*>(l.out) + r * l.len;
    M s = 0;
    for (int64_t i = threadIdx.x; i < l.len; i += blockDim.x) s += kLog ? grad_at(i) : grad_at(i) * M(load(y + i));
    s = block_reduce<false>(s);
    for (int64_t i = threadIdx.x; i < l.len; i += blockDim.x) {
      const M gi = grad_at(i), yi = load(y + i);
      store(dx + i, kLog ? M(gi - ::exp(yi) * s) : M(yi * (gi - s)));
    }
  }
}

template <typename T>
void run_forward(const SoftmaxLaunch& l, unsigned blocks, cudaStream_t s) {
  if (l.log)
    forward_kernel<T, true><<<blocks, kThreads, 0, s>>>(l);
  else
    forward_kernel<T, false><<<blocks, kThreads, 0, s>>>(l);
}

template <typename T>
void run_backward(const SoftmaxLaunch& l, unsigned blocks, cudaStream_t s) {
  if (l.log)
    backward_kernel<T, true><<<blocks, kThreads, 0, s>>>(l);
  else
    backward_kernel<T, false><<<blocks, kThreads, 0, s>>>(l);
}

// Runs run<T> for l's dtype over min(rows, 65535) blocks on the current stream of l.device.
template <bool kForward>
void dispatch(const SoftmaxLaunch& l, const char* op) {
  if (l.rows == 0 || l.len == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  const unsigned blocks = unsigned(l.rows < 65535 ? l.rows : 65535);
  switch (l.dtype) {
    case ScalarType::Float:
      kForward ? run_forward<float>(l, blocks, s) : run_backward<float>(l, blocks, s);
      break;
    case ScalarType::Double:
      kForward ? run_forward<double>(l, blocks, s) : run_backward<double>(l, blocks, s);
      break;
    case ScalarType::Half:
      kForward ? run_forward<Half>(l, blocks, s) : run_backward<Half>(l, blocks, s);
      break;
    case ScalarType::BFloat16:
      kForward ? run_forward<BFloat16>(l, blocks, s) : run_backward<BFloat16>(l, blocks, s);
      break;
    default:
      throw Error(detail::str_cat(op, " on cuda: expected a floating-point input, but got ", to_string(l.dtype)));
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void softmax_forward(const SoftmaxLaunch& l) { dispatch<true>(l, l.log ? "log_softmax" : "softmax"); }
void softmax_backward(const SoftmaxLaunch& l) {
  dispatch<false>(l, l.log ? "log_softmax_backward" : "softmax_backward");
}

}  // namespace gb::cuda_kernels
