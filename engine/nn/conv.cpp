// engine/nn/conv.cpp — Conv2d, Conv1d and ConvTranspose2d.
#include "glassbox/nn/modules/conv.h"

#include <cmath>
#include <vector>

#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/shape.h"

namespace gb::nn {

namespace {

// The checks every convolution's options get, named after the layer.
void check_options(const char* layer, int64_t in, int64_t out, int64_t groups, const EnumValue& padding_mode) {
  GB_CHECK(groups > 0, layer, ": groups must be a positive integer, got ", groups);
  GB_CHECK(in % groups == 0, "in_channels must be divisible by groups (", layer, ": in_channels=", in, ", groups=",
           groups, ")");
  GB_CHECK(out % groups == 0, "out_channels must be divisible by groups (", layer, ": out_channels=", out,
           ", groups=", groups, ")");
  GB_CHECK(padding_mode == "zeros", layer, ": padding_mode '", padding_mode,
           "' is not supported; glassbox pads with zeros only. Pad the input yourself and use padding(0)");
}

// PyTorch's default init of a convolution: weight kaiming_uniform_(a=sqrt(5)), bias U(+-1/sqrt(fan_in)).
void reset_conv(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

// libtorch's repr: "Conv2d(3, 16, kernel_size=[3, 3], stride=[1, 1]" then what differs from the defaults, ")".
template <size_t D, typename O>
void print_conv(std::ostream& stream, const char* name, const O& o) {
  auto arr = [&](const ExpandingArray<D>& a) {
    stream << "[";
    for (size_t i = 0; i < D; ++i) stream << (i ? ", " : "") << a[i];
    stream << "]";
  };
  auto all = [](const ExpandingArray<D>& a, int64_t v) {
    for (size_t i = 0; i < D; ++i)
      if (a[i] != v) return false;
    return true;
  };
  stream << std::boolalpha << name << "(" << o.in_channels() << ", " << o.out_channels() << ", kernel_size=";
  arr(o.kernel_size());
  stream << ", stride=";
  arr(o.stride());
  if (!all(o.padding(), 0)) {
    stream << ", padding=";
    arr(o.padding());
  }
  if constexpr (requires { o.output_padding(); }) {
    if (!all(o.output_padding(), 0)) {
      stream << ", output_padding=";
      arr(o.output_padding());
    }
  }
  if (!all(o.dilation(), 1)) {
    stream << ", dilation=";
    arr(o.dilation());
  }
  if (o.groups() != 1) stream << ", groups=" << o.groups();
  if (!o.bias()) stream << ", bias=false";
  stream << ")";
}

}  // namespace

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options_) : options(options_) {
  const auto& o = options;
  check_options("Conv2d", o.in_channels(), o.out_channels(), o.groups(), o.padding_mode());
  weight = register_parameter(
      "weight", gb::empty({o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()[0], o.kernel_size()[1]}));
  bias = register_parameter("bias", o.bias() ? gb::empty({o.out_channels()}) : Tensor(), o.bias());
  reset_parameters();
}

void Conv2dImpl::reset_parameters() { reset_conv(weight, bias); }

Tensor Conv2dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  GB_CHECK(input.dim() == 3 || input.dim() == 4,
           "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ", input.sizes());
  const auto& o = options;
  if (input.dim() == 3)
    return gb::conv2d(input.unsqueeze(0), weight, bias, o.stride(), o.padding(), o.dilation(), o.groups()).squeeze(0);
  return gb::conv2d(input, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
}

void Conv2dImpl::pretty_print(std::ostream& stream) const { print_conv<2>(stream, "Conv2d", options); }

Conv1dImpl::Conv1dImpl(const Conv1dOptions& options_) : options(options_) {
  const auto& o = options;
  check_options("Conv1d", o.in_channels(), o.out_channels(), o.groups(), o.padding_mode());
  weight = register_parameter("weight", gb::empty({o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()[0]}));
  bias = register_parameter("bias", o.bias() ? gb::empty({o.out_channels()}) : Tensor(), o.bias());
  reset_parameters();
}

void Conv1dImpl::reset_parameters() { reset_conv(weight, bias); }

Tensor Conv1dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  GB_CHECK(input.dim() == 2 || input.dim() == 3,
           "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: ", input.sizes());
  const auto& o = options;
  // conv2d over a (1, L) image: the weight viewed as (C_out, C_in/groups, 1, k)
  return gb::conv2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, {1, o.stride()[0]}, {0, o.padding()[0]},
                    {1, o.dilation()[0]}, o.groups())
      .squeeze(-2);
}

void Conv1dImpl::pretty_print(std::ostream& stream) const { print_conv<1>(stream, "Conv1d", options); }

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options_) : options(options_) {
  const auto& o = options;
  check_options("ConvTranspose2d", o.in_channels(), o.out_channels(), o.groups(), o.padding_mode());
  weight = register_parameter(
      "weight", gb::empty({o.in_channels(), o.out_channels() / o.groups(), o.kernel_size()[0], o.kernel_size()[1]}));
  bias = register_parameter("bias", o.bias() ? gb::empty({o.out_channels()}) : Tensor(), o.bias());
  reset_parameters();
}

void ConvTranspose2dImpl::reset_parameters() { reset_conv(weight, bias); }

Tensor ConvTranspose2dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  detail::ModuleCallScope scope(*this);
  GB_CHECK(input.dim() == 3 || input.dim() == 4,
           "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: ", input.sizes());
  const auto& o = options;
  std::vector<int64_t> out_pad = {o.output_padding()[0], o.output_padding()[1]};
  if (output_size) {
    // PyTorch's _output_padding: the requested size minus the smallest one, which must be below stride.
    IntArrayRef size = *output_size;
    GB_CHECK(size.size() == 2 || size.size() == size_t(input.dim()), "ConvTranspose2d: output_size must have 2 or ",
             input.dim(), " elements (got ", size.size(), ")");
    for (int i = 0; i < 2; ++i) {
      const int64_t in = input.size(input.dim() - 2 + i), want = size[size.size() - 2 + i];
      const int64_t min_size =
          (in - 1) * o.stride()[i] - 2 * o.padding()[i] + o.dilation()[i] * (o.kernel_size()[i] - 1) + 1;
      const int64_t max_size = min_size + o.stride()[i] - 1;
      GB_CHECK(want >= min_size && want <= max_size, "requested an output size of ", size,
               ", but valid sizes range from ", min_size, " to ", max_size, " (for an input of ", input.sizes(), ")");
      out_pad[size_t(i)] = want - min_size;
    }
  }
  return gb::conv_transpose2d(input, weight, bias, o.stride(), o.padding(), out_pad, o.groups(), o.dilation());
}

void ConvTranspose2dImpl::pretty_print(std::ostream& stream) const {
  print_conv<2>(stream, "ConvTranspose2d", options);
}

}  // namespace gb::nn
