// tests/engine/optim/sequential_lr_test.cpp — SequentialLR: warmup then decay by hand (the step(0) at the
// milestone), checks, and resuming from state dicts.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>
#include "engine/optim/optim_test_util.h"

using optim_test::lr_of;

using namespace gb::optim;

namespace {
std::unique_ptr<SGD> sgd(double lr) {
  return std::make_unique<SGD>(std::vector<gb::Tensor>{gb::zeros({1}).requires_grad_()}, SGDOptions(lr));
}
std::shared_ptr<SequentialLR> warmup_then_step(Optimizer& o) {
  auto warm = std::make_shared<LinearLR>(o, 0.5, 1.0, 2);
  auto decay = std::make_shared<StepLR>(o, 2, 0.1);
  return std::make_shared<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{warm, decay},
                                        std::vector<int64_t>{2});
}
}  // namespace

TEST_CASE("a linear warmup, then StepLR restarted from epoch 0 at the milestone") {
  auto opt = sgd(1.0);
  auto s = warmup_then_step(*opt);
  std::vector<double> got{lr_of(*opt)};
  for (int i = 0; i < 6; ++i) {
    s->step();
    got.push_back(lr_of(*opt));
  }
  // 0.5 -> 0.75 (warmup), 1 at the milestone (StepLR's closed form at 0), then StepLR: 1, 0.1, 0.1, 0.01
  std::vector<double> want = {0.5, 0.75, 1.0, 1.0, 0.1, 0.1, 0.01};
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-15));
  CHECK(s->last_epoch() == 6);
  CHECK(s->get_last_lr() == std::vector<double>{lr_of(*opt)});
}

TEST_CASE("checks: milestone count and a shared optimizer") {
  auto opt = sgd(1.0), other = sgd(1.0);
  auto a = std::make_shared<LinearLR>(*opt);
  auto b = std::make_shared<StepLR>(*opt, 2);
  auto foreign = std::make_shared<StepLR>(*other, 2);
  try {
    SequentialLR s(*opt, {a, b}, {});
    FAIL("no error");
  } catch (const gb::Error& e) {
    CHECK(std::string(e.what()).find("Sequential Schedulers expects number of schedulers provided to be one more than "
                                     "the number of milestone points, but got number of schedulers 2 and the number "
                                     "of milestones to be equal to 0") == 0);
  }
  try {
    SequentialLR s(*opt, {a, foreign}, {3});
    FAIL("no error");
  } catch (const gb::Error& e) {
    CHECK(std::string(e.what()).find("Sequential Schedulers expects all schedulers to belong to the same optimizer, "
                                     "but got schedulers at index 1 to be different than the optimizer passed in.") ==
          0);
  }
}

TEST_CASE("state dicts (the children's included) resume the sequence exactly") {
  auto opt = sgd(0.3);
  auto s = warmup_then_step(*opt);
  std::vector<double> straight;
  for (int i = 0; i < 8; ++i) {
    s->step();
    straight.push_back(lr_of(*opt));
  }
  auto opt_a = sgd(0.3);
  auto a = warmup_then_step(*opt_a);
  std::vector<double> got;
  for (int i = 0; i < 3; ++i) {
    a->step();
    got.push_back(lr_of(*opt_a));
  }
  auto osd = opt_a->state_dict();
  auto ssd = a->state_dict();
  CHECK(ssd.contains("_schedulers.1.last_epoch"));
  auto opt_b = sgd(0.3);
  auto b = warmup_then_step(*opt_b);
  opt_b->load_state_dict(osd);
  b->load_state_dict(ssd);
  for (int i = 0; i < 5; ++i) {
    b->step();
    got.push_back(lr_of(*opt_b));
  }
  CHECK(got == straight);
}
