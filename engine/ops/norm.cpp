// engine/ops/norm.cpp — batch_norm, layer_norm, group_norm, each with its backward right under it.
//
// All three compute xhat = (x - mean) * rstd over some set of elements, then y = xhat * weight + bias. Forward
// kernels are raw loops over contiguous data in float (f32, f16, bf16) or double (f64), statistics accumulated in
// double, parallel over channels (batch_norm) or rows (layer_norm, group_norm). Backward formulas are written with
// differentiable gb ops on the saved mean and rstd, so gradgradcheck holds; under create_graph the statistics are
// recomputed from x with gb ops so their own dependence on x is differentiated too. batch_norm's first-order
// and layer_norm's first-order backwards (no create_graph) also have fused raw kernels, since they sit in every CNN
// and Transformer training step. batch_norm on cuda runs cuDNN's kernels (cuda/batch_norm_cudnn.h) under PyTorch's
// node for them, CudnnBatchNormBackward0; layer_norm's and group_norm's forward on cuda one kernel per op
// (cuda/norm.cu), their backward the formulas.
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/cpu_isa.h"
#include "core/device_kernel.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/batch_norm_cudnn.h"
#include "cuda/ops.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "ops/nn_util.h"
#include "ops/vec_math.h"

namespace gb {
namespace {

// dL/dx of xhat = (x - mean) * rstd, statistics over dims (keepdim shapes), given gxhat = dL/dxhat.
Tensor normalized_input_grad(const Tensor& gxhat, const Tensor& xhat, const Tensor& rstd, IntArrayRef dims) {
  return rstd * (gxhat - gxhat.mean(dims, true) - xhat * (gxhat * xhat).mean(dims, true));
}

// Mean and rstd over dims (keepdim) for the backward: the forward's saved values, or, when the backward itself is
// being recorded (create_graph), the same statistics recomputed from x so that their dependence on x is tracked.
std::pair<Tensor, Tensor> backward_stats(const Tensor& x, const Tensor& saved_mean, const Tensor& saved_rstd,
                                         IntArrayRef dims, double eps) {
  if (!GradMode::is_enabled() || !x.requires_grad()) return {saved_mean, saved_rstd};
  Tensor mean = x.mean(dims, true);
  Tensor xc = x - mean;
  return {mean, ((xc * xc).mean(dims, true) + eps).pow(-0.5)};
}

Tensor as_type(const Tensor& t, ScalarType dt) { return t.defined() && t.scalar_type() != dt ? t.to(dt) : t; }

template <typename T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// Sums in double over 8 independent lanes, so the adds pipeline and vectorize instead of waiting on one another.
template <typename T>
GB_ALWAYS_INLINE double lane_sum(const T* x, int64_t n) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) lanes[k] += double(x[i + k]);
  double s = 0;
  for (; i < n; ++i) s += double(x[i]);
  for (double l : lanes) s += l;
  return s;
}
// sum (x - m)^2
template <typename T>
GB_ALWAYS_INLINE double lane_sq_dev(const T* x, int64_t n, double m) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      const double d = double(x[i + k]) - m;
      lanes[k] += d * d;
    }
  double s = 0;
  for (; i < n; ++i) s += (double(x[i]) - m) * (double(x[i]) - m);
  for (double l : lanes) s += l;
  return s;
}
// sum g and sum g * (x - m)
template <typename T>
GB_ALWAYS_INLINE void lane_grad_sums(const T* g, const T* x, int64_t n, double m, double& sg, double& sgx) {
  double a[8] = {}, b[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      a[k] += double(g[i + k]);
      b[k] += double(g[i + k]) * (double(x[i + k]) - m);
    }
  for (; i < n; ++i) {
    sg += double(g[i]);
    sgx += double(g[i]) * (double(x[i]) - m);
  }
  for (int k = 0; k < 8; ++k) {
    sg += a[k];
    sgx += b[k];
  }
}

// Mean and biased variance of `len` contiguous elements (two passes).
template <typename T>
GB_ALWAYS_INLINE void row_stats(const T* x, int64_t len, double& mean, double& var) {
  mean = len ? lane_sum(x, len) / double(len) : 0.0;
  var = len ? lane_sq_dev(x, len, mean) / double(len) : 0.0;
}

void check_affine(const Tensor& t, int64_t n, const char* op, const char* what, const Tensor& x) {
  if (!t.defined()) return;
  detail::check_device(t, op, what, x);  // on x's device (a cuda x reaches only batch_norm's cuda path)
  GB_CHECK(t.numel() == n, op, ": ", what, " should contain ", n, " elements not ", t.numel(), " (input of size ",
           x.sizes(), ")");
}

// The data of a row-normalizing forward, in its compute type T: x, the weight and bias (null when absent), the
// output and each row's mean and rstd.
template <typename T>
struct RowData {
  const T *x, *w, *b;
  T *y, *mean, *rstd;
};

// Calls body(RowData<T>) for xc's compute type (float or double), the weight and bias made contiguous in it; nothing
// on meta, where every tensor is made but no statistics are computed.
template <typename Body>
void with_row_data(const Tensor& xc, const Tensor& weight, const Tensor& bias, const Tensor& mean, const Tensor& rstd,
                   const Tensor& out, const char* op, const Body& body) {
  const ScalarType ct = xc.scalar_type();
  auto run = [&](auto zero) {
    using T = decltype(zero);
    Tensor wc = weight.defined() ? detail::raw_contiguous(weight, ct) : Tensor();
    Tensor bc = bias.defined() ? detail::raw_contiguous(bias, ct) : Tensor();
    detail::run_cpu_kernel(op, out, [&] {
      body(RowData<T>{xc.data_ptr<T>(), ptr_or_null<T>(wc), ptr_or_null<T>(bc), out.data_ptr<T>(), mean.data_ptr<T>(),
                      rstd.data_ptr<T>()});
    });
  };
  if (ct == kDouble)
    run(double{});
  else
    run(float{});
}

}  // namespace

// ---- batch_norm: statistics per channel over (N, *) ----

namespace {

// The kernels below are compiled per instruction set (core/cpu_isa.h) and picked per call. Their sums are written
// lane by lane (lane_sum and friends), so every set adds the same numbers in the same order: the same bits.

// Channels [c0, c1): mean and biased variance over (N, S).
template <typename T>
GB_ALWAYS_INLINE void bn_stats_body(const T* x, int64_t N, int64_t C, int64_t S, int64_t c0, int64_t c1, T* mean,
                                    double* var) {
  for (int64_t c = c0; c < c1; ++c) {
    double s = 0;
    for (int64_t n = 0; n < N; ++n) s += lane_sum(x + (n * C + c) * S, S);
    const double m = s / double(N * S);
    double q = 0;
    for (int64_t n = 0; n < N; ++n) q += lane_sq_dev(x + (n * C + c) * S, S, m);
    mean[c] = T(m);
    var[c] = q / double(N * S);
  }
}
GB_ISA_VARIANTS(bn_stats_range,
                (const T* x, int64_t N, int64_t C, int64_t S, int64_t c0, int64_t c1, T* mean, double* var),
                bn_stats_body<T>(x, N, C, S, c0, c1, mean, var))

template <typename T>
void bn_channel_stats(const T* x, int64_t N, int64_t C, int64_t S, T* mean, double* var) {
  auto kernel = GB_PICK_ISA(bn_stats_range, T);
  parallel_for(0, C, 1, [&](int64_t c0, int64_t c1) { kernel(x, N, C, S, c0, c1, mean, var); });
}

// Rows [r0, r1) of (N*C, S): y = x * scale[c] + shift[c].
template <typename T>
GB_ALWAYS_INLINE void affine_body(const T* x, const T* scale, const T* shift, int64_t C, int64_t S, int64_t r0,
                                  int64_t r1, T* y) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r % C;
    const T a = scale[c], b = shift[c];
    const T* __restrict xp = x + r * S;
    T* __restrict yp = y + r * S;
    for (int64_t i = 0; i < S; ++i) yp[i] = xp[i] * a + b;
  }
}
GB_ISA_VARIANTS(affine_rows,
                (const T* x, const T* scale, const T* shift, int64_t C, int64_t S, int64_t r0, int64_t r1, T* y),
                affine_body<T>(x, scale, shift, C, S, r0, r1, y))

// y = x * scale[c] + shift[c] over (N, C, S)
template <typename T>
void channel_affine(const T* x, const T* scale, const T* shift, int64_t N, int64_t C, int64_t S, T* y) {
  auto kernel = GB_PICK_ISA(affine_rows, T);
  parallel_for(0, N * C, std::max<int64_t>(1, 32768 / std::max<int64_t>(S, 1)),
               [&](int64_t r0, int64_t r1) { kernel(x, scale, shift, C, S, r0, r1, y); });
}

// Fused first-order backward. training: batch statistics (the mean's and variance's dependence on x included).
template <typename T>
GB_ALWAYS_INLINE void bn_backward_body(const T* x, const T* g, const T* w, const T* mean, const T* rstd, int64_t N,
                                       int64_t C, int64_t S, bool training, int64_t c0, int64_t c1, T* gx, T* gw,
                                       T* gb) {
  const double M = double(N * S);
  for (int64_t c = c0; c < c1; ++c) {
    const double m = double(mean[c]), r = double(rstd[c]);
    double sg = 0, sgx = 0;  // sum g, sum g * (x - mean)
    for (int64_t n = 0; n < N; ++n) lane_grad_sums(g + (n * C + c) * S, x + (n * C + c) * S, S, m, sg, sgx);
    if (gw) gw[c] = T(sgx * r);
    if (gb) gb[c] = T(sg);
    if (!gx) continue;
    const double wc = w ? double(w[c]) : 1.0;
    // gx = w r (g - sg/M - (x - m) r^2 sgx/M)  (training);  w r g  (running statistics)
    const T k = T(wc * r);
    const T mg = training ? T(sg / M) : T(0);
    const T kx = training ? T(r * r * sgx / M) : T(0);
    const T mm = T(m);
    for (int64_t n = 0; n < N; ++n) {
      const T* __restrict xp = x + (n * C + c) * S;
      const T* __restrict gp = g + (n * C + c) * S;
      T* __restrict op = gx + (n * C + c) * S;
      for (int64_t i = 0; i < S; ++i) op[i] = k * (gp[i] - mg - (xp[i] - mm) * kx);
    }
  }
}
GB_ISA_VARIANTS(bn_backward_range,
                (const T* x, const T* g, const T* w, const T* mean, const T* rstd, int64_t N, int64_t C, int64_t S,
                 bool training, int64_t c0, int64_t c1, T* gx, T* gw, T* gb),
                bn_backward_body<T>(x, g, w, mean, rstd, N, C, S, training, c0, c1, gx, gw, gb))

template <typename T>
void bn_backward_kernel(const T* x, const T* g, const T* w, const T* mean, const T* rstd, int64_t N, int64_t C,
                        int64_t S, bool training, T* gx, T* gw, T* gb) {
  auto kernel = GB_PICK_ISA(bn_backward_range, T);
  parallel_for(0, C, 1,
               [&](int64_t c0, int64_t c1) { kernel(x, g, w, mean, rstd, N, C, S, training, c0, c1, gx, gw, gb); });
}

// batch_norm's gradients by its formulas in gb ops (differentiable: create_graph; on cuda also the running-statistics
// mode), from the node's saved x, weight, mean and rstd (rstd = 1/sqrt(var + eps)); bias_type: the bias gradient's.
variable_list bn_formula_grads(autograd::BackwardContext& c, bool batch_stats, IntArrayRef dims, IntArrayRef bshape,
                               double eps, ScalarType bias_type) {
  const Tensor& g = c.grad();
  const Tensor& xs = c.saved(0);
  const Tensor& ws = c.saved(1);
  Tensor mean = c.saved(2).view(bshape), rstd = c.saved(3).view(bshape);
  if (batch_stats) std::tie(mean, rstd) = backward_stats(xs, mean, rstd, dims, eps);
  Tensor xhat = (xs - mean) * rstd;
  Tensor gxhat = ws.defined() ? g * ws.view(bshape) : g;
  Tensor gx, gw, gb;
  if (c.needs(0)) gx = batch_stats ? normalized_input_grad(gxhat, xhat, rstd, dims) : gxhat * rstd;
  if (c.needs(1)) gw = (g * xhat).sum(dims);
  if (c.needs(2)) gb = g.sum(dims);
  return variable_list{as_type(gx, xs.scalar_type()), ws.defined() ? as_type(gw, ws.scalar_type()) : gw,
                       as_type(gb, bias_type)};
}

// batch_norm on cuda: cuDNN's kernels (cuda/batch_norm_cudnn.h) and PyTorch's node for them, CudnnBatchNormBackward0
// (cuDNN's backward in training mode; the formulas with running statistics or create_graph).
Tensor batch_norm_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                       const Tensor& running_var, bool training, double momentum, double eps,
                       detail::OpScope& op_scope) {
  const int64_t C = x.size(1);
  const bool batch_stats = training || !running_mean.defined();
  const ScalarType xt = x.scalar_type(), pt = xt == kDouble ? kDouble : kFloat;  // cuDNN's parameter type
  const TensorOptions po = TensorOptions().dtype(pt).device(x.device());
  Tensor xc = detail::raw_contiguous(x, xt);
  Tensor w = weight.defined() ? detail::raw_contiguous(weight, pt) : ones({C}, po);
  Tensor b = bias.defined() ? detail::raw_contiguous(bias, pt) : zeros({C}, po);
  Tensor out = detail::make_empty(x.sizes(), xt, x.device());
  Tensor mean, rstd;
  {
    NoGradGuard ng;
    if (batch_stats) {
      mean = detail::make_empty({C}, pt, x.device());
      rstd = detail::make_empty({C}, pt, x.device());
      // cuDNN moves the running statistics in place: through (C) copies in its type when they are not that already
      auto in_place = [&](const Tensor& r) {
        return r.defined() && training ? (r.scalar_type() == pt && r.is_contiguous() ? r : r.to(pt).contiguous())
                                       : Tensor();
      };
      Tensor rm = in_place(running_mean), rv = in_place(running_var);
      detail::cudnn_batch_norm_forward(xc, w, b, out, rm, rv, true, momentum, eps, mean, rstd);
      if (rm.defined() && !rm.is_same(running_mean)) running_mean.copy_(rm);
      if (rv.defined() && !rv.is_same(running_var)) running_var.copy_(rv);
    } else {
      mean = detail::raw_contiguous(running_mean, pt).clone();  // saved: the running mean may move before backward
      Tensor rv = detail::raw_contiguous(running_var, pt);
      detail::cudnn_batch_norm_forward(xc, w, b, out, mean, rv, false, momentum, eps, Tensor(), Tensor());
      rstd = (rv + eps).rsqrt();
    }
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(x, weight, bias)) {
    std::vector<int64_t> bshape(size_t(x.dim()), 1);
    bshape[1] = C;
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
    const ScalarType bias_type = bias.defined() ? bias.scalar_type() : xt;
    autograd::record(
        "CudnnBatchNormBackward0", autograd::collect_edges({x, weight, bias}), {&out},
        {autograd::input(x), autograd::input(weight), autograd::input(mean), autograd::input(rstd)},
        [=](autograd::BackwardContext& c) {
          if (GradMode::is_enabled() || !batch_stats)
            return bn_formula_grads(c, batch_stats, dims, bshape, eps, bias_type);
          const Tensor& xs = c.saved(0);
          const Tensor& ws = c.saved(1);
          Tensor gx = detail::make_empty(xs.sizes(), xt, xs.device());
          Tensor gw = detail::make_empty({C}, pt, xs.device()), gb = detail::make_empty({C}, pt, xs.device());
          detail::cudnn_batch_norm_backward(detail::raw_contiguous(xs, xt), detail::raw_contiguous(c.grad(), xt),
                                            ws.defined() ? detail::raw_contiguous(ws, pt) : ones({C}, po),
                                            c.saved(2), c.saved(3), eps, gx, gw, gb);
          return variable_list{c.needs(0) ? gx : Tensor(),
                               c.needs(1) && ws.defined() ? as_type(gw, ws.scalar_type()) : Tensor(),
                               c.needs(2) ? as_type(gb, bias_type) : Tensor()};
        });
  }
  return out;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  detail::check_defined(x, op);
  detail::OpScope op_scope(op, {x, weight, bias, running_mean, running_var});
  detail::check_device(x, op);
  GB_CHECK(x.dim() >= 2, op, ": expected input with at least 2 dims (N, C, *), but got input of size ", x.sizes());
  GB_CHECK(x.is_floating_point(), op, ": expected a floating-point input, but got ", to_string(x.scalar_type()));
  const int64_t N = x.size(0), C = x.size(1), S = C && N ? x.numel() / (N * C) : 0;
  check_affine(weight, C, op, "weight", x);
  check_affine(bias, C, op, "bias", x);
  check_affine(running_mean, C, op, "running_mean", x);
  check_affine(running_var, C, op, "running_var", x);
  GB_CHECK(running_mean.defined() == running_var.defined(), op,
           ": running_mean and running_var must both be given or both be undefined");
  const bool batch_stats = training || !running_mean.defined();
  GB_CHECK(!training || N * S > 1, "Expected more than 1 value per channel when training, got input size ", x.sizes());
  if (x.device().type() == kCUDA)  // cuDNN's or the device kernels' statistics, update and backward
    return batch_norm_cuda(x, weight, bias, running_mean, running_var, training, momentum, eps, op_scope);

  const ScalarType ct = detail::compute_type(x.scalar_type());
  Tensor xc = detail::raw_contiguous(x, ct);
  Tensor mean = detail::make_empty({C}, ct, x.device()), rstd = detail::make_empty({C}, ct, x.device());
  Tensor out = detail::make_empty(x.sizes(), ct, x.device());
  std::vector<double> var(static_cast<size_t>(C));
  Tensor rm, rv;  // the operands in the compute type (meta makes them too, then computes nothing)
  if (!batch_stats) rm = detail::raw_contiguous(running_mean, ct), rv = detail::raw_contiguous(running_var, ct);
  Tensor wc = weight.defined() ? detail::raw_contiguous(weight, ct) : Tensor();
  Tensor bc = bias.defined() ? detail::raw_contiguous(bias, ct) : Tensor();
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T* mp = mean.data_ptr<T>();
    T* rp = rstd.data_ptr<T>();
    if (batch_stats) {
      bn_channel_stats<T>(xc.data_ptr<T>(), N, C, S, mp, var.data());
    } else {
      for (int64_t c = 0; c < C; ++c) {
        mp[c] = rm.data_ptr<T>()[c];
        var[size_t(c)] = double(rv.data_ptr<T>()[c]);
      }
    }
    for (int64_t c = 0; c < C; ++c) rp[c] = T(1.0 / std::sqrt(var[size_t(c)] + eps));
    std::vector<T> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      scale[size_t(c)] = rp[c] * (wc.defined() ? wc.data_ptr<T>()[c] : T(1));
      shift[size_t(c)] = (bc.defined() ? bc.data_ptr<T>()[c] : T(0)) - mp[c] * scale[size_t(c)];
    }
    if (out.numel() > 0) channel_affine<T>(xc.data_ptr<T>(), scale.data(), shift.data(), N, C, S, out.data_ptr<T>());
  };
  detail::run_cpu_kernel(op, out, [&] { ct == kDouble ? run(double{}) : run(float{}); });
  out = as_type(out, x.scalar_type());
  op_scope.set_output(out);

  if (training && running_mean.defined()) {  // running statistics take the unbiased variance
    NoGradGuard ng;
    const double n = double(N * S);
    std::vector<double> unbiased(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) unbiased[size_t(c)] = var[size_t(c)] * n / (n - 1);
    Tensor uv = detail::values_on(ArrayRef<double>(unbiased), kDouble, x.device());
    Tensor& rm = const_cast<Tensor&>(running_mean);
    Tensor& rv = const_cast<Tensor&>(running_var);
    rm.mul_(1 - momentum).add_(mean.to(rm.scalar_type()), momentum);
    rv.mul_(1 - momentum).add_(uv.to(rv.scalar_type()), momentum);
  }

  if (autograd::needs_grad(x, weight, bias)) {
    std::vector<int64_t> bshape(size_t(x.dim()), 1);
    bshape[1] = C;
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
    autograd::record(
        "NativeBatchNormBackward0", autograd::collect_edges({x, weight, bias}), {&out},
        {autograd::input(x), autograd::input(weight), autograd::input(mean), autograd::input(rstd)},
        [=](autograd::BackwardContext& c) {
          const Tensor& g = c.grad();
          const Tensor& xs = c.saved(0);
          const Tensor& ws = c.saved(1);
          Tensor gx, gw, gb;
          if (!GradMode::is_enabled()) {  // first order only: the fused kernel
            const ScalarType ct = detail::compute_type(xs.scalar_type());
            Tensor xc = detail::raw_contiguous(xs, ct), gc = detail::raw_contiguous(g, ct);
            Tensor wc = ws.defined() ? detail::raw_contiguous(ws, ct) : Tensor();
            if (c.needs(0)) gx = detail::make_empty(xs.sizes(), ct, xs.device());
            if (c.needs(1)) gw = detail::make_empty({C}, ct, xs.device());
            if (c.needs(2)) gb = detail::make_empty({C}, ct, xs.device());
            auto run = [&](auto zero) {
              using T = decltype(zero);
              bn_backward_kernel<T>(
                  xc.data_ptr<T>(), gc.data_ptr<T>(), ptr_or_null<T>(wc), c.saved(2).data_ptr<T>(),
                  c.saved(3).data_ptr<T>(), N, C, S, batch_stats, gx.defined() ? gx.data_ptr<T>() : nullptr,
                  gw.defined() ? gw.data_ptr<T>() : nullptr, gb.defined() ? gb.data_ptr<T>() : nullptr);
            };
            // meta: the gradients are made; no kernel
            detail::run_cpu_kernel("native_batch_norm_backward", xc,
                                   [&] { ct == kDouble ? run(double{}) : run(float{}); });
          } else {  // differentiable formulas (create_graph)
            return bn_formula_grads(c, batch_stats, dims, bshape, eps, g.scalar_type());
          }
          return variable_list{as_type(gx, xs.scalar_type()), ws.defined() ? as_type(gw, ws.scalar_type()) : gw,
                               c.needs(2) ? as_type(gb, g.scalar_type()) : gb};
        });
  }
  return out;
}

// ---- layer_norm: statistics per row over the trailing normalized_shape ----

// Stores the 64-byte vector v at p: with `nt`, through non-temporal stores (float only, p 16-byte aligned; see
// ops/vec_math.h's stream16), for an output far bigger than the cache.
template <typename T, typename V>
GB_ALWAYS_INLINE void put_vector(T* p, const V& v, bool nt) {
  if constexpr (std::is_same_v<T, float>)
    if (nt) return detail::stream16(p, v);
  std::memcpy(p, &v, sizeof v);
}

// One layer_norm row: statistics in double, then y = (x - mean) * rstd * weight + bias (either may be null), on
// 64-byte vectors while the next row is prefetched (prefetch_next) for its statistics passes; with `stream` (an
// output far bigger than the cache) y goes through non-temporal stores.
template <typename T>
GB_ALWAYS_INLINE void layer_norm_row(const T* x, T* y, const T* w, const T* b, int64_t D, double eps, T& mean, T& rstd,
                                     bool prefetch_next, bool stream) {
  constexpr int L = 64 / sizeof(T);
  typedef T V __attribute__((vector_size(64)));
  double m, v;
  row_stats(x, D, m, v);
  mean = T(m);
  rstd = T(1.0 / std::sqrt(v + eps));
  const T mt = mean, rt = rstd;
  const int64_t Dv = D - D % L;
  const bool nt = stream && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  for (int64_t i = 0; i < Dv; i += L) {
    if (prefetch_next) __builtin_prefetch(x + D + i);
    V t;
    std::memcpy(&t, x + i, sizeof t);
    t = (t - mt) * rt;
    if (w) {
      V wv;
      std::memcpy(&wv, w + i, sizeof wv);
      t = t * wv;
    }
    if (b) {
      V bv;
      std::memcpy(&bv, b + i, sizeof bv);
      t = t + bv;
    }
    put_vector(y + i, t, nt);
  }
  for (int64_t i = Dv; i < D; ++i) {
    T t = (x[i] - mt) * rt;
    if (w) t = t * w[i];
    if (b) t = t + b[i];
    y[i] = t;
  }
}
// Rows [r0, r1), compiled for each instruction set (core/cpu_isa.h).
GB_ISA_VARIANTS(layer_norm_rows,
                (const T* x, T* y, const T* w, const T* b, int64_t r0, int64_t r1, int64_t D, double eps, T* mean,
                 T* rstd, bool stream),
                {
                  for (int64_t r = r0; r < r1; ++r)
                    layer_norm_row<T>(x + r * D, y + r * D, w, b, D, eps, mean[r], rstd[r], r + 1 < r1, stream);
                  if (stream) detail::stream_fence();
                })

// The backward of one row (see layer_norm_backward_rows). Two passes over the row: the sums of gw and gw * xhat,
// then dx into dr (when it is wanted) with g * xhat and g added into the partial rows qw and qb (when they are),
// while the next row is prefetched so that its first pass finds it in cache (dx through non-temporal stores with
// `stream`). kW: a weight multiplies g (a template
// flag: no branch in the loops). The loops run on 64-byte vectors (GCC/clang vector extensions; a narrower ISA
// splits them), so the compiler cannot reorder lanes: every instruction set adds the same numbers in the same order.
template <typename T, bool kW>
GB_ALWAYS_INLINE void layer_norm_backward_row(const T* gr, const T* xr, const T* wp, T m, T rs, T* dr, T* qw, T* qb,
                                              int64_t D, bool prefetch_next, bool stream) {
  constexpr int L = 64 / sizeof(T);
  typedef T V __attribute__((vector_size(64)));
  const int64_t Dv = D - D % L;
  T ca = 0, cb = 0;
  if (dr) {
    V va = {}, vb = {};
    for (int64_t i = 0; i < Dv; i += L) {
      V g, x;
      std::memcpy(&g, gr + i, sizeof g);
      std::memcpy(&x, xr + i, sizeof x);
      if constexpr (kW) {
        V w;
        std::memcpy(&w, wp + i, sizeof w);
        g = g * w;
      }
      va += g;
      vb += g * ((x - m) * rs);
    }
    T a[L], b[L];
    std::memcpy(a, &va, sizeof a);
    std::memcpy(b, &vb, sizeof b);
    for (int64_t i = Dv, k = 0; i < D; ++i, ++k) {
      const T gw = kW ? gr[i] * wp[i] : gr[i];
      a[k] += gw;
      b[k] += gw * ((xr[i] - m) * rs);
    }
    T sa = 0, sb = 0;
    for (int k = 0; k < L; ++k) sa += a[k], sb += b[k];
    ca = sa / T(D), cb = sb / T(D);
  }
  const bool nt = stream && reinterpret_cast<uintptr_t>(dr) % 16 == 0;
  for (int64_t i = 0; i < Dv; i += L) {
    if (prefetch_next) {
      __builtin_prefetch(gr + D + i);
      __builtin_prefetch(xr + D + i);
    }
    V g, x;
    std::memcpy(&g, gr + i, sizeof g);
    std::memcpy(&x, xr + i, sizeof x);
    const V xhat = (x - m) * rs;
    if (dr) {
      V gw = g;
      if constexpr (kW) {
        V w;
        std::memcpy(&w, wp + i, sizeof w);
        gw = g * w;
      }
      const V d = rs * (gw - ca - xhat * cb);
      put_vector(dr + i, d, nt);
    }
    if (qw) {
      V pw, pb;
      std::memcpy(&pw, qw + i, sizeof pw);
      std::memcpy(&pb, qb + i, sizeof pb);
      pw += g * xhat;
      pb += g;
      std::memcpy(qw + i, &pw, sizeof pw);
      std::memcpy(qb + i, &pb, sizeof pb);
    }
  }
  for (int64_t i = Dv; i < D; ++i) {
    const T xhat = (xr[i] - m) * rs;
    if (dr) dr[i] = rs * ((kW ? gr[i] * wp[i] : gr[i]) - ca - xhat * cb);
    if (qw) qw[i] += gr[i] * xhat, qb[i] += gr[i];
  }
}
// Rows [r0, r1): dx, and the sums over rows of g * xhat and g added into the thread's double rows pw and pb through
// the compute-type rows qw and qb (zero on entry), which take kBlock rows at a time.
template <typename T, bool kW>
GB_ALWAYS_INLINE void layer_norm_backward_span(const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx,
                                               double* pw, double* pb, T* qw, T* qb, int64_t r0, int64_t r1, int64_t D,
                                               bool stream) {
  constexpr int64_t kBlock = 16;
  for (int64_t r = r0; r < r1; ++r) {
    layer_norm_backward_row<T, kW>(g + r * D, x + r * D, w, mean[r], rstd[r], dx ? dx + r * D : nullptr, qw, qb, D,
                                   r + 1 < r1, stream);
    if (qw && ((r - r0 + 1) % kBlock == 0 || r + 1 == r1))
      for (int64_t i = 0; i < D; ++i) {
        pw[i] += double(qw[i]);
        pb[i] += double(qb[i]);
        qw[i] = qb[i] = T(0);
      }
  }
  if (stream) detail::stream_fence();
}
GB_ISA_VARIANTS(layer_norm_backward_rows,
                (const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx, double* pw, double* pb, T* qw,
                 T* qb, int64_t r0, int64_t r1, int64_t D, bool stream),
                layer_norm_backward_span<T, F...>(g, x, w, mean, rstd, dx, pw, pb, qw, qb, r0, r1, D, stream))

// layer_norm's forward over `rows` rows of D elements of xc (contiguous, in the compute type) through the
// per-instruction-set row kernels.
void layer_norm_forward_rows(const Tensor& xc, const Tensor& weight, const Tensor& bias, int64_t rows, int64_t D,
                             double eps, const Tensor& mean, const Tensor& rstd, const Tensor& out) {
  with_row_data(xc, weight, bias, mean, rstd, out, "layer_norm", [&](auto d) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(d.y)>>;
    auto rows_fn = GB_PICK_ISA(layer_norm_rows, T);
    const bool stream = detail::stream_output(out.nbytes());
    parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)),
                 [&](int64_t r0, int64_t r1) { rows_fn(d.x, d.y, d.w, d.b, r0, r1, D, eps, d.mean, d.rstd, stream); });
  });
}

// layer_norm's first-order backward (no create_graph) in one pass over each row of D elements, with the forward's
// mean and rstd: for gw = g * weight (or g) and xhat = (x - mean) * rstd,
//   dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),   dweight = sum over rows g * xhat,   dbias = sum g.
// The weight and bias sums go to one partial row per thread (in the compute type for 16 rows at a time, then in
// double), added up at the end. The composite form
// below (differentiable ops) does the same in about ten passes over x-sized tensors.
variable_list layer_norm_backward_rows(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean,
                                       const Tensor& rstd, IntArrayRef normalized_shape,
                                       const std::array<bool, 3>& needs, bool has_bias) {
  const ScalarType ct = mean.scalar_type();
  int64_t D = 1;
  for (int64_t s : normalized_shape) D *= s;
  Tensor gc = detail::raw_contiguous(g, ct), xc = detail::raw_contiguous(x, ct);
  Tensor wc = w.defined() ? detail::raw_contiguous(w, ct) : Tensor();
  const int64_t rows = D ? xc.numel() / D : 0;
  const bool need_x = needs[0], need_w = needs[1] && w.defined(), need_b = needs[2] && has_bias;
  Tensor gx = need_x ? detail::make_empty(x.sizes(), ct, x.device()) : Tensor();
  const int64_t nt = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), rows * D / 32768 + 1));
  std::vector<double> partial(need_w || need_b ? size_t(2 * D * nt) : 0, 0.0);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* gp = gc.data_ptr<T>();
    const T* xp = xc.data_ptr<T>();
    const T* wp = ptr_or_null<T>(wc);
    const T* mp = mean.data_ptr<T>();
    const T* rp = rstd.data_ptr<T>();
    T* dxp = need_x ? gx.data_ptr<T>() : nullptr;
    std::vector<T> scratch(partial.size(), T(0));  // each thread's qw and qb rows
    const bool stream = need_x && detail::stream_output(gx.nbytes());
    auto rows_fn =
        wp ? GB_PICK_ISA(layer_norm_backward_rows, T, true) : GB_PICK_ISA(layer_norm_backward_rows, T, false);
    parallel_for(0, nt, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        double* pw = partial.empty() ? nullptr : partial.data() + 2 * D * t;
        T* qw = scratch.empty() ? nullptr : scratch.data() + 2 * D * t;
        rows_fn(gp, xp, wp, mp, rp, dxp, pw, pw ? pw + D : nullptr, qw, qw ? qw + D : nullptr, rows * t / nt,
                rows * (t + 1) / nt, D, stream);
      }
    });
  };
  if (ct == kDouble)
    run(double{});
  else
    run(float{});
  Tensor gw, gbias;
  auto column_sums = [&](int64_t offset, ScalarType dtype) {
    Tensor out = detail::make_empty(normalized_shape, kDouble, x.device());
    double* o = out.data_ptr<double>();
    for (int64_t i = 0; i < D; ++i) {
      double s = 0;
      for (int64_t t = 0; t < nt; ++t) s += partial[size_t(2 * D * t + offset + i)];
      o[i] = s;
    }
    return out.to(dtype);
  };
  if (need_w) gw = column_sums(0, w.scalar_type());
  if (need_b) gbias = column_sums(D, g.scalar_type());
  return variable_list{need_x ? as_type(gx, x.scalar_type()) : Tensor(), gw, gbias};
}

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  GB_AUTOCAST(fp32, layer_norm, x, normalized_shape, weight, bias, eps);
  const char* op = "layer_norm";
  detail::check_defined(x, op);
  detail::OpScope op_scope(op, {x, weight, bias});
  detail::check_device(x, op);
  GB_CHECK(x.is_floating_point(), op, ": expected a floating-point input, but got ", to_string(x.scalar_type()));
  const int64_t k = int64_t(normalized_shape.size());
  GB_CHECK(k >= 1, op,
           ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
           "but got normalized_shape = ",
           normalized_shape);
  bool match = x.dim() >= k;
  for (int64_t i = 0; match && i < k; ++i) match = x.size(x.dim() - k + i) == normalized_shape[size_t(i)];
  if (!match) {
    std::string star = "[*";
    for (int64_t s : normalized_shape) star += ", " + std::to_string(s);
    throw Error(detail::str_cat("Given normalized_shape=", normalized_shape, ", expected input with shape ", star,
                                "], but got input of size", x.sizes()));
  }
  for (const Tensor* t : {&weight, &bias}) {
    if (!t->defined()) continue;
    detail::check_device(*t, op, t == &weight ? "weight" : "bias", x);
    GB_CHECK(t->sizes() == normalized_shape, "Expected ", t == &weight ? "weight" : "bias",
             " to be of same shape as normalized_shape, but got ", t == &weight ? "weight" : "bias", " of shape ",
             t->sizes(), " and normalized_shape = ", normalized_shape);
  }
  int64_t D = 1;
  for (int64_t s : normalized_shape) D *= s;
  const int64_t M = D ? x.numel() / D : 0;
  std::vector<int64_t> stat_shape = x.sizes().vec();
  for (int64_t i = 0; i < k; ++i) stat_shape[size_t(x.dim() - 1 - i)] = 1;
  std::vector<int64_t> dims;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);

  const ScalarType ct = detail::compute_type(x.scalar_type());
  Tensor xc = detail::raw_contiguous(x, ct);
  Tensor mean = detail::make_empty(stat_shape, ct, x.device()), rstd = detail::make_empty(stat_shape, ct, x.device());
  Tensor out = detail::make_empty(x.sizes(), ct, x.device());
  // weight and bias run along the row
  detail::run_op(
      x.device(), [&] { layer_norm_forward_rows(xc, weight, bias, M, D, eps, mean, rstd, out); },
      [&] { cuda_ops::row_norm(xc, weight, bias, M, D, 0, 1, eps, mean, rstd, out); });
  out = as_type(out, x.scalar_type());
  op_scope.set_output(out);

  if (autograd::needs_grad(x, weight, bias)) {
    autograd::record("NativeLayerNormBackward0", autograd::collect_edges({x, weight, bias}), {&out},
                     {autograd::input(x), autograd::input(weight), autograd::input(mean), autograd::input(rstd)},
                     [dims, eps, lead = x.dim() - k, shape = normalized_shape.vec(),
                      has_bias = bias.defined()](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& xs = c.saved(0);
                       const Tensor& ws = c.saved(1);
                       if (!GradMode::is_enabled() && g.device().is_cpu() && xs.device().is_cpu())
                         return layer_norm_backward_rows(g, xs, ws, c.saved(2), c.saved(3), shape,
                                                         {c.needs(0), c.needs(1), c.needs(2)}, has_bias);
                       auto [mean, rstd] = backward_stats(xs, c.saved(2), c.saved(3), dims, eps);
                       Tensor xhat = (xs - mean) * rstd;
                       Tensor gx, gw, gb;
                       std::vector<int64_t> lead_dims;
                       for (int64_t d = 0; d < lead; ++d) lead_dims.push_back(d);
                       if (c.needs(0)) gx = normalized_input_grad(ws.defined() ? g * ws : g, xhat, rstd, dims);
                       auto over_rows = [&](const Tensor& t) { return lead_dims.empty() ? t : t.sum(lead_dims); };
                       if (c.needs(1)) gw = as_type(over_rows(g * xhat), ws.scalar_type());
                       if (c.needs(2)) gb = as_type(over_rows(g), g.scalar_type());
                       return variable_list{as_type(gx, xs.scalar_type()), gw, gb};
                     });
  }
  return out;
}

// ---- group_norm: statistics per (sample, group of C/G channels) ----

namespace {
// Rows [r0, r1) of group_norm's forward: row r is group r % G of sample r / G, Cg channels of S elements each; its
// mean and rstd, then y = x * a + b per channel (a = rstd * weight, b = bias - mean * a). Compiled for each
// instruction set (core/cpu_isa.h): the statistics' lanes and the affine loop vectorize at the set's width, the same
// numbers in the same order on every set.
GB_ISA_VARIANTS(group_norm_rows,
                (const T* x, T* y, const T* w, const T* b, int64_t r0, int64_t r1, int64_t G, int64_t Cg, int64_t S,
                 double eps, T* mean, T* rstd),
                {
                  const int64_t D = Cg * S;
                  for (int64_t r = r0; r < r1; ++r) {
                    const T* xr = x + r * D;
                    T* yr = y + r * D;
                    double m, v;
                    row_stats(xr, D, m, v);
                    mean[r] = T(m);
                    rstd[r] = T(1.0 / std::sqrt(v + eps));
                    const T mt = mean[r], rt = rstd[r];
                    const int64_t g = r % G;
                    for (int64_t cc = 0; cc < Cg; ++cc) {
                      const int64_t ch = g * Cg + cc;
                      const T a = rt * (w ? w[ch] : T(1));
                      const T bb = (b ? b[ch] : T(0)) - mt * a;
                      const T* __restrict xc = xr + cc * S;
                      T* __restrict yc = yr + cc * S;
                      for (int64_t i = 0; i < S; ++i) yc[i] = xc[i] * a + bb;
                    }
                  }
                })
}  // namespace

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  GB_AUTOCAST(fp32, group_norm, x, num_groups, weight, bias, eps);
  const char* op = "group_norm";
  detail::check_defined(x, op);
  detail::OpScope op_scope(op, {x, weight, bias});
  detail::check_device(x, op);
  GB_CHECK(x.dim() >= 2, op, ": Expected at least 2 dimensions for input tensor but received ", x.dim());
  GB_CHECK(x.is_floating_point(), op, ": expected a floating-point input, but got ", to_string(x.scalar_type()));
  const int64_t N = x.size(0), C = x.size(1);
  GB_CHECK(num_groups > 0 && C % num_groups == 0,
           "Expected number of channels in input to be divisible by num_groups, but got input of shape ", x.sizes(),
           " and num_groups=", num_groups);
  for (const Tensor* t : {&weight, &bias}) {
    if (!t->defined()) continue;
    detail::check_device(*t, op, t == &weight ? "weight" : "bias", x);
    GB_CHECK(t->dim() == 1 && t->numel() == C, "Expected ", t == &weight ? "weight" : "bias",
             " to be a vector of size equal to the number of channels in input, but got ",
             t == &weight ? "weight" : "bias", " of shape ", t->sizes(), " and input of shape ", x.sizes());
  }
  const int64_t G = num_groups, S = N * C != 0 ? x.numel() / (N * C) : 0, Cg = C / G, D = Cg * S;

  const ScalarType ct = detail::compute_type(x.scalar_type());
  Tensor xc = detail::raw_contiguous(x, ct);
  Tensor mean = detail::make_empty({N, G, 1}, ct, x.device()), rstd = detail::make_empty({N, G, 1}, ct, x.device());
  Tensor out = detail::make_empty(x.sizes(), ct, x.device());
  // a row is one group of one sample: Cg channels of S elements, each channel with its own weight and bias
  detail::run_op(  // cpu and meta: the operands are made in with_row_data, whose kernel meta skips
      x.device(),
      [&] {
        with_row_data(xc, weight, bias, mean, rstd, out, "group_norm", [&](auto d) {
          using T = std::remove_const_t<std::remove_pointer_t<decltype(d.y)>>;
          auto rows_fn = GB_PICK_ISA(group_norm_rows, T);
          parallel_for(0, N * G, std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
            rows_fn(d.x, d.y, d.w, d.b, r0, r1, G, Cg, S, eps, d.mean, d.rstd);
          });
        });
      },
      [&] { cuda_ops::row_norm(xc, weight, bias, N * G, D, G, S, eps, mean, rstd, out); });
  out = as_type(out, x.scalar_type());
  op_scope.set_output(out);

  if (autograd::needs_grad(x, weight, bias)) {
    std::vector<int64_t> cshape(size_t(x.dim()), 1);  // (1, C, 1, ...)
    cshape[1] = C;
    std::vector<int64_t> cdims{0};
    for (int64_t d = 2; d < x.dim(); ++d) cdims.push_back(d);
    autograd::record("NativeGroupNormBackward0", autograd::collect_edges({x, weight, bias}), {&out},
                     {autograd::input(x), autograd::input(weight), autograd::input(mean), autograd::input(rstd)},
                     [=, xshape = x.sizes().vec()](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& xs = c.saved(0);
                       const Tensor& ws = c.saved(1);
                       Tensor xr = xs.reshape({N, G, -1});
                       auto [mean, rstd] = backward_stats(xr, c.saved(2), c.saved(3), {2}, eps);
                       Tensor xhat_r = (xr - mean) * rstd;
                       Tensor xhat = xhat_r.reshape(xshape);
                       Tensor gx, gw, gb;
                       if (c.needs(0)) {
                         Tensor gxhat = (ws.defined() ? g * ws.view(cshape) : g).reshape({N, G, -1});
                         gx = normalized_input_grad(gxhat, xhat_r, rstd, {2}).reshape(xshape);
                       }
                       if (c.needs(1)) gw = as_type((g * xhat).sum(cdims), ws.scalar_type());
                       if (c.needs(2)) gb = as_type(g.sum(cdims), g.scalar_type());
                       return variable_list{as_type(gx, xs.scalar_type()), gw, gb};
                     });
  }
  return out;
}

}  // namespace gb
