// tests/viewer/panels/real_trace_test.cpp — the viewer on a trace written by the real probe pipeline (not synth):
// gb::trace::Session, StepScope, GB_TRACE_SPAN on the main thread and a named data-loader worker, and memory
// events through emit(). TraceModel must find a track per thread with its spans, and the timeline screenshot
// must show the kinds' colours.
#include "viewer/screenshot.h"

#include <chrono>
#include <thread>

#include "instrument/probe.h"
#include "instrument/session.h"
#include "viewer/colors.h"
#include "viewer/trace_model.h"

using namespace gb::viewer;
using namespace gb::trace;

namespace {

void busy(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Three steps: forward (module > op), backward (backward_node), with a data-loader worker fetching alongside.
void write_real_trace(const std::string& path) {
  Session s(path);
  REQUIRE(s.active());
  std::thread worker([] {
    set_thread_name("worker 0", ThreadRole::dataloader_worker);
    for (int i = 0; i < 3; ++i) {
      GB_TRACE_SPAN(SpanKind::dataloader, "fetch");
      busy(6);
    }
  });
  std::int64_t allocated = 0;
  for (int i = 0; i < 3; ++i) {
    StepScope step(i);
    {
      GB_TRACE_SPAN(SpanKind::module, "layer");
      for (int k = 0; k < 2; ++k) {
        GB_TRACE_SPAN(SpanKind::op, "matmul");
        allocated += 1 << 20;
        emit(MemoryEventRecord{.action = MemAction::alloc, .addr = 4096 + allocated, .size = 1 << 20,
                               .requested = 1 << 20, .category = MemCategory::activation, .allocated = allocated,
                               .reserved = 64 << 20});
        busy(2);
      }
    }
    {
      GB_TRACE_SPAN(SpanKind::backward_node, "MmBackward0");
      busy(3);
    }
    step.set_loss(1.0 / (i + 1));
  }
  worker.join();
}

}  // namespace

TEST_CASE("a trace from the probe pipeline: tracks per thread, and the timeline shows the span kinds") {
#ifdef GLASSBOX_NO_PROBES
  MESSAGE("skipped: built with -DGLASSBOX_PROBES=OFF, the probes write nothing");
  return;
#endif
  TempDir tmp;
  const std::string path = tmp.file("real.db");
  write_real_trace(path);
  {
    TraceModel m(path, {.background = false});
    REQUIRE(m.tracks().size() >= 2);
    bool main = false, worker = false;
    for (const Track& t : m.tracks()) {
      CAPTURE(t.name);
      const auto& items = m.timeline().exact(t.thread_id, m.begin_ns(), m.end_ns(), 0);
      if (t.name == "main") {
        main = true;
        CHECK(t.spans == 3 * (1 + 1 + 2 + 1));  // step, module, 2 ops, backward node
        CHECK(static_cast<std::int64_t>(items.size()) == t.spans);
      }
      if (t.name == "worker 0") {
        worker = true;
        CHECK(t.role == ThreadRole::dataloader_worker);
        CHECK(t.spans == 3);
        CHECK(items.size() == 3);
      }
    }
    CHECK(main);
    CHECK(worker);
    CHECK(m.steps().size() == 3);
    CHECK(m.memory().events() == 6);
  }
  SKIP_WITHOUT_XVFB();
  auto png = shot::take(path, "timeline", tmp.file("real.png"), "1200x760");
  REQUIRE(png);
  for (SpanKind k : {SpanKind::step, SpanKind::module, SpanKind::op, SpanKind::backward_node, SpanKind::dataloader})
    CHECK_MESSAGE(png->count(color::span_kind(k), 0, 150) > 200, "kind " << int(k));
  // The worker's fetches sit on their own track, below main's rows.
  const auto main_steps = png->bbox(color::span_kind(SpanKind::step), 150);
  const auto fetches = png->bbox(color::span_kind(SpanKind::dataloader), 150);
  REQUIRE(main_steps[0] >= 0);
  REQUIRE(fetches[0] >= 0);
  CHECK(fetches[1] > main_steps[3]);
}
