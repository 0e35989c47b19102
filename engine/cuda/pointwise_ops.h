// engine/cuda/pointwise_ops.h — the arithmetic of every elementwise CUDA kernel, one switch per element (internal;
// host and device, plain C++17).
//
// An op is a code (Pw) with up to two scalar parameters; the CPU op that launches it names the code next to its own
// lambda (ops/binary.cpp: `binary_kernel(a, b, "add", rt, f, {Pw::add, alpha})`), and tests/engine/cuda/
// pointwise_ops_test.cpp checks each code against that CPU op on the host, through run_element below, the same
// function the kernel runs per element. Values are computed in opmath (float for the 16-bit floats) and stored back
// rounding to nearest even, as the CPU kernels do. One kernel per dtype switches on the code: the branch is the
// same for every thread, and nvcc compiles 7 kernels instead of 7 per op.
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "cuda/hd.h"
#include "glassbox/core/half.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace gb::cuda_kernels {

enum class Pw : int32_t {
  none = 0,
  // unary, out = f(x), out and x of one dtype
  neg, abs, sign, exp, log, sqrt, rsqrt, reciprocal, sigmoid, tanh, relu, sin, cos, log1p, gelu, erf, gelu_tanh, silu,
  round, floor, ceil, trunc,
  // with scalars p0 (and p1), out = f(x, p0, p1)
  add_scalar,   // x + p0
  sub_scalar,   // x - p0
  mul_scalar,   // x * p0
  div_scalar,   // x / p0
  rsub_scalar,  // p0 - p1 * x
  pow_scalar,   // x ^ p0
  clamp,        // min(max(x, p0), p1): NaN kept, p0 > p1 gives p1
  leaky_relu,   // x > 0 ? x : x * p0
  softplus,     // p0 x > p1 ? x : log1p(exp(p0 x)) / p0
  // binary, out = f(x, y), all three of one dtype
  add,  // x + p0 * y
  sub,  // x - p0 * y
  mul, div, maximum, minimum, pow,
  gelu_backward,       // x * gelu'(y), the erf form (x the gradient, y the input)
  gelu_tanh_backward,  // the same for the tanh approximation
  relu_backward,  // y > 0 ? x : 0 (x the gradient, y the result)
  // comparisons: out bool, x and y of one dtype (the _scalar forms compare x with p0)
  eq, ne, lt, le, gt, ge, eq_scalar, ne_scalar, lt_scalar, le_scalar, gt_scalar, ge_scalar,
  // out = c ? x : y with c bool, out x y of one dtype
  where,
  // out = p0
  fill,
};

// The operands an op reads besides its output.
GB_HD int pw_inputs(Pw op) {
  if (op == Pw::fill) return 0;
  if (op == Pw::where) return 3;
  if ((op >= Pw::add && op <= Pw::relu_backward) || (op >= Pw::eq && op <= Pw::ge)) return 2;
  return 1;
}
GB_HD bool pw_is_compare(Pw op) { return op >= Pw::eq && op <= Pw::ge_scalar; }
// Ops with no meaning on integers (the CPU ops convert integer inputs to float before they get here).
GB_HD bool pw_floating_only(Pw op) {
  return (op >= Pw::exp && op <= Pw::silu) || op == Pw::div || op == Pw::div_scalar || op == Pw::leaky_relu ||
         op == Pw::softplus || op == Pw::gelu_backward || op == Pw::gelu_tanh_backward;
}

struct PwArgs {
  Pw op = Pw::none;
  double p0 = 0, p1 = 0;
};

// ---- storage <-> opmath ----

template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};

template <typename T>
GB_HD typename OpMath<T>::type load(const T* p) {
  return *p;
}
template <>
GB_HD float load<Half>(const Half* p) {
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(p->x));
#else
  return float(*p);
#endif
}
template <>
GB_HD float load<BFloat16>(const BFloat16* p) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(uint32_t(p->x) << 16);
#else
  return float(*p);
#endif
}

template <typename T, typename M>
GB_HD void store(T* p, M v) {
  *p = T(v);
}
template <>
GB_HD void store<Half, float>(Half* p, float v) {
#ifdef __CUDA_ARCH__
  p->x = __half_as_ushort(__float2half_rn(v));
#else
  *p = Half(v);
#endif
}
template <>
GB_HD void store<BFloat16, float>(BFloat16* p, float v) {
#ifdef __CUDA_ARCH__
  p->x = __bfloat16_as_ushort(__float2bfloat16_rn(v));
#else
  *p = BFloat16(v);
#endif
}

// ---- math in opmath: float or double use libm's global names (::exp: gb::exp is the op; nvcc brings the device
// overloads), integers stay exact ----

GB_HD float m_exp(float x) { return expf(x); }
GB_HD double m_exp(double x) { return ::exp(x); }
GB_HD float m_log(float x) { return logf(x); }
GB_HD double m_log(double x) { return ::log(x); }
GB_HD float m_sqrt(float x) { return sqrtf(x); }
GB_HD double m_sqrt(double x) { return ::sqrt(x); }
GB_HD float m_tanh(float x) { return tanhf(x); }
GB_HD double m_tanh(double x) { return ::tanh(x); }
GB_HD float m_sin(float x) { return sinf(x); }
GB_HD double m_sin(double x) { return ::sin(x); }
GB_HD float m_cos(float x) { return cosf(x); }
GB_HD double m_cos(double x) { return ::cos(x); }
GB_HD float m_log1p(float x) { return log1pf(x); }
GB_HD double m_log1p(double x) { return ::log1p(x); }
GB_HD float m_erf(float x) { return erff(x); }
GB_HD double m_erf(double x) { return ::erf(x); }
GB_HD float m_rint(float x) { return rintf(x); }  // halves to even in the default rounding mode, as torch.round
GB_HD double m_rint(double x) { return ::rint(x); }
GB_HD float m_floor(float x) { return floorf(x); }
GB_HD double m_floor(double x) { return ::floor(x); }
GB_HD float m_ceil(float x) { return ceilf(x); }
GB_HD double m_ceil(double x) { return ::ceil(x); }
GB_HD float m_trunc(float x) { return truncf(x); }
GB_HD double m_trunc(double x) { return ::trunc(x); }
GB_HD float m_pow(float x, float y) { return powf(x, y); }
GB_HD double m_pow(double x, double y) { return ::pow(x, y); }

template <typename M>
GB_HD bool is_nan(M x) {
  return x != x;  // false for integers
}

// A launch parameter (a double) in M: integers through int64, so -1 is 255 in uint8 as on the CPU (a negative double
// converted straight to an unsigned type is undefined).
template <typename M>
GB_HD M param(double p) {
  if constexpr (std::is_integral<M>::value && !std::is_same<M, bool>::value) return M(int64_t(p));
  else return M(p);
}

// x < 0, spelled so that unsigned types need no comparison.
template <typename M>
GB_HD bool negative(M x) {
  if constexpr (std::is_unsigned<M>::value) return false;
  else return x < M(0);
}

template <typename M>
GB_HD M int_pow(M x, M y) {
  M r = 1;
  for (M i = 0; i < y; ++i) r *= x;
  return r;
}

// f(x[, y][, c]) in opmath M for every op that is not a comparison or where.
template <typename M>
GB_HD M pw_value(const PwArgs& a, M x, M y) {
  constexpr bool fp = std::is_floating_point<M>::value;
  const M p0 = param<M>(a.p0), p1 = param<M>(a.p1);
  switch (a.op) {
    case Pw::neg: return M(-x);
    case Pw::abs: return negative(x) ? M(-x) : x;
    case Pw::sign: return M(int(M(0) < x) - int(negative(x)));  // NaN gives 0, as the CPU kernel
    case Pw::relu: return negative(x) ? M(0) : x;  // NaN and -0 stay, as the CPU kernel
    case Pw::add_scalar: return M(x + p0);
    case Pw::sub_scalar: return M(x - p0);
    case Pw::mul_scalar: return M(x * p0);
    case Pw::rsub_scalar: return M(p0 - p1 * x);
    case Pw::clamp: {  // std::min(std::max(x, lo), hi) as the CPU: NaN stays, lo > hi gives hi
      const M v = x < p0 ? p0 : x;
      return v > p1 ? p1 : v;
    }
    case Pw::add: return M(x + p0 * y);
    case Pw::sub: return M(x - p0 * y);
    case Pw::mul: return M(x * y);
    case Pw::maximum: return is_nan(x) ? x : is_nan(y) ? y : (x > y ? x : y);
    case Pw::minimum: return is_nan(x) ? x : is_nan(y) ? y : (x < y ? x : y);
    case Pw::relu_backward: return y > M(0) ? x : M(0);
    case Pw::fill: return p0;
    default: break;
  }
  if constexpr (fp) {
    switch (a.op) {
      case Pw::exp: return m_exp(x);
      case Pw::log: return m_log(x);
      case Pw::sqrt: return m_sqrt(x);
      case Pw::rsqrt: return M(1) / m_sqrt(x);
      case Pw::reciprocal: return M(1) / x;
      case Pw::sigmoid: return M(1) / (M(1) + m_exp(-x));
      case Pw::tanh: return m_tanh(x);
      case Pw::sin: return m_sin(x);
      case Pw::cos: return m_cos(x);
      case Pw::log1p: return m_log1p(x);
      case Pw::gelu: return M(0.5) * x * (M(1) + m_erf(x * M(0.70710678118654752440)));
      case Pw::erf: return m_erf(x);
      case Pw::gelu_tanh: {  // sqrt(2/pi) (x + 0.044715 x^3), as ops/activation.cpp
        const M inner = M(0.79788456080286535588) * (x + M(0.044715) * x * x * x);
        return M(0.5) * x * (M(1) + m_tanh(inner));
      }
      case Pw::leaky_relu: return x > M(0) ? x : x * p0;
      case Pw::softplus: {
        const M bx = x * p0;
        return bx > p1 ? x : m_log1p(m_exp(bx)) / p0;
      }
      case Pw::gelu_backward: {
        const M cdf = M(0.5) * (M(1) + m_erf(y * M(0.70710678118654752440)));
        const M pdf = M(0.39894228040143267794) * m_exp(M(-0.5) * y * y);
        return x * (cdf + y * pdf);
      }
      case Pw::gelu_tanh_backward: {
        const M u = M(0.79788456080286535588) * (M(1) + M(3 * 0.044715) * y * y);
        const M t = m_tanh(M(0.79788456080286535588) * (y + M(0.044715) * y * y * y));
        return x * (M(0.5) * (M(1) + t) + M(0.5) * y * (M(1) - t * t) * u);
      }
      case Pw::silu: return x / (M(1) + m_exp(-x));
      case Pw::round: return m_rint(x);
      case Pw::floor: return m_floor(x);
      case Pw::ceil: return m_ceil(x);
      case Pw::trunc: return m_trunc(x);
      case Pw::div_scalar: return x / p0;
      case Pw::pow_scalar: return p0 == M(2) ? x * x : m_pow(x, p0);
      case Pw::div: return x / y;
      case Pw::pow: return m_pow(x, y);
      default: return M(0);
    }
  } else {
    switch (a.op) {
      case Pw::round:
      case Pw::floor:
      case Pw::ceil:
      case Pw::trunc: return x;  // integers pass through, as on the CPU
      case Pw::pow_scalar: return int_pow(x, p0);
      case Pw::pow: return int_pow(x, y);
      default: return M(0);
    }
  }
}

template <typename M>
GB_HD bool pw_compare(const PwArgs& a, M x, M y) {
  const M p0 = param<M>(a.p0);
  switch (a.op) {
    case Pw::eq: return x == y;
    case Pw::ne: return x != y;
    case Pw::lt: return x < y;
    case Pw::le: return x <= y;
    case Pw::gt: return x > y;
    case Pw::ge: return x >= y;
    case Pw::eq_scalar: return x == p0;
    case Pw::ne_scalar: return x != p0;
    case Pw::lt_scalar: return x < p0;
    case Pw::le_scalar: return x <= p0;
    case Pw::gt_scalar: return x > p0;
    case Pw::ge_scalar: return x >= p0;
    default: return false;
  }
}

// One element of a numeric dtype T (see run_element).
template <typename T>
GB_HD void run_numeric(const PwArgs& a, char* const* ptr) {
  using M = typename OpMath<T>::type;
  if (pw_is_compare(a.op)) {
    const M x = load(reinterpret_cast<const T*>(ptr[1]));
    const M y = pw_inputs(a.op) == 2 ? load(reinterpret_cast<const T*>(ptr[2])) : M(0);
    *reinterpret_cast<bool*>(ptr[0]) = pw_compare(a, x, y);
    return;
  }
  if (a.op == Pw::where) {
    const bool c = *reinterpret_cast<const bool*>(ptr[1]);
    *reinterpret_cast<T*>(ptr[0]) = *reinterpret_cast<const T*>(c ? ptr[2] : ptr[3]);
    return;
  }
  const int n = pw_inputs(a.op);
  const M x = n >= 1 ? load(reinterpret_cast<const T*>(ptr[1])) : M(0);
  const M y = n >= 2 ? load(reinterpret_cast<const T*>(ptr[2])) : M(0);
  store(reinterpret_cast<T*>(ptr[0]), pw_value<M>(a, x, y));
}

// One element: ptr[k] points at operand k's element (0 the output). T is the dtype of the values (the output's,
// or the compared inputs' for a comparison, whose output is bool).
template <typename T>
GB_HD void run_element(const PwArgs& a, char* const* ptr) {
  if constexpr (std::is_same<T, bool>::value) {  // bool has fill, where and (in)equality only (kernel_for checks)
    bool* o = reinterpret_cast<bool*>(ptr[0]);
    if (a.op == Pw::fill) *o = a.p0 != 0;
    else if (a.op == Pw::where) *o = *reinterpret_cast<const bool*>(*reinterpret_cast<const bool*>(ptr[1]) ? ptr[2] : ptr[3]);
    else if (a.op == Pw::eq || a.op == Pw::ne)
      *o = (*reinterpret_cast<const bool*>(ptr[1]) == *reinterpret_cast<const bool*>(ptr[2])) == (a.op == Pw::eq);
    else if (a.op == Pw::eq_scalar || a.op == Pw::ne_scalar)  // a bool against a number: as 0/1, as the cpu
      *o = (double(*reinterpret_cast<const bool*>(ptr[1])) == a.p0) == (a.op == Pw::eq_scalar);
    return;
  } else {
    run_numeric<T>(a, ptr);
  }
}

// ---- contiguous operands, a 16-byte word at a time ----
// The kernel's fast path (cuda/pointwise.cu): when every operand is contiguous, of the one dtype T and 16-byte
// aligned, each thread loads a word of kSize elements per input with one instruction and stores one word, instead of
// an address computation and a narrow access per element.

template <typename T>
struct alignas(16) PwVec {
  static constexpr int kSize = 16 / int(sizeof(T));
  T v[kSize];
};

// The codes run_vector serves: every operand of the values' dtype (no comparison, no where).
GB_HD bool pw_vectorizable(Pw op) { return op != Pw::none && !pw_is_compare(op) && op != Pw::where; }

// Whether a launch can take the fast path: a numeric dtype of elem_size bytes, a vectorizable code, the operands merged
// to one contiguous dim (calc, cuda/offset_calc.h) and each base 16-byte aligned.
GB_HD bool pw_vector_launch(Pw op, bool is_bool, int64_t elem_size, int calc_ndim, int nops,
                            const int64_t* dim0_strides, char* const* data) {
  if (is_bool || !pw_vectorizable(op) || calc_ndim != 1 || nops != 1 + pw_inputs(op)) return false;
  for (int k = 0; k < nops; ++k)
    if (dim0_strides[k] != elem_size || reinterpret_cast<uintptr_t>(data[k]) % 16 != 0) return false;
  return true;
}

// Word w of every operand (data[0] the output, data[1], data[2] the inputs the code reads): run_numeric's operations
// on each element, so the same bits as run_element element by element.
template <typename T>
GB_HD void run_vector(const PwArgs& a, char* const* data, int64_t w) {
  using M = typename OpMath<T>::type;
  const int n = pw_inputs(a.op);
  PwVec<T> x, y, out;
  if (n >= 1) x = reinterpret_cast<const PwVec<T>*>(data[1])[w];
  if (n >= 2) y = reinterpret_cast<const PwVec<T>*>(data[2])[w];
#ifdef __CUDACC__
#pragma unroll
#endif
  for (int j = 0; j < PwVec<T>::kSize; ++j) {
    const M xj = n >= 1 ? load(&x.v[j]) : M(0);
    const M yj = n >= 2 ? load(&y.v[j]) : M(0);
    store(&out.v[j], pw_value<M>(a, xj, yj));
  }
  reinterpret_cast<PwVec<T>*>(data[0])[w] = out;
}

// *dst = *src converted as the CPU's Tensor::to(dtype) converts: through opmath, bool as != 0, rounding to nearest
// even into the 16-bit floats, and C++'s conversion (truncation) from floating to integer.
template <typename D, typename S>
GB_HD void convert(D* dst, const S* src) {
  const auto v = load(src);
  if constexpr (std::is_same<D, bool>::value) {
    *dst = v != decltype(v)(0);
  } else if constexpr (std::is_same<D, Half>::value || std::is_same<D, BFloat16>::value) {
    store<D, float>(dst, float(v));
  } else {
    *dst = D(v);
  }
}

}  // namespace gb::cuda_kernels
