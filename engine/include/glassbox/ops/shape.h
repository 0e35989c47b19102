// glassbox/ops/shape.h — views (sharing storage), joins, splits and index ops.
//
// Views never copy: view/reshape(when possible)/transpose/permute/t/narrow/select/slice/expand/squeeze/
// unsqueeze/flatten return tensors over the same storage; writing through one is seen by all.
// cat/stack copy; split/chunk/unbind return views. Index ops check every index and throw gb::IndexError naming
// the op, the index, and the size of the indexed dim.
#pragma once

#include <optional>
#include <vector>

#include "glassbox/core/tensor.h"

namespace gb {

Tensor view(const Tensor& a, IntArrayRef shape);  // one -1 allowed; needs compatible strides
Tensor reshape(const Tensor& a, IntArrayRef shape);  // a view when strides allow, else a copy
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& a, IntArrayRef dims);
Tensor t(const Tensor& a);  // 2-D transpose (0-D and 1-D returned as is)
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1);
Tensor expand(const Tensor& a, IntArrayRef sizes);  // -1 keeps a dim; new leading dims allowed
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& a, int64_t dim, IntArrayRef sizes);
// A view with explicit sizes, strides and storage offset (default: a's). Its gradient assumes the view does not
// overlap itself except along stride-0 (expanded) dims and lies inside a's memory, as the views above do.
Tensor as_strided(const Tensor& a, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt);

// Copies (not views; PyTorch has no negative strides): flip reverses the order along each of dims (each at most
// once); repeat tiles a `repeats` times along each dim (repeats.size() >= a.dim(); extra leading repeats add
// dims): a (2, 3) .repeat({2, 1, 2}) is (2, 2, 6). Both have backward (FlipBackward0, RepeatBackward0).
Tensor flip(const Tensor& a, IntArrayRef dims);
Tensor repeat(const Tensor& a, IntArrayRef repeats);
// Shifts elements along dims, wrapping around (torch::roll); no dims: over the flattened tensor, shape kept.
// Gradient: rolled back.
Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims = {});
// The upper (triu: j - i >= diagonal) or lower (tril: j - i <= diagonal) triangle of the last two dims, zeros
// elsewhere. Gradient: the same triangle of the gradient.
Tensor triu(const Tensor& a, int64_t diagonal = 0);
Tensor tril(const Tensor& a, int64_t diagonal = 0);
Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& a, IntArrayRef sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& a, int64_t dim = 0);

// index (int64 or int32, 1-D): out = a taken at `index` along dim.
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
// out[i][j] = a[index[i][j]][j] for dim 0 (and likewise for other dims); index has a's number of dims.
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);
// out = a, then out[index[i][j]][j] += src[i][j] for dim 0 (and likewise).
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
// Rows of weight (V,D) picked by indices (any shape) -> (*indices, D). padding_idx rows get no gradient.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
// The elements of a where mask (bool; a and mask broadcast) is true, as a 1-D tensor in row-major order of the
// broadcast shape. Its size depends on the mask's values, so meta tensors are refused. Gradient: scattered back
// (MaskedSelectBackward0), summed over broadcast dims.
Tensor masked_select(const Tensor& a, const Tensor& mask);
// The coordinates of the nonzero (true) elements of a, one row each, in row-major order: (n, a.dim()) int64. Its
// size depends on the values, so meta tensors are refused. Not differentiable (an index).
Tensor nonzero(const Tensor& a);

namespace indexing {
struct NoneIndex {};
struct EllipsisIndex {};
constexpr NoneIndex None{};
constexpr EllipsisIndex Ellipsis{};

// A slice bound: an integer, or None (open), as in Slice(None, -1).
struct SliceBound {
  SliceBound(int64_t v) : value(v) {}  // NOLINT
  SliceBound(int v) : value(v) {}  // NOLINT
  SliceBound(NoneIndex) {}  // NOLINT
  SliceBound(std::nullopt_t) {}  // NOLINT
  SliceBound(std::optional<int64_t> v) : value(v) {}  // NOLINT
  std::optional<int64_t> value;
};

// Python's a:b:c. Missing bounds are open.
struct Slice {
  Slice(SliceBound start = None, SliceBound stop = None, int64_t step = 1)
      : start(start.value), stop(stop.value), step(step) {}
  std::optional<int64_t> start, stop;
  int64_t step;
};

class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Tensor };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}  // NOLINT
  TensorIndex(NoneIndex) : kind_(Kind::None) {}  // NOLINT
  TensorIndex(EllipsisIndex) : kind_(Kind::Ellipsis) {}  // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}  // NOLINT (libtorch's None)
  TensorIndex(gb::Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT (integers or a bool mask)
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }
  const gb::Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  gb::Tensor tensor_;
};
}  // namespace indexing

}  // namespace gb
