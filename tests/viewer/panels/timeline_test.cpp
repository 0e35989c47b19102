// tests/viewer/panels/timeline_test.cpp — the timeline panel, rendered headless: span-kind colours on the tracks,
// folded boxes at full zoom, the requested size.
#include "viewer/screenshot.h"

#include "viewer/colors.h"

#include "tools/merge.h"
#include "tools/rank_traces.h"

#include <sqlite3.h>

using namespace gb::viewer;

namespace {
// A folded run is drawn in its kind's colour at 72% (viewer/panels/timeline.cpp, plot::scale).
color::Rgb folded(color::Rgb c) {
  auto ch = [&](int s) { return static_cast<color::Rgb>(static_cast<int>(((c >> s) & 0xff) * 0.72f)) << s; };
  return ch(16) | ch(8) | ch(0);
}
}  // namespace

TEST_CASE("timeline screenshot: tracks coloured by kind, folded runs when zoomed out") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 12, .layers = 6, .ops_per_layer = 30});
  auto all = shot::take(trace, "timeline", tmp.file("all.png"), "1200x760");
  REQUIRE(all);
  CHECK(all->width == 1200);
  CHECK(all->height == 760);
  using gb::trace::SpanKind;
  for (SpanKind k :
       {SpanKind::step, SpanKind::module, SpanKind::backward_node, SpanKind::dataloader, SpanKind::backward_phase})
    CHECK_MESSAGE(all->count(color::span_kind(k), 0, 150) > 300, "kind " << int(k));
  // 30 short ops per layer cannot all be 3 px wide on a 1000 px view of 12 steps: they fold (darker boxes).
  CHECK(all->count(folded(color::span_kind(SpanKind::op)), 0, 150) > 50);

  // One step: the ops open up (plain op colour, far more of it).
  auto step = shot::take(trace, "timeline", tmp.file("step.png"), "1200x760", "--step 5");
  REQUIRE(step);
  CHECK(step->count(color::span_kind(SpanKind::op), 0, 150) > all->count(color::span_kind(SpanKind::op), 0, 150));
  CHECK(step->count(color::span_kind(SpanKind::op), 0, 150) > 1000);
}

TEST_CASE("timeline screenshot: --search draws the duration histogram of the matches") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 8, .layers = 4, .ops_per_layer = 3});
  auto with = shot::take(trace, "timeline", tmp.file("with.png"), "1200x760", "--search LINEAR");
  auto none = shot::take(trace, "timeline", tmp.file("none.png"), "1200x760", "--search no_such_span");
  auto without = shot::take(trace, "timeline", tmp.file("without.png"), "1200x760");
  REQUIRE(with);
  REQUIRE(none);
  REQUIRE(without);
  CHECK(without->count(color::kSearchBar) == 0);
  CHECK(none->count(color::kSearchBar) == 0);
  // Bars in the lower part (the histogram sits above the details pane), under the tracks.
  CHECK(with->count(color::kSearchBar, 0, with->height / 2) > 300);
  CHECK(with->count(color::kSearchBar, 0, 0, with->height / 2) == 0);
}

TEST_CASE("timeline screenshot: a CUDA stream track has its own header and kernels in the cuda_kernel colour") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string gpu = tmp.file("gpu.db"), cpu = tmp.file("cpu.db");
  gb::tools::write_synthetic_trace(gpu, {.steps = 6, .layers = 3, .ops_per_layer = 2, .cuda = true});
  gb::tools::write_synthetic_trace(cpu, {.steps = 6, .layers = 3, .ops_per_layer = 2});
  auto g = shot::take(gpu, "timeline", tmp.file("gpu.png"), "1200x760");
  auto c = shot::take(cpu, "timeline", tmp.file("cpu.png"), "1200x760");
  REQUIRE(g);
  REQUIRE(c);
  const auto kernel = color::span_kind(gb::trace::SpanKind::cuda_kernel);
  // The header bar (left of the label column) is the exact kernel colour; a CPU-only trace has none there.
  auto in_labels = [](const shot::Png& p, std::uint32_t col, int tol = 0) {
    std::int64_t n = 0;
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < 150; ++x) {
        bool ok = true;
        for (int s : {16, 8, 0}) ok = ok && std::abs(int((p.at(x, y) >> s) & 0xff) - int((col >> s) & 0xff)) <= tol;
        n += ok;
      }
    return n;
  };
  CHECK(in_labels(*g, kernel) > 40);  // 4 px wide, one track tall at least
  CHECK(in_labels(*c, kernel) == 0);
  // The "cuda stream N" text (anti-aliased: near its colour).
  CHECK(in_labels(*g, color::kCudaStreamLabel, 48) > 20);
  CHECK(in_labels(*c, color::kCudaStreamLabel, 48) == 0);
  // Kernel spans on the track (plain or folded), and none in the CPU trace.
  CHECK(g->count(kernel) + g->count(folded(kernel)) > 300);
  CHECK(c->count(kernel) == 0);
}

TEST_CASE("timeline screenshot: allocated and reserved plots under the tracks when the trace has memory events") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 3, .layers = 3});
  REQUIRE(sql_int(trace, "SELECT count(*) FROM memory_events") > 0);
  auto png = shot::take(trace, "timeline", tmp.file("m.png"));
  REQUIRE(png);
  CHECK(png->count(gb::viewer::color::kAllocatedLine, 8) > 300);
  CHECK(png->count(gb::viewer::color::kReservedLine, 8) > 300);

  const std::string bare = tmp.file("nomem.db");
  gb::tools::write_synthetic_trace(bare, {.steps = 3, .layers = 3});
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(bare.c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "DELETE FROM memory_events", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  REQUIRE(sql_int(bare, "SELECT count(*) FROM memory_events") == 0);
  auto none = shot::take(bare, "timeline", tmp.file("n.png"));
  REQUIRE(none);
  CHECK(none->count(gb::viewer::color::kAllocatedLine, 8) < 20);
  CHECK(none->count(gb::viewer::color::kReservedLine, 8) < 20);
}

TEST_CASE("timeline screenshot of a real traced run: op, module, backward node and optimizer spans") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = shot::engine_run(tmp, "healthy");
  REQUIRE(!trace.empty());
  auto png = shot::take(trace, "timeline", tmp.file("t.png"), "1200x760", "--step 5");
  REQUIRE(png);
  using gb::trace::SpanKind;
  for (auto k : {SpanKind::op, SpanKind::module, SpanKind::backward_node, SpanKind::optimizer})
    CHECK_MESSAGE(png->count(color::span_kind(k), 0, 150) > 100, "kind " << int(k));
}

TEST_CASE("timeline screenshot: a merged data-parallel trace has a band per rank, collectives on its tracks") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string r0 = tmp.file("r.rank0.db"), r1 = tmp.file("r.rank1.db"), merged = tmp.file("r.db");
  rank_traces::write_rank(r0, 0);
  rank_traces::write_rank(r1, 1);
  gb::tools::merge_traces({r0, r1}, merged);
  auto png = shot::take(merged, "timeline", tmp.file("m.png"), "1200x760");
  auto one = shot::take(r0, "timeline", tmp.file("one.png"), "1200x760");
  REQUIRE(png);
  REQUIRE(one);
  // two bands, each the width of the panel and 18 px tall (less the label text)
  CHECK(png->count(color::kRankHeader) > 2 * 1000 * 12);
  CHECK(png->count(color::kRankHeader) < 4 * 1200 * 18);
  CHECK(one->count(color::kRankHeader) == 0);
  const auto coll = color::span_kind(gb::trace::SpanKind::collective);
  CHECK(png->count(coll) + png->count(folded(coll)) > 200);
}
