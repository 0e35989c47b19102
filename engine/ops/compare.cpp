// engine/ops/compare.cpp — comparisons and predicates (eq ... ge, logical_*, isnan/isinf/isfinite, equal, allclose),
// selection (where, masked_fill, clamp) and the fused updates optimizers use (lerp, addcmul, addcdiv), with in-place
// forms. Comparisons return bool tensors and record no gradient; the rest keep each backward under its forward.
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/composed.h"
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

namespace {

// PyTorch's result_type over any number of operands: dimensioned tensors outrank 0-dim tensors, which outrank
// plain numbers, unless the lower tier is of a higher category (bool < integer < floating).
class Promotion {
 public:
  Promotion& add(const Tensor& t) {
    if (t.defined()) fold(tiers_[t.dim() > 0 ? 0 : 1], t.scalar_type());
    return *this;
  }
  Promotion& add(const std::optional<Tensor>& t) { return t ? add(*t) : *this; }
  Promotion& add(const Scalar& s) {
    fold(tiers_[2], s.is_boolean() ? kBool : s.is_integral() ? kInt64 : get_default_dtype());
    return *this;
  }
  Promotion& add(const std::optional<Scalar>& s) { return s ? add(*s) : *this; }
  ScalarType result() const { return *combine(tiers_[0], combine(tiers_[1], tiers_[2])); }

 private:
  static int category(ScalarType t) { return t == kBool ? 0 : is_integral(t) ? 1 : 2; }
  static void fold(std::optional<ScalarType>& acc, ScalarType t) { acc = acc ? promote_types(*acc, t) : t; }
  static std::optional<ScalarType> combine(std::optional<ScalarType> higher, std::optional<ScalarType> lower) {
    if (!higher) return lower;
    if (!lower) return higher;
    return category(*lower) > category(*higher) ? promote_types(*higher, *lower) : *higher;
  }
  std::optional<ScalarType> tiers_[3];
};

Tensor convert(const Tensor& t, ScalarType to) { return t.scalar_type() == to ? t : detail::shallow_alias(t).to(to); }

std::vector<int64_t> broadcast3(const Tensor& a, const Tensor& b, const Tensor& c, const char* op) {
  std::vector<int64_t> s = a.sizes().vec();
  if (b.defined()) s = broadcast_shapes(s, b.sizes(), op);
  if (c.defined()) s = broadcast_shapes(s, c.sizes(), op);
  return s;
}

// A number as the C++ type T, rounded as PyTorch rounds a scalar operand to the computation dtype.
template <typename T>
opmath_t<T> scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return float(T(float(s.to_double())));
  else
    return s.to<T>();
}

}  // namespace

// ---- comparisons: values are promoted to a common dtype, then compared with IEEE semantics (NaN != NaN) ----

namespace {

template <typename Cmp>
Tensor compare(const Tensor& a, const Tensor& b, const char* op, const Cmp& cmp) {
  detail::OpScope op_scope(op, {a, b});
  detail::check_device(a, op, "self");
  detail::check_device(b, op, "other", a);
  auto shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  ScalarType ct = result_type(a, b);
  Tensor aa = convert(a, ct), bb = convert(b, ct);
  Tensor out = detail::make_empty(shape, kBool, a.device());
  detail::run_kernel(
      out,
      [&] {
        detail::dispatch_all(ct, op, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using M = opmath_t<T>;
          detail::binary_loop<bool, T, T>(out, aa, bb, [&](T x, T y) { return cmp(M(x), M(y)); });
        });
      },
      [&] {
        detail::cuda_pointwise(op, {}, out, {&aa, &bb}, ct);
      });
  op_scope.set_output(out);
  return out;
}

template <typename Cmp>
Tensor compare(const Tensor& a, const Scalar& b, const char* op, const Cmp& cmp) {
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op, "self");
  ScalarType ct = result_type(a, b);
  Tensor aa = convert(a, ct);
  Tensor out = detail::make_empty(a.sizes(), kBool, a.device());
  detail::run_kernel(
      out,
      [&] {
        detail::dispatch_all(ct, op, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using M = opmath_t<T>;
          M bv = scalar_as<T>(b);
          detail::unary_loop<bool, T>(out, aa, [&](T x) { return cmp(M(x), bv); });
        });
      },
      [&] {  // the scalar as a 0-dim tensor of the compared dtype, broadcast: the tensor kernel
        Tensor bb = full({}, b, TensorOptions().dtype(ct).device(a.device()));
        detail::cuda_pointwise(op, {}, out, {&aa, &bb}, ct);
      });
  op_scope.set_output(out);
  return out;
}

}  // namespace

#define GB_COMPARE_OP(name, expr)                                     \
  Tensor name(const Tensor& a, const Tensor& b) {                     \
    return compare(a, b, #name, [](auto x, auto y) { return expr; }); \
  }                                                                   \
  Tensor name(const Tensor& a, const Scalar& b) {                     \
    return compare(a, b, #name, [](auto x, auto y) { return expr; }); \
  }
GB_COMPARE_OP(eq, x == y)
GB_COMPARE_OP(ne, x != y)
GB_COMPARE_OP(lt, x < y)
GB_COMPARE_OP(le, x <= y)
GB_COMPARE_OP(gt, x > y)
GB_COMPARE_OP(ge, x >= y)
#undef GB_COMPARE_OP

// ---- logical ops: any dtype, nonzero (and NaN) is true ----

namespace {
Tensor as_bool(const Tensor& t) { return convert(t, kBool); }
}  // namespace

Tensor logical_not(const Tensor& a) {
  detail::OpScope op_scope("logical_not", {a});
  detail::check_device(a, "logical_not", "self");
  if (detail::composed_path(a)) {  // !x is x == 0 (NaN is true, as a bool conversion reads it)
    NoGradGuard ng;
    Tensor out = eq(a, 0);
    op_scope.set_output(out);
    return out;
  }
  Tensor out = detail::make_empty(a.sizes(), kBool, a.device());
  detail::unary_loop<bool, bool>(out, as_bool(a), [](bool x) { return !x; });
  op_scope.set_output(out);
  return out;
}

namespace {
// logical_and / logical_or composed: each side's truth as 0/1 in int8, multiplied (and) or added (or).
Tensor composed_logical(const Tensor& a, const Tensor& b, bool is_and) {
  NoGradGuard ng;
  Tensor x = ne(a, 0).to(kInt8), y = ne(b, 0).to(kInt8);
  return ne(is_and ? x * y : x + y, 0);
}
}  // namespace

Tensor logical_and(const Tensor& a, const Tensor& b) {
  detail::OpScope op_scope("logical_and", {a, b});
  detail::check_device(a, "logical_and", "self");
  detail::check_device(b, "logical_and", "other", a);
  if (detail::composed_path(a)) {
    Tensor out = composed_logical(a, b, true);
    op_scope.set_output(out);
    return out;
  }
  Tensor out = detail::make_empty(broadcast_shapes(a.sizes(), b.sizes(), "logical_and"), kBool, a.device());
  detail::binary_loop<bool, bool, bool>(out, as_bool(a), as_bool(b), [](bool x, bool y) { return x && y; });
  op_scope.set_output(out);
  return out;
}

Tensor logical_or(const Tensor& a, const Tensor& b) {
  detail::OpScope op_scope("logical_or", {a, b});
  detail::check_device(a, "logical_or", "self");
  detail::check_device(b, "logical_or", "other", a);
  if (detail::composed_path(a)) {
    Tensor out = composed_logical(a, b, false);
    op_scope.set_output(out);
    return out;
  }
  Tensor out = detail::make_empty(broadcast_shapes(a.sizes(), b.sizes(), "logical_or"), kBool, a.device());
  detail::binary_loop<bool, bool, bool>(out, as_bool(a), as_bool(b), [](bool x, bool y) { return x || y; });
  op_scope.set_output(out);
  return out;
}

// ---- floating predicates: integers and bools are never NaN or infinite ----

namespace {
// kind: 0 isnan, 1 isinf, 2 isfinite. On the composed path: x != x, |x| == inf, x - x == 0 (NaN for NaN and +-inf).
template <typename F>
Tensor float_predicate(const Tensor& a, const char* op, bool integer_answer, int kind, const F& f) {
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op, "self");
  if (!a.is_floating_point()) {
    Tensor answer = full(a.sizes(), integer_answer, TensorOptions().dtype(kBool).device(a.device()));
    op_scope.set_output(answer);
    return answer;
  }
  if (detail::composed_path(a)) {
    NoGradGuard ng;
    Tensor out = kind == 0 ? ne(a, a) : kind == 1 ? eq(abs(a), INFINITY) : eq(a - a, 0);
    op_scope.set_output(out);
    return out;
  }
  Tensor out = detail::make_empty(a.sizes(), kBool, a.device());
  detail::dispatch_floating(a.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::unary_loop<bool, T>(out, a, [&](T x) { return f(opmath_t<T>(x)); });
  });
  op_scope.set_output(out);
  return out;
}
}  // namespace

Tensor isnan(const Tensor& a) {
  return float_predicate(a, "isnan", false, 0, [](auto x) { return std::isnan(x); });
}
Tensor isinf(const Tensor& a) {
  return float_predicate(a, "isinf", false, 1, [](auto x) { return std::isinf(x); });
}
Tensor isfinite(const Tensor& a) {
  return float_predicate(a, "isfinite", true, 2, [](auto x) { return std::isfinite(x); });
}

// ---- whole-tensor comparisons ----

namespace {
bool all_true(const Tensor& b, const char* op) {  // b: a fresh contiguous bool tensor
  detail::check_has_data(b, op, "its answer is a value");
  if (detail::composed_path(b)) {  // the count of false elements, read back (the answer is a value on the host)
    NoGradGuard ng;
    return eq(b, 0).sum().item<int64_t>() == 0;
  }
  const bool* p = b.data_ptr<bool>();
  for (int64_t i = 0, n = b.numel(); i < n; ++i)
    if (!p[i]) return false;
  return true;
}
}  // namespace

// Like libtorch's CPU equal: same sizes and equal elements after promotion (a float 1 equals a double 1).
bool equal(const Tensor& a, const Tensor& b) {
  detail::OpScope op_scope("equal", {a, b});
  detail::check_device(a, "equal", "self");
  detail::check_device(b, "equal", "other", a);
  if (a.sizes() != b.sizes()) return false;
  return all_true(eq(a, b), "equal");
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  detail::OpScope op_scope("allclose", {a, b});
  detail::check_device(a, "allclose", "self");
  detail::check_device(b, "allclose", "other", a);
  GB_CHECK(a.scalar_type() == b.scalar_type(), "allclose: ", to_string(a.scalar_type()), " did not match ",
           to_string(b.scalar_type()), " (shapes ", a.sizes(), " and ", b.sizes(),
           "); convert one with .to(other.scalar_type())");
  if (detail::composed_path(a)) {  // in float64, as the loop: exact matches, equal NaNs, then the tolerance
    NoGradGuard ng;
    const Tensor x = a.to(kDouble), y = b.to(kDouble);
    const Tensor err = abs(x - y);
    Tensor close = logical_or(eq(x, y), logical_and(isfinite(err), le(err, abs(y * rtol) + atol)));
    if (equal_nan) close = logical_or(close, logical_and(isnan(x), isnan(y)));
    return all_true(close.contiguous(), "allclose");
  }
  Tensor close = detail::make_empty(broadcast_shapes(a.sizes(), b.sizes(), "allclose"), kBool, a.device());
  detail::dispatch_all(a.scalar_type(), "allclose", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // |a - b| <= atol + rtol |b|, exact matches (including equal infinities) always close
    detail::binary_loop<bool, T, T>(close, a, b, [&](T xv, T yv) {
      double x = double(opmath_t<T>(xv)), y = double(opmath_t<T>(yv));
      if (x == y || (equal_nan && std::isnan(x) && std::isnan(y))) return true;
      double err = std::fabs(x - y);
      return std::isfinite(err) && err <= atol + std::fabs(rtol * y);
    });
  });
  return all_true(close, "allclose");
}

// ---- where ----

namespace {

// c ? a : b as a bit-mask blend. A random mask makes a branch mispredict half the time; this form vectorizes. The
// condition is read as the byte it is stored as (0 or 1), which the vectorizer handles and `bool` it does not.
template <typename T>
inline T blend(uint8_t c, T a, T b) {
  using U = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(U) == sizeof(T));
  const U m = U(0) - U(c);
  return std::bit_cast<T>(U((std::bit_cast<U>(a) & m) | (std::bit_cast<U>(b) & U(~m))));
}

// out = cond ? a : b, with plain loops for the contiguous case and a broadcast scalar on either side.
template <typename T>
void where_loop(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::StridedLoop loop(out, {&cond, &a, &b});
  loop.run_parallel([](char** p, const int64_t* s, int64_t n) {
    constexpr int64_t z = sizeof(T);
    T* o = reinterpret_cast<T*>(p[0]);
    const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);
    const T* x = reinterpret_cast<const T*>(p[2]);
    const T* y = reinterpret_cast<const T*>(p[3]);
    if (s[0] == z && s[1] == 1 && s[2] == z && s[3] == z) {
      for (int64_t i = 0; i < n; ++i) o[i] = blend(c[i], x[i], y[i]);
    } else if (s[0] == z && s[1] == 1 && s[2] == z && s[3] == 0) {
      const T yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = blend(c[i], x[i], yv);
    } else if (s[0] == z && s[1] == 1 && s[2] == 0 && s[3] == z) {
      const T xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = blend(c[i], xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            blend(*reinterpret_cast<const uint8_t*>(p[1] + i * s[1]), *reinterpret_cast<const T*>(p[2] + i * s[2]),
                  *reinterpret_cast<const T*>(p[3] + i * s[3]));
    }
  });
}

void check_bool_condition(const Tensor& condition, const char* op) {
  detail::check_defined(condition, op, "condition");
  GB_CHECK(condition.scalar_type() == kBool, op, " expected condition to be a boolean tensor, but got a tensor with ",
           "dtype ", to_string(condition.scalar_type()), " (shape ", condition.sizes(),
           "); build it with a comparison (x > 0) or convert with .to(gb::kBool)");
}

Tensor scalar_operand(const Scalar& s, ScalarType t, const Tensor& like) {
  return full({}, s, TensorOptions().dtype(t).device(like.device()));
}

}  // namespace

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  check_bool_condition(condition, "where");
  detail::OpScope op_scope("where", {condition, a, b});
  detail::check_device(condition, "where", "condition");
  detail::check_device(a, "where", "self", condition);
  detail::check_device(b, "where", "other", condition);
  auto shape = broadcast3(condition, a, b, "where");
  ScalarType rt = result_type(a, b);
  Tensor aa = convert(a, rt), bb = convert(b, rt);
  Tensor out = detail::make_empty(shape, rt, a.device());
  detail::run_kernel(
      out,
      [&] {
        detail::dispatch_all(rt, "where",
                             [&](auto tag) { where_loop<typename decltype(tag)::type>(out, condition, aa, bb); });
      },
      [&] {
        detail::cuda_pointwise("where", {}, out, {&condition, &aa, &bb}, rt);
      });
  op_scope.set_output(out);
  if (autograd::needs_grad(a, b))
    autograd::record("WhereBackward0", {a, b}, out, {autograd::input(condition)},
                     [as = a.sizes().vec(), bs = b.sizes().vec()](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& cond = c.saved(0);
                       return variable_list{c.needs(0) ? sum_to(where(cond, g, 0), as) : Tensor(),
                                            c.needs(1) ? sum_to(where(cond, 0, g), bs) : Tensor()};
                     });
  return out;
}

Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b) {
  check_bool_condition(condition, "where");
  detail::check_defined(a, "where", "self");
  return where(condition, a, scalar_operand(b, result_type(a, b), a));
}

Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b) {
  check_bool_condition(condition, "where");
  detail::check_defined(b, "where", "other");
  return where(condition, scalar_operand(a, result_type(b, a), b), b);
}

// ---- masked_fill ----

namespace {

void check_mask(const Tensor& mask, const char* op) {
  detail::check_defined(mask, op, "mask");
  GB_CHECK(mask.scalar_type() == kBool, op, " only supports boolean masks, but got mask with dtype ",
           to_string(mask.scalar_type()), " (shape ", mask.sizes(), "); build it with a comparison or .to(gb::kBool)");
}

// out = mask ? value : a, in out's dtype (a already has it).
void masked_fill_kernel(const Tensor& out, const Tensor& a, const Tensor& mask, const Scalar& value, const char* op) {
  if (detail::composed_path(out)) {  // where(mask, value, a), in out's dtype
    NoGradGuard ng;
    Tensor picked = where(mask, value, a);
    detail::copy_into(out, picked.scalar_type() == out.scalar_type() ? picked : picked.to(out.scalar_type()));
    return;
  }
  detail::dispatch_all(out.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = T(scalar_as<T>(value));
    // the bool mask read as its bytes, for the vectorizable blend
    detail::binary_loop<T, T, uint8_t>(out, a, mask, [v](T x, uint8_t m) { return blend(m, v, x); });
  });
}

}  // namespace

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  check_mask(mask, "masked_fill");
  detail::OpScope op_scope("masked_fill", {a, mask});
  detail::check_device(a, "masked_fill", "self");
  detail::check_device(mask, "masked_fill", "mask", a);
  Tensor out =
      detail::make_empty(broadcast_shapes(a.sizes(), mask.sizes(), "masked_fill"), a.scalar_type(), a.device());
  masked_fill_kernel(out, a, mask, value, "masked_fill");
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("MaskedFillBackward0", {a}, out, {autograd::input(mask)},
                     [as = a.sizes().vec()](autograd::BackwardContext& c) {
                       return variable_list{sum_to(where(c.saved(0), 0, c.grad()), as)};
                     });
  return out;
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  check_mask(mask, "masked_fill_");
  auto shape = broadcast_shapes(sizes(), mask.sizes(), "masked_fill_");
  GB_CHECK(IntArrayRef(shape) == sizes(), "masked_fill_: the mask of shape ", mask.sizes(),
           " must broadcast to the tensor's shape ", sizes(), " (in place, the tensor cannot grow to ",
           IntArrayRef(shape), "); use the out-of-place masked_fill");
  return detail::apply_inplace(
      self, {mask}, false, false, "masked_fill_", [&](const Tensor& s) { return gb::masked_fill(s, mask, value); },
      [&](Tensor& s) {
        detail::check_device(s, "masked_fill_", "self");
        detail::check_device(mask, "masked_fill_", "mask", s);
        masked_fill_kernel(s, s, mask, value, "masked_fill_");
      });
}

// ---- clamp ----

namespace {

// self = min(max(x, lo), hi) over an optional lo and hi; NaN in x stays NaN, and lo > hi gives hi (PyTorch's rule).
void clamp_scalar_kernel(const Tensor& out, const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi,
                         const char* op) {
  detail::dispatch_numeric(out.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    if (lo && hi) {
      M l = scalar_as<T>(*lo), h = scalar_as<T>(*hi);
      detail::unary_loop<T, T>(out, a, [l, h](T x) { return T(std::min(std::max(M(x), l), h)); });
    } else if (lo) {
      M l = scalar_as<T>(*lo);
      detail::unary_loop<T, T>(out, a, [l](T x) { return T(std::max(M(x), l)); });
    } else {
      M h = scalar_as<T>(*hi);
      detail::unary_loop<T, T>(out, a, [h](T x) { return T(std::min(M(x), h)); });
    }
  });
}

}  // namespace

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  detail::OpScope op_scope("clamp", {a});
  detail::check_device(a, "clamp", "self");
  GB_CHECK(min || max, "clamp: At least one of 'min' or 'max' must not be None");
  ScalarType rt = Promotion().add(a).add(min).add(max).result();
  Tensor out = detail::make_empty(a.sizes(), rt, a.device());
  Tensor aa = convert(a, rt);
  detail::dispatch_numeric(rt, "clamp", [](auto) {});  // the dtype check on every device: bool is refused
  detail::run_kernel(
      out, [&] { clamp_scalar_kernel(out, aa, min, max, "clamp"); },
      [&] {
        // a missing bound is the dtype's end (the bounds are rounded to rt first, as on the CPU)
        double lowest = -INFINITY, highest = INFINITY;
        if (!is_floating_point(rt))
          detail::dispatch_numeric(rt, "clamp", [&](auto tag) {
            using T = typename decltype(tag)::type;
            lowest = double(std::numeric_limits<T>::lowest());
            highest = double(std::numeric_limits<T>::max());
          });
        const double bounds[2] = {min ? detail::dispatch_numeric(rt, "clamp",
                                                                 [&](auto tag) {
                                                                   return double(opmath_t<typename decltype(tag)::type>(
                                                                       scalar_as<typename decltype(tag)::type>(*min)));
                                                                 })
                                      : lowest,
                                  max ? detail::dispatch_numeric(rt, "clamp",
                                                                 [&](auto tag) {
                                                                   return double(opmath_t<typename decltype(tag)::type>(
                                                                       scalar_as<typename decltype(tag)::type>(*max)));
                                                                 })
                                      : highest};
        detail::cuda_pointwise("clamp", {cuda_kernels::Pw::clamp, bounds[0], bounds[1]}, out, {&aa}, rt);
      });
  op_scope.set_output(out);
  // the gradient passes where min <= x <= max (inclusive), as in PyTorch
  if (autograd::needs_grad(a))
    autograd::record("ClampBackward1", {a}, out, {autograd::input(a)}, [min, max](autograd::BackwardContext& c) {
      const Tensor& x = c.saved(0);
      Tensor inside = min && max ? logical_and(ge(x, *min), le(x, *max)) : min ? ge(x, *min) : le(x, *max);
      return variable_list{where(inside, c.grad(), 0)};
    });
  return out;
}

Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  Tensor lo = min ? *min : Tensor(), hi = max ? *max : Tensor();
  GB_CHECK(lo.defined() || hi.defined(), "clamp: At least one of 'min' or 'max' must not be None");
  detail::OpScope op_scope("clamp", {a, lo, hi});
  detail::check_device(a, "clamp", "self");
  if (lo.defined()) detail::check_device(lo, "clamp", "min", a);
  if (hi.defined()) detail::check_device(hi, "clamp", "max", a);
  auto shape = broadcast3(a, lo, hi, "clamp");
  ScalarType rt = Promotion().add(a).add(lo).add(hi).result();
  Tensor aa = convert(a, rt);
  Tensor out = detail::make_empty(shape, rt, a.device());
  if (detail::composed_path(a)) {  // maximum/minimum: a NaN bound gives NaN, as the loop
    NoGradGuard ng;
    Tensor r = aa;
    if (lo.defined()) r = maximum(r, convert(lo, rt));
    if (hi.defined()) r = minimum(r, convert(hi, rt));
    detail::copy_into(out, r.expand(shape));
  } else {
  detail::dispatch_numeric(rt, "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    // a NaN bound gives NaN (x != x is false for integers)
    auto lower = [](M x, M l) { return l != l ? l : std::max(x, l); };
    auto upper = [](M x, M h) { return h != h ? h : std::min(x, h); };
    if (lo.defined() && hi.defined())
      detail::ternary_loop<T, T, T, T>(out, aa, convert(lo, rt), convert(hi, rt),
                                       [&](T x, T l, T h) { return T(upper(lower(M(x), M(l)), M(h))); });
    else if (lo.defined())
      detail::binary_loop<T, T, T>(out, aa, convert(lo, rt), [&](T x, T l) { return T(lower(M(x), M(l))); });
    else
      detail::binary_loop<T, T, T>(out, aa, convert(hi, rt), [&](T x, T h) { return T(upper(M(x), M(h))); });
  });
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(a, lo, hi))
    autograd::record("ClampBackward0", {a, lo, hi}, out, {autograd::input(a), autograd::input(lo), autograd::input(hi)},
                     [as = a.sizes().vec(), ls = lo.defined() ? lo.sizes().vec() : std::vector<int64_t>(),
                      hs = hi.defined() ? hi.sizes().vec() : std::vector<int64_t>()](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& x = c.saved(0);
                       const Tensor& l = c.saved(1);
                       const Tensor& h = c.saved(2);
                       Tensor gx, gl, gh;
                       if (c.needs(0)) {
                         Tensor inside = l.defined() && h.defined() ? logical_and(ge(x, l), le(x, h))
                                         : l.defined()              ? ge(x, l)
                                                                    : le(x, h);
                         gx = sum_to(where(inside, g, 0), as);
                       }
                       // PyTorch's clamp_backward_min_max: min gets the gradient where it clamped, max where it clamped
                       // or won
                       if (l.defined() && h.defined()) {
                         if (c.needs(1)) gl = sum_to(where(logical_and(lt(x, l), lt(l, h)), g, 0), ls);
                         if (c.needs(2)) gh = sum_to(where(logical_or(gt(x, h), lt(h, l)), g, 0), hs);
                       } else if (l.defined() && c.needs(1)) {
                         gl = sum_to(where(lt(x, l), g, 0), ls);
                       } else if (h.defined() && c.needs(2)) {
                         gh = sum_to(where(gt(x, h), g, 0), hs);
                       }
                       return variable_list{gx, gl, gh};
                     });
  return out;
}

Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(min || max, "clamp_: At least one of 'min' or 'max' must not be None");
  ScalarType rt = Promotion().add(self).add(min).add(max).result();
  GB_CHECK(gb::is_floating_point(scalar_type()) || !gb::is_floating_point(rt), "clamp_: result type ", to_string(rt),
           " can't be cast to the desired output type ", to_string(scalar_type()), " (bounds are floating, the tensor ",
           "of shape ", sizes(), " is not); use the out-of-place clamp");
  return detail::apply_inplace(
      self, {}, false, true, "clamp_", [&](const Tensor& s) { return gb::clamp(s, min, max); },
      [&](Tensor& s) {
        detail::check_device(s, "clamp_", "self");
        detail::dispatch_numeric(s.scalar_type(), "clamp_", [](auto) {});  // on every device: bool is refused
        detail::run_kernel(
            s, [&] { clamp_scalar_kernel(s, s, min, max, "clamp_"); },
            [&] {
              NoGradGuard ng;  // the out-of-place kernel, written back
              detail::copy_into(s, gb::clamp(s, min, max).to(s.scalar_type()));
            });
      });
}

// ---- lerp: start + weight (end - start) ----

namespace {

void check_lerp(const Tensor& start, const Tensor& end, const char* op) {
  detail::check_device(start, op, "self");
  detail::check_device(end, op, "end", start);
  GB_CHECK(start.is_floating_point(), op, ": expected a floating tensor but got ", to_string(start.scalar_type()),
           " (shape ", start.sizes(), "); convert it first, e.g. x.to(gb::kFloat)");
  GB_CHECK(start.scalar_type() == end.scalar_type(), op, ": expected dtype ", to_string(start.scalar_type()),
           " for `end` but got dtype ", to_string(end.scalar_type()), "; convert it with .to(start.scalar_type())");
}

void lerp_kernel(const Tensor& out, const Tensor& start, const Tensor& end, double weight) {
  if (detail::composed_path(out)) {  // the same two-sided form from the pointwise kernels
    NoGradGuard ng;
    const Tensor d = end - start;
    // 1 - w rounded in the opmath type, as the loop computes it
    const double w1 = out.scalar_type() == kDouble ? 1 - weight : double(1.0f - float(weight));
    detail::copy_into(out, std::abs(weight) < 0.5 ? start + d * weight : end - d * w1);
    return;
  }
  detail::dispatch_floating(out.scalar_type(), "lerp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const M w = M(weight);
    // PyTorch's two-sided form: exact at both ends (weight 0 gives start, weight 1 gives end)
    if (std::abs(w) < M(0.5))
      detail::binary_loop<T, T, T>(out, start, end, [w](T s, T e) { return T(M(s) + w * (M(e) - M(s))); });
    else
      detail::binary_loop<T, T, T>(out, start, end, [w](T s, T e) { return T(M(e) - (M(e) - M(s)) * (M(1) - w)); });
  });
}

}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  detail::OpScope op_scope("lerp", {start, end});
  check_lerp(start, end, "lerp");
  double w = weight.to_double();
  Tensor out =
      detail::make_empty(broadcast_shapes(start.sizes(), end.sizes(), "lerp"), start.scalar_type(), start.device());
  lerp_kernel(out, start, end, w);
  op_scope.set_output(out);
  if (autograd::needs_grad(start, end))
    autograd::record("LerpBackward0", {start, end}, out, {},
                     [ss = start.sizes().vec(), es = end.sizes().vec(), w](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       return variable_list{c.needs(0) ? sum_to(g * (1 - w), ss) : Tensor(),
                                            c.needs(1) ? sum_to(g * w, es) : Tensor()};
                     });
  return out;
}

Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  check_lerp(self, end, "lerp_");
  auto shape = broadcast_shapes(sizes(), end.sizes(), "lerp_");
  GB_CHECK(IntArrayRef(shape) == sizes(), "lerp_: output with shape ", sizes(), " doesn't match the broadcast shape ",
           IntArrayRef(shape));
  return detail::apply_inplace(
      self, {end}, autograd::needs_grad(end), false, "lerp_",
      [&](const Tensor& s) { return gb::lerp(s, end, weight); },
      [&](Tensor& s) { lerp_kernel(s, s, end, weight.to_double()); });
}

// ---- addcmul / addcdiv: self + value * t1 * t2, self + value * t1 / t2 ----

namespace {

ScalarType addc_type(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value, bool is_div,
                     const char* op) {
  detail::check_device(self, op, "self");
  detail::check_device(t1, op, "tensor1", self);
  detail::check_device(t2, op, "tensor2", self);
  GB_CHECK(!is_div || !(is_integral(t1.scalar_type(), true) && is_integral(t2.scalar_type(), true)), op,
           ": integer division with addcdiv is not supported (tensor1 is ", to_string(t1.scalar_type()),
           ", tensor2 is ", to_string(t2.scalar_type()), "); convert them to a floating dtype first");
  ScalarType rt = Promotion().add(self).add(t1).add(t2).result();
  GB_CHECK(is_floating_point(rt) || !value.is_floating_point(), op, ": for integral input tensors (", to_string(rt),
           "), argument value must not be a floating point number");
  return rt;
}

void addc_kernel(const Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value,
                 bool is_div, const char* op) {
  ScalarType rt = out.scalar_type();
  Tensor s = convert(self, rt), x = convert(t1, rt), y = convert(t2, rt);
  if (detail::composed_path(out)) {  // self + value * (t1 op t2): add's alpha form on the pointwise kernels
    NoGradGuard ng;
    detail::copy_into(out, s.add(is_div ? x / y : x * y, value).expand(out.sizes()));
    return;
  }
  detail::dispatch_numeric(rt, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    const M v = value.to<M>();
    if (is_div)
      detail::ternary_loop<T, T, T, T>(out, s, x, y, [v](T a, T b, T c) { return T(M(a) + v * (M(b) / M(c))); });
    else
      detail::ternary_loop<T, T, T, T>(out, s, x, y, [v](T a, T b, T c) { return T(M(a) + v * (M(b) * M(c))); });
  });
}

Tensor addc(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value, bool is_div) {
  const char* op = is_div ? "addcdiv" : "addcmul";
  detail::OpScope op_scope(op, {self, t1, t2});
  ScalarType rt = addc_type(self, t1, t2, value, is_div, op);
  Tensor out = detail::make_empty(broadcast3(self, t1, t2, op), rt, self.device());
  addc_kernel(out, self, t1, t2, value, is_div, op);
  op_scope.set_output(out);
  if (autograd::needs_grad(self, t1, t2))
    autograd::record(is_div ? "AddcdivBackward0" : "AddcmulBackward0", {self, t1, t2}, out,
                     {autograd::input(t1), autograd::input(t2)},
                     [ss = self.sizes().vec(), s1 = t1.sizes().vec(), s2 = t2.sizes().vec(), value,
                      is_div](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       const Tensor& x = c.saved(0);
                       const Tensor& y = c.saved(1);
                       Tensor gs, g1, g2;
                       if (c.needs(0)) gs = sum_to(g, ss);
                       if (is_div) {
                         if (c.needs(1)) g1 = sum_to(g * value / y, s1);
                         if (c.needs(2)) g2 = sum_to(-g * value * x / (y * y), s2);
                       } else {
                         if (c.needs(1)) g1 = sum_to(g * y * value, s1);
                         if (c.needs(2)) g2 = sum_to(g * x * value, s2);
                       }
                       return variable_list{gs, g1, g2};
                     });
  return out;
}

Tensor& addc_(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value, bool is_div) {
  const char* op = is_div ? "addcdiv_" : "addcmul_";
  ScalarType rt = addc_type(self, t1, t2, value, is_div, op);
  GB_CHECK(is_floating_point(self.scalar_type()) || !is_floating_point(rt), op, ": result type ", to_string(rt),
           " can't be cast to the desired output type ", to_string(self.scalar_type()), "; use the out-of-place ", op);
  auto shape = broadcast3(self, t1, t2, op);
  GB_CHECK(IntArrayRef(shape) == self.sizes(), op, ": output with shape ", self.sizes(),
           " doesn't match the broadcast shape ", IntArrayRef(shape));
  return detail::apply_inplace(
      self, {t1, t2}, autograd::needs_grad(t1, t2), false, op,
      [&](const Tensor& s) { return addc(s, t1, t2, value, is_div); },
      [&](Tensor& s) { addc_kernel(s, s, t1, t2, value, is_div, op); });
}

}  // namespace

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  GB_AUTOCAST(promote, addcmul, self, t1, t2, value);
  return addc(self, t1, t2, value, false);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  GB_AUTOCAST(promote, addcdiv, self, t1, t2, value);
  return addc(self, t1, t2, value, true);
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return addc_(self, t1, t2, value, false);
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return addc_(self, t1, t2, value, true);
}

}  // namespace gb
