// tests/oracle/ops_oracle_test.cpp — every op against libtorch (PyTorch 1.13's C++ API), forward and backward.
//
// The cases are the op table's (tests/support/op_cases.cpp: inputs, shapes and kinds, and the gb:: computation, one
// or more per row of glassbox/ops/op_table.def); this file holds the same computation written with torch::, found
// by the case's name. The harness draws the inputs, runs both, compares the outputs (values and dtype), then
// backpropagates the same random weighting of the output through both and compares every input's gradient. Each
// case runs in float64 (tight tolerances) and float32, float16 and bfloat16 forward where it takes them (libtorch
// computes in float32 from the same rounded inputs: its 1.13 cpu kernels lack many 16-bit ones), and the integer
// dtypes exactly where it takes them. Adding an op adds its case there and its torch:: side here.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <functional>
#include <limits>
#include <map>

#include "oracle/torch_dtype.h"
#include "support/check.h"
#include "support/op_cases.h"

// This file's names, apart from the other oracle files' (the folder builds as one translation unit).
namespace ops_oracle {

namespace F = gb::nn::functional;
namespace TF = torch::nn::functional;
namespace oc = gbtest::op_cases;

namespace {

using oracle::torch_dtype;

torch::Tensor to_torch(const gb::Tensor& t) {
  gb::Tensor c = t.detach().contiguous();
  return torch::from_blob(c.data_ptr(), c.sizes().vec(), torch_dtype(c.scalar_type())).clone();
}

gb::Tensor to_gb_double(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kDouble).contiguous();
  std::vector<int64_t> sizes(c.sizes().begin(), c.sizes().end());
  return gb::from_blob(c.data_ptr(), sizes, gb::kFloat64).clone();
}

void compare(const gb::Tensor& ours, const torch::Tensor& theirs, double rtol, double atol, const std::string& what) {
  INFO(what);
  REQUIRE(ours.defined());
  REQUIRE(theirs.defined());
  std::vector<int64_t> ts(theirs.sizes().begin(), theirs.sizes().end());
  REQUIRE_MESSAGE(ours.sizes() == gb::IntArrayRef(ts), "shape " << ours.sizes() << " vs " << gb::IntArrayRef(ts));
  gbtest::check_close(ours, to_gb_double(theirs), rtol, atol);
}

using T = const std::vector<torch::Tensor>&;
using TorchFn = std::function<torch::Tensor(T)>;

// The torch:: side of a case of tests/support/op_cases.cpp.
struct Theirs {
  std::string name;
  TorchFn run;
};

struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance(gb::ScalarType dt) {
  switch (dt) {
    case gb::kFloat64:
      return {1e-7, 1e-9};
    case gb::kFloat32:
      return {2e-4, 2e-5};
    case gb::kFloat16:
      return {1e-2, 1e-2};
    case gb::kBFloat16:
      return {5e-2, 5e-2};
    default:
      return {0, 0};  // integer dtypes: exact
  }
}

void run(const oc::Case& c, const TorchFn& theirs, gb::ScalarType dt) {
  INFO("case " << c.name << " in " << std::string(gb::python_name(dt)));
  const bool half = dt == gb::kFloat16 || dt == gb::kBFloat16;
  const auto [rtol, atol] = tolerance(dt);
  std::vector<gb::Tensor> gins = oc::make_inputs(c, dt);
  std::vector<torch::Tensor> tins;
  for (const gb::Tensor& g : gins) {
    torch::Tensor t = to_torch(g);
    if (half && t.is_floating_point()) t = t.to(torch::kFloat);
    if (g.requires_grad()) t.requires_grad_();
    tins.push_back(t);
  }
  gb::Tensor go = c.run(gins);
  torch::Tensor to = theirs(tins);
  compare(go, to, rtol, atol, "forward of " + c.name);
  // the dtype too (libtorch's float32 result of 16-bit inputs stands for the 16-bit dtype)
  const auto expected = half && to.scalar_type() == torch::kFloat ? torch_dtype(dt) : to.scalar_type();
  const bool same_dtype = torch_dtype(go.scalar_type()) == expected;
  CHECK_MESSAGE(same_dtype,
                "glassbox gives " << gb::python_name(go.scalar_type()) << ", libtorch " << c10::toString(expected));
  if (!c.backward || half || !go.is_floating_point() || !go.requires_grad()) return;
  gb::Tensor w = gb::randn(go.sizes(), gb::kFloat64).to(go.scalar_type());
  (go * w).sum().backward();
  (to * to_torch(w)).sum().backward();
  for (size_t k = 0; k < gins.size(); ++k) {
    if (!gins[k].requires_grad()) continue;
    bool ours_has = gins[k].grad().defined(), theirs_has = tins[k].grad().defined();
    if (!theirs_has) {
      if (ours_has) gbtest::check_close(gins[k].grad(), gb::zeros_like(gins[k].grad()), rtol, atol);
      continue;
    }
    REQUIRE_MESSAGE(ours_has, "no gradient for input " << k << " of " << c.name);
    compare(gins[k].grad(), tins[k].grad(), rtol, atol, "gradient of input " + std::to_string(k) + " of " + c.name);
  }
}

std::vector<Theirs> pointwise_cases() {
  return {
      {"add", [](T v) { return v[0] + v[1]; }},
      {"add_alpha", [](T v) { return torch::add(v[0], v[1], 2.5); }},
      {"sub", [](T v) { return v[0] - v[1]; }},
      {"rsub_scalar", [](T v) { return 2.0 - v[0]; }},
      {"mul", [](T v) { return v[0] * v[1]; }},
      {"div", [](T v) { return v[0] / v[1]; }},
      {"pow_scalar", [](T v) { return v[0].pow(3); }},
      {"pow_tensor", [](T v) { return v[0].pow(v[1]); }},
      {"neg", [](T v) { return -v[0]; }},
      {"abs", [](T v) { return v[0].abs(); }},
      {"exp", [](T v) { return v[0].exp(); }},
      {"log", [](T v) { return v[0].log(); }},
      {"log1p", [](T v) { return v[0].log1p(); }},
      {"sqrt", [](T v) { return v[0].sqrt(); }},
      {"rsqrt", [](T v) { return v[0].rsqrt(); }},
      {"sin", [](T v) { return v[0].sin(); }},
      {"cos", [](T v) { return v[0].cos(); }},
      {"tanh", [](T v) { return v[0].tanh(); }},
      {"sigmoid", [](T v) { return v[0].sigmoid(); }},
      {"relu", [](T v) { return v[0].relu(); }},
      {"leaky_relu", [](T v) { return torch::leaky_relu(v[0], 0.2); }},
      {"elu", [](T v) { return torch::elu(v[0], 0.7, 1.5, 0.9); }},
      {"hardtanh", [](T v) { return torch::hardtanh(v[0], -0.6, 0.8); }},
      {"gelu", [](T v) { return torch::gelu(v[0]); }},
      {"gelu_tanh", [](T v) { return torch::gelu(v[0], "tanh"); }},
      {"silu", [](T v) { return torch::silu(v[0]); }},
      {"softplus", [](T v) { return torch::softplus(v[0], 2, 1); }},
      {"clamp", [](T v) { return v[0].clamp(-0.5, 0.7); }},
      {"where", [](T v) { return torch::where(v[0], v[1], v[2]); }},
      {"clamp_tensor", [](T v) { return torch::clamp(v[0], v[1] - 0.5, v[2] + 0.5); }},
      {"clamp_min_tensor", [](T v) { return torch::clamp(v[0], v[1], c10::nullopt); }},
      {"where_scalar", [](T v) { return torch::where(v[0], v[1], 0.5); }},
      {"masked_fill", [](T v) { return v[0].masked_fill(v[1], -1.5); }},
      {"lerp", [](T v) { return torch::lerp(v[0], v[1], 0.3); }},
      {"addcmul", [](T v) { return torch::addcmul(v[0], v[1], v[2], 0.7); }},
      {"addcdiv", [](T v) { return torch::addcdiv(v[0], v[1], v[2], -1.3); }},
      {"square", [](T v) { return v[0].square(); }},
      {"reciprocal", [](T v) { return v[0].reciprocal(); }},
      {"sign", [](T v) { return v[0].sign(); }},
      {"round", [](T v) { return (v[0] * 3).round(); }},
      {"floor", [](T v) { return torch::floor(v[0] * 3); }},
      {"ceil", [](T v) { return (v[0] * 3).ceil(); }},
      {"trunc", [](T v) { return torch::trunc(v[0] * 3); }},
      {"logical_and", [](T v) { return torch::logical_and(v[0], v[1]); }},
      {"maximum", [](T v) { return torch::maximum(v[0], v[1]); }},
      {"minimum", [](T v) { return torch::minimum(v[0], v[1]); }},
      {"lt", [](T v) { return v[0] < v[1]; }},
      {"ge_scalar", [](T v) { return v[0] >= 0.1; }},
      {"eq", [](T v) { return v[0] == v[0].t(); }},
      {"noncontiguous_mul", [](T v) { return v[0].t() * v[1]; }},
  };
}

std::vector<Theirs> reduction_cases() {
  return {
      {"sum_all", [](T v) { return v[0].sum(); }},
      {"sum_dims",
       [](T v) {
         return v[0].sum(std::vector<int64_t>{0, 2}, true);
       }},
      {"mean_dim", [](T v) { return v[0].mean({-1}); }},
      {"max_all", [](T v) { return v[0].max(); }},
      {"max_dim_values", [](T v) { return std::get<0>(v[0].max(1)); }},
      {"max_dim_indices", [](T v) { return std::get<1>(v[0].max(0, true)); }},
      {"min_dim_values", [](T v) { return std::get<0>(v[0].min(-1, true)); }},
      {"amax",
       [](T v) {
         return v[0].amax({0, 2});
       }},
      {"amin", [](T v) { return v[0].amin({1}, true); }},
      {"argmax", [](T v) { return v[0].argmax(1); }},
      {"var", [](T v) { return v[0].var({1}); }},
      {"var_biased_all", [](T v) { return v[0].var(false); }},
      {"std", [](T v) { return v[0].std({0}, true, true); }},
      {"norm2", [](T v) { return v[0].norm(2, {1}); }},
      {"norm1", [](T v) { return v[0].norm(1); }},
      {"norm3", [](T v) { return v[0].norm(3, {0}, true); }},
      {"logsumexp", [](T v) { return torch::logsumexp(v[0], {1}); }},
      {"softmax", [](T v) { return v[0].softmax(1); }},
      {"softmax_dim0", [](T v) { return v[0].softmax(0); }},
      {"log_softmax", [](T v) { return v[0].log_softmax(-1); }},
  };
}

std::vector<Theirs> linalg_shape_cases() {
  return {
      {"mm", [](T v) { return torch::mm(v[0], v[1]); }},
      {"_addmm_activation_relu", [](T v) { return torch::_addmm_activation(v[0], v[1], v[2]); }},
      {"_addmm_activation_gelu", [](T v) { return torch::_addmm_activation(v[0], v[1], v[2], 0.5, 2, true); }},
      {"matmul_batched_broadcast", [](T v) { return torch::matmul(v[0], v[1]); }},
      {"matmul_vec_mat", [](T v) { return torch::matmul(v[0], v[1]); }},
      {"matmul_mat_vec", [](T v) { return torch::matmul(v[0], v[1]); }},
      {"matmul_transposed", [](T v) { return torch::matmul(v[0].t(), v[1].t()); }},
      {"bmm", [](T v) { return torch::bmm(v[0], v[1]); }},
      {"linear", [](T v) { return torch::linear(v[0], v[1], v[2]); }},
      {"cat",
       [](T v) {
         return torch::cat({v[0], v[1]}, 1);
       }},
      {"stack",
       [](T v) {
         return torch::stack({v[0], v[1]}, 1);
       }},
      {"split", [](T v) { return v[0].split(2, 0)[1] * 2 + v[0].split(2, 0)[2].sum(); }},
      {"chunk", [](T v) { return v[0].chunk(3, 1)[2]; }},
      {"index_select", [](T v) { return v[0].index_select(0, v[1]); }},
      {"gather", [](T v) { return v[0].gather(1, v[1]); }},
      {"scatter_add", [](T v) { return v[0].scatter_add(0, v[1], v[2]); }},
      {"embedding", [](T v) { return torch::embedding(v[0], v[1]); }},
      {"permute_reshape",
       [](T v) {
         return v[0].permute({2, 0, 1}).reshape({4, 6});
       }},
      {"index_slices",
       [](T v) {
         return v[0].index({torch::indexing::Slice(1, 4, 2), torch::indexing::Slice(torch::indexing::None, -1)});
       }},
  };
}

std::vector<Theirs> nn_cases() {
  return {
      {"conv2d", [](T v) { return torch::conv2d(v[0], v[1], v[2]); }},
      {"einsum_matmul", [](T v) { return torch::einsum("ij,jk->ik", {v[0], v[1]}); }},
      {"einsum_attention", [](T v) { return torch::einsum("bhqd,bhkd->bhqk", {v[0], v[1]}); }},
      {"einsum_ellipsis_broadcast", [](T v) { return torch::einsum("...ij,...jk->...ik", {v[0], v[1]}); }},
      {"einsum_implicit_three", [](T v) { return torch::einsum("ij,jk,k", {v[0], v[1], v[2]}); }},
      {"einsum_diagonal_trace_outer",
       [](T v) {
         return torch::cat({torch::einsum("ii->i", {v[0]}), torch::einsum("ii", {v[1]}).reshape({1}),
                            torch::einsum("i,j->ij", {v[2], v[2]}).reshape({-1}),
                            torch::einsum("ij->ji", {v[0]}).reshape({-1})});
       }},
      {"conv1d", [](T v) { return torch::conv1d(v[0], v[1], v[2], 2, 1, 1, 2); }},
      {"conv2d_stride_pad_dil",
       [](T v) {
         return TF::conv2d(v[0], v[1], TF::Conv2dFuncOptions().stride({2, 1}).padding({1, 2}).dilation({2, 1}));
       }},
      {"conv2d_groups", [](T v) { return torch::conv2d(v[0], v[1], v[2], 1, 1, 1, 2); }},
      {"conv_transpose2d", [](T v) { return torch::conv_transpose2d(v[0], v[1], v[2]); }},
      {"conv_transpose2d_stride_pad_outpad_groups_dil",
       [](T v) {
         return torch::conv_transpose2d(v[0], v[1], v[2], {2, 3}, {1, 0}, {1, 2}, 2, {1, 2});
       }},
      {"max_pool1d", [](T v) { return torch::max_pool1d(v[0], {3}, {2}, {1}); }},
      {"cosine_similarity", [](T v) { return torch::cosine_similarity(v[0], v[1], 1, 1e-8); }},
      {"lstm_cell",
       [](T v) {
         auto [h, c] = torch::lstm_cell(v[0], {v[1], v[2]}, v[3], v[4], v[5], v[6]);
         return torch::cat({h.reshape({-1}), c.reshape({-1})});
       }},
      {"gru_cell", [](T v) { return torch::gru_cell(v[0], v[1], v[2], v[3], v[4], v[5]); }},
      {"max_pool2d",
       [](T v) {
         return torch::max_pool2d(v[0], {3, 2}, {2, 2}, {1, 0});
       }},
      {"max_pool2d_ceil", [](T v) { return torch::max_pool2d(v[0], 2, {}, 0, 1, true); }},
      {"avg_pool2d", [](T v) { return torch::avg_pool2d(v[0], 3, 2, 1); }},
      {"avg_pool2d_no_pad_count", [](T v) { return torch::avg_pool2d(v[0], 3, 2, 1, true, false); }},
      {"adaptive_avg_pool2d",
       [](T v) {
         return torch::adaptive_avg_pool2d(v[0], {3, 2});
       }},
      {"batch_norm_train",
       [](T v) {
         return torch::batch_norm(v[0], v[1], v[2], torch::zeros({3}, v[0].dtype()), torch::ones({3}, v[0].dtype()),
                                  true, 0.1, 1e-5, false);
       }},
      {"batch_norm_eval", [](T v) { return torch::batch_norm(v[0], v[1], v[2], v[3], v[4], false, 0.1, 1e-5, false); }},
      {"layer_norm",
       [](T v) {
         return torch::layer_norm(v[0], {3, 4}, v[1], v[2]);
       }},
      {"lstm_layer",
       [](T v) {
         auto [out, h, c] = torch::lstm(v[0], {v[1].unsqueeze(0), v[2].unsqueeze(0)}, {v[3], v[4], v[5], v[6]}, true,
                                        1, 0.0, true, false, false);
         return torch::cat({out.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
       }},
      {"lstm_bidirectional_nobias_batch_first",
       [](T v) {
         auto [out, h, c] = torch::lstm(v[0], {v[1], v[2]}, {v[3], v[4], v[5], v[6]}, false, 1, 0.0, true, true, true);
         return torch::cat({out.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
       }},
      {"group_norm", [](T v) { return torch::group_norm(v[0], 3, v[1], v[2]); }},
      {"dropout_eval", [](T v) { return torch::dropout(v[0], 0.5, false); }},
      {"cross_entropy", [](T v) { return TF::cross_entropy(v[0], v[1]); }},
      {"cross_entropy_smooth_weight_ignore",
       [](T v) {
         auto t = v[1].clone();
         t.narrow(0, 0, 1).fill_(1);
         t.narrow(0, 5, 1).fill_(1);
         return TF::cross_entropy(v[0], t,
                                  TF::CrossEntropyFuncOptions().weight(v[2]).ignore_index(1).label_smoothing(0.2));
       }},
      {"inplace_on_views",
       [](T v) {
         auto y = v[0][0] * 1;
         auto old = y.narrow(1, 1, 2);
         y.select(1, 2).mul_(v[1]);
         y.t().narrow(0, 0, 2).copy_(v[0][1].t().narrow(0, 1, 2).sin());
         y.index({torch::indexing::Slice(), 3}).relu_();
         return y * old.sum();
       }},
      {"cross_entropy_sum_spatial",
       [](T v) { return TF::cross_entropy(v[0], v[1], TF::CrossEntropyFuncOptions().reduction(torch::kSum)); }},
      {"cross_entropy_none",
       [](T v) {
         return TF::cross_entropy(v[0], v[1],
                                  TF::CrossEntropyFuncOptions().reduction(torch::kNone).label_smoothing(0.1));
       }},
      {"cross_entropy_probs", [](T v) { return TF::cross_entropy(v[0], v[1] / v[1].sum({1}, true)); }},
      {"nll_loss", [](T v) { return TF::nll_loss(v[0].log_softmax(1), v[1]); }},
      {"mse_loss", [](T v) { return TF::mse_loss(v[0], v[1]); }},
      {"l1_loss_sum", [](T v) { return TF::l1_loss(v[0], v[1], TF::L1LossFuncOptions(torch::kSum)); }},
      {"smooth_l1_loss", [](T v) { return torch::smooth_l1_loss(v[0] * 2, v[1], at::Reduction::Mean, 0.5); }},
      {"smooth_l1_loss_none",
       [](T v) { return TF::smooth_l1_loss(v[0] * 2, v[1], TF::SmoothL1LossFuncOptions(torch::kNone)); }},
      {"huber_loss",
       [](T v) {
         return TF::huber_loss(v[0] * 2, v[1], TF::HuberLossFuncOptions().delta(0.7).reduction(torch::kSum));
       }},
      {"huber_loss_broadcast",
       [](T v) {
         return torch::huber_loss(v[0] * 2, v[1].expand({3, 4}));
       }},
      {"binary_cross_entropy",
       [](T v) { return TF::binary_cross_entropy(v[0], v[1], TF::BinaryCrossEntropyFuncOptions().weight(v[2])); }},
      {"binary_cross_entropy_sum",
       [](T v) {
         return TF::binary_cross_entropy(v[0], v[1], TF::BinaryCrossEntropyFuncOptions().reduction(torch::kSum));
       }},
      {"kl_div_batchmean",
       [](T v) { return TF::kl_div(v[0].log_softmax(1), v[1], TF::KLDivFuncOptions(torch::kBatchMean)); }},
      {"kl_div_log_target_none",
       [](T v) { return TF::kl_div(v[0], v[1], TF::KLDivFuncOptions(torch::kNone).log_target(true)); }},
      {"kl_div_sum", [](T v) { return torch::kl_div(v[0], v[1], at::Reduction::Sum); }},
      {"bce_with_logits",
       [](T v) {
         return TF::binary_cross_entropy_with_logits(v[0], v[1],
                                                     TF::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(v[2]));
       }},
  };
}

std::vector<Theirs> sort_shape_copy_cases() {
  return {
      {"sort_values", [](T v) { return std::get<0>(v[0].sort(1, true)); }},
      {"sort_indices_dim0", [](T v) { return std::get<1>(torch::sort(v[0], 0)); }},
      {"sort_stable_ties",
       [](T v) { return std::get<1>(torch::sort((v[0] * 1.5).round(), c10::optional<bool>(true), 1)); }},
      {"sort_stable_ties_descending",
       [](T v) { return std::get<1>(torch::sort((v[0] * 1.5).round(), c10::optional<bool>(true), 0, true)); }},
      {"argsort", [](T v) { return v[0].argsort(-1, true); }},
      {"topk_largest", [](T v) { return std::get<0>(v[0].topk(3)); }},
      {"topk_smallest_dim0", [](T v) { return std::get<0>(torch::topk(v[0], 2, 0, false)); }},
      {"topk_indices", [](T v) { return std::get<1>(v[0].topk(4, 2)); }},
      {"topk_unsorted", [](T v) { return std::get<0>(std::get<0>(v[0].topk(5, 1, true, false)).sort(1)); }},
      {"cumsum", [](T v) { return v[0].cumsum(1); }},
      {"cumsum_dim0_3d", [](T v) { return torch::cumsum(v[0], 0); }},
      {"cumsum_int", [](T v) { return v[0].cumsum(1); }},
      {"cumprod", [](T v) { return v[0].cumprod(1); }},
      {"cumprod_zeros_dim0",
       [](T v) {
         auto mask = torch::tensor({1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1}).view({5, 3}).to(v[0].scalar_type());
         return torch::cumprod(v[0] * mask, 0);
       }},
      {"cumprod_int", [](T v) { return v[0].cumprod(1); }},
      {"flip",
       [](T v) {
         return v[0].flip({0, 2});
       }},
      {"flip_transposed", [](T v) { return torch::flip(v[0].t(), {-1}); }},
      {"repeat",
       [](T v) {
         return v[0].repeat({2, 1, 3});
       }},
      {"masked_select", [](T v) { return v[0].masked_select(v[1]); }},
      {"masked_select_broadcast_input", [](T v) { return torch::masked_select(v[0], v[1]); }},
      {"constant_pad_nd",
       [](T v) {
         return torch::constant_pad_nd(v[0], {1, -1, 2, 0}, 0.5);
       }},
      {"pad_constant",
       [](T v) {
         return TF::pad(v[0], TF::PadFuncOptions({2, 1}).value(-1));
       }},
      {"pad_reflect_2d",
       [](T v) {
         return TF::pad(v[0], TF::PadFuncOptions({2, 1, 1, 2}).mode(torch::kReflect));
       }},
      {"pad_replicate_1d",
       [](T v) {
         return TF::pad(v[0], TF::PadFuncOptions({3, 1}).mode(torch::kReplicate));
       }},
      {"pad_circular_2d",
       [](T v) {
         return torch::pad(v[0], {1, 2, 3, 0}, "circular");
       }},
  };
}

std::vector<Theirs> advanced_index_cases() {
  namespace TI = torch::indexing;
  auto ti = [](std::vector<int64_t> v) { return torch::tensor(v, torch::kLong); };
  return {
      {"index rows", [](T v) { return v[0].index({v[1]}); }},
      {"index 2-D index tensor",
       [](T v) {
         return v[0].index({TI::Slice(), v[1]});
       }},
      {"index two tensors broadcast",
       [](T v) {
         return v[0].index({v[1], v[2]});
       }},
      {"index adjacent in the middle",
       [](T v) {
         return v[0].index({TI::Slice(), v[1], v[2]});
       }},
      {"index separated tensors go first",
       [](T v) {
         return v[0].index({v[1], TI::Slice(), v[2]});
       }},
      {"index negative, ellipsis and None",
       [ti](T v) {
         return v[0].index({TI::Ellipsis, ti({-1, 0, -5}), TI::None});
       }},
      {"index integer then tensor",
       [ti](T v) {
         return v[0].index({1, TI::Slice(), ti({4, 2})});
       }},
      {"index full mask", [](T v) { return v[0].index({v[1]}); }},
      {"index row mask", [](T v) { return v[0].index({v[1]}); }},
      {"index mask on trailing dims",
       [](T v) {
         return v[0].index({TI::Slice(), v[1]});
       }},
      {"index_put_ values",
       [ti](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({ti({3, 0, 4})}, v[1]);
         return y;
       }},
      {"index_put_ broadcast values",
       [ti](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({ti({1, 2})}, v[1]);
         return y;
       }},
      {"index_put_ mask number",
       [](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({y < 0}, 0.5);
         return y;
       }},
      {"index_put_ mask values",
       [](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({v[1]}, v[2]);
         return y;
       }},
      {"index_put_ in the middle",
       [ti](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({TI::Slice(), ti({3, 1}), 2}, v[1]);
         return y;
       }},
      {"index_put_ accumulate repeats",
       [ti](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({ti({1, 3, 1, 1})}, v[1], true);
         return y;
       }},
      {"index_put_ two tensors",
       [ti](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({ti({0, 2, 3}), ti({4, 4, 0})}, v[1]);
         return y;
       }},
      {"nonzero", [](T v) { return v[0].nonzero(); }},
  };
}

std::vector<Theirs> everyday_cases() {
  return {
      {"triu", [](T v) { return v[0].triu(); }},
      {"triu batched k=1", [](T v) { return torch::triu(v[0], 1); }},
      {"tril k=-1", [](T v) { return v[0].tril(-1); }},
      {"roll dims",
       [](T v) {
         return v[0].roll({1, -5}, {0, 1});
       }},
      {"roll flat", [](T v) { return torch::roll(v[0], {5}); }},
      {"erf", [](T v) { return v[0].erf(); }},
      {"prod dim", [](T v) { return v[0].prod(1); }},
      {"prod dim keepdim", [](T v) { return v[0].prod(0, true); }},
      {"prod dim with zeros",
       [](T v) {
         torch::Tensor z = torch::ones({3, 4}, v[0].options());
         z.narrow(0, 0, 1).narrow(1, 1, 1).fill_(0);
         z.narrow(0, 1, 1).narrow(1, 0, 2).fill_(0);
         return (v[0] * z).prod(1);
       }},
      {"max of two", [](T v) { return torch::max(v[0], v[1]); }},
      {"min of two", [](T v) { return torch::min(v[0], v[1]); }},
      {"F::normalize", [](T v) { return TF::normalize(v[0], TF::NormalizeFuncOptions().p(2).dim(1)); }},
      {"F::normalize p=1 dim 0", [](T v) { return TF::normalize(v[0], TF::NormalizeFuncOptions().p(1).dim(0)); }},
      {"LogSoftmax module", [](T v) { return torch::nn::LogSoftmax(1)(v[0]); }},
      {"interpolate nearest size",
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions().size(std::vector<int64_t>{7, 3}));
       }},
      {"interpolate nearest x2",
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}));
       }},
      {"interpolate bilinear x1.5",
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions()
                                          .scale_factor(std::vector<double>{1.5, 2.5})
                                          .mode(torch::kBilinear)
                                          .align_corners(false));
       }},
      {"interpolate bilinear align_corners down",
       [](T v) {
         return TF::interpolate(
             v[0],
             TF::InterpolateFuncOptions().size(std::vector<int64_t>{4, 7}).mode(torch::kBilinear).align_corners(true));
       }},
      {"interpolate linear 3-D",
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(torch::kLinear));
       }},
      {"interpolate trilinear",
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions()
                                          .scale_factor(std::vector<double>{2, 1.5, 2})
                                          .mode(torch::kTrilinear)
                                          .align_corners(false));
       }},
      {"Upsample module",
       [](T v) {
         return torch::nn::Upsample(torch::nn::UpsampleOptions()
                                        .scale_factor(std::vector<double>{2, 2})
                                        .mode(torch::kBilinear)
                                        .align_corners(false))(v[0]);
       }},
  };
}

std::vector<Theirs> inplace_cases() {
  return {
      {"exp_", [](T v) { return v[0].clone().exp_(); }},
      {"log_", [](T v) { return v[0].clone().log_(); }},
      {"neg_", [](T v) { return v[0].clone().neg_(); }},
      {"sigmoid_", [](T v) { return v[0].clone().sigmoid_(); }},
      {"sqrt_", [](T v) { return v[0].clone().sqrt_(); }},
      {"tanh_", [](T v) { return v[0].clone().tanh_(); }},
      {"relu_", [](T v) { return v[0].clone().relu_(); }},
      {"add_", [](T v) { return v[0].clone().add_(v[1], 0.5); }},
      {"sub_", [](T v) { return v[0].clone().sub_(v[1]); }},
      {"mul_", [](T v) { return v[0].clone().mul_(v[1]); }},
      {"div_", [](T v) { return v[0].clone().div_(v[1]); }},
      {"pow_", [](T v) { return v[0].clone().pow_(2.5); }},
      {"clamp_", [](T v) { return v[0].clone().clamp_(-0.5, 0.7); }},
      {"addcmul_", [](T v) { return v[0].clone().addcmul_(v[1], v[2], 0.7); }},
      {"addcdiv_", [](T v) { return v[0].clone().addcdiv_(v[1], v[2], -1.3); }},
      {"lerp_", [](T v) { return v[0].clone().lerp_(v[1], 0.3); }},
      {"masked_fill_", [](T v) { return v[0].clone().masked_fill_(v[1], -1.5); }},
      {"fill_", [](T v) { return v[0].clone().fill_(0.5); }},
      {"copy_ broadcast", [](T v) { return v[0].clone().copy_(v[1]); }},
  };
}

std::vector<Theirs> compare_cases() {
  constexpr double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  return {
      {"gt", [](T v) { return v[0] > v[1]; }},
      {"le", [](T v) { return v[0] <= v[1]; }},
      {"ne", [](T v) { return v[0].round() != v[1].round(); }},
      {"isfinite", [=](T v) { return v[0].masked_fill(v[0] > 0.5, inf).masked_fill(v[0] < -0.5, nan).isfinite(); }},
      {"isinf", [=](T v) { return torch::isinf(v[0].masked_fill(v[0] > 0.5, inf).masked_fill(v[0] < -0.5, -inf)); }},
      {"isnan", [=](T v) { return torch::isnan(v[0].masked_fill(v[0] > 0.5, nan)); }},
      {"logical_not", [](T v) { return torch::logical_not(v[0]); }},
      {"logical_or", [](T v) { return torch::logical_or(v[0], v[1]); }},
      {"allclose",
       [](T v) {
         return torch::tensor({torch::allclose(v[0], v[0] * (1 + 1e-9)), torch::allclose(v[0], v[1])});
       }},
      {"equal",
       [](T v) {
         return torch::tensor({torch::equal(v[0], v[0].clone()), torch::equal(v[0], v[1])});
       }},
  };
}

std::vector<Theirs> more_reduction_linalg_cases() {
  return {
      {"argmin", [](T v) { return v[0].argmin(1); }},
      {"var_mean",
       [](T v) {
         auto [var, mean] = torch::var_mean(v[0], at::IntArrayRef{1}, /*unbiased=*/true, /*keepdim=*/false);
         return var + mean * 2;
       }},
      {"addmm", [](T v) { return torch::addmm(v[0], v[1], v[2], 0.5, 2); }},
      {"dot", [](T v) { return torch::dot(v[0], v[1]); }},
      {"outer", [](T v) { return torch::outer(v[0], v[1]); }},
      {"one_hot", [](T v) { return TF::one_hot(v[0], 4); }},
      {"max_pool2d double backward",
       [](T v) {
         torch::Tensor y = torch::max_pool2d(v[0], 2);
         return torch::autograd::grad({(y * y).sum()}, {v[0]}, {}, true, true)[0];
       }},
  };
}

std::vector<Theirs> view_copy_cases() {
  return {
      {"as_strided",
       [](T v) {
         return v[0].as_strided({2, 3}, {1, 2}, 1);
       }},
      {"expand",
       [](T v) {
         return v[0].expand({2, 3, 4});
       }},
      {"squeeze", [](T v) { return v[0].squeeze(1).squeeze(); }},
      {"unsqueeze", [](T v) { return v[0].unsqueeze(1); }},
      {"view",
       [](T v) {
         return v[0].view({2, 6});
       }},
      {"select", [](T v) { return v[0].select(1, 2); }},
      {"transpose", [](T v) { return v[0].transpose(0, 2); }},
      {"clone", [](T v) { return v[0].t().clone(); }},
      {"to", [](T v) { return v[0].to(v[0].scalar_type() == torch::kDouble ? torch::kFloat : torch::kDouble); }},
  };
}

template <class Optimizer, class Options>
torch::Tensor two_steps(T v, Options options) {
  torch::Tensor p = v[0].clone();
  p.mutable_grad() = v[1];
  Optimizer opt(std::vector<torch::Tensor>{p}, options);
  opt.step();
  opt.step();
  return p;
}

// libtorch 1.13's optimizers are not fused: the same update, step by step
std::vector<Theirs> optimizer_cases() {
  namespace O = torch::optim;
  return {
      {"_fused_adam_", [](T v) { return two_steps<O::Adam>(v, O::AdamOptions(0.1).weight_decay(0.01)); }},
      {"_fused_adagrad_", [](T v) { return two_steps<O::Adagrad>(v, O::AdagradOptions(0.1)); }},
      {"_fused_rmsprop_", [](T v) { return two_steps<O::RMSprop>(v, O::RMSpropOptions(0.01).momentum(0.9)); }},
  };
}

// Every case's torch:: side by name (a name twice fails the test below).
std::map<std::string, TorchFn, std::less<>> all_theirs(std::vector<std::string>* twice = nullptr) {
  std::map<std::string, TorchFn, std::less<>> out;
  for (auto family :
       {pointwise_cases, inplace_cases, compare_cases, reduction_cases, linalg_shape_cases, more_reduction_linalg_cases,
        nn_cases, advanced_index_cases, sort_shape_copy_cases, everyday_cases, view_copy_cases, optimizer_cases})
    for (Theirs& t : family())
      if (!out.emplace(t.name, std::move(t.run)).second && twice) twice->push_back(t.name);
  return out;
}

}  // namespace

TEST_CASE("every case of the op table has its libtorch side, and every libtorch side a case") {
  std::vector<std::string> twice;
  const auto theirs = all_theirs(&twice);
  for (const std::string& name : twice) FAIL_CHECK("the torch:: side of \"" << name << "\" is given twice");
  for (const oc::Case& c : oc::cases()) {
    // random ops: libtorch's numbers are not glassbox's (op_table_test.cpp compares their shapes and allocations)
    if (c.random) continue;
    CHECK_MESSAGE(theirs.count(c.name) == 1, "case \""
                                                 << c.name
                                                 << "\" (tests/support/op_cases.cpp) has no torch:: "
                                                    "side: add the same computation with torch:: under its name in "
                                                    "tests/oracle/ops_oracle_test.cpp");
  }
  for (const auto& [name, fn] : theirs)
    CHECK_MESSAGE(oc::find_case(name), "torch:: side \"" << name << "\" has no case in tests/support/op_cases.cpp");
}

// Every case runs even when an earlier one fails; a thrown error is reported with the case's name.
TEST_CASE("every case of the op table matches libtorch on the cpu: forward and backward, in every dtype it takes") {
  const auto theirs = all_theirs();
  int ran = 0;
  for (const oc::Case& c : oc::cases()) {
    auto it = theirs.find(c.name);
    if (c.random || it == theirs.end()) continue;
    for (gb::ScalarType dt : oc::dtypes_of(c.dtypes)) {
      try {
        run(c, it->second, dt);
        ++ran;
      } catch (const std::exception& e) {
        FAIL_CHECK("case " << c.name << " in " << std::string(gb::python_name(dt))
                           << " threw: " << std::string(e.what()));
      }
    }
  }
  CHECK(ran > 500);
}

TEST_CASE("batch_norm updates running statistics like libtorch") {
  gb::manual_seed(3);
  auto x = gb::randn({8, 3, 2}, gb::kFloat64);
  auto rm = gb::zeros({3}, gb::kFloat64), rv = gb::ones({3}, gb::kFloat64);
  auto trm = torch::zeros({3}, torch::kDouble), trv = torch::ones({3}, torch::kDouble);
  gb::batch_norm(x, {}, {}, rm, rv, true, 0.3, 1e-5);
  torch::batch_norm(to_torch(x), {}, {}, trm, trv, true, 0.3, 1e-5, false);
  compare(rm, trm, 1e-10, 1e-12, "running_mean");
  compare(rv, trv, 1e-10, 1e-12, "running_var");
}

TEST_CASE("half and bfloat16 forward results are close to libtorch's") {
  gb::manual_seed(4);
  for (auto dt : {gb::kHalf, gb::kBFloat16}) {
    auto a = gb::randn({4, 8}).to(dt), b = gb::randn({8, 3}).to(dt);
    auto ta = to_torch(a), tb = to_torch(b);
    double tol = dt == gb::kHalf ? 1e-2 : 5e-2;
    compare(gb::matmul(a, b), torch::matmul(ta.to(torch::kFloat), tb.to(torch::kFloat)), tol, tol, "matmul");
    auto fa = ta.to(torch::kFloat);
    compare(a * a + a, fa * fa + fa, tol, tol, "pointwise");
    compare(a.tanh(), fa.tanh(), tol, tol, "tanh");
    compare(a.softmax(1), ta.to(torch::kFloat).softmax(1), tol, tol, "softmax");
    compare(a.sum({1}), ta.to(torch::kFloat).sum({1}), tol, tol, "sum");
  }
}

// The small integer dtypes as image code uses them: bytes from from_blob, arithmetic that wraps, PyTorch's promotion
// (uint8 with int8 is int16, any float scalar makes the default float, true division is float), integer reductions
// into int64. Every result's dtype and every value must be libtorch's, exactly.
TEST_CASE("uint8, int8 and int16 tensors: results, dtypes and wrap-around match libtorch exactly") {
  std::vector<uint8_t> bytes = {0, 1, 7, 128, 200, 250, 255, 3, 64, 99, 17, 42};
  std::vector<int8_t> chars = {-128, -1, 0, 1, 5, 127, -7, 33, -100, 64, 9, -3};
  std::vector<int16_t> shorts = {-32768, -300, 0, 300, 32767, 12, -1, 5, 1000, -1000, 77, 2};
  gb::Tensor u = gb::from_blob(bytes.data(), {3, 4}, gb::kUInt8).clone();
  gb::Tensor c = gb::from_blob(chars.data(), {3, 4}, gb::kInt8).clone();
  gb::Tensor h = gb::from_blob(shorts.data(), {3, 4}, gb::kInt16).clone();
  torch::Tensor tu = torch::from_blob(bytes.data(), {3, 4}, torch::kByte).clone();
  torch::Tensor tc = torch::from_blob(chars.data(), {3, 4}, torch::kChar).clone();
  torch::Tensor th = torch::from_blob(shorts.data(), {3, 4}, torch::kShort).clone();
  CHECK(u.scalar_type() == gb::kByte);
  CHECK(u.element_size() == 1);
  CHECK(h.element_size() == 2);

  struct IntCase {
    const char* name;
    std::function<gb::Tensor()> ours;
    std::function<torch::Tensor()> theirs;
  };
  std::vector<IntCase> cases = {
      {"u8 to float / 255", [&] { return u.to(gb::kFloat).div(255); }, [&] { return tu.to(torch::kFloat).div(255); }},
      {"u8 + u8 wraps", [&] { return u + u; }, [&] { return tu + tu; }},
      {"u8 + 300 wraps", [&] { return u + 300; }, [&] { return tu + 300; }},
      {"u8 - 10 wraps", [&] { return u - 10; }, [&] { return tu - 10; }},
      {"u8 * 3", [&] { return u * 3; }, [&] { return tu * 3; }},
      {"i8 * i8 wraps", [&] { return c * c; }, [&] { return tc * tc; }},
      {"u8 + i8 is int16", [&] { return u + c; }, [&] { return tu + tc; }},
      {"u8 + i16", [&] { return u + h; }, [&] { return tu + th; }},
      {"i8 + int32 tensor", [&] { return c + c.to(gb::kInt); }, [&] { return tc + tc.to(torch::kInt); }},
      {"u8 / 2 is float", [&] { return u / 2; }, [&] { return tu / 2; }},
      {"u8 * 1.5 is float", [&] { return u * 1.5; }, [&] { return tu * 1.5; }},
      {"i16 / i8", [&] { return h / c.clamp_min(1); }, [&] { return th / tc.clamp_min(1); }},
      {"neg i8 wraps", [&] { return -c; }, [&] { return -tc; }},
      {"abs i8", [&] { return c.abs(); }, [&] { return tc.abs(); }},
      {"abs u8", [&] { return u.abs(); }, [&] { return tu.abs(); }},
      {"sign i16", [&] { return h.sign(); }, [&] { return th.sign(); }},
      {"relu i8", [&] { return c.relu(); }, [&] { return tc.relu(); }},
      {"sum u8 is int64", [&] { return u.sum(); }, [&] { return tu.sum(); }},
      {"sum dim i8", [&] { return c.sum(1); }, [&] { return tc.sum(1); }},
      {"prod i16", [&] { return gb::prod(h.clamp(-3, 3)); }, [&] { return th.clamp(-3, 3).prod(); }},
      {"max u8", [&] { return u.max(); }, [&] { return tu.max(); }},
      {"min dim i8", [&] { return std::get<0>(c.min(1)); }, [&] { return std::get<0>(tc.min(1)); }},
      {"argmax i16", [&] { return h.argmax(); }, [&] { return th.argmax(); }},
      {"amax u8", [&] { return u.amax(0); }, [&] { return tu.amax(0); }},
      {"u8 > 100", [&] { return u > 100; }, [&] { return tu > 100; }},
      {"i8 == i8", [&] { return c == c.flip({1}); }, [&] { return tc == tc.flip({1}); }},
      {"clamp u8", [&] { return u.clamp(10, 200); }, [&] { return tu.clamp(10, 200); }},
      {"clamp i16 below", [&] { return h.clamp_min(-5); }, [&] { return th.clamp_min(-5); }},
      {"cumsum u8 is int64", [&] { return u.cumsum(1); }, [&] { return tu.cumsum(1); }},
      {"sort i8", [&] { return std::get<0>(c.sort(1)); }, [&] { return std::get<0>(tc.sort(1)); }},
      {"topk u8", [&] { return std::get<0>(u.topk(2, 1)); }, [&] { return std::get<0>(tu.topk(2, 1)); }},
      {"where u8", [&] { return gb::where(u > 100, u, gb::zeros_like(u)); },
       [&] { return torch::where(tu > 100, tu, torch::zeros_like(tu)); }},
      {"masked_fill i8", [&] { return c.masked_fill(c < 0, 7); }, [&] { return tc.masked_fill(tc < 0, 7); }},
      {"index_select u8", [&] { return u.index_select(1, gb::tensor({3, 0}, gb::kLong)); },
       [&] { return tu.index_select(1, torch::tensor({3, 0}, torch::kLong)); }},
      {"cat i16", [&] { return gb::cat({h, h}, 0); }, [&] { return torch::cat({th, th}, 0); }},
      {"transpose contiguous u8", [&] { return u.t().contiguous(); }, [&] { return tu.t().contiguous(); }},
      {"matmul i16", [&] { return h.clamp(-9, 9).matmul(h.clamp(-9, 9).t()); },
       [&] { return th.clamp(-9, 9).matmul(th.clamp(-9, 9).t()); }},
      {"float to u8 truncates", [&] { return (u.to(gb::kFloat) * 0.7).to(gb::kByte); },
       [&] { return (tu.to(torch::kFloat) * 0.7).to(torch::kByte); }},
      {"i16 to i8 wraps", [&] { return h.to(gb::kChar); }, [&] { return th.to(torch::kChar); }},
      {"bool to u8", [&] { return (u > 50).to(gb::kUInt8); }, [&] { return (tu > 50).to(torch::kUInt8); }},
      {"pow u8", [&] { return u.pow(2); }, [&] { return tu.pow(2); }},
      {"mul_ in place wraps", [&] { gb::Tensor x = u.clone(); x.mul_(2); return x; },
       [&] { torch::Tensor x = tu.clone(); x.mul_(2); return x; }},
      {"add_ i8 tensor", [&] { gb::Tensor x = c.clone(); x.add_(c); return x; },
       [&] { torch::Tensor x = tc.clone(); x.add_(tc); return x; }},
  };
  for (const auto& k : cases) {
    INFO("case " << k.name);
    gb::Tensor ours = k.ours();
    torch::Tensor theirs = k.theirs();
    const bool same_dtype = torch_dtype(ours.scalar_type()) == theirs.scalar_type();
    CHECK_MESSAGE(same_dtype, "glassbox gives " << gb::python_name(ours.scalar_type()) << ", libtorch "
                                                 << c10::toString(theirs.scalar_type()));
    compare(ours, theirs, 0, 0, k.name);
  }
  CHECK((u[1][0].item().toByte()) == 200);
  CHECK((c[0][0].item().toChar()) == -128);
  CHECK((h[0][4 % 4].item().toShort()) == -32768);
  CHECK_THROWS_WITH_AS(u.mean(), doctest::Contains("Got: Byte"), gb::Error);
  CHECK_THROWS_WITH_AS(u.add_(1.5), doctest::Contains("can't be cast"), gb::Error);
}

// torch::tensor's literals, written once and given to both: a braced list always makes a dimension (so {7} has
// shape [1] and {{0}, {1}} is 2x1), a number none; ints make int64, floats the default float, vectors keep their
// element type's dtype, an options dtype wins. (A list of std::vectors, which glassbox stacks, trips an internal
// assert in libtorch 1.13: tests/engine/core/factory_test.cpp checks it.)
TEST_CASE("tensor() literals: shapes, dtypes and values match torch::tensor") {
  std::vector<uint8_t> bytes{1, 2, 255};
  std::vector<int16_t> shorts{-3, 4};
  std::vector<float> floats{0.5f, -1.25f};
  std::vector<int> ints{4, 5, 6};
#define GB_LITERAL(...) {#__VA_ARGS__, [&] { return gb::tensor(__VA_ARGS__); }, [&] { return torch::tensor(__VA_ARGS__); }}
#define GB_LITERAL_AS(DTYPE, ...)                                                   \
  {#__VA_ARGS__ ", " #DTYPE, [&] { return gb::tensor(__VA_ARGS__, gb::DTYPE); }, \
   [&] { return torch::tensor(__VA_ARGS__, torch::DTYPE); }}
  struct Literal {
    const char* text;
    std::function<gb::Tensor()> ours;
    std::function<torch::Tensor()> theirs;
  };
  std::vector<Literal> cases = {
      GB_LITERAL(7), GB_LITERAL(2.5), GB_LITERAL(1.5f), GB_LITERAL(true), GB_LITERAL({7}), GB_LITERAL({1.0f}),
      GB_LITERAL({1, 2, 3}), GB_LITERAL({1.5, 2.5}), GB_LITERAL({true, false}), GB_LITERAL({{0}, {1}}),
      GB_LITERAL({{1, 2}, {3, 4}}), GB_LITERAL({{1.5, 2.5, 3.5}}), GB_LITERAL({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}),
      GB_LITERAL({{true}, {false}}), GB_LITERAL(bytes), GB_LITERAL(shorts), GB_LITERAL(floats), GB_LITERAL(ints),
      GB_LITERAL_AS(kDouble, {1, 2}), GB_LITERAL_AS(kInt64, {{1.5}, {-2.5}}),
      GB_LITERAL_AS(kFloat, 3), GB_LITERAL_AS(kFloat, {true, false}), GB_LITERAL_AS(kUInt8, {1, 200}),
  };
#undef GB_LITERAL
#undef GB_LITERAL_AS
  for (const auto& k : cases) {
    INFO("tensor(" << k.text << ")");
    gb::Tensor ours = k.ours();
    torch::Tensor theirs = k.theirs();
    CHECK(ours.sizes().vec() == theirs.sizes().vec());
    const bool same_dtype = torch_dtype(ours.scalar_type()) == theirs.scalar_type();
    CHECK_MESSAGE(same_dtype, "glassbox gives " << gb::python_name(ours.scalar_type()) << ", libtorch "
                                                 << c10::toString(theirs.scalar_type()));
    compare(ours, theirs, 0, 0, k.text);
  }
}

}  // namespace ops_oracle
