// viewer/panels/panels.h — one function per panel, each in its own file; they draw into the current ImGui window
// from TraceModel answers and the shared ViewState, and never query the trace themselves. Each has an empty state
// and a help marker.
#pragma once

#include "viewer/trace_model.h"
#include "viewer/view_state.h"

namespace gb::viewer::panels {

void timeline(TraceModel& m, ViewState& v);
void memory(TraceModel& m, ViewState& v);
void ops(TraceModel& m, ViewState& v);
void anomalies(TraceModel& m, ViewState& v);
void gradients(TraceModel& m, ViewState& v);
void dataloader(TraceModel& m, ViewState& v);
void graph(TraceModel& m, ViewState& v);
void compare(TraceModel& m, ViewState& v);

// Shared by the timeline and the data-loader lanes: draws the items of one track into rows of `row_h` pixels
// from y; returns the item under the mouse, if any. Only items with `keep(item)` are drawn.
const TimelineItem* draw_items(const std::vector<TimelineItem>& items, const TraceModel& m, const ViewState& v,
                               float x0, float x1, float y, float row_h, bool (*keep)(const TimelineItem&) = nullptr);
void span_tooltip(const TraceModel& m, const TimelineItem& it);

}  // namespace gb::viewer::panels
