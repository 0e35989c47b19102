// glassbox/nn/modules/loss.h — the losses as modules (libtorch's): forward(input, target) runs the function of
// the same name (glassbox/ops/nn.h, gb::nn::functional) with the module's options.
//
//   gb::nn::CrossEntropyLoss criterion(gb::nn::CrossEntropyLossOptions().label_smoothing(0.1));
//   auto loss = criterion(model(x), y);
//   gb::nn::BCEWithLogitsLoss bce(gb::nn::BCEWithLogitsLossOptions().pos_weight(gb::full({3}, 2.0)));
//   gb::nn::KLDivLoss kl(gb::nn::KLDivLossOptions(gb::kBatchMean).log_target(true));
//
// The option tensors (weight, pos_weight) are registered as buffers of those names, as in libtorch: they follow
// to(device/dtype) and appear in state_dict; forward uses the buffers. No parameters.
#pragma once

#include <ostream>

#include "glassbox/nn/loss_options.h"
#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

class L1LossImpl : public detail::Builtin<L1LossImpl> {
 public:
  explicit L1LossImpl(const L1LossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  L1LossOptions options;
};
GB_MODULE(L1Loss);

class MSELossImpl : public detail::Builtin<MSELossImpl> {
 public:
  explicit MSELossImpl(const MSELossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  MSELossOptions options;
};
GB_MODULE(MSELoss);

class SmoothL1LossImpl : public detail::Builtin<SmoothL1LossImpl> {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  SmoothL1LossOptions options;
};
GB_MODULE(SmoothL1Loss);

class HuberLossImpl : public detail::Builtin<HuberLossImpl> {
 public:
  explicit HuberLossImpl(const HuberLossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  HuberLossOptions options;
};
GB_MODULE(HuberLoss);

class KLDivLossImpl : public detail::Builtin<KLDivLossImpl> {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  KLDivLossOptions options;
};
GB_MODULE(KLDivLoss);

class BCELossImpl : public detail::Builtin<BCELossImpl> {
 public:
  explicit BCELossImpl(const BCELossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  BCELossOptions options;
  Tensor weight;  // the buffer "weight" (undefined when the options have none)
};
GB_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public detail::Builtin<BCEWithLogitsLossImpl> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  BCEWithLogitsLossOptions options;
  Tensor weight;      // the buffer "weight" (undefined when the options have none)
  Tensor pos_weight;  // the buffer "pos_weight" (undefined when the options have none)
};
GB_MODULE(BCEWithLogitsLoss);

class NLLLossImpl : public detail::Builtin<NLLLossImpl> {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  NLLLossOptions options;
  Tensor weight;  // the buffer "weight" (undefined when the options have none)
};
GB_MODULE(NLLLoss);

class CrossEntropyLossImpl : public detail::Builtin<CrossEntropyLossImpl> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options_ = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;

  CrossEntropyLossOptions options;
  Tensor weight;  // the buffer "weight" (undefined when the options have none)
};
GB_MODULE(CrossEntropyLoss);

}  // namespace gb::nn
