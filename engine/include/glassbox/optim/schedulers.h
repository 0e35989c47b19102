// glassbox/optim/schedulers.h — the learning-rate schedules with a closed form (torch.optim.lr_scheduler, 1.13):
// StepLR, MultiStepLR, CosineAnnealingLR, LinearLR. OneCycleLR and SequentialLR have their own headers.
//
//   gb::optim::StepLR sched(opt, /*step_size=*/30, /*gamma=*/0.1);
//   gb::optim::LinearLR warmup(opt, /*start_factor=*/0.1, /*end_factor=*/1.0, /*total_iters=*/5);
//   for (epoch...) { train(); sched.step(); }
//
// step() uses PyTorch's chainable get_lr (each value from the group's current lr), so the learning rates match
// PyTorch's float arithmetic step for step; step(epoch) uses the closed form (base_lr and epoch alone).
// Constructor arguments follow the Python signatures (optimizer first, last_epoch last).
#pragma once

#include <cstdint>
#include <vector>

#include "glassbox/optim/lr_scheduler.h"

namespace gb::optim {

// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> get_closed_form_lr() const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr *= gamma at each milestone epoch (a milestone listed twice multiplies by gamma twice, as PyTorch's Counter).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> get_closed_form_lr() const override;

 private:
  std::vector<int64_t> milestones_;  // sorted, repeats kept
  double gamma_;
};

// lr follows half a cosine from the base lr down to eta_min over T_max epochs (and back up after, as PyTorch's).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0, int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> get_closed_form_lr() const override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// lr goes linearly from start_factor * base lr to end_factor * base lr over total_iters epochs (warmup).
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5,
           int64_t last_epoch = -1);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> get_closed_form_lr() const override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

}  // namespace gb::optim
