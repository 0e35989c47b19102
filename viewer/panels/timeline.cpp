// viewer/panels/timeline.cpp — the timeline: a step ruler, one track per thread with nested spans coloured by
// kind (short spans folded into counted boxes), counters as small plots under the tracks, and the details of the
// selected span, and a span search by name with a duration histogram of the matches (click a bin: its longest
// span is selected and shown). Pan: drag; zoom: wheel or W/S; A/D pan; F fits the run; Z zooms to the selected
// span; shift+drag zooms to a time range.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "traces/query/format.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {

constexpr float kLabelW = 150, kRowH = 20, kRulerH = 40, kCounterH = 46, kRankHeaderH = 18;

void details_pane(TraceModel& m, ViewState& v) {
  if (!v.span) {
    ImGui::TextDisabled("Click a span to see its details: duration, self time, module, shapes, the backward node "
                        "of a forward op (and back), its allocations, the CUDA kernels it launched.");
    return;
  }
  const std::shared_ptr<const SpanDetails> details = m.timeline().details(*v.span);  // read off the UI thread
  if (!details) {
    if (m.timeline().details_pending(*v.span)) ImGui::TextDisabled("reading the details of span %" PRId64 "...", *v.span);
    else ImGui::TextDisabled("no span %" PRId64 " in this trace", *v.span);
    return;
  }
  const SpanDetails& d = *details;
  const auto& s = d.span;
  ImGui::Text("%s", d.name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(%s on %s, id %" PRId64 ")", m.kind_name(s.kind).c_str(), d.thread.c_str(), s.id);
  ImGui::Text("start %s   duration %s   self %s   children %" PRId64, gb::query::format_time(s.start_ns).c_str(),
              gb::query::format_time(s.end_ns - s.start_ns).c_str(), gb::query::format_time(d.self_ns).c_str(),
              d.children);
  ImGui::Text("step %s   module %s   seq %s", s.step ? std::to_string(*s.step).c_str() : "-",
              d.module.empty() ? "-" : d.module.c_str(), s.seq ? std::to_string(*s.seq).c_str() : "-");
  if (!d.shapes.empty()) ImGui::Text("input shapes %s   dtypes %s", d.shapes.c_str(), d.dtypes.c_str());
  if (!d.kernels.empty()) {
    ImGui::Text("launched %zu kernel%s:", d.kernels.size(), d.kernels.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < d.kernels.size() && i < 8; ++i) {
      const LaunchedKernel& k = d.kernels[i];
      ImGui::BulletText("%s  %s  grid (%s)  block (%s)  stream %" PRId64, k.name.c_str(),
                        gb::query::format_time(k.dur_ns).c_str(), k.grid.c_str(), k.block.c_str(), k.stream);
    }
    if (d.kernels.size() > 8) ImGui::TextDisabled("... and %zu more", d.kernels.size() - 8);
  }
  if (d.allocations) ImGui::Text("allocated %" PRId64 " blocks, %s", d.allocations, gb::query::format_bytes(d.allocated_bytes).c_str());
  if (d.linked) {
    const char* what = s.kind == gb::trace::SpanKind::op ? "backward node" : "forward op";
    if (ImGui::SmallButton((std::string("go to ") + what + ": " + d.linked_name).c_str())) {
      v.span = d.linked->id;
      v.focus(d.linked->start_ns, d.linked->end_ns, 2.0);
    }
  }
  if (ImGui::SmallButton("zoom to span (Z)")) v.zoom_to(s.start_ns, s.end_ns);
}

// The matches of v.search: a count and a duration histogram (log-spaced bins) in [p0, p1].
void search_histogram(TraceModel& m, ViewState& v) {
  const SpanSearch* found = m.timeline().search(v.search);
  if (!found) {  // the query runs on the model's worker; never inside a frame
    ImGui::TextDisabled("\"%s\": searching...", v.search.c_str());
    return;
  }
  const SpanSearch& s = *found;
  ImGui::Text("\"%s\": %" PRId64 " spans%s", v.search.c_str(), s.matches,
              s.capped ? " (histogram of the first 100,000)" : "");
  ImGui::SameLine();
  plot::help_marker("Spans whose name contains the text (case-insensitive), by duration on a log scale. Click a "
                    "bar to select the longest span in it and show it on the timeline.");
  if (s.counts.empty()) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const ImVec2 p0(o.x + kLabelW, o.y), p1(o.x + w - 8, o.y + 60);
  const std::int64_t ymax = *std::max_element(s.counts.begin(), s.counts.end());
  const int bins = static_cast<int>(s.counts.size());
  dl->AddRectFilled(p0, p1, IM_COL32(255, 255, 255, 10));
  plot::stacked_columns(dl, p0, p1, bins, 1, [&](int c, int) { return static_cast<double>(s.counts[static_cast<std::size_t>(c)]); },
                        &color::kSearchBar, static_cast<double>(ymax));
  dl->AddText(ImVec2(p0.x, p1.y + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled),
              plot::time_label(static_cast<double>(s.edges.front())).c_str());
  const std::string hi = plot::time_label(static_cast<double>(s.edges.back()));
  dl->AddText(ImVec2(p1.x - ImGui::CalcTextSize(hi.c_str()).x, p1.y + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), hi.c_str());
  dl->AddText(ImVec2(o.x + 4, o.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), ("max " + std::to_string(ymax)).c_str());
  ImGui::SetCursorScreenPos(p0);
  ImGui::InvisibleButton("##hist", ImVec2(std::max(1.0f, p1.x - p0.x), p1.y - p0.y));
  if (ImGui::IsItemHovered()) {
    const int c = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - p0.x) / (p1.x - p0.x) * bins), 0, bins - 1);
    const auto b = static_cast<std::size_t>(c);
    ImGui::SetTooltip("%s .. %s: %" PRId64 " spans", plot::time_label(static_cast<double>(s.edges[b])).c_str(),
                      plot::time_label(static_cast<double>(s.edges[b + 1])).c_str(), s.counts[b]);
    if (ImGui::IsItemClicked() && s.longest[b] >= 0) {
      const SearchHit& h = s.hits[static_cast<std::size_t>(s.longest[b])];
      v.span = h.id;
      v.zoom_to(h.start_ns, h.start_ns + h.dur_ns, 0.5);
    }
  }
}

}  // namespace

void span_tooltip(TraceModel& m, const TimelineItem& it) {
  ImGui::BeginTooltip();
  const auto& s = it.span;
  if (it.count > 1) {
    ImGui::Text("%" PRId64 " spans folded (each shorter than 3 px)", it.count);
    ImGui::Text("from %s to %s (%s)", gb::query::format_time(it.start_ns).c_str(),
                gb::query::format_time(it.end_ns).c_str(), gb::query::format_time(it.end_ns - it.start_ns).c_str());
    ImGui::TextDisabled("first: %s (%s); zoom in to see them", std::string(m.string(s.name_id)).c_str(),
                        m.kind_name(s.kind).c_str());
  } else {
    ImGui::Text("%s", std::string(m.string(s.name_id)).c_str());
    ImGui::Separator();
    ImGui::Text("duration  %s", gb::query::format_time(s.end_ns - s.start_ns).c_str());
    ImGui::Text("kind      %s", m.kind_name(s.kind).c_str());
    if (s.step) ImGui::Text("step      %" PRId64, *s.step);
    if (s.module_id) ImGui::Text("module    %s", m.module_path(s.module_id).c_str());
    if (s.seq) ImGui::Text("seq       %" PRId64, *s.seq);
    if (s.kind == gb::trace::SpanKind::op || s.kind == gb::trace::SpanKind::backward_node) {
      if (const auto sd = m.timeline().shapes(s.id)) {  // read off the frame; shown from the next one
        if (!sd->first.empty()) ImGui::Text("shapes    %s", sd->first.c_str());
        if (!sd->second.empty()) ImGui::Text("dtypes    %s", sd->second.c_str());
      }
    }
  }
  ImGui::EndTooltip();
}

const TimelineItem* draw_items(const std::vector<TimelineItem>& items, const TraceModel& m, const ViewState& v,
                               float x0, float x1, float y, float row_h, bool (*keep)(const TimelineItem&)) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const double ns_per_px = static_cast<double>(v.t1 - v.t0) / (x1 - x0);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const TimelineItem* hovered = nullptr;
  dl->PushClipRect(ImVec2(x0, y), ImVec2(x1, y + 4096), true);
  for (const TimelineItem& it : items) {
    if (it.end_ns < v.t0 || it.start_ns > v.t1 || (keep && !keep(it))) continue;
    float xa = x0 + static_cast<float>((it.start_ns - v.t0) / ns_per_px);
    float xb = x0 + static_cast<float>((it.end_ns - v.t0) / ns_per_px);
    xa = std::max(xa, x0 - 2);
    xb = std::min(std::max(xb, xa + 1), x1 + 2);
    const float ya = y + it.depth * row_h, yb = ya + row_h - 1;
    color::Rgb c = color::span_kind(it.span.kind);
    if (it.count > 1) c = plot::scale(c, 0.72f);
    dl->AddRectFilled(ImVec2(xa, ya), ImVec2(xb - (xb - xa > 3 ? 1 : 0), yb), plot::to_imgui(c));
    if (v.span && *v.span == it.span.id && it.count == 1)
      dl->AddRect(ImVec2(xa - 1, ya - 1), ImVec2(xb + 1, yb + 1), plot::to_imgui(color::kSelection), 0, 0, 2.0f);
    if (xb - xa > 24) {
      std::string label = it.count > 1 ? std::to_string(it.count) + " spans" : std::string(m.string(it.span.name_id));
      const ImU32 fg = plot::is_dark(c) ? IM_COL32(255, 255, 255, 255) : IM_COL32(20, 20, 20, 255);
      dl->PushClipRect(ImVec2(std::max(xa, x0) + 3, ya), ImVec2(xb - 2, yb), true);
      dl->AddText(ImVec2(std::max(xa, x0) + 4, ya + (row_h - ImGui::GetFontSize()) / 2 - 1), fg, label.c_str());
      dl->PopClipRect();
    }
    if (mouse.x >= xa && mouse.x < xb && mouse.y >= ya && mouse.y < yb && mouse.x >= x0 && mouse.x <= x1)
      hovered = &it;
  }
  dl->PopClipRect();
  return hovered;
}

void timeline(TraceModel& m, ViewState& v, PanelState& state) {
  if (m.tracks().empty()) {
    plot::empty_state("This trace has no spans.",
                      "Spans are written by the probes of a traced run: run a training program with "
                      "GLASSBOX_TRACE=run.db (or a gb::trace session in code), or make one with `glassbox synth run.db`.");
    return;
  }
  // Toolbar.
  if (ImGui::Button("Fit") || (ImGui::IsKeyPressed('F') && !ImGui::GetIO().WantTextInput)) v.focus(m.begin_ns(), m.end_ns(), 0.01);
  ImGui::SameLine();
  const auto& steps = m.steps();
  if (!steps.empty()) {
    int s = v.step ? static_cast<int>(*v.step) : static_cast<int>(steps.front().step);
    ImGui::SetNextItemWidth(110);
    if (ImGui::InputInt("##step", &s)) {
      s = std::clamp(s, static_cast<int>(steps.front().step), static_cast<int>(steps.back().step));
      v.step = s;
      if (auto r = m.step(s)) v.focus(r->start_ns, r->end_ns, 0.02);
    }
    ImGui::SameLine();
    if (ImGui::Button("Fit step") && v.step)
      if (auto r = m.step(*v.step)) v.focus(r->start_ns, r->end_ns, 0.02);
    ImGui::SameLine();
  }
  if (!m.timeline().overview().ready()) {
    ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "building overview %d%%", static_cast<int>(m.timeline().overview().progress() * 100));
    ImGui::SameLine();
  }
  {
    char(&buf)[256] = state.timeline.search_buf;
    std::string& shown = state.timeline.search_shown;
    if (shown != v.search) std::snprintf(buf, sizeof buf, "%s", v.search.c_str()), shown = v.search;
    ImGui::SetNextItemWidth(180);
    if (ImGui::InputTextWithHint("##search", "search spans (Enter)", buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue))
      v.search = shown = buf;
    ImGui::SameLine();
  }
  if (v.span && !ImGui::GetIO().WantTextInput && ImGui::IsKeyPressed('Z'))
    v.jump = ViewState::Jump{*v.span, 0.1};  // zoom_to's margin
  ImGui::TextDisabled("window %s .. %s (%s)", plot::time_label(static_cast<double>(v.t0)).c_str(),
                      plot::time_label(static_cast<double>(v.t1)).c_str(), plot::time_label(static_cast<double>(v.t1 - v.t0)).c_str());
  ImGui::SameLine();
  plot::help_marker("One track per thread; spans nest by their parent chain and are coloured by kind.\n"
                    "Drag to pan, wheel or W/S to zoom, A/D to pan, F to fit the run, Z to zoom to the selected span, "
                    "shift+drag to zoom to a time range.\nSearch: type part of a span name and press Enter.\n"
                    "Spans narrower than 3 pixels fold into one darker box with a count: zoom in to open them.\n"
                    "Click a span for its details; the counters under the tracks share the time axis.");
  // Legend of kinds.
  for (gb::trace::SpanKind k : m.legend_kinds()) {
    plot::color_square(color::span_kind(k));
    ImGui::TextUnformatted(m.kind_name(k).c_str());
    ImGui::SameLine(0, 14);
  }
  ImGui::NewLine();
  if (no_detail_notice(m, v)) return;  // a long run's step without detail: where the nearest detail is

  const float details_h = 118 + (v.search.empty() ? 0.0f : 100.0f);
  ImGui::BeginChild("##tracks", ImVec2(0, -details_h), true, ImGuiWindowFlags_NoMove);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float x0 = origin.x + kLabelW, x1 = origin.x + ImGui::GetContentRegionAvail().x;
  const double ns_per_px = static_cast<double>(v.t1 - v.t0) / std::max(1.0f, x1 - x0);
  const auto fold = static_cast<std::int64_t>(3 * ns_per_px);

  // Ruler: time ticks and the steps as alternating bands.
  float y = origin.y;
  plot::time_axis(dl, ImVec2(x0, y), ImVec2(x1, y + 18), v.t0, v.t1);
  dl->PushClipRect(ImVec2(x0, y), ImVec2(x1, y + kRulerH), true);
  for (const auto& s : steps) {
    if (s.end_ns < v.t0 || s.start_ns > v.t1) continue;
    const float xa = x0 + static_cast<float>((s.start_ns - v.t0) / ns_per_px), xb = x0 + static_cast<float>((s.end_ns - v.t0) / ns_per_px);
    const bool sel = v.step && *v.step == s.step;
    dl->AddRectFilled(ImVec2(xa, y + 20), ImVec2(std::max(xa + 1, xb - 1), y + kRulerH - 2),
                      sel ? IM_COL32(120, 110, 40, 255) : (s.step % 2 ? IM_COL32(70, 74, 84, 255) : IM_COL32(56, 60, 68, 255)));
    if (xb - xa > 50) dl->AddText(ImVec2(std::max(xa, x0) + 4, y + 22), IM_COL32(230, 230, 230, 255), ("step " + std::to_string(s.step)).c_str());
  }
  dl->PopClipRect();
  dl->AddText(ImVec2(origin.x + 4, y + 22), ImGui::GetColorU32(ImGuiCol_TextDisabled), "steps");
  y += kRulerH + 4;

  const TimelineItem* hovered = nullptr;
  std::optional<std::int64_t> group;  // a merged trace: a header band above each rank's tracks
  for (const Track& t : m.tracks()) {
    if (t.rank && t.rank != group) {
      group = t.rank;
      dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(x1, y + kRankHeaderH), plot::to_imgui(color::kRankHeader));
      dl->AddText(ImVec2(origin.x + 8, y + 2), IM_COL32(235, 240, 250, 255),
                  ("rank " + std::to_string(*t.rank)).c_str());
      y += kRankHeaderH + 4;
    }
    const auto& items = m.timeline().window(t.thread_id, v.t0, v.t1, fold);
    int depth = 0;
    for (const TimelineItem& it : items)
      if (it.end_ns >= v.t0 && it.start_ns <= v.t1) depth = std::max(depth, it.depth);
    const float h = (depth + 1) * kRowH;
    dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(x1, y + h + 4), IM_COL32(255, 255, 255, 10));
    const bool stream = t.role == gb::trace::ThreadRole::cuda_stream;
    if (stream)  // a CUDA stream: a header bar in the kernel colour, so device tracks stand apart from host threads
      dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(origin.x + 4, y + h + 4),
                        plot::to_imgui(color::span_kind(gb::trace::SpanKind::cuda_kernel)));
    dl->AddText(ImVec2(origin.x + 8, y + 3), stream ? plot::to_imgui(color::kCudaStreamLabel) : ImGui::GetColorU32(ImGuiCol_Text),
                track_label(t).c_str());
    if (const TimelineItem* hit = draw_items(items, m, v, x0, x1, y + 2, kRowH)) hovered = hit;
    if (m.timeline().partial(t.thread_id)) {  // the overview has not reached this part yet: hatch it
      const std::int64_t covered = m.timeline().overview().covered_ns(t.thread_id);
      const float xc = std::max(x0, x0 + static_cast<float>((covered - v.t0) / ns_per_px));
      dl->PushClipRect(ImVec2(xc, y), ImVec2(x1, y + h + 4), true);
      for (float hx = xc - h; hx < x1; hx += 8)
        dl->AddLine(ImVec2(hx, y + h + 4), ImVec2(hx + h + 4, y), IM_COL32(255, 255, 255, 28));
      dl->PopClipRect();
    }
    y += h + 8;
  }
  // Counters.
  for (const CounterSeries& c : m.counters()) {
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + kCounterH), IM_COL32(255, 255, 255, 8));
    double lo = 0, hi = 0;
    bool first = true;
    std::vector<double> xs, ys;
    for (std::size_t i = 0; i < c.t_ns.size(); ++i) {
      if (!std::isfinite(c.values[i])) continue;
      lo = first ? c.values[i] : std::min(lo, c.values[i]);
      hi = first ? c.values[i] : std::max(hi, c.values[i]);
      first = false;
      xs.push_back(static_cast<double>(c.t_ns[i]));
      ys.push_back(c.values[i]);
    }
    plot::line_plot(dl, ImVec2(x0, y + 3), ImVec2(x1, y + kCounterH - 3), xs, ys, static_cast<double>(v.t0),
                    static_cast<double>(v.t1), lo, hi, 0xF0C040);
    dl->AddText(ImVec2(origin.x + 6, y + 3), ImGui::GetColorU32(ImGuiCol_Text), c.name.c_str());
    char range[64];
    std::snprintf(range, sizeof range, "%.4g .. %.4g", lo, hi);
    dl->AddText(ImVec2(origin.x + 6, y + 20), ImGui::GetColorU32(ImGuiCol_TextDisabled), range);
    y += kCounterH + 4;
  }
  // Allocated and reserved bytes of the memory replay (the Memory panel's columns, computed off the frame: per
  // pixel column the state at its peak), on one scale: reserved above allocated.
  if (m.memory().has_data()) {
    const int columns = std::max(1, static_cast<int>(x1 - x0) / 2);
    if (const std::vector<MemoryColumn>* cols = m.memory().columns(v.t0, v.t1, columns); cols && !cols->empty()) {
      dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + kCounterH), IM_COL32(255, 255, 255, 8));
      std::vector<double> xs, alloc, reserved;
      double hi = 1;
      for (const MemoryColumn& c : *cols) {
        xs.push_back(static_cast<double>(c.t_ns));
        alloc.push_back(static_cast<double>(c.allocated));
        reserved.push_back(static_cast<double>(c.reserved));
        hi = std::max(hi, static_cast<double>(c.reserved));
      }
      const double a = static_cast<double>(v.t0), b = static_cast<double>(v.t1);  // columns start at t0 + i * width
      // Steps of 2 px filled rects (crisp, the exact colour) per column: x from the column's start to the next's.
      const float top = y + 3, h = kCounterH - 8;
      const double span = std::max(1.0, b - a);
      for (const auto& [ys, col] : {std::pair{&reserved, color::kReservedLine}, std::pair{&alloc, color::kAllocatedLine}})
        for (std::size_t i = 0; i < xs.size(); ++i) {
          const float xa = x0 + static_cast<float>((xs[i] - a) / span) * (x1 - x0);
          const float xb = i + 1 < xs.size() ? x0 + static_cast<float>((xs[i + 1] - a) / span) * (x1 - x0) : x1;
          const float yy = std::round(top + h - static_cast<float>((*ys)[i] / hi) * h);
          if (xb < x0 || xa > x1) continue;
          dl->AddRectFilled(ImVec2(std::round(std::max(xa, x0)), yy), ImVec2(std::round(std::min(xb, x1)) + 1, yy + 2),
                            plot::to_imgui(col));
        }
      dl->AddText(ImVec2(origin.x + 6, y + 3), plot::to_imgui(color::kAllocatedLine), "allocated");
      dl->AddText(ImVec2(origin.x + 6, y + 20), plot::to_imgui(color::kReservedLine),
                  ("reserved " + plot::bytes_label(hi)).c_str());
      y += kCounterH + 4;
    }
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::InvisibleButton("##canvas", ImVec2(std::max(1.0f, x1 - origin.x), std::max(1.0f, y - origin.y)));
  const bool active = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  std::optional<float>& range_from = state.timeline.range_from;
  if (active && io.KeyShift && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) range_from = io.MousePos.x;
  if (range_from) {
    dl->AddRectFilled(ImVec2(std::min(*range_from, io.MousePos.x), origin.y), ImVec2(std::max(*range_from, io.MousePos.x), y),
                      plot::to_imgui(color::kSelection, 0.18f));
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left)) v.zoom_to_pixels(*range_from, io.MousePos.x, x0, x1), range_from.reset();
  } else {
    plot::pan_zoom(v.t0, v.t1, x0, x1, active || ImGui::IsItemActive());
  }
  if (hovered && active) {
    span_tooltip(m, *hovered);
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 9 && !io.KeyShift) {
      if (hovered->count > 1) v.focus(hovered->start_ns, hovered->end_ns);
      else v.span = hovered->span.id, v.step = hovered->span.step;
    }
  }
  ImGui::EndChild();
  ImGui::BeginChild("##details", ImVec2(0, 0), true);
  if (!v.search.empty()) {
    search_histogram(m, v);
    ImGui::SetCursorScreenPos(ImVec2(ImGui::GetCursorScreenPos().x, ImGui::GetCursorScreenPos().y + 20));
    ImGui::Separator();
  }
  details_pane(m, v);
  ImGui::EndChild();
}

}  // namespace gb::viewer::panels
