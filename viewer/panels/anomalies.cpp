// viewer/panels/anomalies.cpp — the anomalies of the run (severity, step, kind, module, param, op, message);
// selecting one moves every view to it: the timeline to its span, the memory cursor to its moment, the gradients
// to its parameter and step.
#include <algorithm>
#include <cinttypes>
#include <string_view>

#include "traces/query/format.h"
#include "traces/schema.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {
const ImVec4 kSeverityColor[] = {ImVec4(0.6f, 0.75f, 1, 1), ImVec4(1, 0.8f, 0.3f, 1), ImVec4(1, 0.35f, 0.35f, 1)};

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
}  // namespace

void anomalies(TraceModel& m, ViewState& v, PanelState&) {
  const auto& rows = m.anomalies();
  ImGui::Text("%zu anomalies", rows.size());
  ImGui::SameLine();
  plot::help_marker(
      "What the monitors flagged at step ends: the first non-finite value in the forward or the "
      "backward (with the op and module that produced it), a non-finite loss, exploding or vanishing "
      "gradient norms, loss spikes, updates too large for their parameter (learning rate too high), "
      "ReLUs whose outputs stay zero, skipped AMP steps and a collapsing loss scale, a backward that "
      "accumulated into gradients an optimizer step had already used (missing zero_grad), memory that "
      "grows across steps.\n"
      "Click a row to jump: the timeline shows its span, the memory view its moment, the gradients "
      "view its parameter and step.");
  if (rows.empty()) {
    plot::empty_state("No anomalies in this trace.",
                      "Either the run was healthy, or it ran without the monitors: they run at each step end when "
                      "tracing is on (GLASSBOX_TRACE=run.db) and the training loop marks steps (gb::trace::StepScope).");
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("##anomalies", 8, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Time", ImGuiTableColumnFlags_WidthFixed, 90);
  ImGui::TableSetupColumn("Step", ImGuiTableColumnFlags_WidthFixed, 50);
  ImGui::TableSetupColumn("Severity", ImGuiTableColumnFlags_WidthFixed, 70);
  ImGui::TableSetupColumn("Kind", ImGuiTableColumnFlags_WidthFixed, 150);
  ImGui::TableSetupColumn("Module", ImGuiTableColumnFlags_WidthFixed, 90);
  ImGui::TableSetupColumn("Param", ImGuiTableColumnFlags_WidthFixed, 130);
  ImGui::TableSetupColumn("Op", ImGuiTableColumnFlags_WidthFixed, 140);
  ImGui::TableSetupColumn("Message", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(rows.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const AnomalyRow& a = rows[static_cast<std::size_t>(i)];
      const auto& r = a.record;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      const bool selected = v.cursor == r.t_ns && v.span == r.span_id;
      if (ImGui::Selectable(gb::query::format_time(static_cast<double>(r.t_ns)).c_str(), selected,
                            ImGuiSelectableFlags_SpanAllColumns))
        jump(v, a);
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.step ? std::to_string(*r.step).c_str() : "-");
      ImGui::TableNextColumn();
      const int sev = std::clamp(static_cast<int>(r.severity), 0, 2);
      const std::string_view severity = gb::trace::name(static_cast<gb::trace::Severity>(sev));
      ImGui::TextColored(kSeverityColor[sev], "%.*s", static_cast<int>(severity.size()), severity.data());
      ImGui::TableNextColumn();
      const std::string_view kind = gb::trace::name(r.kind);  // "unknown" for a kind newer than this viewer
      ImGui::TextUnformatted(kind.data(), kind.data() + kind.size());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.module.empty() ? "-" : a.module.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.param.empty() ? "-" : a.param.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.span.empty() ? "-" : a.span.c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", r.message.c_str());
    }
  ImGui::EndTable();
}

}  // namespace gb::viewer::panels
