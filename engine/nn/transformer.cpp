// engine/nn/transformer.cpp — TransformerEncoderLayer and TransformerEncoder (PyTorch's forward order).
#include "glassbox/nn/modules/transformer.h"

#include "glassbox/ops/pointwise.h"

namespace gb::nn {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options_)
    : options(options_) {
  const auto& o = options;
  GB_CHECK(o.activation() == "relu" || o.activation() == "gelu", "activation should be relu/gelu, not ",
           o.activation());
  self_attn = register_module(
      "self_attn",
      MultiheadAttention(
          MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).batch_first(o.batch_first())));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  norm2 = register_module("norm2", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

Tensor TransformerEncoderLayerImpl::sa_block(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask) {
  Tensor a = std::get<0>(self_attn(x, x, x, key_padding_mask, /*need_weights=*/false, mask, true));
  return dropout1(a);
}

Tensor TransformerEncoderLayerImpl::ff_block(const Tensor& x) {
  Tensor h = linear1(x);
  h = options.activation() == "gelu" ? gb::gelu(h) : gb::relu(h);
  return dropout2(linear2(dropout(h)));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  detail::ModuleCallScope scope(*this);
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa_block(norm1(x), src_mask, src_key_padding_mask);
    x = x + ff_block(norm2(x));
  } else {
    x = norm1(x + sa_block(x, src_mask, src_key_padding_mask));
    x = norm2(x + ff_block(x));
  }
  return x;
}

TransformerEncoderOptions::TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
    : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}

TransformerEncoderOptions::TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options,
                                                     int64_t num_layers)
    : encoder_layer_(TransformerEncoderLayer(encoder_layer_options)), num_layers_(num_layers) {}

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options_) : options(std::move(options_)) {
  GB_CHECK(!options.encoder_layer().is_empty(), "TransformerEncoder: encoder_layer is empty");
  GB_CHECK(options.num_layers() >= 1, "TransformerEncoder: num_layers must be at least 1, got ", options.num_layers());
  const auto& proto = *options.encoder_layer();
  const StateDict weights = proto.state_dict();
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i) {
    TransformerEncoderLayer layer(proto.options);  // a copy: same options, then the same weights
    layer->load_state_dict(weights);
    layer->train(proto.is_training());
    layers->push_back(layer);
  }
  norm = options.norm();
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  detail::ModuleCallScope scope(*this);
  Tensor x = src;
  for (const auto& m : *layers) {
    auto& layer = static_cast<TransformerEncoderLayerImpl&>(*m);
    x = detail::call_module(layer, x, src_mask, src_key_padding_mask);
  }
  if (!norm.is_empty()) x = norm.forward(x);
  return x;
}

}  // namespace gb::nn
