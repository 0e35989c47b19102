// tests/engine/optim/adagrad_test.cpp — Adagrad: one step by hand, the state dict round trip, option checks.
// (Twenty steps against libtorch's Adagrad: tests/oracle/optim_oracle_test.cpp.)
#include "support/check.h"

TEST_CASE("one Adagrad step by hand; lr_decay, weight decay and the initial accumulator") {
  auto p = gb::tensor({1.0, -2.0}, gbtest::f64_grad());
  gb::optim::Adagrad opt({p}, gb::optim::AdagradOptions(0.5).lr_decay(0.1).weight_decay(0.1).initial_accumulator_value(1));
  for (int step = 1; step <= 2; ++step) {
    opt.zero_grad();
    (p * gb::tensor({3.0, 4.0}, gb::kDouble)).sum().backward();
    opt.step();
  }
  // by hand: g = c + 0.1 p; sum = 1 + g1^2 (+ g2^2); p -= lr / (1 + (t - 1) 0.1) * g / (sqrt(sum) + 1e-10)
  double want[2];
  const double c[2] = {3.0, 4.0};
  double q[2] = {1.0, -2.0}, sum[2] = {1.0, 1.0};
  for (int t = 1; t <= 2; ++t)
    for (int i = 0; i < 2; ++i) {
      const double g = c[i] + 0.1 * q[i];
      sum[i] += g * g;
      q[i] -= 0.5 / (1 + (t - 1) * 0.1) * g / (std::sqrt(sum[i]) + 1e-10);
      want[i] = q[i];
    }
  gbtest::check_values(p, {want[0], want[1]}, 1e-12);
  auto sd = opt.state_dict();
  gb::optim::Adagrad fresh({p}, gb::optim::AdagradOptions(0.5));
  fresh.load_state_dict(sd);
  CHECK(gbtest::values(fresh.state_dict()["state.0.sum"]) == gbtest::values(sd["state.0.sum"]));
  CHECK_THROWS_WITH_AS(gb::optim::Adagrad({p}, gb::optim::AdagradOptions(-1)), doctest::Contains("Invalid learning rate"),
                       gb::Error);
}
