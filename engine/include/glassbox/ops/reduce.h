// glassbox/ops/reduce.h — reductions over dims (negative dims count from the end; an empty dim list = all dims).
//
// keepdim keeps reduced dims as size 1, so the result broadcasts against the input: x - x.mean({1}, true).
// Integer and bool inputs sum to int64, like PyTorch. max/min over a dim return (values, indices); their
// gradient flows to the index picked (the first one on ties), amax/amin spread it evenly over ties.
#pragma once

#include <optional>
#include <tuple>

#include "glassbox/core/tensor.h"

namespace gb {

Tensor sum(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& a, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& a, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& a);
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& a);
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& a, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, IntArrayRef dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// correction = 1 is Bessel's (unbiased) estimate, 0 the population variance.
Tensor var(const Tensor& a, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& a, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& a, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);
// The p-norm (p = 1, 2, any positive number, inf) over dims.
Tensor norm(const Tensor& a, const Scalar& p = 2, IntArrayRef dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& a, IntArrayRef dims, bool keepdim = false);
Tensor all(const Tensor& a);
Tensor any(const Tensor& a);
Tensor prod(const Tensor& a);
// The product along dim (int64 for integers and bool, as sum); the gradient handles zeros as the full prod's.
Tensor prod(const Tensor& a, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);

// Running sum along dim: out[..., i, ...] = sum of a[..., :i+1, ...]. dtype: the result's (and the accumulation's)
// dtype; by default a's, except integers and bool, which sum to int64 as in PyTorch. Floats accumulate in double
// (as libtorch's CPU kernel). Gradient: the reversed running sum of the gradient (CumsumBackward0).
Tensor cumsum(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// Running products along dim (integers and bool in int64 unless dtype says): cpu and meta (no CUDA kernel yet). The
// gradient is exact where inputs are 0; its double backward (create_graph) needs an input without zeros.
Tensor cumprod(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// Sums g down to `shape` (the inverse of broadcasting); used by backward formulas.
Tensor sum_to(const Tensor& g, IntArrayRef shape);

}  // namespace gb
