// engine/ops/reduce_util.h — shared pieces of the reduction ops (internal).
#pragma once

#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::detail {

// sizes with the masked dims removed (or kept as 1 when keepdim).
std::vector<int64_t> reduced_shape(IntArrayRef sizes, const std::vector<bool>& mask, bool keepdim);
// Puts back, as size-1 dims, the dims a reduction without keepdim removed, so g broadcasts against the input.
Tensor unsqueeze_reduced(const Tensor& g, const std::vector<bool>& mask, bool keepdim);
// Sum of a over the masked dims into out_dtype (accumulating in float/double/int64). No autograd.
Tensor sum_kernel(const Tensor& a, const std::vector<bool>& mask, bool keepdim, ScalarType out_dtype);

}  // namespace gb::detail
