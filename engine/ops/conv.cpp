// engine/ops/conv.cpp — conv2d and its backward (ConvolutionBackward0: grad_input, grad_weight, grad_bias).
// float kernels run on oneDNN when the build has it (conv_onednn.h; gb::backends::mkldnn); float64, and float when
// oneDNN is off or declines a geometry, run here: im2col + one OpenBLAS GEMM per group and sample, col2im for
// grad_input. conv_transpose2d is conv2d's input gradient as an op, on the same kernels: its forward is
// conv_backward's grad_input, its grad_input a conv2d forward, its grad_weight conv_backward's grad_weight with the
// roles of input and output swapped.
//
// Kernels compute in float (f32, f16, bf16) or double (f64) on contiguous copies. On cuda, conv2d runs cuDNN
// (cuda/conv_cudnn.h) in the operands' own dtype, and conv_transpose2d cuDNN's backward-data as its forward. The
// backward is not itself differentiable: asking for create_graph through conv2d throws.
#include <cblas.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <vector>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/conv_cudnn.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/shape.h"
#include "ops/conv_geom.h"
#include "ops/conv_onednn.h"
#include "ops/nn_util.h"

namespace gb {
namespace {

using detail::ConvGeom;

inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  detail::park_workers();  // OpenBLAS's threads take the cores (core/parallel.h)
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
              alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                 const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  detail::park_workers();
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
              alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// The output columns [lo, hi) whose input column ow * sW + woff lies inside [0, W); lo <= hi <= Wo.
inline void valid_columns(const ConvGeom& g, int64_t woff, int64_t& lo, int64_t& hi) {
  lo = std::min(g.Wo, woff >= 0 ? 0 : (-woff + g.sW - 1) / g.sW);
  hi = g.W - woff <= 0 ? 0 : std::min(g.Wo, (g.W - woff + g.sW - 1) / g.sW);
  hi = std::max(hi, lo);
}

// x (C,H,W) of one sample -> col (C*kH*kW, Ho*Wo); zero where the window reads padding.
template <typename T>
void im2col(const ConvGeom& g, const T* x, T* col) {
  const int64_t P = g.P();
  parallel_for(0, g.C, std::max<int64_t>(1, 16384 / std::max<int64_t>(g.kH * g.kW * P, 1)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c)
                   for (int64_t ki = 0; ki < g.kH; ++ki)
                     for (int64_t kj = 0; kj < g.kW; ++kj) {
                       T* row = col + ((c * g.kH + ki) * g.kW + kj) * P;
                       const int64_t woff = kj * g.dW - g.pW;
                       // ow range whose iw = ow*sW + woff lies in [0, W)
                       int64_t ow_lo, ow_hi;
                       valid_columns(g, woff, ow_lo, ow_hi);
                       for (int64_t oh = 0; oh < g.Ho; ++oh) {
                         T* r = row + oh * g.Wo;
                         const int64_t ih = oh * g.sH - g.pH + ki * g.dH;
                         if (ih < 0 || ih >= g.H) {
                           std::memset(r, 0, sizeof(T) * g.Wo);
                           continue;
                         }
                         const T* xr = x + (c * g.H + ih) * g.W + woff;
                         for (int64_t ow = 0; ow < ow_lo; ++ow) r[ow] = T(0);
                         if (g.sW == 1)
                           std::memcpy(r + ow_lo, xr + ow_lo, sizeof(T) * (ow_hi - ow_lo));
                         else
                           for (int64_t ow = ow_lo; ow < ow_hi; ++ow) r[ow] = xr[ow * g.sW];
                         for (int64_t ow = ow_hi; ow < g.Wo; ++ow) r[ow] = T(0);
                       }
                     }
               });
}

// The adjoint of im2col: gx (C,H,W) += col scattered back to the positions each column entry was read from.
template <typename T>
void col2im(const ConvGeom& g, const T* col, T* gx) {
  const int64_t P = g.P();
  parallel_for(0, g.C, std::max<int64_t>(1, 16384 / std::max<int64_t>(g.kH * g.kW * P, 1)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c)
                   for (int64_t ki = 0; ki < g.kH; ++ki)
                     for (int64_t kj = 0; kj < g.kW; ++kj) {
                       const T* row = col + ((c * g.kH + ki) * g.kW + kj) * P;
                       const int64_t woff = kj * g.dW - g.pW;
                       int64_t ow_lo, ow_hi;
                       valid_columns(g, woff, ow_lo, ow_hi);
                       for (int64_t oh = 0; oh < g.Ho; ++oh) {
                         const int64_t ih = oh * g.sH - g.pH + ki * g.dH;
                         if (ih < 0 || ih >= g.H) continue;
                         const T* r = row + oh * g.Wo;
                         T* xr = gx + (c * g.H + ih) * g.W + woff;
                         for (int64_t ow = ow_lo; ow < ow_hi; ++ow) xr[ow * g.sW] += r[ow];
                       }
                     }
               });
}

// The batch is walked serially: each GEMM runs on OpenBLAS's threads and im2col/col2im on the pool, one at a
// time. (Splitting the batch across the pool instead makes concurrent OpenBLAS calls that each want every core;
// OpenBLAS 0.3's pthread build serializes them and spins: measured 4x slower on two cores.)
// `device`: cpu, or meta (nothing computed; oneDNN's buffers are still made, as a cpu run makes them).
template <typename T>
void conv_forward(const ConvGeom& g, const T* x, const T* w, const T* b, T* y, Device device) {
  if constexpr (std::is_same_v<T, float>)
    if (detail::onednn_conv_forward(g, x, w, b, y, device)) return;
  if (device.is_meta()) return;
  const int64_t K = g.K(), P = g.P(), Og = g.Og();
  std::vector<T> col(g.is_pointwise() ? 0 : size_t(K * g.groups * P));
  for (int64_t n = 0; n < g.N; ++n) {
    const T* xn = x + n * g.C * g.H * g.W;
    T* yn = y + n * g.O * P;
    const T* cols = xn;
    if (!g.is_pointwise()) {
      im2col(g, xn, col.data());
      cols = col.data();
    }
    if (b)
      for (int64_t o = 0; o < g.O; ++o) std::fill(yn + o * P, yn + (o + 1) * P, b[o]);
    for (int64_t gr = 0; gr < g.groups; ++gr)
      gemm(false, false, Og, P, K, T(1), w + gr * Og * K, K, cols + gr * K * P, P, b ? T(1) : T(0), yn + gr * Og * P,
           P);
  }
}

// gy (N,O,Ho,Wo) -> gx (N,C,H,W) and/or gw (O,C/groups,kH,kW) (either may be null).
template <typename T>
void conv_backward(const ConvGeom& g, const T* x, const T* w, const T* gy, T* gx, T* gw, Device device) {
  if constexpr (std::is_same_v<T, float>)
    if (detail::onednn_conv_backward(g, x, w, gy, gx, gw, device)) return;
  if (device.is_meta()) return;
  const int64_t K = g.K(), P = g.P(), Og = g.Og();
  if (gw) std::fill(gw, gw + g.O * K, T(0));
  std::vector<T> col(size_t(K * g.groups * P));
  for (int64_t n = 0; n < g.N; ++n) {
    const T* gyn = gy + n * g.O * P;
    if (gw) {  // gw_g += gy_g (Og, P) @ col_g^T (P, K)
      const T* xn = x + n * g.C * g.H * g.W;
      const T* cols = xn;
      if (!g.is_pointwise()) {
        im2col(g, xn, col.data());
        cols = col.data();
      }
      for (int64_t gr = 0; gr < g.groups; ++gr)
        gemm(false, true, Og, K, P, T(1), gyn + gr * Og * P, P, cols + gr * K * P, P, T(1), gw + gr * Og * K, K);
    }
    if (gx) {  // col_g = w_g^T (K, Og) @ gy_g (Og, P), then scattered back by col2im
      T* gxn = gx + n * g.C * g.H * g.W;
      T* dst = g.is_pointwise() ? gxn : col.data();  // pointwise: the column matrix is the input itself
      for (int64_t gr = 0; gr < g.groups; ++gr)
        gemm(true, false, K, P, Og, T(1), w + gr * Og * K, K, gyn + gr * Og * P, P, T(0), dst + gr * K * P, P);
      if (!g.is_pointwise()) {
        std::fill(gxn, gxn + g.C * g.H * g.W, T(0));
        col2im(g, col.data(), gxn);
      }
    }
  }
}

// stride, padding and dilation positive / non-negative / positive, groups positive: PyTorch's messages.
void check_conv_args(const char* op, const std::array<int64_t, 2>& s, const std::array<int64_t, 2>& p,
                     const std::array<int64_t, 2>& d, int64_t groups) {
  GB_CHECK(s[0] > 0 && s[1] > 0, op, ": non-positive stride is not supported (got stride ", IntArrayRef(s), ")");
  GB_CHECK(p[0] >= 0 && p[1] >= 0, op, ": negative padding is not supported (got padding ", IntArrayRef(p), ")");
  GB_CHECK(d[0] > 0 && d[1] > 0, op, ": dilation should be greater than zero (got dilation ", IntArrayRef(d), ")");
  GB_CHECK(groups > 0, op, ": non-positive groups is not supported (got groups=", groups, ")");
}

// The backward of conv2d and conv_transpose2d is not differentiable itself: create_graph through it is refused.
void refuse_double_backward(const char* op, const Tensor& gy, const Tensor& x, const Tensor& w) {
  GB_CHECK(!(GradMode::is_enabled() && (gy.requires_grad() || x.requires_grad() || w.requires_grad())), op,
           ": double backward through ", op, " is not supported yet (create_graph=true reached ConvolutionBackward0 "
           "for input ", x.sizes(), ", weight ", w.sizes(), "). Compute the gradient without create_graph, or detach "
           "the ", op, " part of the graph.");
}

// grad_bias: grad_output summed over batch and positions, in the input's dtype.
Tensor bias_grad(const Tensor& gyc, ScalarType xt) {
  NoGradGuard ng;
  Tensor gb = gyc.sum({0, 2, 3});
  return gb.scalar_type() != xt ? gb.to(xt) : gb;
}

// Records ConvolutionBackward0 for `out`: the shared part of conv2d's and conv_transpose2d's backward (the
// double-backward refusal, the compute type, the bias gradient, the dtype back). `kernels(gyc, xc, wc, gx, gw)`
// fills gx (x_sizes) and gw (w_sizes) when they are defined (made only when needed; xc only when gw is wanted).
template <class Kernels>
void record_conv_backward(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& out,
                          Kernels kernels, std::vector<int64_t> x_sizes, std::vector<int64_t> w_sizes) {
  autograd::record(
      "ConvolutionBackward0", autograd::collect_edges({x, weight, bias}), {&out},
      {autograd::input(x), autograd::input(weight)},
      [op, kernels, x_sizes, w_sizes, has_bias = bias.defined(), xt = x.scalar_type()](autograd::BackwardContext& c) {
        const Tensor& gy = c.grad();
        const Tensor& xs = c.saved(0);
        const Tensor& ws = c.saved(1);
        refuse_double_backward(op, gy, xs, ws);
        const ScalarType ct =  // cuDNN takes every floating dtype
            detail::run_op(xs.device(), [&] { return detail::compute_type(xt); }, [&] { return xt; });
        Tensor gyc = detail::raw_contiguous(gy, ct);
        Tensor gx, gw, gb;
        const bool need_x = c.needs(0), need_w = c.needs(1);
        if (need_x || need_w) {
          if (need_x) gx = detail::make_empty(x_sizes, ct, gy.device());
          if (need_w) gw = detail::make_empty(w_sizes, ct, gy.device());
          // on meta the kernels compute nothing but make what a cpu run makes (oneDNN's buffers)
          kernels(gyc, need_w ? detail::raw_contiguous(xs, ct) : Tensor(), detail::raw_contiguous(ws, ct), gx, gw);
          if (need_x && ct != xt) gx = gx.to(xt);
          if (need_w && ct != xt) gw = gw.to(xt);
        }
        if (has_bias && c.needs(2)) gb = bias_grad(gyc, xt);
        return variable_list{gx, gw, gb};
      });
}

// conv2d on the cpu (and meta): oneDNN's kernels for float32 where the build has them, else im2col + GEMM, in the
// compute type (float for the 16-bit floats); its backward recorded alike.
Tensor conv2d_cpu(const ConvGeom& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                  detail::OpScope& op_scope) {
  const ScalarType ct = detail::compute_type(x.scalar_type());
  Tensor xc = detail::raw_contiguous(x, ct);
  Tensor wc = detail::raw_contiguous(weight, ct);
  Tensor bc = bias.defined() ? detail::raw_contiguous(bias, ct) : Tensor();
  Tensor out = detail::make_empty({g.N, g.O, g.Ho, g.Wo}, ct, x.device());
  if (out.numel() > 0) {
    if (ct == kDouble)
      conv_forward<double>(g, xc.data_ptr<double>(), wc.data_ptr<double>(),
                           bc.defined() ? bc.data_ptr<double>() : nullptr, out.data_ptr<double>(), out.device());
    else
      conv_forward<float>(g, xc.data_ptr<float>(), wc.data_ptr<float>(), bc.defined() ? bc.data_ptr<float>() : nullptr,
                          out.data_ptr<float>(), out.device());
  }
  if (ct != x.scalar_type()) out = out.to(x.scalar_type());
  op_scope.set_output(out);

  if (autograd::needs_grad(x, weight, bias))
    record_conv_backward("conv2d", x, weight, bias, out,
                         [g](const Tensor& gyc, const Tensor& xc, const Tensor& wc, Tensor& gx, Tensor& gw) {
                           if (gyc.scalar_type() == kDouble)
                             conv_backward<double>(g, gw.defined() ? xc.data_ptr<double>() : nullptr,
                                                   wc.data_ptr<double>(), gyc.data_ptr<double>(),
                                                   gx.defined() ? gx.data_ptr<double>() : nullptr,
                                                   gw.defined() ? gw.data_ptr<double>() : nullptr, gyc.device());
                           else
                             conv_backward<float>(g, gw.defined() ? xc.data_ptr<float>() : nullptr, wc.data_ptr<float>(),
                                                  gyc.data_ptr<float>(), gx.defined() ? gx.data_ptr<float>() : nullptr,
                                                  gw.defined() ? gw.data_ptr<float>() : nullptr, gyc.device());
                         },
                         {g.N, g.C, g.H, g.W}, {g.O, g.Cg(), g.kH, g.kW});
  return out;
}

// conv2d on cuda: cuDNN forward in the operands' dtype, and its backward recorded as on the cpu.
Tensor conv2d_cuda(const ConvGeom& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                   detail::OpScope& op_scope) {
  const ScalarType t = x.scalar_type();
  Tensor xc = detail::raw_contiguous(x, t);
  Tensor wc = detail::raw_contiguous(weight, t);
  Tensor bc = bias.defined() ? detail::raw_contiguous(bias, t) : Tensor();
  Tensor out = detail::make_empty({g.N, g.O, g.Ho, g.Wo}, t, x.device());
  detail::cudnn_conv_forward(g, xc, wc, bc, out);
  op_scope.set_output(out);
  if (autograd::needs_grad(x, weight, bias))
    record_conv_backward(
        "conv2d", x, weight, bias, out,
        [g](const Tensor& gyc, const Tensor& xc, const Tensor& wc, Tensor& gx, Tensor& gw) {
          detail::cudnn_conv_backward(g, xc, wc, gyc, gx, gw);
        },
        {g.N, g.C, g.H, g.W}, {g.O, g.Cg(), g.kH, g.kW});
  return out;
}

}  // namespace

Tensor conv2d(const Tensor& x_in, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  GB_AUTOCAST(lower_precision_fp, conv2d, x_in, weight, bias, stride, padding, dilation, groups);
  detail::check_defined(x_in, "conv2d");
  detail::check_defined(weight, "conv2d", "weight");
  detail::check_device(x_in, "conv2d");
  detail::check_device(weight, "conv2d", "weight", x_in);
  GB_CHECK(x_in.dim() == 3 || x_in.dim() == 4,
           "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ", x_in.sizes());
  GB_CHECK(weight.dim() == 4,
           "conv2d: expected weight of 4 dims (out_channels, in_channels/groups, kH, kW), but got weight of size ",
           weight.sizes());
  // unbatched: the batched op is the op (one conv2d span, with its node), between an unsqueeze and a squeeze
  if (x_in.dim() == 3) return conv2d(x_in.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0);
  detail::OpScope op_scope("conv2d", {x_in, weight, bias});
  const Tensor& x = x_in;
  GB_CHECK(x.scalar_type() == weight.scalar_type(), "conv2d: Input type (", detail::torch_type_name(x.scalar_type()),
           ") and weight type (", detail::torch_type_name(weight.scalar_type()), ") should be the same");
  GB_CHECK(is_floating_point(x.scalar_type()), "conv2d: expected a floating-point input, but got ",
           to_string(x.scalar_type()));
  auto s = detail::pair_arg(stride, "conv2d", "stride");
  auto p = detail::pair_arg(padding, "conv2d", "padding");
  auto d = detail::pair_arg(dilation, "conv2d", "dilation");
  check_conv_args("conv2d", s, p, d, groups);

  ConvGeom g{};
  g.N = x.size(0), g.C = x.size(1), g.H = x.size(2), g.W = x.size(3);
  g.O = weight.size(0), g.kH = weight.size(2), g.kW = weight.size(3);
  g.sH = s[0], g.sW = s[1], g.pH = p[0], g.pW = p[1], g.dH = d[0], g.dW = d[1], g.groups = groups;
  GB_CHECK(g.O % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
           " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  GB_CHECK(g.C == weight.size(1) * groups, "Given groups=", groups, ", weight of size ", weight.sizes(),
           ", expected input", x.sizes(), " to have ", weight.size(1) * groups, " channels, but got ", g.C,
           " channels instead");
  if (bias.defined()) {
    detail::check_device(bias, "conv2d", "bias", x_in);
    GB_CHECK(bias.dim() == 1 && bias.size(0) == g.O, "Given weight of size ", weight.sizes(),
             ", expected bias to be 1-dimensional with ", g.O, " elements, but got bias of size ", bias.sizes(),
             " instead");
    GB_CHECK(bias.scalar_type() == x.scalar_type(), "conv2d: Input type (", detail::torch_type_name(x.scalar_type()),
             ") and bias type (", detail::torch_type_name(bias.scalar_type()), ") should be the same");
  }
  const int64_t eff_kH = g.dH * (g.kH - 1) + 1, eff_kW = g.dW * (g.kW - 1) + 1;
  GB_CHECK(g.H + 2 * g.pH >= eff_kH && g.W + 2 * g.pW >= eff_kW, "conv2d: Calculated padded input size per channel: (",
           g.H + 2 * g.pH, " x ", g.W + 2 * g.pW, "). Kernel size: (", eff_kH, " x ", eff_kW,
           "). Kernel size can't be greater than actual input size (input ", x.sizes(), ", weight ", weight.sizes(),
           ")");
  g.Ho = (g.H + 2 * g.pH - eff_kH) / g.sH + 1;
  g.Wo = (g.W + 2 * g.pW - eff_kW) / g.sW + 1;
  const int64_t out_elems = g.N * g.O * g.Ho * g.Wo;
  op_scope.set_flops(2 * out_elems * g.Cg() * g.kH * g.kW + (bias.defined() ? out_elems : 0));

  return detail::run_op(
      x.device(), [&] { return conv2d_cpu(g, x, weight, bias, op_scope); },
      [&] { return conv2d_cuda(g, x, weight, bias, op_scope); });
}

Tensor conv_transpose2d(const Tensor& x_in, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  GB_AUTOCAST(lower_precision_fp, conv_transpose2d, x_in, weight, bias, stride, padding, output_padding, groups,
              dilation);
  const char* op = "conv_transpose2d";
  detail::check_defined(x_in, op);
  detail::check_defined(weight, op, "weight");
  detail::check_device(x_in, op);
  detail::check_device(weight, op, "weight", x_in);
  GB_CHECK(x_in.dim() == 3 || x_in.dim() == 4,
           "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: ", x_in.sizes());
  GB_CHECK(weight.dim() == 4,
           "conv_transpose2d: expected weight of 4 dims (in_channels, out_channels/groups, kH, kW), but got weight of "
           "size ",
           weight.sizes());
  if (x_in.dim() == 3)
    return conv_transpose2d(x_in.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation)
        .squeeze(0);
  detail::OpScope op_scope(op, {x_in, weight, bias});
  const Tensor& x = x_in;
  GB_CHECK(x.scalar_type() == weight.scalar_type(), "conv_transpose2d: Input type (",
           detail::torch_type_name(x.scalar_type()), ") and weight type (",
           detail::torch_type_name(weight.scalar_type()), ") should be the same");
  GB_CHECK(is_floating_point(x.scalar_type()), "conv_transpose2d: expected a floating-point input, but got ",
           to_string(x.scalar_type()));
  auto s = detail::pair_arg(stride, op, "stride");
  auto p = detail::pair_arg(padding, op, "padding");
  auto op_pad = detail::pair_arg(output_padding, op, "output_padding");
  auto d = detail::pair_arg(dilation, op, "dilation");
  check_conv_args(op, s, p, d, groups);
  for (int i = 0; i < 2; ++i)
    GB_CHECK(op_pad[i] >= 0 && op_pad[i] < std::max(s[i], d[i]), "conv_transpose2d: output padding must be smaller "
             "than either stride or dilation, but got output_padding ", IntArrayRef(op_pad), ", stride ",
             IntArrayRef(s), ", dilation ", IntArrayRef(d));
  // The geometry of the conv2d whose input gradient this is: its input is our output, its output our input.
  ConvGeom g{};
  g.N = x.size(0);
  g.O = weight.size(0);  // conv2d's output channels = our input channels
  g.C = weight.size(1) * groups;
  g.kH = weight.size(2), g.kW = weight.size(3);
  g.sH = s[0], g.sW = s[1], g.pH = p[0], g.pW = p[1], g.dH = d[0], g.dW = d[1], g.groups = groups;
  g.Ho = x.size(2), g.Wo = x.size(3);
  GB_CHECK(x.size(1) == g.O, "Given transposed=1, weight of size ", weight.sizes(), ", expected input", x.sizes(),
           " to have ", g.O, " channels, but got ", x.size(1), " channels instead");
  GB_CHECK(g.O % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
           " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  g.H = (g.Ho - 1) * g.sH - 2 * g.pH + g.dH * (g.kH - 1) + op_pad[0] + 1;
  g.W = (g.Wo - 1) * g.sW - 2 * g.pW + g.dW * (g.kW - 1) + op_pad[1] + 1;
  GB_CHECK(g.H > 0 && g.W > 0, "conv_transpose2d: the output size (", g.H, " x ", g.W, ") is not positive for input ",
           x.sizes(), ", weight ", weight.sizes(), ", stride ", IntArrayRef(s), ", padding ", IntArrayRef(p));
  if (bias.defined()) {
    detail::check_device(bias, op, "bias", x_in);
    GB_CHECK(bias.dim() == 1 && bias.size(0) == g.C, "Given transposed=1, weight of size ", weight.sizes(),
             ", expected bias to be 1-dimensional with ", g.C, " elements, but got bias of size ", bias.sizes(),
             " instead");
    GB_CHECK(bias.scalar_type() == x.scalar_type(), "conv_transpose2d: Input type (",
             detail::torch_type_name(x.scalar_type()), ") and bias type (", detail::torch_type_name(bias.scalar_type()),
             ") should be the same");
  }
  const int64_t in_elems = g.N * g.O * g.Ho * g.Wo, out_elems = g.N * g.C * g.H * g.W;
  op_scope.set_flops(2 * in_elems * g.Cg() * g.kH * g.kW + (bias.defined() ? out_elems : 0));

  // on cuda cuDNN computes in the operands' own dtype
  const ScalarType ct =
      detail::run_op(x.device(), [&] { return detail::compute_type(x.scalar_type()); }, [&] { return x.scalar_type(); });
  Tensor xc = detail::raw_contiguous(x, ct);
  Tensor wc = detail::raw_contiguous(weight, ct);
  Tensor out = detail::make_empty({g.N, g.C, g.H, g.W}, ct, x.device());
  detail::run_op(  // cpu and meta: meta plans oneDNN's buffers (conv_backward) and computes nothing
      out.device(),
      [&] {
        if (out.numel() == 0) return;
        if (ct == kDouble)
          conv_backward<double>(g, nullptr, wc.data_ptr<double>(), xc.data_ptr<double>(), out.data_ptr<double>(),
                                nullptr, out.device());
        else
          conv_backward<float>(g, nullptr, wc.data_ptr<float>(), xc.data_ptr<float>(), out.data_ptr<float>(), nullptr,
                               out.device());
      },
      [&] { detail::cudnn_conv_backward(g, Tensor(), wc, xc, out, Tensor()); });
  if (bias.defined()) {
    NoGradGuard ng;
    out.add_(detail::raw_contiguous(bias, ct).view({1, g.C, 1, 1}));
  }
  if (ct != x.scalar_type()) out = out.to(x.scalar_type());
  op_scope.set_output(out);

  // grad_input is conv2d of grad_output; grad_weight conv2d's weight gradient with grad_output as its input and our
  // input as its output gradient.
  if (autograd::needs_grad(x, weight, bias))
    record_conv_backward("conv_transpose2d", x, weight, bias, out,
                         [g](const Tensor& gyc, const Tensor& xc, const Tensor& wc, Tensor& gx, Tensor& gw) {
                           const Device dev = gyc.device();
                           detail::run_op(
                               dev,
                               [&] {  // meta plans oneDNN's buffers and computes nothing
                                 if (gyc.scalar_type() == kDouble) {
                             if (gx.defined())
                               conv_forward<double>(g, gyc.data_ptr<double>(), wc.data_ptr<double>(), nullptr,
                                                    gx.data_ptr<double>(), dev);
                             if (gw.defined())
                               conv_backward<double>(g, gyc.data_ptr<double>(), wc.data_ptr<double>(),
                                                     xc.data_ptr<double>(), nullptr, gw.data_ptr<double>(), dev);
                           } else {
                             if (gx.defined())
                               conv_forward<float>(g, gyc.data_ptr<float>(), wc.data_ptr<float>(), nullptr,
                                                   gx.data_ptr<float>(), dev);
                             if (gw.defined())
                               conv_backward<float>(g, gyc.data_ptr<float>(), wc.data_ptr<float>(),
                                                    xc.data_ptr<float>(), nullptr, gw.data_ptr<float>(), dev);
                           }
                               },
                               [&] {
                                 if (gx.defined()) detail::cudnn_conv_forward(g, gyc, wc, Tensor(), gx);
                                 if (gw.defined()) detail::cudnn_conv_backward(g, gyc, wc, xc, Tensor(), gw);
                               });
                         },
                         {g.N, g.O, g.Ho, g.Wo}, {g.O, g.Cg(), g.kH, g.kW});
  return out;
}

// conv1d as conv2d over a height of 1: (N, C, L) -> (N, C, 1, L), weight (O, C/g, K) -> (O, C/g, 1, K).
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  const char* op = "conv1d";
  detail::check_defined(x, op);
  detail::check_defined(weight, op, "weight");
  detail::OpScope op_scope(op, {x, weight, bias});
  GB_CHECK(x.dim() == 2 || x.dim() == 3, op, ": expected a 2-D (unbatched) or 3-D (batched) input (N, C, L), but got ",
           x.sizes());
  GB_CHECK(weight.dim() == 3, op, ": expected a 3-D weight (O, C / groups, K), but got ", weight.sizes());
  auto one = [&](IntArrayRef v, const char* what) {
    GB_CHECK(v.size() == 1, op, ": ", what, " must have one value, but got ", v.size(), " ", v);
    return std::vector<int64_t>{1, v[0]};
  };
  Tensor out = conv2d(x.unsqueeze(-2), weight.unsqueeze(2), bias, one(stride, "stride"),
                      std::vector<int64_t>{0, one(padding, "padding")[1]}, one(dilation, "dilation"), groups)
                   .squeeze(-2);
  op_scope.set_output(out);
  return out;
}

}  // namespace gb
