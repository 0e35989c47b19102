// tests/engine/amp/grad_scaler_test.cpp — GradScaler: a skipped step on overflow (parameters unchanged bit for
// bit, scale halved), growth after growth_interval clean steps, unscale_ before clipping, PyTorch's errors, the
// state dict, the disabled pass-through, and the counters in a trace.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "glassbox/amp/grad_scaler.h"
#include "instrument/session.h"
#include "support/check.h"
#include "traces/temp_dir.h"

namespace {

// Plain SGD, test-local (the library's optimizers live elsewhere): p -= lr * p.grad.
struct PlainOptions : gb::optim::OptimizerCloneableOptions<PlainOptions> {
  explicit PlainOptions(double lr) : lr(lr) {}
  double lr;
  double get_lr() const override { return lr; }
  void set_lr(double v) override { lr = v; }
  std::vector<std::pair<std::string, double>> hyperparameters() const override { return {{"lr", lr}}; }
  void set_hyperparameter(const std::string&, double v) override { lr = v; }
};
struct PlainState : gb::optim::OptimizerCloneableParamState<PlainState> {
  std::vector<std::pair<std::string, gb::Tensor>> tensors() const override { return {}; }
  void set_tensor(const std::string&, const gb::Tensor&) override {}
};
struct PlainSGD : gb::optim::Optimizer {
  PlainSGD(std::vector<gb::Tensor> params, double lr)
      : Optimizer({gb::optim::OptimizerParamGroup(std::move(params))}, std::make_unique<PlainOptions>(lr)) {}
  gb::Tensor step(LossClosure) override {
    ++steps;
    gb::NoGradGuard ng;
    for (auto& g : param_groups())
      for (auto& p : g.params())
        if (p.grad().defined()) p.sub_(p.grad() * g.options().get_lr());
    return {};
  }
  const char* name() const override { return "PlainSGD"; }
  std::unique_ptr<gb::optim::OptimizerParamState> make_param_state() const override {
    return std::make_unique<PlainState>();
  }
  int steps = 0;
};

bool bitwise_equal(const gb::Tensor& a, const gb::Tensor& b) {
  gb::Tensor ca = a.contiguous(), cb = b.contiguous();
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         std::memcmp(ca.data_ptr(), cb.data_ptr(), size_t(ca.numel()) * gb::element_size(ca.scalar_type())) == 0;
}

const double inf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("a clean step unscales the gradients exactly before the optimizer sees them") {
  auto w = gb::tensor({1.0f, 2.0f, 3.0f}).requires_grad_(true);
  auto x = gb::tensor({0.5f, -0.25f, 4.0f});
  PlainSGD opt({w}, 0.1);
  gb::amp::GradScaler scaler;
  CHECK(scaler.get_scale() == 65536.0);
  gb::Tensor loss = (w * x).sum();
  gb::Tensor scaled = scaler.scale(loss);
  CHECK(scaled.item<float>() == doctest::Approx(loss.item<float>() * 65536.0));
  scaled.backward();
  gbtest::check_values(w.grad(), {0.5 * 65536, -0.25 * 65536, 4.0 * 65536}, 0);
  CHECK(scaler.step(opt));
  CHECK(opt.steps == 1);
  gbtest::check_values(w.grad(), {0.5, -0.25, 4.0}, 0);  // a power-of-two scale unscales exactly
  gbtest::check_values(w, {1.0f - 0.1f * 0.5f, 2.0f + 0.1f * 0.25f, 3.0f - 0.1f * 4.0f}, 1e-7);
  scaler.update();
  CHECK(scaler.get_scale() == 65536.0);
  CHECK(scaler.get_growth_tracker() == 1);
}

TEST_CASE("an inf planted in one gradient skips the step (parameters unchanged bit for bit) and halves the scale") {
  auto a = gb::tensor({1.0f, 2.0f}).requires_grad_(true);
  auto b = gb::tensor({3.0f, 4.0f}).requires_grad_(true);
  PlainSGD opt({a, b}, 0.1);
  gb::amp::GradScaler scaler;
  for (double bad : {inf, std::nan("")}) {
    CAPTURE(bad);
    opt.zero_grad();
    scaler.scale((a * b).sum()).backward();
    b.mutable_grad() = gb::tensor({1.0f, float(bad)});
    gb::Tensor a0 = a.detach().clone(), b0 = b.detach().clone();
    double before = scaler.get_scale();
    CHECK(!scaler.step(opt));
    CHECK(opt.steps == 0);
    CHECK(bitwise_equal(a, a0));
    CHECK(bitwise_equal(b, b0));
    scaler.update();
    CHECK(scaler.get_scale() == before / 2);
    CHECK(scaler.get_growth_tracker() == 0);
  }
  CHECK(scaler.get_scale() == 16384.0);
}

TEST_CASE("growth_interval clean steps in a row double the scale, one fewer does not") {
  auto w = gb::tensor({1.0f}).requires_grad_(true);
  PlainSGD opt({w}, 0.0);
  gb::amp::GradScaler scaler;
  auto clean_step = [&] {
    w.mutable_grad() = gb::tensor({1.0f});
    CHECK(scaler.step(opt));
    scaler.update();
  };
  for (int i = 0; i < 1999; ++i) clean_step();
  CHECK(scaler.get_scale() == 65536.0);
  CHECK(scaler.get_growth_tracker() == 1999);
  clean_step();
  CHECK(scaler.get_scale() == 131072.0);
  CHECK(scaler.get_growth_tracker() == 0);
  // an overflow in between resets the tracker
  for (int i = 0; i < 10; ++i) clean_step();
  w.mutable_grad() = gb::tensor({float(inf)});
  CHECK(!scaler.step(opt));
  scaler.update();
  CHECK(scaler.get_scale() == 65536.0);
  CHECK(scaler.get_growth_tracker() == 0);
  // custom options, and update(new_scale)
  gb::amp::GradScaler fast(gb::amp::GradScalerOptions().init_scale(8).growth_factor(4).growth_interval(2));
  for (int i = 0; i < 2; ++i) {
    w.mutable_grad() = gb::tensor({1.0f});
    fast.step(opt);
    fast.update();
  }
  CHECK(fast.get_scale() == 32.0);
  fast.update(3.0);
  CHECK(fast.get_scale() == 3.0);
}

TEST_CASE("unscale_ then clip sees the true gradients; step does not unscale again") {
  auto w = gb::tensor({0.0f, 0.0f}).requires_grad_(true);
  PlainSGD opt({w}, 1.0);
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().init_scale(1024));
  scaler.scale((w * gb::tensor({3.0f, 4.0f})).sum()).backward();
  scaler.unscale_(opt);
  gbtest::check_values(w.grad(), {3.0, 4.0}, 0);
  // clip to norm 1 (what clip_grad_norm_ does)
  {
    gb::NoGradGuard ng;
    double norm = w.grad().norm().item<float>();
    CHECK(norm == doctest::Approx(5.0));
    w.mutable_grad().mul_(1.0 / norm);
  }
  CHECK(scaler.step(opt));
  gbtest::check_values(w, {-0.6, -0.8}, 1e-7);
  scaler.update();
}

TEST_CASE("PyTorch's errors: unscale_ twice, unscale_ after step, step twice, update without step, fp16 grads") {
  auto w = gb::tensor({1.0f}).requires_grad_(true);
  PlainSGD opt({w}, 0.1);
  gb::amp::GradScaler scaler;
  CHECK_THROWS_WITH_AS(scaler.update(), doctest::Contains("No inf checks were recorded prior to update()"), gb::Error);
  w.mutable_grad() = gb::tensor({1.0f});
  scaler.unscale_(opt);
  CHECK_THROWS_WITH_AS(
      scaler.unscale_(opt),
      doctest::Contains("unscale_() has already been called on this optimizer since the last update()."), gb::Error);
  scaler.step(opt);
  CHECK_THROWS_WITH_AS(scaler.unscale_(opt), doctest::Contains("unscale_() is being called after step()"), gb::Error);
  CHECK_THROWS_WITH_AS(scaler.step(opt), doctest::Contains("step() has already been called since the last update()"),
                       gb::Error);
  scaler.update();
  scaler.unscale_(opt);  // a new iteration: allowed again
  scaler.update();

  auto h = gb::tensor({1.0f}, gb::TensorOptions().dtype(gb::kHalf)).requires_grad_(true);
  PlainSGD half_opt({h}, 0.1);
  h.mutable_grad() = gb::tensor({1.0f}, gb::TensorOptions().dtype(gb::kHalf));
  CHECK_THROWS_WITH_AS(scaler.unscale_(half_opt), doctest::Contains("Attempting to unscale FP16 gradients."),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::amp::GradScaler(gb::amp::GradScalerOptions().growth_factor(1.0)),
                       doctest::Contains("The growth factor must be > 1.0."), gb::Error);
  CHECK_THROWS_WITH_AS(gb::amp::GradScaler(gb::amp::GradScalerOptions().backoff_factor(1.0)),
                       doctest::Contains("The backoff factor must be < 1.0."), gb::Error);
}

TEST_CASE("state_dict round trip: PyTorch's keys as 0-dim float64 tensors") {
  auto w = gb::tensor({1.0f}).requires_grad_(true);
  PlainSGD opt({w}, 0.1);
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().growth_interval(100).backoff_factor(0.25));
  w.mutable_grad() = gb::tensor({float(inf)});
  scaler.step(opt);
  scaler.update();  // 16384
  for (int i = 0; i < 3; ++i) {
    w.mutable_grad() = gb::tensor({1.0f});
    scaler.step(opt);
    scaler.update();
  }
  gb::StateDict sd = scaler.state_dict();
  CHECK(sd.keys() ==
        std::vector<std::string>{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"});
  for (const auto& item : sd) {
    CHECK(item.value().dim() == 0);
    CHECK(item.value().scalar_type() == gb::kDouble);
  }
  CHECK(sd.find("scale")->item<double>() == 16384.0);
  CHECK(sd.find("backoff_factor")->item<double>() == 0.25);
  CHECK(sd.find("growth_interval")->item<double>() == 100.0);
  CHECK(sd.find("_growth_tracker")->item<double>() == 3.0);

  gb::amp::GradScaler fresh;
  fresh.load_state_dict(sd);
  CHECK(fresh.get_scale() == 16384.0);
  CHECK(fresh.get_growth_tracker() == 3);
  CHECK(fresh.get_backoff_factor() == 0.25);
  CHECK(fresh.get_growth_interval() == 100);
  CHECK(fresh.state_dict().find("scale")->item<double>() == 16384.0);
  CHECK_THROWS_WITH_AS(fresh.load_state_dict(gb::StateDict()), doctest::Contains("The source state dict is empty"),
                       gb::Error);
}

TEST_CASE("enabled=false is a pass-through") {
  auto w = gb::tensor({1.0f, 2.0f}).requires_grad_(true);
  PlainSGD opt({w}, 0.5);
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().enabled(false));
  CHECK(!scaler.is_enabled());
  gb::Tensor loss = (w * w).sum();
  gb::Tensor scaled = scaler.scale(loss);
  CHECK(scaled.unsafe_impl() == loss.unsafe_impl());
  scaled.backward();
  scaler.unscale_(opt);
  gbtest::check_values(w.grad(), {2.0, 4.0}, 0);  // untouched
  scaler.unscale_(opt);                           // no once-per-step bookkeeping either
  CHECK(scaler.step(opt));
  gbtest::check_values(w, {0.0, 0.0}, 0);
  scaler.update();
  CHECK(scaler.get_scale() == 1.0);
  CHECK(scaler.state_dict().is_empty());
}

TEST_CASE("traced: update() writes amp.grad_scale and amp.found_inf counters") {
  TempDir tmp;
  std::string path = tmp.file("amp.db");
  {
    gb::trace::Session session(path, {.on_full = gb::trace::OnFull::block});
    auto w = gb::tensor({1.0f}).requires_grad_(true);
    PlainSGD opt({w}, 0.1);
    gb::amp::GradScaler scaler;
    for (float g : {1.0f, float(inf), 1.0f}) {
      w.mutable_grad() = gb::tensor({g});
      scaler.step(opt);
      scaler.update();
    }
  }
  auto counter = [&](const std::string& name, const std::string& agg) {
    return sql_int(
        path, "SELECT " + agg + " FROM counters WHERE name_id = (SELECT id FROM strings WHERE text = '" + name + "')");
  };
  CHECK(counter("amp.grad_scale", "COUNT(*)") == 3);
  CHECK(counter("amp.grad_scale", "CAST(MIN(value) AS INTEGER)") == 32768);
  CHECK(counter("amp.grad_scale", "CAST(MAX(value) AS INTEGER)") == 65536);
  CHECK(counter("amp.found_inf", "CAST(SUM(value) AS INTEGER)") == 1);
}
