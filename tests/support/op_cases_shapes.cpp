// tests/support/op_cases_shapes.cpp — the op table's cases for reductions and softmax, products, joins and index ops, sorting, cumsum, flips and padding, tensor indices and index_put_, views and copies (op_cases.h; the
// torch:: side of each is in tests/oracle/ops_oracle_test.cpp, by name).
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "support/op_cases_families.h"

namespace gbtest::op_cases::families {

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
      {"cumprod", {"cumprod", "cumprod_backward"}, {in({3, 4})}, [](G v) { return v[0].cumprod(1); }, true, kFloats},
      {"cumprod_zeros_dim0",  // the gradient where an input is 0: exact (the first zero, and 0 after it)
       {"cumprod", "cumprod_backward"},
       {in({5, 3})},
       [](G v) {
         gb::Tensor mask = longs({1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, v[0]).view({5, 3});
         return gb::cumprod(v[0] * mask.to(v[0].scalar_type()), 0);
       },
       true,
       kFloats},
      {"cumprod_int", {"cumprod"}, {idx({3, 4}, 4)}, [](G v) { return v[0].cumprod(1); }, false, kInts},
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

}  // namespace gbtest::op_cases::families
