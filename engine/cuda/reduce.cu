// engine/cuda/reduce.cu — row reductions (cuda/kernels.h's reduce_rows): sum, mean, max, min, prod of each row of a
// contiguous [rows, len] input. A block reduces a row (each thread a strided share, then warp shuffles and one
// shared-memory step); a few long rows are first split over many blocks into partial results, then reduced again.
#include <algorithm>
#include <cstdint>

#include "cuda/check.h"
#include "cuda/kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

// The accumulation type, as the CPU's: double for double, int64 for integers and bool, float otherwise.
template <typename T>
struct Acc {
  using type = float;
};
template <>
struct Acc<double> {
  using type = double;
};
template <>
struct Acc<int32_t> {
  using type = int64_t;
};
template <>
struct Acc<int64_t> {
  using type = int64_t;
};
template <>
struct Acc<bool> {
  using type = int64_t;
};

__device__ float lowest(float) { return __int_as_float(int(0xff800000u)); }  // -inf
__device__ float highest(float) { return __int_as_float(0x7f800000); }       // +inf
__device__ double lowest(double) { return __longlong_as_double((long long)0xfff0000000000000ull); }
__device__ double highest(double) { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ int64_t lowest(int64_t) { return INT64_MIN; }
__device__ int64_t highest(int64_t) { return INT64_MAX; }

template <typename A>
__device__ A identity(ReduceOp op) {
  if (op == ReduceOp::max) return lowest(A());
  if (op == ReduceOp::min) return highest(A());
  if (op == ReduceOp::prod) return A(1);
  return A(0);
}

template <typename A>
__device__ A combine(ReduceOp op, A x, A y) {
  if (op == ReduceOp::max) return x != x ? x : (y != y ? y : (x > y ? x : y));  // NaN wins, as on the CPU
  if (op == ReduceOp::min) return x != x ? x : (y != y ? y : (x < y ? x : y));
  if (op == ReduceOp::prod) return x * y;
  return x + y;
}

template <typename A>
__device__ A block_reduce(ReduceOp op, A v) {
  __shared__ A warp_results[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v = combine(op, v, A(__shfl_down_sync(0xffffffffu, v, o)));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x / 32) ? warp_results[lane] : identity<A>(op);
    for (int o = 16; o > 0; o >>= 1) v = combine(op, v, A(__shfl_down_sync(0xffffffffu, v, o)));
  }
  return v;
}

// Block (x: chunk, y: row) reduces in[row, chunk * chunk_len, ...) into out[row * chunks + chunk]; mean divides by
// `divide` (the row's full length) in the last pass only.
template <typename In, typename A>
__global__ void reduce_kernel(ReduceOp op, const In* in, A* out, int64_t len, int64_t chunk_len, double divide) {
  const int64_t row = blockIdx.y, chunk = blockIdx.x, chunks = gridDim.x;
  const int64_t begin = chunk * chunk_len, end = begin + chunk_len < len ? begin + chunk_len : len;
  const In* r = in + row * len;
  A v = identity<A>(op);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) v = combine(op, v, A(load(r + i)));
  v = block_reduce(op, v);
  if (threadIdx.x == 0) {
    if (divide > 0) v = A(double(v) / divide);
    out[row * chunks + chunk] = v;
  }
}

template <typename In, typename A>
void launch(const ReduceLaunch& l, cudaStream_t s) {
  const ReduceOp op = l.op == ReduceOp::mean ? ReduceOp::sum : l.op;
  const double divide = l.op == ReduceOp::mean ? double(l.len) : 0.0;
  A* out = reinterpret_cast<A*>(l.out);
  const In* in = reinterpret_cast<const In*>(l.in);
  const int64_t chunks = reduce_chunks(l.rows, l.len);
  for (int64_t r0 = 0; r0 < l.rows; r0 += 65535) {
    const int64_t rows = std::min<int64_t>(65535, l.rows - r0);
    if (chunks == 1) {
      reduce_kernel<In, A><<<dim3(1, unsigned(rows)), kThreads, 0, s>>>(op, in + r0 * l.len, out + r0, l.len, l.len,
                                                                        divide);
    } else {  // rows < 256 here, so one pass of this loop
      A* partial = reinterpret_cast<A*>(l.scratch);
      const int64_t chunk_len = (l.len + chunks - 1) / chunks;
      reduce_kernel<In, A><<<dim3(unsigned(chunks), unsigned(rows)), kThreads, 0, s>>>(
          op, in + r0 * l.len, partial, l.len, chunk_len, 0.0);
      reduce_kernel<A, A><<<dim3(1, unsigned(rows)), kThreads, 0, s>>>(op, partial, out + r0, chunks, chunks, divide);
    }
    GB_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

void reduce_rows(const ReduceLaunch& l) {
  if (l.rows == 0) return;
  DeviceGuard g(l.device);
  cudaStream_t s = current_stream(l.device);
  switch (l.in_dtype) {
    case ScalarType::Bool: return launch<bool, int64_t>(l, s);
    case ScalarType::UInt8: return launch<uint8_t, int64_t>(l, s);
    case ScalarType::Int8: return launch<int8_t, int64_t>(l, s);
    case ScalarType::Int16: return launch<int16_t, int64_t>(l, s);
    case ScalarType::Int32: return launch<int32_t, int64_t>(l, s);
    case ScalarType::Int64: return launch<int64_t, int64_t>(l, s);
    case ScalarType::Half: return launch<Half, float>(l, s);
    case ScalarType::BFloat16: return launch<BFloat16, float>(l, s);
    case ScalarType::Float: return launch<float, float>(l, s);
    case ScalarType::Double: return launch<double, double>(l, s);
  }
}

}  // namespace gb::cuda_kernels
