// engine/cuda/index.cu — index_select's row gather and the row accumulation of its (and embedding's) backward
// (cuda/index_kernels.h): one thread per element, grid-strided; the accumulation with atomicAdd, as PyTorch's
// index_add on CUDA.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/index_kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b > 65535 ? 65535 : b);
}

template <typename E>  // an element moved as its bytes
__global__ void select_kernel(IndexRowsLaunch l, int64_t total) {
  const E* src = reinterpret_cast<const E*>(l.src);
  E* dst = reinterpret_cast<E*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % l.inner, i = (e / l.inner) % l.n, o = e / (l.inner * l.n);
    dst[e] = src[(o * l.size + l.idx[i]) * l.inner + j];
  }
}

template <typename T>
__global__ void add_kernel(IndexRowsLaunch l, int64_t total) {
  const T* src = reinterpret_cast<const T*>(l.src);
  T* dst = reinterpret_cast<T*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % l.inner, i = (e / l.inner) % l.n, o = e / (l.inner * l.n);
    const int64_t at = l.idx[i];
    if (at == l.skip) continue;
    atomicAdd(dst + (o * l.size + at) * l.inner + j, src[e]);
  }
}

}  // namespace

void index_select_rows(const IndexRowsLaunch& l) {
  const int64_t total = l.outer * l.n * l.inner;
  if (total == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  switch (element_size(l.dtype)) {
    case 1:
      select_kernel<uint8_t><<<blocks_for(total), kThreads, 0, s>>>(l, total);
      break;
    case 2:
      select_kernel<uint16_t><<<blocks_for(total), kThreads, 0, s>>>(l, total);
      break;
    case 4:
      select_kernel<uint32_t><<<blocks_for(total), kThreads, 0, s>>>(l, total);
      break;
    default:
      select_kernel<uint64_t><<<blocks_for(total), kThreads, 0, s>>>(l, total);
      break;
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

void index_add_rows(const IndexRowsLaunch& l) {
  const int64_t total = l.outer * l.n * l.inner;
  if (total == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  if (l.dtype == ScalarType::Float)
    add_kernel<float><<<blocks_for(total), kThreads, 0, s>>>(l, total);
  else if (l.dtype == ScalarType::Double)
    add_kernel<double><<<blocks_for(total), kThreads, 0, s>>>(l, total);
  else
    throw Error(
        detail::str_cat("index_add on cuda: the kernel accumulates float32 or float64, not ", to_string(l.dtype)));
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
