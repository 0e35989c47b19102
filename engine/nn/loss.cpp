// engine/nn/loss.cpp — the loss modules: each forward is its function with the module's options and buffers.
#include "glassbox/nn/modules/loss.h"

#include "glassbox/nn/functional.h"
#include "glassbox/ops/nn.h"

namespace gb::nn {

L1LossImpl::L1LossImpl(const L1LossOptions& options_) : options(options_) {}

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::l1_loss(input, target, options.reduction());
}

void L1LossImpl::pretty_print(std::ostream& stream) const { stream << "L1Loss()"; }

MSELossImpl::MSELossImpl(const MSELossOptions& options_) : options(options_) {}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::mse_loss(input, target, options.reduction());
}

void MSELossImpl::pretty_print(std::ostream& stream) const { stream << "MSELoss()"; }

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& options_) : options(options_) {}

Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::smooth_l1_loss(input, target, options.reduction(), options.beta());
}

void SmoothL1LossImpl::pretty_print(std::ostream& stream) const { stream << "SmoothL1Loss()"; }

HuberLossImpl::HuberLossImpl(const HuberLossOptions& options_) : options(options_) {}

Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::huber_loss(input, target, options.reduction(), options.delta());
}

void HuberLossImpl::pretty_print(std::ostream& stream) const { stream << "HuberLoss()"; }

KLDivLossImpl::KLDivLossImpl(const KLDivLossOptions& options_) : options(options_) {}

Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return functional::kl_div(input, target, options);
}

void KLDivLossImpl::pretty_print(std::ostream& stream) const { stream << "KLDivLoss()"; }

BCELossImpl::BCELossImpl(const BCELossOptions& options_) : options(options_) {
  weight = register_buffer("weight", options.weight());
}

Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::binary_cross_entropy(input, target, weight, options.reduction());
}

void BCELossImpl::pretty_print(std::ostream& stream) const { stream << "BCELoss()"; }

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options_) : options(options_) {
  weight = register_buffer("weight", options.weight());
  pos_weight = register_buffer("pos_weight", options.pos_weight());
}

Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::binary_cross_entropy_with_logits(input, target, weight, pos_weight, options.reduction());
}

void BCEWithLogitsLossImpl::pretty_print(std::ostream& stream) const { stream << "BCEWithLogitsLoss()"; }

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options_) : options(options_) {
  weight = register_buffer("weight", options.weight());
}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::nll_loss(input, target, weight, options.reduction(), options.ignore_index());
}

void NLLLossImpl::pretty_print(std::ostream& stream) const { stream << "NLLLoss()"; }

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options_) : options(options_) {
  weight = register_buffer("weight", options.weight());
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  detail::ModuleCallScope scope(*this);
  return gb::cross_entropy(input, target, weight, options.reduction(), options.ignore_index(),
                           options.label_smoothing());
}

void CrossEntropyLossImpl::pretty_print(std::ostream& stream) const { stream << "CrossEntropyLoss()"; }

}  // namespace gb::nn
