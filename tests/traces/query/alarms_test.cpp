// tests/traces/query/alarms_test.cpp — traces/query/alarms.cpp: the first non-finite value, the alarms grouped by
// kind and the chains of linked alarms, on the runs of tools/bad_runs.h (the story that prints them:
// tests/tools/story_test.cpp).
#include "traces/query/alarms.h"

#include <doctest/doctest.h>

#include "tools/bad_runs.h"
#include "tools/tools_test_util.h"
#include "traces/temp_dir.h"

using namespace gb::query;
using gb::trace::AnomalyKind;
using gb::trace::Severity;

TEST_CASE("the first non-finite value is the earliest by time, with its op, shapes, module and what followed") {
  TempDir tmp;
  const std::string path = tmp.file("nan.db");
  bad_runs::write_nan(path);
  TraceDb db(path);
  std::optional<FirstNonFinite> f = first_nonfinite(db);
  REQUIRE(f.has_value());
  CHECK(f->anomaly.id == 2);  // not the smallest id (1, the backward one)
  CHECK(f->anomaly.kind == AnomalyKind::nonfinite_forward);
  CHECK(f->step == 12);
  REQUIRE(f->op.has_value());
  CHECK(f->op->name == "log");
  CHECK(f->op->input_shapes == "[[64, 128]]");
  CHECK(f->op->dtypes == "float32");
  CHECK(f->op->device == 0);
  CHECK(f->module == "encoder.norm");
  CHECK(f->later == 2);
  CHECK(alarm_groups(db, f->anomaly.id).size() == 2);  // the loss and the backward, the first one skipped
}

TEST_CASE("a backward-only NaN names its node and the forward op that made it") {
  TempDir tmp;
  const std::string path = tmp.file("bwd.db");
  bad_runs::write_backward_nan(path);
  std::optional<FirstNonFinite> f = first_nonfinite(TraceDb(path));
  REQUIRE(f.has_value());
  CHECK(f->node == "SqrtBackward0");
  REQUIRE(f->forward_op.has_value());
  CHECK(f->forward_op->name == "sqrt");
  CHECK(f->step == 3);  // from the node: the anomaly names no step
  CHECK(f->module == "encoder.norm");
}

TEST_CASE("alarm groups: counts, steps, worst values and places per kind; a healthy run has none") {
  TempDir tmp;
  const std::string path = tmp.file("alarms.db");
  bad_runs::write_alarms(path);
  std::vector<AlarmGroup> g = alarm_groups(TraceDb(path));
  REQUIRE(g.size() == 3);
  CHECK(g[0].kind == AnomalyKind::exploding_norm);
  CHECK(g[0].count == 3);
  CHECK(g[0].by_severity == std::array<std::int64_t, 3>{0, 3, 0});
  CHECK(g[0].worst == 120.0);
  CHECK(g[0].where == std::vector<std::string>{"fc1.weight", "fc2.weight"});
  CHECK(g[2].kind == AnomalyKind::dead_relu);  // info last
  CHECK(lower_is_worse(AnomalyKind::vanishing_norm));
  CHECK_FALSE(lower_is_worse(AnomalyKind::exploding_norm));

  const std::string healthy = tmp.file("healthy.db");
  bad_runs::write_healthy(healthy);
  TraceDb h(healthy);
  CHECK_FALSE(first_nonfinite(h).has_value());
  CHECK(alarm_groups(h).empty());
  CHECK(module_path(h, std::nullopt).empty());
}

TEST_CASE("chains: the root cause, its consequence and that one's, each with its evidence; the rest stays apart") {
  TempDir tmp;
  const std::string path = tmp.file("chain.db");
  {
    bad_runs::Run r(path, 100);
    bad_runs::add_chain(r);  // 1 <- 2 <- 4, and 3 unrelated
    // Damaged causes, each a root: a missing row, a later row, the row itself.
    r.anomaly(5, 955 * bad_runs::kMs, 95, AnomalyKind::exploding_norm, Severity::warning, std::nullopt, std::nullopt,
              5, 3, 80.0, "gradient norm of fc2.weight is 80", 99, "names no row");
    r.anomaly(6, 965 * bad_runs::kMs, 96, AnomalyKind::exploding_norm, Severity::warning, std::nullopt, std::nullopt,
              5, 3, 90.0, "gradient norm of fc2.weight is 90", 7, "names a later row");
    r.anomaly(7, 975 * bad_runs::kMs, 97, AnomalyKind::exploding_norm, Severity::error, std::nullopt, std::nullopt, 5,
              3, 95.0, "gradient norm of fc2.weight is 95", 7, "names itself");
    r.w.close();
  }
  TraceDb db(path);
  const std::vector<AlarmChain> chains = alarm_chains(db);
  REQUIRE(chains.size() == 1);
  const AlarmChain& c = chains[0];
  CHECK(c.severity == Severity::warning);
  REQUIRE(c.links.size() == 3);
  CHECK(c.links[0].anomaly.id == 1);
  CHECK(c.links[0].anomaly.kind == AnomalyKind::update_ratio);
  CHECK(c.links[0].anomaly.step == 0);
  CHECK(c.links[0].anomaly.message == bad_runs::kChainRootMessage);
  CHECK(c.links[0].anomaly.cause.empty());
  CHECK(c.links[0].place == "fc2.weight");
  CHECK(c.links[0].depth == 0);
  CHECK(c.links[1].anomaly.id == 2);
  CHECK(c.links[1].anomaly.kind == AnomalyKind::dead_relu);
  CHECK(c.links[1].anomaly.step == 9);
  CHECK(c.links[1].anomaly.cause_id == 1);
  CHECK(c.links[1].anomaly.cause == bad_runs::kChainDeadCause);
  CHECK(c.links[1].place == "act2");
  CHECK(c.links[1].depth == 1);
  CHECK(c.links[1].cause == 0);
  CHECK(c.links[2].anomaly.id == 4);
  CHECK(c.links[2].anomaly.kind == AnomalyKind::vanishing_norm);
  CHECK(c.links[2].anomaly.step == 92);
  CHECK(c.links[2].anomaly.value == 2e-9);
  CHECK(c.links[2].anomaly.cause == bad_runs::kChainVanishCause);
  CHECK(c.links[2].place == "fc1.weight");
  CHECK(c.links[2].depth == 2);
  CHECK(c.links[2].cause == 1);

  // The alarms in no chain, by kind as before: the loss spike, and the three rows whose causes were damaged.
  const std::vector<AlarmGroup> g = alarm_groups(db, {}, chains);
  REQUIRE(g.size() == 2);
  CHECK(g[0].kind == AnomalyKind::exploding_norm);  // an error among them: first
  CHECK(g[0].count == 3);
  CHECK(g[0].first_step == 95);
  CHECK(g[0].last_step == 97);
  CHECK(g[1].kind == AnomalyKind::loss_spike);
  CHECK(g[1].count == 1);
  CHECK(g[1].first_step == 40);
  CHECK(alarm_groups(db).size() == 5);  // told nothing to leave out: every kind
}

TEST_CASE("chain_order: roots where they stand, consequences depth first under them; bad causes are roots") {
  const std::vector<ChainKey> keys = {{10, {}}, {11, 10}, {12, {}}, {13, 11}, {14, 10},
                                      {15, 15}, {16, 99}, {5, 16}};  // itself, a missing row, a later one
  const std::vector<ChainRow> o = chain_order(keys);
  REQUIRE(o.size() == 8);
  const std::vector<std::size_t> rows = {0, 1, 3, 4, 2, 5, 6, 7};
  const std::vector<int> depth = {0, 1, 2, 1, 0, 0, 0, 0};
  const std::vector<std::size_t> below = {3, 1, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < o.size(); ++i) {
    CAPTURE(i);
    CHECK(o[i].row == rows[i]);
    CHECK(o[i].depth == depth[i]);
    CHECK(o[i].below == below[i]);
  }
  CHECK(o[1].cause == 0);
  CHECK(o[2].cause == 1);
  CHECK(o[3].cause == 0);
  CHECK_FALSE(o[0].cause.has_value());
  CHECK_FALSE(o[5].cause.has_value());
  CHECK_FALSE(o[7].cause.has_value());
  CHECK(chain_order({}).empty());

  // A chain as long as a file: each row caused by the one before; no recursion, every row once.
  std::vector<ChainKey> line(100'000);
  for (std::size_t i = 0; i < line.size(); ++i)
    line[i] = ChainKey{static_cast<gb::trace::Id>(i + 1), i ? gb::trace::OptId(static_cast<gb::trace::Id>(i)) : std::nullopt};
  const std::vector<ChainRow> l = chain_order(line);
  REQUIRE(l.size() == line.size());
  CHECK(l.front().below == line.size() - 1);
  CHECK(l.back().depth == 99'999);
  CHECK(l.back().row == 99'999);
  CHECK(l.back().below == 0);
}

TEST_CASE("a trace older than version 6 has no causes: no chain, every alarm grouped by kind as before") {
  TempDir tmp;
  const std::string path = tmp.file("v5.db");
  bad_runs::write_chain(path);
  toolstest::run_sql(path, "PRAGMA user_version = 5");  // the Reader's view reads cause_id as NULL
  TraceDb db(path);
  CHECK(alarm_chains(db).empty());
  const std::vector<AlarmGroup> g = alarm_groups(db, {}, alarm_chains(db));
  REQUIRE(g.size() == 4);
  CHECK(g[0].kind == AnomalyKind::update_ratio);  // all warnings: by the time of their first
  CHECK(g[1].kind == AnomalyKind::dead_relu);
  CHECK(g[2].kind == AnomalyKind::loss_spike);
  CHECK(g[3].kind == AnomalyKind::vanishing_norm);
  for (const gb::trace::AnomalyRecord& a : db.reader().anomalies()) CHECK_FALSE(a.cause_id.has_value());
}
