// engine/ops/softmax.cpp — softmax and log_softmax along one dim, with their backward formulas.
//
// The input is viewed as (outer, C, inner) around the softmax dim (made contiguous first when it is not). With
// inner == 1, the common case of the last dim, each row of C elements is three tight passes (max, sum of
// exp(x - max), write), rows split across threads. Otherwise a block of neighbouring columns is processed
// together so every pass walks memory in order. 16-bit floats are computed in float.
#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "ops/loops.h"

namespace gb {
namespace {

// One row: y = softmax(x) or log_softmax(x) over C contiguous elements.
template <typename T, bool kLog>
void softmax_row(const T* x, T* y, int64_t C) {
  using M = opmath_t<T>;
  M mx = -std::numeric_limits<M>::infinity();
  for (int64_t c = 0; c < C; ++c) {
    M v = M(x[c]);
    mx = v > mx ? v : mx;
  }
  M sum = 0;
  if constexpr (kLog) {
    for (int64_t c = 0; c < C; ++c) sum += std::exp(M(x[c]) - mx);
    const M log_sum = std::log(sum);  // (x - max) - log_sum keeps precision that x - (max + log_sum) loses
    for (int64_t c = 0; c < C; ++c) y[c] = T((M(x[c]) - mx) - log_sum);
  } else if constexpr (std::is_same_v<T, M>) {
    for (int64_t c = 0; c < C; ++c) {
      M e = std::exp(x[c] - mx);
      y[c] = e;
      sum += e;
    }
    const M scale = M(1) / sum;
    for (int64_t c = 0; c < C; ++c) y[c] *= scale;
  } else {  // 16-bit: keep exp in float rather than round it to T twice
    for (int64_t c = 0; c < C; ++c) sum += std::exp(M(x[c]) - mx);
    const M scale = M(1) / sum;
    for (int64_t c = 0; c < C; ++c) y[c] = T(std::exp(M(x[c]) - mx) * scale);
  }
}

// n (<= B) neighbouring columns of one outer slice: element (c, j) at x[c * inner + j].
template <typename T, bool kLog, int64_t B>
void softmax_columns(const T* x, T* y, int64_t C, int64_t inner, int64_t n) {
  using M = opmath_t<T>;
  M mx[B], sum[B];
  for (int64_t j = 0; j < n; ++j) {
    mx[j] = -std::numeric_limits<M>::infinity();
    sum[j] = 0;
  }
  for (int64_t c = 0; c < C; ++c) {
    const T* xc = x + c * inner;
    for (int64_t j = 0; j < n; ++j) {
      M v = M(xc[j]);
      mx[j] = v > mx[j] ? v : mx[j];
    }
  }
  for (int64_t c = 0; c < C; ++c) {
    const T* xc = x + c * inner;
    for (int64_t j = 0; j < n; ++j) sum[j] += std::exp(M(xc[j]) - mx[j]);
  }
  if constexpr (kLog) {
    for (int64_t j = 0; j < n; ++j) sum[j] = std::log(sum[j]);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < n; ++j) y[c * inner + j] = T((M(x[c * inner + j]) - mx[j]) - sum[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) sum[j] = M(1) / sum[j];
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < n; ++j) y[c * inner + j] = T(std::exp(M(x[c * inner + j]) - mx[j]) * sum[j]);
  }
}

template <bool kLog>
Tensor softmax_kernel(const Tensor& in, int64_t dim, const char* op) {
  Tensor x = in.contiguous();
  Tensor out = detail::make_empty(in.sizes(), in.scalar_type(), in.device());
  if (x.numel() == 0) return out;
  int64_t outer = 1, C = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    else if (d == dim) C = x.size(d);
    else inner *= x.size(d);
  }
  detail::dispatch_floating(x.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = out.data_ptr<T>();
    if (inner == 1) {
      const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / C);
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) softmax_row<T, kLog>(xp + r * C, yp + r * C, C);
      });
    } else {
      constexpr int64_t B = 64;
      const int64_t blocks = (inner + B - 1) / B;
      const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / (C * B));
      parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t o = t / blocks, j0 = (t % blocks) * B;
          const int64_t off = o * C * inner + j0;
          softmax_columns<T, kLog, B>(xp + off, yp + off, C, inner, std::min(B, inner - j0));
        }
      });
    }
  });
  return out;
}

template <bool kLog>
Tensor softmax_impl(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  const char* op = kLog ? "log_softmax" : "softmax";
  detail::check_cpu(x, op);
  Tensor in = dtype && *dtype != x.scalar_type() ? x.to(*dtype) : x;  // a differentiable cast, before the op
  GB_CHECK_TYPE(is_floating_point(in.scalar_type()), op, ": expected a floating point input, got ",
                to_string(in.scalar_type()), " (shape ", in.sizes(), "); convert with x.to(gb::kFloat) or pass ",
                "dtype=gb::kFloat");
  const int64_t d = detail::wrap_dim(dim, in.dim(), op);
  Tensor out = softmax_kernel<kLog>(in, in.dim() == 0 ? 0 : d, op);
  if (autograd::needs_grad(in)) {
    if constexpr (kLog)
      autograd::record("LogSoftmaxBackward0", {in}, out, {autograd::output(out)}, [d](autograd::BackwardContext& c) {
        const Tensor& g = c.grad();
        return variable_list{g - exp(c.saved(0)) * g.sum({d}, true)};
      });
    else
      autograd::record("SoftmaxBackward0", {in}, out, {autograd::output(out)}, [d](autograd::BackwardContext& c) {
        const Tensor& g = c.grad();
        const Tensor& y = c.saved(0);
        return variable_list{y * (g - (g * y).sum({d}, true))};
      });
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) { return softmax_impl<false>(x, dim, dtype); }
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl<true>(x, dim, dtype);
}

}  // namespace gb
