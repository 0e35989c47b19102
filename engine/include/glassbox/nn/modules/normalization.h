// glassbox/nn/modules/normalization.h — LayerNorm (over the trailing normalized_shape) and GroupNorm (over groups of
// channels of (N, C, *)).
//
//   gb::nn::LayerNorm ln(gb::nn::LayerNormOptions({64}).eps(1e-6));          // x (*, 64)
//   gb::nn::GroupNorm gn(gb::nn::GroupNormOptions(4, 32));                   // x (N, 32, *), 4 groups of 8
//
// Affine parameters start at ones (weight) and zeros (bias), as PyTorch's.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  GB_ARG(std::vector<int64_t>, normalized_shape);
  GB_ARG(double, eps) = 1e-5;
  GB_ARG(bool, elementwise_affine) = true;
};

class LayerNormImpl : public detail::Builtin<LayerNormImpl> {
 public:
  LayerNormImpl(std::vector<int64_t> normalized_shape) : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset_parameters();
  // x (*, normalized_shape) -> same shape
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  LayerNormOptions options;
  Tensor weight;  // normalized_shape, undefined without elementwise_affine
  Tensor bias;
};
GB_MODULE(LayerNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  GB_ARG(int64_t, num_groups);
  GB_ARG(int64_t, num_channels);
  GB_ARG(double, eps) = 1e-5;
  GB_ARG(bool, affine) = true;
};

class GroupNormImpl : public detail::Builtin<GroupNormImpl> {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  void reset_parameters();
  // x (N, C, *) -> same shape
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  GroupNormOptions options;
  Tensor weight;  // (C), undefined without affine
  Tensor bias;
};
GB_MODULE(GroupNorm);

}  // namespace gb::nn
