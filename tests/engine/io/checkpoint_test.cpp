// tests/engine/io/checkpoint_test.cpp — training checkpoints: the struct round trip (prefixes, step, epoch, extra,
// scaler), the convenience save/load of a model + optimizer + scheduler + RNG (the random numbers after loading
// equal those after saving; training resumes identically), the same with AdamW + OneCycleLR + a GradScaler under
// autocast, and the format marker's errors.
#include <doctest/doctest.h>

#include "engine/io/io_test_util.h"

using iotest::TempDir;
using gbtest::values;

namespace {

struct TinyImpl : gb::nn::Module {
  TinyImpl() {
    w = register_parameter("w", gb::randn({3, 2}));
    b = register_parameter("b", gb::randn({2}));
    count = register_buffer("count", gb::zeros({1}, gb::kLong));
  }
  gb::Tensor forward(const gb::Tensor& x) { return gb::matmul(x, w) + b; }
  gb::Tensor w, b, count;
};
GB_MODULE(Tiny);

// SGD with momentum, written here (gb::optim's optimizers live elsewhere): buf = m * buf + g; p -= lr * buf.
struct MomentumOptions : gb::optim::OptimizerCloneableOptions<MomentumOptions> {
  double lr = 0.1, momentum = 0.9;
  double get_lr() const override { return lr; }
  void set_lr(double v) override { lr = v; }
  std::vector<std::pair<std::string, double>> hyperparameters() const override {
    return {{"lr", lr}, {"momentum", momentum}};
  }
  void set_hyperparameter(const std::string& name, double v) override { (name == "lr" ? lr : momentum) = v; }
};
struct MomentumState : gb::optim::OptimizerCloneableParamState<MomentumState> {
  gb::Tensor buf;
  std::vector<std::pair<std::string, gb::Tensor>> tensors() const override { return {{"momentum_buffer", buf}}; }
  void set_tensor(const std::string&, const gb::Tensor& v) override { buf = v; }
};
struct Momentum : gb::optim::Optimizer {
  explicit Momentum(std::vector<gb::Tensor> params)
      : Optimizer({gb::optim::OptimizerParamGroup(std::move(params))}, std::make_unique<MomentumOptions>()) {}
  const char* name() const override { return "Momentum"; }
  gb::Tensor step(LossClosure = nullptr) override {
    gb::NoGradGuard no_grad;
    for (auto& g : param_groups_) {
      auto& o = static_cast<MomentumOptions&>(g.options());
      for (auto& p : g.params()) {
        if (!p.grad().defined()) continue;
        auto& st = state_[p.unsafe_impl()];
        if (!st) {
          auto s = std::make_unique<MomentumState>();
          s->buf = gb::zeros_like(p);
          st = std::move(s);
        }
        auto& buf = static_cast<MomentumState&>(*st).buf;
        buf.mul_(o.momentum).add_(p.grad());
        p.sub_(buf * o.lr);
      }
    }
    return {};
  }

 protected:
  std::unique_ptr<gb::optim::OptimizerParamState> make_param_state() const override {
    return std::make_unique<MomentumState>();
  }
};
// lr = base * 0.5^epoch.
struct Halving : gb::optim::LRScheduler {
  explicit Halving(gb::optim::Optimizer& o) : LRScheduler(o) { initial_step(); }
  std::vector<double> get_lr() override {
    std::vector<double> out;
    for (double b : base_lrs_) out.push_back(b * std::pow(0.5, double(last_epoch_)));
    return out;
  }
};

void train_step(Tiny& net, Momentum& opt, Halving& sched) {
  gb::Tensor x = gb::randn({4, 3});  // draws from the default generator, like dropout or shuffling would
  gb::Tensor loss = net(x).square().sum();
  opt.zero_grad();
  loss.backward();
  opt.step();
  sched.step();
}

}  // namespace

TEST_CASE("a TrainingCheckpoint round-trips through one file with prefixed keys") {
  TempDir dir;
  gb::TrainingCheckpoint c;
  c.model.insert("fc.weight", gb::tensor({1.0f, 2.0f}));
  c.optimizer.insert("state.0.exp_avg", gb::tensor({0.5, 0.25}, gb::kDouble));
  c.scheduler.insert("last_epoch", gb::scalar_tensor(4.0, gb::kDouble));
  c.scaler.insert("scale", gb::scalar_tensor(65536.0));
  c.step = 1234567890123;
  c.epoch = -1;
  c.rng_state = "1 0 0 5489 ...";
  c.extra = {{"git", "abc123"}, {"note", "lr warmup done"}};
  gb::save_checkpoint(dir / "c.safetensors", c);

  gb::StateDict raw = gb::load(dir / "c.safetensors");
  CHECK(raw.keys() == std::vector<std::string>{"model.fc.weight", "optimizer.state.0.exp_avg", "scheduler.last_epoch",
                                               "scaler.scale"});
  gb::Metadata md = gb::load_metadata(dir / "c.safetensors");
  CHECK(md["format"] == "glassbox.checkpoint/1");
  CHECK(md["step"] == "1234567890123");
  CHECK(md["extra.git"] == "abc123");

  gb::TrainingCheckpoint back = gb::load_checkpoint(dir / "c.safetensors");
  CHECK(back.model.keys() == std::vector<std::string>{"fc.weight"});
  CHECK(values(back.model["fc.weight"]) == std::vector<double>{1, 2});
  CHECK(values(back.optimizer["state.0.exp_avg"]) == std::vector<double>{0.5, 0.25});
  CHECK(values(back.scheduler["last_epoch"]) == std::vector<double>{4});
  CHECK(values(back.scaler["scale"]) == std::vector<double>{65536});
  CHECK(back.step == 1234567890123);
  CHECK(back.epoch == -1);
  CHECK(back.rng_state == c.rng_state);
  CHECK(back.extra == c.extra);
}

TEST_CASE("model, optimizer, scheduler and RNG resume exactly") {
  TempDir dir;
  gb::manual_seed(42);
  Tiny net;
  Momentum opt(net->parameters());
  Halving sched(opt);
  for (int i = 0; i < 3; ++i) train_step(net, opt, sched);
  net->count.fill_(3);
  gb::save_checkpoint(dir / "ck.safetensors", net, opt, &sched, /*step=*/3, /*epoch=*/1);

  // The run continues: these are the numbers a resumed run must reproduce.
  gb::Tensor r_after_save = gb::randn({5});
  train_step(net, opt, sched);
  std::vector<double> w_next = values(net->w), b_next = values(net->b);

  gb::manual_seed(999);  // a different process state: other weights, other RNG position
  Tiny net2;
  Momentum opt2(net2->parameters());
  Halving sched2(opt2);
  REQUIRE(values(net2->w) != values(net->w));
  gb::TrainingCheckpoint ck = gb::load_checkpoint(dir / "ck.safetensors", net2, opt2, &sched2);
  CHECK(ck.step == 3);
  CHECK(ck.epoch == 1);
  CHECK(values(net2->count) == std::vector<double>{3});
  CHECK(sched2.last_epoch() == 3);
  CHECK(opt2.param_groups()[0].options().get_lr() == doctest::Approx(0.1 * 0.125));
  CHECK(opt2.state().size() == 2);  // momentum buffers restored

  gb::Tensor r_after_load = gb::randn({5});
  CHECK(values(r_after_load) == values(r_after_save));
  // Resume one step from the same point (the RNG restored to after-save) and land on the same weights.
  gb::TrainingCheckpoint again = gb::load_checkpoint(dir / "ck.safetensors", net2, opt2, &sched2);
  (void)gb::randn({5});
  train_step(net2, opt2, sched2);
  CHECK(values(net2->w) == w_next);
  CHECK(values(net2->b) == b_next);
}

TEST_CASE("checkpoint errors say what the file is") {
  TempDir dir;
  gb::StateDict sd;
  sd.insert("w", gb::ones({2}));
  gb::save(sd, dir / "plain.safetensors");
  CHECK_THROWS_WITH_AS(gb::load_checkpoint(dir / "plain.safetensors"),
                       doctest::Contains("is not a glassbox training checkpoint (its metadata has no \"format\""),
                       gb::Error);
  gb::save(sd, dir / "newer.safetensors", {{"format", "glassbox.checkpoint/2"}, {"step", "1"}, {"epoch", "0"}});
  CHECK_THROWS_WITH_AS(gb::load_checkpoint(dir / "newer.safetensors"),
                       doctest::Contains("written by a newer glassbox"), gb::Error);
  gb::save(sd, dir / "badstep.safetensors", {{"format", "glassbox.checkpoint/1"}, {"step", "12x"}, {"epoch", "0"}});
  CHECK_THROWS_WITH_AS(gb::load_checkpoint(dir / "badstep.safetensors"),
                       doctest::Contains("\"step\" is '12x', not an integer"), gb::Error);
  gb::save(sd, dir / "stray.safetensors", {{"format", "glassbox.checkpoint/1"}, {"step", "1"}, {"epoch", "0"}});
  CHECK_THROWS_WITH_AS(gb::load_checkpoint(dir / "stray.safetensors"),
                       doctest::Contains("holds the tensor 'w', outside model."), gb::Error);

  // A checkpoint without a scheduler loaded with one: refused before anything changes.
  gb::manual_seed(1);
  Tiny net;
  Momentum opt(net->parameters());
  gb::save_checkpoint(dir / "nosched.safetensors", net, opt);
  Tiny other;
  Momentum opt2(other->parameters());
  Halving sched(opt2);
  std::vector<double> before = values(other->w);
  CHECK_THROWS_WITH_AS(gb::load_checkpoint(dir / "nosched.safetensors", other, opt2, &sched),
                       doctest::Contains("has no scheduler state"), gb::Error);
  CHECK(values(other->w) == before);
}

TEST_CASE("a mixed-precision run (AdamW, OneCycleLR, GradScaler) resumes exactly, scaler state included") {
  TempDir dir;
  auto step = [](Tiny& net, gb::optim::AdamW& opt, gb::optim::OneCycleLR& sched, gb::amp::GradScaler& scaler) {
    gb::Tensor loss;
    {
      gb::autocast ac(gb::kCPU, gb::kBFloat16);
      loss = net(gb::randn({4, 3})).square().mean();
    }
    opt.zero_grad();
    scaler.scale(loss).backward();
    scaler.step(opt);
    scaler.update();
    sched.step();
  };
  auto options = gb::optim::OneCycleLROptions(0.01).total_steps(20);
  gb::manual_seed(7);
  Tiny net;
  gb::optim::AdamW opt(net->parameters(), gb::optim::AdamWOptions(1e-3));
  gb::optim::OneCycleLR sched(opt, options);
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().init_scale(1024).growth_interval(2));
  for (int i = 0; i < 3; ++i) step(net, opt, sched, scaler);
  REQUIRE(scaler.get_scale() == 2048);  // grew once after two clean steps; the tracker is at 1
  gb::save_checkpoint(dir / "amp.safetensors", net, opt, &sched, 3, 0, &scaler);
  step(net, opt, sched, scaler);
  std::vector<double> w_next = values(net->w);
  double scale_next = scaler.get_scale();

  gb::manual_seed(8);
  Tiny net2;
  gb::optim::AdamW opt2(net2->parameters(), gb::optim::AdamWOptions(1e-3));
  gb::optim::OneCycleLR sched2(opt2, options);
  gb::amp::GradScaler scaler2(gb::amp::GradScalerOptions().init_scale(1024).growth_interval(2));
  gb::load_checkpoint(dir / "amp.safetensors", net2, opt2, &sched2, &scaler2);
  CHECK(scaler2.get_scale() == 2048);
  CHECK(scaler2.get_growth_tracker() == 1);
  step(net2, opt2, sched2, scaler2);
  CHECK(values(net2->w) == w_next);
  CHECK(scaler2.get_scale() == scale_next);

  // an enabled scaler and a checkpoint saved without one: refused, nothing changed
  gb::save_checkpoint(dir / "noscaler.safetensors", net, opt, &sched, 4, 0);
  std::vector<double> before = values(net2->w);
  CHECK_THROWS_WITH_AS(gb::load_checkpoint(dir / "noscaler.safetensors", net2, opt2, &sched2, &scaler2),
                       doctest::Contains("has no GradScaler state"), gb::Error);
  CHECK(values(net2->w) == before);
}
