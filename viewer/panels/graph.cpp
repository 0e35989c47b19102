// viewer/panels/graph.cpp — the autograd graph of one step, laid out top-down from the loss (TraceModel::graph:
// layers by longest path, barycenter order): nodes coloured by backward time or saved bytes, arrows along the
// gradient flow; a selected node shows what it saved for backward and why (graph_notes.h) and links to its
// forward op and backward node in the timeline.
#include <algorithm>
#include <cinttypes>

#include "traces/query/format.h"
#include "viewer/graph_notes.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {

constexpr float kNodeW = 176, kNodeH = 38, kGapX = 22, kGapY = 46, kDetailsH = 128;

double node_value(const AutogradGraph& g, const GraphNode& n, bool by_saved) {
  if (by_saved) return static_cast<double>(n.record.saved_bytes);
  return n.backward ? static_cast<double>(n.backward->end_ns - n.backward->start_ns) : 0.0;
  (void)g;
}

color::Rgb node_color(const AutogradGraph& g, const GraphNode& n, bool by_saved) {
  const double hi = static_cast<double>(by_saved ? g.max_saved_bytes : g.max_backward_ns);
  const double v = node_value(g, n, by_saved);
  if (!(v > 0) || !(hi > 0)) return 0x3A3F4A;  // nothing saved / no backward span: dark grey
  return plot::heat_color(v, std::max(1.0, hi / 1000), hi, color::kGraphLevels);
}

void details(ViewState& v, const AutogradGraph& g) {
  const GraphNode* sel = nullptr;
  for (const GraphNode& n : g.nodes)
    if (v.node && n.record.id == *v.node) sel = &n;
  if (!sel) {
    ImGui::TextDisabled("Click a node: what it saved for backward and why, its backward time, and links to its "
                        "forward op and backward node in the timeline.");
    return;
  }
  const auto& r = sel->record;
  ImGui::Text("%s", sel->name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(node %" PRId64 ", seq %" PRId64 ", module %s)", r.id, r.seq, sel->module.empty() ? "-" : sel->module.c_str());
  ImGui::Text("saved for backward: %s   backward time: %s", gb::query::format_bytes(r.saved_bytes).c_str(),
              sel->backward ? gb::query::format_time(static_cast<double>(sel->backward->end_ns - sel->backward->start_ns)).c_str() : "-");
  const std::string_view note = graph_note(sel->name);
  ImGui::PushTextWrapPos(0);
  if (!note.empty()) ImGui::TextColored(ImVec4(0.75f, 0.9f, 1, 1), "why: %.*s", static_cast<int>(note.size()), note.data());
  else ImGui::TextDisabled("why: (no note for this node; it saved what its backward formula reads)");
  ImGui::PopTextWrapPos();
  if (r.forward_span_id && ImGui::SmallButton("go to forward op")) {
    v.span = *r.forward_span_id;
    v.jump = ViewState::Jump{*r.forward_span_id, 2.0};
    v.show = Panel::timeline;
  }
  if (sel->backward) {
    if (r.forward_span_id) ImGui::SameLine();
    if (ImGui::SmallButton("go to backward node")) {
      v.span = sel->backward->id;
      v.focus(sel->backward->start_ns, sel->backward->end_ns, 2.0);
      v.show = Panel::timeline;
    }
  }
}

}  // namespace

void graph(TraceModel& m, ViewState& v, PanelState&) {
  ImGui::Text("Autograd graph");
  ImGui::SameLine();
  plot::help_marker("The graph autograd recorded in the forward pass of a step, as backward runs it: the loss at the "
                    "top, the gradient flowing down the arrows to the leaves (AccumulateGrad: the parameters).\n"
                    "Layers are the longest path from the loss; nodes in a layer are ordered to cross few edges.\n"
                    "Colour: the node's backward time (its backward_node span), or the bytes it saved for backward "
                    "(viridis, log scale; grey = none). Click a node for what it saved and why; its buttons jump "
                    "to the forward op and the backward node in the timeline. Scroll to pan.");
  if (no_detail_notice(m, v)) return;  // a long run's step without detail: where the nearest detail is
  if (written_after_open_notice(m, v, "autograd graphs")) return;
  const auto& steps = m.graph().steps();
  if (steps.empty()) {
    plot::empty_state("This trace has no autograd graph.",
                      "The engine records the graph of a step (graph_nodes, graph_edges) when tracing is on and "
                      "the step is marked (gb::trace::StepScope); `glassbox synth run.db` writes step 0's.");
    return;
  }
  std::int64_t step = steps.front();
  if (v.step && std::find(steps.begin(), steps.end(), *v.step) != steps.end()) step = *v.step;
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(120);
  if (ImGui::BeginCombo("step", std::to_string(step).c_str())) {
    for (std::int64_t s : steps)
      if (ImGui::Selectable(std::to_string(s).c_str(), s == step)) v.step = s;
    ImGui::EndCombo();
  }
  ImGui::SameLine(0, 16);
  int by = v.graph_by_saved ? 1 : 0;
  ImGui::RadioButton("backward time", &by, 0);
  ImGui::SameLine();
  ImGui::RadioButton("saved bytes", &by, 1);
  v.graph_by_saved = by == 1;
  const std::shared_ptr<const AutogradGraph> g = m.graph().get(step);
  if (!g && m.graph().pending(step)) {
    ImGui::SameLine(0, 16);
    ImGui::TextDisabled("reading the graph of step %" PRId64 "...", step);
    return;
  }
  if (!g || g->nodes.empty()) {
    plot::empty_state("No graph nodes in this step.", "Pick another step above.");
    return;
  }
  ImGui::SameLine(0, 16);
  ImGui::TextDisabled("%zu nodes, %zu edges, %d layers", g->nodes.size(), g->edges.size(), g->layers);

  ImGui::BeginChild("##graph", ImVec2(0, -kDetailsH), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float content_w = std::max(avail, g->width * (kNodeW + kGapX));
  std::vector<int> per_layer(static_cast<std::size_t>(g->layers), 0);
  for (const GraphNode& n : g->nodes) ++per_layer[static_cast<std::size_t>(n.layer)];
  auto pos = [&](const GraphNode& n) {  // top-left of the node's box, each layer centred
    const float row_w = per_layer[static_cast<std::size_t>(n.layer)] * (kNodeW + kGapX) - kGapX;
    return ImVec2(origin.x + (content_w - row_w) / 2 + n.order * (kNodeW + kGapX), origin.y + 8 + n.layer * (kNodeH + kGapY));
  };
  const ImVec2 clip0 = ImGui::GetWindowPos(), clip1(clip0.x + ImGui::GetWindowWidth(), clip0.y + ImGui::GetWindowHeight());
  auto visible = [&](ImVec2 a, ImVec2 b) { return b.x >= clip0.x && a.x <= clip1.x && b.y >= clip0.y && a.y <= clip1.y; };
  // Edges first, under the boxes: from the bottom of src to the top of dst, an arrow head at dst.
  const ImU32 edge = plot::to_imgui(color::kGraphEdge);
  for (auto [a, b] : g->edges) {
    const ImVec2 pa = pos(g->nodes[static_cast<std::size_t>(a)]), pb = pos(g->nodes[static_cast<std::size_t>(b)]);
    const ImVec2 from(pa.x + kNodeW / 2, pa.y + kNodeH), to(pb.x + kNodeW / 2, pb.y - 1);
    if (!visible(ImVec2(std::min(from.x, to.x), from.y), ImVec2(std::max(from.x, to.x), to.y))) continue;
    dl->AddLine(from, ImVec2(to.x, to.y - 7), edge, 2.0f);
    dl->AddTriangleFilled(ImVec2(to.x - 6, to.y - 9), ImVec2(to.x + 6, to.y - 9), to, edge);
  }
  const GraphNode* hovered = nullptr;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (const GraphNode& n : g->nodes) {
    const ImVec2 a = pos(n), b(a.x + kNodeW, a.y + kNodeH);
    if (!visible(a, b)) continue;
    const color::Rgb c = node_color(*g, n, v.graph_by_saved);
    dl->AddRectFilled(a, b, plot::to_imgui(c), 4);
    const bool sel = v.node && *v.node == n.record.id;
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), sel ? plot::to_imgui(color::kSelection) : IM_COL32(20, 20, 24, 255), 4, 0, sel ? 3.0f : 1.0f);
    const ImU32 fg = plot::is_dark(c) ? IM_COL32(255, 255, 255, 255) : IM_COL32(15, 15, 15, 255);
    dl->PushClipRect(a, b, true);
    dl->AddText(ImVec2(a.x + 6, a.y + 3), fg, n.name.c_str());
    const std::string sub = v.graph_by_saved ? "saved " + gb::query::format_bytes(n.record.saved_bytes)
                            : n.backward ? gb::query::format_time(static_cast<double>(n.backward->end_ns - n.backward->start_ns))
                                         : std::string("no backward span");
    dl->AddText(ImVec2(a.x + 6, a.y + 19), fg, (sub + (n.module.empty() ? "" : "  " + n.module)).c_str());
    dl->PopClipRect();
    if (mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) hovered = &n;
  }
  ImGui::Dummy(ImVec2(content_w, g->layers * (kNodeH + kGapY) + 16));
  if (hovered && ImGui::IsWindowHovered()) {
    ImGui::BeginTooltip();
    ImGui::Text("%s", hovered->name.c_str());
    ImGui::Text("saved %s", gb::query::format_bytes(hovered->record.saved_bytes).c_str());
    const std::string_view note = graph_note(hovered->name);
    if (!note.empty()) ImGui::TextDisabled("%.*s", static_cast<int>(note.size()), note.data());
    ImGui::EndTooltip();
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) v.node = hovered->record.id;
  }
  ImGui::EndChild();
  ImGui::BeginChild("##node", ImVec2(0, 0), true);
  details(v, *g);
  ImGui::EndChild();
}

}  // namespace gb::viewer::panels
