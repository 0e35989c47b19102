// engine/nn/linear.cpp — Linear and Identity.
#include "glassbox/nn/modules/linear.h"

#include <cmath>

#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/linalg.h"

namespace gb::nn {

LinearImpl::LinearImpl(const LinearOptions& options_) : options(options_) {
  GB_CHECK(options.in_features() >= 0 && options.out_features() >= 0,
           "Linear: in_features and out_features must be non-negative, got ", options.in_features(), " and ",
           options.out_features());
  weight = register_parameter("weight", gb::empty({options.out_features(), options.in_features()}));
  bias = register_parameter("bias", options.bias() ? gb::empty({options.out_features()}) : Tensor(), options.bias());
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::linear(input, weight, bias);
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "Linear(in_features=" << options.in_features()
         << ", out_features=" << options.out_features() << ", bias=" << options.bias() << ")";
}

Tensor IdentityImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return input;
}

void IdentityImpl::pretty_print(std::ostream& stream) const { stream << "Identity()"; }

}  // namespace gb::nn
