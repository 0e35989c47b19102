// engine/core/tensor_methods.cpp — Tensor methods that are ops: each forwards to the free function of the same name.
#include "glassbox/core/generator.h"
#include "glassbox/core/tensor.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "glassbox/ops/sort.h"

namespace gb {

Tensor Tensor::view(IntArrayRef shape) const { return gb::view(*this, shape); }
Tensor Tensor::reshape(IntArrayRef shape) const { return gb::reshape(*this, shape); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return gb::transpose(*this, d0, d1); }
Tensor Tensor::permute(IntArrayRef dims) const { return gb::permute(*this, dims); }
Tensor Tensor::t() const { return gb::t(*this); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const { return gb::narrow(*this, dim, start, length); }
Tensor Tensor::select(int64_t dim, int64_t index) const { return gb::select(*this, dim, index); }
Tensor Tensor::as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) const {
  return gb::as_strided(*this, size, stride, storage_offset);
}
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return gb::slice(*this, dim, start, end, step);
}
Tensor Tensor::expand(IntArrayRef sizes) const { return gb::expand(*this, sizes); }
Tensor Tensor::squeeze() const { return gb::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return gb::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(int64_t dim) const { return gb::unsqueeze(*this, dim); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return gb::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const { return gb::unflatten(*this, dim, sizes); }
std::vector<Tensor> Tensor::split(int64_t size, int64_t dim) const { return gb::split(*this, size, dim); }
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef sizes, int64_t dim) const {
  return gb::split_with_sizes(*this, sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return gb::chunk(*this, chunks, dim); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return gb::unbind(*this, dim); }

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return gb::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const { return gb::add(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return gb::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const { return gb::sub(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return gb::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return gb::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return gb::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return gb::div(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return gb::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return gb::pow(*this, e); }
Tensor Tensor::neg() const { return gb::neg(*this); }
Tensor Tensor::abs() const { return gb::abs(*this); }
Tensor Tensor::exp() const { return gb::exp(*this); }
Tensor Tensor::log() const { return gb::log(*this); }
Tensor Tensor::log1p() const { return gb::log1p(*this); }
Tensor Tensor::sqrt() const { return gb::sqrt(*this); }
Tensor Tensor::rsqrt() const { return gb::rsqrt(*this); }
Tensor Tensor::sin() const { return gb::sin(*this); }
Tensor Tensor::cos() const { return gb::cos(*this); }
Tensor Tensor::tanh() const { return gb::tanh(*this); }
Tensor Tensor::sigmoid() const { return gb::sigmoid(*this); }
Tensor Tensor::relu() const { return gb::relu(*this); }
Tensor Tensor::square() const { return gb::square(*this); }
Tensor Tensor::reciprocal() const { return gb::reciprocal(*this); }
Tensor Tensor::sign() const { return gb::sign(*this); }
Tensor Tensor::round() const { return gb::round(*this); }
Tensor Tensor::floor() const { return gb::floor(*this); }
Tensor Tensor::ceil() const { return gb::ceil(*this); }
Tensor Tensor::trunc() const { return gb::trunc(*this); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return gb::clamp(*this, min, max); }
Tensor Tensor::eq(const Tensor& o) const { return gb::eq(*this, o); }
Tensor Tensor::eq(const Scalar& o) const { return gb::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return gb::ne(*this, o); }
Tensor Tensor::ne(const Scalar& o) const { return gb::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return gb::lt(*this, o); }
Tensor Tensor::lt(const Scalar& o) const { return gb::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return gb::le(*this, o); }
Tensor Tensor::le(const Scalar& o) const { return gb::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return gb::gt(*this, o); }
Tensor Tensor::gt(const Scalar& o) const { return gb::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return gb::ge(*this, o); }
Tensor Tensor::ge(const Scalar& o) const { return gb::ge(*this, o); }
Tensor Tensor::logical_not() const { return gb::logical_not(*this); }
Tensor Tensor::isnan() const { return gb::isnan(*this); }
Tensor Tensor::isinf() const { return gb::isinf(*this); }
Tensor Tensor::isfinite() const { return gb::isfinite(*this); }
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& v) const { return gb::masked_fill(*this, mask, v); }
Tensor Tensor::where(const Tensor& cond, const Tensor& other) const { return gb::where(cond, *this, other); }

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return gb::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return gb::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return gb::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return gb::mean(*this, dims, keepdim, dtype);
}
Tensor Tensor::max() const { return gb::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return gb::max(*this, dim, keepdim); }
Tensor Tensor::max(const Tensor& other) const { return gb::maximum(*this, other); }
Tensor Tensor::min() const { return gb::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return gb::min(*this, dim, keepdim); }
Tensor Tensor::min(const Tensor& other) const { return gb::minimum(*this, other); }
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return gb::amax(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return gb::amin(*this, dims, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return gb::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return gb::argmin(*this, dim, keepdim); }
Tensor Tensor::var(bool unbiased) const { return gb::var(*this, {}, unbiased ? 1 : 0); }
Tensor Tensor::var(IntArrayRef dims, bool unbiased, bool keepdim) const {
  return gb::var(*this, dims, unbiased ? 1 : 0, keepdim);
}
Tensor Tensor::std(bool unbiased) const { return gb::std(*this, {}, unbiased ? 1 : 0); }
Tensor Tensor::std(IntArrayRef dims, bool unbiased, bool keepdim) const {
  return gb::std(*this, dims, unbiased ? 1 : 0, keepdim);
}
Tensor Tensor::norm(const Scalar& p) const { return gb::norm(*this, p); }
Tensor Tensor::norm(const Scalar& p, IntArrayRef dims, bool keepdim) const { return gb::norm(*this, p, dims, keepdim); }
Tensor Tensor::all() const { return gb::all(*this); }
Tensor Tensor::any() const { return gb::any(*this); }
Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const { return gb::cumsum(*this, dim, dtype); }
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const { return gb::cumprod(*this, dim, dtype); }
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const { return gb::sort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t dim, bool descending) const {
  return gb::sort(*this, stable, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const { return gb::argsort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return gb::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::flip(IntArrayRef dims) const { return gb::flip(*this, dims); }
Tensor Tensor::repeat(IntArrayRef repeats) const { return gb::repeat(*this, repeats); }

Tensor Tensor::matmul(const Tensor& o) const { return gb::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return gb::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return gb::bmm(*this, o); }
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const { return gb::softmax(*this, dim, dtype); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return gb::log_softmax(*this, dim, dtype);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return gb::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return gb::gather(*this, dim, index); }
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return gb::scatter_add(*this, dim, index, src);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return gb::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return gb::nonzero(*this); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return gb::roll(*this, shifts, dims); }
Tensor Tensor::triu(int64_t diagonal) const { return gb::triu(*this, diagonal); }
Tensor Tensor::tril(int64_t diagonal) const { return gb::tril(*this, diagonal); }
Tensor Tensor::erf() const { return gb::erf(*this); }
Tensor Tensor::bernoulli() const { return gb::bernoulli(*this); }
Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  return gb::multinomial(*this, num_samples, replacement);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return gb::prod(dtype ? to(*dtype) : *this); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return gb::prod(*this, dim, keepdim, dtype);
}

Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }

}  // namespace gb
