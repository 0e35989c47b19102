// glassbox/ops/sort.h — sorting along a dim: sort, argsort, topk (torch::sort, torch::argsort, torch::topk).
//
//   auto [values, indices] = gb::sort(x, /*dim=*/1, /*descending=*/true);
//   auto [top, where] = x.topk(3);                      // the 3 largest along the last dim, largest first
//
// Order: NaN is larger than every number (last ascending, first descending), as in PyTorch. Ties keep their
// original order (a stable sort, what libtorch's CPU sort does), in both directions; topk picks the earlier of
// equal elements. indices are int64, of the values' shape. Any dtype (bool: false < true).
// Gradients flow from the values to the elements they came from (SortBackward0, TopkBackward0); indices have none.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include "glassbox/core/tensor.h"

namespace gb {

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
// libtorch's overload with `stable`: every sort here is stable, so stable = false or nullopt sorts the same way.
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false);
// The indices of sort(self, dim, descending).
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
// The k largest (largest = true) or smallest elements along dim, 0 <= k <= size of dim. sorted = true returns them
// largest first (smallest first when largest = false); sorted = false returns them in their order along dim (any
// order is allowed by PyTorch's contract; this one is deterministic).
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);

}  // namespace gb
