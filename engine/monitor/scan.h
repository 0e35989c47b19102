// engine/monitor/scan.h — internal: one vectorized pass over a tensor's elements that counts NaN, Inf and exact
// zeros and sums squares (in double, from float partial sums per block) and the largest finite |x|.
// CPU tensors of float32, float64, float16 and bfloat16; anything else (integers, meta, cuda) is not scanned.
#pragma once

#include <cmath>
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
  double first = 0;          // element 0 (deferred scans only: deferred.h)
  int64_t nonfinite() const { return nan + inf; }
  double norm() const;  // sqrt(sumsq), NaN when an element is NaN
};

// Scans t (a non-contiguous t is scanned through a contiguous copy).
ScanResult scan(const Tensor& t);
// True when t can be scanned cheaply (floating, on the cpu, with elements).
bool scannable(const Tensor& t);
// False when t holds a NaN or an Inf: the cheap question (one integer max per 8 floats, no sums), asked of every
// forward output and every backward gradient; scan() answers the rest only when it is false. True for what is not
// scannable.
bool all_finite(const Tensor& t);
// The exact zeros of t and whether it is all finite, in one pass cheaper than scan() (a ReLU's output: dead units).
struct ZeroCount {
  int64_t n = 0, zeros = 0;
  bool finite = true;
};
ZeroCount count_zeros(const Tensor& t);

// The update u = cp * p + w, w = ca * a / b (b undefined: 1), that an optimizer applies to p: cp * p is what it has
// already done to p (AdamW's decay: p holds the decayed value), w what it is about to add. One pass over p, a, b
// gives sum(u^2) (the update's norm squared) and sum(p^2), which gives the parameter's norm before the update
// (p before cp * p was done to it) without reading it again. In double; the shapes must match p's.
struct UpdateSums {
  double uu = 0, pp = 0;
  double cp = 0;
  double norm() const { return std::sqrt(uu); }
  double param_norm_before() const;  // |(1 - cp) p|
};
UpdateSums update_sums(const Tensor& p, double cp, const Tensor& a, const Tensor& b, double ca);

}  // namespace gb::monitor::detail
