// engine/cuda/pool_ops.cpp — the pooling family's CUDA half (cuda/ops.h): the launch records of cuda/pool.cu's
// kernels from the plane geometry the op entry computed (ops/pool_geom.h).
#include "cuda/kernels.h"
#include "cuda/ops.h"

namespace gb::cuda_ops {
namespace {

cuda_kernels::MaxPoolLaunch max_launch(const detail::PlaneDims& d, const Tensor& out, int64_t planes) {
  cuda_kernels::MaxPoolLaunch l;
  l.device = int(out.device().index());
  l.dtype = out.scalar_type();
  l.planes = planes;
  l.H = d.H, l.W = d.W, l.Ho = d.Ho, l.Wo = d.Wo;
  l.kH = d.k[0], l.kW = d.k[1], l.sH = d.s[0], l.sW = d.s[1], l.pH = d.p[0], l.pW = d.p[1], l.dH = d.dil[0],
  l.dW = d.dil[1];
  return l;
}

int64_t planes_of(const Tensor& t, int64_t plane) { return plane ? t.numel() / plane : 0; }

}  // namespace

void max_pool2d(const Tensor& in, const detail::PlaneDims& d, const Tensor& out, const Tensor& idx) {
  cuda_kernels::MaxPoolLaunch l = max_launch(d, out, planes_of(out, d.Ho * d.Wo));
  l.in = static_cast<const char*>(in.data_ptr()), l.out = static_cast<char*>(out.data_ptr());
  l.idx = idx.data_ptr<int64_t>();
  cuda_kernels::max_pool2d_forward(l);
}

void max_pool2d_backward(const Tensor& g, const Tensor& idx, const detail::PlaneDims& d, const Tensor& out) {
  cuda_kernels::MaxPoolLaunch l = max_launch(d, out, planes_of(out, d.H * d.W));
  l.in = static_cast<const char*>(g.data_ptr()), l.out = static_cast<char*>(out.data_ptr());
  l.idx = idx.data_ptr<int64_t>();
  cuda_kernels::max_pool2d_backward(l);
}

void max_pool2d_gather(const Tensor& src, const Tensor& idx, const detail::PlaneDims& d, const Tensor& out) {
  cuda_kernels::MaxPoolLaunch l = max_launch(d, out, planes_of(out, d.Ho * d.Wo));
  l.in = static_cast<const char*>(src.data_ptr()), l.out = static_cast<char*>(out.data_ptr());
  l.idx = idx.data_ptr<int64_t>();
  cuda_kernels::max_pool2d_gather(l);
}

void window_mean(const Tensor& in, const detail::PlaneDims& d, const detail::MeanRule& rule, const Tensor& out,
                 bool adjoint) {
  cuda_kernels::WindowMeanLaunch l;
  l.device = int(out.device().index());
  l.dtype = out.scalar_type();
  l.planes = planes_of(out, adjoint ? d.H * d.W : d.Ho * d.Wo);
  l.H = d.H, l.W = d.W, l.Ho = d.Ho, l.Wo = d.Wo;
  l.adaptive = rule.adaptive;
  l.kH = d.k[0], l.kW = d.k[1], l.sH = d.s[0], l.sW = d.s[1], l.pH = d.p[0], l.pW = d.p[1];
  l.count_include_pad = rule.count_include_pad;
  l.divisor_override = rule.divisor_override;
  l.in = static_cast<const char*>(in.data_ptr());
  l.out = static_cast<char*>(out.data_ptr());
  (adjoint ? cuda_kernels::window_mean_backward : cuda_kernels::window_mean_forward)(l);
}

}  // namespace gb::cuda_ops
