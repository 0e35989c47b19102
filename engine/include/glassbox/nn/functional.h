// glassbox/nn/functional.h — gb::nn::functional: the stateless layer functions with libtorch's option structs.
//
//   namespace F = gb::nn::functional;
//   auto y = F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding(1));
//   auto loss = F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().label_smoothing(0.1));
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/nn/enum.h"
#include "glassbox/nn/loss_options.h"
#include "glassbox/nn/options.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"

namespace gb::nn::functional {

inline Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {}) {
  return gb::linear(x, weight, bias);
}

struct ReLUFuncOptions {
  ReLUFuncOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  GB_ARG(bool, inplace);
};
inline Tensor relu(Tensor x, const ReLUFuncOptions& o = {}) { return o.inplace() ? x.relu_() : gb::relu(x); }

struct LeakyReLUFuncOptions {
  GB_ARG(double, negative_slope) = 0.01;
  GB_ARG(bool, inplace) = false;
};
inline Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& o = {}) {
  GB_CHECK(!o.inplace(), "leaky_relu: inplace=true is not supported; use the out-of-place form");
  return gb::leaky_relu(x, o.negative_slope());
}

struct ELUFuncOptions {
  GB_ARG(double, alpha) = 1.0;
  GB_ARG(bool, inplace) = false;
};
inline Tensor elu(const Tensor& x, const ELUFuncOptions& o = {}) {
  GB_CHECK(!o.inplace(), "elu: inplace=true is not supported; use the out-of-place form");
  return gb::elu(x, o.alpha());
}

struct HardtanhFuncOptions {
  GB_ARG(double, min_val) = -1.0;
  GB_ARG(double, max_val) = 1.0;
  GB_ARG(bool, inplace) = false;
};
inline Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& o = {}) {
  GB_CHECK(!o.inplace(), "hardtanh: inplace=true is not supported; use the out-of-place form");
  return gb::hardtanh(x, o.min_val(), o.max_val());
}

struct GELUFuncOptions {
  GB_ARG(std::string, approximate) = "none";
};
inline Tensor gelu(const Tensor& x, const GELUFuncOptions& o = {}) { return gb::gelu(x, o.approximate()); }
inline Tensor silu(const Tensor& x) { return gb::silu(x); }
inline Tensor sigmoid(const Tensor& x) { return gb::sigmoid(x); }
inline Tensor tanh(const Tensor& x) { return gb::tanh(x); }

struct SoftplusFuncOptions {
  GB_ARG(double, beta) = 1.0;
  GB_ARG(double, threshold) = 20.0;
};
inline Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o = {}) {
  return gb::softplus(x, o.beta(), o.threshold());
}

struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  GB_ARG(int64_t, dim);
  GB_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
inline Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) { return gb::softmax(x, o.dim(), o.dtype()); }
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
inline Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
  return gb::log_softmax(x, o.dim(), o.dtype());
}

struct Conv2dFuncOptions {
  GB_ARG(Tensor, bias);
  GB_ARG(ExpandingArray<2>, stride) = 1;
  GB_ARG(ExpandingArray<2>, padding) = 0;
  GB_ARG(ExpandingArray<2>, dilation) = 1;
  GB_ARG(int64_t, groups) = 1;
};
inline Tensor conv2d(const Tensor& x, const Tensor& weight, const Conv2dFuncOptions& o = {}) {
  return gb::conv2d(x, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
}

struct Conv1dFuncOptions {
  GB_ARG(Tensor, bias);
  GB_ARG(ExpandingArray<1>, stride) = 1;
  GB_ARG(ExpandingArray<1>, padding) = 0;
  GB_ARG(ExpandingArray<1>, dilation) = 1;
  GB_ARG(int64_t, groups) = 1;
};
inline Tensor conv1d(const Tensor& x, const Tensor& weight, const Conv1dFuncOptions& o = {}) {
  return gb::conv1d(x, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
}

struct ConvTranspose2dFuncOptions {
  GB_ARG(Tensor, bias);
  GB_ARG(ExpandingArray<2>, stride) = 1;
  GB_ARG(ExpandingArray<2>, padding) = 0;
  GB_ARG(ExpandingArray<2>, output_padding) = 0;
  GB_ARG(int64_t, groups) = 1;
  GB_ARG(ExpandingArray<2>, dilation) = 1;
};
inline Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const ConvTranspose2dFuncOptions& o = {}) {
  return gb::conv_transpose2d(x, weight, o.bias(), o.stride(), o.padding(), o.output_padding(), o.groups(),
                              o.dilation());
}

struct MaxPool2dFuncOptions {
  MaxPool2dFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  GB_ARG(ExpandingArray<2>, kernel_size);
  GB_ARG(ExpandingArray<2>, stride);
  GB_ARG(ExpandingArray<2>, padding) = 0;
  GB_ARG(ExpandingArray<2>, dilation) = 1;
  GB_ARG(bool, ceil_mode) = false;
};
inline Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return gb::max_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

struct MaxPool1dFuncOptions {
  MaxPool1dFuncOptions(ExpandingArray<1> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  GB_ARG(ExpandingArray<1>, kernel_size);
  GB_ARG(ExpandingArray<1>, stride);
  GB_ARG(ExpandingArray<1>, padding) = 0;
  GB_ARG(ExpandingArray<1>, dilation) = 1;
  GB_ARG(bool, ceil_mode) = false;
};
inline Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o) {
  return gb::max_pool1d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

struct CosineSimilarityFuncOptions {
  GB_ARG(int64_t, dim) = 1;
  GB_ARG(double, eps) = 1e-8;
};
inline Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& o = {}) {
  return gb::cosine_similarity(x1, x2, o.dim(), o.eps());
}

struct AvgPool2dFuncOptions {
  AvgPool2dFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  GB_ARG(ExpandingArray<2>, kernel_size);
  GB_ARG(ExpandingArray<2>, stride);
  GB_ARG(ExpandingArray<2>, padding) = 0;
  GB_ARG(bool, ceil_mode) = false;
  GB_ARG(bool, count_include_pad) = true;
  GB_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
inline Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  return gb::avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                        o.divisor_override());
}

struct AdaptiveAvgPool2dFuncOptions {
  AdaptiveAvgPool2dFuncOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}  // NOLINT
  GB_ARG(ExpandingArray<2>, output_size);
};
inline Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& o) {
  return gb::adaptive_avg_pool2d(x, o.output_size());
}

struct BatchNormFuncOptions {
  GB_ARG(Tensor, weight);
  GB_ARG(Tensor, bias);
  GB_ARG(bool, training) = false;
  GB_ARG(double, momentum) = 0.1;
  GB_ARG(double, eps) = 1e-5;
};
inline Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                         const BatchNormFuncOptions& o = {}) {
  return gb::batch_norm(x, o.weight(), o.bias(), running_mean, running_var, o.training(), o.momentum(), o.eps());
}

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  GB_ARG(std::vector<int64_t>, normalized_shape);
  GB_ARG(Tensor, weight);
  GB_ARG(Tensor, bias);
  GB_ARG(double, eps) = 1e-5;
};
inline Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& o) {
  return gb::layer_norm(x, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}

struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  GB_ARG(int64_t, num_groups);
  GB_ARG(Tensor, weight);
  GB_ARG(Tensor, bias);
  GB_ARG(double, eps) = 1e-5;
};
inline Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& o) {
  return gb::group_norm(x, o.num_groups(), o.weight(), o.bias(), o.eps());
}

struct DropoutFuncOptions {
  GB_ARG(double, p) = 0.5;
  GB_ARG(bool, training) = true;
  GB_ARG(bool, inplace) = false;
};
inline Tensor dropout(Tensor x, const DropoutFuncOptions& o = {}) {
  if (o.inplace()) return gb::dropout_(x, o.p(), o.training());
  return gb::dropout(x, o.p(), o.training());
}

// F::dropout2d / F::dropout3d: channel dropout of a batched (N,C,H,W) / (N,C,D,H,W) input or an unbatched one
// (one dim fewer), as libtorch's.
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;
namespace detail {
inline Tensor dropout_nd(Tensor x, const DropoutFuncOptions& o, int64_t unbatched, const char* name) {
  GB_CHECK(x.dim() == unbatched || x.dim() == unbatched + 1, name, ": Expected ", unbatched, "D or ", unbatched + 1,
           "D input, but received a ", x.dim(), "D input");
  const bool batched = x.dim() == unbatched + 1;
  Tensor in = batched ? x : x.unsqueeze(0);
  Tensor out = gb::feature_dropout(in, o.p(), o.training());
  if (!batched) out = out.squeeze(0);
  if (o.inplace()) return x.copy_(out);
  return out;
}
}  // namespace detail
inline Tensor dropout2d(Tensor x, const Dropout2dFuncOptions& o = {}) { return detail::dropout_nd(x, o, 3, "dropout2d"); }
inline Tensor dropout3d(Tensor x, const Dropout3dFuncOptions& o = {}) { return detail::dropout_nd(x, o, 4, "dropout3d"); }

// F::pad(x, F::PadFuncOptions({1, 1, 2, 0}).mode(gb::kReflect)): pad lists (left, right) pairs, the last dim's
// first; mode kConstant (the default, filled with value), kReflect, kReplicate or kCircular (or their Python names).
struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT
  GB_ARG(std::vector<int64_t>, pad);
  GB_ARG(EnumValue, mode) = kConstant;
  GB_ARG(double, value) = 0;
};
inline Tensor pad(const Tensor& x, const PadFuncOptions& o) {
  if (o.mode() == "constant") return gb::constant_pad_nd(x, o.pad(), o.value());
  return gb::pad(x, o.pad(), o.mode().name(), o.value());  // a nonzero value is refused, as libtorch
}

// F::normalize(x, F::NormalizeFuncOptions().p(2).dim(1)): x / max(||x||_p along dim, eps), differentiable.
struct NormalizeFuncOptions {
  GB_ARG(double, p) = 2.0;
  GB_ARG(int64_t, dim) = 1;
  GB_ARG(double, eps) = 1e-12;
};
inline Tensor normalize(const Tensor& x, const NormalizeFuncOptions& o = {}) {
  return x / gb::norm(x, o.p(), {o.dim()}, /*keepdim=*/true).clamp_min(o.eps()).expand_as(x);
}

// F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(gb::kBilinear)):
// give size or scale_factor (one value per spatial dim); modes kNearest (the default), kLinear, kBilinear,
// kTrilinear (gb::upsample); bicubic, area and nearest-exact are refused by name.
struct InterpolateFuncOptions {
  GB_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  GB_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  GB_ARG(EnumValue, mode) = kNearest;
  GB_ARG(std::optional<bool>, align_corners) = std::nullopt;
  GB_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
  GB_ARG(bool, antialias) = false;
};
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

struct EmbeddingFuncOptions {
  GB_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
inline Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& o = {}) {
  return gb::embedding(weight, input, o.padding_idx().value_or(-1));
}
inline Tensor one_hot(const Tensor& indices, int64_t num_classes = -1) { return gb::one_hot(indices, num_classes); }

// The losses: the option types are gb::nn's (glassbox/nn/loss_options.h), aliased here as in libtorch.
inline Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyFuncOptions& o = {}) {
  return gb::cross_entropy(logits, target, o.weight(), o.reduction(), o.ignore_index(), o.label_smoothing());
}
inline Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const NLLLossFuncOptions& o = {}) {
  return gb::nll_loss(log_probs, target, o.weight(), o.reduction(), o.ignore_index());
}
inline Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& o = {}) {
  return gb::mse_loss(input, target, o.reduction());
}
inline Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& o = {}) {
  return gb::l1_loss(input, target, o.reduction());
}
inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& o = {}) {
  return gb::smooth_l1_loss(input, target, o.reduction(), o.beta());
}
// libtorch's older spelling with beta as a separate argument: this beta is used, o.beta() is not.
inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& o,
                             double beta) {
  return gb::smooth_l1_loss(input, target, o.reduction(), beta);
}
inline Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& o = {}) {
  return gb::huber_loss(input, target, o.reduction(), o.delta());
}
inline Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                                   const BinaryCrossEntropyFuncOptions& o = {}) {
  return gb::binary_cross_entropy(input, target, o.weight(), o.reduction());
}
inline Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                               const BinaryCrossEntropyWithLogitsFuncOptions& o = {}) {
  return gb::binary_cross_entropy_with_logits(logits, target, o.weight(), o.pos_weight(), o.reduction());
}
// kBatchMean: the sum divided by input.size(0) (the sum itself for a 0-dim input), as libtorch.
inline Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& o = {}) {
  Tensor out = gb::kl_div(input, target, o.reduction().reduction(), o.log_target());
  if (o.reduction().is_batchmean() && input.dim() != 0) out = out / double(input.size(0));
  return out;
}

}  // namespace gb::nn::functional
