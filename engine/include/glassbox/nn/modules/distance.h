// glassbox/nn/modules/distance.h — CosineSimilarity as a module (libtorch's): cosine similarity of two inputs along
// a dim (gb::cosine_similarity).
//
//   gb::nn::CosineSimilarity cos(gb::nn::CosineSimilarityOptions().dim(1));
//   gb::Tensor s = cos(a, b);  // (N, D), (N, D) -> (N)
#pragma once

#include <cstdint>
#include <ostream>

#include "glassbox/core/tensor.h"
#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/functional.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

using CosineSimilarityOptions = functional::CosineSimilarityFuncOptions;
class CosineSimilarityImpl : public detail::Builtin<CosineSimilarityImpl> {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {});
  Tensor forward(const Tensor& input1, const Tensor& input2);
  void pretty_print(std::ostream& stream) const override;
  CosineSimilarityOptions options;
};
GB_MODULE(CosineSimilarity);

}  // namespace gb::nn
