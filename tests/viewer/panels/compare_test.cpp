// tests/viewer/panels/compare_test.cpp — the Compare panel headless: A's and B's bars with --compare, the empty
// state without it or with an unreadable B.
#include "viewer/screenshot.h"

#include "viewer/colors.h"

using namespace gb::viewer;

TEST_CASE("compare screenshot: A and B bars with --compare, none in the empty state") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  gb::tools::write_synthetic_trace(a, {.steps = 6, .layers = 3, .ops_per_layer = 2});
  gb::tools::write_synthetic_trace(b, {.steps = 6, .layers = 6, .ops_per_layer = 4, .seed = 3});
  auto both = shot::take(a, "compare", tmp.file("both.png"), "1280x800", "--compare '" + b + "'");
  auto empty = shot::take(a, "compare", tmp.file("empty.png"), "1280x800");
  auto bad = shot::take(a, "compare", tmp.file("bad.png"), "1280x800", "--compare '" + tmp.file("missing.db") + "'");
  REQUIRE(both);
  REQUIRE(empty);
  REQUIRE(bad);
  CHECK(both->count(color::kCompareA) > 500);
  CHECK(both->count(color::kCompareB) > 500);
  // B has twice the layers: its memory bars are longer, so more B pixels than A pixels.
  CHECK(both->count(color::kCompareB) > both->count(color::kCompareA));
  for (const auto* p : {&*empty, &*bad}) {
    CHECK(p->count(color::kCompareA) == 0);
    CHECK(p->count(color::kCompareB) == 0);
  }
}
