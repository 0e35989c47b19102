// engine/nn/conv.cpp — Conv2d.
#include "glassbox/nn/modules/conv.h"

#include <cmath>

#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/shape.h"

namespace gb::nn {

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options_) : options(options_) {
  const auto& o = options;
  GB_CHECK(o.groups() > 0, "Conv2d: groups must be a positive integer, got ", o.groups());
  GB_CHECK(o.in_channels() % o.groups() == 0,
           "in_channels must be divisible by groups (Conv2d: in_channels=", o.in_channels(), ", groups=", o.groups(),
           ")");
  GB_CHECK(o.out_channels() % o.groups() == 0,
           "out_channels must be divisible by groups (Conv2d: out_channels=", o.out_channels(), ", groups=", o.groups(),
           ")");
  GB_CHECK(o.padding_mode() == "zeros", "Conv2d: padding_mode '", o.padding_mode(),
           "' is not supported; glassbox pads with zeros only. Pad the input yourself and use padding(0)");
  weight = register_parameter(
      "weight", gb::empty({o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()[0], o.kernel_size()[1]}));
  bias = register_parameter("bias", o.bias() ? gb::empty({o.out_channels()}) : Tensor(), o.bias());
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  GB_CHECK(input.dim() == 3 || input.dim() == 4,
           "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ", input.sizes());
  const auto& o = options;
  if (input.dim() == 3)
    return gb::conv2d(input.unsqueeze(0), weight, bias, o.stride(), o.padding(), o.dilation(), o.groups()).squeeze(0);
  return gb::conv2d(input, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
}

void Conv2dImpl::pretty_print(std::ostream& stream) const {
  const auto& o = options;
  auto arr = [&](const ExpandingArray<2>& a) { stream << "[" << a[0] << ", " << a[1] << "]"; };
  stream << std::boolalpha << "Conv2d(" << o.in_channels() << ", " << o.out_channels() << ", kernel_size=";
  arr(o.kernel_size());
  stream << ", stride=";
  arr(o.stride());
  if (o.padding()[0] != 0 || o.padding()[1] != 0) {
    stream << ", padding=";
    arr(o.padding());
  }
  if (o.dilation()[0] != 1 || o.dilation()[1] != 1) {
    stream << ", dilation=";
    arr(o.dilation());
  }
  if (o.groups() != 1) stream << ", groups=" << o.groups();
  if (!o.bias()) stream << ", bias=false";
  stream << ")";
}

}  // namespace gb::nn
