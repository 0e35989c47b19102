// engine/ops/vec_libm.h — float32 math over arrays in vector registers (internal; unary.cpp, activation.cpp).
//
// std::exp, std::tanh, std::erf, ... are scalar library calls: a loop over them runs one element at a time (exp on 4M
// floats took 7.8 ms, libtorch's vectorized SLEEF kernel 1.8 ms). glibc ships their vector forms, libmvec (4, 8 or
// 16 lanes per call for SSE, AVX2 and AVX-512; within 4 ulp of the correctly rounded result, NaN, +-Inf and +-0
// handled as the scalar functions do). vec_apply runs an op over an array through the libmvec entry points of the
// instruction set in effect (core/cpu_isa.h: GLASSBOX_CPU_CAPABILITY narrows it, tests switch it), and composes the
// activations from them in the same registers (sigmoid = 1 / (1 + exp(-x)), GELU from erf or tanh, SiLU). sqrt and
// rsqrt need no library: the loop is vectorized (this file compiles without math errno).
//
// A build without libmvec (GLASSBOX_HAS_LIBMVEC 0: not glibc 2.35+ on x86-64) has vec_available() false, and the
// ops keep their scalar loops.
#pragma once

#include <cstdint>

namespace gb::detail {

enum class VecOp : uint8_t {
  none,
  exp,
  expm1,
  log,
  log1p,
  sin,
  cos,
  tanh,
  erf,
  sqrt,
  rsqrt,
  sigmoid,    // 1 / (1 + exp(-x))
  silu,       // x / (1 + exp(-x))
  gelu,       // 0.5 x (1 + erf(x / sqrt 2))
  gelu_tanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
};

// Ops of two arrays: out = f(g, x).
enum class VecOp2 : uint8_t {
  gelu_backward,       // g * (Phi(x) + x phi(x)): GELU's gradient
  gelu_tanh_backward,  // g * d/dx of the tanh approximation
};

// True when this build has libmvec (the ops' vector path).
bool vec_available();

// y[i] = op(x[i]) for i in [0, n); x and y may be the same array (in place), otherwise must not overlap. False (and
// nothing written) when !vec_available() or op is none.
bool vec_apply(VecOp op, const float* x, float* y, int64_t n);

// y[i] = op(g[i], x[i]); y may be g or x. False (nothing written) when !vec_available().
bool vec_apply2(VecOp2 op, const float* g, const float* x, float* y, int64_t n);

}  // namespace gb::detail
