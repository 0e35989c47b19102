// tests/viewer/panels/gradients_test.cpp — the gradients heatmap, rendered headless: viridis cells, and the NaN
// colour at the planted layer and step (moving the plant moves the magenta cell the same way).
#include "viewer/screenshot.h"

#include "viewer/colors.h"

using namespace gb::viewer;

TEST_CASE("gradients screenshot: the NaN cell sits at the planted parameter and step") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string early = tmp.file("early.db"), late = tmp.file("late.db"), none = tmp.file("none.db");
  gb::tools::write_synthetic_trace(early, {.steps = 16, .layers = 8, .nan_step = 2, .nan_layer = 1});
  gb::tools::write_synthetic_trace(late, {.steps = 16, .layers = 8, .nan_step = 13, .nan_layer = 6});
  gb::tools::write_synthetic_trace(none, {.steps = 16, .layers = 8, .nan_step = -2});
  auto a = shot::take(early, "gradients", tmp.file("a.png"));
  auto b = shot::take(late, "gradients", tmp.file("b.png"));
  auto c = shot::take(none, "gradients", tmp.file("c.png"));
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  const int below_legend = 80;
  CHECK(a->count(color::kNaN, 0, below_legend) > 200);
  CHECK(c->count(color::kNaN, 0, below_legend) == 0);
  const auto ba = a->bbox(color::kNaN, below_legend), bb = b->bbox(color::kNaN, below_legend);
  // One cell: about 1/16 of the width and 1/16 of the rows.
  CHECK(ba[2] - ba[0] < a->width / 16);
  CHECK(bb[0] > ba[2]);  // step 13 is right of step 2
  CHECK(bb[1] > ba[3]);  // layers.6.weight is below layers.1.weight
  // step 13 of 16: about 13.5/16 of the way across the heatmap (labels take the left 180 px)
  const double frac = (0.5 * (bb[0] + bb[2]) - 178) / (b->width - 16 - 178);
  CHECK(frac == doctest::Approx(13.5 / 16).epsilon(0.03));
}

TEST_CASE("gradients screenshot: the selected parameter's update/parameter ratio is plotted, its NaN step marked") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  const auto synth = gb::tools::write_synthetic_trace(path, {.steps = 16, .layers = 8, .nan_step = 9, .nan_layer = 3});
  auto with = shot::take(path, "gradients", tmp.file("with.png"), "1280x800",
                         "--select param:" + std::to_string(synth.nan_param_id));
  auto without = shot::take(path, "gradients", tmp.file("without.png"));
  REQUIRE(with);
  REQUIRE(without);
  CHECK(without->count(color::kUpdateRatio, 8) == 0);
  // The ratio plot is the lowest plot: its line's points in the bottom third, and the NaN tick there too.
  const int bottom = with->height * 2 / 3;
  CHECK(with->count(color::kUpdateRatio, 8, bottom) > 40);
  CHECK(with->count(color::kUpdateRatio, 8, 0, bottom) == 0);
  const auto ratio = with->bbox(color::kUpdateRatio, bottom);
  REQUIRE(ratio[0] >= 0);
  const auto tick = with->bbox(color::kNaN, ratio[1]);  // below the norm plot's own NaN tick
  REQUIRE(tick[0] >= 0);
  CHECK(tick[3] - tick[1] > 20);  // a vertical tick down the plot
  CHECK(tick[2] - tick[0] < 6);
  CHECK(tick[0] > ratio[0]);  // step 9 of 0..15 lies inside the line's x range
  CHECK(tick[2] < ratio[2]);
}

TEST_CASE("gradients screenshot of real traced runs: NaN cells once the sqrt backward broke; none when healthy") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string sick = shot::engine_run(tmp, "sqrt_zero_row"), healthy = shot::engine_run(tmp, "healthy");
  REQUIRE(!sick.empty());
  REQUIRE(!healthy.empty());
  auto a = shot::take(sick, "gradients", tmp.file("sick.png"));
  auto b = shot::take(healthy, "gradients", tmp.file("healthy.png"));
  REQUIRE(a);
  REQUIRE(b);
  const int below_legend = 80;
  CHECK(a->count(color::kNaN, 0, below_legend) > 200);  // the proj weight's NaN gradient, steps 0..2
  CHECK(b->count(color::kNaN, 0, below_legend) == 0);
  std::int64_t cells = 0;  // the healthy heatmap: 6 parameters x 60 steps of viridis cells
  for (int k = 0; k <= 16; ++k) cells += b->count(color::viridis(k / 16.0), 6, below_legend);
  CHECK(cells > 20000);
}
