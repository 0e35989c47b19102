// tests/porting/regression.cpp — a libtorch program as libtorch's documentation writes them (torch::, TORCH_MODULE,
// TORCH_CHECK, <torch/torch.h>). It is never compiled as it stands: tests/CMakeLists.txt runs tools/port.sh on this
// folder and builds the renamed copy against glassbox; CTest runs it. It fits y = 0.5 + 3x - 2x^2 + x^3 on [-1, 1]
// with one Linear layer over (x, x^2, x^3) and SGD, and fails (TORCH_CHECK) unless it learned the coefficients.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace {

torch::Tensor features(const torch::Tensor& x) {
  const torch::Tensor c = x.unsqueeze(1);
  return torch::cat({c, c.pow(2), c.pow(3)}, 1);
}

struct PolynomialImpl : torch::nn::Module {
  PolynomialImpl() : fc(register_module("fc", torch::nn::Linear(3, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Polynomial);

}  // namespace

int main() {
  torch::manual_seed(7);
  const torch::Tensor w_true = torch::tensor({3.0f, -2.0f, 1.0f}).unsqueeze(1);
  const float b_true = 0.5f;

  Polynomial model;
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.2).momentum(0.9));
  float loss_value = 0;
  int64_t steps = 0;
  for (steps = 1; steps <= 4000; ++steps) {
    const torch::Tensor f = features(torch::rand({64}) * 2 - 1);
    const torch::Tensor y = f.mm(w_true) + b_true;
    optimizer.zero_grad();
    torch::Tensor loss = torch::nn::functional::mse_loss(model(f), y);
    loss.backward();
    optimizer.step();
    loss_value = loss.item<float>();
    if (loss_value < 1e-5f) break;
  }
  std::cout << "Loss: " << loss_value << " after " << steps << " batches\n";
  std::cout << "Learned: y = " << model->fc->bias.item<float>() << " + " << model->fc->weight[0][0].item<float>()
            << " x + " << model->fc->weight[0][1].item<float>() << " x^2 + " << model->fc->weight[0][2].item<float>()
            << " x^3\n";
  TORCH_CHECK(loss_value < 1e-5f, "the regression did not converge: loss ", loss_value);
  const torch::Tensor learned = torch::cat({model->fc->bias, model->fc->weight.squeeze(0)});
  const torch::Tensor expected = torch::tensor({0.5f, 3.0f, -2.0f, 1.0f});
  TORCH_CHECK(torch::allclose(learned, expected, 0, 0.02), "wrong coefficients: ", learned);
  return 0;
}
