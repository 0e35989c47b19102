// viewer/view_state.h — what the panels share: the visible time window, the selection, and requests between panels
// (an anomaly asks the timeline to show its span). Panels read and write it; the App owns it across refreshes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "traces/records.h"

namespace gb::viewer {

enum class Panel : int { timeline, memory, ops, anomalies, gradients, dataloader, graph, count };

constexpr const char* kPanelNames[] = {"timeline", "memory", "ops", "anomalies", "gradients", "dataloader", "graph"};
constexpr const char* kPanelTitles[] = {"Timeline", "Memory", "Ops", "Anomalies", "Gradients", "Data loader",
                                        "Autograd graph"};

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
  bool graph_by_saved = false;
  bool show_oom = false;                // the OOM report window is open          // graph nodes coloured by saved bytes (else by backward time)
  std::optional<Panel> show;            // switch to this panel on the next frame

  // Shows [a, b] with a margin of `pad` of its width on each side.
  void focus(std::int64_t a, std::int64_t b, double pad = 0.05) {
    const auto w = std::max<std::int64_t>(b - a, 1000);
    const auto m = static_cast<std::int64_t>(static_cast<double>(w) * pad);
    t0 = a - m;
    t1 = a + w + m;
  }
};

}  // namespace gb::viewer
