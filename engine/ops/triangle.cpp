// engine/ops/triangle.cpp — triu and tril: a matrix's (or a batch of matrices') upper or lower triangle, zeros
// elsewhere. Composed of masked_fill, whose backward passes the gradient through the kept triangle (on cuda too).
#include "core/op_scope.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/shape.h"

namespace gb {
namespace {

Tensor triangle(const Tensor& a, int64_t diagonal, bool upper, const char* op) {
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op);
  GB_CHECK(a.dim() >= 2, op, ": input tensor must have at least 2 dimensions, got one of shape ", a.sizes(),
           "; unsqueeze a vector into a matrix first");
  const int64_t rows = a.size(-2), cols = a.size(-1);
  // drop[i][j]: outside the triangle (j - i < diagonal for triu, j - i > diagonal for tril)
  Tensor offset = arange(cols, TensorOptions().dtype(kInt64)).view({1, cols}) -
                  arange(rows, TensorOptions().dtype(kInt64)).view({rows, 1});
  Tensor drop = (upper ? offset < diagonal : offset > diagonal).to(a.device());
  Tensor out = a.masked_fill(drop, 0);
  op_scope.set_output(out);
  return out;
}

}  // namespace

Tensor triu(const Tensor& a, int64_t diagonal) { return triangle(a, diagonal, true, "triu"); }
Tensor tril(const Tensor& a, int64_t diagonal) { return triangle(a, diagonal, false, "tril"); }

}  // namespace gb
