// viewer/plot.cpp — the plotting helpers (contract in plot.h).
#include "viewer/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace gb::viewer::plot {

ImU32 to_imgui(color::Rgb c, float alpha) {
  return IM_COL32((c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF, static_cast<int>(alpha * 255.0f + 0.5f));
}

color::Rgb scale(color::Rgb c, float f) {
  auto ch = [&](int shift) {
    return static_cast<color::Rgb>(std::clamp(static_cast<int>(((c >> shift) & 0xFF) * f), 0, 255)) << shift;
  };
  return ch(16) | ch(8) | ch(0);
}

bool is_dark(color::Rgb c) {
  return 0.299 * ((c >> 16) & 0xFF) + 0.587 * ((c >> 8) & 0xFF) + 0.114 * (c & 0xFF) < 140;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  std::vector<double> out;
  if (!(hi > lo) || max_ticks < 1) return out;
  const double raw = (hi - lo) / max_ticks, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v == 0 ? 0.0 : v);  // no "-0"
  return out;
}

std::string time_label(double ns) {
  char buf[32];
  const double a = std::fabs(ns);
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.4g s", ns / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.4g ms", ns / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.4g us", ns / 1e3);
  else std::snprintf(buf, sizeof buf, "%.4g ns", ns);
  return buf;
}

std::string bytes_label(double b) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(b) >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.4g %s", b, units[u]);
  return buf;
}

void time_axis(ImDrawList* dl, ImVec2 p0, ImVec2 p1, std::int64_t t0, std::int64_t t1) {
  const float w = p1.x - p0.x;
  if (w <= 0 || t1 <= t0) return;
  dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg));
  const ImU32 fg = ImGui::GetColorU32(ImGuiCol_Text), tick = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const std::vector<double> ticks =
      nice_ticks(static_cast<double>(t0), static_cast<double>(t1), std::max(2, static_cast<int>(w / 110)));
  // Far from the start (a long run's window of a few ms at 1858 s) the 4-digit labels would all read the same: then
  // the first tick says where in the run, in seconds to the tick spacing's digit, and the others their offset from it.
  const bool relative = ticks.size() >= 2 && time_label(ticks[0]) == time_label(ticks[1]);
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const double t = ticks[i];
    const float x = p0.x + static_cast<float>((t - t0) / static_cast<double>(t1 - t0)) * w;
    dl->AddLine(ImVec2(x, p1.y - 6), ImVec2(x, p1.y), tick);
    std::string label = time_label(t);
    if (relative && i == 0) {
      const int digits = std::clamp(static_cast<int>(std::ceil(-std::log10((ticks[1] - ticks[0]) / 1e9))), 0, 9);
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.*f s", digits, t / 1e9);
      label = buf;
    } else if (relative) {
      label = "+" + time_label(t - ticks[0]);
    }
    dl->AddText(ImVec2(x + 3, p0.y + 2), fg, label.c_str());
  }
}

void value_axis(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double ymax, const std::function<std::string(double)>& label) {
  if (ymax <= 0) return;
  const float h = p1.y - p0.y;
  const ImU32 fg = ImGui::GetColorU32(ImGuiCol_Text), grid = IM_COL32(0, 0, 0, 40);
  for (double v : nice_ticks(0, ymax, std::max(2, static_cast<int>(h / 40)))) {
    const float y = p1.y - static_cast<float>(v / ymax) * h;
    dl->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), grid);
    const std::string s = label(v);
    const ImVec2 sz = ImGui::CalcTextSize(s.c_str());
    dl->AddText(ImVec2(p0.x - sz.x - 6, y - sz.y / 2), fg, s.c_str());
  }
}

void stacked_columns(ImDrawList* dl, ImVec2 p0, ImVec2 p1, int columns, int layers,
                     const std::function<double(int, int)>& value, const color::Rgb* layer_colors, double ymax) {
  if (columns <= 0 || ymax <= 0) return;
  const float w = (p1.x - p0.x) / static_cast<float>(columns), h = p1.y - p0.y;
  for (int c = 0; c < columns; ++c) {
    const float xa = p0.x + w * static_cast<float>(c), xb = std::max(xa + 1.0f, p0.x + w * static_cast<float>(c + 1));
    double base = 0;
    for (int l = 0; l < layers; ++l) {
      const double v = value(c, l);
      if (v <= 0) continue;
      const float ya = p1.y - static_cast<float>((base + v) / ymax) * h, yb = p1.y - static_cast<float>(base / ymax) * h;
      dl->AddRectFilled(ImVec2(xa, std::max(p0.y, ya)), ImVec2(xb, yb), to_imgui(layer_colors[l]));
      base += v;
    }
  }
}

void line_plot(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::vector<double>& x, const std::vector<double>& y,
               double x0, double x1, double ymin, double ymax, color::Rgb c) {
  if (x.empty() || x1 <= x0) return;
  if (ymax <= ymin) ymax = ymin + 1;
  std::vector<ImVec2> pts;
  pts.reserve(x.size());
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!std::isfinite(y[i])) continue;
    pts.emplace_back(p0.x + static_cast<float>((x[i] - x0) / (x1 - x0)) * (p1.x - p0.x),
                     p1.y - static_cast<float>((y[i] - ymin) / (ymax - ymin)) * (p1.y - p0.y));
  }
  dl->PushClipRect(p0, p1, true);
  if (pts.size() == 1) dl->AddCircleFilled(pts[0], 2.5f, to_imgui(c));
  else dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), to_imgui(c), 0, 1.5f);
  for (const ImVec2& p : pts)
    if (pts.size() < 200) dl->AddCircleFilled(p, 2.0f, to_imgui(c));
  dl->PopClipRect();
}

color::Rgb heat_color(double v, double lo, double hi, int levels) {
  if (!(v > 0) || !(lo > 0) || !(hi > lo)) return color::viridis(0);
  double t = std::clamp((std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)), 0.0, 1.0);
  if (levels > 1) t = std::round(t * (levels - 1)) / (levels - 1);
  return color::viridis(t);
}

bool pan_zoom(std::int64_t& t0, std::int64_t& t1, float x0, float x1, bool active) {
  if (!active || x1 <= x0) return false;
  const ImGuiIO& io = ImGui::GetIO();
  const double w = static_cast<double>(t1 - t0), ns_per_px = w / (x1 - x0);
  double a = static_cast<double>(t0), b = static_cast<double>(t1);
  bool changed = false;
  auto zoom = [&](double factor, double at) {
    a = at - (at - a) * factor;
    b = at + (b - at) * factor;
    changed = true;
  };
  const double mouse_t = a + (io.MousePos.x - x0) * ns_per_px;
  if (io.MouseWheel != 0) zoom(std::pow(0.8, io.MouseWheel), mouse_t);
  if (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f) && io.MouseDelta.x != 0) {
    a -= io.MouseDelta.x * ns_per_px, b -= io.MouseDelta.x * ns_per_px;
    changed = true;
  }
  if (!io.WantTextInput) {
    const double mid = (a + b) / 2;
    if (ImGui::IsKeyPressed('W') || ImGui::IsKeyPressed('=')) zoom(0.7, mid);
    if (ImGui::IsKeyPressed('S') || ImGui::IsKeyPressed('-')) zoom(1 / 0.7, mid);
    if (ImGui::IsKeyPressed('A')) a -= w * 0.15, b -= w * 0.15, changed = true;
    if (ImGui::IsKeyPressed('D')) a += w * 0.15, b += w * 0.15, changed = true;
  }
  if (!changed) return false;
  if (b - a < 100) b = a + 100;
  t0 = static_cast<std::int64_t>(std::llround(a));
  t1 = static_cast<std::int64_t>(std::llround(b));
  return true;
}

void minmax_line(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::vector<Column>& cols, double ymin, double ymax,
                 bool log, color::Rgb c, float thickness) {
  if (cols.empty()) return;
  if (log) ymin = std::log10(std::max(ymin, 1e-300)), ymax = std::log10(std::max(ymax, 1e-300));
  if (!(ymax > ymin)) ymax = ymin + 1;
  const double h = p1.y - p0.y, k = h / (ymax - ymin);
  auto y = [&](float v) {
    const double t = log ? (v > 0 ? std::log10(static_cast<double>(v)) : ymin) : static_cast<double>(v);
    return static_cast<float>(
        std::clamp(p1.y - (t - ymin) * k, static_cast<double>(p0.y) - 2, static_cast<double>(p1.y) + 2));
  };
  const ImU32 col = to_imgui(c);
  std::size_t filled = 0, multi = 0;
  for (const Column& cl : cols) filled += cl.n > 0, multi += cl.n > 1;
  dl->PushClipRect(p0, p1, true);
  if (multi * 4 > cols.size()) {
    // Dense: each column one bar from its range joined to the previous column's last value (what the polyline
    // through first and last would cover), at least `thickness` tall; 4 vertices a column, no anti-aliasing.
    std::optional<float> prev;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const Column& cl = cols[i];
      if (cl.n == 0) continue;
      float top = y(cl.hi), bottom = y(cl.lo);
      if (prev) top = std::min(top, *prev), bottom = std::max(bottom, *prev);
      const float mid = (top + bottom) / 2, half = std::max((bottom - top) / 2, thickness / 2);
      const float x = p0.x + static_cast<float>(i);
      dl->AddRectFilled(ImVec2(x, mid - half), ImVec2(x + 1, mid + half), col);
      prev = y(cl.last);
    }
  } else {  // sparse: the polyline through the points
    std::vector<ImVec2> pts;
    pts.reserve(filled * 2);
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const Column& cl = cols[i];
      if (cl.n == 0) continue;
      const float x = p0.x + static_cast<float>(i) + 0.5f;
      const float ylo = y(cl.lo), yhi = y(cl.hi);
      if (ylo - yhi > 1.5f) dl->AddRectFilled(ImVec2(x - 0.5f, yhi), ImVec2(x + 0.5f, ylo), col);
      pts.emplace_back(x, y(cl.first));
      if (cl.n > 1) pts.emplace_back(x, y(cl.last));
    }
    if (pts.size() >= 2)
      dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, thickness);
    else if (pts.size() == 1)
      dl->AddCircleFilled(pts[0], 2.0f, col);
  }
  dl->PopClipRect();
}

std::string si_label(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%.4gG", v / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%.4gM", v / 1e6);
  else if (a >= 1e4)
    std::snprintf(buf, sizeof buf, "%.4gk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void range_axis(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double ymin, double ymax, bool log,
                const std::function<std::string(double)>& label) {
  if (!(ymax > ymin)) return;
  const float h = p1.y - p0.y;
  const ImU32 fg = ImGui::GetColorU32(ImGuiCol_TextDisabled), grid = IM_COL32(255, 255, 255, 28);
  const int max_ticks = std::max(2, static_cast<int>(h / 28));
  std::vector<double> ticks;
  double a = ymin, b = ymax;
  if (log) {
    a = std::log10(std::max(ymin, 1e-300)), b = std::log10(std::max(ymax, 1e-300));
    if (!(b > a)) return;
    for (bool with_25 : {false, true}) {  // powers of ten; 2x and 5x too when those are fewer than 3
      ticks.clear();
      for (double e = std::floor(a); e <= std::ceil(b); ++e)
        for (double m : {1.0, 2.0, 5.0}) {
          if (m != 1.0 && !with_25) continue;
          const double t = std::log10(m) + e;
          if (t >= a - 1e-9 && t <= b + 1e-9) ticks.push_back(t);
        }
      if (ticks.size() >= 3) break;
    }
    while (static_cast<int>(ticks.size()) > max_ticks) {  // thin them out
      std::vector<double> half;
      for (std::size_t i = 0; i < ticks.size(); i += 2) half.push_back(ticks[i]);
      ticks.swap(half);
    }
  } else {
    ticks = nice_ticks(ymin, ymax, max_ticks);
  }
  const float lh = ImGui::GetTextLineHeight();
  for (double t : ticks) {
    const float yy = p1.y - static_cast<float>((t - a) / (b - a)) * h;
    dl->AddLine(ImVec2(p0.x, yy), ImVec2(p1.x, yy), grid);
    const std::string s = label(log ? std::pow(10.0, t) : t);
    const ImVec2 sz = ImGui::CalcTextSize(s.c_str());
    dl->AddText(ImVec2(p0.x - sz.x - 6, std::clamp(yy - sz.y / 2, p0.y - 2, p1.y - lh + 2)), fg, s.c_str());
  }
}

bool pan_zoom_range(double& a, double& b, float x0, float x1, bool wheel, bool drag, double lo, double hi,
                    double min_width) {
  if (x1 <= x0) return false;
  const ImGuiIO& io = ImGui::GetIO();
  const double per_px = (b - a) / (x1 - x0);
  double na = a, nb = b;
  if (wheel && io.MouseWheel != 0) {
    const double at = a + (io.MousePos.x - x0) * per_px, f = std::pow(0.8, io.MouseWheel);
    na = at - (at - a) * f, nb = at + (b - at) * f;
  }
  if (drag && io.MouseDelta.x != 0) na -= io.MouseDelta.x * per_px, nb -= io.MouseDelta.x * per_px;
  if (na == a && nb == b) return false;
  const double w = std::min(std::max(nb - na, min_width), hi - lo);
  if (nb - na != w) {
    const double mid = (na + nb) / 2;
    na = mid - w / 2, nb = mid + w / 2;
  }
  if (na < lo) nb += lo - na, na = lo;
  if (nb > hi) na -= nb - hi, nb = hi;
  a = na, b = nb;
  return true;
}

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void empty_state(const char* title, const char* why) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float wrap = std::min(avail.x - 40, 640.0f);
  ImGui::SetCursorPos(ImVec2(ImGui::GetCursorPosX() + (avail.x - wrap) / 2, ImGui::GetCursorPosY() + avail.y * 0.3f));
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  ImGui::TextUnformatted(title);
  ImGui::Spacing();
  ImGui::TextDisabled("%s", why);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

void color_square(color::Rgb c) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float s = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + s, p.y + s), to_imgui(c));
  ImGui::GetWindowDrawList()->AddRect(p, ImVec2(p.x + s, p.y + s), IM_COL32(120, 120, 120, 255));
  ImGui::Dummy(ImVec2(s, s));
  ImGui::SameLine();
}

int icicle(ImDrawList* dl, ImVec2 p0, ImVec2 p1, float row_h, const std::vector<IcicleBox>& boxes) {
  const float w = p1.x - p0.x;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hovered = -1;
  dl->PushClipRect(p0, p1, true);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const IcicleBox& b = boxes[i];
    const float x0 = p0.x + static_cast<float>(b.x0) * w, x1 = p0.x + static_cast<float>(b.x1) * w;
    const float y0 = p0.y + static_cast<float>(b.depth) * row_h, y1 = y0 + row_h - 1;
    if (y0 > p1.y || x1 - x0 < 0.5f) continue;
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(std::max(x0 + 1, x1 - 1), y1), to_imgui(b.color));
    const float tw = ImGui::CalcTextSize(b.label).x;
    if (x1 - x0 > tw + 6)
      dl->AddText(ImVec2(x0 + 3, y0 + (row_h - ImGui::GetTextLineHeight()) / 2),
                  is_dark(b.color) ? IM_COL32(255, 255, 255, 255) : IM_COL32(0, 0, 0, 255), b.label);
    if (mouse.x >= x0 && mouse.x < x1 && mouse.y >= y0 && mouse.y < y1) hovered = static_cast<int>(i);
  }
  dl->PopClipRect();
  return hovered;
}

}  // namespace gb::viewer::plot
