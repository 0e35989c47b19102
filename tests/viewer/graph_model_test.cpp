// tests/viewer/graph_model_test.cpp — GraphModel: a step's autograd graph read on the query worker, against the
// trace's graph_nodes and graph_edges, with its backward spans joined by seq.
#include <doctest/doctest.h>

#include "viewer/graph_notes.h"

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;
using gb::trace::SpanKind;

TEST_CASE("autograd graph of a step: the loss on top, every edge downward, backward spans joined by seq") {
  Fixture f({.steps = 3, .layers = 3, .ops_per_layer = 2});
  TraceModel m(f.path, kSync);
  REQUIRE(m.graph().steps() == std::vector<std::int64_t>{0});
  CHECK(m.graph().get(1) == nullptr);  // no graph recorded in step 1: nothing to read
  CHECK_FALSE(m.graph().pending(1));
  CHECK(m.graph().get(0) == nullptr);  // read on the query worker
  CHECK(m.graph().pending(0));
  m.wait_queries();
  const std::shared_ptr<const AutogradGraph> g = m.graph().get(0);
  CHECK(m.graph().get(0) == g);  // kept
  REQUIRE(g);
  CHECK(static_cast<std::int64_t>(g->nodes.size()) == sql(f.path, "SELECT count(*) FROM graph_nodes WHERE step = 0"));
  CHECK(static_cast<std::int64_t>(g->edges.size()) == sql(f.path, "SELECT count(*) FROM graph_edges WHERE step = 0"));
  for (auto [a, b] : g->edges) CHECK(g->nodes[static_cast<std::size_t>(b)].layer > g->nodes[static_cast<std::size_t>(a)].layer);
  int accumulate = 0;
  for (const GraphNode& n : g->nodes) {
    if (n.name == "NllLossBackward0") CHECK(n.layer == 0);
    if (n.name == "AccumulateGrad") {
      ++accumulate;
      CHECK_FALSE(n.backward);
      continue;
    }
    REQUIRE(n.backward);
    CHECK(n.backward->kind == SpanKind::backward_node);
    CHECK(*n.backward->seq == n.record.seq);
    CHECK(m.string(n.backward->name_id) == n.name);
  }
  CHECK(accumulate == 6);  // weight and bias of 3 layers
  CHECK(g->max_saved_bytes > 0);
  CHECK(g->max_backward_ns > 0);
  CHECK_FALSE(graph_note("MulBackward0").empty());
  CHECK(graph_note("NoSuchBackward").empty());
}
