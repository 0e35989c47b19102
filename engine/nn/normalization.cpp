// engine/nn/normalization.cpp — LayerNorm and GroupNorm.
#include "glassbox/nn/modules/normalization.h"

#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"

namespace gb::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options_) : options(options_) {
  const bool affine = options.elementwise_affine();
  weight = register_parameter("weight", affine ? gb::empty(options.normalized_shape()) : Tensor(), affine);
  bias = register_parameter("bias", affine ? gb::empty(options.normalized_shape()) : Tensor(), affine);
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "LayerNorm([";
  const auto& s = options.normalized_shape();
  for (size_t i = 0; i < s.size(); ++i) stream << (i ? ", " : "") << s[i];
  stream << "], eps=" << options.eps() << ", elementwise_affine=" << options.elementwise_affine() << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options_) : options(options_) {
  GB_CHECK(options.num_groups() > 0, "GroupNorm: num_groups must be positive, got ", options.num_groups());
  GB_CHECK(options.num_channels() % options.num_groups() == 0, "num_channels must be divisible by num_groups (got ",
           options.num_channels(), " channels and ", options.num_groups(), " groups)");
  const bool affine = options.affine();
  weight = register_parameter("weight", affine ? gb::empty({options.num_channels()}) : Tensor(), affine);
  bias = register_parameter("bias", affine ? gb::empty({options.num_channels()}) : Tensor(), affine);
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::group_norm(input, options.num_groups(), weight, bias, options.eps());
}

void GroupNormImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "GroupNorm(" << options.num_groups() << ", " << options.num_channels()
         << ", eps=" << options.eps() << ", affine=" << options.affine() << ")";
}

}  // namespace gb::nn
