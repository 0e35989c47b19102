// tests/engine/nn/activation_test.cpp — the activation modules: values by hand, options, repr, module span scope.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/repr.h"
#include "support/module_scope.h"

using gbtest::repr;

namespace {
gb::Tensor xs() { return gb::tensor({-2.0, -0.5, 0.0, 1.0, 3.0}, gb::kFloat64); }
}  // namespace

TEST_CASE("ReLU, LeakyReLU, Tanh, Sigmoid, SiLU, GELU values") {
  gbtest::expect(gb::nn::ReLU()(xs()), {0, 0, 0, 1, 3});
  gbtest::expect(gb::nn::LeakyReLU(gb::nn::LeakyReLUOptions().negative_slope(0.2))(xs()), {-0.4, -0.1, 0, 1, 3});
  std::vector<double> tanh, sig, silu, gelu, gelu_tanh;
  for (double x : {-2.0, -0.5, 0.0, 1.0, 3.0}) {
    tanh.push_back(std::tanh(x));
    sig.push_back(1 / (1 + std::exp(-x)));
    silu.push_back(x / (1 + std::exp(-x)));
    gelu.push_back(0.5 * x * (1 + std::erf(x / std::sqrt(2.0))));
    gelu_tanh.push_back(0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))));
  }
  gbtest::expect(gb::nn::Tanh()(xs()), tanh);
  gbtest::expect(gb::nn::Sigmoid()(xs()), sig);
  gbtest::expect(gb::nn::SiLU()(xs()), silu);
  gbtest::expect(gb::nn::GELU()(xs()), gelu);
  gbtest::expect(gb::nn::GELU(gb::nn::GELUOptions().approximate("tanh"))(xs()), gelu_tanh);
  CHECK_THROWS_WITH_AS(gb::nn::GELU(gb::nn::GELUOptions().approximate("fast")),
                       doctest::Contains("approximate argument must be either none or tanh"), gb::Error);
}

TEST_CASE("ReLU inplace writes its input; Softmax along dim") {
  gb::Tensor x = xs();
  gb::nn::ReLU relu(gb::nn::ReLUOptions(true));
  gb::Tensor y = relu(x);
  CHECK(y.data_ptr() == x.data_ptr());
  gbtest::expect(x, {0, 0, 0, 1, 3});

  gb::nn::Softmax sm(1);
  gb::Tensor p = sm(gb::tensor({{0.0, std::log(3.0)}, {1.0, 1.0}}, gb::kFloat64));
  gbtest::expect(p, {0.25, 0.75, 0.5, 0.5});
  gb::nn::Softmax sm0(0);
  gbtest::expect(sm0(gb::tensor({{0.0, 0.0}, {std::log(3.0), 0.0}}, gb::kFloat64)), {0.25, 0.5, 0.75, 0.5});
}

TEST_CASE("activation reprs as libtorch's") {
  CHECK(repr(*gb::nn::ReLU()) == "ReLU()");
  CHECK(repr(*gb::nn::ReLU(gb::nn::ReLUOptions(true))) == "ReLU(inplace=true)");
  CHECK(repr(*gb::nn::GELU()) == "GELU()");
  CHECK(repr(*gb::nn::GELU(gb::nn::GELUOptions().approximate("tanh"))) == "GELU(approximate='tanh')");
  CHECK(repr(*gb::nn::SiLU()) == "SiLU()");
  CHECK(repr(*gb::nn::Tanh()) == "Tanh()");
  CHECK(repr(*gb::nn::Sigmoid()) == "Sigmoid()");
  CHECK(repr(*gb::nn::LeakyReLU()) == "LeakyReLU(negative_slope=0.01)");
  CHECK(repr(*gb::nn::Softmax(1)) == "Softmax(dim=1)");
  CHECK(repr(*gb::nn::LogSoftmax(1)) == "LogSoftmax(dim=1)");
}

TEST_CASE("each activation's raw forward attributes its allocations to the module") {
  gb::Tensor x = xs();
  auto seen = [&](auto holder) { return gbtest::allocation_modules([&] { holder->forward(x); }); };
  CHECK(seen(gb::nn::ReLU()) == std::set<std::string>{"ReLU"});
  CHECK(seen(gb::nn::GELU()) == std::set<std::string>{"GELU"});
  CHECK(seen(gb::nn::SiLU()) == std::set<std::string>{"SiLU"});
  CHECK(seen(gb::nn::Tanh()) == std::set<std::string>{"Tanh"});
  CHECK(seen(gb::nn::Sigmoid()) == std::set<std::string>{"Sigmoid"});
  CHECK(seen(gb::nn::LeakyReLU()) == std::set<std::string>{"LeakyReLU"});
  CHECK(seen(gb::nn::Softmax(0)) == std::set<std::string>{"Softmax"});
}

TEST_CASE("ELU and Hardtanh: values by hand, their functional forms, options, repr, refused inplace") {
  gb::Tensor x = gb::tensor({-2.0, -0.5, 0.0, 0.5, 2.0});
  gbtest::check_values(gb::nn::ELU()(x), {std::expm1(-2.0), std::expm1(-0.5), 0.0, 0.5, 2.0});
  gbtest::check_values(gb::nn::ELU(gb::nn::ELUOptions().alpha(0.5))(x),
                       {0.5 * std::expm1(-2.0), 0.5 * std::expm1(-0.5), 0.0, 0.5, 2.0});
  namespace F = gb::nn::functional;
  gbtest::check_values(F::elu(x, F::ELUFuncOptions().alpha(0.5)),
                       {0.5 * std::expm1(-2.0), 0.5 * std::expm1(-0.5), 0.0, 0.5, 2.0});
  gbtest::check_values(gb::nn::Hardtanh()(x), {-1.0, -0.5, 0.0, 0.5, 1.0});
  gbtest::check_values(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.25).max_val(3)),
                       {-0.25, -0.25, 0.0, 0.5, 2.0});
  // hardtanh's gradient: 1 strictly inside the bounds, 0 at and beyond them
  gb::Tensor v = gb::tensor({-2.0, -1.0, 0.3, 1.0, 2.0}).requires_grad_();
  gb::hardtanh(v).sum().backward();
  gbtest::check_values(v.grad(), {0, 0, 1, 0, 0});
  CHECK(repr(*gb::nn::ELU(gb::nn::ELUOptions().alpha(0.5))) == "ELU(alpha=0.5)");
  CHECK(repr(*gb::nn::Hardtanh()) == "Hardtanh(min_val=-1, max_val=1)");
  CHECK_THROWS_WITH(gb::nn::ELU(gb::nn::ELUOptions().inplace(true)), doctest::Contains("inplace=true is not supported"));
  CHECK_THROWS_WITH(gb::nn::Hardtanh(gb::nn::HardtanhOptions().min_val(1).max_val(0)),
                    doctest::Contains("max_val (0) must be greater than min_val (1)"));
  CHECK_THROWS_WITH(F::elu(x, F::ELUFuncOptions().inplace(true)), doctest::Contains("inplace=true is not supported"));
}
