// tests/viewer/colors_test.cpp — the colours with a meaning: PyTorch's category colours, distinct span kinds, and
// the viridis map (ends, monotonic brightness) that never produces the NaN or Inf marker colours.
#include <doctest/doctest.h>

#include <set>

#include "viewer/colors.h"

using namespace gb::viewer;

TEST_CASE("category colours are PyTorch's memory-timeline colours") {
  using gb::trace::MemCategory;
  CHECK(color::category(MemCategory::parameter) == 0x006400);        // darkgreen
  CHECK(color::category(MemCategory::optimizer_state) == 0xDAA520);  // goldenrod
  CHECK(color::category(MemCategory::input) == 0x000000);            // black
  CHECK(color::category(MemCategory::activation) == 0xFF0000);       // red
  CHECK(color::category(MemCategory::autograd_detail) == 0x4169E1);  // royalblue
  CHECK(color::category(MemCategory::unknown) == 0x808080);          // grey
}

TEST_CASE("span kinds have distinct colours, none of them a category colour") {
  std::set<color::Rgb> kinds(std::begin(color::kSpanKind), std::end(color::kSpanKind));
  CHECK(kinds.size() == gb::trace::kSpanKindNames.size());  // one each, all different
  for (color::Rgb c : color::kCategory) CHECK(kinds.count(c) == 0);
}

TEST_CASE("viridis: its ends, brighter as it goes, never the NaN or Inf colour") {
  CHECK(color::viridis(0) == 0x440154);
  CHECK(color::viridis(1) == 0xFDE725);
  CHECK(color::viridis(-3) == 0x440154);
  CHECK(color::viridis(7) == 0xFDE725);
  double last = -1;
  for (int i = 0; i <= 100; ++i) {
    const color::Rgb c = color::viridis(i / 100.0);
    const double luma = 0.299 * (c >> 16) + 0.587 * ((c >> 8) & 0xff) + 0.114 * (c & 0xff);
    CHECK(luma >= last - 1e-9);
    last = luma;
    CHECK(c != color::kNaN);
    CHECK(c != color::kInf);
  }
}
