// engine/ops/cumsum.cpp — cumsum and cumprod, each with its backward under it. cumsum's gradient is the gradient's
// reversed running sum; on cuda its sums run on the device (cuda/cumsum.cu) in the cpu's accumulators: a single line
// on CUB's scan, the others per line. cumprod runs on the cpu (and meta); its gradient is exact where inputs are zero.
#include <vector>

#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb {
namespace {

// A scan's input in its result dtype: dtype, else a's own when floating, else int64 (integers and bool accumulate in
// int64). The cast is its own differentiable op (ToCopyBackward0 returns the gradient in a's dtype).
Tensor scan_input(const Tensor& a, std::optional<ScalarType> dtype, const char* op) {
  const ScalarType t = dtype ? *dtype : is_floating_point(a.scalar_type()) ? a.scalar_type() : kInt64;
  GB_CHECK_TYPE(t != kBool, op,
                ": a bool result is not supported; pass dtype=gb::kInt64 (the default for bool input) or a floating "
                "dtype");
  return a.scalar_type() == t ? a : a.to(t);
}

// The cpu half of a scan: each line's running sums (Sum) or products in one pass, in double for floats and int64 for
// integers, rows of `inner` elements at a time, lines split across the pool.
template <bool Sum>
void scan_cpu(const Tensor& ac, const Tensor& out, int64_t outer, int64_t n, int64_t inner) {
  detail::dispatch_numeric(out.scalar_type(), Sum ? "cumsum" : "cumprod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    const T* src = ac.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(n * inner, 1)), [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(static_cast<size_t>(inner));
      for (int64_t o = b; o < e; ++o) {
        std::fill(acc.begin(), acc.end(), Acc(Sum ? 0 : 1));
        for (int64_t i = 0; i < n; ++i) {
          const int64_t row = (o * n + i) * inner;
          for (int64_t j = 0; j < inner; ++j) {
            if constexpr (Sum)
              acc[size_t(j)] += Acc(src[row + j]);
            else
              acc[size_t(j)] *= Acc(src[row + j]);
            dst[row + j] = T(acc[size_t(j)]);
          }
        }
      }
    });
  });
}

// out = running sums of a (same dtype as out) along dim; accumulates in double for floats, int64 for integers.
void cumsum_kernel(const Tensor& a, int64_t dim, const Tensor& out) {
  Tensor ac = detail::shallow_alias(a).contiguous();  // made on meta too: the same allocations as on cpu
  if (out.numel() == 0) return;
  const int64_t n = a.dim() == 0 ? 1 : a.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= a.size(d);
  for (int64_t d = dim + 1; d < a.dim(); ++d) inner *= a.size(d);
  detail::run_kernel(
      out, [&] { scan_cpu<true>(ac, out, outer, n, inner); }, [&] { cuda_ops::cumsum(ac, out, outer, n, inner); });
}

}  // namespace

Tensor cumsum(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  detail::OpScope op_scope("cumsum", {a});
  detail::check_device(a, "cumsum");
  const int64_t d = detail::wrap_dim(dim, a.dim(), "cumsum");
  Tensor x = scan_input(a, dtype, "cumsum");
  Tensor out = detail::make_empty(x.sizes(), x.scalar_type(), x.device());
  cumsum_kernel(x, d, out);
  op_scope.set_output(out);
  if (autograd::needs_grad(x))
    autograd::record("CumsumBackward0", {x}, out, {}, [d](autograd::BackwardContext& c) {
      // d out_j / d x_i = 1 for j >= i: the gradient's running sum taken from the end
      if (c.grad().dim() == 0) return variable_list{c.grad()};
      return variable_list{c.grad().flip({d}).cumsum(d).flip({d})};
    });
  return out;
}

// ---- cumprod ----

namespace {

// The lines of a contiguous (outer, n, inner) tensor, visited as (o, j): element i of a line is at
// (o * n + i) * inner + j.
template <typename F>
void for_each_line(int64_t outer, int64_t n, int64_t inner, const F& f) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) f((l / inner) * n * inner + l % inner, inner);
  });
}

// The first-order gradient of cumprod, exact with zeros: along a line x with running products y and gradient g,
// d/dx_k = sum_{j >= k} g_j prod_{i <= j, i != k} x_i. Before the line's first zero z that is
// (sum_{j=k}^{z-1} g_j y_j) / x_k (the products after z are 0); at z it is y_{z-1} sum_{j >= z} g_j prod_{z<i<=j} x_i;
// after z, 0. One pass back and one forward per line.
void cumprod_backward_cpu(const Tensor& gc, const Tensor& xc, const Tensor& yc, const Tensor& out, int64_t outer,
                          int64_t n, int64_t inner) {
  detail::dispatch_floating(out.scalar_type(), "cumprod_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *g = gc.data_ptr<T>(), *x = xc.data_ptr<T>(), *y = yc.data_ptr<T>();
    T* gx = out.data_ptr<T>();
    for_each_line(outer, n, inner, [&](int64_t base, int64_t s) {
      int64_t z = 0;
      while (z < n && x[base + z * s] != T(0)) ++z;
      double suffix = 0;  // sum_{j=k}^{z-1} g_j y_j
      for (int64_t k = z - 1; k >= 0; --k) {
        suffix += double(g[base + k * s]) * double(y[base + k * s]);
        gx[base + k * s] = T(suffix / double(x[base + k * s]));
      }
      if (z < n) {
        double q = 1, t = 0;  // q = prod_{z<i<=j} x_i
        for (int64_t j = z; j < n; ++j) {
          if (j > z) q *= double(x[base + j * s]);
          t += double(g[base + j * s]) * q;
        }
        gx[base + z * s] = T((z > 0 ? double(y[base + (z - 1) * s]) : 1.0) * t);
        for (int64_t k = z + 1; k < n; ++k) gx[base + k * s] = T(0);
      }
    });
  });
}

// The line geometry of a along dim.
void lines(const Tensor& a, int64_t dim, int64_t& outer, int64_t& n, int64_t& inner) {
  n = a.dim() == 0 ? 1 : a.size(dim);
  outer = inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= a.size(d);
  for (int64_t d = dim + 1; d < a.dim(); ++d) inner *= a.size(d);
}

Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& y, int64_t d);

}  // namespace

Tensor cumprod(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  detail::OpScope op_scope("cumprod", {a});
  detail::check_cpu_meta_device(a, "cumprod");  // no CUDA kernel yet: refused by name on cuda
  const int64_t d = detail::wrap_dim(dim, a.dim(), "cumprod");
  Tensor x = scan_input(a, dtype, "cumprod");
  Tensor out = detail::make_empty(x.sizes(), x.scalar_type(), x.device());
  Tensor xc = detail::shallow_alias(x).contiguous();
  int64_t outer, n, inner;
  lines(x, d, outer, n, inner);
  if (out.numel() > 0) detail::run_cpu_kernel("cumprod", out, [&] { scan_cpu<false>(xc, out, outer, n, inner); });
  op_scope.set_output(out);
  if (autograd::needs_grad(x))
    autograd::record("CumprodBackward0", {x}, out, {autograd::input(x), autograd::output(out)},
                     [d](autograd::BackwardContext& c) {
                       return variable_list{cumprod_backward(c.grad(), c.saved(0), c.saved(1), d)};
                     });
  return out;
}

namespace {

Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& y, int64_t d) {
  if (x.numel() == 0) return zeros_like(x);
  if (GradMode::is_enabled()) {
    // create_graph: the formula in differentiable ops, (reversed running sum of g y) / x, which needs x without zeros
    const bool has_zero = x.eq(0).any().item<bool>();
    GB_CHECK(!has_zero, "cumprod: the double backward (create_graph) of an input with zeros is not supported: its "
             "first-order gradient is exact (run backward without create_graph), or keep the input away from 0");
    if (x.dim() == 0) return g;
    return (g * y).flip({d}).cumsum(d).flip({d}) / x;
  }
  detail::OpScope op_scope("cumprod_backward", {g});  // runs in backward
  Tensor gc = detail::shallow_alias(g).contiguous(), xc = detail::shallow_alias(x).contiguous(),
         yc = detail::shallow_alias(y).contiguous();
  Tensor out = detail::make_empty(x.sizes(), x.scalar_type(), x.device());
  int64_t outer, n, inner;
  lines(x, x.dim() == 0 ? 0 : d, outer, n, inner);
  detail::run_cpu_kernel("cumprod_backward", out, [&] { cumprod_backward_cpu(gc, xc, yc, out, outer, n, inner); });
  op_scope.set_output(out);
  return out;
}

}  // namespace

}  // namespace gb
