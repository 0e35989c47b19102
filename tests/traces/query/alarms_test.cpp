// tests/traces/query/alarms_test.cpp — traces/query/alarms.cpp: the first non-finite value and the alarms grouped by
// kind, on the runs of tools/bad_runs.h (the story that prints them: tests/tools/story_test.cpp).
#include "traces/query/alarms.h"

#include <doctest/doctest.h>

#include "tools/bad_runs.h"
#include "traces/temp_dir.h"

using namespace gb::query;
using gb::trace::AnomalyKind;

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
