// bench/bench_viewer.cpp — the viewer on a big trace, headless: open to first frame, CPU time to build a frame
// (every ImGui draw list of the shown panel, no GPU) at whole-run, one-step and 1-ms zooms, and peak memory.
//
// The trace is written once by tools/synth (default: 10,000 steps x 110 layers, one elementwise op per layer =
// 10.03 M spans, ~1 M memory events, 220 parameters x 10,000 steps of grad stats) and reused from its path on
// later runs. Frames are built with a Dear ImGui context and no renderer backend (NewFrame/Render build the draw
// lists; nothing is drawn). Each zoom pans by 2% of the window per frame, so cache misses are part of the max
// (a miss posts its query to the model's worker and draws a stand-in). A span search ("linear") then runs on the
// worker while frames are built: search_ms and the longest frame meanwhile.
// There is no libtorch peer for a viewer: "peer" is "none"; each line carries its target (open to first frame 1 s,
// frame build 8 ms, peak RSS 2 GiB).
//
// With --long: a long run instead (tools/synth --long-steps 1000000: 10^6 steps of summary, detail in 1,000 windows,
// ~5,500 steps, 0.65 M spans): open to first frame (the Run panel, which shows "loading" until the run summary is
// in: target 1 s), the time until the run summary is loaded and until everything is, the Run panel's frame build at
// the whole run, at 100,000, 10,000 and 100 steps (panning 2% a frame, the mouse hovering the plots: the tooltip too),
// and peak RSS (target 1 GiB); then the Gradients panel on those steps (the heatmap, and a parameter's histories).
//
//   bench_viewer [TRACE.db] [--frames N] [--long]
#include <imgui.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tools/synth.h"
#include "viewer/app.h"
#include "viewer/panels/panels.h"

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void line(const char* metric, double value, const char* unit, double target, const std::string& extra = "") {
  std::printf("{\"bench\": \"viewer\", \"metric\": \"%s\", \"value\": %.3f, \"unit\": \"%s\"", metric, value, unit);
  if (target > 0) std::printf(", \"target\": %.0f", target);
  std::printf(", \"peer\": \"none\"%s}\n", extra.c_str());
  std::fflush(stdout);
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

double frame(gb::viewer::App& app) {
  const auto t0 = std::chrono::steady_clock::now();
  ImGuiIO& io = ImGui::GetIO();
  io.DeltaTime = 1.0f / 60;
  ImGui::NewFrame();
  app.frame();
  ImGui::Render();
  return ms_since(t0);
}

struct Stats {
  double median = 0, max = 0;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.back()};
}

void imgui_context() {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1600, 1000);
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;  // as the OpenGL3 backend does: large draw lists
  if (std::filesystem::exists("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    io.Fonts->AddFontFromFileTTF("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 15.0f);
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);  // builds the atlas (no renderer needed)
}

// --long: the Run panel on a 10^6-step trace.
int long_run(std::string path, int frames) {
  if (path.empty()) path = "/tmp/glassbox-bench-viewer/synth-long-1M.db";
  if (!std::filesystem::exists(path)) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    const auto t0 = std::chrono::steady_clock::now();
    gb::tools::SynthOptions o;
    o.long_steps = 1'000'000;
    const gb::tools::SynthResult r = gb::tools::write_synthetic_trace(path, o);
    std::fprintf(stderr, "bench_viewer: wrote %s: %lld steps, %lld detail steps, %lld spans in %.1f s\n", path.c_str(),
                 static_cast<long long>(r.steps), static_cast<long long>(r.detail_steps),
                 static_cast<long long>(r.spans), ms_since(t0) / 1000);
  }
  imgui_context();
  gb::viewer::App app(/*remember_recent=*/false);
  const auto t_open = std::chrono::steady_clock::now();
  app.open(path);
  if (!app.error().empty()) {
    std::fprintf(stderr, "bench_viewer: %s\n", app.error().c_str());
    return 1;
  }
  const double opened = ms_since(t_open);
  frame(app);  // the Run panel is the first tab
  const double first = ms_since(t_open);
  gb::viewer::TraceModel& m = *app.model();
  const bool loaded_at_first = !m.run().loading();
  line("long_open_ms", opened, "ms", 0, ", \"detail_steps\": " + std::to_string(m.steps().size()));
  line("long_open_to_first_frame_ms", first, "ms", 1000,
       std::string(", \"run_loaded_at_first_frame\": ") + (loaded_at_first ? "true" : "false"));
  std::vector<double> during;
  while (m.run().loading() && during.size() < 100000) {
    during.push_back(frame(app));
    std::this_thread::sleep_for(std::chrono::milliseconds(16));
  }
  line("long_run_summary_loaded_ms", ms_since(t_open), "ms", 0,
       ", \"steps\": " + std::to_string(m.run().data().size()) +
           ", \"run_model_mb\": " + std::to_string(static_cast<double>(m.run().data().bytes()) / (1 << 20)) +
           ", \"frames_meanwhile\": " + std::to_string(during.size()) +
           ", \"max_frame_ms_meanwhile\": " + std::to_string(during.empty() ? 0.0 : stats(during).max));
  m.wait_loaded();
  line("long_all_loaded_ms", ms_since(t_open), "ms", 0, ", \"memory_events\": " + std::to_string(m.memory().events()));
  // The Run panel: whole run, then 10,000 and 100 steps around the middle, panning 2% a frame, the mouse hovering.
  ImGui::GetIO().MousePos = ImVec2(800, 500);
  struct Zoom {
    const char* name;
    double width;
  };
  const Zoom zooms[] = {{"whole_run", 0}, {"100000_steps", 100000}, {"10000_steps", 10000}, {"100_steps", 100}};
  app.view().step = 500'000;
  for (const Zoom& z : zooms) {
    std::vector<double> t;
    for (int i = 0; i < frames; ++i) {
      gb::viewer::panels::RunState& rs = app.run_state();
      if (i == 0) {
        if (z.width > 0)
          rs.s0 = 500'000 - z.width / 2, rs.s1 = 500'000 + z.width / 2;
        else
          rs.s0 = 0, rs.s1 = 1'000'000;
      } else if (z.width > 0) {
        const double pan = (rs.s1 - rs.s0) / 50;
        rs.s0 += pan, rs.s1 += pan;
      }
      t.push_back(frame(app));
      if (getenv("BENCH_VIEWER_FRAMES")) std::fprintf(stderr, "%s frame %d: %.3f ms\n", z.name, i, t.back());
    }
    const Stats s = stats(t);
    line((std::string("long_frame_build_ms_run_") + z.name + "_median").c_str(), s.median, "ms", 8);
    line((std::string("long_frame_build_ms_run_") + z.name + "_max").c_str(), s.max, "ms", 8);
  }
  // The gradient heatmap of the 10^6 steps (16 parameters x ~106,000 steps with statistics), reduced to pixel
  // columns of steps off the frame; then with a parameter selected (its norm and update-ratio histories).
  ImGui::GetIO().MousePos = ImVec2(-1, -1);
  app.show(gb::viewer::Panel::gradients);
  for (const bool selected : {false, true}) {
    app.view().param = selected ? std::optional<gb::trace::Id>(1) : std::nullopt;
    for (int i = 0; i < 3; ++i) frame(app);  // the tab switch
    const auto t_settle = std::chrono::steady_clock::now();
    while (m.gradients().pending() && ms_since(t_settle) < 60'000) {
      std::this_thread::sleep_for(std::chrono::milliseconds(16));
      frame(app);
    }
    const double settle = ms_since(t_settle);
    std::vector<double> t;
    for (int i = 0; i < frames; ++i) t.push_back(frame(app));
    const Stats s = stats(t);
    const std::string name = selected ? "long_frame_build_ms_gradients_selected" : "long_frame_build_ms_gradients";
    line((name + "_median").c_str(), s.median, "ms", 8,
         ", \"heatmap_columns\": " + std::to_string(m.gradients().heatmap().cols()) + ", \"settle_ms\": " +
             std::to_string(settle));
    line((name + "_max").c_str(), s.max, "ms", 8);
  }
  line("long_peak_rss_mb", peak_rss_mb(), "MiB", 1024);
  ImGui::DestroyContext();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "/tmp/glassbox-bench-viewer/synth-10M.db";
  int frames = 60;
  bool long_mode = false;
  std::string given;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--frames") == 0 && i + 1 < argc) frames = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--long") == 0)
      long_mode = true;
    else
      given = argv[i];
  }
  if (long_mode) return long_run(given, frames);
  if (!given.empty()) path = given;
  if (!std::filesystem::exists(path)) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    const auto t0 = std::chrono::steady_clock::now();
    gb::tools::SynthResult r = gb::tools::write_synthetic_trace(
        path, {.steps = 10'000, .layers = 110, .ops_per_layer = 1, .memory_layer_stride = 14});
    std::fprintf(stderr, "bench_viewer: wrote %s: %lld spans, %lld memory events, %lld grad stats in %.1f s\n",
                 path.c_str(), static_cast<long long>(r.spans), static_cast<long long>(r.memory_events),
                 static_cast<long long>(r.grad_stats), ms_since(t0) / 1000);
  }

  imgui_context();

  gb::viewer::App app(/*remember_recent=*/false);
  const auto t_open = std::chrono::steady_clock::now();
  app.open(path);
  if (!app.error().empty()) {
    std::fprintf(stderr, "bench_viewer: %s\n", app.error().c_str());
    return 1;
  }
  const double opened = ms_since(t_open);
  frame(app);
  const double first = ms_since(t_open);
  gb::viewer::TraceModel& m = *app.model();
  const std::string size = ", \"spans\": " + std::to_string(m.span_count()) +
                           ", \"steps\": " + std::to_string(m.steps().size());
  line("open_ms", opened, "ms", 0, size);
  line("open_to_first_frame_ms", first, "ms", 1000, size + ", \"overview_ready\": " + (m.timeline().overview().ready() ? "true" : "false"));
  // Frames while the overview is still being built (what the user sees in the first seconds).
  std::vector<double> during;
  while (!m.timeline().overview().ready() && during.size() < 10000) {
    during.push_back(frame(app));
    std::this_thread::sleep_for(std::chrono::milliseconds(16));
  }
  const double overview_ms = ms_since(t_open);
  m.wait_loaded();  // then the gradient heatmap and the data-loader sums
  line("all_loaded_ms", ms_since(t_open), "ms", 0, ", \"memory_events\": " + std::to_string(m.memory().events()) +
                                                  ", \"grad_stats\": " + std::to_string(m.gradients().heatmap().rows() * m.gradients().heatmap().cols()));
  line("overview_ready_ms", overview_ms, "ms", 0,
       ", \"items\": " + std::to_string(m.timeline().overview().items()) + ", \"frames_meanwhile\": " + std::to_string(during.size()));
  if (!during.empty()) {
    const Stats s = stats(during);
    line("frame_build_ms_while_building_median", s.median, "ms", 8);
    line("frame_build_ms_while_building_max", s.max, "ms", 8);
  }

  gb::viewer::ViewState& v = app.view();
  const auto mid = *m.step(static_cast<std::int64_t>(m.steps().size() / 2));
  struct Zoom {
    const char* name;
    std::int64_t t0, t1;
  };
  const Zoom zooms[] = {{"whole_run", m.begin_ns(), m.end_ns()},
                        {"one_step", mid.start_ns, mid.end_ns},
                        {"1ms", (mid.start_ns + mid.end_ns) / 2, (mid.start_ns + mid.end_ns) / 2 + 1'000'000}};
  for (const Zoom& z : zooms) {
    v.t0 = z.t0, v.t1 = z.t1;
    app.show(gb::viewer::Panel::timeline);
    std::vector<double> t;
    for (int i = 0; i < frames; ++i) {
      t.push_back(frame(app));
      const std::int64_t pan = (v.t1 - v.t0) / 50;
      v.t0 += pan, v.t1 += pan;
    }
    const Stats s = stats(t);
    line((std::string("frame_build_ms_timeline_") + z.name + "_median").c_str(), s.median, "ms", 8);
    line((std::string("frame_build_ms_timeline_") + z.name + "_max").c_str(), s.max, "ms", 8);
  }
  // A search over every span name runs on the model's worker: frames keep coming while it runs.
  {
    v.t0 = mid.start_ns, v.t1 = mid.end_ns;
    v.search = "linear";
    const auto t_search = std::chrono::steady_clock::now();
    std::vector<double> t;
    while (m.timeline().search(v.search) == nullptr && t.size() < 100000) {
      t.push_back(frame(app));
      std::this_thread::sleep_for(std::chrono::milliseconds(16));
    }
    const double search_ms = ms_since(t_search);
    t.push_back(frame(app));  // the frame that draws the histogram
    const Stats s = stats(t);
    line("search_ms", search_ms, "ms", 0, ", \"matches\": " + std::to_string(m.timeline().search(v.search)->matches) +
                                              ", \"frames_meanwhile\": " + std::to_string(t.size() - 1));
    line("frame_build_ms_while_searching_max", s.max, "ms", 8);
    v.search.clear();
  }
  // The other panels at the whole-run window: the first frame (one-time loads) and the steady frames.
  v.t0 = m.begin_ns(), v.t1 = m.end_ns();
  v.step = mid.step;
  v.cursor = (mid.start_ns + mid.end_ns) / 2;
  for (int p = 0; p < static_cast<int>(gb::viewer::Panel::count); ++p) {
    const auto panel = static_cast<gb::viewer::Panel>(p);
    if (panel == gb::viewer::Panel::timeline) continue;
    app.show(panel);
    // The tab bar applies the selection during a frame that still draws the previous panel: the panel's first
    // frame is the first one after which current() names it.
    double first_frame = 0;
    for (int i = 0; i < 10; ++i) {
      first_frame = frame(app);
      if (app.current() == panel) break;
    }
    if (app.current() != panel) std::fprintf(stderr, "bench_viewer: panel %s never shown\n", gb::viewer::kPanelNames[p]);
    // Then frames until its off-frame computations (memory columns, segment map, heatmap columns) are in.
    const auto t_settle = std::chrono::steady_clock::now();
    std::vector<double> settling;
    // (only the computations the panel asks for: a panel that draws neither never takes another panel's answer)
    const bool memory_panel = panel == gb::viewer::Panel::memory, gradients_panel = panel == gb::viewer::Panel::gradients;
    while (((memory_panel && m.memory().pending()) || (gradients_panel && m.gradients().pending())) &&
           settling.size() < 10000) {
      std::this_thread::sleep_for(std::chrono::milliseconds(16));
      settling.push_back(frame(app));
    }
    const double settle_ms = ms_since(t_settle);
    std::vector<double> t;
    for (int i = 0; i < std::max(5, frames / 4); ++i) t.push_back(frame(app));
    const Stats s = stats(t);
    const std::string name = gb::viewer::kPanelNames[p];
    line(("first_frame_ms_" + name).c_str(), first_frame, "ms", 8);
    line(("settle_ms_" + name).c_str(), settle_ms, "ms", 0,
         ", \"frames_meanwhile\": " + std::to_string(settling.size()) +
             ", \"max_frame_ms\": " + std::to_string(settling.empty() ? 0.0 : stats(settling).max));
    line(("frame_build_ms_" + name + "_median").c_str(), s.median, "ms", 8);
    line(("frame_build_ms_" + name + "_max").c_str(), s.max, "ms", 8);
  }
  line("peak_rss_mb", peak_rss_mb(), "MiB", 2048);
  // Closing the model while a search scans every span: the search is interrupted, not waited for. (Opening a path
  // that does not exist closes the model and fails at once.)
  {
    m.timeline().search("no span is named like this");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const bool running = m.timeline().search_pending();
    const auto t_close = std::chrono::steady_clock::now();
    app.open(path + ".missing");
    line("close_during_search_ms", ms_since(t_close), "ms", 200, std::string(", \"search_running\": ") + (running ? "true" : "false"));
  }
  ImGui::DestroyContext();
  return 0;
}
