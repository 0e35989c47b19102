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

namespace {

// One parameter's norms over [sx0, sx1] reduced to px columns (min, max, first, last of the finite, positive ones).
std::vector<plot::Column> history_columns(const GradHeatmap& h, std::size_t r, double sx0, double sx1, int px) {
  std::vector<plot::Column> cols(static_cast<std::size_t>(px));
  for (std::size_t k = 0; k < h.cols(); ++k) {
    const double n = h.at(r, k);
    if (!(n > 0) || h.flag_at(r, k) || !std::isfinite(n)) continue;
    const auto c =
        static_cast<std::size_t>(std::clamp((static_cast<double>(h.steps[k]) - sx0) / (sx1 - sx0) * px, 0.0, px - 1.0));
    plot::Column& col = cols[c];
    const auto y = static_cast<float>(n);
    if (col.n == 0) col.lo = col.hi = col.first = y;
    col.lo = std::min(col.lo, y), col.hi = std::max(col.hi, y), col.last = y, ++col.n;
  }
  return cols;
}

}  // namespace

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
  // The step axis: step t's centre (columns split [first, last + 1) evenly).
  const double span = static_cast<double>(gc.step_span), first = static_cast<double>(gc.first_step);
  auto x_of_step = [&](double t) { return p0.x + static_cast<float>((t - first + 0.5) / span) * (p1.x - p0.x); };
  for (double s : plot::nice_ticks(first, first + span - 1, std::max(2, px / 80))) {
    const std::string label = std::to_string(static_cast<std::int64_t>(s));
    const float x = std::min(x_of_step(s) - 4, p1.x - ImGui::CalcTextSize(label.c_str()).x);
    dl->AddText(ImVec2(x, origin.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
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
  if (v.step && *v.step >= gc.first_step && *v.step < gc.first_step + gc.step_span) {
    const auto c = static_cast<float>((*v.step - gc.first_step) * columns / gc.step_span);  // its column
    const float x = p0.x + c * cell_w;
    dl->AddRect(ImVec2(x - 1, p0.y - 1), ImVec2(x + std::max(cell_w, 2.0f) + 1, p1.y + 1),
                plot::to_imgui(color::kSelection), 0, 0, 2);
  }
  ImGui::SetCursorScreenPos(p0);
  ImGui::InvisibleButton("##heat", ImVec2(p1.x - p0.x, std::max(1.0f, p1.y - p0.y)));
  if (ImGui::IsItemHovered()) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const auto r = std::min(h.rows() - 1, static_cast<std::size_t>((mp.y - p0.y) / row_h));
    const int c = std::clamp(static_cast<int>((mp.x - p0.x) / cell_w), 0, columns - 1);
    const auto [ka, kb] = gc.steps(c);
    const std::size_t i = r * static_cast<std::size_t>(columns) + static_cast<std::size_t>(c);
    const char* flag = gc.flag[i] == 1 ? "   contains NaN" : gc.flag[i] == 2 ? "   contains Inf" : "";
    ImGui::BeginTooltip();
    if (ka == kb) {
      ImGui::Text("%s, step %" PRId64, h.labels[r].c_str(), gc.step_at(c));
      ImGui::TextDisabled("no gradient statistics in this step");
    } else if (kb - ka == 1) {
      ImGui::Text("%s, step %" PRId64, h.labels[r].c_str(), h.steps[ka]);
      ImGui::Text("gradient norm %.4g%s", h.at(r, ka), flag);
    } else {
      ImGui::Text("%s, steps %" PRId64 "..%" PRId64 " (%zu with statistics)", h.labels[r].c_str(), gc.step_at(c),
                  gc.step_at(c + 1) - 1, kb - ka);
      ImGui::Text("largest gradient norm %.4g%s", gc.best[i], flag);
    }
    ImGui::EndTooltip();
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
      v.param = h.param_ids[r], v.step = ka < kb ? h.steps[ka] : gc.step_at(c);
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
  ImGui::Text("%s: log10 gradient norm per step", h.labels[r].c_str());
  const ImVec2 q0(origin.x + label_w, ImGui::GetCursorScreenPos().y + 4), q1(p1.x, q0.y + plot_h - 30);
  dl->AddRectFilled(q0, q1, IM_COL32(255, 255, 255, 10));
  const double lo = std::log10(std::max(h.min_positive, 1e-30)), hi = std::log10(std::max(h.max, 1e-30));
  const double sx0 = first - 0.5, sx1 = first + span - 0.5;
  const int qpx = std::max(1, static_cast<int>(q1.x - q0.x));
  if (h.cols() <= static_cast<std::size_t>(qpx)) {  // every step with statistics a point
    std::vector<double> xs, ys;
    for (std::size_t k = 0; k < h.cols(); ++k)
      if (h.at(r, k) > 0 && !h.flag_at(r, k))
        xs.push_back(static_cast<double>(h.steps[k])), ys.push_back(std::log10(h.at(r, k)));
    plot::line_plot(dl, q0, q1, xs, ys, sx0, sx1, lo, hi, 0x7FD3FF);
  } else {  // more steps than pixels: each pixel column's range of norms (a long run)
    plot::minmax_line(dl, q0, q1, history_columns(h, r, sx0, sx1, qpx), std::pow(10.0, lo), std::pow(10.0, hi), true,
                      0x7FD3FF);
  }
  for (int c = 0; c < columns; ++c)  // the heatmap's columns with a NaN / Inf for this parameter
    if (gc.flag[r * static_cast<std::size_t>(columns) + static_cast<std::size_t>(c)]) {
      const auto [ka, kb] = gc.steps(c);
      for (std::size_t k = ka; k < kb; ++k)
        if (h.flag_at(r, k)) {
          const float x =
              q0.x + static_cast<float>((static_cast<double>(h.steps[k]) - sx0) / (sx1 - sx0)) * (q1.x - q0.x);
          dl->AddLine(ImVec2(x, q0.y), ImVec2(x, q1.y), plot::to_imgui(color::kNaN), 2);
          break;  // one tick a column
        }
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
  if (ux.size() <= static_cast<std::size_t>(qpx)) {
    plot::line_plot(dl, u0, u1, ux, uy, sx0, sx1, ulo - pad, uhi + pad, color::kUpdateRatio);
  } else {  // more steps than pixels: each pixel column's range
    std::vector<plot::Column> cols(static_cast<std::size_t>(qpx));
    for (std::size_t i = 0; i < ux.size(); ++i) {
      const auto c = static_cast<std::size_t>(std::clamp((ux[i] - sx0) / (sx1 - sx0) * qpx, 0.0, qpx - 1.0));
      plot::Column& col = cols[c];
      const auto y = static_cast<float>(uy[i]);
      if (col.n == 0) col.lo = col.hi = col.first = y;
      col.lo = std::min(col.lo, y), col.hi = std::max(col.hi, y), col.last = y, ++col.n;
    }
    plot::minmax_line(dl, u0, u1, cols, ulo - pad, uhi + pad, false, color::kUpdateRatio);
  }
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
