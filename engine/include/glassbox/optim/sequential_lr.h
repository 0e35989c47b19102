// glassbox/optim/sequential_lr.h — schedulers one after another (torch.optim.lr_scheduler.SequentialLR, 1.13),
// e.g. a linear warmup then cosine annealing:
//
//   auto warmup = std::make_shared<gb::optim::LinearLR>(opt, 0.1, 1.0, 5);
//   auto cosine = std::make_shared<gb::optim::CosineAnnealingLR>(opt, 95);
//   gb::optim::SequentialLR sched(opt, {warmup, cosine}, /*milestones=*/{5});
//
// As in PyTorch: construction resets every group's lr to its initial_lr, rewinds each child by one epoch (their
// own constructors stepped them) and takes the first child's initial step. step() advances the epoch and steps
// the child whose range holds it; the child that starts at a milestone is stepped with step(0) (its closed form
// at epoch 0). The state dict holds each child's state under "_schedulers.<i>.".
#pragma once

#include <memory>
#include <vector>

#include "glassbox/optim/lr_scheduler.h"

namespace gb::optim {

class SequentialLR : public LRScheduler {
 public:
  // Every scheduler must drive `optimizer`; milestones (ascending) has one entry fewer than schedulers.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones, int64_t last_epoch = -1);

  void step() override;
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }

 protected:
  std::vector<double> get_lr() override { return current_lrs(); }  // unused: step() delegates to a child
  void extra_state(StateDict& out) const override;
  void load_extra_state(const StateDict& sd) override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace gb::optim
