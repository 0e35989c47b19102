// tests/engine/autograd/engine_test.cpp — the backward driver's semantics, with PyTorch's wording for every error.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("grad_fn names, next_functions and sequence numbers") {
  auto x = gb::ones({2, 2}, gb::requires_grad());
  auto y = x * 2;
  auto z = (y + x).sum();
  REQUIRE(z.grad_fn());
  CHECK(z.grad_fn()->name() == "SumBackward0");
  auto next = z.grad_fn()->next_functions();
  REQUIRE(next.size() == 1);
  CHECK(next[0].first->name() == "AddBackward0");
  auto add_next = next[0].first->next_functions();
  CHECK(add_next[0].first->name() == "MulBackward1");
  CHECK(add_next[1].first->name() == "torch::autograd::AccumulateGrad");
  CHECK(y.grad_fn()->sequence_nr() < z.grad_fn()->sequence_nr());
  CHECK(x.is_leaf());
  CHECK_FALSE(y.is_leaf());
  CHECK(x.grad_fn() == nullptr);
}

TEST_CASE("a tensor used twice sums its gradients; leaves accumulate across backwards") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gb::requires_grad());
  auto y = x * x + x * 3;  // dy/dx = 2x + 3
  y.sum().backward();
  check_values(x.grad(), {5, 7, 9});
  (x * 2).sum().backward();  // grad += 2, never overwritten
  check_values(x.grad(), {7, 9, 11});
}

TEST_CASE("backward twice without retain_graph fails with PyTorch's message; retain_graph allows it") {
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  auto y = (x * x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  check_values(x.grad(), {4, 8});
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("Trying to backward through the graph a second time"), gb::Error);
}

TEST_CASE("backward on a non-scalar needs a gradient; on a tensor without grad it fails") {
  auto x = gb::ones({3}, gb::requires_grad());
  auto y = x * 2;
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("grad can be implicitly created only for scalar outputs"),
                       gb::Error);
  y.backward(gb::tensor({1.0, 0.5, 0.0}));
  check_values(x.grad(), {2, 1, 0});
  auto plain = gb::ones({2});
  CHECK_THROWS_WITH_AS(plain.sum().backward(),
                       doctest::Contains("element 0 of tensors does not require grad and does not have a grad_fn"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(y.backward(gb::ones({2})), doctest::Contains("Mismatch in shape"), gb::Error);
}

TEST_CASE("an in-place change to a saved tensor is caught with shape, node and both versions") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gb::requires_grad());
  auto a = x * 2;
  auto b = a * a;  // saves a (version 0)
  a.mul_(3);       // version 1
  CHECK(a._version() == 1);
  CHECK(a.grad_fn()->name() == "MulBackward1");
  try {
    b.sum().backward();
    FAIL("expected an error");
  } catch (const gb::Error& e) {
    std::string m = e.what();
    CHECK(m.find("one of the variables needed for gradient computation has been modified by an inplace operation: "
                 "[FloatTensor [3]], which is output 0 of MulBackward1, is at version 1; expected version 0 instead") !=
          std::string::npos);
  }
}

TEST_CASE("in-place on a leaf that requires grad is refused; under NoGradGuard it is an update") {
  auto w = gb::ones({2}, gb::requires_grad());
  CHECK_THROWS_WITH_AS(w.add_(1.0), doctest::Contains("a leaf Variable that requires grad is being used in an in-place operation"),
                       gb::Error);
  {
    gb::NoGradGuard ng;
    w.add_(1.0);
  }
  check_values(w, {2, 2});
  CHECK(w.is_leaf());
}

TEST_CASE("in-place ops on non-leaves record the right gradient") {
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  auto y = x * 1.0;
  y.mul_(x);   // y = x * x
  y.add_(x, 2);  // y = x^2 + 2x
  y.sum().backward();
  check_values(x.grad(), {4, 6});  // 2x + 2
}

TEST_CASE("NoGradGuard, EnableGradGuard, detach and requires_grad_") {
  auto x = gb::ones({2}, gb::requires_grad());
  {
    gb::NoGradGuard ng;
    auto y = x * 2;
    CHECK_FALSE(y.requires_grad());
    {
      gb::EnableGradGuard eg;
      CHECK((x * 2).requires_grad());
    }
  }
  auto y2 = x * 2;
  auto d = y2.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.storage() == y2.storage());  // same memory, no history
  auto y = x * 3;
  CHECK_THROWS_WITH_AS(y.requires_grad_(false), doctest::Contains("you can only change requires_grad flags of leaf variables"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::arange(3).requires_grad_(), doctest::Contains("only Tensors of floating point dtype"), gb::Error);
}

TEST_CASE("tensor hooks see and may replace gradients; post-accumulate hooks run after .grad is set") {
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  auto y = x * 3;
  std::vector<double> seen;
  y.register_hook([&](const gb::Tensor& g) { seen = gbtest::values(g); });
  unsigned h = x.register_hook([](const gb::Tensor& g) { return g * 10; });
  int post_calls = 0;
  x.register_post_accumulate_grad_hook([&](gb::Tensor& t) {
    ++post_calls;
    CHECK(t.grad().defined());
  });
  y.sum().backward();
  CHECK(seen == std::vector<double>{1, 1});
  check_values(x.grad(), {30, 30});
  CHECK(post_calls == 1);
  x.remove_hook(h);
  x.mutable_grad() = gb::Tensor();
  (x * 3).sum().backward();
  check_values(x.grad(), {3, 3});
}

TEST_CASE("retain_grad keeps the gradient of a non-leaf") {
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  auto y = x * 2;
  y.retain_grad();
  (y * y).sum().backward();
  check_values(y.grad(), {4, 8});
  check_values(x.grad(), {8, 16});
}

TEST_CASE("autograd::grad returns gradients without touching .grad, and does higher order") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gbtest::f64_grad());
  auto y = (x * x * x).sum();  // dy/dx = 3x^2, d2y/dx2 = 6x
  auto g = gb::autograd::grad({y}, {x}, {}, true, /*create_graph=*/true);
  check_values(g[0], {3, 12, 27});
  CHECK_FALSE(x.grad().defined());
  auto gg = gb::autograd::grad({g[0].sum()}, {x});
  check_values(gg[0], {6, 12, 18});
  auto unused = gb::ones({1}, gb::requires_grad());
  auto z = (x * 2).sum();
  CHECK_THROWS_WITH_AS(gb::autograd::grad({z}, {unused}), doctest::Contains("appears to not have been used in the graph"),
                       gb::Error);
  auto z2 = (x * 2).sum();
  auto r = gb::autograd::grad({z2}, {x, unused}, {}, std::nullopt, false, /*allow_unused=*/true);
  check_values(r[0], {2, 2, 2});
  CHECK_FALSE(r[1].defined());
}

TEST_CASE("grad of a non-leaf input and backward(inputs=...)") {
  auto x = gb::tensor({1.0, 2.0}, gbtest::f64_grad());
  auto w = gb::tensor({3.0, 4.0}, gbtest::f64_grad());
  auto h = x * w;
  auto out = (h * h).sum();
  auto g = gb::autograd::grad({out}, {h}, {}, true);
  check_values(g[0], {6, 16});  // 2h
  out.backward({}, std::nullopt, false, {x});
  check_values(x.grad(), {18, 64});  // 2 h w
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("saved tensors are released after backward") {
  auto x = gb::ones({1000}, gb::requires_grad());
  auto y = x * 2;
  auto z = y * y;  // saves y twice
  long before = y.use_count();
  z.sum().backward();
  CHECK(y.use_count() < before);  // the two saved references are gone
  auto stats = gb::autograd::last_backward_stats();
  CHECK(stats.nodes_executed >= 3);
  CHECK(stats.discovery_ns >= 0);
}

TEST_CASE("backward runs nodes in decreasing sequence order") {
  auto x = gb::ones({1}, gb::requires_grad());
  auto a = x * 2;
  auto b = a * 3;
  auto c = b * 4;
  std::vector<std::string> order;
  a.register_hook([&](const gb::Tensor&) { order.push_back("a"); });
  b.register_hook([&](const gb::Tensor&) { order.push_back("b"); });
  c.register_hook([&](const gb::Tensor&) { order.push_back("c"); });
  c.sum().backward();
  CHECK(order == std::vector<std::string>{"c", "b", "a"});
  check_values(x.grad(), {24});
}

namespace {
struct BlockGradient : gb::autograd::Function<BlockGradient> {  // identity forward, no gradient backward
  static gb::Tensor forward(gb::autograd::AutogradContext*, gb::Tensor y) { return y * 1; }
  static gb::variable_list backward(gb::autograd::AutogradContext*, gb::variable_list) { return {gb::Tensor()}; }
};
}  // namespace

TEST_CASE("a branch that no gradient reaches does not run, and does not block shared descendants") {
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  auto blocked = x * 3;  // its node gets no gradient at all
  auto out = BlockGradient::apply(blocked) + x * 2;
  out.sum().backward();
  check_values(x.grad(), {2, 2});
}
