// GPU tier for engine/monitor/deferred.cpp (engine/cuda/scan.cu): the scan kernel against the cpu scan, and the
// planted faults run with the model and data on cuda:0 (GLASSBOX_FAULTS_DEVICE=cuda) find the same op, node,
// module and parameter at the same step as on the cpu, while a healthy run raises no warning.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <string>

#include "engine/monitor/monitor_test_util.h"
#include "monitor/deferred.h"

using gb::trace::AnomalyKind;

TEST_CASE("gpu: the device scan counts and sums as the cpu scan does, every floating dtype, many slots") {
  namespace md = gb::monitor::detail;
  md::deferred_reset();
  gb::manual_seed(3);
  for (auto dt : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16}) {
    const std::string dtype = gb::to_string(dt);
    CAPTURE(dtype);
    gb::Tensor x = (gb::randn({100003}) * 3).to(dt);
    x.index_put_({gb::indexing::Slice(0, 700)}, 0);
    x.index_put_({12345}, NAN);
    x.index_put_({99999}, INFINITY);
    x.index_put_({4}, -INFINITY);
    const md::ScanResult want = md::scan(x);
    std::vector<int64_t> tickets;
    for (int i = 0; i < 50; ++i) tickets.push_back(md::defer_scan(x.to(gb::kCUDA)));
    for (int64_t t : tickets) {
      const md::ScanResult got = md::deferred_result(t);
      CHECK(got.n == want.n);
      CHECK(got.nan == want.nan);
      CHECK(got.inf == want.inf);
      CHECK(got.zeros == want.zeros);
      CHECK(got.max_abs == INFINITY);
    }
    gb::Tensor f = gb::randn({5000}).to(dt);
    const md::ScanResult fw = md::scan(f), fg = md::deferred_result(md::defer_scan(f.to(gb::kCUDA).t().contiguous()));
    CHECK(fg.sumsq == doctest::Approx(fw.sumsq).epsilon(1e-6));
    CHECK(fg.max_abs == doctest::Approx(fw.max_abs));
    CHECK(fg.first == doctest::Approx(f[0].item<double>()));
  }
  md::deferred_reset();
}

TEST_CASE("gpu: planted faults on cuda are found at the op, node, module and parameter the cpu run names") {
  TempDir tmp;
  for (const char* scenario : {"log_zero", "sqrt_zero_row", "custom_div0", "leaf_div0", "no_zero_grad", "dead_relu"}) {
    CAPTURE(scenario);
    const auto cpu = read_anomalies(run_fault(tmp, scenario));
    TempDir tmp2;
    const std::string db = run_fault(tmp2, scenario, "GLASSBOX_FAULTS_DEVICE=cuda");
    REQUIRE(!db.empty());
    const auto gpu = read_anomalies(db);
    REQUIRE(gpu.size() == cpu.size());
    for (size_t i = 0; i < cpu.size(); ++i) {
      CHECK(gpu[i].kind == cpu[i].kind);
      CHECK(gpu[i].severity == cpu[i].severity);
      CHECK(gpu[i].step == cpu[i].step);
      CHECK(gpu[i].op == cpu[i].op);
      CHECK(gpu[i].module == cpu[i].module);
      CHECK(gpu[i].param == cpu[i].param);
      CHECK(gpu[i].node == cpu[i].node);
    }
    CHECK(sql_double(db, "SELECT count(*) FROM grad_stats") > 0);
  }
  for (const char* healthy : {"healthy", "healthy_adam", "accumulate_ok"}) {
    CAPTURE(healthy);
    const std::string db = run_fault(tmp, healthy, "GLASSBOX_FAULTS_DEVICE=cuda");
    REQUIRE(!db.empty());
    CHECK(warnings(read_anomalies(db)) == 0);
    CHECK(sql_double(db, "SELECT count(*) FROM steps WHERE loss IS NOT NULL") == 60);
  }
}
