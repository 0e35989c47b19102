// Tests engine/monitor/forward.cpp: the op that made the first NaN/Inf in the forward pass (not the ones that
// passed it on), dead ReLUs, GLASSBOX_ANOMALY=raise and off, and the first automatic step starting with the
// training forward. Planted faults run as user programs (faults.cpp) with only GLASSBOX_TRACE set.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include "engine/monitor/monitor_test_util.h"

using gb::trace::AnomalyKind;

TEST_CASE("log of zeros in a named submodule: the log op in module head made the first non-finite value") {
  TempDir tmp;
  std::string db = run_fault(tmp, "log_zero");
  REQUIRE(!db.empty());
  auto rows = read_anomalies(db);
  REQUIRE(!rows.empty());
  const AnomalyRow& first = rows.front();
  CHECK(first.kind == static_cast<int>(AnomalyKind::nonfinite_forward));
  CHECK(first.severity == 2);
  CHECK(first.step == 0);
  CHECK(first.op == "log");
  CHECK(first.module == "head");
  CHECK(first.message.find("log in module head (LogHead) made") != std::string::npos);
  CHECK(first.message.find("from finite inputs") != std::string::npos);
  CHECK(first.message.find("[32, 16] float32") != std::string::npos);  // the input's shape
  // It is the only op named as a maker: ops after it passed the -inf on, and in step 1 the broken parameters are
  // reported once as what carried it in.
  auto fwd = of_kind(rows, AnomalyKind::nonfinite_forward);
  for (size_t i = 1; i < fwd.size(); ++i) CHECK(fwd[i].message.find("already held") != std::string::npos);
  // the loss went non-finite once (one row, not one per step), and backward findings of a step whose forward
  // already broke are consequences, not reported
  CHECK(of_kind(rows, AnomalyKind::nonfinite_loss).size() == 1);
  CHECK(of_kind(rows, AnomalyKind::nonfinite_backward).empty());
}

TEST_CASE("a healthy run raises no anomaly at all (SGD with momentum, and AdamW)") {
  TempDir tmp;
  for (const char* scenario : {"healthy", "healthy_adam"}) {
    CAPTURE(scenario);
    std::string db = run_fault(tmp, scenario);
    REQUIRE(!db.empty());
    auto rows = read_anomalies(db);
    for (const auto& r : rows) CAPTURE(r.message);
    CHECK(rows.empty());
    CHECK(sql_double(db, "SELECT count(*) FROM steps") == 60);
    CHECK(sql_double(db, "SELECT count(*) FROM grad_stats") == 60 * 6);
  }
}

TEST_CASE("dead ReLUs from a bad bias: act1 is flagged, act2 is not") {
  TempDir tmp;
  std::string db = run_fault(tmp, "dead_relu");
  REQUIRE(!db.empty());
  auto dead = of_kind(read_anomalies(db), AnomalyKind::dead_relu);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0].module == "act1");
  CHECK(dead[0].severity == 1);
  CHECK(dead[0].step == 4);  // the 5th step in a row (dead_relu_steps = 5)
  CHECK(dead[0].value == doctest::Approx(1.0));
  CHECK(dead[0].message.find("relu in module act1 (ReLU) output 100% zeros for 5 steps") != std::string::npos);
}

TEST_CASE("GLASSBOX_ANOMALY=raise throws gb::AnomalyError at the first non-finite value, with the trace's message") {
  TempDir tmp;
  gb::monitor::Config c;
  c.mode = gb::monitor::Mode::raise;
  gb::monitor::set_config(c);
  std::string path = tmp.file("raise.db");
  std::string what;
  {
    gb::trace::Session session(path);
    gb::manual_seed(0);
    auto w = gb::randn({4, 4}, gb::requires_grad());
    auto x = gb::randn({2, 4});
    try {
      gb::Tensor y = gb::log(gb::relu(x.mm(w)) * 0);  // log(0) = -inf
      FAIL("no AnomalyError");
    } catch (const gb::AnomalyError& e) {
      what = e.what();
    }
  }
  gb::monitor::set_config(gb::monitor::Config{});
  CHECK(what.find("log in no module made 8 Inf from finite inputs at step 0") != std::string::npos);
  CHECK(what.find("GLASSBOX_ANOMALY=raise") != std::string::npos);
  auto rows = read_anomalies(path);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].op == "log");
  CHECK(what.find(rows[0].message) == 0);
}

TEST_CASE("GLASSBOX_ANOMALY=off: no detector runs, no grad_stats, no automatic steps; op spans stay") {
  TempDir tmp;
  std::string db = tmp.file("log_zero_off.db");
  std::string cmd = "GLASSBOX_ANOMALY=off GLASSBOX_TRACE=" + db + " " + GLASSBOX_FAULTS + " log_zero > /dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(sql_double(db, "SELECT count(*) FROM anomalies") == 0);
  CHECK(sql_double(db, "SELECT count(*) FROM grad_stats") == 0);
  CHECK(sql_double(db, "SELECT count(*) FROM steps") == 0);
  CHECK(sql_double(db, "SELECT count(*) FROM spans WHERE kind = 0") > 50);
}

TEST_CASE("a bad GLASSBOX_ANOMALY value is one warning; the run goes on with the defaults") {
  TempDir tmp;
  std::string db = tmp.file("bad.db"), err = tmp.file("bad.err");
  std::string cmd =
      "GLASSBOX_ANOMALY=loud GLASSBOX_TRACE=" + db + " " + GLASSBOX_FAULTS + " log_zero > /dev/null 2> " + err;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::string text;
  if (FILE* f = std::fopen(err.c_str(), "r")) {
    char buf[4096];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    text.assign(buf, n);
    std::fclose(f);
  }
  CHECK(text.find("GLASSBOX_ANOMALY: unknown mode 'loud'; use off, record or raise") != std::string::npos);
  CHECK(sql_double(db, "SELECT count(*) FROM anomalies WHERE kind = 0") >= 1);  // monitored with the defaults
}

TEST_CASE("ops before the training forward carry no step; the first recorded node starts step 0") {
  TempDir tmp;
  std::string path = tmp.file("steps.db");
  {
    gb::trace::Session session(path);
    auto a = gb::randn({3, 3}) * 2;  // set-up: no grad anywhere
    auto w = gb::randn({3, 3}, gb::requires_grad());
    auto loss = (a.mm(w)).sum();
    loss.backward();
  }
  CHECK(sql_double(path,
                   "SELECT count(*) FROM spans s JOIN strings t ON t.id = s.name_id WHERE t.text = 'mul' "
                   "AND s.step IS NULL") == 1);
  CHECK(sql_double(path, "SELECT step FROM spans s JOIN strings t ON t.id = s.name_id WHERE t.text = 'mm'") == 0);
}
