// samples/sample_run.h — what the training samples share around their loop: `--trace PATH` (a trace session into
// PATH, its folder made first, e.g. runs/train_mlp.db) and StepClock, where the step time goes without a trace.
#pragma once

#include <glassbox/glassbox.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sample_run {

// A trace session writing `path` (nullptr when path is empty: GLASSBOX_TRACE may still trace the run). When
// GLASSBOX_TRACE already records the run, --trace is ignored with a note (one session at a time).
inline std::unique_ptr<gb::trace::Session> open_trace(const std::string& path) {
  if (path.empty()) return nullptr;
  if (const char* env = std::getenv("GLASSBOX_TRACE"); env && *env) {
    std::fprintf(stderr, "note: GLASSBOX_TRACE=%s already traces this run; --trace %s is ignored\n", env, path.c_str());
    return nullptr;
  }
  std::error_code ec;
  auto folder = std::filesystem::path(path).parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder, ec);
  return std::make_unique<gb::trace::Session>(path);
}

// Wall time per phase of a training step, summed over the run: lap(phase) gives the time since the previous lap
// (or start) to phase. Phases print in the order they first appear:
//   where the step time goes (300 steps, 0.21 ms/step): data 6%, forward 31%, backward 44%, optimizer 19%
// A trace tells the same per op, module and autograd node (glassbox report); this is the view without one.
class StepClock {
 public:
  using Clock = std::chrono::steady_clock;
  void start() { last_ = Clock::now(); }
  void lap(const char* phase) {
    auto now = Clock::now();
    double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    for (auto& [name, total] : phases_)
      if (name == phase) {
        total += s;
        return;
      }
    phases_.emplace_back(phase, s);
  }
  double seconds(const std::string& phase) const {
    for (const auto& [name, s] : phases_)
      if (name == phase) return s;
    return 0;
  }
  double total_seconds() const {
    double t = 0;
    for (const auto& p : phases_) t += p.second;
    return t;
  }
  void print(int64_t steps) const {
    double total = total_seconds();
    if (steps <= 0 || total <= 0) return;
    std::printf("where the step time goes (%lld steps, %.3g ms/step):", (long long)steps, 1000 * total / double(steps));
    const char* sep = " ";
    for (const auto& [name, s] : phases_) {
      std::printf("%s%s %.0f%%", sep, name.c_str(), 100 * s / total);
      sep = ", ";
    }
    std::printf("\n");
  }

 private:
  Clock::time_point last_ = Clock::now();
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace sample_run
