// engine/cuda/pointwise.cu — the elementwise kernels (cuda/kernels.h's pointwise and copy) and the host<->device
// copies. One kernel per dtype (per dtype pair for copy), a grid-stride loop over the elements, each element's
// operands found by cuda/offset_calc.h and computed by cuda/pointwise_ops.h, the code the CPU tests run; contiguous
// aligned operands of one dtype take a second kernel that moves a 16-byte word per thread (run_vector).
#include <algorithm>
#include <type_traits>

#include "cuda/check.h"
#include "cuda/device_error.h"
#include "cuda/kernels.h"
#include "glassbox/core/cuda.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

struct Ptrs {
  char* data[kMaxOperands];
};

// Enough blocks to fill the device several times over; the grid-stride loop covers the rest.
unsigned blocks_for(int64_t numel) {
  return unsigned(std::min<int64_t>((numel + kThreads - 1) / kThreads, int64_t(1) << 20));
}

template <typename T>
__global__ void pointwise_kernel(PwArgs a, int64_t numel, OffsetCalc calc, Ptrs p) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    int64_t off[kMaxOperands];
    calc.get(i, off);
    char* ptr[kMaxOperands];
    for (int k = 0; k < calc.nops; ++k) ptr[k] = p.data[k] + off[k];
    run_element<T>(a, ptr);
  }
}

// Every operand contiguous, of dtype T and 16-byte aligned (pw_vector_launch): a thread per 16-byte word of the
// output (run_vector), then the elements after the last whole word one per thread.
template <typename T>
__global__ void pointwise_vec_kernel(PwArgs a, int64_t numel, Ptrs p) {
  const int64_t words = numel / PwVec<T>::kSize;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t w = first; w < words; w += step) run_vector<T>(a, p.data, w);
  for (int64_t i = words * PwVec<T>::kSize + first; i < numel; i += step) {
    char* ptr[kMaxOperands];
    for (int k = 0; k < kMaxOperands; ++k) ptr[k] = p.data[k] ? p.data[k] + i * int64_t(sizeof(T)) : nullptr;
    run_element<T>(a, ptr);
  }
}

// The source's dtype is a per-launch switch (uniform across threads), so nvcc compiles 10 copy kernels, not 100.
template <typename D, typename S>
__device__ void convert_from(D* dst, const char* src) {
  convert(dst, reinterpret_cast<const S*>(src));
}

template <typename D>
__global__ void copy_kernel(int64_t numel, OffsetCalc calc, char* dst, const char* src, ScalarType src_dtype) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    int64_t off[kMaxOperands];
    calc.get(i, off);
    D* d = reinterpret_cast<D*>(dst + off[0]);
    const char* s = src + off[1];
    switch (src_dtype) {
      case ScalarType::Bool: convert_from<D, bool>(d, s); break;
      case ScalarType::UInt8: convert_from<D, uint8_t>(d, s); break;
      case ScalarType::Int8: convert_from<D, int8_t>(d, s); break;
      case ScalarType::Int16: convert_from<D, int16_t>(d, s); break;
      case ScalarType::Int32: convert_from<D, int32_t>(d, s); break;
      case ScalarType::Int64: convert_from<D, int64_t>(d, s); break;
      case ScalarType::Half: convert_from<D, Half>(d, s); break;
      case ScalarType::BFloat16: convert_from<D, BFloat16>(d, s); break;
      case ScalarType::Float: convert_from<D, float>(d, s); break;
      case ScalarType::Double: convert_from<D, double>(d, s); break;
    }
  }
}

// f(type_tag) with the C++ type of a dtype.
template <typename T>
struct Tag {
  using type = T;
};
template <typename F>
void with_type(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Bool: f(Tag<bool>{}); return;
    case ScalarType::UInt8: f(Tag<uint8_t>{}); return;
    case ScalarType::Int8: f(Tag<int8_t>{}); return;
    case ScalarType::Int16: f(Tag<int16_t>{}); return;
    case ScalarType::Int32: f(Tag<int32_t>{}); return;
    case ScalarType::Int64: f(Tag<int64_t>{}); return;
    case ScalarType::Half: f(Tag<Half>{}); return;
    case ScalarType::BFloat16: f(Tag<BFloat16>{}); return;
    case ScalarType::Float: f(Tag<float>{}); return;
    case ScalarType::Double: f(Tag<double>{}); return;
  }
  throw Error("cuda kernels: unknown dtype");
}

}  // namespace

void pointwise(const PointwiseLaunch& l) {
  GB_CHECK(l.args.op != Pw::none, "cuda pointwise: no op given (an op entry launched without its code)");
  GB_CHECK(l.dtype != ScalarType::Bool || l.args.op == Pw::fill || l.args.op == Pw::where || l.args.op == Pw::eq ||
               l.args.op == Pw::ne || l.args.op == Pw::eq_scalar || l.args.op == Pw::ne_scalar,
           "cuda pointwise: op ", int(l.args.op), " has no bool kernel (the op entry must convert bool first)");
  GB_CHECK(!pw_floating_only(l.args.op) || is_floating_point(l.dtype), "cuda pointwise: op ", int(l.args.op),
           " needs a floating dtype, got ", to_string(l.dtype));
  if (l.numel == 0) return;
  DeviceGuard g(l.device);
  Ptrs p{};
  for (int k = 0; k < kMaxOperands; ++k) p.data[k] = l.data[k];
  cudaStream_t s = current_stream(l.device);
  int64_t dim0_strides[kMaxOperands] = {};
  for (int k = 0; k < l.calc.nops; ++k) dim0_strides[k] = l.calc.strides[0][k];
  const bool vec = pw_vector_launch(l.args.op, l.dtype == ScalarType::Bool, element_size(l.dtype), l.calc.ndim,
                                    l.calc.nops, dim0_strides, l.data);
  with_type(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same<T, bool>::value) {
      if (vec) {
        const int64_t words = l.numel / PwVec<T>::kSize;
        pointwise_vec_kernel<T><<<blocks_for(words > 0 ? words : 1), kThreads, 0, s>>>(l.args, l.numel, p);
        return;
      }
    }
    pointwise_kernel<T><<<blocks_for(l.numel), kThreads, 0, s>>>(l.args, l.numel, l.calc, p);
  });
  GB_CUDA_CHECK(cudaGetLastError());
}

void copy(const CopyLaunch& l) {
  if (l.numel == 0) return;
  DeviceGuard g(l.device);
  cudaStream_t s = current_stream(l.device);
  with_type(l.dst_dtype, [&](auto tag) {
    using D = typename decltype(tag)::type;
    copy_kernel<D><<<blocks_for(l.numel), kThreads, 0, s>>>(l.numel, l.calc, l.dst, l.src, l.src_dtype);
  });
  GB_CUDA_CHECK(cudaGetLastError());
}

void memcpy(void* dst, int dst_device, const void* src, int src_device, size_t nbytes, CopyKind kind, bool wait) {
  if (nbytes == 0) return;
  const int device = kind == CopyKind::device_to_host ? src_device : dst_device;
  DeviceGuard g(device);
  cudaStream_t s = current_stream(device);
  switch (kind) {
    case CopyKind::host_to_device:
      GB_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, s));
      break;
    case CopyKind::device_to_host:
      GB_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, s));
      break;
    case CopyKind::device_to_device:
      if (src_device == dst_device) {
        GB_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, s));
      } else {
        // The source's stream may still be writing it: the copy waits for the work queued there so far.
        cudaEvent_t ready = nullptr;
        {
          DeviceGuard gs(src_device);
          GB_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
          GB_CUDA_CHECK(cudaEventRecord(ready, current_stream(src_device)));
        }
        GB_CUDA_CHECK(cudaStreamWaitEvent(s, ready, 0));
        GB_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, nbytes, s));
        GB_CUDA_CHECK(cudaEventDestroy(ready));  // released once the wait is done; the wait is already queued
        // and the source's stream waits for the copy: what it runs next (a write to the source, or a block the
        // caller freed handed out again) must not overtake the read
        cudaEvent_t copied = nullptr;
        GB_CUDA_CHECK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
        GB_CUDA_CHECK(cudaEventRecord(copied, s));
        {
          DeviceGuard gs(src_device);
          GB_CUDA_CHECK(cudaStreamWaitEvent(current_stream(src_device), copied, 0));
        }
        GB_CUDA_CHECK(cudaEventDestroy(copied));
      }
      break;
  }
  if (wait) {
    GB_CUDA_CHECK(cudaStreamSynchronize(s));
    raise_device_errors();  // what the kernels found in their indices, now that the host has waited
  }
}

}  // namespace gb::cuda_kernels
