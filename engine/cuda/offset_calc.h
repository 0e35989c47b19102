// engine/cuda/offset_calc.h — where element i of each operand of an elementwise kernel lives (internal; host and
// device, plain C++17).
//
// The operands of a pointwise kernel share the output's shape; an input broadcast along a dim has stride 0 there.
// make_offset_calc drops size-1 dims and merges neighbouring dims that are contiguous for every operand (a
// contiguous tensor becomes one dim), so get() divides once per remaining dim. Strides are in bytes, so operands
// of different dtypes (a bool mask, a float value) share one calculator.
#pragma once

#include <cstdint>

#include "cuda/hd.h"

namespace gb::cuda_kernels {

constexpr int kMaxDims = 16;      // dims left after merging; a tensor op has at most this many (checked)
constexpr int kMaxOperands = 4;   // the output and up to three inputs

struct OffsetCalc {
  int ndim = 0;
  int nops = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims][kMaxOperands] = {};  // bytes, dim-major

  // off[k] = byte offset of linear element `i` (row-major over sizes) in operand k.
  GB_HD void get(int64_t i, int64_t* off) const {
    if (ndim == 1) {  // contiguous (or merged to one dim): no division
      for (int k = 0; k < nops; ++k) off[k] = i * strides[0][k];
      return;
    }
    for (int k = 0; k < nops; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t idx = i % sizes[d];
      i /= sizes[d];
      for (int k = 0; k < nops; ++k) off[k] += idx * strides[d][k];
    }
  }
};

// sizes[ndim]; strides[k][d] in bytes for operand k < nops. Returns false when more than kMaxDims dims remain after
// merging (the caller copies the operands contiguous first and tries again).
inline bool make_offset_calc(OffsetCalc& c, int ndim, const int64_t* sizes, const int64_t* const* strides, int nops) {
  c = OffsetCalc{};
  c.nops = nops;
  int out = 0;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    if (out > 0) {
      // dim d folds into the previous kept dim when, for every operand, stepping the previous dim once equals
      // stepping d through its whole size.
      bool merge = true;
      for (int k = 0; k < nops; ++k)
        if (c.strides[out - 1][k] != strides[k][d] * sizes[d]) merge = false;
      if (merge) {
        c.sizes[out - 1] *= sizes[d];
        for (int k = 0; k < nops; ++k) c.strides[out - 1][k] = strides[k][d];
        continue;
      }
    }
    if (out == kMaxDims) return false;
    c.sizes[out] = sizes[d];
    for (int k = 0; k < nops; ++k) c.strides[out][k] = strides[k][d];
    ++out;
  }
  c.ndim = out;
  return true;
}

}  // namespace gb::cuda_kernels
