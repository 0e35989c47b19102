// glassbox/nn/modules/attention.h — MultiheadAttention, PyTorch's nn.MultiheadAttention (query/key/value of the same
// embed_dim; kdim/vdim and add_bias_kv/add_zero_attn are not here).
//
//   gb::nn::MultiheadAttention mha(gb::nn::MultiheadAttentionOptions(64, 8).batch_first(true));
//   auto [out, weights] = mha(x, x, x);                         // x (N, L, 64) -> out (N, L, 64), weights (N, L, L)
//   auto [o, w] = mha(q, k, v, key_padding_mask, false);        // w undefined when need_weights = false
//
// Shapes (batch_first = false, the default): query (L, N, E), key/value (S, N, E) -> out (L, N, E); batch_first:
// (N, L, E). Unbatched: query (L, E), key/value (S, E) -> out (L, E). Weights (N, L, S) averaged over heads, or
// (N, H, L, S) with average_attn_weights = false ((L, S) / (H, L, S) unbatched).
// Masks: key_padding_mask (N, S) (or (S) unbatched); attn_mask (L, S) or (N*H, L, S). A bool mask marks with true
// the positions NOT attended; a float mask is added to the scores. A row with every position masked gives NaN, as
// PyTorch. Attention dropout (p = dropout) applies in training only.
// Parameters as PyTorch's: in_proj_weight (3E, E) (xavier_uniform_), in_proj_bias (3E) (zeros), out_proj.weight
// (E, E), out_proj.bias (E) (zeros).
#pragma once

#include <cstdint>
#include <tuple>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/modules/linear.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  GB_ARG(int64_t, embed_dim);
  GB_ARG(int64_t, num_heads);
  GB_ARG(double, dropout) = 0.0;
  GB_ARG(bool, bias) = true;
  GB_ARG(bool, batch_first) = false;  // Python's flag: true = (N, L, E)
};

class MultiheadAttentionImpl : public detail::Builtin<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset_parameters();
  // -> (attn_output, attn_weights); see the header comment for shapes and masks.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true);

  MultiheadAttentionOptions options;
  int64_t head_dim;
  Tensor in_proj_weight;  // (3E, E): the q, k, v projections stacked
  Tensor in_proj_bias;    // (3E), undefined with bias(false)
  Linear out_proj{nullptr};
};
GB_MODULE(MultiheadAttention);

}  // namespace gb::nn
