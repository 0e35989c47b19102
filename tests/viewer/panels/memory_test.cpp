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
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main});
    w.add(gb::trace::SpanRecord{.id = gb::trace::span_id(1, 1), .kind = gb::trace::SpanKind::op,
                                .name_id = w.intern("matmul"), .thread_id = 1, .start_ns = 0, .end_ns = 1000});
  }
  auto png = shot::take(trace, "memory", tmp.file("m.png"));
  REQUIRE(png);
  CHECK(png->count(color::category(MemCategory::activation)) == 0);
  CHECK(png->count(color::kPlotBackground) < 50);  // no plot (a stray anti-aliased text pixel may match)
}
