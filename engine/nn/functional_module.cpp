// engine/nn/functional_module.cpp — Functional (glassbox/nn/modules/functional.h).
#include "glassbox/nn/modules/functional.h"

namespace gb::nn {

FunctionalImpl::FunctionalImpl(Function function) : function_(std::move(function)) {
  GB_CHECK(function_ != nullptr, "Functional: the function is empty; give a function Tensor(Tensor)");
}

Tensor FunctionalImpl::forward(Tensor input) {
  detail::ModuleCallScope scope(*this);
  return function_(std::move(input));
}

void FunctionalImpl::pretty_print(std::ostream& stream) const { stream << "Functional()"; }

std::shared_ptr<Module> FunctionalImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<FunctionalImpl>(function_);
  copy->copy_state_from(*this, device, /*recurse=*/false);
  return copy;
}

}  // namespace gb::nn
