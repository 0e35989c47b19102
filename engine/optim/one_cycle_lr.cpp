// engine/optim/one_cycle_lr.cpp — OneCycleLR: the phases table and get_lr of PyTorch 1.13, same operation order.
#include "glassbox/optim/one_cycle_lr.h"

#include <cmath>
#include <numbers>

namespace gb::optim {

namespace {
enum { kInitialLr = 0, kMaxLr = 1, kMinLr = 2, kMaxMomentum = 3, kBaseMomentum = 4 };

// PyTorch's _format_param: one value for all groups, or exactly one per group.
std::vector<double> per_group(const std::vector<double>& v, size_t groups, const char* name) {
  if (v.size() == 1) return std::vector<double>(groups, v[0]);
  GB_CHECK(v.size() == groups, "expected ", groups, " values for ", name, ", got ", v.size(),
           " (give one value for all parameter groups or one per group)");
  return v;
}

bool has_hyperparameter(const OptimizerOptions& o, const std::string& name) {
  for (const auto& [n, v] : o.hyperparameters())
    if (n == name) return true;
  return false;
}
}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o) : LRScheduler(optimizer, o.last_epoch()) {
  if (o.total_steps()) {
    GB_CHECK(*o.total_steps() > 0, "Expected positive integer total_steps, but got ", *o.total_steps());
    total_steps_ = *o.total_steps();
  } else {
    GB_CHECK(o.epochs() && o.steps_per_epoch(), "You must define either total_steps OR (epochs AND steps_per_epoch)");
    GB_CHECK(*o.epochs() > 0, "Expected positive integer epochs, but got ", *o.epochs());
    GB_CHECK(*o.steps_per_epoch() > 0, "Expected positive integer steps_per_epoch, but got ", *o.steps_per_epoch());
    total_steps_ = *o.epochs() * *o.steps_per_epoch();
  }
  const double pct = o.pct_start(), T = double(total_steps_);
  if (o.three_phase())
    phases_ = {{pct * T - 1, kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
               {2 * pct * T - 2, kMaxLr, kInitialLr, kBaseMomentum, kMaxMomentum},
               {T - 1, kInitialLr, kMinLr, kMaxMomentum, kMaxMomentum}};
  else
    phases_ = {{pct * T - 1, kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
               {T - 1, kMaxLr, kMinLr, kBaseMomentum, kMaxMomentum}};
  GB_CHECK(pct >= 0 && pct <= 1, "Expected float between 0 and 1 pct_start, but got ", pct);
  GB_CHECK(o.anneal_strategy() == "cos" || o.anneal_strategy() == "linear",
           "anneal_strategy must by one of 'cos' or 'linear', instead got ", o.anneal_strategy());
  cos_ = o.anneal_strategy() == "cos";

  auto& groups = optimizer_.param_groups();
  std::vector<double> max_lrs = per_group(o.max_lr(), groups.size(), "max_lr");
  cycle_momentum_ = o.cycle_momentum();
  std::vector<double> max_m, base_m;
  if (cycle_momentum_) {
    const OptimizerOptions& d = optimizer_.defaults();
    GB_CHECK(has_hyperparameter(d, "momentum") || has_hyperparameter(d, "beta1"),
             "optimizer must support momentum with `cycle_momentum` option enabled (", optimizer_.name(),
             " has neither momentum nor betas; pass cycle_momentum(false))");
    use_beta1_ = has_hyperparameter(d, "beta1");
    max_m = per_group(o.max_momentum(), groups.size(), "max_momentum");
    base_m = per_group(o.base_momentum(), groups.size(), "base_momentum");
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupValues gv{};
    gv.v[kMaxLr] = max_lrs[i];
    gv.v[kInitialLr] = max_lrs[i] / o.div_factor();
    gv.v[kMinLr] = gv.v[kInitialLr] / o.final_div_factor();
    if (cycle_momentum_) {
      gv.v[kMaxMomentum] = max_m[i];
      gv.v[kBaseMomentum] = base_m[i];
    }
    if (o.last_epoch() == -1) {
      groups[i].set_initial_lr(gv.v[kInitialLr]);  // PyTorch overwrites group['initial_lr'] here
      base_lrs_[i] = gv.v[kInitialLr];
      if (cycle_momentum_) groups[i].options().set_hyperparameter(use_beta1_ ? "beta1" : "momentum", max_m[i]);
    } else {
      gv.v[kInitialLr] = *groups[i].initial_lr();  // resuming: the group's record (the base checked it exists)
    }
    groups_.push_back(gv);
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (cos_) {
    double cos_out = std::cos(std::numbers::pi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  const int64_t step_num = last_epoch_;
  GB_CHECK(step_num <= total_steps_, "Tried to step ", step_num, " times. The specified number of total steps is ",
           total_steps_, " (make the OneCycleLR with more total_steps, or stop stepping it at the end of the cycle)");
  auto& groups = optimizer_.param_groups();
  std::vector<double> lrs;
  for (size_t g = 0; g < groups.size(); ++g) {
    const GroupValues& gv = groups_[g];
    double start_step = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (double(step_num) <= ph.end_step || i == phases_.size() - 1) {
        double pct = (double(step_num) - start_step) / (ph.end_step - start_step);
        lr = anneal(gv.v[ph.start_lr], gv.v[ph.end_lr], pct);
        if (cycle_momentum_) momentum = anneal(gv.v[ph.start_momentum], gv.v[ph.end_momentum], pct);
        break;
      }
      start_step = ph.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) groups[g].options().set_hyperparameter(use_beta1_ ? "beta1" : "momentum", momentum);
  }
  return lrs;
}

}  // namespace gb::optim
