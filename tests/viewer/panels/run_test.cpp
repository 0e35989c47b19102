// tests/viewer/panels/run_test.cpp — the Run panel headless on a long synthetic run: the loss curve in the loss
// plot (the top one) across the width, the anomaly markers on it in the severity colours, the detail windows' band
// under the plots (policy windows and the flight recorder's), the compare trace's loss overlaid with --compare; an
// ordinary trace's band covers every step; a trace without steps shows the empty state; the live indicator of a
// trace being written, and of one whose writer died.
#include "viewer/screenshot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "traces/query/trace_db.h"
#include "traces/writer.h"
#include "viewer/colors.h"

using namespace gb::viewer;

TEST_CASE("run screenshot: the loss curve, the anomaly markers on it, the detail windows' band under the plots") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string path = tmp.file("long.db"), other = tmp.file("other.db");
  gb::tools::SynthOptions o;
  o.long_steps = 20'000;
  o.layers = 2;
  const gb::tools::SynthResult r = gb::tools::write_synthetic_trace(path, o);
  o.seed = 9;
  o.nan_step = 5'000;
  gb::tools::write_synthetic_trace(other, o);
  auto shot = shot::take(path, "run", tmp.file("run.png"), "1280x800");
  auto cmp = shot::take(path, "run", tmp.file("cmp.png"), "1280x800", "--compare '" + other + "'");
  REQUIRE(shot);
  REQUIRE(cmp);
  const shot::Png& p = *shot;

  // The loss: many pixels, across the plots' width, in the top plot (above the learning rate's).
  CHECK(p.count(color::kRunLoss) > 2000);
  const auto loss = p.bbox(color::kRunLoss), lr = p.bbox(color::kRunLr), grad = p.bbox(color::kRunGradNorm);
  REQUIRE(loss[0] >= 0);
  REQUIRE(lr[0] >= 0);
  REQUIRE(grad[0] >= 0);
  CHECK(loss[2] - loss[0] > p.width * 3 / 4);
  CHECK(loss[3] < lr[1]);                       // the loss plot is above the learning rate's
  CHECK(lr[3] < grad[1]);                       // which is above the gradient norm's
  CHECK(p.count(color::kLive, 30, 0, 80) == 0);  // a finished trace: no live indicator
  CHECK(p.count(color::kRunPhase[1]) > 500);    // the stacked step time: forward
  CHECK(p.count(color::kRunPhase[2]) > 500);    // backward
  CHECK(p.count(color::kAllocatedLine) > 500);  // peak memory
  // The anomalies: the error (nonfinite_backward) and warning markers at the spike (3/4 of the run), inside the
  // loss plot's rows.
  const auto err = p.bbox(color::kSeverity[2]);
  REQUIRE(err[0] >= 0);
  CHECK(p.count(color::kSeverity[2]) > 15);
  CHECK(err[3] < lr[1]);
  const double at = static_cast<double>(r.spike_step) / 20'000;
  const double frac = (0.5 * (err[0] + err[2]) - loss[0]) / (loss[2] - loss[0]);
  CHECK(frac == doctest::Approx(at).epsilon(0.02));
  // The detail windows: a band below every plot, the policy's windows and the recorder's (anomaly, end).
  CHECK(p.count(color::kDetailWindow) > 200);
  CHECK(p.count(color::kDetailRecorder) >= 20);  // two windows of 16 steps: a pixel wide each
  const auto band = p.bbox(color::kDetailWindow), rec = p.bbox(color::kDetailRecorder);
  CHECK(band[1] > grad[3]);
  CHECK(band[3] - band[1] < 14);  // a thin band
  CHECK(rec[1] == band[1]);
  CHECK(rec[2] > p.width - 40);  // the end window, at the right edge
  // No compare trace: no B colour; with one: B's loss (and step time) overlaid, in the loss plot too.
  CHECK(p.count(color::kCompareB) == 0);
  CHECK(cmp->count(color::kCompareB) > 1000);
  CHECK(cmp->bbox(color::kCompareB)[1] < cmp->bbox(color::kRunLr)[1]);
}

TEST_CASE("run screenshot: an ordinary trace's band covers every step; a trace without steps shows its empty state") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string path = tmp.file("short.db"), none = tmp.file("none.db");
  gb::tools::write_synthetic_trace(path, {.steps = 12, .layers = 2});
  {
    gb::trace::Writer w(none);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
    w.close();
  }
  auto a = shot::take(path, "run", tmp.file("a.png"), "1280x800");
  auto b = shot::take(none, "run", tmp.file("b.png"), "1280x800");
  REQUIRE(a);
  REQUIRE(b);
  const auto band = a->bbox(color::kDetailWindow);
  REQUIRE(band[0] >= 0);
  CHECK(band[2] - band[0] > a->width * 3 / 4);  // every step has detail
  CHECK(a->count(color::kDetailRecorder) == 0);
  CHECK(a->count(color::kRunLoss) > 100);
  CHECK(a->count(color::kRunPhase[1]) > 50);  // no time split: the step time in the forward colour
  for (color::Rgb c : {color::kRunLoss, color::kRunLr, color::kDetailWindow}) CHECK(b->count(c) == 0);
}

TEST_CASE("a long run's step without detail: Timeline, Memory and Autograd graph say so instead of drawing") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  gb::tools::SynthOptions o;
  o.long_steps = 3'000;
  o.layers = 2;
  gb::tools::write_synthetic_trace(path, o);
  const color::Rgb op = color::span_kind(gb::trace::SpanKind::op);
  const color::Rgb activation = color::category(gb::trace::MemCategory::activation);
  // Step 1002 has detail (the window 1000..1004), step 1500 has not.
  auto tl_with = shot::take(path, "timeline", tmp.file("tl_with.png"), "1280x800", "--step 1002");
  // Step 1500 selected while the window shows an op of step 1002 (a selected span is focused): only the notice.
  const std::int64_t span =
      gb::query::TraceDb(path).scalar("SELECT id FROM spans WHERE kind = 0 AND step = 1002 LIMIT 1");
  REQUIRE(span != 0);
  auto tl_without = shot::take(path, "timeline", tmp.file("tl_without.png"), "1280x800",
                               "--step 1500 --select span:" + std::to_string(span));
  auto mem_with = shot::take(path, "memory", tmp.file("mem_with.png"), "1280x800", "--step 1002");
  auto mem_without = shot::take(path, "memory", tmp.file("mem_without.png"), "1280x800", "--step 1500");
  REQUIRE(tl_with);
  REQUIRE(tl_without);
  REQUIRE(mem_with);
  REQUIRE(mem_without);
  const int below_legend = 110;
  CHECK(tl_with->count(op, 0, below_legend) > 500);
  CHECK(tl_without->count(op, 0, below_legend) == 0);
  CHECK(mem_with->count(activation, 0, below_legend) > 500);
  CHECK(mem_without->count(activation, 0, below_legend) == 0);
}

TEST_CASE("run screenshot of a trace being written: the live indicator; a dead writer's") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string live = tmp.file("live.db"), dead = tmp.file("dead.db");
  auto write = [](const std::string& path, const std::string& pid, std::int64_t steps) {
    auto w = std::make_unique<gb::trace::Writer>(path);
    w->set_meta("command", "./train --steps 1000");
    w->set_meta("pid", pid);
    for (std::int64_t s = 0; s < steps; ++s) {
      gb::trace::StepRecord r;
      r.step = s, r.start_ns = s * 1'000'000, r.end_ns = r.start_ns + 1'000'000, r.loss = 2.0 / (1 + s);
      w->add(r);
    }
    w->flush();  // committed, not closed: as the run being written leaves it
    return w;
  };
  const auto writing = write(live, std::to_string(::getpid()), 50);  // this process: alive while the shot runs
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  ::waitpid(child, nullptr, 0);
  const auto dying = write(dead, std::to_string(child), 30);  // as a killed run leaves it (closed after the shots)
  auto a = shot::take(live, "run", tmp.file("live.png"), "1280x600");
  auto b = shot::take(dead, "run", tmp.file("dead.png"), "1280x600");
  REQUIRE(a);
  REQUIRE(b);
  // the text in the menu bar and the panel's header, in its colour (anti-aliased edges: a tolerance)
  CHECK(a->count(color::kLive, 30, 0, 80) > 60);
  CHECK(a->count(color::kWriterDied, 30, 0, 80) == 0);
  CHECK(b->count(color::kWriterDied, 30, 0, 80) > 60);
  CHECK(b->count(color::kLive, 30, 0, 80) == 0);
  CHECK(a->count(color::kRunLoss) > 200);  // the curve of the steps so far
}
