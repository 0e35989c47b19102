// glassbox/ops/pointwise.h — elementwise ops with NumPy/PyTorch broadcasting and type promotion.
//
// Shapes broadcast from the right (a (N,1,D) with a (M,D) gives (N,M,D)); a mismatch throws naming the op and
// both shapes. The result dtype is result_type(a, b): bool < integer < floating, where a dimensioned tensor
// outranks a 0-dim tensor, which outranks a plain number, within the same category (PyTorch's rules).
// Every differentiable op here has its backward next to its forward in engine/ops/.
#pragma once

#include <optional>
#include <string>

#include "glassbox/core/tensor.h"

namespace gb {

ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
// The broadcast shape of a and b; throws gb::Error naming `op` and both shapes when they do not broadcast.
std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op = "broadcast");

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  // a + alpha * b
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  // a - alpha * b
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);  // b - alpha * a
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integers give the default float dtype
Tensor div(const Tensor& a, const Scalar& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor pow(const Scalar& a, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// libtorch's two-tensor min/max: the elementwise minimum/maximum.
inline Tensor max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
inline Tensor min(const Tensor& a, const Tensor& b) { return minimum(a, b); }
// The Gauss error function; gradient 2/sqrt(pi) exp(-x^2).
Tensor erf(const Tensor& a);
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor sign(const Tensor& a);
Tensor round(const Tensor& a);  // halves to even; integers pass through (all four); gradient 0
Tensor floor(const Tensor& a);
Tensor ceil(const Tensor& a);
Tensor trunc(const Tensor& a);
Tensor square(const Tensor& a);
Tensor reciprocal(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor log1p(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor leaky_relu(const Tensor& a, const Scalar& negative_slope = 0.01);
// scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1)), as libtorch's elu (ELU's defaults: 1, 1, 1).
Tensor elu(const Tensor& a, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
// x clamped to [min_val, max_val]; its gradient is 0 at and beyond the bounds (libtorch's hardtanh_backward).
Tensor hardtanh(const Tensor& a, const Scalar& min_val = -1, const Scalar& max_val = 1);
// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& a, const std::string& approximate = "none");
Tensor silu(const Tensor& a);
// log(1 + exp(beta x)) / beta, linear where beta x > threshold.
Tensor softplus(const Tensor& a, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
// condition ? a : b, all three broadcast together; condition must be bool.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value);
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);

// Comparisons return bool tensors and have no gradient.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Scalar& b);
Tensor logical_not(const Tensor& a);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);
Tensor isfinite(const Tensor& a);
bool equal(const Tensor& a, const Tensor& b);  // same sizes and elements
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

}  // namespace gb
