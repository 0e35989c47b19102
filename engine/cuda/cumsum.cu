// engine/cuda/cumsum.cu — cumsum on cuda (cuda/cumsum_kernels.h): one long line on CUB's device-wide scan, many rows
// on a block-wide scan each, columns on a thread each; float64 (int64) accumulators throughout, as the cpu's loop.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <cstdint>
#include <type_traits>

#include "cuda/check.h"
#include "cuda/cumsum_kernels.h"
#include "cuda/pointwise_ops.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;               // per thread and tile of the block-wide scan: tiles of 1024 elements
constexpr int64_t kBlockScanMin = 512;  // rows at least this long take a block each; shorter, a thread each

template <typename T>
using AccOf = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

// element -> accumulator, accumulator -> element (rounded as the thread-per-line kernel stores it)
template <typename T>
struct ToAcc {
  __device__ AccOf<T> operator()(const T& v) const { return AccOf<T>(load(&v)); }
};
template <typename T>
struct FromAcc {
  __device__ T operator()(AccOf<T> a) const {
    T r;
    store(&r, typename OpMath<T>::type(a));
    return r;
  }
};

// A thread per line (o, j): the walk in order.
template <typename T>
__global__ void cumsum_lines(CumsumLaunch l) {
  using Acc = AccOf<T>;
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

// A block per row (inner = 1): tiles of kThreads * kItems scanned block-wide, the tile's total carried on.
template <typename T>
__global__ void cumsum_rows(CumsumLaunch l) {
  using Acc = AccOf<T>;
  using Scan = cub::BlockScan<Acc, kThreads>;
  __shared__ typename Scan::TempStorage scratch;
  const T* src = static_cast<const T*>(l.src);
  T* dst = static_cast<T*>(l.dst);
  for (int64_t row = blockIdx.x; row < l.outer; row += gridDim.x) {
    const T* in = src + row * l.n;
    T* out = dst + row * l.n;
    Acc carry = 0;
    for (int64_t tile = 0; tile < l.n; tile += int64_t(kThreads) * kItems) {
      Acc v[kItems];
      const int64_t first = tile + int64_t(threadIdx.x) * kItems;  // each thread a run of kItems (blocked layout)
      for (int i = 0; i < kItems; ++i) v[i] = first + i < l.n ? Acc(load(in + first + i)) : Acc(0);
      Acc total;
      Scan(scratch).InclusiveSum(v, v, total);
      __syncthreads();  // scratch is reused by the next tile
      for (int i = 0; i < kItems; ++i)
        if (first + i < l.n) store(out + first + i, typename OpMath<T>::type(carry + v[i]));
      carry += total;
    }
  }
}

template <typename T>
cudaError_t device_scan(const CumsumLaunch& l, void* temp, size_t& bytes, cudaStream_t s) {
  auto in = thrust::make_transform_iterator(static_cast<const T*>(l.src), ToAcc<T>{});
  auto out = thrust::make_transform_output_iterator(static_cast<T*>(l.dst), FromAcc<T>{});
  return cub::DeviceScan::InclusiveSum(temp, bytes, in, out, l.n, s);
}

unsigned grid(int64_t work) { return unsigned(work > 65535 ? 65535 : work < 1 ? 1 : work); }

template <typename T>
void launch(const CumsumLaunch& l, cudaStream_t s) {
  if (l.outer == 1 && l.inner == 1) {
    size_t bytes = l.temp_bytes;
    GB_CUDA_CHECK(device_scan<T>(l, l.temp, bytes, s));
  } else if (l.inner == 1 && l.n >= kBlockScanMin) {
    cumsum_rows<T><<<grid(l.outer), kThreads, 0, s>>>(l);
  } else {
    cumsum_lines<T><<<grid((l.outer * l.inner + kThreads - 1) / kThreads), kThreads, 0, s>>>(l);
  }
}

// f<T>() for the launch's dtype.
template <typename F>
auto by_dtype(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Float: return f(float());
    case ScalarType::Double: return f(double());
    case ScalarType::Half: return f(Half());
    case ScalarType::BFloat16: return f(BFloat16());
    case ScalarType::Int64: return f(int64_t());
    case ScalarType::Int32: return f(int32_t());
    case ScalarType::Int16: return f(int16_t());
    case ScalarType::Int8: return f(int8_t());
    case ScalarType::UInt8: return f(uint8_t());
    default: throw Error(detail::str_cat("cumsum on cuda: no kernel for ", to_string(t)));
  }
}

}  // namespace

size_t cumsum_temp_bytes(const CumsumLaunch& l) {
  if (l.outer != 1 || l.inner != 1 || l.n == 0) return 0;
  DeviceGuard guard(l.device);
  size_t bytes = 0;
  by_dtype(l.dtype, [&](auto tag) {
    GB_CUDA_CHECK(device_scan<decltype(tag)>(l, nullptr, bytes, current_stream(l.device)));
    return 0;
  });
  return bytes;
}

void cumsum(const CumsumLaunch& l) {
  if (l.outer * l.n * l.inner == 0) return;
  DeviceGuard guard(l.device);
  cudaStream_t s = current_stream(l.device);
  by_dtype(l.dtype, [&](auto tag) {
    launch<decltype(tag)>(l, s);
    return 0;
  });
  GB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gb::cuda_kernels
