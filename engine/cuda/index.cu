// engine/cuda/index.cu — index_select's row gather and the row accumulation of its (and embedding's) backward,
// gather and scatter_add (cuda/index_kernels.h): one thread per element, grid-strided; the accumulations with
// atomicAdd, as PyTorch's index_add and scatter_add on CUDA.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

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

// Element e's place in the indexed tensor: its coordinates in the index's shape, the one along dim from idx.
__device__ int64_t place(const GatherLaunch& l, int64_t e) {
  int64_t off = 0, rest = e;
  for (int d = l.ndim - 1; d >= 0; --d) {
    const int64_t c = rest % l.sizes[d];
    rest /= l.sizes[d];
    off += (d == l.dim ? l.idx[e] : c) * l.strides[d];
  }
  return off;
}

template <typename E>
__global__ void gather_kernel(GatherLaunch l) {
  const E* src = reinterpret_cast<const E*>(l.src);
  E* dst = reinterpret_cast<E*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < l.numel; e += int64_t(gridDim.x) * blockDim.x)
    dst[e] = src[place(l, e)];
}

__device__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ void atomic_add(__half* p, __half v) { atomicAdd(p, v); }
__device__ void atomic_add(__nv_bfloat16* p, __nv_bfloat16 v) { atomicAdd(p, v); }
__device__ void atomic_add(int32_t* p, int32_t v) { atomicAdd(p, v); }
__device__ void atomic_add(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));  // two's complement
}

template <typename T>
__global__ void scatter_add_kernel(GatherLaunch l) {
  const T* src = reinterpret_cast<const T*>(l.src);
  T* dst = reinterpret_cast<T*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < l.numel; e += int64_t(gridDim.x) * blockDim.x)
    atomic_add(dst + place(l, e), src[e]);
}

}  // namespace

void gather_nd(const GatherLaunch& l) {
  if (l.numel == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  switch (element_size(l.dtype)) {
    case 1:
      gather_kernel<uint8_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l);
      break;
    case 2:
      gather_kernel<uint16_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l);
      break;
    case 4:
      gather_kernel<uint32_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l);
      break;
    default:
      gather_kernel<uint64_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l);
      break;
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

void scatter_add_nd(const GatherLaunch& l) {
  if (l.numel == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  const unsigned b = blocks_for(l.numel);
  switch (l.dtype) {
    case ScalarType::Float:
      scatter_add_kernel<float><<<b, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Double:
      scatter_add_kernel<double><<<b, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Half:
      scatter_add_kernel<__half><<<b, kThreads, 0, s>>>(l);
      break;
    case ScalarType::BFloat16:
      scatter_add_kernel<__nv_bfloat16><<<b, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Int32:
      scatter_add_kernel<int32_t><<<b, kThreads, 0, s>>>(l);
      break;
    case ScalarType::Int64:
      scatter_add_kernel<int64_t><<<b, kThreads, 0, s>>>(l);
      break;
    default:
      throw Error(detail::str_cat("scatter_add on cuda: adds float32/64, float16, bfloat16, int32 and int64, not ",
                                  to_string(l.dtype), "; convert with .to(...) around it"));
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

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
