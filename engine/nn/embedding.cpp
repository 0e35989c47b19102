// engine/nn/embedding.cpp — Embedding.
#include "glassbox/nn/modules/embedding.h"

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/shape.h"

namespace gb::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options_) : options(options_) {
  const int64_t V = options.num_embeddings();
  GB_CHECK(V >= 0 && options.embedding_dim() >= 0, "Embedding: num_embeddings and embedding_dim must be non-negative");
  if (auto p = options.padding_idx()) {
    GB_CHECK(*p < V, "Padding_idx must be within num_embeddings (padding_idx=", *p, ", num_embeddings=", V, ")");
    GB_CHECK(*p >= -V, "Padding_idx must be within num_embeddings (padding_idx=", *p, ", num_embeddings=", V, ")");
    if (*p < 0) options.padding_idx(*p + V);
  }
  weight = register_parameter("weight", gb::empty({V, options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (auto p = options.padding_idx()) {
    NoGradGuard guard;
    weight.select(0, *p).fill_(0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::embedding(weight, input, options.padding_idx().value_or(-1));
}

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "Embedding(num_embeddings=" << options.num_embeddings() << ", embedding_dim=" << options.embedding_dim();
  if (auto p = options.padding_idx()) stream << ", padding_idx=" << *p;
  stream << ")";
}

}  // namespace gb::nn
