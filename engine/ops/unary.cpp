// engine/ops/unary.cpp — elementwise math of one tensor: neg, abs, sign, round, floor, ceil, trunc, square, reciprocal, exp, log, log1p, sqrt,
// rsqrt, sin, cos, tanh, sigmoid (+ in-place forms). Each op's backward sits right under its forward, in
// differentiable gb ops; ops whose derivative is cheapest from their result save the output instead of the input.
// Activations (relu, gelu, ...) live in activation.cpp; comparisons and selection in compare.cpp.
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "ops/inplace.h"
#include "ops/unary_kernel.h"

namespace gb {

namespace {
// The element functions, shared by each op and its in-place form. x is in opmath (float, double or an integer).
constexpr auto neg_fn = [](auto x) { return -x; };
constexpr auto exp_fn = [](auto x) { return std::exp(x); };
constexpr auto log_fn = [](auto x) { return std::log(x); };
constexpr auto sqrt_fn = [](auto x) { return std::sqrt(x); };
constexpr auto tanh_fn = [](auto x) { return std::tanh(x); };
constexpr auto sigmoid_fn = [](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); };
}  // namespace

// ---- sign-like ops (integers too) ----

Tensor neg(const Tensor& a) {
  detail::OpScope op_scope("neg", {a});
  GB_CHECK(a.scalar_type() != kBool,
           "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
           "`~` or `logical_not()` operator instead.");
  Tensor out = detail::unary_numeric_kernel(a, "neg", neg_fn);
  if (autograd::needs_grad(a))
    autograd::record("NegBackward0", {a}, out, {},
                     [](autograd::BackwardContext& c) { return variable_list{neg(c.grad())}; });
  return out;
}

Tensor abs(const Tensor& a) {
  detail::OpScope op_scope("abs", {a});
  Tensor out = detail::unary_numeric_kernel(a, "abs", [](auto x) {
    if constexpr (std::is_unsigned_v<decltype(x)>)
      return x;  // uint8
    else
      return std::abs(x);
  });
  // d|x|/dx = sign(x), so abs'(0) = 0 like PyTorch
  if (autograd::needs_grad(a))
    autograd::record("AbsBackward0", {a}, out, {autograd::input(a)},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad() * sign(c.saved(0))}; });
  return out;
}

Tensor sign(const Tensor& a) {
  detail::OpScope op_scope("sign", {a});
  if (a.scalar_type() == kBool) return a.clone();  // sign of a bool is itself
  // (0 < x) - (x < 0): NaN gives 0, as PyTorch's CPU kernel does
  Tensor out = detail::unary_numeric_kernel(a, "sign", [](auto x) {
    using M = decltype(x);
    return M(int(M(0) < x) - int(x < M(0)));
  });
  if (autograd::needs_grad(a))
    autograd::record("SignBackward0", {a}, out, {},
                     [](autograd::BackwardContext& c) { return variable_list{zeros_like(c.grad())}; });
  return out;
}

// ---- rounding: integers pass through with their dtype; the derivative is 0 (PyTorch's RoundBackward0, ...) ----

namespace {
template <class F>
Tensor rounding(const Tensor& a, const char* op, const char* node, F f) {
  detail::OpScope op_scope(op, {a});
  GB_CHECK(a.scalar_type() != kBool, op, "() does not take a bool tensor (PyTorch refuses it too); convert it first: ",
           op, "(x.to(gb::kFloat))");
  Tensor out = detail::unary_numeric_kernel(a, op, [f](auto x) {
    using M = decltype(x);
    if constexpr (std::is_floating_point_v<M>)
      return M(f(x));
    else
      return x;
  });
  if (autograd::needs_grad(a))
    autograd::record(node, {a}, out, {},
                     [](autograd::BackwardContext& c) { return variable_list{zeros_like(c.grad())}; });
  return out;
}
}  // namespace

// round: to the nearest integer, halves to even (std::nearbyint in the default rounding mode), as PyTorch's CPU.
Tensor round(const Tensor& a) { return rounding(a, "round", "RoundBackward0", [](auto x) { return std::nearbyint(x); }); }
Tensor floor(const Tensor& a) { return rounding(a, "floor", "FloorBackward0", [](auto x) { return std::floor(x); }); }
Tensor ceil(const Tensor& a) { return rounding(a, "ceil", "CeilBackward0", [](auto x) { return std::ceil(x); }); }
Tensor trunc(const Tensor& a) { return rounding(a, "trunc", "TruncBackward0", [](auto x) { return std::trunc(x); }); }

// PyTorch's square is pow(x, 2): same promotion (bool -> int64) and the same node, PowBackward0.
Tensor square(const Tensor& a) { return pow(a, 2); }

// ---- floating ops (integer inputs give the default float dtype) ----

Tensor reciprocal(const Tensor& a) {
  GB_AUTOCAST(fp32, reciprocal, a);
  detail::OpScope op_scope("reciprocal", {a});
  Tensor out = detail::unary_float_kernel(a, "reciprocal", [](auto x) { return decltype(x)(1) / x; });
  if (autograd::needs_grad(a))
    autograd::record("ReciprocalBackward0", {a}, out, {autograd::output(out)}, [](autograd::BackwardContext& c) {
      const Tensor& y = c.saved(0);
      return variable_list{-c.grad() * (y * y)};
    });
  return out;
}

Tensor exp(const Tensor& a) {
  GB_AUTOCAST(fp32, exp, a);
  detail::OpScope op_scope("exp", {a});
  Tensor out = detail::unary_float_kernel(a, "exp", exp_fn, {}, detail::VecOp::exp);
  if (autograd::needs_grad(a))
    autograd::record("ExpBackward0", {a}, out, {autograd::output(out)},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad() * c.saved(0)}; });
  return out;
}

Tensor log(const Tensor& a) {
  GB_AUTOCAST(fp32, log, a);
  detail::OpScope op_scope("log", {a});
  Tensor out = detail::unary_float_kernel(a, "log", log_fn, {}, detail::VecOp::log);
  if (autograd::needs_grad(a))
    autograd::record("LogBackward0", {a}, out, {autograd::input(a)},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad() / c.saved(0)}; });
  return out;
}

Tensor log1p(const Tensor& a) {
  GB_AUTOCAST(fp32, log1p, a);
  detail::OpScope op_scope("log1p", {a});
  Tensor out = detail::unary_float_kernel(a, "log1p", [](auto x) { return std::log1p(x); }, {}, detail::VecOp::log1p);
  if (autograd::needs_grad(a))
    autograd::record("Log1PBackward0", {a}, out, {autograd::input(a)},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad() / (c.saved(0) + 1)}; });
  return out;
}

Tensor sqrt(const Tensor& a) {
  detail::OpScope op_scope("sqrt", {a});
  Tensor out = detail::unary_float_kernel(a, "sqrt", sqrt_fn, {}, detail::VecOp::sqrt);
  if (autograd::needs_grad(a))
    autograd::record("SqrtBackward0", {a}, out, {autograd::output(out)},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad() / (c.saved(0) * 2)}; });
  return out;
}

Tensor rsqrt(const Tensor& a) {
  GB_AUTOCAST(fp32, rsqrt, a);
  detail::OpScope op_scope("rsqrt", {a});
  Tensor out = detail::unary_float_kernel(
      a, "rsqrt", [](auto x) { return decltype(x)(1) / std::sqrt(x); }, {}, detail::VecOp::rsqrt);
  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
  if (autograd::needs_grad(a))
    autograd::record("RsqrtBackward0", {a}, out, {autograd::output(out)}, [](autograd::BackwardContext& c) {
      const Tensor& y = c.saved(0);
      return variable_list{c.grad() * (y * y * y * -0.5)};
    });
  return out;
}

Tensor sin(const Tensor& a) {
  detail::OpScope op_scope("sin", {a});
  Tensor out = detail::unary_float_kernel(a, "sin", [](auto x) { return std::sin(x); }, {}, detail::VecOp::sin);
  if (autograd::needs_grad(a))
    autograd::record("SinBackward0", {a}, out, {autograd::input(a)},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad() * cos(c.saved(0))}; });
  return out;
}

Tensor cos(const Tensor& a) {
  detail::OpScope op_scope("cos", {a});
  Tensor out = detail::unary_float_kernel(a, "cos", [](auto x) { return std::cos(x); }, {}, detail::VecOp::cos);
  if (autograd::needs_grad(a))
    autograd::record("CosBackward0", {a}, out, {autograd::input(a)},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad() * -sin(c.saved(0))}; });
  return out;
}

Tensor tanh(const Tensor& a) {
  detail::OpScope op_scope("tanh", {a});
  Tensor out = detail::unary_float_kernel(a, "tanh", tanh_fn, {}, detail::VecOp::tanh);
  if (autograd::needs_grad(a))
    autograd::record("TanhBackward0", {a}, out, {autograd::output(out)}, [](autograd::BackwardContext& c) {
      const Tensor& y = c.saved(0);
      return variable_list{c.grad() * (1 - y * y)};
    });
  return out;
}

Tensor sigmoid(const Tensor& a) {
  detail::OpScope op_scope("sigmoid", {a});
  Tensor out = detail::unary_float_kernel(a, "sigmoid", sigmoid_fn, {}, detail::VecOp::sigmoid);
  if (autograd::needs_grad(a))
    autograd::record("SigmoidBackward0", {a}, out, {autograd::output(out)}, [](autograd::BackwardContext& c) {
      const Tensor& y = c.saved(0);
      return variable_list{c.grad() * (y * (1 - y))};
    });
  return out;
}

Tensor erf(const Tensor& a) {
  detail::OpScope op_scope("erf", {a});
  Tensor out = detail::unary_float_kernel(a, "erf", [](auto x) { return std::erf(x); }, {}, detail::VecOp::erf);
  if (autograd::needs_grad(a))
    autograd::record("ErfBackward0", {a}, out, {autograd::input(a)}, [](autograd::BackwardContext& c) {
      const Tensor& x = c.saved(0);
      return variable_list{c.grad() * (2.0 / std::sqrt(M_PI)) * (-(x * x)).exp()};
    });
  return out;
}

// ---- in-place forms: saves_self is true only where the out-of-place op saves its input ----

Tensor& Tensor::neg_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(scalar_type() != kBool,
           "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
           "`~` or `logical_not()` operator instead.");
  return detail::apply_inplace(
      self, {}, false, false, "neg_", [](const Tensor& s) { return gb::neg(s); },
      [](Tensor& s) { detail::unary_numeric_inplace_raw(s, "neg_", neg_fn); });
}
Tensor& Tensor::exp_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, false, "exp_", [](const Tensor& s) { return gb::exp(s); },
      [](Tensor& s) { detail::unary_float_inplace_raw(s, "exp_", exp_fn, {}, detail::VecOp::exp); });
}
Tensor& Tensor::log_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, true, "log_", [](const Tensor& s) { return gb::log(s); },
      [](Tensor& s) { detail::unary_float_inplace_raw(s, "log_", log_fn, {}, detail::VecOp::log); });
}
Tensor& Tensor::sqrt_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, false, "sqrt_", [](const Tensor& s) { return gb::sqrt(s); },
      [](Tensor& s) { detail::unary_float_inplace_raw(s, "sqrt_", sqrt_fn, {}, detail::VecOp::sqrt); });
}
Tensor& Tensor::tanh_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, false, "tanh_", [](const Tensor& s) { return gb::tanh(s); },
      [](Tensor& s) { detail::unary_float_inplace_raw(s, "tanh_", tanh_fn, {}, detail::VecOp::tanh); });
}
Tensor& Tensor::sigmoid_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, false, "sigmoid_", [](const Tensor& s) { return gb::sigmoid(s); },
      [](Tensor& s) { detail::unary_float_inplace_raw(s, "sigmoid_", sigmoid_fn, {}, detail::VecOp::sigmoid); });
}

}  // namespace gb
