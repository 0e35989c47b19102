// glassbox/nn/modules/dropout.h — Dropout: in training, zeroes each element with probability p and scales the rest
// by 1/(1-p); in eval, returns its input.
//
//   gb::nn::Dropout drop(0.1);   // or Dropout(gb::nn::DropoutOptions(0.1).inplace(true))
#pragma once

#include <ostream>

#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  GB_ARG(double, p);
  GB_ARG(bool, inplace) = false;
};

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  DropoutOptions options;
};
GB_MODULE(Dropout);

}  // namespace gb::nn
