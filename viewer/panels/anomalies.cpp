// viewer/panels/anomalies.cpp — the anomalies of the run (severity, step, kind, module, param, op, message), alarms
// the monitor linked shown as chains (TraceModel::anomaly_order): the root cause, under it the alarms that followed
// from it, one step in per link, each with the evidence of its link; an arrow folds a chain to its root. Selecting
// any row, a link of a chain as well, moves every view to it: the timeline to its span, the memory cursor to its
// moment, the gradients to its parameter and step.
#include <algorithm>
#include <cinttypes>
#include <string_view>
#include <vector>

#include "traces/query/format.h"
#include "traces/schema.h"
#include "viewer/colors.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {

constexpr int kMaxIndent = 6;  // links deeper than this are drawn at this depth (the "->" still says they follow)

void jump(ViewState& v, const AnomalyRow& a) {
  const auto& r = a.record;
  v.cursor = r.t_ns;
  v.step = r.step;
  v.param = r.param_id;
  v.span = r.span_id;
  v.focus(r.t_ns - 500'000, r.t_ns + 500'000);  // the moment; its span's own extent once read (ViewState::jump)
  if (r.span_id) v.jump = ViewState::Jump{*r.span_id, 3.0};
  v.show = Panel::timeline;
}

void colored_wrapped(color::Rgb c, const char* prefix, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, plot::to_imgui(c));
  ImGui::TextWrapped("%s%s", prefix, text.c_str());
  ImGui::PopStyleColor();
}

// The Kind cell: indented by depth; a fold arrow on a row with consequences (its room kept empty on a link without
// any, so every "->" of one depth lines up); "->" on a consequence. An alarm in no chain: the kind alone, as before.
void kind_cell(const gb::query::ChainRow& c, const AnomalyRow& a, AnomaliesState& s) {
  const float step = ImGui::GetFontSize() * 0.8f;
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + step * static_cast<float>(std::min(c.depth, kMaxIndent)));
  if (c.below == 0 && c.depth > 0) {
    ImGui::Dummy(ImVec2(ImGui::GetFontSize(), ImGui::GetFontSize()));  // the arrow's room (FramePadding 0: square)
    ImGui::SameLine();
  } else if (c.below > 0) {
    const bool folded = s.collapsed.contains(a.record.id);
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(0, 0));
    if (ImGui::ArrowButton("##fold", folded ? ImGuiDir_Right : ImGuiDir_Down)) {
      if (folded)
        s.collapsed.erase(a.record.id);
      else
        s.collapsed.insert(a.record.id);
    }
    ImGui::PopStyleVar();
    ImGui::SameLine();
  }
  if (c.depth > 0) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(plot::to_imgui(color::kCauseLink)), "->");
    ImGui::SameLine();
  }
  const std::string_view kind = gb::trace::name(a.record.kind);  // "unknown" for a kind newer than this viewer
  ImGui::TextUnformatted(kind.data(), kind.data() + kind.size());
}

}  // namespace

void anomalies(TraceModel& m, ViewState& v, PanelState& s) {
  const auto& rows = m.anomalies();
  const auto& order = m.anomaly_order();
  std::size_t linked = 0;
  for (const gb::query::ChainRow& c : order)
    if (c.depth == 0 && c.below > 0) linked += c.below + 1;
  if (m.anomaly_chains() > 0)
    ImGui::Text("%zu anomalies, %zu of them linked in %zu chain%s (a root cause, then what followed from it)",
                rows.size(), linked, m.anomaly_chains(), m.anomaly_chains() == 1 ? "" : "s");
  else
    ImGui::Text("%zu anomalies", rows.size());
  ImGui::SameLine();
  plot::help_marker(
      "What the monitors flagged at step ends: the first non-finite value in the forward or the "
      "backward (with the op and module that produced it), a non-finite loss, exploding or vanishing "
      "gradient norms, loss spikes, updates too large for their parameter (learning rate too high), "
      "ReLUs whose outputs stay zero, skipped AMP steps and a collapsing loss scale, a backward that "
      "accumulated into gradients an optimizer step had already used (missing zero_grad), gradients that "
      "shrink or grow with depth, parameters that never get a gradient, memory that grows across steps.\n"
      "When the evidence links alarms, they form a chain: the root cause first, under it the alarms that "
      "followed from it (\"->\", one step in per link), each with the evidence of its link (\"because: ...\"). "
      "The arrow folds a chain to its root. Alarms nothing links stand alone, in time order.\n"
      "Click a row, any link of a chain too, to jump: the timeline shows its span, the memory view its "
      "moment, the gradients view its parameter and step.");
  if (rows.empty()) {
    plot::empty_state("No anomalies in this trace.",
                      "Either the run was healthy, or it ran without the monitors: they run at each step end when "
                      "tracing is on (GLASSBOX_TRACE=run.db) and the training loop marks steps (gb::trace::StepScope).");
    return;
  }
  // The rows shown: the chain order, less what a folded link hides.
  std::vector<std::size_t> shown;
  shown.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    shown.push_back(i);
    if (order[i].below > 0 && s.anomalies.collapsed.contains(rows[order[i].row].record.id)) i += order[i].below;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("##anomalies", 8, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Time", ImGuiTableColumnFlags_WidthFixed, 90);
  ImGui::TableSetupColumn("Step", ImGuiTableColumnFlags_WidthFixed, 50);
  ImGui::TableSetupColumn("Severity", ImGuiTableColumnFlags_WidthFixed, 70);
  ImGui::TableSetupColumn("Kind", ImGuiTableColumnFlags_WidthFixed, m.anomaly_chains() > 0 ? 200 : 150);
  ImGui::TableSetupColumn("Module", ImGuiTableColumnFlags_WidthFixed, 90);
  ImGui::TableSetupColumn("Param", ImGuiTableColumnFlags_WidthFixed, 130);
  ImGui::TableSetupColumn("Op", ImGuiTableColumnFlags_WidthFixed, 140);
  ImGui::TableSetupColumn("Message", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(shown.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const gb::query::ChainRow& c = order[shown[static_cast<std::size_t>(i)]];
      const AnomalyRow& a = rows[c.row];
      const auto& r = a.record;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(static_cast<int>(c.row));
      const bool selected = v.cursor == r.t_ns && v.span == r.span_id;
      // The fold arrow, drawn over the row later, takes its own clicks (AllowItemOverlap).
      if (ImGui::Selectable(gb::query::format_time(static_cast<double>(r.t_ns)).c_str(), selected,
                            ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
        jump(v, a);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.step ? std::to_string(*r.step).c_str() : "-");
      ImGui::TableNextColumn();
      const int sev = std::clamp(static_cast<int>(r.severity), 0, 2);
      const std::string_view severity = gb::trace::name(static_cast<gb::trace::Severity>(sev));
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(plot::to_imgui(color::kSeverity[sev])), "%.*s",
                         static_cast<int>(severity.size()), severity.data());
      ImGui::TableNextColumn();
      kind_cell(c, a, s.anomalies);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.module.empty() ? "-" : a.module.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.param.empty() ? "-" : a.param.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.span.empty() ? "-" : a.span.c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", r.message.c_str());
      if (c.depth > 0)
        colored_wrapped(color::kCauseLink, "because: ", r.cause.empty() ? "(no evidence stored)" : r.cause);
      else if (c.below > 0)
        colored_wrapped(color::kCauseLink, "",
                        "root cause of the " + std::to_string(c.below) + (c.below == 1 ? " alarm" : " alarms") +
                            (s.anomalies.collapsed.contains(r.id) ? " folded under it (the arrow opens them)"
                                                                  : " below"));
      ImGui::PopID();
    }
  ImGui::EndTable();
}

}  // namespace gb::viewer::panels
