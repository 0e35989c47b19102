// tests/porting/pytorch2_idioms.cpp — what ports of libtorch 2.x programs stopped on (issue [PyTorch 2]: the
// tutorials' shared image helper's .to(..., memory_format), Tensor::data(), new_zeros, torch::autograd::GradMode,
// at::cross_entropy_loss, ModuleList's as<Linear>(), TensorOptions().device(kCUDA, 0)) and the ops ports reached for
// (einsum, cumprod, elu, hardtanh, lstm_cell, gru_cell, conv1d, max_pool1d, cosine_similarity, functional
// index_put), each as libtorch code writes it and checked against numbers worked out by hand. Never compiled as it
// stands: tests/CMakeLists.txt renames a copy with tools/port.sh and builds it against glassbox; CTest runs it.
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <tuple>
#include <vector>

namespace {

bool near(const torch::Tensor& a, const torch::Tensor& b, double tol = 1e-5) {
  return a.sizes() == b.sizes() && (a - b).abs().max().item<double>() <= tol;
}

// The tutorials' image helper: a tensor to the model's device and dtype, contiguous, in one call.
torch::Tensor to_model(const torch::Tensor& image, torch::Device device) {
  return image.to(device, torch::kFloat32, /*non_blocking=*/false, /*copy=*/false, torch::MemoryFormat::Contiguous);
}

void tensor_api_idioms() {
  torch::Tensor bytes = torch::arange(6, torch::kUInt8).view({2, 3}).t();  // not contiguous
  torch::Tensor f = to_model(bytes, torch::kCPU);
  TORCH_CHECK(f.is_contiguous() && f.scalar_type() == torch::kFloat32, "to(..., MemoryFormat::Contiguous)");
  TORCH_CHECK(near(f, bytes.to(torch::kFloat32)), "to(..., memory_format) keeps the values");
  TORCH_CHECK(bytes.contiguous(torch::MemoryFormat::Contiguous).is_contiguous(), "contiguous(MemoryFormat)");

  torch::Tensor w = torch::ones({2, 2}, torch::requires_grad());
  torch::Tensor d = w.data();  // no history: changing it is not recorded
  TORCH_CHECK(!d.requires_grad() && d.data_ptr() == w.data_ptr(), "data() shares storage without history");

  torch::Tensor z = w.new_zeros({3});
  TORCH_CHECK(z.sizes() == std::vector<int64_t>{3} && z.scalar_type() == torch::kFloat32 && z.sum().item<double>() == 0,
              "new_zeros");
  TORCH_CHECK(w.new_ones({2}, torch::kFloat64).scalar_type() == torch::kFloat64, "new_ones with a dtype");
  TORCH_CHECK(w.new_full({2}, 7).sum().item<double>() == 14, "new_full");

  torch::Tensor x = torch::zeros({4});
  torch::Tensor y = x.index_put({torch::tensor({1, 3})}, torch::tensor({5.f, 6.f}));
  TORCH_CHECK(x.sum().item<double>() == 0 && y[1].item<double>() == 5 && y[3].item<double>() == 6,
              "index_put returns a copy");

  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, 0);
  TORCH_CHECK(opts.device().is_cuda() && opts.device().index() == 0, "TensorOptions().device(kCUDA, 0)");
}

void autograd_idioms() {
  TORCH_CHECK(torch::autograd::GradMode::is_enabled(), "grad mode is on by default");
  {
    torch::NoGradGuard no_grad;
    TORCH_CHECK(!torch::autograd::GradMode::is_enabled(), "NoGradGuard turns torch::autograd::GradMode off");
  }
  torch::autograd::GradMode::set_enabled(false);
  torch::Tensor a = torch::ones({2}, torch::requires_grad()) * 2;
  torch::autograd::GradMode::set_enabled(true);
  TORCH_CHECK(!a.requires_grad(), "GradMode::set_enabled(false) records nothing");
}

void module_idioms() {
  torch::nn::ModuleList list(torch::nn::Linear(3, 2), torch::nn::ReLU());
  auto* linear = list[0]->as<torch::nn::Linear>();
  TORCH_CHECK(linear != nullptr && (linear->weight.sizes() == std::vector<int64_t>{2, 3}), "as<Linear>()");
  TORCH_CHECK(list[1]->as<torch::nn::Linear>() == nullptr, "as<Linear>() of a ReLU is null");
  TORCH_CHECK(list[0]->as<torch::nn::LinearImpl>() == linear, "as<LinearImpl>()");
}

void op_idioms() {
  torch::Tensor x = torch::tensor({-2.0, -0.5, 0.0, 0.5, 2.0});
  TORCH_CHECK(near(torch::elu(x), torch::tensor({std::expm1(-2.0), std::expm1(-0.5), 0.0, 0.5, 2.0})), "elu");
  TORCH_CHECK(near(torch::hardtanh(x, -1, 1), torch::tensor({-1.0, -0.5, 0.0, 0.5, 1.0})), "hardtanh");

  torch::Tensor logits = torch::tensor({{2.0, 0.0}, {0.0, 2.0}});
  torch::Tensor target = torch::tensor({0, 0});
  const double expected = (std::log1p(std::exp(-2.0)) + std::log1p(std::exp(2.0))) / 2;
  TORCH_CHECK(std::abs(at::cross_entropy_loss(logits, target).item<double>() - expected) < 1e-6,
              "at::cross_entropy_loss");
  TORCH_CHECK(std::abs(at::cross_entropy_loss(logits, target, {}, at::Reduction::Sum).item<double>() - 2 * expected) <
                  1e-6,
              "at::cross_entropy_loss with at::Reduction::Sum");

  // conv1d: a [1, 1, 1] kernel sums three neighbours; max_pool1d halves the length
  torch::Tensor seq = torch::arange(6, torch::kFloat32).view({1, 1, 6});
  TORCH_CHECK(near(torch::conv1d(seq, torch::ones({1, 1, 3})), torch::tensor({{{3.f, 6.f, 9.f, 12.f}}})), "conv1d");
  TORCH_CHECK(near(torch::max_pool1d(seq, 2), torch::tensor({{{1.f, 3.f, 5.f}}})), "max_pool1d");
  TORCH_CHECK(near(torch::cosine_similarity(torch::tensor({{1.f, 0.f}}), torch::tensor({{1.f, 1.f}}), 1),
                   torch::tensor({float(1 / std::sqrt(2.0))})),
              "cosine_similarity");

  torch::Tensor m1 = torch::arange(6, torch::kFloat32).view({2, 3}), m2 = torch::ones({3, 2});
  TORCH_CHECK(near(torch::einsum("ij,jk->ik", {m1, m2}), torch::mm(m1, m2)), "einsum");
  TORCH_CHECK(near(torch::einsum("ii", {torch::eye(3)}), torch::tensor(3.f)), "einsum's trace");
  TORCH_CHECK(near(torch::tensor({1.f, 2.f, 3.f}).cumprod(0), torch::tensor({1.f, 2.f, 6.f})), "cumprod");

  // the functional forms with their options, and the modules
  namespace F = torch::nn::functional;
  TORCH_CHECK(near(F::elu(x, F::ELUFuncOptions().alpha(1.0)), torch::elu(x)), "F::elu");
  TORCH_CHECK(near(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-1).max_val(1)), torch::hardtanh(x, -1, 1)),
              "F::hardtanh");
  TORCH_CHECK(near(F::conv1d(seq, torch::ones({1, 1, 3}), F::Conv1dFuncOptions().padding(1)),
                   torch::tensor({{{1.f, 3.f, 6.f, 9.f, 12.f, 9.f}}})),
              "F::conv1d with padding");
  TORCH_CHECK(near(F::max_pool1d(seq, F::MaxPool1dFuncOptions(3).stride(3)), torch::tensor({{{2.f, 5.f}}})),
              "F::max_pool1d");
  torch::nn::ELU elu_module(torch::nn::ELUOptions().alpha(1.0));
  torch::nn::Hardtanh hardtanh_module;
  torch::nn::CosineSimilarity cos_module(torch::nn::CosineSimilarityOptions().dim(1));
  TORCH_CHECK(near(elu_module(x), torch::elu(x)) && near(hardtanh_module(x), torch::hardtanh(x)), "ELU, Hardtanh");
  TORCH_CHECK(near(cos_module(torch::tensor({{1.f, 0.f}}), torch::tensor({{0.f, 1.f}})), torch::tensor({0.f})),
              "CosineSimilarity");

  // one LSTM step with zero weights: every gate is sigmoid(0) = 0.5 and g = tanh(0) = 0, so c' = 0.5 c, h' =
  // 0.5 tanh(c'); one GRU step with zero weights: n = 0, z = 0.5, h' = 0.5 h
  torch::Tensor h = torch::full({1, 2}, 0.4), c = torch::full({1, 2}, 0.8);
  auto [h1, c1] = torch::lstm_cell(torch::ones({1, 3}), {h, c}, torch::zeros({8, 3}), torch::zeros({8, 2}));
  TORCH_CHECK(near(c1, torch::full({1, 2}, 0.4)) && near(h1, torch::full({1, 2}, 0.5 * std::tanh(0.4))), "lstm_cell");
  torch::Tensor g1 = torch::gru_cell(torch::ones({1, 3}), h, torch::zeros({6, 3}), torch::zeros({6, 2}));
  TORCH_CHECK(near(g1, torch::full({1, 2}, 0.2)), "gru_cell");
}

}  // namespace

int main() {
  tensor_api_idioms();
  autograd_idioms();
  module_idioms();
  op_idioms();
  std::cout << "all PyTorch 2 idioms compiled and ran" << std::endl;
  return 0;
}
