// engine/nn/pooling.cpp — the pooling layers (glassbox/nn/modules/pooling.h).
#include "glassbox/nn/modules/pooling.h"

#include "glassbox/ops/nn.h"

namespace gb::nn {
namespace {

template <size_t N>
void print_array(std::ostream& s, const ExpandingArray<N>& a) {
  s << "[";
  for (size_t i = 0; i < N; ++i) s << (i ? ", " : "") << a[i];
  s << "]";
}

// "Name(kernel_size=[..], stride=[..], padding=[..]", then dilation and ceil_mode for max pooling's options, ")".
template <size_t N, typename O>
void print_pool(std::ostream& s, const char* name, const O& o) {
  s << std::boolalpha << name << "(kernel_size=";
  print_array<N>(s, o.kernel_size());
  s << ", stride=";
  print_array<N>(s, o.stride());
  s << ", padding=";
  print_array<N>(s, o.padding());
  if constexpr (requires { o.dilation(); }) {
    s << ", dilation=";
    print_array<N>(s, o.dilation());
    s << ", ceil_mode=" << o.ceil_mode();
  }
  s << ")";
}

// A 1-D layer's input as the 2-D op's: (N, C, L) -> (N, C, 1, L), (C, L) -> (C, 1, L).
Tensor as_2d(const Tensor& x, const char* name) {
  GB_CHECK(x.defined() && (x.dim() == 2 || x.dim() == 3), name, ": Expected 2D (C, L) or 3D (N, C, L) input, got ",
           x.defined() ? std::to_string(x.dim()) + "D" : std::string("an undefined tensor"));
  return x.unsqueeze(-2);
}

}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return functional::max_pool2d(input, options);
}
void MaxPool2dImpl::pretty_print(std::ostream& s) const { print_pool<2>(s, "MaxPool2d", options); }

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return functional::avg_pool2d(input, options);
}
void AvgPool2dImpl::pretty_print(std::ostream& s) const { print_pool<2>(s, "AvgPool2d", options); }

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return functional::adaptive_avg_pool2d(input, options);
}
void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& s) const {
  s << "AdaptiveAvgPool2d(output_size=";
  print_array(s, options.output_size());
  s << ")";
}

Tensor MaxPool1dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  const auto& o = options;
  return gb::max_pool2d(as_2d(input, "MaxPool1d"), {1, o.kernel_size()[0]}, {1, o.stride()[0]}, {0, o.padding()[0]},
                        {1, o.dilation()[0]}, o.ceil_mode())
      .squeeze(-2);
}
void MaxPool1dImpl::pretty_print(std::ostream& s) const { print_pool<1>(s, "MaxPool1d", options); }

Tensor AvgPool1dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  const auto& o = options;
  return gb::avg_pool2d(as_2d(input, "AvgPool1d"), {1, o.kernel_size()[0]}, {1, o.stride()[0]}, {0, o.padding()[0]},
                        o.ceil_mode(), o.count_include_pad())
      .squeeze(-2);
}
void AvgPool1dImpl::pretty_print(std::ostream& s) const { print_pool<1>(s, "AvgPool1d", options); }

Tensor AdaptiveAvgPool1dImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::adaptive_avg_pool2d(as_2d(input, "AdaptiveAvgPool1d"), {1, options.output_size()[0]}).squeeze(-2);
}
void AdaptiveAvgPool1dImpl::pretty_print(std::ostream& s) const {
  s << "AdaptiveAvgPool1d(output_size=";
  print_array(s, options.output_size());
  s << ")";
}

}  // namespace gb::nn
