// engine/optim/lr_scheduler.cpp — the scheduler base: initial_lr bookkeeping, step, state dict.
#include "glassbox/optim/lr_scheduler.h"

#include <string>

namespace gb::optim {

LRScheduler::LRScheduler(Optimizer& optimizer, int64_t last_epoch) : optimizer_(optimizer), last_epoch_(last_epoch) {
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    if (last_epoch == -1 && !groups[i].initial_lr()) groups[i].set_initial_lr(groups[i].options().get_lr());
    GB_CHECK(groups[i].initial_lr().has_value(), "param 'initial_lr' is not specified in param_groups[", i,
             "] when resuming an optimizer; load the optimizer's state dict (it holds initial_lr) before making a "
             "scheduler with last_epoch != -1");
    base_lrs_.push_back(*groups[i].initial_lr());
  }
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> lrs;
  for (const auto& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_.param_groups();
  GB_CHECK(lrs.size() == groups.size(), "scheduler: ", lrs.size(), " learning rates for ", groups.size(),
           " parameter groups (a group was added after the scheduler was made?)");
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = lrs;
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  set_lrs(get_lr());
}

void LRScheduler::step(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  auto closed = get_closed_form_lr();
  set_lrs(closed ? *closed : get_lr());
}

StateDict LRScheduler::state_dict() const {
  StateDict out;
  out.insert("last_epoch", scalar_state(double(last_epoch_)));
  out.insert("_step_count", scalar_state(double(step_count_)));
  for (size_t i = 0; i < base_lrs_.size(); ++i) out.insert("base_lrs." + std::to_string(i), scalar_state(base_lrs_[i]));
  for (size_t i = 0; i < last_lr_.size(); ++i) out.insert("last_lr." + std::to_string(i), scalar_state(last_lr_[i]));
  extra_state(out);
  return out;
}

void LRScheduler::load_state_dict(const StateDict& sd) {
  const Tensor* le = sd.find("last_epoch");
  GB_CHECK(le != nullptr, "scheduler load_state_dict: no \"last_epoch\" entry (is this a scheduler's state dict?)");
  std::vector<double> base, last;
  for (size_t i = 0; const Tensor* t = sd.find("base_lrs." + std::to_string(i)); ++i)
    base.push_back(scalar_value(*t, "base_lrs"));
  for (size_t i = 0; const Tensor* t = sd.find("last_lr." + std::to_string(i)); ++i)
    last.push_back(scalar_value(*t, "last_lr"));
  GB_CHECK(base.size() == optimizer_.param_groups().size(), "scheduler load_state_dict: ", base.size(),
           " base learning rates for an optimizer with ", optimizer_.param_groups().size(), " groups");
  load_extra_state(sd);
  last_epoch_ = int64_t(scalar_value(*le, "last_epoch"));
  if (const Tensor* sc = sd.find("_step_count")) step_count_ = int64_t(scalar_value(*sc, "_step_count"));
  base_lrs_ = std::move(base);
  last_lr_ = std::move(last);
}

}  // namespace gb::optim
