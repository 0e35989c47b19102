// engine/cuda/loss_ops.cpp — nll_loss's CUDA half (cuda/ops.h): the launch records of cuda/loss.cu's kernels. The
// targets stay on the device and are checked there (a bad one is raised at the next synchronization).
#include "cuda/loss_kernels.h"
#include "cuda/ops.h"

namespace gb::cuda_ops {
namespace {

cuda_kernels::NllLaunch nll_launch(const NllTargets& t, const Tensor& on) {
  cuda_kernels::NllLaunch l;
  l.device = int(on.device().index());
  l.dtype = on.scalar_type();
  l.B = t.B, l.C = t.C, l.S = t.S;
  l.ignore_index = t.ignore_index;
  l.target = t.target.data_ptr<int64_t>();
  l.weight = t.weight.defined() ? t.weight.data_ptr() : nullptr;
  return l;
}

}  // namespace

void nll_forward(const NllTargets& t, const Tensor& xc, const Tensor& loss, const Tensor& w) {
  cuda_kernels::NllLaunch l = nll_launch(t, xc);
  l.x = xc.data_ptr();
  l.loss = loss.data_ptr();
  l.w_out = w.data_ptr();
  cuda_kernels::nll_forward(l);
}

void nll_backward(const NllTargets& t, const Tensor& gc, bool g_scalar, const Tensor& divisor, const Tensor& gx,
                  bool compact) {
  cuda_kernels::NllLaunch l = nll_launch(t, gx);
  l.compact = compact;
  l.g = gc.data_ptr();
  l.g_scalar = g_scalar;
  l.divisor = divisor.defined() ? divisor.data_ptr() : nullptr;
  l.gx = gx.data_ptr();
  cuda_kernels::nll_backward(l);
}

}  // namespace gb::cuda_ops
