// engine/ops/sort.cpp — sort, argsort, topk: one stable sort per line along the dim, each op's backward under it. On
// cuda the lines are sorted by CUB's stable segmented sort (cuda/sort.cu) in the same order.
//
// Every line (the elements along dim at one position of the other dims) is sorted on its own, lines in parallel.
// The gradient of the values goes back to where each came from: zeros of the input's shape, scatter_add'ed at
// the indices (differentiable, so double backward works).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

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
#include "glassbox/ops/sort.h"
#include "ops/inplace.h"

namespace gb {
namespace {

template <typename M>
bool is_nan(M v) {
  if constexpr (std::is_floating_point_v<M>)
    return std::isnan(v);
  else
    return false;
}

// a < b with NaN above every number (and NaNs equal): a strict weak order, so stable_sort keeps ties in place.
template <typename M>
bool nan_last_less(M a, M b) {
  if (is_nan(b)) return !is_nan(a);
  return !is_nan(a) && a < b;
}

void sort_rows_cpu(const Tensor& a, int64_t dim, int64_t k, bool descending, bool by_position, const Tensor& values,
                   const Tensor& indices);

// The first k of each line's stable order (descending or not) into values and indices (shape: a's with dim = k).
// by_position: those k in their order along dim instead.
void sort_kernel(const Tensor& a, int64_t dim, int64_t k, bool descending, bool by_position, const Tensor& values,
                 const Tensor& indices) {
  detail::run_op(
      a.device(),
      [&] {
        Tensor ac = detail::shallow_alias(a).contiguous();  // made on meta too: the same allocations as on cpu
        if (values.numel() > 0)
          detail::run_cpu_kernel("sort", values,
                                 [&] { sort_rows_cpu(ac, dim, k, descending, by_position, values, indices); });
      },
      [&] {  // the device's sort (cuda/sort.cu), which reads a with its strides
        if (values.numel() > 0) cuda_ops::sort(a, dim, k, descending, by_position, values, indices);
      });
}

// The cpu half of sort_kernel: each line's stable order, lines split across the pool.
void sort_rows_cpu(const Tensor& a, int64_t dim, int64_t k, bool descending, bool by_position, const Tensor& values,
                   const Tensor& indices) {
  const Tensor& ac = a;
  const int64_t n = a.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= a.size(d);
  for (int64_t d = dim + 1; d < a.dim(); ++d) inner *= a.size(d);
  detail::dispatch_all(a.scalar_type(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const T* src = ac.data_ptr<T>();
    T* vp = values.data_ptr<T>();
    int64_t* ip = indices.data_ptr<int64_t>();
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1));
    parallel_for(0, outer * inner, grain, [&](int64_t b, int64_t e) {
      std::vector<M> line(static_cast<size_t>(n));
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t l = b; l < e; ++l) {
        const int64_t o = l / inner, j = l % inner;
        for (int64_t i = 0; i < n; ++i) line[size_t(i)] = M(src[(o * n + i) * inner + j]);
        std::iota(order.begin(), order.end(), int64_t(0));
        if (descending)
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t x, int64_t y) { return nan_last_less(line[size_t(y)], line[size_t(x)]); });
        else
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t x, int64_t y) { return nan_last_less(line[size_t(x)], line[size_t(y)]); });
        if (by_position) std::sort(order.begin(), order.begin() + k);
        for (int64_t r = 0; r < k; ++r) {
          const int64_t at = (o * k + r) * inner + j;
          vp[at] = src[(o * n + order[size_t(r)]) * inner + j];
          ip[at] = order[size_t(r)];
        }
      }
    });
  });
}

// The shared entry of sort and topk on a tensor of at least one dim.
std::tuple<Tensor, Tensor> sorted_k(const Tensor& a, int64_t dim, int64_t k, bool descending, bool by_position,
                                    const char* node) {
  std::vector<int64_t> shape = a.sizes().vec();
  shape[size_t(dim)] = k;
  Tensor values = detail::make_empty(shape, a.scalar_type(), a.device());
  Tensor indices = detail::make_empty(shape, kInt64, a.device());
  sort_kernel(a, dim, k, descending, by_position, values, indices);
  detail::op_output(values);
  if (autograd::needs_grad(a))
    autograd::record(node, autograd::collect_edges({a}), {&values}, {autograd::output(indices)},
                     [s = a.sizes().vec(), dim](autograd::BackwardContext& c) {
                       Tensor z = zeros(s, TensorOptions().dtype(c.grad().scalar_type()).device(c.grad().device()));
                       return variable_list{z.scatter_add(dim, c.saved(0), c.grad())};
                     });
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  detail::OpScope op_scope("sort", {self});
  detail::check_device(self, "sort", "self");
  const int64_t d = detail::wrap_dim(dim, self.dim(), "sort");
  if (self.dim() == 0) {  // one element: itself at index 0
    auto [v, i] = sort(self.reshape({1}), 0, descending);
    return {v.reshape({}), i.reshape({})};
  }
  return sorted_k(self, d, self.size(d), descending, false, "SortBackward0");
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> /*stable*/, int64_t dim, bool descending) {
  return sort(self, dim, descending);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  detail::OpScope op_scope("argsort", {self});
  NoGradGuard no_grad;  // only the indices are kept
  return std::get<1>(sort(self, dim, descending));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  detail::OpScope op_scope("topk", {self});
  detail::check_device(self, "topk", "self");
  const int64_t d = detail::wrap_dim(dim, self.dim(), "topk");
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  GB_CHECK_INDEX(k >= 0 && k <= n, "selected index k out of range: topk got k = ", k, " for dimension ", d, " of size ",
                 n, " (input shape ", self.sizes(), "); pass 0 <= k <= ", n, ".");
  if (self.dim() == 0) {
    auto [v, i] = topk(self.reshape({1}), k, 0, largest, sorted);
    return {v.reshape(k == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{0}),
            i.reshape(k == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{0})};
  }
  return sorted_k(self, d, k, largest, !sorted, "TopkBackward0");
}

}  // namespace gb
