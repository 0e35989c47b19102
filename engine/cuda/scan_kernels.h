// engine/cuda/scan_kernels.h — the training monitor's scan on cuda (internal; plain C++, no CUDA types): the
// counts and sums of monitor/scan.h's ScanResult for tensors in device memory, accumulated into slots of a small
// device buffer that the monitor reads back once per step (monitor/deferred.h). engine/cuda/scan.cu defines them;
// a build without nvcc, engine/core/cuda_fallback.cpp.
#pragma once

#include <cstdint>

#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

// One scan's accumulators, zero before the first launch into them.
struct ScanSlot {
  unsigned long long nan = 0, inf = 0, zeros = 0;
  double sumsq = 0;                 // sum of squares in double (NaN/Inf when an element is)
  unsigned long long max_bits = 0;  // the largest finite |x| as a double's bits (non-negative doubles order as bits)
  double first = 0;                 // element 0 (a loss's value)
};

// Up to kMaxScanTensors contiguous floating tensors (float32/64, float16, bfloat16) of one device per launch,
// blockIdx.y the tensor, each into its own slot, on the device's current stream.
constexpr int kMaxScanTensors = 32;
struct ScanLaunch {
  int device = 0;
  int count = 0;
  ScanSlot* slots = nullptr;  // the device buffer (scan_slots_alloc)
  const void* data[kMaxScanTensors] = {};
  int64_t numel[kMaxScanTensors] = {};
  ScalarType dtype[kMaxScanTensors] = {};
  int slot[kMaxScanTensors] = {};
};
void monitor_scan(const ScanLaunch& l);

// A zeroed buffer of n slots in device memory (cudaMalloc: the monitor's own, outside the caching allocator), the
// zeros written before it returns, so a scan on any stream finds them.
ScanSlot* scan_slots_alloc(int device, int n);
void scan_slots_free(int device, ScanSlot* slots) noexcept;
// Waits for the device, copies the first n slots to `host` and zeroes them for reuse.
void scan_slots_read(int device, ScanSlot* slots, int n, ScanSlot* host);

}  // namespace gb::cuda_kernels
