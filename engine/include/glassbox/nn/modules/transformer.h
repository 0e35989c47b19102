// glassbox/nn/modules/transformer.h — TransformerEncoderLayer and TransformerEncoder (PyTorch's nn.Transformer
// encoder side, with batch_first and norm_first).
//
//   gb::nn::TransformerEncoderLayer layer(
//       gb::nn::TransformerEncoderLayerOptions(64, 4).dim_feedforward(256).dropout(0.1).activation(gb::kGELU));
//   gb::nn::TransformerEncoder enc(gb::nn::TransformerEncoderOptions(layer, 6)
//                                      .norm(gb::nn::AnyModule(gb::nn::LayerNorm(gb::nn::LayerNormOptions({64})))));
//   auto y = enc(src, src_mask, src_key_padding_mask);   // src (S, N, E), or (N, S, E) with batch_first
//
// Post-norm (default): x = norm1(x + sa(x)); x = norm2(x + ff(x)). Pre-norm (norm_first): x = x + sa(norm1(x));
// x = x + ff(norm2(x)). sa = dropout1(self_attn(x, x, x, masks)), ff = dropout2(linear2(dropout(act(linear1(x))))).
// Submodules named as PyTorch's: self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2; the encoder's
// layers.0, layers.1, ..., norm. The encoder's layers are copies of the given layer (same weights, as PyTorch's
// deepcopy). The activation is "relu" or "gelu" (a custom callable is not supported).
#pragma once

#include <cstdint>

#include "glassbox/nn/enum.h"
#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/modules/attention.h"
#include "glassbox/nn/modules/container.h"
#include "glassbox/nn/modules/dropout.h"
#include "glassbox/nn/modules/linear.h"
#include "glassbox/nn/modules/normalization.h"
#include "glassbox/nn/modules/sequential.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  GB_ARG(int64_t, d_model);
  GB_ARG(int64_t, nhead);
  GB_ARG(int64_t, dim_feedforward) = 2048;
  GB_ARG(double, dropout) = 0.1;
  GB_ARG(EnumValue, activation) = kReLU;  // kReLU / "relu" or kGELU / "gelu"
  GB_ARG(double, layer_norm_eps) = 1e-5;
  GB_ARG(bool, batch_first) = false;
  GB_ARG(bool, norm_first) = false;
};

class TransformerEncoderLayerImpl : public detail::Builtin<TransformerEncoderLayerImpl> {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  void reset_parameters();
  // src (S, N, E) / (N, S, E) with batch_first / (S, E) unbatched; src_mask (S, S) or (N*nhead, S, S);
  // src_key_padding_mask (N, S). Masks as MultiheadAttention's (bool true = not attended, or additive float).
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};

 private:
  Tensor sa_block(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask);
  Tensor ff_block(const Tensor& x);
};
GB_MODULE(TransformerEncoderLayer);

struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers);
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options, int64_t num_layers);
  GB_ARG(TransformerEncoderLayer, encoder_layer);
  GB_ARG(int64_t, num_layers);
  GB_ARG(AnyModule, norm);  // an optional final norm (usually a LayerNorm)
};

class TransformerEncoderImpl : public detail::Builtin<TransformerEncoderImpl> {
 public:
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  // The layers in turn, then norm when given; shapes and masks as TransformerEncoderLayer's.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});

  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
GB_MODULE(TransformerEncoder);

}  // namespace gb::nn
