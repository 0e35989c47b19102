// tests/engine/autograd/gradcheck_test.cpp — gradcheck accepts right gradients and catches wrong ones.
#include "support/check.h"

namespace {
struct BadSquare : gb::autograd::Function<BadSquare> {  // x^2 with a wrong backward (x instead of 2x)
  static gb::Tensor forward(gb::autograd::AutogradContext* ctx, gb::Tensor x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static gb::variable_list backward(gb::autograd::AutogradContext* ctx, gb::variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};
}  // namespace

TEST_CASE("gradcheck passes a correct gradient and fails a wrong one with both Jacobians") {
  auto x = gb::tensor({1.0, -2.0, 0.5}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0] * v[0]; }, {x}));
  gb::autograd::GradcheckOptions quiet;
  quiet.raise_exception = false;
  CHECK_FALSE(gb::autograd::gradcheck([](const gb::variable_list& v) { return gb::variable_list{BadSquare::apply(v[0])}; },
                                      {x}, quiet));
  CHECK_THROWS_WITH_AS(
      gb::autograd::gradcheck([](const gb::variable_list& v) { return gb::variable_list{BadSquare::apply(v[0])}; }, {x}),
      doctest::Contains("Jacobian mismatch for output 0 with respect to input 0"), gb::Error);
}

TEST_CASE("gradcheck insists on float64 and gradgradcheck checks second derivatives") {
  auto f = gb::ones({2}, gb::requires_grad());
  CHECK_THROWS_WITH_AS(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0] * 2; }, {f}),
                       doctest::Contains("need float64 inputs"), gb::Error);
  auto x = gb::tensor({1.0, 2.0}, gbtest::f64_grad());
  auto y = gb::tensor({0.5, -1.0}, gbtest::f64_grad());
  CHECK(gb::autograd::gradgradcheck([](const gb::variable_list& v) { return gb::variable_list{v[0] * v[0] * v[1]}; },
                                    {x, y}));
}
