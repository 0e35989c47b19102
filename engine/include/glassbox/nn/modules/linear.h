// glassbox/nn/modules/linear.h — Linear (y = x W^T + b) and Identity.
//
//   gb::nn::Linear fc(gb::nn::LinearOptions(784, 128).bias(false));   // or Linear(784, 128)
//   auto y = fc(x);                                                     // x (*, in) -> (*, out)
//
// Default init (PyTorch's reset_parameters): weight kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in));
// bias U(-1/sqrt(in), 1/sqrt(in)).
#pragma once

#include <cstdint>
#include <ostream>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  GB_ARG(int64_t, in_features);
  GB_ARG(int64_t, out_features);
  GB_ARG(bool, bias) = true;
};

class LinearImpl : public detail::Builtin<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  void reset_parameters();
  // x (*, in_features) -> (*, out_features)
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  LinearOptions options;
  Tensor weight;  // (out_features, in_features)
  Tensor bias;    // (out_features), undefined with bias(false)
};
GB_MODULE(Linear);

// Returns its input (a no-op slot in a Sequential, as PyTorch's Identity).
class IdentityImpl : public detail::Builtin<IdentityImpl> {
 public:
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
GB_MODULE(Identity);

}  // namespace gb::nn
