// viewer/panels/gradients.cpp — per-parameter gradient norms: a heatmap (rows = parameters in model order, columns
// = steps, log colour scale, NaN/Inf cells marked), and for the selected parameter its norm history and its
// update/parameter ratio (update_norm / param_norm; steps without one, e.g. NaN norms, get a magenta tick).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

void gradients(TraceModel& m, ViewState& v, PanelState&) {
  const GradHeatmap& h = m.gradients().heatmap();
  ImGui::Text("Gradient L2 norm per parameter and step");
  if (m.gradients().loading()) {
    ImGui::SameLine();
    plot::help_marker("Loading the gradient statistics in the background.");
    plot::empty_state("Loading gradient statistics...", "They are read once, in the background; the other panels work meanwhile.");
    return;
  }
  ImGui::SameLine();
  plot::help_marker("Rows are parameters in model order, columns are training steps; colour is the gradient's L2 "
                    "norm on a log scale (viridis: dark = small, yellow = large). Magenta cells hold NaN, orange "
                    "cells Inf. When there are more steps than pixels, a column shows the largest norm of its steps "
                    "and is marked when any of them is non-finite.\nClick a cell to select its parameter and step.");
  if (h.rows() == 0 || h.cols() == 0) {
    plot::empty_state("This trace has no gradient statistics.",
                      "They are written by the gradient monitor at each step end: run with GLASSBOX_TRACE=run.db "
                      "and mark steps in the training loop (gb::trace::StepScope), or try `glassbox synth run.db`.");
    return;
  }
  ImGui::SameLine(0, 24);
  plot::color_square(color::kNaN);
  ImGui::TextUnformatted("NaN");
  ImGui::SameLine(0, 12);
  plot::color_square(color::kInf);
  ImGui::TextUnformatted("Inf");
  ImGui::SameLine(0, 12);
  ImGui::TextDisabled("norm %.3g .. %.3g", h.min_positive, h.max);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float label_w = 170, plot_h = v.param ? 140.0f : 0.0f, ratio_h = v.param ? 130.0f : 0.0f;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float heat_h = std::max(60.0f, avail.y - plot_h - ratio_h - 70);
  const float row_h = std::clamp(heat_h / static_cast<float>(h.rows()), 2.0f, 22.0f);
  const ImVec2 p0(origin.x + label_w, origin.y + 20);
  const ImVec2 p1(origin.x + avail.x - 8, p0.y + row_h * static_cast<float>(h.rows()));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int px = std::max(1, static_cast<int>(p1.x - p0.x));
  // Cells at least 4 px wide; reduced off the frame: the last reduction (another width) meanwhile.
  const GradColumns* reduced = m.gradients().columns(std::max(1, px / 4));
  if (!reduced) {
    ImGui::Dummy(ImVec2(1, 20));
    ImGui::TextDisabled("computing...");
    return;
  }
  const GradColumns& gc = *reduced;
  const int columns = gc.columns;
  const float cell_w = (p1.x - p0.x) / static_cast<float>(columns);
  // Step labels.
  for (double s : plot::nice_ticks(0, static_cast<double>(h.cols() - 1), std::max(2, px / 80))) {
    const float x = p0.x + (static_cast<float>(s) + 0.5f) * (p1.x - p0.x) / static_cast<float>(h.cols());
    dl->AddText(ImVec2(x - 4, origin.y), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                std::to_string(h.steps[static_cast<std::size_t>(s)]).c_str());
  }
  constexpr color::Rgb kNone = 0xFFFFFFFF;
  std::vector<color::Rgb> row_colours;
  for (std::size_t r = 0; r < h.rows(); ++r) {
    const float y = p0.y + row_h * static_cast<float>(r);
    if (row_h >= ImGui::GetFontSize() - 2 || r % static_cast<std::size_t>(std::ceil(ImGui::GetFontSize() / row_h)) == 0)
      dl->AddText(ImVec2(origin.x + 4, y + (row_h - ImGui::GetFontSize()) / 2),
                  ImGui::GetColorU32(v.param == h.param_ids[r] ? ImGuiCol_PlotHistogram : ImGuiCol_Text), h.labels[r].c_str());
    // Neighbouring cells of the same colour are drawn as one rectangle (colours are quantized to 64 levels).
    row_colours.assign(static_cast<std::size_t>(columns), kNone);
    for (int c = 0; c < columns; ++c) {
      const std::size_t i = r * static_cast<std::size_t>(columns) + static_cast<std::size_t>(c);
      const std::uint8_t flag = gc.flag[i];
      if (!flag && std::isnan(gc.best[i])) continue;  // no row for these steps
      row_colours[static_cast<std::size_t>(c)] =
          flag == 1 ? color::kNaN : flag == 2 ? color::kInf : plot::heat_color(gc.best[i], h.min_positive, h.max, 64);
    }
    for (int c = 0; c < columns; ++c) {
      const color::Rgb col = row_colours[static_cast<std::size_t>(c)];
      if (col == kNone) continue;
      int run = 1;
      while (c + run < columns && row_colours[static_cast<std::size_t>(c + run)] == col) ++run;
      const float x = p0.x + cell_w * static_cast<float>(c), w = cell_w * static_cast<float>(run);
      dl->AddRectFilled(ImVec2(x, y), ImVec2(std::max(x + 1, x + w - (cell_w > 4 ? 1 : 0)), y + row_h - (row_h > 4 ? 1 : 0)),
                        plot::to_imgui(col));
      c += run - 1;
    }
  }
  // The selected step.
  if (v.step) {
    auto it = std::lower_bound(h.steps.begin(), h.steps.end(), *v.step);
    if (it != h.steps.end() && *it == *v.step) {
      const float x = p0.x + static_cast<float>(it - h.steps.begin()) * (p1.x - p0.x) / static_cast<float>(h.cols());
      dl->AddRect(ImVec2(x - 1, p0.y - 1), ImVec2(x + std::max(cell_w, 2.0f) + 1, p1.y + 1), plot::to_imgui(color::kSelection), 0, 0, 2);
    }
  }
  ImGui::SetCursorScreenPos(p0);
  ImGui::InvisibleButton("##heat", ImVec2(p1.x - p0.x, std::max(1.0f, p1.y - p0.y)));
  if (ImGui::IsItemHovered()) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const auto r = std::min(h.rows() - 1, static_cast<std::size_t>((mp.y - p0.y) / row_h));
    const auto k = std::min(h.cols() - 1, static_cast<std::size_t>((mp.x - p0.x) / (p1.x - p0.x) * static_cast<float>(h.cols())));
    ImGui::BeginTooltip();
    ImGui::Text("%s, step %" PRId64, h.labels[r].c_str(), h.steps[k]);
    ImGui::Text("gradient norm %.4g%s", h.at(r, k), h.flag_at(r, k) == 1 ? "   contains NaN" : h.flag_at(r, k) == 2 ? "   contains Inf" : "");
    ImGui::EndTooltip();
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) v.param = h.param_ids[r], v.step = h.steps[k];
  }
  // Colour bar.
  const float cy = p1.y + 8;
  for (int i = 0; i < 200; ++i)
    dl->AddRectFilled(ImVec2(p0.x + i, cy), ImVec2(p0.x + i + 1, cy + 10), plot::to_imgui(color::viridis(i / 199.0)));
  dl->AddText(ImVec2(p0.x + 206, cy - 3), ImGui::GetColorU32(ImGuiCol_TextDisabled), "log scale");
  ImGui::SetCursorScreenPos(ImVec2(origin.x, cy + 18));

  // The selected parameter's norm over the steps (log scale).
  if (!v.param) {
    ImGui::TextDisabled("Click a cell to plot that parameter's gradient norm over the steps.");
    return;
  }
  auto row = std::find(h.param_ids.begin(), h.param_ids.end(), *v.param);
  if (row == h.param_ids.end()) return;
  const auto r = static_cast<std::size_t>(row - h.param_ids.begin());
  std::vector<double> xs, ys;
  for (std::size_t k = 0; k < h.cols(); ++k)
    if (h.at(r, k) > 0 && !h.flag_at(r, k)) xs.push_back(static_cast<double>(h.steps[k])), ys.push_back(std::log10(h.at(r, k)));
  ImGui::Text("%s: log10 gradient norm per step", h.labels[r].c_str());
  const ImVec2 q0(origin.x + label_w, ImGui::GetCursorScreenPos().y + 4), q1(p1.x, q0.y + plot_h - 30);
  dl->AddRectFilled(q0, q1, IM_COL32(255, 255, 255, 10));
  const double lo = std::log10(std::max(h.min_positive, 1e-30)), hi = std::log10(std::max(h.max, 1e-30));
  plot::line_plot(dl, q0, q1, xs, ys, static_cast<double>(h.steps.front()) - 0.5, static_cast<double>(h.steps.back()) + 0.5, lo, hi, 0x7FD3FF);
  for (std::size_t k = 0; k < h.cols(); ++k)
    if (h.flag_at(r, k)) {
      const float x = q0.x + (static_cast<float>(k) + 0.5f) * (q1.x - q0.x) / static_cast<float>(h.cols());
      dl->AddLine(ImVec2(x, q0.y), ImVec2(x, q1.y), plot::to_imgui(color::kNaN), 2);
    }
  ImGui::Dummy(ImVec2(1, plot_h - 26));

  // The update/parameter ratio (log10): how far one optimizer step moves the weights (~1e-3 is typical).
  const UpdateRatio u = m.gradients().update_ratio(*v.param);
  ImGui::Text("%s: log10 update/parameter ratio (update_norm / param_norm)", h.labels[r].c_str());
  ImGui::SameLine();
  plot::help_marker("The L2 norm of the optimizer's update divided by the parameter's L2 norm, per step. Around 1e-3 "
                    "is healthy; much larger means the learning rate is too high for this layer, much smaller that it "
                    "barely learns. Steps without a ratio (a NaN norm, or no update recorded) are marked in magenta.");
  if (u.steps.empty() && u.skipped.empty()) {
    ImGui::TextDisabled("No update norms for this parameter: the trace was written without optimizer statistics.");
    return;
  }
  const ImVec2 u0(origin.x + label_w, ImGui::GetCursorScreenPos().y + 4), u1(p1.x, u0.y + ratio_h - 30);
  dl->AddRectFilled(u0, u1, IM_COL32(255, 255, 255, 10));
  std::vector<double> ux, uy;
  double ulo = 0, uhi = 0;
  for (std::size_t i = 0; i < u.steps.size(); ++i) {
    if (!(u.ratio[i] > 0)) continue;
    ux.push_back(static_cast<double>(u.steps[i]));
    uy.push_back(std::log10(u.ratio[i]));
    ulo = ux.size() == 1 ? uy.back() : std::min(ulo, uy.back());
    uhi = ux.size() == 1 ? uy.back() : std::max(uhi, uy.back());
  }
  const double pad = std::max(0.1, (uhi - ulo) * 0.1);
  const double sx0 = static_cast<double>(h.steps.front()) - 0.5, sx1 = static_cast<double>(h.steps.back()) + 0.5;
  plot::line_plot(dl, u0, u1, ux, uy, sx0, sx1, ulo - pad, uhi + pad, color::kUpdateRatio);
  for (std::int64_t s : u.skipped) {
    const float x = u0.x + static_cast<float>((static_cast<double>(s) - sx0) / (sx1 - sx0)) * (u1.x - u0.x);
    dl->AddLine(ImVec2(x, u0.y), ImVec2(x, u1.y), plot::to_imgui(color::kNaN), 2);
  }
  char lab[64];
  std::snprintf(lab, sizeof lab, "1e%.1f", uhi + pad);
  dl->AddText(ImVec2(u0.x - 60, u0.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), lab);
  std::snprintf(lab, sizeof lab, "1e%.1f", ulo - pad);
  dl->AddText(ImVec2(u0.x - 60, u1.y - ImGui::GetFontSize()), ImGui::GetColorU32(ImGuiCol_TextDisabled), lab);
  ImGui::Dummy(ImVec2(1, ratio_h - 26));
}

}  // namespace gb::viewer::panels
