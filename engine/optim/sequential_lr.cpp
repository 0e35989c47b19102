// engine/optim/sequential_lr.cpp — SequentialLR: PyTorch 1.13's constructor (reset, rewind, initial step of the
// first child) and step (bisect the milestones, step(0) at a milestone).
#include "glassbox/optim/sequential_lr.h"

#include <algorithm>
#include <string>

namespace gb::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  GB_CHECK(!schedulers_.empty(), "SequentialLR needs at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    GB_CHECK(schedulers_[i] != nullptr, "SequentialLR: scheduler ", i, " is null");
    GB_CHECK(&schedulers_[i]->optimizer() == &optimizer,
             "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers at "
             "index ",
             i, " to be different than the optimizer passed in.");
  }
  GB_CHECK(milestones_.size() == schedulers_.size() - 1,
           "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone "
           "points, but got number of schedulers ",
           schedulers_.size(), " and the number of milestones to be equal to ", milestones_.size());
  GB_CHECK(std::is_sorted(milestones_.begin(), milestones_.end()), "SequentialLR: milestones must be ascending");
  last_epoch_ = last_epoch + 1;
  for (auto& g : optimizer_.param_groups()) g.options().set_lr(*g.initial_lr());  // reset to the initial values
  for (auto& s : schedulers_) s->last_epoch_ -= 1;                                // undo their initial steps
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++step_count_;
  ++last_epoch_;
  size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  LRScheduler& s = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_)
    s.step(int64_t{0});
  else
    s.step();
  last_lr_ = s.get_last_lr();
}

void SequentialLR::extra_state(StateDict& out) const {
  for (size_t i = 0; i < schedulers_.size(); ++i)
    for (const auto& item : schedulers_[i]->state_dict())
      out.insert("_schedulers." + std::to_string(i) + "." + item.key(), item.value());
}

void SequentialLR::load_extra_state(const StateDict& sd) {
  // Check every child's part is there before loading any of them.
  std::vector<StateDict> parts(schedulers_.size());
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    std::string prefix = "_schedulers." + std::to_string(i) + ".";
    for (const auto& item : sd)
      if (item.key().rfind(prefix, 0) == 0) parts[i].insert(item.key().substr(prefix.size()), item.value());
    GB_CHECK(parts[i].contains("last_epoch"), "SequentialLR load_state_dict: no state for scheduler ", i, " (\"",
             prefix, "last_epoch\"); was the state dict saved from a SequentialLR with ", schedulers_.size(),
             " schedulers?");
  }
  for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(parts[i]);
}

}  // namespace gb::optim
