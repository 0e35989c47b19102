// Tests engine/monitor/deferred.cpp: the detectors' deferred path (how they judge tensors on cuda: scans queued,
// findings judged in order when the step ends) run on the cpu under GLASSBOX_MONITOR_DEFER=1, where it must write
// exactly the anomalies, grad_stats and steps the immediate path writes, for every planted fault and healthy run;
// raise mode still stops at the op; tickets and their results.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/monitor/monitor_test_util.h"
#include "monitor/deferred.h"

using gb::trace::AnomalyKind;

namespace {

// Every grad_stats row, in (step, param) order, as text with 6 significant digits (the update norms come from
// different arithmetic: the fused pass's float lanes vs the device ops' float tensors and a double sum).
std::vector<std::string> stats_rows(const std::string& db) {
  std::vector<std::string> out;
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h,
                     "SELECT step, param_id, printf('%.6g %.6g %d %d %.6g %.6g %.5g', ifnull(norm, -1), "
                     "ifnull(max_abs, -1), nan_count, inf_count, zero_frac, param_norm, ifnull(update_norm, -1)) "
                     "FROM grad_stats ORDER BY step, param_id",
                     -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    out.push_back(std::to_string(sqlite3_column_int64(st, 0)) + " " + std::to_string(sqlite3_column_int64(st, 1)) +
                  " " + reinterpret_cast<const char*>(sqlite3_column_text(st, 2)));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

std::vector<std::string> step_rows(const std::string& db) {
  std::vector<std::string> out;
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "SELECT step, printf('%.9g', ifnull(loss, -1)), skipped FROM steps ORDER BY step", -1, &st,
                     nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    out.push_back(std::to_string(sqlite3_column_int64(st, 0)) + " " +
                  reinterpret_cast<const char*>(sqlite3_column_text(st, 1)) + " " +
                  std::to_string(sqlite3_column_int(st, 2)));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

std::string describe(const AnomalyRow& r) {
  return std::to_string(r.step) + " kind " + std::to_string(r.kind) + " sev " + std::to_string(r.severity) + " op '" +
         r.op + "' module '" + r.module + "' param '" + r.param + "' node '" + r.node + "' value " +
         std::to_string(r.value) + ": " + r.message + " <- " + std::to_string(r.cause_id) + " " + r.cause;
}

}  // namespace

TEST_CASE("the deferred path writes what the immediate one writes: every planted fault and healthy run") {
  TempDir tmp;
  for (const char* scenario : {"log_zero", "sqrt_zero_row", "custom_div0", "leaf_div0", "big_lr", "no_zero_grad",
                               "accumulate_ok", "dead_relu", "loss_spike", "kept_graph", "healthy_adam", "lr_group",
                               "deep_sigmoid", "detached_encoder", "frozen_and_skipped", "zero_gate", "cnn_lr_jump"}) {
    CAPTURE(scenario);
    const std::string now = run_fault(tmp, scenario);
    REQUIRE(!now.empty());
    TempDir tmp2;
    const std::string later = run_fault(tmp2, scenario, "GLASSBOX_MONITOR_DEFER=1");
    REQUIRE(!later.empty());
    const auto a = read_anomalies(now), b = read_anomalies(later);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(describe(a[i]) == describe(b[i]));
    CHECK(stats_rows(now) == stats_rows(later));
    CHECK(step_rows(now) == step_rows(later));
    CHECK(!stats_rows(later).empty());
  }
}

TEST_CASE("deferred: the planted faults are found (not merely equal): the op, node and module of each") {
  TempDir tmp;
  auto log_rows = read_anomalies(run_fault(tmp, "log_zero", "GLASSBOX_MONITOR_DEFER=1"));
  auto fwd = of_kind(log_rows, AnomalyKind::nonfinite_forward);
  REQUIRE(fwd.size() == 2);
  CHECK(fwd[0].op == "log");
  CHECK(fwd[0].module == "head");
  CHECK(fwd[0].step == 0);
  CHECK(fwd[1].op == "addmm");  // step 1: the NaN update broke body's bias, which entered the next forward
  CHECK(fwd[1].message.find("a parameter: an earlier update made it non-finite") != std::string::npos);
  auto sqrt_rows = read_anomalies(run_fault(tmp, "sqrt_zero_row", "GLASSBOX_MONITOR_DEFER=1"));
  auto bwd = of_kind(sqrt_rows, AnomalyKind::nonfinite_backward);
  REQUIRE(!bwd.empty());
  CHECK(bwd[0].node == "SqrtBackward0");
  CHECK(bwd[0].module == "norm");
  auto leaf_rows = read_anomalies(run_fault(tmp, "leaf_div0", "GLASSBOX_MONITOR_DEFER=1"));
  auto leaf = of_kind(leaf_rows, AnomalyKind::nonfinite_backward);
  REQUIRE(!leaf.empty());
  CHECK(leaf[0].param == "layer.weight");
  CHECK(
      of_kind(read_anomalies(run_fault(tmp, "dead_relu", "GLASSBOX_MONITOR_DEFER=1")), AnomalyKind::dead_relu).size() ==
      1);
  CHECK(warnings(read_anomalies(run_fault(tmp, "healthy", "GLASSBOX_MONITOR_DEFER=1"))) == 0);
}

TEST_CASE("deferred, raise mode: gb::AnomalyError at the op itself, as the immediate path raises it") {
  TempDir tmp;
  auto raise_run = [&](const std::string& name, const std::string& env) {
    const std::string db = tmp.file(name + ".db");
    const std::string cmd = env + " GLASSBOX_ANOMALY=raise GLASSBOX_TRACE=" + db + " " + GLASSBOX_FAULTS +
                            " log_zero > " + tmp.file(name + ".out") + " 2>&1";
    CHECK(std::system(cmd.c_str()) != 0);  // the uncaught AnomalyError ends the program
    return read_anomalies(db);
  };
  const auto now = raise_run("now", ""), later = raise_run("later", "GLASSBOX_MONITOR_DEFER=1");
  REQUIRE(later.size() == 1);  // nothing after the op: no loss row, no backward
  REQUIRE(now.size() == 1);
  CHECK(describe(later[0]) == describe(now[0]));
  CHECK(later[0].message.find("log in module head (LogHead) made 269 Inf from finite inputs at step 0") == 0);
}

TEST_CASE("tickets: cpu results at once, -1 for what is not scanned, forgotten at reset") {
  namespace md = gb::monitor::detail;
  md::deferred_reset();
  CHECK(!md::deferrable(gb::ones({3})));  // only under GLASSBOX_MONITOR_DEFER=1 (or on cuda)
  md::set_defer_cpu(true);
  CHECK(md::deferrable(gb::ones({3})));
  CHECK(!md::deferrable(gb::ones({3}, gb::kInt64)));
  CHECK(!md::deferrable(gb::ones({0})));
  md::set_defer_cpu(false);
  gb::Tensor x = gb::tensor(std::vector<float>{3, 0, -4, INFINITY, NAN, 0});
  const int64_t t = md::defer_scan(x);
  const auto many = md::defer_scans({gb::Tensor(), gb::full({}, 2.5), gb::ones({2}, gb::kInt32)});
  REQUIRE(t >= 0);
  REQUIRE(many.size() == 3);
  CHECK(many[0] == -1);
  CHECK(many[2] == -1);
  const md::ScanResult r = md::deferred_result(t);
  CHECK(r.scanned);
  CHECK(r.n == 6);
  CHECK(r.nan == 1);
  CHECK(r.inf == 1);
  CHECK(r.zeros == 2);
  CHECK(r.max_abs == INFINITY);
  CHECK(md::deferred_result(many[1]).first == 2.5);
  CHECK(md::deferred_result(many[1]).sumsq == 6.25);
  CHECK(!md::deferred_result(-1).scanned);
  md::deferred_reset();
  CHECK(!md::deferred_result(t).scanned);  // forgotten
  CHECK(md::deferred_forgotten(t));
  const int64_t next = md::defer_scan(x);
  CHECK(next > many[1]);  // never reused
  CHECK(!md::deferred_forgotten(next));
  CHECK(md::deferred_result(next).nan == 1);
  md::deferred_reset();
}

namespace {
struct LogOfImpl : gb::nn::Module {
  gb::Tensor forward(const gb::Tensor& x) { return gb::log(x); }
};
GB_MODULE(LogOf);
}  // namespace

TEST_CASE("deferred: an evaluation loop that never ends a step is judged in bounded batches and at the session's end") {
  TempDir tmp;
  const std::string path = tmp.file("eval.db");
  setenv("GLASSBOX_MONITOR_DEFER", "1", 1);
  {
    gb::trace::Session session(path);
    LogOf net;
    gb::NoGradGuard no_grad;
    const gb::Tensor x = gb::full({4}, 2.0);
    for (int i = 0; i < 5000; ++i) net(x);  // 5000 checks, no step: past the bound of what may wait
    net(gb::zeros({4}));                    // log(0): judged when the session ends
  }
  unsetenv("GLASSBOX_MONITOR_DEFER");
  const auto rows = read_anomalies(path);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].kind == static_cast<int>(AnomalyKind::nonfinite_forward));
  CHECK(rows[0].op == "log");
  CHECK(rows[0].step == 0);  // the first checked op starts the automatic step 0, as on the immediate path
  CHECK(rows[0].message.find("log in the root module (LogOf) made 4 Inf from finite inputs") == 0);
}

namespace {
struct Affine : gb::nn::Module {
  Affine() { fc = register_module("fc", gb::nn::Linear(4, 4)); }
  gb::Tensor forward(const gb::Tensor& x) { return fc->forward(x); }
  gb::nn::Linear fc{nullptr};
};

// A GradScaler whose scale overflows every gradient: skipped steps, a collapsing scale, scaled losses.
std::string amp_run(const TempDir& tmp, const std::string& name, bool defer) {
  const std::string path = tmp.file(name + ".db");
  if (defer) setenv("GLASSBOX_MONITOR_DEFER", "1", 1);
  {
    gb::trace::Session session(path);
    gb::manual_seed(0);
    auto net = std::make_shared<Affine>();
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.1));
    gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().init_scale(1e38).growth_interval(1000));
    for (int i = 0; i < 8; ++i) {
      opt.zero_grad();
      auto loss = net->forward(gb::full({4, 4}, i < 6 ? 1e3 : 1e-3)).pow(2).sum();
      scaler.scale(loss).backward();
      scaler.step(opt);
      scaler.update();
    }
  }
  unsetenv("GLASSBOX_MONITOR_DEFER");
  return path;
}
}  // namespace

TEST_CASE("deferred: a GradScaler's skipped steps, scaled losses and collapsing scale write the immediate rows") {
  TempDir tmp;
  const std::string now = amp_run(tmp, "amp_now", false), later = amp_run(tmp, "amp_later", true);
  const auto a = read_anomalies(now), b = read_anomalies(later);
  REQUIRE(a.size() == b.size());
  CHECK(!of_kind(a, AnomalyKind::amp_skipped_step).empty());
  for (size_t i = 0; i < a.size(); ++i) CHECK(describe(a[i]) == describe(b[i]));
  const auto sa = stats_rows(now), sb = stats_rows(later);  // skipped steps' rows included
  REQUIRE(sa.size() == sb.size());
  // params.id counts on across the two sessions of this process: the rows without it
  auto without_id = [](const std::string& row) {
    const size_t a = row.find(' '), b = row.find(' ', a + 1);
    return row.substr(0, a) + row.substr(b);
  };
  for (size_t i = 0; i < sa.size(); ++i) CHECK(without_id(sa[i]) == without_id(sb[i]));
  CHECK(step_rows(now) == step_rows(later));
}
