// Tests engine/monitor/steps.cpp: steps without a StepScope (each optimizer.step() ends one, with its loss and lr),
// a StepScope still wins, loss spikes, memory growing step after step (a loss kept with its graph), and AMP
// skipped steps and a collapsing loss scale; a leak across steps (predictions kept with their graphs) that the
// memory_growth alarm splits by age and the OOM report and the story name, against one step's own peak.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <sstream>

#include "engine/monitor/monitor_test_util.h"
#include "tools/story.h"

using gb::trace::AnomalyKind;

namespace {
struct OneLayer : gb::nn::Module {
  OneLayer() { fc = register_module("fc", gb::nn::Linear(4, 2)); }
  gb::Tensor forward(const gb::Tensor& x) { return fc->forward(x); }
  gb::nn::Linear fc{nullptr};
};
}  // namespace

TEST_CASE("without a StepScope each optimizer.step() ends a step: numbered from 0, with the loss and the lr") {
  TempDir tmp;
  std::string path = tmp.file("auto.db");
  std::vector<double> losses;
  {
    gb::trace::Session session(path);
    gb::manual_seed(0);
    auto net = std::make_shared<OneLayer>();
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.25));
    for (int i = 0; i < 4; ++i) {
      opt.zero_grad();
      auto loss = gb::nn::functional::mse_loss(net->forward(gb::randn({8, 4})), gb::zeros({8, 2}));
      loss.backward();
      losses.push_back(loss.item<double>());
      opt.step();
      opt.param_groups()[0].options().set_lr(0.25 / (i + 2));
    }
  }
  CHECK(sql_double(path, "SELECT count(*) FROM steps") == 4);
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(sql_double(path, "SELECT loss FROM steps WHERE step = " + std::to_string(i)) ==
          doctest::Approx(losses[size_t(i)]));
    CHECK(sql_double(path, "SELECT lr FROM steps WHERE step = " + std::to_string(i)) ==
          doctest::Approx(0.25 / (i + 1)));
    CHECK(sql_double(path, "SELECT skipped FROM steps WHERE step = " + std::to_string(i)) == 0);
  }
  // steps tile the run: each starts where the previous ended, and the ops of step 2 lie inside its window
  CHECK(sql_double(path,
                   "SELECT count(*) FROM steps a JOIN steps b ON b.step = a.step + 1 WHERE b.start_ns != a.end_ns") ==
        0);
  CHECK(sql_double(path,
                   "SELECT count(*) FROM spans s JOIN steps t ON t.step = s.step WHERE s.step = 2 AND s.kind = 0 "
                   "AND (s.start_ns < t.start_ns OR s.start_ns > t.end_ns)") == 0);
  CHECK(sql_double(path, "SELECT count(*) FROM spans WHERE step = 2 AND kind = 1") >= 2);  // its backward nodes
}

TEST_CASE("a StepScope wins: its numbers; the loss and lr it was not given are filled in") {
  TempDir tmp;
  std::string path = tmp.file("scope.db");
  {
    gb::trace::Session session(path);
    auto net = std::make_shared<OneLayer>();
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.5));
    for (int i = 0; i < 3; ++i) {
      gb::trace::StepScope step(100 + i);
      opt.zero_grad();
      auto loss = net->forward(gb::ones({2, 4})).sum();
      loss.backward();
      opt.step();
      if (i == 1) step.set_loss(7.0);
    }
    // An evaluation after the last StepScope, through a module call: it belongs to no step (the engine must not
    // start numbering steps of its own: it did, and the evaluation's spans became step 0).
    gb::nn::Linear eval_net(4, 2);
    gb::NoGradGuard no_grad;
    eval_net(gb::ones({2, 4})).sum().item<double>();
  }
  CHECK(sql_double(path, "SELECT count(*) FROM steps") == 3);
  CHECK(sql_double(path, "SELECT min(step) FROM steps") == 100);
  CHECK(sql_double(path, "SELECT loss FROM steps WHERE step = 101") == 7.0);  // the user's value
  CHECK(sql_double(path, "SELECT loss IS NOT NULL AND lr = 0.5 FROM steps WHERE step = 102") == 1);
  CHECK(sql_double(path, "SELECT count(DISTINCT step) FROM grad_stats") == 3);
  CHECK(sql_double(path, "SELECT count(*) FROM spans WHERE kind = 0 AND step IS NULL") >= 2);  // linear, sum, ...
  CHECK(sql_double(path, "SELECT count(*) FROM spans WHERE step IS NOT NULL AND step < 100") == 0);
}

TEST_CASE("one mislabelled batch: a loss spike at exactly that step, and no other warning before it") {
  TempDir tmp;
  std::string db = run_fault(tmp, "loss_spike");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  auto spikes = of_kind(rows, AnomalyKind::loss_spike);
  REQUIRE(spikes.size() == 1);
  CHECK(spikes[0].step == 40);
  CHECK(spikes[0].severity == 1);
  CHECK(spikes[0].value > 5);
  CHECK(spikes[0].message.find("loss spiked to") == 0);
  for (const auto& r : rows) CHECK(r.step == 40);
}

TEST_CASE("a loss kept with its graph across steps: memory_growth, held by activations") {
  TempDir tmp;
  std::string db = run_fault(tmp, "kept_graph");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  auto growth = of_kind(rows, AnomalyKind::memory_growth);
  REQUIRE(growth.size() == 1);
  CHECK(growth[0].severity == 1);
  CHECK(growth[0].value > 256 * 1024);  // bytes per step
  CHECK(growth[0].message.find("cpu memory allocated at step end grew 6 steps in a row") == 0);
  CHECK(growth[0].message.find("grew most: activation made by relu in act") != std::string::npos);
  // by age: what earlier steps allocated and kept, with the ops and modules that made it
  CHECK(growth[0].message.find("; live by the step that allocated it: this step ") != std::string::npos);
  CHECK(growth[0].message.find("; kept by earlier steps ") != std::string::npos);
  CHECK(growth[0].message.find(" from 6 earlier steps (0..5): activation ") != std::string::npos);
  CHECK(warnings(rows) == 1);
}

namespace {
std::string story_of(const std::string& path) {
  std::ostringstream out;
  gb::tools::write_story(gb::query::TraceDb(path), out);
  return out.str();
}
}  // namespace

TEST_CASE("validation predictions kept with their graphs every step: a leak the alarm foretells and the OOM names") {
  TempDir tmp;
  // 96 MiB: the run keeps ~1 MiB of activations per step and runs out after ninety-odd steps
  std::string db = run_fault(tmp, "kept_outputs_oom", "GLASSBOX_ALLOC_CONF=capacity:96MiB");
  REQUIRE(!db.empty());
  const double step = sql_double(db, "SELECT step FROM oom_reports");
  const double kept = sql_double(db, "SELECT kept_bytes FROM oom_reports");
  const double allocated = sql_double(db, "SELECT allocated FROM oom_reports");
  MESSAGE("OOM at step " << step << ": kept " << kept << " of " << allocated << " bytes allocated");
  CHECK(step > 80);
  CHECK(kept > 0.9 * allocated);  // the leak holds nearly all of it
  const std::string report = sql_text(db, "SELECT report FROM oom_reports");
  CHECK(report.starts_with("CPU out of memory. Tried to allocate "));
  CHECK(report.find("Live memory by the step that allocated it (step " + std::to_string(int64_t(step)) +
                    " ran out):") != std::string::npos);
  CHECK(report.find("  - a leak across steps, not this step's peak: ") != std::string::npos);
  // the kept tensors: the ReLUs' outputs each prediction's graph saved, from every step since the first
  CHECK(report.find("      relu in act1 (activation): ") != std::string::npos);
  CHECK(report.find("      relu in act2 (activation): ") != std::string::npos);
  CHECK(report.find(" from " + std::to_string(int64_t(step) - 1) + " steps (1..") != std::string::npos);
  CHECK(report.find("run evaluation under gb::NoGradGuard") != std::string::npos);
  CHECK(report.find("activation checkpointing or a smaller batch would free") == std::string::npos);
  CHECK(report.find("checkpointing them would free") == std::string::npos);

  const auto rows = read_anomalies(db);
  const auto growth = of_kind(rows, AnomalyKind::memory_growth);
  REQUIRE(growth.size() == 1);
  CHECK(growth[0].step == 6);
  CHECK(growth[0].message.find("; kept by earlier steps ") != std::string::npos);
  CHECK(growth[0].message.find(" from 5 earlier steps (1..5): activation ") != std::string::npos);
  CHECK(growth[0].message.find("made by relu in act") != std::string::npos);
  CHECK(warnings(rows) == 1);

  const std::string story = story_of(db);
  MESSAGE(story.substr(0, 1200));
  CHECK(story.starts_with("story: ran out of memory at step " + std::to_string(int64_t(step)) + ": "));
  CHECK(story.find(" live were allocated by earlier steps and kept: a leak, not this step's peak; 1 alarm of 1 "
                   "kind\n") != std::string::npos);
  CHECK(story.find("  the memory_growth alarm at step 6 foretold it: cpu memory allocated at step end grew") !=
        std::string::npos);
}

TEST_CASE("one batch too big for the device: the step's own peak, checkpointing advice, nothing kept") {
  TempDir tmp;
  std::string db = run_fault(tmp, "peak_oom", "GLASSBOX_ALLOC_CONF=capacity:64MiB");
  REQUIRE(!db.empty());
  CHECK(sql_double(db, "SELECT step FROM oom_reports") == 10);
  CHECK(sql_double(db, "SELECT kept_bytes FROM oom_reports") == 0);
  const std::string report = sql_text(db, "SELECT report FROM oom_reports");
  CHECK(report.find("  this step ") != std::string::npos);
  CHECK(report.find("activation checkpointing or a smaller batch would free") != std::string::npos);
  CHECK(report.find("leak") == std::string::npos);
  CHECK(read_anomalies(db).empty());
  CHECK(story_of(db).starts_with("story: ran out of memory\n"));
}

TEST_CASE("AMP: skipped steps are info rows; a scale that keeps falling is a warning, once") {
  TempDir tmp;
  std::string path = tmp.file("amp.db");
  {
    gb::trace::Session session(path);
    auto net = std::make_shared<OneLayer>();
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.1));
    // a scale so large that every scaled gradient overflows float32
    gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().init_scale(1e38).growth_interval(1000));
    for (int i = 0; i < 8; ++i) {
      opt.zero_grad();
      auto loss = net->forward(gb::full({4, 4}, 1e3)).pow(2).sum();
      scaler.scale(loss).backward();
      scaler.step(opt);
      scaler.update();
    }
  }
  auto rows = read_anomalies(path);
  auto skipped = of_kind(rows, AnomalyKind::amp_skipped_step);
  CHECK(skipped.size() >= 5);
  for (const auto& r : skipped) CHECK(r.severity == 0);
  auto collapse = of_kind(rows, AnomalyKind::amp_scale_collapse);
  REQUIRE(collapse.size() == 1);
  CHECK(collapse[0].severity == 1);
  CHECK(collapse[0].message.find("5 steps in a row were skipped") != std::string::npos);
  CHECK(sql_double(path, "SELECT count(*) FROM steps WHERE skipped = 1") == skipped.size());
  CHECK(sql_double(path, "SELECT grad_scale FROM steps WHERE step = 0") == doctest::Approx(1e38).epsilon(1e-6));
  // with a GradScaler, a non-finite backward is expected: info, never an error
  for (const auto& r : of_kind(rows, AnomalyKind::nonfinite_backward)) CHECK(r.severity == 0);
}

TEST_CASE("automatic steps: the summary's time split, and each device's memory peaks by category") {
  TempDir tmp;
  std::string path = tmp.file("summary.db");
  int64_t param_bytes = 0;
  {
    gb::trace::Session session(path);
    gb::manual_seed(0);
    auto net = std::make_shared<OneLayer>();
    for (const auto& p : net->parameters()) param_bytes += gb::memory::round_size(p.numel() * 4);
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9));
    for (int i = 0; i < 6; ++i) {
      opt.zero_grad();
      gb::Tensor x = gb::randn({256, 4});
      auto loss = gb::nn::functional::mse_loss(net->forward(x), gb::zeros({256, 2}));
      loss.backward();
      opt.step();
    }
  }
  CHECK(sql_double(path, "SELECT count(*) FROM steps") == 6);
  // the four phases tile each step exactly; backward and the optimizer step took some time
  CHECK(sql_double(path, "SELECT count(*) FROM steps WHERE data_ns IS NULL OR forward_ns IS NULL OR backward_ns IS "
                         "NULL OR optimizer_ns IS NULL") == 0);
  CHECK(sql_double(path, "SELECT count(*) FROM steps WHERE data_ns + forward_ns + backward_ns + optimizer_ns != "
                         "end_ns - start_ns") == 0);
  CHECK(sql_double(path, "SELECT min(backward_ns) FROM steps") > 0);
  CHECK(sql_double(path, "SELECT min(optimizer_ns) FROM steps") > 0);
  CHECK(sql_double(path, "SELECT max(data_ns) FROM steps") == 0);  // no DataLoader here
  // step_memory: one cpu row per step; the parameters throughout, the momentum buffers from the first step on
  CHECK(sql_double(path, "SELECT count(*) FROM step_memory WHERE device = -1") == 6);
  CHECK(sql_double(path, "SELECT count(*) FROM step_memory WHERE parameter_peak != " + std::to_string(param_bytes)) ==
        0);
  CHECK(sql_double(path, "SELECT count(*) FROM step_memory WHERE optimizer_state_peak != " +
                             std::to_string(param_bytes)) == 0);
  CHECK(sql_double(path, "SELECT count(*) FROM step_memory WHERE allocated_peak < allocated_end OR reserved_peak < "
                         "reserved_end OR allocated_peak > reserved_peak OR allocated_peak < parameter_peak + "
                         "activation_peak") == 0);
  // the peak allocated during a step is at least what the memory events show for it (the same allocator's totals)
  CHECK(sql_double(path, "SELECT count(*) FROM step_memory m WHERE m.allocated_peak < (SELECT max(e.allocated) FROM "
                         "memory_events e JOIN steps s ON s.step = m.step WHERE e.device = -1 AND e.t_ns > s.start_ns "
                         "AND e.t_ns <= s.end_ns)") == 0);
  CHECK(sql_double(path, "SELECT max(activation_peak) FROM step_memory") > 0);
}
