// engine/cuda/norm_ops.cpp — layer_norm's and group_norm's forward on cuda (cuda/ops.h): cuda/norm.cu's row kernel.
// batch_norm's CUDA half is cuDNN's (cuda/batch_norm_cudnn.h).
#include "cuda/kernels.h"
#include "cuda/ops.h"
#include "ops/nn_util.h"

namespace gb::cuda_ops {

void row_norm(const Tensor& xc, const Tensor& weight, const Tensor& bias, int64_t rows, int64_t len, int64_t groups,
              int64_t S, double eps, const Tensor& mean, const Tensor& rstd, const Tensor& out) {
  const ScalarType ct = xc.scalar_type();
  Tensor wc = weight.defined() ? detail::raw_contiguous(weight, ct) : Tensor();
  Tensor bc = bias.defined() ? detail::raw_contiguous(bias, ct) : Tensor();
  auto in = [](const Tensor& t) { return t.defined() ? static_cast<const char*>(t.data_ptr()) : nullptr; };
  cuda_kernels::RowNormLaunch l;
  l.device = int(xc.device().index());
  l.dtype = ct;
  l.rows = rows, l.len = len, l.groups = groups, l.S = S, l.eps = eps;
  l.x = in(xc), l.w = in(wc), l.b = in(bc);
  l.y = static_cast<char*>(out.data_ptr());
  l.mean = static_cast<char*>(mean.data_ptr());
  l.rstd = static_cast<char*>(rstd.data_ptr());
  cuda_kernels::row_norm_forward(l);
}

}  // namespace gb::cuda_ops
