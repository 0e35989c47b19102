// engine/ops/vec_libm.cpp — vec_apply (vec_libm.h): one loop per op and instruction set over whole vectors of the
// set's width (4, 8 or 16 floats), the last partial vector through a zero-padded copy. libmvec's entry points are
// declared below as overloads of one C++ name per function, bound to glibc's symbols by asm labels
// (_ZGV{b,d,e}N{4,8,16}v_<fn>f: the x86-64 vector function ABI for SSE, AVX2 and AVX-512), so an op is written once
// for any width. Each op body is always-inline, so it is compiled inside the per-ISA loop, where the vector
// arguments travel in the registers that ABI expects.
#include "ops/vec_libm.h"

#include <cstring>
#include <type_traits>

#include "core/cpu_isa.h"

#if GLASSBOX_HAS_LIBMVEC && GB_HAS_ISA_VARIANTS

namespace gb::detail {

typedef float v4sf __attribute__((vector_size(16)));
typedef float v8sf __attribute__((vector_size(32)));
typedef float v16sf __attribute__((vector_size(64)));

// External declarations (an anonymous namespace would make them static, never bound to glibc's symbols).
#define GB_MVEC(FN)                                 \
  v4sf mv_##FN(v4sf) __asm__("_ZGVbN4v_" #FN "f");  \
  v8sf mv_##FN(v8sf) __asm__("_ZGVdN8v_" #FN "f");  \
  v16sf mv_##FN(v16sf) __asm__("_ZGVeN16v_" #FN "f");
GB_MVEC(exp)
GB_MVEC(expm1)
GB_MVEC(log)
GB_MVEC(log1p)
GB_MVEC(sin)
GB_MVEC(cos)
GB_MVEC(tanh)
GB_MVEC(erf)
#undef GB_MVEC

namespace {

// The ops, for any vector width V. Constants as the scalar kernels write them (activation.cpp).
#define GB_VOP(NAME, EXPR)                                \
  struct NAME {                                           \
    template <class V>                                    \
    GB_ALWAYS_INLINE V operator()(V x) const { return EXPR; } \
  };
GB_VOP(Exp, mv_exp(x))
GB_VOP(Expm1, mv_expm1(x))
GB_VOP(Log, mv_log(x))
GB_VOP(Log1p, mv_log1p(x))
GB_VOP(Sin, mv_sin(x))
GB_VOP(Cos, mv_cos(x))
GB_VOP(Tanh, mv_tanh(x))
GB_VOP(Erf, mv_erf(x))
GB_VOP(Sigmoid, 1.0f / (1.0f + mv_exp(-x)))
GB_VOP(Silu, x / (1.0f + mv_exp(-x)))
GB_VOP(Gelu, 0.5f * x * (1.0f + mv_erf(x * 0.70710678118654752440f)))
GB_VOP(GeluTanh, 0.5f * x * (1.0f + mv_tanh(0.79788456080286535588f * (x + 0.044715f * x * x * x))))
#undef GB_VOP

// GELU's gradients, as activation.cpp's scalar gelu_backward writes them.
struct GeluBackward {
  template <class V>
  GB_ALWAYS_INLINE V operator()(V g, V x) const {
    const V cdf = 0.5f * (1.0f + mv_erf(x * 0.70710678118654752440f));
    const V pdf = 0.39894228040143267794f * mv_exp(-0.5f * x * x);
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBackward {
  template <class V>
  GB_ALWAYS_INLINE V operator()(V g, V x) const {
    const V u = 0.79788456080286535588f * (1.0f + float(3 * 0.044715) * x * x);
    const V t = mv_tanh(0.79788456080286535588f * (x + 0.044715f * x * x * x));
    return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * u);
  }
};

template <class V, class Op>
GB_ALWAYS_INLINE void map(const float* x, float* y, int64_t n) {
  constexpr int64_t L = sizeof(V) / sizeof(float);
  const Op op;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v = op(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    float buf[L] = {};
    std::memcpy(buf, x + i, size_t(n - i) * sizeof(float));
    V v;
    std::memcpy(&v, buf, sizeof v);
    v = op(v);
    std::memcpy(buf, &v, sizeof v);
    std::memcpy(y + i, buf, size_t(n - i) * sizeof(float));
  }
}

template <class V, class Op>
GB_ALWAYS_INLINE void map2(const float* g, const float* x, float* y, int64_t n) {
  constexpr int64_t L = sizeof(V) / sizeof(float);
  const Op op;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V a, b;
    std::memcpy(&a, g + i, sizeof a);
    std::memcpy(&b, x + i, sizeof b);
    a = op(a, b);
    std::memcpy(y + i, &a, sizeof a);
  }
  if (i < n) {
    float ga[L] = {}, xa[L] = {};
    std::memcpy(ga, g + i, size_t(n - i) * sizeof(float));
    std::memcpy(xa, x + i, size_t(n - i) * sizeof(float));
    V a, b;
    std::memcpy(&a, ga, sizeof a);
    std::memcpy(&b, xa, sizeof b);
    a = op(a, b);
    std::memcpy(ga, &a, sizeof a);
    std::memcpy(y + i, ga, size_t(n - i) * sizeof(float));
  }
}
template <class Op>
void run2_baseline(const float* g, const float* x, float* y, int64_t n) {
  map2<v4sf, Op>(g, x, y, n);
}
template <class Op>
GB_TARGET_AVX2 void run2_avx2(const float* g, const float* x, float* y, int64_t n) {
  map2<v8sf, Op>(g, x, y, n);
}
template <class Op>
GB_TARGET_AVX512 void run2_avx512(const float* g, const float* x, float* y, int64_t n) {
  map2<v16sf, Op>(g, x, y, n);
}

// sqrt and rsqrt: plain loops, vectorized by the compiler (no errno in this file), bit for bit the scalar ones.
struct Sqrt {};
struct Rsqrt {};
template <class V, class Op>
GB_ALWAYS_INLINE void map_plain(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<Op, Sqrt>)
      y[i] = __builtin_sqrtf(x[i]);
    else
      y[i] = 1.0f / __builtin_sqrtf(x[i]);
  }
}

template <class Op, class V>
GB_ALWAYS_INLINE void run(const float* x, float* y, int64_t n) {
  if constexpr (std::is_same_v<Op, Sqrt> || std::is_same_v<Op, Rsqrt>)
    map_plain<V, Op>(x, y, n);
  else
    map<V, Op>(x, y, n);
}

template <class Op>
void run_baseline(const float* x, float* y, int64_t n) {
  run<Op, v4sf>(x, y, n);
}
template <class Op>
GB_TARGET_AVX2 void run_avx2(const float* x, float* y, int64_t n) {
  run<Op, v8sf>(x, y, n);
}
template <class Op>
GB_TARGET_AVX512 void run_avx512(const float* x, float* y, int64_t n) {
  run<Op, v16sf>(x, y, n);
}

template <class Op>
void apply(const float* x, float* y, int64_t n) {
  pick_isa(&run_baseline<Op>, &run_avx2<Op>, &run_avx512<Op>)(x, y, n);
}

}  // namespace

bool vec_available() { return true; }

bool vec_apply(VecOp op, const float* x, float* y, int64_t n) {
  switch (op) {
    case VecOp::none: return false;
    case VecOp::exp: apply<Exp>(x, y, n); break;
    case VecOp::expm1: apply<Expm1>(x, y, n); break;
    case VecOp::log: apply<Log>(x, y, n); break;
    case VecOp::log1p: apply<Log1p>(x, y, n); break;
    case VecOp::sin: apply<Sin>(x, y, n); break;
    case VecOp::cos: apply<Cos>(x, y, n); break;
    case VecOp::tanh: apply<Tanh>(x, y, n); break;
    case VecOp::erf: apply<Erf>(x, y, n); break;
    case VecOp::sqrt: apply<Sqrt>(x, y, n); break;
    case VecOp::rsqrt: apply<Rsqrt>(x, y, n); break;
    case VecOp::sigmoid: apply<Sigmoid>(x, y, n); break;
    case VecOp::silu: apply<Silu>(x, y, n); break;
    case VecOp::gelu: apply<Gelu>(x, y, n); break;
    case VecOp::gelu_tanh: apply<GeluTanh>(x, y, n); break;
  }
  return true;
}

bool vec_apply2(VecOp2 op, const float* g, const float* x, float* y, int64_t n) {
  switch (op) {
    case VecOp2::gelu_backward:
      pick_isa(&run2_baseline<GeluBackward>, &run2_avx2<GeluBackward>, &run2_avx512<GeluBackward>)(g, x, y, n);
      break;
    case VecOp2::gelu_tanh_backward:
      pick_isa(&run2_baseline<GeluTanhBackward>, &run2_avx2<GeluTanhBackward>, &run2_avx512<GeluTanhBackward>)(g, x, y,
                                                                                                               n);
      break;
  }
  return true;
}

}  // namespace gb::detail

#else  // no libmvec: the ops keep their scalar loops

namespace gb::detail {
bool vec_available() { return false; }
bool vec_apply(VecOp, const float*, float*, int64_t) { return false; }
bool vec_apply2(VecOp2, const float*, const float*, float*, int64_t) { return false; }
}  // namespace gb::detail

#endif
