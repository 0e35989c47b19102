// engine/nn/dropout.cpp — Dropout.
#include "glassbox/nn/modules/dropout.h"

#include "glassbox/nn/functional.h"
#include "glassbox/ops/nn.h"

namespace gb::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options_) : options(options_) {
  GB_CHECK(options.p() >= 0 && options.p() <= 1, "dropout probability has to be between 0 and 1, but got ",
           options.p());
}

Tensor DropoutImpl::forward(Tensor input) {
  detail::ModuleCallScope scope(*this);
  if (options.inplace()) return gb::dropout_(input, options.p(), is_training());
  return gb::dropout(input, options.p(), is_training());
}

void DropoutImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "Dropout(p=" << options.p() << ", inplace=" << options.inplace() << ")";
}

namespace {
void check_p(double p) { GB_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p); }
}  // namespace

Dropout2dImpl::Dropout2dImpl(const Dropout2dOptions& options_) : options(options_) { check_p(options.p()); }
Tensor Dropout2dImpl::forward(Tensor input) {
  detail::ModuleCallScope scope(*this);
  return functional::dropout2d(
      input, functional::Dropout2dFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}
void Dropout2dImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "Dropout2d(p=" << options.p() << ", inplace=" << options.inplace() << ")";
}

Dropout3dImpl::Dropout3dImpl(const Dropout3dOptions& options_) : options(options_) { check_p(options.p()); }
Tensor Dropout3dImpl::forward(Tensor input) {
  detail::ModuleCallScope scope(*this);
  return functional::dropout3d(
      input, functional::Dropout3dFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}
void Dropout3dImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "Dropout3d(p=" << options.p() << ", inplace=" << options.inplace() << ")";
}

}  // namespace gb::nn
