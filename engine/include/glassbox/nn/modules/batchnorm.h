// glassbox/nn/modules/batchnorm.h — BatchNorm1d over (N, C) or (N, C, L), BatchNorm2d over (N, C, H, W).
//
//   gb::nn::BatchNorm2d bn(gb::nn::BatchNormOptions(16).momentum(0.01));
//   bn->train(); auto y = bn(x);   // batch statistics; running_mean/var updated (unbiased var), num_batches_tracked+1
//   bn->eval();  auto z = bn(x);   // running statistics
//
// Buffers as PyTorch's: running_mean (C) = 0, running_var (C) = 1, num_batches_tracked (int64, 0-dim) = 0.
// momentum(std::nullopt) is the cumulative moving average (factor 1 / num_batches_tracked). With
// track_running_stats(false) the buffers are undefined and batch statistics are used in eval too.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  GB_ARG(int64_t, num_features);
  GB_ARG(double, eps) = 1e-5;
  GB_ARG(std::optional<double>, momentum) = 0.1;
  GB_ARG(bool, affine) = true;
  GB_ARG(bool, track_running_stats) = true;
};

namespace detail {

// What BatchNorm1d and BatchNorm2d share; they differ in the input ranks they accept.
class BatchNormImplBase : public Module {
 public:
  explicit BatchNormImplBase(const BatchNormOptions& options);
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  BatchNormOptions options;
  Tensor weight;               // (C), ones; undefined without affine
  Tensor bias;                 // (C), zeros; undefined without affine
  Tensor running_mean;         // (C)
  Tensor running_var;          // (C)
  Tensor num_batches_tracked;  // int64, 0-dim

 protected:
  virtual void check_input_dim(const Tensor& input) const = 0;
};

}  // namespace detail

class BatchNorm1dImpl : public detail::Builtin<BatchNorm1dImpl, detail::BatchNormImplBase> {
 public:
  explicit BatchNorm1dImpl(int64_t num_features) : BatchNorm1dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm1dImpl(const BatchNormOptions& options) : Builtin(options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GB_MODULE(BatchNorm1d);

class BatchNorm2dImpl : public detail::Builtin<BatchNorm2dImpl, detail::BatchNormImplBase> {
 public:
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : Builtin(options) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
GB_MODULE(BatchNorm2d);

}  // namespace gb::nn
