// viewer/main.cpp — glassbox-viewer [FILE] [--screenshot OUT.png --panel NAME --size WxH --step N --select WHAT
// --search TEXT].
//
// Without --screenshot: the interactive window. With it: renders one panel offscreen, writes the PNG, exits 0
// (also when the trace cannot be opened: the PNG then shows the error state; exit 2 only when no PNG could be made).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "viewer/app.h"
#include "viewer/window.h"

int main(int argc, char** argv) {
  CLI::App cli{
      "glassbox-viewer: the run, timelines, memory, ops, anomalies, gradients and data loading of a glassbox trace",
      "glassbox-viewer"};
  cli.set_version_flag("--version", std::string("glassbox-viewer ") + GLASSBOX_VERSION);
  std::string file, png, panel = "timeline", size = "1600x1000";
  long step = -1;
  cli.add_option("FILE", file, "the trace (.db)");
  cli.add_option("--screenshot", png, "render one panel offscreen to this PNG and exit (headless; use xvfb-run)");
  cli.add_option("--panel", panel, "panel of the screenshot")
      ->check(CLI::IsMember(
          {"run", "timeline", "memory", "ops", "anomalies", "gradients", "dataloader", "graph", "compare"}))
      ->capture_default_str();
  cli.add_option("--size", size, "window size WxH")->capture_default_str();
  cli.add_option("--step", step,
                 "select this training step (its time in the timeline and memory views when it has detail)");
  std::string select, search, compare;
  cli.add_option("--compare", compare, "compare the trace with this second one (the Compare panel)");
  cli.add_option("--search", search, "timeline: search spans by name (substring) and show their duration histogram");
  cli.add_option("--select", select, "select span:ID, node:ID (graph node), param:ID (gradients), time:NS (memory cursor), oom, or "
                                     "graph:saved (colour the graph by saved bytes)");
  CLI11_PARSE(cli, argc, argv);

  int width = 0, height = 0;
  if (std::sscanf(size.c_str(), "%dx%d", &width, &height) != 2 || width < 200 || height < 150 || width > 16384 ||
      height > 16384) {
    std::fprintf(stderr, "glassbox-viewer: --size %s: expected WxH, e.g. 1600x1000 (at least 200x150)\n", size.c_str());
    return 2;
  }
  gb::viewer::App app(/*remember_recent=*/png.empty());
  const auto t0 = std::chrono::steady_clock::now();
  if (!file.empty()) app.open(file);
  if (std::getenv("GLASSBOX_VIEWER_TIMING"))
    std::fprintf(stderr, "glassbox-viewer: opened in %.1f ms\n",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  if (step >= 0 && app.model()) app.view().step = step;  // the Run panel selects any step
  if (step >= 0 && app.model())
    if (auto s = app.model()->step(step)) {
      app.view().step = step;
      app.view().cursor = (s->start_ns + s->end_ns) / 2;  // the memory view lists what is live mid-step
      app.view().focus(s->start_ns, s->end_ns, 0.02);
    }
  if (!select.empty() && app.model()) {
    gb::viewer::ViewState& v = app.view();
    const auto colon = select.find(':');
    const std::string what = select.substr(0, colon);
    const long long n = colon == std::string::npos ? 0 : std::atoll(select.c_str() + colon + 1);
    if (what == "span") {
      v.span = n;
      v.jump = gb::viewer::ViewState::Jump{n, 0.5};  // focused once its row is read, a frame later
    } else if (what == "param") {
      v.param = n;
    } else if (what == "node") {
      v.node = n;
    } else if (what == "time") {
      v.cursor = n;
    } else if (what == "oom") {
      v.show_oom = true;
    } else if (select == "graph:saved") {
      v.graph_by_saved = true;
    } else if (select == "ops:flame") {
      v.ops_flame = true;
    } else {
      std::fprintf(stderr, "glassbox-viewer: --select %s: expected span:ID, node:ID, param:ID, time:NS, oom, graph:saved or ops:flame\n",
                   select.c_str());
      return 2;
    }
  }
  app.view().search = search;
  if (!compare.empty()) {
    app.compare_with(compare);
    if (png.empty()) app.show(gb::viewer::Panel::compare);
  }
  if (png.empty()) return gb::viewer::run_window(app, width, height);
  if (app.model()) app.model()->wait_loaded();  // a screenshot shows the whole trace, not the loading states
  app.show(*gb::viewer::parse_panel(panel));
  return gb::viewer::screenshot(app, png, width, height);
}
