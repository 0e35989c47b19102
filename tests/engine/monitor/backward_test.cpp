// Tests engine/monitor/backward.cpp: the first backward node that made a NaN/Inf gradient from finite ones (named
// with its forward op and module, linked to the step's graph), a NaN a later node masks (info), the loss, and the
// graph rows of the first steps.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include "engine/monitor/monitor_test_util.h"

using gb::trace::AnomalyKind;

TEST_CASE("the norm of an all-zero row: finite forward, SqrtBackward0 of module norm makes the first NaN") {
  TempDir tmp;
  std::string db = run_fault(tmp, "sqrt_zero_row");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  REQUIRE(!rows.empty());
  const AnomalyRow& first = rows.front();
  CHECK(first.kind == static_cast<int>(AnomalyKind::nonfinite_backward));
  CHECK(first.severity == 2);  // it reached the parameters' gradients
  CHECK(first.step == 0);
  CHECK(first.node == "SqrtBackward0");
  CHECK(first.op == "sqrt");  // the forward op span the node was recorded by
  CHECK(first.module == "norm");
  CHECK(first.message.find("SqrtBackward0 (the backward of sqrt in module norm (RowNorm)) made 1 Inf") == 0);
  CHECK(first.message.find("they reached the parameters' gradients") != std::string::npos);
  CHECK(first.message.find("add an epsilon inside the sqrt") != std::string::npos);
  // nothing non-finite happened in the forward of step 0
  for (const auto& r : rows)
    if (r.step == 0) CHECK(r.kind != static_cast<int>(AnomalyKind::nonfinite_forward));
}

TEST_CASE("a custom autograd Function whose backward divides by zero is named, with its module") {
  TempDir tmp;
  std::string db = run_fault(tmp, "custom_div0");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  REQUIRE(!rows.empty());
  const AnomalyRow& first = rows.front();
  CHECK(first.kind == static_cast<int>(AnomalyKind::nonfinite_backward));
  CHECK(first.node.find("BadScale") == 0);
  CHECK(first.op.find("BadScale") == 0);
  CHECK(first.module == "scale");
  CHECK(first.severity == 2);
}

TEST_CASE("a Function whose broken gradient goes straight to a parameter: found when the step reads .grad") {
  TempDir tmp;
  std::string db = run_fault(tmp, "leaf_div0");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  REQUIRE(!rows.empty());
  const AnomalyRow& first = rows.front();
  CHECK(first.kind == static_cast<int>(AnomalyKind::nonfinite_backward));
  CHECK(first.severity == 2);
  CHECK(first.step == 0);
  CHECK(first.node.find("BadScale") == 0);
  CHECK(first.op.find("BadScale") == 0);
  CHECK(first.module == "layer");
  CHECK(first.param == "layer.weight");
  CHECK(first.message.find("in the gradient of layer.weight from finite incoming gradients at step 0") !=
        std::string::npos);
}

TEST_CASE("a NaN that a later node masks (ReLU backward) is still reported, as info") {
  TempDir tmp;
  std::string path = tmp.file("masked.db");
  {
    gb::trace::Session session(path);
    gb::manual_seed(0);
    auto w = gb::randn({4, 6}, gb::requires_grad());
    auto x = gb::randn({8, 4});
    auto h = gb::relu(x.mm(w));                        // many exact zeros
    auto y = gb::where(gb::gt(h, 0), gb::sqrt(h), 0);  // sqrt'(0) = inf, times the 0 where() sends: NaN
    y.sum().backward();                                // ReluBackward0 zeroes those entries again
    CHECK(gb::all(gb::isfinite(w.grad())).item<bool>());
  }
  auto rows = read_anomalies(path);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].kind == static_cast<int>(AnomalyKind::nonfinite_backward));
  CHECK(rows[0].severity == 0);
  CHECK(rows[0].node == "SqrtBackward0");
  CHECK(rows[0].message.find("a later node masked them") != std::string::npos);
}

TEST_CASE("a non-finite loss is one error row") {
  TempDir tmp;
  std::string path = tmp.file("loss.db");
  {
    gb::trace::Session session(path);
    auto w = gb::full({3}, 1.0, gb::requires_grad());
    for (int i = 0; i < 3; ++i) (w * std::numeric_limits<double>::infinity()).sum().backward();
  }
  auto rows = read_anomalies(path);
  auto loss = of_kind(rows, AnomalyKind::nonfinite_loss);
  REQUIRE(loss.size() == 1);
  CHECK(loss[0].severity == 2);
  CHECK(loss[0].message.find("the loss is Inf at step 0") == 0);
}

TEST_CASE("the graph of steps 0 and 1, and every N with GLASSBOX_GRAPH_EVERY; nodes link to their op spans") {
  TempDir tmp;
  std::string db = run_fault(tmp, "healthy", "GLASSBOX_GRAPH_EVERY=25");
  REQUIRE(!db.empty());
  // steps 0, 1, 25, 50: an MLP of 3 Linear + 2 ReLU + cross entropy
  CHECK(sql_double(db, "SELECT count(DISTINCT step) FROM graph_nodes") == 4);
  CHECK(sql_double(db, "SELECT count(*) FROM graph_nodes WHERE step = 25") ==
        sql_double(db, "SELECT count(*) FROM graph_nodes WHERE step = 0"));
  CHECK(sql_double(db, "SELECT sum(step) FROM (SELECT DISTINCT step FROM graph_nodes)") == 0 + 1 + 25 + 50);
  // every node but AccumulateGrad names the op span that recorded it, with the same seq
  CHECK(sql_double(db,
                   "SELECT count(*) FROM graph_nodes g JOIN strings s ON s.id = g.name_id "
                   "WHERE s.text NOT LIKE '%AccumulateGrad' AND (g.forward_span_id IS NULL OR g.seq != "
                   "(SELECT seq FROM spans WHERE id = g.forward_span_id))") == 0);
  CHECK(sql_double(db, "SELECT count(*) FROM graph_nodes WHERE step = 0 AND module_id IS NOT NULL") >= 5);
  // the parameters' AccumulateGrad leaves: six, each fed by one edge
  CHECK(sql_double(db,
                   "SELECT count(*) FROM graph_nodes g JOIN strings s ON s.id = g.name_id "
                   "WHERE g.step = 0 AND s.text LIKE '%AccumulateGrad'") == 6);
  CHECK(sql_double(db,
                   "SELECT count(*) FROM graph_edges e JOIN graph_nodes g ON g.id = e.dst_node_id "
                   "JOIN strings s ON s.id = g.name_id WHERE e.step = 0 AND s.text LIKE '%AccumulateGrad'") == 6);
  CHECK(sql_double(db, "SELECT sum(saved_bytes) FROM graph_nodes WHERE step = 0") > 64 * 32 * 4);
}
