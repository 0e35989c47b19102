// engine/ops/binary.cpp — broadcasting arithmetic: add, sub, mul, div, pow, maximum, minimum (+ in-place forms),
// type promotion and broadcast shapes. Each op's backward sits right under its forward.
#include <cmath>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/launch.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "ops/inplace.h"
#include "ops/loops.h"

namespace gb {

using cuda_kernels::Pw;

// ---- promotion and broadcasting ----

namespace {
std::optional<ScalarType> combine(std::optional<ScalarType> higher, std::optional<ScalarType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating_point(*higher)) return higher;
  if (*higher == kBool || is_floating_point(*lower)) return promote_types(*higher, *lower);
  return higher;
}
void fold(std::optional<ScalarType>& acc, ScalarType t) { acc = acc ? promote_types(*acc, t) : t; }
}  // namespace

ScalarType result_type(const Tensor& a, const Tensor& b) {
  std::optional<ScalarType> dim_t, zero_t;
  fold(a.dim() > 0 ? dim_t : zero_t, a.scalar_type());
  fold(b.dim() > 0 ? dim_t : zero_t, b.scalar_type());
  return *combine(dim_t, zero_t);
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  ScalarType wrapped = b.is_boolean() ? kBool : b.is_integral() ? kInt64 : get_default_dtype();
  return *combine(a.scalar_type(), wrapped);
}

std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  return detail::broadcast_dims(a, b, op).vec();
}

namespace {

// The kernels open no op scope (the public op does, around its autograd::record too); they hand the op their result.

// out = f(x, y) in opmath over a and b broadcast to out's shape, all of out's dtype (out may be a: in place): the
// cpu loop, or on cuda:N the kernel `cuda` (cuda/launch.h: by default the one of the op's name); nothing on meta.
template <typename F>
void binary_into(const Tensor& out, const Tensor& a, const Tensor& b, const char* op, const F& f, detail::CudaOp cuda) {
  const ScalarType t = out.scalar_type();
  detail::dispatch_numeric(t, op, [](auto) {});  // the dtype check on every device
  detail::run_kernel(
      out,
      [&] {
        detail::dispatch_numeric(t, op, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using M = opmath_t<T>;
          detail::binary_loop<T, T, T>(out, a, b, [&](T x, T y) { return T(f(M(x), M(y))); });
        });
      },
      [&] { detail::cuda_pointwise(op, cuda, out, {&a, &b}, t); });
}

// out = f(x, s) with a scalar s in opmath, a of out's shape and dtype (out may be a); on cuda:N `cuda` with p0 = s.
template <typename F>
void scalar_into(const Tensor& out, const Tensor& a, const Scalar& s, const char* op, const F& f, detail::CudaOp cuda) {
  const ScalarType t = out.scalar_type();
  detail::dispatch_numeric(t, op, [](auto) {});  // the dtype check on every device
  detail::run_kernel(
      out,
      [&] {
        detail::dispatch_numeric(t, op, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using M = opmath_t<T>;
          M sv = s.to<M>();
          detail::unary_loop<T, T>(out, a, [&](T x) { return T(f(M(x), sv)); });
        });
      },
      [&] {
        cuda.p0 = s.to_double();
        detail::cuda_pointwise(op, cuda, out, {&a}, t);
      });
}

// f(x, y) over broadcast a, b into a new tensor of dtype `compute`.
template <typename F>
Tensor binary_kernel(const Tensor& a, const Tensor& b, const char* op, ScalarType compute, const F& f,
                     detail::CudaOp cuda = {}) {
  detail::check_device(a, op, "self");
  detail::check_device(b, op, "other", a);
  auto shape = detail::broadcast_dims(a.sizes(), b.sizes(), op);
  Tensor aa = a.scalar_type() == compute ? a : detail::shallow_alias(a).to(compute);
  Tensor bb = b.scalar_type() == compute ? b : detail::shallow_alias(b).to(compute);
  Tensor out = detail::make_empty(shape, compute, a.device());
  binary_into(out, aa, bb, op, f, cuda);
  detail::op_output(out);
  return out;
}

// f(x, s) with a scalar s into a new tensor of dtype `compute`.
template <typename F>
Tensor scalar_kernel(const Tensor& a, const Scalar& s, const char* op, ScalarType compute, const F& f,
                     detail::CudaOp cuda = {}) {
  detail::check_device(a, op, "self");
  Tensor aa = a.scalar_type() == compute ? a : detail::shallow_alias(a).to(compute);
  Tensor out = detail::make_empty(a.sizes(), compute, a.device());
  scalar_into(out, aa, s, op, f, cuda);
  detail::op_output(out);
  return out;
}

// In place: self = f(self, other) with other broadcast to self's shape, computed in self's dtype.
template <typename F>
void binary_inplace_raw(Tensor& self, const Tensor& other, const char* op, const F& f, detail::CudaOp cuda = {}) {
  detail::check_device(self, op, "self");
  detail::check_device(other, op, "other", self);
  auto shape = detail::broadcast_dims(self.sizes(), other.sizes(), op);
  GB_CHECK(IntArrayRef(shape) == self.sizes(), op, ": output with shape ", self.sizes(),
           " doesn't match the broadcast shape ", IntArrayRef(shape));
  ScalarType rt = result_type(self, other);
  GB_CHECK(promote_types(rt, self.scalar_type()) == self.scalar_type() || is_floating_point(self.scalar_type()), op,
           ": result type ", to_string(rt), " can't be cast to the desired output type ",
           to_string(self.scalar_type()));
  Tensor oo = other.scalar_type() == self.scalar_type() ? other : detail::shallow_alias(other).to(self.scalar_type());
  binary_into(self, self, oo, op, f, cuda);
}

template <typename F>
void scalar_inplace_raw(Tensor& self, const Scalar& s, const char* op, const F& f, detail::CudaOp cuda = {}) {
  detail::check_device(self, op, "self");
  GB_CHECK(!(s.is_floating_point() && !is_floating_point(self.scalar_type())), op, ": result type Float can't be cast ",
           "to the desired output type ", to_string(self.scalar_type()));
  scalar_into(self, self, s, op, f, cuda);
}

Tensor reduce_grad(const Tensor& g, IntArrayRef shape) { return sum_to(g, shape); }

}  // namespace

// ---- add / sub ----

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  detail::OpScope op_scope("add", {a, b});
  ScalarType rt = result_type(a, b);
  Tensor out;
  if (alpha.to_double() == 1.0)
    out = binary_kernel(a, b, "add", rt, [](auto x, auto y) { return x + y; }, {Pw::add, 1.0});
  else {
    double al = alpha.to_double();
    out = binary_kernel(a, b, "add", rt, [al](auto x, auto y) { return x + decltype(x)(al) * y; }, {Pw::add, al});
  }
  if (autograd::needs_grad(a, b))
    autograd::record("AddBackward0", {a, b}, out, {},
                     [as = DimVector(a.sizes()), bs = DimVector(b.sizes()), alpha](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       Tensor ga = c.needs(0) ? reduce_grad(g, as) : Tensor();
                       Tensor gb = c.needs(1) ? reduce_grad(alpha.to_double() == 1.0 ? g : g * alpha, bs) : Tensor();
                       return variable_list{ga, gb};
                     });
  return out;
}

Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  detail::OpScope op_scope("add", {a});
  Scalar v = b.is_floating_point() || alpha.is_floating_point() ? Scalar(b.to_double() * alpha.to_double())
                                                                : Scalar(b.to_long() * alpha.to_long());
  Tensor out = scalar_kernel(a, v, "add", result_type(a, b), [](auto x, auto s) { return x + s; }, {Pw::add_scalar});
  if (autograd::needs_grad(a))
    autograd::record("AddBackward1", {a}, out, {},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad()}; });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  detail::OpScope op_scope("sub", {a, b});
  GB_CHECK(a.scalar_type() != kBool || b.scalar_type() != kBool,
           "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
           "operator instead.");
  ScalarType rt = result_type(a, b);
  double al = alpha.to_double();
  Tensor out = binary_kernel(a, b, "sub", rt, [al](auto x, auto y) { return x - decltype(x)(al) * y; }, {Pw::sub, al});
  if (autograd::needs_grad(a, b))
    autograd::record("SubBackward0", {a, b}, out, {},
                     [as = DimVector(a.sizes()), bs = DimVector(b.sizes()), al](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       return variable_list{c.needs(0) ? reduce_grad(g, as) : Tensor(),
                                            c.needs(1) ? reduce_grad(g * (-al), bs) : Tensor()};
                     });
  return out;
}

Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  detail::OpScope op_scope("sub", {a});
  Scalar v = b.is_floating_point() || alpha.is_floating_point() ? Scalar(b.to_double() * alpha.to_double())
                                                                : Scalar(b.to_long() * alpha.to_long());
  Tensor out = scalar_kernel(a, v, "sub", result_type(a, b), [](auto x, auto s) { return x - s; }, {Pw::sub_scalar});
  if (autograd::needs_grad(a))
    autograd::record("SubBackward1", {a}, out, {},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad()}; });
  return out;
}

Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  detail::OpScope op_scope("rsub", {a});
  double al = alpha.to_double();
  Tensor out = scalar_kernel(a, b, "rsub", result_type(a, b), [al](auto x, auto s) { return s - decltype(x)(al) * x; },
                             {Pw::rsub_scalar, 0, al});
  if (autograd::needs_grad(a))
    autograd::record("RsubBackward1", {a}, out, {},
                     [al](autograd::BackwardContext& c) { return variable_list{c.grad() * (-al)}; });
  return out;
}

// ---- mul / div ----

Tensor mul(const Tensor& a, const Tensor& b) {
  detail::OpScope op_scope("mul", {a, b});
  Tensor out =
      a.scalar_type() == kBool && b.scalar_type() == kBool
          ? binary_kernel(a.to(kInt64), b.to(kInt64), "mul", kInt64, [](auto x, auto y) { return x * y; }).to(kBool)
          : binary_kernel(a, b, "mul", result_type(a, b), [](auto x, auto y) { return x * y; });
  if (autograd::needs_grad(a, b))
    autograd::record("MulBackward0", {a, b}, out, {autograd::input(a), autograd::input(b)},
                     [as = DimVector(a.sizes()), bs = DimVector(b.sizes())](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       return variable_list{c.needs(0) ? reduce_grad(g * c.saved(1), as) : Tensor(),
                                            c.needs(1) ? reduce_grad(g * c.saved(0), bs) : Tensor()};
                     });
  return out;
}

Tensor mul(const Tensor& a, const Scalar& b) {
  detail::OpScope op_scope("mul", {a});
  Tensor out = scalar_kernel(a, b, "mul", result_type(a, b), [](auto x, auto s) { return x * s; }, {Pw::mul_scalar});
  if (autograd::needs_grad(a))
    autograd::record("MulBackward1", {a}, out, {},
                     [b](autograd::BackwardContext& c) { return variable_list{c.grad() * b}; });
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  detail::OpScope op_scope("div", {a, b});
  ScalarType rt = result_type(a, b);
  if (!is_floating_point(rt)) rt = get_default_dtype();  // true division
  Tensor out = binary_kernel(a, b, "div", rt, [](auto x, auto y) { return x / y; });
  if (autograd::needs_grad(a, b))
    autograd::record("DivBackward0", {a, b}, out, {autograd::input(a), autograd::input(b)},
                     [as = DimVector(a.sizes()), bs = DimVector(b.sizes())](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& x = c.saved(0);
                       const Tensor& y = c.saved(1);
                       return variable_list{c.needs(0) ? reduce_grad(g / y, as) : Tensor(),
                                            c.needs(1) ? reduce_grad(-g * x / (y * y), bs) : Tensor()};
                     });
  return out;
}

Tensor div(const Tensor& a, const Scalar& b) {
  detail::OpScope op_scope("div", {a});
  ScalarType rt = result_type(a, b);
  if (!is_floating_point(rt)) rt = get_default_dtype();
  Tensor out = scalar_kernel(a, b, "div", rt, [](auto x, auto s) { return x / s; }, {Pw::div_scalar});
  if (autograd::needs_grad(a))
    autograd::record("DivBackward1", {a}, out, {},
                     [b](autograd::BackwardContext& c) { return variable_list{c.grad() / b}; });
  return out;
}

// ---- pow ----

Tensor pow(const Tensor& a, const Tensor& e) {
  GB_AUTOCAST(fp32, pow, a, e);
  detail::OpScope op_scope("pow", {a, e});
  Tensor out = binary_kernel(a, e, "pow", result_type(a, e), [](auto x, auto y) {
    using M = decltype(x);
    if constexpr (std::is_integral_v<M>) {
      M r = 1;
      for (M i = 0; i < y; ++i) r *= x;
      return r;
    } else {
      return M(std::pow(x, y));
    }
  });
  if (autograd::needs_grad(a, e))
    autograd::record("PowBackward1", {a, e}, out, {autograd::input(a), autograd::input(e), autograd::output(out)},
                     [as = DimVector(a.sizes()), es = DimVector(e.sizes())](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& x = c.saved(0);
                       const Tensor& y = c.saved(1);
                       Tensor ga, ge;
                       // d/dx x^y = y x^(y-1), taken as 0 where y == 0 (as PyTorch does)
                       if (c.needs(0)) ga = reduce_grad(where(y == 0.0, zeros_like(g), g * y * pow(x, y - 1.0)), as);
                       // d/dy x^y = x^y log x, taken as 0 where x == 0 and y >= 0
                       if (c.needs(1))
                         ge = reduce_grad(
                             where(logical_and(x == 0.0, y >= 0.0), zeros_like(g), g * c.saved(2) * log(x)), es);
                       return variable_list{ga, ge};
                     });
  return out;
}

Tensor pow(const Tensor& a, const Scalar& e) {
  GB_AUTOCAST(fp32, pow, a, e);
  detail::OpScope op_scope("pow", {a});
  ScalarType rt = result_type(a, e);
  double ed = e.to_double();
  Tensor out;
  if (ed == 2.0)
    out = scalar_kernel(a, e, "pow", rt, [](auto x, auto) { return x * x; }, {Pw::pow_scalar});
  else if (ed == 1.0)
    out = scalar_kernel(a, e, "pow", rt, [](auto x, auto) { return x; }, {Pw::pow_scalar});
  else
    out = scalar_kernel(a, e, "pow", rt, [](auto x, auto s) {
      using M = decltype(x);
      if constexpr (std::is_integral_v<M>) {
        M r = 1;
        for (M i = 0; i < s; ++i) r *= x;
        return r;
      } else {
        return M(std::pow(x, s));
      }
    }, {Pw::pow_scalar});
  if (autograd::needs_grad(a))
    autograd::record("PowBackward0", {a}, out, {autograd::input(a)}, [ed](autograd::BackwardContext& c) {
      if (ed == 0.0) return variable_list{zeros_like(c.grad())};
      const Tensor& x = c.saved(0);
      return variable_list{c.grad() * (ed * pow(x, ed - 1.0))};
    });
  return out;
}

Tensor pow(const Scalar& a, const Tensor& e) {
  GB_AUTOCAST(fp32, pow, a, e);
  Tensor base = full({}, a, TensorOptions().dtype(result_type(e, a)).device(e.device()));
  return pow(base, e);
}

// ---- maximum / minimum ----

namespace {
Tensor extremum(const Tensor& a, const Tensor& b, bool is_max) {
  const char* op = is_max ? "maximum" : "minimum";
  detail::OpScope op_scope(op, {a, b});
  Tensor out = binary_kernel(a, b, op, result_type(a, b), [is_max](auto x, auto y) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      if (std::isnan(x) || std::isnan(y)) return x + y;  // NaN propagates
    }
    return is_max ? (x > y ? x : y) : (x < y ? x : y);
  });
  if (autograd::needs_grad(a, b))
    autograd::record(is_max ? "MaximumBackward0" : "MinimumBackward0", {a, b}, out,
                     {autograd::input(a), autograd::input(b)},
                     [as = DimVector(a.sizes()), bs = DimVector(b.sizes()), is_max](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& x = c.saved(0);
                       const Tensor& y = c.saved(1);
                       // ties split the gradient evenly, like PyTorch
                       Tensor half = g * 0.5;
                       Tensor tie = x == y;
                       Tensor a_wins = is_max ? x > y : x < y;
                       Tensor b_wins = is_max ? y > x : y < x;
                       Tensor zero = zeros_like(g);
                       Tensor ga = c.needs(0) ? reduce_grad(where(tie, half, where(a_wins, g, zero)), as) : Tensor();
                       Tensor gb = c.needs(1) ? reduce_grad(where(tie, half, where(b_wins, g, zero)), bs) : Tensor();
                       return variable_list{ga, gb};
                     });
  return out;
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(a, b, false); }

// ---- in-place forms ----

Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  double al = alpha.to_double();
  return detail::apply_inplace(
      self, {o}, autograd::needs_grad(o), false, "add_", [&](const Tensor& s) { return gb::add(s, o, alpha); },
      [&](Tensor& s) {
        binary_inplace_raw(s, o, "add_", [al](auto x, auto y) { return x + decltype(x)(al) * y; }, {Pw::add, al});
      });
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  Scalar v = o.is_floating_point() || alpha.is_floating_point() ? Scalar(o.to_double() * alpha.to_double())
                                                                : Scalar(o.to_long() * alpha.to_long());
  return detail::apply_inplace(
      self, {}, false, false, "add_", [&](const Tensor& s) { return gb::add(s, v); },
      [&](Tensor& s) { scalar_inplace_raw(s, v, "add_", [](auto x, auto y) { return x + y; }, {Pw::add_scalar}); });
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  double al = alpha.to_double();
  return detail::apply_inplace(
      self, {o}, autograd::needs_grad(o), false, "sub_", [&](const Tensor& s) { return gb::sub(s, o, alpha); },
      [&](Tensor& s) {
        binary_inplace_raw(s, o, "sub_", [al](auto x, auto y) { return x - decltype(x)(al) * y; }, {Pw::sub, al});
      });
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) const {
  Scalar v = o.is_floating_point() || alpha.is_floating_point() ? Scalar(-o.to_double() * alpha.to_double())
                                                                : Scalar(-o.to_long() * alpha.to_long());
  return add_(v);
}
Tensor& Tensor::mul_(const Tensor& o) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {o}, autograd::needs_grad(o), autograd::needs_grad(o), "mul_",
      [&](const Tensor& s) { return gb::mul(s, o); },
      [&](Tensor& s) { binary_inplace_raw(s, o, "mul_", [](auto x, auto y) { return x * y; }, {Pw::mul}); });
}
Tensor& Tensor::mul_(const Scalar& o) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, false, "mul_", [&](const Tensor& s) { return gb::mul(s, o); },
      [&](Tensor& s) { scalar_inplace_raw(s, o, "mul_", [](auto x, auto y) { return x * y; }, {Pw::mul_scalar}); });
}
Tensor& Tensor::div_(const Tensor& o) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(is_floating_point(), "div_: result type Float can't be cast to the desired output type ",
           to_string(scalar_type()), "; true division of integers needs a floating tensor");
  return detail::apply_inplace(
      self, {o}, autograd::needs_grad(o), true, "div_", [&](const Tensor& s) { return gb::div(s, o); },
      [&](Tensor& s) { binary_inplace_raw(s, o, "div_", [](auto x, auto y) { return x / y; }, {Pw::div}); });
}
Tensor& Tensor::div_(const Scalar& o) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(is_floating_point(), "div_: result type Float can't be cast to the desired output type ",
           to_string(scalar_type()), "; true division of integers needs a floating tensor");
  return detail::apply_inplace(
      self, {}, false, false, "div_", [&](const Tensor& s) { return gb::div(s, o); },
      [&](Tensor& s) { scalar_inplace_raw(s, o, "div_", [](auto x, auto y) { return x / y; }, {Pw::div_scalar}); });
}
Tensor& Tensor::pow_(const Scalar& e) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, true, "pow_", [&](const Tensor& s) { return gb::pow(s, e); },
      [&](Tensor& s) { detail::copy_into(s, gb::pow(detail::shallow_alias(s), e)); });
}

// ---- operators ----

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) {
  return div(full({}, a, TensorOptions().dtype(result_type(b, a)).device(b.device())), b);
}

}  // namespace gb
