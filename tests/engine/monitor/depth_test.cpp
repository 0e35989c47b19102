// Tests engine/monitor/depth.cpp: sixteen Linear + Sigmoid layers (the gradient, relative to each weight, falls by
// orders of magnitude back to the first layer) raise one depth_gradient alarm that names the first layer affected
// and the sigmoid between; the same depth with residual connections, LayerNorm and ReLU raises none, nor do the
// shallow healthy nets (the samples' MLP, CNN, ResNet-style net and Transformer are checked in samples/).
#include <doctest/doctest.h>

#include "engine/monitor/monitor_test_util.h"

using gb::trace::AnomalyKind;

TEST_CASE("16 Linear + Sigmoid layers: the gradient vanishes with depth, named at its first layer, with the sigmoid") {
  TempDir tmp;
  const std::string db = run_fault(tmp, "deep_sigmoid");
  REQUIRE(!db.empty());
  const auto rows = read_anomalies(db);
  const auto depth = of_kind(rows, AnomalyKind::depth_gradient);
  REQUIRE(depth.size() == 1);
  const AnomalyRow& d = depth[0];
  CHECK(d.step >= 9);   // a window of warmup (10) steps, then sustained_steps (8) in a row
  CHECK(d.step <= 20);  // ... found within the first steps
  CHECK(d.message.find("the gradient vanishes with depth") == 0);
  CHECK(d.message.find("at in.weight (the first layer) than at out.weight (the last)") != std::string::npos);
  // the first layer affected walking back from the output: a weight of the stack, named in the row
  CHECK(d.param.rfind("layers.", 0) == 0);
  CHECK(d.message.find(d.param + " (the first layer affected)") != std::string::npos);
  CHECK(d.message.find("sigmoid") != std::string::npos);
  CHECK(d.message.find("saturating activation") != std::string::npos);
  CHECK(d.message.find("no residual connection or normalization") != std::string::npos);
  CHECK(d.value < 1e-2);  // the first layer's |g|/|w| over the last one's
  // what the row says is in grad_stats: the first layer's relative gradient orders of magnitude below the last's
  const double first = sql_double(db,
                                  "SELECT g.norm / g.param_norm FROM grad_stats g JOIN params p ON p.id = g.param_id "
                                  "JOIN modules m ON m.id = p.module_id WHERE g.step = 5 AND m.path = 'in' AND "
                                  "p.name = 'weight'");
  const double last = sql_double(db,
                                 "SELECT g.norm / g.param_norm FROM grad_stats g JOIN params p ON p.id = g.param_id "
                                 "JOIN modules m ON m.id = p.module_id WHERE g.step = 5 AND m.path = 'out' AND "
                                 "p.name = 'weight'");
  CHECK(first < last / 100);
}

TEST_CASE("as deep with residual connections, LayerNorm and ReLU: no depth alarm, no warning") {
  TempDir tmp;
  const auto rows = read_anomalies(run_fault(tmp, "deep_residual"));
  for (const auto& r : rows) MESSAGE(r.message);
  CHECK(of_kind(rows, AnomalyKind::depth_gradient).empty());
  CHECK(warnings(rows) == 0);
}
