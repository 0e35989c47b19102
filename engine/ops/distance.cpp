// engine/ops/distance.cpp — cosine_similarity, composed of differentiable ops (its backward is theirs).
#include <algorithm>

#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"

namespace gb {

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  const char* op = "cosine_similarity";
  detail::check_defined(x1, op);
  detail::check_defined(x2, op, "x2");
  detail::OpScope op_scope(op, {x1, x2});
  const int64_t nd = std::max(x1.dim(), x2.dim());
  GB_CHECK(nd > 0, op, ": expected inputs of at least one dim, but got ", x1.sizes(), " and ", x2.sizes());
  GB_CHECK(dim >= -nd && dim < nd, op, ": dim ", dim, " is out of range for inputs of ", nd, " dims");
  // libtorch's formula: sum(x1 x2) / sqrt(clamp_min(sum(x1^2) sum(x2^2), eps^2)), along dim of the broadcast shape
  Tensor w12 = (x1 * x2).sum({dim});
  Tensor w1 = (x1 * x1).sum({dim}), w2 = (x2 * x2).sum({dim});
  Tensor out = w12 / gb::sqrt(gb::clamp(w1 * w2, eps * eps));
  op_scope.set_output(out);
  return out;
}

}  // namespace gb
