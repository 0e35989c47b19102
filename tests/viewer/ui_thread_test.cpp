// tests/viewer/ui_thread_test.cpp — DESIGN.md's promise that no frame waits for SQLite: a scripted session of the
// viewer (every panel, a selection in each, a search, a compare, a memory cursor, the OOM report) drawn headless
// with Dear ImGui, counting the SQLite statements the UI thread runs inside App::frame() (traces/reader.h
// sqlite_statements_on_this_thread()). Opening a trace is not a frame and is not counted. And span ids, which repeat
// across traces: open A, select a span, open B, select the same id, and the details are B's.
#include <doctest/doctest.h>
#include <imgui.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tools/long_run.h"
#include "tools/synth.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"
#include "viewer/app.h"
#include "viewer/imgui_headless.h"
#include "viewer/panels/panels.h"

using namespace gb::viewer;

namespace {

// Statements the UI thread ran while drawing `frames` frames (a short pause between them lets the workers answer,
// so later frames take the answers the earlier ones asked for).
std::int64_t frames(App& app, int n) {
  std::int64_t statements = 0;
  for (int i = 0; i < n; ++i) {
    ImGui::GetIO().DeltaTime = 1.0f / 60;
    const std::int64_t before = gb::trace::sqlite_statements_on_this_thread();
    ImGui::NewFrame();
    app.frame();
    ImGui::Render();
    statements += gb::trace::sqlite_statements_on_this_thread() - before;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return statements;
}

}  // namespace

TEST_CASE("no SQLite statement runs on the UI thread while the viewer draws any panel") {
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  const gb::tools::SynthResult run = gb::tools::write_synthetic_trace(a, {.steps = 6, .layers = 3, .oom = true});
  gb::tools::write_synthetic_trace(b, {.steps = 6, .layers = 3, .seed = 2});
  ImGuiHeadless imgui;
  App app(/*remember_recent=*/false);
  app.open(a);
  REQUIRE(app.error().empty());
  app.compare_with(b);
  TraceModel& m = *app.model();

  for (int p = 0; p < static_cast<int>(Panel::count); ++p) {
    CAPTURE(kPanelNames[p]);
    app.show(static_cast<Panel>(p));
    CHECK(frames(app, 20) == 0);
  }
  // Selections: a span (its details pane), a step, a parameter, a graph node, a memory cursor, a search, the OOM.
  const std::int64_t mid = (m.begin_ns() + m.end_ns()) / 2;
  app.view().focus(m.begin_ns(), m.end_ns());
  app.view().step = 2;
  app.view().param = run.nan_param_id;
  app.view().cursor = mid;
  app.view().search = "linear";
  app.view().show_oom = true;
  for (const gb::trace::SpanRecord& s : gb::trace::Reader(a).all<gb::trace::SpanRecord>())
    if (!app.view().span && s.kind == gb::trace::SpanKind::op) app.view().span = s.id;
  REQUIRE(app.view().span);
  for (int p = 0; p < static_cast<int>(Panel::count); ++p) {
    CAPTURE(kPanelNames[p]);
    app.show(static_cast<Panel>(p));
    CHECK(frames(app, 20) == 0);
  }
  CHECK(gb::trace::sqlite_statements_on_this_thread() > 0);  // the counter counts: opening ran statements here
}

TEST_CASE("a long run: no SQLite statement on the UI thread in any panel, a step with and without detail, compare") {
  TempDir tmp;
  const std::string a = tmp.file("long.db"), b = tmp.file("long_b.db");
  gb::tools::SynthOptions o;
  o.long_steps = 4000;
  o.layers = 2;
  gb::tools::write_synthetic_trace(a, o);
  o.seed = 5;
  gb::tools::write_synthetic_trace(b, o);
  ImGuiHeadless imgui;
  App app(/*remember_recent=*/false);
  app.open(a);
  REQUIRE(app.error().empty());
  CHECK(frames(app, 3) == 0);  // the Run panel while the run summary loads
  app.model()->wait_loaded();
  app.compare_with(b);
  CHECK(app.current() == Panel::run);                                   // the first tab
  for (std::int64_t step : {std::int64_t{2500}, std::int64_t{1002}}) {  // summary only, then with detail
    CAPTURE(step);
    app.view().step = step;
    for (int p = 0; p < static_cast<int>(Panel::count); ++p) {
      CAPTURE(kPanelNames[p]);
      app.show(static_cast<Panel>(p));
      CHECK(frames(app, 10) == 0);
    }
  }
  app.model()->wait_queries();
  REQUIRE(app.model()->compare().run_b());
  CHECK(app.model()->compare().run_b()->size() == 4000);
  app.show(Panel::run);
  CHECK(frames(app, 10) == 0);  // the overlay of B's curves
  // Opening a step with detail selects it and shows its time in the timeline and memory views.
  gb::viewer::panels::go_to_step(*app.model(), app.view(), 1002);
  const auto s1002 = app.model()->step(1002);
  REQUIRE(s1002);
  CHECK(app.view().step == 1002);
  CHECK(app.view().t0 <= s1002->start_ns);
  CHECK(app.view().t1 >= s1002->end_ns);
  CHECK(app.view().t1 - app.view().t0 < 2 * (s1002->end_ns - s1002->start_ns));
  CHECK(app.view().cursor == (s1002->start_ns + s1002->end_ns) / 2);
  // The mouse: a click on the plots selects the step under it (the run fits the width: about step 1900 at x 700
  // of 84..1380), the wheel zooms around it; all without SQL.
  app.view().step.reset();
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(700, 400);
  CHECK(frames(app, 2) == 0);
  io.MouseDown[0] = true;
  CHECK(frames(app, 2) == 0);
  io.MouseDown[0] = false;
  CHECK(frames(app, 2) == 0);
  REQUIRE(app.view().step);
  CHECK(*app.view().step == doctest::Approx(1901).epsilon(0.03));
  io.MouseWheel = 2;
  CHECK(frames(app, 1) == 0);
  io.MouseWheel = 0;
  const double width = app.run_state().s1 - app.run_state().s0;
  CHECK(width == doctest::Approx(4000 * 0.64));
  CHECK(app.run_state().s0 < 1901);
  CHECK(app.run_state().s1 > 1901);
  io.MousePos = ImVec2(-1, -1);
  // F5 reopens the same trace: the zoom stays; another trace is fitted whole.
  const double s0 = app.run_state().s0;
  app.refresh();
  app.model()->wait_loaded();
  CHECK(frames(app, 2) == 0);
  CHECK(app.run_state().s0 == s0);
  CHECK(app.run_state().s1 - app.run_state().s0 == doctest::Approx(width));
  app.open(b);
  app.model()->wait_loaded();
  CHECK(frames(app, 2) == 0);
  CHECK(app.run_state().s0 == 0);
  CHECK(app.run_state().s1 == 4000);
}

TEST_CASE("a run being written: followed with no statement on the UI thread; the Run panel's view follows its end") {
  TempDir tmp;
  const std::string path = tmp.file("live.db");
  constexpr std::int64_t kSteps = 200;
  std::atomic<std::int64_t> written{-1};
  std::atomic<bool> opened{false};
  std::thread writer([&] {
    long_run::Run r(path, {.steps = kSteps,
                           .windows = {{0, 4, gb::trace::DetailReason::first},
                                       {100, 101, gb::trace::DetailReason::periodic},
                                       {197, 199, gb::trace::DetailReason::end}},
                           .anomalies = {120}});
    for (std::int64_t s = 0; s < kSteps; ++s) {
      r.step(s);
      r.writer().flush();
      written = s;
      if (s == 9)
        for (int i = 0; i < 1000 && !opened; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    r.finish();
  });
  for (int i = 0; i < 2000 && written < 9; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ImGuiHeadless imgui;
  App app(/*remember_recent=*/false);
  app.open(path);
  opened = true;
  REQUIRE(app.error().empty());
  TraceModel& m = *app.model();
  CHECK(m.live().following);
  m.wait_loaded();
  std::int64_t statements = frames(app, 3);
  for (int p = 0; p < static_cast<int>(Panel::count); ++p) {  // every panel while the file grows
    app.show(static_cast<Panel>(p));
    statements += frames(app, 4);
  }
  app.show(Panel::run);
  const RunData& r = m.run().data();
  auto frames_until = [&](auto done) {
    for (int i = 0; i < 4000 && !done(); ++i) statements += frames(app, 1);
  };
  auto last = [&] { return static_cast<double>(r.steps.back()) + 1; };
  frames_until([&] { return r.size() >= 60; });
  panels::RunState& st = app.run_state();
  CHECK(st.s0 == 0);  // the whole run, growing with it
  CHECK(st.s1 == last());
  st.s1 = last(), st.s0 = st.s1 - 20;  // zoomed in at the end: the same width, following the newest step
  const std::size_t n = r.size();
  frames_until([&] { return r.size() >= n + 10; });
  statements += frames(app, 1);
  CHECK(st.s1 == last());
  CHECK(st.s1 - st.s0 == doctest::Approx(20));
  st.s0 = 10, st.s1 = 30;  // looking back: the view stays
  const std::size_t n2 = r.size();
  frames_until([&] { return r.size() >= n2 + 10; });
  CHECK(st.s0 == 10);
  CHECK(st.s1 == 30);
  CHECK(m.live().text().rfind("live: ", 0) == 0);
  frames_until([&] { return m.live().ended; });
  writer.join();
  CHECK(statements == 0);
  CHECK(m.live().text() == "ended: exit");
  CHECK(r.size() == static_cast<std::size_t>(kSteps));
  CHECK(m.anomalies().size() == 1);
  CHECK(m.detail().windows.size() == 3);
  // A window written after the open: Memory says its events come with a reload; the panel's Reload (as F5) reads
  // the finished file whole, keeps the view, and follows nothing.
  app.view().step = 100;
  app.show(Panel::memory);
  CHECK(frames(app, 3) == 0);
  CHECK(m.detail_after_open(100));
  CHECK(m.memory().has_data());
  app.view().reload = true;  // what the notice's button sets
  frames(app, 1);            // the reload (an open: its statements are not a frame's)
  REQUIRE(app.model());
  CHECK(app.view().step == 100);
  CHECK_FALSE(app.view().reload);
  app.model()->wait_loaded();
  CHECK(frames(app, 3) == 0);
  CHECK_FALSE(app.model()->detail_after_open(100));
  CHECK_FALSE(app.model()->live().following);
  CHECK(app.model()->live().text().empty());
  CHECK(app.model()->run().data().size() == static_cast<std::size_t>(kSteps));
}

TEST_CASE("open A, select a span, open B, select the same id: the details pane shows B's span") {
  // Two traces whose span ids coincide but whose spans differ (other widths, so other input shapes).
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  gb::tools::write_synthetic_trace(a, {.steps = 2, .layers = 2, .ops_per_layer = 1, .batch = 64, .width = 32});
  gb::tools::write_synthetic_trace(b, {.steps = 2, .layers = 2, .ops_per_layer = 1, .batch = 16, .width = 8});
  gb::trace::Id id = 0;
  {
    const gb::trace::Reader r(a);
    for (const gb::trace::SpanRecord& s : r.all<gb::trace::SpanRecord>())
      if (!id && s.kind == gb::trace::SpanKind::op && r.string(s.name_id) == "matmul") id = s.id;
  }
  REQUIRE(id != 0);
  ImGuiHeadless imgui;
  App app(/*remember_recent=*/false);
  auto details_shown = [&] {
    app.show(Panel::timeline);
    app.view().span = id;
    CHECK(frames(app, 3) == 0);  // the pane asks; the query worker answers between frames
    app.model()->wait_queries();
    CHECK(frames(app, 2) == 0);
    return app.model()->timeline().details(id);  // what the pane drew from: kept by the model it asked
  };
  app.open(a);
  REQUIRE(app.error().empty());
  const auto da = details_shown();
  REQUIRE(da);
  CHECK(da->shapes == "[[64, 32], [32, 32]]");
  app.open(b);
  REQUIRE(app.error().empty());
  const auto db = details_shown();
  REQUIRE(db);
  CHECK(db->span.id == id);
  CHECK(db->shapes == "[[16, 8], [8, 8]]");  // B's span, not A's kept answer
}
