// glassbox/nn/modules/conv.h — Conv2d and ConvTranspose2d over (N, C, H, W) or unbatched (C, H, W) input; Conv1d
// over (N, C, L) or (C, L), computed by conv2d on a (1, L) image (its weight is libtorch's (C_out, C_in/groups, k)).
//
//   gb::nn::Conv2d conv(gb::nn::Conv2dOptions(3, 16, 3).stride(2).padding(1));
//   auto y = conv(x);                     // (N, 3, H, W) -> (N, 16, H', W')
//   gb::nn::ConvTranspose2d up(gb::nn::ConvTranspose2dOptions(16, 3, 4).stride(2).padding(1));
//   auto z = up(y);                       // (N, 16, H, W) -> (N, 3, 2H, 2W); up->forward(y, size) picks the size
//
// Zero padding only: padding_mode other than "zeros" (kZeros) is refused at construction. Default init as
// PyTorch's: weight kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = C/groups*kH*kW.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>

#include "glassbox/nn/enum.h"
#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

// Conv1dOptions and Conv2dOptions (libtorch's ConvOptions<D>): D-wide kernel_size, stride, padding and dilation.
template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  GB_ARG(int64_t, in_channels);
  GB_ARG(int64_t, out_channels);
  GB_ARG(ExpandingArray<D>, kernel_size);
  GB_ARG(ExpandingArray<D>, stride) = 1;
  GB_ARG(ExpandingArray<D>, padding) = 0;
  GB_ARG(ExpandingArray<D>, dilation) = 1;
  GB_ARG(int64_t, groups) = 1;
  GB_ARG(bool, bias) = true;
  GB_ARG(EnumValue, padding_mode) = kZeros;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

class Conv2dImpl : public detail::Builtin<Conv2dImpl> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options);
  void reset_parameters();
  // x (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H', W') or (C_out, H', W')
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  Conv2dOptions options;
  Tensor weight;  // (C_out, C_in / groups, kH, kW)
  Tensor bias;    // (C_out), undefined with bias(false)
};
GB_MODULE(Conv2d);

class Conv1dImpl : public detail::Builtin<Conv1dImpl> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv1dImpl(const Conv1dOptions& options);
  void reset_parameters();
  // x (N, C_in, L) or (C_in, L) -> (N, C_out, L') or (C_out, L')
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  Conv1dOptions options;
  Tensor weight;  // (C_out, C_in / groups, k)
  Tensor bias;    // (C_out), undefined with bias(false)
};
GB_MODULE(Conv1d);

struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  GB_ARG(int64_t, in_channels);
  GB_ARG(int64_t, out_channels);
  GB_ARG(ExpandingArray<2>, kernel_size);
  GB_ARG(ExpandingArray<2>, stride) = 1;
  GB_ARG(ExpandingArray<2>, padding) = 0;
  GB_ARG(ExpandingArray<2>, output_padding) = 0;
  GB_ARG(int64_t, groups) = 1;
  GB_ARG(bool, bias) = true;
  GB_ARG(ExpandingArray<2>, dilation) = 1;
  GB_ARG(EnumValue, padding_mode) = kZeros;
};

class ConvTranspose2dImpl : public detail::Builtin<ConvTranspose2dImpl> {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);
  void reset_parameters();
  // x (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H', W'); output_size (the last two dims, or all of them)
  // chooses output_padding, as PyTorch's.
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  void pretty_print(std::ostream& stream) const override;

  ConvTranspose2dOptions options;
  Tensor weight;  // (C_in, C_out / groups, kH, kW)
  Tensor bias;    // (C_out), undefined with bias(false)
};
GB_MODULE(ConvTranspose2d);

}  // namespace gb::nn
