// glassbox/nn/modules/dropout.h — Dropout: in training, zeroes each element with probability p and scales the rest
// by 1/(1-p); in eval, returns its input. Dropout2d and Dropout3d zero whole channels.
//
//   gb::nn::Dropout drop(0.1);   // or Dropout(gb::nn::DropoutOptions(0.1).inplace(true))
#pragma once

#include <ostream>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  GB_ARG(double, p);
  GB_ARG(bool, inplace) = false;
};

class DropoutImpl : public detail::Builtin<DropoutImpl> {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  DropoutOptions options;
};
GB_MODULE(Dropout);

// Dropout2d / Dropout3d: in training, zeroes whole channels of (N,C,H,W) / (N,C,D,H,W) inputs (or unbatched ones)
// with probability p and scales the rest by 1/(1-p); in eval, returns its input.
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;

class Dropout2dImpl : public detail::Builtin<Dropout2dImpl> {
 public:
  explicit Dropout2dImpl(const Dropout2dOptions& options = {});
  explicit Dropout2dImpl(double p) : Dropout2dImpl(Dropout2dOptions(p)) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  Dropout2dOptions options;
};
GB_MODULE(Dropout2d);

class Dropout3dImpl : public detail::Builtin<Dropout3dImpl> {
 public:
  explicit Dropout3dImpl(const Dropout3dOptions& options = {});
  explicit Dropout3dImpl(double p) : Dropout3dImpl(Dropout3dOptions(p)) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  Dropout3dOptions options;
};
GB_MODULE(Dropout3d);

}  // namespace gb::nn
