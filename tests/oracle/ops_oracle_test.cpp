// tests/oracle/ops_oracle_test.cpp — every op against libtorch (PyTorch 1.13's C++ API), forward and backward.
//
// One table: each case names an op, its inputs (shapes and kinds), and the same computation written twice — with
// gb:: and with torch::. The harness draws random inputs, runs both, compares the outputs, then backpropagates the
// same random weighting of the output through both and compares every input's gradient. Adding an op adds a case.
// Cases run in float64 (tight tolerances) and float32 (tolerances that fit the dtype).
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <functional>

#include "oracle/torch_dtype.h"
#include "support/check.h"

// This file's names, apart from the other oracle files' (the folder builds as one translation unit).
namespace ops_oracle {

namespace F = gb::nn::functional;
namespace TF = torch::nn::functional;

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

enum class Kind { Normal, Positive, Index, Bool, UnitInterval };

struct Input {
  std::vector<int64_t> shape;
  Kind kind = Kind::Normal;
  int64_t hi = 0;     // Index: values in [0, hi)
  bool grad = true;   // floating inputs: differentiate with respect to it
};

struct Case {
  std::string name;
  std::vector<Input> inputs;
  std::function<gb::Tensor(const std::vector<gb::Tensor>&)> ours;
  std::function<torch::Tensor(const std::vector<torch::Tensor>&)> theirs;
  bool backward = true;
};

Input in(std::vector<int64_t> shape, Kind kind = Kind::Normal) { return Input{std::move(shape), kind, 0, true}; }
Input idx(std::vector<int64_t> shape, int64_t hi) { return Input{std::move(shape), Kind::Index, hi, false}; }
Input nograd(std::vector<int64_t> shape, Kind kind = Kind::Normal) { return Input{std::move(shape), kind, 0, false}; }

void compare(const gb::Tensor& ours, const torch::Tensor& theirs, double rtol, double atol, const std::string& what) {
  INFO(what);
  REQUIRE(ours.defined());
  REQUIRE(theirs.defined());
  std::vector<int64_t> ts(theirs.sizes().begin(), theirs.sizes().end());
  REQUIRE_MESSAGE(ours.sizes() == gb::IntArrayRef(ts), "shape " << ours.sizes() << " vs " << gb::IntArrayRef(ts));
  gbtest::check_close(ours, to_gb_double(theirs), rtol, atol);
}

void run(const Case& c, gb::ScalarType dt, double rtol, double atol) {
  INFO("case " << c.name << " in " << gb::python_name(dt));
  gb::manual_seed(std::hash<std::string>{}(c.name) % 100000);
  std::vector<gb::Tensor> gins;
  std::vector<torch::Tensor> tins;
  for (const auto& i : c.inputs) {
    gb::Tensor g;
    switch (i.kind) {
      case Kind::Normal: g = gb::randn(i.shape, gb::kFloat64).to(dt); break;
      case Kind::Positive: g = (gb::rand(i.shape, gb::kFloat64) + 0.5).to(dt); break;
      case Kind::UnitInterval: g = (gb::rand(i.shape, gb::kFloat64) * 0.8 + 0.1).to(dt); break;
      case Kind::Index: g = gb::randint(0, i.hi, i.shape); break;
      case Kind::Bool: g = gb::rand(i.shape) > 0.5; break;
    }
    torch::Tensor t = to_torch(g);
    if (i.grad && g.is_floating_point()) {
      g.requires_grad_();
      t.requires_grad_();
    }
    gins.push_back(g);
    tins.push_back(t);
  }
  gb::Tensor go = c.ours(gins);
  torch::Tensor to = c.theirs(tins);
  compare(go, to, rtol, atol, "forward of " + c.name);
  if (!c.backward || !go.is_floating_point() || !go.requires_grad()) return;
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

using G = const std::vector<gb::Tensor>&;
using T = const std::vector<torch::Tensor>&;

std::vector<Case> pointwise_cases() {
  return {
      {"add", {in({3, 4}), in({4})}, [](G v) { return v[0] + v[1]; }, [](T v) { return v[0] + v[1]; }},
      {"add_alpha", {in({2, 3}), in({2, 1})}, [](G v) { return gb::add(v[0], v[1], 2.5); },
       [](T v) { return torch::add(v[0], v[1], 2.5); }},
      {"sub", {in({3, 1}), in({1, 4})}, [](G v) { return v[0] - v[1]; }, [](T v) { return v[0] - v[1]; }},
      {"rsub_scalar", {in({5})}, [](G v) { return 2.0 - v[0]; }, [](T v) { return 2.0 - v[0]; }},
      {"mul", {in({2, 3, 4}), in({3, 1})}, [](G v) { return v[0] * v[1]; }, [](T v) { return v[0] * v[1]; }},
      {"div", {in({3, 4}), in({4}, Kind::Positive)}, [](G v) { return v[0] / v[1]; }, [](T v) { return v[0] / v[1]; }},
      {"pow_scalar", {in({6})}, [](G v) { return v[0].pow(3); }, [](T v) { return v[0].pow(3); }},
      {"pow_tensor", {in({4}, Kind::Positive), in({4})}, [](G v) { return v[0].pow(v[1]); },
       [](T v) { return v[0].pow(v[1]); }},
      {"neg", {in({4})}, [](G v) { return -v[0]; }, [](T v) { return -v[0]; }},
      {"abs", {in({7})}, [](G v) { return v[0].abs(); }, [](T v) { return v[0].abs(); }},
      {"exp", {in({7})}, [](G v) { return v[0].exp(); }, [](T v) { return v[0].exp(); }},
      {"log", {in({7}, Kind::Positive)}, [](G v) { return v[0].log(); }, [](T v) { return v[0].log(); }},
      {"log1p", {in({7}, Kind::Positive)}, [](G v) { return v[0].log1p(); }, [](T v) { return v[0].log1p(); }},
      {"sqrt", {in({7}, Kind::Positive)}, [](G v) { return v[0].sqrt(); }, [](T v) { return v[0].sqrt(); }},
      {"rsqrt", {in({7}, Kind::Positive)}, [](G v) { return v[0].rsqrt(); }, [](T v) { return v[0].rsqrt(); }},
      {"sin", {in({7})}, [](G v) { return v[0].sin(); }, [](T v) { return v[0].sin(); }},
      {"cos", {in({7})}, [](G v) { return v[0].cos(); }, [](T v) { return v[0].cos(); }},
      {"tanh", {in({7})}, [](G v) { return v[0].tanh(); }, [](T v) { return v[0].tanh(); }},
      {"sigmoid", {in({7})}, [](G v) { return v[0].sigmoid(); }, [](T v) { return v[0].sigmoid(); }},
      {"relu", {in({3, 5})}, [](G v) { return v[0].relu(); }, [](T v) { return v[0].relu(); }},
      {"leaky_relu", {in({9})}, [](G v) { return gb::leaky_relu(v[0], 0.2); },
       [](T v) { return torch::leaky_relu(v[0], 0.2); }},
      {"gelu", {in({9})}, [](G v) { return gb::gelu(v[0]); }, [](T v) { return torch::gelu(v[0]); }},
      {"gelu_tanh", {in({9})}, [](G v) { return gb::gelu(v[0], "tanh"); }, [](T v) { return torch::gelu(v[0], "tanh"); }},
      {"silu", {in({9})}, [](G v) { return gb::silu(v[0]); }, [](T v) { return torch::silu(v[0]); }},
      {"softplus", {in({9})}, [](G v) { return gb::softplus(v[0], 2, 1); },
       [](T v) { return torch::softplus(v[0], 2, 1); }},
      {"clamp", {in({9})}, [](G v) { return v[0].clamp(-0.5, 0.7); }, [](T v) { return v[0].clamp(-0.5, 0.7); }},
      {"where", {nograd({3, 4}, Kind::Bool), in({3, 4}), in({4})}, [](G v) { return gb::where(v[0], v[1], v[2]); },
       [](T v) { return torch::where(v[0], v[1], v[2]); }},
      {"clamp_tensor", {in({3, 4}), in({4}), in({3, 1})}, [](G v) { return gb::clamp(v[0], v[1] - 0.5, v[2] + 0.5); },
       [](T v) { return torch::clamp(v[0], v[1] - 0.5, v[2] + 0.5); }},
      {"clamp_min_tensor", {in({3, 4}), in({4})}, [](G v) { return gb::clamp(v[0], v[1], std::nullopt); },
       [](T v) { return torch::clamp(v[0], v[1], c10::nullopt); }},
      {"where_scalar", {nograd({3, 4}, Kind::Bool), in({3, 4})}, [](G v) { return gb::where(v[0], v[1], 0.5); },
       [](T v) { return torch::where(v[0], v[1], 0.5); }},
      {"masked_fill", {in({3, 4}), nograd({4}, Kind::Bool)}, [](G v) { return v[0].masked_fill(v[1], -1.5); },
       [](T v) { return v[0].masked_fill(v[1], -1.5); }},
      {"lerp", {in({3, 4}), in({4})}, [](G v) { return gb::lerp(v[0], v[1], 0.3); },
       [](T v) { return torch::lerp(v[0], v[1], 0.3); }},
      {"addcmul", {in({3, 4}), in({4}), in({3, 1})}, [](G v) { return gb::addcmul(v[0], v[1], v[2], 0.7); },
       [](T v) { return torch::addcmul(v[0], v[1], v[2], 0.7); }},
      {"addcdiv", {in({3, 4}), in({4}), in({3, 1}, Kind::Positive)},
       [](G v) { return gb::addcdiv(v[0], v[1], v[2], -1.3); },
       [](T v) { return torch::addcdiv(v[0], v[1], v[2], -1.3); }},
      {"square", {in({7})}, [](G v) { return v[0].square(); }, [](T v) { return v[0].square(); }},
      {"reciprocal", {in({7}, Kind::Positive)}, [](G v) { return v[0].reciprocal(); },
       [](T v) { return v[0].reciprocal(); }},
      {"sign", {in({7})}, [](G v) { return v[0].sign(); }, [](T v) { return v[0].sign(); }},
      {"round", {in({7})}, [](G v) { return (v[0] * 3).round(); }, [](T v) { return (v[0] * 3).round(); }},
      {"floor", {in({7})}, [](G v) { return gb::floor(v[0] * 3); }, [](T v) { return torch::floor(v[0] * 3); }},
      {"ceil", {in({7})}, [](G v) { return (v[0] * 3).ceil(); }, [](T v) { return (v[0] * 3).ceil(); }},
      {"trunc", {in({7})}, [](G v) { return gb::trunc(v[0] * 3); }, [](T v) { return torch::trunc(v[0] * 3); }},
      {"logical_and", {nograd({3, 4}, Kind::Bool), nograd({4}, Kind::Bool)},
       [](G v) { return gb::logical_and(v[0], v[1]); }, [](T v) { return torch::logical_and(v[0], v[1]); }},
      {"maximum", {in({3, 4}), in({4})}, [](G v) { return gb::maximum(v[0], v[1]); },
       [](T v) { return torch::maximum(v[0], v[1]); }},
      {"minimum", {in({3, 4}), in({3, 1})}, [](G v) { return gb::minimum(v[0], v[1]); },
       [](T v) { return torch::minimum(v[0], v[1]); }},
      {"lt", {in({3, 4}), in({4})}, [](G v) { return v[0] < v[1]; }, [](T v) { return v[0] < v[1]; }},
      {"ge_scalar", {in({5})}, [](G v) { return v[0] >= 0.1; }, [](T v) { return v[0] >= 0.1; }},
      {"eq", {in({5}), in({5})}, [](G v) { return v[0] == v[0].t(); }, [](T v) { return v[0] == v[0].t(); }},
      {"noncontiguous_mul", {in({4, 3}), in({3, 4})}, [](G v) { return v[0].t() * v[1]; },
       [](T v) { return v[0].t() * v[1]; }},
  };
}

std::vector<Case> reduction_cases() {
  return {
      {"sum_all", {in({3, 4})}, [](G v) { return v[0].sum(); }, [](T v) { return v[0].sum(); }},
      {"sum_dims", {in({2, 3, 4})}, [](G v) { return v[0].sum({0, 2}, true); },
       [](T v) { return v[0].sum(std::vector<int64_t>{0, 2}, true); }},
      {"mean_dim", {in({2, 3, 4})}, [](G v) { return v[0].mean({-1}); }, [](T v) { return v[0].mean({-1}); }},
      {"max_all", {in({3, 4})}, [](G v) { return v[0].max(); }, [](T v) { return v[0].max(); }},
      {"max_dim_values", {in({3, 4})}, [](G v) { return std::get<0>(v[0].max(1)); },
       [](T v) { return std::get<0>(v[0].max(1)); }},
      {"max_dim_indices", {in({3, 4})}, [](G v) { return std::get<1>(v[0].max(0, true)); },
       [](T v) { return std::get<1>(v[0].max(0, true)); }, false},
      {"min_dim_values", {in({3, 4})}, [](G v) { return std::get<0>(v[0].min(-1, true)); },
       [](T v) { return std::get<0>(v[0].min(-1, true)); }},
      {"amax", {in({2, 3, 4})}, [](G v) { return v[0].amax({0, 2}); }, [](T v) { return v[0].amax({0, 2}); }},
      {"amin", {in({2, 3, 4})}, [](G v) { return v[0].amin({1}, true); }, [](T v) { return v[0].amin({1}, true); }},
      {"argmax", {in({3, 5})}, [](G v) { return v[0].argmax(1); }, [](T v) { return v[0].argmax(1); }, false},
      {"var", {in({3, 5})}, [](G v) { return v[0].var({1}); }, [](T v) { return v[0].var({1}); }},
      {"var_biased_all", {in({3, 5})}, [](G v) { return v[0].var(false); }, [](T v) { return v[0].var(false); }},
      {"std", {in({4, 3})}, [](G v) { return v[0].std({0}, true, true); }, [](T v) { return v[0].std({0}, true, true); }},
      {"norm2", {in({3, 4})}, [](G v) { return v[0].norm(2, {1}); }, [](T v) { return v[0].norm(2, {1}); }},
      {"norm1", {in({3, 4})}, [](G v) { return v[0].norm(1); }, [](T v) { return v[0].norm(1); }},
      {"norm3", {in({3, 4})}, [](G v) { return v[0].norm(3, {0}, true); }, [](T v) { return v[0].norm(3, {0}, true); }},
      {"logsumexp", {in({3, 4})}, [](G v) { return gb::logsumexp(v[0], {1}); },
       [](T v) { return torch::logsumexp(v[0], {1}); }},
      {"softmax", {in({3, 5})}, [](G v) { return v[0].softmax(1); }, [](T v) { return v[0].softmax(1); }},
      {"softmax_dim0", {in({3, 5})}, [](G v) { return v[0].softmax(0); }, [](T v) { return v[0].softmax(0); }},
      {"log_softmax", {in({2, 3, 4})}, [](G v) { return v[0].log_softmax(-1); }, [](T v) { return v[0].log_softmax(-1); }},
  };
}

std::vector<Case> linalg_shape_cases() {
  return {
      {"mm", {in({3, 4}), in({4, 5})}, [](G v) { return gb::mm(v[0], v[1]); }, [](T v) { return torch::mm(v[0], v[1]); }},
      // PyTorch's fused bias + activation (not differentiable there either): forward only
      {"_addmm_activation_relu", {nograd({5}), nograd({3, 4}), nograd({4, 5})},
       [](G v) { return gb::_addmm_activation(v[0], v[1], v[2]); },
       [](T v) { return torch::_addmm_activation(v[0], v[1], v[2]); }, false},
      {"_addmm_activation_gelu", {nograd({3, 5}), nograd({3, 4}), nograd({4, 5})},
       [](G v) { return gb::_addmm_activation(v[0], v[1], v[2], 0.5, 2, true); },
       [](T v) { return torch::_addmm_activation(v[0], v[1], v[2], 0.5, 2, true); }, false},
      {"matmul_batched_broadcast", {in({2, 1, 3, 4}), in({3, 4, 2})}, [](G v) { return gb::matmul(v[0], v[1]); },
       [](T v) { return torch::matmul(v[0], v[1]); }},
      {"matmul_vec_mat", {in({4}), in({4, 3})}, [](G v) { return gb::matmul(v[0], v[1]); },
       [](T v) { return torch::matmul(v[0], v[1]); }},
      {"matmul_mat_vec", {in({3, 4}), in({4})}, [](G v) { return gb::matmul(v[0], v[1]); },
       [](T v) { return torch::matmul(v[0], v[1]); }},
      {"matmul_transposed", {in({4, 3}), in({5, 4})}, [](G v) { return gb::matmul(v[0].t(), v[1].t()); },
       [](T v) { return torch::matmul(v[0].t(), v[1].t()); }},
      {"bmm", {in({2, 3, 4}), in({2, 4, 5})}, [](G v) { return gb::bmm(v[0], v[1]); },
       [](T v) { return torch::bmm(v[0], v[1]); }},
      {"linear", {in({2, 3, 4}), in({5, 4}), in({5})}, [](G v) { return gb::linear(v[0], v[1], v[2]); },
       [](T v) { return torch::linear(v[0], v[1], v[2]); }},
      {"cat", {in({2, 3}), in({2, 1})}, [](G v) { return gb::cat({v[0], v[1]}, 1); },
       [](T v) { return torch::cat({v[0], v[1]}, 1); }},
      {"stack", {in({2, 3}), in({2, 3})}, [](G v) { return gb::stack({v[0], v[1]}, 1); },
       [](T v) { return torch::stack({v[0], v[1]}, 1); }},
      {"split", {in({5, 4})}, [](G v) { return v[0].split(2, 0)[1] * 2 + v[0].split(2, 0)[2].sum(); },
       [](T v) { return v[0].split(2, 0)[1] * 2 + v[0].split(2, 0)[2].sum(); }},
      {"chunk", {in({4, 6})}, [](G v) { return v[0].chunk(3, 1)[2]; }, [](T v) { return v[0].chunk(3, 1)[2]; }},
      {"index_select", {in({5, 3}), idx({7}, 5)}, [](G v) { return v[0].index_select(0, v[1]); },
       [](T v) { return v[0].index_select(0, v[1]); }},
      {"gather", {in({4, 5}), idx({4, 3}, 5)}, [](G v) { return v[0].gather(1, v[1]); },
       [](T v) { return v[0].gather(1, v[1]); }},
      {"scatter_add", {in({3, 5}), idx({2, 5}, 3), in({2, 5})}, [](G v) { return v[0].scatter_add(0, v[1], v[2]); },
       [](T v) { return v[0].scatter_add(0, v[1], v[2]); }},
      {"embedding", {in({6, 3}), idx({2, 4}, 6)}, [](G v) { return gb::embedding(v[0], v[1]); },
       [](T v) { return torch::embedding(v[0], v[1]); }},
      {"permute_reshape", {in({2, 3, 4})}, [](G v) { return v[0].permute({2, 0, 1}).reshape({4, 6}); },
       [](T v) { return v[0].permute({2, 0, 1}).reshape({4, 6}); }},
      {"index_slices", {in({4, 5})},
       [](G v) { return v[0].index({gb::indexing::Slice(1, 4, 2), gb::indexing::Slice(gb::indexing::None, -1)}); },
       [](T v) { return v[0].index({torch::indexing::Slice(1, 4, 2), torch::indexing::Slice(torch::indexing::None, -1)}); }},
  };
}

std::vector<Case> nn_cases() {
  return {
      {"conv2d", {in({2, 3, 7, 6}), in({4, 3, 3, 3}), in({4})}, [](G v) { return gb::conv2d(v[0], v[1], v[2]); },
       [](T v) { return torch::conv2d(v[0], v[1], v[2]); }},
      {"conv2d_stride_pad_dil", {in({1, 2, 9, 8}), in({3, 2, 3, 2})},
       [](G v) { return F::conv2d(v[0], v[1], F::Conv2dFuncOptions().stride({2, 1}).padding({1, 2}).dilation({2, 1})); },
       [](T v) { return TF::conv2d(v[0], v[1], TF::Conv2dFuncOptions().stride({2, 1}).padding({1, 2}).dilation({2, 1})); }},
      {"conv2d_groups", {in({2, 4, 5, 5}), in({6, 2, 3, 3}), in({6})},
       [](G v) { return gb::conv2d(v[0], v[1], v[2], 1, 1, 1, 2); },
       [](T v) { return torch::conv2d(v[0], v[1], v[2], 1, 1, 1, 2); }},
      {"conv_transpose2d", {in({2, 3, 4, 5}), in({3, 2, 3, 3}), in({2})},
       [](G v) { return gb::conv_transpose2d(v[0], v[1], v[2]); },
       [](T v) { return torch::conv_transpose2d(v[0], v[1], v[2]); }},
      {"conv_transpose2d_stride_pad_outpad_groups_dil", {in({2, 4, 3, 4}), in({4, 3, 3, 2}), in({6})},
       [](G v) { return gb::conv_transpose2d(v[0], v[1], v[2], {2, 3}, {1, 0}, {1, 2}, 2, {1, 2}); },
       [](T v) { return torch::conv_transpose2d(v[0], v[1], v[2], {2, 3}, {1, 0}, {1, 2}, 2, {1, 2}); }},
      {"max_pool2d", {in({2, 3, 7, 6})}, [](G v) { return gb::max_pool2d(v[0], {3, 2}, {2, 2}, {1, 0}); },
       [](T v) { return torch::max_pool2d(v[0], {3, 2}, {2, 2}, {1, 0}); }},
      {"max_pool2d_ceil", {in({1, 2, 7, 7})}, [](G v) { return gb::max_pool2d(v[0], 2, {}, 0, 1, true); },
       [](T v) { return torch::max_pool2d(v[0], 2, {}, 0, 1, true); }},
      {"avg_pool2d", {in({2, 3, 7, 6})}, [](G v) { return gb::avg_pool2d(v[0], 3, 2, 1); },
       [](T v) { return torch::avg_pool2d(v[0], 3, 2, 1); }},
      {"avg_pool2d_no_pad_count", {in({1, 2, 6, 6})}, [](G v) { return gb::avg_pool2d(v[0], 3, 2, 1, true, false); },
       [](T v) { return torch::avg_pool2d(v[0], 3, 2, 1, true, false); }},
      {"adaptive_avg_pool2d", {in({2, 3, 7, 5})}, [](G v) { return gb::adaptive_avg_pool2d(v[0], {3, 2}); },
       [](T v) { return torch::adaptive_avg_pool2d(v[0], {3, 2}); }},
      {"batch_norm_train", {in({4, 3, 2, 2}), in({3}), in({3})},
       [](G v) { return gb::batch_norm(v[0], v[1], v[2], gb::zeros({3}, v[0].dtype()), gb::ones({3}, v[0].dtype()), true, 0.1, 1e-5); },
       [](T v) { return torch::batch_norm(v[0], v[1], v[2], torch::zeros({3}, v[0].dtype()), torch::ones({3}, v[0].dtype()), true, 0.1, 1e-5, false); }},
      {"batch_norm_eval", {in({4, 3}), in({3}), in({3}), nograd({3}), nograd({3}, Kind::Positive)},
       [](G v) { return gb::batch_norm(v[0], v[1], v[2], v[3], v[4], false, 0.1, 1e-5); },
       [](T v) { return torch::batch_norm(v[0], v[1], v[2], v[3], v[4], false, 0.1, 1e-5, false); }},
      {"layer_norm", {in({2, 3, 4}), in({3, 4}), in({3, 4})}, [](G v) { return gb::layer_norm(v[0], {3, 4}, v[1], v[2]); },
       [](T v) { return torch::layer_norm(v[0], {3, 4}, v[1], v[2]); }},
      {"group_norm", {in({2, 6, 3}), in({6}), in({6})}, [](G v) { return gb::group_norm(v[0], 3, v[1], v[2]); },
       [](T v) { return torch::group_norm(v[0], 3, v[1], v[2]); }},
      {"dropout_eval", {in({3, 4})}, [](G v) { return gb::dropout(v[0], 0.5, false); },
       [](T v) { return torch::dropout(v[0], 0.5, false); }},
      {"cross_entropy", {in({5, 4}), idx({5}, 4)}, [](G v) { return F::cross_entropy(v[0], v[1]); },
       [](T v) { return TF::cross_entropy(v[0], v[1]); }},
      {"cross_entropy_smooth_weight_ignore", {in({6, 4}), idx({6}, 4), nograd({4}, Kind::Positive)},
       [](G v) {
         auto t = v[1].clone();
         { gb::NoGradGuard ng; t.narrow(0, 0, 1).fill_(1); t.narrow(0, 5, 1).fill_(1); }
         return F::cross_entropy(v[0], t, F::CrossEntropyFuncOptions().weight(v[2]).ignore_index(1).label_smoothing(0.2));
       },
       [](T v) {
         auto t = v[1].clone();
         t.narrow(0, 0, 1).fill_(1);
         t.narrow(0, 5, 1).fill_(1);
         return TF::cross_entropy(v[0], t, TF::CrossEntropyFuncOptions().weight(v[2]).ignore_index(1).label_smoothing(0.2));
       }},
      // In-place ops on views of a non-leaf (CopySlices), including an older view read after the base changed.
      {"inplace_on_views", {in({2, 3, 4}), in({3})},
       [](G v) {
         auto y = v[0][0] * 1;
         auto old = y.narrow(1, 1, 2);
         y.select(1, 2).mul_(v[1]);
         y.t().narrow(0, 0, 2).copy_(v[0][1].t().narrow(0, 1, 2).sin());
         y.index({gb::indexing::Slice(), 3}).relu_();
         return y * old.sum();
       },
       [](T v) {
         auto y = v[0][0] * 1;
         auto old = y.narrow(1, 1, 2);
         y.select(1, 2).mul_(v[1]);
         y.t().narrow(0, 0, 2).copy_(v[0][1].t().narrow(0, 1, 2).sin());
         y.index({torch::indexing::Slice(), 3}).relu_();
         return y * old.sum();
       }},
      {"cross_entropy_sum_spatial", {in({2, 3, 4, 2}), idx({2, 4, 2}, 3)},
       [](G v) { return F::cross_entropy(v[0], v[1], F::CrossEntropyFuncOptions().reduction(gb::kSum)); },
       [](T v) { return TF::cross_entropy(v[0], v[1], TF::CrossEntropyFuncOptions().reduction(torch::kSum)); }},
      {"cross_entropy_none", {in({4, 3}), idx({4}, 3)},
       [](G v) { return F::cross_entropy(v[0], v[1], F::CrossEntropyFuncOptions().reduction(gb::kNone).label_smoothing(0.1)); },
       [](T v) { return TF::cross_entropy(v[0], v[1], TF::CrossEntropyFuncOptions().reduction(torch::kNone).label_smoothing(0.1)); }},
      {"cross_entropy_probs", {in({4, 3}), nograd({4, 3}, Kind::UnitInterval)},
       [](G v) { return F::cross_entropy(v[0], v[1] / v[1].sum({1}, true)); },
       [](T v) { return TF::cross_entropy(v[0], v[1] / v[1].sum({1}, true)); }},
      {"nll_loss", {in({5, 4}), idx({5}, 4)}, [](G v) { return F::nll_loss(v[0].log_softmax(1), v[1]); },
       [](T v) { return TF::nll_loss(v[0].log_softmax(1), v[1]); }},
      {"mse_loss", {in({3, 4}), in({3, 4})}, [](G v) { return F::mse_loss(v[0], v[1]); },
       [](T v) { return TF::mse_loss(v[0], v[1]); }},
      {"l1_loss_sum", {in({3, 4}), in({3, 4})}, [](G v) { return F::l1_loss(v[0], v[1], gb::kSum); },
       [](T v) { return TF::l1_loss(v[0], v[1], TF::L1LossFuncOptions(torch::kSum)); }},
      {"smooth_l1_loss", {in({3, 4}), in({3, 4})},
       [](G v) { return F::smooth_l1_loss(v[0] * 2, v[1], F::SmoothL1LossFuncOptions().beta(0.5)); },
       [](T v) { return torch::smooth_l1_loss(v[0] * 2, v[1], at::Reduction::Mean, 0.5); }},
      {"smooth_l1_loss_none", {in({5}), in({5})},
       [](G v) { return F::smooth_l1_loss(v[0] * 2, v[1], F::SmoothL1LossFuncOptions(gb::kNone)); },
       [](T v) { return TF::smooth_l1_loss(v[0] * 2, v[1], TF::SmoothL1LossFuncOptions(torch::kNone)); }},
      {"huber_loss", {in({3, 4}), in({3, 4})},
       [](G v) { return F::huber_loss(v[0] * 2, v[1], F::HuberLossFuncOptions().delta(0.7).reduction(gb::kSum)); },
       [](T v) { return TF::huber_loss(v[0] * 2, v[1], TF::HuberLossFuncOptions().delta(0.7).reduction(torch::kSum)); }},
      // libtorch's own target gradient is wrong when the target broadcasts (it resizes a (4) output to (3, 4));
      // F::huber_loss expands first, as here
      {"huber_loss_broadcast", {in({3, 4}), in({4})}, [](G v) { return gb::huber_loss(v[0] * 2, v[1]); },
       [](T v) { return torch::huber_loss(v[0] * 2, v[1].expand({3, 4})); }},
      {"binary_cross_entropy", {in({3, 4}, Kind::UnitInterval), in({3, 4}, Kind::UnitInterval), nograd({4}, Kind::Positive)},
       [](G v) { return F::binary_cross_entropy(v[0], v[1], F::BinaryCrossEntropyFuncOptions().weight(v[2])); },
       [](T v) { return TF::binary_cross_entropy(v[0], v[1], TF::BinaryCrossEntropyFuncOptions().weight(v[2])); }},
      {"binary_cross_entropy_sum", {in({6}, Kind::UnitInterval), in({6}, Kind::UnitInterval)},
       [](G v) { return F::binary_cross_entropy(v[0], v[1], F::BinaryCrossEntropyFuncOptions().reduction(gb::kSum)); },
       [](T v) { return TF::binary_cross_entropy(v[0], v[1], TF::BinaryCrossEntropyFuncOptions().reduction(torch::kSum)); }},
      {"kl_div_batchmean", {in({4, 5}), in({4, 5}, Kind::UnitInterval)},
       [](G v) { return F::kl_div(v[0].log_softmax(1), v[1], F::KLDivFuncOptions(gb::kBatchMean)); },
       [](T v) { return TF::kl_div(v[0].log_softmax(1), v[1], TF::KLDivFuncOptions(torch::kBatchMean)); }},
      {"kl_div_log_target_none", {in({3, 4}), in({3, 4})},
       [](G v) { return F::kl_div(v[0], v[1], F::KLDivFuncOptions(gb::kNone).log_target(true)); },
       [](T v) { return TF::kl_div(v[0], v[1], TF::KLDivFuncOptions(torch::kNone).log_target(true)); }},
      {"kl_div_sum", {in({2, 3}), in({2, 3}, Kind::Positive)}, [](G v) { return gb::kl_div(v[0], v[1], gb::kSum); },
       [](T v) { return torch::kl_div(v[0], v[1], at::Reduction::Sum); }},
      {"bce_with_logits", {in({3, 4}), nograd({3, 4}, Kind::UnitInterval), nograd({4}, Kind::Positive)},
       [](G v) { return F::binary_cross_entropy_with_logits(v[0], v[1], F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(v[2])); },
       [](T v) { return TF::binary_cross_entropy_with_logits(v[0], v[1], TF::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(v[2])); }},
  };
}

// sort, topk (values with backward, indices), cumsum, flip, repeat, masked_select, padding.
std::vector<Case> sort_shape_copy_cases() {
  return {
      {"sort_values", {in({3, 5})}, [](G v) { return std::get<0>(v[0].sort(1, true)); },
       [](T v) { return std::get<0>(v[0].sort(1, true)); }},
      {"sort_indices_dim0", {in({4, 3})}, [](G v) { return std::get<1>(gb::sort(v[0], 0)); },
       [](T v) { return std::get<1>(torch::sort(v[0], 0)); }, false},
      // ties (rounded values): the stable order, ascending and descending, as libtorch's stable CPU sort
      {"sort_stable_ties", {nograd({4, 9})}, [](G v) { return std::get<1>(gb::sort((v[0] * 1.5).round(), 1)); },
       [](T v) { return std::get<1>(torch::sort((v[0] * 1.5).round(), c10::optional<bool>(true), 1)); }, false},
      {"sort_stable_ties_descending", {nograd({9, 4})},
       [](G v) { return std::get<1>(gb::sort((v[0] * 1.5).round(), std::optional<bool>(true), 0, true)); },
       [](T v) { return std::get<1>(torch::sort((v[0] * 1.5).round(), c10::optional<bool>(true), 0, true)); }, false},
      {"argsort", {in({3, 6})}, [](G v) { return v[0].argsort(-1, true); }, [](T v) { return v[0].argsort(-1, true); },
       false},
      {"topk_largest", {in({3, 7})}, [](G v) { return std::get<0>(v[0].topk(3)); },
       [](T v) { return std::get<0>(v[0].topk(3)); }},
      {"topk_smallest_dim0", {in({6, 4})}, [](G v) { return std::get<0>(gb::topk(v[0], 2, 0, false)); },
       [](T v) { return std::get<0>(torch::topk(v[0], 2, 0, false)); }},
      {"topk_indices", {in({2, 3, 5})}, [](G v) { return std::get<1>(v[0].topk(4, 2)); },
       [](T v) { return std::get<1>(v[0].topk(4, 2)); }, false},
      // unsorted: any order is allowed, so both are sorted before comparing
      {"topk_unsorted", {in({3, 8})}, [](G v) { return std::get<0>(std::get<0>(v[0].topk(5, 1, true, false)).sort(1)); },
       [](T v) { return std::get<0>(std::get<0>(v[0].topk(5, 1, true, false)).sort(1)); }},
      {"cumsum", {in({3, 4})}, [](G v) { return v[0].cumsum(1); }, [](T v) { return v[0].cumsum(1); }},
      {"cumsum_dim0_3d", {in({4, 2, 3})}, [](G v) { return gb::cumsum(v[0], 0); },
       [](T v) { return torch::cumsum(v[0], 0); }},
      {"cumsum_int", {idx({3, 5}, 7)}, [](G v) { return v[0].cumsum(1); }, [](T v) { return v[0].cumsum(1); }, false},
      {"flip", {in({2, 3, 4})}, [](G v) { return v[0].flip({0, 2}); }, [](T v) { return v[0].flip({0, 2}); }},
      {"flip_transposed", {in({3, 4})}, [](G v) { return gb::flip(v[0].t(), {-1}); },
       [](T v) { return torch::flip(v[0].t(), {-1}); }},
      {"repeat", {in({3, 2})}, [](G v) { return v[0].repeat({2, 1, 3}); }, [](T v) { return v[0].repeat({2, 1, 3}); }},
      {"masked_select", {in({3, 4}), nograd({4}, Kind::Bool)}, [](G v) { return v[0].masked_select(v[1]); },
       [](T v) { return v[0].masked_select(v[1]); }},
      {"masked_select_broadcast_input", {in({3, 1}), nograd({3, 4}, Kind::Bool)},
       [](G v) { return gb::masked_select(v[0], v[1]); }, [](T v) { return torch::masked_select(v[0], v[1]); }},
      {"constant_pad_nd", {in({2, 3, 4})}, [](G v) { return gb::constant_pad_nd(v[0], {1, -1, 2, 0}, 0.5); },
       [](T v) { return torch::constant_pad_nd(v[0], {1, -1, 2, 0}, 0.5); }},
      {"pad_constant", {in({2, 3})}, [](G v) { return F::pad(v[0], F::PadFuncOptions({2, 1}).value(-1)); },
       [](T v) { return TF::pad(v[0], TF::PadFuncOptions({2, 1}).value(-1)); }},
      {"pad_reflect_2d", {in({2, 3, 4, 5})}, [](G v) { return F::pad(v[0], F::PadFuncOptions({2, 1, 1, 2}).mode(gb::kReflect)); },
       [](T v) { return TF::pad(v[0], TF::PadFuncOptions({2, 1, 1, 2}).mode(torch::kReflect)); }},
      {"pad_replicate_1d", {in({2, 3, 4})}, [](G v) { return F::pad(v[0], F::PadFuncOptions({3, 1}).mode(gb::kReplicate)); },
       [](T v) { return TF::pad(v[0], TF::PadFuncOptions({3, 1}).mode(torch::kReplicate)); }},
      {"pad_circular_2d", {in({1, 2, 3, 4})}, [](G v) { return gb::pad(v[0], {1, 2, 3, 0}, "circular"); },
       [](T v) { return torch::pad(v[0], {1, 2, 3, 0}, "circular"); }},
  };
}

// Every case runs even when an earlier one fails; a thrown error is reported with the case's name.
void run_all(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    try {
      run(c, gb::kFloat64, 1e-7, 1e-9);
      run(c, gb::kFloat, 2e-4, 2e-5);
    } catch (const std::exception& e) {
      FAIL_CHECK("case " << c.name << " threw: " << e.what());
    }
  }
}

}  // namespace

// Tensor indices (PyTorch's advanced indexing): index tensors and masks, alone, with slices, None and ..., adjacent
// (the picked dims stay in place) or not (they come first), and index_put_ with values, numbers and accumulate.
std::vector<Case> advanced_index_cases() {
  namespace GI = gb::indexing;
  namespace TI = torch::indexing;
  auto gi = [](std::vector<int64_t> v) { return gb::tensor(gb::ArrayRef<int64_t>(v), gb::kLong); };
  auto ti = [](std::vector<int64_t> v) { return torch::tensor(v, torch::kLong); };
  return {
      {"index rows", {in({5, 4}), idx({3}, 5)}, [](G v) { return v[0].index({v[1]}); },
       [](T v) { return v[0].index({v[1]}); }},
      {"index 2-D index tensor", {in({5, 4}), idx({2, 3}, 4)},
       [](G v) { return v[0].index({GI::Slice(), v[1]}); }, [](T v) { return v[0].index({TI::Slice(), v[1]}); }},
      {"index two tensors broadcast", {in({5, 4}), idx({3, 1}, 5), idx({2}, 4)},
       [](G v) { return v[0].index({v[1], v[2]}); }, [](T v) { return v[0].index({v[1], v[2]}); }},
      {"index adjacent in the middle", {in({3, 4, 5, 2}), idx({6}, 4), idx({6}, 5)},
       [](G v) { return v[0].index({GI::Slice(), v[1], v[2]}); },
       [](T v) { return v[0].index({TI::Slice(), v[1], v[2]}); }},
      {"index separated tensors go first", {in({3, 4, 5}), idx({2}, 3), idx({2}, 5)},
       [](G v) { return v[0].index({v[1], GI::Slice(), v[2]}); },
       [](T v) { return v[0].index({v[1], TI::Slice(), v[2]}); }},
      {"index negative, ellipsis and None", {in({3, 4, 5})},
       [gi](G v) { return v[0].index({GI::Ellipsis, gi({-1, 0, -5}), GI::None}); },
       [ti](T v) { return v[0].index({TI::Ellipsis, ti({-1, 0, -5}), TI::None}); }},
      {"index integer then tensor", {in({3, 4, 5})},
       [gi](G v) { return v[0].index({1, GI::Slice(), gi({4, 2})}); },
       [ti](T v) { return v[0].index({1, TI::Slice(), ti({4, 2})}); }},
      {"index full mask", {in({5, 4}), nograd({5, 4}, Kind::Bool)}, [](G v) { return v[0].index({v[1]}); },
       [](T v) { return v[0].index({v[1]}); }},
      {"index row mask", {in({6, 3}), nograd({6}, Kind::Bool)}, [](G v) { return v[0].index({v[1]}); },
       [](T v) { return v[0].index({v[1]}); }},
      {"index mask on trailing dims", {in({2, 3, 4}), nograd({3, 4}, Kind::Bool)},
       [](G v) { return v[0].index({GI::Slice(), v[1]}); }, [](T v) { return v[0].index({TI::Slice(), v[1]}); }},
      {"index_put_ values", {in({5, 4}), in({3, 4})},
       [gi](G v) { gb::Tensor y = v[0] * 1.0; y.index_put_({gi({3, 0, 4})}, v[1]); return y; },
       [ti](T v) { torch::Tensor y = v[0] * 1.0; y.index_put_({ti({3, 0, 4})}, v[1]); return y; }},
      {"index_put_ broadcast values", {in({5, 4}), in({4})},
       [gi](G v) { gb::Tensor y = v[0] * 1.0; y.index_put_({gi({1, 2})}, v[1]); return y; },
       [ti](T v) { torch::Tensor y = v[0] * 1.0; y.index_put_({ti({1, 2})}, v[1]); return y; }},
      {"index_put_ mask number", {in({5, 4})},
       [](G v) { gb::Tensor y = v[0] * 1.0; y.index_put_({y < 0}, 0.5); return y; },
       [](T v) { torch::Tensor y = v[0] * 1.0; y.index_put_({y < 0}, 0.5); return y; }},
      {"index_put_ mask values", {in({6, 3}), nograd({6}, Kind::Bool), in({3})},
       [](G v) { gb::Tensor y = v[0] * 1.0; y.index_put_({v[1]}, v[2]); return y; },
       [](T v) { torch::Tensor y = v[0] * 1.0; y.index_put_({v[1]}, v[2]); return y; }},
      {"index_put_ in the middle", {in({3, 4, 5}), in({3, 2})},
       [gi](G v) { gb::Tensor y = v[0] * 1.0; y.index_put_({GI::Slice(), gi({3, 1}), 2}, v[1]); return y; },
       [ti](T v) { torch::Tensor y = v[0] * 1.0; y.index_put_({TI::Slice(), ti({3, 1}), 2}, v[1]); return y; }},
      {"index_put_ accumulate repeats", {in({5, 4}), in({4, 4})},
       [gi](G v) { gb::Tensor y = v[0] * 1.0; y.index_put_({gi({1, 3, 1, 1})}, v[1], true); return y; },
       [ti](T v) {
         torch::Tensor y = v[0] * 1.0;
         y.index_put_({ti({1, 3, 1, 1})}, v[1], true);
         return y;
       }},
      {"index_put_ two tensors", {in({4, 5}), in({3})},
       [gi](G v) { gb::Tensor y = v[0] * 1.0; y.index_put_({gi({0, 2, 3}), gi({4, 4, 0})}, v[1]); return y; },
       [ti](T v) { torch::Tensor y = v[0] * 1.0; y.index_put_({ti({0, 2, 3}), ti({4, 4, 0})}, v[1]); return y; }},
      {"nonzero", {nograd({3, 4}, Kind::Bool)}, [](G v) { return v[0].nonzero(); },
       [](T v) { return v[0].nonzero(); }},
  };
}

// What everyday libtorch programs reach for beyond the core: triangles, roll, erf, prod along a dim, the two-tensor
// min/max, F::normalize.
std::vector<Case> everyday_cases() {
  return {
      {"triu", {in({4, 5})}, [](G v) { return v[0].triu(); }, [](T v) { return v[0].triu(); }},
      {"triu batched k=1", {in({2, 3, 4})}, [](G v) { return gb::triu(v[0], 1); }, [](T v) { return torch::triu(v[0], 1); }},
      {"tril k=-1", {in({4, 3})}, [](G v) { return v[0].tril(-1); }, [](T v) { return v[0].tril(-1); }},
      {"roll dims", {in({3, 4})}, [](G v) { return v[0].roll({1, -5}, {0, 1}); },
       [](T v) { return v[0].roll({1, -5}, {0, 1}); }},
      {"roll flat", {in({3, 4})}, [](G v) { return gb::roll(v[0], {5}); }, [](T v) { return torch::roll(v[0], {5}); }},
      {"erf", {in({7})}, [](G v) { return v[0].erf(); }, [](T v) { return v[0].erf(); }},
      {"prod dim", {in({3, 4})}, [](G v) { return v[0].prod(1); }, [](T v) { return v[0].prod(1); }},
      {"prod dim keepdim", {in({3, 4, 2})}, [](G v) { return v[0].prod(0, true); }, [](T v) { return v[0].prod(0, true); }},
      {"prod dim with zeros", {in({3, 4})},
       [](G v) {
         gb::Tensor z = gb::tensor({{1.0, 0.0, 1.0, 1.0}, {0.0, 0.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}}).to(v[0].scalar_type());
         return (v[0] * z).prod(1);
       },
       [](T v) {
         torch::Tensor z = torch::tensor({{1.0, 0.0, 1.0, 1.0}, {0.0, 0.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}}).to(v[0].scalar_type());
         return (v[0] * z).prod(1);
       }},
      {"max of two", {in({3, 4}), in({4})}, [](G v) { return gb::max(v[0], v[1]); },
       [](T v) { return torch::max(v[0], v[1]); }},
      {"min of two", {in({3, 4}), in({3, 4})}, [](G v) { return gb::min(v[0], v[1]); },
       [](T v) { return torch::min(v[0], v[1]); }},
      {"F::normalize", {in({3, 4})},
       [](G v) { return F::normalize(v[0], F::NormalizeFuncOptions().p(2).dim(1)); },
       [](T v) { return TF::normalize(v[0], TF::NormalizeFuncOptions().p(2).dim(1)); }},
      {"F::normalize p=1 dim 0", {in({3, 4})},
       [](G v) { return F::normalize(v[0], F::NormalizeFuncOptions().p(1).dim(0)); },
       [](T v) { return TF::normalize(v[0], TF::NormalizeFuncOptions().p(1).dim(0)); }},
      {"LogSoftmax module", {in({3, 4})}, [](G v) { return gb::nn::LogSoftmax(1)(v[0]); },
       [](T v) { return torch::nn::LogSoftmax(1)(v[0]); }},
      {"interpolate nearest size", {in({2, 3, 4, 5})},
       [](G v) { return F::interpolate(v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{7, 3})); },
       [](T v) { return TF::interpolate(v[0], TF::InterpolateFuncOptions().size(std::vector<int64_t>{7, 3})); }},
      {"interpolate nearest x2", {in({1, 2, 3, 3})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}));
       },
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}));
       }},
      {"interpolate bilinear x1.5", {in({2, 2, 4, 3})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions()
                                         .scale_factor(std::vector<double>{1.5, 2.5})
                                         .mode(gb::kBilinear)
                                         .align_corners(false));
       },
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions()
                                          .scale_factor(std::vector<double>{1.5, 2.5})
                                          .mode(torch::kBilinear)
                                          .align_corners(false));
       }},
      {"interpolate bilinear align_corners down", {in({1, 3, 6, 5})},
       [](G v) {
         return F::interpolate(
             v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 7}).mode(gb::kBilinear).align_corners(true));
       },
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions()
                                          .size(std::vector<int64_t>{4, 7})
                                          .mode(torch::kBilinear)
                                          .align_corners(true));
       }},
      {"interpolate linear 3-D", {in({2, 3, 5})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(gb::kLinear));
       },
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(torch::kLinear));
       }},
      {"interpolate trilinear", {in({1, 1, 2, 3, 2})},
       [](G v) {
         return F::interpolate(v[0], F::InterpolateFuncOptions()
                                         .scale_factor(std::vector<double>{2, 1.5, 2})
                                         .mode(gb::kTrilinear)
                                         .align_corners(false));
       },
       [](T v) {
         return TF::interpolate(v[0], TF::InterpolateFuncOptions()
                                          .scale_factor(std::vector<double>{2, 1.5, 2})
                                          .mode(torch::kTrilinear)
                                          .align_corners(false));
       }},
      {"Upsample module", {in({1, 2, 3, 4})},
       [](G v) {
         return gb::nn::Upsample(
             gb::nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(gb::kBilinear).align_corners(false))(
             v[0]);
       },
       [](T v) {
         return torch::nn::Upsample(torch::nn::UpsampleOptions()
                                        .scale_factor(std::vector<double>{2, 2})
                                        .mode(torch::kBilinear)
                                        .align_corners(false))(v[0]);
       }},
  };
}

TEST_CASE("pointwise ops match libtorch") { run_all(pointwise_cases()); }
TEST_CASE("everyday extras (triu, tril, roll, erf, prod(dim), min/max of two, normalize, interpolate) match libtorch") {
  run_all(everyday_cases());
}
TEST_CASE("tensor indices (masks, index tensors) and index_put_ match libtorch") { run_all(advanced_index_cases()); }
TEST_CASE("reductions and softmax match libtorch") { run_all(reduction_cases()); }
TEST_CASE("linear algebra, joins and index ops match libtorch") { run_all(linalg_shape_cases()); }
TEST_CASE("nn ops and losses match libtorch") { run_all(nn_cases()); }
TEST_CASE("sort, topk, cumsum, flip, repeat, masked_select and padding match libtorch") {
  run_all(sort_shape_copy_cases());
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
