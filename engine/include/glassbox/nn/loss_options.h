// glassbox/nn/loss_options.h — the loss options, libtorch's: gb::nn::MSELossOptions, ... for the modules
// (glassbox/nn/modules/loss.h), and the same types as gb::nn::functional::MSELossFuncOptions, ... for the functions
// (glassbox/nn/functional.h), as in libtorch where each FuncOptions is an alias of the module's Options.
//
//   gb::nn::CrossEntropyLoss ce(gb::nn::CrossEntropyLossOptions().label_smoothing(0.1).ignore_index(0));
//   F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions(gb::kSum).beta(0.5));
//   F::kl_div(log_q, p, F::KLDivFuncOptions(gb::kBatchMean));
//
// Every reduction is kNone, kMean (the default) or kSum; KLDivLoss also takes kBatchMean (the sum divided by the
// batch size, input.size(0): the KL divergence proper). A reduction-only option struct constructs from its
// reduction: MSELossOptions(gb::kSum).
#pragma once

#include <cstdint>

#include "glassbox/core/tensor.h"
#include "glassbox/nn/options.h"
#include "glassbox/ops/nn.h"

namespace gb {

namespace enumtype {
struct kBatchMean {};
}  // namespace enumtype
inline constexpr enumtype::kBatchMean kBatchMean{};

namespace nn {

// KLDivLoss's reduction: a Reduction, or kBatchMean.
class KLDivReduction {
 public:
  KLDivReduction(Reduction r) : reduction_(r) {}                                          // NOLINT
  KLDivReduction(enumtype::kBatchMean) : reduction_(Reduction::Sum), batchmean_(true) {}  // NOLINT
  bool is_batchmean() const noexcept { return batchmean_; }
  // The reduction kl_div runs: Sum for kBatchMean (then divided by the batch size).
  Reduction reduction() const noexcept { return reduction_; }
  bool operator==(const KLDivReduction& o) const { return reduction_ == o.reduction_ && batchmean_ == o.batchmean_; }

 private:
  Reduction reduction_;
  bool batchmean_ = false;
};

struct L1LossOptions {
  using reduction_t = Reduction;
  L1LossOptions(reduction_t reduction = kMean) : reduction_(reduction) {}  // NOLINT
  GB_ARG(reduction_t, reduction);
};

struct MSELossOptions {
  using reduction_t = Reduction;
  MSELossOptions(reduction_t reduction = kMean) : reduction_(reduction) {}  // NOLINT
  GB_ARG(reduction_t, reduction);
};

struct SmoothL1LossOptions {
  using reduction_t = Reduction;
  SmoothL1LossOptions(reduction_t reduction = kMean) : reduction_(reduction) {}  // NOLINT
  GB_ARG(reduction_t, reduction);
  // where the loss turns from quadratic to linear; >= 0 (0 is L1)
  GB_ARG(double, beta) = 1.0;
};

struct HuberLossOptions {
  using reduction_t = Reduction;
  HuberLossOptions(reduction_t reduction = kMean) : reduction_(reduction) {}  // NOLINT
  GB_ARG(reduction_t, reduction);
  // where the loss turns from quadratic to linear; > 0
  GB_ARG(double, delta) = 1.0;
};

struct KLDivLossOptions {
  using reduction_t = KLDivReduction;
  KLDivLossOptions(Reduction reduction = kMean) : reduction_(reduction) {}     // NOLINT
  KLDivLossOptions(enumtype::kBatchMean batchmean) : reduction_(batchmean) {}  // NOLINT
  KLDivLossOptions(const reduction_t& reduction) : reduction_(reduction) {}    // NOLINT
  GB_ARG(reduction_t, reduction);
  // the target holds log-probabilities
  GB_ARG(bool, log_target) = false;
};

struct BCELossOptions {
  using reduction_t = Reduction;
  // rescales each element's loss; broadcasts to the input's shape
  GB_ARG(Tensor, weight);
  GB_ARG(reduction_t, reduction) = kMean;
};

struct BCEWithLogitsLossOptions {
  using reduction_t = Reduction;
  GB_ARG(Tensor, weight);
  GB_ARG(reduction_t, reduction) = kMean;
  // weight of the positive examples, one per class (the last dim)
  GB_ARG(Tensor, pos_weight);
};

struct NLLLossOptions {
  using reduction_t = Reduction;
  // one weight per class (C)
  GB_ARG(Tensor, weight);
  GB_ARG(int64_t, ignore_index) = -100;
  GB_ARG(reduction_t, reduction) = kMean;
};

struct CrossEntropyLossOptions {
  using reduction_t = Reduction;
  GB_ARG(Tensor, weight);
  GB_ARG(int64_t, ignore_index) = -100;
  GB_ARG(reduction_t, reduction) = kMean;
  GB_ARG(double, label_smoothing) = 0.0;
};

namespace functional {
using L1LossFuncOptions = L1LossOptions;
using MSELossFuncOptions = MSELossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
}  // namespace functional

}  // namespace nn
}  // namespace gb
