// TEMPORARY (removed by the pointwise work): throwing placeholders so the library links while the ops are written.
#include "glassbox/ops/pointwise.h"
#define GB_PENDING(name) throw gb::Error(#name ": not implemented yet")
namespace gb {
Tensor neg(const Tensor&) { GB_PENDING(neg); }
Tensor abs(const Tensor&) { GB_PENDING(abs); }
Tensor sign(const Tensor&) { GB_PENDING(sign); }
Tensor square(const Tensor&) { GB_PENDING(square); }
Tensor reciprocal(const Tensor&) { GB_PENDING(reciprocal); }
Tensor exp(const Tensor&) { GB_PENDING(exp); }
Tensor log(const Tensor&) { GB_PENDING(log); }
Tensor log1p(const Tensor&) { GB_PENDING(log1p); }
Tensor sqrt(const Tensor&) { GB_PENDING(sqrt); }
Tensor rsqrt(const Tensor&) { GB_PENDING(rsqrt); }
Tensor sin(const Tensor&) { GB_PENDING(sin); }
Tensor cos(const Tensor&) { GB_PENDING(cos); }
Tensor tanh(const Tensor&) { GB_PENDING(tanh); }
Tensor sigmoid(const Tensor&) { GB_PENDING(sigmoid); }
Tensor relu(const Tensor&) { GB_PENDING(relu); }
Tensor leaky_relu(const Tensor&, const Scalar&) { GB_PENDING(leaky_relu); }
Tensor gelu(const Tensor&, const std::string&) { GB_PENDING(gelu); }
Tensor silu(const Tensor&) { GB_PENDING(silu); }
Tensor softplus(const Tensor&, const Scalar&, const Scalar&) { GB_PENDING(softplus); }
Tensor clamp(const Tensor&, std::optional<Scalar>, std::optional<Scalar>) { GB_PENDING(clamp); }
Tensor clamp(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&) { GB_PENDING(clamp); }
Tensor where(const Tensor&, const Tensor&, const Tensor&) { GB_PENDING(where); }
Tensor where(const Tensor&, const Tensor&, const Scalar&) { GB_PENDING(where); }
Tensor where(const Tensor&, const Scalar&, const Tensor&) { GB_PENDING(where); }
Tensor masked_fill(const Tensor&, const Tensor&, const Scalar&) { GB_PENDING(masked_fill); }
Tensor lerp(const Tensor&, const Tensor&, const Scalar&) { GB_PENDING(lerp); }
Tensor addcmul(const Tensor&, const Tensor&, const Tensor&, const Scalar&) { GB_PENDING(addcmul); }
Tensor addcdiv(const Tensor&, const Tensor&, const Tensor&, const Scalar&) { GB_PENDING(addcdiv); }
Tensor eq(const Tensor&, const Tensor&) { GB_PENDING(eq); }
Tensor eq(const Tensor&, const Scalar&) { GB_PENDING(eq); }
Tensor ne(const Tensor&, const Tensor&) { GB_PENDING(ne); }
Tensor ne(const Tensor&, const Scalar&) { GB_PENDING(ne); }
Tensor lt(const Tensor&, const Tensor&) { GB_PENDING(lt); }
Tensor lt(const Tensor&, const Scalar&) { GB_PENDING(lt); }
Tensor le(const Tensor&, const Tensor&) { GB_PENDING(le); }
Tensor le(const Tensor&, const Scalar&) { GB_PENDING(le); }
Tensor gt(const Tensor&, const Tensor&) { GB_PENDING(gt); }
Tensor gt(const Tensor&, const Scalar&) { GB_PENDING(gt); }
Tensor ge(const Tensor&, const Tensor&) { GB_PENDING(ge); }
Tensor ge(const Tensor&, const Scalar&) { GB_PENDING(ge); }
Tensor logical_not(const Tensor&) { GB_PENDING(logical_not); }
Tensor logical_and(const Tensor&, const Tensor&) { GB_PENDING(logical_and); }
Tensor logical_or(const Tensor&, const Tensor&) { GB_PENDING(logical_or); }
Tensor isnan(const Tensor&) { GB_PENDING(isnan); }
Tensor isinf(const Tensor&) { GB_PENDING(isinf); }
Tensor isfinite(const Tensor&) { GB_PENDING(isfinite); }
bool equal(const Tensor&, const Tensor&) { GB_PENDING(equal); }
bool allclose(const Tensor&, const Tensor&, double, double, bool) { GB_PENDING(allclose); }
Tensor& Tensor::neg_() { GB_PENDING(neg_); }
Tensor& Tensor::exp_() { GB_PENDING(exp_); }
Tensor& Tensor::log_() { GB_PENDING(log_); }
Tensor& Tensor::sqrt_() { GB_PENDING(sqrt_); }
Tensor& Tensor::tanh_() { GB_PENDING(tanh_); }
Tensor& Tensor::sigmoid_() { GB_PENDING(sigmoid_); }
Tensor& Tensor::relu_() { GB_PENDING(relu_); }
Tensor& Tensor::clamp_(std::optional<Scalar>, std::optional<Scalar>) { GB_PENDING(clamp_); }
Tensor& Tensor::masked_fill_(const Tensor&, const Scalar&) { GB_PENDING(masked_fill_); }
Tensor& Tensor::addcmul_(const Tensor&, const Tensor&, const Scalar&) { GB_PENDING(addcmul_); }
Tensor& Tensor::addcdiv_(const Tensor&, const Tensor&, const Scalar&) { GB_PENDING(addcdiv_); }
Tensor& Tensor::lerp_(const Tensor&, const Scalar&) { GB_PENDING(lerp_); }
}  // namespace gb
