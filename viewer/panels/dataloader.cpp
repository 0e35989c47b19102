// viewer/panels/dataloader.cpp — how long training waited for data: the wait share of each step as bars, and the
// lanes of the visible window (the main thread's waits, each worker's fetch and collate).
#include <algorithm>
#include <cinttypes>

#include "traces/query/format.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {
bool is_dataloader(const TimelineItem& it) { return it.span.kind == gb::trace::SpanKind::dataloader; }
}  // namespace

void dataloader(TraceModel& m, ViewState& v, PanelState& state) {
  const gb::query::DataLoaderSummary& s = m.dataloader_summary();
  ImGui::Text("Data loading");
  ImGui::SameLine();
  plot::help_marker("Top: the share of each step the training thread spent waiting for its batch (the `wait` "
                    "spans). Bottom: the visible window's lanes: the training thread's waits and each worker's "
                    "fetch / collate / pin spans. Waits that line up with long fetches mean the workers are too "
                    "few or too slow: raise num_workers or make the dataset's __getitem__ cheaper.\n"
                    "Click a bar to show that step in the lanes; drag and wheel pan and zoom the lanes.");
  if (m.dataloader_loading()) {
    plot::empty_state("Loading the data-loader spans...", "They are summed once, in the background.");
    return;
  }
  if (s.spans == 0) {
    plot::empty_state("This trace has no data-loader spans.",
                      "The DataLoader writes fetch, collate, pin and wait spans when it is traced: iterate a "
                      "gb::data::DataLoader in a run with GLASSBOX_TRACE=run.db, or try `glassbox synth run.db`.");
    return;
  }
  ImGui::SameLine(0, 20);
  ImGui::TextDisabled("waiting for data took %s of step time (%s of %s)", gb::query::format_share(static_cast<double>(s.wait_ns), s.step_total_ns).c_str(),
                      gb::query::format_time(static_cast<double>(s.wait_ns)).c_str(), gb::query::format_time(s.step_total_ns).c_str());

  const auto& waits = m.step_waits();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float label_w = 150, bars_h = std::min(180.0f, avail.y * 0.35f);
  const ImVec2 p0(origin.x + label_w, origin.y + 6), p1(origin.x + avail.x - 8, origin.y + 6 + bars_h);
  dl->AddRectFilled(p0, p1, IM_COL32(255, 255, 255, 10));
  dl->AddText(ImVec2(origin.x + 4, p0.y), ImGui::GetColorU32(ImGuiCol_Text), "wait share");
  dl->AddText(ImVec2(origin.x + 4, p0.y + 18), ImGui::GetColorU32(ImGuiCol_TextDisabled), "per step, 0..100%");
  for (double f : {0.25, 0.5, 0.75}) {
    const float y = p1.y - static_cast<float>(f) * bars_h;
    dl->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), IM_COL32(255, 255, 255, 25));
  }
  if (!waits.empty()) {
    const float bw = (p1.x - p0.x) / static_cast<float>(waits.size());
    for (std::size_t i = 0; i < waits.size(); ++i) {
      const float x = p0.x + bw * static_cast<float>(i), y = p1.y - static_cast<float>(waits[i].share()) * bars_h;
      const bool sel = v.step && *v.step == waits[i].step;
      dl->AddRectFilled(ImVec2(x + (bw > 4 ? 1 : 0), y), ImVec2(std::max(x + 1, x + bw - (bw > 4 ? 1 : 0)), p1.y),
                        plot::to_imgui(sel ? color::kSelection : color::kWait));
    }
    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##bars", ImVec2(p1.x - p0.x, bars_h));
    if (ImGui::IsItemHovered()) {
      const auto i = std::min(waits.size() - 1, static_cast<std::size_t>((ImGui::GetIO().MousePos.x - p0.x) / bw));
      ImGui::SetTooltip("step %" PRId64 ": waited %s of %s (%s)", waits[i].step, gb::query::format_time(static_cast<double>(waits[i].wait_ns)).c_str(),
                        gb::query::format_time(static_cast<double>(waits[i].end_ns - waits[i].start_ns)).c_str(),
                        gb::query::format_share(static_cast<double>(waits[i].wait_ns), static_cast<double>(waits[i].end_ns - waits[i].start_ns)).c_str());
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        v.step = waits[i].step;
        v.focus(waits[i].start_ns, waits[i].end_ns, 0.3);
      }
    }
  }

  // Lanes of the visible window.
  float y = p1.y + 14;
  plot::time_axis(dl, ImVec2(p0.x, y), ImVec2(p1.x, y + 18), v.t0, v.t1);
  y += 24;
  const double ns_per_px = static_cast<double>(v.t1 - v.t0) / std::max(1.0f, p1.x - p0.x);
  const TimelineItem* hovered = nullptr;
  const float lanes_top = y;
  for (const Track& t : m.tracks()) {
    if (t.role != gb::trace::ThreadRole::main && t.role != gb::trace::ThreadRole::dataloader_worker &&
        t.role != gb::trace::ThreadRole::pin_memory)
      continue;
    std::vector<TimelineItem> items;
    for (const TimelineItem& it : m.timeline().window(t.thread_id, v.t0, v.t1, static_cast<std::int64_t>(3 * ns_per_px)))
      if (is_dataloader(it)) items.push_back(it), items.back().depth = 0;
    dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(p1.x, y + 24), IM_COL32(255, 255, 255, 10));
    dl->AddText(ImVec2(origin.x + 6, y + 4), ImGui::GetColorU32(ImGuiCol_Text),
                t.role == gb::trace::ThreadRole::main ? (t.name + " (waits)").c_str() : t.name.c_str());
    if (const TimelineItem* hit = draw_items(items, m, v, p0.x, p1.x, y + 2, 20)) {
      state.dataloader.hovered = *hit;  // items is a local vector
      hovered = &state.dataloader.hovered;
    }
    y += 28;
  }
  ImGui::SetCursorScreenPos(ImVec2(p0.x, lanes_top));
  ImGui::InvisibleButton("##lanes", ImVec2(p1.x - p0.x, std::max(1.0f, y - lanes_top)));
  plot::pan_zoom(v.t0, v.t1, p0.x, p1.x, ImGui::IsItemHovered() || ImGui::IsItemActive());
  if (hovered && ImGui::IsItemHovered()) span_tooltip(m, *hovered);
}

}  // namespace gb::viewer::panels
