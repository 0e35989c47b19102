// tests/support/op_cases.cpp — the op table's cases (op_cases.h): one function per family of op_table.def, each
// case naming the rows it exercises. The torch:: side of each is in tests/oracle/ops_oracle_test.cpp, by name, in
// functions of the same names.
//
// [SECTION] pointwise_cases              unary, binary, activation, compare: elementwise
// [SECTION] reduction_cases              sum, reduce, softmax
// [SECTION] linalg_shape_cases           products, joins, index ops, views
// [SECTION] nn_cases                     conv, pool, norm, losses, in-place ops on views
// [SECTION] sort_shape_copy_cases        sort, topk, cumsum, flip, repeat, masked_select, pad
// [SECTION] advanced_index_cases         index tensors and masks, index_put_
// [SECTION] everyday_cases               triangles, roll, erf, prod, normalize, interpolate
// [SECTION] inplace_cases                the in-place variants (exp_, add_, ...)
// [SECTION] compare_cases                comparisons, non-finite tests, logic, allclose, equal
// [SECTION] more_reduction_linalg_cases  argmin, var_mean, addmm, dot, outer, one_hot, a double backward
// [SECTION] view_copy_cases              views and copies
// [SECTION] random_cases                 random ops (shapes, dtypes, allocations; not values)
// [SECTION] optimizer_cases              the optimizers' fused steps
// then cases(), make_inputs() and inputs_on().
#include "support/op_cases.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "glassbox/ops/op_table.h"

namespace gbtest::op_cases {

namespace F = gb::nn::functional;

Input in(std::vector<int64_t> shape, Kind kind) { return Input{std::move(shape), kind, 0, true}; }
Input idx(std::vector<int64_t> shape, int64_t hi) { return Input{std::move(shape), Kind::Index, hi, false}; }
Input nograd(std::vector<int64_t> shape, Kind kind) { return Input{std::move(shape), kind, 0, false}; }

namespace {

using G = Inputs;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An int64 tensor of these values on like's device (a case's constants live where its inputs do).
gb::Tensor longs(std::vector<int64_t> v, const gb::Tensor& like) {
  return gb::tensor(gb::ArrayRef<int64_t>(v), gb::kLong).to(like.device());
}

// The rows oneDNN's (cpu, float32) and cuDNN's (cuda) convolutions open inside conv2d and conv_transpose2d.
const std::vector<std::string_view> kConvKernels = {"onednn_convolution_forward",
                                                    "onednn_convolution_backward_data",
                                                    "onednn_convolution_backward_weights",
                                                    "onednn_reorder",
                                                    "onednn_weight_grad_sum",
                                                    "cudnn_convolution_forward",
                                                    "cudnn_convolution_backward_data",
                                                    "cudnn_convolution_backward_filter"};

// unary.cpp, binary.cpp, activation.cpp, compare.cpp: elementwise
std::vector<Case> pointwise_cases() {
  return {
      {"add", {"add"}, {in({3, 4}), in({4})}, [](G v) { return v[0] + v[1]; }},
      {"add_alpha", {"add"}, {in({2, 3}), in({2, 1})}, [](G v) { return gb::add(v[0], v[1], 2.5); }},
      {"sub", {"sub"}, {in({3, 1}), in({1, 4})}, [](G v) { return v[0] - v[1]; }},
      {"rsub_scalar", {"rsub"}, {in({5})}, [](G v) { return 2.0 - v[0]; }},
      {"mul", {"mul"}, {in({2, 3, 4}), in({3, 1})}, [](G v) { return v[0] * v[1]; }},
      {"div", {"div"}, {in({3, 4}), in({4}, Kind::Positive)}, [](G v) { return v[0] / v[1]; }},
      {"pow_scalar", {"pow"}, {in({6})}, [](G v) { return v[0].pow(3); }},
      {"pow_tensor", {"pow"}, {in({4}, Kind::Positive), in({4})}, [](G v) { return v[0].pow(v[1]); }},
      {"neg", {"neg"}, {in({4})}, [](G v) { return -v[0]; }},
      {"abs", {"abs"}, {in({7})}, [](G v) { return v[0].abs(); }},
      {"exp", {"exp"}, {in({7})}, [](G v) { return v[0].exp(); }},
      {"log", {"log"}, {in({7}, Kind::Positive)}, [](G v) { return v[0].log(); }},
      {"log1p", {"log1p"}, {in({7}, Kind::Positive)}, [](G v) { return v[0].log1p(); }},
      {"sqrt", {"sqrt"}, {in({7}, Kind::Positive)}, [](G v) { return v[0].sqrt(); }},
      {"rsqrt", {"rsqrt"}, {in({7}, Kind::Positive)}, [](G v) { return v[0].rsqrt(); }},
      {"sin", {"sin"}, {in({7})}, [](G v) { return v[0].sin(); }},
      {"cos", {"cos"}, {in({7})}, [](G v) { return v[0].cos(); }},
      {"tanh", {"tanh"}, {in({7})}, [](G v) { return v[0].tanh(); }},
      {"sigmoid", {"sigmoid"}, {in({7})}, [](G v) { return v[0].sigmoid(); }},
      {"relu", {"relu", "threshold_backward"}, {in({3, 5})}, [](G v) { return v[0].relu(); }},
      {"leaky_relu", {"leaky_relu"}, {in({9})}, [](G v) { return gb::leaky_relu(v[0], 0.2); }},
      {"gelu", {"gelu", "gelu_backward"}, {in({9})}, [](G v) { return gb::gelu(v[0]); }},
      {"gelu_tanh", {"gelu", "gelu_backward"}, {in({9})}, [](G v) { return gb::gelu(v[0], "tanh"); }},
      {"silu", {"silu"}, {in({9})}, [](G v) { return gb::silu(v[0]); }},
      {"softplus", {"softplus"}, {in({9})}, [](G v) { return gb::softplus(v[0], 2, 1); }},
      {"clamp", {"clamp"}, {in({9})}, [](G v) { return v[0].clamp(-0.5, 0.7); }},
      {"where",
       {"where"},
       {nograd({3, 4}, Kind::Bool), in({3, 4}), in({4})},
       [](G v) { return gb::where(v[0], v[1], v[2]); }},
      {"clamp_tensor",
       {"clamp"},
       {in({3, 4}), in({4}), in({3, 1})},
       [](G v) { return gb::clamp(v[0], v[1] - 0.5, v[2] + 0.5); }},
      {"clamp_min_tensor", {"clamp"}, {in({3, 4}), in({4})}, [](G v) { return gb::clamp(v[0], v[1], std::nullopt); }},
      {"where_scalar",
       {"where"},
       {nograd({3, 4}, Kind::Bool), in({3, 4})},
       [](G v) { return gb::where(v[0], v[1], 0.5); }},
      {"masked_fill",
       {"masked_fill"},
       {in({3, 4}), nograd({4}, Kind::Bool)},
       [](G v) { return v[0].masked_fill(v[1], -1.5); }},
      {"lerp", {"lerp"}, {in({3, 4}), in({4})}, [](G v) { return gb::lerp(v[0], v[1], 0.3); }},
      {"addcmul",
       {"addcmul"},
       {in({3, 4}), in({4}), in({3, 1})},
       [](G v) { return gb::addcmul(v[0], v[1], v[2], 0.7); }},
      {"addcdiv",
       {"addcdiv"},
       {in({3, 4}), in({4}), in({3, 1}, Kind::Positive)},
       [](G v) { return gb::addcdiv(v[0], v[1], v[2], -1.3); }},
      {"square", {"pow"}, {in({7})}, [](G v) { return v[0].square(); }},
      {"reciprocal", {"reciprocal"}, {in({7}, Kind::Positive)}, [](G v) { return v[0].reciprocal(); }},
      {"sign", {"sign"}, {in({7})}, [](G v) { return v[0].sign(); }},
      {"round", {"round"}, {in({7})}, [](G v) { return (v[0] * 3).round(); }},
      {"floor", {"floor"}, {in({7})}, [](G v) { return gb::floor(v[0] * 3); }},
      {"ceil", {"ceil"}, {in({7})}, [](G v) { return (v[0] * 3).ceil(); }},
      {"trunc", {"trunc"}, {in({7})}, [](G v) { return gb::trunc(v[0] * 3); }},
      {"logical_and",
       {"logical_and"},
       {nograd({3, 4}, Kind::Bool), nograd({4}, Kind::Bool)},
       [](G v) { return gb::logical_and(v[0], v[1]); }},
      {"maximum", {"maximum"}, {in({3, 4}), in({4})}, [](G v) { return gb::maximum(v[0], v[1]); }},
      {"minimum", {"minimum"}, {in({3, 4}), in({3, 1})}, [](G v) { return gb::minimum(v[0], v[1]); }},
      {"lt", {"lt"}, {in({3, 4}), in({4})}, [](G v) { return v[0] < v[1]; }},
      {"ge_scalar", {"ge"}, {in({5})}, [](G v) { return v[0] >= 0.1; }},
      {"eq", {"eq"}, {in({5}), in({5})}, [](G v) { return v[0] == v[0].t(); }},
      {"noncontiguous_mul", {"mul", "transpose"}, {in({4, 3}), in({3, 4})}, [](G v) { return v[0].t() * v[1]; }},
  };
}

// sum.cpp, reduce.cpp, softmax.cpp
std::vector<Case> reduction_cases() {
  return {
      {"sum_all", {"sum"}, {in({3, 4})}, [](G v) { return v[0].sum(); }},
      {"sum_dims",
       {"sum"},
       {in({2, 3, 4})},
       [](G v) {
         return v[0].sum({0, 2}, true);
       }},
      {"mean_dim", {"mean"}, {in({2, 3, 4})}, [](G v) { return v[0].mean({-1}); }},
      {"max_all", {"max"}, {in({3, 4})}, [](G v) { return v[0].max(); }},
      {"max_dim_values", {"max"}, {in({3, 4})}, [](G v) { return std::get<0>(v[0].max(1)); }},
      {"max_dim_indices", {"max"}, {in({3, 4})}, [](G v) { return std::get<1>(v[0].max(0, true)); }, false},
      {"min_dim_values", {"min"}, {in({3, 4})}, [](G v) { return std::get<0>(v[0].min(-1, true)); }},
      {"amax",
       {"amax"},
       {in({2, 3, 4})},
       [](G v) {
         return v[0].amax({0, 2});
       }},
      {"amin", {"amin"}, {in({2, 3, 4})}, [](G v) { return v[0].amin({1}, true); }},
      {"argmax", {"argmax"}, {in({3, 5})}, [](G v) { return v[0].argmax(1); }, false},
      {"var", {"var"}, {in({3, 5})}, [](G v) { return v[0].var(1); }},
      {"var_biased_all", {"var"}, {in({3, 5})}, [](G v) { return v[0].var(false); }},
      {"std", {"std"}, {in({4, 3})}, [](G v) { return v[0].std({0}, true, true); }},
      {"norm2", {"norm"}, {in({3, 4})}, [](G v) { return v[0].norm(2, {1}); }},
      {"norm1", {"norm"}, {in({3, 4})}, [](G v) { return v[0].norm(1); }},
      {"norm3", {"norm"}, {in({3, 4})}, [](G v) { return v[0].norm(3, {0}, true); }},
      {"logsumexp", {"logsumexp"}, {in({3, 4})}, [](G v) { return gb::logsumexp(v[0], {1}); }},
      {"softmax", {"softmax", "softmax_backward"}, {in({3, 5})}, [](G v) { return v[0].softmax(1); }},
      {"softmax_dim0", {"softmax", "softmax_backward"}, {in({3, 5})}, [](G v) { return v[0].softmax(0); }},
      {"log_softmax",
       {"log_softmax", "log_softmax_backward"},
       {in({2, 3, 4})},
       [](G v) { return v[0].log_softmax(-1); }},
  };
}

// linalg.cpp, join.cpp, index.cpp, views
std::vector<Case> linalg_shape_cases() {
  return {
      {"mm", {"mm"}, {in({3, 4}), in({4, 5})}, [](G v) { return gb::mm(v[0], v[1]); }},
      // PyTorch's fused bias + activation (not differentiable there either): forward only
      {"_addmm_activation_relu",
       {"_addmm_activation"},
       {nograd({5}), nograd({3, 4}), nograd({4, 5})},
       [](G v) { return gb::_addmm_activation(v[0], v[1], v[2]); },
       false},
      {"_addmm_activation_gelu",
       {"_addmm_activation"},
       {nograd({3, 5}), nograd({3, 4}), nograd({4, 5})},
       [](G v) { return gb::_addmm_activation(v[0], v[1], v[2], 0.5, 2, true); },
       false},
      {"matmul_batched_broadcast",
       {"matmul"},
       {in({2, 1, 3, 4}), in({3, 4, 2})},
       [](G v) { return gb::matmul(v[0], v[1]); }},
      {"matmul_vec_mat", {"matmul"}, {in({4}), in({4, 3})}, [](G v) { return gb::matmul(v[0], v[1]); }},
      {"matmul_mat_vec", {"matmul"}, {in({3, 4}), in({4})}, [](G v) { return gb::matmul(v[0], v[1]); }},
      {"matmul_transposed", {"matmul"}, {in({4, 3}), in({5, 4})}, [](G v) { return gb::matmul(v[0].t(), v[1].t()); }},
      {"bmm", {"bmm"}, {in({2, 3, 4}), in({2, 4, 5})}, [](G v) { return gb::bmm(v[0], v[1]); }},
      {"linear", {"linear"}, {in({2, 3, 4}), in({5, 4}), in({5})}, [](G v) { return gb::linear(v[0], v[1], v[2]); }},
      {"cat",
       {"cat"},
       {in({2, 3}), in({2, 1})},
       [](G v) {
         return gb::cat({v[0], v[1]}, 1);
       }},
      {"stack",
       {"stack"},
       {in({2, 3}), in({2, 3})},
       [](G v) {
         return gb::stack({v[0], v[1]}, 1);
       }},
      {"split", {"slice"}, {in({5, 4})}, [](G v) { return v[0].split(2, 0)[1] * 2 + v[0].split(2, 0)[2].sum(); }},
      {"chunk", {"slice"}, {in({4, 6})}, [](G v) { return v[0].chunk(3, 1)[2]; }},
      {"index_select",
       {"index_select", "index_select_backward"},
       {in({5, 3}), idx({7}, 5)},
       [](G v) { return v[0].index_select(0, v[1]); }},
      {"gather", {"gather"}, {in({4, 5}), idx({4, 3}, 5)}, [](G v) { return v[0].gather(1, v[1]); }},
      {"scatter_add",
       {"scatter_add"},
       {in({3, 5}), idx({2, 5}, 3), in({2, 5})},
       [](G v) { return v[0].scatter_add(0, v[1], v[2]); }},
      {"embedding",
       {"embedding", "embedding_dense_backward"},
       {in({6, 3}), idx({2, 4}, 6)},
       [](G v) { return gb::embedding(v[0], v[1]); }},
      {"permute_reshape",
       {"permute", "reshape"},
       {in({2, 3, 4})},
       [](G v) {
         return v[0].permute({2, 0, 1}).reshape({4, 6});
       }},
      {"index_slices",
       {"slice", "slice_backward"},
       {in({4, 5})},
       [](G v) {
         return v[0].index({gb::indexing::Slice(1, 4, 2), gb::indexing::Slice(gb::indexing::None, -1)});
       }},
  };
}

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

// sort.cpp, cumsum.cpp, rearrange.cpp, masked_select.cpp, pad.cpp
std::vector<Case> sort_shape_copy_cases() {
  return {
      {"sort_values", {"sort"}, {in({3, 5})}, [](G v) { return std::get<0>(v[0].sort(1, true)); }},
      {"sort_indices_dim0", {"sort"}, {in({4, 3})}, [](G v) { return std::get<1>(gb::sort(v[0], 0)); }, false},
      // ties (rounded values): the stable order, ascending and descending, as libtorch's stable CPU sort
      {"sort_stable_ties",
       {"sort"},
       {nograd({4, 9})},
       [](G v) { return std::get<1>(gb::sort((v[0] * 1.5).round(), 1)); },
       false},
      {"sort_stable_ties_descending",
       {"sort"},
       {nograd({9, 4})},
       [](G v) { return std::get<1>(gb::sort((v[0] * 1.5).round(), std::optional<bool>(true), 0, true)); },
       false},
      {"argsort", {"argsort"}, {in({3, 6})}, [](G v) { return v[0].argsort(-1, true); }, false},
      {"topk_largest", {"topk"}, {in({3, 7})}, [](G v) { return std::get<0>(v[0].topk(3)); }},
      {"topk_smallest_dim0", {"topk"}, {in({6, 4})}, [](G v) { return std::get<0>(gb::topk(v[0], 2, 0, false)); }},
      {"topk_indices", {"topk"}, {in({2, 3, 5})}, [](G v) { return std::get<1>(v[0].topk(4, 2)); }, false},
      // unsorted: any order is allowed, so both are sorted before comparing
      {"topk_unsorted",
       {"topk"},
       {in({3, 8})},
       [](G v) { return std::get<0>(std::get<0>(v[0].topk(5, 1, true, false)).sort(1)); }},
      {"cumsum", {"cumsum"}, {in({3, 4})}, [](G v) { return v[0].cumsum(1); }},
      {"cumsum_dim0_3d", {"cumsum"}, {in({4, 2, 3})}, [](G v) { return gb::cumsum(v[0], 0); }},
      {"cumsum_int", {"cumsum"}, {idx({3, 5}, 7)}, [](G v) { return v[0].cumsum(1); }, false},
      {"flip",
       {"flip"},
       {in({2, 3, 4})},
       [](G v) {
         return v[0].flip({0, 2});
       }},
      {"flip_transposed", {"flip"}, {in({3, 4})}, [](G v) { return gb::flip(v[0].t(), {-1}); }},
      {"repeat",
       {"repeat"},
       {in({3, 2})},
       [](G v) {
         return v[0].repeat({2, 1, 3});
       }},
      {"masked_select",
       {"masked_select"},
       {in({3, 4}), nograd({4}, Kind::Bool)},
       [](G v) { return v[0].masked_select(v[1]); }},
      {"masked_select_broadcast_input",
       {"masked_select"},
       {in({3, 1}), nograd({3, 4}, Kind::Bool)},
       [](G v) { return gb::masked_select(v[0], v[1]); }},
      {"constant_pad_nd",
       {"constant_pad_nd"},
       {in({2, 3, 4})},
       [](G v) {
         return gb::constant_pad_nd(v[0], {1, -1, 2, 0}, 0.5);
       }},
      {"pad_constant",
       {"pad"},
       {in({2, 3})},
       [](G v) {
         return F::pad(v[0], F::PadFuncOptions({2, 1}).value(-1));
       }},
      {"pad_reflect_2d",
       {"pad"},
       {in({2, 3, 4, 5})},
       [](G v) {
         return F::pad(v[0], F::PadFuncOptions({2, 1, 1, 2}).mode(gb::kReflect));
       }},
      {"pad_replicate_1d",
       {"pad"},
       {in({2, 3, 4})},
       [](G v) {
         return F::pad(v[0], F::PadFuncOptions({3, 1}).mode(gb::kReplicate));
       }},
      {"pad_circular_2d",
       {"pad"},
       {in({1, 2, 3, 4})},
       [](G v) {
         return gb::pad(v[0], {1, 2, 3, 0}, "circular");
       }},
  };
}

// advanced_index.cpp: index tensors and masks, alone, with slices, None and ..., adjacent (the picked dims stay
// in place) or not (they come first); index_put_ with values, numbers and accumulate
std::vector<Case> advanced_index_cases() {
  namespace GI = gb::indexing;
  return {
      {"index rows", {"index"}, {in({5, 4}), idx({3}, 5)}, [](G v) { return v[0].index({v[1]}); }},
      {"index 2-D index tensor",
       {"index"},
       {in({5, 4}), idx({2, 3}, 4)},
       [](G v) {
         return v[0].index({GI::Slice(), v[1]});
       }},
      {"index two tensors broadcast",
       {"index"},
       {in({5, 4}), idx({3, 1}, 5), idx({2}, 4)},
       [](G v) {
         return v[0].index({v[1], v[2]});
       }},
      {"index adjacent in the middle",
       {"index"},
       {in({3, 4, 5, 2}), idx({6}, 4), idx({6}, 5)},
       [](G v) {
         return v[0].index({GI::Slice(), v[1], v[2]});
       }},
      {"index separated tensors go first",
       {"index"},
       {in({3, 4, 5}), idx({2}, 3), idx({2}, 5)},
       [](G v) {
         return v[0].index({v[1], GI::Slice(), v[2]});
       }},
      {"index negative, ellipsis and None",
       {"index"},
       {in({3, 4, 5})},
       [](G v) {
         return v[0].index({GI::Ellipsis, longs({-1, 0, -5}, v[0]), GI::None});
       }},
      {"index integer then tensor",
       {"index"},
       {in({3, 4, 5})},
       [](G v) {
         return v[0].index({1, GI::Slice(), longs({4, 2}, v[0])});
       }},
      {"index full mask",
       {"index", "nonzero"},
       {in({5, 4}), nograd({5, 4}, Kind::Bool)},
       [](G v) { return v[0].index({v[1]}); }},
      {"index row mask",
       {"index", "nonzero"},
       {in({6, 3}), nograd({6}, Kind::Bool)},
       [](G v) { return v[0].index({v[1]}); }},
      {"index mask on trailing dims",
       {"index", "nonzero"},
       {in({2, 3, 4}), nograd({3, 4}, Kind::Bool)},
       [](G v) {
         return v[0].index({GI::Slice(), v[1]});
       }},
      {"index_put_ values",
       {"index_put_"},
       {in({5, 4}), in({3, 4})},
       [](G v) {
         gb::Tensor y = v[0] * 1.0;
         y.index_put_({longs({3, 0, 4}, v[0])}, v[1]);
         return y;
       }},
      {"index_put_ broadcast values",
       {"index_put_"},
       {in({5, 4}), in({4})},
       [](G v) {
         gb::Tensor y = v[0] * 1.0;
         y.index_put_({longs({1, 2}, v[0])}, v[1]);
         return y;
       }},
      {"index_put_ mask number",
       {"index_put_", "nonzero"},
       {in({5, 4})},
       [](G v) {
         gb::Tensor y = v[0] * 1.0;
         y.index_put_({y < 0}, 0.5);
         return y;
       }},
      {"index_put_ mask values",
       {"index_put_", "nonzero"},
       {in({6, 3}), nograd({6}, Kind::Bool), in({3})},
       [](G v) {
         gb::Tensor y = v[0] * 1.0;
         y.index_put_({v[1]}, v[2]);
         return y;
       }},
      {"index_put_ in the middle",
       {"index_put_"},
       {in({3, 4, 5}), in({3, 2})},
       [](G v) {
         gb::Tensor y = v[0] * 1.0;
         y.index_put_({GI::Slice(), longs({3, 1}, v[0]), 2}, v[1]);
         return y;
       }},
      {"index_put_ accumulate repeats",
       {"index_put_"},
       {in({5, 4}), in({4, 4})},
       [](G v) {
         gb::Tensor y = v[0] * 1.0;
         y.index_put_({longs({1, 3, 1, 1}, v[0])}, v[1], true);
         return y;
       }},
      {"index_put_ two tensors",
       {"index_put_"},
       {in({4, 5}), in({3})},
       [](G v) {
         gb::Tensor y = v[0] * 1.0;
         y.index_put_({longs({0, 2, 3}, v[0]), longs({4, 4, 0}, v[0])}, v[1]);
         return y;
       }},
      {"nonzero", {"nonzero"}, {nograd({3, 4}, Kind::Bool)}, [](G v) { return v[0].nonzero(); }},
  };
}

// What everyday programs reach for beyond the core: triangles, roll, erf, prod along a dim, the two-tensor
// min/max, F::normalize, interpolate
std::vector<Case> everyday_cases() {
  return {
      {"triu", {"triu"}, {in({4, 5})}, [](G v) { return v[0].triu(); }},
      {"triu batched k=1", {"triu"}, {in({2, 3, 4})}, [](G v) { return gb::triu(v[0], 1); }},
      {"tril k=-1", {"tril"}, {in({4, 3})}, [](G v) { return v[0].tril(-1); }},
      {"roll dims",
       {"roll"},
       {in({3, 4})},
       [](G v) {
         return v[0].roll({1, -5}, {0, 1});
       }},
      {"roll flat", {"roll"}, {in({3, 4})}, [](G v) { return gb::roll(v[0], {5}); }},
      {"erf", {"erf"}, {in({7})}, [](G v) { return v[0].erf(); }},
      {"prod dim", {"prod"}, {in({3, 4})}, [](G v) { return v[0].prod(1); }},
      {"prod dim keepdim", {"prod"}, {in({3, 4, 2})}, [](G v) { return v[0].prod(0, true); }},
      // rows with two zeros, one, none (made on the inputs' device: the allocations are compared across devices)
      {"prod dim with zeros",
       {"prod", "slice", "fill_"},
       {in({3, 4})},
       [](G v) {
         gb::Tensor z = gb::ones({3, 4}, v[0].options());
         z.narrow(0, 0, 1).narrow(1, 1, 1).fill_(0);
         z.narrow(0, 1, 1).narrow(1, 0, 2).fill_(0);
         return (v[0] * z).prod(1);
       }},
      {"max of two", {"maximum"}, {in({3, 4}), in({4})}, [](G v) { return gb::max(v[0], v[1]); }},
      {"min of two", {"minimum"}, {in({3, 4}), in({3, 4})}, [](G v) { return gb::min(v[0], v[1]); }},
      {"F::normalize",
       {"norm", "clamp", "div"},
       {in({3, 4})},
       [](G v) { return F::normalize(v[0], F::NormalizeFuncOptions().p(2).dim(1)); }},
      {"F::normalize p=1 dim 0",
       {"norm", "clamp", "div"},
       {in({3, 4})},
       [](G v) { return F::normalize(v[0], F::NormalizeFuncOptions().p(1).dim(0)); }},
      {"LogSoftmax module", {"log_softmax"}, {in({3, 4})}, [](G v) { return gb::nn::LogSoftmax(1)(v[0]); }},
      {"interpolate nearest size",
       {"upsample"},
       {in({2, 3, 4, 5})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{7, 3}));
       }},
      {"interpolate nearest x2",
       {"upsample"},
       {in({1, 2, 3, 3})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}));
       }},
      {"interpolate bilinear x1.5",
       {"upsample"},
       {in({2, 2, 4, 3})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions()
                                         .scale_factor(std::vector<double>{1.5, 2.5})
                                         .mode(gb::kBilinear)
                                         .align_corners(false));
       }},
      {"interpolate bilinear align_corners down",
       {"upsample"},
       {in({1, 3, 6, 5})},
       [](G v) {
         return F::interpolate(
             v[0],
             F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 7}).mode(gb::kBilinear).align_corners(true));
       }},
      {"interpolate linear 3-D",
       {"upsample"},
       {in({2, 3, 5})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(gb::kLinear));
       }},
      {"interpolate trilinear",
       {"upsample"},
       {in({1, 1, 2, 3, 2})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions()
                                         .scale_factor(std::vector<double>{2, 1.5, 2})
                                         .mode(gb::kTrilinear)
                                         .align_corners(false));
       }},
      {"Upsample module",
       {"upsample"},
       {in({1, 2, 3, 4})},
       [](G v) {
         return gb::nn::Upsample(gb::nn::UpsampleOptions()
                                     .scale_factor(std::vector<double>{2, 2})
                                     .mode(gb::kBilinear)
                                     .align_corners(false))(v[0]);
       }},
  };
}

// The in-place variants: the out-of-place case applied in place to a clone (a leaf cannot be changed in place).
std::vector<Case> inplace_cases() {
  return {
      {"exp_", {"clone", "exp_"}, {in({7})}, [](G v) { return v[0].clone().exp_(); }},
      {"log_", {"clone", "log_"}, {in({7}, Kind::Positive)}, [](G v) { return v[0].clone().log_(); }},
      {"neg_", {"clone", "neg_"}, {in({7})}, [](G v) { return v[0].clone().neg_(); }},
      {"sigmoid_", {"clone", "sigmoid_"}, {in({7})}, [](G v) { return v[0].clone().sigmoid_(); }},
      {"sqrt_", {"clone", "sqrt_"}, {in({7}, Kind::Positive)}, [](G v) { return v[0].clone().sqrt_(); }},
      {"tanh_", {"clone", "tanh_"}, {in({7})}, [](G v) { return v[0].clone().tanh_(); }},
      {"relu_", {"clone", "relu_", "threshold_backward"}, {in({3, 5})}, [](G v) { return v[0].clone().relu_(); }},
      {"add_", {"clone", "add_"}, {in({3, 4}), in({4})}, [](G v) { return v[0].clone().add_(v[1], 0.5); }},
      {"sub_",
       {"clone", "sub_"},
       {in({3, 4}), in({3, 1})},
       [](G v) { return v[0].clone().sub_(v[1]); },
       true,
       kAllDtypes},
      {"mul_", {"clone", "mul_"}, {in({3, 4}), in({4})}, [](G v) { return v[0].clone().mul_(v[1]); }, true, kAllDtypes},
      {"div_", {"clone", "div_"}, {in({3, 4}), in({4}, Kind::Positive)}, [](G v) { return v[0].clone().div_(v[1]); }},
      {"pow_", {"clone", "pow_"}, {in({5}, Kind::Positive)}, [](G v) { return v[0].clone().pow_(2.5); }},
      {"clamp_", {"clone", "clamp_"}, {in({9})}, [](G v) { return v[0].clone().clamp_(-0.5, 0.7); }},
      {"addcmul_",
       {"clone", "addcmul_"},
       {in({3, 4}), in({4}), in({3, 1})},
       [](G v) { return v[0].clone().addcmul_(v[1], v[2], 0.7); }},
      {"addcdiv_",
       {"clone", "addcdiv_"},
       {in({3, 4}), in({4}), in({3, 1}, Kind::Positive)},
       [](G v) { return v[0].clone().addcdiv_(v[1], v[2], -1.3); }},
      {"lerp_", {"clone", "lerp_"}, {in({3, 4}), in({4})}, [](G v) { return v[0].clone().lerp_(v[1], 0.3); }},
      {"masked_fill_",
       {"clone", "masked_fill_"},
       {in({3, 4}), nograd({4}, Kind::Bool)},
       [](G v) { return v[0].clone().masked_fill_(v[1], -1.5); }},
      {"fill_", {"clone", "fill_"}, {in({3, 4})}, [](G v) { return v[0].clone().fill_(0.5); }, true, kAllDtypes},
      {"copy_ broadcast",
       {"clone", "copy_"},
       {in({3, 4}), in({4})},
       [](G v) { return v[0].clone().copy_(v[1]); },
       true,
       kAllDtypes},
  };
}

// compare.cpp's ops the pointwise cases leave: comparisons, tests for non-finite values, logic, allclose/equal
// (which answer a bool: the case makes it a tensor).
std::vector<Case> compare_cases() {
  return {
      {"gt", {"gt"}, {in({3, 4}), in({4})}, [](G v) { return v[0] > v[1]; }, true, kAllDtypes},
      {"le", {"le"}, {in({3, 4}), in({3, 1})}, [](G v) { return v[0] <= v[1]; }, true, kAllDtypes},
      {"ne", {"ne", "round"}, {in({3, 4}), in({4})}, [](G v) { return v[0].round() != v[1].round(); }},
      {"isfinite",
       {"masked_fill", "isfinite"},
       {in({3, 4})},
       [](G v) { return v[0].masked_fill(v[0] > 0.5, kInf).masked_fill(v[0] < -0.5, kNaN).isfinite(); }},
      {"isinf",
       {"masked_fill", "isinf"},
       {in({3, 4})},
       [](G v) { return gb::isinf(v[0].masked_fill(v[0] > 0.5, kInf).masked_fill(v[0] < -0.5, -kInf)); }},
      {"isnan",
       {"masked_fill", "isnan"},
       {in({3, 4})},
       [](G v) { return gb::isnan(v[0].masked_fill(v[0] > 0.5, kNaN)); }},
      {"logical_not", {"logical_not"}, {nograd({3, 4}, Kind::Bool)}, [](G v) { return gb::logical_not(v[0]); }},
      {"logical_or",
       {"logical_or"},
       {nograd({3, 4}, Kind::Bool), nograd({4}, Kind::Bool)},
       [](G v) { return gb::logical_or(v[0], v[1]); }},
      {"allclose",
       {"allclose", "mul"},
       {in({3, 4}), in({3, 4})},
       [](G v) {
         return gb::tensor({gb::allclose(v[0], v[0] * (1 + 1e-9)), gb::allclose(v[0], v[1])});
       }},
      {"equal",
       {"equal", "clone"},
       {in({3, 4}), in({3, 4})},
       [](G v) {
         return gb::tensor({gb::equal(v[0], v[0].clone()), gb::equal(v[0], v[1])});
       },
       true,
       kAllDtypes},
  };
}

// Reductions and products the families above leave.
std::vector<Case> more_reduction_linalg_cases() {
  return {
      {"argmin", {"argmin"}, {in({3, 5})}, [](G v) { return v[0].argmin(1); }, false, kAllDtypes},
      {"var_mean",
       {"var_mean"},
       {in({3, 5})},
       [](G v) {
         auto [var, mean] = gb::var_mean(v[0], {1});
         return var + mean * 2;
       }},
      {"addmm", {"addmm"}, {in({5}), in({3, 4}), in({4, 5})}, [](G v) { return gb::addmm(v[0], v[1], v[2], 0.5, 2); }},
      {"dot", {"dot"}, {in({6}), in({6})}, [](G v) { return gb::dot(v[0], v[1]); }},
      {"outer", {"outer"}, {in({3}), in({4})}, [](G v) { return gb::outer(v[0], v[1]); }},
      {"one_hot", {"one_hot"}, {idx({5}, 4)}, [](G v) { return gb::one_hot(v[0], 4); }, false, kFloats},
      // max_pool2d's double backward (the gradient's own gradient gathers at the saved indices)
      {"max_pool2d double backward",
       {"max_pool2d", "max_pool2d_with_indices_backward", "max_pool2d_gather"},
       {in({1, 2, 4, 4})},
       [](G v) {
         gb::Tensor y = gb::max_pool2d(v[0], 2);
         return gb::autograd::grad({(y * y).sum()}, {v[0]}, {}, true, true)[0];
       }},
  };
}

// view.cpp and copy.cpp: views (no kernel; any dtype) and the copies.
std::vector<Case> view_copy_cases() {
  return {
      {"as_strided",
       {"as_strided"},
       {in({3, 4})},
       [](G v) {
         return v[0].as_strided({2, 3}, {1, 2}, 1);
       },
       true,
       kAllDtypes},
      {"expand",
       {"expand"},
       {in({3, 1})},
       [](G v) {
         return v[0].expand({2, 3, 4});
       },
       true,
       kAllDtypes},
      {"squeeze", {"squeeze"}, {in({3, 1, 4, 1})}, [](G v) { return v[0].squeeze(1).squeeze(); }, true, kAllDtypes},
      {"unsqueeze", {"unsqueeze"}, {in({3, 4})}, [](G v) { return v[0].unsqueeze(1); }, true, kAllDtypes},
      {"view",
       {"view"},
       {in({3, 4})},
       [](G v) {
         return v[0].view({2, 6});
       },
       true,
       kAllDtypes},
      {"select", {"select", "select_backward"}, {in({3, 4})}, [](G v) { return v[0].select(1, 2); }, true, kAllDtypes},
      {"transpose", {"transpose"}, {in({2, 3, 4})}, [](G v) { return v[0].transpose(0, 2); }, true, kAllDtypes},
      {"clone", {"clone"}, {in({3, 4})}, [](G v) { return v[0].t().clone(); }, true, kAllDtypes},
      {"to",
       {"to"},
       {in({3, 4})},
       [](G v) { return v[0].to(v[0].scalar_type() == gb::kFloat64 ? gb::kFloat32 : gb::kFloat64); },
       true,
       kAllDtypes},
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

}  // namespace

std::vector<gb::ScalarType> dtypes_of(uint8_t set) {
  std::vector<gb::ScalarType> out;
  if (set & kFloats) out.insert(out.end(), {gb::kFloat64, gb::kFloat32});
  if (set & kHalfs) out.insert(out.end(), {gb::kFloat16, gb::kBFloat16});
  if (set & kInts) out.insert(out.end(), {gb::kInt64, gb::kInt32, gb::kInt16, gb::kInt8, gb::kUInt8});
  return out;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> out;
    for (auto family : {pointwise_cases, inplace_cases, compare_cases, reduction_cases, linalg_shape_cases,
                        more_reduction_linalg_cases, nn_cases, advanced_index_cases, sort_shape_copy_cases,
                        everyday_cases, view_copy_cases, random_cases, optimizer_cases})
      for (Case& c : family()) out.push_back(std::move(c));
    return out;
  }();
  return all;
}

const Case* find_case(std::string_view name) {
  for (const Case& c : cases())
    if (c.name == name) return &c;
  return nullptr;
}

uint8_t devices_of(const Case& c) {
  uint8_t d = gb::ops::kOnCpu | gb::ops::kOnMeta | gb::ops::kOnCuda;
  for (std::string_view op : c.ops) {
    const gb::ops::OpInfo* row = gb::ops::find_op(op);
    d &= row ? row->devices : 0;  // a name that is no row: the coverage test says so
  }
  return d;
}

std::vector<gb::Tensor> make_inputs(const Case& c, gb::ScalarType dt) {
  gb::manual_seed(std::hash<std::string>{}(c.name) % 100000);
  const bool ints = !gb::is_floating_point(dt);
  const int64_t lo = dt == gb::kUInt8 ? 0 : -4;  // integer dtypes: small values, none negative for uint8
  std::vector<gb::Tensor> out;
  for (const Input& i : c.inputs) {
    gb::Tensor g;
    switch (i.kind) {
      case Kind::Normal:
        g = ints ? gb::randint(lo, 5, i.shape).to(dt) : gb::randn(i.shape, gb::kFloat64).to(dt);
        break;
      case Kind::Positive:
        g = ints ? gb::randint(1, 5, i.shape).to(dt) : (gb::rand(i.shape, gb::kFloat64) + 0.5).to(dt);
        break;
      case Kind::UnitInterval:
        g = (gb::rand(i.shape, gb::kFloat64) * 0.8 + 0.1).to(dt);
        break;
      case Kind::Index:
        g = gb::randint(0, i.hi, i.shape);
        break;
      case Kind::Bool:
        g = gb::rand(i.shape) > 0.5;
        break;
    }
    if (i.grad && g.is_floating_point()) g.requires_grad_();
    out.push_back(g);
  }
  return out;
}

std::vector<gb::Tensor> inputs_on(const std::vector<gb::Tensor>& inputs, gb::Device d) {
  std::vector<gb::Tensor> out;
  for (const gb::Tensor& t : inputs) {
    gb::Tensor m = t.detach().to(d);
    if (t.requires_grad()) m.requires_grad_();
    out.push_back(m);
  }
  return out;
}

}  // namespace gbtest::op_cases
