// engine/ops/pool.cpp — max_pool2d (+ indices), avg_pool2d and adaptive_avg_pool2d over (N,C,H,W) or (C,H,W).
//
// Every pooling op here is, for fixed windows (or fixed argmax indices), a linear map from input planes to output
// planes. Each is written as a pair of raw kernels, the map and its adjoint, and each records the other as its
// backward, so gradients of any order come for free. Kernels run over contiguous planes in float (f32, f16,
// bf16) or double (f64), parallel over the N*C planes; on cuda the same maps run as cuda/pool.cu's kernels.
#include <cmath>
#include <cstring>
#include <type_traits>
#include <limits>
#include <memory>
#include <vector>

#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/nn.h"
#include "ops/nn_util.h"
#include "ops/pool_geom.h"

namespace gb {
namespace {

constexpr int64_t kPlaneGrain = 4;

// PyTorch's pooling_output_shape.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

void check_pool_input(const Tensor& x, const char* op) {
  detail::check_defined(x, op);
  detail::check_device(x, op);
  bool ok = (x.dim() == 3 && x.size(0) != 0 && x.size(1) != 0 && x.size(2) != 0) ||
            (x.dim() == 4 && x.size(1) != 0 && x.size(2) != 0 && x.size(3) != 0);
  GB_CHECK(ok, op,
           ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:", x.sizes());
  GB_CHECK(x.is_floating_point(), op, ": expected a floating-point input, but got ", to_string(x.scalar_type()));
}

// The shape of x with its last two dims replaced.
std::vector<int64_t> with_plane(const Tensor& x, int64_t h, int64_t w) {
  auto s = x.sizes().vec();
  s[s.size() - 2] = h;
  s[s.size() - 1] = w;
  return s;
}

// Calls f(T{}) with T = float or double: the type the kernels compute in for dtype t.
template <typename F>
void with_compute_type(ScalarType t, const F& f) {
  if (detail::compute_type(t) == kDouble)
    f(double{});
  else
    f(float{});
}

// ---- max pooling: gather at argmax indices and its adjoint, scatter-add ----

using detail::MeanRule;
using detail::PlaneDims;

Tensor max_unpool_add(const Tensor& g, const Tensor& idx, PlaneDims d);

// out[p][o] = src[p][idx[p][o]]: (..., H, W) -> (..., Ho, Wo); max pooling at known indices (double backward).
Tensor max_gather(const Tensor& src, const Tensor& idx, PlaneDims d) {
  detail::OpScope op_scope("max_pool2d_gather", {src, idx});
  ScalarType dt = src.scalar_type();
  Tensor out;
  with_compute_type(dt, [&](auto zero) {
    using T = decltype(zero);
    Tensor s = detail::raw_contiguous(src, detail::compute_type(dt));
    Tensor o = detail::make_empty(with_plane(src, d.Ho, d.Wo), detail::compute_type(dt), src.device());
    const T* sp = s.template data_ptr<T>();
    const int64_t* ip = idx.data_ptr<int64_t>();
    T* op = o.template data_ptr<T>();
    const int64_t in_plane = d.H * d.W, out_plane = d.Ho * d.Wo, planes = out_plane ? o.numel() / out_plane : 0;
    detail::run_kernel(
        o,
        [&] {
          parallel_for(0, planes, kPlaneGrain, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p)
              for (int64_t i = 0; i < out_plane; ++i) op[p * out_plane + i] = sp[p * in_plane + ip[p * out_plane + i]];
          });
        },
        [&] { cuda_ops::max_pool2d_gather(s, idx, d, o); });
    out = o.scalar_type() == dt ? o : o.to(dt);
  });
  op_scope.set_output(out);
  if (autograd::needs_grad(src))
    autograd::record("MaxPool2DWithIndicesBackward0", {src}, out, {}, [idx, d](autograd::BackwardContext& c) {
      return variable_list{max_unpool_add(c.grad(), idx, d)};
    });
  return out;
}

// out[p][idx[p][o]] += g[p][o]: (..., Ho, Wo) -> (..., H, W); the gradient of max pooling.
Tensor max_unpool_add(const Tensor& g, const Tensor& idx, PlaneDims d) {
  detail::OpScope op_scope("max_pool2d_with_indices_backward", {g, idx});  // runs in backward
  ScalarType dt = g.scalar_type();
  Tensor out;
  with_compute_type(dt, [&](auto zero) {
    using T = decltype(zero);
    Tensor gc = detail::raw_contiguous(g, detail::compute_type(dt));
    Tensor o = detail::make_empty(with_plane(g, d.H, d.W), detail::compute_type(dt), g.device());
    const T* gp = gc.template data_ptr<T>();
    const int64_t* ip = idx.data_ptr<int64_t>();
    T* op = o.template data_ptr<T>();
    const int64_t in_plane = d.H * d.W, out_plane = d.Ho * d.Wo, planes = in_plane ? o.numel() / in_plane : 0;
    detail::run_kernel(
        o,
        [&] {
          parallel_for(0, planes, kPlaneGrain, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
              T* dst = op + p * in_plane;
              std::fill(dst, dst + in_plane, T(0));
              for (int64_t i = 0; i < out_plane; ++i) dst[ip[p * out_plane + i]] += gp[p * out_plane + i];
            }
          });
        },
        [&] { cuda_ops::max_pool2d_backward(gc, idx, d, o); });
    out = o.scalar_type() == dt ? o : o.to(dt);
  });
  op_scope.set_output(out);
  if (autograd::needs_grad(g))
    autograd::record("MaxPool2DWithIndicesBackwardBackward0", {g}, out, {},
                     [idx, d](autograd::BackwardContext& c) { return variable_list{max_gather(c.grad(), idx, d)}; });
  return out;
}

// ---- average pooling: window means and their adjoint ----

// For each output position, the input window [hs,he) x [ws,we) and the divisor of its sum.
struct Windows {
  PlaneDims d;
  std::vector<int64_t> hs, he, ws, we;  // per output row / column, clipped to the input
  std::vector<double> div;              // per output position (Ho*Wo)
  const char* name;                     // the backward node of the forward map
  const char* adjoint_name;             // the node of the adjoint's backward
  const char* op;                       // the forward op (its scope)
  const char* backward_op;              // the adjoint's op (its scope: it runs in backward)
  MeanRule rule;                        // the same windows by their rule (d's window), for the CUDA half
};

Tensor window_mean_adjoint(const Tensor& g, const std::shared_ptr<const Windows>& w);

// out[p][oh][ow] = sum(window) / div: (..., H, W) -> (..., Ho, Wo). Runs inside w->op's scope (its callers open it).
Tensor window_mean(const Tensor& x, const std::shared_ptr<const Windows>& w) {
  const PlaneDims d = w->d;
  ScalarType dt = x.scalar_type();
  Tensor out;
  with_compute_type(dt, [&](auto zero) {
    using T = decltype(zero);
    Tensor xc = detail::raw_contiguous(x, detail::compute_type(dt));
    Tensor o = detail::make_empty(with_plane(x, d.Ho, d.Wo), detail::compute_type(dt), x.device());
    const T* xp = xc.template data_ptr<T>();
    T* op = o.template data_ptr<T>();
    const int64_t in_plane = d.H * d.W, out_plane = d.Ho * d.Wo, planes = out_plane ? o.numel() / out_plane : 0;
    detail::run_kernel(
        o,
        [&] {
          parallel_for(0, planes, kPlaneGrain, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
              const T* src = xp + p * in_plane;
              T* dst = op + p * out_plane;
              for (int64_t oh = 0; oh < d.Ho; ++oh)
                for (int64_t ow = 0; ow < d.Wo; ++ow) {
                  T acc = 0;
                  for (int64_t ih = w->hs[oh]; ih < w->he[oh]; ++ih)
                    for (int64_t iw = w->ws[ow]; iw < w->we[ow]; ++iw) acc += src[ih * d.W + iw];
                  dst[oh * d.Wo + ow] = T(acc / w->div[oh * d.Wo + ow]);
                }
            }
          });
        },
        [&] { cuda_ops::window_mean(xc, d, w->rule, o, false); });
    out = o.scalar_type() == dt ? o : o.to(dt);
  });
  detail::op_output(out);
  if (autograd::needs_grad(x))
    autograd::record(w->name, {x}, out, {},
                     [w](autograd::BackwardContext& c) { return variable_list{window_mean_adjoint(c.grad(), w)}; });
  return out;
}

// gx[p][window] += g[p][oh][ow] / div: (..., Ho, Wo) -> (..., H, W)
Tensor window_mean_adjoint(const Tensor& g, const std::shared_ptr<const Windows>& w) {
  detail::OpScope op_scope(w->backward_op, {g});  // runs in backward
  const PlaneDims d = w->d;
  ScalarType dt = g.scalar_type();
  Tensor out;
  with_compute_type(dt, [&](auto zero) {
    using T = decltype(zero);
    Tensor gc = detail::raw_contiguous(g, detail::compute_type(dt));
    Tensor o = detail::make_empty(with_plane(g, d.H, d.W), detail::compute_type(dt), g.device());
    const T* gp = gc.template data_ptr<T>();
    T* op = o.template data_ptr<T>();
    const int64_t in_plane = d.H * d.W, out_plane = d.Ho * d.Wo, planes = in_plane ? o.numel() / in_plane : 0;
    detail::run_kernel(
        o,
        [&] {
          parallel_for(0, planes, kPlaneGrain, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
              const T* src = gp + p * out_plane;
              T* dst = op + p * in_plane;
              std::fill(dst, dst + in_plane, T(0));
              for (int64_t oh = 0; oh < d.Ho; ++oh)
                for (int64_t ow = 0; ow < d.Wo; ++ow) {
                  const T v = T(src[oh * d.Wo + ow] / w->div[oh * d.Wo + ow]);
                  for (int64_t ih = w->hs[oh]; ih < w->he[oh]; ++ih)
                    for (int64_t iw = w->ws[ow]; iw < w->we[ow]; ++iw) dst[ih * d.W + iw] += v;
                }
            }
          });
        },
        [&] { cuda_ops::window_mean(gc, d, w->rule, o, true); });
    out = o.scalar_type() == dt ? o : o.to(dt);
  });
  op_scope.set_output(out);
  if (autograd::needs_grad(g))
    autograd::record(w->adjoint_name, {g}, out, {}, [w](autograd::BackwardContext& c) {
      detail::OpScope op_scope(w->op, {c.grad()});
      return variable_list{window_mean(c.grad(), w)};
    });
  return out;
}

struct PoolArgs {
  std::array<int64_t, 2> k, s, p, d;
};

PoolArgs pool_args(const char* op, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation) {
  PoolArgs a;
  a.k = detail::pair_arg(kernel_size, op, "kernel_size");
  a.s = detail::pair_arg(stride, op, "stride", a.k);
  a.p = detail::pair_arg(padding, op, "padding");
  a.d = detail::pair_arg(dilation, op, "dilation");
  GB_CHECK(a.k[0] > 0 && a.k[1] > 0, op, ": kernel size should be greater than zero, but got kH: ", a.k[0],
           " kW: ", a.k[1]);
  GB_CHECK(a.s[0] > 0 && a.s[1] > 0, op, ": stride should be greater than zero, but got dH: ", a.s[0], " dW: ", a.s[1]);
  GB_CHECK(a.d[0] > 0 && a.d[1] > 0, op, ": dilation should be greater than zero, but got dilationH: ", a.d[0],
           " dilationW: ", a.d[1]);
  GB_CHECK(a.p[0] >= 0 && a.p[1] >= 0 && a.p[0] <= a.k[0] / 2 && a.p[1] <= a.k[1] / 2, op,
           ": pad should be smaller than or equal to half of kernel size, but got padW = ", a.p[1], ", padH = ", a.p[0],
           ", kW = ", a.k[1], ", kH = ", a.k[0]);
  return a;
}

void check_output_size(const Tensor& x, int64_t Ho, int64_t Wo, const char* op) {
  const int64_t C = x.size(-3), H = x.size(-2), W = x.size(-1);
  GB_CHECK(Ho >= 1 && Wo >= 1, op, ": Given input size: (", C, "x", H, "x", W, "). Calculated output size: (", C, "x",
           Ho, "x", Wo, "). Output size is too small");
}

// Whether n values hold a NaN: the largest magnitude's bits above infinity's. A loop the compiler vectorizes.
template <typename T>
bool has_nan(const T* x, int64_t n) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits magnitude = ~Bits(0) >> 1, inf = sizeof(T) == 4 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
  Bits largest = 0;
  for (int64_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, x + i, sizeof(T));
    b &= magnitude;
    largest = b > largest ? b : largest;
  }
  return largest > inf;
}

// One plane's max pooling, PyTorch's rule: the first maximum of each window (elements visited row by row), and the
// last NaN when the window holds one. Without a NaN in reach (NaNFree) the comparison is `v > best` made by selects,
// not a branch: on real activations it is a coin toss, and a mispredicted branch per element made max_pool2d 10x
// slower. K > 0: a KxK window of unit dilation, unrolled by the compiler where it lies wholly inside the plane.
template <bool NaNFree, int K, typename T>
void max_pool_plane(const T* src, T* out, int64_t* idx, const PoolArgs& a, const PlaneDims& d) {
  for (int64_t oh = 0; oh < d.Ho; ++oh) {
    const int64_t h0 = oh * a.s[0] - a.p[0];
    int64_t hs = h0;
    const int64_t he = std::min(hs + (a.k[0] - 1) * a.d[0] + 1, d.H);
    while (hs < 0) hs += a.d[0];
    for (int64_t ow = 0; ow < d.Wo; ++ow) {
      const int64_t w0 = ow * a.s[1] - a.p[1];
      T best_v = -std::numeric_limits<T>::infinity();
      int64_t best;
      if constexpr (NaNFree && K > 0) {
        if (h0 >= 0 && w0 >= 0 && h0 + K <= d.H && w0 + K <= d.W) {
          best = h0 * d.W + w0;
          for (int i = 0; i < K; ++i)
            for (int j = 0; j < K; ++j) {
              const int64_t at = (h0 + i) * d.W + w0 + j;
              const T v = src[at];
              const bool take = v > best_v;
              best_v = take ? v : best_v;
              best = take ? at : best;
            }
          out[oh * d.Wo + ow] = best_v;
          idx[oh * d.Wo + ow] = best;
          continue;
        }
      }
      int64_t ws = w0;
      const int64_t we = std::min(ws + (a.k[1] - 1) * a.d[1] + 1, d.W);
      while (ws < 0) ws += a.d[1];
      best = hs * d.W + ws;
      for (int64_t ih = hs; ih < he; ih += a.d[0])
        for (int64_t iw = ws; iw < we; iw += a.d[1]) {
          const int64_t at = ih * d.W + iw;
          const T v = src[at];
          if constexpr (NaNFree) {
            const bool take = v > best_v;
            best_v = take ? v : best_v;
            best = take ? at : best;
          } else if (v > best_v || std::isnan(v)) {
            best_v = v;
            best = at;
          }
        }
      out[oh * d.Wo + ow] = best_v;
      idx[oh * d.Wo + ow] = best;
    }
  }
}

// Planes [p0, p1): the fast kernel for this window when the planes hold no NaN, the exact one when they do.
template <typename T>
void max_pool_planes(const T* x, T* out, int64_t* idx, const PoolArgs& a, const PlaneDims& d, int64_t p0,
                     int64_t p1) {
  const int64_t in_plane = d.H * d.W, out_plane = d.Ho * d.Wo;
  auto run = [&](auto kernel) {
    for (int64_t p = p0; p < p1; ++p) kernel(x + p * in_plane, out + p * out_plane, idx + p * out_plane, a, d);
  };
  const bool unit = a.d[0] == 1 && a.d[1] == 1 && a.k[0] == a.k[1];
  if (has_nan(x + p0 * in_plane, (p1 - p0) * in_plane))
    run(max_pool_plane<false, 0, T>);
  else if (unit && a.k[0] == 2)
    run(max_pool_plane<true, 2, T>);
  else if (unit && a.k[0] == 3)
    run(max_pool_plane<true, 3, T>);
  else
    run(max_pool_plane<true, 0, T>);
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  detail::OpScope op_scope(op, {x});
  check_pool_input(x, op);
  PoolArgs a = pool_args(op, kernel_size, stride, padding, dilation);
  const int64_t H = x.size(-2), W = x.size(-1);
  const int64_t Ho = pooled_size(H, a.k[0], a.p[0], a.s[0], a.d[0], ceil_mode);
  const int64_t Wo = pooled_size(W, a.k[1], a.p[1], a.s[1], a.d[1], ceil_mode);
  check_output_size(x, Ho, Wo, op);
  PlaneDims d{H, W, Ho, Wo, a.k, a.s, a.p, a.d};
  ScalarType dt = x.scalar_type();
  Tensor out, idx = detail::make_empty(with_plane(x, Ho, Wo), kInt64, x.device());
  with_compute_type(dt, [&](auto zero) {
    using T = decltype(zero);
    Tensor xc = detail::raw_contiguous(x, detail::compute_type(dt));
    Tensor o = detail::make_empty(with_plane(x, Ho, Wo), detail::compute_type(dt), x.device());
    const T* xp = xc.template data_ptr<T>();
    T* op_ = o.template data_ptr<T>();
    int64_t* ip = idx.data_ptr<int64_t>();
    const int64_t out_plane = Ho * Wo, planes = o.numel() / out_plane;
    detail::run_kernel(
        o,
        [&] {
          parallel_for(0, planes, kPlaneGrain,
                       [&](int64_t p0, int64_t p1) { max_pool_planes(xp, op_, ip, a, d, p0, p1); });
        },
        [&] { cuda_ops::max_pool2d(xc, d, o, idx); });
    out = o.scalar_type() == dt ? o : o.to(dt);
  });
  op_scope.set_output(out);
  if (autograd::needs_grad(x))
    autograd::record("MaxPool2DWithIndicesBackward0", {x}, out, {}, [idx, d](autograd::BackwardContext& c) {
      return variable_list{max_unpool_add(c.grad(), idx, d)};
    });
  return {out, idx};
}

Tensor max_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  detail::OpScope op_scope(op, {x});
  check_pool_input(x, op);
  PoolArgs a = pool_args(op, kernel_size, stride, padding, 1);
  GB_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor must be not zero");
  const int64_t H = x.size(-2), W = x.size(-1);
  const int64_t Ho = pooled_size(H, a.k[0], a.p[0], a.s[0], 1, ceil_mode);
  const int64_t Wo = pooled_size(W, a.k[1], a.p[1], a.s[1], 1, ceil_mode);
  check_output_size(x, Ho, Wo, op);
  auto w = std::make_shared<Windows>();
  w->d = {H, W, Ho, Wo, a.k, a.s, a.p};
  w->name = "AvgPool2DBackward0";
  w->adjoint_name = "AvgPool2DBackwardBackward0";
  w->op = op;
  w->backward_op = "avg_pool2d_backward";
  w->rule.count_include_pad = count_include_pad;
  w->rule.divisor_override = divisor_override.value_or(0);
  // PyTorch's windows: the padded extent (clipped at H + pad) counts toward count_include_pad's divisor
  std::vector<int64_t> hpad(Ho), wpad(Wo);
  for (int64_t oh = 0; oh < Ho; ++oh) {
    int64_t hs = oh * a.s[0] - a.p[0], he = std::min(hs + a.k[0], H + a.p[0]);
    hpad[oh] = he - hs;
    w->hs.push_back(std::max<int64_t>(hs, 0));
    w->he.push_back(std::min(he, H));
  }
  for (int64_t ow = 0; ow < Wo; ++ow) {
    int64_t ws = ow * a.s[1] - a.p[1], we = std::min(ws + a.k[1], W + a.p[1]);
    wpad[ow] = we - ws;
    w->ws.push_back(std::max<int64_t>(ws, 0));
    w->we.push_back(std::min(we, W));
  }
  w->div.resize(size_t(Ho * Wo));
  for (int64_t oh = 0; oh < Ho; ++oh)
    for (int64_t ow = 0; ow < Wo; ++ow) {
      double div = divisor_override    ? double(*divisor_override)
                   : count_include_pad ? double(hpad[oh] * wpad[ow])
                                       : double((w->he[oh] - w->hs[oh]) * (w->we[ow] - w->ws[ow]));
      w->div[oh * Wo + ow] = div > 0 ? div : 1.0;  // an empty window sums to 0
    }
  return window_mean(x, w);
}

Tensor adaptive_avg_pool2d(const Tensor& x, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  detail::check_defined(x, op);
  detail::OpScope op_scope(op, {x});
  detail::check_device(x, op);
  GB_CHECK(output_size.size() == 1 || output_size.size() == 2, op, ": output_size must be 2, but got ",
           output_size.size(), " values ", output_size);
  bool ok = (x.dim() == 3 || x.dim() == 4) && x.size(-1) > 0 && x.size(-2) > 0 && (x.dim() == 3 || x.size(1) > 0);
  GB_CHECK(ok, op, "(): Expected 3D or 4D tensor, but got ", x.sizes());
  GB_CHECK(x.is_floating_point(), op, ": expected a floating-point input, but got ", to_string(x.scalar_type()));
  auto os = detail::pair_arg(output_size, op, "output_size");
  GB_CHECK(os[0] >= 0 && os[1] >= 0, op, ": elements of output_size must be greater than or equal to 0 but received {",
           os[0], ", ", os[1], "}");
  const int64_t H = x.size(-2), W = x.size(-1), Ho = os[0], Wo = os[1];
  auto w = std::make_shared<Windows>();
  w->d = {H, W, Ho, Wo};
  w->name = "AdaptiveAvgPool2DBackward0";
  w->adjoint_name = "AdaptiveAvgPool2DBackwardBackward0";
  w->op = op;
  w->backward_op = "adaptive_avg_pool2d_backward";
  w->rule.adaptive = true;
  for (int64_t oh = 0; oh < Ho; ++oh) {  // start = floor(o * in / out), end = ceil((o + 1) * in / out)
    w->hs.push_back(oh * H / Ho);
    w->he.push_back(((oh + 1) * H + Ho - 1) / Ho);
  }
  for (int64_t ow = 0; ow < Wo; ++ow) {
    w->ws.push_back(ow * W / Wo);
    w->we.push_back(((ow + 1) * W + Wo - 1) / Wo);
  }
  w->div.resize(size_t(Ho * Wo));
  for (int64_t oh = 0; oh < Ho; ++oh)
    for (int64_t ow = 0; ow < Wo; ++ow)
      w->div[oh * Wo + ow] = double((w->he[oh] - w->hs[oh]) * (w->we[ow] - w->ws[ow]));
  return window_mean(x, w);
}

// max_pool1d as max_pool2d over a height of 1.
Tensor max_pool1d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool1d";
  detail::check_defined(x, op);
  detail::OpScope op_scope(op, {x});
  GB_CHECK(x.dim() == 2 || x.dim() == 3, op, ": expected a 2-D or 3-D input (N, C, L), but got ", x.sizes());
  auto pair = [&](IntArrayRef v, int64_t h, const char* what) {
    GB_CHECK(v.size() <= 1, op, ": ", what, " must have one value, but got ", v.size(), " ", v);
    return v.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{h, v[0]};
  };
  Tensor out = max_pool2d(x.unsqueeze(-2), pair(kernel_size, 1, "kernel_size"), pair(stride, 1, "stride"),
                          pair(padding, 0, "padding"), pair(dilation, 1, "dilation"), ceil_mode)
                   .squeeze(-2);
  op_scope.set_output(out);
  return out;
}

}  // namespace gb
