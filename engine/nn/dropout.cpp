// engine/nn/dropout.cpp — Dropout.
#include "glassbox/nn/modules/dropout.h"

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

}  // namespace gb::nn
