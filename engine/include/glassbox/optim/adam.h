// glassbox/optim/adam.h — Adam (torch.optim.Adam, PyTorch 1.13's single-tensor formulas): L2 weight decay added to
// the gradient, AMSGrad, maximize.
//
//   gb::optim::Adam opt(net->parameters(), gb::optim::AdamOptions(1e-3).betas({0.9, 0.999}).amsgrad(true));
//
// Per parameter p with gradient g (parameters without .grad are skipped), t = ++step:
//   g = maximize ? -g : g;  g += weight_decay * p
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g;  amsgrad: vmax = max(vmax, v)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v or vmax) / sqrt(1 - beta2^t) + eps)
// State: "step" (a number; a 0-dim float64 tensor in the state dict), "exp_avg", "exp_avg_sq", "max_exp_avg_sq"
// (amsgrad only), created as optimizer_state memory. Hyperparameters in the state dict: lr, beta1, beta2, eps,
// weight_decay, amsgrad, maximize (OneCycleLR cycles beta1).
#pragma once

#include <tuple>
#include <vector>

#include "glassbox/nn/options.h"
#include "glassbox/optim/optimizer.h"

namespace gb::optim {

struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  using betas_t = std::tuple<double, double>;
  AdamOptions(double lr = 1e-3);  // NOLINT(google-explicit-constructor)
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::pair<std::string, double>> hyperparameters() const override;
  void set_hyperparameter(const std::string& name, double value) override;

  GB_ARG(double, lr);
  GB_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  GB_ARG(double, eps) = 1e-8;
  GB_ARG(double, weight_decay) = 0;
  GB_ARG(bool, amsgrad) = false;
  GB_ARG(bool, maximize) = false;
};

struct AdamParamState : public OptimizerCloneableParamState<AdamParamState> {
  std::vector<std::pair<std::string, Tensor>> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;

  GB_ARG(double, step) = 0;
  GB_ARG(Tensor, exp_avg);
  GB_ARG(Tensor, exp_avg_sq);
  GB_ARG(Tensor, max_exp_avg_sq);
};

class Adam : public Optimizer {
 public:
  Adam(const std::vector<OptimizerParamGroup>& param_groups, AdamOptions defaults = {});
  Adam(const std::vector<Tensor>& params, AdamOptions defaults = {})
      : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(params)}, std::move(defaults)) {}

  Tensor step(LossClosure closure = nullptr) override;
  const char* name() const override { return "Adam"; }

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override { return std::make_unique<AdamParamState>(); }
};

namespace detail {
// The shared part of Adam and AdamW for one parameter: the moment updates and p -= step_size * m / denom, with
// `grad` already negated (maximize) and L2-decayed (Adam). Creates the state on the first step. decayed_by: the
// lr * weight_decay AdamW has just multiplied param by (1 - decayed_by), for the traced update norm.
void adam_update(Tensor& param, const Tensor& grad, AdamParamState& state, double lr, double beta1, double beta2,
                 double eps, bool amsgrad, double decayed_by = 0);
// PyTorch's argument checks: "Invalid learning rate: -0.1", "Invalid beta parameter at index 0: 1.5", ...
void check_adam_arguments(double lr, double eps, double beta1, double beta2, double weight_decay);
}  // namespace detail

}  // namespace gb::optim
