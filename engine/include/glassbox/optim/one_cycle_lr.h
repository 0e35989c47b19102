// glassbox/optim/one_cycle_lr.h — the 1cycle policy (torch.optim.lr_scheduler.OneCycleLR, PyTorch 1.13): the lr
// rises from max_lr / div_factor to max_lr over pct_start of the steps, then anneals to
// max_lr / div_factor / final_div_factor; momentum (SGD/RMSprop "momentum", Adam-family "beta1") cycles the
// other way between max_momentum and base_momentum. Stepped once per batch.
//
//   gb::optim::OneCycleLR sched(opt, gb::optim::OneCycleLROptions(0.1).total_steps(1000));
//   gb::optim::OneCycleLR sched(opt, gb::optim::OneCycleLROptions({0.1, 0.01}).epochs(10).steps_per_epoch(100));
//
// max_lr, base_momentum and max_momentum take one value for all groups or one per group. Stepping past
// total_steps is PyTorch's error ("Tried to step 1001 times. The specified number of total steps is 1000").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "glassbox/nn/options.h"
#include "glassbox/optim/lr_scheduler.h"

namespace gb::optim {

struct OneCycleLROptions {
  OneCycleLROptions(double max_lr) : max_lr_{max_lr} {}                          // NOLINT(google-explicit-constructor)
  OneCycleLROptions(std::vector<double> max_lr) : max_lr_(std::move(max_lr)) {}  // NOLINT

  GB_ARG(std::vector<double>, max_lr);
  GB_ARG(std::optional<int64_t>, total_steps);  // or epochs * steps_per_epoch
  GB_ARG(std::optional<int64_t>, epochs);
  GB_ARG(std::optional<int64_t>, steps_per_epoch);
  GB_ARG(double, pct_start) = 0.3;
  GB_ARG(std::string, anneal_strategy) = "cos";  // "cos" or "linear"
  GB_ARG(bool, cycle_momentum) = true;
  GB_ARG(std::vector<double>, base_momentum) = {0.85};
  GB_ARG(std::vector<double>, max_momentum) = {0.95};
  GB_ARG(double, div_factor) = 25.;
  GB_ARG(double, final_div_factor) = 1e4;
  GB_ARG(bool, three_phase) = false;
  GB_ARG(int64_t, last_epoch) = -1;
};

class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

  int64_t total_steps() const { return total_steps_; }

 protected:
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr, start_momentum, end_momentum;  // indices into GroupValues::v
  };
  struct GroupValues {  // initial_lr, max_lr, min_lr, max_momentum, base_momentum
    double v[5];
  };
  double anneal(double start, double end, double pct) const;

  int64_t total_steps_ = 0;
  bool cos_ = true;
  bool cycle_momentum_ = true;
  bool use_beta1_ = false;
  std::vector<Phase> phases_;
  std::vector<GroupValues> groups_;
};

}  // namespace gb::optim
