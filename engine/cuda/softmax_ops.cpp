// engine/cuda/softmax_ops.cpp — softmax's and log_softmax's CUDA half (cuda/ops.h): over the last dim one fused
// kernel per pass (cuda/softmax.cu); over another dim composed of the CUDA kernels (amax, sub, exp, sum, div, log),
// in float for the 16-bit dtypes as on the CPU, without autograd (the op records its own node).
#include "core/make.h"
#include "cuda/ops.h"
#include "cuda/softmax_kernels.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"

namespace gb::cuda_ops {
namespace {

// The launch record of softmax.cu's kernels for rows of len elements of t's dtype on t's device.
cuda_kernels::SoftmaxLaunch row_launch(const Tensor& t, int64_t len, bool log) {
  cuda_kernels::SoftmaxLaunch l;
  l.device = int(t.device().index());
  l.dtype = t.scalar_type();
  l.len = len;
  l.rows = len ? t.numel() / len : 0;
  l.log = log;
  return l;
}

}  // namespace

Tensor softmax(const Tensor& in, int64_t dim, bool log) {
  if (in.numel() == 0) return detail::make_empty_like(in);
  if (in.dim() == 0) return softmax(in.reshape({1}), 0, log).reshape({});
  NoGradGuard ng;
  if (dim == in.dim() - 1) {
    Tensor x = detail::shallow_alias(in).contiguous();
    Tensor out = detail::make_empty(in.sizes(), in.scalar_type(), in.device());
    cuda_kernels::SoftmaxLaunch l = row_launch(x, x.size(dim), log);
    l.in = static_cast<const char*>(x.data_ptr());
    l.out = static_cast<char*>(out.data_ptr());
    cuda_kernels::softmax_forward(l);
    return out;
  }
  const bool narrow = in.scalar_type() == kHalf || in.scalar_type() == kBFloat16;
  Tensor x = narrow ? in.to(kFloat) : in;
  Tensor z = x - x.amax({dim}, true);  // a NaN in the row makes the row NaN, as on the CPU
  Tensor out;
  if (log) {
    out = z - z.exp().sum({dim}, true).log();
  } else {
    Tensor e = z.exp();
    out = e / e.sum({dim}, true);
  }
  return narrow ? out.to(in.scalar_type()) : out;
}

void softmax_backward(const Tensor& g, const Tensor& y, const Tensor& out, bool log, const Tensor& onehot_target) {
  Tensor gc = detail::shallow_alias(g).contiguous(), yc = detail::shallow_alias(y).contiguous();
  cuda_kernels::SoftmaxLaunch l = row_launch(yc, yc.size(yc.dim() - 1), log);
  l.in = static_cast<const char*>(gc.data_ptr());
  l.out_fwd = static_cast<const char*>(yc.data_ptr());
  l.out = static_cast<char*>(out.data_ptr());
  if (onehot_target.defined()) l.onehot_target = onehot_target.data_ptr<int64_t>();
  cuda_kernels::softmax_backward(l);
}

}  // namespace gb::cuda_ops
