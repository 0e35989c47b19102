// engine/nn/batchnorm.cpp — BatchNorm1d/2d: buffers and their updates around the batch_norm op.
#include "glassbox/nn/modules/batchnorm.h"

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"

namespace gb::nn {
namespace detail {

BatchNormImplBase::BatchNormImplBase(const BatchNormOptions& options_) : options(options_) {
  const int64_t C = options.num_features();
  GB_CHECK(C > 0, "BatchNorm: num_features must be positive, got ", C);
  weight = register_parameter("weight", options.affine() ? gb::empty({C}) : Tensor(), options.affine());
  bias = register_parameter("bias", options.affine() ? gb::empty({C}) : Tensor(), options.affine());
  const bool track = options.track_running_stats();
  running_mean = register_buffer("running_mean", track ? gb::zeros({C}) : Tensor());
  running_var = register_buffer("running_var", track ? gb::ones({C}) : Tensor());
  num_batches_tracked = register_buffer("num_batches_tracked", track ? gb::tensor(int64_t(0)) : Tensor());
  reset_parameters();
}

void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNormImplBase::forward(const Tensor& input) {
  ModuleCallScope scope(*this);
  check_input_dim(input);
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    {
      NoGradGuard guard;
      num_batches_tracked.add_(1);
    }
    if (!options.momentum()) factor = 1.0 / double(num_batches_tracked.item<int64_t>());
  }
  // Batch statistics in training, and in eval when no running statistics are tracked.
  const bool use_batch_stats = is_training() || !running_mean.defined();
  // Running statistics are updated only while training (an eval call with untracked stats passes none).
  const bool pass_stats = !use_batch_stats || is_training();
  return gb::batch_norm(input, weight, bias, pass_stats ? running_mean : Tensor(), pass_stats ? running_var : Tensor(),
                        use_batch_stats, factor, options.eps());
}

void BatchNormImplBase::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << name() << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum())
    stream << *options.momentum();
  else
    stream << "None";
  stream << ", affine=" << options.affine() << ", track_running_stats=" << options.track_running_stats() << ")";
}

}  // namespace detail

void BatchNorm1dImpl::check_input_dim(const Tensor& input) const {
  GB_CHECK(input.dim() == 2 || input.dim() == 3, "expected 2D or 3D input (got ", input.dim(), "D input)");
}

void BatchNorm2dImpl::check_input_dim(const Tensor& input) const {
  GB_CHECK(input.dim() == 4, "expected 4D input (got ", input.dim(), "D input)");
}

}  // namespace gb::nn
