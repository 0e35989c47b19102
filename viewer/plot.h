// viewer/plot.h — the small plotting helpers every panel uses (Dear ImGui 1.86 has no ImPlot): colours, nice axis
// ticks, a time axis, stacked columns, line plots, heatmap colours, pan/zoom of a time window, help markers and
// empty states. Drawing goes to an ImDrawList; nothing here reads a trace.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "viewer/colors.h"

namespace gb::viewer::plot {

ImU32 to_imgui(color::Rgb c, float alpha = 1.0f);
color::Rgb scale(color::Rgb c, float f);  // darker (f < 1) or lighter (f > 1), per channel
bool is_dark(color::Rgb c);               // text on it should be white

// About max_ticks "nice" values (1, 2, 5 x 10^k steps) inside [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
std::string time_label(double ns);    // "12.5 ms", "350 us", "1.25 s"
std::string bytes_label(double bytes);  // "1.5 GiB"

// A time ruler along [p0, p1]: ticks and labels of [t0, t1].
void time_axis(ImDrawList* dl, ImVec2 p0, ImVec2 p1, std::int64_t t0, std::int64_t t1);
// Y labels on the left of a plot rect, for values [0, ymax] formatted by `label`.
void value_axis(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double ymax, const std::function<std::string(double)>& label);

// Stacked columns filling [p0, p1]: column c, layer l has height value(c, l) (bottom layer first), scaled so ymax
// reaches the top. A column is max(1, width / columns) pixels wide.
void stacked_columns(ImDrawList* dl, ImVec2 p0, ImVec2 p1, int columns, int layers,
                     const std::function<double(int, int)>& value, const color::Rgb* layer_colors, double ymax);
// A polyline of (x, y) with x in [x0, x1] mapped to the rect's width and y in [ymin, ymax] to its height.
void line_plot(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::vector<double>& x, const std::vector<double>& y,
               double x0, double x1, double ymin, double ymax, color::Rgb c);
// A series reduced to pixel columns (the run panel's curves): per column the smallest and largest value and the
// first and last in x order; an empty column (no value) has n == 0. minmax_line draws each column's range joined to
// the previous column's last value: dense (more than a quarter of the columns hold several values) as one bar per
// column, at least `thickness` tall (4 vertices, no anti-aliasing); sparse as the polyline through each column's
// first and last values (with a bar where its range is taller than 1.5 px). So at one point per column it is the
// polyline and at a thousand the min/max envelope. Values map [ymin, ymax] to the rect's height (log10 of both when
// log). Column c covers x in [p0.x + c, p0.x + c + 1).
struct Column {
  float lo = 0, hi = 0, first = 0, last = 0;
  float mean = 0;  // (stacked plots)
  unsigned n = 0;
};
void minmax_line(ImDrawList* dl, ImVec2 p0, ImVec2 p1, const std::vector<Column>& cols, double ymin, double ymax,
                 bool log, color::Rgb c, float thickness = 1.5f);
// Y labels and grid lines of [ymin, ymax] on the left of a plot rect (log: at powers of ten, and 2x, 5x between
// when there are few), formatted by `label`.
void range_axis(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double ymin, double ymax, bool log,
                const std::function<std::string(double)>& label);
std::string si_label(double v);  // "0.0003", "2.5k", "1.2M" (4 significant digits)
// Pan and zoom of a range of doubles over pixels [x0, x1]: wheel zooms around the mouse, a drag pans; the range is
// kept inside [lo, hi] (as far as its width allows) and at least min_width wide. Returns true when it changed.
bool pan_zoom_range(double& a, double& b, float x0, float x1, bool wheel, bool drag, double lo, double hi,
                    double min_width);

// Log-scaled viridis colour of v in [lo, hi] (both > 0); levels > 0 quantizes to that many colours.
color::Rgb heat_color(double v, double lo, double hi, int levels = 0);

// Wheel zooms around the mouse, drag pans, W/S zoom, A/D pan, when `active` (the plot is hovered). Returns true
// when the window changed. Keeps t1 - t0 >= 100 ns.
bool pan_zoom(std::int64_t& t0, std::int64_t& t1, float x0, float x1, bool active);

// An icicle (flame) chart in [p0, p1]: box i spans x0[i]..x1[i] (fractions of the width) in row depth[i] (row_h
// pixels each, row 0 on top), filled with colors[i] and labelled when wide enough. Returns the hovered box or -1.
struct IcicleBox {
  double x0 = 0, x1 = 0;
  int depth = 0;
  color::Rgb color = 0;
  const char* label = "";
};
int icicle(ImDrawList* dl, ImVec2 p0, ImVec2 p1, float row_h, const std::vector<IcicleBox>& boxes);

void help_marker(const char* text);                  // "(?)" with a tooltip
void empty_state(const char* title, const char* why);  // centred, for a panel with nothing to show
void color_square(color::Rgb c);                     // a legend swatch, then SameLine

}  // namespace gb::viewer::plot
