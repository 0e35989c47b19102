// tests/support/op_cases_elementwise.cpp — the op table's cases for elementwise ops: unary, binary, activations, comparisons and predicates, the in-place variants, and the everyday extras (triangles, roll, erf, prod, normalize, interpolate) (op_cases.h; the
// torch:: side of each is in tests/oracle/ops_oracle_test.cpp, by name).
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "support/op_cases_families.h"

namespace gbtest::op_cases::families {

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
      {"elu", {"elu"}, {in({9})}, [](G v) { return gb::elu(v[0], 0.7, 1.5, 0.9); }},
      {"hardtanh", {"hardtanh"}, {in({9})}, [](G v) { return gb::hardtanh(v[0], -0.6, 0.8); }},
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

}  // namespace gbtest::op_cases::families
