// engine/nn/upsample.cpp — Upsample's forward (F::interpolate) and its printed form.
#include "glassbox/nn/modules/upsample.h"

#include "glassbox/nn/functional.h"

namespace gb::nn {

Tensor UpsampleImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return functional::interpolate(input, functional::InterpolateFuncOptions()
                                            .size(options.size())
                                            .scale_factor(options.scale_factor())
                                            .mode(options.mode())
                                            .align_corners(options.align_corners()));
}

void UpsampleImpl::pretty_print(std::ostream& stream) const {
  stream << "Upsample(";
  if (options.size()) {
    stream << "size=(";
    for (size_t i = 0; i < options.size()->size(); ++i) stream << (i ? ", " : "") << (*options.size())[i];
    stream << ")";
  } else if (options.scale_factor()) {
    stream << "scale_factor=(";
    for (size_t i = 0; i < options.scale_factor()->size(); ++i)
      stream << (i ? ", " : "") << (*options.scale_factor())[i];
    stream << ")";
  }
  stream << ", mode='" << options.mode().name() << "')";
}

}  // namespace gb::nn
