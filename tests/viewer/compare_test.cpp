// tests/viewer/compare_test.cpp — the Compare panel's model (TraceModel::compare(): start / result) against
// query::diff_traces run directly on the two files: step statistics, every op delta, memory peaks; and the
// error and cleared states.
#include <doctest/doctest.h>

#include "traces/query/diff.h"
#include "tools/synth.h"
#include "traces/temp_dir.h"
#include "viewer/trace_model.h"

using namespace gb::viewer;

TEST_CASE("compare: the model's numbers are diff_traces' numbers") {
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  gb::tools::write_synthetic_trace(a, {.steps = 6, .layers = 3, .ops_per_layer = 2});
  gb::tools::write_synthetic_trace(b, {.steps = 8, .layers = 4, .ops_per_layer = 3, .seed = 7});
  TraceModel m(a, {.background = false});
  CHECK(m.compare().result() == nullptr);
  m.compare().start(b);
  m.wait_queries();
  REQUIRE(m.compare().result() != nullptr);
  CHECK(m.compare().error().empty());
  const gb::query::TraceDiff& got = *m.compare().result();
  const gb::query::TraceDiff want = gb::query::diff_traces(gb::query::TraceDb(a), gb::query::TraceDb(b));
  CHECK(got.steps_a.count == 6);
  CHECK(got.steps_b.count == 8);
  CHECK(got.steps_a.mean == want.steps_a.mean);
  CHECK(got.steps_b.mean == want.steps_b.mean);
  CHECK(got.steps_a.median == want.steps_a.median);
  CHECK(got.steps_b.median == want.steps_b.median);
  REQUIRE(got.ops.size() == want.ops.size());
  REQUIRE(!got.ops.empty());
  for (std::size_t i = 0; i < got.ops.size(); ++i) {
    CAPTURE(got.ops[i].name);
    CHECK(got.ops[i].name == want.ops[i].name);
    CHECK(got.ops[i].total_delta_ns() == want.ops[i].total_delta_ns());
    CHECK(got.ops[i].a.has_value() == want.ops[i].a.has_value());
    CHECK(got.ops[i].b.has_value() == want.ops[i].b.has_value());
  }
  REQUIRE(got.memory.size() == want.memory.size());
  REQUIRE(!got.memory.empty());
  for (std::size_t i = 0; i < got.memory.size(); ++i) {
    CHECK(got.memory[i].allocated_a == want.memory[i].allocated_a);
    CHECK(got.memory[i].allocated_b == want.memory[i].allocated_b);
    CHECK(got.memory[i].reserved_b == want.memory[i].reserved_b);
  }
  // B has more layers: its peak allocated is larger, as the panel's bars show.
  CHECK(*got.memory[0].allocated_b > *got.memory[0].allocated_a);

  m.compare().start(tmp.file("missing.db"));
  m.wait_queries();
  CHECK(m.compare().result() == nullptr);
  CHECK(m.compare().error().find("missing.db") != std::string::npos);
  m.compare().start("");
  CHECK(m.compare().result() == nullptr);
  CHECK(m.compare().error().empty());
}

TEST_CASE("compare().start: returns at once, pending() until the diff is in") {
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  gb::tools::write_synthetic_trace(a, {.steps = 4, .layers = 2, .ops_per_layer = 2});
  gb::tools::write_synthetic_trace(b, {.steps = 5, .layers = 2, .ops_per_layer = 2, .seed = 3});
  TraceModel m(a, {.background = false});
  m.compare().start(b);
  // Nothing is computed in the caller: the job is only queued (the worker may pick it up meanwhile).
  CHECK((m.compare().pending() || m.compare().result() != nullptr));
  m.wait_queries();
  CHECK_FALSE(m.compare().pending());
  REQUIRE(m.compare().result() != nullptr);
  CHECK(m.compare().result()->steps_b.count == 5);
}
