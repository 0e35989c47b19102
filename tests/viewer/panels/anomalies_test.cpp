// tests/viewer/panels/anomalies_test.cpp — the anomalies list, rendered headless: the error and warning rows in
// their severity colours; a healthy run shows none. Linked alarms (tools/bad_runs.h's chain): the root cause, its two
// consequences under it, one step further in per link, each with its evidence line, and the unrelated alarm after
// the chain; a trace without causes shows no link. Driven frame by frame (Dear ImGui without a window): a click on
// any link of the chain jumps to its step, and the fold arrow takes its own clicks.
#include "viewer/screenshot.h"

#include <algorithm>
#include <thread>

#include "tools/bad_runs.h"
#include "viewer/app.h"
#include "viewer/colors.h"
#include "viewer/imgui_headless.h"

namespace {
std::int64_t reddish(const shot::Png& p) {  // the "error" severity text
  std::int64_t n = 0;
  for (int y = 60; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) {
      const auto c = p.at(x, y);
      const int r = (c >> 16) & 0xff, g = (c >> 8) & 0xff, b = c & 0xff;
      n += r > 200 && g < 130 && b < 130;
    }
  return n;
}
}  // namespace

TEST_CASE("anomalies screenshot: the planted NaN is listed as an error") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string sick = tmp.file("sick.db"), healthy = tmp.file("ok.db");
  gb::tools::write_synthetic_trace(sick, {.steps = 8, .layers = 4});
  gb::tools::write_synthetic_trace(healthy, {.steps = 8, .layers = 4, .nan_step = -2});
  auto a = shot::take(sick, "anomalies", tmp.file("a.png"));
  auto b = shot::take(healthy, "anomalies", tmp.file("b.png"));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(reddish(*a) > 20);
  CHECK(reddish(*b) == 0);
}

TEST_CASE("anomalies screenshot of real traced runs: log of zeros lists its errors; a healthy run lists none") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string sick = shot::engine_run(tmp, "log_zero"), healthy = shot::engine_run(tmp, "healthy");
  REQUIRE(!sick.empty());
  REQUIRE(!healthy.empty());
  auto a = shot::take(sick, "anomalies", tmp.file("a.png"));
  auto b = shot::take(healthy, "anomalies", tmp.file("b.png"));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(reddish(*a) > 20);
  CHECK(reddish(*b) == 0);
}

namespace {

// Pixels of the chain colour (color::kCauseLink, 0x4DD0E1) however much of them the text's anti-aliasing blended
// into the dark background: green and blue well above red, and close to each other.
bool cyanish(std::uint32_t c) {
  const int r = (c >> 16) & 0xff, g = (c >> 8) & 0xff, b = c & 0xff;
  return g - r > 60 && b - r > 60 && std::abs(g - b) < 50;
}
bool yellowish(std::uint32_t c) {  // the "warning" severity text (color::kSeverity[1], 0xFFCC4D)
  const int r = (c >> 16) & 0xff, g = (c >> 8) & 0xff, b = c & 0xff;
  return r > 200 && g > 150 && b < 120;
}

// Runs of pixel rows holding a pixel `is` accepts with x in [x0, x1), below the tab bar; rows less than `gap`
// apart join. Each band: its first and last row, its leftmost x.
struct Band {
  int y0 = 0, y1 = 0, x = 1 << 30;
};
template <class Is>
std::vector<Band> bands(const shot::Png& p, Is is, int x0, int x1, int gap = 4) {
  std::vector<Band> out;
  for (int y = 60; y < p.height; ++y)
    for (int x = x0; x < std::min(x1, p.width); ++x) {
      if (!is(p.at(x, y))) continue;
      if (out.empty() || y - out.back().y1 > gap) out.push_back(Band{y, y});
      out.back().y1 = y;
      out.back().x = std::min(out.back().x, x);
    }
  return out;
}

}  // namespace

TEST_CASE("anomalies screenshot: a chain shows its root, each consequence indented with its evidence; no link else") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string chain = tmp.file("chain.db"), alarms = tmp.file("alarms.db");
  bad_runs::write_chain(chain);
  bad_runs::write_alarms(alarms);
  auto a = shot::take(chain, "anomalies", tmp.file("a.png"));
  auto b = shot::take(alarms, "anomalies", tmp.file("b.png"));
  REQUIRE(a);
  REQUIRE(b);
  // The columns at 1280 px: Time, Step, Severity, then Kind (x ~230..440: the "->" of each link), Module, Param, Op,
  // and Message from x ~820 (the evidence lines).
  // An evidence line may wrap: its lines join (gap 10 px); rows are further apart than that.
  const std::vector<Band> arrows = bands(*a, cyanish, 0, 600), lines = bands(*a, cyanish, 600, a->width, 10),
                          warnings = bands(*a, yellowish, 0, 300);
  REQUIRE(arrows.size() == 2);  // dead_relu, then vanishing_norm
  CHECK(arrows[1].y0 > arrows[0].y1);
  CHECK(arrows[1].x >= arrows[0].x + 8);  // one link deeper: further in
  REQUIRE(lines.size() == 3);             // "root cause of the 2 alarms below", then each "because: ..."
  CHECK(lines[0].y1 < arrows[0].y0);
  CHECK(lines[1].y0 > arrows[0].y0);
  CHECK(lines[1].y1 < arrows[1].y0);
  CHECK(lines[2].y0 > arrows[1].y0);
  REQUIRE(warnings.size() == 4);  // four warning rows: the chain's three, then the loss spike on its own
  CHECK(warnings[0].y1 < lines[0].y1);
  CHECK(warnings[3].y0 > lines[2].y1);
  CHECK(bands(*b, cyanish, 0, b->width).empty());  // nothing linked: no chain drawn, the rows as before
  CHECK(bands(*b, yellowish, 0, 300).size() == 4);
}

namespace {

// One frame of the App, as the window's loop draws it; a short pause lets its workers answer.
void draw(gb::viewer::App& app, int n = 1) {
  for (int i = 0; i < n; ++i) {
    ImGui::GetIO().DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    app.frame();
    ImGui::Render();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// A left click at (x, y) on the Anomalies panel (shown again first: a jump switches to the timeline) with the step
// and cursor cleared; returns whether the click selected a row (the step or the cursor it set).
bool click(gb::viewer::App& app, float x, float y) {
  app.show(gb::viewer::Panel::anomalies);
  draw(app, 2);
  app.view().step.reset();
  app.view().cursor.reset();
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(x, y);
  draw(app);
  io.MouseDown[0] = true;
  draw(app);
  io.MouseDown[0] = false;
  draw(app);
  io.MousePos = ImVec2(-1, -1);
  return app.view().cursor.has_value();
}

}  // namespace

TEST_CASE("a click on any link of a chain jumps to its step; the fold arrow takes its own clicks") {
  TempDir tmp;
  const std::string path = tmp.file("chain.db");
  bad_runs::write_chain(path);
  ImGuiHeadless imgui;
  gb::viewer::App app(/*remember_recent=*/false);
  app.open(path);
  REQUIRE(app.error().empty());
  app.model()->wait_loaded();
  const auto& rows = app.model()->anomalies();
  REQUIRE(rows.size() == 4);
  // Down the Message column: the rows each click selects, top to bottom, with the middle of each row's pixels.
  std::vector<std::int64_t> steps;
  std::vector<std::vector<float>> ys;
  for (float y = 40; y < 400; y += 3) {
    if (!click(app, 1000, y)) continue;
    REQUIRE(app.view().step);
    CHECK(app.view().show == gb::viewer::Panel::timeline);  // the jump shows the timeline at that moment
    if (steps.empty() || steps.back() != *app.view().step) steps.push_back(*app.view().step), ys.emplace_back();
    ys.back().push_back(y);
    for (const gb::viewer::AnomalyRow& r : rows)
      if (r.record.step == app.view().step) CHECK(*app.view().cursor == r.record.t_ns);
  }
  CHECK(steps == std::vector<std::int64_t>{0, 9, 92, 40});  // the root, its consequences under it, then the rest
  REQUIRE(ys.size() == 4);
  auto mid = [](const std::vector<float>& v) { return (v.front() + v.back()) / 2; };

  // The root row's fold arrow, in the Kind column: a click there selects nothing and folds the chain, so the row
  // under the root is the unrelated alarm. (A click on a column border selects nothing either, and folds nothing.)
  std::optional<float> arrow;
  for (float x = 150; x < 450 && !arrow; x += 2) {
    if (click(app, x, mid(ys[0]))) continue;  // the row took the click
    if (click(app, 1000, ys[1].front() + 2) && app.view().step == 40) arrow = x;
  }
  REQUIRE(arrow);
  CHECK(*arrow > 200);  // past the Time, Step and Severity columns
  const bool link_still_there = click(app, 1000, mid(ys[2])) && app.view().step == 92;
  CHECK_FALSE(link_still_there);  // the chain is folded: its links are gone
  CHECK(click(app, 1000, mid(ys[0])));
  CHECK(app.view().step == 0);  // the root still jumps
  CHECK_FALSE(click(app, *arrow, mid(ys[0])));  // unfolds
  CHECK(click(app, 1000, mid(ys[2])));
  CHECK(app.view().step == 92);
}
