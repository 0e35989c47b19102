// tests/viewer/panels/ops_test.cpp — the ops table, rendered headless: rows with their Self CPU share bars (the op
// colour at 45% over the table), and the empty state for a kind the trace lacks.
#include "viewer/screenshot.h"

#include "viewer/colors.h"

namespace {
// Pixels whose blue clearly dominates: the share bars (the rest of the UI is grey or text).
std::int64_t bluish(const shot::Png& p) {
  std::int64_t n = 0;
  for (int y = 90; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) {
      const auto c = p.at(x, y);
      n += int(c & 0xff) > int((c >> 16) & 0xff) + 35;
    }
  return n;
}
}  // namespace

TEST_CASE("ops screenshot: a sorted table with share bars") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 4, .layers = 4});
  auto png = shot::take(trace, "ops", tmp.file("o.png"));
  REQUIRE(png);
  CHECK(bluish(*png) > 400);

  const std::string bare = tmp.file("bare.db");
  { gb::trace::Writer w(bare); }
  auto empty = shot::take(bare, "ops", tmp.file("e.png"));
  REQUIRE(empty);
  CHECK(bluish(*empty) < 100);  // no bars (only the selected tab is blue)
}

TEST_CASE("ops screenshot: the flame view draws module and op boxes") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 4, .layers = 4});
  auto count = [](const shot::Png& p, gb::viewer::color::Rgb c) { return p.count(c, 2, 60); };
  auto png = shot::take(trace, "ops", tmp.file("f.png"), "1280x800", "--select ops:flame");
  REQUIRE(png);
  const auto module = gb::viewer::color::span_kind(gb::trace::SpanKind::module);
  const auto op = gb::viewer::color::span_kind(gb::trace::SpanKind::op);
  CHECK(count(*png, module) > 2000);  // the root row spans the width
  CHECK(count(*png, op) > 500);
  auto table = shot::take(trace, "ops", tmp.file("t.png"));
  REQUIRE(table);
  CHECK(count(*table, module) < 100);  // the table has no module boxes
}
