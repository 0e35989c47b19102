// engine/monitor/scan.h — internal: one vectorized pass over a tensor's elements that counts NaN, Inf and exact
// zeros and sums squares (in double, from float partial sums per block) and the largest finite |x|.
// CPU tensors of float32, float64, float16 and bfloat16; anything else (integers, meta, cuda) is not scanned.
#pragma once

#include <cstdint>

#include "glassbox/core/tensor.h"

namespace gb::monitor::detail {

struct ScanResult {
  int64_t n = 0;             // elements scanned
  int64_t nan = 0, inf = 0;  // non-finite elements
  int64_t zeros = 0;         // elements equal to 0 (either sign)
  double sumsq = 0;          // sum of squares (inf or NaN when an element is)
  double max_abs = 0;        // the largest finite |x| (inf when an element is +-inf)
  bool scanned = false;      // false: the tensor's dtype or device is not scanned
  int64_t nonfinite() const { return nan + inf; }
  double norm() const;       // sqrt(sumsq), NaN when an element is NaN
};

// Scans t (a non-contiguous t is scanned through a contiguous copy).
ScanResult scan(const Tensor& t);
// True when t can be scanned cheaply (floating, on the cpu, with elements).
bool scannable(const Tensor& t);

// sum over elements of (cp * p + ca * a / b)^2 (b undefined: 1), in double; the shapes must match p's.
double update_sumsq(const Tensor& p, double cp, const Tensor& a, const Tensor& b, double ca);

}  // namespace gb::monitor::detail
