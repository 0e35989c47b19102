// tests/viewer/panels/dataloader_test.cpp — the data-loader panel, rendered headless: wait-share bars and the
// worker lanes in the dataloader colour.
#include "viewer/screenshot.h"

#include "viewer/colors.h"

using namespace gb::viewer;

TEST_CASE("data loader screenshot: wait bars and lanes") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 14, .layers = 4});
  auto png = shot::take(trace, "dataloader", tmp.file("d.png"));
  REQUIRE(png);
  CHECK(png->count(color::kWait) > 2000);
  CHECK(png->count(color::span_kind(gb::trace::SpanKind::dataloader)) > 2000);
}
