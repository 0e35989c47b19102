// glassbox/optim/lr_scheduler.h — the learning-rate scheduler base (PyTorch's torch.optim.lr_scheduler.LRScheduler).
//
//   gb::optim::StepLR sched(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (epoch...) { train(); sched.step(); }      // after the optimizer's steps, as in PyTorch
//
// As in PyTorch: constructing a scheduler records each group's `initial_lr` in the group (once: a second scheduler
// on the same optimizer finds the first one's) and takes it as base_lrs, then takes the initial step (last_epoch
// becomes 0, the groups get the epoch-0 learning rate). step() advances last_epoch by one and writes get_lr() into
// every group; step(epoch) (PyTorch's deprecated form, used by SequentialLR) jumps to `epoch` through the closed
// form where the scheduler has one. get_last_lr() is what the last step set.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "glassbox/nn/ordered_dict.h"
#include "glassbox/optim/optimizer.h"

namespace gb::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer, int64_t last_epoch = -1);
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  virtual void step();
  void step(int64_t epoch);
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() { return optimizer_; }

  // "last_epoch", "_step_count", "base_lrs.<g>", "last_lr.<g>", plus what a subclass adds (extra_state), as
  // 0-dim float64.
  virtual StateDict state_dict() const;
  virtual void load_state_dict(const StateDict& state_dict);

 protected:
  // The learning rates for last_epoch_ (already advanced), one per group.
  virtual std::vector<double> get_lr() = 0;
  // The learning rates for last_epoch_ from the base lrs alone (PyTorch's _get_closed_form_lr), if there is such a
  // formula; step(epoch) falls back to get_lr().
  virtual std::optional<std::vector<double>> get_closed_form_lr() const { return std::nullopt; }
  // Derived schedulers with more state (SequentialLR's children) add and read it here.
  virtual void extra_state(StateDict&) const {}
  virtual void load_extra_state(const StateDict&) {}
  // Called at the end of a derived constructor: PyTorch's _initial_step.
  void initial_step();
  std::vector<double> current_lrs() const;
  void set_lrs(const std::vector<double>& lrs);

  friend class SequentialLR;  // rewinds its children and takes their initial step

  Optimizer& optimizer_;
  int64_t last_epoch_;
  int64_t step_count_ = 0;  // PyTorch's _step_count: steps since the initial step reset it (that one included)
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
};

}  // namespace gb::optim
