// engine/nn/distance.cpp — CosineSimilarity (see glassbox/nn/modules/distance.h).
#include "glassbox/nn/modules/distance.h"

#include "glassbox/ops/nn.h"

namespace gb::nn {

CosineSimilarityImpl::CosineSimilarityImpl(const CosineSimilarityOptions& options) : options(options) {}

Tensor CosineSimilarityImpl::forward(const Tensor& input1, const Tensor& input2) {
  detail::ModuleCallScope scope(*this);
  return gb::cosine_similarity(input1, input2, options.dim(), options.eps());
}

void CosineSimilarityImpl::pretty_print(std::ostream& stream) const {
  stream << "CosineSimilarity(dim=" << options.dim() << ", eps=" << options.eps() << ")";
}

}  // namespace gb::nn
