// tests/viewer/view_state_test.cpp — the timeline's view-state math without a window: zoom to selection (Z) and
// shift+drag zoom to a pixel range.
#include <doctest/doctest.h>

#include "viewer/view_state.h"

using gb::viewer::ViewState;

TEST_CASE("zoom to selection: the span fills the view with a margin of 10% of its width each side") {
  ViewState v{.t0 = 0, .t1 = 1'000'000'000};
  v.zoom_to(200'000, 300'000);
  CHECK(v.t0 == 190'000);
  CHECK(v.t1 == 310'000);
  v.zoom_to(5'000, 5'010);  // a 10 ns span: the view stays at least 1 us (+ margin)
  CHECK(v.t0 == 4'900);
  CHECK(v.t1 == 6'100);
}

TEST_CASE("shift+drag: the pixel range becomes the view exactly") {
  ViewState v{.t0 = 1'000, .t1 = 11'000};  // 10,000 ns over pixels 100..1100: 10 ns per pixel
  CHECK(v.time_at(100, 100, 1100) == 1'000);
  CHECK(v.time_at(600, 100, 1100) == 6'000);
  CHECK(v.zoom_to_pixels(700, 300, 100, 1100));  // dragged right to left
  CHECK(v.t0 == 3'000);
  CHECK(v.t1 == 7'000);
  CHECK(v.zoom_to_pixels(0, 2000, 100, 1100));  // clamped to the view
  CHECK(v.t0 == 3'000);
  CHECK(v.t1 == 7'000);
  CHECK_FALSE(v.zoom_to_pixels(500, 502, 100, 1100));  // a click, not a drag
  CHECK(v.t1 - v.t0 == 4'000);
  ViewState n{.t0 = 0, .t1 = 1'000};  // 1 ns per pixel: a 50 px drag still gives at least 100 ns
  CHECK(n.zoom_to_pixels(10, 60, 0, 1000));
  CHECK(n.t1 - n.t0 == 100);
}
