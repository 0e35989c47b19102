// viewer/panels/panels.h — one function per panel, each in its own file; they draw into the current ImGui window
// from TraceModel answers and the shared ViewState, and never query the trace themselves. Each has an empty state
// and a help marker. What a panel remembers between frames beyond the ViewState (widget contents, a drag in
// progress) lives in its member of PanelState, which the App owns: no panel keeps state in globals, so two Apps
// (or a test's fresh one) never share it.
#pragma once

#include <imgui.h>

#include <optional>
#include <set>
#include <string>

#include "viewer/plot.h"
#include "viewer/trace_model.h"
#include "viewer/view_state.h"

namespace gb::viewer::panels {

struct TimelineState {
  char search_buf[256] = {};   // the search box
  std::string search_shown;    // what search_buf was last synced to, so a --search or a refresh shows in the box
  std::optional<float> range_from;  // shift+drag: the pixel where it started
};
struct OpsState {
  int kind = 0;  // gb::trace::SpanKind of the table
  ImGuiTextFilter filter;
};
struct AnomaliesState {
  std::set<gb::trace::Id> collapsed;  // the chains folded to their root (the root's anomalies.id); open by default
};
struct DataloaderState {
  TimelineItem hovered;  // the lane item under the mouse (the lanes' items are rebuilt each frame)
};
// The Run panel's curves reduced to pixel columns, kept while the view (run, compare run, steps, width) stays.
struct RunColumns {
  std::uint64_t run = 0, run_b = 0;  // RunData::serial of this run and of the compare run (0: none)
  double s0 = 0, s1 = 0;
  int px = 0;
  std::vector<std::vector<plot::Column>> series;               // by RunSeries
  std::vector<std::vector<plot::Column>> allocated, reserved;  // by device (RunData::devices)
  std::vector<plot::Column> b_loss, b_step;                    // the compare trace's
};
struct RunState {
  double s0 = 0, s1 = 0;                  // the visible steps [s0, s1)
  std::uint64_t fitted = 0;               // RunData::serial the range was last fitted to (0: never: fit the run)
  double lo = 0, hi = 0;                  // the run's steps [lo, hi) at that fit: a view reaching hi follows growth
  bool log_loss = true, log_grad = true;  // log-scaled loss and gradient-norm plots
  bool tokens = false;                    // throughput in tokens/s (else samples/s)
  float press_x = 0;                      // where the left button went down (a click selects, a drag pans)
  RunColumns columns;
};
struct PanelState {
  RunState run;
  TimelineState timeline;
  OpsState ops;
  AnomaliesState anomalies;
  DataloaderState dataloader;
};

void run(TraceModel& m, ViewState& v, PanelState& s);
// The live indicator (menu bar, Run panel header): "live: N steps, last new step X s ago" (color::kLive), how the
// followed run ended (kLiveEnded, kWriterDied), nothing for a finished trace. True when it drew.
bool live_indicator(const TraceModel& m);
void timeline(TraceModel& m, ViewState& v, PanelState& s);
void memory(TraceModel& m, ViewState& v, PanelState& s);
void ops(TraceModel& m, ViewState& v, PanelState& s);
void anomalies(TraceModel& m, ViewState& v, PanelState& s);
void gradients(TraceModel& m, ViewState& v, PanelState& s);
void dataloader(TraceModel& m, ViewState& v, PanelState& s);
void graph(TraceModel& m, ViewState& v, PanelState& s);
void compare(TraceModel& m, ViewState& v, PanelState& s);

// Shared by the timeline and the data-loader lanes: draws the items of one track into rows of `row_h` pixels
// from y; returns the item under the mouse, if any. Only items with `keep(item)` are drawn.
const TimelineItem* draw_items(const std::vector<TimelineItem>& items, const TraceModel& m, const ViewState& v,
                               float x0, float x1, float y, float row_h, bool (*keep)(const TimelineItem&) = nullptr);
void span_tooltip(TraceModel& m, const TimelineItem& it);
// The Timeline, Memory and Autograd graph panels, when the selected step has no detail (a long run's step outside
// every detail window): "step N has no detail (summary only); nearest steps with detail: A and B" with a button to
// go to each (selects it and shows its time). Returns true when it drew that (the panel shows nothing else).
bool no_detail_notice(TraceModel& m, ViewState& v);
// The Memory and Autograd graph panels, when the selected step's detail window was written after the file was
// opened (followed live: TraceModel::detail_after_open): its `what` are read at open only, so a notice and a
// Reload button (ViewState::reload, as F5: the view is kept). True when it drew (the panel draws nothing else).
bool written_after_open_notice(TraceModel& m, ViewState& v, const char* what);
// Selects step s and, when it has detail, shows its time in the timeline and memory views.
void go_to_step(TraceModel& m, ViewState& v, std::int64_t s);

}  // namespace gb::viewer::panels
