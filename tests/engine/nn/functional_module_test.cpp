// tests/engine/nn/functional_module_test.cpp — Functional: functions (with bound arguments) as modules in a
// Sequential, called with hooks, printed, without parameters.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"

TEST_CASE("Functional wraps a function, or one with the arguments after the input bound") {
  gb::nn::Functional relu(gb::relu);
  gb::Tensor x = gb::tensor({-1.0, 2.0});
  gbtest::check_values(relu(x), {0, 2});
  gb::nn::Functional softmax(gb::log_softmax, 1, gb::nullopt);
  gb::Tensor logits = gb::randn({3, 4}, gb::kDouble);
  CHECK(gb::allclose(softmax(logits), gb::log_softmax(logits, 1)));
  gb::nn::Functional pool(gb::max_pool2d, 2, gb::ExpandingArray<2>({2, 2}), 0, 1, false);
  CHECK(pool(gb::randn({1, 1, 4, 6})).sizes() == gb::IntArrayRef({1, 1, 2, 3}));
  gb::nn::Functional lambda([](gb::Tensor t) { return t * 3; });
  gbtest::check_values(lambda(gb::ones({2})), {3, 3});
  CHECK(relu->parameters().empty());
  std::ostringstream os;
  os << *relu;
  CHECK(os.str() == "Functional()");
  gb::nn::FunctionalImpl::Function empty;
  CHECK_THROWS_WITH(gb::nn::FunctionalImpl{empty}, doctest::Contains("the function is empty"));
}

TEST_CASE("a Sequential of modules and Functionals trains; each Functional call runs its hooks") {
  gb::manual_seed(2);
  gb::nn::Sequential net(gb::nn::Linear(3, 8), gb::nn::Functional(gb::relu), gb::nn::Linear(8, 1),
                         gb::nn::Functional(gb::reshape, std::vector<int64_t>{-1}));  // a bound value, not a view of a temporary
  CHECK(net->named_parameters().keys() == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  int calls = 0;
  net->at<gb::nn::FunctionalImpl>(1).register_forward_hook(
      [&](gb::nn::Module&, const gb::variable_list&, const gb::variable_list&) { ++calls; });
  gb::Tensor y = net->forward(gb::randn({5, 3}));
  CHECK(y.sizes() == gb::IntArrayRef({5}));
  CHECK(calls == 1);
  y.sum().backward();
  CHECK(net->named_parameters()["0.weight"].grad().defined());
}
