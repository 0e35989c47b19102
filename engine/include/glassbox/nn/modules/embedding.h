// glassbox/nn/modules/embedding.h — Embedding: a lookup table of num_embeddings rows of embedding_dim.
//
//   gb::nn::Embedding emb(gb::nn::EmbeddingOptions(1000, 64).padding_idx(0));
//   auto v = emb(tokens);          // tokens int64 (*) -> (*, 64)
//
// weight starts N(0, 1); the padding_idx row starts at zero and never receives a gradient. A negative padding_idx
// counts from the end (as PyTorch's).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  GB_ARG(int64_t, num_embeddings);
  GB_ARG(int64_t, embedding_dim);
  GB_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

class EmbeddingImpl : public detail::Builtin<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  void reset_parameters();
  // indices int64/int32 (*) -> (*, embedding_dim)
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  EmbeddingOptions options;  // padding_idx stored non-negative
  Tensor weight;             // (num_embeddings, embedding_dim)
};
GB_MODULE(Embedding);

}  // namespace gb::nn
