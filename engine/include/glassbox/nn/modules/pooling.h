// glassbox/nn/modules/pooling.h — pooling layers, libtorch's: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d.
//
//   gb::nn::MaxPool2d pool(gb::nn::MaxPool2dOptions(2));              // (N, C, H, W) -> (N, C, H/2, W/2)
//   gb::nn::AdaptiveAvgPool2d gap(gb::nn::AdaptiveAvgPool2dOptions(1)); // -> (N, C, 1, 1)
//   gb::nn::MaxPool1d pool1(gb::nn::MaxPool1dOptions(3).stride(2));   // (N, C, L) or (C, L)
//
// The 2-D layers call gb::max_pool2d / avg_pool2d / adaptive_avg_pool2d (their options are F::'s, as in libtorch);
// the 1-D ones run them on a (N, C, 1, L) view. No parameters; stride defaults to kernel_size.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "glassbox/nn/functional.h"
#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

using MaxPool2dOptions = functional::MaxPool2dFuncOptions;
using AvgPool2dOptions = functional::AvgPool2dFuncOptions;
using AdaptiveAvgPool2dOptions = functional::AdaptiveAvgPool2dFuncOptions;

using MaxPool1dOptions = functional::MaxPool1dFuncOptions;

struct AvgPool1dOptions {
  AvgPool1dOptions(ExpandingArray<1> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  GB_ARG(ExpandingArray<1>, kernel_size);
  GB_ARG(ExpandingArray<1>, stride);
  GB_ARG(ExpandingArray<1>, padding) = 0;
  GB_ARG(bool, ceil_mode) = false;
  GB_ARG(bool, count_include_pad) = true;
};

struct AdaptiveAvgPool1dOptions {
  AdaptiveAvgPool1dOptions(ExpandingArray<1> output_size) : output_size_(output_size) {}  // NOLINT
  GB_ARG(ExpandingArray<1>, output_size);
};

class MaxPool2dImpl : public detail::Builtin<MaxPool2dImpl> {
 public:
  MaxPool2dImpl(ExpandingArray<2> kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}  // NOLINT
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  MaxPool2dOptions options;
};
GB_MODULE(MaxPool2d);

class AvgPool2dImpl : public detail::Builtin<AvgPool2dImpl> {
 public:
  AvgPool2dImpl(ExpandingArray<2> kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}  // NOLINT
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  AvgPool2dOptions options;
};
GB_MODULE(AvgPool2d);

class AdaptiveAvgPool2dImpl : public detail::Builtin<AdaptiveAvgPool2dImpl> {
 public:
  AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size)  // NOLINT
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  AdaptiveAvgPool2dOptions options;
};
GB_MODULE(AdaptiveAvgPool2d);

class MaxPool1dImpl : public detail::Builtin<MaxPool1dImpl> {
 public:
  MaxPool1dImpl(ExpandingArray<1> kernel_size) : MaxPool1dImpl(MaxPool1dOptions(kernel_size)) {}  // NOLINT
  explicit MaxPool1dImpl(const MaxPool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  MaxPool1dOptions options;
};
GB_MODULE(MaxPool1d);

class AvgPool1dImpl : public detail::Builtin<AvgPool1dImpl> {
 public:
  AvgPool1dImpl(ExpandingArray<1> kernel_size) : AvgPool1dImpl(AvgPool1dOptions(kernel_size)) {}  // NOLINT
  explicit AvgPool1dImpl(const AvgPool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  AvgPool1dOptions options;
};
GB_MODULE(AvgPool1d);

class AdaptiveAvgPool1dImpl : public detail::Builtin<AdaptiveAvgPool1dImpl> {
 public:
  AdaptiveAvgPool1dImpl(ExpandingArray<1> output_size)  // NOLINT
      : AdaptiveAvgPool1dImpl(AdaptiveAvgPool1dOptions(output_size)) {}
  explicit AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  AdaptiveAvgPool1dOptions options;
};
GB_MODULE(AdaptiveAvgPool1d);

}  // namespace gb::nn
