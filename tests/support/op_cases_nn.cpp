// tests/support/op_cases_nn.cpp — the op table's cases for conv, pooling, norms and losses, the random ops (shapes, dtypes and allocations, not values) and the optimizers' fused steps (op_cases.h; the
// torch:: side of each is in tests/oracle/ops_oracle_test.cpp, by name).
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "support/op_cases_families.h"

namespace gbtest::op_cases::families {

// conv.cpp, pool.cpp, norm.cpp, loss.cpp, dropout.cpp (eval), in-place ops on views
std::vector<Case> nn_cases() {
  return {
      {"conv2d",
       {"conv2d"},
       {in({2, 3, 7, 6}), in({4, 3, 3, 3}), in({4})},
       [](G v) { return gb::conv2d(v[0], v[1], v[2]); },
       true,
       kFloatsAndHalfs,
       kConvKernels},
      {"einsum_matmul", {"einsum", "bmm"}, {in({3, 4}), in({4, 5})}, [](G v) { return gb::einsum("ij,jk->ik", {v[0], v[1]}); }},
      {"einsum_attention",
       {"einsum", "bmm"},
       {in({2, 2, 3, 4}), in({2, 2, 5, 4})},
       [](G v) { return gb::einsum("bhqd,bhkd->bhqk", {v[0], v[1]}); }},
      {"einsum_ellipsis_broadcast",
       {"einsum", "bmm"},
       {in({2, 1, 3, 4}), in({3, 4, 2})},
       [](G v) { return gb::einsum("...ij,...jk->...ik", {v[0], v[1]}); }},
      {"einsum_implicit_three",
       {"einsum", "bmm"},
       {in({3, 4}), in({4, 2}), in({2})},
       [](G v) { return gb::einsum("ij,jk,k", {v[0], v[1], v[2]}); }},
      {"einsum_diagonal_trace_outer",
       {"einsum", "bmm"},
       {in({3, 3}), in({3, 3}), in({2})},
       [](G v) {
         return gb::cat({gb::einsum("ii->i", {v[0]}), gb::einsum("ii", {v[1]}).reshape({1}),
                         gb::einsum("i,j->ij", {v[2], v[2]}).reshape({-1}), gb::einsum("ij->ji", {v[0]}).reshape({-1})});
       }},
      {"conv1d",
       {"conv1d", "conv2d"},
       {in({2, 4, 9}), in({6, 2, 3}), in({6})},
       [](G v) { return gb::conv1d(v[0], v[1], v[2], 2, 1, 1, 2); },
       true,
       kFloatsAndHalfs,
       kConvKernels},
      {"conv2d_stride_pad_dil",
       {"conv2d"},
       {in({1, 2, 9, 8}), in({3, 2, 3, 2})},
       [](G v) {
         return F::conv2d(v[0], v[1], F::Conv2dFuncOptions().stride({2, 1}).padding({1, 2}).dilation({2, 1}));
       }},
      {"conv2d_groups",
       {"conv2d"},
       {in({2, 4, 5, 5}), in({6, 2, 3, 3}), in({6})},
       [](G v) { return gb::conv2d(v[0], v[1], v[2], 1, 1, 1, 2); }},
      {"conv_transpose2d",
       {"conv_transpose2d"},
       {in({2, 3, 4, 5}), in({3, 2, 3, 3}), in({2})},
       [](G v) { return gb::conv_transpose2d(v[0], v[1], v[2]); },
       true,
       kFloatsAndHalfs,
       kConvKernels},
      {"conv_transpose2d_stride_pad_outpad_groups_dil",
       {"conv_transpose2d"},
       {in({2, 4, 3, 4}), in({4, 3, 3, 2}), in({6})},
       [](G v) {
         return gb::conv_transpose2d(v[0], v[1], v[2], {2, 3}, {1, 0}, {1, 2}, 2, {1, 2});
       }},
      {"max_pool1d",
       {"max_pool1d", "max_pool2d", "max_pool2d_with_indices_backward"},
       {in({2, 3, 9})},
       [](G v) { return gb::max_pool1d(v[0], {3}, {2}, {1}); }},
      {"cosine_similarity",
       {"cosine_similarity"},
       {in({4, 5}), in({1, 5})},
       [](G v) { return gb::cosine_similarity(v[0], v[1], 1, 1e-8); },
       true,
       kFloats},
      {"lstm_cell",
       {"lstm_cell", "linear"},
       {in({3, 4}), in({3, 2}), in({3, 2}), in({8, 4}), in({8, 2}), in({8}), in({8})},
       [](G v) {
         auto [h, c] = gb::lstm_cell(v[0], {v[1], v[2]}, v[3], v[4], v[5], v[6]);
         return gb::cat({h.reshape({-1}), c.reshape({-1})});
       },
       true,
       kFloats},
      {"gru_cell",
       {"gru_cell", "linear"},
       {in({3, 4}), in({3, 2}), in({6, 4}), in({6, 2}), in({6}), in({6})},
       [](G v) { return gb::gru_cell(v[0], v[1], v[2], v[3], v[4], v[5]); },
       true,
       kFloats},
      {"max_pool2d",
       {"max_pool2d", "max_pool2d_with_indices_backward"},
       {in({2, 3, 7, 6})},
       [](G v) {
         return gb::max_pool2d(v[0], {3, 2}, {2, 2}, {1, 0});
       }},
      {"max_pool2d_ceil",
       {"max_pool2d", "max_pool2d_with_indices_backward"},
       {in({1, 2, 7, 7})},
       [](G v) { return gb::max_pool2d(v[0], 2, {}, 0, 1, true); }},
      {"avg_pool2d",
       {"avg_pool2d", "avg_pool2d_backward"},
       {in({2, 3, 7, 6})},
       [](G v) { return gb::avg_pool2d(v[0], 3, 2, 1); }},
      {"avg_pool2d_no_pad_count",
       {"avg_pool2d", "avg_pool2d_backward"},
       {in({1, 2, 6, 6})},
       [](G v) { return gb::avg_pool2d(v[0], 3, 2, 1, true, false); }},
      {"adaptive_avg_pool2d",
       {"adaptive_avg_pool2d", "adaptive_avg_pool2d_backward"},
       {in({2, 3, 7, 5})},
       [](G v) {
         return gb::adaptive_avg_pool2d(v[0], {3, 2});
       }},
      {"batch_norm_train",
       {"batch_norm"},
       {in({4, 3, 2, 2}), in({3}), in({3})},
       [](G v) {
         return gb::batch_norm(v[0], v[1], v[2], gb::zeros({3}, v[0].options()), gb::ones({3}, v[0].options()), true,
                               0.1, 1e-5);
       }},
      {"batch_norm_eval",
       {"batch_norm"},
       {in({4, 3}), in({3}), in({3}), nograd({3}), nograd({3}, Kind::Positive)},
       [](G v) { return gb::batch_norm(v[0], v[1], v[2], v[3], v[4], false, 0.1, 1e-5); }},
      {"layer_norm",
       {"layer_norm"},
       {in({2, 3, 4}), in({3, 4}), in({3, 4})},
       [](G v) {
         return gb::layer_norm(v[0], {3, 4}, v[1], v[2]);
       }},
      {"lstm_layer",
       {"lstm_layer", "lstm"},
       {in({4, 3, 5}), in({3, 3}), in({3, 3}), in({12, 5}), in({12, 3}), in({12}), in({12})},
       [](G v) {  // every output in one result, so each one's gradient is checked
         auto [out, h, c] = gb::lstm(v[0], {v[1].unsqueeze(0), v[2].unsqueeze(0)}, {v[3], v[4], v[5], v[6]}, true, 1,
                                     0.0, true, false, false);
         return gb::cat({out.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
       },
       true,
       kFloats},
      {"lstm_bidirectional_nobias_batch_first",
       {"lstm_layer", "lstm"},
       {in({2, 4, 3}), in({2, 2, 2}), in({2, 2, 2}), in({8, 3}), in({8, 2}), in({8, 3}), in({8, 2})},
       [](G v) {
         auto [out, h, c] = gb::lstm(v[0], {v[1], v[2]}, {v[3], v[4], v[5], v[6]}, false, 1, 0.0, true, true, true);
         return gb::cat({out.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
       },
       true,
       kFloats},
      {"group_norm",
       {"group_norm"},
       {in({2, 6, 3}), in({6}), in({6})},
       [](G v) { return gb::group_norm(v[0], 3, v[1], v[2]); }},
      {"dropout_eval", {"dropout"}, {in({3, 4})}, [](G v) { return gb::dropout(v[0], 0.5, false); }},
      {"cross_entropy", {"cross_entropy"}, {in({5, 4}), idx({5}, 4)}, [](G v) { return F::cross_entropy(v[0], v[1]); }},
      {"cross_entropy_smooth_weight_ignore",
       {"cross_entropy"},
       {in({6, 4}), idx({6}, 4), nograd({4}, Kind::Positive)},
       [](G v) {
         auto t = v[1].clone();
         {
           gb::NoGradGuard ng;
           t.narrow(0, 0, 1).fill_(1);
           t.narrow(0, 5, 1).fill_(1);
         }
         return F::cross_entropy(v[0], t,
                                 F::CrossEntropyFuncOptions().weight(v[2]).ignore_index(1).label_smoothing(0.2));
       }},
      // In-place ops on views of a non-leaf (CopySlices), including an older view read after the base changed.
      {"inplace_on_views",
       {"mul_", "copy_", "relu_", "select", "slice", "transpose"},
       {in({2, 3, 4}), in({3})},
       [](G v) {
         auto y = v[0][0] * 1;
         auto old = y.narrow(1, 1, 2);
         y.select(1, 2).mul_(v[1]);
         y.t().narrow(0, 0, 2).copy_(v[0][1].t().narrow(0, 1, 2).sin());
         y.index({gb::indexing::Slice(), 3}).relu_();
         return y * old.sum();
       }},
      {"cross_entropy_sum_spatial",
       {"cross_entropy"},
       {in({2, 3, 4, 2}), idx({2, 4, 2}, 3)},
       [](G v) { return F::cross_entropy(v[0], v[1], F::CrossEntropyFuncOptions().reduction(gb::kSum)); }},
      {"cross_entropy_none",
       {"cross_entropy"},
       {in({4, 3}), idx({4}, 3)},
       [](G v) {
         return F::cross_entropy(v[0], v[1], F::CrossEntropyFuncOptions().reduction(gb::kNone).label_smoothing(0.1));
       }},
      {"cross_entropy_probs",
       {"cross_entropy"},
       {in({4, 3}), nograd({4, 3}, Kind::UnitInterval)},
       [](G v) { return F::cross_entropy(v[0], v[1] / v[1].sum({1}, true)); }},
      {"nll_loss",
       {"nll_loss", "nll_loss_backward", "log_softmax"},
       {in({5, 4}), idx({5}, 4)},
       [](G v) { return F::nll_loss(v[0].log_softmax(1), v[1]); }},
      {"mse_loss", {"mse_loss"}, {in({3, 4}), in({3, 4})}, [](G v) { return F::mse_loss(v[0], v[1]); }},
      {"l1_loss_sum", {"l1_loss"}, {in({3, 4}), in({3, 4})}, [](G v) { return F::l1_loss(v[0], v[1], gb::kSum); }},
      {"smooth_l1_loss",
       {"smooth_l1_loss"},
       {in({3, 4}), in({3, 4})},
       [](G v) { return F::smooth_l1_loss(v[0] * 2, v[1], F::SmoothL1LossFuncOptions().beta(0.5)); }},
      {"smooth_l1_loss_none",
       {"smooth_l1_loss"},
       {in({5}), in({5})},
       [](G v) { return F::smooth_l1_loss(v[0] * 2, v[1], F::SmoothL1LossFuncOptions(gb::kNone)); }},
      {"huber_loss",
       {"huber_loss"},
       {in({3, 4}), in({3, 4})},
       [](G v) { return F::huber_loss(v[0] * 2, v[1], F::HuberLossFuncOptions().delta(0.7).reduction(gb::kSum)); }},
      // libtorch's own target gradient is wrong when the target broadcasts (it resizes a (4) output to (3, 4));
      // F::huber_loss expands first, as here
      {"huber_loss_broadcast",
       {"huber_loss"},
       {in({3, 4}), in({4})},
       [](G v) { return gb::huber_loss(v[0] * 2, v[1]); }},
      {"binary_cross_entropy",
       {"binary_cross_entropy"},
       {in({3, 4}, Kind::UnitInterval), in({3, 4}, Kind::UnitInterval), nograd({4}, Kind::Positive)},
       [](G v) { return F::binary_cross_entropy(v[0], v[1], F::BinaryCrossEntropyFuncOptions().weight(v[2])); }},
      {"binary_cross_entropy_sum",
       {"binary_cross_entropy"},
       {in({6}, Kind::UnitInterval), in({6}, Kind::UnitInterval)},
       [](G v) { return F::binary_cross_entropy(v[0], v[1], F::BinaryCrossEntropyFuncOptions().reduction(gb::kSum)); }},
      {"kl_div_batchmean",
       {"kl_div"},
       {in({4, 5}), in({4, 5}, Kind::UnitInterval)},
       [](G v) { return F::kl_div(v[0].log_softmax(1), v[1], F::KLDivFuncOptions(gb::kBatchMean)); }},
      {"kl_div_log_target_none",
       {"kl_div"},
       {in({3, 4}), in({3, 4})},
       [](G v) { return F::kl_div(v[0], v[1], F::KLDivFuncOptions(gb::kNone).log_target(true)); }},
      {"kl_div_sum",
       {"kl_div"},
       {in({2, 3}), in({2, 3}, Kind::Positive)},
       [](G v) { return gb::kl_div(v[0], v[1], gb::kSum); }},
      {"bce_with_logits",
       {"binary_cross_entropy_with_logits"},
       {in({3, 4}), nograd({3, 4}, Kind::UnitInterval), nograd({4}, Kind::Positive)},
       [](G v) {
         return F::binary_cross_entropy_with_logits(v[0], v[1],
                                                    F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(v[2]));
       }},
  };
}

// dropout.cpp, random.cpp: the numbers are the generator's (libtorch's differ), so these compare shapes, dtypes and
// allocations, not values.
std::vector<Case> random_cases() {
  std::vector<Case> out = {
      {"bernoulli", {"bernoulli"}, {in({3, 4}, Kind::UnitInterval)}, [](G v) { return gb::bernoulli(v[0]); }, false},
      {"bernoulli_",
       {"clone", "bernoulli_"},
       {in({3, 4})},
       [](G v) { return v[0].detach().clone().bernoulli_(0.3); },
       false},
      {"dropout", {"dropout"}, {in({3, 4})}, [](G v) { return gb::dropout(v[0], 0.4, true); }},
      {"dropout_",
       {"mul", "dropout_"},
       {in({3, 4})},
       [](G v) {
         gb::Tensor y = v[0] * 1;
         return gb::dropout_(y, 0.4, true);
       }},
      {"feature_dropout",
       {"feature_dropout"},
       {in({2, 3, 4, 4})},
       [](G v) { return gb::feature_dropout(v[0], 0.5, true); }},
      {"multinomial", {"multinomial"}, {in({3, 5}, Kind::Positive)}, [](G v) { return v[0].multinomial(2); }, false},
      {"normal_", {"clone", "normal_"}, {in({3, 4})}, [](G v) { return v[0].detach().clone().normal_(1, 2); }, false},
      {"uniform_",
       {"clone", "uniform_"},
       {in({3, 4})},
       [](G v) { return v[0].detach().clone().uniform_(-1, 2); },
       false},
  };
  for (Case& c : out) c.random = true;
  return out;
}

// The optimizers' fused steps: two steps of each on one parameter with a given gradient.
template <class Optimizer, class Options>
gb::Tensor two_steps(G v, Options options) {
  gb::Tensor p = v[0].clone();
  p.mutable_grad() = v[1];
  Optimizer opt(std::vector<gb::Tensor>{p}, options);
  opt.step();
  opt.step();
  return p;
}

std::vector<Case> optimizer_cases() {
  namespace O = gb::optim;
  return {
      {"_fused_adam_",
       {"_fused_adam_", "clone"},
       {nograd({3, 4}), nograd({3, 4})},
       [](G v) { return two_steps<O::Adam>(v, O::AdamOptions(0.1).weight_decay(0.01)); },
       false,
       kFloats},
      {"_fused_adagrad_",
       {"_fused_adagrad_", "clone"},
       {nograd({3, 4}), nograd({3, 4})},
       [](G v) { return two_steps<O::Adagrad>(v, O::AdagradOptions(0.1)); },
       false,
       kFloats},
      {"_fused_rmsprop_",
       {"_fused_rmsprop_", "clone"},
       {nograd({3, 4}), nograd({3, 4})},
       [](G v) { return two_steps<O::RMSprop>(v, O::RMSpropOptions(0.01).momentum(0.9)); },
       false,
       kFloats},
  };
}

}  // namespace gbtest::op_cases::families
