// tests/oracle/optim_oracle_test.cpp — gb::optim against PyTorch 1.13.
//
// Optimizers: each configuration runs 20 steps in glassbox and in libtorch's C++ optimizers from the same initial
// parameters, feeding both the same gradients each step (from a fixed quadratic with a drifting linear term,
// computed once in glassbox and copied into libtorch); every parameter is compared after every step, in float32
// and float64. libtorch 1.13's C++ optimizers have no `maximize`: those cases give libtorch the negated gradient,
// which is exactly what maximize does first. Schedulers: StepLR against libtorch's C++ StepLR, and every scheduler
// configuration against Python PyTorch (tests/oracle/lr_reference.py, run through popen). clip_grad_norm_ against
// libtorch's. Each check prints its max abs difference.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <sys/wait.h>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "support/check.h"

// This file's names, apart from the other oracle files' (the folder builds as one translation unit).
namespace optim_oracle {

namespace {

torch::Tensor to_torch(const gb::Tensor& t) {
  gb::Tensor c = t.detach().contiguous();
  auto dt = c.scalar_type() == gb::kFloat64 ? torch::kDouble : torch::kFloat;
  return torch::from_blob(c.data_ptr(), c.sizes().vec(), dt).clone();
}

double max_abs_diff(const gb::Tensor& a, const torch::Tensor& b) {
  gb::Tensor ad = a.detach().to(gb::kFloat64).contiguous();
  torch::Tensor bd = b.detach().to(torch::kDouble).contiguous();
  REQUIRE(ad.numel() == bd.numel());
  double m = 0;
  const double* pa = ad.data_ptr<double>();
  const double* pb = bd.data_ptr<double>();
  for (int64_t i = 0; i < ad.numel(); ++i) m = std::max(m, std::fabs(pa[i] - pb[i]));
  return m;
}

// ---- optimizers ----

struct OptCase {
  std::string name;
  std::function<std::unique_ptr<gb::optim::Optimizer>(std::vector<gb::Tensor>)> ours;
  std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)> theirs;
  bool maximize = false;  // libtorch gets -grad
};

std::vector<OptCase> optimizer_cases() {
  namespace go = gb::optim;
  namespace to = torch::optim;
  auto ours = [](auto make) { return std::function<std::unique_ptr<go::Optimizer>(std::vector<gb::Tensor>)>(make); };
  auto theirs = [](auto make) {
    return std::function<std::unique_ptr<to::Optimizer>(std::vector<torch::Tensor>)>(make);
  };
  std::vector<OptCase> c;
  auto sgd = [&](std::string name, go::SGDOptions o, to::SGDOptions t, bool maximize = false) {
    c.push_back({"SGD " + name, ours([o](auto p) { return std::make_unique<go::SGD>(p, o); }),
                 theirs([t](auto p) { return std::make_unique<to::SGD>(p, t); }), maximize});
  };
  sgd("plain lr=0.1", go::SGDOptions(0.1), to::SGDOptions(0.1));
  sgd("momentum=0.9", go::SGDOptions(0.1).momentum(0.9), to::SGDOptions(0.1).momentum(0.9));
  sgd("nesterov momentum=0.9", go::SGDOptions(0.1).momentum(0.9).nesterov(true),
      to::SGDOptions(0.1).momentum(0.9).nesterov(true));
  sgd("momentum=0.9 dampening=0.3", go::SGDOptions(0.1).momentum(0.9).dampening(0.3),
      to::SGDOptions(0.1).momentum(0.9).dampening(0.3));
  sgd("weight_decay=0.05", go::SGDOptions(0.1).weight_decay(0.05), to::SGDOptions(0.1).weight_decay(0.05));
  sgd("maximize momentum=0.5 weight_decay=0.01", go::SGDOptions(0.05).maximize(true).momentum(0.5).weight_decay(0.01),
      to::SGDOptions(0.05).momentum(0.5).weight_decay(0.01), true);

  auto adam = [&](std::string name, go::AdamOptions o, to::AdamOptions t, bool maximize = false) {
    c.push_back({"Adam " + name, ours([o](auto p) { return std::make_unique<go::Adam>(p, o); }),
                 theirs([t](auto p) { return std::make_unique<to::Adam>(p, t); }), maximize});
  };
  adam("lr=0.01", go::AdamOptions(0.01), to::AdamOptions(0.01));
  adam("amsgrad", go::AdamOptions(0.01).amsgrad(true), to::AdamOptions(0.01).amsgrad(true));
  adam("weight_decay=0.1", go::AdamOptions(0.01).weight_decay(0.1), to::AdamOptions(0.01).weight_decay(0.1));
  adam("amsgrad weight_decay=0.1 betas=(0.8,0.95) eps=1e-6",
       go::AdamOptions(0.02).amsgrad(true).weight_decay(0.1).betas(std::make_tuple(0.8, 0.95)).eps(1e-6),
       to::AdamOptions(0.02).amsgrad(true).weight_decay(0.1).betas(std::make_tuple(0.8, 0.95)).eps(1e-6));
  adam("maximize", go::AdamOptions(0.01).maximize(true), to::AdamOptions(0.01), true);

  auto adamw = [&](std::string name, go::AdamWOptions o, to::AdamWOptions t) {
    c.push_back({"AdamW " + name, ours([o](auto p) { return std::make_unique<go::AdamW>(p, o); }),
                 theirs([t](auto p) { return std::make_unique<to::AdamW>(p, t); }), false});
  };
  adamw("lr=0.01 (weight_decay=0.01)", go::AdamWOptions(0.01), to::AdamWOptions(0.01));
  adamw("amsgrad weight_decay=0.1", go::AdamWOptions(0.01).amsgrad(true).weight_decay(0.1),
        to::AdamWOptions(0.01).amsgrad(true).weight_decay(0.1));

  auto rms = [&](std::string name, go::RMSpropOptions o, to::RMSpropOptions t) {
    c.push_back({"RMSprop " + name, ours([o](auto p) { return std::make_unique<go::RMSprop>(p, o); }),
                 theirs([t](auto p) { return std::make_unique<to::RMSprop>(p, t); }), false});
  };
  rms("lr=0.01", go::RMSpropOptions(0.01), to::RMSpropOptions(0.01));
  rms("centered", go::RMSpropOptions(0.01).centered(true), to::RMSpropOptions(0.01).centered(true));
  rms("momentum=0.9", go::RMSpropOptions(0.01).momentum(0.9), to::RMSpropOptions(0.01).momentum(0.9));
  rms("centered momentum=0.9 weight_decay=0.05 alpha=0.9",
      go::RMSpropOptions(0.01).centered(true).momentum(0.9).weight_decay(0.05).alpha(0.9),
      to::RMSpropOptions(0.01).centered(true).momentum(0.9).weight_decay(0.05).alpha(0.9));

  auto adagrad = [&](std::string name, go::AdagradOptions o, to::AdagradOptions t) {
    c.push_back({"Adagrad " + name, ours([o](auto p) { return std::make_unique<go::Adagrad>(p, o); }),
                 theirs([t](auto p) { return std::make_unique<to::Adagrad>(p, t); }), false});
  };
  adagrad("lr=0.1", go::AdagradOptions(0.1), to::AdagradOptions(0.1));
  adagrad("lr_decay weight_decay initial_accumulator_value",
          go::AdagradOptions(0.1).lr_decay(0.05).weight_decay(0.02).initial_accumulator_value(0.3).eps(1e-6),
          to::AdagradOptions(0.1).lr_decay(0.05).weight_decay(0.02).initial_accumulator_value(0.3).eps(1e-6));
  return c;
}

// Max abs difference over 20 steps and every parameter.
double run_optimizer_case(const OptCase& c, gb::ScalarType dtype) {
  auto opts = gb::TensorOptions().dtype(dtype);
  std::vector<gb::Tensor> ours = {(gb::arange(12, opts).sin() * 0.5).reshape({3, 4}).requires_grad_(),
                                  (gb::arange(5, opts).cos() * 0.7 + 0.1).requires_grad_()};
  std::vector<gb::Tensor> coef = {gb::arange(12, opts).reshape({3, 4}) * 0.1 + 0.5, gb::arange(5, opts) * 0.3 + 0.2};
  std::vector<torch::Tensor> theirs;
  for (const auto& p : ours) theirs.push_back(to_torch(p).requires_grad_());
  auto gb_opt = c.ours(ours);
  auto torch_opt = c.theirs(theirs);
  double worst = 0;
  for (int k = 0; k < 20; ++k) {
    for (size_t j = 0; j < ours.size(); ++j) {
      gb::Tensor g;
      {
        gb::NoGradGuard no_grad;
        // the gradient of sum(coef * p^2 / 2) + shift * sum(p), with a shift that changes sign over the steps
        g = ours[j].detach() * coef[j] + 0.3 * std::sin(0.7 * k + double(j));
      }
      ours[j].set_grad(g.clone());
      theirs[j].mutable_grad() = to_torch(c.maximize ? g.neg() : g);
    }
    gb_opt->step();
    torch_opt->step();
    for (size_t j = 0; j < ours.size(); ++j) worst = std::max(worst, max_abs_diff(ours[j], theirs[j]));
  }
  return worst;
}

// ---- schedulers ----

struct Trace {
  std::vector<std::vector<double>> lr, momentum;
};

std::vector<double> group_lrs(gb::optim::Optimizer& opt) {
  std::vector<double> out;
  for (const auto& g : opt.param_groups()) out.push_back(g.options().get_lr());
  return out;
}

std::vector<double> group_momentum(gb::optim::Optimizer& opt) {
  std::vector<double> out;
  for (const auto& g : opt.param_groups())
    for (const auto& [name, v] : g.options().hyperparameters())
      if (name == "beta1" || name == "momentum") out.push_back(v);
  return out;
}

std::unique_ptr<gb::optim::Optimizer> sgd(std::vector<double> lrs, double momentum = 0) {
  std::vector<gb::optim::OptimizerParamGroup> groups;
  for (double lr : lrs)
    groups.emplace_back(std::vector<gb::Tensor>{gb::zeros({1}).requires_grad_()},
                        std::make_unique<gb::optim::SGDOptions>(gb::optim::SGDOptions(lr).momentum(momentum)));
  return std::make_unique<gb::optim::SGD>(groups, gb::optim::SGDOptions(lrs[0]).momentum(momentum));
}

std::unique_ptr<gb::optim::Optimizer> adam(double lr) {
  return std::make_unique<gb::optim::Adam>(std::vector<gb::Tensor>{gb::zeros({1}).requires_grad_()},
                                           gb::optim::AdamOptions(lr));
}

using MakeScheduler = std::function<std::shared_ptr<gb::optim::LRScheduler>(gb::optim::Optimizer&)>;

Trace run_ours(std::unique_ptr<gb::optim::Optimizer> opt, const MakeScheduler& make, int steps, bool momentum) {
  auto sched = make(*opt);
  Trace t;
  t.lr.push_back(group_lrs(*opt));
  if (momentum) t.momentum.push_back(group_momentum(*opt));
  for (int i = 0; i < steps; ++i) {
    sched->step();
    t.lr.push_back(group_lrs(*opt));
    if (momentum) t.momentum.push_back(group_momentum(*opt));
  }
  return t;
}

double max_diff(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    for (size_t j = 0; j < a[i].size(); ++j) m = std::max(m, std::fabs(a[i][j] - b[i][j]));
  }
  return m;
}

// Runs lr_reference.py with the first python3 that has torch; "" when there is none.
std::map<std::string, Trace> python_reference(int& status) {
  std::string cmd = "for py in python3 /usr/bin/python3; do if $py -c 'import torch' 2>/dev/null; then exec $py '" +
                    std::string(GLASSBOX_LR_REFERENCE_PY) + "'; fi; done; exit 97";
  std::map<std::string, Trace> out;
  FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  status = pclose(f);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    Trace t;
    t.lr = j["lr"].get<std::vector<std::vector<double>>>();
    t.momentum = j["momentum"].get<std::vector<std::vector<double>>>();
    out[j["name"].get<std::string>()] = t;
  }
  return out;
}

}  // namespace

TEST_CASE("optimizers match libtorch 1.13 step for step (20 steps, float32 and float64)") {
  torch::set_num_threads(1);
  std::printf("%-62s %14s %14s\n", "optimizer configuration", "max|d| f32", "max|d| f64");
  for (const auto& c : optimizer_cases()) {
    CAPTURE(c.name);
    double f32 = run_optimizer_case(c, gb::kFloat32);
    double f64 = run_optimizer_case(c, gb::kFloat64);
    std::printf("%-62s %14.3g %14.3g\n", c.name.c_str(), f32, f64);
    CHECK(f32 <= 1e-6);
    CHECK(f64 <= 1e-14);
  }
}

TEST_CASE("StepLR matches libtorch's C++ StepLR") {
  auto p = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD topt({p}, torch::optim::SGDOptions(0.1));
  torch::optim::StepLR tsched(topt, 3, 0.5);
  auto opt = sgd({0.1});
  gb::optim::StepLR sched(*opt, 3, 0.5);
  tsched.step();  // libtorch takes no initial step at construction: its first step() is PyTorch's initial step
  double worst = 0;
  for (int i = 0; i < 25; ++i) {
    worst = std::max(worst,
                     std::fabs(opt->param_groups()[0].options().get_lr() - topt.param_groups()[0].options().get_lr()));
    sched.step();
    tsched.step();
  }
  std::printf("StepLR(step_size=3, gamma=0.5) vs libtorch C++: max|d| %.3g\n", worst);
  CHECK(worst == 0);
}

TEST_CASE("schedulers match Python PyTorch (lr_reference.py)") {
  int status = 0;
  auto ref = python_reference(status);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 97)
    FAIL(
        "no python3 with torch found: install python3-torch (apt-get install -y python3-torch; "
        "tools/install-deps.sh installs it), then rerun this test");
  REQUIRE_MESSAGE(status == 0, "lr_reference.py failed (status ", status, ")");
  using namespace gb::optim;
  struct Config {
    std::string name;
    std::function<std::unique_ptr<Optimizer>()> opt;
    MakeScheduler make;
    int steps = 25;
    bool momentum = false;
  };
  std::vector<Config> configs = {
      {"step",
       [] {
         return sgd({0.1, 0.03});
       },
       [](Optimizer& o) { return std::make_shared<StepLR>(o, 3, 0.5); }},
      {"multistep", [] { return sgd({0.1}); },
       [](Optimizer& o) {
         return std::make_shared<MultiStepLR>(o, std::vector<int64_t>{3, 7, 7, 12}, 0.3);
       }},
      {"cosine",
       [] {
         return sgd({0.1, 0.02});
       },
       [](Optimizer& o) { return std::make_shared<CosineAnnealingLR>(o, 8, 0.001); }},
      {"linear", [] { return sgd({0.1}); }, [](Optimizer& o) { return std::make_shared<LinearLR>(o, 0.25, 1.0, 6); }},
      {"linear_default", [] { return sgd({0.05}); }, [](Optimizer& o) { return std::make_shared<LinearLR>(o); }},
      {"onecycle_cos_sgd",
       [] {
         return sgd({0.1, 0.01}, 0.9);
       },
       [](Optimizer& o) {
         return std::make_shared<OneCycleLR>(o, OneCycleLROptions(std::vector<double>{0.1, 0.05}).total_steps(25));
       },
       25, true},
      {"onecycle_linear_three_phase_adam", [] { return adam(0.001); },
       [](Optimizer& o) {
         return std::make_shared<OneCycleLR>(o, OneCycleLROptions(0.2)
                                                    .epochs(4)
                                                    .steps_per_epoch(6)
                                                    .pct_start(0.25)
                                                    .anneal_strategy("linear")
                                                    .div_factor(10.0)
                                                    .final_div_factor(100.0)
                                                    .three_phase(true)
                                                    .base_momentum({0.8})
                                                    .max_momentum({0.9}));
       },
       24, true},
      {"sequential_warmup_cosine", [] { return sgd({0.1}); },
       [](Optimizer& o) {
         auto warmup = std::make_shared<LinearLR>(o, 0.1, 1.0, 5);
         auto cosine = std::make_shared<CosineAnnealingLR>(o, 15, 1e-4);
         return std::make_shared<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{warmup, cosine},
                                               std::vector<int64_t>{5});
       }},
      {"sequential_three",
       [] {
         return sgd({0.1, 0.04});
       },
       [](Optimizer& o) {
         auto a = std::make_shared<LinearLR>(o, 0.5, 1.0, 3);
         auto b = std::make_shared<StepLR>(o, 4, 0.5);
         auto c = std::make_shared<MultiStepLR>(o, std::vector<int64_t>{2, 5}, 0.1);
         return std::make_shared<SequentialLR>(o, std::vector<std::shared_ptr<LRScheduler>>{a, b, c},
                                               std::vector<int64_t>{3, 10});
       }},
  };
  std::printf("%-36s %6s %14s %14s\n", "scheduler configuration", "steps", "max|d| lr", "max|d| momentum");
  for (const auto& c : configs) {
    CAPTURE(c.name);
    REQUIRE(ref.count(c.name) == 1);
    Trace ours = run_ours(c.opt(), c.make, c.steps, c.momentum);
    double dl = max_diff(ours.lr, ref[c.name].lr);
    double dm = max_diff(ours.momentum, ref[c.name].momentum);
    std::printf("%-36s %6d %14.3g %14.3g\n", c.name.c_str(), c.steps, dl, dm);
    CHECK(dl <= 1e-15);
    CHECK(dm <= 1e-15);
  }
}

TEST_CASE("clip_grad_norm_ matches libtorch's") {
  torch::set_num_threads(1);
  std::printf("%-36s %14s %14s\n", "clip_grad_norm_", "max|d| grads", "|d| total");
  for (double norm_type : {2.0, 1.0, 3.5, std::numeric_limits<double>::infinity()}) {
    for (double max_norm : {0.5, 100.0}) {
      std::vector<gb::Tensor> ours = {gb::randn({4, 3}).requires_grad_(), gb::randn({7}).requires_grad_(),
                                      gb::randn({2, 2, 2}).requires_grad_()};
      std::vector<torch::Tensor> theirs;
      for (auto& p : ours) {
        p.set_grad(gb::randn(p.sizes()) * 2.0);
        theirs.push_back(to_torch(p).requires_grad_());
        theirs.back().mutable_grad() = to_torch(p.grad());
      }
      gb::Tensor total = gb::nn::utils::clip_grad_norm_(ours, max_norm, norm_type);
      double ttotal = torch::nn::utils::clip_grad_norm_(theirs, max_norm, norm_type);
      double dg = 0;
      for (size_t j = 0; j < ours.size(); ++j) dg = std::max(dg, max_abs_diff(ours[j].grad(), theirs[j].grad()));
      double dt = std::fabs(total.item<double>() - ttotal);
      std::printf("norm_type=%-4g max_norm=%-6g %14.3g %14.3g\n", norm_type, max_norm, dg, dt);
      CHECK(dg <= 1e-6);
      CHECK(dt <= 1e-5 * std::max(1.0, ttotal));
    }
  }
}

}  // namespace optim_oracle
