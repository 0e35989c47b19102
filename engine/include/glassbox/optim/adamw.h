// glassbox/optim/adamw.h — AdamW (torch.optim.AdamW, PyTorch 1.13's single-tensor formulas): Adam with decoupled
// weight decay, AMSGrad, maximize.
//
//   gb::optim::AdamW opt(net->parameters(), gb::optim::AdamWOptions(1e-3).weight_decay(0.05));
//
// Per parameter p with gradient g: p *= 1 - lr * weight_decay, then Adam's update (adam.h) with g (negated when
// maximize) — the decay never enters the moments. Same state ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")
// and hyperparameter names as Adam; weight_decay defaults to 1e-2.
#pragma once

#include <tuple>
#include <vector>

#include "glassbox/nn/options.h"
#include "glassbox/optim/adam.h"

namespace gb::optim {

struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  using betas_t = std::tuple<double, double>;
  AdamWOptions(double lr = 1e-3);  // NOLINT(google-explicit-constructor)
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::pair<std::string, double>> hyperparameters() const override;
  void set_hyperparameter(const std::string& name, double value) override;

  GB_ARG(double, lr);
  GB_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  GB_ARG(double, eps) = 1e-8;
  GB_ARG(double, weight_decay) = 1e-2;
  GB_ARG(bool, amsgrad) = false;
  GB_ARG(bool, maximize) = false;
};

using AdamWParamState = AdamParamState;

class AdamW : public Optimizer {
 public:
  AdamW(const std::vector<OptimizerParamGroup>& param_groups, AdamWOptions defaults = {});
  AdamW(const std::vector<Tensor>& params, AdamWOptions defaults = {})
      : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(params)}, std::move(defaults)) {}

  Tensor step(LossClosure closure = nullptr) override;
  const char* name() const override { return "AdamW"; }

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override { return std::make_unique<AdamWParamState>(); }
};

}  // namespace gb::optim
