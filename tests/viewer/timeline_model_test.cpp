// tests/viewer/timeline_model_test.cpp — TimelineModel on traces from tools/synth.h: windows at full detail and
// folded, the cache, the overview's levels against the Reader's folding, the stand-in on a cache miss, and a span's
// details (the linked node, shapes, launched kernels) read off the UI thread and kept per model.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "traces/reader.h"

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;
using gb::trace::SpanKind;

TEST_CASE("timeline at full detail: one item per span, depth = length of the parent chain") {
  Fixture f;
  TraceModel m(f.path, kSync);
  const auto& items = m.timeline().exact(1, m.begin_ns(), m.end_ns(), 0);
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
  for (const TimelineItem& it : m.timeline().exact(1, t0, t1, 0))
    if (it.end_ns >= t0 && it.start_ns <= t1) ++overlapping;
  CHECK(overlapping == sql(f.path, "SELECT count(*) FROM spans WHERE thread_id = 1 AND start_ns <= " +
                                       std::to_string(t1) + " AND end_ns >= " + std::to_string(t0)));
  CHECK(overlapping > 5);
}

TEST_CASE("level of detail: short spans fold into counted runs; counts add up to the spans") {
  Fixture f({.steps = 4, .layers = 4, .ops_per_layer = 40});
  TraceModel m(f.path, kSync);
  const auto& full = m.timeline().exact(1, m.begin_ns(), m.end_ns(), 0);
  const std::vector<TimelineItem> all(full.begin(), full.end());
  const std::int64_t fold = 65'536;  // a power of two: used as is
  const auto& folded = m.timeline().exact(1, m.begin_ns(), m.end_ns(), fold);
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
  m.timeline().exact(1, a, a + w, 3000);
  const auto q = m.timeline().window_queries();
  m.timeline().exact(1, a + w / 10, a + w + w / 10, 3000);  // pan by 10%
  m.timeline().exact(1, a, a + w, 2500);                    // the same power-of-two threshold (2048)
  CHECK(m.timeline().window_queries() == q);
  m.timeline().exact(1, a, a + w / 4, 3000 / 4);
  CHECK(m.timeline().window_queries() == q + 1);
}

TEST_CASE("overview: every level is the Reader's folding of the whole thread; windows get the overlapping items") {
  Fixture f({.steps = 8, .layers = 4, .ops_per_layer = 12});
  TraceModel m(f.path, {.direct_rows = 50, .background = false});
  REQUIRE(m.timeline().overview().ready());
  CHECK(m.timeline().overview().error().empty());
  const auto levels = m.timeline().overview().levels(1);
  REQUIRE(levels);
  CHECK(levels->first < levels->second);
  gb::trace::Reader r(f.path);
  for (int k = levels->first; k <= levels->second; ++k) {
    const std::vector<gb::trace::SpanItem> want = r.spans(1, gb::trace::kTimeMin, gb::trace::kTimeMax, std::int64_t{1} << k);
    std::vector<TimelineItem> got;
    CHECK(m.timeline().overview().query(1, k, gb::trace::kTimeMin, gb::trace::kTimeMax, got) == k);
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
    m.timeline().overview().query(1, k, t0, t1, win);
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
  const auto direct = m.timeline().window_queries();
  m.timeline().exact(1, m.begin_ns(), m.end_ns(), (m.end_ns() - m.begin_ns()) / 300);
  CHECK(m.timeline().overview_queries() == 1);
  CHECK(m.timeline().window_queries() == direct);
  const auto s = *m.step(2);
  m.timeline().exact(1, s.start_ns + 1000, s.start_ns + 3000, 16);
  CHECK(m.timeline().window_queries() == direct + 1);
  CHECK_FALSE(m.timeline().partial(1));
}

TEST_CASE("overview: built in the background, stopped cleanly when the model closes early") {
  Fixture f({.steps = 30, .layers = 4, .ops_per_layer = 20});
  { TraceModel early(f.path, {.direct_rows = 10}); }  // destroyed mid-build: joins its thread
  TraceModel m(f.path, {.direct_rows = 10});
  m.wait_loaded();
  CHECK(m.loading().empty());
  CHECK(m.timeline().overview().ready());
  CHECK(m.timeline().overview().progress() == doctest::Approx(1.0));
  CHECK(m.timeline().overview().covered_ns(1) == std::numeric_limits<std::int64_t>::max());
  CHECK(m.timeline().overview().items() > 0);
}

TEST_CASE("timeline on a cache miss: answers at once with a stand-in, the exact window after the worker") {
  Fixture f({.steps = 30, .layers = 4, .ops_per_layer = 20});
  TraceModel m(f.path, {.direct_rows = 50, .background = false});  // overview built before the constructor returns
  TraceModel ref(f.path, {.direct_rows = 50, .background = false});
  const auto s = *m.step(3);
  const std::int64_t t0 = s.start_ns, t1 = s.start_ns + (s.end_ns - s.start_ns) / 40;
  const auto q = m.timeline().window_queries();
  m.timeline().window(1, t0, t1, 0);  // a miss: posted, not read in the caller
  CHECK(m.timeline().pending(1));
  CHECK(m.timeline().window_queries() == q);
  m.wait_queries();
  CHECK(m.timeline().pending(1));  // the answer is swapped in by the next call, never behind the caller's back
  const auto& got = m.timeline().window(1, t0, t1, 0);
  CHECK_FALSE(m.timeline().pending(1));
  CHECK(m.timeline().window_queries() == q + 1);
  const auto& want = ref.timeline().exact(1, t0, t1, 0);
  REQUIRE(!want.empty());
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].span.id == want[i].span.id);
    CHECK(got[i].depth == want[i].depth);
  }
  // While a whole-run window is pending, the stand-in is the overview's answer, not an empty track.
  m.timeline().window(1, m.begin_ns(), m.end_ns(), (m.end_ns() - m.begin_ns()) / 300);
  CHECK(m.timeline().pending(1));
  CHECK_FALSE(m.timeline().window(1, m.begin_ns(), m.end_ns(), (m.end_ns() - m.begin_ns()) / 300).empty());
}

TEST_CASE("details: read on the query worker, equal to the trace's rows, kept per model so two traces never mix") {
  // Two traces whose span ids coincide but whose spans differ (other widths, so other shapes and durations).
  Fixture a({.steps = 2, .layers = 2, .ops_per_layer = 1, .batch = 64, .width = 32});
  Fixture b({.steps = 2, .layers = 2, .ops_per_layer = 1, .batch = 16, .width = 8});
  const std::string q = "SELECT s.id FROM spans s JOIN strings n ON n.id = s.name_id WHERE n.text = 'matmul' LIMIT 1";
  const std::int64_t id = sql(a.path, q);
  REQUIRE(sql(b.path, q) == id);
  TraceModel ma(a.path, kSync), mb(b.path, kSync);
  ma.wait_loaded();
  mb.wait_loaded();
  CHECK(ma.timeline().details(id) == nullptr);  // never waits: the first ask starts the read
  CHECK(ma.timeline().details_pending(id));
  ma.wait_queries();
  const std::shared_ptr<const SpanDetails> da = ma.timeline().details(id);
  REQUIRE(da);
  CHECK_FALSE(ma.timeline().details_pending(id));
  CHECK(da->shapes == "[[64, 32], [32, 32]]");
  CHECK(da->span.start_ns == sql(a.path, "SELECT start_ns FROM spans WHERE id = " + std::to_string(id)));
  CHECK(da->span.end_ns == sql(a.path, "SELECT end_ns FROM spans WHERE id = " + std::to_string(id)));
  CHECK(da->name == "matmul");
  CHECK(ma.timeline().details(id) == da);  // kept: the same answer, no second read
  // the other trace, same id: its own span, not the first trace's cached answer
  CHECK(mb.timeline().details(id) == nullptr);
  mb.wait_queries();
  const std::shared_ptr<const SpanDetails> db = mb.timeline().details(id);
  REQUIRE(db);
  CHECK(db->shapes == "[[16, 8], [8, 8]]");
  CHECK(db->span.end_ns == sql(b.path, "SELECT end_ns FROM spans WHERE id = " + std::to_string(id)));
  // no such span: not pending once read, and no answer
  CHECK(ma.timeline().details(999'999'999) == nullptr);
  ma.wait_queries();
  CHECK(ma.timeline().details(999'999'999) == nullptr);
  CHECK_FALSE(ma.timeline().details_pending(999'999'999));
  CHECK(ma.timeline().span(id) == nullptr);  // a jump's lookup: on the window worker
  CHECK(ma.timeline().span_pending(id));
  ma.wait_queries();
  REQUIRE(ma.timeline().span(id));
  CHECK(*ma.timeline().span(id) == da->span);
  CHECK(ma.timeline().span(999'999'999) == nullptr);
  ma.wait_queries();
  CHECK(ma.timeline().span(999'999'999) == nullptr);  // answered: no such span
  CHECK_FALSE(ma.timeline().span_pending(999'999'999));
}

TEST_CASE("details: the kernels a span launched (kernels.launch_span_id), with name, duration, grid and block") {
  Fixture f({.steps = 2, .layers = 2, .ops_per_layer = 1, .cuda = true});
  TraceModel m(f.path, kSync);
  m.wait_loaded();
  const std::int64_t launcher = sql(f.path, "SELECT launch_span_id FROM kernels WHERE launch_span_id IS NOT NULL "
                                            "GROUP BY launch_span_id ORDER BY launch_span_id LIMIT 1");
  REQUIRE(launcher != 0);
  auto d = settle(m, [&] { return m.timeline().details(launcher); });
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
  CHECK(settle(m, [&] { return m.timeline().details(module); })->kernels.empty());
}
