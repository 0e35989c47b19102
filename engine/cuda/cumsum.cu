// engine/cuda/cumsum.cu — cumsum on cuda (cuda/cumsum_kernels.h): a thread per line walks it in order with a wide
// accumulator, so every element is the cpu loop's value (adjacent threads read adjacent columns: coalesced).
#include <cstdint>

#include "cuda/check.h"
#include "cuda/cumsum_kernels.h"
#include "cuda/pointwise_ops.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

template <typename T, typename Acc>
__global__ void cumsum_kernel(CumsumLaunch l) {
  const T* src = static_cast<const T*>(l.src);
  T* dst = static_cast<T*>(l.dst);
  const int64_t lines = l.outer * l.inner;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < lines; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = k / l.inner, j = k % l.inner;
    Acc acc = 0;
    for (int64_t i = 0; i < l.n; ++i) {
      const int64_t at = (o * l.n + i) * l.inner + j;
      acc += Acc(load(src + at));
      store(dst + at, typename OpMath<T>::type(acc));
    }
  }
}

template <typename T, typename Acc>
void launch(const CumsumLaunch& l, cudaStream_t s) {
  const int64_t lines = l.outer * l.inner;
  const int64_t b = (lines + kThreads - 1) / kThreads;
  cumsum_kernel<T, Acc><<<unsigned(b > 65535 ? 65535 : b < 1 ? 1 : b), kThreads, 0, s>>>(l);
}

}  // namespace

void cumsum(const CumsumLaunch& l) {
  if (l.outer * l.n * l.inner == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  switch (l.dtype) {
    case ScalarType::Float:
      launch<float, double>(l, s);
      break;
    case ScalarType::Double:
      launch<double, double>(l, s);
      break;
    case ScalarType::Half:
      launch<Half, double>(l, s);
      break;
    case ScalarType::BFloat16:
      launch<BFloat16, double>(l, s);
      break;
    case ScalarType::Int64:
      launch<int64_t, int64_t>(l, s);
      break;
    case ScalarType::Int32:
      launch<int32_t, int64_t>(l, s);
      break;
    case ScalarType::Int16:
      launch<int16_t, int64_t>(l, s);
      break;
    case ScalarType::Int8:
      launch<int8_t, int64_t>(l, s);
      break;
    case ScalarType::UInt8:
      launch<uint8_t, int64_t>(l, s);
      break;
    default:
      throw Error(detail::str_cat("cumsum on cuda: no kernel for ", to_string(l.dtype)));
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
