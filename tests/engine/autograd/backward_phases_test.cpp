// tests/engine/autograd/backward_phases_test.cpp — the backward driver's phases called one by one
// (engine/autograd/backward_phases.h): discovery's dependency counts and inputs= marking, the ready order, one node
// run and its gradients delivered, the captures, on small graphs with known values.
#include <memory>
#include <string>
#include <vector>

#include "autograd/backward_phases.h"
#include "core/observer.h"
#include "support/check.h"

using gb::autograd::BackwardGraph;
using gb::autograd::BackwardOptions;
using gb::autograd::Capture;
using gb::autograd::Execution;
using gb::autograd::Node;
using gb::autograd::ReadyNode;
using gbtest::check_values;

namespace {

// x → a = x*2, b = x*3 → c = a + b → loss = c.sum(): a diamond over one leaf.
struct Diamond {
  gb::Tensor x = gb::tensor({1.0, 2.0, 3.0}, gb::requires_grad());
  gb::Tensor a = x * 2;
  gb::Tensor b = x * 3;
  gb::Tensor c = a + b;
  gb::Tensor loss = c.sum();
  Node* sum() const { return loss.grad_fn().get(); }
  Node* add() const { return c.grad_fn().get(); }
  Node* mul_a() const { return a.grad_fn().get(); }
  Node* mul_b() const { return b.grad_fn().get(); }
  Node* acc() const { return gb::autograd::gradient_edge(x).function.get(); }
  gb::autograd::edge_list roots() const { return {gb::autograd::gradient_edge(loss)}; }
};

int deps_of(const BackwardGraph& g, Node* n) {
  auto it = g.deps.find(n);
  return it == g.deps.end() ? 0 : it->second;
}

const std::vector<std::unique_ptr<gb::detail::BackwardObserver>> kNoWatches;

}  // namespace

TEST_CASE("discover counts the edges pointing at each node, roots first, without running anything") {
  Diamond d;
  const BackwardGraph g = gb::autograd::discover(d.roots(), {});
  REQUIRE(g.order.size() == 5);
  CHECK(g.order[0] == d.sum());
  CHECK(deps_of(g, d.sum()) == 0);
  CHECK(deps_of(g, d.add()) == 1);
  CHECK(deps_of(g, d.mul_a()) == 1);
  CHECK(deps_of(g, d.mul_b()) == 1);
  CHECK(deps_of(g, d.acc()) == 2);  // x is reached through a and through b
  CHECK_FALSE(g.filtered);
  CHECK(g.needed.empty());
  CHECK_FALSE(d.x.grad().defined());
}

TEST_CASE("discover with inputs= marks only the nodes on a path to a captured one") {
  Diamond d;
  const std::vector<Capture> captures{{d.mul_a(), 0, 0}};  // grad(loss, a)
  const BackwardGraph g = gb::autograd::discover(d.roots(), captures);
  CHECK(g.filtered);
  CHECK(g.order.size() == 5);  // discovery still walks the whole graph
  CHECK(g.needed.size() == 3);
  CHECK(g.needed.count(d.sum()) == 1);
  CHECK(g.needed.count(d.add()) == 1);
  CHECK(g.needed.count(d.mul_a()) == 1);
  CHECK(g.needed.count(d.mul_b()) == 0);
  CHECK(g.needed.count(d.acc()) == 0);
  REQUIRE(g.captures_at.count(d.mul_a()) == 1);
  CHECK(g.captures_at.at(d.mul_a()).front() == &captures[0]);
}

TEST_CASE("execution: seeded roots, then the newest ready node first, each delivering into its receivers") {
  Diamond d;
  BackwardGraph g = gb::autograd::discover(d.roots(), {});
  const BackwardOptions options{};
  Execution ex(g, options, kNoWatches);
  ex.seed(d.roots(), {gb::ones({})});
  std::vector<Node*> ran;
  while (true) {
    ReadyNode ready;
    if (!ex.next(ready)) break;
    ran.push_back(ready.node.get());
    REQUIRE(ready.grads.size() == ready.node->num_inputs());
    if (ready.node.get() == d.acc()) check_values(ready.grads[0], {5, 5, 5});  // 2 + 3, summed in its buffer
    gb::variable_list out;
    REQUIRE(ex.run_node(ready, out));
    if (ready.node.get() == d.sum()) {
      REQUIRE(out.size() == 1);
      check_values(out[0], {1, 1, 1});
    }
    ex.deliver(*ready.node, std::move(out));
  }
  // mul_b was recorded after mul_a: newest first once both are ready; the leaf waits for both.
  const std::vector<Node*> expected{d.sum(), d.add(), d.mul_b(), d.mul_a(), d.acc()};
  CHECK(ran == expected);
  CHECK(ex.nodes_executed() == 5);
  CHECK(ex.finish().empty());
  ex.release();
  check_values(d.x.grad(), {5, 5, 5});
  CHECK(deps_of(g, d.acc()) == 0);  // every count consumed
}

TEST_CASE("execution with captures: unneeded nodes are skipped, the captured gradient is returned") {
  Diamond d;
  const std::vector<Capture> captures{{d.mul_a(), 0, 0}};
  BackwardGraph g = gb::autograd::discover(d.roots(), captures);
  BackwardOptions options;
  options.n_captures = 1;
  Execution ex(g, options, kNoWatches);
  ex.seed(d.roots(), {gb::ones({})});
  std::vector<std::string> ran, skipped;
  while (true) {
    ReadyNode ready;
    if (!ex.next(ready)) break;
    gb::variable_list out;
    const bool runs = ex.run_node(ready, out);
    (runs ? ran : skipped).push_back(ready.node->name());
    if (runs) ex.deliver(*ready.node, std::move(out));
  }
  // mul_a is needed (its input is captured) but none of its children is: it does not run its formula.
  CHECK(ran == std::vector<std::string>{"SumBackward0", "AddBackward0"});
  CHECK(skipped == std::vector<std::string>{"MulBackward1", "MulBackward1"});
  const gb::variable_list captured = ex.finish();
  REQUIRE(captured.size() == 1);
  check_values(captured[0], {1, 1, 1});
  CHECK_FALSE(d.x.grad().defined());  // grad() never touches .grad
}

TEST_CASE("run_node releases saved tensors unless keep_graph, and refuses too many gradients at delivery") {
  Diamond d;
  gb::Tensor y = d.x * d.x;  // MulBackward0 saves both operands
  gb::Tensor s = y.sum();
  BackwardGraph g = gb::autograd::discover({gb::autograd::gradient_edge(s)}, {});
  BackwardOptions options;
  options.keep_graph = true;
  Execution ex(g, options, kNoWatches);
  ex.seed({gb::autograd::gradient_edge(s)}, {gb::ones({})});
  ReadyNode sum, mul;
  REQUIRE(ex.next(sum));
  gb::variable_list out;
  REQUIRE(ex.run_node(sum, out));
  ex.deliver(*sum.node, std::move(out));
  REQUIRE(ex.next(mul));
  CHECK(mul.node->name() == "MulBackward0");
  const int64_t saved = mul.node->saved_bytes();
  CHECK(saved == 2 * 3 * 4);
  REQUIRE(ex.run_node(mul, out));
  CHECK(mul.node->saved_bytes() == saved);  // kept: retain_graph
  REQUIRE(out.size() == 2);
  check_values(out[0], {1, 2, 3});
  out.push_back(gb::ones({3}));  // one more gradient than the node has edges
  CHECK_THROWS_WITH_AS(ex.deliver(*mul.node, std::move(out)),
                       doctest::Contains("returned an incorrect number of gradients (expected 2, got 3)"), gb::Error);
}
