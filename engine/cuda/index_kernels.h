// engine/cuda/index_kernels.h — index_select's and embedding's kernels on cuda, and the accumulation their backward
// runs (internal; plain C++, no CUDA types; engine/cuda/index.cu defines them, a build without nvcc
// engine/core/cuda_fallback.cpp). The kernels check every index they read: one out of [0, size) is reported through
// cuda/device_error.h (the op's name, the index, the dim) and its element is left alone; the host does not wait.
#pragma once

#include <cstdint>

#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

// A tensor seen as (outer, size, inner) around the indexed dim, n indices (int64, on the device).
struct IndexRowsLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t outer = 1, size = 1, n = 0, inner = 1;
  const int64_t* idx = nullptr;
  const char* src = nullptr;
  char* dst = nullptr;
  int64_t skip = -1;  // index_add_rows: rows whose index equals it get nothing (embedding's padding_idx)
  const char* op = "index_select";  // for an index out of range: the op and the dim it indexes
  int64_t dim = 0;
};
// dst (outer, n, inner) [o, i, :] = src (outer, size, inner) [o, idx[i], :], any dtype (moved as bytes).
void index_select_rows(const IndexRowsLaunch& l);
// dst (outer, size, inner) [o, idx[i], :] += src (outer, n, inner) [o, i, :] for every i with idx[i] != skip, dst
// and src float32 or float64 (the entries accumulate 16-bit dtypes in float32); duplicates add up (atomically, in
// no fixed order).
void index_add_rows(const IndexRowsLaunch& l);

// gather / scatter_add over up to kMaxIndexDims dims: the iteration space is the index's shape (idx contiguous
// int64, numel elements), `strides` the contiguous element strides of the tensor indexed along `dim` (gather's
// source, scatter_add's destination); element e's place there is its coordinates with the one along dim replaced
// by idx[e].
constexpr int kMaxIndexDims = 8;
struct GatherLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int ndim = 0, dim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxIndexDims] = {};    // the index's
  int64_t strides[kMaxIndexDims] = {};  // the indexed tensor's (contiguous)
  const int64_t* idx = nullptr;
  const char* src = nullptr;
  char* dst = nullptr;
  const char* op = "gather";  // for an index out of range: the op, and the size of the dim it indexes
  int64_t dim_size = 0;
};
// dst (contiguous, the index's shape) [e] = src [place(e)]; any dtype (moved as bytes).
void gather_nd(const GatherLaunch& l);
// dst [place(e)] += src (contiguous, the index's shape) [e], atomically (in no fixed order); float32/64, float16,
// bfloat16 (each add rounded to the dtype, as the cpu's loop), int32, int64.
void scatter_add_nd(const GatherLaunch& l);

// Checks n int64 indices (contiguous, on the device) against [-size, size) (negative ones count from the end, as
// x.index({t}) allows); the first outside goes to the device's error record (op, the index, dim, size). No wait.
struct IndexRangeLaunch {
  int device = 0;
  const int64_t* idx = nullptr;
  int64_t n = 0, size = 0, dim = 0;
  const char* op = "index";
};
void check_index_range(const IndexRangeLaunch& l);

}  // namespace gb::cuda_kernels
