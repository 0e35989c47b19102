// engine/cuda/index_kernels.h — index_select's and embedding's kernels on cuda, and the accumulation their backward
// runs (internal; plain C++, no CUDA types; engine/cuda/index.cu defines them, a build without nvcc
// engine/core/cuda_fallback.cpp). The op entries have checked every index on the host before launching.
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
};
// dst (outer, n, inner) [o, i, :] = src (outer, size, inner) [o, idx[i], :], any dtype (moved as bytes).
void index_select_rows(const IndexRowsLaunch& l);
// dst (outer, size, inner) [o, idx[i], :] += src (outer, n, inner) [o, i, :] for every i with idx[i] != skip, dst
// and src float32 or float64 (the entries accumulate 16-bit dtypes in float32); duplicates add up (atomically, in
// no fixed order).
void index_add_rows(const IndexRowsLaunch& l);

}  // namespace gb::cuda_kernels
