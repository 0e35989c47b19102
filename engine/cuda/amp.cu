// engine/cuda/amp.cu — GradScaler's fused finite check and unscale on cuda (cuda/kernels.h's
// non_finite_check_and_unscale, PyTorch's _amp_foreach_non_finite_check_and_unscale_): one launch for a list of
// gradients, blockIdx.y the tensor, a grid-stride loop over its elements; a non-finite element sets the flag.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/multi_tensor.h"
#include "cuda/kernels.h"
#include "cuda/pointwise_ops.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void unscale_kernel(UnscaleLaunch l) {
  using M = typename OpMath<T>::type;
  T* g = reinterpret_cast<T*>(l.data[blockIdx.y]);
  const int64_t n = l.numel[blockIdx.y];
  const M inv = M(l.inv_scale);
  bool bad = false;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const M v = load(g + i);
    bad = bad || !isfinite(v);
    store(g + i, M(v * inv));
  }
  if (bad) *l.found_inf = 1.0f;  // every writer writes the same value
}

}  // namespace

void non_finite_check_and_unscale(const UnscaleLaunch& l) {
  if (l.count == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  const dim3 grid = multi_tensor_grid(l.numel, l.count, kThreads);
  switch (l.dtype) {
    case ScalarType::Float:
      unscale_kernel<float><<<grid, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Double:
      unscale_kernel<double><<<grid, kThreads, 0, s>>>(l);
      break;
    case ScalarType::BFloat16:
      unscale_kernel<BFloat16><<<grid, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Half:
      unscale_kernel<Half><<<grid, kThreads, 0, s>>>(l);
      break;
    default:
      throw Error(detail::str_cat("GradScaler.unscale_ on cuda: gradients of ", to_string(l.dtype),
                                  " cannot be unscaled; keep the parameters in a floating dtype"));
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
