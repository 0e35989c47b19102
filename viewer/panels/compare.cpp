// viewer/panels/compare.cpp — this trace (A) beside a second one (B): step time statistics, memory peaks per
// device (bars of A and B), and the op table's deltas (B - A), all from TraceModel::compare() (compare_model.h:
// query::diff_traces on the query worker). Empty state until File → Compare with... (or --compare B.db) names B.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <string>

#include "traces/query/format.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {

// Two horizontal bars (A above B) scaled to `max`, with their labels, in a row of the current window.
void bar_pair(const char* what, double a, double b, double max, const std::string& la, const std::string& lb) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float x0 = o.x + 180, w = std::max(50.0f, ImGui::GetContentRegionAvail().x - 180 - 160);
  dl->AddText(ImVec2(o.x, o.y + 6), ImGui::GetColorU32(ImGuiCol_Text), what);
  const auto len = [&](double v) { return max > 0 ? static_cast<float>(v / max) * w : 0.0f; };
  dl->AddRectFilled(ImVec2(x0, o.y), ImVec2(x0 + std::max(1.0f, len(a)), o.y + 12), plot::to_imgui(color::kCompareA));
  dl->AddRectFilled(ImVec2(x0, o.y + 14), ImVec2(x0 + std::max(1.0f, len(b)), o.y + 26), plot::to_imgui(color::kCompareB));
  dl->AddText(ImVec2(x0 + w + 8, o.y - 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), ("A " + la).c_str());
  dl->AddText(ImVec2(x0 + w + 8, o.y + 12), ImGui::GetColorU32(ImGuiCol_TextDisabled), ("B " + lb).c_str());
  ImGui::Dummy(ImVec2(1, 32));
}

std::string pct(double a, double b) {
  if (a == 0) return b == 0 ? "" : "new";
  char s[32];
  std::snprintf(s, sizeof s, "%+.1f%%", (b - a) / a * 100);
  return s;
}

}  // namespace

void compare(TraceModel& m, ViewState&, PanelState&) {
  const gb::query::TraceDiff* d = m.compare().result();
  ImGui::Text("Compare with a second trace");
  ImGui::SameLine();
  plot::help_marker("This trace is A; the second is B. Step time (mean, median), memory peaks per device, and the "
                    "op table with B - A per op, largest change first (as `glassbox diff A B`).\n"
                    "Choose B with File > Compare with..., or start the viewer with --compare B.db.");
  if (!d && m.compare().pending()) {
    plot::empty_state("comparing...", "diff_traces runs on a background thread: one scan of each trace's spans.");
    return;
  }
  if (!d) {
    plot::empty_state(m.compare().error().empty() ? "No second trace to compare with."
                                                : ("Cannot open the second trace: " + m.compare().error()).c_str(),
                      "Choose one with File > Compare with... (or run glassbox-viewer A.db --compare B.db): "
                      "step time, op deltas and memory peaks of the two runs side by side.");
    return;
  }
  ImGui::TextDisabled("A %s", d->path_a.c_str());
  ImGui::TextDisabled("B %s", d->path_b.c_str());
  plot::color_square(color::kCompareA);
  ImGui::TextUnformatted("A");
  ImGui::SameLine(0, 12);
  plot::color_square(color::kCompareB);
  ImGui::TextUnformatted("B");
  ImGui::Separator();

  const auto& sa = d->steps_a;
  const auto& sb = d->steps_b;
  ImGui::Text("Steps: A %" PRId64 ", B %" PRId64, sa.count, sb.count);
  const double smax = std::max({sa.mean, sb.mean, sa.median, sb.median, sa.p90, sb.p90});
  bar_pair("step time, mean", sa.mean, sb.mean, smax, gb::query::format_time(sa.mean),
           gb::query::format_time(sb.mean) + "  " + pct(sa.mean, sb.mean));
  bar_pair("step time, median", sa.median, sb.median, smax, gb::query::format_time(sa.median),
           gb::query::format_time(sb.median) + "  " + pct(sa.median, sb.median));
  for (const gb::query::MemoryDelta& md : d->memory) {
    const double ra = static_cast<double>(md.reserved_a.value_or(0)), rb = static_cast<double>(md.reserved_b.value_or(0));
    const double aa = static_cast<double>(md.allocated_a.value_or(0)), ab = static_cast<double>(md.allocated_b.value_or(0));
    const double mmax = std::max({ra, rb, aa, ab});
    const std::string dev = md.device < 0 ? "cpu" : "device " + std::to_string(md.device);
    bar_pair((dev + " peak allocated").c_str(), aa, ab, mmax, gb::query::format_bytes(md.allocated_a.value_or(0)),
             gb::query::format_bytes(md.allocated_b.value_or(0)) + "  " + pct(aa, ab));
    bar_pair((dev + " peak reserved").c_str(), ra, rb, mmax, gb::query::format_bytes(md.reserved_a.value_or(0)),
             gb::query::format_bytes(md.reserved_b.value_or(0)) + "  " + pct(ra, rb));
  }
  ImGui::Separator();
  ImGui::Text("Ops (%s), by |CPU total change|", m.kind_name(d->kind).c_str());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##opdelta", 7, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"Name", "Calls A", "Calls B", "CPU total A", "CPU total B", "Delta", "Delta %"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(d->ops.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const gb::query::OpDelta& o = d->ops[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(o.name.c_str());
      if (!o.a || !o.b) ImGui::SameLine(), ImGui::TextDisabled(!o.a ? "(only in B)" : "(only in A)");
      ImGui::TableNextColumn();
      ImGui::Text("%" PRId64, o.a ? o.a->calls : 0);
      ImGui::TableNextColumn();
      ImGui::Text("%" PRId64, o.b ? o.b->calls : 0);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(o.a ? gb::query::format_time(static_cast<double>(o.a->total_ns)).c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(o.b ? gb::query::format_time(static_cast<double>(o.b->total_ns)).c_str() : "-");
      ImGui::TableNextColumn();
      const auto dn = o.total_delta_ns();
      ImGui::TextColored(dn > 0 ? ImVec4(1, 0.45f, 0.4f, 1) : ImVec4(0.45f, 0.85f, 0.45f, 1), "%s%s", dn > 0 ? "+" : "",
                         gb::query::format_time(static_cast<double>(dn)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(pct(o.a ? static_cast<double>(o.a->total_ns) : 0, o.b ? static_cast<double>(o.b->total_ns) : 0).c_str());
    }
  ImGui::EndTable();
}

}  // namespace gb::viewer::panels
