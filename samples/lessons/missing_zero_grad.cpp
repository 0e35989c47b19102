// samples/lessons/missing_zero_grad.cpp — a training loop without optimizer.zero_grad(), and the alarm it raises.
//
// The claim (PyTorch's "Zeroing out gradients" recipe and the optimization tutorial): backward() accumulates into
// .grad, so a loop that never calls zero_grad() adds every step's gradient to all the previous ones; the gradient
// the optimizer sees grows step after step. glassbox's training monitor, on whenever a trace records, flags a
// backward that adds into a .grad an optimizer step already used (anomaly kind missing_zero_grad); a healthy loop
// with zero_grad raises no such alarm.
//
// The lesson trains the same MLP 8-32-3 on the same Blobs batches twice, each under its own gb::trace::Session:
// without zero_grad and with it. It prints the global gradient norm the optimizer saw at each step and, read back
// from each trace's anomalies table (gb::trace::Reader), the missing_zero_grad rows and the first one's message.
// The traces go to the folder argv[1] (kept) or a temporary folder (removed).
//
//   ./build/samples/lessons/lesson_missing_zero_grad [trace-folder]
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "lesson.h"
#include "traces/reader.h"

namespace F = gb::nn::functional;

namespace {

constexpr int kSteps = 8;

struct Run {
  std::vector<double> grad_norms;                // the global .grad norm at each optimizer step
  std::vector<gb::trace::AnomalyRecord> alarms;  // missing_zero_grad rows of the trace
  size_t all_anomalies = 0;
};

Run train(bool zero_grad, const std::string& trace_path) {
  gb::manual_seed(0);
  gb::data::DataLoader loader(
      std::make_shared<gb::data::datasets::Blobs>(512, 3, 8, 2.0, /*seed=*/0),
      gb::data::DataLoaderOptions().batch_size(64).shuffle(true).generator(std::make_shared<gb::Generator>(0)));
  gb::nn::Sequential model(gb::nn::Linear(8, 32), gb::nn::ReLU(), gb::nn::Linear(32, 3));
  gb::optim::SGD opt(model->parameters(), gb::optim::SGDOptions(0.001));
  Run run;
  {
    gb::trace::Session session(trace_path);  // the monitor watches while a trace records
    int step = 0;
    for (auto& batch : loader) {
      if (step++ == kSteps) break;
      if (zero_grad) opt.zero_grad();
      F::cross_entropy(model(batch.data / 10), batch.target).backward();
      double sq = 0;
      for (const auto& p : model->parameters()) sq += p.grad().pow(2).sum().item<double>();
      run.grad_norms.push_back(std::sqrt(sq));
      opt.step();
    }
  }  // the trace is complete here
  gb::trace::Reader reader(trace_path);
  for (const auto& a : reader.anomalies()) {
    ++run.all_anomalies;
    if (a.kind == gb::trace::AnomalyKind::missing_zero_grad) run.alarms.push_back(a);
  }
  return run;
}

std::string norms(const std::vector<double>& v) {
  std::string s;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%s%.3g", s.empty() ? "" : ", ", x);
    s += buf;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  lesson::Lesson lesson("missing_zero_grad",
                        "without optimizer.zero_grad() gradients pile up: their norm grows step after step, and the "
                        "monitor flags missing_zero_grad; the same loop with zero_grad raises no such alarm");
  namespace fs = std::filesystem;
  const bool keep = argc > 1;
  const fs::path dir =
      keep ? fs::path(argv[1]) : fs::temp_directory_path() / ("lesson_missing_zero_grad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Run bug = train(false, (dir / "no_zero_grad.db").string());
  Run ok = train(true, (dir / "zero_grad.db").string());
  if (!keep) fs::remove_all(dir);

  lesson.measured("no zero_grad: gradient norm at steps 0.." + std::to_string(kSteps - 1), norms(bug.grad_norms));
  lesson.measured("with zero_grad: gradient norm at steps 0.." + std::to_string(kSteps - 1), norms(ok.grad_norms));
  lesson.measured("no zero_grad: missing_zero_grad rows in its trace", static_cast<double>(bug.alarms.size()));
  if (!bug.alarms.empty()) lesson.measured("no zero_grad: the first row's message", bug.alarms.front().message);
  lesson.measured("with zero_grad: missing_zero_grad rows in its trace", static_cast<double>(ok.alarms.size()));
  lesson.measured("with zero_grad: anomaly rows of any kind", static_cast<double>(ok.all_anomalies));
  if (keep) lesson.measured("traces", (dir / "no_zero_grad.db").string() + ", " + (dir / "zero_grad.db").string());

  bool grows = bug.grad_norms.size() == kSteps;
  for (size_t i = 1; grows && i < bug.grad_norms.size(); ++i) grows = bug.grad_norms[i] > bug.grad_norms[i - 1];
  double growth = bug.grad_norms.back() / bug.grad_norms.front();
  double ok_growth = ok.grad_norms.back() / ok.grad_norms.front();
  bool holds = grows && growth > 2 && ok_growth < 2 && !bug.alarms.empty() && ok.alarms.empty();
  char evidence[300];
  std::snprintf(evidence, sizeof evidence,
                "without zero_grad the gradient norm %s over %d steps (x%.2g) and the trace holds %zu "
                "missing_zero_grad rows; with zero_grad it went x%.2g and the trace holds %zu",
                grows ? "rose at every step" : "did not rise at every step", kSteps, growth, bug.alarms.size(),
                ok_growth, ok.alarms.size());
  return lesson.verdict(holds, evidence);
}
