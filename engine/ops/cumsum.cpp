// engine/ops/cumsum.cpp — cumsum, and its backward under it (the gradient's reversed running sum). On cuda the sums
// run on the device (cuda/cumsum.cu) in the cpu's accumulators: a single line on CUB's scan, the others per line.
#include <vector>

#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb {
namespace {

// The cpu half: each line's sums in one pass, lines split across the pool.
void cumsum_cpu(const Tensor& ac, const Tensor& out, int64_t outer, int64_t n, int64_t inner) {
  detail::dispatch_numeric(out.scalar_type(), "cumsum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    const T* src = ac.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(n * inner, 1)), [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(static_cast<size_t>(inner));
      for (int64_t o = b; o < e; ++o) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        for (int64_t i = 0; i < n; ++i) {
          const int64_t row = (o * n + i) * inner;
          for (int64_t j = 0; j < inner; ++j) {
            acc[size_t(j)] += Acc(src[row + j]);
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
      out, [&] { cumsum_cpu(ac, out, outer, n, inner); }, [&] { cuda_ops::cumsum(ac, out, outer, n, inner); });
}

}  // namespace

Tensor cumsum(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  detail::OpScope op_scope("cumsum", {a});
  detail::check_device(a, "cumsum");
  const int64_t d = detail::wrap_dim(dim, a.dim(), "cumsum");
  const ScalarType out_type = dtype ? *dtype : is_floating_point(a.scalar_type()) ? a.scalar_type() : kInt64;
  GB_CHECK_TYPE(out_type != kBool,
                "cumsum: a bool result is not supported; pass dtype=gb::kInt64 (the default for "
                "bool input) or a floating dtype");
  // the cast is its own differentiable op (ToCopyBackward0 returns the gradient in a's dtype)
  Tensor x = a.scalar_type() == out_type ? a : a.to(out_type);
  Tensor out = detail::make_empty(x.sizes(), out_type, x.device());
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

}  // namespace gb
