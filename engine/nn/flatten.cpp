// engine/nn/flatten.cpp — Flatten.
#include "glassbox/nn/modules/flatten.h"

#include "glassbox/ops/shape.h"

namespace gb::nn {

Tensor FlattenImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::flatten(input, options.start_dim(), options.end_dim());
}

void FlattenImpl::pretty_print(std::ostream& stream) const {
  stream << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

}  // namespace gb::nn
