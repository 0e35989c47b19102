// viewer/panels/memory.cpp — memory over time as stacked layers: allocated by category (PyTorch's colours), then
// reserved but unallocated, then the CUDA context; click a moment for the largest live allocations then.
#include <cinttypes>

#include "traces/query/format.h"
#include "traces/query/memory.h"
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

// One row per segment (full width = the segment's size), live blocks in their category's colour at their offset,
// free gaps pale green: how fragmented the cache is at time t.
void segment_map(MemoryModel& mem, std::int64_t t) {
  const SegmentMap* replayed = mem.segments(t);  // the replay runs off the frame; the last one meanwhile
  if (!replayed) {
    ImGui::TextDisabled("Segments at %s: computing...", gb::query::format_time(static_cast<double>(t)).c_str());
    return;
  }
  const SegmentMap& map = *replayed;
  ImGui::Text("Segments at %s: %zu%s", gb::query::format_time(static_cast<double>(map.t_ns)).c_str(), map.segments.size(),
              map.t_ns != t ? "  (updating...)" : "");
  ImGui::SameLine();
  plot::help_marker("Each row is one segment the caching allocator reserved from the device (cudaMalloc), drawn "
                    "full width; live blocks sit at their offset in their category's colour, free gaps are pale "
                    "green. Many small gaps mean fragmentation: memory reserved but too split to serve a large "
                    "request (what an OOM with much 'reserved but unallocated' memory looks like).");
  if (map.unplaced > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("(%s live outside any known segment)", gb::query::format_bytes(map.unplaced).c_str());
  }
  if (map.segments.empty()) {
    ImGui::TextDisabled("No segments are reserved at this moment.");
    return;
  }
  const float row_h = 14, label_w = 180;
  const float h = std::min(220.0f, static_cast<float>(map.segments.size()) * (row_h + 3 + ImGui::GetStyle().ItemSpacing.y) + 16);
  ImGui::BeginChild("##segments", ImVec2(0, h), true);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float x0 = o.x + label_w, x1 = o.x + ImGui::GetContentRegionAvail().x;
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(map.segments.size()), row_h + 3);
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const SegmentRow& s = map.segments[static_cast<std::size_t>(i)];
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float y = p.y + 1, scale = (x1 - x0) / static_cast<float>(std::max<std::int64_t>(1, s.size));
      dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + row_h), plot::to_imgui(color::kFreeGap));
      for (const SegmentBlock& b : s.blocks) {
        const float a = x0 + static_cast<float>(b.offset) * scale;
        dl->AddRectFilled(ImVec2(a, y), ImVec2(std::max(a + 1, a + static_cast<float>(b.size) * scale), y + row_h),
                          plot::to_imgui(color::category(b.category)));
      }
      char label[96];
      std::snprintf(label, sizeof label, "#%lld %s, %.0f%% used", static_cast<long long>(s.id),
                    gb::query::format_bytes(s.size).c_str(), 100.0 * static_cast<double>(s.allocated) / static_cast<double>(std::max<std::int64_t>(1, s.size)));
      dl->AddText(ImVec2(p.x + 2, y - 1), ImGui::GetColorU32(ImGuiCol_Text), label);
      ImGui::Dummy(ImVec2(x1 - p.x, row_h + 3));
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::Text("segment %lld at 0x%llx: %s", static_cast<long long>(s.id), static_cast<unsigned long long>(s.addr), gb::query::format_bytes(s.size).c_str());
        ImGui::Text("%zu live blocks, %s allocated; largest free gap %s", s.blocks.size(), gb::query::format_bytes(s.allocated).c_str(),
                    gb::query::format_bytes(s.largest_free).c_str());
        ImGui::EndTooltip();
      }
    }
  ImGui::EndChild();
}

// The OOM reports: a button per report above the plot opens a window with its text (a leak across steps said
// first, in orange).
void oom_window(const MemoryModel& mem, ViewState& v) {
  if (mem.oom_reports().empty()) return;
  if (!v.show_oom) return;
  const auto& o = mem.oom_reports().front();
  ImGui::SetNextWindowSize(ImVec2(760, 300), ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x * 0.5f, ImGui::GetIO().DisplaySize.y * 0.45f), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("Out of memory", &v.show_oom, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::TextColored(ImVec4(1, 0.35f, 0.35f, 1), "OOM at %s: requested %s", gb::query::format_time(static_cast<double>(o.t_ns)).c_str(),
                       gb::query::format_bytes(o.requested).c_str());
    ImGui::Text("capacity %s   free %s   allocated %s   reserved %s   largest free block %s",
                gb::query::format_bytes(o.capacity).c_str(), gb::query::format_bytes(o.free).c_str(),
                gb::query::format_bytes(o.allocated).c_str(), gb::query::format_bytes(o.reserved).c_str(),
                gb::query::format_bytes(o.largest_free_block).c_str());
    ImGui::PushTextWrapPos(0);
    if (o.kept_bytes && *o.kept_bytes > o.allocated / 2) {  // the leak rule (traces/SCHEMA.md, oom_reports)
      const std::string step = o.step ? "step " + std::to_string(*o.step) + "'s" : std::string("this step's");
      ImGui::TextColored(ImVec4(1, 0.55f, 0.2f, 1),
                         "a leak across steps, not %s peak: %s of the %s live were allocated by earlier steps and "
                         "kept (\"What to do\" names the ops and modules)",
                         step.c_str(), gb::query::format_bytes(*o.kept_bytes).c_str(),
                         gb::query::format_bytes(o.allocated).c_str());
    }
    ImGui::Separator();
    ImGui::TextUnformatted(o.report.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Show the moment before")) v.cursor = o.t_ns - 1, v.focus(o.t_ns - (v.t1 - v.t0) / 20, o.t_ns + (v.t1 - v.t0) / 20);
  }
  ImGui::End();
}

}  // namespace

void memory(TraceModel& m, ViewState& v, PanelState&) {
  MemoryModel& mem = m.memory();
  if (mem.loading()) {
    plot::empty_state("Loading memory events...", "They are replayed once, in the background; the timeline works meanwhile.");
    return;
  }
  if (!mem.has_data()) {
    plot::empty_state("This trace has no memory events.",
                      "Allocator events (alloc, free, segments) are written when the caching allocator is traced; "
                      "run with GLASSBOX_TRACE=run.db on a build whose allocator has its probes, or try "
                      "`glassbox synth run.db`.");
    return;
  }
  if (no_detail_notice(m, v)) return;  // a long run's step without detail: where the nearest detail is
  if (written_after_open_notice(m, v, "memory events")) return;
  const int dev = mem.device();
  ImGui::Text("%s", gb::query::device_name(dev).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("peak reserved %s   context %s   %zu events", gb::query::format_bytes(mem.peak_reserved()).c_str(),
                      gb::query::format_bytes(mem.context_bytes()).c_str(), mem.events());
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
  if (mem.context_bytes() > 0) {
    plot::color_square(color::kContext);
    ImGui::TextUnformatted("CUDA context");
    ImGui::SameLine(0, 12);
  }
  plot::color_square(color::kFreeGap);
  ImGui::TextUnformatted("free in a segment");
  if (!mem.oom_reports().empty()) {
    ImGui::SameLine(0, 16);
    ImGui::PushStyleColor(ImGuiCol_Button, plot::to_imgui(color::kOom));
    if (ImGui::SmallButton(("OOM report (" + std::to_string(mem.oom_reports().size()) + ")").c_str())) v.show_oom = true;
    ImGui::PopStyleColor();
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
  // Computed off the frame: until the answer for this window is in, the last one is drawn (or the text "computing...").
  static const std::vector<MemoryColumn> kNoColumns(1);
  const std::vector<MemoryColumn>* ready = mem.columns(v.t0, v.t1, columns);
  const std::vector<MemoryColumn>& cols = ready && !ready->empty() ? *ready : kNoColumns;
  if (!ready) dl->AddText(ImVec2(p0.x + 8, p0.y + 8), ImGui::GetColorU32(ImGuiCol_TextDisabled), "computing...");
  const double ymax = static_cast<double>(mem.peak_reserved() + mem.context_bytes()) * 1.05;
  color::Rgb layer_colors[10];
  for (int i = 0; i < 8; ++i) layer_colors[i] = color::category(kOrder[i]);
  layer_colors[8] = color::kReservedUnallocated;
  layer_colors[9] = color::kContext;
  plot::stacked_columns(dl, p0, p1, static_cast<int>(cols.size()), 10, [&](int c, int l) -> double {
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
  for (const auto& o : mem.oom_reports())  // OOM markers: a red line with a label
    if (o.t_ns >= v.t0 && o.t_ns <= v.t1) {
      const float x = p0.x + static_cast<float>((o.t_ns - v.t0) / ns_per_px);
      dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), plot::to_imgui(color::kOom), 3);
      dl->AddText(ImVec2(std::min(x + 4, p1.x - 40), p0.y + 2), plot::to_imgui(color::kOom), "OOM");
    }
  ImGui::SetCursorScreenPos(p0);
  ImGui::InvisibleButton("##memplot", ImVec2(p1.x - p0.x, p1.y - p0.y));
  const bool hovered = ImGui::IsItemHovered();
  plot::pan_zoom(v.t0, v.t1, p0.x, p1.x, hovered || ImGui::IsItemActive());
  const ImGuiIO& io = ImGui::GetIO();
  if (hovered) {
    const auto t = v.t0 + static_cast<std::int64_t>((io.MousePos.x - p0.x) * ns_per_px);
    const MemoryColumn c = cols[std::min(cols.size() - 1, static_cast<std::size_t>(std::max(0.0f, io.MousePos.x - p0.x) *
                                                                                    static_cast<float>(cols.size()) / std::max(1.0f, p1.x - p0.x)))];
    ImGui::BeginTooltip();
    ImGui::Text("%s", gb::query::format_time(static_cast<double>(t)).c_str());
    ImGui::Text("allocated %s   reserved %s", gb::query::format_bytes(c.allocated).c_str(), gb::query::format_bytes(c.reserved).c_str());
    for (MemCategory k : kOrder)
      if (c.by_category[static_cast<std::size_t>(k)] > 0)
        ImGui::Text("  %-16s %s", kCategoryNames[static_cast<int>(k)], gb::query::format_bytes(c.by_category[static_cast<std::size_t>(k)]).c_str());
    ImGui::EndTooltip();
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 9) v.cursor = t;
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, p1.y + 8));
  oom_window(mem, v);

  // The segment map and the largest live allocations at the cursor.
  if (!v.cursor) {
    ImGui::TextDisabled("Click the plot to see the segment map and the largest allocations live at that moment.");
    return;
  }
  segment_map(mem, *v.cursor);
  const std::vector<LiveBlock>* live = mem.largest_live(*v.cursor, 50);  // replayed off the frame
  const MemoryColumn at = mem.at(*v.cursor);
  ImGui::Text("Largest live allocations at %s: allocated %s, reserved %s%s", gb::query::format_time(static_cast<double>(*v.cursor)).c_str(),
              gb::query::format_bytes(at.allocated).c_str(), gb::query::format_bytes(at.reserved).c_str(),
              !live ? "  (computing...)" : mem.pending() ? "  (updating...)" : "");
  static const std::vector<LiveBlock> kNone;
  const std::vector<LiveBlock>& blocks = live ? *live : kNone;
  if (ImGui::BeginTable("##live", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, 100);
    ImGui::TableSetupColumn("Category", ImGuiTableColumnFlags_WidthFixed, 150);
    ImGui::TableSetupColumn("Op");
    ImGui::TableSetupColumn("Module");
    ImGui::TableSetupColumn("Allocated at", ImGuiTableColumnFlags_WidthFixed, 110);
    ImGui::TableHeadersRow();
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(blocks.size()));
    while (clip.Step())
      for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
        const LiveBlock& b = blocks[static_cast<std::size_t>(i)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(gb::query::format_bytes(b.size).c_str());
        ImGui::TableNextColumn();
        plot::color_square(color::category(b.category));
        ImGui::TextUnformatted(kCategoryNames[static_cast<int>(b.category) & 7]);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(b.op.empty() ? "-" : b.op.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(b.module.empty() ? "-" : b.module.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(gb::query::format_time(static_cast<double>(b.t_alloc_ns)).c_str());
      }
    ImGui::EndTable();
  }
}

}  // namespace gb::viewer::panels
