// tests/engine/autograd/node_test.cpp — Nodes, Edges, SavedVariables and AccumulateGrad on their own.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("gradient edges point at grad_fn, the leaf's AccumulateGrad, or nowhere") {
  auto leaf = gb::ones({2}, gb::requires_grad());
  auto plain = gb::ones({2});
  auto y = leaf * 2;
  auto e1 = gb::autograd::gradient_edge(y);
  CHECK(e1.function == y.grad_fn());
  auto e2 = gb::autograd::gradient_edge(leaf);
  CHECK(e2.function->is_accumulate_grad());
  CHECK(e2.function == gb::autograd::grad_accumulator(leaf));  // one accumulator per leaf, shared
  CHECK_FALSE(gb::autograd::gradient_edge(plain).is_valid());
  CHECK(y.grad_fn()->num_outputs() == 1);
  CHECK(y.grad_fn()->should_compute_output(0));
  auto z = leaf * plain;
  CHECK(z.grad_fn()->should_compute_output(0));
  CHECK_FALSE(z.grad_fn()->should_compute_output(1));
  CHECK(gb::autograd::next_sequence_nr() > y.grad_fn()->sequence_nr());
}

TEST_CASE("SavedVariable detects in-place changes and release") {
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  auto y = x * 3;
  gb::autograd::SavedVariable saved(y, /*is_output=*/false);
  CHECK(gb::equal(saved.unpack(), y));
  {
    gb::NoGradGuard ng;
    y.add_(1.0);
  }
  CHECK_THROWS_WITH_AS(saved.unpack(), doctest::Contains("is at version 1; expected version 0 instead"), gb::Error);
  gb::autograd::SavedVariable other(y, false);
  other.reset_data();
  CHECK_THROWS_WITH_AS(other.unpack(), doctest::Contains("Trying to backward through the graph a second time"), gb::Error);
  gb::autograd::SavedVariable none(gb::Tensor(), false);
  CHECK_FALSE(none.unpack().defined());
}

TEST_CASE("a saved output does not keep its own node alive, and comes back attached to it") {
  auto x = gb::tensor({1.0, 2.0}, gbtest::f64_grad());
  std::weak_ptr<gb::autograd::Node> weak;
  {
    auto y = x.exp();  // saves its output
    weak = y.grad_fn();
  }
  CHECK(weak.expired());
  auto g = gb::autograd::grad({x.exp().sum()}, {x}, {}, true, /*create_graph=*/true);
  auto gg = gb::autograd::grad({g[0].sum()}, {x});
  gbtest::check_close(gg[0], x.detach().exp());
}

TEST_CASE("AccumulateGrad never lets .grad alias another tensor's gradient") {
  auto a = gb::ones({3}, gb::requires_grad());
  auto b = gb::ones({3}, gb::requires_grad());
  (a + b).sum().backward();  // AddBackward0 passes one gradient tensor to both leaves
  CHECK(a.grad().storage() != b.grad().storage());
  {
    gb::NoGradGuard ng;
    a.mutable_grad().mul_(5);
  }
  check_values(b.grad(), {1, 1, 1});
}

TEST_CASE("pre-hooks on a node can be removed") {
  auto x = gb::ones({2}, gb::requires_grad());
  auto y = x * 2;
  unsigned h = y.register_hook([](const gb::Tensor& g) { return g * 100; });
  y.remove_hook(h);
  y.sum().backward();
  check_values(x.grad(), {2, 2});
}
