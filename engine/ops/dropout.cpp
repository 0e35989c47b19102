// engine/ops/dropout.cpp — dropout and dropout_: zero each element with probability p, scale the rest by 1/(1-p).
//
// The keep-mask is drawn serially from gb::default_generator() in row-major order of x's shape, so a seed gives
// the same mask on any thread count and for any strides of x. On cuda, mask and output come from one kernel
// (cuda/dropout.cu) drawing from the device's Philox generator (cuda/philox.h), the mask a function of the seed, the
// call's offset and the element's index. Backward (NativeDropoutBackward0) is g * mask * scale.
#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/core/generator.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "ops/inplace.h"
#include "ops/loops.h"

namespace gb {
namespace {

void check_p(double p, const char* op) {
  GB_CHECK(p >= 0 && p <= 1, op, ": dropout probability has to be between 0 and 1, but got ", p);
}

double keep_scale(double p) { return p < 1 ? 1.0 / (1.0 - p) : 0.0; }

// The cpu half of draw_mask: serial draws from the default generator.
void draw_mask_cpu(const Tensor& mask, double p) {
  Generator& gen = default_generator();
  const double q = 1.0 - p;
  detail::dispatch_floating(mask.scalar_type(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* m = mask.data_ptr<T>();
    const T one(1.0f), zero(0.0f);
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = gen.uniform_double() < q ? one : zero;
  });
}

// A contiguous tensor of the given shape, x's dtype and device, holding 1 where an element is kept (probability
// 1 - p), else 0.
Tensor draw_mask(const Tensor& x, double p, IntArrayRef sizes) {
  Tensor mask = detail::make_empty(sizes, x.scalar_type(), x.device());
  detail::run_kernel(
      mask, [&] { draw_mask_cpu(mask, p); }, [&] { cuda_ops::dropout_mask(mask, p); });
  return mask;  // meta: no draws (the generator does not advance)
}
Tensor draw_mask(const Tensor& x, double p) { return draw_mask(x, p, x.sizes()); }

// out = x * mask * scale, elementwise (out may be x itself).
void apply_mask(const Tensor& out, const Tensor& x, const Tensor& mask, double scale) {
  detail::run_kernel(
      out,
      [&] {
        detail::dispatch_floating(x.scalar_type(), "dropout", [&](auto tag) {
          using T = typename decltype(tag)::type;
          using M = opmath_t<T>;
          const M s = M(scale);
          detail::binary_loop<T, T, T>(out, x, mask, [s](T a, T m) { return T(M(a) * M(m) * s); });
        });
      },
      [&] {  // the pointwise kernels, written back
        NoGradGuard ng;
        detail::copy_into(out, x * mask * scale);
      });
}

void check_input(const Tensor& x, const char* op) {
  detail::check_defined(x, op);
  detail::check_device(x, op);
  GB_CHECK(x.is_floating_point(), op, ": expected a floating-point input, but got ", to_string(x.scalar_type()));
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool train) {
  check_p(p, "dropout");
  if (!train || p == 0) return x;  // PyTorch's CPU dropout returns its input then (no mask drawn, no generator use)
  detail::OpScope op_scope("dropout", {x});
  check_input(x, "dropout");
  const double scale = keep_scale(p);
  Tensor out = detail::make_empty(x.sizes(), x.scalar_type(), x.device());
  Tensor mask = detail::make_empty(x.sizes(), x.scalar_type(), x.device());
  detail::run_kernel(
      out,
      [&] {
        draw_mask_cpu(mask, p);
        apply_mask(out, x, mask, scale);
      },
      [&] { cuda_ops::dropout(x, p, mask, out); });  // mask and output in one kernel
  op_scope.set_output(out);
  if (autograd::needs_grad(x))
    autograd::record("NativeDropoutBackward0", {x}, out, {autograd::input(mask)},
                     [scale](autograd::BackwardContext& c) { return variable_list{c.grad() * c.saved(0) * scale}; });
  return out;
}

Tensor feature_dropout(const Tensor& x, double p, bool train) {
  check_p(p, "feature_dropout");
  if (!train || p == 0) return x;
  detail::OpScope op_scope("feature_dropout", {x});
  check_input(x, "feature_dropout");
  GB_CHECK(x.dim() >= 2, "feature_dropout: expected an input of at least 2 dims (N, C, ...), got a ", x.dim(),
           "-D input");
  std::vector<int64_t> shape(size_t(x.dim()), 1);
  shape[0] = x.size(0);
  shape[1] = x.size(1);
  Tensor noise = draw_mask(x, p, shape);  // one draw per (sample, channel), row-major
  Tensor out = x * noise.mul_(keep_scale(p));
  detail::op_output(out);
  return out;
}

Tensor& dropout_(Tensor& x, double p, bool train) {
  check_p(p, "dropout_");
  if (!train || p == 0) return x;
  check_input(x, "dropout_");
  return detail::apply_inplace(
      x, {}, false, false, "dropout_", [&](const Tensor& s) { return dropout(s, p, true); },
      [&](Tensor& s) { apply_mask(s, s, draw_mask(s, p), keep_scale(p)); });
}

}  // namespace gb
