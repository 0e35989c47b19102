// viewer/panels/run.cpp — the Run panel (the first tab): the run summary of every step as stacked plots sharing
// the step axis — loss (log scale option) with the anomalies as markers, lr, step time split into data / forward /
// backward / optimizer, throughput, the global gradient norm, peak memory per device — the detail windows as bands
// under them, and the step axis. Wheel zooms, a drag pans, hovering shows the step's values, a click selects it and
// offers to open it in the detail panels (or says it has none, and where the nearest detail is). A compare trace
// (--compare B.db) overlays its loss and step time. Every curve is drawn from RunModel's level of detail: one
// aggregate per pixel column, never a walk over the points.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "traces/query/format.h"
#include "traces/query/memory.h"
#include "traces/schema.h"
#include "viewer/panels/panels.h"
#include "viewer/plot.h"

namespace gb::viewer::panels {

namespace {

using gb::trace::DetailReason;

std::vector<plot::Column> columns(const SeriesLod& s, const std::vector<std::size_t>& b) {
  const std::size_t n = b.empty() ? 0 : b.size() - 1;
  std::vector<plot::Column> out(n);
  for (std::size_t c = 0; c < n; ++c) {
    if (b[c] == b[c + 1]) continue;
    const RunAgg a = s.query(b[c], b[c + 1]);
    if (a.empty()) continue;
    out[c] = plot::Column{a.min, a.max, a.first, a.last, static_cast<float>(a.mean()), a.n};
  }
  return out;
}

// The range of the visible columns' values (positive ones only, for a log scale); false when there are none.
bool value_range(const std::vector<plot::Column>& cols, bool log, double& lo, double& hi) {
  lo = INFINITY, hi = -INFINITY;
  for (const plot::Column& c : cols) {
    if (c.n == 0) continue;
    if (log) {
      if (c.hi > 0) hi = std::max(hi, static_cast<double>(c.hi));
      if (c.lo > 0)
        lo = std::min(lo, static_cast<double>(c.lo));
      else if (c.hi > 0)
        lo = std::min(lo, static_cast<double>(c.hi));
    } else {
      lo = std::min(lo, static_cast<double>(c.lo)), hi = std::max(hi, static_cast<double>(c.hi));
    }
  }
  if (!(hi >= lo)) return false;
  if (log) {
    if (hi <= lo) lo /= 2, hi *= 2;
    const double pad = std::pow(hi / lo, 0.04);  // a margin: values at the ends stay whole lines
    lo /= pad, hi *= pad;
  } else if (hi <= lo) {
    lo -= std::max(1e-12, std::fabs(lo) * 0.1), hi += std::max(1e-12, std::fabs(hi) * 0.1);
  } else {
    const double pad = (hi - lo) * 0.04;
    lo -= pad, hi += pad;
  }
  return true;
}

std::string step_label(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", s);
  return buf;
}

bool is_recorder(DetailReason r) {
  return r != DetailReason::first && r != DetailReason::periodic && r != DetailReason::full;
}

struct Plot {
  const char* title;
  ImVec2 p0, p1;
};

}  // namespace

void go_to_step(TraceModel& m, ViewState& v, std::int64_t s) {
  v.step = s;
  if (auto r = m.step(s)) {
    v.focus(r->start_ns, r->end_ns, 0.02);
    v.cursor = (r->start_ns + r->end_ns) / 2;
  }
}

bool written_after_open_notice(TraceModel& m, ViewState& v, const char* what) {
  if (!v.step || !m.detail_after_open(*v.step)) return false;
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "Step %" PRId64 " was written after this file was opened", *v.step);
  ImGui::TextWrapped(
      "Its %s are read when the file is opened: reload it (F5) to see them. The view is kept, and a "
      "run still being written is followed again.",
      what);
  if (ImGui::Button("Reload (F5)")) v.reload = true;
  ImGui::SameLine();
  if (ImGui::Button("Back to the Run panel")) v.show = Panel::run;
  return true;
}

bool no_detail_notice(TraceModel& m, ViewState& v) {
  if (!v.step || m.detail().has_detail(*v.step)) return false;
  const auto near = m.detail().nearest(*v.step);
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "Step %" PRId64 " has no detail (summary only)", *v.step);
  ImGui::SameLine();
  plot::help_marker(
      "A long run keeps the detail (spans, memory events, op details) of some steps only: the first "
      "ones, a few every N steps, and the steps before an anomaly and at the end (the detail policy, "
      "meta `detail`). Every step keeps its summary: see the Run panel.");
  std::string near_text;
  if (near.before && near.after)
    near_text = std::to_string(*near.before) + " and " + std::to_string(*near.after);
  else if (near.before)
    near_text = std::to_string(*near.before);
  else if (near.after)
    near_text = std::to_string(*near.after);
  if (near_text.empty()) {
    ImGui::TextUnformatted("No step of this trace has detail.");
  } else {
    ImGui::Text("Nearest steps with detail: %s", near_text.c_str());
    for (const auto& s : {near.before, near.after}) {
      if (!s) continue;
      ImGui::SameLine();
      const std::string label = "Go to step " + std::to_string(*s);
      if (ImGui::Button(label.c_str())) go_to_step(m, v, *s);
    }
  }
  if (ImGui::Button("Back to the Run panel")) v.show = Panel::run;
  return true;
}

bool live_indicator(const TraceModel& m) {
  const LiveStatus& live = m.live();
  const std::string text = live.text();
  if (text.empty()) return false;
  const color::Rgb c = live.following ? color::kLive : live.died ? color::kWriterDied : color::kLiveEnded;
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(plot::to_imgui(c)), "%s", text.c_str());
  return true;
}

void run(TraceModel& m, ViewState& v, PanelState& ps) {
  RunState& st = ps.run;
  const RunModel& rm = m.run();
  ImGui::TextUnformatted("Run");
  ImGui::SameLine();
  plot::help_marker(
      "Every step of the run (the run summary, whatever the detail), plotted over the step axis: the loss (the "
      "markers above it are anomalies, coloured by severity: hover one for its message), the learning rate, the "
      "step time split into data loading / forward / backward / optimizer (the mean of each pixel column's steps, "
      "stacked; the grey line is the column's slowest step), the throughput, the global gradient norm, and each "
      "device's peak allocated and reserved memory. A pixel column of many steps shows their range (min to max).\n"
      "The band under the plots marks the steps with detail (blue: the policy's windows; pink: the flight "
      "recorder's, before an anomaly and at the end); only those steps open in the Timeline, Memory and Autograd "
      "graph panels.\nWheel: zoom; drag: pan; click: select a step; Fit: the whole run.");
  if (rm.loading()) {
    plot::empty_state("Loading the run summary...",
                      "Every step's loss, times and memory are read once, in the background; the other panels work "
                      "meanwhile.");
    return;
  }
  const RunData& r = rm.data();
  if (r.empty()) {
    plot::empty_state("This trace has no steps.",
                      "A traced run writes one row per training step (its loss, lr, time split and memory): run "
                      "with GLASSBOX_TRACE=run.db and an optimizer, or mark steps with gb::trace::StepScope; "
                      "`glassbox synth run.db --long-steps 100000` makes a long synthetic run.");
    return;
  }
  const double lo = static_cast<double>(r.steps.front()), hi = static_cast<double>(r.steps.back()) + 1;
  const double min_width = std::min(hi - lo, 8.0);
  // The whole run at first; the same trace reopened (F5: a run still being written has more steps) keeps the
  // range, clamped to the run's.
  // A run that grew (followed live, or F5) with the view at its end: the view follows the newest step (the whole
  // run stays whole; a zoomed view keeps its width).
  if (st.fitted == 0 || !(st.s1 > st.s0)) st.s0 = lo, st.s1 = hi;
  if (st.fitted != r.serial) {
    if (st.fitted != 0 && st.hi > st.lo && hi > st.hi && st.s1 >= st.hi) {
      if (st.s0 <= st.lo)
        st.s0 = lo, st.s1 = hi;
      else
        st.s0 += hi - st.s1, st.s1 = hi;
    }
    const double w = std::min(st.s1 - st.s0, hi - lo);
    st.s0 = std::clamp(st.s0, lo, hi - w), st.s1 = st.s0 + w, st.fitted = r.serial;
    st.lo = lo, st.hi = hi;
  }
  const RunData* b_run = m.compare().run_b();
  const bool has_b = b_run && !b_run->empty();

  // Toolbar.
  ImGui::SameLine(0, 16);
  if (ImGui::SmallButton("Fit")) st.s0 = lo, st.s1 = hi;
  ImGui::SameLine(0, 12);
  ImGui::Checkbox("log loss", &st.log_loss);
  ImGui::SameLine(0, 12);
  ImGui::Checkbox("log gradient norm", &st.log_grad);
  const bool has_samples = r.at(RunSeries::samples_per_s).any(), has_tokens = r.at(RunSeries::tokens_per_s).any();
  if (has_samples && has_tokens) {
    ImGui::SameLine(0, 12);
    int t = st.tokens ? 1 : 0;
    ImGui::RadioButton("samples/s", &t, 0);
    ImGui::SameLine();
    ImGui::RadioButton("tokens/s", &t, 1);
    st.tokens = t == 1;
  }
  const gb::query::DetailWindows& detail = m.detail();
  ImGui::SameLine(0, 16);
  if (live_indicator(m)) ImGui::SameLine(0, 16);  // a trace being written, or how it ended
  if (detail.all())
    ImGui::TextDisabled("%zu steps, all with detail", r.size());
  else
    ImGui::TextDisabled("%zu steps, %" PRId64 " with detail in %zu windows", r.size(), detail.steps_with_detail(),
                        detail.windows.size());
  if (has_b) {
    ImGui::SameLine(0, 16);
    plot::color_square(color::kCompareB);
    ImGui::TextDisabled("compare: %zu steps", b_run->size());
  }

  // The selected step: its values, and where it opens.
  if (v.step) {
    const std::int64_t s = *v.step;
    ImGui::Text("Step %" PRId64, s);
    ImGui::SameLine();
    if (detail.has_detail(s)) {
      ImGui::TextDisabled("has detail; open in");
      const std::pair<const char*, Panel> targets[] = {{"Timeline", Panel::timeline},
                                                       {"Memory", Panel::memory},
                                                       {"Gradients", Panel::gradients},
                                                       {"Autograd graph", Panel::graph}};
      for (const auto& [label, panel] : targets) {
        ImGui::SameLine();
        if (ImGui::SmallButton(label)) go_to_step(m, v, s), v.show = panel;
      }
    } else {
      const auto near = detail.nearest(s);
      ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "has no detail (summary only);");
      ImGui::SameLine();
      if (!near.before && !near.after)
        ImGui::TextDisabled("no step has detail");
      else
        ImGui::TextDisabled("nearest steps with detail:");
      for (const auto& n : {near.before, near.after}) {
        if (!n) continue;
        ImGui::SameLine();
        const std::string label = "open step " + std::to_string(*n);
        if (ImGui::SmallButton(label.c_str())) {
          go_to_step(m, v, *n);
          if (*n < st.s0 || *n >= st.s1) {  // keep it in view
            const double w = st.s1 - st.s0;
            st.s0 = std::clamp(static_cast<double>(*n) - w / 2, lo, std::max(lo, hi - w)), st.s1 = st.s0 + w;
          }
        }
      }
    }
  } else {
    ImGui::TextDisabled("Click a step to select it.");
  }

  // Layout: stacked plots, the detail band, the step axis.
  const ImVec2 origin = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  const float left = 76, right = 12, band_h = 10, axis_h = 20, gap = 6;
  const float x0 = origin.x + left, x1 = std::max(x0 + 50, origin.x + avail.x - right);
  const int px = std::max(1, static_cast<int>(x1 - x0));
  const bool has_throughput = has_samples || has_tokens, has_grad = r.at(RunSeries::grad_norm).any(),
             has_memory = !r.memory.empty();
  std::vector<const char*> titles = {"loss", "learning rate", "step time"};
  if (has_throughput) titles.push_back(st.tokens || !has_samples ? "tokens/s" : "samples/s");
  if (has_grad) titles.push_back("gradient norm");
  if (has_memory) titles.push_back("peak memory");
  const float plots_h = std::max(60.0f, avail.y - band_h - axis_h - 8);
  const float plot_h =
      std::max(24.0f, (plots_h - gap * static_cast<float>(titles.size() - 1)) / static_cast<float>(titles.size()));
  std::vector<Plot> plots;
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const float y = origin.y + static_cast<float>(i) * (plot_h + gap);
    plots.push_back(Plot{titles[i], ImVec2(x0, y), ImVec2(x1, y + plot_h)});
  }
  const float plots_bottom = plots.back().p1.y, band_y = plots_bottom + 4, axis_y = band_y + band_h + 2;
  ImDrawList* dl = ImGui::GetWindowDrawList();

  // Interaction over the plots and the band.
  ImGui::SetCursorScreenPos(ImVec2(x0, origin.y));
  ImGui::InvisibleButton("##runplots", ImVec2(x1 - x0, std::max(1.0f, axis_y - origin.y)));
  const bool hovered = ImGui::IsItemHovered(), active = ImGui::IsItemActive();
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemActivated()) st.press_x = io.MousePos.x;
  const bool dragging = active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3.0f);
  plot::pan_zoom_range(st.s0, st.s1, x0, x1, hovered, dragging, lo, hi, min_width);
  const double s0 = st.s0, s1 = st.s1, per_px = (s1 - s0) / px;
  auto x_of = [&](double s) { return x0 + static_cast<float>((s - s0) / (s1 - s0)) * (x1 - x0); };
  RunColumns& C = st.columns;  // reduced once per view: a still view redraws from them
  const std::uint64_t b_serial = has_b ? b_run->serial : 0;
  if (C.run != r.serial || C.run_b != b_serial || C.s0 != s0 || C.s1 != s1 || C.px != px) {
    const std::vector<std::size_t> bounds = r.column_bounds(s0, s1, px);
    C = RunColumns{};
    C.run = r.serial, C.run_b = b_serial, C.s0 = s0, C.s1 = s1, C.px = px;
    for (const SeriesLod& series : r.series) C.series.push_back(columns(series, bounds));
    for (const RunData::DeviceMemory& d : r.memory)
      C.allocated.push_back(columns(d.allocated_peak, bounds)), C.reserved.push_back(columns(d.reserved_peak, bounds));
    if (has_b) {
      const std::vector<std::size_t> b_bounds = b_run->column_bounds(s0, s1, px);
      C.b_loss = columns(b_run->at(RunSeries::loss), b_bounds);
      C.b_step = columns(b_run->at(RunSeries::step_ns), b_bounds);
    }
  }
  auto cols_of = [&](RunSeries s) -> const std::vector<plot::Column>& { return C.series[static_cast<std::size_t>(s)]; };
  // The step under the mouse (the nearest point), when it is over the plots.
  std::optional<std::size_t> hover_point;
  if (hovered && io.MousePos.x >= x0 && io.MousePos.x < x1)
    hover_point = r.nearest(std::floor(s0 + (io.MousePos.x - x0) * per_px));
  if (ImGui::IsItemDeactivated() && std::fabs(io.MousePos.x - st.press_x) < 3 && hover_point)
    v.step = r.steps[*hover_point];

  const ImU32 frame = ImGui::GetColorU32(ImGuiCol_FrameBg), text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 disabled = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  auto frame_plot = [&](const Plot& p, const std::string& title) {
    dl->AddRectFilled(p.p0, p.p1, frame);
    dl->AddText(ImVec2(p.p0.x + 6, p.p0.y + 2), text, title.c_str());
  };
  auto time_ns = [](double ns) { return ns == 0 ? std::string("0") : plot::time_label(ns); };
  std::string anomaly_tip;
  std::size_t pi = 0;

  // Loss, with B's loss and the anomaly markers.
  {
    const Plot& p = plots[pi++];
    const std::vector<plot::Column>& cols = cols_of(RunSeries::loss);
    const std::vector<plot::Column>& bcols = C.b_loss;
    double a = 0, b = 0, ba = 0, bb = 0;
    const bool ok = value_range(cols, st.log_loss, a, b);
    if (has_b && value_range(bcols, st.log_loss, ba, bb)) a = ok ? std::min(a, ba) : ba, b = ok ? std::max(b, bb) : bb;
    frame_plot(p, st.log_loss ? "loss (log)" : "loss");
    if (ok || has_b) {
      const ImVec2 q0(p.p0.x, p.p0.y + 14), q1 = p.p1;  // room for the markers
      plot::range_axis(dl, q0, q1, a, b, st.log_loss, plot::si_label);
      if (has_b) plot::minmax_line(dl, q0, q1, bcols, a, b, st.log_loss, color::kCompareB);
      plot::minmax_line(dl, q0, q1, cols, a, b, st.log_loss, color::kRunLoss);
    } else {
      dl->AddText(ImVec2(p.p0.x + 80, p.p0.y + 2), disabled, "no loss in this trace");
    }
    // Anomalies: a triangle per anomaly at its step, above the curve; errors drawn last (on top).
    for (int sev = 0; sev <= 2; ++sev)
      for (const AnomalyRow& an : m.anomalies()) {
        const auto& rec = an.record;
        if (static_cast<int>(rec.severity) != sev || !rec.step) continue;
        const double s = static_cast<double>(*rec.step) + 0.5;
        if (s < s0 || s >= s1) continue;
        const float x = x_of(s), y = p.p0.y + 3;
        dl->AddTriangleFilled(ImVec2(x - 5, y), ImVec2(x + 5, y), ImVec2(x, y + 9),
                              plot::to_imgui(color::kSeverity[sev]));
        if (hovered && std::fabs(io.MousePos.x - x) <= 5 && io.MousePos.y >= p.p0.y && io.MousePos.y <= y + 12) {
          const std::string_view kind = gb::trace::name(rec.kind);
          anomaly_tip += (anomaly_tip.empty() ? "" : "\n") + std::string(gb::trace::name(rec.severity)) + " " +
                         std::string(kind) + " at step " + std::to_string(*rec.step) + ": " + rec.message;
        }
      }
  }
  // Learning rate.
  {
    const Plot& p = plots[pi++];
    const std::vector<plot::Column>& cols = cols_of(RunSeries::lr);
    double a = 0, b = 0;
    frame_plot(p, "learning rate");
    if (value_range(cols, false, a, b)) {
      a = std::min(a, 0.0);
      const ImVec2 q0(p.p0.x, p.p0.y + 16), q1 = p.p1;
      plot::range_axis(dl, q0, q1, a, b, false, [](double x) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2g", x);
        return std::string(buf);
      });
      plot::minmax_line(dl, q0, q1, cols, a, b, false, color::kRunLr);
    } else {
      dl->AddText(ImVec2(p.p0.x + 120, p.p0.y + 2), disabled, "no learning rate in this trace");
    }
  }
  // Step time: the phases' means stacked per column, the slowest step's line over them; B's step time.
  {
    const Plot& p = plots[pi++];
    const std::vector<plot::Column>& total = cols_of(RunSeries::step_ns);
    const std::vector<plot::Column>& bcols = C.b_step;
    double a = 0, b = 0, ba = 0, bb = 0;
    const bool ok = value_range(total, false, a, b);
    if (has_b && value_range(bcols, false, ba, bb)) b = ok ? std::max(b, bb) : bb;
    a = 0;
    // With a compare trace open: this run's total in the loss's colour beside B's (the split's colours would
    // mix with B's); else the split stacked.
    const bool stacked = r.has_phases() && !has_b;
    if (ok && stacked) {
      // A robust top: a few slow steps (the first, a checkpoint, a stall) must not flatten every other. The top is
      // the larger of the 90th percentiles of the columns' slowest step and of their stacked means; what reaches
      // above it is clipped there.
      std::vector<double> his, means;
      const RunSeries split[] = {RunSeries::data_ns, RunSeries::forward_ns, RunSeries::backward_ns,
                                 RunSeries::optimizer_ns};
      for (std::size_t c = 0; c < total.size(); ++c) {
        if (!total[c].n) continue;
        his.push_back(static_cast<double>(total[c].hi));
        double sum = 0;
        for (RunSeries s : split) {
          const plot::Column& col = cols_of(s)[c];
          if (col.n) sum += static_cast<double>(col.mean);
        }
        means.push_back(sum);
      }
      auto p90 = [](std::vector<double>& v) {
        auto q = v.begin() + static_cast<std::ptrdiff_t>(v.size() * 9 / 10);
        std::nth_element(v.begin(), q, v.end());
        return *q;
      };
      if (his.size() >= 20) b = std::min(b, 1.1 * std::max(p90(his), p90(means)));
    }
    frame_plot(p, has_b     ? "step time: this run / compare"
                  : stacked ? "step time: data / forward / backward / optimizer"
                            : "step time");
    if (ok) {
      const ImVec2 q0(p.p0.x, p.p0.y + 16), q1 = p.p1;
      plot::range_axis(dl, q0, q1, a, b, false, time_ns);
      dl->PushClipRect(q0, q1, true);  // the slowest steps may reach above the robust top
      if (stacked) {
        const RunSeries phases[] = {RunSeries::data_ns, RunSeries::forward_ns, RunSeries::backward_ns,
                                    RunSeries::optimizer_ns};
        plot::stacked_columns(
            dl, q0, q1, px, 4,
            [&](int c, int l) {
              const plot::Column& col = cols_of(phases[l])[static_cast<std::size_t>(c)];
              return col.n ? static_cast<double>(col.mean) : 0.0;
            },
            color::kRunPhase, b);
        plot::minmax_line(
            dl, q0, q1,
            [&] {
              std::vector<plot::Column> mx = total;  // the slowest step of each column
              for (plot::Column& c : mx) c.first = c.last = c.lo = c.hi;
              return mx;
            }(),
            a, b, false, color::kRunStepMax, 1.0f);
      } else if (has_b) {
        plot::minmax_line(dl, q0, q1, bcols, a, b, false, color::kCompareB);
        plot::minmax_line(dl, q0, q1, total, a, b, false, color::kRunLoss);
      } else {
        plot::minmax_line(dl, q0, q1, total, a, b, false, color::kRunPhase[1]);
      }
      dl->PopClipRect();
      if (stacked) {  // legend, right-aligned on the title row
        float lx = p.p1.x - 8;
        for (int l = 3; l >= 0; --l) {
          const char* name = kRunSeriesNames[static_cast<int>(RunSeries::data_ns) + l];
          lx -= ImGui::CalcTextSize(name).x + 18;
          dl->AddRectFilled(ImVec2(lx, p.p0.y + 4), ImVec2(lx + 10, p.p0.y + 14), plot::to_imgui(color::kRunPhase[l]));
          dl->AddText(ImVec2(lx + 13, p.p0.y + 1), text, name);
        }
      }
    }
  }
  // Throughput.
  if (has_throughput) {
    const Plot& p = plots[pi++];
    const RunSeries s = st.tokens || !has_samples ? RunSeries::tokens_per_s : RunSeries::samples_per_s;
    const std::vector<plot::Column>& cols = cols_of(s);
    double a = 0, b = 0;
    frame_plot(p, p.title);
    if (value_range(cols, false, a, b)) {
      a = std::min(a, 0.0);
      const ImVec2 q0(p.p0.x, p.p0.y + 16), q1 = p.p1;
      plot::range_axis(dl, q0, q1, a, b, false, plot::si_label);
      plot::minmax_line(dl, q0, q1, cols, a, b, false, color::kRunThroughput);
    }
  }
  // Gradient norm.
  if (has_grad) {
    const Plot& p = plots[pi++];
    const std::vector<plot::Column>& cols = cols_of(RunSeries::grad_norm);
    double a = 0, b = 0;
    frame_plot(p, st.log_grad ? "gradient norm (log)" : "gradient norm");
    if (value_range(cols, st.log_grad, a, b)) {
      if (!st.log_grad) a = std::min(a, 0.0);
      const ImVec2 q0(p.p0.x, p.p0.y + 16), q1 = p.p1;
      plot::range_axis(dl, q0, q1, a, b, st.log_grad, plot::si_label);
      plot::minmax_line(dl, q0, q1, cols, a, b, st.log_grad, color::kRunGradNorm);
    }
  }
  // Peak memory per device: allocated and reserved.
  if (has_memory) {
    const Plot& p = plots[pi++];
    double top = 0;
    const auto& al = C.allocated;
    const auto& re = C.reserved;
    for (const auto* v : {&al, &re})
      for (const auto& dev : *v)
        for (const plot::Column& c : dev)
          if (c.n) top = std::max(top, static_cast<double>(c.hi));
    std::string title = "peak memory: allocated / reserved";
    if (r.devices.size() > 1) {
      title += " (";
      for (std::size_t i = 0; i < r.devices.size(); ++i)
        title += (i ? ", " : "") + gb::query::device_name(r.devices[i]);
      title += ")";
    } else {
      title += " (" + gb::query::device_name(r.devices.front()) + ")";
    }
    frame_plot(p, title);
    if (top > 0) {
      const ImVec2 q0(p.p0.x, p.p0.y + 16), q1 = p.p1;
      // Ticks at round numbers of the unit the top is in (MiB, GiB, ...), not of bytes.
      double unit = 1;
      const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
      int u = 0;
      while (top * 1.05 / unit >= 1024 && u < 4) unit *= 1024, ++u;
      plot::range_axis(dl, q0, q1, 0, top * 1.05 / unit, false,
                       [&](double x) { return plot::si_label(x) + " " + units[u]; });
      for (std::size_t i = 0; i < r.memory.size(); ++i) {
        const float shade = 1.0f - 0.25f * static_cast<float>(i);  // further devices darker
        plot::minmax_line(dl, q0, q1, re[i], 0, top * 1.05, false, plot::scale(color::kReservedLine, shade));
        plot::minmax_line(dl, q0, q1, al[i], 0, top * 1.05, false, plot::scale(color::kAllocatedLine, shade));
      }
    }
  }

  // Detail windows: bands under the plots (every visible window at least a pixel wide).
  dl->AddRectFilled(ImVec2(x0, band_y), ImVec2(x1, band_y + band_h), frame);
  if (detail.all()) {
    dl->AddRectFilled(ImVec2(std::max(x0, x_of(lo)), band_y), ImVec2(std::min(x1, x_of(hi)), band_y + band_h),
                      plot::to_imgui(color::kDetailWindow));
  } else {
    const auto& w = detail.windows;
    auto it = std::lower_bound(w.begin(), w.end(), s0, [](const gb::trace::DetailWindowRecord& d, double s) {
      return static_cast<double>(d.last_step) + 1 < s;
    });
    for (; it != w.end() && static_cast<double>(it->first_step) < s1; ++it) {
      const float xa = std::max(x0, x_of(static_cast<double>(it->first_step))),
                  xb = std::min(x1, std::max(xa + 1, x_of(static_cast<double>(it->last_step) + 1)));
      dl->AddRectFilled(ImVec2(xa, band_y), ImVec2(xb, band_y + band_h),
                        plot::to_imgui(is_recorder(it->reason) ? color::kDetailRecorder : color::kDetailWindow));
    }
  }
  dl->AddText(ImVec2(origin.x + 4, band_y - 3), disabled, "detail");

  // The step axis.
  for (double t : plot::nice_ticks(s0, s1, std::max(2, px / 110))) {
    const float x = x_of(t);
    const std::string label = step_label(t);
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddLine(ImVec2(x, axis_y), ImVec2(x, axis_y + 5), disabled);
    dl->AddText(ImVec2(x + 3 + w > x1 + right ? x - w - 3 : x + 3, axis_y + 2), text, label.c_str());  // inside
  }
  dl->AddText(ImVec2(origin.x + 4, axis_y + 2), disabled, "step");

  // The selected step and the hovered one: lines across the plots.
  if (v.step) {
    const double s = static_cast<double>(*v.step) + 0.5;
    if (s >= s0 && s < s1)
      dl->AddLine(ImVec2(x_of(s), origin.y), ImVec2(x_of(s), band_y + band_h), plot::to_imgui(color::kSelection), 1.5f);
  }
  if (!anomaly_tip.empty()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
    ImGui::TextUnformatted(anomaly_tip.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  } else if (hover_point && !dragging) {
    const std::size_t i = *hover_point;
    const float x = x_of(static_cast<double>(r.steps[i]) + 0.5);
    dl->AddLine(ImVec2(x, origin.y), ImVec2(x, band_y + band_h), IM_COL32(255, 255, 255, 90));
    ImGui::BeginTooltip();
    ImGui::Text("step %" PRId64 "%s", r.steps[i], detail.has_detail(r.steps[i]) ? "" : "   (summary only)");
    auto row = [&](const char* name, double value, const std::string& shown) {
      if (std::isfinite(value)) ImGui::Text("%-14s %s", name, shown.c_str());
    };
    auto num = [](double x) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.5g", x);
      return std::string(buf);
    };
    const double loss = r.at(RunSeries::loss).at(i), lr = r.at(RunSeries::lr).at(i);
    row("loss", loss, num(loss));
    row("lr", lr, num(lr));
    row("step time", r.at(RunSeries::step_ns).at(i), time_ns(r.at(RunSeries::step_ns).at(i)));
    for (RunSeries s : {RunSeries::data_ns, RunSeries::forward_ns, RunSeries::backward_ns, RunSeries::optimizer_ns})
      row((std::string("  ") + kRunSeriesNames[static_cast<int>(s)]).c_str(), r.at(s).at(i), time_ns(r.at(s).at(i)));
    for (RunSeries s : {RunSeries::samples_per_s, RunSeries::tokens_per_s, RunSeries::grad_norm})
      row(kRunSeriesNames[static_cast<int>(s)], r.at(s).at(i),
          s == RunSeries::grad_norm ? num(r.at(s).at(i)) : plot::si_label(r.at(s).at(i)));
    for (std::size_t d = 0; d < r.memory.size(); ++d) {
      const double al = r.memory[d].allocated_peak.at(i), re = r.memory[d].reserved_peak.at(i);
      if (std::isfinite(al))
        ImGui::Text("%-14s %s allocated, %s reserved (peaks)", gb::query::device_name(r.devices[d]).c_str(),
                    plot::bytes_label(al).c_str(), plot::bytes_label(re).c_str());
    }
    if (has_b) {
      const std::size_t j = b_run->index_of(static_cast<double>(r.steps[i]));
      if (j < b_run->size() && b_run->steps[j] == r.steps[i])
        ImGui::TextColored(ImVec4(0.9f, 0.49f, 0.13f, 1), "compare: loss %s, step time %s",
                           num(b_run->at(RunSeries::loss).at(j)).c_str(),
                           time_ns(b_run->at(RunSeries::step_ns).at(j)).c_str());
    }
    ImGui::TextDisabled("click to select");
    ImGui::EndTooltip();
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, axis_y + axis_h));
  ImGui::Dummy(ImVec2(1, 1));
}

}  // namespace gb::viewer::panels
