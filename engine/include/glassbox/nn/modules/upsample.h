// glassbox/nn/modules/upsample.h — Upsample: F::interpolate as a module (a generator's or decoder's resize).
//
//   gb::nn::Upsample up(gb::nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(gb::kBilinear));
//   auto y = up(x);   // (N, C, H, W) -> (N, C, 2H, 2W)
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/enum.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct UpsampleOptions {
  GB_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  GB_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  GB_ARG(EnumValue, mode) = kNearest;
  GB_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

class UpsampleImpl : public detail::Builtin<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  UpsampleOptions options;
};
GB_MODULE(Upsample);

}  // namespace gb::nn
