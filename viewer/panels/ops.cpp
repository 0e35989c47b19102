// viewer/panels/ops.cpp — PyTorch's key_averages table (traces/query/op_table.h) for one span kind: sortable by any
// column, filtered by name.
#include <algorithm>
#include <cinttypes>

#include "traces/query/format.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {
// The flame view of module -> op time (TraceModel::flame, built by the loader): rows by depth, widths by total time.
void flame(TraceModel& m) {
  if (m.flame_loading()) {
    plot::empty_state("Building the flame view...", "One pass over the module and op spans, in the background.");
    return;
  }
  const Flame& f = m.flame();
  if (f.nodes.empty()) {
    plot::empty_state("This trace has no module spans.", "The flame view nests op time under the module spans "
                      "(kind module) that enclose it; trace a run whose model records module spans.");
    return;
  }
  ImGui::TextDisabled("module -> op time, %d levels, roots total %s", f.depth,
                      gb::query::format_time(static_cast<double>(f.total_ns)).c_str());
  std::vector<plot::IcicleBox> boxes;
  boxes.reserve(f.nodes.size());
  for (const FlameNode& n : f.nodes)
    boxes.push_back(plot::IcicleBox{n.x0, n.x1, n.depth, color::span_kind(n.kind),
                                    n.name.c_str()});
  const float row_h = 22;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p1(p0.x + std::max(1.0f, avail.x), p0.y + std::max(row_h, std::min(avail.y, row_h * static_cast<float>(f.depth))));
  ImGui::InvisibleButton("##flame", ImVec2(p1.x - p0.x, p1.y - p0.y));
  const int hit = plot::icicle(ImGui::GetWindowDrawList(), p0, p1, row_h, boxes);
  if (hit >= 0 && ImGui::IsItemHovered()) {
    const FlameNode& n = f.nodes[static_cast<std::size_t>(hit)];
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(n.path.c_str());
    ImGui::Text("total %s   %" PRId64 " calls   %s of the roots", gb::query::format_time(static_cast<double>(n.total_ns)).c_str(),
                n.calls, gb::query::format_share(static_cast<double>(n.total_ns), static_cast<double>(f.total_ns)).c_str());
    ImGui::EndTooltip();
  }
}
}  // namespace

void ops(TraceModel& m, ViewState& v, PanelState& state) {
  int& kind = state.ops.kind;
  ImGuiTextFilter& filter = state.ops.filter;
  ImGui::Checkbox("flame view", &v.ops_flame);
  ImGui::SameLine();
  if (v.ops_flame) {
    plot::help_marker("Module -> op time: each row is one level of the span tree under the module spans; a box's width "
                      "is the total time of that name path (\"MLP/layers.0/linear\") summed over all its calls.");
    flame(m);
    return;
  }
  auto kinds = gb::query::span_kind_names();
  ImGui::SetNextItemWidth(160);
  if (ImGui::BeginCombo("span kind", std::string(kinds[static_cast<std::size_t>(kind)]).c_str())) {
    for (std::size_t k = 0; k < kinds.size(); ++k)
      if (ImGui::Selectable(std::string(kinds[k]).c_str(), static_cast<int>(k) == kind)) kind = static_cast<int>(k);
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  filter.Draw("filter by name", 220);
  ImGui::SameLine();
  plot::help_marker("PyTorch's key_averages(): per span name, the number of calls, CPU total (sum of durations), "
                    "Self CPU (minus the time of direct children) and the average. Shares are of the Self CPU total. "
                    "With CUDA kernels in the trace, Self CUDA and CUDA total come from the kernels each op launched.\n"
                    "Click a header to sort; type in the filter to keep matching names (\"-name\" excludes).\nShapes: the most common input shapes of the name's calls (op_details).");
  const gb::query::OpTable& t = m.op_table(static_cast<gb::trace::SpanKind>(kind));
  if (m.ops_loading()) {
    plot::empty_state("Summing the op table...", "One pass over every span, in the background (it also builds the "
                      "timeline's overview).");
    return;
  }
  if (t.rows.empty()) {
    plot::empty_state(("This trace has no spans of kind " + std::string(kinds[static_cast<std::size_t>(kind)]) + ".").c_str(),
                      "Op spans come from the engine's op probes; backward_node spans from traced backward passes. "
                      "Pick another kind above, or trace a run with GLASSBOX_TRACE=run.db.");
    return;
  }
  std::vector<const gb::query::OpStats*> rows;
  for (const auto& r : t.rows)
    if (filter.PassFilter(r.name.c_str())) rows.push_back(&r);
  ImGui::TextDisabled("%zu of %zu names   Self CPU time total: %s%s", rows.size(), t.rows.size(),
                      gb::query::format_time(static_cast<double>(t.self_total_ns)).c_str(),
                      t.has_cuda ? ("   Self CUDA time total: " + gb::query::format_time(static_cast<double>(t.cuda_total_ns))).c_str() : "");
  const int ncols = t.has_cuda ? 11 : 8;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##ops", ncols, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch, 3.0f, 0);
  ImGui::TableSetupColumn("Self CPU %", ImGuiTableColumnFlags_PreferSortDescending, 1, 1);
  ImGui::TableSetupColumn("Self CPU", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending, 1, 1);
  ImGui::TableSetupColumn("CPU total %", ImGuiTableColumnFlags_PreferSortDescending, 1, 2);
  ImGui::TableSetupColumn("CPU total", ImGuiTableColumnFlags_PreferSortDescending, 1, 2);
  ImGui::TableSetupColumn("CPU time avg", ImGuiTableColumnFlags_PreferSortDescending, 1, 3);
  ImGui::TableSetupColumn("# of Calls", ImGuiTableColumnFlags_PreferSortDescending, 1, 4);
  if (t.has_cuda) {
    ImGui::TableSetupColumn("Self CUDA", ImGuiTableColumnFlags_PreferSortDescending, 1, 5);
    ImGui::TableSetupColumn("CUDA total", ImGuiTableColumnFlags_PreferSortDescending, 1, 6);
    ImGui::TableSetupColumn("CUDA time avg", ImGuiTableColumnFlags_PreferSortDescending, 1, 7);
  }
  ImGui::TableSetupColumn("Shapes", ImGuiTableColumnFlags_NoSort, 2.0f, 8);
  ImGui::TableHeadersRow();
  if (const ImGuiTableSortSpecs* s = ImGui::TableGetSortSpecs(); s && s->SpecsCount > 0) {
    const ImGuiTableColumnSortSpecs& c = s->Specs[0];
    auto key = [&](const gb::query::OpStats* r) -> double {
      switch (c.ColumnUserID) {
        case 1: return static_cast<double>(r->self_ns);
        case 2: return static_cast<double>(r->total_ns);
        case 3: return r->avg_ns();
        case 4: return static_cast<double>(r->calls);
        case 5: return static_cast<double>(r->self_cuda_ns);
        case 6: return static_cast<double>(r->cuda_total_ns);
        case 7: return r->cuda_avg_ns();
      }
      return 0;
    };
    const bool asc = c.SortDirection == ImGuiSortDirection_Ascending;
    std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) {
      if (c.ColumnUserID == 0) return asc ? a->name < b->name : a->name > b->name;
      return asc ? key(a) < key(b) : key(a) > key(b);
    });
  }
  const double self_total = static_cast<double>(std::max<std::int64_t>(1, t.self_total_ns));
  double cpu_total = 0;
  for (const auto& r : t.rows) cpu_total += static_cast<double>(r.self_ns);
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(rows.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const gb::query::OpStats& r = *rows[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.name.c_str());
      ImGui::TableNextColumn();
      // A bar behind the share.
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float share = static_cast<float>(r.self_ns / self_total);
      ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + share * ImGui::GetColumnWidth(), p.y + ImGui::GetTextLineHeight()),
                                                plot::to_imgui(color::span_kind(t.kind), 0.45f));
      ImGui::TextUnformatted(gb::query::format_share(static_cast<double>(r.self_ns), self_total).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(gb::query::format_time(static_cast<double>(r.self_ns)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(gb::query::format_share(static_cast<double>(r.total_ns), cpu_total).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(gb::query::format_time(static_cast<double>(r.total_ns)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(gb::query::format_time(r.avg_ns()).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%" PRId64, r.calls);
      if (t.has_cuda) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(gb::query::format_time(static_cast<double>(r.self_cuda_ns)).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(gb::query::format_time(static_cast<double>(r.cuda_total_ns)).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(gb::query::format_time(r.cuda_avg_ns()).c_str());
      }
      ImGui::TableNextColumn();  // the most common input shapes of the name (op_details)
      ImGui::TextUnformatted(m.op_shapes(t.kind, r.name).c_str());
    }
  ImGui::EndTable();
}

}  // namespace gb::viewer::panels
