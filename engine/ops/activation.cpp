// engine/ops/activation.cpp — activation functions: relu (+ relu_), leaky_relu, gelu (exact and tanh), silu, softplus.
// Each op's backward sits right under its forward. GELU's derivative needs erf, which is no gb op, so its backward
// is a fused kernel (gelu_backward) that records its own backward, as PyTorch's GeluBackwardBackward0 does.
#include <cmath>
#include <string>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "ops/inplace.h"
#include "ops/unary_kernel.h"

namespace gb {

namespace {

void check_floating(const Tensor& a, const char* op) {
  detail::check_defined(a, op);
  GB_CHECK(a.is_floating_point(), op, ": expected a floating tensor but got ", to_string(a.scalar_type()), " (shape ",
           a.sizes(), "); convert it first, e.g. x.to(gb::kFloat)");
}

constexpr auto relu_fn = [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; };  // NaN stays NaN

}  // namespace

// ---- relu ----

namespace {
// PyTorch's threshold_backward(g, y, 0): g where y > 0, else 0 (relu'(0) = 0; a NaN y passes g on, as where(y <= 0)
// does). One pass and one output on the cpu; under create_graph (grad mode on in backward) the differentiable
// composite records its own graph. Meta allocates what the cpu does and computes nothing.
Tensor threshold_backward(const Tensor& g, const Tensor& y) {
  auto composite = [&] { return where(le(y, 0), 0, g); };
  if (GradMode::is_enabled() || g.scalar_type() != y.scalar_type() || g.sizes() != y.sizes()) return composite();
  return detail::run_op(
      g.device(),
      [&] {
        detail::OpScope op_scope("threshold_backward", {g, y});
        detail::dispatch_numeric(g.scalar_type(), "threshold_backward", [](auto) {});
        Tensor out = detail::make_empty(g.sizes(), g.scalar_type(), g.device());
        detail::run_cpu_kernel("threshold_backward", out, [&] {
          detail::dispatch_numeric(g.scalar_type(), "threshold_backward", [&](auto tag) {
            using T = typename decltype(tag)::type;
            detail::binary_loop<T, T, T>(out, g, y, [](T gv, T yv) { return yv <= T(0) ? T(0) : gv; });
          });
        });
        op_scope.set_output(out);
        return out;
      },
      composite);  // cuda: the composite's two kernels
}
}  // namespace

Tensor relu(const Tensor& a) {
  detail::OpScope op_scope("relu", {a});
  GB_CHECK(a.scalar_type() != kBool, "relu: bool tensors are not supported (shape ", a.sizes(),
           "); convert with .to(gb::kFloat) first");
  Tensor out = detail::unary_numeric_kernel(a, "relu", relu_fn);
  // PyTorch's threshold_backward on the result: no gradient where y <= 0, so relu'(0) = 0
  if (autograd::needs_grad(a))
    autograd::record("ReluBackward0", {a}, out, {autograd::output(out)},
                     [](autograd::BackwardContext& c) { return variable_list{threshold_backward(c.grad(), c.saved(0))}; });
  return out;
}

Tensor& Tensor::relu_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(scalar_type() != kBool, "relu_: bool tensors are not supported (shape ", sizes(), ")");
  return detail::apply_inplace(
      self, {}, false, false, "relu_", [](const Tensor& s) { return gb::relu(s); },
      [](Tensor& s) { detail::unary_numeric_inplace_raw(s, "relu_", relu_fn); });
}

// ---- leaky_relu ----

Tensor leaky_relu(const Tensor& a, const Scalar& negative_slope) {
  detail::OpScope op_scope("leaky_relu", {a});
  check_floating(a, "leaky_relu");
  double slope = negative_slope.to_double();
  Tensor out = detail::unary_float_kernel(
      a, "leaky_relu",
      [slope](auto x) {
        using M = decltype(x);
        return x > M(0) ? x : x * M(slope);
      },
      {cuda_kernels::Pw::leaky_relu, slope});
  if (autograd::needs_grad(a))
    autograd::record("LeakyReluBackward0", {a}, out, {autograd::input(a)}, [slope](autograd::BackwardContext& c) {
      const Tensor& g = c.grad();
      return variable_list{where(gt(c.saved(0), 0), g, g * slope)};
    });
  return out;
}

// ---- elu, hardtanh: composed of differentiable ops ----

Tensor elu(const Tensor& a, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  detail::OpScope op_scope("elu", {a});
  check_floating(a, "elu");
  const double s = scale.to_double(), as = alpha.to_double() * s, is = input_scale.to_double();
  Tensor out = where(gt(a, 0), a * s, (exp(a * is) - 1) * as);
  op_scope.set_output(out);
  return out;
}

Tensor hardtanh(const Tensor& a, const Scalar& min_val, const Scalar& max_val) {
  detail::OpScope op_scope("hardtanh", {a});
  GB_CHECK(min_val.to_double() <= max_val.to_double(), "hardtanh: min_val (", min_val.to_double(),
           ") must not exceed max_val (", max_val.to_double(), ")");
  // the gradient flows where min < x < max only, as libtorch's hardtanh_backward
  Tensor out = where(logical_and(gt(a, min_val), lt(a, max_val)), a, clamp(a.detach(), min_val, max_val));
  op_scope.set_output(out);
  return out;
}

// ---- gelu ----

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;     // 1/sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
constexpr double kBeta = 0.79788456080286535588;        // sqrt(2/pi)
constexpr double kKappa = 0.044715;

bool gelu_is_tanh(const std::string& approximate) {
  GB_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate must be \"none\" (the exact erf form) ",
           "or \"tanh\", but got \"", approximate, "\"");
  return approximate == "tanh";
}

// The cpu half of gelu_backward: out = g * gelu'(x).
void gelu_backward_cpu(const Tensor& out, const Tensor& gg, const Tensor& x, bool is_tanh) {
  // float32, same shape, contiguous: libmvec's erf/exp/tanh in vector registers (ops/vec_libm.h); else this loop
  if (detail::binary_vec_kernel(out, gg, x,
                                is_tanh ? detail::VecOp2::gelu_tanh_backward : detail::VecOp2::gelu_backward))
    return;
  detail::dispatch_floating(x.scalar_type(), "gelu_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    if (is_tanh)
      detail::binary_loop<T, T, T>(out, gg, x, [](T gv, T xv) {
        M v = M(xv);
        M u = M(kBeta) * (M(1) + M(3 * kKappa) * v * v);  // d inner / dx
        M t = std::tanh(M(kBeta) * (v + M(kKappa) * v * v * v));
        return T(M(gv) * (M(0.5) * (M(1) + t) + M(0.5) * v * (M(1) - t * t) * u));
      });
    else
      detail::binary_loop<T, T, T>(out, gg, x, [](T gv, T xv) {
        M v = M(xv);
        M cdf = M(0.5) * (M(1) + std::erf(v * M(kSqrt1_2)));
        M pdf = M(kInvSqrt2Pi) * std::exp(M(-0.5) * v * v);
        return T(M(gv) * (cdf + v * pdf));
      });
  });
}

// g * gelu'(x), fused; differentiable in g and x (GeluBackwardBackward0) so double backward works.
Tensor gelu_backward(const Tensor& g, const Tensor& x, bool is_tanh) {
  detail::OpScope op_scope("gelu_backward", {g, x});  // runs in backward; records a node under create_graph
  Tensor gg = g.scalar_type() == x.scalar_type() ? g : detail::shallow_alias(g).to(x.scalar_type());
  Tensor out = detail::make_empty(broadcast_shapes(g.sizes(), x.sizes(), "gelu_backward"), x.scalar_type(), x.device());
  detail::check_device(gg, "gelu_backward", "grad_output", x);
  detail::run_kernel(
      out, [&] { gelu_backward_cpu(out, gg, x, is_tanh); },
      [&] {
        detail::cuda_pointwise("gelu_backward",
                               {is_tanh ? cuda_kernels::Pw::gelu_tanh_backward : cuda_kernels::Pw::gelu_backward}, out,
                               {&gg, &x}, x.scalar_type());
      });
  op_scope.set_output(out);
  if (autograd::needs_grad(g, x))
    autograd::record("GeluBackwardBackward0", {g, x}, out, {autograd::input(g), autograd::input(x)},
                     [is_tanh, gs = DimVector(g.sizes()), xs = DimVector(x.sizes())](autograd::BackwardContext& c) {
                       const Tensor& ggrad = c.grad();
                       const Tensor& gv = c.saved(0);
                       const Tensor& xv = c.saved(1);
                       Tensor d_g, d_x;
                       if (c.needs(0)) d_g = sum_to(gelu_backward(ggrad, xv, is_tanh), gs);
                       if (c.needs(1)) {
                         Tensor second;  // gelu''(x)
                         if (is_tanh) {
                           Tensor t = tanh((xv + xv * xv * xv * kKappa) * kBeta);
                           Tensor u = (xv * xv * (3 * kKappa) + 1) * kBeta;
                           second = (1 - t * t) * (u + xv * 0.5 * (xv * (6 * kBeta * kKappa) - t * u * u * 2));
                         } else {
                           second = exp(xv * xv * -0.5) * kInvSqrt2Pi * (2 - xv * xv);
                         }
                         d_x = sum_to(ggrad * gv * second, xs);
                       }
                       return variable_list{d_g, d_x};
                     });
  return out;
}

}  // namespace

Tensor gelu(const Tensor& a, const std::string& approximate) {
  detail::OpScope op_scope("gelu", {a});
  bool is_tanh = gelu_is_tanh(approximate);
  check_floating(a, "gelu");
  Tensor out = is_tanh ? detail::unary_float_kernel(a, "gelu",
                                                    [](auto x) {
                                                      using M = decltype(x);
                                                      M inner = M(kBeta) * (x + M(kKappa) * x * x * x);
                                                      return M(0.5) * x * (M(1) + std::tanh(inner));
                                                    },
                                                    {cuda_kernels::Pw::gelu_tanh}, detail::VecOp::gelu_tanh)
                       : detail::unary_float_kernel(a, "gelu", [](auto x) {
                           using M = decltype(x);
                           return M(0.5) * x * (M(1) + std::erf(x * M(kSqrt1_2)));
                         }, {}, detail::VecOp::gelu);
  if (autograd::needs_grad(a))
    autograd::record("GeluBackward0", {a}, out, {autograd::input(a)}, [is_tanh](autograd::BackwardContext& c) {
      return variable_list{gelu_backward(c.grad(), c.saved(0), is_tanh)};
    });
  return out;
}

// ---- silu ----

Tensor silu(const Tensor& a) {
  detail::OpScope op_scope("silu", {a});
  check_floating(a, "silu");
  Tensor out = detail::unary_float_kernel(
      a, "silu", [](auto x) { return x / (decltype(x)(1) + std::exp(-x)); }, {}, detail::VecOp::silu);
  // d/dx x s(x) = s (1 + x (1 - s))
  if (autograd::needs_grad(a))
    autograd::record("SiluBackward0", {a}, out, {autograd::input(a)}, [](autograd::BackwardContext& c) {
      const Tensor& x = c.saved(0);
      Tensor s = sigmoid(x);
      return variable_list{c.grad() * (s * (x * (1 - s) + 1))};
    });
  return out;
}

// ---- softplus ----

Tensor softplus(const Tensor& a, const Scalar& beta, const Scalar& threshold) {
  GB_AUTOCAST(fp32, softplus, a, beta, threshold);
  detail::OpScope op_scope("softplus", {a});
  check_floating(a, "softplus");
  double b = beta.to_double(), th = threshold.to_double();
  Tensor out = detail::unary_float_kernel(
      a, "softplus",
      [b, th](auto x) {
        using M = decltype(x);
        M bx = x * M(b);
        return bx > M(th) ? x : std::log1p(std::exp(bx)) / M(b);
      },
      {cuda_kernels::Pw::softplus, b, th});
  // linear (gradient 1) where beta x > threshold, sigmoid(beta x) elsewhere
  if (autograd::needs_grad(a))
    autograd::record("SoftplusBackward0", {a}, out, {autograd::input(a)}, [b, th](autograd::BackwardContext& c) {
      const Tensor& g = c.grad();
      Tensor bx = c.saved(0) * b;
      return variable_list{where(gt(bx, th), g, g * sigmoid(bx))};
    });
  return out;
}

}  // namespace gb
