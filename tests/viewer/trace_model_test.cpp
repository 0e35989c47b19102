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
#include "viewer/graph_notes.h"
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

// Everything loaded before the constructor returns (the viewer loads in the background).
constexpr ModelOptions kSync{.background = false};

}  // namespace

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

TEST_CASE("timeline at full detail: one item per span, depth = length of the parent chain") {
  Fixture f;
  TraceModel m(f.path, kSync);
  const auto& items = m.timeline_exact(1, m.begin_ns(), m.end_ns(), 0);
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
  TraceModel m(f.path, kSync);
  const auto s2 = *m.step(2);
  const std::int64_t t0 = s2.start_ns + (s2.end_ns - s2.start_ns) / 3, t1 = s2.end_ns - (s2.end_ns - s2.start_ns) / 3;
  std::int64_t overlapping = 0;
  for (const TimelineItem& it : m.timeline_exact(1, t0, t1, 0))
    if (it.end_ns >= t0 && it.start_ns <= t1) ++overlapping;
  CHECK(overlapping == sql(f.path, "SELECT count(*) FROM spans WHERE thread_id = 1 AND start_ns <= " +
                                       std::to_string(t1) + " AND end_ns >= " + std::to_string(t0)));
  CHECK(overlapping > 5);
}

TEST_CASE("level of detail: short spans fold into counted runs; counts add up to the spans") {
  Fixture f({.steps = 4, .layers = 4, .ops_per_layer = 40});
  TraceModel m(f.path, kSync);
  const auto& full = m.timeline_exact(1, m.begin_ns(), m.end_ns(), 0);
  const std::vector<TimelineItem> all(full.begin(), full.end());
  const std::int64_t fold = 65'536;  // a power of two: used as is
  const auto& folded = m.timeline_exact(1, m.begin_ns(), m.end_ns(), fold);
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
  TraceModel m(f.path, kSync);
  const std::int64_t a = 1'000'000, w = 2'000'000;
  m.timeline_exact(1, a, a + w, 3000);
  const auto q = m.timeline_queries();
  m.timeline_exact(1, a + w / 10, a + w + w / 10, 3000);  // pan by 10%
  m.timeline_exact(1, a, a + w, 2500);                    // the same power-of-two threshold (2048)
  CHECK(m.timeline_queries() == q);
  m.timeline_exact(1, a, a + w / 4, 3000 / 4);
  CHECK(m.timeline_queries() == q + 1);
}

TEST_CASE("memory layers: categories sum to allocated, reserved and allocated equal the trace's totals") {
  Fixture f;
  TraceModel m(f.path, kSync);
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
  TraceModel m(f.path, kSync);
  const auto s = *m.step(1);
  const std::int64_t t = s.start_ns + (s.end_ns - s.start_ns) / 2;
  auto blocks = m.largest_live(t, 5);
  REQUIRE(blocks.size() == 5);
  for (std::size_t i = 1; i < blocks.size(); ++i) CHECK(blocks[i - 1].size >= blocks[i].size);
  for (const LiveBlock& b : blocks) {
    CHECK(b.t_alloc_ns <= t);
    // (the allocator reuses addresses: only a free after this block's alloc counts)
    CHECK(sql(f.path, "SELECT count(*) FROM memory_events WHERE action = 1 AND addr = " + std::to_string(b.addr) +
                          " AND t_ns > " + std::to_string(b.t_alloc_ns) + " AND t_ns <= " + std::to_string(t)) == 0);
  }
}

TEST_CASE("gradient heatmap: rows in model order, values equal grad_stats, the planted NaN flagged") {
  Fixture f({.steps = 8, .layers = 5, .ops_per_layer = 1, .nan_step = 6, .nan_layer = 3});
  TraceModel m(f.path, kSync);
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
  TraceModel m(f.path, kSync);
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

TEST_CASE("memory: a retag event moves a live block's bytes to its new category (the engine tags after allocating)") {
  using gb::trace::MemAction;
  using gb::trace::MemCategory;
  using gb::trace::MemoryEventRecord;
  TempDir tmp;
  const std::string path = tmp.file("retag.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{0, 1, "main", gb::trace::ThreadRole::main});
    auto ev = [&](std::int64_t id, std::int64_t t, MemAction a, std::int64_t addr, std::int64_t size, MemCategory c,
                  std::int64_t allocated) {
      w.add(MemoryEventRecord{.id = id, .t_ns = t, .action = a, .device = gb::trace::kCpu, .addr = addr, .size = size,
                              .requested = size, .category = c, .allocated = allocated, .reserved = 1 << 20});
    };
    ev(1, 10, MemAction::alloc, 4096, 512, MemCategory::temporary, 512);
    ev(2, 20, MemAction::alloc, 8192, 1024, MemCategory::temporary, 1536);
    ev(3, 30, MemAction::retag, 4096, 512, MemCategory::activation, 1536);   // saved for backward
    ev(4, 40, MemAction::retag, 8192, 1024, MemCategory::parameter, 1536);   // requires_grad_()
    ev(5, 50, MemAction::retag, 4096, 512, MemCategory::temporary, 1536);    // released after its node ran
    ev(6, 60, MemAction::free, 4096, 512, MemCategory::temporary, 1024);
  }
  TraceModel m(path, kSync);
  REQUIRE(m.has_memory());
  auto cat = [&](std::int64_t t, MemCategory c) { return m.memory_at(t).by_category[static_cast<std::size_t>(c)]; };
  CHECK(cat(25, MemCategory::temporary) == 1536);
  CHECK(cat(35, MemCategory::activation) == 512);
  CHECK(cat(35, MemCategory::temporary) == 1024);
  CHECK(cat(45, MemCategory::parameter) == 1024);
  CHECK(cat(55, MemCategory::activation) == 0);
  CHECK(cat(55, MemCategory::temporary) == 512);
  CHECK(cat(65, MemCategory::temporary) == 0);
  CHECK(cat(65, MemCategory::parameter) == 1024);
  auto live = m.largest_live(45, 5);
  REQUIRE(live.size() == 2);
  CHECK(live[0].size == 1024);
  CHECK(live[0].category == MemCategory::parameter);
  CHECK(live[1].category == MemCategory::activation);
}

TEST_CASE("a trace without memory, gradients or steps is empty, not an error") {
  TempDir tmp;
  const std::string path = tmp.file("bare.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main});
  }
  TraceModel m(path, kSync);
  CHECK(m.tracks().empty());
  CHECK(!m.has_memory());
  CHECK(m.grad_heatmap().rows() == 0);
  CHECK(m.anomalies().empty());
  CHECK(m.memory_columns(0, 100, 10).size() == 10);
}

TEST_CASE("overview: every level is the Reader's folding of the whole thread; windows get the overlapping items") {
  Fixture f({.steps = 8, .layers = 4, .ops_per_layer = 12});
  TraceModel m(f.path, {.direct_rows = 50, .background = false});
  REQUIRE(m.overview_ready());
  CHECK(m.overview().error().empty());
  const auto levels = m.overview().levels(1);
  REQUIRE(levels);
  CHECK(levels->first < levels->second);
  gb::trace::Reader r(f.path);
  for (int k = levels->first; k <= levels->second; ++k) {
    const std::vector<gb::trace::SpanItem> want = r.spans(1, gb::trace::kTimeMin, gb::trace::kTimeMax, std::int64_t{1} << k);
    std::vector<TimelineItem> got;
    CHECK(m.overview().query(1, k, gb::trace::kTimeMin, gb::trace::kTimeMax, got) == k);
    REQUIRE_MESSAGE(got.size() == want.size(), "level " << k);
    std::int64_t total = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].span.id == want[i].span.id);
      CHECK(got[i].count == want[i].count);
      CHECK(got[i].start_ns == want[i].start_ns);
      CHECK(got[i].end_ns == want[i].end_ns);
      total += got[i].count;
    }
    CHECK(total == m.tracks()[0].spans);  // folded counts are exact
    // A window: exactly the items of the level that overlap it, outermost open ones first.
    const auto s3 = *m.step(3);
    const std::int64_t t0 = (s3.start_ns * 2 + s3.end_ns) / 3, t1 = (s3.start_ns + s3.end_ns * 2) / 3;
    std::vector<TimelineItem> win;
    m.overview().query(1, k, t0, t1, win);
    std::vector<gb::trace::Id> expect;
    for (const auto& it : want)
      if (it.end_ns >= t0 && it.start_ns <= t1) expect.push_back(it.span.id);
    std::vector<gb::trace::Id> ids;
    for (const auto& it : win) ids.push_back(it.span.id);
    std::sort(ids.begin(), ids.end());
    CHECK(ids == expect);
    // Depth: the number of items open when the item begins (a run may outlast its first span's parent).
    for (std::size_t i = 0; i < win.size(); ++i) {
      int enclosing = 0;
      for (std::size_t j = 0; j < win.size(); ++j)
        if (j != i && win[j].start_ns <= win[i].start_ns && win[j].end_ns > win[i].start_ns && win[j].count == 1 &&
            win[j].span.id < win[i].span.id)
          ++enclosing;
      CHECK_MESSAGE(win[i].depth == enclosing, "k " << k << " item " << i << " of " << win.size() << " id " << (win[i].span.id & 0xffffffff) << " start " << win[i].start_ns << " end " << win[i].end_ns << " count " << win[i].count << " t0 " << t0);
    }
  }
  // The model answers whole-run views from the overview, zoomed-in ones directly.
  const auto direct = m.timeline_queries();
  m.timeline_exact(1, m.begin_ns(), m.end_ns(), (m.end_ns() - m.begin_ns()) / 300);
  CHECK(m.overview_queries() == 1);
  CHECK(m.timeline_queries() == direct);
  const auto s = *m.step(2);
  m.timeline_exact(1, s.start_ns + 1000, s.start_ns + 3000, 16);
  CHECK(m.timeline_queries() == direct + 1);
  CHECK_FALSE(m.timeline_partial(1));
}

TEST_CASE("overview: built in the background, stopped cleanly when the model closes early") {
  Fixture f({.steps = 30, .layers = 4, .ops_per_layer = 20});
  { TraceModel early(f.path, {.direct_rows = 10}); }  // destroyed mid-build: joins its thread
  TraceModel m(f.path, {.direct_rows = 10});
  m.wait_loaded();
  CHECK(m.loading().empty());
  CHECK(m.overview_ready());
  CHECK(m.overview_progress() == doctest::Approx(1.0));
  CHECK(m.overview_covered_ns(1) == std::numeric_limits<std::int64_t>::max());
  CHECK(m.overview().items() > 0);
}

TEST_CASE("timeline on a cache miss: answers at once with a stand-in, the exact window after the worker") {
  Fixture f({.steps = 30, .layers = 4, .ops_per_layer = 20});
  TraceModel m(f.path, {.direct_rows = 50, .background = false});  // overview built before the constructor returns
  TraceModel ref(f.path, {.direct_rows = 50, .background = false});
  const auto s = *m.step(3);
  const std::int64_t t0 = s.start_ns, t1 = s.start_ns + (s.end_ns - s.start_ns) / 40;
  const auto q = m.timeline_queries();
  m.timeline(1, t0, t1, 0);  // a miss: posted, not read in the caller
  CHECK(m.timeline_pending(1));
  CHECK(m.timeline_queries() == q);
  m.wait_queries();
  CHECK(m.timeline_pending(1));  // the answer is swapped in by the next call, never behind the caller's back
  const auto& got = m.timeline(1, t0, t1, 0);
  CHECK_FALSE(m.timeline_pending(1));
  CHECK(m.timeline_queries() == q + 1);
  const auto& want = ref.timeline_exact(1, t0, t1, 0);
  REQUIRE(!want.empty());
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].span.id == want[i].span.id);
    CHECK(got[i].depth == want[i].depth);
  }
  // While a whole-run window is pending, the stand-in is the overview's answer, not an empty track.
  m.timeline(1, m.begin_ns(), m.end_ns(), (m.end_ns() - m.begin_ns()) / 300);
  CHECK(m.timeline_pending(1));
  CHECK_FALSE(m.timeline(1, m.begin_ns(), m.end_ns(), (m.end_ns() - m.begin_ns()) / 300).empty());
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

TEST_CASE("graph layout: layers follow the longest path; the barycenter passes remove avoidable crossings") {
  // Two roots feeding two children crosswise: in index order the edges cross once; swapping a layer fixes it.
  std::vector<std::pair<int, int>> edges{{0, 3}, {1, 2}, {3, 4}, {2, 4}, {0, 4}};
  std::vector<int> layer, order;
  auto [layers, width] = layout_graph(5, edges, layer, order);
  CHECK(layers == 3);
  CHECK(width == 2);
  CHECK(layer == std::vector<int>{0, 0, 1, 1, 2});  // 4 is reached by 0 -> 4 and by the longer 0 -> 3 -> 4
  for (auto [a, b] : edges) CHECK(layer[static_cast<std::size_t>(b)] > layer[static_cast<std::size_t>(a)]);
  std::vector<int> index_order{0, 1, 1, 0, 0};
  index_order[2] = 0, index_order[3] = 1;  // 2 before 3, as their ids come
  CHECK(crossings(edges, layer, index_order) == 1);
  CHECK(crossings(edges, layer, order) == 0);
  // A cycle (damaged trace) does not hang the layout: its nodes go to a last layer.
  std::vector<int> l2, o2;
  CHECK(layout_graph(3, {{0, 1}, {1, 2}, {2, 1}}, l2, o2).first == 2);
}

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

TEST_CASE("segment map: live blocks inside their segments add up to allocated; reserved is the segments' sum") {
  Fixture f({.steps = 4, .layers = 4, .ops_per_layer = 1});
  TraceModel m(f.path, kSync);
  for (int i = 1; i <= 20; ++i) {
    const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 21;
    const SegmentMap& map = m.segment_map(t);
    const MemoryColumn c = m.memory_at(t);
    std::int64_t allocated = map.unplaced, reserved = 0;
    for (const SegmentRow& s : map.segments) {
      reserved += s.size;
      std::int64_t at = 0, sum = 0;
      for (const SegmentBlock& b : s.blocks) {
        CHECK(b.offset >= at);  // by offset, no overlap
        at = b.offset + b.size;
        sum += b.size;
      }
      CHECK(at <= s.size);
      CHECK(sum == s.allocated);
      CHECK(s.largest_free <= s.size - s.allocated);
      allocated += s.allocated;
    }
    CHECK(map.unplaced == 0);
    CHECK(allocated == c.allocated);
    CHECK(reserved == c.reserved);
  }
  gb::tools::write_synthetic_trace(f.path, {.steps = 2, .layers = 2, .oom = true});
  TraceModel o(f.path, kSync);
  REQUIRE(o.oom_reports().size() == 1);
  CHECK(o.oom_reports()[0].report.find("out of memory") != std::string::npos);
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
  CHECK(m.span_shapes(mm).first == "[[64, 32], [32, 32]]");
  CHECK(m.span_shapes(mm).second == "float32,float32");
  CHECK(m.details(mm)->shapes == "[[64, 32], [32, 32]]");
  CHECK(m.op_shapes(SpanKind::op, "matmul") == "[[64, 32], [32, 32]]");
  CHECK(m.op_shapes(SpanKind::op, "cross_entropy") == "[[64, 32], [64]]");
  CHECK(m.op_shapes(SpanKind::op, "no_such_op").empty());
  CHECK(m.span_shapes(999'999'999).first.empty());
  // The hover's version: read on the window worker, the same answer, kept.
  CHECK(m.span_shapes_async(mm) == nullptr);
  m.wait_queries();
  const auto shapes = m.span_shapes_async(mm);
  REQUIRE(shapes);
  CHECK(*shapes == m.span_shapes(mm));
  CHECK(m.span_shapes_async(mm) == shapes);
}

TEST_CASE("details_async: read on the query worker, equal to details(), kept per model so two traces never mix") {
  // Two traces whose span ids coincide but whose spans differ (other widths, so other shapes and durations).
  Fixture a({.steps = 2, .layers = 2, .ops_per_layer = 1, .batch = 64, .width = 32});
  Fixture b({.steps = 2, .layers = 2, .ops_per_layer = 1, .batch = 16, .width = 8});
  const std::string q = "SELECT s.id FROM spans s JOIN strings n ON n.id = s.name_id WHERE n.text = 'matmul' LIMIT 1";
  const std::int64_t id = sql(a.path, q);
  REQUIRE(sql(b.path, q) == id);
  TraceModel ma(a.path, kSync), mb(b.path, kSync);
  ma.wait_loaded();
  mb.wait_loaded();
  CHECK(ma.details_async(id) == nullptr);  // never waits: the first ask starts the read
  CHECK(ma.details_pending(id));
  ma.wait_queries();
  const std::shared_ptr<const SpanDetails> da = ma.details_async(id);
  REQUIRE(da);
  CHECK_FALSE(ma.details_pending(id));
  CHECK(da->shapes == "[[64, 32], [32, 32]]");
  CHECK(da->span == ma.details(id)->span);
  CHECK(da->name == "matmul");
  CHECK(ma.details_async(id) == da);  // kept: the same answer, no second read
  // the other trace, same id: its own span, not the first trace's cached answer
  CHECK(mb.details_async(id) == nullptr);
  mb.wait_queries();
  const std::shared_ptr<const SpanDetails> db = mb.details_async(id);
  REQUIRE(db);
  CHECK(db->shapes == "[[16, 8], [8, 8]]");
  CHECK(db->span == mb.details(id)->span);
  // no such span: not pending once read, and no answer
  CHECK(ma.details_async(999'999'999) == nullptr);
  ma.wait_queries();
  CHECK(ma.details_async(999'999'999) == nullptr);
  CHECK_FALSE(ma.details_pending(999'999'999));
  CHECK(ma.span_record(id)->start_ns == da->span.start_ns);
  CHECK_FALSE(ma.span_record(999'999'999));
  CHECK(ma.span_record_async(id) == nullptr);  // a jump's lookup: on the window worker
  CHECK(ma.span_record_pending(id));
  ma.wait_queries();
  REQUIRE(ma.span_record_async(id));
  CHECK(*ma.span_record_async(id) == *ma.span_record(id));
  CHECK(ma.span_record_async(999'999'999) == nullptr);
  ma.wait_queries();
  CHECK(ma.span_record_async(999'999'999) == nullptr);  // answered: no such span
  CHECK_FALSE(ma.span_record_pending(999'999'999));
}

TEST_CASE("shapes: the most common shape string of a name wins") {
  TempDir tmp;
  const std::string path = tmp.file("s.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main});
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
  CHECK(m.span_shapes(gb::trace::span_id(1, 4)).first == "[[2, 3]]");
  CHECK(m.span_shapes(gb::trace::span_id(1, 4)).second.empty());
}

TEST_CASE("details: the kernels a span launched (kernels.launch_span_id), with name, duration, grid and block") {
  Fixture f({.steps = 2, .layers = 2, .ops_per_layer = 1, .cuda = true});
  TraceModel m(f.path, kSync);
  m.wait_loaded();
  const std::int64_t launcher = sql(f.path, "SELECT launch_span_id FROM kernels WHERE launch_span_id IS NOT NULL "
                                            "GROUP BY launch_span_id ORDER BY launch_span_id LIMIT 1");
  REQUIRE(launcher != 0);
  auto d = m.details(launcher);
  REQUIRE(d);
  REQUIRE(static_cast<std::int64_t>(d->kernels.size()) ==
          sql(f.path, "SELECT count(*) FROM kernels WHERE launch_span_id = " + std::to_string(launcher)));
  REQUIRE(!d->kernels.empty());
  for (const LaunchedKernel& k : d->kernels) {
    const std::string where = " FROM kernels k JOIN spans s ON s.id = k.span_id WHERE k.span_id = " + std::to_string(k.span_id);
    CHECK(sql(f.path, "SELECT k.launch_span_id" + where) == launcher);
    CHECK(k.dur_ns == sql(f.path, "SELECT s.end_ns - s.start_ns" + where));
    CHECK(k.dur_ns > 0);
    CHECK(k.name == std::string(m.string(sql(f.path, "SELECT s.name_id" + where))));
    CHECK(std::count(k.grid.begin(), k.grid.end(), ',') == 2);
    CHECK(std::count(k.block.begin(), k.block.end(), ',') == 2);
  }
  // A span that launched nothing (a module span) lists none.
  const std::int64_t module = sql(f.path, "SELECT id FROM spans WHERE kind = " +
                                              std::to_string(static_cast<int>(SpanKind::module)) + " LIMIT 1");
  CHECK(m.details(module)->kernels.empty());
}
