// tests/viewer/trace_model_test.cpp — TraceModel without a window, on traces from tools/synth.h: the open (tracks,
// extent, the errors of unreadable files, a bare trace), anomalies with their names and linked details, the chains
// of linked alarms in the Anomalies panel's order,
// data-loader waits, the op table against query::op_table, the flame against SQL sums, op shapes, the legend. The
// domains have their own tests (timeline_model_test, memory_model_test, ...).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "tests/tools/bad_runs.h"
#include "tests/viewer/model_fixture.h"
#include "traces/error.h"
#include "traces/query/op_table.h"
#include "traces/query/trace_db.h"
#include "traces/writer.h"

using namespace gb::viewer;
using namespace gbtest;
using gb::trace::SpanKind;

TEST_CASE("tracks: main first, then the workers; every span of the file is on one") {
  Fixture f;
  TraceModel m(f.path, kSync);
  REQUIRE(m.tracks().size() == 3);
  CHECK(m.tracks()[0].name == "main");
  CHECK(m.tracks()[1].role == gb::trace::ThreadRole::dataloader_worker);
  CHECK(m.span_count() == f.synth.spans);
  CHECK(m.span_count() == sql(f.path, "SELECT count(*) FROM spans"));
  CHECK(m.begin_ns() == 0);
  CHECK(m.end_ns() == f.synth.end_ns - 20'000);  // the last step's end (synth idles 20 us after it)
  CHECK(m.steps().size() == 6);
}

TEST_CASE("anomalies: resolved names; details link a forward op and its backward node") {
  Fixture f;
  TraceModel m(f.path, kSync);
  REQUIRE(m.anomalies().size() == 2);
  const AnomalyRow& nan = m.anomalies()[1];
  CHECK(nan.record.kind == gb::trace::AnomalyKind::nonfinite_backward);
  CHECK(nan.param == "layers.1.weight");
  CHECK(nan.module == "layers.1");
  CHECK(nan.span == "AddmmBackward0");
  CHECK(nan.record.t_ns == f.synth.nan_t_ns);

  auto node = settle(m, [&] { return m.timeline().details(*nan.record.span_id); });
  REQUIRE(node);
  CHECK(node->name == "AddmmBackward0");
  REQUIRE(node->linked);
  CHECK(node->linked_name == "linear");
  CHECK(node->allocations == 3);  // autograd detail, weight and bias gradients
  auto op = settle(m, [&] { return m.timeline().details(node->linked->id); });
  REQUIRE(op);
  CHECK(op->children == 2);  // matmul, add
  CHECK(op->self_ns < op->span.end_ns - op->span.start_ns);
  CHECK(op->linked->id == node->span.id);
  CHECK(op->module == "layers.1");
}

TEST_CASE("anomalies: linked alarms in chain order, the root first and each consequence under its cause") {
  TempDir tmp;
  const std::string path = tmp.file("chain.db");
  bad_runs::write_chain(path);
  TraceModel m(path, kSync);
  const std::vector<AnomalyRow>& rows = m.anomalies();  // by time: ids 1, 2, 3, 4
  REQUIRE(rows.size() == 4);
  CHECK(rows[1].module == "act2");
  CHECK(rows[1].record.cause_id == 1);
  CHECK(rows[1].record.cause == bad_runs::kChainDeadCause);
  CHECK(rows[3].param == "fc1.weight");
  CHECK(rows[3].record.cause_id == 2);
  CHECK(m.anomaly_chains() == 1);
  const std::vector<gb::query::ChainRow>& o = m.anomaly_order();
  REQUIRE(o.size() == 4);
  // update_ratio (step 0), -> dead_relu (9), -> -> vanishing_norm (92), then the unrelated loss_spike (40).
  const std::vector<std::int64_t> steps = {0, 9, 92, 40};
  const std::vector<int> depth = {0, 1, 2, 0};
  const std::vector<std::size_t> below = {2, 1, 0, 0};
  for (std::size_t i = 0; i < o.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[o[i].row].record.step == steps[i]);
    CHECK(o[i].depth == depth[i]);
    CHECK(o[i].below == below[i]);
  }
  CHECK(o[1].cause == 0);  // rows[0], the root
  CHECK(o[2].cause == 1);  // rows[1], the dead ReLU

  // An older file (no causes): the rows in time order, none linked.
  sql(path, "PRAGMA user_version = 5");
  TraceModel old(path, kSync);
  CHECK(old.anomaly_chains() == 0);
  REQUIRE(old.anomaly_order().size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(old.anomaly_order()[i].row == i);
    CHECK(old.anomaly_order()[i].depth == 0);
  }
}

TEST_CASE("data loader: per-step waits add up to the report's wait total") {
  Fixture f;
  TraceModel m(f.path, kSync);
  std::int64_t sum = 0;
  for (const StepWait& w : m.step_waits()) {
    CHECK(w.share() >= 0);
    CHECK(w.share() <= 1);
    sum += w.wait_ns;
  }
  CHECK(m.step_waits().size() == 6);
  CHECK(sum == m.dataloader_summary().wait_ns);
  CHECK(sum > 0);
}

TEST_CASE("ops: PyTorch's key_averages from tools/op_table, cached per kind") {
  Fixture f;
  TraceModel m(f.path, kSync);
  const auto& ops = m.op_table(SpanKind::op);
  REQUIRE(!ops.rows.empty());
  CHECK(&ops == &m.op_table(SpanKind::op));
  std::int64_t calls = 0;
  for (const auto& r : ops.rows) calls += r.calls;
  CHECK(calls == sql(f.path, "SELECT count(*) FROM spans WHERE kind = 0"));
}

TEST_CASE("unreadable files throw the Reader's message: empty, corrupt, newer schema") {
  TempDir tmp;
  const std::string empty = tmp.file("empty.db"), corrupt = tmp.file("corrupt.db"), future = tmp.file("future.db");
  std::ofstream(empty).close();
  {
    std::ofstream out(corrupt, std::ios::binary);
    for (int i = 0; i < 4096; ++i) out.put(static_cast<char>((i * 7919) & 0xff));
  }
  gb::tools::write_synthetic_trace(future, {.steps = 1, .layers = 1});
  sql_int(future, "PRAGMA user_version = 99");
  CHECK_THROWS_AS(TraceModel{empty}, gb::trace::Error);
  CHECK_THROWS_AS(TraceModel{corrupt}, gb::trace::Error);
  CHECK_THROWS_WITH_AS(TraceModel{future}, doctest::Contains("newer"), gb::trace::Error);
  CHECK_THROWS_AS(TraceModel{tmp.file("missing.db")}, gb::trace::Error);
}

TEST_CASE("a trace without memory, gradients or steps is empty, not an error") {
  TempDir tmp;
  const std::string path = tmp.file("bare.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
  }
  TraceModel m(path, kSync);
  CHECK(m.tracks().empty());
  CHECK(!m.memory().has_data());
  CHECK(m.gradients().heatmap().rows() == 0);
  CHECK(m.anomalies().empty());
  CHECK(m.memory().compute_columns(0, 100, 10).size() == 10);
}

TEST_CASE("ops from the overview's pass equal query::op_table (calls, CPU total, Self CPU) for every kind") {
  Fixture f({.steps = 5, .layers = 3, .ops_per_layer = 4});
  TraceModel m(f.path, {.direct_rows = 100, .background = false});
  gb::query::TraceDb db(f.path);
  for (SpanKind k : {SpanKind::op, SpanKind::backward_node, SpanKind::module, SpanKind::optimizer, SpanKind::step}) {
    const gb::query::OpTable want = gb::query::op_table(db, k);
    const gb::query::OpTable& got = m.op_table(k);
    REQUIRE(got.rows.size() == want.rows.size());
    CHECK(got.self_total_ns == want.self_total_ns);
    for (std::size_t i = 0; i < got.rows.size(); ++i) {
      CHECK(got.rows[i].name == want.rows[i].name);
      CHECK(got.rows[i].calls == want.rows[i].calls);
      CHECK(got.rows[i].total_ns == want.rows[i].total_ns);
      CHECK(got.rows[i].self_ns == want.rows[i].self_ns);
    }
  }
}

TEST_CASE("track_label: cuda streams are named by their stream number") {
  using gb::trace::ThreadRole;
  CHECK(track_label(Track{.thread_id = 3, .name = "CUDA stream 7", .role = ThreadRole::cuda_stream}) == "cuda stream 7");
  CHECK(track_label(Track{.thread_id = 3, .name = "stream", .role = ThreadRole::cuda_stream}) == "cuda stream 3");
  CHECK(track_label(Track{.thread_id = 1, .name = "main 7", .role = ThreadRole::main}) == "main 7");
}

TEST_CASE("flame: module -> op totals by name path equal the trace's SQL sums") {
  Fixture f;
  TraceModel m(f.path, kSync);
  m.wait_loaded();
  const Flame& fl = m.flame();
  REQUIRE(fl.nodes.size() > 3);
  const auto mod = std::to_string(static_cast<int>(SpanKind::module)), op = std::to_string(static_cast<int>(SpanKind::op));
  const std::string paths =
      "WITH RECURSIVE t(id, path) AS (SELECT s.id, n.text FROM spans s JOIN strings n ON n.id = s.name_id WHERE s.kind = " +
      mod + " AND (s.parent_id IS NULL OR (SELECT p.kind FROM spans p WHERE p.id = s.parent_id) != " + mod +
      ") UNION ALL SELECT c.id, t.path || '/' || n.text FROM spans c JOIN t ON c.parent_id = t.id JOIN strings n ON "
      "n.id = c.name_id WHERE c.kind IN (" + mod + ", " + op + ")) ";
  CHECK(sql(f.path, paths + "SELECT count(DISTINCT path) FROM t") == static_cast<std::int64_t>(fl.nodes.size()));
  std::int64_t roots = 0;
  bool deep = false;
  for (const FlameNode& n : fl.nodes) {
    INFO(n.path);
    CHECK(n.total_ns == sql(f.path, paths + "SELECT sum(s.end_ns - s.start_ns) FROM t JOIN spans s ON s.id = t.id WHERE t.path = '" + n.path + "'"));
    CHECK(n.calls == sql(f.path, paths + "SELECT count(*) FROM t WHERE t.path = '" + n.path + "'"));
    CHECK(n.x1 - n.x0 == doctest::Approx(static_cast<double>(n.total_ns) / static_cast<double>(fl.total_ns)));
    if (n.parent < 0) roots += n.total_ns;
    else CHECK(n.x0 >= fl.nodes[static_cast<std::size_t>(n.parent)].x0 - 1e-12);
    deep |= n.depth >= 2 && n.kind == SpanKind::op;
  }
  CHECK(deep);  // ops under layer modules under the model
  CHECK(roots == fl.total_ns);
}

TEST_CASE("flame: build_flame aggregates by path, lays children out inside their parent, drops ops outside modules") {
  using gb::trace::OptId;
  std::vector<FlameSpan> s = {
      {1, OptId{}, SpanKind::module, "net", 100},     {2, OptId{1}, SpanKind::op, "linear", 30},
      {3, OptId{2}, SpanKind::op, "addmm", 20},       {4, OptId{1}, SpanKind::op, "linear", 40},
      {5, OptId{1}, SpanKind::module, "act", 10},     {6, OptId{5}, SpanKind::op, "relu", 5},
      {7, OptId{}, SpanKind::op, "stray", 50},        {8, OptId{}, SpanKind::module, "net", 60},
      {9, OptId{8}, SpanKind::op, "linear", 7},       {10, OptId{7}, SpanKind::op, "inside_stray", 3},
  };
  const Flame f = build_flame(s);
  std::map<std::string, const FlameNode*> by;
  for (const FlameNode& n : f.nodes) by[n.path] = &n;
  REQUIRE(by.size() == 5);
  CHECK(f.total_ns == 160);
  CHECK(f.depth == 3);
  CHECK(by["net"]->calls == 2);
  CHECK(by["net/linear"]->total_ns == 77);
  CHECK(by["net/linear"]->calls == 3);
  CHECK(by["net/linear/addmm"]->total_ns == 20);
  CHECK(by["net/act/relu"]->depth == 2);
  CHECK(by.count("stray") == 0);
  CHECK(by["net/act"]->x0 == doctest::Approx(0.0));  // children by name: act, then linear
  CHECK(by["net/linear"]->x0 == doctest::Approx(10.0 / 160));
  CHECK(by["net/linear/addmm"]->x0 == doctest::Approx(10.0 / 160));
  CHECK(by["net/linear"]->x1 == doctest::Approx(87.0 / 160));
}

TEST_CASE("shapes: synth writes op_details; the model returns a span's shapes and a name's most common shapes") {
  Fixture f({.steps = 2, .layers = 2, .ops_per_layer = 1, .batch = 64, .width = 32});
  CHECK(sql(f.path, "SELECT count(*) FROM op_details") == sql(f.path, "SELECT count(*) FROM spans WHERE kind = " +
                                                                   std::to_string(static_cast<int>(SpanKind::op))));
  TraceModel m(f.path, kSync);
  m.wait_loaded();
  const std::int64_t mm = sql(f.path, "SELECT s.id FROM spans s JOIN strings n ON n.id = s.name_id WHERE n.text = 'matmul' LIMIT 1");
  // A span's shapes (the hover's question): read on the window worker, then kept.
  CHECK(m.timeline().shapes(mm) == nullptr);
  m.wait_queries();
  const auto shapes = m.timeline().shapes(mm);
  REQUIRE(shapes);
  CHECK(shapes->first == "[[64, 32], [32, 32]]");
  CHECK(shapes->second == "float32,float32");
  CHECK(m.timeline().shapes(mm) == shapes);
  CHECK(settle(m, [&] { return m.timeline().details(mm); })->shapes == "[[64, 32], [32, 32]]");
  CHECK(settle(m, [&] { return m.timeline().shapes(999'999'999); })->first.empty());
  // A name's most common shapes: read by the loader.
  CHECK(m.op_shapes(SpanKind::op, "matmul") == "[[64, 32], [32, 32]]");
  CHECK(m.op_shapes(SpanKind::op, "cross_entropy") == "[[64, 32], [64]]");
  CHECK(m.op_shapes(SpanKind::op, "no_such_op").empty());
}

TEST_CASE("shapes: the most common shape string of a name wins") {
  TempDir tmp;
  const std::string path = tmp.file("s.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
    const auto name = w.intern("conv");
    const char* shapes[] = {"[[1, 3]]", "[[8, 3]]", "[[8, 3]]", "[[2, 3]]", "[[1, 3]]", "[[8, 3]]"};
    for (int i = 0; i < 6; ++i) {
      const auto id = gb::trace::span_id(1, i + 1);
      w.add(gb::trace::SpanRecord{.id = id, .kind = SpanKind::op, .name_id = name, .thread_id = 1, .start_ns = i * 100,
                                  .end_ns = i * 100 + 50});
      w.add(gb::trace::OpDetailsRecord{.span_id = id, .input_shapes = w.intern(shapes[i])});
    }
  }
  TraceModel m(path, kSync);
  m.wait_loaded();
  CHECK(m.op_shapes(SpanKind::op, "conv") == "[[8, 3]]");
  const auto shapes = settle(m, [&] { return m.timeline().shapes(gb::trace::span_id(1, 4)); });
  REQUIRE(shapes);
  CHECK(shapes->first == "[[2, 3]]");
  CHECK(shapes->second.empty());
}

TEST_CASE("legend_kinds: the cuda kinds only when the trace has CUDA activity") {
  TempDir tmp;
  for (bool cuda : {false, true}) {
    CAPTURE(cuda);
    const std::string path = tmp.file(cuda ? "cuda.db" : "cpu.db");
    gb::tools::write_synthetic_trace(path, {.steps = 2, .layers = 2, .ops_per_layer = 1, .cuda = cuda});
    TraceModel m(path, {.background = false});
    const auto k = m.legend_kinds();
    CHECK(std::find(k.begin(), k.end(), SpanKind::op) != k.end());
    CHECK(std::find(k.begin(), k.end(), SpanKind::step) != k.end());
    for (SpanKind c : {SpanKind::cuda_kernel, SpanKind::cuda_memcpy, SpanKind::cuda_memset, SpanKind::cuda_api})
      CHECK((std::find(k.begin(), k.end(), c) != k.end()) == cuda);
  }
}
