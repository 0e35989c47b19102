// engine/ops/index.cpp — picking and accumulating by integer index: index_select, gather, scatter_add, embedding,
// one_hot, and the accumulate op (index_add into zeros) that index_select's and embedding's backward run on.
//
// Every index is checked before any element moves: out of range throws gb::IndexError naming the op, the index
// and the size of the dim. Negative indices are out of range here, as in PyTorch's index_select/gather. On cuda,
// index_select, embedding (and their backward), gather and scatter_add run cuda/index.cu's kernels, which check
// each index on the device without the host waiting: a bad one is the same IndexError, raised at the next
// synchronization (cuda/device_error.h), where PyTorch asserts on the device and loses the context.
#include <algorithm>
#include <cstring>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"
#include "ops/loops.h"

namespace gb {
namespace {

constexpr int64_t kCopyGrain = 1 << 15;  // bytes below which a row copy stays on one thread

void check_index_dtype(const Tensor& index, const char* op, const char* arg = "index") {
  detail::check_device(index, op, arg);
  GB_CHECK_TYPE(index.scalar_type() == kInt64 || index.scalar_type() == kInt32, op,
                "(): Expected dtype int64 or int32 ", "for ", arg, ", but got ", to_string(index.scalar_type()),
                ". Convert it with .to(gb::kInt64)");
}

// The values of an index tensor (any strides, int64 or int32) as int64. On meta: zeros (a meta index has no values;
// the count, which is all that decides the shapes and allocations, is right).
std::vector<int64_t> index_values(const Tensor& index, const char* op) {
  // a cuda index is read on the host (it waits for the device): every index is checked before anything moves
  const Tensor c = detail::run_op(
      index.device(), [&] { return detail::shallow_alias(index).contiguous(); },
      [&] { return detail::shallow_alias(index).cpu().contiguous(); });
  std::vector<int64_t> out(c.numel());
  detail::run_cpu_kernel(op, c, [&] {
    detail::dispatch_index(c.scalar_type(), op, [&](auto tag) {
      using I = typename decltype(tag)::type;
      const I* p = c.data_ptr<I>();
      for (int64_t i = 0; i < c.numel(); ++i) out[i] = int64_t(p[i]);
    });
  });
  return out;
}

// index_values, each checked against [0, size). A cuda index is not read: its kernels check it on the device, and
// the host gets as many zeros (the count, which is all the cuda paths use).
std::vector<int64_t> checked_indices(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  return detail::run_op(
      index.device(),
      [&] {
        std::vector<int64_t> out = index_values(index, op);
        for (int64_t v : out)
          GB_CHECK_INDEX(v >= 0 && v < size, op, "(): index ", v, " is out of bounds for dimension ", dim,
                         " with size ", size);
        return out;
      },
      [&] { return std::vector<int64_t>(size_t(index.numel()), 0); });
}

// Checks every element of an index tensor in place (gather/scatter_add, where the index is N-d).
void check_indices_nd(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  if (index.numel() > 0) checked_indices(index, size, dim, op);
}

struct Split3 {
  int64_t outer, size, inner;
};
Split3 split_at(IntArrayRef sizes, int64_t dim) {
  Split3 s{1, sizes.empty() ? 1 : sizes[dim], 1};
  for (int64_t d = 0; d < dim; ++d) s.outer *= sizes[d];
  for (int64_t d = dim + 1; d < int64_t(sizes.size()); ++d) s.inner *= sizes[d];
  return s;
}

// out = a with dim replaced by idx.size() entries: out[o, i, :] = a[o, idx[i], :]. No autograd. On cuda the
// (checked) index tensor itself is read on the device.
Tensor index_select_kernel(const Tensor& a, int64_t dim, const std::vector<int64_t>& idx, bool keep_0d,
                           const Tensor& index, const char* op) {
  std::vector<int64_t> shape = a.sizes().vec();
  if (!shape.empty()) shape[dim] = int64_t(idx.size());
  Tensor out = detail::make_empty(keep_0d ? std::vector<int64_t>{} : shape, a.scalar_type(), a.device());
  if (out.numel() == 0) return out;
  Tensor ac = detail::shallow_alias(a).contiguous();
  detail::run_kernel(
      out,
      [&] {
        Split3 s = split_at(a.sizes(), dim);
        const int64_t n = int64_t(idx.size()), row_bytes = s.inner * a.element_size();
        const char* src = static_cast<const char*>(ac.data_ptr());
        char* dst = static_cast<char*>(out.data_ptr());
        parallel_for(0, s.outer * n, std::max<int64_t>(1, kCopyGrain / std::max<int64_t>(row_bytes, 1)),
                     [&](int64_t b, int64_t e) {
                       for (int64_t r = b; r < e; ++r) {
                         int64_t o = r / n, i = r % n;
                         std::memcpy(dst + r * row_bytes, src + (o * s.size + idx[i]) * row_bytes, size_t(row_bytes));
                       }
                     });
      },
      [&] { cuda_ops::index_select(ac, dim, index, out, op); });
  return out;
}

// A (1,..,n,..,1) mask of g's dtype: 0 where idx == skip, else 1. Broadcasts along dim against an index_select.
Tensor skip_mask(const std::vector<int64_t>& idx, const Tensor& index, int64_t skip, int64_t dim, int64_t ndim,
                 ScalarType dtype, Device device) {
  std::vector<int64_t> shape(std::max<int64_t>(ndim, 1), 1);
  shape[dim] = int64_t(idx.size());
  return detail::run_op(
      index.device(),
      [&] {  // built on the host (on meta: its allocation only)
        std::vector<double> m(idx.size());
        for (size_t i = 0; i < idx.size(); ++i) m[i] = idx[i] == skip ? 0.0 : 1.0;
        return detail::values_on(ArrayRef<double>(m), kDouble, device).to(dtype).view(shape);
      },
      [&] { return ne(index.reshape({-1}), skip).to(dtype).view(shape); });  // on the device: no read-back
}

// out = zeros(sizes); out[o, idx[i], :] += g[o, i, :] for every i with idx[i] != skip. Differentiable: its backward
// is the matching index_select (rows with idx == skip get no gradient), so index_select and embedding have
// double backward. Duplicate indices accumulate: work is split over outer rows or inner columns, never over i.
Tensor index_add_zeros(const Tensor& g, int64_t dim, const std::vector<int64_t>& idx, const Tensor& index,
                       std::vector<int64_t> sizes, int64_t skip, const char* op, const char* name) {
  detail::OpScope op_scope(op, {g, index});  // runs in backward (index_select's, embedding's)
  auto zero_rows = [&] { return zeros(sizes, TensorOptions().dtype(g.scalar_type()).device(g.device())); };
  Tensor out =
      g.numel() == 0
          ? zero_rows()
          : detail::run_op(
                g.device(),
                [&] {
                  Tensor out = zero_rows();
                  Tensor gc = detail::shallow_alias(g).contiguous();
                  Split3 s = split_at(sizes, dim);
                  const int64_t n = int64_t(idx.size());
                  detail::run_cpu_kernel(name, out, [&] {
                    detail::dispatch_floating(g.scalar_type(), name, [&](auto tag) {
                      using T = typename decltype(tag)::type;
                      using M = opmath_t<T>;
                      const T* src = gc.data_ptr<T>();
                      T* dst = out.data_ptr<T>();
                      auto run = [&](int64_t o0, int64_t o1, int64_t j0, int64_t j1) {
                        for (int64_t o = o0; o < o1; ++o)
                          for (int64_t i = 0; i < n; ++i) {
                            if (idx[i] == skip) continue;
                            T* d = dst + (o * s.size + idx[i]) * s.inner;
                            const T* x = src + (o * n + i) * s.inner;
                            for (int64_t j = j0; j < j1; ++j) d[j] = T(M(d[j]) + M(x[j]));
                          }
                      };
                      int64_t grain =
                          std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(n * s.inner, 1));
                      if (s.outer > 1)
                        parallel_for(0, s.outer, grain, [&](int64_t b, int64_t e) { run(b, e, 0, s.inner); });
                      else
                        parallel_for(0, s.inner,
                                     std::max<int64_t>(64, detail::kElementwiseGrain / std::max<int64_t>(n, 1)),
                                     [&](int64_t b, int64_t e) { run(0, 1, b, e); });
                    });
                  });
                  return out;
                },
                [&] { return cuda_ops::index_add_zeros(g, dim, index, sizes, skip, op); });
  op_scope.set_output(out);
  if (autograd::needs_grad(g))
    autograd::record(name, {g}, out, {autograd::input(index)}, [dim, skip](autograd::BackwardContext& c) {
      const Tensor& gg = c.grad();
      const Tensor& index = c.saved(0);
      Tensor picked = index_select(gg, dim, index.reshape({-1}));
      if (skip < 0) return variable_list{picked};
      auto idx = checked_indices(index, gg.dim() == 0 ? 1 : gg.size(dim), dim, "index_select");
      return variable_list{picked * skip_mask(idx, index, skip, dim, gg.dim(), gg.scalar_type(), gg.device())};
    });
  return out;
}

}  // namespace

// ---- index_select ----

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  detail::OpScope op_scope("index_select", {a, index});
  detail::check_device(a, "index_select", "self");
  check_index_dtype(index, "index_select");
  detail::check_same_device(a, index, "index_select");
  GB_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector, got a ", index.dim(),
                 "-D index of shape ", index.sizes());
  dim = detail::wrap_dim(dim, a.dim(), "index_select");
  int64_t size = a.dim() == 0 ? 1 : a.size(dim);
  auto idx = checked_indices(index, size, dim, "index_select");
  GB_CHECK_INDEX(a.dim() > 0 || idx.size() == 1, "index_select(): Index to scalar can have only 1 value, got ",
                 idx.size(), " value(s)");
  Tensor out = index_select_kernel(a, dim, idx, a.dim() == 0, index, "index_select");
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("IndexSelectBackward0", {a}, out, {autograd::input(index)},
                     [s = a.sizes().vec(), dim](autograd::BackwardContext& c) {
                       const Tensor& index = c.saved(0);
                       auto idx = checked_indices(index, s.empty() ? 1 : s[dim], dim, "index_select");
                       return variable_list{index_add_zeros(c.grad(), dim, idx, index, s, -1, "index_select_backward",
                                                            "IndexAddBackward0")};
                     });
  return out;
}

// ---- gather / scatter_add ----

namespace {

// index must have self's number of dims and be no larger than self in every dim but `dim` (and than src in all).
void check_gather_shapes(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, const char* op) {
  GB_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1), op,
           "(): Index tensor must have the same number of dimensions as input tensor (index ", index.sizes(),
           ", input ", self.sizes(), ")");
  if (src)
    GB_CHECK(src->dim() == index.dim() || (src->dim() <= 1 && index.dim() <= 1), op,
             "(): Index tensor must have the same number of dimensions as src tensor (index ", index.sizes(), ", src ",
             src->sizes(), ")");
  if (index.dim() == 0 || self.dim() == 0) return;
  for (int64_t d = 0; d < index.dim(); ++d) {
    bool ok = (d == dim || index.size(d) <= self.size(d)) && (!src || index.size(d) <= src->size(d));
    if (!ok) {
      if (src)
        GB_CHECK(false, op, "(): Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                 " apart from dimension ", dim, " and to be smaller size than src ", src->sizes());
      GB_CHECK(false, op, "(): Size does not match at dimension ", d, " expected index ", index.sizes(),
               " to be smaller than self ", self.sizes(), " apart from dimension ", dim);
    }
  }
}

// A view of t with index's sizes and t's strides, stride 0 along dim: element p is t at p with dim's coordinate 0.
Tensor along_index(const Tensor& t, const Tensor& index, int64_t dim) {
  if (t.dim() == 0) return detail::make_view(t, {}, {}, t.storage_offset());
  auto strides = t.strides().vec();
  strides[dim] = 0;
  return detail::make_view(t, index.sizes().vec(), strides, t.storage_offset());
}

// A view of t cut down to index's sizes (src of scatter_add may be larger than index).
Tensor cut_to(const Tensor& t, const Tensor& index) {
  if (t.dim() == 0 || index.dim() == 0) return t;
  return detail::make_view(t, index.sizes().vec(), t.strides().vec(), t.storage_offset());
}

// The cpu half of gather: out[p] = a at p with dim's coordinate index[p].
void gather_cpu(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& out) {
  Tensor src = along_index(a, index, dim);
  const int64_t step = (a.dim() == 0 ? 0 : a.stride(dim)) * a.element_size();
  detail::dispatch_all(a.scalar_type(), "gather", [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::dispatch_index(index.scalar_type(), "gather", [&](auto itag) {
      using I = typename decltype(itag)::type;
      detail::StridedLoop loop(out, {&index, &src});
      loop.run_parallel([&](char** p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t ix = int64_t(*reinterpret_cast<const I*>(p[1] + i * s[1]));
          *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[2] + i * s[2] + ix * step);
        }
      });
    });
  });
}

// The cpu half of scatter_add: out at p with dim's coordinate index[p] += src[p], serially.
void scatter_add_cpu(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor dst = along_index(out, index, dim);
  Tensor from = cut_to(src, index);
  const int64_t step = (out.dim() == 0 ? 0 : out.stride(dim)) * out.element_size();
  detail::dispatch_numeric(out.scalar_type(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    detail::dispatch_index(index.scalar_type(), "scatter_add", [&](auto itag) {
      using I = typename decltype(itag)::type;
      detail::StridedLoop loop(dst, {&index, &from});
      // serial: two index entries may name the same output element
      loop.run(0, loop.numel(), [&](char** p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t ix = int64_t(*reinterpret_cast<const I*>(p[1] + i * s[1]));
          T* d = reinterpret_cast<T*>(p[0] + i * s[0] + ix * step);
          *d = T(M(*d) + M(*reinterpret_cast<const T*>(p[2] + i * s[2])));
        }
      });
    });
  });
}

}  // namespace

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) {
  detail::OpScope op_scope("gather", {a, index});
  detail::check_device(a, "gather", "self");
  check_index_dtype(index, "gather");
  detail::check_same_device(a, index, "gather");
  dim = detail::wrap_dim(dim, a.dim(), "gather");
  check_gather_shapes(a, dim, index, nullptr, "gather");
  const int64_t size = a.dim() == 0 ? 1 : a.size(dim);
  check_indices_nd(index, size, dim, "gather");
  Tensor out = detail::make_empty(index.sizes(), a.scalar_type(), a.device());
  if (out.numel() > 0)
    detail::run_kernel(
        out, [&] { gather_cpu(a, dim, index, out); }, [&] { cuda_ops::gather(a, dim, index, out); });
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("GatherBackward0", {a}, out, {autograd::input(index)},
                     [s = a.sizes().vec(), dim](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       return variable_list{zeros(s, g.options()).scatter_add(dim, c.saved(0), g)};
                     });
  return out;
}

Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  GB_AUTOCAST(promote, scatter_add, a, dim, index, src);
  detail::OpScope op_scope("scatter_add", {a, index, src});
  detail::check_device(a, "scatter_add", "self");
  detail::check_device(src, "scatter_add", "src", a);
  check_index_dtype(index, "scatter_add");
  detail::check_same_device(a, index, "scatter_add");
  GB_CHECK_TYPE(a.scalar_type() == src.scalar_type(), "scatter_add(): Expected self.dtype to be equal to src.dtype, ",
                "but got ", to_string(a.scalar_type()), " and ", to_string(src.scalar_type()));
  dim = detail::wrap_dim(dim, a.dim(), "scatter_add");
  check_gather_shapes(a, dim, index, &src, "scatter_add");
  const int64_t size = a.dim() == 0 ? 1 : a.size(dim);
  check_indices_nd(index, size, dim, "scatter_add");
  Tensor out = detail::make_empty(a.sizes(), a.scalar_type(), a.device());
  detail::copy_into(out, a);
  detail::dispatch_numeric(a.scalar_type(), "scatter_add", [](auto) {});  // on every device: bool is refused
  if (index.numel() > 0)
    detail::run_kernel(
        out, [&] { scatter_add_cpu(out, dim, index, src); },
        [&] { cuda_ops::scatter_add(out, dim, index, cut_to(src, index)); });
  op_scope.set_output(out);
  if (autograd::needs_grad(a, src))
    autograd::record("ScatterAddBackward0", {a, src}, out, {autograd::input(index)},
                     [dim, ss = src.sizes().vec()](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       Tensor gs;
                       if (c.needs(1)) {
                         gs = g.gather(dim, c.saved(0));
                         // src larger than index: the unused part of src gets zeros
                         for (int64_t d = 0; d < gs.dim(); ++d)
                           if (gs.size(d) < ss[d]) {
                             auto pad = gs.sizes().vec();
                             pad[d] = ss[d] - gs.size(d);
                             gs = cat({gs, zeros(pad, gs.options())}, d);
                           }
                       }
                       return variable_list{c.needs(0) ? g : Tensor(), gs};
                     });
  return out;
}

// ---- embedding ----

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  detail::OpScope op_scope("embedding", {weight, indices});
  detail::check_device(weight, "embedding", "weight");
  check_index_dtype(indices, "embedding", "indices");
  detail::check_same_device(weight, indices, "embedding");
  GB_CHECK(weight.dim() == 2, "embedding(): 'weight' must be 2-D (num_embeddings, embedding_dim), got shape ",
           weight.sizes());
  const int64_t V = weight.size(0), D = weight.size(1);
  auto idx = checked_indices(indices, V, 0, "embedding");
  std::vector<int64_t> shape = indices.sizes().vec();
  shape.push_back(D);
  Tensor out = index_select_kernel(weight, 0, idx, false, indices, "embedding").view(shape);
  op_scope.set_output(out);
  // padding_idx < 0 means none (at::embedding's convention; torch.nn wraps negative values before calling it)
  if (autograd::needs_grad(weight))
    autograd::record("EmbeddingBackward0", {weight}, out, {autograd::input(indices)},
                     [V, D, padding_idx](autograd::BackwardContext& c) {
                       const Tensor& index = c.saved(0);
                       auto idx = checked_indices(index, V, 0, "embedding");
                       Tensor g2 = c.grad().reshape({-1, D});
                       return variable_list{index_add_zeros(g2, 0, idx, index, {V, D}, padding_idx,
                                                            "embedding_dense_backward", "EmbeddingDenseBackward0")};
                     });
  return out;
}

// ---- one_hot ----

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  detail::OpScope op_scope("one_hot", {indices});
  detail::check_device(indices, "one_hot", "self");  // on cuda: the classes read back (checked), the rows
                                                     // built on the host and copied
  GB_CHECK_TYPE(indices.scalar_type() == kInt64 || indices.scalar_type() == kInt32,
                "one_hot is only applicable to index tensor of type LongTensor (or int32), got ",
                to_string(indices.scalar_type()));
  GB_CHECK(num_classes >= -1, "one_hot: num_classes should be -1 (infer) or a positive number, got ", num_classes);
  if (num_classes == -1)
    detail::check_has_data(indices, "one_hot",
                           "num_classes=-1 infers the class count from the values: pass num_classes");
  auto idx = index_values(indices, "one_hot");
  for (int64_t v : idx) GB_CHECK_INDEX(v >= 0, "one_hot(): Class values must be non-negative, got index ", v);
  if (num_classes == -1) {
    GB_CHECK(!idx.empty(), "one_hot: Can not infer total number of classes from empty tensor; pass num_classes");
    num_classes = *std::max_element(idx.begin(), idx.end()) + 1;
  }
  for (int64_t v : idx)
    GB_CHECK_INDEX(v < num_classes, "one_hot(): index ", v, " is out of bounds for dimension -1 with size ",
                   num_classes, " (class values must be smaller than num_classes)");
  std::vector<int64_t> shape = indices.sizes().vec();
  shape.push_back(num_classes);
  auto rows_on = [&](Device d) {  // the rows built where their memory is host memory (meta: allocated only)
    Tensor out = zeros(shape, TensorOptions().dtype(kInt64).device(d));
    detail::run_cpu_kernel("one_hot", out, [&] {
      int64_t* p = out.data_ptr<int64_t>();
      for (size_t i = 0; i < idx.size(); ++i) p[int64_t(i) * num_classes + idx[i]] = 1;
    });
    return out;
  };
  Tensor out = detail::run_op(
      indices.device(), [&] { return rows_on(indices.device()); },
      [&] { return rows_on(Device(kCPU)).to(indices.device()); });
  op_scope.set_output(out);
  return out;
}

}  // namespace gb
