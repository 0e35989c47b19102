// glassbox/nn/modules/flatten.h — Flatten: dims start_dim..end_dim merged into one (a view when strides allow).
//
//   gb::nn::Flatten flat;                                  // (N, C, H, W) -> (N, C*H*W)
//   gb::nn::Flatten(gb::nn::FlattenOptions().start_dim(0).end_dim(1));
#pragma once

#include <cstdint>
#include <ostream>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct FlattenOptions {
  GB_ARG(int64_t, start_dim) = 1;
  GB_ARG(int64_t, end_dim) = -1;
};

class FlattenImpl : public detail::Builtin<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  FlattenOptions options;
};
GB_MODULE(Flatten);

}  // namespace gb::nn
