// engine/cuda/cumsum_kernels.h — cumsum on cuda (internal; plain C++, no CUDA types; engine/cuda/cumsum.cu defines
// it, a build without nvcc engine/core/cuda_fallback.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

// dst = running sums of src along the middle dim of (outer, n, inner), both contiguous and of `dtype` (any numeric
// dtype), accumulated in float64 (int64 for integers) and rounded once per element, as the cpu's loop. Integers
// give the cpu's values exactly; floats its values up to the order of the float64 additions (the rounding to the
// dtype hides it but for rare ties). Three shapes of work:
//   - one line (outer = inner = 1): CUB's device-wide scan (DeviceScan::InclusiveSum), all SMs on the line;
//     `temp` holds cumsum_temp_bytes(l) bytes of device memory (from the caching allocator);
//   - lines that are rows (inner = 1) long enough to fill a block: a block per line, a block-wide scan (BlockScan)
//     per tile of the line with the running total carried to the next;
//   - otherwise a thread per line (o, j) walking it in order (adjacent threads read adjacent columns: coalesced);
//     ops/cumsum.cpp transposes a few long lines across columns to rows first, so they take the block-wide scan.
struct CumsumLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t outer = 1, n = 1, inner = 1;
  const void* src = nullptr;
  void* dst = nullptr;
  void* temp = nullptr;  // cumsum_temp_bytes(l) bytes (none needed when that is 0)
  size_t temp_bytes = 0;
};
// The device scratch the launch needs (0 unless it is a single line): CUB's size query, no work launched.
size_t cumsum_temp_bytes(const CumsumLaunch& l);
void cumsum(const CumsumLaunch& l);

}  // namespace gb::cuda_kernels
