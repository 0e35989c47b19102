// tests/engine/core/observer_test.cpp — the engine's observers (engine/core/observer.h): registration, the calls of
// one backward in order with what they carry, several observers in their order, the forward's calls while a trace
// records (ops have spans only then), and the monitor connected for a session's lifetime only.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include <glassbox/glassbox.h>

#include "core/observer.h"
#include "traces/temp_dir.h"

namespace {

using Log = std::vector<std::string>;

std::string first_value(const gb::Tensor& t) {
  return t.defined() ? std::to_string(static_cast<int>(t.reshape({-1})[0].item<double>())) : "-";
}

struct RecordingWatch final : gb::detail::BackwardObserver {
  Log& log;
  explicit RecordingWatch(Log& l) : log(l) {}
  void discovered(const std::vector<gb::autograd::Node*>& order) override {
    log.push_back("discovered " + std::to_string(order.size()));
  }
  void node_done(gb::autograd::Node* node, const gb::variable_list& sent) override {
    std::string line = "node_done " + node->name();
    for (const auto& g : sent) line += " " + first_value(g);
    log.push_back(line);
  }
  void finish() override { log.push_back("finish"); }
};

struct Recorder final : gb::detail::EngineObserver {
  Log log;
  std::string tag;
  bool watch = true;
  explicit Recorder(std::string t = "") : tag(std::move(t)) {}
  void on_node_recorded() noexcept override { log.push_back(tag + "node_recorded"); }
  void on_op_output(const char* op, gb::trace::Id span_id, const gb::Tensor* const*, int n_inputs,
                    const gb::Tensor& out) override {
    log.push_back(tag + "op_output " + op + " " + std::to_string(n_inputs) + (span_id ? " span" : " no-span") + " " +
                  first_value(out));
  }
  void on_backward_roots(const gb::variable_list& roots) override {
    log.push_back(tag + "backward_roots " + std::to_string(roots.size()) + " " + first_value(roots[0]));
  }
  std::unique_ptr<gb::detail::BackwardObserver> on_backward_start() override {
    log.push_back(tag + "backward_start");
    if (!watch) return nullptr;
    return std::make_unique<RecordingWatch>(log);
  }
  void on_accumulate(const gb::Tensor& param) override { log.push_back(tag + "accumulate " + first_value(param)); }
};

// One line per call: a failed comparison prints both logs.
std::string joined(const Log& log) {
  std::string s;
  for (const auto& line : log) s += line + "\n";
  return s;
}

// Registered for its lifetime.
struct Registered {
  gb::detail::EngineObserver* o;
  explicit Registered(gb::detail::EngineObserver* obs) : o(obs) { gb::detail::add_observer(o); }
  ~Registered() { gb::detail::remove_observer(o); }
};

}  // namespace

TEST_CASE("no observer: the list is null; add and remove publish it, twice is once") {
  CHECK(gb::detail::observers() == nullptr);
  Recorder r;
  gb::detail::add_observer(&r);
  gb::detail::add_observer(&r);
  REQUIRE(gb::detail::observers() != nullptr);
  CHECK(gb::detail::observers()->list.size() == 1);
  gb::detail::remove_observer(&r);
  gb::detail::remove_observer(&r);
  CHECK(gb::detail::observers() == nullptr);
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  (x * 2).sum().backward();
  CHECK(r.log.empty());
}

TEST_CASE("a test observer sees one backward's calls in order, with the gradients each node sends") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gb::requires_grad());
  Recorder r;
  {
    Registered on(&r);
    auto loss = (x * 2).sum();
    loss.backward();
    r.log.push_back("-- second backward: x.grad is defined");
    (x * 3).sum().backward();
    r.log.push_back("-- explicit gradient: no roots call");
    (x * 4).backward(gb::ones({3}));
  }
  const Log expected{
      "backward_roots 1 12",  // the loss: 2 * (1 + 2 + 3)
      "backward_start",
      "discovered 3",
      "node_done SumBackward0 1",
      "node_done MulBackward1 2",
      "node_done torch::autograd::AccumulateGrad",  // sends nothing
      "finish",
      "-- second backward: x.grad is defined",
      "backward_roots 1 18",
      "backward_start",
      "discovered 3",
      "node_done SumBackward0 1",
      "node_done MulBackward1 3",
      "accumulate 1",  // before the add into .grad: the parameter itself
      "node_done torch::autograd::AccumulateGrad",
      "finish",
      "-- explicit gradient: no roots call",
      "backward_start",
      "discovered 2",
      "node_done MulBackward1 4",
      "accumulate 1",
      "node_done torch::autograd::AccumulateGrad",
      "finish",
  };
  CHECK(joined(r.log) == joined(expected));
  CHECK(x.grad()[0].item<double>() == 9);
}

TEST_CASE("several observers are called in the order they were added; one without a watch sees only the start") {
  Log both;
  Recorder first("1:"), second("2:");
  second.watch = false;
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  {
    Registered a(&first), b(&second);
    (x * 2).sum().backward();
  }
  CHECK(joined(first.log) == joined(Log{"1:backward_roots 1 6", "1:backward_start", "discovered 3", "node_done SumBackward0 1",
                         "node_done MulBackward1 2", "node_done torch::autograd::AccumulateGrad", "finish"}));
  CHECK(joined(second.log) == joined(Log{"2:backward_roots 1 6", "2:backward_start"}));
}

TEST_CASE("grad() reports its backward but never accumulates") {
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  Recorder r;
  Registered on(&r);
  auto y = (x * x).sum();
  auto g = gb::autograd::grad({y}, {x});
  CHECK(g[0][1].item<double>() == 4);
  CHECK(joined(r.log) == joined(Log{"backward_start", "discovered 3", "node_done SumBackward0 1",
                                     "node_done MulBackward0 1 1", "finish"}));
}

#ifndef GLASSBOX_NO_PROBES  // a build without probes records no spans and connects no monitor (make test-options)
TEST_CASE("while a trace records, ops with a span report their result and their node; the monitor listens too") {
  TempDir tmp;
  Recorder r;
  auto x = gb::tensor({1.0, 2.0}, gb::requires_grad());
  {
    gb::trace::Session session(tmp.file("observer.db"));
    REQUIRE(session.active());
    REQUIRE(gb::detail::observers() != nullptr);
    CHECK(gb::detail::observers()->list.size() == 1);  // the monitor, connected at the session's start
    Registered on(&r);
    CHECK(gb::detail::observers()->list.size() == 2);
    auto y = x * 3;
    // the result first (record attaches the outputs), then the node it was recorded with
    CHECK(joined(r.log) == joined(Log{"op_output mul 1 span 3", "node_recorded"}));
    auto z = gb::ones({2}) + 1;  // a factory reports nothing; no input requires grad: a result, no node
    CHECK(joined(r.log) == joined(Log{"op_output mul 1 span 3", "node_recorded", "op_output add 1 span 2"}));
  }
  CHECK(gb::detail::observers() == nullptr);  // both gone: the monitor with its session
}
#endif
