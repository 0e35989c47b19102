// engine/cuda/reduce.cu — row and column reductions (cuda/kernels.h's reduce_rows, reduce_columns): sum, mean, max,
// min, prod of each row of a contiguous [rows, len] input, or of each column of a contiguous [outer, len, inner] one.
// A block reduces a row (each thread a strided share, then warp shuffles and one shared-memory step); a few long rows
// are first split over many blocks into partial results, then reduced again. A column block gives each lane of a warp
// a column and each warp a share of the rows (coalesced, no transposing copy); few columns split the rows likewise.
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

constexpr int kColumns = 32, kColumnRows = 8;  // a column block: a warp across 32 columns, 8 warps down the len

// Block (x: 32 columns, y: chunk, z: outer) reduces in[o, chunk's rows, columns] into out[(o * chunks + chunk) *
// inner + column]: lane x of every warp owns column x (coalesced loads along a row), warp y takes every 8th row of the
// chunk, and the 8 warps' results are combined in shared memory. Mean divides by `divide` in the last pass only.
template <typename In, typename A>
__global__ void reduce_columns_kernel(ReduceOp op, const In* in, A* out, int64_t len, int64_t inner,
                                      int64_t chunk_len, double divide) {
  __shared__ A part[kColumnRows][kColumns + 1];
  const int64_t o = blockIdx.z, chunk = blockIdx.y, chunks = gridDim.y;
  const int64_t j = int64_t(blockIdx.x) * kColumns + threadIdx.x;
  const int64_t begin = chunk * chunk_len, end = begin + chunk_len < len ? begin + chunk_len : len;
  A v = identity<A>(op);
  if (j < inner) {
    const In* col = in + o * len * inner + j;
    for (int64_t i = begin + threadIdx.y; i < end; i += kColumnRows) v = combine(op, v, A(load(col + i * inner)));
  }
  part[threadIdx.y][threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.y == 0 && j < inner) {
    for (int r = 1; r < kColumnRows; ++r) v = combine(op, v, part[r][threadIdx.x]);
    if (divide > 0) v = A(double(v) / divide);
    out[(o * chunks + chunk) * inner + j] = v;
  }
}

template <typename In, typename A>
void launch_columns(const ColumnReduceLaunch& l, cudaStream_t s) {
  const ReduceOp op = l.op == ReduceOp::mean ? ReduceOp::sum : l.op;
  const double divide = l.op == ReduceOp::mean ? double(l.len) : 0.0;
  A* out = reinterpret_cast<A*>(l.out);
  const In* in = reinterpret_cast<const In*>(l.in);
  const int64_t chunks = column_reduce_chunks(l.outer, l.len, l.inner);
  const unsigned col_blocks = unsigned((l.inner + kColumns - 1) / kColumns);
  const dim3 block(kColumns, kColumnRows);
  for (int64_t o0 = 0; o0 < l.outer; o0 += 65535) {
    const int64_t outer = std::min<int64_t>(65535, l.outer - o0);
    if (chunks == 1) {
      reduce_columns_kernel<In, A><<<dim3(col_blocks, 1, unsigned(outer)), block, 0, s>>>(
          op, in + o0 * l.len * l.inner, out + o0 * l.inner, l.len, l.inner, l.len, divide);
    } else {  // fewer than 256 column blocks here, so one pass of this loop
      A* partial = reinterpret_cast<A*>(l.scratch);
      const int64_t chunk_len = (l.len + chunks - 1) / chunks;
      reduce_columns_kernel<In, A><<<dim3(col_blocks, unsigned(chunks), unsigned(outer)), block, 0, s>>>(
          op, in + o0 * l.len * l.inner, partial, l.len, l.inner, chunk_len, 0.0);
      reduce_columns_kernel<A, A><<<dim3(col_blocks, 1, unsigned(outer)), block, 0, s>>>(
          op, partial, out + o0 * l.inner, chunks, l.inner, chunks, divide);
    }
    GB_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

void reduce_columns(const ColumnReduceLaunch& l) {
  if (l.outer == 0 || l.inner == 0) return;
  DeviceGuard g(l.device);
  cudaStream_t s = current_stream(l.device);
  switch (l.in_dtype) {
    case ScalarType::Bool: return launch_columns<bool, int64_t>(l, s);
    case ScalarType::UInt8: return launch_columns<uint8_t, int64_t>(l, s);
    case ScalarType::Int8: return launch_columns<int8_t, int64_t>(l, s);
    case ScalarType::Int16: return launch_columns<int16_t, int64_t>(l, s);
    case ScalarType::Int32: return launch_columns<int32_t, int64_t>(l, s);
    case ScalarType::Int64: return launch_columns<int64_t, int64_t>(l, s);
    case ScalarType::Half: return launch_columns<Half, float>(l, s);
    case ScalarType::BFloat16: return launch_columns<BFloat16, float>(l, s);
    case ScalarType::Float: return launch_columns<float, float>(l, s);
    case ScalarType::Double: return launch_columns<double, double>(l, s);
  }
}

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
