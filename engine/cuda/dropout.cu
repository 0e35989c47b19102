// engine/cuda/dropout.cu — dropout's mask and output on cuda (cuda/kernels.h's dropout): one thread per 4 elements,
// each thread's uniform4 from Philox4x32-10 at (seed, subsequence = its first element / 4, offset), so the mask
// depends on the seed, the offset and the element's index only, never on the grid.
#include <curand_kernel.h>

#include <algorithm>
#include <cstdint>

#include "cuda/check.h"
#include "cuda/kernels.h"
#include "cuda/pointwise_ops.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void dropout_kernel(DropoutLaunch l) {
  using M = typename OpMath<T>::type;
  const int64_t quads = (l.n + 3) / 4;
  const T* x = reinterpret_cast<const T*>(l.x);
  T* mask = reinterpret_cast<T*>(l.mask);
  T* out = reinterpret_cast<T*>(l.out);
  const float keep = float(l.keep);
  const M scale = M(l.scale);
  for (int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < quads; q += int64_t(gridDim.x) * blockDim.x) {
    curandStatePhilox4_32_10_t state;
    curand_init(l.seed, uint64_t(q), l.offset, &state);
    const float4 r = curand_uniform4(&state);
    const float u[4] = {r.x, r.y, r.z, r.w};
    for (int j = 0; j < 4; ++j) {
      const int64_t i = 4 * q + j;
      if (i >= l.n) break;
      const bool kept = u[j] < keep;
      store(mask + i, M(kept ? 1 : 0));
      if (out) store(out + i, kept ? M(load(x + i) * scale) : M(0));
    }
  }
}

}  // namespace

void dropout(const DropoutLaunch& l) {
  if (l.n == 0) return;
  DeviceGuard g(l.device);
  cudaStream_t s = current_stream(l.device);
  const int64_t quads = (l.n + 3) / 4;
  const unsigned blocks = unsigned(std::min<int64_t>((quads + kThreads - 1) / kThreads, 65535));
  switch (l.dtype) {
    case ScalarType::Float:
      dropout_kernel<float><<<blocks, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Double:
      dropout_kernel<double><<<blocks, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Half:
      dropout_kernel<Half><<<blocks, kThreads, 0, s>>>(l);
      break;
    case ScalarType::BFloat16:
      dropout_kernel<BFloat16><<<blocks, kThreads, 0, s>>>(l);
      break;
    default:
      throw Error(detail::str_cat("dropout on cuda: expected a floating-point input, but got ", to_string(l.dtype)));
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
