// engine/ops/advanced_index.h — Tensor::index and index_put_ when an index is a tensor (internal; view.cpp calls
// these when any TensorIndex holds one).
//
// PyTorch's advanced indexing: an integer tensor picks positions along its dim (negative ones counted from the end),
// a bool (or uint8) mask of k dims stands for the k index tensors of its nonzero() positions. All index tensors
// broadcast to one shape B; the result holds, for each position of B, the sub-tensor the indices name. Where the
// tensor-indexed dims are next to each other, B takes their place in the result; otherwise B comes first (numpy's
// rule). Integers, slices, None and ... around them are applied first, as views.
//
// index() is differentiable (composed of index_select and views, so its backward accumulates into the picked
// positions). index_put_ writes values (broadcast to what index() would return) or a number into those positions of
// self, through autograd's in-place copy: repeated positions keep the last value, or add up with accumulate=true.
#pragma once

#include <optional>

#include "glassbox/core/array_ref.h"
#include "glassbox/core/scalar.h"
#include "glassbox/core/tensor.h"
#include "glassbox/ops/shape.h"

namespace gb::detail {

Tensor index_with_tensors(const Tensor& self, ArrayRef<indexing::TensorIndex> indices);
// Exactly one of values and value is given.
void index_put_with_tensors(const Tensor& self, ArrayRef<indexing::TensorIndex> indices, const Tensor* values,
                            const Scalar* value, bool accumulate);

}  // namespace gb::detail
