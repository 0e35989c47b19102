// engine/ops/join.cpp — joining and splitting along a dim: cat and stack (copies, with their backward), and
// split, split_with_sizes, chunk, unbind (views made by narrow/select, whose backward the view ops already own).
#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb {
namespace {

// A raw (no autograd) view of t narrowed to [start, start + len) along dim.
Tensor raw_narrow(const Tensor& t, int64_t dim, int64_t start, int64_t len) {
  auto sizes = t.sizes().vec();
  sizes[dim] = len;
  return detail::make_view(t, sizes, t.strides().vec(), t.storage_offset() + start * t.stride(dim));
}

ScalarType promoted_dtype(TensorList ts) {
  ScalarType r = ts[0].scalar_type();
  for (const auto& t : ts) r = promote_types(r, t.scalar_type());
  return r;
}

// PyTorch's legacy rule: a 1-D tensor with no elements is skipped by cat whatever the other shapes are.
bool legacy_skip(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// The i-th of a list's tensors, undefined past its end: the op scope takes a fixed list (it keeps six at most).
const Tensor& nth(TensorList ts, size_t i) {
  static const Tensor none;
  return i < ts.size() ? ts[i] : none;
}

}  // namespace

// ---- cat ----

Tensor cat(TensorList tensors, int64_t dim) {
  GB_AUTOCAST(promote, cat, tensors, dim);
  GB_CHECK(!tensors.empty(), "cat(): expected a non-empty list of Tensors");
  detail::OpScope op_scope(
      "cat", {nth(tensors, 0), nth(tensors, 1), nth(tensors, 2), nth(tensors, 3), nth(tensors, 4), nth(tensors, 5)});
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::check_device(tensors[i], "cat", "tensors", tensors[0]);
    GB_CHECK(tensors[i].dim() > 0, "cat(): zero-dimensional tensor (at position ", i, ") cannot be concatenated; ",
             "unsqueeze it first or use stack");
  }
  ScalarType dtype = promoted_dtype(tensors);
  int64_t ref = -1;
  for (size_t i = 0; i < tensors.size() && ref < 0; ++i)
    if (!legacy_skip(tensors[i])) ref = int64_t(i);
  if (ref < 0) ref = 0;  // every input is a legacy empty: the result is one too
  const Tensor& r = tensors[ref];
  dim = detail::wrap_dim(dim, r.dim(), "cat");
  std::vector<int64_t> shape = r.sizes().vec();
  shape[dim] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (legacy_skip(t) && int64_t(i) != ref) continue;
    GB_CHECK(t.dim() == r.dim(), "cat(): Tensors must have same number of dimensions: got ", r.dim(), " and ", t.dim(),
             " (tensor number ", ref, " has shape ", r.sizes(), ", tensor number ", i, " has shape ", t.sizes(), ")");
    for (int64_t d = 0; d < r.dim(); ++d)
      GB_CHECK(d == dim || t.size(d) == r.size(d), "cat(): Sizes of tensors must match except in dimension ", dim,
               ". Expected size ", r.size(d), " but got size ", t.size(d), " for tensor number ", i,
               " in the list (shapes ", r.sizes(), " and ", t.sizes(), ")");
    shape[dim] += t.size(dim);
  }
  Tensor out = detail::make_empty(shape, dtype, r.device());
  std::vector<int64_t> offsets(tensors.size(), 0), lengths(tensors.size(), 0);
  std::vector<std::vector<int64_t>> in_sizes(tensors.size());
  int64_t off = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    in_sizes[i] = t.sizes().vec();
    if (legacy_skip(t) && int64_t(i) != ref) {
      lengths[i] = -1;  // no slice of the output: its gradient is an empty tensor
      continue;
    }
    offsets[i] = off;
    lengths[i] = t.size(dim);
    detail::copy_into(raw_narrow(out, dim, off, t.size(dim)), t);
    off += t.size(dim);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad_list(tensors))
    autograd::record("CatBackward0", autograd::collect_edges(tensors), {&out}, {},
                     [dim, offsets, lengths, in_sizes](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       variable_list grads(offsets.size());
                       for (size_t i = 0; i < offsets.size(); ++i) {
                         if (!c.needs(i)) continue;
                         grads[i] = lengths[i] < 0 ? detail::make_empty(in_sizes[i], g.scalar_type(), g.device())
                                                   : g.narrow(dim, offsets[i], lengths[i]);
                       }
                       return grads;
                     });
  return out;
}

// ---- stack ----

Tensor stack(TensorList tensors, int64_t dim) {
  GB_AUTOCAST(promote, stack, tensors, dim);
  GB_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  const Tensor& r = tensors[0];
  detail::OpScope op_scope(
      "stack", {nth(tensors, 0), nth(tensors, 1), nth(tensors, 2), nth(tensors, 3), nth(tensors, 4), nth(tensors, 5)});
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::check_device(tensors[i], "stack", "tensors", tensors[0]);
    GB_CHECK(tensors[i].sizes() == r.sizes(), "stack expects each tensor to be equal size, but got ", r.sizes(),
             " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  }
  dim = detail::wrap_dim(dim, r.dim() + 1, "stack");
  std::vector<int64_t> shape = r.sizes().vec();
  shape.insert(shape.begin() + dim, int64_t(tensors.size()));
  Tensor out = detail::make_empty(shape, promoted_dtype(tensors), r.device());
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto sizes = out.sizes().vec();
    auto strides = out.strides().vec();
    int64_t offset = int64_t(i) * strides[dim];
    sizes.erase(sizes.begin() + dim);
    strides.erase(strides.begin() + dim);
    detail::copy_into(detail::make_view(out, sizes, strides, offset), tensors[i]);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad_list(tensors))
    autograd::record("StackBackward0", autograd::collect_edges(tensors), {&out}, {},
                     [dim, n = tensors.size()](autograd::BackwardContext& c) {
                       variable_list grads(n);
                       for (size_t i = 0; i < n; ++i)
                         if (c.needs(i)) grads[i] = c.grad().select(dim, int64_t(i));
                       return grads;
                     });
  return out;
}

// ---- split / split_with_sizes / chunk / unbind: views ----

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  detail::check_defined(a, "split");
  GB_CHECK(a.dim() != 0, "split expects at least a 1-dimensional tensor");
  GB_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  dim = detail::wrap_dim(dim, a.dim(), "split");
  int64_t dim_size = a.size(dim);
  GB_CHECK(split_size > 0 || dim_size == 0,
           "split_size can only be 0 if dimension size is 0, but got dimension size of ", dim_size);
  int64_t num_splits = split_size == 0 ? 1 : std::max<int64_t>((dim_size + split_size - 1) / split_size, 1);
  int64_t last = split_size - (split_size * num_splits - dim_size);
  std::vector<Tensor> out;
  out.reserve(num_splits);
  for (int64_t i = 0; i < num_splits; ++i)
    out.push_back(a.narrow(dim, i * split_size, i < num_splits - 1 ? split_size : last));
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& a, IntArrayRef sizes, int64_t dim) {
  detail::check_defined(a, "split_with_sizes");
  GB_CHECK(a.dim() != 0, "split expects at least a 1-dimensional tensor");
  dim = detail::wrap_dim(dim, a.dim(), "split_with_sizes");
  int64_t dim_size = a.size(dim), total = 0;
  for (int64_t s : sizes) {
    GB_CHECK(s >= 0,
             "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=", sizes);
    total += s;
  }
  GB_CHECK(total == dim_size, "split_with_sizes expects split_sizes to sum exactly to ", dim_size,
           " (input tensor's size at dimension ", dim, "), but got split_sizes=", sizes);
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(a.narrow(dim, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  detail::check_defined(a, "chunk");
  GB_CHECK(a.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  GB_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  dim = detail::wrap_dim(dim, a.dim(), "chunk");
  int64_t dim_size = a.size(dim);
  int64_t split_size = (dim_size + chunks - 1) / chunks;
  if (split_size == 0 && dim_size == 0) {  // keep the number of chunks: each one is empty
    std::vector<int64_t> sizes(chunks, 0);
    return split_with_sizes(a, sizes, dim);
  }
  return split(a, split_size, dim);
}

std::vector<Tensor> unbind(const Tensor& a, int64_t dim) {
  detail::check_defined(a, "unbind");
  GB_CHECK_INDEX(a.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  dim = detail::wrap_dim(dim, a.dim(), "unbind");
  std::vector<Tensor> out;
  out.reserve(a.size(dim));
  for (int64_t i = 0; i < a.size(dim); ++i) out.push_back(a.select(dim, i));
  return out;
}

}  // namespace gb
