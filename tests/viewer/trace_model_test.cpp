// tests/viewer/trace_model_test.cpp — TraceModel without a window, on traces from tools/synth.h: tracks and depths,
// time-window queries, level-of-detail folding, memory layers against the trace's running totals, the gradient
// heatmap against grad_stats, anomalies, span details, data-loader waits, and the errors of unreadable files.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "tools/synth.h"
#include "traces/error.h"
#include "traces/temp_dir.h"
#include "traces/writer.h"
#include "viewer/trace_model.h"

using namespace gb::viewer;
using gb::trace::SpanKind;

namespace {

struct Fixture {
  TempDir tmp;
  std::string path = tmp.file("run.db");
  gb::tools::SynthResult synth;
  explicit Fixture(gb::tools::SynthOptions o = {.steps = 6, .layers = 3, .ops_per_layer = 2}) {
    synth = gb::tools::write_synthetic_trace(path, o);
  }
};

std::int64_t sql(const std::string& path, const std::string& q) { return sql_int(path, q); }

}  // namespace

TEST_CASE("tracks: main first, then the workers; every span of the file is on one") {
  Fixture f;
  TraceModel m(f.path);
  REQUIRE(m.tracks().size() == 3);
  CHECK(m.tracks()[0].name == "main");
  CHECK(m.tracks()[1].role == gb::trace::ThreadRole::dataloader_worker);
  CHECK(m.span_count() == f.synth.spans);
  CHECK(m.span_count() == sql(f.path, "SELECT count(*) FROM spans"));
  CHECK(m.begin_ns() == 0);
  CHECK(m.end_ns() == f.synth.end_ns - 20'000);  // the last step's end (synth idles 20 us after it)
  CHECK(m.steps().size() == 6);
}

TEST_CASE("timeline at full detail: one item per span, depth = length of the parent chain") {
  Fixture f;
  TraceModel m(f.path);
  const auto& items = m.timeline(1, m.begin_ns(), m.end_ns(), 0);
  CHECK(static_cast<std::int64_t>(items.size()) == sql(f.path, "SELECT count(*) FROM spans WHERE thread_id = 1"));
  std::map<gb::trace::Id, int> depth;
  for (const TimelineItem& it : items) {
    CHECK(it.count == 1);
    const int expected = it.span.parent_id ? depth.at(*it.span.parent_id) + 1 : 0;
    CHECK(it.depth == expected);
    depth[it.span.id] = it.depth;
  }
  // step > MLP > layers.l > linear > matmul
  int matmul_depth = -1;
  for (const TimelineItem& it : items)
    if (m.string(it.span.name_id) == "matmul") matmul_depth = it.depth;
  CHECK(matmul_depth == 4);
}

TEST_CASE("timeline window: exactly the spans overlapping the window") {
  Fixture f;
  TraceModel m(f.path);
  const auto s2 = *m.step(2);
  const std::int64_t t0 = s2.start_ns + (s2.end_ns - s2.start_ns) / 3, t1 = s2.end_ns - (s2.end_ns - s2.start_ns) / 3;
  std::int64_t overlapping = 0;
  for (const TimelineItem& it : m.timeline(1, t0, t1, 0))
    if (it.end_ns >= t0 && it.start_ns <= t1) ++overlapping;
  CHECK(overlapping == sql(f.path, "SELECT count(*) FROM spans WHERE thread_id = 1 AND start_ns <= " +
                                       std::to_string(t1) + " AND end_ns >= " + std::to_string(t0)));
  CHECK(overlapping > 5);
}

TEST_CASE("level of detail: short spans fold into counted runs; counts add up to the spans") {
  Fixture f({.steps = 4, .layers = 4, .ops_per_layer = 40});
  TraceModel m(f.path);
  const auto& full = m.timeline(1, m.begin_ns(), m.end_ns(), 0);
  const std::vector<TimelineItem> all(full.begin(), full.end());
  const std::int64_t fold = 65'536;  // a power of two: used as is
  const auto& folded = m.timeline(1, m.begin_ns(), m.end_ns(), fold);
  std::int64_t total = 0, runs = 0;
  for (const TimelineItem& it : folded) {
    total += it.count;
    if (it.count > 1) {
      ++runs;
      CHECK(it.span.end_ns - it.span.start_ns < fold);
    }
  }
  CHECK(total == static_cast<std::int64_t>(all.size()));
  CHECK(runs > 0);
  CHECK(folded.size() < all.size() / 5);
  // The same rule computed here from the unfolded list: consecutive spans shorter than fold make one item.
  std::vector<std::int64_t> expected;
  bool in_run = false;
  for (const TimelineItem& it : all) {
    const bool is_short = it.end_ns - it.start_ns < fold;
    if (is_short && in_run) ++expected.back();
    else expected.push_back(1);
    in_run = is_short;
  }
  REQUIRE(expected.size() == folded.size());
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(folded[i].count == expected[i]);
}

TEST_CASE("timeline cache: small pans reuse the answer, a 4x zoom asks the Reader again") {
  Fixture f;
  TraceModel m(f.path);
  const std::int64_t a = 1'000'000, w = 2'000'000;
  m.timeline(1, a, a + w, 3000);
  const auto q = m.timeline_queries();
  m.timeline(1, a + w / 10, a + w + w / 10, 3000);  // pan by 10%
  m.timeline(1, a, a + w, 2500);                    // the same power-of-two threshold (2048)
  CHECK(m.timeline_queries() == q);
  m.timeline(1, a, a + w / 4, 3000 / 4);
  CHECK(m.timeline_queries() == q + 1);
}

TEST_CASE("memory layers: categories sum to allocated, reserved and allocated equal the trace's totals") {
  Fixture f;
  TraceModel m(f.path);
  REQUIRE(m.has_memory());
  CHECK(m.memory_device() == 0);
  CHECK(m.context_bytes() == 300LL << 20);
  for (int i = 0; i <= 40; ++i) {
    const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 40;
    const MemoryColumn c = m.memory_at(t);
    std::int64_t sum = 0;
    for (std::int64_t v : c.by_category) sum += v;
    CHECK(sum == c.allocated);
    const std::string q = " FROM memory_events WHERE device = 0 AND t_ns <= " + std::to_string(t) +
                          " ORDER BY id DESC LIMIT 1";
    CHECK(c.allocated == std::max<std::int64_t>(0, sql(f.path, "SELECT allocated" + q)));
    CHECK(c.reserved == std::max<std::int64_t>(0, sql(f.path, "SELECT reserved" + q)));
    CHECK(c.reserved_unallocated() >= 0);
  }
  // Columns keep the peak whatever the zoom.
  for (int cols : {7, 300, 5000}) {
    std::int64_t peak = 0;
    for (const MemoryColumn& c : m.memory_columns(m.begin_ns(), m.end_ns() + 1, cols)) {
      peak = std::max(peak, c.allocated);
      std::int64_t sum = 0;
      for (std::int64_t v : c.by_category) sum += v;
      CHECK(sum == c.allocated);
    }
    CHECK(peak == f.synth.peak_allocated);
  }
  CHECK(m.peak_reserved() == f.synth.peak_reserved);
}

TEST_CASE("largest live blocks: largest first, each still live at that moment") {
  Fixture f;
  TraceModel m(f.path);
  const auto s = *m.step(1);
  const std::int64_t t = s.start_ns + (s.end_ns - s.start_ns) / 2;
  auto blocks = m.largest_live(t, 5);
  REQUIRE(blocks.size() == 5);
  for (std::size_t i = 1; i < blocks.size(); ++i) CHECK(blocks[i - 1].size >= blocks[i].size);
  for (const LiveBlock& b : blocks) {
    CHECK(b.t_alloc_ns <= t);
    CHECK(sql(f.path, "SELECT count(*) FROM memory_events WHERE action = 1 AND addr = " + std::to_string(b.addr) +
                          " AND t_ns <= " + std::to_string(t)) == 0);
  }
}

TEST_CASE("gradient heatmap: rows in model order, values equal grad_stats, the planted NaN flagged") {
  Fixture f({.steps = 8, .layers = 5, .ops_per_layer = 1, .nan_step = 6, .nan_layer = 3});
  TraceModel m(f.path);
  const GradHeatmap& h = m.grad_heatmap();
  REQUIRE(h.rows() == 10);
  REQUIRE(h.cols() == 8);
  CHECK(h.labels[0] == "layers.0.weight");
  CHECK(h.labels[7] == "layers.3.bias");
  int flagged = 0;
  for (std::size_t r = 0; r < h.rows(); ++r)
    for (std::size_t c = 0; c < h.cols(); ++c) {
      const std::string where = " FROM grad_stats WHERE param_id = " + std::to_string(h.param_ids[r]) +
                                " AND step = " + std::to_string(h.steps[c]);
      // norms compared in nano-units through SQL's integer view; a NaN norm is stored as NULL
      if (std::isnan(h.at(r, c)))
        CHECK(sql(f.path, "SELECT count(*)" + where + " AND norm IS NULL") == 1);
      else
        CHECK(std::llround(h.at(r, c) * 1e9) == sql(f.path, "SELECT CAST(round(norm * 1e9) AS INTEGER)" + where));
      if (h.flag_at(r, c)) {
        ++flagged;
        CHECK(h.flag_at(r, c) == 1);
        CHECK(h.param_ids[r] == f.synth.nan_param_id);
        CHECK(h.steps[c] == 6);
      }
    }
  CHECK(flagged == 1);
  CHECK(h.min_positive > 0);
  CHECK(h.max > h.min_positive);
}

TEST_CASE("anomalies: resolved names; details link a forward op and its backward node") {
  Fixture f;
  TraceModel m(f.path);
  REQUIRE(m.anomalies().size() == 2);
  const AnomalyRow& nan = m.anomalies()[1];
  CHECK(nan.record.kind == gb::trace::AnomalyKind::nonfinite_backward);
  CHECK(nan.param == "layers.1.weight");
  CHECK(nan.module == "layers.1");
  CHECK(nan.span == "AddmmBackward0");
  CHECK(nan.record.t_ns == f.synth.nan_t_ns);

  auto node = m.details(*nan.record.span_id);
  REQUIRE(node);
  CHECK(node->name == "AddmmBackward0");
  REQUIRE(node->linked);
  CHECK(node->linked_name == "linear");
  CHECK(node->allocations == 3);  // autograd detail, weight and bias gradients
  auto op = m.details(node->linked->id);
  REQUIRE(op);
  CHECK(op->children == 2);  // matmul, add
  CHECK(op->self_ns < op->span.end_ns - op->span.start_ns);
  CHECK(op->linked->id == node->span.id);
  CHECK(op->module == "layers.1");
}

TEST_CASE("data loader: per-step waits add up to the report's wait total") {
  Fixture f;
  TraceModel m(f.path);
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
  TraceModel m(f.path);
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
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main});
  }
  TraceModel m(path);
  CHECK(m.tracks().empty());
  CHECK(!m.has_memory());
  CHECK(m.grad_heatmap().rows() == 0);
  CHECK(m.anomalies().empty());
  CHECK(m.memory_columns(0, 100, 10).size() == 10);
}
