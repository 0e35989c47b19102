// engine/cuda/batch_norm_cudnn.h — batch_norm's kernels on cuda, through cuDNN (internal; norm.cpp calls them for an
// input on cuda after its own checks), as PyTorch's cudnn_batch_norm: spatial mode over (N, C, *) seen as
// (N, C, S, 1); the parameters, running statistics and saved statistics in float32 (float64 for a float64 input);
// launched on the current stream, not waited for.
#pragma once

#include "glassbox/core/tensor.h"

namespace gb::detail {

// y = (x - mean) * rstd * w + b per channel. training: mean and rstd of this batch, written to save_mean/save_rstd,
// and running_mean/running_var (both defined or both undefined) moved toward the batch's mean and unbiased variance
// by `momentum`, in place; otherwise the running statistics normalize and nothing is saved. x and y contiguous in
// one floating dtype; w, b (defined), running and saved statistics contiguous (C) in the parameter type.
void cudnn_batch_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                              const Tensor& running_mean, const Tensor& running_var, bool training, double momentum,
                              double eps, const Tensor& save_mean, const Tensor& save_rstd);

// The training-mode gradients from gy (x's shape and dtype, contiguous) and the statistics the forward saved: gx, and
// gw, gb (C, parameter type; always written).
void cudnn_batch_norm_backward(const Tensor& x, const Tensor& gy, const Tensor& w, const Tensor& save_mean,
                               const Tensor& save_rstd, double eps, const Tensor& gx, const Tensor& gw,
                               const Tensor& gb);

}  // namespace gb::detail
