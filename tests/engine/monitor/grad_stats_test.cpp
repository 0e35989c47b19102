// Tests engine/monitor/grad_stats.cpp: grad_stats rows equal the norms computed directly from the gradients and
// parameters in float64 (SGD, Adam, AdamW, RMSprop), NaN/Inf counts, exploding gradients and a learning rate far
// too high for one layer, and a missing zero_grad (exact: accumulating several backwards before a step is fine).
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <map>

#include "engine/monitor/monitor_test_util.h"

using gb::trace::AnomalyKind;

namespace {

double norm64(const gb::Tensor& t) {
  gb::Tensor d = t.detach().to(gb::kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  double s = 0;
  for (int64_t i = 0; i < d.numel(); ++i) s += p[i] * p[i];
  return std::sqrt(s);
}

struct Row {
  double norm, max_abs, zero_frac, param_norm, update_norm;
  int64_t nan, inf;
  bool norm_null;
};
// grad_stats rows by (step, "<module path>.<param name>")
std::map<std::pair<int64_t, std::string>, Row> read_stats(const std::string& path) {
  std::map<std::pair<int64_t, std::string>, Row> out;
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT g.step, m.path || '.' || p.name, ifnull(g.norm, -1), ifnull(g.max_abs, -1), "
                     "g.zero_frac, g.param_norm, ifnull(g.update_norm, -1), g.nan_count, g.inf_count, g.norm IS NULL "
                     "FROM grad_stats g JOIN params p ON p.id = g.param_id JOIN modules m ON m.id = p.module_id",
                     -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    out[{sqlite3_column_int64(st, 0), reinterpret_cast<const char*>(sqlite3_column_text(st, 1))}] =
        Row{sqlite3_column_double(st, 2), sqlite3_column_double(st, 3),  sqlite3_column_double(st, 4),
            sqlite3_column_double(st, 5), sqlite3_column_double(st, 6),  sqlite3_column_int64(st, 7),
            sqlite3_column_int64(st, 8),  sqlite3_column_int(st, 9) != 0};
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

struct Net : gb::nn::Module {
  Net() {
    fc1 = register_module("fc1", gb::nn::Linear(5, 16));
    fc2 = register_module("fc2", gb::nn::Linear(16, 3));
  }
  gb::Tensor forward(const gb::Tensor& x) { return fc2->forward(gb::relu(fc1->forward(x))); }
  gb::nn::Linear fc1{nullptr}, fc2{nullptr};
};

// Runs 3 steps of `make_opt`'s optimizer on Net, traced, and checks every row against float64 references.
template <class MakeOpt>
void check_against_reference(MakeOpt make_opt) {
  TempDir tmp;
  std::string path = tmp.file("stats.db");
  std::map<std::pair<int64_t, std::string>, Row> want;
  {
    gb::trace::Session session(path);
    gb::manual_seed(1);
    auto net = std::make_shared<Net>();
    auto opt = make_opt(net->parameters());
    for (int64_t step = 0; step < 3; ++step) {
      auto x = gb::randn({32, 5});
      auto y = gb::randint(0, 3, {32});
      opt->zero_grad();
      gb::nn::functional::cross_entropy(net->forward(x), y).backward();
      std::map<std::string, gb::Tensor> before;
      for (const auto& p : net->named_parameters()) before[p.key()] = p.value().detach().clone();
      opt->step();
      for (const auto& p : net->named_parameters()) {
        const gb::Tensor& g = p.value().grad();
        Row r{};
        r.norm = norm64(g);
        r.max_abs = g.abs().max().item<double>();
        r.zero_frac = gb::eq(g, 0).to(gb::kDouble).mean().item<double>();
        r.param_norm = norm64(before[p.key()]);  // before the update (schema version 6)
        r.update_norm = norm64(p.value().detach().to(gb::kDouble) - before[p.key()].to(gb::kDouble));
        want[{step, p.key()}] = r;
      }
    }
  }
  auto got = read_stats(path);
  REQUIRE(got.size() == want.size());
  for (const auto& entry : want) {  // no structured binding: CAPTURE's lambda captures it (Clang 14)
    const auto& key = entry.first;
    const auto& w = entry.second;
    CAPTURE(key.first);
    CAPTURE(key.second);
    REQUIRE(got.count(key));
    const Row& g = got[key];
    CHECK(g.norm == doctest::Approx(w.norm).epsilon(1e-6));
    CHECK(g.max_abs == doctest::Approx(w.max_abs).epsilon(1e-7));
    CHECK(g.zero_frac == doctest::Approx(w.zero_frac));
    CHECK(g.param_norm == doctest::Approx(w.param_norm).epsilon(1e-6));
    CHECK(g.update_norm == doctest::Approx(w.update_norm).epsilon(2e-4));  // the update is a difference of floats
    CHECK(g.nan == 0);
    CHECK(g.inf == 0);
  }
}

}  // namespace

TEST_CASE("grad_stats equal float64 norms of the gradients, parameters and applied updates: SGD") {
  check_against_reference([](std::vector<gb::Tensor> ps) {
    return std::make_unique<gb::optim::SGD>(ps, gb::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-2));
  });
}

TEST_CASE("grad_stats: Adam, AdamW (decoupled decay in the update) and RMSprop") {
  check_against_reference([](std::vector<gb::Tensor> ps) {
    return std::make_unique<gb::optim::Adam>(ps, gb::optim::AdamOptions(1e-2).weight_decay(1e-3));
  });
  check_against_reference([](std::vector<gb::Tensor> ps) {
    return std::make_unique<gb::optim::AdamW>(ps, gb::optim::AdamWOptions(1e-2).weight_decay(0.1));
  });
  check_against_reference([](std::vector<gb::Tensor> ps) {
    return std::make_unique<gb::optim::RMSprop>(ps, gb::optim::RMSpropOptions(1e-2).momentum(0.5));
  });
  check_against_reference([](std::vector<gb::Tensor> ps) {
    return std::make_unique<gb::optim::RMSprop>(ps, gb::optim::RMSpropOptions(1e-2).centered(true));
  });
}

TEST_CASE("NaN and Inf gradient elements are counted; a NaN norm is stored as NULL") {
  TempDir tmp;
  std::string path = tmp.file("nan.db");
  {
    gb::trace::Session session(path);
    auto net = std::make_shared<Net>();
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.1));
    gb::nn::functional::cross_entropy(net->forward(gb::randn({4, 5})), gb::randint(0, 3, {4})).backward();
    gb::Tensor g = net->fc1->weight.grad();
    g.view({-1}).narrow(0, 0, 3).fill_(std::nan(""));
    g.view({-1}).narrow(0, 3, 2).fill_(INFINITY);
    opt.step();
  }
  auto got = read_stats(path);
  const Row& w = got[{0, "fc1.weight"}];
  CHECK(w.nan == 3);
  CHECK(w.inf == 2);
  CHECK(w.norm_null);
  CHECK(w.max_abs == -1);  // NULL: NaN
  const Row& b = got[{0, "fc1.bias"}];
  CHECK(b.nan == 0);
  CHECK(!b.norm_null);
}

TEST_CASE("a learning rate far too high for one layer: update_ratio names that layer's parameters only") {
  TempDir tmp;
  std::string db = run_fault(tmp, "big_lr");
  REQUIRE(!db.empty());
  auto ratio = of_kind(read_anomalies(db), AnomalyKind::update_ratio);
  REQUIRE(!ratio.empty());
  for (const auto& r : ratio) {
    CHECK(r.param.rfind("fc3.", 0) == 0);
    CHECK(r.value > 1.0);
    CHECK(r.message.find("lr 40") != std::string::npos);
  }
  // the first update already dwarfs the weight: against its norm BEFORE the update (after it, the ratio reads ~1)
  CHECK(ratio[0].step == 0);
  CHECK(ratio[0].param == "fc3.weight");
  CHECK(ratio[0].value > 3);
  CHECK(ratio[0].message.find("one update of fc3.weight was") == 0);
  CHECK(ratio[0].message.find("parameter group 1 (lr 40): 800x group 0's 0.05") != std::string::npos);
  CHECK(warnings(read_anomalies(db)) == static_cast<int>(ratio.size()));
}

TEST_CASE("no zero_grad: backward into a .grad an optimizer step already used, once per step from step 1") {
  TempDir tmp;
  std::string db = run_fault(tmp, "no_zero_grad");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  auto missing = of_kind(rows, AnomalyKind::missing_zero_grad);
  REQUIRE(missing.size() == 4);  // steps 1..4
  CHECK(missing[0].step == 1);
  CHECK(missing[0].severity == 1);
  CHECK(!missing[0].param.empty());
  CHECK(missing[0].message.find("the optimizer step of step 0 already used") != std::string::npos);
  CHECK(warnings(rows) == 4);  // and nothing else
}

TEST_CASE("gradient accumulation over two backwards per step, zeroed in place after the step, is healthy") {
  TempDir tmp;
  std::string db = run_fault(tmp, "accumulate_ok");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  for (const auto& r : rows) CAPTURE(r.message);
  CHECK(rows.empty());
  CHECK(sql_double(db, "SELECT count(*) FROM steps") == 20);
}

TEST_CASE("gradient accumulation with zero_grad(set_to_none): a new .grad at the freed one's address is not the used one") {
  // zero_grad() frees the .grad the step used; the next backward's new .grad is often allocated at the very same
  // address (glibc hands a freed block of the same size straight back). After a step of one backward (its .grad
  // used at version 0) and then a step accumulating two, the second backward finds a .grad at the used address and
  // version: the detector must tell the new buffer from the used one, or a healthy run cries wolf (it did, on the
  // oom sample's accumulating way out in CI). With glibc, the spacers below put the new .grad at the used one's
  // address in 3 of these steps when the detector kept a bare address; holding a weak reference, it keeps that block
  // from being reused at all while it watches it.
  TempDir tmp;
  std::string path = tmp.file("reuse.db");
  {
    gb::trace::Session session(path);
    gb::manual_seed(3);
    gb::Tensor w = gb::randn({4}).requires_grad_();
    gb::optim::SGD opt({w}, gb::optim::SGDOptions(0.01));
    for (int step = 0; step < 40; ++step) {
      const int micro_batches = 1 + step % 2;
      for (int micro = 0; micro < micro_batches; ++micro) {
        // the gradient of a loss linear in w, handed straight to w
        gb::Tensor dloss_dw = gb::full({4}, 0.5 + micro);
        // a varying number of tensors freed right after zero_grad frees the used .grad: glibc hands freed blocks
        // back last-in first-out, so in some step the new .grad lands exactly where the used one was
        std::vector<gb::Tensor> others;
        for (int i = 0; i < step % 7; ++i) others.push_back(gb::zeros({1}));
        if (micro == 0) opt.zero_grad();
        others.clear();
        w.backward(dloss_dw);
      }
      opt.step();
    }
  }
  auto rows = read_anomalies(path);
  for (const auto& r : rows) MESSAGE(r.message);
  CHECK(rows.empty());
  CHECK(sql_double(path, "SELECT count(*) FROM grad_stats") > 0);  // the detectors were watching
}

TEST_CASE("exploding gradient: a parameter's norm far beyond its own window is flagged at that step") {
  TempDir tmp;
  std::string db = run_fault(tmp, "loss_spike");  // the mislabelled batch at step 40 also blows the gradients up
  REQUIRE(!db.empty());
  auto explode = of_kind(read_anomalies(db), AnomalyKind::exploding_norm);
  REQUIRE(!explode.empty());
  for (const auto& r : explode) {
    CHECK(r.step == 40);
    CHECK(r.message.find("gradient norm of " + r.param + " exploded to") == 0);
  }
}

TEST_CASE("a long run: gradients measured every step, rows in the first steps, every N, in windows and at anomalies") {
  // detail: the first 5 steps, then 2 every 20; grad_stats every 7; the detectors and steps.grad_norm every step
  TempDir tmp;
  std::string path = tmp.file("cadence.db");
  gb::monitor::Config config;
  config.grad_stats_every = 7;
  gb::monitor::set_config(config);
  {
    gb::trace::SessionOptions options;
    options.detail = gb::trace::DetailPolicy::parse("first=5,every=20,window=2");
    gb::trace::Session session(path, options);
    gb::manual_seed(0);
    gb::nn::Linear fc(4, 2);
    gb::optim::SGD opt(fc->parameters(), gb::optim::SGDOptions(1e-6));  // small steps: one blow-up, no aftermath
    for (int step = 0; step < 60; ++step) {
      opt.zero_grad();
      gb::Tensor loss = gb::nn::functional::mse_loss(fc(gb::randn({8, 4})), gb::zeros({8, 2}));
      (loss * (step == 47 ? 1e4 : 1.0)).backward();  // step 47: gradients 10^4 times their usual size
      opt.step();
    }
  }
  gb::monitor::set_config(gb::monitor::Config{});
  std::vector<int64_t> written;
  {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "SELECT DISTINCT step FROM grad_stats ORDER BY step", -1, &s, nullptr);
    while (sqlite3_step(s) == SQLITE_ROW) written.push_back(sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
  // first 0..4; every 7: 7, 14, 21, 28, 35, 42, 49, 56; windows 20, 21, 40, 41; the anomaly's step 47
  std::string steps_written;
  for (int64_t s : written) steps_written += std::to_string(s) + " ";
  CHECK(steps_written == "0 1 2 3 4 7 14 20 21 28 35 40 41 42 47 49 56 ");
  auto explode = of_kind(read_anomalies(path), AnomalyKind::exploding_norm);
  REQUIRE_FALSE(explode.empty());
  CHECK(explode[0].step == 47);  // found at a step whose rows were not due: the detectors run on every step
  // steps.grad_norm: every step, the L2 norm of all the gradients (the rows' norms where they were written)
  CHECK(sql_double(path, "SELECT count(*) FROM steps WHERE grad_norm IS NOT NULL") == 60);
  CHECK(sql_double(path, "SELECT count(*) FROM steps s WHERE abs(s.grad_norm - (SELECT sqrt(sum(norm * norm)) "
                         "FROM grad_stats g WHERE g.step = s.step)) > 1e-9 * s.grad_norm") == 0);
  CHECK(sql_double(path, "SELECT grad_norm FROM steps WHERE step = 47") >
        100 * sql_double(path, "SELECT grad_norm FROM steps WHERE step = 46"));
}
