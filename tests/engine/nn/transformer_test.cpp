// tests/engine/nn/transformer_test.cpp — TransformerEncoderLayer and TransformerEncoder: PyTorch's submodule and
// parameter names, post-norm and pre-norm forwards recomputed from the submodules, batch_first, dropout, the
// encoder's copied layers and final norm.
#include <doctest/doctest.h>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/module_scope.h"

namespace nn = gb::nn;

namespace {

// The layer's forward written out from its parts (eval mode, so dropout is the identity).
gb::Tensor by_hand(nn::TransformerEncoderLayerImpl& l, const gb::Tensor& x, const gb::Tensor& mask,
                   const gb::Tensor& kpm, bool norm_first, bool gelu) {
  auto sa = [&](const gb::Tensor& h) { return std::get<0>(l.self_attn->forward(h, h, h, kpm, false, mask)); };
  auto ff = [&](const gb::Tensor& h) {
    gb::Tensor a = l.linear1->forward(h);
    return l.linear2->forward(gelu ? gb::gelu(a) : gb::relu(a));
  };
  if (norm_first) {
    gb::Tensor y = x + sa(l.norm1->forward(x));
    return y + ff(l.norm2->forward(y));
  }
  gb::Tensor y = l.norm1->forward(x + sa(x));
  return l.norm2->forward(y + ff(y));
}

}  // namespace

TEST_CASE("TransformerEncoderLayer: PyTorch's submodule and parameter names") {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  CHECK(layer->named_children().keys() == std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2",
                                                                   "norm1", "norm2", "dropout1", "dropout2"});
  CHECK(layer->named_parameters().keys() ==
        std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                                 "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                                 "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"});
  CHECK(layer->linear1->weight.sizes() == gb::IntArrayRef({16, 8}));
  CHECK(layer->dropout->options.p() == 0.1);
  CHECK(layer->self_attn->options.dropout() == 0.1);
  CHECK_THROWS_WITH_AS(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).activation("tanh")),
                       doctest::Contains("activation should be relu/gelu, not tanh"), gb::Error);
}

TEST_CASE("TransformerEncoderLayer: post-norm and pre-norm, relu and gelu, masks, as the formula") {
  gb::manual_seed(1);
  for (bool norm_first : {false, true})
    for (bool gelu : {false, true}) {
      INFO("norm_first " << norm_first << " gelu " << gelu);
      nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2)
                                            .dim_feedforward(16)
                                            .norm_first(norm_first)
                                            .activation(gelu ? gb::kGELU : gb::kReLU));
      layer->eval();
      gb::Tensor x = gb::randn({4, 3, 8});
      gb::Tensor mask = gb::randn({4, 4});
      gb::Tensor kpm =
          gb::tensor(std::vector<bool>{false, false, false, true, false, false, true, true, false, false, false, false})
              .view({3, 4});
      gbtest::check_close(layer(x, mask, kpm), by_hand(*layer, x, mask, kpm, norm_first, gelu), 1e-5, 1e-6);
      gbtest::check_close(layer(x), by_hand(*layer, x, gb::Tensor(), gb::Tensor(), norm_first, gelu), 1e-5, 1e-6);
    }
}

TEST_CASE("TransformerEncoderLayer: batch_first transposes; dropout only in training") {
  gb::manual_seed(2);
  nn::TransformerEncoderLayer seq_first(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  nn::TransformerEncoderLayer batch_first(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).batch_first(true));
  batch_first->load_state_dict(seq_first->state_dict());
  seq_first->eval();
  batch_first->eval();
  gb::Tensor x = gb::randn({5, 2, 8});
  gb::Tensor y = seq_first(x);
  gbtest::check_close(batch_first(x.transpose(0, 1)), y.transpose(0, 1), 1e-5, 1e-6);
  CHECK(gb::equal(seq_first(x), y));  // eval is deterministic
  seq_first->train();
  CHECK(!gb::allclose(seq_first(x), y));  // dropout 0.1 changes the result in training
  // unbatched (S, E)
  seq_first->eval();
  gbtest::check_close(seq_first(x.select(1, 0)), y.select(1, 0), 1e-5, 1e-6);
}

TEST_CASE("TransformerEncoder: layers.0.. copies of the layer, then the final norm") {
  gb::manual_seed(3);
  nn::TransformerEncoderLayer proto(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  nn::TransformerEncoder enc(
      nn::TransformerEncoderOptions(proto, 2).norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
  auto keys = enc->named_parameters().keys();
  CHECK(keys.size() == 2 * 12 + 2);
  CHECK(keys.front() == "layers.0.self_attn.in_proj_weight");
  CHECK(keys[12] == "layers.1.self_attn.in_proj_weight");
  CHECK(keys.back() == "norm.bias");
  CHECK(enc->named_children().keys() == std::vector<std::string>{"layers", "norm"});
  // each layer starts with the prototype's weights, in its own tensors
  auto& l0 = enc->layers->at<nn::TransformerEncoderLayerImpl>(0);
  auto& l1 = enc->layers->at<nn::TransformerEncoderLayerImpl>(1);
  CHECK(gb::equal(l0.linear1->weight, proto->linear1->weight));
  CHECK(gb::equal(l1.linear1->weight, proto->linear1->weight));
  CHECK(l0.linear1->weight.data_ptr() != l1.linear1->weight.data_ptr());

  {
    gb::NoGradGuard g;
    l1.linear2->bias.add_(0.5);  // make the layers differ
  }
  gb::Tensor x = gb::randn({4, 2, 8});
  gb::Tensor expect = gb::layer_norm(l1.forward(l0.forward(x)), {8});
  gbtest::check_close(enc(x), expect, 1e-5, 1e-6);

  // from options, no norm
  nn::TransformerEncoder bare(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2), 3));
  CHECK(bare->layers->size() == 3);
  CHECK(bare->named_children().keys() == std::vector<std::string>{"layers"});
  CHECK_THROWS_AS(nn::TransformerEncoder(nn::TransformerEncoderOptions(proto, 0)), gb::Error);
}

TEST_CASE("the layer's raw forward: its own ops under its name, each submodule's under its path") {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  layer->eval();
  gb::Tensor x = gb::randn({3, 2, 8});
  CHECK(gbtest::allocation_modules([&] { layer->forward(x); }) ==
        std::set<std::string>{"TransformerEncoderLayer", "self_attn", "linear1", "linear2", "norm1", "norm2"});
}
