// engine/ops/view.cpp — views that share storage (view, reshape, transpose, permute, t, narrow, select, slice,
// expand, squeeze, unsqueeze, flatten, unflatten, index, as_strided) with their backward formulas. Each view
// records its root base (autograd::track_view) so that in-place ops on it can rewrite the base's history.
// Every view op that records a node opens its op scope (detail::OpScope) first; the composites (t, narrow, flatten,
// unflatten, index) are made of them and open none.
#include <numeric>

#include "autograd/record.h"
#include "autograd/views.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "ops/advanced_index.h"
#include "ops/inplace.h"

namespace gb {
namespace {

DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector out = shape;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      GB_CHECK(infer < 0, op, ": only one dimension can be inferred (shape ", shape, ")");
      infer = int64_t(i);
    } else {
      GB_CHECK(out[i] >= 0, op, ": invalid shape dimension ", out[i], " in ", shape);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    GB_CHECK(known != 0 && numel % known == 0, "shape '", shape, "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    GB_CHECK(known == numel, "shape '", shape, "' is invalid for input of size ", numel);
  }
  return out;
}

// PyTorch's computeStride: the strides that let `newshape` view memory laid out as (oldshape, oldstride), or none.
std::optional<DimVector> compute_stride(IntArrayRef oldshape, IntArrayRef oldstride, IntArrayRef newshape) {
  DimVector newstride(newshape.size(), 0);
  int64_t numel = detail::numel_of(oldshape);
  if (oldshape.empty()) return DimVector(newshape.size(), 1);
  if (numel == 0 && oldshape == newshape) return DimVector(oldstride);
  if (numel == 0) return detail::contiguous_strides(newshape);
  int64_t view_d = int64_t(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.empty() ? 1 : oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = int64_t(oldshape.size()) - 1; tensor_d >= 0; tensor_d--) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

Tensor record_reshape_back(Tensor out, const Tensor& a, const char* name) {
  detail::op_output(out);  // the calling view op's result
  if (autograd::needs_grad(a))
    autograd::record(name, {a}, out, {}, [s = DimVector(a.sizes())](autograd::BackwardContext& c) {
      return variable_list{c.grad().reshape(s)};
    });
  return out;
}

// The gradient of a view that picks part of the input: zeros of the input's shape with g written into the part
// picked by `pick` (a view function). Differentiable itself (its backward is `pick`), for double backward.
template <typename Pick>
Tensor embed_grad(const Tensor& g, IntArrayRef input_sizes, const char* op, const char* name,
                  Pick pick) {
  detail::OpScope op_scope(op, {g});  // runs in backward: slice_backward, select_backward
  Tensor out = zeros(input_sizes, g.options());
  {
    NoGradGuard ng;
    detail::copy_into(pick(out), g);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(g))
    autograd::record(name, {g}, out, {},
                     [pick](autograd::BackwardContext& c) { return variable_list{pick(c.grad()).clone()}; });
  return out;
}

// A view of a made by a view op: autograd tracks its base (in-place ops on it rewrite the base's history).
Tensor make_view_of(const Tensor& a, DimVector sizes, DimVector strides, int64_t offset) {
  Tensor out = detail::make_view(a, std::move(sizes), std::move(strides), offset);
  autograd::track_view(out, a);
  return out;
}

}  // namespace

Tensor as_strided(const Tensor& a, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  detail::OpScope op_scope("as_strided", {a});
  detail::check_defined(a, "as_strided");
  GB_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape: as_strided got sizes ", size,
           " and strides ", stride);
  int64_t offset = storage_offset.value_or(a.storage_offset());
  int64_t last = offset;
  bool empty = false;
  for (size_t d = 0; d < size.size(); ++d) {
    GB_CHECK(size[d] >= 0 && stride[d] >= 0, "as_strided: negative sizes or strides are not supported (sizes ", size,
             ", strides ", stride, ")");
    if (size[d] == 0) empty = true;
    last += (size[d] - 1) * stride[d];
  }
  int64_t have = a.storage()->nbytes / a.element_size();
  GB_CHECK(offset >= 0 && (empty || last < have), "setStorage: sizes ", size, ", strides ", stride, ", storage offset ",
           offset, ", and itemsize ", a.element_size(), " requiring a storage size of ", (last + 1) * a.element_size(),
           " are out of bounds for storage of size ", a.storage()->nbytes);
  Tensor out = make_view_of(a, size, stride, offset);
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("AsStridedBackward0", {a}, out, {},
                     [geo = autograd::geometry_of(a, out)](autograd::BackwardContext& c) {
                       return variable_list{autograd::strided_embed(c.grad(), geo)};
                     });
  return out;
}

Tensor view(const Tensor& a, IntArrayRef shape) {
  detail::OpScope op_scope("view", {a});
  detail::check_defined(a, "view");
  auto sizes = infer_size(shape, a.numel(), "view");
  auto strides = compute_stride(a.sizes(), a.strides(), sizes);
  GB_CHECK(strides.has_value(),
           "view size is not compatible with input tensor's size and stride (at least one dimension "
           "spans across two contiguous subspaces): input ",
           a.sizes(), " with strides ", a.strides(), " viewed as ", IntArrayRef(sizes), ". Use .reshape(...) instead.");
  Tensor out = make_view_of(a, sizes, std::move(*strides), a.storage_offset());
  return record_reshape_back(out, a, "ViewBackward0");
}

Tensor reshape(const Tensor& a, IntArrayRef shape) {
  detail::OpScope op_scope("reshape", {a});
  detail::check_defined(a, "reshape");
  auto sizes = infer_size(shape, a.numel(), "reshape");
  if (auto strides = compute_stride(a.sizes(), a.strides(), sizes)) {
    Tensor out = make_view_of(a, sizes, std::move(*strides), a.storage_offset());
    return record_reshape_back(out, a, "ViewBackward0");
  }
  Tensor out = view(a.clone(), sizes);
  op_scope.set_output(out);
  return out;
}

Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) {
  detail::OpScope op_scope("transpose", {a});
  detail::check_defined(a, "transpose");
  int64_t n = a.dim();
  d0 = detail::wrap_dim(d0, n, "transpose");
  d1 = detail::wrap_dim(d1, n, "transpose");
  if (n == 0) {
    Tensor out = make_view_of(a, {}, {}, a.storage_offset());
    op_scope.set_output(out);
    return out;
  }
  DimVector sizes = a.sizes(), strides = a.strides();
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  Tensor out = make_view_of(a, sizes, strides, a.storage_offset());
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("TransposeBackward0", {a}, out, {},
                     [d0, d1](autograd::BackwardContext& c) { return variable_list{c.grad().transpose(d0, d1)}; });
  return out;
}

Tensor permute(const Tensor& a, IntArrayRef dims) {
  detail::OpScope op_scope("permute", {a});
  detail::check_defined(a, "permute");
  int64_t n = a.dim();
  GB_CHECK(int64_t(dims.size()) == n,
           "permute(sparse_coo): number of dimensions in the tensor input does not match the "
           "length of the desired ordering of dimensions i.e. input.dim() = ",
           n, " is not equal to len(dims) = ", dims.size());
  DimVector sizes(n, 0), strides(n, 0), inverse(n, 0);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = detail::wrap_dim(dims[i], n, "permute");
    GB_CHECK(!seen[d], "permute(): duplicate dims are not allowed (dims ", dims, ")");
    seen[d] = true;
    sizes[i] = a.size(d);
    strides[i] = a.stride(d);
    inverse[d] = i;
  }
  Tensor out = make_view_of(a, sizes, strides, a.storage_offset());
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("PermuteBackward0", {a}, out, {},
                     [inverse](autograd::BackwardContext& c) { return variable_list{c.grad().permute(inverse)}; });
  return out;
}

Tensor t(const Tensor& a) {
  detail::check_defined(a, "t");
  GB_CHECK(a.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", a.dim(), "D (shape ", a.sizes(),
           "); use transpose(dim0, dim1) or permute for more dims");
  if (a.dim() < 2) return make_view_of(a, a.sizes(), a.strides(), a.storage_offset());
  return transpose(a, 0, 1);
}

Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt,
             int64_t step) {
  detail::OpScope op_scope("slice", {a});
  detail::check_defined(a, "slice");
  GB_CHECK(a.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  GB_CHECK(step > 0, "slice step must be positive, got ", step);
  dim = detail::wrap_dim(dim, a.dim(), "slice");
  int64_t size = a.size(dim);
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(size);
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  int64_t len = (end - start + step - 1) / step;
  DimVector sizes = a.sizes(), strides = a.strides();
  int64_t offset = a.storage_offset() + start * strides[dim];
  sizes[dim] = len;
  strides[dim] *= step;
  Tensor out = make_view_of(a, sizes, strides, offset);
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record(
        "SliceBackward0", {a}, out, {},
        [s = DimVector(a.sizes()), dim, start, end, step](autograd::BackwardContext& c) {
          return variable_list{embed_grad(c.grad(), s, "slice_backward", "SliceBackwardBackward0",
                                          [=](const Tensor& t) { return t.slice(dim, start, end, step); })};
        });
  return out;
}

Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  detail::check_defined(a, "narrow");
  GB_CHECK(a.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  dim = detail::wrap_dim(dim, a.dim(), "narrow");
  int64_t size = a.size(dim);
  GB_CHECK_INDEX(start >= -size && start <= size, "start out of range (expected to be in range of [", -size, ", ", size,
                 "], but got ", start, ")");
  if (start < 0) start += size;
  GB_CHECK(length >= 0 && start + length <= size, "start (", start, ") + length (", length,
           ") exceeds dimension size (", size, ").");
  return slice(a, dim, start, start + length, 1);
}

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  detail::OpScope op_scope("select", {a});
  detail::check_defined(a, "select");
  GB_CHECK_INDEX(a.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = detail::wrap_dim(dim, a.dim(), "select");
  int64_t size = a.size(dim);
  GB_CHECK_INDEX(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                 a.sizes(), " at dimension ", dim);
  if (index < 0) index += size;
  DimVector sizes = a.sizes(), strides = a.strides();
  int64_t offset = a.storage_offset() + index * strides[dim];
  sizes.erase_at(size_t(dim));
  strides.erase_at(size_t(dim));
  Tensor out = make_view_of(a, sizes, strides, offset);
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("SelectBackward0", {a}, out, {},
                     [s = DimVector(a.sizes()), dim, index](autograd::BackwardContext& c) {
                       return variable_list{embed_grad(c.grad(), s, "select_backward", "SelectBackwardBackward0",
                                                       [=](const Tensor& t) { return t.select(dim, index); })};
                     });
  return out;
}

Tensor expand(const Tensor& a, IntArrayRef sizes_in) {
  detail::OpScope op_scope("expand", {a});
  detail::check_defined(a, "expand");
  int64_t n = int64_t(sizes_in.size()), ad = a.dim();
  GB_CHECK(n >= ad, "expand(", a.toString(), "{", a.sizes(), "}, size=", sizes_in, "): the number of sizes provided (",
           n, ") must be greater or equal to the number of dimensions in the tensor (", ad, ")");
  DimVector sizes(n, 0), strides(n, 0);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t off = i - (n - ad);
    int64_t want = sizes_in[i];
    if (off >= 0) {
      int64_t have = a.size(off);
      if (want == -1) want = have;
      GB_CHECK(have == want || have == 1, "The expanded size of the tensor (", want, ") must match the existing size (",
               have, ") at non-singleton dimension ", i, ".  Target sizes: ", sizes_in, ".  Tensor sizes: ", a.sizes());
      sizes[i] = want;
      strides[i] = have == want ? a.stride(off) : 0;
    } else {
      GB_CHECK(want >= 0, "The expanded size of the tensor (", want,
               ") isn't allowed in a leading, non-existing dimension ", i);
      sizes[i] = want;
      strides[i] = 0;
    }
  }
  Tensor out = make_view_of(a, sizes, strides, a.storage_offset());
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("ExpandBackward0", {a}, out, {}, [s = DimVector(a.sizes())](autograd::BackwardContext& c) {
      return variable_list{sum_to(c.grad(), s)};
    });
  return out;
}

Tensor squeeze(const Tensor& a) {
  detail::OpScope op_scope("squeeze", {a});
  detail::check_defined(a, "squeeze");
  DimVector sizes, strides;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.size(d) != 1) {
      sizes.push_back(a.size(d));
      strides.push_back(a.stride(d));
    }
  return record_reshape_back(make_view_of(a, sizes, strides, a.storage_offset()), a, "SqueezeBackward0");
}

Tensor squeeze(const Tensor& a, int64_t dim) {
  detail::OpScope op_scope("squeeze", {a});
  detail::check_defined(a, "squeeze");
  dim = detail::wrap_dim(dim, a.dim(), "squeeze");
  DimVector sizes = a.sizes(), strides = a.strides();
  if (a.dim() > 0 && sizes[dim] == 1) {
    sizes.erase_at(size_t(dim));
    strides.erase_at(size_t(dim));
  }
  return record_reshape_back(make_view_of(a, sizes, strides, a.storage_offset()), a, "SqueezeBackward1");
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  detail::OpScope op_scope("unsqueeze", {a});
  detail::check_defined(a, "unsqueeze");
  dim = detail::wrap_dim(dim, a.dim() + 1, "unsqueeze");
  DimVector sizes = a.sizes(), strides = a.strides();
  int64_t st = dim < a.dim() ? sizes[dim] * strides[dim] : 1;
  sizes.insert_at(size_t(dim), 1);
  strides.insert_at(size_t(dim), st);
  return record_reshape_back(make_view_of(a, sizes, strides, a.storage_offset()), a, "UnsqueezeBackward0");
}

Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  detail::check_defined(a, "flatten");
  if (a.dim() == 0) return reshape(a, {1});
  start_dim = detail::wrap_dim(start_dim, a.dim(), "flatten");
  end_dim = detail::wrap_dim(end_dim, a.dim(), "flatten");
  GB_CHECK(start_dim <= end_dim, "flatten() has invalid args: start_dim (", start_dim, ") cannot come after end_dim (",
           end_dim, ")");
  DimVector sizes;
  for (int64_t d = 0; d < start_dim; ++d) sizes.push_back(a.size(d));
  int64_t m = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) m *= a.size(d);
  sizes.push_back(m);
  for (int64_t d = end_dim + 1; d < a.dim(); ++d) sizes.push_back(a.size(d));
  return reshape(a, sizes);
}

Tensor unflatten(const Tensor& a, int64_t dim, IntArrayRef sizes_in) {
  detail::check_defined(a, "unflatten");
  dim = detail::wrap_dim(dim, a.dim(), "unflatten");
  auto inner = infer_size(sizes_in, a.size(dim), "unflatten");
  DimVector sizes;
  for (int64_t d = 0; d < dim; ++d) sizes.push_back(a.size(d));
  for (int64_t s : inner) sizes.push_back(s);
  for (int64_t d = dim + 1; d < a.dim(); ++d) sizes.push_back(a.size(d));
  return view(a, sizes);
}

// ---- Tensor::index with integers, slices, None and Ellipsis (tensor indices: ops/advanced_index.cpp) ----

namespace {
bool has_tensor_index(ArrayRef<indexing::TensorIndex> indices) {
  for (const auto& ix : indices)
    if (ix.kind() == indexing::TensorIndex::Kind::Tensor) return true;
  return false;
}
}  // namespace

Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& rhs) const {
  Tensor& self = const_cast<Tensor&>(*this);
  if (has_tensor_index(indices)) detail::index_put_with_tensors(self, indices, &rhs, nullptr, false);
  else index(indices).copy_(rhs);
  return self;
}

Tensor Tensor::index_put(ArrayRef<indexing::TensorIndex> indices, const Tensor& rhs) const {
  Tensor out = clone();
  out.index_put_(indices, rhs);
  return out;
}
Tensor Tensor::index_put(ArrayRef<indexing::TensorIndex> indices, const Scalar& v) const {
  Tensor out = clone();
  out.index_put_(indices, v);
  return out;
}
Tensor Tensor::index_put(ArrayRef<indexing::TensorIndex> indices, const Tensor& values, bool accumulate) const {
  Tensor out = clone();
  out.index_put_(indices, values, accumulate);
  return out;
}

Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& v) const {
  Tensor& self = const_cast<Tensor&>(*this);
  if (has_tensor_index(indices)) detail::index_put_with_tensors(self, indices, nullptr, &v, false);
  else index(indices).fill_(v);
  return self;
}

Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& values, bool accumulate) const {
  Tensor& self = const_cast<Tensor&>(*this);
  if (has_tensor_index(indices)) {
    detail::index_put_with_tensors(self, indices, &values, nullptr, accumulate);
  } else if (accumulate) {
    Tensor view = index(indices);
    view.add_(values);
  } else {
    index(indices).copy_(values);
  }
  return self;
}

Tensor Tensor::operator[](const Tensor& i) const {
  GB_CHECK_INDEX(i.defined(), "Can only index with tensors that are defined");
  GB_CHECK_INDEX(i.dim() == 0, "Can only index with tensors that are scalars (zero-dim); for a tensor of indices "
                 "use x.index({t}), got one of shape ", i.sizes());
  GB_CHECK_INDEX(is_integral(i.scalar_type()), "Can only index tensors with integral scalars, got ",
                 to_string(i.scalar_type()));
  return select(0, i.item().to_long());
}

Tensor Tensor::index(ArrayRef<indexing::TensorIndex> indices) const {
  using indexing::TensorIndex;
  if (has_tensor_index(indices)) return detail::index_with_tensors(*this, indices);
  int64_t consumed = 0;
  bool has_ellipsis = false;
  for (const auto& ix : indices) {
    if (ix.kind() == TensorIndex::Kind::Integer || ix.kind() == TensorIndex::Kind::Slice) ++consumed;
    if (ix.kind() == TensorIndex::Kind::Ellipsis) {
      GB_CHECK(!has_ellipsis, "index: an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
    }
  }
  GB_CHECK_INDEX(consumed <= dim(), "too many indices for tensor of dimension ", dim(), " (got ", consumed, ")");
  Tensor r = *this;
  int64_t d = 0;
  for (const auto& ix : indices) {
    switch (ix.kind()) {
      case TensorIndex::Kind::Integer:
        r = r.select(d, ix.integer());
        break;
      case TensorIndex::Kind::Slice:
        r = r.slice(d, ix.slice().start, ix.slice().stop, ix.slice().step);
        ++d;
        break;
      case TensorIndex::Kind::None:
        r = r.unsqueeze(d);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis:
        d += dim() - consumed;
        break;
      case TensorIndex::Kind::Tensor:  // handled above
        break;
    }
  }
  return r;
}

}  // namespace gb
