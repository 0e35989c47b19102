// viewer/panels/memory.cpp — memory over time as stacked layers: allocated by category (PyTorch's colours), then
// reserved but unallocated, then the CUDA context; click a moment for the largest live allocations then.
#include <cinttypes>

#include "tools/format.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {

using gb::trace::MemCategory;
// Bottom to top: the categories, in PyTorch's memory-timeline order, then the two cache layers.
constexpr MemCategory kOrder[] = {MemCategory::parameter,  MemCategory::optimizer_state, MemCategory::input,
                                  MemCategory::temporary,  MemCategory::activation,      MemCategory::gradient,
                                  MemCategory::autograd_detail, MemCategory::unknown};
constexpr const char* kCategoryNames[] = {"unknown",         "parameter", "gradient", "activation",
                                          "optimizer state", "temporary", "input",    "autograd detail"};

struct LiveCache {
  std::string path;
  std::int64_t t = -1;
  std::vector<LiveBlock> blocks;
} g_live;

}  // namespace

void memory(TraceModel& m, ViewState& v) {
  if (m.memory_loading()) {
    plot::empty_state("Loading memory events...", "They are replayed once, in the background; the timeline works meanwhile.");
    return;
  }
  if (!m.has_memory()) {
    plot::empty_state("This trace has no memory events.",
                      "Allocator events (alloc, free, segments) are written when the caching allocator is traced; "
                      "run with GLASSBOX_TRACE=run.db on a build whose allocator has its probes, or try "
                      "`glassbox synth run.db`.");
    return;
  }
  const int dev = m.memory_device();
  ImGui::Text("%s", dev < 0 ? "cpu" : ("cuda:" + std::to_string(dev)).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("peak reserved %s   context %s   %zu events", gb::tools::format_bytes(m.peak_reserved()).c_str(),
                      gb::tools::format_bytes(m.context_bytes()).c_str(), m.memory_events());
  ImGui::SameLine();
  plot::help_marker("Three layers, bottom to top: memory allocated to tensors (split by what it holds), memory the "
                    "caching allocator reserved but has not handed out, and the CUDA context.\n"
                    "Each pixel column shows the moment of its highest allocation, so peaks survive any zoom.\n"
                    "Drag to pan, wheel to zoom (shared with the timeline); click a moment to list the largest "
                    "live allocations.");
  for (MemCategory c : kOrder) {
    plot::color_square(color::category(c));
    ImGui::TextUnformatted(kCategoryNames[static_cast<int>(c)]);
    ImGui::SameLine(0, 12);
  }
  plot::color_square(color::kReservedUnallocated);
  ImGui::TextUnformatted("reserved, unallocated");
  ImGui::SameLine(0, 12);
  if (m.context_bytes() > 0) {
    plot::color_square(color::kContext);
    ImGui::TextUnformatted("CUDA context");
  }
  ImGui::NewLine();

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float axis_w = 84, plot_h = std::max(160.0f, avail.y * 0.62f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 p0(origin.x + axis_w, origin.y + 22), p1(origin.x + avail.x - 8, origin.y + 22 + plot_h);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  plot::time_axis(dl, ImVec2(p0.x, origin.y), ImVec2(p1.x, origin.y + 18), v.t0, v.t1);
  dl->AddRectFilled(p0, p1, plot::to_imgui(color::kPlotBackground));
  const int columns = std::max(1, static_cast<int>(p1.x - p0.x));
  const std::vector<MemoryColumn> cols = m.memory_columns(v.t0, v.t1, columns);
  const double ymax = static_cast<double>(m.peak_reserved() + m.context_bytes()) * 1.05;
  color::Rgb layer_colors[10];
  for (int i = 0; i < 8; ++i) layer_colors[i] = color::category(kOrder[i]);
  layer_colors[8] = color::kReservedUnallocated;
  layer_colors[9] = color::kContext;
  plot::stacked_columns(dl, p0, p1, columns, 10, [&](int c, int l) -> double {
    const MemoryColumn& col = cols[static_cast<std::size_t>(c)];
    if (col.reserved == 0 && col.allocated == 0) return 0;  // before the first event
    if (l < 8) return static_cast<double>(col.by_category[static_cast<std::size_t>(kOrder[l])]);
    return static_cast<double>(l == 8 ? col.reserved_unallocated() : col.context);
  }, layer_colors, ymax);
  plot::value_axis(dl, p0, p1, ymax, [](double b) { return plot::bytes_label(b); });
  dl->AddRect(p0, p1, IM_COL32(90, 90, 90, 255));
  const double ns_per_px = static_cast<double>(v.t1 - v.t0) / (p1.x - p0.x);
  if (v.cursor && *v.cursor >= v.t0 && *v.cursor <= v.t1) {
    const float x = p0.x + static_cast<float>((*v.cursor - v.t0) / ns_per_px);
    dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), plot::to_imgui(0x202020), 2);
  }
  ImGui::SetCursorScreenPos(p0);
  ImGui::InvisibleButton("##memplot", ImVec2(p1.x - p0.x, p1.y - p0.y));
  const bool hovered = ImGui::IsItemHovered();
  plot::pan_zoom(v.t0, v.t1, p0.x, p1.x, hovered || ImGui::IsItemActive());
  const ImGuiIO& io = ImGui::GetIO();
  if (hovered) {
    const auto t = v.t0 + static_cast<std::int64_t>((io.MousePos.x - p0.x) * ns_per_px);
    const MemoryColumn c = cols[std::min(cols.size() - 1, static_cast<std::size_t>(std::max(0.0f, io.MousePos.x - p0.x)))];
    ImGui::BeginTooltip();
    ImGui::Text("%s", gb::tools::format_time(static_cast<double>(t)).c_str());
    ImGui::Text("allocated %s   reserved %s", gb::tools::format_bytes(c.allocated).c_str(), gb::tools::format_bytes(c.reserved).c_str());
    for (MemCategory k : kOrder)
      if (c.by_category[static_cast<std::size_t>(k)] > 0)
        ImGui::Text("  %-16s %s", kCategoryNames[static_cast<int>(k)], gb::tools::format_bytes(c.by_category[static_cast<std::size_t>(k)]).c_str());
    ImGui::EndTooltip();
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 9) v.cursor = t;
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, p1.y + 8));

  // The largest live allocations at the cursor.
  if (!v.cursor) {
    ImGui::TextDisabled("Click the plot to list the largest allocations live at that moment.");
    return;
  }
  if (g_live.path != m.path() || g_live.t != *v.cursor) g_live = {m.path(), *v.cursor, m.largest_live(*v.cursor, 50)};
  const MemoryColumn at = m.memory_at(*v.cursor);
  ImGui::Text("Largest live allocations at %s: allocated %s, reserved %s", gb::tools::format_time(static_cast<double>(*v.cursor)).c_str(),
              gb::tools::format_bytes(at.allocated).c_str(), gb::tools::format_bytes(at.reserved).c_str());
  if (ImGui::BeginTable("##live", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, 100);
    ImGui::TableSetupColumn("Category", ImGuiTableColumnFlags_WidthFixed, 150);
    ImGui::TableSetupColumn("Op");
    ImGui::TableSetupColumn("Module");
    ImGui::TableSetupColumn("Allocated at", ImGuiTableColumnFlags_WidthFixed, 110);
    ImGui::TableHeadersRow();
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(g_live.blocks.size()));
    while (clip.Step())
      for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
        const LiveBlock& b = g_live.blocks[static_cast<std::size_t>(i)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(gb::tools::format_bytes(b.size).c_str());
        ImGui::TableNextColumn();
        plot::color_square(color::category(b.category));
        ImGui::TextUnformatted(kCategoryNames[static_cast<int>(b.category) & 7]);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(b.op.empty() ? "-" : b.op.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(b.module.empty() ? "-" : b.module.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(gb::tools::format_time(static_cast<double>(b.t_alloc_ns)).c_str());
      }
    ImGui::EndTable();
  }
}

}  // namespace gb::viewer::panels
