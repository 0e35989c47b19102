// engine/cuda/index.cu — index_select's row gather and the row accumulation of its (and embedding's) backward,
// gather and scatter_add (cuda/index_kernels.h): one thread per element, grid-strided; the accumulations with
// atomicAdd, as PyTorch's index_add and scatter_add on CUDA. Every index read is checked: one out of range goes to
// the device's error record (cuda/device_error.h) and its element is skipped (a gathered one is zero).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/check.h"
#include "cuda/device_error.h"
#include "cuda/index_kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b > 65535 ? 65535 : b);
}

// False (and the first such index of the device recorded) when at is outside [0, size).
__device__ bool in_range(DeviceError* err, const char* op, int64_t dim, int64_t at, int64_t size) {
  if (at >= 0 && at < size) return true;
  record_device_error(err, op, dim, at, size);
  return false;
}

template <typename E>  // an element moved as its bytes
__global__ void select_kernel(IndexRowsLaunch l, int64_t total, DeviceError* err) {
  const E* src = reinterpret_cast<const E*>(l.src);
  E* dst = reinterpret_cast<E*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % l.inner, i = (e / l.inner) % l.n, o = e / (l.inner * l.n);
    const int64_t at = l.idx[i];
    dst[e] = in_range(err, l.op, l.dim, at, l.size) ? src[(o * l.size + at) * l.inner + j] : E(0);
  }
}

template <typename T>
__global__ void add_kernel(IndexRowsLaunch l, int64_t total, DeviceError* err) {
  const T* src = reinterpret_cast<const T*>(l.src);
  T* dst = reinterpret_cast<T*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % l.inner, i = (e / l.inner) % l.n, o = e / (l.inner * l.n);
    const int64_t at = l.idx[i];
    if (!in_range(err, l.op, l.dim, at, l.size) || at == l.skip) continue;
    atomicAdd(dst + (o * l.size + at) * l.inner + j, src[e]);
  }
}

// Element e's place in the indexed tensor: its coordinates in the index's shape, the one along dim from idx (the
// caller has checked idx[e]).
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
__global__ void gather_kernel(GatherLaunch l, DeviceError* err) {
  const E* src = reinterpret_cast<const E*>(l.src);
  E* dst = reinterpret_cast<E*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < l.numel; e += int64_t(gridDim.x) * blockDim.x)
    dst[e] = in_range(err, l.op, l.dim, l.idx[e], l.dim_size) ? src[place(l, e)] : E(0);
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
__global__ void scatter_add_kernel(GatherLaunch l, DeviceError* err) {
  const T* src = reinterpret_cast<const T*>(l.src);
  T* dst = reinterpret_cast<T*>(l.dst);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < l.numel; e += int64_t(gridDim.x) * blockDim.x)
    if (in_range(err, l.op, l.dim, l.idx[e], l.dim_size)) atomic_add(dst + place(l, e), src[e]);
}

__global__ void range_kernel(IndexRangeLaunch l, DeviceError* err) {
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < l.n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = l.idx[e];
    if (v < -l.size || v >= l.size) record_device_error(err, l.op, l.dim, v, l.size);
  }
}

}  // namespace

void check_index_range(const IndexRangeLaunch& l) {
  if (l.n == 0) return;
  raise_device_errors();
  DeviceGuard guard(l.device);
  range_kernel<<<blocks_for(l.n), kThreads, 0, current_stream(l.device)>>>(l, device_error(l.device));
  GB_CUDA_CHECK(cudaGetLastError());
}

void gather_nd(const GatherLaunch& l) {
  if (l.numel == 0) return;
  raise_device_errors();  // an earlier launch's bad index, if its kernel has run by now
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  DeviceError* err = device_error(l.device);
  switch (element_size(l.dtype)) {
    case 1:
      gather_kernel<uint8_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l, err);
      break;
    case 2:
      gather_kernel<uint16_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l, err);
      break;
    case 4:
      gather_kernel<uint32_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l, err);
      break;
    default:
      gather_kernel<uint64_t><<<blocks_for(l.numel), kThreads, 0, s>>>(l, err);
      break;
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

void scatter_add_nd(const GatherLaunch& l) {
  if (l.numel == 0) return;
  raise_device_errors();  // an earlier launch's bad index, if its kernel has run by now
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  DeviceError* err = device_error(l.device);
  const unsigned b = blocks_for(l.numel);
  switch (l.dtype) {
    case ScalarType::Float:
      scatter_add_kernel<float><<<b, kThreads, 0, s>>>(l, err);
      break;
    case ScalarType::Double:
      scatter_add_kernel<double><<<b, kThreads, 0, s>>>(l, err);
      break;
    case ScalarType::Half:
      scatter_add_kernel<__half><<<b, kThreads, 0, s>>>(l, err);
      break;
    case ScalarType::BFloat16:
      scatter_add_kernel<__nv_bfloat16><<<b, kThreads, 0, s>>>(l, err);
      break;
    case ScalarType::Int32:
      scatter_add_kernel<int32_t><<<b, kThreads, 0, s>>>(l, err);
      break;
    case ScalarType::Int64:
      scatter_add_kernel<int64_t><<<b, kThreads, 0, s>>>(l, err);
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
  raise_device_errors();  // an earlier launch's bad index, if its kernel has run by now
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  DeviceError* err = device_error(l.device);
  switch (element_size(l.dtype)) {
    case 1:
      select_kernel<uint8_t><<<blocks_for(total), kThreads, 0, s>>>(l, total, err);
      break;
    case 2:
      select_kernel<uint16_t><<<blocks_for(total), kThreads, 0, s>>>(l, total, err);
      break;
    case 4:
      select_kernel<uint32_t><<<blocks_for(total), kThreads, 0, s>>>(l, total, err);
      break;
    default:
      select_kernel<uint64_t><<<blocks_for(total), kThreads, 0, s>>>(l, total, err);
      break;
  }
  GB_CUDA_CHECK(cudaGetLastError());
}

void index_add_rows(const IndexRowsLaunch& l) {
  const int64_t total = l.outer * l.n * l.inner;
  if (total == 0) return;
  raise_device_errors();  // an earlier launch's bad index, if its kernel has run by now
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  DeviceError* err = device_error(l.device);
  if (l.dtype == ScalarType::Float)
    add_kernel<float><<<blocks_for(total), kThreads, 0, s>>>(l, total, err);
  else if (l.dtype == ScalarType::Double)
    add_kernel<double><<<blocks_for(total), kThreads, 0, s>>>(l, total, err);
  else
    throw Error(
        detail::str_cat("index_add on cuda: the kernel accumulates float32 or float64, not ", to_string(l.dtype)));
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
