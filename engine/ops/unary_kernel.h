// engine/ops/unary_kernel.h — the kernels unary.cpp and activation.cpp share (internal): a floating op f(x) into a new
// tensor or in place, a numeric (integer-capable) op, and their dtype rules. f is a generic lambda called in opmath
// (float for the 16-bit floats), so the contiguous case is a plain pointer loop in loops.h. On cuda:N the kernel
// named by `cuda` runs instead (cuda/launch.h; by default the one of the op's name, when there is one), on meta none
// (core/device_kernel.h's run_kernel chooses). The kernels open no op scope: the public
// op does (around its autograd::record too), and the kernels hand it their result (op_output).
#pragma once

#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/launch.h"
#include "glassbox/core/tensor_options.h"
#include "ops/loops.h"
#include "ops/vec_libm.h"

namespace gb::detail {

// The dtype a floating op returns: the input's when floating, else the default float dtype (exp(int) is float).
inline ScalarType float_result_type(const Tensor& a) {
  return is_floating_point(a.scalar_type()) ? a.scalar_type() : get_default_dtype();
}

// Whether t can be an operand of vec_libm.h's path for a result `out`: float32 on the cpu, of out's shape (no
// broadcasting), and libmvec in the build.
inline bool vec_operand(const Tensor& t, const Tensor& out) {
  return t.scalar_type() == kFloat && t.device().is_cpu() && t.sizes() == out.sizes() && vec_available();
}

// Runs vec over the strided runs of `loop` (operand 0 the output, then `inputs` inputs): a run of unit strides
// directly, any other through a small buffer (an LSTM's gate chunks, a transposed view), split across the pool as
// the strided loops are.
template <int inputs, typename Apply>
void vec_strided(const StridedLoop& loop, const Apply& apply) {
  loop.run_parallel([&](char** p, const int64_t* s, int64_t n) {
    bool unit = true;
    for (int t = 0; t <= inputs; ++t) unit = unit && s[t] == int64_t(sizeof(float));
    if (unit) {
      apply(reinterpret_cast<const float*>(p[1]), inputs == 2 ? reinterpret_cast<const float*>(p[2]) : nullptr,
            reinterpret_cast<float*>(p[0]), n);
      return;
    }
    constexpr int64_t kChunk = 256;
    float in[inputs][kChunk], res[kChunk];
    for (int64_t b = 0; b < n; b += kChunk) {
      const int64_t m = std::min(kChunk, n - b);
      for (int t = 0; t < inputs; ++t)
        for (int64_t i = 0; i < m; ++i) in[t][i] = *reinterpret_cast<const float*>(p[t + 1] + (b + i) * s[t + 1]);
      apply(in[0], inputs == 2 ? in[inputs - 1] : nullptr, res, m);
      for (int64_t i = 0; i < m; ++i) *reinterpret_cast<float*>(p[0] + (b + i) * s[0]) = res[i];
    }
  });
}

// out = vec(a) through vec_libm.h when both operands can be one (out may be a): contiguous ones in one pass split
// across the pool, strided ones run by run. False: the caller's scalar loop runs.
inline bool unary_vec_kernel(const Tensor& out, const Tensor& a, VecOp vec) {
  if (vec == VecOp::none || !vec_operand(out, out) || !vec_operand(a, out)) return false;
  if (out.is_contiguous() && a.is_contiguous()) {
    const float* x = static_cast<const float*>(a.data_ptr());
    float* y = static_cast<float*>(out.data_ptr());
    parallel_for(0, out.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) { vec_apply(vec, x + b, y + b, e - b); });
    return true;
  }
  vec_strided<1>(StridedLoop(out, {&a}),
                 [&](const float* x, const float*, float* y, int64_t n) { vec_apply(vec, x, y, n); });
  return true;
}

// out = vec(g, x) the same way.
inline bool binary_vec_kernel(const Tensor& out, const Tensor& g, const Tensor& x, VecOp2 vec) {
  if (!vec_operand(out, out) || !vec_operand(g, out) || !vec_operand(x, out)) return false;
  if (out.is_contiguous() && g.is_contiguous() && x.is_contiguous()) {
    const float* gp = static_cast<const float*>(g.data_ptr());
    const float* xp = static_cast<const float*>(x.data_ptr());
    float* y = static_cast<float*>(out.data_ptr());
    parallel_for(0, out.numel(), kElementwiseGrain,
                 [&](int64_t b, int64_t e) { vec_apply2(vec, gp + b, xp + b, y + b, e - b); });
    return true;
  }
  vec_strided<2>(StridedLoop(out, {&g, &x}),
                 [&](const float* gp, const float* xp, float* y, int64_t n) { vec_apply2(vec, gp, xp, y, n); });
  return true;
}

// out = f(a) in opmath for a floating op, a of out's shape and floating dtype (out may be a: in place): vec_libm.h's
// `vec` where it applies, else the cpu loop; on cuda:N the kernel `cuda`; nothing on meta.
template <typename F>
void unary_float_into(const Tensor& out, const Tensor& a, const char* op, const F& f, CudaOp cuda, VecOp vec) {
  run_kernel(
      out,
      [&] {
        if (unary_vec_kernel(out, a, vec)) return;
        dispatch_floating(out.scalar_type(), op, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using M = opmath_t<T>;
          unary_loop<T, T>(out, a, [&](T x) { return T(f(M(x))); });
        });
      },
      [&] { cuda_pointwise(op, cuda, out, {&a}, out.scalar_type()); });
}

// out = f(a) in opmath for an op defined on integers too, a of out's shape and dtype (out may be a); bool is refused
// on every device.
template <typename F>
void unary_numeric_into(const Tensor& out, const Tensor& a, const char* op, const F& f, CudaOp cuda) {
  const ScalarType t = out.scalar_type();
  dispatch_numeric(t, op, [](auto) {});  // the dtype check on every device
  run_kernel(
      out,
      [&] {
        dispatch_numeric(t, op, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using M = opmath_t<T>;
          unary_loop<T, T>(out, a, [&](T x) { return T(f(M(x))); });
        });
      },
      [&] { cuda_pointwise(op, cuda, out, {&a}, t); });
}

// out = f(a) for floating ops; integer and bool inputs are converted to the default float dtype first. `vec`: the
// same function in vec_libm.h, which float32 contiguous tensors run instead (within a few ulp of f).
template <typename F>
Tensor unary_float_kernel(const Tensor& a, const char* op, const F& f, CudaOp cuda = {}, VecOp vec = VecOp::none) {
  check_device(a, op, "self");
  ScalarType rt = float_result_type(a);
  Tensor aa = a.scalar_type() == rt ? a : shallow_alias(a).to(rt);
  Tensor out = make_empty(a.sizes(), rt, a.device());
  unary_float_into(out, aa, op, f, cuda, vec);
  op_output(out);
  return out;
}

// out = f(a) in a's own dtype, for ops defined on integers too (neg, abs, relu, ...); bool is refused.
template <typename F>
Tensor unary_numeric_kernel(const Tensor& a, const char* op, const F& f, CudaOp cuda = {}) {
  check_device(a, op, "self");
  Tensor out = make_empty(a.sizes(), a.scalar_type(), a.device());
  unary_numeric_into(out, a, op, f, cuda);
  op_output(out);
  return out;
}

// self = f(self) without autograd (the `raw` half of apply_inplace). Floating ops cannot write an integer self.
template <typename F>
void unary_float_inplace_raw(Tensor& self, const char* op, const F& f, CudaOp cuda = {}, VecOp vec = VecOp::none) {
  check_device(self, op, "self");
  GB_CHECK(is_floating_point(self.scalar_type()), op, ": result type Float can't be cast to the desired output type ",
           to_string(self.scalar_type()), " (a tensor of shape ", self.sizes(), "); use the out-of-place op, or ",
           ".to(gb::kFloat) first");
  unary_float_into(self, self, op, f, cuda, vec);
}

template <typename F>
void unary_numeric_inplace_raw(Tensor& self, const char* op, const F& f, CudaOp cuda = {}) {
  check_device(self, op, "self");
  unary_numeric_into(self, self, op, f, cuda);
}

}  // namespace gb::detail
