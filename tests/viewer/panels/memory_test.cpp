// tests/viewer/panels/memory_test.cpp — the memory panel, rendered headless: PyTorch's category colours in the
// stacked layers, the reserved and context layers, the live-allocations table at the chosen step.
#include "viewer/screenshot.h"

#include "viewer/colors.h"

using namespace gb::viewer;
using gb::trace::MemCategory;

TEST_CASE("memory screenshot: category layers in PyTorch's colours") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 6, .layers = 6});
  auto png = shot::take(trace, "memory", tmp.file("m.png"), "1280x800", "--step 3");
  REQUIRE(png);
  CHECK(png->width == 1280);
  const int below_legend = 110;  // the legend swatches are above
  CHECK(png->count(color::category(MemCategory::activation), 0, below_legend) > 5000);
  CHECK(png->count(color::category(MemCategory::parameter), 0, below_legend) > 5000);
  CHECK(png->count(color::category(MemCategory::optimizer_state), 0, below_legend) > 5000);
  CHECK(png->count(color::category(MemCategory::gradient), 0, below_legend) > 500);
  CHECK(png->count(color::kReservedUnallocated, 0, below_legend) > 5000);
  CHECK(png->count(color::kContext, 0, below_legend) > 5000);
}

TEST_CASE("memory screenshot: a trace without memory events shows the empty state, no layers") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("bare.db");
  {
    gb::trace::Writer w(trace);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
    w.add(gb::trace::SpanRecord{.id = gb::trace::span_id(1, 1),
                                .kind = gb::trace::SpanKind::op,
                                .name_id = w.intern("matmul"),
                                .thread_id = 1,
                                .start_ns = 0,
                                .end_ns = 1000});
  }
  auto png = shot::take(trace, "memory", tmp.file("m.png"));
  REQUIRE(png);
  CHECK(png->count(color::category(MemCategory::activation)) == 0);
  CHECK(png->count(color::kPlotBackground) < 50);  // no plot (a stray anti-aliased text pixel may match)
}

TEST_CASE("memory screenshot: the segment map at a moment shows blocks by category and free gaps") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 4, .layers = 6});
  // A moment in step 2's forward, when activations are live.
  const std::int64_t t = sql_int(trace,
                                 "SELECT max(t_ns) FROM memory_events WHERE category = 3 AND action = 0 AND "
                                 "t_ns < (SELECT end_ns FROM steps WHERE step = 2)");
  auto png = shot::take(trace, "memory", tmp.file("s.png"), "1280x900", "--select time:" + std::to_string(t));
  REQUIRE(png);
  const std::vector<int> gaps = png->bbox(color::kFreeGap, 110);  // below the legend swatch
  REQUIRE(gaps[1] > 0);
  CHECK(png->count(color::kFreeGap, 0, 110) > 2000);
  // Inside the segment rows (the free gaps' rows), the activation blocks in red.
  CHECK(png->count(color::category(MemCategory::activation), 0, gaps[1], gaps[3] + 1) > 500);
  CHECK(png->count(color::category(MemCategory::parameter), 0, gaps[1], gaps[3] + 1) > 500);
}

TEST_CASE("memory screenshot: an OOM shows its marker and, selected, its report window") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("oom.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 3, .layers = 3, .oom = true});
  auto plain = shot::take(trace, "memory", tmp.file("p.png"), "1280x900");
  REQUIRE(plain);
  CHECK(plain->count(color::kOom, 0, 110) > 300);  // the marker line
  auto report = shot::take(trace, "memory", tmp.file("r.png"), "1280x900", "--select oom");
  REQUIRE(report);
  // The report window covers the middle of the plot (mostly the CUDA context layer).
  CHECK(report->count(color::kContext) < plain->count(color::kContext) - 50000);
}

TEST_CASE("memory screenshot: a leak's OOM report window says it is a leak first, one step's peak does not") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string leak = shot::engine_run(tmp, "kept_outputs_oom", "GLASSBOX_ALLOC_CONF=capacity:96MiB");
  const std::string peak = shot::engine_run(tmp, "peak_oom", "GLASSBOX_ALLOC_CONF=capacity:64MiB");
  REQUIRE(!leak.empty());
  REQUIRE(!peak.empty());
  auto with_leak = shot::take(leak, "memory", tmp.file("leak.png"), "1280x900", "--select oom");
  auto with_peak = shot::take(peak, "memory", tmp.file("peak.png"), "1280x900", "--select oom");
  REQUIRE(with_leak);
  REQUIRE(with_peak);
  // In the window's top rows, under the red "OOM at" line both have: the leak line, in orange (255, 140, 51).
  const uint32_t orange = 0xFF8C33;
  const int64_t leak_orange = with_leak->count(orange, 40, 280, 340);
  const int64_t peak_orange = with_peak->count(orange, 40, 280, 340);
  MESSAGE("orange pixels in the window's top rows: leak " << leak_orange << ", one step's peak " << peak_orange);
  CHECK(leak_orange > 300);
  CHECK(peak_orange < 20);
}

TEST_CASE("memory screenshot of a real traced run: parameters, gradients, optimizer state and activations") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = shot::engine_run(tmp, "kept_graph");  // activations pile up step after step
  REQUIRE(!trace.empty());
  auto png = shot::take(trace, "memory", tmp.file("m.png"));
  REQUIRE(png);
  const int below_legend = 120;
  CHECK(png->count(color::category(MemCategory::activation), 0, below_legend) > 5000);
  CHECK(png->count(color::category(MemCategory::parameter), 0, below_legend) > 500);
  CHECK(png->count(color::category(MemCategory::gradient), 0, below_legend) > 200);
}
