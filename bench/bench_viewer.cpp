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
// With --live: the latency of following a run being written (live.cpp): a writer thread writes steps of --step-ms
// (5 ms: 200 steps/s; step_memory, a detail window every 500 steps) and commits every 100 ms as the collector does,
// while the App draws headless frames (~60 per second, the Run panel); per step, the time from its commit to the
// first frame drawn with its point: p50, p95, max (target 1 s).
// With --follow TRACE: the headless viewer model following TRACE until its run ends (poll() ~60 times a second, no
// frames drawn): what --overhead runs beside a training.
// With --overhead TRAIN: TRAIN (samples/train_mlp) --steps N --trace X alone, then with `bench_viewer --follow X`
// beside it, alternating --runs times; the training's ms/step (its own line) with the follower over without, per
// pair and the median (target 1.02).
//
//   bench_viewer [TRACE.db] [--frames N] [--long]
//   bench_viewer --live [--steps 1000] [--step-ms 5]
//   bench_viewer --overhead build/samples/train_mlp [--steps 20000] [--runs 5]
#include <imgui.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/long_run.h"  // --live: a long run's rows, written step by step
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

// Opens `path` in app (from t_open, taken here) and builds one frame: the open's and the first frame's milliseconds;
// false (said on stderr) when the trace cannot be opened.
bool open_and_draw(gb::viewer::App& app, const std::string& path, std::chrono::steady_clock::time_point& t_open,
                   double& opened_ms, double& first_frame_ms) {
  t_open = std::chrono::steady_clock::now();
  app.open(path);
  if (!app.error().empty()) {
    std::fprintf(stderr, "bench_viewer: %s\n", app.error().c_str());
    return false;
  }
  opened_ms = ms_since(t_open);
  frame(app);
  first_frame_ms = ms_since(t_open);
  return true;
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
int run_long(std::string path, int frames) {
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
  std::chrono::steady_clock::time_point t_open;
  double opened = 0, first = 0;  // the Run panel is the first tab
  if (!open_and_draw(app, path, t_open, opened, first)) return 1;
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

// --- following a run being written (--live, --follow, --overhead)

struct LiveOptions {
  std::string self;    // this program, for --overhead's follower
  int steps = 0;       // 0: the mode's default (--live 1000, --overhead 20000)
  double step_ms = 5;  // --live: the writer's step time
  int runs = 5;        // --overhead: pairs (alone, with the follower)
};

using Clock = std::chrono::steady_clock;

std::string fresh_trace(const std::string& name) {
  const std::string dir = "/tmp/glassbox-bench-viewer";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + "-" + std::to_string(::getpid()) + ".db";
  for (const char* suffix : {"", "-wal", "-shm", "-reserve"}) std::filesystem::remove(path + suffix);
  return path;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// --live: a writer thread (tests/tools/long_run.h rows: steps, step_memory, windows, an anomaly) committing every
// 100 ms; the App draws the Run panel ~60 times a second; per step, commit -> first frame with its point.
int live_latency(const LiveOptions& o) {
  const int steps = o.steps > 0 ? o.steps : 1000;
  const std::string path = fresh_trace("live");
  ::long_run::Options lo;
  lo.steps = steps;
  lo.step_ns = static_cast<std::int64_t>(o.step_ms * 1e6);
  lo.windows = {{0, 4, gb::trace::DetailReason::first}};
  for (std::int64_t w = 500; w + 1 < steps; w += 500)
    lo.windows.push_back({w, w + 1, gb::trace::DetailReason::periodic});
  lo.anomalies = {steps / 2};
  std::mutex mu;
  std::vector<Clock::time_point> committed(static_cast<std::size_t>(steps));
  std::atomic<std::int64_t> written{-1};
  std::thread writer([&] {
    ::long_run::Run r(path, lo);
    std::int64_t uncommitted = 0;
    auto last_commit = Clock::now(), next = Clock::now();
    auto commit = [&](std::int64_t upto) {
      r.writer().flush();
      const auto t = Clock::now();
      std::lock_guard<std::mutex> l(mu);
      for (; uncommitted <= upto; ++uncommitted) committed[static_cast<std::size_t>(uncommitted)] = t;
      written = upto;
      last_commit = t;
    };
    for (std::int64_t s = 0; s < steps; ++s) {
      r.step(s);
      if (s == 9 || Clock::now() - last_commit >= std::chrono::milliseconds(100)) commit(s);  // the collector's tick
      next += std::chrono::microseconds(static_cast<std::int64_t>(o.step_ms * 1000));
      std::this_thread::sleep_until(next);
    }
    commit(steps - 1);
    r.finish();
  });
  while (written < 9) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  imgui_context();
  std::vector<double> lat, frames;
  std::int64_t polls = 0;
  bool followed = false;
  {
    gb::viewer::App app(/*remember_recent=*/false);
    app.open(path);
    if (!app.error().empty()) {
      std::fprintf(stderr, "bench_viewer: %s\n", app.error().c_str());
      writer.join();
      return 1;
    }
    gb::viewer::TraceModel& m = *app.model();
    followed = m.live().following;
    m.wait_loaded();
    std::vector<std::optional<Clock::time_point>> drawn(static_cast<std::size_t>(steps));
    std::size_t seen = 0;
    const auto t0 = Clock::now();
    while (!m.live().ended && ms_since(t0) < 600'000) {
      const auto f0 = Clock::now();
      frames.push_back(frame(app));
      const auto t = Clock::now();
      const gb::viewer::RunData& r = m.run().data();
      for (; seen < r.size(); ++seen)
        if (r.steps[seen] >= 0 && r.steps[seen] < steps) drawn[static_cast<std::size_t>(r.steps[seen])] = t;
      std::this_thread::sleep_until(f0 + std::chrono::microseconds(16'667));
    }
    writer.join();
    polls = m.live().polls;
    for (std::size_t s = 10; s < drawn.size(); ++s)
      if (drawn[s]) lat.push_back(std::chrono::duration<double, std::milli>(*drawn[s] - committed[s]).count());
    std::fprintf(stderr, "bench_viewer: --live: %s; %zu steps drawn after the open\n", m.live().text().c_str(),
                 lat.size());
  }
  ImGui::DestroyContext();
  const std::string extra = ", \"steps\": " + std::to_string(steps) + ", \"step_ms\": " + std::to_string(o.step_ms) +
                            ", \"commit_ms\": 100, \"poll_ms\": 250, \"polls\": " + std::to_string(polls) +
                            ", \"followed\": " + (followed ? "true" : "false");
  line("live_latency_ms_p50", percentile(lat, 0.5), "ms", 1000, extra);
  line("live_latency_ms_p95", percentile(lat, 0.95), "ms", 1000, extra);
  line("live_latency_ms_max", percentile(lat, 1.0), "ms", 1000, extra);
  line("live_frame_build_ms_median", percentile(frames, 0.5), "ms", 8);
  line("live_frame_build_ms_max", percentile(frames, 1.0), "ms", 8);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return lat.empty() ? 1 : 0;
}

// --follow TRACE: the headless model following TRACE (waits up to 60 s for it to become a trace) until it ends.
int live_follow(const std::string& path) {
  std::unique_ptr<gb::viewer::TraceModel> m;
  const auto t0 = Clock::now();
  while (!m && ms_since(t0) < 60'000) {
    try {
      if (std::filesystem::exists(path)) m = std::make_unique<gb::viewer::TraceModel>(path);
    } catch (const std::exception&) {  // being created: no schema yet
    }
    if (!m) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!m) return 1;
  const bool followed = m->live().following;
  auto cpu_ms = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
  };
  m->wait_loaded();  // the open's reads (the follower starts after them)
  const double open_cpu_ms = cpu_ms();
  while (m->live().following && ms_since(t0) < 3'600'000) {
    m->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(16));
  }
  m->poll();
  std::printf(
      "{\"bench\": \"viewer\", \"metric\": \"follow_steps\", \"value\": %zu, \"unit\": \"steps\", "
      "\"followed\": %s, \"polls\": %lld, \"end\": \"%s\", \"cpu_ms\": %.1f, \"open_cpu_ms\": %.1f, "
      "\"wall_ms\": %.1f, "
      "\"peer\": \"none\"}\n",
      m->run().data().size(), followed ? "true" : "false", static_cast<long long>(m->live().polls),
      m->live().end.c_str(), cpu_ms(), open_cpu_ms, ms_since(t0));
  return 0;
}

// The training's time per step from its trace: the steps' span over their count (the loop as the trace saw it).
double trace_ms_per_step(const std::string& path) {
  gb::query::TraceDb db(path);
  double ms = std::nan("");
  db.each("SELECT (max(end_ns) - min(start_ns)) / 1e6 / count(*) FROM steps",
          [&](const gb::query::Row& r) { ms = r.f64(0); });
  return ms;
}

// --overhead TRAIN: TRAIN alone and with a follower, alternating; the ratio of their ms/step.
int live_overhead(const std::string& train, const LiveOptions& o) {
  const int steps = o.steps > 0 ? o.steps : 20000;
  std::vector<double> alone, with, ratios, follower_cpu, follower_wall;
  std::string pairs;
  for (int i = 0; i < o.runs; ++i) {
    double ms[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const bool follower = (k == 1) != (i % 2 == 1);  // alternate which goes first
      const std::string trace = fresh_trace(follower ? "overhead-followed" : "overhead-alone");
      FILE* f = follower ? ::popen((o.self + " --follow '" + trace + "'").c_str(), "r") : nullptr;
      if (f) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the follower waits for the file
      const std::string cmd = train + " --steps " + std::to_string(steps) + " --trace '" + trace + "' > /dev/null";
      const int rc = std::system(cmd.c_str());
      std::string followed_text;
      if (f) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, f)) followed_text += buf;
        ::pclose(f);
      }
      if (rc != 0) {
        std::fprintf(stderr, "bench_viewer: %s failed (%d)\n", cmd.c_str(), rc);
        return 1;
      }
      if (f && followed_text.find("\"followed\": true") == std::string::npos)
        std::fprintf(stderr, "bench_viewer: the follower did not follow: %s\n", followed_text.c_str());
      if (f) {  // its CPU time and wall time
        const auto at = followed_text.find("\"cpu_ms\": ");
        if (at != std::string::npos) follower_cpu.push_back(std::atof(followed_text.c_str() + at + 10));
        const auto wt = followed_text.find("\"wall_ms\": ");
        if (wt != std::string::npos) follower_wall.push_back(std::atof(followed_text.c_str() + wt + 11));
      }
      ms[follower ? 1 : 0] = trace_ms_per_step(trace);
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(trace + suffix);
    }
    alone.push_back(ms[0]), with.push_back(ms[1]), ratios.push_back(ms[1] / ms[0]);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s[%.4f, %.4f]", pairs.empty() ? "" : ", ", ms[0], ms[1]);
    pairs += buf;
    std::fprintf(stderr, "bench_viewer: --overhead pair %d: alone %.4f ms/step, followed %.4f ms/step\n", i, ms[0],
                 ms[1]);
  }
  const std::string extra = ", \"steps\": " + std::to_string(steps) + ", \"runs\": " + std::to_string(o.runs) +
                            ", \"pairs_ms_per_step\": [" + pairs + "]";
  line("live_overhead_ms_per_step_alone_median", percentile(alone, 0.5), "ms", 0, extra);
  line("live_overhead_ms_per_step_followed_median", percentile(with, 0.5), "ms", 0, extra);
  line("live_overhead_ratio_median", percentile(ratios, 0.5), "x", 0, ", \"target_ratio\": 1.02" + extra);
  line("live_follower_cpu_ms_median", percentile(follower_cpu, 0.5), "ms", 0,
       ", \"wall_ms_median\": " + std::to_string(percentile(follower_wall, 0.5)));
  return 0;
}

int run_live(const std::string& mode, const std::string& given, const LiveOptions& o) {
  if (mode == "live") return live_latency(o);
  if (given.empty()) {
    std::fprintf(stderr, "bench_viewer: --%s needs a %s\n", mode.c_str(),
                 mode == "follow" ? "trace" : "training program");
    return 2;
  }
  return mode == "follow" ? live_follow(given) : live_overhead(given, o);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "/tmp/glassbox-bench-viewer/synth-10M.db";
  int frames = 60;
  bool long_mode = false;
  std::string given, live_mode;
  LiveOptions live_options;
  live_options.self = argv[0];
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--frames") == 0 && i + 1 < argc) frames = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--long") == 0)
      long_mode = true;
    else if (std::strcmp(argv[i], "--live") == 0 || std::strcmp(argv[i], "--follow") == 0 ||
             std::strcmp(argv[i], "--overhead") == 0)
      live_mode = argv[i] + 2;
    else if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
      live_options.steps = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--step-ms") == 0 && i + 1 < argc)
      live_options.step_ms = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      live_options.runs = std::atoi(argv[++i]);
    else
      given = argv[i];
  }
  if (long_mode) return run_long(given, frames);
  if (!live_mode.empty()) return run_live(live_mode, given, live_options);
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
  std::chrono::steady_clock::time_point t_open;
  double opened = 0, first = 0;
  if (!open_and_draw(app, path, t_open, opened, first)) return 1;
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
