// GPU tier for engine/monitor/deferred.cpp: the planted faults run with the model and data on cuda:0
// (GLASSBOX_FAULTS_DEVICE=cuda) find the same op, node, module and parameter at the same step as on the cpu, while a
// healthy run raises no warning (the scan kernel itself: tests/engine/cuda/scan_gpu_test.cpp).
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <string>

#include "engine/monitor/monitor_test_util.h"
#include "monitor/deferred.h"

using gb::trace::AnomalyKind;

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
