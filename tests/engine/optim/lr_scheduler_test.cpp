// tests/engine/optim/lr_scheduler_test.cpp — the LRScheduler base: PyTorch's initial step, initial_lr kept in the
// group, step(epoch) without a closed form falls back to get_lr, _step_count, and the state dict keys.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

using namespace gb::optim;

namespace {
// lr = base * (epoch + 1), with no closed form.
struct Ramp : LRScheduler {
  explicit Ramp(Optimizer& o, int64_t last_epoch = -1) : LRScheduler(o, last_epoch) { initial_step(); }
  std::vector<double> get_lr() override {
    std::vector<double> out;
    for (double b : base_lrs_) out.push_back(b * double(last_epoch_ + 1));
    return out;
  }
  int64_t steps() const { return step_count_; }
};
}  // namespace

TEST_CASE("construction takes the initial step; step advances; step(epoch) jumps") {
  auto p = gb::zeros({1}).requires_grad_();
  SGD opt({p}, SGDOptions(0.5));
  Ramp r(opt);
  CHECK(r.last_epoch() == 0);
  CHECK(r.steps() == 1);
  CHECK(opt.param_groups()[0].options().get_lr() == 0.5);
  CHECK(*opt.param_groups()[0].initial_lr() == 0.5);
  r.step();
  CHECK(opt.param_groups()[0].options().get_lr() == 1.0);
  r.step(int64_t{5});
  CHECK(r.last_epoch() == 5);
  CHECK(r.get_last_lr() == std::vector<double>{3.0});
  CHECK(r.steps() == 3);

  auto sd = r.state_dict();
  CHECK(sd["last_epoch"].item<double>() == 5);
  CHECK(sd["_step_count"].item<double>() == 3);
  CHECK(sd["base_lrs.0"].item<double>() == 0.5);
  CHECK(sd["last_lr.0"].item<double>() == 3.0);
  Ramp resumed(opt, /*last_epoch=*/0);  // resuming needs initial_lr in the group: it is there
  resumed.load_state_dict(sd);
  CHECK(resumed.last_epoch() == 5);
  CHECK(resumed.steps() == 3);
  resumed.step();
  CHECK(resumed.get_last_lr() == std::vector<double>{3.5});
}
