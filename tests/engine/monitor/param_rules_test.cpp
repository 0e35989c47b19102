// Tests engine/monitor/param_rules.cpp on planted faults written as user code (faults.cpp) and on healthy runs:
// an outsized update named at once with its group and lr, parameters that never get a gradient (detached, skipped,
// frozen) or an exactly zero one, vanishing as one layer's share of the gradient collapsing, and no alarm on a run
// trained far past convergence (its gradients shrink by orders of magnitude and scatter) or on zero-initialised
// weights growing under a warm-up.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include "engine/monitor/monitor_test_util.h"

using gb::trace::AnomalyKind;

TEST_CASE("one layer at 6,000x the others' lr: its first update is named at once, against the weight before it") {
  TempDir tmp;
  const std::string db = run_fault(tmp, "lr_group");
  REQUIRE(!db.empty());
  const auto rows = read_anomalies(db);
  REQUIRE(!rows.empty());
  const AnomalyRow& first = rows[0];
  CHECK(first.kind == static_cast<int>(AnomalyKind::update_ratio));
  CHECK(first.step == 0);
  CHECK(first.param == "fc2.weight");
  CHECK(first.value > 10);  // one update many times the weight (after the update the ratio would read ~1)
  CHECK(first.message.find("one update of fc2.weight was") == 0);
  CHECK(first.message.find("parameter group 1 (lr 300): 6e+03x group 0's 0.05") != std::string::npos);
  CHECK(first.cause_id == -1);  // a root
  // grad_stats has the weight's norm before the update: the ratio the row states
  CHECK(sql_double(db, "SELECT g.update_norm / g.param_norm FROM grad_stats g JOIN params p ON p.id = g.param_id "
                       "JOIN modules m ON m.id = p.module_id WHERE g.step = 0 AND m.path = 'fc2' AND "
                       "p.name = 'weight'") == doctest::Approx(first.value).epsilon(1e-6));
}

TEST_CASE("an encoder detached by mistake: one no_gradient alarm after the first steps, naming its modules") {
  TempDir tmp;
  const auto rows = read_anomalies(run_fault(tmp, "detached_encoder"));
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].kind == static_cast<int>(AnomalyKind::no_gradient));
  CHECK(rows[0].step == 9);  // no_gradient_steps (10) optimizer steps
  CHECK(rows[0].value == 4);
  CHECK(rows[0].message.find("4 parameters the optimizer holds never received a gradient in its first 10 steps") == 0);
  CHECK(rows[0].message.find("encoder.0 (weight, bias); encoder.2 (weight, bias)") != std::string::npos);
  CHECK(rows[0].message.find(".detach()") != std::string::npos);
}

TEST_CASE("requires_grad turned off, and a module the forward skips: each named, with its own advice") {
  TempDir tmp;
  const auto rows = read_anomalies(run_fault(tmp, "frozen_and_skipped"));
  const auto none = of_kind(rows, AnomalyKind::no_gradient);
  REQUIRE(none.size() == 2);
  CHECK(warnings(rows) == 2);
  bool skipped = false, frozen = false;
  for (const auto& r : none) {
    if (r.message.find("never received a gradient") != std::string::npos) {
      skipped = true;
      CHECK(r.message.find("unused (weight, bias)") != std::string::npos);  // named though it never ran
    }
    if (r.message.find("requires_grad off") != std::string::npos) {
      frozen = true;
      CHECK(r.message.find("fc1 (weight, bias)") != std::string::npos);
      CHECK(r.message.find("requires_grad_(true)") != std::string::npos);
    }
  }
  CHECK(skipped);
  CHECK(frozen);
}

TEST_CASE("a gradient defined but exactly zero every step: a gate of zeros, and the layer before dead ReLUs") {
  TempDir tmp;
  const auto gate = read_anomalies(run_fault(tmp, "zero_gate"));
  REQUIRE(gate.size() == 1);
  CHECK(gate[0].kind == static_cast<int>(AnomalyKind::no_gradient));
  CHECK(gate[0].message.find("was exactly zero at every one of the first 10 steps") != std::string::npos);
  CHECK(gate[0].message.find("branch (weight, bias)") != std::string::npos);
  CHECK(gate[0].message.find("main") == std::string::npos);

  // dead ReLUs after fc1: fc1's gradient (and fc2's weight's: its input is all zeros) is zero; linked to them
  const auto dead = read_anomalies(run_fault(tmp, "dead_relu"));
  const auto zero = of_kind(dead, AnomalyKind::no_gradient);
  const auto relu = of_kind(dead, AnomalyKind::dead_relu);
  REQUIRE(zero.size() == 1);
  REQUIRE(relu.size() == 1);
  CHECK(zero[0].message.find("fc1 (weight, bias); fc2 (weight)") != std::string::npos);
  CHECK(zero[0].cause_id == relu[0].id);
  CHECK(zero[0].cause.find("comes after fc1 in the forward") != std::string::npos);
}

TEST_CASE("vanishing: one layer's share of the gradient collapses for steps in a row, and the dead ReLU explains it") {
  TempDir tmp;
  const auto rows = read_anomalies(run_fault(tmp, "lr_group"));
  const auto vanish = of_kind(rows, AnomalyKind::vanishing_norm);
  const auto relu = of_kind(rows, AnomalyKind::dead_relu);
  REQUIRE(relu.size() == 1);
  CHECK(relu[0].module == "act2");
  REQUIRE(!vanish.empty());
  const AnomalyRow* fc1 = nullptr;
  for (const auto& r : vanish)
    if (r.param == "fc1.weight" && !fc1) fc1 = &r;
  REQUIRE(fc1);
  CHECK(fc1->step > relu[0].step);
  CHECK(fc1->message.find("its share of the whole gradient was below 0.01x") != std::string::npos);
  CHECK(fc1->cause_id == relu[0].id);
  for (const auto& r : vanish) CHECK(r.cause_id == relu[0].id);  // every one of them: through or after act2
}

TEST_CASE("healthy runs long past convergence raise no warning: gradients shrink by orders of magnitude, then scatter") {
  TempDir tmp;
  const std::string db = run_fault(tmp, "healthy_long", "GLASSBOX_FAULTS_STEPS=20000");
  REQUIRE(!db.empty());
  const auto rows = read_anomalies(db);
  for (const auto& r : rows) MESSAGE(r.message);
  CHECK(warnings(rows) == 0);
  CHECK(sql_double(db, "SELECT count(*) FROM steps") == 20000);
  // it did converge: most late losses are a thousandth of the first ones, the gradients with them; and it is noisy
  // there (a hard batch now and then: the loss 100x its median, the gradients 10x theirs)
  CHECK(sql_double(db, "SELECT avg(loss < 1e-3) FROM steps WHERE step >= 19000") > 0.5);
  CHECK(sql_double(db, "SELECT avg(loss) FROM steps WHERE step < 10") > 0.5);
  CHECK(sql_double(db, "SELECT max(loss) FROM steps WHERE step >= 10000") > 0.05);
  CHECK(sql_double(db, "SELECT avg(grad_norm < 0.01) FROM steps WHERE step >= 19000") > 0.3);
  CHECK(sql_double(db, "SELECT min(grad_norm) FROM steps WHERE step < 10") > 0.1);
  for (const char* healthy : {"cnn_healthy", "deep_residual"}) {
    CAPTURE(healthy);
    const auto h = read_anomalies(run_fault(tmp, healthy));
    for (const auto& r : h) MESSAGE(r.message);
    CHECK(warnings(h) == 0);
  }
}

TEST_CASE("weights that start at zero grow under a warm-up without an update_ratio alarm; a non-zero one is judged") {
  TempDir tmp;
  std::string path = tmp.file("zero_init.db");
  {
    gb::trace::Session session(path);
    gb::manual_seed(0);
    gb::nn::Linear a(8, 16), b(16, 3);  // b: a LoRA-style B matrix, zero at first
    {
      gb::NoGradGuard no_grad;
      b->weight.zero_();
      b->bias.zero_();
    }
    std::vector<gb::Tensor> params = a->parameters();
    for (auto& p : b->parameters()) params.push_back(p);
    gb::optim::Adam opt(params, gb::optim::AdamOptions(1e-2));
    gb::optim::LinearLR warmup(opt, /*start_factor=*/0.001, /*end_factor=*/1.0, /*total_iters=*/100);
    for (int step = 0; step < 40; ++step) {
      gb::manual_seed(100 + step);
      gb::Tensor x = gb::randn({32, 8});
      gb::Tensor y = gb::randint(0, 3, {32});
      opt.zero_grad();
      gb::nn::functional::cross_entropy(b(gb::relu(a(x))), y).backward();
      opt.step();
      warmup.step();
    }
  }
  const auto rows = read_anomalies(path);
  for (const auto& r : rows) MESSAGE(r.message);
  CHECK(of_kind(rows, AnomalyKind::update_ratio).empty());
  // b's early updates were each about 10x the zero-grown weight: the rows say so, the rule knew to wait
  CHECK(sql_double(path, "SELECT max(update_norm / param_norm) FROM grad_stats g JOIN params p ON p.id = g.param_id "
                         "WHERE g.step BETWEEN 1 AND 5 AND p.numel = 48 AND g.param_norm > 0") > 3);
}
