// viewer/view_state.h — what the panels share: the visible time window, the selection, and requests between panels
// (an anomaly asks the timeline to show its span). Panels read and write it; the App owns it across refreshes.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "traces/records.h"

namespace gb::viewer {

enum class Panel : int { run, timeline, memory, ops, anomalies, gradients, dataloader, graph, compare, count };

constexpr const char* kPanelNames[] = {"run",       "timeline",   "memory", "ops",    "anomalies",
                                       "gradients", "dataloader", "graph",  "compare"};
constexpr const char* kPanelTitles[] = {"Run",       "Timeline",    "Memory",         "Ops",    "Anomalies",
                                        "Gradients", "Data loader", "Autograd graph", "Compare"};

inline std::optional<Panel> parse_panel(std::string_view name) {
  for (int i = 0; i < static_cast<int>(Panel::count); ++i)
    if (name == kPanelNames[i]) return static_cast<Panel>(i);
  return std::nullopt;
}

struct ViewState {
  std::int64_t t0 = 0, t1 = 1;  // the visible window of the timeline, memory and data-loader views, ns
  std::optional<gb::trace::Id> span;    // the selected span
  std::optional<std::int64_t> cursor;   // a moment chosen in the memory view, ns
  std::optional<std::int64_t> step;     // the selected step
  std::optional<gb::trace::Id> param;   // the selected parameter (gradients)
  std::optional<gb::trace::Id> node;    // the selected autograd graph node (graph_nodes.id)
  bool graph_by_saved = false;         // graph nodes coloured by saved bytes (else by backward time)
  bool ops_flame = false;               // the Ops panel shows the flame view (else the table)
  bool show_oom = false;                // the OOM report window is open
  std::optional<Panel> show;            // switch to this panel on the next frame
  bool reload = false;                  // reopen the file at the next frame, keeping the view (as F5)
  std::string search;                   // the timeline's span search ("" = none)
  // Focus the timeline on this span (its width padded by `pad` on each side) once its row is read: the App asks
  // TimelineModel::span (m.timeline().span(id)) each frame until it is in (an unknown id drops the jump).
  struct Jump {
    gb::trace::Id span = 0;
    double pad = 0.05;
  };
  std::optional<Jump> jump;

  // Shows [a, b] with a margin of `pad` of its width on each side.
  void focus(std::int64_t a, std::int64_t b, double pad = 0.05) {
    const auto w = std::max<std::int64_t>(b - a, 1000);
    const auto m = static_cast<std::int64_t>(static_cast<double>(w) * pad);
    t0 = a - m;
    t1 = a + w + m;
  }
  // The time under pixel x of a view drawn over pixels [x0, x1].
  std::int64_t time_at(float x, float x0, float x1) const {
    const double f = x1 > x0 ? (static_cast<double>(x) - x0) / (static_cast<double>(x1) - x0) : 0.0;
    return t0 + static_cast<std::int64_t>(std::llround(f * static_cast<double>(t1 - t0)));
  }
  // Zoom to selection (Z): the span [a, b] with `pad` of its width each side (at least 1 us wide).
  void zoom_to(std::int64_t a, std::int64_t b, double pad = 0.1) { focus(a, b, pad); }
  // Shift+drag: zooms to the times under pixels xa..xb (either order) of a view over [x0, x1], exactly (no
  // margin, clamped to the view, at least 100 ns). A drag under 3 px changes nothing and answers false.
  bool zoom_to_pixels(float xa, float xb, float x0, float x1) {
    if (xa > xb) std::swap(xa, xb);
    xa = std::max(xa, x0), xb = std::min(xb, x1);
    if (xb - xa < 3) return false;
    const std::int64_t a = time_at(xa, x0, x1), b = time_at(xb, x0, x1);
    t0 = a, t1 = std::max(b, a + 100);
    return true;
  }
};

}  // namespace gb::viewer
