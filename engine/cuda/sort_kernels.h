// engine/cuda/sort_kernels.h — sort's segmented sort on cuda (internal; plain C++, no CUDA types;
// engine/cuda/sort.cu defines it on CUB's DeviceSegmentedSort, a build without nvcc engine/core/cuda_fallback.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

// `segments` segments of n keys each, back to back: each sorted on its own, stably, its int64 values carried along.
// The caller canonicalizes float keys (NaN one positive NaN, -0 as +0) so that the order is the cpu sort's.
struct SegmentedSortLaunch {
  int device = 0;
  ScalarType key_dtype = ScalarType::Float;  // Float, Double or Int64
  int64_t segments = 0, n = 0;
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  const int64_t* values_in = nullptr;
  int64_t* values_out = nullptr;
  const int64_t* offsets = nullptr;  // segments + 1 entries: 0, n, 2n, ...
  bool descending = false;
  void* temp = nullptr;  // temp_bytes of device memory (segmented_sort_temp_bytes)
  size_t temp_bytes = 0;
};
size_t segmented_sort_temp_bytes(const SegmentedSortLaunch& l);
void segmented_sort(const SegmentedSortLaunch& l);

}  // namespace gb::cuda_kernels
