// engine/ops/nn_util.h — small pieces shared by the nn ops (conv, pool, norm, dropout, loss); internal.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "core/make.h"
#include "glassbox/core/tensor.h"

namespace gb::detail {

// A 2-D hyper-parameter given as one value (used for both dims) or two; `fallback` when empty and allowed.
inline std::array<int64_t, 2> pair_arg(IntArrayRef v, const char* op, const char* what,
                                       std::optional<std::array<int64_t, 2>> fallback = std::nullopt) {
  if (v.empty() && fallback) return *fallback;
  GB_CHECK(v.size() == 1 || v.size() == 2, op, ": ", what,
           " must either be a single int, or a tuple of two ints, but got ", v.size(), " values ", v);
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// The dtype a kernel computes in: double for float64, float for float32 and the 16-bit floats.
inline ScalarType compute_type(ScalarType t) { return t == kDouble ? kDouble : kFloat; }

// t (no autograd history) as a contiguous tensor of dtype `ct`; no copy when it already is one.
inline Tensor raw_contiguous(const Tensor& t, ScalarType ct) {
  Tensor a = shallow_alias(t);
  if (a.scalar_type() != ct) a = a.to(ct);
  return a.is_contiguous() ? a : a.contiguous();
}

// PyTorch's name for a dtype in messages: Float, Double, Half, BFloat16, Long, Int, Bool.
inline const char* torch_type_name(ScalarType t) { return to_string(t); }

}  // namespace gb::detail
