// engine/ops/softmax.cpp — softmax and log_softmax along one dim, with their backward formulas.
//
// The input is viewed as (outer, C, inner) around the softmax dim (made contiguous first when it is not). With
// inner == 1, the common case of the last dim, each row of C elements is three tight passes (max, sum of
// exp(x - max), write), rows split across threads. Otherwise a block of neighbouring columns is processed
// together so every pass walks memory in order. 16-bit floats are computed in float.
// The exp loops vectorize only when GCC may if-convert float compares (clang does so by default).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/cpu_isa.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "ops/log_softmax_onehot.h"
#include "ops/loops.h"
#include "ops/vec_math.h"

namespace gb {
namespace {

// Row helpers over C contiguous elements, written so the compiler vectorizes them (sums in 8 lanes).
template <typename T>
GB_ALWAYS_INLINE opmath_t<T> row_max(const T* x, int64_t C) {
  using M = opmath_t<T>;
  if constexpr (std::is_same_v<T, M>) {
    return detail::extreme_vec<M, true>(x, C);  // a NaN max makes the whole row NaN below, as in PyTorch
  } else {
    M mx = -std::numeric_limits<M>::infinity();
    for (int64_t c = 0; c < C; ++c) mx = M(x[c]) > mx ? M(x[c]) : mx;
    return mx;
  }
}

// sum of exp(x - mx).
template <typename T>
GB_ALWAYS_INLINE opmath_t<T> row_sum_exp(const T* x, int64_t C, opmath_t<T> mx) {
  using M = opmath_t<T>;
  M lane[8] = {};
  int64_t c = 0;
  for (; c + 8 <= C; c += 8)
    for (int k = 0; k < 8; ++k) lane[k] += detail::exp_vec(M(x[c + k]) - mx);
  for (; c < C; ++c) lane[0] += detail::exp_vec(M(x[c]) - mx);
  M sum = 0;
  for (M v : lane) sum += v;
  return sum;
}

template <typename M>
GB_ALWAYS_INLINE M row_sum(const M* y, int64_t C) {
  M lane[8] = {};
  int64_t c = 0;
  for (; c + 8 <= C; c += 8)
    for (int k = 0; k < 8; ++k) lane[k] += y[c + k];
  for (; c < C; ++c) lane[0] += y[c];
  M sum = 0;
  for (M v : lane) sum += v;
  return sum;
}

// One row: y = softmax(x) or log_softmax(x) over C contiguous elements.
template <typename T, bool kLog>
GB_ALWAYS_INLINE void softmax_row(const T* x, T* y, int64_t C) {
  using M = opmath_t<T>;
  const M mx = row_max(x, C);
  if constexpr (kLog) {
    const M log_sum = std::log(row_sum_exp(x, C, mx));
    // (x - max) - log_sum keeps the precision that x - (max + log_sum) loses
    for (int64_t c = 0; c < C; ++c) y[c] = T((M(x[c]) - mx) - log_sum);
  } else if constexpr (std::is_same_v<T, M>) {
    for (int64_t c = 0; c < C; ++c) y[c] = detail::exp_vec(x[c] - mx);
    const M scale = M(1) / row_sum(y, C);
    for (int64_t c = 0; c < C; ++c) y[c] *= scale;
  } else {  // 16-bit: keep exp in float rather than round it to T twice
    const M scale = M(1) / row_sum_exp(x, C, mx);
    for (int64_t c = 0; c < C; ++c) y[c] = T(detail::exp_vec(M(x[c]) - mx) * scale);
  }
}

// float rows on 16-lane vectors (vec_math.h: the same bits on every instruction set); sums in 16 lanes added in
// lane order at the end. The last pass over a row prefetches the next row (null for the last row of a span), so
// that the first pass over it finds it in cache instead of waiting on memory; with `stream` (an output far bigger
// than the cache) it writes y with non-temporal stores, softmax's exponentials kept in a scratch row meanwhile.
template <int W, bool kLog>
GB_ALWAYS_INLINE void softmax_row_f32(const float* x, float* y, int64_t C, const float* next, bool stream) {
  using detail::Float16v;
  constexpr int64_t kScratch = 4096;
  float scratch[kLog ? 1 : kScratch];
  const int64_t Cv = C - C % 16;
  const float mx = detail::extreme_native<W, true>(x, C);
  float* e = !kLog && stream && C <= kScratch ? scratch : y;  // softmax: where exp(x - max) waits for the scale
  Float16v acc = {};
  for (int64_t c = 0; c < Cv; c += 16) {
    Float16v v = detail::load16(x + c) - mx;
    detail::exp_vec_inplace<W>(v);
    if constexpr (!kLog) detail::store16(e + c, v);
    acc += v;
  }
  float lane[16];
  std::memcpy(lane, &acc, sizeof lane);
  for (int64_t c = Cv, k = 0; c < C; ++c, ++k) {
    const float ec = detail::exp_vec(x[c] - mx);
    if constexpr (!kLog) e[c] = ec;
    lane[k] += ec;
  }
  float sum = 0;
  for (float v : lane) sum += v;
  auto fetch = [next](int64_t c) {
    if (next) __builtin_prefetch(next + c);
  };
  if constexpr (kLog) {
    const float log_sum = std::log(sum);
    // (x - max) - log_sum keeps the precision that x - (max + log_sum) loses
    detail::write_row(
        y, C, stream,
        [&](int64_t c, Float16v& v) {
          fetch(c);
          v = (detail::load16(x + c) - mx) - log_sum;
        },
        [&](int64_t c) { return (x[c] - mx) - log_sum; });
  } else {
    const float scale = 1.0f / sum;
    detail::write_row(
        y, C, stream && e != y,
        [&](int64_t c, Float16v& v) {
          fetch(c);
          v = detail::load16(e + c) * scale;
        },
        [&](int64_t c) { return e[c] * scale; });
  }
}

// Rows [0, n) of C elements, compiled for each instruction set (core/cpu_isa.h); the kernels pick one per call.
// `stream`: float outputs through non-temporal stores (see softmax_row_f32).
GB_ISA_VARIANTS_W(softmax_rows, (const T* x, T* y, int64_t n, int64_t C, bool stream), {
  for (int64_t r = 0; r < n; ++r) {
    if constexpr (std::is_same_v<T, float>)
      softmax_row_f32<kW, F...>(x + r * C, y + r * C, C, r + 1 < n ? x + (r + 1) * C : nullptr, stream);
    else
      softmax_row<T, F...>(x + r * C, y + r * C, C);
  }
  if (stream) detail::stream_fence();
})

// The backward of one row (inner == 1): log_softmax: g - exp(y) * sum(g); softmax: y * (g - sum(g * y)).
template <typename T, bool kLog>
GB_ALWAYS_INLINE void softmax_backward_row(const T* g, const T* y, T* dx, int64_t C) {
  using M = opmath_t<T>;
  M lane[8] = {};
  int64_t c = 0;
  for (; c + 8 <= C; c += 8)
    for (int k = 0; k < 8; ++k) lane[k] += kLog ? M(g[c + k]) : M(g[c + k]) * M(y[c + k]);
  for (; c < C; ++c) lane[0] += kLog ? M(g[c]) : M(g[c]) * M(y[c]);
  M sum = 0;
  for (M v : lane) sum += v;
  for (c = 0; c < C; ++c) {
    if constexpr (kLog)
      dx[c] = T(M(g[c]) - detail::exp_vec(M(y[c])) * sum);
    else
      dx[c] = T(M(y[c]) * (M(g[c]) - sum));
  }
}
// The same for float on 16-lane vectors, the second pass prefetching the next row's g and y (null for the last row)
// and, with `stream`, writing dx through non-temporal stores.
template <int W, bool kLog>
GB_ALWAYS_INLINE void softmax_backward_row_f32(const float* g, const float* y, float* dx, int64_t C,
                                               const float* g_next, const float* y_next, bool stream) {
  using detail::Float16v;
  const int64_t Cv = C - C % 16;
  Float16v acc = {};
  for (int64_t c = 0; c < Cv; c += 16) {
    if constexpr (kLog)
      acc += detail::load16(g + c);
    else
      acc += detail::load16(g + c) * detail::load16(y + c);
  }
  float lane[16];
  std::memcpy(lane, &acc, sizeof lane);
  for (int64_t c = Cv, k = 0; c < C; ++c, ++k) lane[k] += kLog ? g[c] : g[c] * y[c];
  float sum = 0;
  for (float v : lane) sum += v;
  detail::write_row(
      dx, C, stream,
      [&](int64_t c, Float16v& v) {
        if (g_next) {
          __builtin_prefetch(g_next + c);
          __builtin_prefetch(y_next + c);
        }
        v = detail::load16(y + c);
        if constexpr (kLog) {
          detail::exp_vec_inplace<W>(v);
          v = detail::load16(g + c) - v * sum;
        } else {
          v = v * (detail::load16(g + c) - sum);
        }
      },
      [&](int64_t c) { return kLog ? g[c] - detail::exp_vec(y[c]) * sum : y[c] * (g[c] - sum); });
}
GB_ISA_VARIANTS_W(softmax_backward_rows, (const T* g, const T* y, T* dx, int64_t n, int64_t C, bool stream), {
  for (int64_t r = 0; r < n; ++r) {
    if constexpr (std::is_same_v<T, float>) {
      const bool more = r + 1 < n;
      softmax_backward_row_f32<kW, F...>(g + r * C, y + r * C, dx + r * C, C, more ? g + (r + 1) * C : nullptr,
                                         more ? y + (r + 1) * C : nullptr, stream);
    } else {
      softmax_backward_row<T, F...>(g + r * C, y + r * C, dx + r * C, C);
    }
  }
  if (stream) detail::stream_fence();
})

// log_softmax's backward from the compact one-hot gradient (log_softmax_onehot.h): row r's gradient is zero but for
// gt[r] at column cols[r] (none when -1). The dense formula's operations on those values: sum(g) is 0 + gt (the lane
// sums add zeros), dx = g - exp(y) * sum with g = 0 off the target.
template <typename T>
GB_ALWAYS_INLINE void onehot_backward_row(T gt, int64_t t, const T* y, T* dx, int64_t C) {
  using M = opmath_t<T>;
  const M sum = M(0) + (t >= 0 ? M(gt) : M(0));
  for (int64_t c = 0; c < C; ++c) dx[c] = T((c == t ? M(gt) : M(0)) - detail::exp_vec(M(y[c])) * sum);
}
template <int W>
GB_ALWAYS_INLINE void onehot_backward_row_f32(float gt, int64_t t, const float* y, float* dx, int64_t C,
                                              const float* y_next, bool stream) {
  using detail::Float16v;
  const float sum = 0.0f + (t >= 0 ? gt : 0.0f);
  detail::write_row(
      dx, C, stream,
      [&](int64_t c, Float16v& v) {
        if (y_next) __builtin_prefetch(y_next + c);
        Float16v e = detail::load16(y + c);
        detail::exp_vec_inplace<W>(e);
        v = Float16v{} - e * sum;
        if (uint64_t(t - c) < 16) v[t - c] = gt - e[t - c] * sum;
      },
      [&](int64_t c) { return (c == t ? gt : 0.0f) - detail::exp_vec(y[c]) * sum; });
}
GB_ISA_VARIANTS_W(onehot_backward_rows,
                  (const T* gt, const int64_t* cols, const T* y, T* dx, int64_t n, int64_t C, bool stream), {
                    for (int64_t r = 0; r < n; ++r) {
                      if constexpr (std::is_same_v<T, float>)
                        onehot_backward_row_f32<kW, F...>(gt[r], cols[r], y + r * C, dx + r * C, C,
                                                          r + 1 < n ? y + (r + 1) * C : nullptr, stream);
                      else
                        onehot_backward_row<T, F...>(gt[r], cols[r], y + r * C, dx + r * C, C);
                    }
                    if (stream) detail::stream_fence();
                  })

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
    for (int64_t j = 0; j < n; ++j) sum[j] += detail::exp_vec(M(xc[j]) - mx[j]);
  }
  if constexpr (kLog) {
    for (int64_t j = 0; j < n; ++j) sum[j] = std::log(sum[j]);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < n; ++j) y[c * inner + j] = T((M(x[c * inner + j]) - mx[j]) - sum[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) sum[j] = M(1) / sum[j];
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < n; ++j) y[c * inner + j] = T(detail::exp_vec(M(x[c * inner + j]) - mx[j]) * sum[j]);
  }
}

// The cpu kernel: rows of the last dim three tight passes each; other dims a block of columns at a time.
template <bool kLog>
void softmax_rows_cpu(const Tensor& x, const Tensor& out, int64_t dim, const char* op) {
  int64_t outer = 1, C = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim)
      outer *= x.size(d);
    else if (d == dim)
      C = x.size(d);
    else
      inner *= x.size(d);
  }
  detail::dispatch_floating(x.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = out.data_ptr<T>();
    if (inner == 1) {
      const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / C);
      auto rows = GB_PICK_ISA(softmax_rows, T, kLog);
      const bool stream = detail::stream_output(out.nbytes());
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) { rows(xp + b * C, yp + b * C, e - b, C, stream); });
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
}

// The cpu and meta half: the contiguous input and the output (meta stops there), then the kernel.
template <bool kLog>
Tensor softmax_cpu(const Tensor& in, int64_t dim, const char* op) {
  Tensor x = in.contiguous();
  Tensor out = detail::make_empty(in.sizes(), in.scalar_type(), in.device());
  if (x.numel() == 0) return out;
  detail::run_cpu_kernel(op, out, [&] { softmax_rows_cpu<kLog>(x, out, dim, op); });
  return out;
}

template <bool kLog>
Tensor softmax_kernel(const Tensor& in, int64_t dim, const char* op) {
  return detail::run_op(
      in.device(), [&] { return softmax_cpu<kLog>(in, dim, op); }, [&] { return cuda_ops::softmax(in, dim, kLog); });
}

// The fused backward's cpu kernel: one pass per row.
template <bool kLog>
void softmax_backward_rows_cpu(const Tensor& gc, const Tensor& yc, const Tensor& out, int64_t d, const char* op) {
  const Tensor& y = yc;
  int64_t outer = 1, C = 1, inner = 1;
  for (int64_t k = 0; k < y.dim(); ++k) {
    if (k < d)
      outer *= y.size(k);
    else if (k == d)
      C = y.size(k);
    else
      inner *= y.size(k);
  }
  detail::dispatch_floating(y.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const T* gp = static_cast<const T*>(gc.data_ptr());
    const T* yp = static_cast<const T*>(yc.data_ptr());
    T* dx = out.data_ptr<T>();
    const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / (C * inner));
    if (inner == 1) {
      auto rows = GB_PICK_ISA(softmax_backward_rows, T, kLog);
      const bool stream = detail::stream_output(out.nbytes());
      parallel_for(0, outer, grain,
                   [&](int64_t b, int64_t e) { rows(gp + b * C, yp + b * C, dx + b * C, e - b, C, stream); });
      return;
    }
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      std::vector<M> sum(static_cast<size_t>(inner));
      for (int64_t o = b; o < e; ++o) {
        const int64_t base = o * C * inner;
        std::fill(sum.begin(), sum.end(), M(0));
        for (int64_t c = 0; c < C; ++c)
          for (int64_t j = 0; j < inner; ++j) {
            const int64_t k = base + c * inner + j;
            sum[j] += kLog ? M(gp[k]) : M(gp[k]) * M(yp[k]);
          }
        for (int64_t c = 0; c < C; ++c)
          for (int64_t j = 0; j < inner; ++j) {
            const int64_t k = base + c * inner + j;
            if constexpr (kLog)
              dx[k] = T(M(gp[k]) - std::exp(M(yp[k])) * sum[j]);
            else
              dx[k] = T(M(yp[k]) * (M(gp[k]) - sum[j]));
          }
      }
    });
  });
}

// The fused backward on cpu and meta: the contiguous operands and the output (meta stops there), then the kernel.
template <bool kLog>
Tensor softmax_backward_cpu(const Tensor& g, const Tensor& y, int64_t d, const char* op) {
  detail::OpScope op_scope(op, {g, y});
  Tensor gc = g.contiguous(), yc = y.contiguous();
  Tensor out = detail::make_empty(y.sizes(), y.scalar_type(), y.device());
  if (out.numel() > 0) detail::run_cpu_kernel(op, out, [&] { softmax_backward_rows_cpu<kLog>(gc, yc, out, d, op); });
  op_scope.set_output(out);
  return out;
}

// The backward of (log_)softmax along dim, y its result, in one pass per row (PyTorch's
// _log_softmax_backward_data / _softmax_backward_data):
//   log_softmax: g - exp(y) * sum(g)        softmax: y * (g - sum(g * y))
// Under create_graph (grad mode on in backward) the differentiable composite records its own graph.
template <bool kLog>
Tensor softmax_backward(const Tensor& g, const Tensor& y, int64_t d) {
  auto composite = [&] {
    if constexpr (kLog)
      return g - exp(y) * g.sum({d}, true);
    else
      return y * (g - (g * y).sum({d}, true));
  };
  if (GradMode::is_enabled() || g.scalar_type() != y.scalar_type() || g.sizes() != y.sizes()) return composite();
  const char* op = kLog ? "log_softmax_backward" : "softmax_backward";
  return detail::run_op(
      y.device(), [&] { return softmax_backward_cpu<kLog>(g, y, d, op); },
      [&] {
        if (y.dim() == 0 || d != y.dim() - 1) return composite();
        detail::OpScope op_scope(op, {g, y});  // one kernel (cuda/softmax.cu)
        Tensor out = detail::make_empty(y.sizes(), y.scalar_type(), y.device());
        cuda_ops::softmax_backward(g, y, out, kLog);
        op_scope.set_output(out);
        return out;
      });
}

// The cpu kernel of log_softmax_backward_onehot.
void onehot_backward_cpu(const Tensor& gc, const Tensor& yc, const detail::OneHotTargets& targets, const Tensor& out) {
  const Tensor& y = yc;
  const char* op = "log_softmax_backward";
  const int64_t N = y.size(0), C = y.size(1);
  detail::dispatch_floating(y.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* gp = gc.data_ptr<T>();
      const T* yp = yc.data_ptr<T>();
      const int64_t* cols = targets.cols.data();
      T* dx = out.data_ptr<T>();
      auto rows = GB_PICK_ISA(onehot_backward_rows, T);
      const bool stream = detail::stream_output(out.nbytes());
      const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / C);
      parallel_for(0, N, grain,
                   [&](int64_t b, int64_t e) { rows(gp + b, cols + b, yp + b * C, dx + b * C, e - b, C, stream); });
    } else {
      GB_CHECK(false, "internal: cross_entropy's compact gradient in ", to_string(y.scalar_type()),
               "; please report this");
    }
  });
}

// log_softmax's backward from the compact gradient of cross_entropy's nll_loss (log_softmax_onehot.h): gt (N) the
// target entries, y (N, C) the saved result.
Tensor log_softmax_backward_onehot(const Tensor& gt, const Tensor& y, const detail::OneHotTargets& targets) {
  const char* op = "log_softmax_backward";
  detail::OpScope op_scope(op, {gt, y});
  GB_CHECK(y.dim() == 2 && gt.dim() == 1 && gt.size(0) == y.size(0) && gt.scalar_type() == y.scalar_type() &&
               detail::run_op(
                   y.device(), [&] { return int64_t(targets.cols.size()) == y.size(0); },  // the host's columns
                   [&] { return targets.target.numel() == y.size(0); }),                   // the device's targets
           "internal: cross_entropy's compact gradient (shape ", gt.sizes(), ") does not fit its log-probabilities (",
           y.sizes(), "); please report this with the shapes");
  Tensor gc = gt.contiguous(), yc = y.contiguous();
  Tensor out = detail::make_empty(y.sizes(), y.scalar_type(), y.device());
  if (out.numel() > 0)  // on cuda softmax_backward's kernel, reading the one entry per row
    detail::run_kernel(
        out, [&] { onehot_backward_cpu(gc, yc, targets, out); },
        [&] { cuda_ops::softmax_backward(gc, yc, out, true, targets.target); });
  op_scope.set_output(out);
  return out;
}

template <bool kLog>
Tensor softmax_impl(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype,
                    std::shared_ptr<const detail::OneHotTargets> onehot = nullptr) {
  const char* op = kLog ? "log_softmax" : "softmax";
  detail::OpScope op_scope(op, {x});
  detail::check_device(x, op);
  Tensor in = dtype && *dtype != x.scalar_type() ? x.to(*dtype) : x;  // a differentiable cast, before the op
  GB_CHECK_TYPE(is_floating_point(in.scalar_type()), op, ": expected a floating point input, got ",
                to_string(in.scalar_type()), " (shape ", in.sizes(), "); convert with x.to(gb::kFloat) or pass ",
                "dtype=gb::kFloat");
  const int64_t d = detail::wrap_dim(dim, in.dim(), op);
  Tensor out = softmax_kernel<kLog>(in, in.dim() == 0 ? 0 : d, op);
  op_scope.set_output(out);
  if (autograd::needs_grad(in)) {
    if constexpr (kLog)
      autograd::record("LogSoftmaxBackward0", {in}, out, {autograd::output(out)},
                       [d, onehot = std::move(onehot)](autograd::BackwardContext& c) {
                         if (onehot && c.grad().dim() == 1 && c.saved(0).dim() == 2)  // cross_entropy's compact form
                           return variable_list{log_softmax_backward_onehot(c.grad(), c.saved(0), *onehot)};
                         return variable_list{softmax_backward<true>(c.grad(), c.saved(0), d)};
                       });
    else
      autograd::record("SoftmaxBackward0", {in}, out, {autograd::output(out)}, [d](autograd::BackwardContext& c) {
        return variable_list{softmax_backward<false>(c.grad(), c.saved(0), d)};
      });
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  if (!dtype) GB_AUTOCAST(fp32, softmax, x, dim, dtype);
  return softmax_impl<false>(x, dim, dtype);
}
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  if (!dtype) GB_AUTOCAST(fp32, log_softmax, x, dim, dtype);
  return softmax_impl<true>(x, dim, dtype);
}

namespace detail {

bool onehot_backward_applies(const Tensor& logits) {
  return logits.defined() && logits.dim() == 2 && (logits.scalar_type() == kFloat || logits.scalar_type() == kDouble);
}

Tensor log_softmax_onehot(const Tensor& x, std::shared_ptr<const OneHotTargets> targets) {
  return softmax_impl<true>(x, 1, std::nullopt, std::move(targets));
}

}  // namespace detail
}  // namespace gb
